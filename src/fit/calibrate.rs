//! Calibrating the outcome prior on pilot checkpoints.
//!
//! All checkpoints of all runs are fitted at once by weighted nonlinear least squares: a
//! checkpoint's residual is (prior's prediction at that step − measured value) / √(checkpoints of
//! its run), so every run weighs the same. Free parameters are mapped to unconstrained values
//! (logit for fractions, log for positive scales) and fitted with Levenberg-Marquardt on a
//! central-difference Jacobian. The fit is a maximum a posteriori estimate: each free parameter
//! also contributes a residual (θ − θ_prior)/σ_prior, with σ_prior such that the prior's stated
//! range is its 90% interval, and the data residuals are scaled by the noise level estimated from
//! an unpenalised fit first. Pilots that only see the early part of the curve cannot pin the
//! ceiling; the penalty keeps such parameters near the prior instead of at a bound. Uncertainty comes from a bootstrap over runs (runs, not
//! checkpoints, are the resampling unit, since checkpoints of one run are correlated);
//! generalisation from leave-one-run-out and leave-one-model-size-out refits, reported beside the
//! uncalibrated prior's error on the same points.

use serde::Serialize;

use super::lm::{Problem, minimize};
use super::sigmoid::quantile;
use crate::outcome::{CellSignal, OutcomeParams, Param, predict_score};
use crate::rng::SplitMix64;

/// One measured checkpoint with the signal the prior needs.
#[derive(Debug, Clone, Copy)]
pub struct Observation {
    /// Index of the run it belongs to.
    pub run: usize,
    /// The cell's signal with `iterations` set to the checkpoint's step.
    pub signal: CellSignal,
    /// Measured value.
    pub value: f64,
}

/// How a free parameter is mapped to the real line.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Transform {
    Logit,
    Log,
    Identity,
}

fn transform_of(name: &str) -> Transform {
    match name {
        "base_score_at_7b" | "prm_ceiling" | "orm_ceiling" | "judge_ceiling" | "epoch_reuse" => {
            Transform::Logit
        }
        "k_mid_at_7b"
        | "zero_rl_time_factor"
        | "steepness"
        | "prm_signal"
        | "orm_signal"
        | "judge_signal"
        | "lora_half_rank_at_0_5b" => Transform::Log,
        _ => Transform::Identity,
    }
}

fn to_free(t: Transform, x: f64) -> f64 {
    match t {
        Transform::Logit => {
            let p = x.clamp(1e-9, 1.0 - 1e-9);
            (p / (1.0 - p)).ln()
        }
        Transform::Log => x.max(1e-300).ln(),
        Transform::Identity => x,
    }
}

fn from_free(t: Transform, u: f64) -> f64 {
    match t {
        Transform::Logit => 1.0 / (1.0 + (-u).exp()),
        Transform::Log => u.exp(),
        Transform::Identity => u,
    }
}

/// Parameters with these values set.
fn with_values(base: &OutcomeParams, free: &[&str], theta: &[f64]) -> OutcomeParams {
    let mut p = *base;
    for (name, &u) in free.iter().zip(theta) {
        let v = from_free(transform_of(name), u);
        let q = p.get_mut(name).expect("valid name");
        q.value = v;
        q.low = q.low.min(v);
        q.high = q.high.max(v);
    }
    p
}

struct Calibration<'a> {
    base: &'a OutcomeParams,
    free: &'a [&'a str],
    observations: Vec<&'a Observation>,
    weights: Vec<f64>,
    /// Prior centre and scale of each free parameter in the unconstrained space; None: no penalty.
    penalty: Option<Vec<(f64, f64)>>,
    /// Noise level the data residuals are divided by (1 without a penalty).
    noise: f64,
}

/// Centre and 90%-interval scale of each free parameter, in the unconstrained space.
/// How much wider than the prior's stated range the calibration's prior is: the stated range
/// becomes about ±0.33 standard deviations (instead of a 90% interval), so pilot data can move
/// a parameter well outside it (a true K_mid of 100 or 400 against a range of 5-20), while a
/// parameter the data do not constrain still stays near its default. Scales are penalised in log
/// space and fractions in logit space, where "a factor of 3" is one distance whatever the value.
pub const PRIOR_WIDTH_FACTOR: f64 = 5.0;

