//! Collecting pilot results from what the frameworks write, into the tidy CSV `fit` reads
//! (`run_id, step, metric, value`):
//!
//! - veRL's file logger: one JSON line per step, `{"step": N, "data": {"val-core/...": x, ...}}`
//!   (the plan's launch scripts write `metrics/<run>.jsonl`);
//! - a wandb CSV export: a `Step` (or `_step`, `step`, `trainer/global_step`) column and one
//!   column per metric;
//! - TRL's `trainer_state.json`: `log_history`, a list of `{"step": N, "eval_...": x}`.
//!
//! The run id is the file's name without extension (`p001.jsonl`, `p001.csv`), or, for
//! `trainer_state.json`, the name of the folder holding it (`p001/trainer_state.json`, or a
//! `checkpoint-*` folder's parent).

use std::collections::BTreeSet;
use std::path::Path;

use crate::error::{Error, Result, suggestion};
use crate::logs::{LogFormat, read_log};

/// One measured value.
#[derive(Debug, Clone, PartialEq)]
pub struct ResultRow {
    /// Run id.
    pub run_id: String,
    /// Training step.
    pub step: u64,
    /// The metric's name.
    pub metric: String,
    /// Its value.
    pub value: f64,
}

/// The run id a file stands for.
pub fn run_id_of(path: &Path) -> String {
    let stem = |p: &Path| {
        p.file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    if path.file_name().is_some_and(|n| n == "trainer_state.json") {
        let mut dir = path.parent();
        while let Some(d) = dir {
            let name = d
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !name.starts_with("checkpoint-") {
                return name;
            }
            dir = d.parent();
        }
    }
    stem(path)
}

/// The run id a file stands for, refused unless it is of a plan's alphabet: it becomes a
/// results.csv cell (where `=`, `+`, `-` or `@` would be a spreadsheet formula) and a file name
/// in `fit`'s folder.
fn checked_run_id(path: &Path) -> Result<String> {
    let run_id = run_id_of(path);
    if super::is_safe_id(&run_id) {
        return Ok(run_id);
    }
    Err(Error::in_file(
        path,
        None,
        "",
        format!(
            "the run id this file stands for, `{run_id}` (its name), is not a plan's run id: \
             name the file after its run (p001.jsonl), with letters, digits, - _ and . only, \
             starting with a letter or digit"
        ),
    ))
}

/// (step, metric, value) triples.
type Points = Vec<(u64, String, f64)>;

/// Every (step, metric, value) a file holds, and its format's description.
fn read_points(path: &Path, format: Option<LogFormat>) -> Result<(Points, &'static str)> {
    let log = read_log(path, format)?;
    let points = log
        .steps
        .into_iter()
        .filter_map(|s| s.step.map(|step| (step, s.metrics)))
        .flat_map(|(step, metrics)| metrics.into_iter().map(move |(k, v)| (step, k, v)))
        .collect();
    Ok((points, log.format.describe()))
}

/// What collecting found.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    /// The rows of the chosen metric, by run then step.
    pub rows: Vec<ResultRow>,
    /// Per file: (run id, format, points of the metric).
    pub files: Vec<(String, &'static str, usize)>,
}

/// Reads every file and keeps `metric`'s values. Without `metric`, or when no file has it, the
/// error lists the metrics the files do have (validation metrics first).
pub fn collect(
    paths: &[&Path],
    metric: Option<&str>,
    format: Option<LogFormat>,
) -> Result<Collected> {
    let mut all: Vec<(String, &'static str, Points)> = Vec::new();
    let mut names: BTreeSet<String> = BTreeSet::new();
    for path in paths {
        let run_id = checked_run_id(path)?;
        let (points, format) = read_points(path, format)?;
        names.extend(points.iter().map(|p| p.1.clone()));
        all.push((run_id, format, points));
    }
    let list = || {
        let mut v: Vec<&String> = names
            .iter()
            .filter(|n| n.starts_with("val") || n.starts_with("eval"))
            .collect();
        if v.is_empty() {
            v = names.iter().collect();
        }
        v.iter()
            .take(20)
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let Some(metric) = metric else {
        return Err(Error::in_flag(
            "--metric",
            format!(
                "name the held-out metric to collect; the files have: {}",
                list()
            ),
        ));
    };
    if !metric.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        // A CSV cell starting with = + - @ is a formula to a spreadsheet; no framework names a
        // metric that way.
        return Err(Error::in_flag(
            "--metric",
            format!(
                "`{metric}` does not start with a letter or digit; name the metric as the logs do"
            ),
        ));
    }
    if !names.contains(metric) {
        return Err(Error::in_flag(
            "--metric",
            format!(
                "no file has `{metric}`; {}; the files have: {}",
                suggestion(metric, names.iter().map(String::as_str)),
                list()
            ),
        ));
    }
    let mut rows = Vec::new();
    let mut files = Vec::new();
    for (run_id, format, points) in all {
        let mut kept: Vec<(u64, f64)> = points
            .into_iter()
            .filter(|p| p.1 == metric)
            .map(|p| (p.0, p.2))
            .collect();
        kept.sort_by_key(|p| p.0);
        kept.dedup_by_key(|p| p.0);
        files.push((run_id.clone(), format, kept.len()));
        rows.extend(kept.into_iter().map(|(step, value)| ResultRow {
            run_id: run_id.clone(),
            step,
            metric: metric.to_string(),
            value,
        }));
    }
    Ok(Collected { rows, files })
}

/// The tidy CSV `fit` reads.
pub fn results_csv(rows: &[ResultRow]) -> Vec<u8> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["run_id", "step", "metric", "value"])
        .expect("writing to memory cannot fail");
    for r in rows {
        w.write_record([
            r.run_id.clone(),
            r.step.to_string(),
            r.metric.clone(),
            crate::format::number(r.value),
        ])
        .expect("writing to memory cannot fail");
    }
    w.into_inner().expect("flushing memory cannot fail")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_yields_the_metric_by_run_and_step() {
        let dir = tempfile::tempdir().unwrap();
        let jsonl = dir.path().join("p001.jsonl");
        std::fs::write(
            &jsonl,
            "{\"step\":0,\"data\":{\"val/acc\":0.40}}\n{\"step\":1,\"data\":{\"timing_s/gen\":40.0}}\n{\"step\":10,\"data\":{\"val/acc\":0.45,\"loss\":1.0}}\n",
        )
        .unwrap();
        let wandb = dir.path().join("p002.csv");
        std::fs::write(&wandb, "Step,val/acc,loss\n0,0.30,\n10,0.36,0.9\n").unwrap();
        let trl_dir = dir.path().join("p003").join("checkpoint-20");
        std::fs::create_dir_all(&trl_dir).unwrap();
        let trl = trl_dir.join("trainer_state.json");
        std::fs::write(
            &trl,
            "{\"log_history\":[{\"step\":5,\"loss\":1.2},{\"step\":10,\"val/acc\":0.5},{\"step\":20,\"val/acc\":0.55}]}",
        )
        .unwrap();
        let c = collect(&[&jsonl, &wandb, &trl], Some("val/acc"), None).unwrap();
        let got: Vec<(String, u64, f64)> = c
            .rows
            .iter()
            .map(|r| (r.run_id.clone(), r.step, r.value))
            .collect();
        assert_eq!(
            got,
            vec![
                ("p001".into(), 0, 0.40),
                ("p001".into(), 10, 0.45),
                ("p002".into(), 0, 0.30),
                ("p002".into(), 10, 0.36),
                ("p003".into(), 10, 0.5),
                ("p003".into(), 20, 0.55),
            ]
        );
        assert_eq!(c.files[1].1, "CSV (wandb export)");
        let text = String::from_utf8(results_csv(&c.rows)).unwrap();
        assert!(
            text.starts_with("run_id,step,metric,value\np001,0,val/acc,0.4\n"),
            "{text}"
        );
        // A wrong name lists what the files have.
        let m = collect(&[&jsonl], Some("val/ac"), None)
            .unwrap_err()
            .to_string();
        assert!(m.contains("did you mean `val/acc`"), "{m}");
        let m = collect(&[&jsonl], None, None).unwrap_err().to_string();
        assert!(m.contains("the files have: val/acc"), "{m}");
    }

    #[test]
    fn run_ids_and_metrics_that_a_spreadsheet_would_run_are_refused() {
        // Issue 24: a results.csv cell starting with = + - @ is a formula in a spreadsheet, and a
        // run id is a file name in `fit`'s folder.
        let dir = tempfile::tempdir().unwrap();
        for name in [
            "=HYPERLINK(x).jsonl",
            "@SUM(1).jsonl",
            "-p001.jsonl",
            "+p001.jsonl",
        ] {
            let path = dir.path().join(name);
            std::fs::write(&path, "{\"step\":0,\"data\":{\"val/acc\":0.4}}\n").unwrap();
            let e = collect(&[&path], Some("val/acc"), None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is not a plan's run id") && e.contains(name),
                "{e}"
            );
        }
        let path = dir.path().join("p001.jsonl");
        std::fs::write(&path, "{\"step\":0,\"data\":{\"=1+1\":0.4}}\n").unwrap();
        let e = collect(&[&path], Some("=1+1"), None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--metric") && e.contains("letter or digit"),
            "{e}"
        );
    }
}
