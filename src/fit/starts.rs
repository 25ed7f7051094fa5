//! Stage 7 of the prior's fit: what the kind of start and the kind of benchmark change, fitted
//! on the before/after pairs of every allowed study (src/fit/pairs.rs).
//!
//! - Δ and K_mid multipliers per tuned kind (instruct, distilled, and the two pooled for
//!   `tuned`), by least squares on logit(predicted) − logit(measured) over the kind's pairs; a
//!   kind with fewer than [`MIN_TIMED_PAIRS`] pairs of stated length takes the pooled time factor
//!   (its time scale is not identified, and the report says so).
//! - A Δ multiplier for competition benchmarks and one for general benchmarks (knowledge,
//!   instruction following, chat: what a math or code reward does not train), on the same
//!   residuals. (A floor under their base
//!   scores, read as format failure, was fitted too and left unidentified: its 90% range ran from
//!   2e-6 to 0.96, so `competition_base_floor` stays a stated hypothesis at the logit floor.)
//! - τ_f, the steps over which a base model's format gap closes (`outcome::start_score`), by a
//!   profile scan on the base-start pairs of stated length with a gap.
//! - The downside: the variance of ground lost per 1,000 steps, from the pairs that lost.
//! - The interval's floor per kind: the smallest sd (logit units) that puts 90% of the kind's
//!   pairs inside their 90% intervals, and never less than the kind's spread of logit gains over
//!   Z90 (so a run predicted to move nothing still spans ±1 sd of what runs of its kind gained).

use crate::fit::pairs::PairedOutcome;
use crate::fit::prior::{FittedParam, Fitting, least_squares};
use crate::outcome::params::{Param, Z90};
use crate::outcome::{Benchmark, OutcomeParams, ParamId, StartKind, predict, predict_score};

/// Fewer pairs of stated length than this leave a kind's time factor unidentified.
pub const MIN_TIMED_PAIRS: usize = 3;

/// Scores are clamped to [this, 1 − this] before taking logits of residuals.
const RESIDUAL_CLAMP: f64 = 0.01;

fn logit(p: f64) -> f64 {
    let p = p.clamp(RESIDUAL_CLAMP, 1.0 - RESIDUAL_CLAMP);
    (p / (1.0 - p)).ln()
}

/// The median stated length of `kind`'s runs among `pairs` (all kinds' when the kind states
/// none; 500 steps when no pair does): what a pair of unstated length is predicted at.
pub fn unstated_steps(pairs: &[&PairedOutcome], kind: StartKind) -> f64 {
    let of = |filter: &dyn Fn(&PairedOutcome) -> bool| -> Vec<f64> {
        pairs
            .iter()
            .filter(|p| filter(p))
            .filter_map(|p| p.steps)
            .collect()
    };
    let pooled = |p: &PairedOutcome| {
        kind == StartKind::Tuned && matches!(p.start, StartKind::Instruct | StartKind::Distilled)
    };
    let mut steps = of(&|p| p.start == kind || pooled(p));
    if steps.is_empty() {
        steps = of(&|_| true);
    }
    if steps.is_empty() {
        500.0
    } else {
        crate::stats::median(steps)
    }
}

/// The kind a pair is fitted as: its own, or `tuned` when the tuned kinds are pooled.
fn as_kind(p: &PairedOutcome, pooled: bool) -> StartKind {
    if pooled && p.start != StartKind::Base {
        StartKind::Tuned
    } else {
        p.start
    }
}

/// The pairs' signals as fitted: each pair's kind (or `tuned` when pooled), with the median
/// stated length of its kind's runs where its own is not stated.
fn signals(pairs: &[&PairedOutcome], pooled: bool) -> Vec<crate::outcome::CellSignal> {
    let median: Vec<(StartKind, f64)> = StartKind::USER
        .iter()
        .map(|k| (*k, unstated_steps(pairs, *k)))
        .collect();
    pairs
        .iter()
        .map(|p| {
            let kind = as_kind(p, pooled);
            let steps = median
                .iter()
                .find(|(k, _)| *k == kind)
                .map_or(500.0, |m| m.1);
            let mut s = p.signal(steps);
            s.start = kind;
            s
        })
        .collect()
}

