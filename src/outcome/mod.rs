//! The outcome prior: a predicted score for each cell, with an interval.
//!
//! The score follows ScaleRL's sigmoidal compute-performance curve ("The Art of Scaling
//! Reinforcement Learning Compute for LLMs", arXiv 2510.13786):
//!
//! R = R0 + (A − R0) / (1 + (K_mid / K)^β)
//!
//! where K measures the learning signal the budget buys, so that frontiers have interior optima
//! for the right reasons (docs/design.md §6):
//!
//! - K = M × reuse(μ) × (U / 1024)^κ × signal(reward) × efficiency(LoRA rank), with M the
//!   iterations, reuse(μ) = (1 − ρ^μ)/(1 − ρ) for μ update epochs, U = B·G × (1 − zero-signal
//!   rate) × (1 − truncation rate) the useful rollouts per step;
//! - A = R0 + (A_max(N) − R0) × coverage(G)^c × (1 − truncation)^l × ceiling(reward), with
//!   coverage(G) = 1 − E[(1−p)^G] over the Beta pass-rate profile;
//! - R0(N), A_max(N) and K_mid(N) depend on the policy's parameters N.
//!
//! The interval is an analytic box bound: every parameter moves over its plausible range
//! ([`params`]) in the direction that lowers (raises) the score, and the steepness takes whichever
//! end is worse (better). It is deterministic and needs no sampling. It is not a confidence
//! interval: it says how far the prior's own stated uncertainty could move the prediction.

pub mod params;

use serde::Serialize;

use crate::config::{Finetune, RewardKind};
use crate::ledger::lengths::{beta_moment, beta_parameters};
use crate::ledger::{Ledger, RunConfig};
use params::{LORA_REFERENCE_PARAMS, REFERENCE_PARAMS, REFERENCE_ROLLOUTS};
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
    /// Reward kind.
    pub reward: RewardKind,
    /// LoRA rank (None for full fine-tuning).
    pub lora_rank: Option<u64>,
    /// The measured base score R0, when known (it is then not uncertain).
    pub measured_base_score: Option<f64>,
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
            reward: cfg.reward.kind,
            lora_rank: match cfg.finetune {
                Finetune::Full => None,
                Finetune::Lora(r) => Some(r),
            },
            measured_base_score: cfg.measured_base_score,
        }
    }
}

/// Plain parameter values for one evaluation.
#[derive(Debug, Clone, Copy)]
struct Values([f64; 19]);

impl Values {
    fn pick(params: &OutcomeParams, choose: impl Fn(usize, Param) -> f64) -> Self {
        let all = params.as_array();
        Values(std::array::from_fn(|i| choose(i, all[i])))
    }
}

// Indices into Values: the parameters' positions in `params::PARAMS`.
const BASE: usize = ParamId::BaseScoreAt7b as usize;
const BASE_SLOPE: usize = ParamId::BaseScorePerDecade as usize;
const CEILING: usize = ParamId::CeilingAt7b as usize;
const CEILING_SLOPE: usize = ParamId::CeilingPerDecade as usize;
const K_MID: usize = ParamId::KMidAt7b as usize;
const K_MID_EXP: usize = ParamId::KMidSizeExponent as usize;
const STEEPNESS: usize = ParamId::Steepness as usize;
const KAPPA: usize = ParamId::BatchExponent as usize;
const RHO: usize = ParamId::EpochReuse as usize;
const COVERAGE_EXP: usize = ParamId::CoverageExponent as usize;
const LENGTH_EXP: usize = ParamId::LengthCeilingExponent as usize;
const PRM_SIGNAL: usize = ParamId::PrmSignal as usize;
const PRM_CEILING: usize = ParamId::PrmCeiling as usize;
const ORM_SIGNAL: usize = ParamId::OrmSignal as usize;
const ORM_CEILING: usize = ParamId::OrmCeiling as usize;
const JUDGE_SIGNAL: usize = ParamId::JudgeSignal as usize;
const JUDGE_CEILING: usize = ParamId::JudgeCeiling as usize;
const LORA_HALF: usize = ParamId::LoraHalfRankAt05b as usize;
const LORA_EXP: usize = ParamId::LoraHalfRankSizeExponent as usize;

