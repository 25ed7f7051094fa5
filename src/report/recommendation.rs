//! A budget's recommendation as sentences (`crate::analysis::decision`): the same lines in the
//! sweep summary, `shortlist.md` and `report.html`, so the three never disagree.

use crate::analysis::decision::{Compared, Decision};
use crate::analysis::draws::Interval;
use crate::analysis::shortlist::Flag;
use crate::analysis::why::LeverShare;
use crate::format::{money, percent};
use crate::spec::Grid;

use super::tables::regime_label;

/// One budget's recommendation, one sentence per part (plain text; escape for HTML or
/// Markdown where it goes).
#[derive(Debug, Clone, PartialEq)]
pub struct Sentences {
    /// "run A: score [90%], gain over the base, dollars, P(best)".
    pub run: String,
    /// The group of indistinguishable regimes, when there is no clear lead.
    pub group: Option<String>,
    /// "if you can validate two, add B".
    pub second: Option<String>,
    /// The cheaper regime within noise, or that there is none.
    pub cheaper: String,
    /// Why A beats the runner-up, by lever, in points and dollars.
    pub why: Option<String>,
    /// What A's extra dollars buy over the cheaper regime within noise, by lever.
    pub why_cheaper: Option<String>,
    /// The axes to extend first when A sits at a grid edge.
    pub edges: Option<String>,
}

impl Sentences {
    /// Every sentence, in reading order.
    pub fn all(&self) -> Vec<&str> {
        let mut out = vec![self.run.as_str()];
        out.extend(self.group.as_deref());
        out.extend(self.second.as_deref());
        out.push(self.cheaper.as_str());
        out.extend(self.why.as_deref());
        out.extend(self.why_cheaper.as_deref());
        out.extend(self.edges.as_deref());
        out
    }
}

/// Points (score × 100) with an explicit sign, one decimal.
fn signed_points(x: f64) -> String {
    let p = 100.0 * x;
    // −0.0 prints as +0.0: a difference that rounds to nothing has no sign.
    if p.abs() < 0.05 {
        "+0.0".to_string()
    } else {
        format!("{p:+.1}")
    }
}

/// Dollars with an explicit sign: `+$31,000`, `-$950.00`.
pub(super) fn signed_money(x: f64) -> String {
    let sign = if x < 0.0 { '-' } else { '+' };
    format!("{sign}${}", money(x.abs()))
}

/// A lever share is shown when it moves at least 0.05 points or this share of the
/// recommendation's dollars.
const SHOWN_USD_SHARE: f64 = 0.005;