/// Logit residuals of `pairs` (with their `signals`) under `params`.
fn residuals(
    params: &OutcomeParams,
    pairs: &[&PairedOutcome],
    signals: &[crate::outcome::CellSignal],
) -> Vec<f64> {
    pairs
        .iter()
        .zip(signals)
        .map(|(p, s)| logit(predict_score(params, s)) - logit(p.after))
        .collect()
}

/// The 90% profile-likelihood range of a time factor over ln t in [−10, 2] (steps of 0.2), its
/// gain factor refitted at each point: (value, low, high, bounded below). Tuned runs typically
/// sit at their plateau by the first checkpoint a study reports, so the data often bound the
/// time scale from above only; the value is then the slowest time scale they allow (the range's
/// high end), and the report says so.
fn profile_time(
    params: &OutcomeParams,
    gain: ParamId,
    time: ParamId,
    pairs: &[&PairedOutcome],
    pooled: bool,
) -> Option<(f64, f64, f64, bool, f64)> {
    let signals = signals(pairs, pooled);
    let mut costs = Vec::new();
    let mut best = (f64::INFINITY, 0.0, 0.0);
    for k in 0..=60 {
        let ln_t = -10.0 + 0.2 * k as f64;
        let mut p = *params;
        p[time].value = ln_t.exp();
        let (theta, _) = least_squares(
            &|t| {
                let mut q = p;
                q[gain].value = t[0].exp();
                Some(residuals(&q, pairs, &signals))
            },
            &[0.0],
            0.0,
        )?;
        let mut q = p;
        q[gain].value = theta[0].exp();
        let cost: f64 = residuals(&q, pairs, &signals).iter().map(|r| r * r).sum();
        costs.push((ln_t, cost));
        if cost < best.0 {
            best = (cost, ln_t, theta[0].exp());
        }
    }
    let dof = pairs.len().saturating_sub(2).max(1) as f64;
    let (lo, hi) = profile_range(&costs, best.0, dof);
    let bounded_below = lo > -10.0 + 1e-9;
    let value = if bounded_below { best.1 } else { hi };
    Some((value.exp(), lo.exp(), hi.exp(), bounded_below, best.2))
}

/// The parameters one least-squares fit of stage 7 moves: Δ factors of kinds of start and of
/// kinds of benchmark, each fitted in log space.
struct Layout {
    gains: Vec<ParamId>,
}

impl Layout {
    fn apply(&self, base: &OutcomeParams, theta: &[f64]) -> OutcomeParams {
        let mut p = *base;
        for (id, t) in self.gains.iter().zip(theta) {
            p[*id].value = t.exp();
        }
        p
    }

    fn start(&self, base: &OutcomeParams) -> Vec<f64> {
        self.gains
            .iter()
            .map(|id| base[*id].value.max(1e-3).ln())
            .collect()
    }

    /// The fitted parameters with their 90% ranges (log-space errors).
    fn ranges(&self, fitted: &OutcomeParams, theta: &[f64], se: &[f64]) -> Vec<(ParamId, Param)> {
        self.gains
            .iter()
            .enumerate()
            .map(|(k, id)| {
                let s = se[k].min(5.0);
                (
                    *id,
                    Param::new(
                        fitted[*id].value,
                        (theta[k] - Z90 * s).exp(),
                        (theta[k] + Z90 * s).exp(),
                    ),
                )
            })
            .collect()
    }
}

/// Stage 7 on `pairs` from `params` (stages 0-6 already fitted): the parameters with the start
/// and benchmark terms in place, and one line per parameter on how it was obtained. None when
/// the pairs cannot identify even the pooled tuned terms.
pub fn fit_starts(
    params: &OutcomeParams,
    pairs: &[&PairedOutcome],
) -> Option<(OutcomeParams, Vec<FittedParam>)> {
    use ParamId::*;
    let (mut p, mut fitted) = fit_factors(params, pairs)?;
    // Each pair as a held-out case: predicted by the factors fitted without its study, so the
    // floors carry the spread between studies, not only the spread within the fitted ones.
    let studies: std::collections::BTreeSet<&str> =
        pairs.iter().map(|q| q.study.as_str()).collect();
    let mut held: Vec<HeldOut> = Vec::new();
    for study in studies {
        let train: Vec<&PairedOutcome> =
            pairs.iter().copied().filter(|q| q.study != study).collect();
        let factors = fit_factors(params, &train).map_or(p, |f| f.0);
        for pair in pairs.iter().copied().filter(|q| q.study == study) {
            held.push(HeldOut {
                pair,
                params: factors,
                unstated_steps: unstated_steps(&train, as_kind(pair, false)),
                unstated_pooled_steps: unstated_steps(&train, StartKind::Tuned),
            });
        }
    }
    for (kind, id) in [
        (StartKind::Base, OutcomeFloorBase),
        (StartKind::Instruct, OutcomeFloorInstruct),
        (StartKind::Distilled, OutcomeFloorDistilled),
        (StartKind::Tuned, OutcomeFloorTuned),
    ] {
        let set: Vec<&HeldOut> = held
            .iter()
            .filter(|h| match kind {
                StartKind::Tuned => h.pair.start != StartKind::Base,
                k => h.pair.start == k,
            })
            .collect();
        let (floor, how) = fit_floor(p[id], id, kind, &set);
        p[id] = floor;
        fitted.push(FittedParam {
            id,
            param: floor,
            how,
        });
    }
    fitted.sort_by_key(|f| f.id);
    Some((p, fitted))
}

