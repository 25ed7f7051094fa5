//! The outcome prior scored on published before/after outcomes (SimpleRL-Zoo, the evidence
//! base's only study with such pairs): with the parameters as they are, or each model held out
//! of the gain fit in turn (the research harness's `fit::prior::leave_one_model_out` gives the
//! refitted parameters), its outcomes predicted from their measured
//! base scores with 90% predictive intervals, beside the baselines "no RL gain" and "base + the
//! mean gain of the other models on the same benchmark". `rlfrontier backtest` prints it with
//! the orderings table (src/engine/backtest.rs); every report states it for its grid's
//! parameters.

use std::collections::BTreeMap;

use crate::fit::evidence::{Outcome, simplerl_signal};
use crate::outcome::{OutcomeParams, predict};

/// One outcome predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct BacktestRow {
    /// The outcome.
    pub outcome: Outcome,
    /// The model's prediction (its model held out of the fit).
    pub predicted: f64,
    /// Low end of the 90% predictive interval.
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

/// RMSE of (predicted, measured) pairs, in points (× 100).
pub(crate) fn rmse(pairs: impl Iterator<Item = (f64, f64)>) -> f64 {
    let (sum, n) = pairs.fold((0.0, 0usize), |(s, n), (a, b)| (s + (a - b).powi(2), n + 1));
    100.0 * (sum / n.max(1) as f64).sqrt()
}

/// Pearson correlation of `xs` and `ys` (NaN when either is constant).
pub(crate) fn correlation(xs: &[f64], ys: &[f64]) -> f64 {
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

/// Predicts every outcome with the parameters `held_out` holds for its model (those refitted
/// without it), or `params` for a model it does not name (all of them when it is empty: the
/// parameters scored as they are), and scores the predictions against the baselines.
pub fn backtest(
    outcomes: &[Outcome],
    params: &OutcomeParams,
    held_out: &BTreeMap<&str, OutcomeParams>,
) -> (Vec<BacktestRow>, BacktestSummary) {
    let rows: Vec<BacktestRow> = outcomes
        .iter()
        .map(|o| {
            let p = predict(
                held_out.get(o.model.as_str()).unwrap_or(params),
                &simplerl_signal(o),
            );
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
        // the first is 0.30, for the second 0.10.
        let outcomes = [outcome("a", "m", 0.40, 0.50), outcome("b", "m", 0.20, 0.50)];
        let (rows, s) = backtest(&outcomes, &OutcomeParams::default(), &BTreeMap::new());
        assert!((rows[0].mean_gain_baseline - 0.70).abs() < 1e-12);
        assert!((rows[1].mean_gain_baseline - 0.30).abs() < 1e-12);
        // No gain: errors 0.10 and 0.30 -> RMSE sqrt((0.01 + 0.09) / 2) = 0.2236 -> 22.36 points.
        assert!((s.rmse_no_gain - 22.360679).abs() < 1e-5, "{s:?}");
        // Mean gain: errors 0.20 and 0.20 -> 20 points.
        assert!((s.rmse_mean_gain - 20.0).abs() < 1e-9, "{s:?}");
        assert_eq!(s.outcomes, 2);
    }
}
