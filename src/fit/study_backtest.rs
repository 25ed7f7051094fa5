//! The outcome prior scored leave one study out on every published before/after pair
//! (`evidence/before_after.csv`): each study's pairs predicted by the prior fitted without that
//! study (stage 7 of src/fit/starts.rs refitted on the others; SimpleRL-Zoo, which stages 3-5
//! are fitted to, left out one model at a time instead, since without it Δ(N) has no evidence),
//! against the baseline "base + the mean gain of the other studies on the same benchmark", overall
//! and per subgroup, with the share of within-study pairs of runs whose difference the prior
//! orders right.

use std::collections::BTreeMap;

use crate::fit::backtest::{correlation, rmse};
use crate::fit::evidence::{Evidence, Outcome};
use crate::fit::pairs::{PairedOutcome, benchmark_levels, with_ability_scores};
use crate::fit::prior::leave_one_model_out;
use crate::fit::starts::{fit_starts, unstated_steps};
use crate::outcome::{OutcomeParams, ParamId, predict};

/// The study whose pairs stages 3-5 are fitted to.
pub const SIMPLERL_STUDY: &str = "simplerl-zoo";

/// One pair predicted with its study held out.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyRow {
    /// The pair.
    pub pair: PairedOutcome,
    /// Predicted score after RL.
    pub predicted: f64,
    /// Low end of the 90% interval.
    pub low: f64,
    /// High end.
    pub high: f64,
    /// Base + the mean gain of the other studies' pairs on the same benchmark family (all their
    /// pairs of the same start kind where none is on it).
    pub baseline: f64,
}

impl StudyRow {
    /// The measured score lies inside the interval.
    pub fn covered(&self) -> bool {
        self.low <= self.pair.after && self.pair.after <= self.high
    }
}

/// Scores of one group of rows.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupScore {
    /// The group's name (`overall`, `start: distilled`, `base < 0.15`, ...).
    pub group: String,
    /// Pairs in it.
    pub cases: usize,
    /// Share inside their 90% intervals.
    pub coverage: f64,
    /// RMSE of the prior, points.
    pub rmse_model: f64,
    /// RMSE of the mean-gain baseline, points.
    pub rmse_baseline: f64,
    /// Pearson correlation of predicted and measured gains (NaN when either is constant).
    pub gain_correlation: f64,
    /// Mean interval width, points.
    pub mean_width: f64,
}

/// Within-study orderings: pairs of runs of one study on one metric whose measured scores
/// differ by at least [`SIGN_TOLERANCE`] and whose settings differ in something the prior models
/// (size, steps, cap, group size, prompts per step, LoRA rank, start kind or base score). Pairs
/// that differ only in what it does not model (the loss, the filtering, the data) are counted
/// apart.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignScore {
    /// Pairs of runs compared.
    pub pairs: usize,
    /// Share whose predicted difference has the measured sign.
    pub right: f64,
    /// Share the prior cannot tell apart (the same prediction for both).
    pub ties: f64,
    /// Pairs of runs left out because they differ only in what the prior does not model.
    pub method_only: usize,
}

/// Measured differences smaller than this (0.5 points) are not counted as orderings.
pub const SIGN_TOLERANCE: f64 = 0.005;

/// The backtest's rows and scores.
#[derive(Debug, Clone, PartialEq)]
pub struct StudyBacktest {
    /// One row per pair.
    pub rows: Vec<StudyRow>,
    /// Overall, then per subgroup (start kind, base band, cap band, benchmark kind, LoRA or
    /// full), in that order.
    pub groups: Vec<GroupScore>,
    /// Within-study orderings.
    pub signs: SignScore,
    /// Studies held out.
    pub studies: Vec<String>,
}

/// Scores `rows` as one group.
pub fn score(group: &str, rows: &[&StudyRow]) -> GroupScore {
    let n = rows.len().max(1) as f64;
    GroupScore {
        group: group.to_string(),
        cases: rows.len(),
        coverage: rows.iter().filter(|r| r.covered()).count() as f64 / n,
        rmse_model: rmse(rows.iter().map(|r| (r.predicted, r.pair.after))),
        rmse_baseline: rmse(rows.iter().map(|r| (r.baseline, r.pair.after))),
        gain_correlation: correlation(
            &rows
                .iter()
                .map(|r| r.predicted - r.pair.base)
                .collect::<Vec<_>>(),
            &rows
                .iter()
                .map(|r| r.pair.after - r.pair.base)
                .collect::<Vec<_>>(),
        ),
        mean_width: 100.0 * rows.iter().map(|r| r.high - r.low).sum::<f64>() / n,
    }
}

/// The mean-gain baseline of `pair` from the pairs of other studies.
fn baseline(pair: &PairedOutcome, pairs: &[PairedOutcome]) -> f64 {
    let others = |f: &dyn Fn(&PairedOutcome) -> bool| -> Vec<f64> {
        pairs
            .iter()
            .filter(|q| q.study != pair.study && f(q))
            .map(|q| q.after - q.base)
            .collect()
    };
    let mut gains = others(&|q| q.family == pair.family);
    if gains.is_empty() {
        gains = others(&|q| q.start == pair.start);
    }
    if gains.is_empty() {
        gains = others(&|_| true);
    }
    (pair.base + gains.iter().sum::<f64>() / gains.len().max(1) as f64).clamp(0.0, 1.0)
}