/// What the before/after pairs say about K_mid's cap exponent (fitted to ScaleRL's 14k and 32k
/// runs in stage 2): its least-squares value over [0, 4] (steps of 0.1), every other term at its
/// fitted value, with the 90% profile range (Δcost ≤ χ²₁(0.90) σ²), on the pairs whose stated
/// cap is above the 8,192-token reference (the only ones the term moves). None with fewer than
/// [`MIN_TIMED_PAIRS`] such pairs.
pub fn cap_exponent_profile(
    params: &OutcomeParams,
    pairs: &[&PairedOutcome],
) -> Option<(f64, f64, f64, usize)> {
    let long: Vec<&PairedOutcome> = pairs
        .iter()
        .copied()
        .filter(|q| {
            q.cap_tokens
                .is_some_and(|c| c > crate::outcome::params::REFERENCE_RESPONSE_CAP)
        })
        .collect();
    if long.len() < MIN_TIMED_PAIRS {
        return None;
    }
    let (best, lo, hi) = scan_one(
        params,
        ParamId::KMidLengthExponent,
        &long,
        (0..=40).map(|k| 0.1 * k as f64),
        |e| e,
    );
    Some((best, lo, hi, long.len()))
}

/// A profile scan of one parameter: `id` set to `value(x)` at each scanned `x`, every other term
/// held, the cost the sum of squared logit residuals over `pairs`. The best `x` (the first of
/// equal costs) and the lowest and highest `x` of its 90% profile range ([`profile_range`],
/// n − 1 degrees of freedom).
fn scan_one(
    params: &OutcomeParams,
    id: ParamId,
    pairs: &[&PairedOutcome],
    xs: impl Iterator<Item = f64>,
    value: impl Fn(f64) -> f64,
) -> (f64, f64, f64) {
    let signals = signals(pairs, false);
    let costs: Vec<(f64, f64)> = xs
        .map(|x| {
            let mut q = *params;
            q[id].value = value(x);
            (
                x,
                residuals(&q, pairs, &signals).iter().map(|r| r * r).sum(),
            )
        })
        .collect();
    let best = costs
        .iter()
        .copied()
        .fold((0.0, f64::INFINITY), |b, c| if c.1 < b.1 { c } else { b });
    let dof = pairs.len().saturating_sub(1).max(1) as f64;
    let (lo, hi) = profile_range(&costs, best.1, dof);
    (best.0, lo, hi)
}

/// The lowest and highest scanned value whose cost is within the 90% profile-likelihood bound of
/// the best, Δcost ≤ χ²₁(0.90) × σ² with σ² = best cost / `dof`. `costs` are (value, cost) in
/// scan order; the best is among them, so the range is never empty.
fn profile_range(costs: &[(f64, f64)], best_cost: f64, dof: f64) -> (f64, f64) {
    let threshold = best_cost + 2.705_543 * best_cost / dof;
    let inside: Vec<f64> = costs
        .iter()
        .filter(|(_, c)| *c <= threshold)
        .map(|(x, _)| *x)
        .collect();
    (inside[0], inside[inside.len() - 1])
}

/// A pair with the parameters fitted without its study.
struct HeldOut<'a> {
    pair: &'a PairedOutcome,
    params: OutcomeParams,
    unstated_steps: f64,
    unstated_pooled_steps: f64,
}

