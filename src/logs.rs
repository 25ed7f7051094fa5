//! Reading what RL frameworks log, in one place for every command that reads logs
//! (`calibrate-hw` takes phase timings from them, `collect` and `fit --logs` held-out metrics).
//!
//! Formats, detected from the file or forced with `--format`:
//! - `verl-console`: veRL's console lines, `step:5 - timing_s/gen:41.2 - val-core/...:0.31`
//!   (veRL `verl/utils/tracking.py` prints a step's metrics joined by ` - `; a Ray prefix such as
//!   `(TaskRunner pid=1234)` before `step:` is allowed);
//! - `verl-jsonl`: veRL's file logger, one JSON line per step, `{"step": 5, "data": {...}}`
//!   (`trainer.logger=['file']`, written to `$VERL_FILE_LOGGER_PATH`);
//! - `jsonl`: plain JSON lines of metrics, `{"step": 5, "timing_s/gen": 41.2}`;
//! - `wandb-csv`: a wandb history export, one row per step (`Step`, `_step`, `step`,
//!   `trainer/global_step` or `global_step`) and one column per metric;
//! - `trl-state`: TRL's (transformers') `trainer_state.json`, whose `log_history` is a list of
//!   `{"step": N, "loss": …, "eval_…": …}`.
//!
//! OpenRLHF logs to wandb or TensorBoard rather than a documented text format of its own; its
//! wandb export is read as `wandb-csv`.
//!
//! The formats are one enum rather than a trait with an implementation per format: each is a
//! short function from text to steps, and the enum gives `--format` its parser, its names and
//! its error messages in one place.

mod json_entry;

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use json_entry::{Entry, TrainerState};

/// A log format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogFormat {
    /// veRL console lines.
    VerlConsole,
    /// veRL's file logger (JSON lines with `step` and `data`).
    VerlJsonl,
    /// Plain JSON lines of metrics.
    Jsonl,
    /// A wandb CSV export.
    WandbCsv,
    /// TRL's `trainer_state.json`.
    TrlState,
}

impl LogFormat {
    /// Every format, in detection order's spirit.
    pub const ALL: [LogFormat; 5] = [
        LogFormat::VerlConsole,
        LogFormat::VerlJsonl,
        LogFormat::Jsonl,
        LogFormat::WandbCsv,
        LogFormat::TrlState,
    ];

    /// The name `--format` takes.
    pub fn as_str(self) -> &'static str {
        match self {
            LogFormat::VerlConsole => "verl-console",
            LogFormat::VerlJsonl => "verl-jsonl",
            LogFormat::Jsonl => "jsonl",
            LogFormat::WandbCsv => "wandb-csv",
            LogFormat::TrlState => "trl-state",
        }
    }

    /// A description for humans.
    pub fn describe(self) -> &'static str {
        match self {
            LogFormat::VerlConsole => "veRL console",
            LogFormat::VerlJsonl => "veRL file logger (JSON lines)",
            LogFormat::Jsonl => "JSON lines",
            LogFormat::WandbCsv => "CSV (wandb export)",
            LogFormat::TrlState => "TRL trainer_state.json",
        }
    }

    /// The format of a file, from its name and text, line by line: a JSON trainer state, JSON
    /// lines, veRL's console (any `step:N - …` line), a CSV export (a header and rows of the same
    /// number of fields), else veRL's console.
    pub fn detect(path: &Path, text: &str) -> LogFormat {
        let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
        let is_state = path.file_name().is_some_and(|n| n == "trainer_state.json")
            || (first.trim() == "{" && text.contains("\"log_history\""));
        if is_state {
            LogFormat::TrlState
        } else if first.trim_start().starts_with('{') && !first.trim_start().starts_with("{'") {
            // (`{'loss': 0.1, …}` is a Python dict printed by transformers' console logging,
            // not JSON: read below as a console with no `step:` lines.)
            let file_logger = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .and_then(|l| serde_json::from_str::<serde_json::Value>(l).ok())
                .is_some_and(|v| v.get("data").is_some());
            if file_logger {
                LogFormat::VerlJsonl
            } else {
                LogFormat::Jsonl
            }
        } else if is_console(text) {
            // veRL's console: `step:N - key:value - …` lines, behind Ray's `(TaskRunner pid=…)`
            // prefixes, between progress bars, warnings and tracebacks (a bar's commas never
            // make it a CSV).
            LogFormat::VerlConsole
        } else if is_csv(text) {
            LogFormat::WandbCsv
        } else {
            LogFormat::VerlConsole
        }
    }
}

