//! The outcome prior: a predicted score for each cell, with a 90% predictive interval.
//!
//! The score follows ScaleRL's sigmoidal compute-performance curve ("The Art of Scaling
//! Reinforcement Learning Compute for LLMs", arXiv 2510.13786, Eq. 1):
//!
//! R = R0 + (A − R0) / (1 + (K_mid / K)^β)
//!
//! with the pieces chosen so the evidence base can speak to each (docs/design.md §6):
//!
//! - R0 is the measured base score on the target metric (`[task] base_score`), else a
//!   size-dependent default fitted to SimpleRL-Zoo's base scores.
//! - The asymptote is a gain in logit units over the base: A = σ(logit(R0) + Δ), with
//!   Δ = Δ(N) × coverage(G)^c × (1 − truncation)^l × (max(cap, 8192) / 8192)^g ×
//!   (min(U, U_sat) / 1024)^a × ceiling(reward).
//!   Gains are then small near 0 and near 1 and largest in between, as SimpleRL-Zoo's
//!   before/after pairs show (AIME-like benchmarks gain a few points, MATH-500 from 0.65 gains
//!   about 15). Past U_sat (IsoCompute, arXiv 2603.12151: the best rollouts per problem saturate
//!   at 512 with 32 problems per batch) more rollouts per step no longer raise the ceiling.
//!   The kind of start and the kind of benchmark (competition, general, standard;
//!   [`kinds`]) multiply Δ. For a base model, A is never below the score its base scores on
//!   the grid's other math metrics imply ([`ability`]: a format gap RL closes).
//! - K, the learning signal, counts updates, not GPU-hours, so the time scale transfers across
//!   hardware: K = M × reuse(μ) × (U / 1024)^κ × signal(reward) × efficiency(LoRA rank), with M
//!   iterations, μ update epochs and U = B·G × (1 − zero-signal rate) × (1 − truncation rate)
//!   useful rollouts per step.
//! - K_mid = K_mid(7.6B) × (N / 7.6e9)^(−e) × (max(cap, 8192) / 8192)^λ, times a factor for
//!   base-model ("zero RL") starts, times (p̄ / 0.35)^(−d) for the prompts' mean pass rate p̄
//!   (IsoCompute: harder sets need more sequential updates, so their best G is lower at the same
//!   compute). The length term only slows caps above 8,192 tokens: its evidence (ScaleRL's 14k
//!   and 32k runs) says nothing about shorter caps.
//!
//! The interval is a 90% predictive interval: parameter uncertainty of Δ and K_mid (their fitted
//! ranges), model discrepancy between runs (fitted from leave-one-out residuals), seed-to-seed
//! noise, and, without a measured base score, the default base's range. Each source moves the
//! score by its own 1.645-sd shift; the shifts add in quadrature on each side. A measured base
//! score is known, not uncertain. [`draw_score`] gives joint draws across cells for the
//! shortlist's probability of being best.
//!
//! Where each piece is:
//!
//! | the formula for | is in |
//! |---|---|
//! | the score at K: R0 + (A − R0) × progress | `score_shifted` (log-space form of ScaleRL's sigmoid; `score_of`, `progress_of`, `ceiling_of`) |
//! | the learning signal K, K_mid and the gain Δ of a cell | [`parts`] (with [`CellSignal::of`]) |
//! | the default base score R0 (by model size) | `default_base_score` |
//! | the start kinds and benchmark kinds that scale Δ and K_mid | [`kinds`] |
//! | a base model's format floor from its other math scores | [`ability`] ([`start_score`]) |
//! | the 90% interval (parameter, discrepancy, seed, base) | [`predict`] |
//! | joint draws across cells for P(best) | [`draw_score`], [`Spread::draw_scales`] |
//! | reuse of repeated prompts and update epochs | [`fresh_iterations`], `reuse` |
//! | the fitted parameter values and their ranges | [`fitted`], [`params`] (fitted by `fit::prior`) |
//! | a sweep's per-cell fast path (same numbers, bit for bit) | [`prepared`] |