impl HeldOut<'_> {
    /// Inside its 90% interval when predicted as `kind` with the floor `id` at `sd`.
    fn covered(&self, kind: StartKind, id: ParamId, sd: f64) -> bool {
        let mut q = self.params;
        q[id].value = sd;
        let steps = if kind == StartKind::Tuned {
            self.unstated_pooled_steps
        } else {
            self.unstated_steps
        };
        let mut s = self.pair.signal(steps);
        s.start = kind;
        let p = predict(&q, &s);
        p.score_low <= self.pair.after && self.pair.after <= p.score_high
    }
}

/// The start, gain and competition factors and the downside of stage 7 (everything but the
/// floors).
fn fit_factors(
    params: &OutcomeParams,
    pairs: &[&PairedOutcome],
) -> Option<(OutcomeParams, Vec<FittedParam>)> {
    let tuned: Vec<&PairedOutcome> = pairs
        .iter()
        .copied()
        .filter(|p| p.start != StartKind::Base)
        .collect();
    if tuned.len() < 4 {
        return None;
    }
    // Fixed starting values, so the fit does not depend on the defaults it replaces.
    let mut f = Fitting {
        params: *params,
        fitted: Vec::new(),
    };
    for id in [
        ParamId::InstructGainFactor,
        ParamId::DistilledGainFactor,
        ParamId::TunedGainFactor,
        ParamId::CompetitionGainFactor,
        ParamId::GeneralGainFactor,
    ] {
        f.params[id].value = 1.0;
    }
    // τ_f starts at the top of its scan (no closure faster than ability); the gain factors are
    // fitted at it, τ_f at those gains, and the gains once more at the fitted τ_f.
    f.params[ParamId::FormatClosureSteps].value = format_scan_top();
    f.time_factors(pairs, &tuned)?;
    f.gain_factors(pairs, &tuned)?;
    f.format_closure(pairs);
    f.gain_factors(pairs, &tuned)?;
    f.downside(pairs);
    f.fitted.sort_by_key(|x| x.id);
    Some((f.params, f.fitted))
}

/// The pairs of one kind of start.
fn of_kind<'p>(pairs: &[&'p PairedOutcome], kind: StartKind) -> Vec<&'p PairedOutcome> {
    pairs.iter().copied().filter(|p| p.start == kind).collect()
}

/// How many pairs of one kind of start state their run's length.
fn timed(pairs: &[&PairedOutcome], kind: StartKind) -> usize {
    of_kind(pairs, kind)
        .iter()
        .filter(|p| p.steps.is_some())
        .count()
}

/// How a profile range reads: two-sided, or bounded above only.
fn bound_text(bounded: bool) -> &'static str {
    if bounded {
        "90% profile range"
    } else {
        "bounded above only: the slowest time scale the data allow"
    }
}

/// The scan of ln τ_f (steps): e^0 to e^10, steps of 0.2. The top, 22,026 steps, is "no faster
/// than ability" for any run the evidence holds.
const FORMAT_SCAN: (f64, f64, usize) = (0.0, 0.2, 50);

/// The top of [`FORMAT_SCAN`], steps.
fn format_scan_top() -> f64 {
    let (from, step, points) = FORMAT_SCAN;
    (from + step * points as f64).exp()
}

/// The base-start pairs of stated length whose base score sits below what their model's other
/// math benchmarks imply (`outcome::ability`): the only ones τ_f moves.
fn with_format_gap<'p>(pairs: &[&'p PairedOutcome]) -> Vec<&'p PairedOutcome> {
    pairs
        .iter()
        .copied()
        .filter(|p| {
            p.start == StartKind::Base
                && p.steps.is_some()
                && p.ability_score.is_some_and(|a| a > p.base)
        })
        .collect()
}