impl std::str::FromStr for LogFormat {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<Self, String> {
        LogFormat::ALL
            .into_iter()
            .find(|f| f.as_str() == text)
            .ok_or_else(|| {
                format!(
                    "`{text}` is not a log format; {}",
                    crate::error::suggestion(text, LogFormat::ALL.iter().map(|f| f.as_str()))
                )
            })
    }
}

impl std::fmt::Display for LogFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One logged step: its number (when the log gives one) and its numeric metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct LoggedStep {
    /// The training step.
    pub step: Option<u64>,
    /// Metric name → value (finite numbers only).
    pub metrics: BTreeMap<String, f64>,
}

/// A log read into steps.
#[derive(Debug, Clone, PartialEq)]
pub struct MetricLog {
    /// The format it was read as.
    pub format: LogFormat,
    /// Its steps, in file order.
    pub steps: Vec<LoggedStep>,
    /// The optimizer steps the run had taken when it wrote the file (TRL's `global_step`; None
    /// for the other formats): of two checkpoints of one run, the later has the larger.
    pub global_step: Option<u64>,
}

/// Largest step number read from a log: no training run logs a billion steps, and every integer
/// up to it is exact in a double (a JSON or CSV number is read as one).
pub const MAX_STEP: u64 = 1_000_000_000;

/// A logged step number, read exactly: a non-negative whole number up to [`MAX_STEP`], written
/// as an integer or as a number that is exactly one (`7`, `7.0`, `1e3`). `7.5`, `-1`, `1e30`,
/// `nan` and anything not a number are refused with the reason (the caller names the file and
/// line): a step rounded, clamped or dropped silently would move a pilot's curve.
pub fn parse_step(text: &str) -> std::result::Result<u64, String> {
    let t = text.trim();
    let is_number = !t.is_empty()
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-'))
        && t.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '+');
    let value = t.parse::<f64>().ok().filter(|_| is_number);
    let Some(x) = value else {
        return Err(format!(
            "the step `{}` is not a whole number (such as 7)",
            crate::error::one_line(t)
        ));
    };
    step_of_number(x, t)
}

/// A step from a JSON value: a number as [`parse_step`] reads its text; a string, a boolean,
/// null or a container is refused (a JSON `"7"` is not the step 7 of any framework's log).
pub fn json_step(value: &serde_json::Value) -> std::result::Result<u64, String> {
    match value {
        serde_json::Value::Number(n) => match n.as_u64() {
            Some(k) => step_of_number(k as f64, &k.to_string()).map(|_| k),
            None => step_of_number(n.as_f64().unwrap_or(f64::NAN), &n.to_string()),
        },
        other => Err(format!(
            "the step {} is not a whole number (such as 7)",
            crate::error::one_line(&other.to_string())
        )),
    }
}

fn step_of_number(x: f64, text: &str) -> std::result::Result<u64, String> {
    if !(x.is_finite() && x >= 0.0 && x.fract() == 0.0 && x <= MAX_STEP as f64) {
        return Err(format!(
            "the step {} is not a whole number from 0 to {}",
            crate::error::one_line(text),
            crate::format::number(MAX_STEP as f64)
        ));
    }
    Ok(x as u64)
}

/// Reads a log, detecting its format unless one is given.
pub fn read_log(path: &Path, format: Option<LogFormat>) -> Result<MetricLog> {
    let text = crate::input::read_text(
        path,
        crate::input::MAX_TABLE_BYTES,
        "the log file (uncompressed)",
    )?;
    parse_log(path, &text, format)
}