fn prior_penalty(prior: &OutcomeParams, free: &[&str]) -> Vec<(f64, f64)> {
    free.iter()
        .map(|n| {
            let p = prior.get(n).expect("valid");
            let t = transform_of(n);
            let (lo, hi) = (to_free(t, p.low), to_free(t, p.high));
            let scale = (PRIOR_WIDTH_FACTOR * (hi - lo).abs() / (2.0 * 1.645)).max(1e-3);
            (to_free(t, p.value), scale)
        })
        .collect()
}

impl<'a> Calibration<'a> {
    fn new(
        base: &'a OutcomeParams,
        free: &'a [&'a str],
        observations: Vec<&'a Observation>,
    ) -> Self {
        let mut counts = std::collections::BTreeMap::new();
        for o in &observations {
            *counts.entry(o.run).or_insert(0usize) += 1;
        }
        let weights = observations
            .iter()
            .map(|o| 1.0 / (counts[&o.run] as f64).sqrt())
            .collect();
        Calibration {
            base,
            free,
            observations,
            weights,
            penalty: None,
            noise: 1.0,
        }
    }
}

impl Problem for Calibration<'_> {
    fn parameters(&self) -> usize {
        self.free.len()
    }

    fn residuals(&self, theta: &[f64]) -> Option<Vec<f64>> {
        let p = with_values(self.base, self.free, theta);
        let mut r: Vec<f64> = self
            .observations
            .iter()
            .zip(&self.weights)
            .map(|(o, w)| (predict_point(&p, &o.signal) - o.value) * w / self.noise)
            .collect();
        if let Some(penalty) = &self.penalty {
            r.extend(
                theta
                    .iter()
                    .zip(penalty)
                    .map(|(t, (centre, scale))| (t - centre) / scale),
            );
        }
        r.iter().all(|v| v.is_finite()).then_some(r)
    }

    fn jacobian(&self, theta: &[f64]) -> Option<Vec<f64>> {
        super::lm::central_difference_jacobian(&|t| self.residuals(t), theta)
    }
}

/// The prior's point prediction (no interval) for one signal.
fn predict_point(params: &OutcomeParams, signal: &CellSignal) -> f64 {
    predict_score(params, signal)
}

/// Run-weighted root-mean-square error of `params` on observations (every run weighs the same).
pub fn weighted_rmse(params: &OutcomeParams, observations: &[&Observation]) -> f64 {
    let mut counts = std::collections::BTreeMap::new();
    for o in observations {
        *counts.entry(o.run).or_insert(0usize) += 1;
    }
    let runs = counts.len().max(1) as f64;
    let sum: f64 = observations
        .iter()
        .map(|o| (predict_point(params, &o.signal) - o.value).powi(2) / counts[&o.run] as f64)
        .sum();
    (sum / runs).sqrt()
}

/// The MAP fit: an unpenalised fit estimates the noise level, then the penalised fit runs from
/// there (see the module doc). `noise` fixes the level instead (refits in bootstrap and CV).
fn fit_free(
    base: &OutcomeParams,
    free: &[&str],
    observations: Vec<&Observation>,
    start: &[f64],
    noise: Option<f64>,
) -> Option<(Vec<f64>, OutcomeParams, f64)> {
    let mut problem = Calibration::new(base, free, observations);
    let (start, noise) = match noise {
        Some(n) => (start.to_vec(), n),
        None => {
            let plain = minimize(&problem, start, 300)?;
            let runs: std::collections::BTreeSet<usize> =
                problem.observations.iter().map(|o| o.run).collect();
            let noise = (plain.cost / runs.len().max(1) as f64).sqrt().max(1e-4);
            (plain.theta, noise)
        }
    };
    problem.penalty = Some(prior_penalty(base, free));
    problem.noise = noise;
    let solution = minimize(&problem, &start, 300)?;
    let params = with_values(base, free, &solution.theta);
    Some((solution.theta, params, noise))
}

