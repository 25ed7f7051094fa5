//! `fit`: every pilot's curve, the RACE surfaces and the calibrated prior, from the results the
//! user's cluster produced and the plan they came from. Writes `fits.csv`,
//! `extrapolations.csv`, `surfaces.csv`, `calibration.json` and plots, all staged and committed
//! together.

mod outputs;
mod runs;

use std::path::{Path, PathBuf};

use runs::{RunFit, RunFitSettings, fit_run};

use crate::catalog::Catalog;
use crate::engine::calibration_file::{CalibrationFile, entries};
use crate::error::{Error, Result};
use crate::fit::calibrate::{
    CalibrationResult as Calibration, Observation, calibrate, default_free,
};
use crate::format::{Table, number};
use crate::outcome::PARAM_NAMES;
use crate::pilot::ingest::MAX_CHECKPOINTS_PER_RUN;
use crate::pilot::ingest::{IngestOptions, Ingested, read_results};
use crate::pilot::{Plan, plan_grid, read_plan, run_indices};
use crate::report::Staged;
use crate::spec::Grid;

/// Where the pilots' results come from.
#[derive(Debug, Clone)]
pub enum PilotResults {
    /// A tidy results CSV (`run_id, step, metric, value`).
    Csv(PathBuf),
    /// The runs' framework logs, collected against the plan (steps as iterations) once the
    /// output folder is locked, and written as `results.csv` with the other outputs.
    Logs {
        /// One log per run (the checkpoints of one TRL run are one run).
        paths: Vec<PathBuf>,
        /// Their format (None: detected per file).
        format: Option<crate::logs::LogFormat>,
    },
}

/// What `fit` is asked to do.
#[derive(Debug, Clone)]
pub struct PilotFitSettings {
    /// The results.
    pub results: PilotResults,
    /// The plan's `plan.csv` (`plan.json` beside it).
    pub plan: PathBuf,
    /// Output folder.
    pub out: PathBuf,
    /// The held-out metric to fit (None: the grid's, or "score").
    pub metric: Option<String>,
    /// Skip bad rows instead of failing.
    pub skip_bad_rows: bool,
    /// Accept a training signal as the target.
    pub allow_train_metric: bool,
    /// Whether the results are fractions or percentages.
    pub scale: crate::pilot::ingest::ValueScale,
    /// Checkpoints before this step are left out of the curve fits.
    pub warmup_steps: u64,
    /// Bootstrap replicates.
    pub bootstrap: usize,
    /// Seed of the bootstraps (None: the grid's).
    pub seed: Option<u64>,
    /// Prior parameters to calibrate (None: those the pilots identify).
    pub free: Option<Vec<String>>,
    /// The grid file, when it moved since the plan was made.
    pub grid: Option<PathBuf>,
    /// Replace another grid's calibration in the output folder.
    pub force: bool,
}

/// What `fit` did, for the summary it prints.
pub struct PilotFitReport {
    grid_name: String,
    grid_path: PathBuf,
    metric: String,
    plan: Plan,
    ingested: Ingested,
    fits: Vec<RunFit>,
    observations: usize,
    surface_lines: Vec<String>,
    calibration: Calibration,
    written: usize,
    out: PathBuf,
    thinned_runs: usize,
    /// (rows, logs) collected by `--logs` into `results.csv`.
    collected: Option<(usize, usize)>,
    /// The plan was priced by another build of the model (its identity, this build's).
    other_model: Option<(String, String)>,
}