/// The parts of a prediction, for reports and tests.
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
    /// Predicted score at the point values.
    pub score: f64,
    /// Low end of the box bound.
    pub score_low: f64,
    /// High end of the box bound.
    pub score_high: f64,
}

fn reuse(rho: f64, epochs: f64) -> f64 {
    if rho <= 0.0 {
        1.0
    } else {
        (1.0 - rho.powf(epochs)) / (1.0 - rho)
    }
}

/// Logarithms of a cell's bases, computed once per prediction: every power in [`parts`] is then
/// exp(exponent × log), cheaper than `powf` and shared by the point value and both corners.
#[derive(Debug, Clone, Copy)]
struct Logs {
    decades: f64,
    coverage: f64,
    untruncated: f64,
    size_vs_reference: f64,
    size_vs_lora_reference: f64,
    rollouts_vs_reference: f64,
    iterations: f64,
}

impl Logs {
    fn of(s: &CellSignal) -> Self {
        Logs {
            decades: (s.policy_params / REFERENCE_PARAMS).log10(),
            coverage: s.coverage.clamp(0.0, 1.0).ln(),
            untruncated: (1.0 - s.truncation_rate).clamp(0.0, 1.0).ln(),
            size_vs_reference: (s.policy_params / REFERENCE_PARAMS).ln(),
            size_vs_lora_reference: (s.policy_params / LORA_REFERENCE_PARAMS).ln(),
            rollouts_vs_reference: (s.useful_rollouts_per_step / REFERENCE_ROLLOUTS)
                .max(0.0)
                .ln(),
            iterations: s.iterations.ln(),
        }
    }
}

/// x^y from ln x (0^y = 0 for y > 0, and 1 for y = 0, as `powf`).
fn pow_ln(ln_x: f64, y: f64) -> f64 {
    if y == 0.0 { 1.0 } else { (y * ln_x).exp() }
}

/// (R0, A, ln K, ln K_mid) under one set of values (ln K = −∞ when K = 0).
fn parts(v: &Values, s: &CellSignal, l: &Logs) -> (f64, f64, f64, f64) {
    let v = &v.0;
    // A measured base score is known, not uncertain: every corner of the box starts from it.
    let r0 = match s.measured_base_score {
        Some(measured) => measured.clamp(0.0, 1.0),
        None => (v[BASE] + v[BASE_SLOPE] * l.decades).clamp(0.0, 1.0),
    };
    let a_max = (v[CEILING] + v[CEILING_SLOPE] * l.decades).clamp(r0, 1.0);
    let (signal, ceiling) = match s.reward {
        RewardKind::Rule => (1.0, 1.0),
        RewardKind::Prm => (v[PRM_SIGNAL], v[PRM_CEILING]),
        RewardKind::Orm => (v[ORM_SIGNAL], v[ORM_CEILING]),
        RewardKind::Judge => (v[JUDGE_SIGNAL], v[JUDGE_CEILING]),
    };
    let headroom = (a_max - r0)
        * pow_ln(l.coverage, v[COVERAGE_EXP])
        * pow_ln(l.untruncated, v[LENGTH_EXP])
        * ceiling;
    let a = (r0 + headroom).clamp(r0, 1.0);
    let lora = match s.lora_rank {
        None => 1.0,
        Some(rank) => {
            let half = v[LORA_HALF] * pow_ln(l.size_vs_lora_reference, v[LORA_EXP]);
            rank as f64 / (rank as f64 + half)
        }
    };
    let ln_k = l.iterations
        + reuse(v[RHO], s.update_epochs).ln()
        + v[KAPPA] * l.rollouts_vs_reference
        + (signal * lora).ln();
    let ln_k_mid = v[K_MID].ln() - v[K_MID_EXP] * l.size_vs_reference;
    (r0, a, ln_k, ln_k_mid)
}

