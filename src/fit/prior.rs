//! The outcome prior's defaults fitted to the evidence base ([`crate::fit::evidence`] reads
//! it) by `rlfrontier fit-prior`, which writes them into `src/outcome/fitted.rs`.
//!
//! The fit runs in stages, each on the evidence that speaks to it (docs/design.md §6):
//!
//! 1. **Default base score**: least squares of SimpleRL-Zoo's MATH-500 base scores on
//!    log10(N / 7.6e9). The range is the 90% prediction interval of a new model.
//! 2. **Time scale and batch, length and G effects**: ScaleRL Table 1's seven 8B runs (default;
//!    32k generation; 8, 24 and 32 generations per prompt at a fixed batch of 768; batch 512 and
//!    2048). C_mid in GPU-hours becomes steps with ScaleRL's own throughput (App. A.6: the first
//!    epoch is "~1k steps, or ~1.5k GPU Hours for most runs"), scaled by each run's generated
//!    tokens per step. Residuals: ln steps to the midpoint (sd 0.3), A (sd 0.02, ScaleRL's
//!    seed-to-seed spread), B (sd 0.3). ScaleRL's R0 is not published: it is a free nuisance.
//! 3. **Reachable gain Δ and its size slope**: SimpleRL-Zoo's 70 (model, benchmark) pairs, each
//!    predicted from its measured base score with SimpleRL-Zoo's run (1,024 prompts × 8
//!    rollouts, 8,192-token cap, about 100 steps, zero RL from base models).
//! 4. **Zero-RL time factor**: SimpleRL-Zoo's runs are taken to end at 90% of their reachable
//!    gain (an assumption: the released checkpoints are end-of-training and its README describes
//!    about 100 steps), which fixes how much faster base-model starts move than ScaleRL's SFT'd
//!    8B.
//! 5. **Discrepancies**: leave-one-model-out residuals of stage 3 (as shifts of Δ) and
//!    leave-one-run-out residuals of stage 2 (as shifts of ln K_mid).
//!
//! Scout (a 109B MoE whose cost per step is not published) and the math+code runs (another
//! task) are read but not fitted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use super::evidence::*;
use crate::error::{Error, Result};
use crate::fit::lm::{Problem, central_difference_jacobian, inverse, minimize, normal_equations};
use crate::outcome::params::{PARAMS, Param, Z90};
use crate::outcome::{OutcomeParams, ParamId, logistic, parts, predict_score};

/// Least squares with a central-difference Jacobian.
struct Numeric<'a> {
    n: usize,
    f: &'a dyn Fn(&[f64]) -> Option<Vec<f64>>,
}

impl Problem for Numeric<'_> {
    fn parameters(&self) -> usize {
        self.n
    }
    fn residuals(&self, theta: &[f64]) -> Option<Vec<f64>> {
        (self.f)(theta).filter(|r| r.iter().all(|x| x.is_finite()))
    }
    fn jacobian(&self, theta: &[f64]) -> Option<Vec<f64>> {
        central_difference_jacobian(&|t| self.residuals(t), theta)
    }
}

/// Fits `f` from `start`; returns θ and the standard errors (covariance (JᵀJ)⁻¹ s², s² the
/// residual variance per degree of freedom, at least `variance_floor`: 1 for residuals scaled
/// by their stated sd, so the fit cannot claim more precision than those sds; 0 for raw ones).
pub(crate) fn least_squares(
    f: &dyn Fn(&[f64]) -> Option<Vec<f64>>,
    start: &[f64],
    variance_floor: f64,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let problem = Numeric { n: start.len(), f };
    let solution = minimize(&problem, start, 500)?;
    let r = problem.residuals(&solution.theta)?;
    let j = problem.jacobian(&solution.theta)?;
    let n = start.len();
    let (jtj, _) = normal_equations(&j, &r, n);
    let dof = r.len().saturating_sub(n).max(1) as f64;
    let s2 = (solution.cost / dof).max(variance_floor);
    // A parameter the data do not move (a zero column) leaves JᵀJ singular: a tiny ridge keeps
    // the others' errors and gives it a huge one.
    let mut ridged = jtj.clone();
    for k in 0..n {
        ridged[k * n + k] += 1e-12 * (1.0 + jtj[k * n + k]);
    }
    let cov = inverse(&jtj, n).or_else(|| inverse(&ridged, n))?;
    let se = (0..n)
        .map(|k| (cov[k * n + k] * s2).max(0.0).sqrt())
        .collect();
    Some((solution.theta, se))
}