/// Refuses to overwrite another grid's calibration unless forced (by the grid's hash; an
/// unreadable calibration.json counts as another's, never as absent).
fn check_out_dir(dir: &Path, grid: &crate::spec::Grid, force: bool, own: &[&str]) -> Result<()> {
    let existing = dir.join("calibration.json");
    if !existing.exists() {
        return crate::report::refuse_foreign_files_but(dir, "calibration.json", force, own);
    }
    if force {
        return Ok(());
    }
    let file = std::fs::read_to_string(&existing)
        .ok()
        .and_then(|text| serde_json::from_str::<CalibrationFile>(&text).ok());
    match file {
        Some(file) if file.grid_sha256 == grid.sha256 => Ok(()),
        Some(file) => Err(Error::in_file(
            &existing,
            None,
            "grid_sha256",
            format!(
                "{} holds a calibration of grid `{}` ({}…), not of this grid `{}`; choose another ⟨out⟩ or pass ⟨force⟩",
                dir.display(),
                file.grid_name,
                &file.grid_sha256[..12.min(file.grid_sha256.len())],
                grid.name
            ),
        )),
        None => Err(Error::in_file(
            &existing,
            None,
            "",
            format!(
                "{} holds a calibration.json rlfrontier cannot read; choose another ⟨out⟩ or pass ⟨force⟩",
                dir.display()
            ),
        )),
    }
}

/// Checks the names of the parameters to calibrate.
fn check_free(names: &[String]) -> Result<()> {
    for n in names {
        if !PARAM_NAMES.contains(&n.as_str()) {
            return Err(Error::in_setting(
                "free",
                format!(
                    "`{n}` is not a prior parameter; {}",
                    crate::error::suggestion(n, PARAM_NAMES)
                ),
            ));
        }
    }
    Ok(())
}

/// Fits everything and writes the outputs.
pub fn fit_pilots(settings: &PilotFitSettings, catalog: &Catalog) -> Result<PilotFitReport> {
    let plan = read_plan(&settings.plan)?;
    if !plan.info.catalog_sha256.is_empty() && plan.info.catalog_sha256 != catalog.sha256() {
        return Err(Error::in_file(
            &settings.plan.with_file_name("plan.json"),
            None,
            "catalog_sha256",
            "the plan was priced with another catalog (a different ⟨catalog⟩ override, or the embedded catalog of another rlfrontier version); pass fit the same ⟨catalog⟩ FILE as plan, or plan again",
        ));
    }
    let grid = plan_grid(&plan, &settings.plan, settings.grid.as_deref(), catalog)?;
    // The folder is locked, then checked, for the whole fit: a second fit into it is refused at
    // once, not after both have computed. A results CSV the user keeps in the folder does not
    // make it foreign, unless `--logs` would write results.csv over it.
    let _folder = crate::report::LockedFolder::take(&settings.out)?;
    let own: &[&str] = match settings.results {
        PilotResults::Csv(_) => &["results.csv"],
        PilotResults::Logs { .. } => &[],
    };
    check_out_dir(&settings.out, &grid, settings.force, own)?;
    crate::report::remove_stale_temporaries(&settings.out);
    let metric = settings
        .metric
        .clone()
        .or_else(|| grid.metric.clone())
        .unwrap_or_else(|| "score".to_string());
    if let Some(names) = &settings.free {
        check_free(names)?;
    }
    let options = IngestOptions {
        metric: metric.clone(),
        skip_bad_rows: settings.skip_bad_rows,
        allow_train_metric: settings.allow_train_metric,
        scale: settings.scale,
    };
    let (results_path, ingested, collected) = ingest(settings, &plan, &options)?;
    let seed = settings.seed.unwrap_or(grid.seed);
    let run_settings = RunFitSettings {
        warmup_steps: settings.warmup_steps,
        bootstrap: settings.bootstrap,
        seed,
    };
    let (fits, observations, thinned_runs) =
        fit_runs(&grid, &plan, &ingested, &settings.plan, &run_settings)?;
    let free: Vec<&str> = match &settings.free {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => default_free(&observations),
    };
    crate::interrupt::check()?;
    let calibration = calibrate(&grid.outcome, &observations, &free, settings.bootstrap.min(200), seed)
        .ok_or_else(|| Error::in_file(&results_path, None, "", "the calibration did not converge; check the results, or fit fewer parameters with ⟨free⟩"))?;
    let calibration_file = calibration_file_of(&grid, &metric, &calibration, seed);
    let (written, surface_lines) = write_outputs(
        settings,
        collected.as_ref().map(|c| c.bytes.as_slice()),
        &grid,
        &plan,
        &Fitted {
            fits: &fits,
            observations: &observations,
            calibration: &calibration,
            calibration_file: &calibration_file,
        },
    )?;
    let other_model = other_model(&plan.info.model_identity);
    Ok(PilotFitReport {
        grid_name: grid.name.clone(),
        grid_path: grid.path.clone(),
        metric,
        plan,
        ingested,
        fits,
        observations: observations.len(),
        surface_lines,
        thinned_runs,
        calibration,
        written,
        out: settings.out.clone(),
        collected: collected.map(|c| (c.rows, c.logs)),
        other_model,
    })
}

