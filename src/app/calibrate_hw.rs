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
#[derive(Debug, Clone, Args)]
pub struct CalibrateHwArgs {
    /// The run's configuration.
    #[command(flatten)]
    pub run: CostArgs,
    /// One veRL metrics line: console (`step:5 - timing_s/gen:41.2 - ...`) or JSON.
    #[arg(long)]
    pub log_line: Option<String>,
    /// A log with per-step timings: veRL console lines, veRL's file-logger JSON lines or a wandb
    /// CSV export; the median of each phase over the logged steps is used (the first, start-up
    /// step left out when three or more are logged).
    #[arg(long)]
    pub log: Option<PathBuf>,
    /// The log's format (`verl-console`, `verl-jsonl`, `jsonl`, `wandb-csv`, `trl-state`)
    /// [default: detected from the file].
    #[arg(long, value_name = "FORMAT", requires = "log")]
    pub format: Option<rlfrontier::logs::LogFormat>,
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
    /// Measured share of responses cut at the cap (`response_length/clip_ratio`).
    #[arg(long)]
    pub response_length_clip_ratio: Option<f64>,
    /// Where to write the catalog override.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace the override file if it exists (never when it is one of the inputs).
    #[arg(long)]
    pub force: bool,
}

/// The medians of the log file's steps (`--log`: veRL console, veRL file-logger JSON lines,
/// JSON lines or a wandb CSV export), then `--log-line` over them; and how they were read.
fn logged_metrics(args: &CalibrateHwArgs) -> Result<(BTreeMap<String, f64>, Option<String>)> {
    let mut metrics = BTreeMap::new();
    let mut source = None;
    if let Some(path) = &args.log {
        let log = rlfrontier::costing::logs::read_step_log(path, args.format)?;
        source = Some(format!(
            "{}: {}, median of {} of {} logged steps",
            path.display(),
            log.format,
            log.steps_used,
            log.steps_found
        ));
        metrics = log.metrics;
    }
    if let Some(line) = &args.log_line {
        metrics.extend(parse_metrics_line(line));
    }
    Ok((metrics, source))
}

/// Seconds of one RL iteration from TRL's `step_time` (seconds per optimizer step) times the
/// optimizer steps per iteration: from the run record the launch script wrote beside the log,
/// else `--update-epochs` (TRL's `num_iterations`, at the default `steps_per_generation`).
fn trl_iteration_seconds(
    args: &CalibrateHwArgs,
    metrics: &BTreeMap<String, f64>,
) -> Result<Option<f64>> {
    use rlfrontier::pilot::run_record::{RunRecord, StepsPerIteration};
    let Some(&step_time) = metrics.get(rlfrontier::costing::logs::TRL_STEP_TIME) else {
        return Ok(None);
    };
    let per = match args
        .log
        .as_deref()
        .map(RunRecord::beside)
        .transpose()?
        .flatten()
    {
        Some((path, record)) => record.steps_per_iteration(&path)?,
        None => StepsPerIteration {
            micro_steps: args.run.levers.update_epochs,
            accumulation: 1,
        },
    };
    Ok(Some(
        step_time * per.micro_steps as f64 / per.accumulation as f64,
    ))
}