/// One fitted parameter: the value, its 90% range, and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct FittedParam {
    /// Which parameter.
    pub id: ParamId,
    /// Value and 90% range.
    pub param: Param,
    /// Stage and evidence, one line.
    pub how: String,
}

/// The fit's result: every fitted parameter and the checks it reports.
#[derive(Debug, Clone, PartialEq)]
pub struct PriorFit {
    /// Fitted parameters, in [`ParamId`] order.
    pub fitted: Vec<FittedParam>,
    /// The parameters with the fitted values in place (the rest at their defaults).
    pub params: OutcomeParams,
    /// ScaleRL's nuisance R0 (its runs' unpublished start).
    pub scalerl_base_score: f64,
    /// The math benchmarks' levels and scatter (`outcome::ability`).
    pub ability_scale: crate::outcome::ability::AbilityScale,
    /// Per ScaleRL run: (label, published steps to mid, model steps to mid, published A, model
    /// A).
    pub scalerl_rows: Vec<(String, f64, f64, f64, f64)>,
}

/// Stage 1: the default base score, OLS of MATH-500 base scores on log10(N / 7.6e9).
fn fit_base_default(outcomes: &[Outcome]) -> Option<(Param, Param)> {
    let points: Vec<(f64, f64)> = outcomes
        .iter()
        .filter(|o| o.metric == "MATH500")
        .map(|o| {
            (
                (o.params_b * 1e9 / crate::outcome::params::REFERENCE_PARAMS).log10(),
                o.base,
            )
        })
        .collect();
    let n = points.len() as f64;
    if n < 3.0 {
        return None;
    }
    let mx = points.iter().map(|p| p.0).sum::<f64>() / n;
    let my = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mx).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mx) * (p.1 - my)).sum();
    let slope = sxy / sxx;
    let intercept = my - slope * mx;
    let s2 = points
        .iter()
        .map(|p| (p.1 - intercept - slope * p.0).powi(2))
        .sum::<f64>()
        / (n - 2.0);
    // A new model at the reference size: prediction sd sqrt(s²(1 + 1/n + mx²/sxx)).
    let sd_new = (s2 * (1.0 + 1.0 / n + mx * mx / sxx)).sqrt();
    let sd_slope = (s2 / sxx).sqrt();
    let base = Param::new(
        intercept.clamp(0.0, 1.0),
        (intercept - Z90 * sd_new).clamp(0.0, 1.0),
        (intercept + Z90 * sd_new).clamp(0.0, 1.0),
    );
    let per_decade = Param::new(slope, slope - Z90 * sd_slope, slope + Z90 * sd_slope);
    Some((base, per_decade))
}

/// Where the fit starts for every parameter it fits.
const FIT_START: [(ParamId, f64); 16] = [
    (ParamId::BaseScoreAt7b, 0.45),
    (ParamId::BaseScorePerDecade, 0.0),
    (ParamId::GainLogitAt7b, 1.0),
    (ParamId::GainLogitPerDecade, 0.0),
    (ParamId::KMidAt7b, 1000.0),
    (ParamId::KMidLengthExponent, 1.0),
    (ParamId::ZeroRlTimeFactor, 0.05),
    (ParamId::Steepness, 1.5),
    (ParamId::BatchExponent, 0.5),
    (ParamId::BatchCeilingExponent, 0.05),
    (ParamId::CoverageExponent, 0.5),
    (ParamId::CapCeilingExponent, 0.1),
    (ParamId::GainDiscrepancy, 0.5),
    (ParamId::TimeScaleDiscrepancy, 0.3),
    (ParamId::RolloutSaturation, 1e9),
    (ParamId::DifficultyTimeExponent, 0.0),
];

const SD_LN_MID: f64 = 0.3;

/// The largest value a hypothesis would allow a stage-2 exponent that the evidence leaves free:
/// κ 0.7 (square-root batch scaling and a margin), c 1.4, g 1 (Δ at most proportional to the
/// cap).
fn hypothesis_bound(id: ParamId) -> f64 {
    match id {
        ParamId::BatchExponent => 0.7,
        ParamId::CapCeilingExponent => 1.0,
        _ => 1.4,
    }
}

/// A stage-2 parameter fitted in logs whose standard error exceeds this many e-folds is taken
/// as not identified by the evidence (its 90% range would span over 14 decades).
const LOG_SE_UNIDENTIFIED: f64 = 5.0;
const SD_A: f64 = 0.02;
const SD_B: f64 = 0.3;

