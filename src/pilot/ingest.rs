//! Reading measured pilot results: a tidy CSV with columns `run_id, step, metric, value` (extra
//! columns are allowed and ignored), mapped to the plan's runs.
//!
//! Every bad row is an error naming its line, unless `--skip-bad-rows` is given, in which case it
//! is skipped and counted: an unknown run id, a step that is not a whole number, a value that is
//! not a finite number, a step repeated for the same run and metric. A run of the plan with no row
//! of the target metric is an error too (or skipped). The target must be a held-out metric: names
//! that look like training signals (rewards, losses, KL, entropy, `train`, `critic/`, `actor/`)
//! are refused unless `--allow-train-metric`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::error::{Error, Result, suggestion};

use super::Plan;

/// Longest accepted CSV record, in bytes: anything larger is not a metrics row.
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// One measured checkpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Checkpoint {
    /// RL iteration.
    pub step: u64,
    /// The metric's value.
    pub value: f64,
}

/// How to read.
#[derive(Debug, Clone)]
pub struct IngestOptions {
    /// The target metric.
    pub metric: String,
    /// Skip bad rows instead of failing.
    pub skip_bad_rows: bool,
    /// Accept a training signal as the target.
    pub allow_train_metric: bool,
    /// Whether the file's values are fractions (0-1) or percentages (0-100).
    pub scale: ValueScale,
}

/// How a results file writes scores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ValueScale {
    /// Fractions in [0, 1], as veRL logs `acc/mean@1`.
    #[default]
    Fraction,
    /// Percentages in [0, 100], as many papers' tables: divided by 100 on reading.
    Percent,
}

impl std::str::FromStr for ValueScale {
    type Err = String;

    /// `fraction` or `percent`.
    fn from_str(text: &str) -> Result<Self, String> {
        match text {
            "fraction" => Ok(ValueScale::Fraction),
            "percent" => Ok(ValueScale::Percent),
            other => Err(format!(
                "`{other}` is not a scale; write fraction or percent"
            )),
        }
    }
}

/// What was read.
#[derive(Debug, Clone, Default)]
pub struct Ingested {
    /// Checkpoints of the target metric per run id, sorted by step.
    pub runs: BTreeMap<String, Vec<Checkpoint>>,
    /// Rows skipped as bad (with `--skip-bad-rows`).
    pub skipped_rows: usize,
    /// The first few skipped rows' reasons.
    pub skipped_examples: Vec<String>,
    /// Plan runs with no row of the target metric (skipped with `--skip-bad-rows`).
    pub missing_runs: Vec<String>,
    /// Rows of other metrics (ignored).
    pub other_metric_rows: usize,
    /// Runs measured past their planned iterations, described (a step counted in another
    /// unit, or a run continued past its plan: fitted all the same, with a warning).
    pub past_plan: Vec<String>,
}

/// Most checkpoints per run that the fits use; longer series are averaged into this many bins.
pub const MAX_CHECKPOINTS_PER_RUN: usize = 64;

/// A run's checkpoints, at most `max`: the first (the base score) kept, the rest averaged in
/// consecutive groups of near-equal size (mean step, mean value). A metric logged at every step
/// of a long run carries no more information about a smooth curve than its bin means do, and the
/// fits then cost the same for a thousand or a million rows.
pub fn thin(points: &[Checkpoint], max: usize) -> Vec<Checkpoint> {
    if points.len() <= max || max < 2 {
        return points.to_vec();
    }
    let (first, rest) = points.split_first().expect("more than max >= 2 points");
    let bins = max - 1;
    let mut out = vec![*first];
    for b in 0..bins {
        let (lo, hi) = (b * rest.len() / bins, (b + 1) * rest.len() / bins);
        let group = &rest[lo..hi];
        if group.is_empty() {
            continue;
        }
        let n = group.len() as f64;
        let step = (group.iter().map(|c| c.step as f64).sum::<f64>() / n).round() as u64;
        let value = group.iter().map(|c| c.value).sum::<f64>() / n;
        if out.last().is_some_and(|c| c.step >= step) {
            continue;
        }
        out.push(Checkpoint { step, value });
    }
    out
}