/// The parameters with the `free` ones at `u` (their unconstrained values, as
/// [`stated_prior`] gives them).
pub fn params_at(base: &OutcomeParams, free: &[&str], u: &[f64]) -> OutcomeParams {
    with_values(base, free, u)
}

/// What the prior states about each free parameter, in the unconstrained space the calibration
/// fits in: its value and the sd its stated range implies as a 90% interval (not widened by
/// [`PRIOR_WIDTH_FACTOR`], which only loosens the calibration's penalty).
pub fn stated_prior(prior: &OutcomeParams, free: &[&str]) -> Vec<(f64, f64)> {
    free.iter()
        .map(|n| {
            let p = prior.get(n).expect("valid");
            let t = transform_of(n);
            let (lo, hi) = (to_free(t, p.low), to_free(t, p.high));
            (
                to_free(t, p.value),
                ((hi - lo).abs() / (2.0 * 1.645)).max(1e-6),
            )
        })
        .collect()
}

/// The calibration's point estimate alone (the MAP fit of [`calibrate`], without its bootstrap,
/// its intervals or its cross-validation): what a simulated loop needs per replicate.
pub fn calibrate_point(
    prior: &OutcomeParams,
    observations: &[Observation],
    free: &[&str],
) -> Option<OutcomeParams> {
    let start: Vec<f64> = free
        .iter()
        .map(|n| to_free(transform_of(n), prior.get(n).expect("valid").value))
        .collect();
    fit_free(prior, free, observations.iter().collect(), &start, None).map(|(_, p, _)| p)
}

/// The result of a calibration.
#[derive(Debug, Clone, Serialize)]
pub struct CalibrationResult {
    /// Parameters: free ones at their fitted values with bootstrap ranges, the others as given.
    pub params: OutcomeParams,
    /// Names of the fitted parameters.
    pub free: Vec<String>,
    /// Runs used.
    pub runs: usize,
    /// Checkpoints used.
    pub checkpoints: usize,
    /// Bootstrap replicates that refitted successfully.
    pub bootstrap_replicates: usize,
    /// Run-weighted RMSE of the uncalibrated prior on all checkpoints.
    pub prior_rmse: f64,
    /// In-sample RMSE of the calibrated prior.
    pub fit_rmse: f64,
    /// Leave-one-run-out RMSE.
    pub loro_rmse: Option<f64>,
    /// Leave-one-model-size-out RMSE (None with a single model size).
    pub lomso_rmse: Option<f64>,
    /// For each free parameter, whether the pilot data or the prior decided its value: "data"
    /// when the posterior's spread is under half the prior's, "prior" otherwise (also "prior"
    /// when the posterior spread could not be computed).
    pub decided_by: Vec<(String, &'static str)>,
}

/// Which parameters to fit by default: those the pilots can identify.
pub fn default_free(observations: &[Observation]) -> Vec<&'static str> {
    let mut free = vec![
        "base_score_at_7b",
        "gain_logit_at_7b",
        "k_mid_at_7b",
        "steepness",
    ];
    let sizes: std::collections::BTreeSet<u64> = observations
        .iter()
        .map(|o| o.signal.policy_params as u64)
        .collect();
    if sizes.len() >= 2 {
        free.extend(["gain_logit_per_decade", "k_mid_size_exponent"]);
    }
    let kinds: std::collections::BTreeSet<&str> = observations
        .iter()
        .map(|o| o.signal.reward.as_str())
        .collect();
    if kinds.contains("rule") {
        if kinds.contains("prm") {
            free.extend(["prm_signal", "prm_ceiling"]);
        }
        if kinds.contains("orm") {
            free.extend(["orm_signal", "orm_ceiling"]);
        }
        if kinds.contains("judge") {
            free.extend(["judge_signal", "judge_ceiling"]);
        }
    }
    free
}