/// The stage-2 parameters, in θ order: ln K_mid(7.6B), λ, κ, β, a, c, logit R0 (ScaleRL).
const STAGE2: [ParamId; 7] = [
    ParamId::KMidAt7b,
    ParamId::KMidLengthExponent,
    ParamId::BatchExponent,
    ParamId::Steepness,
    ParamId::BatchCeilingExponent,
    ParamId::CoverageExponent,
    ParamId::CapCeilingExponent,
];

/// Stage-2 parameters fitted as logarithms: K_mid is a scale; κ and c must stay positive (more
/// useful rollouts per step never make a step teach less, more coverage never lowers the gain).
fn fitted_in_logs(id: ParamId) -> bool {
    matches!(
        id,
        ParamId::KMidAt7b
            | ParamId::BatchExponent
            | ParamId::CoverageExponent
            | ParamId::CapCeilingExponent
    )
}

fn with_stage2(base: &OutcomeParams, theta: &[f64]) -> OutcomeParams {
    let mut p = *base;
    for (k, id) in STAGE2.iter().enumerate() {
        p[*id].value = if fitted_in_logs(*id) {
            theta[k].exp()
        } else {
            theta[k]
        };
    }
    p
}

/// Stage 2 residuals over `runs`.
fn stage2_residuals(
    base: &OutcomeParams,
    runs: &[ScaleRlRun],
    default: &ScaleRlRun,
    theta: &[f64],
) -> Option<Vec<f64>> {
    let params = with_stage2(base, theta);
    if params[ParamId::Steepness].value <= 0.05 {
        return None;
    }
    let r0 = logistic(theta[STAGE2.len()]);
    let mut r = Vec::with_capacity(runs.len() * 3);
    for run in runs {
        r.push(
            (model_mid_steps(&params, run).ln() - scalerl_mid_steps(run, default).ln()) / SD_LN_MID,
        );
        r.push((model_ceiling(&params, run, r0) - run.a) / SD_A);
        r.push((params[ParamId::Steepness].value - run.b) / SD_B);
    }
    Some(r)
}

fn stage2_start(base: &OutcomeParams) -> Vec<f64> {
    let mut start: Vec<f64> = STAGE2
        .iter()
        .map(|id| {
            let v = base[*id].value;
            if fitted_in_logs(*id) {
                v.max(0.05).ln()
            } else {
                v
            }
        })
        .collect();
    start.push(0.0);
    start
}

/// Stage 3 parameters: Δ(7.6B), Δ per decade.
fn with_stage3(base: &OutcomeParams, theta: &[f64]) -> OutcomeParams {
    let mut p = *base;
    p[ParamId::GainLogitAt7b].value = theta[0];
    p[ParamId::GainLogitPerDecade].value = theta[1];
    p
}

fn stage3_residuals(
    base: &OutcomeParams,
    outcomes: &[&Outcome],
    theta: &[f64],
) -> Option<Vec<f64>> {
    let params = with_stage3(base, theta);
    Some(
        outcomes
            .iter()
            .map(|o| predict_score(&params, &simplerl_signal(o)) - o.after)
            .collect(),
    )
}

/// Stage 4: the zero-RL factor that puts SimpleRL-Zoo's run at the reference size at
/// [`SIMPLERL_FINAL_PROGRESS`] of its gain.
fn zero_rl_factor(params: &OutcomeParams) -> f64 {
    let reference = Outcome {
        model: String::new(),
        params_b: crate::outcome::params::REFERENCE_PARAMS / 1e9,
        metric: String::new(),
        base: 0.5,
        after: 0.5,
    };
    let mut tuned = *params;
    tuned[ParamId::ZeroRlTimeFactor].value = 1.0;
    let p = parts(&tuned, &simplerl_signal(&reference));
    // progress = 1 / (1 + exp(β (ln K_mid + ln f − ln K))) = target.
    let beta = p.steepness;
    let odds = (1.0 - SIMPLERL_FINAL_PROGRESS) / SIMPLERL_FINAL_PROGRESS;
    (odds.ln() / beta + p.ln_k - p.ln_k_mid).exp()
}