/// Whether a metric name looks like a training signal rather than a held-out evaluation.
pub fn looks_like_training_metric(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    let held_out = ["val", "eval", "test", "held"]
        .iter()
        .any(|p| n.starts_with(p) || n.contains(&format!("/{p}")));
    if held_out {
        return false;
    }
    [
        "reward",
        "loss",
        "kl",
        "entropy",
        "train",
        "critic/",
        "actor/",
        "advantage",
        "response_length",
        "grad_norm",
    ]
    .iter()
    .any(|p| n.contains(p))
}

/// Reads the results CSV against a plan.
pub fn read_results(path: &Path, plan: &Plan, options: &IngestOptions) -> Result<Ingested> {
    check_target(options)?;
    let file = std::fs::File::open(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::in_file(path, None, "", "file not found")
        } else {
            Error::io(path, e)
        }
    })?;
    read_results_from(std::io::BufReader::new(file), path, plan, options)
}

/// Refuses a training signal as the target unless allowed.
fn check_target(options: &IngestOptions) -> Result<()> {
    if looks_like_training_metric(&options.metric) && !options.allow_train_metric {
        return Err(Error::in_setting(
            "metric",
            format!(
                "`{}` looks like a training signal; fit a held-out evaluation metric (e.g. val-core/.../acc/mean@1), or pass ⟨allow_train_metric⟩ if you mean it",
                options.metric
            ),
        ));
    }
    Ok(())
}

/// Positions of the four required columns.
struct Columns {
    run: usize,
    step: usize,
    metric: usize,
    value: usize,
}

impl Columns {
    /// Finds `run_id`, `step`, `metric` and `value` in the header (any order, extra columns
    /// ignored).
    fn of(headers: &csv::StringRecord, path: &Path) -> Result<Self> {
        if !headers.iter().any(|c| !c.trim().is_empty()) {
            return Err(Error::in_file(
                path,
                Some(1),
                "",
                "empty file; expected a header run_id,step,metric,value",
            ));
        }
        let column = |name: &str| -> Result<usize> {
            headers.iter().position(|h| h.trim() == name).ok_or_else(|| {
                Error::in_file(
                    path,
                    Some(1),
                    name,
                    format!("missing column; the header must include run_id,step,metric,value (found: {})", headers.iter().collect::<Vec<_>>().join(",")),
                )
            })
        };
        Ok(Columns {
            run: column("run_id")?,
            step: column("step")?,
            metric: column("metric")?,
            value: column("value")?,
        })
    }
}

/// What has been read so far.
struct RowReader<'a> {
    columns: Columns,
    options: &'a IngestOptions,
    known: BTreeSet<&'a str>,
    seen_metrics: BTreeSet<String>,
    seen_steps: BTreeSet<(String, u64)>,
    out: Ingested,
}

