//! `rlfrontier calibrate-hw`: fit the GPU profile's efficiencies to one measured step.
//!
//! Given the run's configuration (the `cost` flags) and one step's phase timings as veRL logs
//! them (`timing_s/gen`, `timing_s/ref`, `timing_s/old_log_prob`, `timing_s/update_actor`,
//! `response_length/mean`), it
//! 1. sets the task's uncapped mean response length so that the capped mean matches the measured
//!    `response_length/mean` (inverting E[min(X, L)] by bisection);
//! 2. scales the training MFU and the forward efficiency so the modelled update and log-prob
//!    phases take the measured seconds (time is inversely proportional to efficiency);
//! 3. finds the decode bandwidth efficiency by bisection so the modelled generation (prefill +
//!    decode) takes the measured seconds, keeping the per-step decode overhead at its default;
//!
//! and writes a catalog file overriding those fields for the GPU, which `cost`, `sweep` and `plan`
//! accept with `--catalog`.

use std::collections::BTreeMap;
use std::io::Write;

use crate::cli::CalibrateHwArgs;
use crate::error::{Error, Result};
use crate::format::Table;
use crate::ledger::lengths::response_lengths;
use crate::ledger::{Phase, evaluate};

use super::cost::inputs;

/// Parses one veRL metrics line: JSON (`{"timing_s/gen": 41.2, ...}`) or the console logger's
/// `step:5 - timing_s/gen:41.2 - ...`.
pub fn parse_metrics_line(line: &str) -> BTreeMap<String, f64> {
    let mut out = BTreeMap::new();
    let line = line.trim();
    if line.starts_with('{') {
        if let Ok(serde_json::Value::Object(map)) = serde_json::from_str::<serde_json::Value>(line)
        {
            for (k, v) in map {
                if let Some(x) = v.as_f64() {
                    out.insert(k, x);
                }
            }
        }
        return out;
    }
    for part in line.split(" - ") {
        if let Some((k, v)) = part.trim().rsplit_once(':')
            && let Ok(x) = v.trim().parse::<f64>()
        {
            out.insert(k.trim().to_string(), x);
        }
    }
    out
}