/// Calibrates the prior's `free` parameters on the observations.
pub fn calibrate(
    prior: &OutcomeParams,
    observations: &[Observation],
    free: &[&str],
    bootstrap: usize,
    seed: u64,
) -> Option<CalibrationResult> {
    let all: Vec<&Observation> = observations.iter().collect();
    let start: Vec<f64> = free
        .iter()
        .map(|n| to_free(transform_of(n), prior.get(n).expect("valid").value))
        .collect();
    let (theta, fitted, noise) = fit_free(prior, free, all.clone(), &start, None)?;
    let map = MapFit {
        prior,
        free,
        observations,
        by_run: by_run(observations),
        theta,
        noise,
    };
    let runs = map.runs();
    let samples = map.run_bootstrap(&runs, bootstrap, seed);
    let laplace = map.laplace_sd();
    let params = map.intervals(fitted, &samples, laplace.as_deref());
    let decided_by = free
        .iter()
        .map(|name| {
            let data = posterior_narrower_than_prior(
                transform_of(name),
                prior.get(name).expect("valid"),
                params.get(name).expect("valid"),
            );
            (name.to_string(), if data { "data" } else { "prior" })
        })
        .collect();
    let loro = map.held_out_rmse(run_folds(&runs));
    let lomso = map.held_out_rmse(map.runs_by_model_size(&runs));
    Some(CalibrationResult {
        prior_rmse: weighted_rmse(prior, &all),
        fit_rmse: weighted_rmse(&params, &all),
        params,
        free: free.iter().map(|s| s.to_string()).collect(),
        runs: runs.len(),
        checkpoints: observations.len(),
        bootstrap_replicates: samples.len(),
        loro_rmse: loro,
        lomso_rmse: lomso,
        decided_by,
    })
}

/// Each run's observations, by run id.
fn by_run(observations: &[Observation]) -> std::collections::BTreeMap<usize, Vec<&Observation>> {
    let mut map: std::collections::BTreeMap<usize, Vec<&Observation>> = Default::default();
    for o in observations {
        map.entry(o.run).or_default().push(o);
    }
    map
}

/// Up to this many runs, the by-run cross-validation leaves one run out at a time; above it, it
/// holds out [`RUN_FOLDS`] folds (one refit per fold, so the cost stays linear in the runs).
pub const MAX_LEAVE_ONE_RUN_OUT: usize = 50;

/// The folds of the by-run cross-validation above [`MAX_LEAVE_ONE_RUN_OUT`] runs.
pub const RUN_FOLDS: usize = 20;

/// The groups of runs held out together: one run each, or [`RUN_FOLDS`] folds of the sorted runs
/// dealt round-robin (deterministic, no randomness).
fn run_folds(runs: &[usize]) -> Vec<Vec<usize>> {
    if runs.len() <= MAX_LEAVE_ONE_RUN_OUT {
        return runs.iter().map(|&r| vec![r]).collect();
    }
    let mut folds = vec![Vec::new(); RUN_FOLDS];
    for (i, &r) in runs.iter().enumerate() {
        folds[i % RUN_FOLDS].push(r);
    }
    folds
}

/// Whether the posterior's 90% interval is under half as wide as the calibration prior's: for
/// fractions in natural units (the prior's 90% width is its stated range times
/// [`PRIOR_WIDTH_FACTOR`], at most the whole of [0, 1]; logit widths explode near the bounds), for
/// scales in log units and for slopes in their own units.
fn posterior_narrower_than_prior(t: Transform, prior: Param, posterior: Param) -> bool {
    let (prior_width, posterior_width) = match t {
        Transform::Logit => (
            (PRIOR_WIDTH_FACTOR * (prior.high - prior.low)).min(1.0),
            posterior.high - posterior.low,
        ),
        Transform::Log | Transform::Identity => (
            PRIOR_WIDTH_FACTOR * (to_free(t, prior.high) - to_free(t, prior.low)).abs(),
            (to_free(t, posterior.high) - to_free(t, posterior.low)).abs(),
        ),
    };
    posterior_width.is_finite() && posterior_width < 0.5 * prior_width
}

/// The MAP fit and what its uncertainty and cross-validation need.
struct MapFit<'a> {
    prior: &'a OutcomeParams,
    free: &'a [&'a str],
    observations: &'a [Observation],
    /// Each run's observations, by run id (built once: the refits below look runs up by id).
    by_run: std::collections::BTreeMap<usize, Vec<&'a Observation>>,
    /// The fitted free parameters, unconstrained.
    theta: Vec<f64>,
    /// The fitted noise scale.
    noise: f64,
}

