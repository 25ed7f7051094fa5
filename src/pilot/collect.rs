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

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use super::run_record::{RunRecord, StepsPerIteration};
use super::{PilotRun, Plan};
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

/// One file read: its run, format, points and, for TRL, how its steps count.
struct FileLog<'a> {
    path: &'a Path,
    run_id: String,
    format: LogFormat,
    points: Points,
    /// TRL's `global_step` when the file was written.
    global_step: Option<u64>,
}

/// Reads one file, refusing two different values of one metric at one step (identical repeats
/// are dropped: TRL logs a step's training and evaluation entries separately).
fn read_file<'a>(path: &'a Path, format: Option<LogFormat>) -> Result<FileLog<'a>> {
    let run_id = checked_run_id(path)?;
    let log = read_log(path, format)?;
    let mut seen: BTreeMap<(u64, String), f64> = BTreeMap::new();
    for s in log.steps {
        let Some(step) = s.step else { continue };
        for (metric, value) in s.metrics {
            if let Some(&old) = seen.get(&(step, metric.clone()))
                && old != value
            {
                return Err(Error::in_file(
                    path,
                    None,
                    &metric,
                    format!(
                        "step {step} has two values, {} and {}; a step is logged once per metric (is this two runs' log in one file?)",
                        crate::format::number(old),
                        crate::format::number(value)
                    ),
                ));
            }
            seen.insert((step, metric), value);
        }
    }
    Ok(FileLog {
        path,
        run_id,
        format: log.format,
        points: seen.into_iter().map(|((s, m), v)| (s, m, v)).collect(),
        global_step: log.global_step,
    })
}

/// What collecting found.
#[derive(Debug, Clone, PartialEq)]
pub struct Collected {
    /// The rows of the chosen metric, by run then iteration.
    pub rows: Vec<ResultRow>,
    /// Per run: (run id, format, points of the metric, how its steps were counted).
    pub files: Vec<(String, &'static str, usize, String)>,
}

/// Reads every file and keeps `metric`'s values, with the step axis in RL iterations. Without
/// `metric`, or when no file has it, the error lists the metrics the files do have (validation
/// metrics first).
///
/// The files of one run are one history: the `trainer_state.json` of several checkpoints of one
/// TRL run folder (each repeats the history so far) are merged, the latest (largest
/// `global_step`) first, identical repeats dropped and conflicting values refused with both
/// files named; two other files standing for one run id are refused. TRL's optimizer steps
/// become iterations ([`super::run_record`]) from the run record its launch script wrote, else
/// from `plan`'s `update_epochs`; without either, a TRL log is refused, since its step may be
/// several optimizer steps per iteration. With `plan`, every run must be one of its runs.
pub fn collect(
    paths: &[&Path],
    metric: Option<&str>,
    format: Option<LogFormat>,
    plan: Option<&Plan>,
) -> Result<Collected> {
    let logs: Vec<FileLog> = paths
        .iter()
        .map(|p| read_file(p, format))
        .collect::<Result<_>>()?;
    let names: BTreeSet<String> = logs
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.1.clone()))
        .collect();
    let metric = check_metric(metric, &names, &logs)?;
    let mut runs: BTreeMap<String, Vec<FileLog>> = BTreeMap::new();
    for log in logs {
        runs.entry(log.run_id.clone()).or_default().push(log);
    }
    let mut rows = Vec::new();
    let mut files = Vec::new();
    for (run_id, mut logs) in runs {
        let planned = match plan {
            Some(plan) => Some(plan_run(plan, &run_id, logs[0].path)?),
            None => None,
        };
        one_run(&run_id, &mut logs)?;
        let first = &logs[0];
        let counting = steps_per_iteration(first, planned)?;
        let mut kept: BTreeMap<u64, (f64, &Path)> = BTreeMap::new();
        for log in &logs {
            for (step, name, value) in log.points.iter().filter(|p| p.1 == metric) {
                let iteration = counting.iteration(*step).ok_or_else(|| {
                    Error::in_file(
                        log.path,
                        None,
                        "step",
                        format!(
                            "step {step} is not a whole RL iteration at {}; was the run stopped mid-iteration, or run with other settings than its record says?",
                            counting.describe()
                        ),
                    )
                })?;
                if let Some((old, from)) = kept.get(&iteration)
                    && old != value
                {
                    return Err(Error::in_file(
                        log.path,
                        None,
                        name,
                        format!(
                            "step {step} is {} here and {} in {}; two checkpoints of one run disagree",
                            crate::format::number(*value),
                            crate::format::number(*old),
                            from.display()
                        ),
                    ));
                }
                kept.insert(iteration, (*value, log.path));
            }
        }
        let how = if counting.is_one() {
            String::new()
        } else {
            format!("{} → iterations", counting.describe())
        };
        files.push((run_id.clone(), first.format.describe(), kept.len(), how));
        rows.extend(kept.into_iter().map(|(step, (value, _))| ResultRow {
            run_id: run_id.clone(),
            step,
            metric: metric.to_string(),
            value,
        }));
    }
    Ok(Collected { rows, files })
}