/// Stage 7's steps, on the fit the earlier stages left.
impl Fitting {
    /// The format gap's time scale τ_f, at the gain factors fitted so far: the least-squares
    /// value of a scan of ln τ_f ([`FORMAT_SCAN`]) on the pairs with a format gap
    /// ([`with_format_gap`]), with its 90% profile range; the slowest value the data allow when
    /// they bound it from above only (every gap already closed at the first checkpoint); the top
    /// of the scan (no closure faster than ability) when they bound it neither way or there are
    /// fewer than [`MIN_TIMED_PAIRS`] pairs.
    fn format_closure(&mut self, pairs: &[&PairedOutcome]) {
        let (from, step, points) = FORMAT_SCAN;
        let top = format_scan_top();
        let gaps = with_format_gap(pairs);
        if gaps.len() < MIN_TIMED_PAIRS {
            let how = format!(
                "stage 7: not identified ({} base pairs of stated length with a format gap): the top of the scan, no closure faster than ability",
                gaps.len()
            );
            self.set(ParamId::FormatClosureSteps, Param::new(top, top, top), how);
            return;
        }
        let (best, lo, hi) = scan_one(
            &self.params,
            ParamId::FormatClosureSteps,
            &gaps,
            (0..=points).map(|k| from + step * k as f64),
            f64::exp,
        );
        let bounded = lo > from + 1e-9;
        let unbounded_above = hi >= top.ln() - 1e-9;
        if !bounded && unbounded_above {
            let how = format!(
                "stage 7: not identified ({} base pairs of stated length with a format gap allow any value of the scan): the top of the scan, no closure faster than ability",
                gaps.len()
            );
            self.set(ParamId::FormatClosureSteps, Param::new(top, top, top), how);
            return;
        }
        let value = if bounded { best } else { hi };
        let how = format!(
            "stage 7: {} base pairs of stated length with a format gap, {}",
            gaps.len(),
            bound_text(bounded)
        );
        self.set(
            ParamId::FormatClosureSteps,
            Param::new(value.exp(), lo.exp(), hi.exp()),
            how,
        );
    }

    /// The time factors first, by profile likelihood (their gain factors refitted alongside):
    /// the pooled tuned one, then each kind with enough pairs of stated length; the others
    /// borrow the pooled one.
    fn time_factors(&mut self, pairs: &[&PairedOutcome], tuned: &[&PairedOutcome]) -> Option<()> {
        use ParamId::*;
        let timed_tuned = tuned.iter().filter(|q| q.steps.is_some()).count();
        let (t, lo, hi, bounded, g) =
            profile_time(&self.params, TunedGainFactor, TunedTimeFactor, tuned, true)?;
        self.params[TunedGainFactor].value = g;
        let how = format!(
            "stage 7: {} instruct and distilled pairs pooled ({timed_tuned} of stated length), {}",
            tuned.len(),
            bound_text(bounded)
        );
        self.set(TunedTimeFactor, Param::new(t, lo, hi), how);
        for (kind, gain, time) in [
            (StartKind::Instruct, InstructGainFactor, InstructTimeFactor),
            (
                StartKind::Distilled,
                DistilledGainFactor,
                DistilledTimeFactor,
            ),
        ] {
            let set = of_kind(pairs, kind);
            let n_timed = timed(pairs, kind);
            if n_timed < MIN_TIMED_PAIRS {
                let how = format!(
                    "stage 7: not identified ({n_timed} {} pairs of stated length): the pooled tuned factor",
                    kind.as_str()
                );
                self.set(time, self.params[TunedTimeFactor], how);
                continue;
            }
            let (t, lo, hi, bounded, g) = profile_time(&self.params, gain, time, &set, false)?;
            self.params[gain].value = g;
            let how = format!(
                "stage 7: {} {} pairs ({n_timed} of stated length), {}",
                set.len(),
                kind.as_str(),
                bound_text(bounded)
            );
            self.set(time, Param::new(t, lo, hi), how);
        }
        Some(())
    }