/// The parameters that predict `study`'s pairs (None when the refit fails): stage 7 without the
/// study; for SimpleRL-Zoo, per model, stage 3 without that model and stage 7 without the study.
fn held_out_params(
    params: &OutcomeParams,
    evidence: &Evidence,
    pairs: &[PairedOutcome],
    study: &str,
) -> BTreeMap<String, OutcomeParams> {
    let train: Vec<&PairedOutcome> = pairs.iter().filter(|p| p.study != study).collect();
    let mut out = BTreeMap::new();
    if study == SIMPLERL_STUDY {
        // Stage 7 once without the study; each model's Δ(N) from stage 3 without that model.
        let Some((fitted, _)) = fit_starts(params, &train) else {
            return out;
        };
        for (model, p) in leave_one_model_out(params, &evidence.outcomes) {
            let mut q = fitted;
            for id in [ParamId::GainLogitAt7b, ParamId::GainLogitPerDecade] {
                q[id] = p[id];
            }
            out.insert(model.to_string(), q);
        }
    } else if let Some((fitted, _)) = fit_starts(params, &train) {
        out.insert(String::new(), fitted);
    }
    out
}

/// Runs the backtest on `evidence` (its SimpleRL-Zoo outcomes and its pairs) from `params` (the
/// fitted prior).
pub fn study_backtest(params: &OutcomeParams, evidence: &Evidence) -> StudyBacktest {
    study_backtest_with(params, evidence, &|| {})
}

/// [`study_backtest`], calling `study_done` as each held-out study's refit and predictions
/// finish. The studies' refits run in parallel on rayon's pool (each is independent and
/// single-threaded), and their rows are collected in study order, so the result is the same for
/// any thread count. A stop request ([`crate::interrupt`]) skips the studies not yet started: the
/// result is then partial, and the caller's `interrupt::check` must refuse it.
pub fn study_backtest_with(
    params: &OutcomeParams,
    evidence: &Evidence,
    study_done: &(dyn Fn() + Sync),
) -> StudyBacktest {
    use rayon::prelude::*;
    let studies = held_out_studies(evidence);
    let per_study: Vec<Vec<StudyRow>> = studies
        .par_iter()
        .map(|study| {
            if crate::interrupt::requested().is_some() {
                return Vec::new();
            }
            let rows = held_out_rows(params, evidence, study);
            study_done();
            rows
        })
        .collect();
    let rows: Vec<StudyRow> = per_study.into_iter().flatten().collect();
    let groups = groups(&rows);
    let signs = signs(&rows);
    StudyBacktest {
        rows,
        groups,
        signs,
        studies,
    }
}

/// The studies the backtest holds out in turn: every study with before/after pairs, in name
/// order.
pub fn held_out_studies(evidence: &Evidence) -> Vec<String> {
    let set: std::collections::BTreeSet<&str> =
        evidence.pairs.iter().map(|p| p.study.as_str()).collect();
    set.into_iter().map(str::to_string).collect()
}

/// `study`'s pairs predicted by the prior refitted without it.
fn held_out_rows(params: &OutcomeParams, evidence: &Evidence, study: &str) -> Vec<StudyRow> {
    // The benchmarks' levels from the other studies' scores after RL: a held-out study's
    // outcomes never set the levels its format gaps are read against.
    let others: Vec<&PairedOutcome> = evidence.pairs.iter().filter(|p| p.study != study).collect();
    let pairs = with_ability_scores(&evidence.pairs, &benchmark_levels(&others));
    let held = held_out_params(params, evidence, &pairs, study);
    let train: Vec<&PairedOutcome> = pairs.iter().filter(|p| p.study != study).collect();
    let mut rows = Vec::new();
    for pair in pairs.iter().filter(|p| p.study == study) {
        // SimpleRL-Zoo's pairs name their model as the start checkpoint.
        let key = if study == SIMPLERL_STUDY {
            simplerl_model(&evidence.outcomes, pair)
        } else {
            String::new()
        };
        let Some(p) = held.get(&key) else { continue };
        let q = predict(p, &pair.signal(unstated_steps(&train, pair.start)));
        rows.push(StudyRow {
            pair: pair.clone(),
            predicted: q.score,
            low: q.score_low,
            high: q.score_high,
            baseline: baseline(pair, &evidence.pairs),
        });
    }
    rows
}

/// The SimpleRL-Zoo model a pair belongs to (the evidence's model name its start checkpoint
/// matches), or the start checkpoint itself.
fn simplerl_model(outcomes: &[Outcome], pair: &PairedOutcome) -> String {
    outcomes
        .iter()
        .find(|o| o.model == pair.start_model)
        .map_or_else(|| pair.start_model.clone(), |o| o.model.clone())
}

/// A row's subgroup along one breakdown (start kind, base band, cap band, benchmark, LoRA).
type GroupKey = fn(&StudyRow) -> String;