/// Parses a log's text (`path` names it in messages and helps detect the format): what
/// [`read_log`] does after reading the file; the fuzz target drives this directly.
pub fn parse_log(path: &Path, text: &str, format: Option<LogFormat>) -> Result<MetricLog> {
    let format = format.unwrap_or_else(|| LogFormat::detect(path, text));
    let (steps, global_step) = match format {
        LogFormat::VerlConsole => (console_steps(path, text)?, None),
        LogFormat::VerlJsonl | LogFormat::Jsonl => (json_line_steps(path, text)?, None),
        LogFormat::WandbCsv => (csv_steps(path, text)?, None),
        LogFormat::TrlState => trainer_state_steps(path, text)?,
    };
    Ok(MetricLog {
        format,
        steps,
        global_step,
    })
}

/// The `key:value` pairs of one console line joined by ` - ` (a JSON object line is read as
/// Lines read to recognise a format: enough to pass a long preamble of warnings.
const DETECT_LINES: usize = 10_000;

/// Whether any early line is a veRL console metrics line (`step:N - key:value`).
fn is_console(text: &str) -> bool {
    text.lines().take(DETECT_LINES).any(|l| {
        l.contains(" - ")
            && l.split(" - ")
                .next()
                .and_then(|head| head.split_whitespace().last())
                .is_some_and(|w| {
                    w.strip_prefix("step:")
                        .is_some_and(|n| n.parse::<u64>().is_ok())
                })
    })
}

/// Whether the text is a CSV table: a header of two or more fields and a first row with as
/// many.
fn is_csv(text: &str) -> bool {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let (Some(header), Some(row)) = (lines.next(), lines.next()) else {
        return false;
    };
    let fields = |line: &str| {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(line.as_bytes())
            .records()
            .next()
            .and_then(|r| r.ok())
            .map_or(0, |r| r.len())
    };
    let n = fields(header);
    n >= 2 && fields(row) == n
}

/// JSON). A key is the last word before its colon, so a Ray prefix does not hide `step`.
pub fn parse_metrics_line(line: &str) -> BTreeMap<String, f64> {
    let line = line.trim();
    if line.starts_with('{') {
        return serde_json::from_str::<Entry>(line)
            .map(|e| {
                let mut metrics = e.metrics;
                if let Some(step) = e.step.and_then(|s| s.step().ok()) {
                    metrics.insert("step".to_string(), step as f64);
                }
                metrics
            })
            .unwrap_or_default();
    }
    let mut out = BTreeMap::new();
    for part in line.split(" - ") {
        if let Some((k, v)) = part.trim().rsplit_once(':')
            && let Ok(x) = v.trim().parse::<f64>()
            && x.is_finite()
        {
            let key = k.split_whitespace().last().unwrap_or("");
            if !key.is_empty() {
                out.insert(key.to_string(), x);
            }
        }
    }
    out
}

fn console_steps(path: &Path, text: &str) -> Result<Vec<LoggedStep>> {
    let mut steps = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if !line.contains(" - ") {
            continue;
        }
        let mut metrics = parse_metrics_line(line);
        let Some(step) = metrics.remove("step") else {
            continue;
        };
        let step = step_of_number(step, &crate::format::number(step))
            .map_err(|m| Error::in_file(path, Some(k + 1), "step", m))?;
        steps.push(LoggedStep {
            step: Some(step),
            metrics,
        });
    }
    Ok(steps)
}

fn json_line_steps(path: &Path, text: &str) -> Result<Vec<LoggedStep>> {
    let mut steps = Vec::new();
    for (k, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let entry: Entry = serde_json::from_str(line)
            .map_err(|e| Error::in_file(path, Some(k + 1), "", format!("not a JSON line: {e}")))?;
        let step = entry
            .step
            .map(|s| s.step())
            .transpose()
            .map_err(|m| Error::in_file(path, Some(k + 1), "step", m))?;
        steps.push(LoggedStep {
            step,
            metrics: entry.metrics,
        });
    }
    Ok(steps)
}