fn sigmoid_from_logs(r0: f64, a: f64, ln_k: f64, ln_k_mid: f64, beta: f64) -> f64 {
    if ln_k == f64::NEG_INFINITY || ln_k.is_nan() {
        return r0;
    }
    r0 + (a - r0) / (1.0 + (beta * (ln_k_mid - ln_k)).exp())
}

/// ScaleRL's sigmoid: R0 + (A − R0) / (1 + (K_mid / K)^β); R0 when K = 0.
pub fn sigmoid_score(r0: f64, a: f64, k: f64, k_mid: f64, beta: f64) -> f64 {
    if k <= 0.0 {
        return r0;
    }
    r0 + (a - r0) / (1.0 + (k_mid / k).powf(beta))
}

/// +1 when raising the parameter raises the score for this cell, −1 when it lowers it, 0 when
/// it does not matter (steepness is handled separately).
fn direction(index: usize, s: &CellSignal) -> f64 {
    let size = (s.policy_params / REFERENCE_PARAMS).ln().signum();
    match index {
        BASE | CEILING | RHO => 1.0,
        BASE_SLOPE | CEILING_SLOPE | K_MID_EXP => size,
        K_MID | COVERAGE_EXP | LENGTH_EXP => -1.0,
        KAPPA => (s.useful_rollouts_per_step / REFERENCE_ROLLOUTS)
            .ln()
            .signum(),
        PRM_SIGNAL | PRM_CEILING => f64::from(s.reward == RewardKind::Prm),
        ORM_SIGNAL | ORM_CEILING => f64::from(s.reward == RewardKind::Orm),
        JUDGE_SIGNAL | JUDGE_CEILING => f64::from(s.reward == RewardKind::Judge),
        LORA_HALF => -f64::from(s.lora_rank.is_some()),
        LORA_EXP => {
            -f64::from(s.lora_rank.is_some())
                * (s.policy_params / LORA_REFERENCE_PARAMS).ln().signum()
        }
        // The steepness's effect changes sign at K = K_mid: both of its ends are tried instead.
        STEEPNESS => 0.0,
        _ => 0.0,
    }
}

/// The point prediction alone (no interval): what fitting loops need, five times cheaper than
/// [`predict`].
pub fn predict_score(params: &OutcomeParams, s: &CellSignal) -> f64 {
    let nominal = Values::pick(params, |_, p| p.value);
    let logs = Logs::of(s);
    let (r0, a, ln_k, ln_k_mid) = parts(&nominal, s, &logs);
    sigmoid_from_logs(r0, a, ln_k, ln_k_mid, params.steepness.value)
}

/// Predicts a cell's score with its box-bound interval.
pub fn predict(params: &OutcomeParams, s: &CellSignal) -> Prediction {
    let nominal = Values::pick(params, |_, p| p.value);
    let logs = Logs::of(s);
    let (r0, a, ln_k, ln_k_mid) = parts(&nominal, s, &logs);
    let score = sigmoid_from_logs(r0, a, ln_k, ln_k_mid, params.steepness.value);
    let pessimistic = Values::pick(params, |i, p| {
        if direction(i, s) >= 0.0 {
            p.low
        } else {
            p.high
        }
    });
    let optimistic = Values::pick(params, |i, p| {
        if direction(i, s) >= 0.0 {
            p.high
        } else {
            p.low
        }
    });
    let mut low = f64::INFINITY;
    let mut high = f64::NEG_INFINITY;
    // A corner's (R0, A, K, K_mid) do not depend on the steepness: compute them once per corner.
    for corner in [pessimistic, optimistic] {
        let (r0c, ac, ln_kc, ln_k_midc) = parts(&corner, s, &logs);
        for beta in [params.steepness.low, params.steepness.high] {
            let r = sigmoid_from_logs(r0c, ac, ln_kc, ln_k_midc, beta);
            low = low.min(r);
            high = high.max(r);
        }
    }
    Prediction {
        base_score: r0,
        ceiling: a,
        signal: ln_k.exp(),
        k_mid: ln_k_mid.exp(),
        score,
        score_low: low.min(score),
        score_high: high.max(score),
    }
}

#[cfg(test)]
mod tests;