/// Overall and per subgroup.
fn groups(rows: &[StudyRow]) -> Vec<GroupScore> {
    let all: Vec<&StudyRow> = rows.iter().collect();
    let mut out = vec![score("overall", &all)];
    let keyed: [GroupKey; 5] = [
        |r| r.pair.start.as_str().to_string(),
        |r| r.pair.base_band().to_string(),
        |r| r.pair.cap_band().to_string(),
        |r| r.pair.benchmark.as_str().to_string(),
        |r| {
            if r.pair.lora_rank.is_some() {
                "LoRA".to_string()
            } else {
                "full".to_string()
            }
        },
    ];
    for key in keyed {
        let mut by: BTreeMap<String, Vec<&StudyRow>> = BTreeMap::new();
        for r in rows {
            by.entry(key(r)).or_default().push(r);
        }
        for (name, members) in by {
            out.push(score(&name, &members));
        }
    }
    out
}

/// Whether two pairs' runs have the same settings as far as the prior sees them.
fn same_settings(a: &PairedOutcome, b: &PairedOutcome) -> bool {
    a.params_b == b.params_b
        && a.steps == b.steps
        && a.cap_tokens == b.cap_tokens
        && a.group_size == b.group_size
        && a.prompts_per_step == b.prompts_per_step
        && a.lora_rank == b.lora_rank
        && a.start == b.start
        && a.base == b.base
}

/// Within-study orderings of runs on one metric.
fn signs(rows: &[StudyRow]) -> SignScore {
    let (mut pairs, mut right, mut ties, mut method_only) = (0usize, 0usize, 0usize, 0usize);
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if a.pair.study != b.pair.study || a.pair.metric != b.pair.metric {
                continue;
            }
            let measured = a.pair.after - b.pair.after;
            if measured.abs() < SIGN_TOLERANCE {
                continue;
            }
            if same_settings(&a.pair, &b.pair) {
                method_only += 1;
                continue;
            }
            pairs += 1;
            let predicted = a.predicted - b.predicted;
            if predicted.abs() < 1e-9 {
                ties += 1;
            } else if predicted.signum() == measured.signum() {
                right += 1;
            }
        }
    }
    let n = pairs.max(1) as f64;
    SignScore {
        pairs,
        right: right as f64 / n,
        ties: ties as f64 / n,
        method_only,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fit::evidence::embedded_evidence;

    #[test]
    #[ignore = "slow (refits the prior once per study); CI runs it: cargo test -- --include-ignored"]
    fn every_study_is_held_out_and_every_pair_predicted() {
        let evidence = embedded_evidence();
        let b = study_backtest(&OutcomeParams::default(), &evidence);
        assert!(b.studies.len() >= 6, "{:?}", b.studies);
        assert_eq!(b.rows.len(), evidence.pairs.len());
        assert_eq!(b.groups[0].group, "overall");
        assert_eq!(b.groups[0].cases, evidence.pairs.len());
        for r in &b.rows {
            assert!(r.low <= r.predicted && r.predicted <= r.high, "{r:?}");
        }
    }

    #[test]
    fn signs_by_hand() {
        let pair = |study: &str, after: f64, steps: f64| PairedOutcome {
            base: 0.5,
            after,
            steps: Some(steps),
            ..PairedOutcome::for_test(
                study,
                crate::outcome::StartKind::Distilled,
                "AIME24",
                crate::outcome::Benchmark::Competition,
                "aime24",
            )
        };
        let row = |study: &str, after: f64, predicted: f64| StudyRow {
            pair: pair(study, after, 1000.0 * after),
            predicted,
            low: 0.0,
            high: 1.0,
            baseline: 0.5,
        };
        // Within study a: 0.6 > 0.55 predicted 0.6 > 0.58 (right); 0.6 > 0.5 predicted a tie
        // ... of the three orderings in a, two right and one tie; study b's single run and the
        // 0.002 difference are not compared.
        let rows = vec![
            row("a", 0.60, 0.60),
            row("a", 0.55, 0.58),
            row("a", 0.50, 0.60),
            row("b", 0.70, 0.10),
            row("a", 0.598, 0.5),
        ];
        let s = signs(&rows);
        // Orderings in a (|d| >= 0.005): (0.60,0.55) right, (0.60,0.50) tie, (0.55,0.50) wrong
        // (0.58 < 0.60), (0.55,0.598) wrong (0.58 > 0.5), (0.50,0.598) wrong (0.6 > 0.5);
        // (0.60,0.598) skipped.
        assert_eq!(s.pairs, 5);
        assert!((s.right - 0.2).abs() < 1e-12, "{s:?}");
        assert!((s.ties - 0.2).abs() < 1e-12, "{s:?}");
        assert_eq!(s.method_only, 0);
        // The same settings (one recipe against another): left out of the orderings.
        let mut same = rows.clone();
        for r in &mut same {
            r.pair.steps = Some(100.0);
        }
        let s = signs(&same);
        assert_eq!((s.pairs, s.method_only), (0, 5));
    }
}
