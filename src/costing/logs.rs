//! Reading what RL frameworks log: per-step metrics from veRL's console lines
//! (`step:5 - timing_s/gen:41.2 - ...`), veRL's file logger (JSON lines
//! `{"step": 5, "data": {"timing_s/gen": 41.2, ...}}`), plain JSON lines of metrics, and wandb's
//! CSV export (one row per step, a column per metric). The step metrics are summarised by their
//! median over the logged steps, leaving out the first when three or more are logged (start-up
//! and compilation make it slow).

use std::collections::BTreeMap;
use std::path::Path;

use super::hardware_fit::parse_metrics_line;
use crate::error::{Error, Result};
use crate::stats::median;

/// The metric that marks a step's line or row.
pub const STEP_MARKER: &str = "timing_s/gen";

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

fn json_metrics(value: &serde_json::Value) -> BTreeMap<String, f64> {
    let object = value.get("data").unwrap_or(value);
    let mut out = BTreeMap::new();
    if let serde_json::Value::Object(map) = object {
        for (k, v) in map {
            if let Some(x) = v.as_f64() {
                out.insert(k.clone(), x);
            }
        }
    }
    out
}

fn csv_rows(path: &Path, text: &str) -> Result<Vec<BTreeMap<String, f64>>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", e.to_string()))?
        .clone();
    let mut rows = Vec::new();
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| Error::in_file(path, Some(k + 2), "", e.to_string()))?;
        let row: BTreeMap<String, f64> = headers
            .iter()
            .zip(record.iter())
            .filter_map(|(h, v)| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .map(|x| (h.trim().to_string(), x))
            })
            .filter(|(_, x)| x.is_finite())
            .collect();
        rows.push(row);
    }
    Ok(rows)
}

/// Reads a log file and summarises its steps.
pub fn read_step_log(path: &Path) -> Result<StepLog> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let (rows, format): (Vec<BTreeMap<String, f64>>, &'static str) =
        if first.trim_start().starts_with('{') {
            let mut file_logger = false;
            let rows = text
                .lines()
                .filter(|l| l.trim_start().starts_with('{'))
                .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .map(|v| {
                    file_logger |= v.get("data").is_some();
                    json_metrics(&v)
                })
                .collect();
            let format = if file_logger {
                "veRL file logger (JSON lines)"
            } else {
                "JSON lines"
            };
            (rows, format)
        } else if first.contains(',') && first.contains("timing_s/") {
            (csv_rows(path, &text)?, "CSV (wandb export)")
        } else {
            let rows = text
                .lines()
                .filter(|l| l.contains(STEP_MARKER))
                .map(parse_metrics_line)
                .collect();
            (rows, "veRL console")
        };
    let steps: Vec<&BTreeMap<String, f64>> = rows
        .iter()
        .filter(|r| r.contains_key(STEP_MARKER))
        .collect();
    if steps.is_empty() {
        return Err(Error::in_file(
            path,
            None,
            STEP_MARKER,
            format!(
                "no step of this log ({format}) has {STEP_MARKER}; log veRL's timing metrics (they are on by default), or pass the timings as flags (--gen-seconds, --update-seconds, ...)"
            ),
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
        read_step_log(&path).unwrap()
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
        let m = read_step_log(&path).unwrap_err().to_string();
        assert!(
            m.contains("empty.jsonl") && m.contains("timing_s/gen") && m.contains("JSON lines"),
            "{m}"
        );
    }
}