pub mod ability;
pub mod fitted;
pub mod kinds;
pub mod params;
pub mod prepared;

pub use prepared::{Median, PreparedPrediction, StaticParts};

use serde::Serialize;

use crate::config::{Finetune, RewardKind};
use crate::ledger::lengths::{beta_moment, beta_parameters};
use crate::ledger::{Ledger, RunConfig};
pub use kinds::{Benchmark, StartKind};
use params::{
    LORA_REFERENCE_PARAMS, MIN_PASS_RATE, REFERENCE_PARAMS, REFERENCE_PASS_RATE,
    REFERENCE_RESPONSE_CAP, REFERENCE_ROLLOUTS, Z90,
};
pub use params::{OutcomeParams, PARAM_NAMES, Param, ParamId};

/// Whether predictions come from the documented prior or from a calibration on pilot runs.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum OutcomeState {
    /// The documented defaults (possibly overridden in `[outcome]`).
    #[default]
    Prior,
    /// Parameters fitted to pilot checkpoints by `rlfrontier fit`.
    Calibrated {
        /// Pilot runs used.
        runs: usize,
        /// Leave-one-run-out RMSE of the calibrated model.
        loro_rmse: Option<f64>,
        /// The uncalibrated prior's RMSE on the same checkpoints.
        prior_rmse: f64,
        /// The calibration file.
        file: String,
        /// SHA-256 of the calibration file's bytes (what a merged or shared result was computed
        /// with).
        sha256: String,
    },
}

impl OutcomeState {
    /// One line for reports: "prior (uncalibrated)" or "calibrated on N runs, cross-validated
    /// RMSE E".
    pub fn label(&self) -> String {
        match self {
            OutcomeState::Prior => "prior (uncalibrated)".to_string(),
            OutcomeState::Calibrated {
                runs,
                loro_rmse: Some(e),
                ..
            } => {
                format!("calibrated on {runs} runs, cross-validated RMSE {e:.4}")
            }
            OutcomeState::Calibrated {
                runs,
                loro_rmse: None,
                ..
            } => {
                format!("calibrated on {runs} runs (too few to cross-validate)")
            }
        }
    }

    /// Short form for plot titles.
    pub fn short(&self) -> &'static str {
        match self {
            OutcomeState::Prior => "prior, uncalibrated",
            OutcomeState::Calibrated { .. } => "calibrated",
        }
    }
}

/// What the prior needs to know about a cell.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CellSignal {
    /// Policy parameters (total).
    pub policy_params: f64,
    /// Iterations M.
    pub iterations: f64,
    /// Update epochs μ.
    pub update_epochs: f64,
    /// Useful rollouts per step U.
    pub useful_rollouts_per_step: f64,
    /// coverage(G) = 1 − E[(1−p)^G].
    pub coverage: f64,
    /// Share of responses truncated.
    pub truncation_rate: f64,
    /// Mean pass rate p̄ of the training prompts before RL (the task's profile).
    pub pass_rate_mean: f64,
    /// Response cap, tokens.
    pub response_cap_tokens: f64,
    /// Where RL starts (base model, instruct or distilled checkpoint).
    pub start: StartKind,
    /// The kind of benchmark the score is on (set from the target metric's name).
    pub benchmark: Benchmark,
    /// Reward kind.
    pub reward: RewardKind,
    /// LoRA rank (None for full fine-tuning).
    pub lora_rank: Option<u64>,
    /// The measured base score R0, when known (it is then not uncertain).
    pub measured_base_score: Option<f64>,
    /// Prompts per step over the distinct prompts of the training set (`[task]
    /// dataset_prompts`), when known: the share of one pass a step takes.
    pub pass_share_per_step: Option<f64>,
    /// The score on this benchmark that the model's measured base scores on its other math
    /// benchmarks imply ([`ability::implied_score`]), when they do: a measured base score below
    /// it is read as a format gap, and the run's ceiling is at least this.
    pub ability_score: Option<f64>,
}

