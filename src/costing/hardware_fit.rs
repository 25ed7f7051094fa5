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
    /// Seconds of one whole RL iteration, when no phase is measured (TRL logs only its
    /// `step_time`): fitted as one factor on every efficiency.
    pub step_seconds: Option<f64>,
}

impl MeasuredStep {
    /// The measured values under veRL's metric names, in a fixed order.
    pub fn named(&self) -> [(&'static str, Option<f64>); 7] {
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
            ("iteration_seconds", self.step_seconds),
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
        "no timings found: give a veRL metrics line (⟨log_line⟩ / ⟨log⟩) or ⟨gen_seconds⟩ and ⟨update_seconds⟩"
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

/// Seconds of the phases a calibration fits: measured (each optional) or modelled.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FitPhases {
    /// Generation (prefill + decode), `timing_s/gen`.
    pub generation: Option<f64>,
    /// The policy update, `timing_s/update_actor`.
    pub update: Option<f64>,
    /// The reference log-prob pass, `timing_s/ref`.
    pub reference: Option<f64>,
    /// The old-policy log-prob pass, `timing_s/old_log_prob`.
    pub old_logprob: Option<f64>,
    /// The whole step, `timing_s/step`: used only when no phase is measured.
    pub step: Option<f64>,
}

impl FitPhases {
    /// Whether any phase (not the step) is given.
    pub fn has_phase(&self) -> bool {
        self.generation.is_some()
            || self.update.is_some()
            || self.reference.is_some()
            || self.old_logprob.is_some()
    }
}

/// Modelled seconds of one step of `request`.
fn phase_seconds(request: &RunRequest) -> FitPhases {
    let l = evaluate(&request.rl_config());
    FitPhases {
        generation: Some(l.phase(Phase::Prefill).seconds + l.phase(Phase::Decode).seconds),
        update: Some(l.phase(Phase::Update).seconds),
        reference: Some(l.phase(Phase::RefLogprob).seconds),
        old_logprob: Some(l.phase(Phase::OldLogprob).seconds),
        step: Some(l.step_seconds),
    }
}

/// Rounds of the proportional efficiency updates: time is inversely proportional to efficiency
/// for the matmul part of a pass only (its attention, launch overheads and offload copies do
/// not scale), so each round leaves an error of that share of the last one's. At long context
/// with offload (`rlinf_doc_verl_r1d15b_27k_8xh100`) five rounds left the update 1.1% off; ten
/// take every bundled row's fitted phases within 1%.
pub const PROPORTIONAL_ROUNDS: usize = 10;

/// Fits `defaults`' efficiencies so that `model` (the modelled phases on a GPU profile) matches
/// `measured`:
/// - `train_mfu` from the update and `forward_efficiency` from the mean of the reference and
///   old-log-prob ratios, by proportional rounds ([`PROPORTIONAL_ROUNDS`]);
/// - `decode_bandwidth_efficiency` by bisection on the generation seconds;
/// - with no phase measured but the step, one factor on all three by bisection on the step.
///
/// Efficiencies above 1 are capped, with a note.
pub fn fit_efficiencies(
    defaults: &GpuSpec,
    measured: &FitPhases,
    model: &dyn Fn(&GpuSpec) -> FitPhases,
    notes: &mut Vec<String>,
) -> GpuSpec {
    let mut gpu = defaults.clone();
    if !measured.has_phase() {
        if let Some(step) = measured.step {
            gpu = scale_for_step(defaults, step, model, notes);
        }
        return gpu;
    }
    for _ in 0..PROPORTIONAL_ROUNDS {
        let now = model(&gpu);
        if let (Some(t), Some(m)) = (measured.update, now.update)
            && m > 0.0
            && t > 0.0
        {
            gpu.train_mfu *= m / t;
        }
        let forward: Vec<f64> = [
            (measured.reference, now.reference),
            (measured.old_logprob, now.old_logprob),
        ]
        .iter()
        .filter_map(|&(t, m)| match (t, m) {
            (Some(t), Some(m)) if m > 0.0 && t > 0.0 => Some(gpu.forward_efficiency * m / t),
            _ => None,
        })
        .collect();
        if !forward.is_empty() {
            gpu.forward_efficiency = forward.iter().sum::<f64>() / forward.len() as f64;
        }
    }
    if let Some(t) = measured.generation {
        gpu.decode_bandwidth_efficiency = decode_efficiency_for(&gpu, t, model, notes);
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
    gpu
}

/// Bisection of `f` (falling in x) on [lo, hi] for f(x) = target, 100 halvings.
fn bisect_falling(f: &dyn Fn(f64) -> f64, target: f64, lo: f64, hi: f64) -> f64 {
    let (mut lo, mut hi) = (lo, hi);
    for _ in 0..100 {
        let mid = 0.5 * (lo + hi);
        if f(mid) > target { lo = mid } else { hi = mid }
    }
    0.5 * (lo + hi)
}

/// The decode bandwidth efficiency at which modelled generation takes `measured` seconds
/// (bisection on [0.01, 1]; monotone because decode time falls as efficiency rises).
fn decode_efficiency_for(
    gpu: &GpuSpec,
    measured: f64,
    model: &dyn Fn(&GpuSpec) -> FitPhases,
    notes: &mut Vec<String>,
) -> f64 {
    let at = |eff: f64| {
        let mut g = gpu.clone();
        g.decode_bandwidth_efficiency = eff;
        model(&g).generation.unwrap_or(0.0)
    };
    let (lo, hi) = (0.01, 1.0);
    if at(hi) > measured {
        notes.push(format!("generation measured faster ({measured:.2} s) than the roofline allows at full bandwidth ({:.2} s): check GPUs, lengths and batch; efficiency capped at 1", at(hi)));
        return hi;
    }
    if at(lo) < measured {
        notes.push(format!("generation measured slower ({measured:.2} s) than the model at 1% bandwidth ({:.2} s): overheads outside the model dominate", at(lo)));
        return lo;
    }
    bisect_falling(&at, measured, lo, hi)
}

/// One factor k on the three efficiencies (each capped at 1) so the modelled step takes `step`
/// seconds: bisection on k in [1/20, 20].
fn scale_for_step(
    defaults: &GpuSpec,
    step: f64,
    model: &dyn Fn(&GpuSpec) -> FitPhases,
    notes: &mut Vec<String>,
) -> GpuSpec {
    let scaled = |k: f64| {
        let mut g = defaults.clone();
        g.train_mfu = (defaults.train_mfu * k).min(1.0);
        g.forward_efficiency = (defaults.forward_efficiency * k).min(1.0);
        g.decode_bandwidth_efficiency = (defaults.decode_bandwidth_efficiency * k).min(1.0);
        g
    };
    let at = |k: f64| model(&scaled(k)).step.unwrap_or(0.0);
    let (lo, hi) = (0.05, 20.0);
    let k = if at(hi) > step {
        notes.push(format!("the step measured faster ({step:.2} s) than the model at 20x its efficiencies ({:.2} s)", at(hi)));
        hi
    } else if at(lo) < step {
        notes.push(format!("the step measured slower ({step:.2} s) than the model at 1/20 of its efficiencies ({:.2} s): overheads outside the model dominate", at(lo)));
        lo
    } else {
        bisect_falling(&at, step, lo, hi)
    };
    scaled(k)
}

/// Fits the GPU profile of `request` (one RL step; its stop is ignored) to the measured step.
pub fn fit_hardware(
    request: &RunRequest,
    measured: &MeasuredStep,
) -> Result<HardwareFit, HardwareFitError> {
    if measured.generation_seconds.is_none()
        && measured.update_seconds.is_none()
        && measured.step_seconds.is_none()
    {
        return Err(HardwareFitError::NoTimings);
    }
    if !request.stage.is_rl() {
        return Err(HardwareFitError::NotRl);
    }
    let mut request = request.clone();
    request.stop = crate::config::Stop::Iterations(1);
    // A logged step: no start-up, validation or checkpoint in it.
    request.run = request.run.steps_only();
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
    let mut notes = Vec::new();
    let targets = FitPhases {
        generation: measured.generation_seconds,
        update: measured.update_seconds,
        reference: measured.ref_seconds,
        old_logprob: measured.old_logprob_seconds,
        // Only a whole iteration measured (TRL): one factor on every efficiency.
        step: measured.step_seconds,
    };
    let model = |gpu: &GpuSpec| {
        let mut r = request.clone();
        r.hardware.gpu = gpu.clone();
        phase_seconds(&r)
    };
    let gpu = fit_efficiencies(&defaults, &targets, &model, &mut notes);
    if !targets.has_phase() && targets.step.is_some() {
        notes.push("only the whole iteration was measured (no phase timings): one factor fitted to all three efficiencies, so generation and training are not told apart".to_string());
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