    /// Then the gain factors and the competition terms at those time scales: the pooled gain
    /// on the tuned pairs, each kind's and the benchmark terms on every pair.
    fn gain_factors(&mut self, pairs: &[&PairedOutcome], tuned: &[&PairedOutcome]) -> Option<()> {
        use ParamId::*;
        let pooled = Layout {
            gains: vec![TunedGainFactor],
        };
        let tuned_signals = signals(tuned, true);
        let (theta, se) = least_squares(
            &|t| {
                Some(residuals(
                    &pooled.apply(&self.params, t),
                    tuned,
                    &tuned_signals,
                ))
            },
            &pooled.start(&self.params),
            0.0,
        )?;
        let fit = pooled.apply(&self.params, &theta);
        for (id, param) in pooled.ranges(&fit, &theta, &se) {
            let how = format!(
                "stage 7: {} instruct and distilled pairs pooled",
                tuned.len()
            );
            self.set(id, param, how);
        }
        let mut layout = Layout { gains: Vec::new() };
        for (kind, gain) in [
            (StartKind::Instruct, InstructGainFactor),
            (StartKind::Distilled, DistilledGainFactor),
        ] {
            if of_kind(pairs, kind).is_empty() {
                let how = format!(
                    "stage 7: no {} pairs: the pooled tuned factor",
                    kind.as_str()
                );
                self.set(gain, self.params[TunedGainFactor], how);
            } else {
                layout.gains.push(gain);
            }
        }
        for (benchmark, gain) in [
            (Benchmark::Competition, CompetitionGainFactor),
            (Benchmark::General, GeneralGainFactor),
        ] {
            if pairs.iter().any(|q| q.benchmark == benchmark) {
                layout.gains.push(gain);
            } else {
                let how = format!(
                    "stage 7: no pairs on {} benchmarks: no change to Δ",
                    benchmark.as_str()
                );
                self.set(gain, Param::new(1.0, 1.0, 1.0), how);
            }
        }
        let all_signals = signals(pairs, false);
        let (theta, se) = least_squares(
            &|t| {
                Some(residuals(
                    &layout.apply(&self.params, t),
                    pairs,
                    &all_signals,
                ))
            },
            &layout.start(&self.params),
            0.0,
        )?;
        let fit = layout.apply(&self.params, &theta);
        let of_benchmark = |b: Benchmark| pairs.iter().filter(|p| p.benchmark == b).count();
        for (id, param) in layout.ranges(&fit, &theta, &se) {
            let n = match id {
                InstructGainFactor => of_kind(pairs, StartKind::Instruct).len(),
                DistilledGainFactor => of_kind(pairs, StartKind::Distilled).len(),
                CompetitionGainFactor => of_benchmark(Benchmark::Competition),
                GeneralGainFactor => of_benchmark(Benchmark::General),
                _ => pairs.len(),
            };
            self.set(id, param, format!("stage 7: {n} before/after pairs"));
        }
        Some(())
    }

    /// The downside: ground lost, as a variance per 1,000 steps.
    fn downside(&mut self, pairs: &[&PairedOutcome]) {
        let losses: Vec<f64> = pairs
            .iter()
            .filter_map(|q| {
                let steps = q.steps?;
                let change = logit(q.after) - logit(q.base);
                Some(change.min(0.0).powi(2) * crate::outcome::DOWNSIDE_REFERENCE_STEPS / steps)
            })
            .collect();
        let lost = pairs
            .iter()
            .filter(|q| q.steps.is_some() && q.after < q.base)
            .count();
        let sd = (losses.iter().sum::<f64>() / losses.len().max(1) as f64).sqrt();
        self.set(
            ParamId::DownsideSdAt1000Steps,
            Param::new(sd, 0.5 * sd, 2.0 * sd),
            format!(
                "stage 7: losses of {lost} of {} pairs of stated length, variance per 1,000 steps",
                losses.len()
            ),
        );
    }
}

/// sd of the kind's logit gains, the floor's lower bound times Z90.
fn gain_spread(set: &[&PairedOutcome]) -> f64 {
    let gains: Vec<f64> = set.iter().map(|q| logit(q.after) - logit(q.base)).collect();
    let n = gains.len().max(1) as f64;
    let mean = gains.iter().sum::<f64>() / n;
    (gains.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1.0).max(1.0)).sqrt()
}

