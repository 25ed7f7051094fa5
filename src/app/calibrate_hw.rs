//! `rlfrontier calibrate-hw`: fit the GPU profile's efficiencies to one measured step and write
//! a catalog override for `--catalog`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::costing::hardware_fit::{MeasuredStep, fit_hardware, parse_metrics_line};
use rlfrontier::error::{Error, Result};

use super::cost::CostArgs;
use super::emit;

/// Arguments of `calibrate-hw`: the run's configuration (as for `cost`) and one step's timings.
#[derive(Debug, Args)]
pub struct CalibrateHwArgs {
    /// The run's configuration.
    #[command(flatten)]
    pub run: CostArgs,
    /// One veRL metrics line: console (`step:5 - timing_s/gen:41.2 - ...`) or JSON.
    #[arg(long)]
    pub log_line: Option<String>,
    /// A veRL log file: its last line with `timing_s/gen` is used.
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// Measured generation seconds of one step (`timing_s/gen`).
    #[arg(long)]
    pub gen_seconds: Option<f64>,
    /// Measured update seconds (`timing_s/update_actor`).
    #[arg(long)]
    pub update_seconds: Option<f64>,
    /// Measured reference log-prob seconds (`timing_s/ref`).
    #[arg(long)]
    pub ref_seconds: Option<f64>,
    /// Measured old-policy log-prob seconds (`timing_s/old_log_prob`).
    #[arg(long)]
    pub old_logprob_seconds: Option<f64>,
    /// Measured mean response length (`response_length/mean`).
    #[arg(long)]
    pub response_length_mean: Option<f64>,
    /// Where to write the catalog override.
    #[arg(long)]
    pub out: PathBuf,
}

/// The metrics of the log file's last line with `timing_s/gen`, then of `--log-line`.
fn logged_metrics(args: &CalibrateHwArgs) -> Result<BTreeMap<String, f64>> {
    let mut metrics = BTreeMap::new();
    if let Some(path) = &args.log {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        let line = text
            .lines()
            .rev()
            .find(|l| l.contains("timing_s/gen"))
            .ok_or_else(|| {
                Error::in_file(
                    path,
                    None,
                    "timing_s/gen",
                    "no line of this log has timing_s/gen; pass --log-line or the timings as flags",
                )
            })?;
        metrics = parse_metrics_line(line);
    }
    if let Some(line) = &args.log_line {
        metrics.extend(parse_metrics_line(line));
    }
    Ok(metrics)
}

/// The measured step: flags first, then the logged metrics; every value positive.
fn measured_step(args: &CalibrateHwArgs) -> Result<MeasuredStep> {
    let metrics = logged_metrics(args)?;
    let pick = |flag: Option<f64>, key: &str| flag.or_else(|| metrics.get(key).copied());
    let step = MeasuredStep {
        generation_seconds: pick(args.gen_seconds, "timing_s/gen"),
        update_seconds: pick(args.update_seconds, "timing_s/update_actor"),
        ref_seconds: pick(args.ref_seconds, "timing_s/ref"),
        old_logprob_seconds: pick(args.old_logprob_seconds, "timing_s/old_log_prob"),
        response_length_mean: pick(args.response_length_mean, "response_length/mean"),
    };
    for (flag, v) in [
        ("--gen-seconds", step.generation_seconds),
        ("--update-seconds", step.update_seconds),
        ("--ref-seconds", step.ref_seconds),
        ("--old-logprob-seconds", step.old_logprob_seconds),
        ("--response-length-mean", step.response_length_mean),
    ] {
        if let Some(x) = v
            && !(x.is_finite() && x > 0.0)
        {
            return Err(Error::in_flag(
                flag,
                format!("{x} must be a positive number"),
            ));
        }
    }
    Ok(step)
}

/// Fits, writes the override and prints what changed.
pub fn run(args: &CalibrateHwArgs, out: &mut dyn Write) -> Result<()> {
    use rlfrontier::costing::hardware_fit::HardwareFitError as E;
    let measured = measured_step(args)?;
    if measured.generation_seconds.is_none() && measured.update_seconds.is_none() {
        return Err(Error::in_flag("--log-line", E::NoTimings.to_string()));
    }
    let mut run = args.run.clone();
    run.levers.steps = Some(1);
    run.levers.budget = None;
    let request = run.request()?;
    let fit = fit_hardware(&request, &measured).map_err(|e| match e {
        E::NoTimings => Error::in_flag("--log-line", e.to_string()),
        E::NotRl => Error::in_flag("--algo", e.to_string()),
        E::MeanAboveCap { .. } => Error::in_flag("--response-length-mean", e.to_string()),
    })?;
    rlfrontier::report::write_atomic(&args.out, fit.override_toml().as_bytes())?;
    let mut text = format!(
        "calibrated {} from {}\n",
        fit.gpu.id,
        fit.measured.describe()
    );
    if let (Some(m), Some(mean)) = (measured.response_length_mean, fit.uncapped_mean_tokens) {
        text.push_str(&format!(
            "uncapped mean response length set to {mean:.0} tokens so the capped mean is {m}\n"
        ));
    }
    text.push_str(&fit.table());
    for n in &fit.notes {
        text.push_str(&format!("note: {n}\n"));
    }
    text.push_str(&format!(
        "wrote {} (use it with --catalog)\n",
        args.out.display()
    ));
    emit(out, &text)
}