impl RowReader<'_> {
    /// Takes one row: a checkpoint of the fitted metric, a row of another metric (counted), or
    /// the problem with it.
    fn take(&mut self, record: &csv::StringRecord) -> Option<String> {
        if record.as_slice().len() > MAX_RECORD_BYTES {
            return Some(format!(
                "row longer than {MAX_RECORD_BYTES} bytes; is this a metrics CSV?"
            ));
        }
        let get = |k: usize| record.get(k).map(str::trim).unwrap_or("");
        let metric = get(self.columns.metric);
        if metric.is_empty() {
            return Some("empty metric name".to_string());
        }
        self.seen_metrics.insert(metric.to_string());
        if metric != self.options.metric {
            self.out.other_metric_rows += 1;
            return None;
        }
        let run = get(self.columns.run);
        if !self.known.contains(run) {
            return Some(format!(
                "unknown run_id `{run}` (not in the plan); {}",
                suggestion(run, self.known.iter().copied())
            ));
        }
        let step_text = get(self.columns.step);
        let step = match crate::logs::parse_step(step_text) {
            Ok(s) => s,
            Err(m) => return Some(format!("{m}; a step counts RL iterations")),
        };
        let value_text = get(self.columns.value);
        let value: f64 = match value_text.parse::<f64>() {
            Ok(v) if v.is_finite() => v,
            Ok(_) => return Some(format!("value `{value_text}` is not finite")),
            Err(_) => return Some(format!("value `{value_text}` is not a number")),
        };
        let value = match self.options.scale {
            ValueScale::Percent => value / 100.0,
            ValueScale::Fraction => value,
        };
        // A held-out score is a fraction; a value above 1 is almost always a percentage.
        if !self.options.allow_train_metric && !(0.0..=1.0).contains(&value) {
            return Some(match self.options.scale {
                ValueScale::Fraction if (1.0..=100.0).contains(&value) => format!(
                    "value `{value_text}` looks like a percentage; scores are fractions in [0, 1]: divide by 100 or pass ⟨scale⟩ percent"
                ),
                _ => format!("value `{value_text}` is outside the score range [0, 1]"),
            });
        }
        if !self.seen_steps.insert((run.to_string(), step)) {
            return Some(format!(
                "run `{run}` step {step} appears twice for metric `{metric}`"
            ));
        }
        self.out
            .runs
            .entry(run.to_string())
            .or_default()
            .push(Checkpoint { step, value });
        None
    }

    /// Records a bad row: an error, or (with `skip_bad_rows`) a count and an example.
    fn reject(&mut self, path: &Path, line: usize, message: String) -> Result<()> {
        if !self.options.skip_bad_rows {
            return Err(Error::in_file(
                path,
                Some(line),
                "",
                format!("{message} (or pass ⟨skip_bad_rows⟩ to skip such rows)"),
            ));
        }
        self.out.skipped_rows += 1;
        if self.out.skipped_examples.len() < 5 {
            self.out
                .skipped_examples
                .push(format!("line {line}: {message}"));
        }
        Ok(())
    }

    /// Checks every run has data (unless skipping) and sorts each run's checkpoints.
    fn finish(mut self, path: &Path, plan: &Plan) -> Result<Ingested> {
        let (out, options) = (&mut self.out, self.options);
        if out.runs.is_empty() {
            let hint = if self.seen_metrics.is_empty() {
                "the file has no data rows".to_string()
            } else {
                format!(
                    "no row has metric `{}`; {}",
                    options.metric,
                    suggestion(
                        &options.metric,
                        self.seen_metrics.iter().map(String::as_str)
                    )
                )
            };
            return Err(Error::in_file(path, None, "metric", hint));
        }
        for r in &plan.runs {
            if !out.runs.contains_key(&r.run_id) {
                out.missing_runs.push(r.run_id.clone());
            }
        }
        if !out.missing_runs.is_empty() && !options.skip_bad_rows {
            return Err(Error::in_file(
                path,
                None,
                "run_id",
                format!(
                    "no `{}` rows for run(s) {} of the plan; add them, or pass ⟨skip_bad_rows⟩ to fit without them",
                    options.metric,
                    out.missing_runs.join(", ")
                ),
            ));
        }
        for points in out.runs.values_mut() {
            points.sort_by_key(|c| c.step);
        }
        for r in &plan.runs {
            if let Some(last) = out.runs.get(&r.run_id).and_then(|p| p.last())
                && last.step > r.steps
            {
                out.past_plan.push(format!(
                    "{} has step {} beyond its {} planned iterations",
                    r.run_id, last.step, r.steps
                ));
            }
        }
        Ok(self.out)
    }
}

/// 1-based line numbers from byte offsets, counting `\n` once per line whatever the line
/// ending; offsets must be asked in increasing order (each byte is scanned once).
struct LineCounter<'a> {
    bytes: &'a [u8],
    scanned: usize,
    newlines: usize,
}

