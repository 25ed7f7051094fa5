//! Fit a GPU profile's efficiencies to one measured RL step (`rlfrontier calibrate-hw`).
//!
//! Given the run's configuration and one step's phase timings as veRL logs them
//! (`timing_s/gen`, `timing_s/ref`, `timing_s/old_log_prob`, `timing_s/update_actor`,
//! `response_length/mean`), [`fit_hardware`]
//! 1. sets the task's uncapped mean response length so that the capped mean matches the measured
//!    `response_length/mean` (inverting E[min(X, L)] by bisection, [`uncapped_mean_for`]);
//! 2. scales the training MFU and the forward efficiency so the modelled update and log-prob
//!    phases take the measured seconds (time is inversely proportional to efficiency);
//! 3. finds the decode bandwidth efficiency by bisection so the modelled generation (prefill +
//!    decode) takes the measured seconds, keeping the per-step decode overhead at its default.
//!
//! [`HardwareFit::override_toml`] is the catalog file that `cost`, `sweep` and `plan` accept with
//! `--catalog`.

use super::RunRequest;
use crate::catalog::GpuSpec;
use crate::format::Table;
use crate::ledger::lengths::LoggedLengths;
use crate::ledger::{Phase, evaluate};

/// One step's measured phase timings (seconds) and mean response length (tokens).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MeasuredStep {
    /// `timing_s/gen`.
    pub generation_seconds: Option<f64>,
    /// `timing_s/update_actor`.
    pub update_seconds: Option<f64>,
    /// `timing_s/ref`.
    pub ref_seconds: Option<f64>,
    /// `timing_s/old_log_prob`.
    pub old_logprob_seconds: Option<f64>,
    /// `response_length/mean`.
    pub response_length_mean: Option<f64>,
    /// `response_length/clip_ratio`: the share of responses cut at the cap.
    pub response_length_clip_ratio: Option<f64>,
}