/// The shift of Δ (logit units, before the cell's multipliers) that makes the prior hit
/// `after` for this outcome, by bisection (the score rises with Δ).
fn gain_shift_to_hit(params: &OutcomeParams, o: &Outcome) -> f64 {
    let signal = simplerl_signal(o);
    let score_at = |shift: f64| {
        let mut p = *params;
        p[ParamId::GainLogitAt7b].value += shift;
        predict_score(&p, &signal)
    };
    let (mut lo, mut hi) = (-10.0, 10.0);
    if score_at(lo) >= o.after {
        return lo;
    }
    if score_at(hi) <= o.after {
        return hi;
    }
    for _ in 0..60 {
        let mid = 0.5 * (lo + hi);
        if score_at(mid) < o.after {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    0.5 * (lo + hi)
}

fn rms(values: &[f64]) -> f64 {
    (values.iter().map(|v| v * v).sum::<f64>() / values.len().max(1) as f64).sqrt()
}

/// Fits stage 3 on `outcomes` from `params`.
pub fn fit_gain(
    params: &OutcomeParams,
    outcomes: &[&Outcome],
) -> Option<(OutcomeParams, Vec<f64>)> {
    let start = [
        params[ParamId::GainLogitAt7b].value,
        params[ParamId::GainLogitPerDecade].value,
    ];
    let (theta, se) = least_squares(&|t| stage3_residuals(params, outcomes, t), &start, 0.0)?;
    Some((with_stage3(params, &theta), se))
}

/// The backtest of `params` on `outcomes` with each model held out of the gain fit in turn
/// ([`leave_one_model_out`]): what `rlfrontier backtest` prints and `fit-prior` records.
pub fn backtest_refitted(
    outcomes: &[Outcome],
    params: &OutcomeParams,
) -> (
    Vec<crate::fit::backtest::BacktestRow>,
    crate::fit::backtest::BacktestSummary,
) {
    crate::fit::backtest::backtest(outcomes, params, &leave_one_model_out(params, outcomes))
}

/// Stage 3 refitted once per model with that model's outcomes left out: model → parameters
/// (models whose refit fails are absent). Shared by stage 5's discrepancy and the backtest.
pub fn leave_one_model_out<'o>(
    params: &OutcomeParams,
    outcomes: &'o [Outcome],
) -> BTreeMap<&'o str, OutcomeParams> {
    let models: std::collections::BTreeSet<&str> =
        outcomes.iter().map(|o| o.model.as_str()).collect();
    models
        .into_iter()
        .filter_map(|model| {
            let train: Vec<&Outcome> = outcomes.iter().filter(|o| o.model != model).collect();
            fit_gain(params, &train).map(|(p, _)| (model, p))
        })
        .collect()
}

/// Runs every stage on `evidence`, starting from the built-in defaults.
pub fn fit_prior(evidence: &Evidence) -> std::result::Result<PriorFit, String> {
    let default_run = evidence
        .scalerl
        .iter()
        .find(|r| r.label == SCALERL_RUNS[0].0)
        .ok_or("the evidence has no ScaleRL Table 1 default-recipe run (A, B, C_mid)")?
        .clone();
    if evidence.outcomes.len() < 10 {
        return Err("the evidence has fewer than 10 SimpleRL-Zoo before/after pairs".into());
    }
    let iso = evidence
        .isocompute
        .ok_or("the evidence has no IsoCompute n* saturation rows for the easy and hard sets")?;
    // Fixed starting values, so the fit does not depend on the defaults it replaces.
    let mut fit = Fitting {
        params: OutcomeParams::default(),
        fitted: Vec::new(),
    };
    for (id, start) in FIT_START {
        fit.params[id] = Param::new(start, start, start);
    }
    fit.stage0_saturation(iso);
    fit.stage1_base(&evidence.outcomes)?;
    let runs = &evidence.scalerl;
    let scalerl_base_score = fit.stage2_time_scale(runs, &default_run)?;
    fit.stage3_4_gain(&evidence.outcomes)?;
    fit.stage5_discrepancies(&evidence.outcomes, runs, &default_run);
    // Stage 6: the difficulty exponent d, by scanning: at the compute where the prior's best n
    // on IsoCompute's easy set first reaches the published saturation, the best n on the hard
    // set should be the published one. Every d that lands on it (to the nearest power of two)
    // is kept; the point value is their median, the range their span.
    let difficulty = fit_difficulty(&fit.params, iso)
        .ok_or("stage 6 (IsoCompute): no difficulty exponent in 0-3 places the hard set's best n near the published one")?;
    fit.set(
        ParamId::DifficultyTimeExponent,
        difficulty,
        format!(
            "stage 6: IsoCompute hard set n* = {} where the easy set reaches n* = {} (scan of d)",
            iso.hard_n_star, iso.easy_n_star
        ),
    );
    let levels = fit.stage7_starts(&evidence.pairs)?;
    let Fitting { params, mut fitted } = fit;
    fitted.sort_by_key(|f| f.id);
    let scalerl_rows = runs
        .iter()
        .map(|run| {
            (
                run.label.to_string(),
                scalerl_mid_steps(run, &default_run),
                model_mid_steps(&params, run),
                run.a,
                model_ceiling(&params, run, scalerl_base_score),
            )
        })
        .collect();
    params
        .validate()
        .map_err(|m| format!("the fitted parameters are unusable: {m}"))?;
    Ok(PriorFit {
        fitted,
        params,
        scalerl_base_score,
        ability_scale: levels,
        scalerl_rows,
    })
}