impl CellSignal {
    /// Extracts the signal of a run from its configuration and ledger.
    pub fn of(cfg: &RunConfig, ledger: &Ledger) -> Self {
        let t = &ledger.tokens;
        // Under dynamic sampling the kept groups all carry signal.
        let signal_share = if cfg.run.dynamic_sampling {
            1.0
        } else {
            1.0 - t.zero_signal_rate
        };
        let (alpha, beta) =
            beta_parameters(cfg.task.pass_rate_mean, cfg.task.pass_rate_concentration);
        CellSignal {
            policy_params: cfg.policy.total_params() as f64,
            iterations: ledger.iterations as f64,
            update_epochs: cfg.update_epochs as f64,
            useful_rollouts_per_step: t.rollouts_per_step
                * signal_share
                * (1.0 - t.truncation_rate),
            coverage: 1.0 - beta_moment(beta, alpha, cfg.group_size),
            truncation_rate: t.truncation_rate,
            pass_rate_mean: cfg.task.pass_rate_mean,
            response_cap_tokens: cfg.max_response_len as f64,
            start: cfg.task.start.into(),
            benchmark: Benchmark::Standard,
            reward: cfg.reward.kind,
            lora_rank: match cfg.finetune {
                Finetune::Full => None,
                Finetune::Lora(r) => Some(r),
            },
            measured_base_score: cfg.measured_base_score,
            pass_share_per_step: cfg
                .task
                .dataset_prompts
                .map(|d| cfg.prompts_per_step as f64 / d),
            ability_score: cfg.ability_score,
        }
    }
}

/// The parts of a prediction, for reports, tests and joint draws.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Prediction {
    /// Base score R0.
    pub base_score: f64,
    /// Asymptote A for this cell.
    pub ceiling: f64,
    /// Learning signal K.
    pub signal: f64,
    /// K_mid for this policy.
    pub k_mid: f64,
    /// Predicted score (the median of the predictive distribution).
    pub score: f64,
    /// Low end of the 90% predictive interval.
    pub score_low: f64,
    /// High end of the 90% predictive interval.
    pub score_high: f64,
}

/// ln(32768 / 8192): the longest generation budget whose ceiling the evidence measured (ScaleRL's
/// 32k run); longer caps get its ceiling term, not an extrapolation.
const MAX_CEILING_CAP_LN: f64 = std::f64::consts::LN_2 * 2.0;

/// Scores below this are treated as this in logit space (logit(0) is −∞): a benchmark the base
/// never solves can still gain, as SimpleRL-Zoo's Qwen2.5-1.5B does on AIME (0 → 0.067).
pub const LOGIT_FLOOR: f64 = 0.01;

/// logit(p) = ln(p / (1 − p)), with p clamped to [LOGIT_FLOOR, 1 − 1e-9].
pub fn logit(p: f64) -> f64 {
    let p = p.clamp(LOGIT_FLOOR, 1.0 - 1e-9);
    (p / (1.0 - p)).ln()
}

/// logit(p) with p clamped to [1e-6, 1 − 1e-6] only (scores near 0 and 1 keep their own logit:
/// an interval around them is asymmetric in score units, as it should be).
fn logit_unclamped(p: f64) -> f64 {
    let p = p.clamp(1e-6, 1.0 - 1e-6);
    (p / (1.0 - p)).ln()
}

/// The logistic function σ(x) = 1 / (1 + e^−x), the inverse of [`logit`].
pub fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn reuse(rho: f64, epochs: f64) -> f64 {
    if rho <= 0.0 {
        1.0
    } else {
        (1.0 - rho.powf(epochs)) / (1.0 - rho)
    }
}

/// x^y from ln x (0^y = 0 for y > 0, and 1 for y = 0, as `powf`).
fn pow_ln(ln_x: f64, y: f64) -> f64 {
    if y == 0.0 || ln_x == 0.0 {
        1.0
    } else {
        (y * ln_x).exp()
    }
}