/// What `fit --logs` collected: `results.csv`'s bytes, its rows and the runs' logs read.
struct CollectedLogs {
    bytes: Vec<u8>,
    rows: usize,
    logs: usize,
}

/// The fits and calibration `fit` writes.
struct Fitted<'a> {
    fits: &'a [RunFit],
    observations: &'a [Observation],
    calibration: &'a Calibration,
    calibration_file: &'a CalibrationFile,
}

/// The results as ingested against the plan, the file they are named by in messages, and, for
/// logs, what was collected.
fn ingest(
    settings: &PilotFitSettings,
    plan: &Plan,
    options: &IngestOptions,
) -> Result<(PathBuf, Ingested, Option<CollectedLogs>)> {
    match &settings.results {
        PilotResults::Csv(path) => Ok((path.clone(), read_results(path, plan, options)?, None)),
        PilotResults::Logs { paths, format } => {
            let paths: Vec<&Path> = paths.iter().map(PathBuf::as_path).collect();
            let c =
                crate::pilot::collect::collect(&paths, Some(&options.metric), *format, Some(plan))?;
            let bytes = crate::pilot::collect::results_csv(&c.rows);
            let label = settings.out.join("results.csv");
            let ingested = crate::pilot::ingest::read_results_from(
                std::io::Cursor::new(bytes.as_slice()),
                &label,
                plan,
                options,
            )?;
            let collected = CollectedLogs {
                bytes,
                rows: c.rows.len(),
                logs: c.files.len(),
            };
            Ok((label, ingested, Some(collected)))
        }
    }
}

/// The plan's model identity and this build's, when the plan records another (a plan made
/// before an upgrade stays usable: `fit` warns, never refuses).
fn other_model(recorded: &str) -> Option<(String, String)> {
    let now = crate::identity::model_identity();
    (!recorded.is_empty() && recorded != now).then(|| (recorded.to_string(), now.to_string()))
}

/// Each planned run's fit to its ingested checkpoints (runs without results are skipped), the
/// observations the calibration reads, and how many runs were thinned into bins.
fn fit_runs(
    grid: &Grid,
    plan: &Plan,
    ingested: &Ingested,
    plan_path: &Path,
    run_settings: &RunFitSettings,
) -> Result<(Vec<RunFit>, Vec<Observation>, usize)> {
    let mut fits: Vec<RunFit> = Vec::new();
    let mut observations: Vec<Observation> = Vec::new();
    let mut thinned_runs = 0usize;
    for (k, run) in plan.runs.iter().enumerate() {
        crate::interrupt::check()?;
        let Some(points) = ingested.runs.get(&run.run_id) else {
            continue;
        };
        // Long series are averaged into bins: the fits' cost stays flat in the rows.
        let points = &crate::pilot::ingest::thin(points, MAX_CHECKPOINTS_PER_RUN);
        if points.len() < ingested.runs[&run.run_id].len() {
            thinned_runs += 1;
        }
        let indices = run_indices(grid, run, plan_path, k + 2)?;
        fits.push(fit_run(
            grid,
            k,
            run,
            indices,
            points,
            run_settings,
            &mut observations,
        ));
    }
    Ok((fits, observations, thinned_runs))
}