impl<'a> LineCounter<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        LineCounter {
            bytes,
            scanned: 0,
            newlines: 0,
        }
    }

    /// The line holding the record that starts at byte `offset`. With `\r\n` endings the csv
    /// crate reports a record as starting at the `\n` that ends the previous line: line-ending
    /// bytes at the offset are skipped first.
    fn line_at(&mut self, offset: usize) -> usize {
        let mut offset = offset.min(self.bytes.len());
        while offset < self.bytes.len() && matches!(self.bytes[offset], b'\r' | b'\n') {
            offset += 1;
        }
        if offset > self.scanned {
            self.newlines += self.bytes[self.scanned..offset]
                .iter()
                .filter(|&&b| b == b'\n')
                .count();
            self.scanned = offset;
        }
        self.newlines + 1
    }
}

/// Reads results from any reader (`path` names it in messages): what [`read_results`] does after
/// opening the file; the fuzz target drives this directly.
pub fn read_results_from<R: std::io::Read>(
    mut source: R,
    path: &Path,
    plan: &Plan,
    options: &IngestOptions,
) -> Result<Ingested> {
    check_target(options)?;
    let mut bytes = Vec::new();
    source
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    // Lines are counted here from byte offsets: the csv crate's own line numbers drift by one
    // per `\r\n` line ending, so errors in files written on Windows named the wrong line.
    let mut lines = LineCounter::new(&bytes);
    let mut reader = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(bytes.as_slice());
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", format!("unreadable header: {e}")))?
        .clone();
    let mut rows = RowReader {
        columns: Columns::of(&headers, path)?,
        options,
        known: plan.runs.iter().map(|r| r.run_id.as_str()).collect(),
        seen_metrics: BTreeSet::new(),
        seen_steps: BTreeSet::new(),
        out: Ingested::default(),
    };
    let mut record = csv::StringRecord::new();
    loop {
        let line_of_next = lines.line_at(reader.position().byte() as usize);
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e
                    .position()
                    .map(|p| lines.line_at(p.byte() as usize))
                    .unwrap_or(line_of_next);
                return Err(Error::in_file(
                    path,
                    Some(line),
                    "",
                    format!("malformed CSV: {e}"),
                ));
            }
        }
        let line = record
            .position()
            .map(|p| lines.line_at(p.byte() as usize))
            .unwrap_or(line_of_next);
        if let Some(message) = rows.take(&record) {
            rows.reject(path, line, message)?;
        }
    }
    rows.finish(path, plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_are_the_same_with_crlf_endings() {
        for ending in ["\n", "\r\n"] {
            let text = ["a,b", "1,2", "3,4", "5,6"].join(ending) + ending;
            let mut reader = csv::Reader::from_reader(text.as_bytes());
            let mut lines = LineCounter::new(text.as_bytes());
            let found: Vec<usize> = reader
                .records()
                .map(|r| lines.line_at(r.unwrap().position().unwrap().byte() as usize))
                .collect();
            assert_eq!(found, [2, 3, 4], "{ending:?}");
        }
    }

    #[test]
    fn thinning_keeps_the_base_and_averages_the_rest_in_equal_bins() {
        let points: Vec<Checkpoint> = (0..=1000)
            .map(|s| Checkpoint {
                step: s,
                value: s as f64 / 1000.0,
            })
            .collect();
        let thinned = thin(&points, 11);
        assert_eq!(thinned.len(), 11);
        assert_eq!(thinned[0], points[0]);
        // 1,000 points after the first in 10 bins of 100: steps 1-100 average 50.5, rounded 51.
        assert_eq!(thinned[1].step, 51);
        assert!((thinned[1].value - 0.0505).abs() < 1e-12);
        assert_eq!(thinned[10].step, 951);
        assert!(thinned.windows(2).all(|w| w[0].step < w[1].step));
        // Short series are untouched.
        assert_eq!(thin(&points[..5], 11), points[..5].to_vec());
    }

    #[test]
    fn training_signals_are_recognised() {
        assert!(looks_like_training_metric("critic/score/mean"));
        assert!(looks_like_training_metric("reward"));
        assert!(looks_like_training_metric("train/loss"));
        assert!(!looks_like_training_metric("val-core/math500/acc/mean@1"));
        assert!(!looks_like_training_metric("eval_reward"));
        assert!(!looks_like_training_metric("math500_pass1"));
    }
}