/// The plan's run of `run_id`, or an error naming the plan's runs.
fn plan_run<'p>(plan: &'p Plan, run_id: &str, path: &Path) -> Result<&'p PilotRun> {
    plan.runs
        .iter()
        .find(|r| r.run_id == run_id)
        .ok_or_else(|| {
            Error::in_file(
                path,
                None,
                "",
                format!(
                    "stands for run `{run_id}`, which is not in the plan; {}",
                    suggestion(run_id, plan.runs.iter().map(|r| r.run_id.as_str()))
                ),
            )
        })
}

/// Orders the files of one run, latest first, or refuses files that are not one run's: only
/// checkpoints of one TRL run folder share a run id.
fn one_run(run_id: &str, logs: &mut [FileLog]) -> Result<()> {
    if logs.len() == 1 {
        return Ok(());
    }
    let folder = |l: &FileLog| {
        (l.format == LogFormat::TrlState)
            .then(|| super::run_record::run_folder(l.path))
            .flatten()
    };
    let first = folder(&logs[0]);
    let stranger = match first {
        None => Some(&logs[1]),
        Some(_) => logs.iter().find(|l| folder(l) != first),
    };
    if let Some(other) = stranger {
        let (a, b) = (logs[0].path, other.path);
        return Err(Error::in_file(
            b,
            None,
            "",
            format!(
                "stands for run `{run_id}` as {} does; two runs' logs under one run id would merge their curves: collect one file per run (the checkpoints of one TRL run folder are one run)",
                a.display()
            ),
        ));
    }
    logs.sort_by_key(|l| std::cmp::Reverse(l.global_step.unwrap_or(0)));
    Ok(())
}

/// How the run's logged steps count iterations: one each, except TRL's optimizer steps.
fn steps_per_iteration(log: &FileLog, planned: Option<&PilotRun>) -> Result<StepsPerIteration> {
    if log.format != LogFormat::TrlState {
        return Ok(StepsPerIteration::ONE);
    }
    if let Some((path, record)) = RunRecord::beside(log.path)? {
        return record.steps_per_iteration(&path);
    }
    match planned {
        // The plan's TRL scripts take one generation batch per optimizer pass (the default
        // steps_per_generation) and reuse it `update_epochs` times.
        Some(run) => Ok(StepsPerIteration {
            micro_steps: run.update_epochs.max(1),
            accumulation: 1,
        }),
        None => Err(Error::in_setting(
            "plan",
            format!(
                "{} is TRL's trainer state, whose steps are optimizer steps (several per RL iteration with num_iterations above 1); name the plan the run came from, or keep the {} its launch script wrote in the run folder",
                log.path.display(),
                super::run_record::RUN_RECORD_FILE
            ),
        )),
    }
}