/// A cell's prediction before the sigmoid: everything a draw perturbs.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Parts {
    /// R0.
    pub base_score: f64,
    /// The least the ceiling A is: the score the model's other math benchmarks imply on this one
    /// (`outcome::ability`; 0 without one). A base score below it is a format gap RL closes.
    pub ability_floor: f64,
    /// The share of that format gap closed at these iterations, 1 − exp(−steps / τ_f)
    /// ([`ParamId::FormatClosureSteps`]); 0 without a gap. The sigmoid starts from
    /// [`start_score`].
    pub format_gap_closed: f64,
    /// logit(max(R0, floor)).
    pub base_logit: f64,
    /// Δ for this cell, logit units.
    pub gain_logit: f64,
    /// The cell's multipliers of Δ(N) (coverage, truncation, batch, reward): discrepancy of Δ
    /// scales with them.
    pub gain_multiplier: f64,
    /// ln K (−∞ when K = 0).
    pub ln_k: f64,
    /// ln K_mid.
    pub ln_k_mid: f64,
    /// β.
    pub steepness: f64,
    /// sd (logit units) of the outcome around the prediction that does not shrink with
    /// predicted progress (the kind of start's floor).
    pub floor_logit_sd: f64,
    /// sd (logit units) of the ground the run may lose (grows with steps).
    pub downside_logit_sd: f64,
    /// sd of R0 per unit normal when R0 is the default (not measured): both regression
    /// parameters move together, as the interval's two ends do; 0 when R0 was measured.
    pub base_score_sd: f64,
    /// The floor R0 is read at in logit space (the benchmark's).
    pub base_logit_floor: f64,
}

/// R0 from the parameters when none was measured.
fn default_base_score(params: &OutcomeParams, decades: f64, pick: impl Fn(Param) -> f64) -> f64 {
    (pick(params[ParamId::BaseScoreAt7b]) + pick(params[ParamId::BaseScorePerDecade]) * decades)
        .clamp(0.0, 1.0)
}

/// The cell's parts at the parameters' point values.
pub fn parts(params: &OutcomeParams, s: &CellSignal) -> Parts {
    StaticParts::of(params, s).at(s.iterations)
}

/// What the kind of start changes: K_mid's multiplier, Δ's multiplier and the interval's floor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartTerms {
    /// K_mid multiplier.
    pub time_factor: f64,
    /// Δ multiplier.
    pub gain_factor: f64,
    /// sd (logit units) of outcomes around the prediction that does not shrink with progress.
    pub floor_sd: f64,
}

impl StartTerms {
    /// The terms of `kind` at the parameters' point values. ScaleRL's reference runs have time
    /// and gain factor 1 (K_mid and Δ(N) are fitted to them) and no floor (their discrepancy is
    /// fitted in stage 5).
    pub fn of(params: &OutcomeParams, kind: StartKind) -> Self {
        use ParamId::*;
        let v = |id: ParamId| params[id].value;
        let (time_factor, gain_factor, floor_sd) = match kind {
            StartKind::Base => (v(ZeroRlTimeFactor), 1.0, v(OutcomeFloorBase)),
            StartKind::Instruct => (
                v(InstructTimeFactor),
                v(InstructGainFactor),
                v(OutcomeFloorInstruct),
            ),
            StartKind::Distilled => (
                v(DistilledTimeFactor),
                v(DistilledGainFactor),
                v(OutcomeFloorDistilled),
            ),
            StartKind::Tuned => (v(TunedTimeFactor), v(TunedGainFactor), v(OutcomeFloorTuned)),
            StartKind::ScaleRlReference => (1.0, 1.0, 0.0),
        };
        StartTerms {
            time_factor,
            gain_factor,
            floor_sd,
        }
    }
}

/// Steps at which [`ParamId::DownsideSdAt1000Steps`] is stated.
pub const DOWNSIDE_REFERENCE_STEPS: f64 = 1000.0;