impl MapFit<'_> {
    /// The distinct run ids, sorted.
    fn runs(&self) -> Vec<usize> {
        self.by_run.keys().copied().collect()
    }

    /// Refits on `replicates` resamples of whole runs (the checkpoints of one run are one unit);
    /// each sample is the free parameters in their natural space.
    fn run_bootstrap(&self, runs: &[usize], replicates: usize, seed: u64) -> Vec<Vec<f64>> {
        let mut samples = Vec::new();
        for b in 0..replicates {
            // A stop request ends the replicates; the command then stops before writing.
            if crate::interrupt::requested().is_some() {
                break;
            }
            let mut rng = SplitMix64::new(seed, 0xB007 + b as u64);
            let picks: Vec<usize> = (0..runs.len())
                .map(|_| runs[rng.below(runs.len())])
                .collect();
            let mut resampled: Vec<Observation> = Vec::new();
            for (copy, run) in picks.iter().enumerate() {
                for o in &self.by_run[run] {
                    resampled.push(Observation { run: copy, ..**o });
                }
            }
            let refit = fit_free(
                self.prior,
                self.free,
                resampled.iter().collect(),
                &self.theta,
                Some(self.noise),
            );
            if let Some((t, _, _)) = refit {
                samples.push(
                    t.iter()
                        .zip(self.free)
                        .map(|(u, n)| from_free(transform_of(n), *u))
                        .collect(),
                );
            }
        }
        samples
    }

    /// Laplace approximation at the MAP: standard deviations from the covariance (JᵀJ)⁻¹ of the
    /// penalised, noise-scaled residuals, in the unconstrained space.
    fn laplace_sd(&self) -> Option<Vec<f64>> {
        let mut problem =
            Calibration::new(self.prior, self.free, self.observations.iter().collect());
        problem.penalty = Some(prior_penalty(self.prior, self.free));
        problem.noise = self.noise;
        problem.jacobian(&self.theta).and_then(|j| {
            let n = self.free.len();
            let m = j.len() / n;
            let (jtj, _) = super::lm::normal_equations(&j, &vec![0.0; m], n);
            super::lm::inverse(&jtj, n)
                .map(|cov| (0..n).map(|k| cov[k * n + k].max(0.0).sqrt()).collect())
        })
    }

    /// Each free parameter's interval: the union of the run bootstrap's 5-95% range
    /// (between-run variability) and the Laplace 90% interval (within-run noise and the prior),
    /// conservative on purpose.
    fn intervals(
        &self,
        mut params: OutcomeParams,
        samples: &[Vec<f64>],
        laplace: Option<&[f64]>,
    ) -> OutcomeParams {
        for (k, name) in self.free.iter().enumerate() {
            let mut v: Vec<f64> = samples.iter().map(|s| s[k]).collect();
            v.sort_by(f64::total_cmp);
            let value = params.get(name).expect("valid").value;
            let (mut low, mut high) = if v.len() >= 10 {
                (quantile(&v, 0.05).min(value), quantile(&v, 0.95).max(value))
            } else {
                (value, value)
            };
            if let Some(sd) = laplace {
                let t = transform_of(name);
                let (a, b) = (
                    from_free(t, self.theta[k] - 1.645 * sd[k]),
                    from_free(t, self.theta[k] + 1.645 * sd[k]),
                );
                if a.is_finite() && b.is_finite() {
                    low = low.min(a.min(b));
                    high = high.max(a.max(b));
                }
            }
            *params.get_mut(name).expect("valid") = Param { value, low, high };
        }
        params
    }

    /// Runs grouped by policy size, for leave-one-model-size-out.
    fn runs_by_model_size(&self, runs: &[usize]) -> Vec<Vec<usize>> {
        let mut sizes: std::collections::BTreeMap<u64, Vec<usize>> =
            std::collections::BTreeMap::new();
        for &r in runs {
            let size = self.by_run[&r][0].signal.policy_params as u64;
            sizes.entry(size).or_default().push(r);
        }
        sizes.into_values().collect()
    }

    /// Cross-validated RMSE: refit without each group of runs and score the held-out runs (the
    /// mean of per-run mean squared errors, then the root). None with fewer than two groups.
    fn held_out_rmse(&self, groups: Vec<Vec<usize>>) -> Option<f64> {
        if groups.len() < 2 {
            return None;
        }
        let mut sum = 0.0;
        let mut runs_counted = 0usize;
        for group in groups {
            let held: std::collections::BTreeSet<usize> = group.iter().copied().collect();
            let train: Vec<&Observation> = self
                .observations
                .iter()
                .filter(|o| !held.contains(&o.run))
                .collect();
            if train.is_empty() || train.len() == self.observations.len() {
                continue;
            }
            let (_, p, _) = fit_free(self.prior, self.free, train, &self.theta, Some(self.noise))?;
            for run in &held {
                let Some(points) = self.by_run.get(run) else {
                    continue;
                };
                let mse = points
                    .iter()
                    .map(|o| (predict_point(&p, &o.signal) - o.value).powi(2))
                    .sum::<f64>()
                    / points.len() as f64;
                sum += mse;
                runs_counted += 1;
            }
        }
        (runs_counted > 0).then(|| (sum / runs_counted as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RewardKind;
    use crate::outcome::{Benchmark, StartKind};
    use crate::outcome::{ParamId, predict};

    fn observations(truth: &OutcomeParams, noise: f64, seed: u64) -> Vec<Observation> {
        let mut out = Vec::new();
        let mut rng = SplitMix64::new(seed, 0);
        let mut run = 0;
        for &size in &[1.5e9, 3.1e9, 7.6e9] {
            for &rollouts in &[64.0, 256.0, 1024.0] {
                for step in 0..=12 {
                    // Zero-RL pilots (K_mid about 33 effective updates at 7.6B) of up to 240
                    // steps: long enough to pass the knee.
                    let signal = CellSignal {
                        policy_params: size,
                        iterations: (step * 20) as f64,
                        update_epochs: 1.0,
                        useful_rollouts_per_step: rollouts,
                        coverage: 0.85,
                        truncation_rate: 0.02,
                        pass_rate_mean: crate::outcome::params::REFERENCE_PASS_RATE,
                        response_cap_tokens: 8192.0,
                        start: StartKind::Base,
                        benchmark: Benchmark::Standard,
                        reward: RewardKind::Rule,
                        lora_rank: None,
                        measured_base_score: None,
                        pass_share_per_step: None,
                        ability_score: None,
                    };
                    let value = predict(truth, &signal).score + noise * rng.normal();
                    out.push(Observation { run, signal, value });
                }
                run += 1;
            }
        }
        out
    }

    #[test]
    fn recovers_known_parameters_within_their_intervals() {
        let mut truth = OutcomeParams::default();
        truth[ParamId::KMidAt7b].value *= 1.5;
        truth[ParamId::GainLogitAt7b].value = 1.3;
        truth[ParamId::Steepness].value = 1.5;
        let obs = observations(&truth, 0.004, 5);
        let free = default_free(&obs);
        let result = calibrate(&OutcomeParams::default(), &obs, &free, 60, 1).unwrap();
        for name in ["k_mid_at_7b", "gain_logit_at_7b", "steepness"] {
            let p = result.params.get(name).unwrap();
            let t = truth.get(name).unwrap().value;
            assert!(
                p.low <= t && t <= p.high,
                "{name}: truth {t} outside [{}, {}] (estimate {})",
                p.low,
                p.high,
                p.value
            );
        }
        assert!(result.fit_rmse < result.prior_rmse);
        assert!(result.loro_rmse.unwrap() < result.prior_rmse);
        assert!(result.lomso_rmse.is_some());
        assert_eq!(result.runs, 9);
    }

    #[test]
    fn transforms_round_trip() {
        for (t, x) in [
            (Transform::Logit, 0.37),
            (Transform::Log, 12.5),
            (Transform::Identity, -0.2),
        ] {
            assert!((from_free(t, to_free(t, x)) - x).abs() < 1e-12);
        }
    }

    #[test]
    fn truths_far_outside_the_prior_range_are_reached_and_covered() {
        // Issue 11: with a true K_mid 5-20x outside the prior's range the calibration used to
        // return the edge of that range with an interval excluding the truth.
        let default = OutcomeParams::default()[ParamId::KMidAt7b];
        for k_mid in [default.low / 6.0, default.high * 4.0] {
            let mut truth = OutcomeParams::default();
            truth[ParamId::KMidAt7b].value = k_mid;
            let obs = observations(&truth, 0.004, 11);
            let free = ["k_mid_at_7b", "gain_logit_at_7b", "steepness"];
            let result = calibrate(&OutcomeParams::default(), &obs, &free, 40, 2).unwrap();
            let p = result.params[ParamId::KMidAt7b];
            assert!(
                p.low <= k_mid && k_mid <= p.high,
                "truth {k_mid} outside [{}, {}] (estimate {})",
                p.low,
                p.high,
                p.value
            );
            assert!(
                p.value < default.low || p.value > default.high,
                "estimate {} stays inside the prior's range",
                p.value
            );
        }
    }

    #[test]
    fn data_or_prior_compares_widths_in_each_parameters_own_space() {
        let range = |value, low, high| Param { value, low, high };
        // k_mid: prior 5-20 (log width 1.39, times 5); a posterior of 10-14 was decided by data.
        assert!(posterior_narrower_than_prior(
            Transform::Log,
            range(10.0, 5.0, 20.0),
            range(12.0, 10.0, 14.0)
        ));
        assert!(!posterior_narrower_than_prior(
            Transform::Log,
            range(10.0, 5.0, 20.0),
            range(20.0, 3.0, 300.0)
        ));
        // A ceiling multiplier whose posterior spans the whole unit interval was left to the
        // prior, even though its logit width would be finite.
        assert!(!posterior_narrower_than_prior(
            Transform::Logit,
            range(0.9, 0.8, 1.0),
            range(0.9, 0.0001, 1.0)
        ));
    }

    #[test]
    fn simulation_based_calibration_the_90_percent_intervals_cover_about_90_percent() {
        // Truths drawn from a wide distribution (K_mid log-uniform over e^±2 of the default, far
        // beyond its 90% range; Δ 0.4-2.0 logits; steepness 0.7-3.0), pilots simulated with
        // noise, the three parameters calibrated. Fixed seed: the counts below are reproducible. On
        // 2026-11-30: 48 of 48 intervals cover (over-conservative: the interval is the union of
        // the run bootstrap and the Laplace interval); with the earlier prior (stated range = 90%
        // interval) 37 of 48 (0.77), under-covering. A joint predictive interval is open work.
        let mut rng = SplitMix64::new(2026, 11);
        let (mut covered, mut total) = (0usize, 0usize);
        for draw in 0..16 {
            let mut truth = OutcomeParams::default();
            let k_mid = truth[ParamId::KMidAt7b].value;
            truth[ParamId::KMidAt7b].value = k_mid * (-2.0 + 4.0 * rng.uniform()).exp();
            truth[ParamId::GainLogitAt7b].value = 0.4 + 1.6 * rng.uniform();
            truth[ParamId::Steepness].value = 0.7 + 2.3 * rng.uniform();
            let obs = observations(&truth, 0.004, 100 + draw);
            let free = ["k_mid_at_7b", "gain_logit_at_7b", "steepness"];
            let Some(result) = calibrate(&OutcomeParams::default(), &obs, &free, 40, draw) else {
                continue;
            };
            for name in free {
                let (p, t) = (
                    result.params.get(name).unwrap(),
                    truth.get(name).unwrap().value,
                );
                covered += usize::from(p.low <= t && t <= p.high);
                total += 1;
            }
        }
        let coverage = covered as f64 / total as f64;
        println!(
            "simulation-based calibration: {covered} of {total} intervals cover the truth ({coverage:.2})"
        );
        assert!(total >= 42, "only {total} intervals");
        assert!(
            (0.80..=1.0).contains(&coverage),
            "coverage {coverage:.2} ({covered} of {total})"
        );
    }
}