fn csv_steps(path: &Path, text: &str) -> Result<Vec<LoggedStep>> {
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", e.to_string()))?
        .clone();
    let step_column = [
        "Step",
        "_step",
        "step",
        "trainer/global_step",
        "global_step",
    ]
    .iter()
    .find_map(|name| headers.iter().position(|h| h.trim() == *name));
    let mut steps = Vec::new();
    for (k, record) in reader.records().enumerate() {
        let record = record.map_err(|e| Error::in_file(path, Some(k + 2), "", e.to_string()))?;
        let step = step_column
            .and_then(|c| record.get(c))
            .filter(|s| !s.trim().is_empty())
            .map(parse_step)
            .transpose()
            .map_err(|m| Error::in_file(path, Some(k + 2), "step", m))?;
        let metrics = headers
            .iter()
            .zip(record.iter())
            .enumerate()
            .filter(|(i, _)| Some(*i) != step_column)
            .filter_map(|(_, (h, v))| {
                v.trim()
                    .parse::<f64>()
                    .ok()
                    .filter(|x| x.is_finite())
                    .map(|x| (h.trim().to_string(), x))
            })
            .collect();
        steps.push(LoggedStep { step, metrics });
    }
    Ok(steps)
}

/// The steps of TRL's `trainer_state.json` and its `global_step`.
fn trainer_state_steps(path: &Path, text: &str) -> Result<(Vec<LoggedStep>, Option<u64>)> {
    let state: TrainerState = serde_json::from_str(text)
        .map_err(|e| Error::in_file(path, Some(e.line()), "", e.to_string()))?;
    let history = state.log_history.ok_or_else(|| {
        Error::in_file(
            path,
            None,
            "log_history",
            "missing: is this TRL's trainer_state.json?",
        )
    })?;
    let global_step = state
        .global_step
        .map(|s| s.step())
        .transpose()
        .map_err(|m| Error::in_file(path, None, "global_step", m))?;
    let steps = history
        .into_iter()
        .enumerate()
        .map(|(k, entry)| {
            let step =
                entry.step.map(|s| s.step()).transpose().map_err(|m| {
                    Error::in_file(path, None, &format!("log_history[{k}].step"), m)
                })?;
            Ok(LoggedStep {
                step,
                metrics: entry.metrics,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    Ok((steps, global_step))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_console_log_that_starts_with_a_progress_bar_is_the_console_format() {
        let log = "Training Progress:   0%|          | 0/500 [00:00<?, ?it/s]\n\
                   (TaskRunner pid=4121) WARNING: something, somewhere\n\
                   (TaskRunner pid=4121) step:1 - actor/pg_loss:0.12 - timing_s/step:35.5 - response_length/mean:1200.0\n\
                   Training Progress:   0%|          | 1/500 [00:36<5:00:00, 36.1s/it]\n\
                   (TaskRunner pid=4121) step:2 - actor/pg_loss:0.10 - timing_s/step:34.5 - response_length/mean:1250.0\n";
        assert_eq!(
            LogFormat::detect(Path::new("console.log"), log),
            LogFormat::VerlConsole
        );
        let steps = console_steps(Path::new("console.log"), log).unwrap();
        assert_eq!(steps.len(), 2);
        assert_eq!(steps[1].step, Some(2));
        assert_eq!(steps[1].metrics["timing_s/step"], 34.5);
        // A CSV export is still a CSV.
        let csv = "Step,timing_s/step,response_length/mean\n1,35.5,1200\n2,34.5,1250\n";
        assert_eq!(
            LogFormat::detect(Path::new("w.csv"), csv),
            LogFormat::WandbCsv
        );
    }

    fn read(name: &str, text: &str, format: Option<LogFormat>) -> MetricLog {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        read_log(&path, format).unwrap()
    }

    #[test]
    fn each_format_is_detected_and_read_into_steps() {
        let cases = [
            (
                "run.log",
                "(TaskRunner pid=77) step:3 - timing_s/gen:40.5 - val-core/acc:0.5\nINFO other\n",
                LogFormat::VerlConsole,
            ),
            (
                "m.jsonl",
                "{\"step\":3,\"data\":{\"timing_s/gen\":40.5,\"val-core/acc\":0.5}}\n",
                LogFormat::VerlJsonl,
            ),
            (
                "m.jsonl",
                "{\"step\":3,\"timing_s/gen\":40.5,\"val-core/acc\":0.5}\n",
                LogFormat::Jsonl,
            ),
            (
                "export.csv",
                "Step,timing_s/gen,val-core/acc\n3,40.5,0.5\n",
                LogFormat::WandbCsv,
            ),
            (
                "trainer_state.json",
                "{\n  \"log_history\": [{\"step\": 3, \"timing_s/gen\": 40.5, \"val-core/acc\": 0.5}]\n}\n",
                LogFormat::TrlState,
            ),
        ];
        for (name, text, format) in cases {
            let log = read(name, text, None);
            assert_eq!(log.format, format, "{name}");
            assert_eq!(log.steps.len(), 1, "{format}");
            assert_eq!(log.steps[0].step, Some(3), "{format}");
            assert_eq!(log.steps[0].metrics["timing_s/gen"], 40.5, "{format}");
            assert_eq!(log.steps[0].metrics["val-core/acc"], 0.5, "{format}");
            // Forcing the detected format reads the same.
            assert_eq!(read(name, text, Some(format)), log);
        }
    }

    #[test]
    fn steps_are_read_exactly_or_refused_with_their_line() {
        // Issue 51: 7.9 was written as 7 and 1e30 as u64::MAX; `"7"`, `true`, -1 dropped.
        for ok in ["7", "7.0", "1e3", " 12 ", "0"] {
            assert!(parse_step(ok).is_ok(), "{ok}");
        }
        assert_eq!(parse_step("1e3"), Ok(1000));
        for bad in [
            "7.5", "-1", "1e30", "nan", "inf", "seven", "", "0x10", "7.9",
        ] {
            assert!(parse_step(bad).is_err(), "{bad}");
        }
        for (json, ok) in [
            ("7", Some(7)),
            ("7.0", Some(7)),
            ("1e3", Some(1000)),
            ("7.5", None),
            ("-1", None),
            ("\"7\"", None),
            ("true", None),
            ("null", None),
            ("1e30", None),
            ("18446744073709551615", None),
        ] {
            let v: serde_json::Value = serde_json::from_str(json).unwrap();
            assert_eq!(json_step(&v).ok(), ok, "{json}");
        }
        let dir = tempfile::tempdir().unwrap();
        for (name, text, line) in [
            (
                "a.jsonl",
                "{\"step\":1,\"data\":{}}\n{\"step\":7.9,\"data\":{}}\n",
                "a.jsonl:2",
            ),
            ("b.csv", "Step,val/acc\n0,0.1\n-1,0.2\n", "b.csv:3"),
            (
                "c.log",
                "step:1 - val/acc:0.1\nstep:2.5 - val/acc:0.2\n",
                "c.log:2",
            ),
            (
                "trainer_state.json",
                "{\"log_history\":[{\"step\":true,\"x\":1}]}",
                "log_history[0].step",
            ),
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, text).unwrap();
            let m = read_log(&path, None).unwrap_err().to_string();
            assert!(m.contains(line) && m.contains("step"), "{name}: {m}");
        }
    }

    #[test]
    fn a_bad_json_line_names_its_line_and_format_names_parse() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("m.jsonl");
        std::fs::write(&path, "{\"step\":1,\"data\":{}}\n{\"step\":2,\n").unwrap();
        let m = read_log(&path, None).unwrap_err().to_string();
        assert!(
            m.contains("m.jsonl:2") && m.contains("not a JSON line"),
            "{m}"
        );
        assert_eq!("wandb-csv".parse::<LogFormat>(), Ok(LogFormat::WandbCsv));
        let m = "verl-json".parse::<LogFormat>().unwrap_err();
        assert!(m.contains("did you mean `verl-jsonl`"), "{m}");
    }
}