/// The parameters as the stages fit them, and how each was fitted (stage 7's methods are in
/// [`crate::fit::starts`]).
pub(crate) struct Fitting {
    /// The parameters so far.
    pub(crate) params: OutcomeParams,
    /// How each fitted parameter was fitted, in the order they were.
    pub(crate) fitted: Vec<FittedParam>,
}

impl Fitting {
    /// Sets a parameter and records how it was fitted (a later fit of the same parameter
    /// replaces the earlier record).
    pub(crate) fn set(&mut self, id: ParamId, param: Param, how: String) {
        self.params[id] = param;
        self.fitted.retain(|f| f.id != id);
        self.fitted.push(FittedParam { id, param, how });
    }

    /// Stage 0: the saturation of the batch ceiling term, read off IsoCompute's easy set: the
    /// useful rollouts per step of 32 problems × n* (range: n*/2 to 2·n*, its neighbours in the
    /// power-of-two sweep). Set first: the stages after it see batches below it.
    fn stage0_saturation(&mut self, iso: IsoSaturation) {
        let easy_useful = |n: f64| {
            isocompute_signal(ISOCOMPUTE_EASY_PROFILE, n as u64, 1.0).useful_rollouts_per_step
        };
        let saturation = Param::new(
            easy_useful(iso.easy_n_star),
            easy_useful(iso.easy_n_star / 2.0),
            easy_useful(iso.easy_n_star * 2.0),
        );
        self.set(
            ParamId::RolloutSaturation,
            saturation,
            format!(
                "stage 0: IsoCompute easy set, useful rollouts of 32 problems x n* = {}",
                iso.easy_n_star
            ),
        );
    }

    /// Stage 1: the default base score and its slope per decade of size.
    fn stage1_base(&mut self, outcomes: &[Outcome]) -> std::result::Result<(), String> {
        let (base, per_decade) =
            fit_base_default(outcomes).ok_or("fewer than 3 MATH500 base scores")?;
        let n_math = outcomes.iter().filter(|o| o.metric == "MATH500").count();
        for (id, p) in [
            (ParamId::BaseScoreAt7b, base),
            (ParamId::BaseScorePerDecade, per_decade),
        ] {
            self.set(
                id,
                p,
                format!("stage 1: OLS on {n_math} SimpleRL-Zoo MATH-500 base scores"),
            );
        }
        Ok(())
    }

    /// Stage 2: the time scale and the batch, length and G effects on ScaleRL Table 1's runs.
    /// Returns ScaleRL's base score, a free nuisance of the fit.
    fn stage2_time_scale(
        &mut self,
        runs: &[ScaleRlRun],
        default_run: &ScaleRlRun,
    ) -> std::result::Result<f64, String> {
        let (theta2, se2) = least_squares(
            &|t| stage2_residuals(&self.params, runs, default_run, t),
            &stage2_start(&self.params),
            1.0,
        )
        .ok_or("stage 2 (ScaleRL Table 1) did not converge")?;
        self.params = with_stage2(&self.params, &theta2);
        for (k, id) in STAGE2.iter().enumerate() {
            // A parameter fitted in logs far below its start has no information left (a slope
            // pushed to zero): its range is capped at 30 e-folds either side.
            let se = se2[k].min(30.0);
            let unidentified = theta2[k].exp() < 1e-3 || se > LOG_SE_UNIDENTIFIED;
            let param = if fitted_in_logs(*id) && *id != ParamId::KMidAt7b && unidentified {
                // Pushed to zero by the data, or left free by it (a log-space error of several
                // e-folds): the fitted value (zero when pushed there), with the range from zero
                // up to the largest value a hypothesis would have allowed (κ 0.7, c 1.4), since
                // the log-space error says nothing about how far above zero the truth may be.
                let upper = hypothesis_bound(*id);
                let value = if theta2[k].exp() < 1e-3 {
                    0.0
                } else {
                    theta2[k].exp()
                };
                Param::new(value, 0.0, upper.max(value))
            } else if fitted_in_logs(*id) {
                Param::new(
                    theta2[k].exp(),
                    (theta2[k] - Z90 * se).exp(),
                    (theta2[k] + Z90 * se).exp(),
                )
            } else {
                Param::new(theta2[k], theta2[k] - Z90 * se, theta2[k] + Z90 * se)
            };
            self.set(
                *id,
                param,
                format!("stage 2: ScaleRL Table 1, {} runs", runs.len()),
            );
        }
        Ok(logistic(theta2[STAGE2.len()]))
    }