impl MeasuredStep {
    /// The measured values under veRL's metric names, in a fixed order.
    pub fn named(&self) -> [(&'static str, Option<f64>); 6] {
        [
            ("timing_s/gen", self.generation_seconds),
            ("timing_s/update_actor", self.update_seconds),
            ("timing_s/ref", self.ref_seconds),
            ("timing_s/old_log_prob", self.old_logprob_seconds),
            ("response_length/mean", self.response_length_mean),
            (
                "response_length/clip_ratio",
                self.response_length_clip_ratio,
            ),
        ]
    }

    /// `name=value` for every measured value, comma-separated.
    pub fn describe(&self) -> String {
        self.named()
            .iter()
            .filter_map(|(k, v)| v.map(|x| format!("{k}={x}")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// Why a step cannot be fitted.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum HardwareFitError {
    /// Neither generation nor update time was measured.
    #[error(
        "no timings found: give a veRL metrics line (--log-line / --log) or --gen-seconds and --update-seconds"
    )]
    NoTimings,
    /// The stage is not RL.
    #[error("calibrate-hw fits an RL step (grpo or ppo)")]
    NotRl,
    /// The measured mean response length is at or above the cap.
    #[error("{measured} must lie below the cap {cap}: every response would be truncated")]
    MeanAboveCap {
        /// The measured capped mean.
        measured: f64,
        /// The cap.
        cap: f64,
    },
    /// The logged mean and clip ratio have no lognormal behind them.
    #[error("{0}")]
    Lengths(String),
}

pub use crate::logs::parse_metrics_line;

/// The uncapped mean whose capped mean E[min(X, L)] equals `measured` at coefficient of
/// variation `cv` ([`LoggedLengths::uncapped`] without a clip ratio); None at or above the cap.
pub fn uncapped_mean_for(measured: f64, cv: f64, cap: f64) -> Option<f64> {
    if !(measured > 0.0 && measured < cap) {
        return None;
    }
    LoggedLengths {
        mean_tokens: measured,
        cap_tokens: cap,
        clip_ratio: None,
    }
    .uncapped(cv)
    .ok()
    .map(|(mean, _)| mean)
}

/// A fitted GPU profile.
#[derive(Debug, Clone)]
pub struct HardwareFit {
    /// The catalog's profile before the fit.
    pub defaults: GpuSpec,
    /// The profile with fitted efficiencies.
    pub gpu: GpuSpec,
    /// The uncapped mean response length set from `response_length/mean`, if measured.
    pub uncapped_mean_tokens: Option<f64>,
    /// What looked wrong (efficiencies capped, timings outside the model's range).
    pub notes: Vec<String>,
    /// What was measured.
    pub measured: MeasuredStep,
    /// Policy id and GPU count, for the override's header.
    pub policy_id: String,
    /// GPUs in the measured cluster.
    pub gpus: u64,
}

/// Modelled seconds of (generation, update, reference, old log-prob) for one step.
fn phase_seconds(request: &RunRequest) -> (f64, f64, f64, f64) {
    let l = evaluate(&request.rl_config());
    (
        l.phase(Phase::Prefill).seconds + l.phase(Phase::Decode).seconds,
        l.phase(Phase::Update).seconds,
        l.phase(Phase::RefLogprob).seconds,
        l.phase(Phase::OldLogprob).seconds,
    )
}

/// The decode bandwidth efficiency at which modelled generation takes `measured` seconds
/// (bisection on [0.01, 1]; monotone because decode time falls as efficiency rises).
fn decode_efficiency_for(request: &RunRequest, measured: f64, notes: &mut Vec<String>) -> f64 {
    let at = |eff: f64| {
        let mut r = request.clone();
        r.hardware.gpu.decode_bandwidth_efficiency = eff;
        phase_seconds(&r).0
    };
    let (mut lo, mut hi) = (0.01, 1.0);
    if at(hi) > measured {
        notes.push(format!("generation measured faster ({measured:.2} s) than the roofline allows at full bandwidth ({:.2} s): check GPUs, lengths and batch; efficiency capped at 1", at(hi)));
        lo = hi;
    } else if at(lo) < measured {
        notes.push(format!("generation measured slower ({measured:.2} s) than the model at 1% bandwidth ({:.2} s): overheads outside the model dominate", at(lo)));
        hi = lo;
    }
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if at(mid) > measured {
            lo = mid
        } else {
            hi = mid
        }
    }
    0.5 * (lo + hi)
}

/// Fits the GPU profile of `request` (one RL step; its stop is ignored) to the measured step.
pub fn fit_hardware(
    request: &RunRequest,
    measured: &MeasuredStep,
) -> Result<HardwareFit, HardwareFitError> {
    if measured.generation_seconds.is_none() && measured.update_seconds.is_none() {
        return Err(HardwareFitError::NoTimings);
    }
    if !request.stage.is_rl() {
        return Err(HardwareFitError::NotRl);
    }
    let mut request = request.clone();
    request.stop = crate::config::Stop::Iterations(1);
    let mut uncapped_mean_tokens = None;
    if let Some(m) = measured.response_length_mean {
        let cap = request.levers.max_response_len as f64;
        let (mean, cv) = match measured.response_length_clip_ratio {
            // With the clip ratio the logged numbers fix the spread too.
            Some(p) => LoggedLengths {
                mean_tokens: m,
                cap_tokens: cap,
                clip_ratio: Some(p),
            }
            .uncapped(request.task.response_length_cv)
            .map_err(|e| HardwareFitError::Lengths(e.0))?,
            None => (
                uncapped_mean_for(m, request.task.response_length_cv, cap)
                    .ok_or(HardwareFitError::MeanAboveCap { measured: m, cap })?,
                request.task.response_length_cv,
            ),
        };
        request.task.mean_response_tokens = mean;
        request.task.response_length_cv = cv;
        uncapped_mean_tokens = Some(mean);
    }
    let defaults = request.hardware.gpu.clone();
    let (_, update_model, ref_model, old_model) = phase_seconds(&request);
    let mut notes = Vec::new();
    let mut gpu = defaults.clone();
    if let Some(t) = measured.update_seconds
        && update_model > 0.0
    {
        gpu.train_mfu = defaults.train_mfu * update_model / t;
    }
    let forward: Vec<f64> = [
        (measured.ref_seconds, ref_model),
        (measured.old_logprob_seconds, old_model),
    ]
    .iter()
    .filter_map(|&(m, model)| {
        m.filter(|_| model > 0.0)
            .map(|t| defaults.forward_efficiency * model / t)
    })
    .collect();
    if !forward.is_empty() {
        gpu.forward_efficiency = forward.iter().sum::<f64>() / forward.len() as f64;
    }
    if let Some(t) = measured.generation_seconds {
        gpu.decode_bandwidth_efficiency = decode_efficiency_for(&request, t, &mut notes);
    }
    for (name, value) in [
        ("train_mfu", &mut gpu.train_mfu),
        ("forward_efficiency", &mut gpu.forward_efficiency),
    ] {
        if *value > 1.0 {
            notes.push(format!("{name} came out at {value:.3} (> 1): the measured phase is faster than peak; check the configuration; capped at 1"));
            *value = 1.0;
        }
    }
    Ok(HardwareFit {
        defaults,
        gpu,
        uncapped_mean_tokens,
        notes,
        measured: *measured,
        policy_id: request.policy.id.clone(),
        gpus: request.hardware.gpus,
    })
}

impl HardwareFit {
    /// The catalog override file: the GPU's fitted efficiencies, with a header saying where they
    /// came from.
    pub fn override_toml(&self) -> String {
        format!(
            "# Written by rlfrontier calibrate-hw from one measured step of {} on {} x {}:\n# {}\n# Use with --catalog on cost, sweep and plan.\nversion = \"calibrated\"\n\n[[gpu]]\nid = \"{}\"\ntrain_mfu = {:.6}\nforward_efficiency = {:.6}\ndecode_bandwidth_efficiency = {:.6}\n",
            self.policy_id,
            self.gpus,
            self.gpu.id,
            self.measured.describe(),
            self.gpu.id,
            self.gpu.train_mfu,
            self.gpu.forward_efficiency,
            self.gpu.decode_bandwidth_efficiency
        )
    }

    /// Defaults against fitted values, one row per efficiency.
    pub fn table(&self) -> String {
        let (d, g) = (&self.defaults, &self.gpu);
        let mut table = Table::new(["parameter", "default", "calibrated"]);
        for (name, default, fitted) in [
            ("train_mfu", d.train_mfu, g.train_mfu),
            (
                "forward_efficiency",
                d.forward_efficiency,
                g.forward_efficiency,
            ),
            (
                "decode_bandwidth_efficiency",
                d.decode_bandwidth_efficiency,
                g.decode_bandwidth_efficiency,
            ),
        ] {
            table.row([
                name.to_string(),
                format!("{default:.3}"),
                format!("{fitted:.3}"),
            ]);
        }
        table.render()
    }
}