/// The measured step: flags first, then the logged metrics; every value positive.
fn measured_step(args: &CalibrateHwArgs) -> Result<(MeasuredStep, Option<f64>, Option<String>)> {
    let (metrics, source) = logged_metrics(args)?;
    let pick = |flag: Option<f64>, key: &str| flag.or_else(|| metrics.get(key).copied());
    let step = MeasuredStep {
        generation_seconds: pick(args.gen_seconds, "timing_s/gen"),
        update_seconds: pick(args.update_seconds, "timing_s/update_actor"),
        ref_seconds: pick(args.ref_seconds, "timing_s/ref"),
        old_logprob_seconds: pick(args.old_logprob_seconds, "timing_s/old_log_prob"),
        // veRL's names, else TRL's (GRPOTrainer logs `completions/mean_length` and
        // `completions/clipped_ratio`, the share of completions cut at max_completion_length).
        response_length_mean: pick(args.response_length_mean, "response_length/mean")
            .or_else(|| metrics.get("completions/mean_length").copied()),
        response_length_clip_ratio: pick(
            args.response_length_clip_ratio,
            "response_length/clip_ratio",
        )
        .or_else(|| metrics.get("completions/clipped_ratio").copied()),
        step_seconds: trl_iteration_seconds(args, &metrics)?,
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
    let logged = metrics.get("timing_s/step").copied().or(step.step_seconds);
    Ok((step, logged, source))
}

/// Refuses the `cost` flags that mean nothing for one measured step (they would be silently
/// ignored otherwise).
fn refuse_unused_flags(args: &CalibrateHwArgs) -> Result<()> {
    let r = &args.run;
    let unused: [(&str, bool); 7] = [
        ("--steps", r.levers.steps.is_some()),
        ("--budget", r.levers.budget.is_some()),
        ("--gain", r.gain.is_some()),
        ("--examples", r.supervised.examples.is_some()),
        ("--pairs", r.supervised.pairs.is_some()),
        (
            "--own-gpu-usd-per-hour",
            r.ownership.own_gpu_usd_per_hour.is_some(),
        ),
        ("--gpu-capex-usd", r.ownership.gpu_capex_usd.is_some()),
    ];
    match unused.iter().find(|(_, given)| *given) {
        Some((flag, _)) => Err(Error::in_flag(
            flag,
            "calibrate-hw fits one measured step of the run's configuration; this flag does not apply: drop it",
        )),
        None => Ok(()),
    }
}

/// Fits, writes the override and prints what changed (as text, or JSON with `--json`).
pub fn run(given: &CalibrateHwArgs, out: &mut dyn Write) -> Result<()> {
    refuse_unused_flags(given)?;
    // The run's configuration with the imported file's settings (one measured step: its
    // length is not read).
    let args = &CalibrateHwArgs {
        run: given.run.with_import(true)?.0,
        ..given.clone()
    };
    use rlfrontier::costing::hardware_fit::HardwareFitError as E;
    let (measured, logged_step_seconds, source) = measured_step(args)?;
    let blame = if args.log.is_some() {
        "--log"
    } else {
        "--log-line"
    };
    if measured.generation_seconds.is_none()
        && measured.update_seconds.is_none()
        && measured.step_seconds.is_none()
    {
        return Err(Error::in_flag(blame, E::NoTimings.to_string()));
    }
    // The inputs are read; the output is checked before any work is done.
    let mut inputs: Vec<&std::path::Path> = args.log.iter().map(PathBuf::as_path).collect();
    inputs.extend(args.run.catalog.paths.iter().map(PathBuf::as_path));
    inputs.extend(args.run.from_verl.as_deref());
    inputs.extend(args.run.from_trl.as_deref());
    rlfrontier::report::check_file_out("out", &args.out, &inputs, args.force)?;
    let mut run = args.run.clone();
    run.levers.steps = Some(1);
    run.levers.budget = None;
    let mut request = run.request()?;
    // One logged step (veRL's `timing_s/step` of a step without validation or a save).
    request.run = request.run.steps_only();
    let fit = fit_hardware(&request, &measured).map_err(|e| match e {
        E::NoTimings => Error::in_flag(blame, e.to_string()),
        E::NotRl => Error::in_flag("--algo", e.to_string()),
        E::MeanAboveCap { .. } | E::Lengths(_) => {
            Error::in_flag("--response-length-mean", e.to_string())
        }
    })?;
    rlfrontier::report::write_atomic(&args.out, fit.override_toml().as_bytes())?;
    let mut text = format!(
        "calibrated {} from {}\n",
        fit.gpu.id,
        fit.measured.describe()
    );
    if let Some(source) = &source {
        text.push_str(&format!("read {source}\n"));
    }
    if let (Some(m), Some(mean)) = (measured.response_length_mean, fit.uncapped_mean_tokens) {
        text.push_str(&format!(
            "uncapped mean response length set to {mean:.0} tokens so the capped mean is {m}\n"
        ));
    }
    text.push_str(&fit.table());
    // The whole step with the fitted profile, against the log's own step time.
    let mut calibrated = request.clone();
    calibrated.hardware.gpu = fit.gpu.clone();
    if let Some(mean) = fit.uncapped_mean_tokens {
        calibrated.task.mean_response_tokens = mean;
    }
    let modelled = calibrated.ledger().step_seconds;
    let label = if measured.step_seconds.is_some() {
        "TRL step_time × optimizer steps per iteration"
    } else {
        "timing_s/step"
    };
    text.push_str(&whole_step_line(modelled, logged_step_seconds, label));
    for n in &fit.notes {
        text.push_str(&format!("note: {n}\n"));
    }
    if args.run.json {
        let json = fit_json(
            &fit,
            source.as_deref(),
            modelled,
            logged_step_seconds,
            &args.out,
        );
        let mut text = serde_json::to_string_pretty(&json).expect("json");
        text.push('\n');
        return emit(out, &text);
    }
    text.push_str(&wrote_line(&args.out, &measured));
    emit(out, &text)
}

/// The closing line: the profile written, and the flags that price with it and the log's lengths.
fn wrote_line(path: &std::path::Path, measured: &MeasuredStep) -> String {
    format!(
        "wrote {} (use it with --catalog{})\n",
        path.display(),
        measured
            .response_length_mean
            .map(|m| format!(
                " and --mean-response-tokens {}{}, the log's lengths",
                rlfrontier::format::number(m),
                measured
                    .response_length_clip_ratio
                    .map(|p| format!(" --clip-ratio {}", rlfrontier::format::number(p)))
                    .unwrap_or_default()
            ))
            .unwrap_or_default()
    )
}

/// The whole step with the fitted profile, against the log's own step time when it has one.
fn whole_step_line(modelled: f64, logged_step_seconds: Option<f64>, label: &str) -> String {
    if let Some(logged) = logged_step_seconds {
        format!(
            "whole step: {modelled:.1} s with the fitted profile against the log's {label} {logged:.1} s ({:+.0}%; what the fitted phases do not cover: reward, advantages, weight sync, bookkeeping)\n",
            100.0 * (modelled / logged - 1.0)
        )
    } else {
        format!(
            "whole step: {modelled:.1} s with the fitted profile (the log has no timing_s/step to compare)\n"
        )
    }
}

/// `calibrate-hw --json`: the measured step, the defaults and the fitted efficiencies, the
/// modelled and logged step seconds, the notes and the override file written.
fn fit_json(
    fit: &rlfrontier::costing::hardware_fit::HardwareFit,
    source: Option<&str>,
    modelled: f64,
    logged_step_seconds: Option<f64>,
    out_path: &std::path::Path,
) -> serde_json::Value {
    serde_json::json!({
        "gpu": fit.gpu.id,
        "measured": fit.measured.named().iter().filter_map(|(k, v)| v.map(|x| (k.to_string(), x))).collect::<BTreeMap<String, f64>>(),
        "source": source,
        "default": {
            "train_mfu": fit.defaults.train_mfu,
            "forward_efficiency": fit.defaults.forward_efficiency,
            "decode_bandwidth_efficiency": fit.defaults.decode_bandwidth_efficiency,
        },
        "calibrated": {
            "train_mfu": fit.gpu.train_mfu,
            "forward_efficiency": fit.gpu.forward_efficiency,
            "decode_bandwidth_efficiency": fit.gpu.decode_bandwidth_efficiency,
        },
        "uncapped_mean_response_tokens": fit.uncapped_mean_tokens,
        "modelled_step_seconds": modelled,
        "logged_step_seconds": logged_step_seconds,
        "notes": fit.notes,
        "override_file": out_path.display().to_string(),
    })
}