    /// Stages 3 and 4: the reachable gain on SimpleRL-Zoo's pairs and the zero-RL time factor
    /// (stage 3's progress depends on the factor, which depends on nothing fitted here: the two
    /// are iterated to a fixed point); the factor's range follows K_mid's.
    fn stage3_4_gain(&mut self, outcomes: &[Outcome]) -> std::result::Result<(), String> {
        let outcomes: Vec<&Outcome> = outcomes.iter().collect();
        let mut se3 = vec![0.0, 0.0];
        for _ in 0..5 {
            self.params[ParamId::ZeroRlTimeFactor].value = zero_rl_factor(&self.params);
            let (p, se) = fit_gain(&self.params, &outcomes)
                .ok_or("stage 3 (SimpleRL-Zoo) did not converge")?;
            self.params = p;
            se3 = se;
        }
        for (k, id) in [ParamId::GainLogitAt7b, ParamId::GainLogitPerDecade]
            .into_iter()
            .enumerate()
        {
            let v = self.params[id].value;
            self.set(
                id,
                Param::new(v, v - Z90 * se3[k], v + Z90 * se3[k]),
                format!(
                    "stage 3: {} SimpleRL-Zoo before/after pairs",
                    outcomes.len()
                ),
            );
        }
        let f = zero_rl_factor(&self.params);
        let spread = self.params[ParamId::KMidAt7b].high / self.params[ParamId::KMidAt7b].value;
        self.set(
            ParamId::ZeroRlTimeFactor,
            Param::new(f, f / spread, f * spread),
            format!(
                "stage 4: SimpleRL-Zoo's ~100 steps at {:.0}% of the gain (assumption)",
                100.0 * SIMPLERL_FINAL_PROGRESS
            ),
        );
        Ok(())
    }

    /// Stage 5: the discrepancies, leave one model out (Δ) and leave one run out (ln K_mid).
    fn stage5_discrepancies(
        &mut self,
        outcomes: &[Outcome],
        runs: &[ScaleRlRun],
        default_run: &ScaleRlRun,
    ) {
        let held_out = leave_one_model_out(&self.params, outcomes);
        let mut shifts = Vec::new();
        for (model, p) in &held_out {
            for o in outcomes.iter().filter(|o| o.model == *model) {
                shifts.push(gain_shift_to_hit(p, o));
            }
        }
        // Robust: a benchmark at 0 before and after (AIME for the weakest models) needs an
        // unbounded shift; the median absolute deviation ignores such cases instead of letting
        // one of them set every interval's width.
        let gain_sd = crate::stats::robust_sd(&shifts);
        self.set(
            ParamId::GainDiscrepancy,
            Param::new(gain_sd, 0.8 * gain_sd, 1.2 * gain_sd),
            format!(
                "stage 5: robust sd of the Δ shift over {} outcomes, leave one of {} models out",
                shifts.len(),
                held_out.len()
            ),
        );
        let mut time_residuals = Vec::new();
        for (k, run) in runs.iter().enumerate() {
            if run.label == default_run.label {
                continue; // the time scale's anchor: without it the rest has no level
            }
            let train: Vec<ScaleRlRun> = runs
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != k)
                .map(|(_, r)| r.clone())
                .collect();
            let Some((theta, _)) = least_squares(
                &|t| stage2_residuals(&self.params, &train, default_run, t),
                &stage2_start(&self.params),
                1.0,
            ) else {
                continue;
            };
            let p = with_stage2(&self.params, &theta);
            time_residuals
                .push(model_mid_steps(&p, run).ln() - scalerl_mid_steps(run, default_run).ln());
        }
        let time_sd = rms(&time_residuals);
        self.set(
            ParamId::TimeScaleDiscrepancy,
            Param::new(time_sd, 0.8 * time_sd, 1.2 * time_sd),
            format!(
                "stage 5: rms ln C_mid residual, leave one of {} ScaleRL runs out",
                time_residuals.len()
            ),
        );
    }

    /// Stage 7: the kinds of start and benchmark, on every study's before/after pairs, with the
    /// benchmark levels of the latent ability; returns the levels. The cap exponent stays
    /// ScaleRL's; what the pairs say of it is stated beside it.
    fn stage7_starts(
        &mut self,
        pairs: &[crate::fit::pairs::PairedOutcome],
    ) -> std::result::Result<crate::outcome::ability::AbilityScale, String> {
        let all: Vec<&crate::fit::pairs::PairedOutcome> = pairs.iter().collect();
        let levels = crate::fit::pairs::benchmark_levels(&all);
        let annotated = crate::fit::pairs::with_ability_scores(pairs, &levels);
        let pairs: Vec<&crate::fit::pairs::PairedOutcome> = annotated.iter().collect();
        let (p7, fitted7) = crate::fit::starts::fit_starts(&self.params, &pairs).ok_or(
            "stage 7: the evidence has too few tuned-start before/after pairs (before_after.csv beside it) or their fit did not converge",
        )?;
        self.params = p7;
        self.fitted.extend(fitted7);
        if let Some((value, lo, hi, n)) =
            crate::fit::starts::cap_exponent_profile(&self.params, &pairs)
            && let Some(f) = self
                .fitted
                .iter_mut()
                .find(|f| f.id == ParamId::KMidLengthExponent)
        {
            let _ = write!(
                f.how,
                "; the {n} before/after pairs with caps above 8,192 put it at {value:.1} (90% profile range {lo:.1} to {hi:.1} of a 0-4 scan, the start kinds' time factors held at their fit), so ScaleRL's value is kept and the length effect is not identified beyond its two runs"
            );
        }
        Ok(levels)
    }
}