/// The sd (logit units) of the ground a run of `iterations` steps may lose: the downside grows
/// as √steps, a random walk of the recipe's drift away from what it learned (the losses among
/// the evidence's before/after pairs, stage 7 of src/fit/evidence.rs).
pub fn downside_sd(params: &OutcomeParams, iterations: f64) -> f64 {
    downside_sd_of(params[ParamId::DownsideSdAt1000Steps].value, iterations)
}

/// [`downside_sd`] from the sd at 1,000 steps.
fn downside_sd_of(at_reference: f64, iterations: f64) -> f64 {
    if at_reference == 0.0 || iterations <= 0.0 {
        0.0
    } else {
        at_reference * (iterations / DOWNSIDE_REFERENCE_STEPS).sqrt()
    }
}

/// Iterations counted as fresh ones: past one pass over the training set (`pass_share` of it per
/// step), each further step is worth `reuse` of a fresh one (docs/design.md §6; `data_reuse` is a
/// hypothesis). With no dataset size every step is fresh.
pub fn fresh_iterations(iterations: f64, pass_share: Option<f64>, reuse: f64) -> f64 {
    match pass_share {
        Some(share) if share > 0.0 && iterations * share > 1.0 => {
            let first_pass = 1.0 / share;
            first_pass + reuse * (iterations - first_pass)
        }
        _ => iterations,
    }
}

/// The asymptote A = σ(logit R0 + Δ) with Δ shifted by `gain_shift`: never below R0, nor below
/// the score a base model's other math benchmarks imply (`outcome::ability`). The evidence's
/// base-start pairs with a gap beyond noise (49) close about all of it in logit units: median
/// share 1.07, quartiles 0.93 and 1.34 (a test in `fit::pairs` holds the median to 0.8-1.5).
fn ceiling_of(p: &Parts, gain_shift: f64) -> f64 {
    logistic(p.base_logit + (p.gain_logit + gain_shift).max(0.0))
        .max(p.base_score)
        .max(p.ability_floor)
}

/// The share of the reachable gain a cell has realised, 1 / (1 + (K_mid / K)^β), with ln K_mid
/// shifted by `time_shift`; 0 when K = 0.
fn progress_of(p: &Parts, time_shift: f64) -> f64 {
    if p.ln_k == f64::NEG_INFINITY || p.ln_k.is_nan() {
        0.0
    } else {
        1.0 / (1.0 + (p.steepness * (p.ln_k_mid + time_shift - p.ln_k)).exp())
    }
}

/// Where the sigmoid starts at a cell's iterations: R0, plus the share of a base model's format
/// gap closed by then, R0 + (floor − R0) × (1 − exp(−steps / τ_f)). Format is learned within tens
/// of steps, far faster than ability (INTUITOR's Qwen2.5-1.5B: GSM8K 0.2% → 75% in 58 steps,
/// arXiv 2505.19590 Table 1; `outcome::ability`), so it is not left to the ability's K_mid. The
/// exponential form is a hypothesis: the evidence's checkpoints bound how fast, not the curve's
/// shape. Exactly R0 without a gap.
pub fn start_score(p: &Parts) -> f64 {
    p.base_score + (p.ability_floor - p.base_score).max(0.0) * p.format_gap_closed
}

/// R0 + (A − R0) × progress.
fn score_of(base_score: f64, ceiling: f64, progress: f64) -> f64 {
    base_score + (ceiling - base_score) * progress
}

/// The score from parts with Δ and ln K_mid shifted by `gain_shift` and `time_shift`.
fn score_shifted(p: &Parts, gain_shift: f64, time_shift: f64) -> f64 {
    score_of(
        start_score(p),
        ceiling_of(p, gain_shift),
        progress_of(p, time_shift),
    )
}

