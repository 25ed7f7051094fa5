//! `backtest`: the outcome model against published before/after RL outcomes, beside naive
//! baselines, so every change to the model is measured on data it did not choose.
//!
//! Today the evidence base's only study with before/after scores per model and benchmark is
//! SimpleRL-Zoo (arXiv 2503.18892: ten base models, zero-RL GRPO with 1,024 prompts x 8 rollouts
//! and an 8,192-token cap, about 100 steps). Each (model, benchmark) pair is predicted from its
//! measured base score; the baselines are "no RL gain" and "base + the mean gain of the other
//! models on the same benchmark" (leave one model out, the within-study analogue of
//! leave-one-study-out). Reported: RMSE in points, coverage of the model's interval, and the
//! correlation of predicted and measured gains.

use std::collections::BTreeMap;
use std::path::Path;

use crate::config::{RewardKind, Task};
use crate::error::{Error, Result};
use crate::evaluate::evaluate_cell;
use crate::ledger::lengths::{beta_moment, beta_parameters, response_lengths, zero_signal_rate};
use crate::outcome::{CellSignal, OutcomeParams, predict};
use crate::spec::Grid;

/// One published outcome: a model's score on a benchmark before and after RL.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// Model as the source names it.
    pub model: String,
    /// Parameters, billions.
    pub params_b: f64,
    /// Benchmark.
    pub metric: String,
    /// Score before RL (0-1).
    pub base: f64,
    /// Score after RL (0-1).
    pub after: f64,
}

/// The run SimpleRL-Zoo reports for every model: prompts per step, responses per prompt, cap and
/// steps (its README: batch 1,024, 8 rollouts, 8,192 tokens, about 100 steps; the step count is
/// stated for some models and assumed for the others).
pub const SIMPLERL_RUN: (f64, u64, f64, f64) = (1024.0, 8, 8192.0, 100.0);

/// Reads the before/after pairs of the evidence CSV: rows with `x_name = rl_step`, `x_value` 0
/// for the base and empty or positive for the released checkpoint; percent values become
/// fractions. The derived `Avg` column is left out.
pub fn read_outcomes(path: &Path) -> Result<Vec<Outcome>> {
    let mut reader =
        csv::Reader::from_path(path).map_err(|e| Error::in_file(path, None, "", e.to_string()))?;
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", e.to_string()))?
        .clone();
    let column = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| Error::in_file(path, Some(1), name, "missing column"))
    };
    let (model, params, x_name, x_value, metric, value) = (
        column("model")?,
        column("params_b")?,
        column("x_name")?,
        column("x_value")?,
        column("metric")?,
        column("value")?,
    );
    type Key = (String, String);
    let (mut before, mut after): (BTreeMap<Key, f64>, BTreeMap<Key, f64>) = Default::default();
    let mut sizes: BTreeMap<String, f64> = BTreeMap::new();
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| Error::in_file(path, Some(k + 2), "", e.to_string()))?;
        let get = |i: usize| record.get(i).unwrap_or("").trim();
        if get(x_name) != "rl_step" || get(metric) == "Avg" {
            continue;
        }
        let (Ok(v), Ok(size)) = (get(value).parse::<f64>(), get(params).parse::<f64>()) else {
            continue;
        };
        let key = (get(model).to_string(), get(metric).to_string());
        sizes.insert(get(model).to_string(), size);
        match get(x_value) {
            "0" => before.insert(key, v / 100.0),
            _ => after.insert(key, v / 100.0),
        };
    }
    Ok(before
        .into_iter()
        .filter_map(|((m, metric), base)| {
            let after = *after.get(&(m.clone(), metric.clone()))?;
            Some(Outcome {
                params_b: sizes[&m],
                model: m,
                metric,
                base,
                after,
            })
        })
        .collect())
}

/// What the prior knows about one outcome's run: SimpleRL-Zoo's run shape, the measured base as
/// the start, and a pass-rate profile centred on the base score (the task's default spread).
fn signal_of(o: &Outcome) -> CellSignal {
    let (prompts, group, cap, steps) = SIMPLERL_RUN;
    let task = Task::default();
    let mean = o.base.clamp(0.01, 0.99);
    let (alpha, beta) = beta_parameters(mean, task.pass_rate_concentration);
    let zero_signal = zero_signal_rate(mean, task.pass_rate_concentration, group);
    let lengths = response_lengths(task.mean_response_tokens, task.response_length_cv, cap);
    CellSignal {
        policy_params: o.params_b * 1e9,
        iterations: steps,
        update_epochs: 1.0,
        useful_rollouts_per_step: prompts
            * group as f64
            * (1.0 - zero_signal)
            * (1.0 - lengths.truncation_rate),
        coverage: 1.0 - beta_moment(beta, alpha, group),
        truncation_rate: lengths.truncation_rate,
        reward: RewardKind::Rule,
        lora_rank: None,
        measured_base_score: Some(o.base),
    }
}