/// Stage 6: the difficulty exponents in 0-3 (steps of 0.02) whose hard-set best n, at the
/// compute where the easy set's best n first reaches its published saturation, is nearest the
/// published hard-set n* (in powers of two); their median with their span as the range.
fn fit_difficulty(params: &OutcomeParams, iso: IsoSaturation) -> Option<Param> {
    let mut scored = Vec::new();
    for k in 0..=150 {
        let d = k as f64 * 0.02;
        let mut p = *params;
        p[ParamId::DifficultyTimeExponent] = Param::new(d, d, d);
        if let Some((_, hard)) = isocompute_at_easy_saturation(&p, iso.easy_n_star) {
            scored.push((d, (hard as f64 / iso.hard_n_star).log2().abs()));
        }
    }
    let best = scored.iter().map(|x| x.1).fold(f64::INFINITY, f64::min);
    if best.is_nan() || best > 1.0 {
        return None;
    }
    let kept: Vec<f64> = scored
        .iter()
        .filter(|x| x.1 <= best + 1e-9)
        .map(|x| x.0)
        .collect();
    let median = kept[kept.len() / 2];
    Some(Param::new(median, kept[0], kept[kept.len() - 1]))
}

/// Six significant digits, as Rust source.
fn literal(x: f64) -> String {
    let s = format!("{x:.6e}");
    let parsed: f64 = s.parse().unwrap_or(x);
    let mut text = format!("{parsed:?}");
    if !text.contains('.') && !text.contains('e') {
        text.push_str(".0");
    }
    text
}

/// The parameters as `fitted.rs` compiles them: each fitted value rounded to the seven
/// significant digits its literal keeps.
fn compiled_params(fit: &PriorFit) -> OutcomeParams {
    let round = |x: f64| literal(x).parse::<f64>().unwrap_or(x);
    let mut params = fit.params;
    for f in &fit.fitted {
        params[f.id] = Param::new(
            round(f.param.value),
            round(f.param.low),
            round(f.param.high),
        );
    }
    params
}

/// The `PRIOR_BACKTEST` item of `fitted.rs`: the leave-one-model-out backtest of the compiled
/// defaults on the before/after outcomes (what `rlfrontier backtest` and the report's "How far
/// to trust the predictions" state), so the report reads it instead of refitting on every sweep.
fn backtest_source(fit: &PriorFit, outcomes: &[Outcome]) -> String {
    let (_, s) = backtest_refitted(outcomes, &compiled_params(fit));
    format!(
        "\n/// The leave-one-model-out backtest of these defaults on the {} SimpleRL-Zoo before/after \
         outcomes\n/// (`fit::backtest::backtest`, each model's gain refitted without it): what the \
         HTML report states.\npub const PRIOR_BACKTEST: PriorBacktest = PriorBacktest {{\n    \
         outcomes: {},\n    rmse_points: {},\n    no_gain_rmse_points: {},\n    \
         mean_gain_rmse_points: {},\n    interval_coverage: {},\n    \
         mean_interval_width_points: {},\n    gain_correlation: {},\n}};\n\n\
         /// The numbers of a backtest ([`PRIOR_BACKTEST`]).\n#[derive(Debug, Clone, Copy, PartialEq)]\n\
         pub struct PriorBacktest {{\n    /// Outcomes predicted.\n    pub outcomes: usize,\n    \
         /// RMSE of the predicted score after RL, points.\n    pub rmse_points: f64,\n    \
         /// RMSE of \"no RL gain\" (the base score), points.\n    pub no_gain_rmse_points: f64,\n    \
         /// RMSE of \"base + the other models' mean gain\", points.\n    \
         pub mean_gain_rmse_points: f64,\n    /// Share of outcomes inside the 90% interval.\n    \
         pub interval_coverage: f64,\n    /// Mean width of the 90% interval, points.\n    \
         pub mean_interval_width_points: f64,\n    \
         /// Pearson correlation of predicted and measured gains.\n    pub gain_correlation: f64,\n}}\n",
        s.outcomes,
        s.outcomes,
        literal(s.rmse_model),
        literal(s.rmse_no_gain),
        literal(s.rmse_mean_gain),
        literal(s.coverage),
        literal(s.mean_interval_width),
        literal(s.gain_correlation),
    )
}