/// ScaleRL's sigmoid as written, R0 + (A − R0) / (1 + (K_mid / K)^β) (R0 when K = 0): the
/// readable form the tests hold the production path to. Production computes the same curve in
/// log space ([`score_shifted`]: `progress_of` × the gain `ceiling_of` − R0, over `start_score`),
/// so that K and K_mid spanning many decades never overflow.
#[cfg(test)]
pub(crate) fn sigmoid_score(r0: f64, a: f64, k: f64, k_mid: f64, beta: f64) -> f64 {
    if k <= 0.0 {
        return r0;
    }
    r0 + (a - r0) / (1.0 + (k_mid / k).powf(beta))
}

/// The point prediction alone (no interval): what fitting loops need.
pub fn predict_score(params: &OutcomeParams, s: &CellSignal) -> f64 {
    score_shifted(&parts(params, s), 0.0, 0.0)
}

/// The standard deviations behind a cell's interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    /// sd of Δ(N) from the parameters' ranges (shared by every cell), logit units.
    pub gain_parameter: f64,
    /// sd of ln K_mid from the parameters' ranges (shared by every cell).
    pub time_parameter: f64,
    /// sd of Δ(N) from model discrepancy, logit units.
    pub gain_discrepancy: f64,
    /// sd of ln K_mid from model discrepancy.
    pub time_discrepancy: f64,
    /// Seed-to-seed sd of the run's ability, logit units ([`seed_logit_sd`]).
    pub seed_logit: f64,
    /// Share of the discrepancy that differs between cells of one grid.
    pub regime_share: f64,
}

impl Spread {
    /// The spreads the parameters state.
    pub fn of(params: &OutcomeParams) -> Self {
        use ParamId::*;
        Spread {
            gain_parameter: params[GainLogitAt7b].sd(),
            time_parameter: params[KMidAt7b].sd_ln(),
            gain_discrepancy: params[GainDiscrepancy].value,
            time_discrepancy: params[TimeScaleDiscrepancy].value,
            seed_logit: seed_logit_sd(params[SeedSd].value),
            regime_share: params[RegimeDiscrepancyShare].value,
        }
    }
}

/// The score at which `seed_sd` is stated: ScaleRL's seed-to-seed ±0.02 is on an asymptote A of
/// about 0.6 (ScaleRL, arXiv 2510.13786, Table 1: A 0.585 to 0.645 across its runs).
pub const SEED_REFERENCE_SCORE: f64 = 0.6;

/// Seed-to-seed sd of a run's ability θ in logit units, from `seed_sd` stated in score units at
/// [`SEED_REFERENCE_SCORE`]. A benchmark score is a mean over items of σ(θ − d) (the item-response
/// form, docs/design.md §6); a shift of θ by δ moves it by about p(1 − p)·δ (the logistic's
/// slope; a spread of item difficulties scales the slope by the same factor at every p), so the
/// same seed noise is ±0.02 at 0.6, about ±0.009 at 0.9 and ±0.004 at 0.05.
pub fn seed_logit_sd(seed_sd: f64) -> f64 {
    seed_sd / (SEED_REFERENCE_SCORE * (1.0 - SEED_REFERENCE_SCORE))
}

/// Predicts a cell's score with its 90% predictive interval.
pub fn predict(params: &OutcomeParams, s: &CellSignal) -> Prediction {
    PreparedPrediction::of(params, s).at(s.iterations)
}

/// Standard-normal draws for one joint sample: the shared ones move every cell of a grid
/// together (parameter uncertainty and the shared part of the discrepancy), the cell's own
/// ones move only that cell (its regime's discrepancy and its seed).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawNormals {
    /// Shared shift of Δ.
    pub shared_gain: f64,
    /// Shared shift of ln K_mid.
    pub shared_time: f64,
    /// The cell's own shift of Δ.
    pub cell_gain: f64,
    /// The cell's own shift of ln K_mid.
    pub cell_time: f64,
    /// The cell's seed noise.
    pub seed: f64,
    /// Shared shift of the default base score (every cell of a grid; 0 effect when measured).
    pub shared_base: f64,
}