/// One outcome predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestRow {
    /// The outcome.
    pub outcome: Outcome,
    /// The model's prediction and interval.
    pub predicted: f64,
    /// Low end.
    pub low: f64,
    /// High end.
    pub high: f64,
    /// Base + the mean gain of the other models on the same benchmark.
    pub mean_gain_baseline: f64,
}

/// The backtest's numbers.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestSummary {
    /// Outcomes predicted.
    pub outcomes: usize,
    /// RMSE of the model, points (0-100).
    pub rmse_model: f64,
    /// RMSE of "no RL gain", points.
    pub rmse_no_gain: f64,
    /// RMSE of "base + mean gain of the other models", points.
    pub rmse_mean_gain: f64,
    /// Share of measured outcomes inside the model's interval.
    pub coverage: f64,
    /// Mean width of the model's interval, points.
    pub mean_interval_width: f64,
    /// Pearson correlation of predicted and measured gains.
    pub gain_correlation: f64,
}

fn rmse(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (sum, n) = pairs.fold((0.0, 0usize), |(s, n), (a, b)| (s + (a - b).powi(2), n + 1));
    100.0 * (sum / n.max(1) as f64).sqrt()
}

fn correlation(xs: &[f64], ys: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / n, ys.iter().sum::<f64>() / n);
    let cov: f64 = xs.iter().zip(ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let vx: f64 = xs.iter().map(|x| (x - mx).powi(2)).sum();
    let vy: f64 = ys.iter().map(|y| (y - my).powi(2)).sum();
    if vx > 0.0 && vy > 0.0 {
        cov / (vx * vy).sqrt()
    } else {
        f64::NAN
    }
}

/// Predicts every outcome with `params` and scores the predictions against the baselines.
pub fn backtest(
    outcomes: &[Outcome],
    params: &OutcomeParams,
) -> (Vec<BacktestRow>, BacktestSummary) {
    let rows: Vec<BacktestRow> = outcomes
        .iter()
        .map(|o| {
            let p = predict(params, &signal_of(o));
            let others: Vec<f64> = outcomes
                .iter()
                .filter(|q| q.metric == o.metric && q.model != o.model)
                .map(|q| q.after - q.base)
                .collect();
            let mean_gain = others.iter().sum::<f64>() / others.len().max(1) as f64;
            BacktestRow {
                outcome: o.clone(),
                predicted: p.score,
                low: p.score_low,
                high: p.score_high,
                mean_gain_baseline: o.base + mean_gain,
            }
        })
        .collect();
    let measured = |r: &BacktestRow| r.outcome.after;
    let summary = BacktestSummary {
        outcomes: rows.len(),
        rmse_model: rmse(rows.iter().map(|r| (r.predicted, measured(r)))),
        rmse_no_gain: rmse(rows.iter().map(|r| (r.outcome.base, measured(r)))),
        rmse_mean_gain: rmse(rows.iter().map(|r| (r.mean_gain_baseline, measured(r)))),
        coverage: rows
            .iter()
            .filter(|r| r.low <= measured(r) && measured(r) <= r.high)
            .count() as f64
            / rows.len().max(1) as f64,
        mean_interval_width: 100.0 * rows.iter().map(|r| r.high - r.low).sum::<f64>()
            / rows.len().max(1) as f64,
        gain_correlation: correlation(
            &rows
                .iter()
                .map(|r| r.predicted - r.outcome.base)
                .collect::<Vec<_>>(),
            &rows
                .iter()
                .map(|r| measured(r) - r.outcome.base)
                .collect::<Vec<_>>(),
        ),
    };
    (rows, summary)
}

/// A published finding set beside what the prior does under the same question.
#[derive(Debug, Clone, PartialEq)]
pub struct Ordering {
    /// The finding.
    pub finding: String,
    /// What the study reports.
    pub published: String,
    /// What the prior gives.
    pub prior: String,
    /// Whether the prior reproduces the finding's direction.
    pub reproduced: bool,
}