/// The floor of one kind: the smallest sd in [0, 4] (bisection) whose intervals hold 90% of the
/// kind's held-out pairs, raised to the kind's spread of logit gains over Z90.
fn fit_floor(default: Param, id: ParamId, kind: StartKind, set: &[&HeldOut]) -> (Param, String) {
    if set.is_empty() {
        return (
            default,
            "stage 7: no pairs of this kind: the default".to_string(),
        );
    }
    let pairs: Vec<&PairedOutcome> = set.iter().map(|h| h.pair).collect();
    let spread = gain_spread(&pairs) / Z90;
    let covered =
        |sd: f64| set.iter().filter(|h| h.covered(kind, id, sd)).count() as f64 / set.len() as f64;
    let (mut lo, mut hi) = (0.0, 4.0);
    if covered(lo) < 0.9 {
        for _ in 0..30 {
            let mid = 0.5 * (lo + hi);
            if covered(mid) >= 0.9 {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    } else {
        hi = 0.0;
    }
    let value = hi.max(spread);
    (
        Param::new(value, 0.8 * value, 1.2 * value),
        format!(
            "stage 7: 90% of {} pairs inside, each predicted with its study left out; at least their logit-gain sd {:.3} / Z90",
            set.len(),
            spread * Z90
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A base-start pair at `steps` with a format gap (base 0.05, implied 0.4), its score after
    /// RL what the prior predicts with τ_f = `tau` steps, plus `noise`.
    fn gap_pair(params: &OutcomeParams, steps: f64, tau: f64, noise: f64) -> PairedOutcome {
        let mut pair = PairedOutcome {
            run: format!("run at {steps}"),
            start_model: "m".into(),
            base: 0.05,
            steps: Some(steps),
            ability_score: Some(0.4),
            ..PairedOutcome::for_test(
                "synthetic",
                StartKind::Base,
                "GSM8K",
                Benchmark::Standard,
                "gsm8k",
            )
        };
        let mut q = *params;
        q[ParamId::FormatClosureSteps].value = tau;
        pair.after = predict_score(&q, &pair.signal(steps)) + noise;
        pair
    }

    /// Pairs at these steps made with τ_f = 30, each moved ±1 point in turn (so the fit has a
    /// residual to set its range with).
    fn gap_pairs(params: &OutcomeParams, steps: &[f64]) -> Vec<PairedOutcome> {
        steps
            .iter()
            .enumerate()
            .map(|(k, &s)| gap_pair(params, s, 30.0, if k % 2 == 0 { 0.01 } else { -0.01 }))
            .collect()
    }

    #[test]
    fn the_format_closure_scan_recovers_the_time_scale_it_was_made_with() {
        // Pairs made by the prior itself at τ_f = 30 steps, checkpoints from 5 to 160 steps (the
        // early ones bound it from below): the scan finds it. The ability's own time scale is put
        // far away, so that the gap's closing is all that moves these scores.
        let mut params = OutcomeParams::default();
        params[ParamId::KMidAt7b].value = 1e9;
        let pairs = gap_pairs(&params, &[5.0, 10.0, 20.0, 40.0, 80.0, 160.0]);
        let refs: Vec<&PairedOutcome> = pairs.iter().collect();
        let mut f = Fitting {
            params,
            fitted: Vec::new(),
        };
        f.format_closure(&refs);
        let got = f.params[ParamId::FormatClosureSteps];
        // (within one step of the scan, 0.2 in ln τ_f)
        assert!((got.value.ln() - 30f64.ln()).abs() <= 0.2, "{got:?}");
        assert!(got.low <= got.value && got.value <= got.high, "{got:?}");
        let how = |f: &Fitting| f.fitted.last().unwrap().how.clone();
        assert!(how(&f).contains("90% profile range"), "{:?}", f.fitted);
        // Checkpoints only after the gap has closed bound it from above only: the slowest value
        // they allow, and the report says so.
        let late = gap_pairs(&params, &[400.0, 800.0, 1600.0]);
        let refs: Vec<&PairedOutcome> = late.iter().collect();
        f.format_closure(&refs);
        let got = f.params[ParamId::FormatClosureSteps];
        assert!(got.value > 30.0 && got.value == got.high, "{got:?}");
        assert!(how(&f).contains("bounded above only"), "{:?}", f.fitted);
        // When the ability alone reaches the implied score by those checkpoints, they say nothing
        // about τ_f: not identified.
        let ability = gap_pairs(&OutcomeParams::default(), &[400.0, 800.0, 1600.0]);
        let mut g = Fitting {
            params: OutcomeParams::default(),
            fitted: Vec::new(),
        };
        g.format_closure(&ability.iter().collect::<Vec<_>>());
        assert!(how(&g).contains("not identified"), "{:?}", g.fitted);
        // Fewer than three pairs with a gap: not identified, no closure faster than ability.
        f.format_closure(&refs[..2]);
        assert_eq!(
            f.params[ParamId::FormatClosureSteps].value,
            format_scan_top()
        );
        assert!(how(&f).contains("not identified"));
        assert_eq!(
            f.fitted.len(),
            1,
            "a refit replaces the record: {:?}",
            f.fitted
        );
    }
}