/// The standard deviations a joint draw scales its normals by, derived once from a [`Spread`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DrawScales {
    /// sd of the shared shift of Δ(N): parameter uncertainty and the shared discrepancy.
    pub shared_gain: f64,
    /// sd of the cell's own shift of Δ(N): its regime's discrepancy.
    pub cell_gain: f64,
    /// sd of the shared shift of ln K_mid.
    pub shared_time: f64,
    /// sd of the cell's own shift of ln K_mid.
    pub cell_time: f64,
    /// Seed-to-seed sd of the run's ability, logit units.
    pub seed_logit: f64,
}

impl Spread {
    /// The scales of a joint draw: the discrepancy's variance is split between a shared part
    /// (1 − share) and a per-regime part (share); parameter uncertainty is all shared.
    pub fn draw_scales(&self) -> DrawScales {
        let share = self.regime_share.clamp(0.0, 1.0);
        DrawScales {
            shared_gain: (self.gain_parameter.powi(2)
                + (1.0 - share) * self.gain_discrepancy.powi(2))
            .sqrt(),
            cell_gain: share.sqrt() * self.gain_discrepancy,
            shared_time: (self.time_parameter.powi(2)
                + (1.0 - share) * self.time_discrepancy.powi(2))
            .sqrt(),
            cell_time: share.sqrt() * self.time_discrepancy,
            seed_logit: self.seed_logit,
        }
    }
}

/// `parts` with R0 moved to `base_score` (clamped to [0, 1]).
pub fn with_base(parts: &Parts, base_score: f64) -> Parts {
    let r0 = base_score.clamp(0.0, 1.0);
    Parts {
        base_score: r0,
        base_logit: logit(r0.max(parts.base_logit_floor)),
        ..*parts
    }
}

/// One joint draw of a cell's score: cells given the same shared normals are correlated as the
/// model says (the parameters and the shared discrepancy move them together).
pub fn draw_score(parts: &Parts, scales: &DrawScales, z: &DrawNormals) -> f64 {
    draw_score_at(parts, progress_of(parts, 0.0), scales, z)
}

/// [`draw_score`] with the cell's unshifted progress (`progress`, which no normal moves) given:
/// computed once for all of a cell's draws. The same bits as `draw_score`.
pub fn draw_score_at(parts: &Parts, progress: f64, scales: &DrawScales, z: &DrawNormals) -> f64 {
    let moved;
    let parts = if parts.base_score_sd > 0.0 && z.shared_base != 0.0 {
        moved = with_base(
            parts,
            parts.base_score + parts.base_score_sd * z.shared_base,
        );
        &moved
    } else {
        parts
    };
    let gain_shift = parts.gain_multiplier
        * (scales.shared_gain * z.shared_gain + scales.cell_gain * z.cell_gain);
    let time_shift = scales.shared_time * z.shared_time + scales.cell_time * z.cell_time;
    let score = score_shifted(parts, gain_shift, time_shift);
    // The floor moves every cell of a grid together (with the shared gain normal): it is how far
    // runs of this kind of start land from the prediction in general, not a difference between
    // regimes of one grid. The downside is the run's own (with its seed normal), low side only.
    // The seed moves the run's ability θ, so its noise is in logit units too, scaled by how far
    // the run has moved from its (known) start. `progress` is the unmoved parts' progress:
    // moving the base score changes no term of it.
    let shift = parts.floor_logit_sd * z.shared_gain
        + parts.downside_logit_sd * z.seed.min(0.0)
        + scales.seed_logit * progress * z.seed;
    if shift == 0.0 {
        score
    } else {
        logistic(logit_unclamped(score) + shift).clamp(0.0, 1.0)
    }
}

/// A cell's progress at its parts' own time scale (what [`draw_score_at`] takes).
pub fn unshifted_progress(parts: &Parts) -> f64 {
    progress_of(parts, 0.0)
}

#[cfg(test)]
mod tests;