/// The best G per budget of `grid` (its first model and reward) at `prompts_per_step`, with the
/// task's mean pass rate set to `pass_rate_mean`: (budget index, G) for every budget with a
/// feasible cell.
pub fn best_group_sizes(
    grid: &Grid,
    pass_rate_mean: f64,
    prompts_per_step: u64,
) -> Vec<(usize, u64)> {
    let mut grid = grid.clone();
    grid.task.pass_rate_mean = pass_rate_mean;
    let total = grid.cell_count().unwrap_or(0);
    let mut best: BTreeMap<usize, (f64, u64)> = BTreeMap::new();
    for id in 0..total {
        let Some(e) = evaluate_cell(&grid, id) else {
            continue;
        };
        let i = e.cell.indices;
        if e.cell.prompts_per_step != prompts_per_step
            || i.model != 0
            || i.reward != 0
            || !e.ledger.feasible()
        {
            continue;
        }
        let entry = best.entry(i.budget).or_insert((f64::NEG_INFINITY, 0));
        if e.prediction.score > entry.0 {
            *entry = (e.prediction.score, e.cell.group_size);
        }
    }
    best.into_iter().map(|(b, (_, g))| (b, g)).collect()
}

/// IsoCompute (arXiv 2603.12151; evidence rows "n_star_saturation" for Qwen2.5-7B-Instruct): the
/// compute-optimal rollouts per problem rise with compute and saturate at 512 on the easy set
/// (base avg@16 0.3-0.6) and at 128 on the hard set (0-0.0625), with 32 problems per batch. The
/// prior is asked the same on `grid` (the bundled isocompute grid) with mean pass rates 0.45 and
/// 0.03.
pub fn isocompute_difficulty(grid: &Grid) -> Ordering {
    let easy = best_group_sizes(grid, 0.45, 32);
    let hard = best_group_sizes(grid, 0.03, 32);
    let list = |v: &[(usize, u64)]| {
        v.iter()
            .map(|(_, g)| g.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let (last_easy, last_hard) = (
        easy.last().map_or(0, |x| x.1),
        hard.last().map_or(0, |x| x.1),
    );
    Ordering {
        finding: "IsoCompute: best G saturates higher on easy than on hard problems".to_string(),
        published: "easy 512, hard 128 (Qwen2.5-7B-Instruct, 32 problems per batch)".to_string(),
        prior: format!(
            "best G per budget, easy: {}; hard: {} (the grid caps G at {} with 32 prompts)",
            list(&easy),
            list(&hard),
            grid.constraints
                .max_rollouts_per_step
                .map_or("none".to_string(), |m| (m / 32).to_string())
        ),
        reproduced: last_easy > last_hard,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(model: &str, metric: &str, base: f64, after: f64) -> Outcome {
        Outcome {
            model: model.into(),
            params_b: 7.6,
            metric: metric.into(),
            base,
            after,
        }
    }

    #[test]
    fn baselines_by_hand() {
        // Two models on one benchmark: gains 0.10 and 0.30. Leave-one-model-out mean gain for
        // the first is 0.30 (so it predicts 0.40 + ... ), for the second 0.10.
        let outcomes = [outcome("a", "m", 0.40, 0.50), outcome("b", "m", 0.20, 0.50)];
        let (rows, s) = backtest(&outcomes, &OutcomeParams::default());
        assert!((rows[0].mean_gain_baseline - 0.70).abs() < 1e-12);
        assert!((rows[1].mean_gain_baseline - 0.30).abs() < 1e-12);
        // No gain: errors 0.10 and 0.30 -> RMSE sqrt((0.01 + 0.09) / 2) = 0.2236 -> 22.36 points.
        assert!((s.rmse_no_gain - 22.360679).abs() < 1e-5, "{s:?}");
        // Mean gain: errors 0.20 and 0.20 -> 20 points.
        assert!((s.rmse_mean_gain - 20.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.outcomes, 2);
    }

    #[test]
    fn the_bundled_evidence_yields_simplerl_pairs() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("evidence/published_results.csv");
        let outcomes = read_outcomes(&path).unwrap();
        // Ten models x seven benchmarks (the derived Avg column left out).
        assert_eq!(outcomes.len(), 70);
        let q = outcomes
            .iter()
            .find(|o| o.model == "Qwen2.5-7B" && o.metric == "GSM8K")
            .unwrap();
        assert!((q.after - 0.917).abs() < 1e-12 && q.base < q.after);
    }

    #[test]
    fn isocompute_question_on_the_bundled_grid() {
        let catalog = crate::catalog::Catalog::embedded();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("grids/isocompute.toml");
        let grid = crate::spec::load(&path, &catalog).unwrap();
        let easy = best_group_sizes(&grid, 0.45, 32);
        // Every budget has a best G, and it never falls as the budget grows (the published rise).
        assert_eq!(easy.len(), grid.axes.budget.len());
        assert!(easy.windows(2).all(|w| w[0].1 <= w[1].1), "{easy:?}");
        let o = isocompute_difficulty(&grid);
        assert!(
            o.prior.contains("easy: ") && o.prior.contains("hard: "),
            "{o:?}"
        );
    }
}