/// The calibration file of a fit: what was fitted, to what, and how well.
fn calibration_file_of(
    grid: &Grid,
    metric: &str,
    calibration: &Calibration,
    seed: u64,
) -> CalibrationFile {
    CalibrationFile {
        tool: "rlfrontier".to_string(),
        tool_version: crate::VERSION.to_string(),
        grid_name: grid.name.clone(),
        grid_sha256: grid.sha256.clone(),
        metric: metric.to_string(),
        runs: calibration.runs,
        checkpoints: calibration.checkpoints,
        free: calibration.free.clone(),
        params: entries(&calibration.params),
        prior_rmse: calibration.prior_rmse,
        fit_rmse: calibration.fit_rmse,
        loro_rmse: calibration.loro_rmse,
        lomso_rmse: calibration.lomso_rmse,
        bootstrap_replicates: calibration.bootstrap_replicates,
        seed,
        decided_by: calibration
            .decided_by
            .iter()
            .map(|(name, by)| (name.clone(), by.to_string()))
            .collect(),
        model_identity: crate::identity::model_identity().to_string(),
    }
}

/// Stages every output and commits them together; returns how many files were written and the
/// surface summary lines.
fn write_outputs(
    settings: &PilotFitSettings,
    results_csv: Option<&[u8]>,
    grid: &Grid,
    plan: &Plan,
    fitted: &Fitted,
) -> Result<(usize, Vec<String>)> {
    let Fitted {
        fits,
        observations,
        calibration,
        calibration_file,
    } = *fitted;
    let plots_dir = settings.out.join("plots");
    std::fs::create_dir_all(&plots_dir).map_err(|e| Error::io(&plots_dir, e))?;
    let mut staged = Staged::default();
    if let Some(bytes) = results_csv {
        staged.add(&settings.out.join("results.csv"), bytes)?;
    }
    let (fits_csv, extrapolations_csv) = outputs::fits_tables(plan, fits);
    staged.add(&settings.out.join("fits.csv"), &fits_csv)?;
    staged.add(
        &settings.out.join("extrapolations.csv"),
        &extrapolations_csv,
    )?;
    let (surfaces_csv, surface_lines) = outputs::surfaces_table(grid, plan, fits);
    staged.add(&settings.out.join("surfaces.csv"), &surfaces_csv)?;
    let mut text = serde_json::to_string_pretty(calibration_file).expect("json");
    text.push('\n');
    staged.add(&settings.out.join("calibration.json"), text.as_bytes())?;
    outputs::stage_plots(
        &mut staged,
        &plots_dir,
        &outputs::PlotInputs {
            grid,
            plan,
            fits,
            warmup_steps: settings.warmup_steps,
            observations,
            calibrated: &calibration.params,
        },
    )?;
    let written = staged.commit()?;
    Ok((written.len(), surface_lines))
}

impl PilotFitReport {
    /// The summary `fit` prints: runs, fitted curves, surfaces, calibration, and what to run next.
    pub fn to_text(&self) -> String {
        let ingested = &self.ingested;
        let mut report = format!(
            "fitted {} runs of grid `{}` on metric `{}` ({} checkpoints{})\n",
            self.fits.len(),
            self.grid_name,
            self.metric,
            self.observations,
            if ingested.skipped_rows > 0 {
                format!(", {} bad rows skipped", ingested.skipped_rows)
            } else {
                String::new()
            }
        );
        if let Some((rows, logs)) = self.collected {
            report.push_str(&format!(
                "  collected {rows} rows of `{}` from {logs} logs into {}\n",
                self.metric,
                self.out.join("results.csv").display()
            ));
        }
        for e in &ingested.skipped_examples {
            report.push_str(&format!("  skipped {e}\n"));
        }
        if let Some((then, now)) = &self.other_model {
            report.push_str(&format!(
                "  warning: the plan was priced by another build of the model ({then}; this is {now}): its steps and budgets stand as planned, the fit uses this build\n"
            ));
        }
        for w in &ingested.past_plan {
            report.push_str(&format!(
                "  warning: {w} (is its step counted in another unit than iterations?)\n"
            ));
        }
        if !ingested.missing_runs.is_empty() {
            report.push_str(&format!(
                "  runs without data: {}\n",
                ingested.missing_runs.join(", ")
            ));
        }
        if self.thinned_runs > 0 {
            report.push_str(&format!(
                "  {} runs have more than {MAX_CHECKPOINTS_PER_RUN} checkpoints: averaged into {MAX_CHECKPOINTS_PER_RUN} bins each for fitting\n",
                self.thinned_runs
            ));
        }
        report.push_str(&self.runs_table());
        report.push_str("RACE surfaces (score against update fraction at the pilot budget):\n");
        for l in &self.surface_lines {
            report.push_str(l);
            report.push('\n');
        }
        report.push_str(&self.calibration_text());
        report
    }