/// "model size +2.1 points for +$31,000; updates -0.9 points for -$30,700": the levers that
/// move either, in lever order (None when none does).
fn lever_parts(shares: &[LeverShare], usd_scale: f64) -> Option<String> {
    let parts: Vec<String> = shares
        .iter()
        .filter(|s| {
            (100.0 * s.score).abs() >= 0.05
                || s.usd
                    .is_some_and(|u| u.abs() >= SHOWN_USD_SHARE * usd_scale)
        })
        .map(|s| match s.usd {
            Some(u) => format!(
                "{} {} points for {}",
                s.lever.label(),
                signed_points(s.score),
                signed_money(u)
            ),
            None => format!("{} {} points", s.lever.label(), signed_points(s.score)),
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// "+1.2 [−0.3, +2.4] points".
pub fn points_interval(i: &Interval) -> String {
    format!(
        "{} [{}, {}] points",
        signed_points(i.median),
        signed_points(i.low),
        signed_points(i.high)
    )
}

fn regime_with_difference(grid: &Grid, c: &Compared) -> String {
    format!(
        "{}: {} for ${}",
        regime_label(grid, &c.point),
        points_interval(&c.difference),
        money(c.point.usd)
    )
}

/// Why the recommendation beats the runner-up, by lever (None without a runner-up).
fn why_sentence(grid: &Grid, d: &Decision) -> Option<String> {
    let a = d.recommended();
    let r = d.runner_up.as_ref()?;
    let against = regime_label(grid, &r.point);
    let tied = (100.0 * (a.point.score - r.point.score)).abs() < 0.05;
    Some(match lever_parts(&d.why, a.point.usd) {
        None => format!(
            "why: against {against}, the point predictions differ by less than 0.1 points: noise alone separates them"
        ),
        Some(parts) if tied => format!(
            "why: against {against}, the point predictions differ by less than 0.1 points: noise alone separates them (by lever: {parts})"
        ),
        Some(parts) => format!(
            "why, against {against} ({} points by point prediction, {}): {parts}",
            signed_points(a.point.score - r.point.score),
            signed_money(a.point.usd - r.point.usd)
        ),
    })
}

/// What the recommendation's extra dollars buy over the cheaper regime within noise, by lever
/// (None without one, or when no lever moves).
fn why_cheaper_sentence(grid: &Grid, d: &Decision) -> Option<String> {
    let a = d.recommended();
    let c = d.cheaper.as_ref()?;
    let parts = lever_parts(&d.why_cheaper, a.point.usd)?;
    Some(format!(
        "what its extra ${} buys over {} ({} points by point prediction): {parts}",
        money(a.point.usd - c.point.usd),
        regime_label(grid, &c.point),
        signed_points(a.point.score - c.point.score)
    ))
}

/// "415 steps of 1,810 s (209 hours on 32 GPUs)": how long the run is, in the steps to set.
pub fn steps_phrase(p: &crate::analysis::frontier::Point, gpus: u64) -> String {
    let step_seconds = if p.iterations > 0 {
        p.wall_hours * crate::config::SECONDS_PER_HOUR / p.iterations as f64
    } else {
        0.0
    };
    format!(
        "{} step{} of {} s ({} hours on {gpus} GPUs)",
        crate::format::thousands(p.iterations as f64),
        if p.iterations == 1 { "" } else { "s" },
        crate::format::readable(step_seconds),
        crate::format::readable(p.wall_hours)
    )
}

/// "a base of 0.409 guessed from the model's size (…)": the base score the gain is over and
/// where it came from.
pub fn base_phrase(grid: &Grid, p: &crate::analysis::frontier::Point) -> String {
    let model = p.indices[crate::spec::Axis::Model];
    let given = grid.measured_base_scores.get(model).copied().flatten();
    let source = match grid.published_base_scores.get(model).cloned().flatten() {
        Some(b) => format!(
            "published for {}: {}, {}; give [task] base_score for your own evaluation",
            b.checkpoint, b.published.source, b.published.setting
        ),
        None if given.is_some() => "given in [task] base_score".to_string(),
        None if grid.ability_scores.get(model).copied().flatten().is_some() => {
            "implied by the model's scores on the grid's other metrics".to_string()
        }
        None => {
            "guessed from the model's size: no measured or published score; give [task] base_score"
                .to_string()
        }
    };
    format!("a base of {:.3} ({source})", p.base_score)
}

/// Whether the base score of `p`'s model is the prior's guess from its size (none given,
/// published or implied).
pub fn base_is_guessed(grid: &Grid, p: &crate::analysis::frontier::Point) -> bool {
    let model = p.indices[crate::spec::Axis::Model];
    grid.measured_base_scores
        .get(model)
        .copied()
        .flatten()
        .is_none()
        && grid.ability_scores.get(model).copied().flatten().is_none()
}

/// The gain over the base, in points: with its interval (the score's less the base) when the
/// base is known; alone when the base is a guess, whose uncertainty the score's interval already
/// carries (the gain itself is far less uncertain than that interval less one guessed number).
pub fn gain_phrase(grid: &Grid, c: &Compared) -> String {
    if base_is_guessed(grid, &c.point) {
        format!(
            "{} points over the guessed base, whose uncertainty the score's interval carries",
            signed_points(c.gain.median)
        )
    } else {
        points_interval(&c.gain)
    }
}

/// The values `cells` take on each axis where they differ, as people name them: an ordered
/// axis as a range (`G 32-128`, `1-4 epochs`), any other as the values (`full/lora:64`).
pub fn spread_phrase(grid: &Grid, cells: &[crate::analysis::frontier::Point]) -> Option<String> {
    let parts: Vec<String> = crate::analysis::shortlist::spread(cells)
        .into_iter()
        .map(|(axis, indices)| {
            let label = |i: usize| grid.axes.label(axis, i);
            let values = if axis.is_ordered() {
                format!(
                    "{}\u{2013}{}",
                    label(indices[0]),
                    label(indices[indices.len() - 1])
                )
            } else {
                indices
                    .iter()
                    .map(|&i| label(i))
                    .collect::<Vec<_>>()
                    .join("/")
            };
            match axis {
                crate::spec::Axis::GroupSize => format!("G {values}"),
                crate::spec::Axis::MaxResponseLen => format!("cap {values}"),
                crate::spec::Axis::UpdateEpochs => format!("{values} epochs"),
                crate::spec::Axis::PromptsPerStep => format!("{values} prompts"),
                crate::spec::Axis::Turns => format!("{values} turns"),
                crate::spec::Axis::ToolSeconds => format!("tools {values} s"),
                _ => values,
            }
        })
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// "(folds 1-2 epochs, 256-512 prompts)": the near-duplicate cells a regime stands for, when
/// it folds any that differ from the cell it is shown by.
pub fn folds_phrase(grid: &Grid, entry: &crate::analysis::shortlist::Entry) -> Option<String> {
    spread_phrase(grid, &entry.members).map(|s| format!("(folds {s})"))
}

/// "indistinguishable over G 32-128, 1-4 epochs (5 regimes, point predictions within 0.2
/// points): ...": when the recommendation has no clear lead, the levers the model cannot tell
/// apart (the values the cells of every indistinguishable regime take).
pub fn flat_phrase(grid: &Grid, d: &Decision) -> Option<String> {
    if d.indistinguishable.is_empty() {
        return None;
    }
    let cells: Vec<crate::analysis::frontier::Point> = d
        .indistinguishable
        .iter()
        .flat_map(|&k| d.shortlist[k].members.iter().copied())
        .collect();
    let scores = d
        .indistinguishable
        .iter()
        .map(|&k| d.compared[k].point.score);
    let spread_points =
        100.0 * (scores.clone().fold(f64::MIN, f64::max) - scores.fold(f64::MAX, f64::min));
    let levers = spread_phrase(grid, &cells)?;
    let within = if spread_points < 0.05 {
        "less than 0.1".to_string()
    } else {
        format!("{spread_points:.1}")
    };
    Some(format!(
        "indistinguishable over {levers} ({} regimes, point predictions within {within} points): a pilot tells them apart, else choose on cost or wall time",
        d.indistinguishable.len()
    ))
}

/// A short name for where the base score came from: `published`, `given`, `implied` or
/// `size-guessed`.
fn base_kind(grid: &Grid, p: &crate::analysis::frontier::Point) -> &'static str {
    let model = p.indices[crate::spec::Axis::Model];
    if grid
        .published_base_scores
        .get(model)
        .cloned()
        .flatten()
        .is_some()
    {
        "published"
    } else if grid
        .measured_base_scores
        .get(model)
        .copied()
        .flatten()
        .is_some()
    {
        "given"
    } else if grid.ability_scores.get(model).copied().flatten().is_some() {
        "implied"
    } else {
        "size-guessed"
    }
}

/// The recommended regime with the near-duplicates it folds, when it folds any that differ:
/// "qwen3-8b lora:64, ..., 256 prompts (folds 1-2 epochs, 256-512 prompts)".
fn regime_with_folds(grid: &Grid, d: &Decision) -> String {
    let regime = regime_label(grid, &d.recommended().point);
    match folds_phrase(grid, &d.shortlist[0]) {
        Some(folds) => format!("{regime} {folds}"),
        None => regime,
    }
}

/// "0.942 [0.877, 0.978]": a point's predicted score and its 90% interval.
fn score_interval(p: &crate::analysis::frontier::Point) -> String {
    format!("{:.3} [{:.3}, {:.3}]", p.score, p.score_low, p.score_high)
}

/// One budget's recommendation on one line: the regime (and what it folds), its steps and
/// dollars, the predicted score, the one gain with its interval over the base (and the base's
/// kind), P(best), and the levers the prediction is flat in when it has no clear lead.
pub fn one_line(grid: &Grid, d: &Decision) -> String {
    let a = d.recommended();
    let gain = if base_is_guessed(grid, &a.point) {
        signed_points(a.gain.median) + " points"
    } else {
        points_interval(&a.gain)
    };
    let flat = flat_phrase(grid, d)
        .map(|f| format!("; no clear lead: {f}"))
        .unwrap_or_default();
    format!(
        "{}: {}, ${}: {}, {gain} over a {} base of {:.3}, P(best) {}{flat}",
        regime_with_folds(grid, d),
        steps_phrase(&a.point, grid.hardware.gpus),
        money(a.point.usd),
        score_interval(&a.point),
        base_kind(grid, &a.point),
        a.point.base_score,
        percent(a.probability_best)
    )
}

/// When a grid has several budgets and the recommendation's predicted score does not rise by
/// 0.1 points from the smallest to the largest, why, in one line: how far the smallest budget's
/// recommendation already is from its base to the prior's ceiling, in its steps. None otherwise.
pub fn budget_trend_phrase(grid: &Grid, decisions: &[Decision]) -> Option<String> {
    let first = decisions.iter().min_by_key(|d| d.budget_index)?;
    let last = decisions.iter().max_by_key(|d| d.budget_index)?;
    if first.budget_index == last.budget_index {
        return None;
    }
    let (a, b) = (&first.recommended().point, &last.recommended().point);
    let rise = b.score - a.score;
    if 100.0 * rise >= 0.1 {
        return None;
    }
    let prediction = crate::evaluate::evaluate_cell(grid, a.id)?.prediction;
    let span = prediction.ceiling - prediction.base_score;
    let done = if span > 0.0 {
        (prediction.score - prediction.base_score) / span
    } else {
        1.0
    };
    Some(format!(
        "from {} to {} the recommendation's predicted score moves {} points: under the prior the smallest budget's {} steps already take it {} of the way from its base ({:.3}) to its ceiling ({:.3}), so the larger budgets' extra steps add nothing it can predict; how far a real curve climbs is what a pilot measures",
        super::tables::budget_label(grid, first.budget_index),
        super::tables::budget_label(grid, last.budget_index),
        signed_points(rise),
        crate::format::thousands(a.iterations as f64),
        percent(done.clamp(0.0, 1.0)),
        prediction.base_score,
        prediction.ceiling
    ))
}

/// The sentences of `d`.
pub fn sentences(grid: &Grid, d: &Decision) -> Sentences {
    let a = d.recommended();
    let run = format!(
        "run {} for {}, ${}: {} from {}, {} (P(best) {})",
        regime_with_folds(grid, d),
        steps_phrase(&a.point, grid.hardware.gpus),
        money(a.point.usd),
        score_interval(&a.point),
        base_phrase(grid, &a.point),
        gain_phrase(grid, a),
        percent(a.probability_best)
    );
    let group = (!d.indistinguishable.is_empty()).then(|| {
        let others: Vec<String> = d.indistinguishable[1..]
            .iter()
            .map(|&k| regime_with_difference(grid, &d.compared[k]))
            .collect();
        match flat_phrase(grid, d) {
            Some(flat) => format!(
                "no clear lead: {flat}; each of these is indistinguishable from it (its difference to it spans 0): {}",
                others.join("; ")
            ),
            None => format!(
                "no clear lead: these {} regimes are indistinguishable under the current model (each one's difference to it spans 0): {}",
                d.indistinguishable.len(),
                others.join("; ")
            ),
        }
    });
    let second = d.second.map(|k| {
        let b = &d.compared[k];
        format!(
            "if you can validate two, add {} (P(best) {}; the most different of the plausible winners)",
            regime_with_difference(grid, b),
            percent(b.probability_best)
        )
    });
    let cheaper = match &d.cheaper {
        Some(c) => format!(
            "within noise for less: {} ({} of the dollars)",
            regime_with_difference(grid, c),
            percent(c.point.usd / a.point.usd)
        ),
        None => format!(
            "nothing at {} of its dollars or less, at this budget or a smaller one, is within noise of it",
            percent(crate::analysis::decision::CHEAPER_SHARE)
        ),
    };
    let why = why_sentence(grid, d);
    let why_cheaper = why_cheaper_sentence(grid, d);
    let edges: Vec<String> = d
        .edges()
        .into_iter()
        .map(|f| match f {
            Flag::LowerEdge { axis, value } => format!("{axis} below {value}"),
            Flag::UpperEdge { axis, value } => format!("{axis} above {value}"),
            _ => String::new(),
        })
        .collect();
    let edges = (!edges.is_empty()).then(|| {
        format!(
            "at the grid's edge: extend {} and sweep again before trusting it",
            edges.join(", ")
        )
    });
    Sentences {
        run,
        group,
        second,
        cheaper,
        why,
        why_cheaper,
        edges,
    }
}
