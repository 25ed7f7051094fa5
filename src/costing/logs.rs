//! Phase timings from a framework's log (any format [`crate::logs`] reads): the steps that carry
//! `timing_s/gen` are summarised by the median of each metric, leaving out the first step when
//! three or more are logged (start-up and compilation make it slow).

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::logs::{LogFormat, read_log};
use crate::stats::median;

/// The metric that marks a step's line or row.
pub const STEP_MARKER: &str = "timing_s/gen";

/// The one timing TRL logs (`GRPOTrainer.training_step`): seconds of one optimizer step's
/// `training_step` calls (generation included), the mean over the steps since the last log.
/// It has no phases; the optimizer update itself and evaluations fall outside it.
pub const TRL_STEP_TIME: &str = "step_time";

/// What a log says about its steps.
#[derive(Debug, Clone, PartialEq)]
pub struct StepLog {
    /// Median of each metric over the steps used.
    pub metrics: BTreeMap<String, f64>,
    /// Steps found with [`STEP_MARKER`].
    pub steps_found: usize,
    /// Steps the medians are over.
    pub steps_used: usize,
    /// `veRL console`, `veRL file logger (JSON lines)`, `JSON lines` or `CSV (wandb export)`.
    pub format: &'static str,
}

/// Reads a log file (its format detected unless given) and summarises its steps.
pub fn read_step_log(path: &Path, format: Option<LogFormat>) -> Result<StepLog> {
    let log = read_log(path, format)?;
    let trl = log.format == LogFormat::TrlState;
    let marker = if trl { TRL_STEP_TIME } else { STEP_MARKER };
    let format = log.format.describe();
    let steps: Vec<&BTreeMap<String, f64>> = log
        .steps
        .iter()
        .map(|s| &s.metrics)
        .filter(|m| m.contains_key(marker))
        .collect();
    if steps.is_empty() {
        let fix = if trl {
            "TRL logs step_time every logging_steps optimizer steps (10 by default): run longer, or with --logging_steps 1"
        } else {
            "log veRL's timing metrics (they are on by default), or pass the timings as flags (⟨gen_seconds⟩, ⟨update_seconds⟩, ...)"
        };
        return Err(Error::in_file(
            path,
            None,
            marker,
            format!("no step of this log ({format}) has {marker}; {fix}"),
        ));
    }
    let used: Vec<&BTreeMap<String, f64>> = if steps.len() >= 3 {
        steps[1..].to_vec()
    } else {
        steps.clone()
    };
    let mut keys: Vec<&String> = used.iter().flat_map(|r| r.keys()).collect();
    keys.sort();
    keys.dedup();
    let metrics = keys
        .into_iter()
        .map(|k| {
            let values: Vec<f64> = used.iter().filter_map(|r| r.get(k).copied()).collect();
            (k.clone(), median(values))
        })
        .collect();
    Ok(StepLog {
        metrics,
        steps_found: steps.len(),
        steps_used: used.len(),
        format,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(text: &str, name: &str) -> StepLog {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        read_step_log(&path, None).unwrap()
    }

    #[test]
    fn every_format_gives_the_median_without_the_first_step() {
        // Steps 1-4 with gen 90 (warm-up), 40, 42, 44: the median of 40, 42, 44 is 42.
        let console = "step:1 - timing_s/gen:90 - timing_s/step:120\nstep:2 - timing_s/gen:40 - timing_s/step:60\nsome other line\nstep:3 - timing_s/gen:42 - timing_s/step:62\nstep:4 - timing_s/gen:44 - timing_s/step:64\n";
        let jsonl = "{\"step\":1,\"data\":{\"timing_s/gen\":90}}\n{\"step\":2,\"data\":{\"timing_s/gen\":40}}\n{\"step\":3,\"data\":{\"timing_s/gen\":42}}\n{\"step\":4,\"data\":{\"timing_s/gen\":44}}\n";
        let wandb = "Step,timing_s/gen,timing_s/step\n1,90,120\n2,40,60\n3,42,62\n4,44,64\n";
        for (text, name, format) in [
            (console, "run.log", "veRL console"),
            (jsonl, "metrics.jsonl", "veRL file logger (JSON lines)"),
            (wandb, "export.csv", "CSV (wandb export)"),
        ] {
            let l = log(text, name);
            assert_eq!(l.format, format);
            assert_eq!((l.steps_found, l.steps_used), (4, 3));
            assert_eq!(l.metrics["timing_s/gen"], 42.0, "{format}");
        }
        assert_eq!(log(console, "run.log").metrics["timing_s/step"], 62.0);
    }

    #[test]
    fn a_log_without_timings_names_the_file_and_the_fix() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.jsonl");
        std::fs::write(&path, "{\"step\":1,\"data\":{\"loss\":1.0}}\n").unwrap();
        let m = read_step_log(&path, None).unwrap_err().to_string();
        assert!(
            m.contains("empty.jsonl") && m.contains("timing_s/gen") && m.contains("JSON lines"),
            "{m}"
        );
    }
}