/// The Rust source of `src/outcome/fitted.rs` for this fit of these outcomes.
pub fn fitted_source(fit: &PriorFit, outcomes: &[Outcome]) -> String {
    let mut out = String::new();
    out.push_str(
        "//! The outcome prior's defaults fitted to the evidence base.\n//!\n\
         //! Generated by `rlfrontier fit-prior evidence/published_results.csv --write \
         src/outcome/fitted.rs`\n//! (src/fit/evidence.rs); do not edit by hand. A test refits \
         and compares.\n\nuse super::params::Param;\n",
    );
    for f in &fit.fitted {
        let spec = &PARAMS[f.id as usize];
        let _ = write!(
            out,
            "\n/// `{}`: {}.\npub const {}: Param = Param::new({}, {}, {});\n",
            spec.name,
            f.how,
            spec.name.to_uppercase(),
            literal(f.param.value),
            literal(f.param.low),
            literal(f.param.high),
        );
    }
    let _ = write!(
        out,
        "\n/// The math benchmarks' levels (logit units, MATH-500 at 0): alternating means of the \
         two-way model\n/// logit(score after RL) = ability − level over the before/after pairs' \
         runs (`outcome::ability`).\npub const BENCHMARK_LEVELS: [(&str, f64); {}] = [\n",
        fit.ability_scale.levels.len()
    );
    for (family, level) in &fit.ability_scale.levels {
        let _ = writeln!(out, "    (\"{family}\", {}),", literal(*level));
    }
    out.push_str("];\n");
    let _ = write!(
        out,
        "\n/// sd of logit(score after RL) around the two-way model of [`BENCHMARK_LEVELS`].\n\
         pub const BENCHMARK_LEVEL_RESIDUAL_SD: f64 = {};\n",
        literal(fit.ability_scale.residual_sd)
    );
    out.push_str(&backtest_source(fit, outcomes));
    out
}

/// Reads the evidence and fits: what `fit-prior` and the up-to-date test both run.
pub fn fit_prior_file(path: &Path) -> Result<PriorFit> {
    fit_prior(&read_evidence(path)?).map_err(|m| Error::in_file(path, None, "", m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_prior_is_the_fit_of_the_bundled_evidence() {
        // `rlfrontier fit-prior --write src/outcome/fitted.rs` regenerates the file; this fails
        // when the evidence, the model or the fit changed without regenerating it.
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("evidence/published_results.csv");
        let fit = fit_prior_file(&path).unwrap();
        let expected = fitted_source(&fit, &read_evidence(&path).unwrap().outcomes);
        let actual = include_str!("../outcome/fitted.rs");
        assert_eq!(
            actual, expected,
            "run: cargo run -- fit-prior --write src/outcome/fitted.rs"
        );
    }

    #[test]
    fn the_recorded_backtest_is_that_of_the_compiled_defaults() {
        // `fitted.rs` records the backtest of its own rounded literals; the report states it
        // for grids on the default prior, so it must be what a backtest of them gives.
        let evidence = crate::fit::evidence::embedded_evidence();
        let (_, s) = backtest_refitted(&evidence.outcomes, &OutcomeParams::default());
        let r = crate::outcome::fitted::PRIOR_BACKTEST;
        assert_eq!(r.outcomes, s.outcomes);
        for (recorded, fresh) in [
            (r.rmse_points, s.rmse_model),
            (r.no_gain_rmse_points, s.rmse_no_gain),
            (r.mean_gain_rmse_points, s.rmse_mean_gain),
            (r.interval_coverage, s.coverage),
            (r.mean_interval_width_points, s.mean_interval_width),
            (r.gain_correlation, s.gain_correlation),
        ] {
            assert_eq!(literal(recorded), literal(fresh));
        }
    }
}