/// The uncapped mean whose capped mean E[min(X, L)] equals `measured` (bisection).
pub fn uncapped_mean_for(measured: f64, cv: f64, cap: f64) -> Option<f64> {
    if !(measured > 0.0 && measured < cap) {
        return None;
    }
    let (mut lo, mut hi) = (measured, 1e3 * cap.max(measured));
    for _ in 0..200 {
        let mid = (lo * hi).sqrt();
        if response_lengths(mid, cv, cap).mean_tokens < measured {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    Some((lo * hi).sqrt())
}

/// Fits and writes the override.
pub fn run(args: &CalibrateHwArgs, out: &mut dyn Write) -> Result<()> {
    let mut metrics: BTreeMap<String, f64> = BTreeMap::new();
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
    let pick = |flag: Option<f64>, key: &str| flag.or_else(|| metrics.get(key).copied());
    let generation = pick(args.gen_seconds, "timing_s/gen");
    let update = pick(args.update_seconds, "timing_s/update_actor");
    let reference = pick(args.ref_seconds, "timing_s/ref");
    let old = pick(args.old_logprob_seconds, "timing_s/old_log_prob");
    let response_mean = pick(args.response_length_mean, "response_length/mean");
    for (flag, v) in [
        ("--gen-seconds", generation),
        ("--update-seconds", update),
        ("--ref-seconds", reference),
        ("--old-logprob-seconds", old),
        ("--response-length-mean", response_mean),
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
    if generation.is_none() && update.is_none() {
        return Err(Error::in_flag(
            "--log-line",
            "no timings found: give a veRL metrics line (--log-line / --log) or --gen-seconds and --update-seconds",
        ));
    }
    let mut run_args = args.run.clone();
    run_args.steps = Some(1);
    run_args.budget = None;
    let mut priced = inputs(&run_args)?;
    if !priced.algo_is_rl() {
        return Err(Error::in_flag(
            "--algo",
            "calibrate-hw fits an RL step (grpo or ppo)",
        ));
    }
    if let Some(m) = response_mean {
        let cap = run_args.max_response_len as f64;
        priced.task.mean_response_tokens =
            uncapped_mean_for(m, priced.task.response_length_cv, cap).ok_or_else(|| {
                Error::in_flag(
                    "--response-length-mean",
                    format!("{m} must lie below the cap {cap}: every response would be truncated"),
                )
            })?;
    }
    let defaults = priced.hardware.gpu.clone();
    let model_seconds = |p: &super::cost::CostInputs| {
        let l = evaluate(&super::cost::rl_config(p, &run_args));
        (
            l.phase(Phase::Prefill).seconds + l.phase(Phase::Decode).seconds,
            l.phase(Phase::Update).seconds,
            l.phase(Phase::RefLogprob).seconds,
            l.phase(Phase::OldLogprob).seconds,
        )
    };
    let (_, update_model, ref_model, old_model) = model_seconds(&priced);
    let mut notes = Vec::new();
    let mut gpu = defaults.clone();
    if let Some(t) = update
        && update_model > 0.0
    {
        gpu.train_mfu = defaults.train_mfu * update_model / t;
    }
    let forward: Vec<f64> = [(reference, ref_model), (old, old_model)]
        .iter()
        .filter_map(|&(m, model)| {
            m.filter(|_| model > 0.0)
                .map(|t| defaults.forward_efficiency * model / t)
        })
        .collect();
    if !forward.is_empty() {
        gpu.forward_efficiency = forward.iter().sum::<f64>() / forward.len() as f64;
    }
    if let Some(t) = generation {
        let at = |eff: f64| {
            let mut p = priced.clone();
            p.hardware.gpu.decode_bandwidth_efficiency = eff;
            model_seconds(&p).0
        };
        let (mut lo, mut hi) = (0.01, 1.0);
        if at(hi) > t {
            notes.push(format!("generation measured faster ({t:.2} s) than the roofline allows at full bandwidth ({:.2} s): check GPUs, lengths and batch; efficiency capped at 1", at(hi)));
            lo = hi;
        } else if at(lo) < t {
            notes.push(format!("generation measured slower ({t:.2} s) than the model at 1% bandwidth ({:.2} s): overheads outside the model dominate", at(lo)));
            hi = lo;
        }
        for _ in 0..100 {
            let mid = 0.5 * (lo + hi);
            if at(mid) > t { lo = mid } else { hi = mid }
        }
        gpu.decode_bandwidth_efficiency = 0.5 * (lo + hi);
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
    let mut table = Table::new(["parameter", "default", "calibrated"]);
    table.row([
        "train_mfu".to_string(),
        format!("{:.3}", defaults.train_mfu),
        format!("{:.3}", gpu.train_mfu),
    ]);
    table.row([
        "forward_efficiency".to_string(),
        format!("{:.3}", defaults.forward_efficiency),
        format!("{:.3}", gpu.forward_efficiency),
    ]);
    table.row([
        "decode_bandwidth_efficiency".to_string(),
        format!("{:.3}", defaults.decode_bandwidth_efficiency),
        format!("{:.3}", gpu.decode_bandwidth_efficiency),
    ]);
    table.row([
        "decode_step_overhead_seconds".to_string(),
        format!("{}", defaults.decode_step_overhead_seconds),
        format!("{} (kept)", gpu.decode_step_overhead_seconds),
    ]);
    let measured: Vec<String> = [
        ("timing_s/gen", generation),
        ("timing_s/update_actor", update),
        ("timing_s/ref", reference),
        ("timing_s/old_log_prob", old),
        ("response_length/mean", response_mean),
    ]
    .iter()
    .filter_map(|(k, v)| v.map(|x| format!("{k}={x}")))
    .collect();
    let file = format!(
        "# Written by rlfrontier calibrate-hw from one measured step of {} on {} x {}:\n# {}\n# Use with --catalog on cost, sweep and plan.\nversion = \"calibrated\"\n\n[[gpu]]\nid = \"{}\"\ntrain_mfu = {:.6}\nforward_efficiency = {:.6}\ndecode_bandwidth_efficiency = {:.6}\n",
        priced.policy.id,
        priced.hardware.gpus,
        gpu.id,
        measured.join(", "),
        gpu.id,
        gpu.train_mfu,
        gpu.forward_efficiency,
        gpu.decode_bandwidth_efficiency
    );
    crate::report::write_atomic(&args.out, file.as_bytes())?;
    let mut text = format!("calibrated {} from {}\n", gpu.id, measured.join(", "));
    if let Some(m) = response_mean {
        text.push_str(&format!(
            "uncapped mean response length set to {:.0} tokens so the capped mean is {m}\n",
            priced.task.mean_response_tokens
        ));
    }
    text.push_str(&table.render());
    for n in notes {
        text.push_str(&format!("note: {n}\n"));
    }
    text.push_str(&format!(
        "wrote {} (use it with --catalog)\n",
        args.out.display()
    ));
    super::emit(out, &text)
}