    /// The calibration's lines: its errors in and out of sample, who decided each parameter,
    /// and what was written with the next command.
    fn calibration_text(&self) -> String {
        let calibration = &self.calibration;
        let mut report = String::new();
        let by_run = match calibration.runs > crate::fit::calibrate::MAX_LEAVE_ONE_RUN_OUT {
            true => format!("{}-fold by run", crate::fit::calibrate::RUN_FOLDS),
            false => "leave-one-run-out".to_string(),
        };
        report.push_str(&format!(
            "calibration of {} on {} runs: RMSE prior {:.4}, calibrated {:.4}, {by_run} {}, leave-one-model-size-out {}\n",
            calibration.free.join(", "),
            calibration.runs,
            calibration.prior_rmse,
            calibration.fit_rmse,
            calibration.loro_rmse.map(|e| format!("{e:.4}")).unwrap_or_else(|| "n/a".into()),
            calibration.lomso_rmse.map(|e| format!("{e:.4}")).unwrap_or_else(|| "n/a (one model size)".into()),
        ));
        let by = |who: &str| -> String {
            let names: Vec<&str> = calibration
                .decided_by
                .iter()
                .filter(|(_, b)| *b == who)
                .map(|(n, _)| n.as_str())
                .collect();
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        };
        report.push_str(&format!(
            "decided by the pilots: {}; left to the prior (the pilots do not constrain them): {}\n",
            by("data"),
            by("prior")
        ));
        report.push_str(&format!(
            "wrote {} files under {}; next: rlfrontier sweep {} --calibration {}\n",
            self.written,
            self.out.display(),
            self.grid_path.display(),
            self.out.join("calibration.json").display()
        ));
        report
    }

    /// One row per run: points, R0, the ceiling with its bootstrap interval, steepness,
    /// midpoint, RMSE.
    fn runs_table(&self) -> String {
        let mut table = Table::new([
            "run",
            "points",
            "R0",
            "A [90%]",
            "beta",
            "C_mid",
            "rmse",
            "A identified",
        ]);
        for f in &self.fits {
            let run = &self.plan.runs[f.index];
            match (&f.fit, &f.bootstrap) {
                (Some(s), Some(b)) => table.row([
                    run.run_id.clone(),
                    f.points.len().to_string(),
                    format!("{:.3}", f.base),
                    if b.params[0].0.is_finite() && b.params[0].1.is_finite() {
                        format!(
                            "{:.3} [{:.3}, {:.3}]",
                            s.params.ceiling, b.params[0].0, b.params[0].1
                        )
                    } else {
                        // No bootstrap (`--bootstrap 0`): no interval, never NaN.
                        format!("{:.3} [-]", s.params.ceiling)
                    },
                    format!("{:.2}", s.params.steepness),
                    number(s.params.midpoint),
                    format!("{:.4}", s.rmse),
                    if s.identified {
                        "yes"
                    } else {
                        "no: before the knee"
                    }
                    .to_string(),
                ]),
                _ => table.row([
                    run.run_id.clone(),
                    f.points.len().to_string(),
                    format!("{:.3}", f.base),
                    "no fit".into(),
                    String::new(),
                    String::new(),
                    String::new(),
                    f.no_fit.map(|r| r.short().to_string()).unwrap_or_default(),
                ]),
            }
        }
        table.render()
    }
}