/// The metric to collect, or an error listing the metrics the files have (validation metrics
/// first).
fn check_metric<'m>(
    metric: Option<&'m str>,
    names: &BTreeSet<String>,
    logs: &[FileLog],
) -> Result<&'m str> {
    if names.is_empty() {
        let described: Vec<String> = logs
            .iter()
            .map(|l| format!("{} (read as {})", l.path.display(), l.format.describe()))
            .collect();
        return Err(Error::in_setting(
            "files",
            format!(
                "no metric with a step found in {}; collect reads veRL's file logger (JSON lines), wandb CSV exports and TRL's trainer_state.json (runs/<run>/checkpoint-*/trainer_state.json), not console output",
                described.join(", ")
            ),
        ));
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
        return Err(Error::in_setting(
            "metric",
            format!(
                "name the held-out metric to collect; the files have: {}",
                list()
            ),
        ));
    };
    if !metric.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        // A CSV cell starting with = + - @ is a formula to a spreadsheet; no framework names a
        // metric that way.
        return Err(Error::in_setting(
            "metric",
            format!(
                "`{metric}` does not start with a letter or digit; name the metric as the logs do"
            ),
        ));
    }
    if !names.contains(metric) {
        return Err(Error::in_setting(
            "metric",
            format!(
                "no file has `{metric}`; {}; the files have: {}",
                suggestion(metric, names.iter().map(String::as_str)),
                list()
            ),
        ));
    }
    Ok(metric)
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

    /// Writes the run record a TRL launch script would, with `argv`, into `run_dir`.
    fn record(run_dir: &Path, argv: &[&str]) {
        let r = RunRecord {
            run_id: "p".into(),
            framework: "trl".into(),
            num_processes: 1,
            argv: argv.iter().map(|a| a.to_string()).collect(),
        };
        std::fs::create_dir_all(run_dir).unwrap();
        std::fs::write(
            run_dir.join(super::super::run_record::RUN_RECORD_FILE),
            serde_json::to_string(&r).unwrap(),
        )
        .unwrap();
    }

    /// A TRL trainer state with `global_step` and (step, value) evaluations of `eval_acc`.
    fn trl_state(path: &Path, global_step: u64, evals: &[(u64, f64)]) {
        let history: Vec<String> = evals
            .iter()
            .map(|(s, v)| {
                format!("{{\"step\":{s},\"eval_acc\":{v}}},{{\"step\":{s},\"loss\":0.5}}")
            })
            .collect();
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            path,
            format!(
                "{{\"global_step\":{global_step},\"log_history\":[{}]}}",
                history.join(",")
            ),
        )
        .unwrap();
    }

    #[test]
    fn trl_optimizer_steps_become_iterations_and_checkpoints_one_history() {
        // Issue 50: update_epochs 2 for 8 optimizer steps is 4 iterations; two checkpoints of
        // one run folder are one run, not duplicate rows.
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("runs").join("p001");
        record(
            &run,
            &[
                "--num_iterations",
                "2",
                "--gradient_accumulation_steps",
                "1",
            ],
        );
        let early = run.join("checkpoint-4").join("trainer_state.json");
        let late = run.join("checkpoint-8").join("trainer_state.json");
        trl_state(&early, 4, &[(0, 0.1), (4, 0.2)]);
        trl_state(&late, 8, &[(0, 0.1), (4, 0.2), (8, 0.3)]);
        let c = collect(&[&early, &late], Some("eval_acc"), None, None).unwrap();
        let got: Vec<(u64, f64)> = c.rows.iter().map(|r| (r.step, r.value)).collect();
        assert_eq!(got, vec![(0, 0.1), (2, 0.2), (4, 0.3)]);
        assert_eq!(c.files.len(), 1);
        assert!(
            c.files[0].3.contains("2 optimizer steps per iteration"),
            "{:?}",
            c.files
        );
        // Two checkpoints that disagree are refused with both named.
        trl_state(&early, 4, &[(0, 0.1), (4, 0.25)]);
        let e = collect(&[&early, &late], Some("eval_acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("checkpoint-4") && e.contains("checkpoint-8") && e.contains("0.25"),
            "{e}"
        );
        // A step that is not a whole iteration is refused with the file and step named.
        trl_state(&late, 9, &[(0, 0.1), (9, 0.3)]);
        let e = collect(&[&late], Some("eval_acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("checkpoint-8") && e.contains("step 9 is not a whole RL iteration"),
            "{e}"
        );
        // Two different runs' files under one run id are refused.
        let other = dir.path().join("p001.jsonl");
        std::fs::write(&other, "{\"step\":0,\"data\":{\"eval_acc\":0.1}}\n").unwrap();
        trl_state(&late, 8, &[(0, 0.1), (8, 0.3)]);
        let e = collect(&[&late, &other], Some("eval_acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("stands for run `p001`"), "{e}");
    }

    #[test]
    fn one_step_with_two_values_in_one_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p001.jsonl");
        std::fs::write(
            &path,
            "{\"step\":3,\"data\":{\"val/acc\":0.4}}\n{\"step\":3,\"data\":{\"val/acc\":0.5}}\n",
        )
        .unwrap();
        let e = collect(&[&path], Some("val/acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(e.contains("step 3 has two values, 0.4 and 0.5"), "{e}");
    }

    #[test]
    fn a_console_log_is_named_with_what_collect_reads() {
        // Issue 50 item 12: a TRL console log listed empty metric lists.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p001.log");
        std::fs::write(&path, "{'loss': 0.1, 'epoch': 0.5}\n  5%|#   | 1/20\n").unwrap();
        let e = collect(&[&path], Some("eval_acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("no metric with a step found") && e.contains("trainer_state.json"),
            "{e}"
        );
    }

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
        // Without a run record or a plan, TRL's optimizer steps cannot be counted as iterations.
        let e = collect(&[&trl], Some("val/acc"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("plan:") && e.contains("optimizer steps"),
            "{e}"
        );
        record(&dir.path().join("p003"), &["--num_iterations", "1"]);
        let c = collect(&[&jsonl, &wandb, &trl], Some("val/acc"), None, None).unwrap();
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
        let m = collect(&[&jsonl], Some("val/ac"), None, None)
            .unwrap_err()
            .to_string();
        assert!(m.contains("did you mean `val/acc`"), "{m}");
        let m = collect(&[&jsonl], None, None, None)
            .unwrap_err()
            .to_string();
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
            let e = collect(&[&path], Some("val/acc"), None, None)
                .unwrap_err()
                .to_string();
            assert!(
                e.contains("is not a plan's run id") && e.contains(name),
                "{e}"
            );
        }
        let path = dir.path().join("p001.jsonl");
        std::fs::write(&path, "{\"step\":0,\"data\":{\"=1+1\":0.4}}\n").unwrap();
        let e = collect(&[&path], Some("=1+1"), None, None)
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("metric") && e.contains("letter or digit"),
            "{e}"
        );
    }
}
