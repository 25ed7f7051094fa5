//! `rlfrontier fit RESULTS.csv --plan DIR/plan.csv --out DIR`: fit every pilot's curve, the RACE
//! surfaces and the calibrated prior; write `fits.csv`, `extrapolations.csv`, `surfaces.csv`,
//! `calibration.json` and plots. Also `rlfrontier fit-curve`: one sigmoid fit of a
//! (compute, score) CSV, for checking against `scipy.optimize.curve_fit`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;

use serde_json::json;

use crate::cli::{FitArgs, FitCurveArgs};
use crate::error::{Error, Result};
use crate::fit::calibrate::{Observation, calibrate, default_free};
use crate::fit::sigmoid::{Bootstrap, SigmoidFit, bootstrap, fit};
use crate::fit::surface::fit_slice;
use crate::format::{Table, number};
use crate::outcome::calibration_file::{CalibrationFile, entries};
use crate::outcome::{CellSignal, PARAM_NAMES, predict};
use crate::pilot::ingest::{Checkpoint, IngestOptions, read_results};
use crate::pilot::{config_at, plan_grid, read_plan, run_indices};
use crate::report::Staged;
use crate::report::plots::{FitPlot, calibration_plot, fit_plot};
use crate::spec::{AxisIndices, BudgetAxis, Stop};

/// One run's fit and what it needs for outputs.
struct RunFit {
    index: usize,
    indices: AxisIndices,
    points: Vec<Checkpoint>,
    base: f64,
    fit: Option<SigmoidFit>,
    bootstrap: Option<Bootstrap>,
    /// (grid budget label, compute in pilot units) extrapolation targets.
    targets: Vec<(String, f64)>,
    final_compute: f64,
    /// The plot's fitted curve with its band: (compute, score, low, high).
    curve: Vec<(f64, f64, f64, f64)>,
    /// The dashed extrapolation with its band.
    extrapolation: Vec<(f64, f64, f64, f64)>,
}

fn check_out_dir(dir: &Path, grid_name: &str, force: bool) -> Result<()> {
    crate::report::create_output_dir(dir)?;
    let existing = dir.join("calibration.json");
    if !force
        && let Ok(text) = std::fs::read_to_string(&existing)
        && let Ok(file) = serde_json::from_str::<CalibrationFile>(&text)
        && file.grid_name != grid_name
    {
        return Err(Error::in_file(
            &existing,
            None,
            "grid_name",
            format!(
                "{} holds a calibration of grid `{}`; choose another --out or pass --force",
                dir.display(),
                file.grid_name
            ),
        ));
    }
    Ok(())
}

/// Fits everything and writes the outputs.
pub fn run(args: &FitArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let plan = read_plan(&args.plan)?;
    let grid = plan_grid(&plan, &args.plan, args.grid.as_deref(), &catalog)?;
    let metric = args
        .metric
        .clone()
        .or_else(|| grid.metric.clone())
        .unwrap_or_else(|| "score".to_string());
    let ingested = read_results(
        &args.results,
        &plan,
        &IngestOptions {
            metric: metric.clone(),
            skip_bad_rows: args.skip_bad_rows,
            allow_train_metric: args.allow_train_metric,
        },
    )?;
    let free_override: Option<Vec<String>> = args.free.as_ref().map(|s| {
        s.split(',')
            .map(|x| x.trim().to_string())
            .filter(|x| !x.is_empty())
            .collect()
    });
    if let Some(names) = &free_override {
        for n in names {
            if !PARAM_NAMES.contains(&n.as_str()) {
                return Err(Error::in_flag(
                    "--free",
                    format!(
                        "`{n}` is not a prior parameter; {}",
                        crate::error::suggestion(n, PARAM_NAMES)
                    ),
                ));
            }
        }
    }
    let seed = args.seed.unwrap_or(grid.seed);

    // Per-run curves.
    let mut fits: Vec<RunFit> = Vec::new();
    let mut observations: Vec<Observation> = Vec::new();
    for (k, run) in plan.runs.iter().enumerate() {
        let Some(points) = ingested.runs.get(&run.run_id) else {
            continue;
        };
        let indices = run_indices(&grid, run, &args.plan, k + 2)?;
        let config0 = config_at(&grid, &indices, Stop::Iterations(0));
        let ledger0 = crate::ledger::evaluate(&config0);
        let prior_base = predict(&grid.outcome, &CellSignal::of(&config0, &ledger0)).base_score;
        let base = points
            .iter()
            .find(|c| c.step == 0)
            .map(|c| c.value)
            .unwrap_or(prior_base)
            .clamp(0.0, 0.999);
        let used: Vec<&Checkpoint> = points
            .iter()
            .filter(|c| c.step > 0 && c.step >= args.warmup_steps)
            .collect();
        let x: Vec<f64> = used
            .iter()
            .map(|c| c.step as f64 * run.cost_per_step)
            .collect();
        let y: Vec<f64> = used.iter().map(|c| c.value).collect();
        let targets: Vec<(String, f64)> = match &grid.axes.budget {
            BudgetAxis::Budgets { unit, amounts } => {
                let per_grid_unit = ledger0.per_iteration(*unit);
                amounts
                    .iter()
                    .map(|&b| {
                        (
                            format!("{} {}", number(b), unit.as_str()),
                            (b / per_grid_unit).floor() * run.cost_per_step,
                        )
                    })
                    .collect()
            }
            BudgetAxis::Iterations(n) => n
                .iter()
                .map(|&m| (format!("{m} iterations"), m as f64 * run.cost_per_step))
                .collect(),
        };
        let fitted = if x.is_empty() {
            None
        } else {
            fit(base, &x, &y)
        };
        // One bootstrap serves the extrapolation targets and the plot's band: the fitted range
        // (41 points on a log grid) and, dashed, beyond it to the largest target.
        let (mut curve, mut extrapolation) = (Vec::new(), Vec::new());
        let boot = fitted.as_ref().map(|f| {
            let x_lo = points
                .iter()
                .filter(|c| c.step > 0)
                .map(|c| c.step as f64 * run.cost_per_step)
                .fold(f64::INFINITY, f64::min);
            let x_hi = (run.steps as f64 * run.cost_per_step).max(x_lo);
            let x_far = targets.iter().map(|t| t.1).fold(x_hi, f64::max);
            let log_grid = |a: f64, b: f64| -> Vec<f64> {
                (0..=40)
                    .map(|i| (a.ln() + (b.ln() - a.ln()) * i as f64 / 40.0).exp())
                    .collect()
            };
            let curve_x = log_grid(x_lo, x_hi);
            let extra_x = if x_far > x_hi * 1.0001 {
                log_grid(x_hi, x_far)
            } else {
                Vec::new()
            };
            let at: Vec<f64> = targets
                .iter()
                .map(|t| t.1)
                .chain(curve_x.iter().copied())
                .chain(extra_x.iter().copied())
                .collect();
            let b = bootstrap(f, &x, &y, &at, args.bootstrap, seed, k as u64);
            let band = |xs: &[f64], offset: usize| -> Vec<(f64, f64, f64, f64)> {
                xs.iter()
                    .enumerate()
                    .map(|(i, &xv)| {
                        (
                            xv,
                            f.params.predict(xv),
                            b.predictions[offset + i].0,
                            b.predictions[offset + i].1,
                        )
                    })
                    .collect()
            };
            curve = band(&curve_x, targets.len());
            extrapolation = band(&extra_x, targets.len() + curve_x.len());
            b
        });
        for c in points
            .iter()
            .filter(|c| c.step >= args.warmup_steps || c.step == 0)
        {
            let config = config_at(&grid, &indices, Stop::Iterations(c.step));
            let ledger = crate::ledger::evaluate(&config);
            observations.push(Observation {
                run: k,
                signal: CellSignal::of(&config, &ledger),
                value: c.value,
            });
        }
        fits.push(RunFit {
            index: k,
            indices,
            points: points.clone(),
            base,
            fit: fitted,
            bootstrap: boot,
            targets,
            final_compute: run.steps as f64 * run.cost_per_step,
            curve,
            extrapolation,
        });
    }

    // Calibration.
    let free: Vec<&str> = match &free_override {
        Some(names) => names.iter().map(String::as_str).collect(),
        None => default_free(&observations),
    };
    let calibration = calibrate(&grid.outcome, &observations, &free, args.bootstrap.min(200), seed)
        .ok_or_else(|| Error::in_file(&args.results, None, "", "the calibration did not converge; check the results, or fit fewer parameters with --free"))?;

    check_out_dir(&args.out, &grid.name, args.force)?;
    let plots_dir = args.out.join("plots");
    std::fs::create_dir_all(&plots_dir).map_err(|e| Error::io(&plots_dir, e))?;
    let mut staged = Staged::default();
    let unit = &plan.info.budget_unit;

    // fits.csv and extrapolations.csv.
    let mut fw = csv::Writer::from_writer(Vec::new());
    fw.write_record([
        "run_id",
        "model",
        "finetune",
        "reward",
        "group_size",
        "max_response_len",
        "update_epochs",
        "prompts_per_step",
        "update_fraction",
        "points",
        "base_score",
        "ceiling",
        "ceiling_se",
        "ceiling_low",
        "ceiling_high",
        "steepness",
        "steepness_se",
        "steepness_low",
        "steepness_high",
        "midpoint",
        "midpoint_se",
        "midpoint_low",
        "midpoint_high",
        "compute_unit",
        "rmse",
        "converged",
        "final_measured",
        "final_fitted",
    ])
    .expect("memory");
    let mut ew = csv::Writer::from_writer(Vec::new());
    ew.write_record([
        "run_id",
        "budget",
        "compute",
        "predicted_score",
        "score_low",
        "score_high",
    ])
    .expect("memory");
    let opt = |x: Option<f64>| x.map(number).unwrap_or_default();
    for f in &fits {
        let run = &plan.runs[f.index];
        let last = f.points.last().map(|c| c.value);
        let mut row = vec![
            run.run_id.clone(),
            run.model.clone(),
            run.finetune.clone(),
            run.reward.clone(),
            run.group_size.to_string(),
            run.max_response_len.to_string(),
            run.update_epochs.to_string(),
            run.prompts_per_step.to_string(),
            number(run.update_fraction),
            f.points.len().to_string(),
            number(f.base),
        ];
        match (&f.fit, &f.bootstrap) {
            (Some(s), Some(b)) => {
                let p = s.params;
                let se = s.standard_errors;
                for (k, v) in [p.ceiling, p.steepness, p.midpoint].iter().enumerate() {
                    row.extend([
                        number(*v),
                        opt(se.map(|e| e[k])),
                        number(b.params[k].0),
                        number(b.params[k].1),
                    ]);
                }
                row.extend([
                    unit.clone(),
                    number(s.rmse),
                    s.converged.to_string(),
                    opt(last),
                    number(p.predict(f.final_compute)),
                ]);
                for (t, (label, x)) in f.targets.iter().enumerate() {
                    let (lo, hi) = b.predictions[t];
                    ew.write_record([
                        run.run_id.clone(),
                        label.clone(),
                        number(*x),
                        number(p.predict(*x)),
                        number(lo),
                        number(hi),
                    ])
                    .expect("memory");
                }
            }
            _ => {
                row.extend(std::iter::repeat_n(String::new(), 12));
                row.extend([
                    unit.clone(),
                    String::new(),
                    "false".to_string(),
                    opt(last),
                    String::new(),
                ]);
            }
        }
        fw.write_record(&row).expect("memory");
    }
    staged.add(
        &args.out.join("fits.csv"),
        &fw.into_inner().expect("memory"),
    )?;
    staged.add(
        &args.out.join("extrapolations.csv"),
        &ew.into_inner().expect("memory"),
    )?;

    // RACE surfaces per (model, reward) at the pilot budget.
    let mut slices: BTreeMap<(usize, usize), Vec<&RunFit>> = BTreeMap::new();
    for f in &fits {
        slices
            .entry((f.indices.model, f.indices.reward))
            .or_default()
            .push(f);
    }
    let mut sw = csv::Writer::from_writer(Vec::new());
    sw.write_record([
        "model",
        "reward",
        "pilot_budget",
        "points",
        "loo_rmse_constant",
        "loo_rmse_linear",
        "loo_rmse_log_linear",
        "loo_rmse_quadratic",
        "form",
        "best_update_fraction",
        "best_score",
        "fallback_run",
        "reason",
    ])
    .expect("memory");
    let mut surface_lines = Vec::new();
    for ((m, r), runs) in &slices {
        let p: Vec<f64> = runs
            .iter()
            .map(|f| plan.runs[f.index].update_fraction)
            .collect();
        let y: Vec<f64> = runs
            .iter()
            .map(|f| match &f.fit {
                Some(s) => s.params.predict(f.final_compute),
                None => f.points.last().map(|c| c.value).unwrap_or(f.base),
            })
            .collect();
        let Some(s) = fit_slice(&p, &y) else { continue };
        let fallback = s
            .fallback_point
            .map(|k| plan.runs[runs[k].index].run_id.clone())
            .unwrap_or_default();
        let model = &grid.axes.model[*m].id;
        let reward = grid.axes.reward[*r].to_string();
        sw.write_record([
            model.clone(),
            reward.clone(),
            format!("{} {}", number(plan.info.pilot_budget), unit),
            s.points.to_string(),
            opt(s.loo_rmse[0]),
            opt(s.loo_rmse[1]),
            opt(s.loo_rmse[2]),
            opt(s.loo_rmse[3]),
            s.form.as_str().to_string(),
            number(s.best_update_fraction),
            number(s.best_score),
            fallback.clone(),
            s.reason.clone().unwrap_or_default(),
        ])
        .expect("memory");
        surface_lines.push(format!(
            "  {model} / {reward}: {} pilots, {} form, best update fraction {:.3} (score {:.3}){}",
            s.points,
            s.form.as_str(),
            s.best_update_fraction,
            s.best_score,
            s.reason
                .map(|r| format!(" -> pilot {fallback}: {r}"))
                .unwrap_or_default()
        ));
    }
    staged.add(
        &args.out.join("surfaces.csv"),
        &sw.into_inner().expect("memory"),
    )?;

    // calibration.json
    let file = CalibrationFile {
        tool: "rlfrontier".to_string(),
        tool_version: crate::VERSION.to_string(),
        grid_name: grid.name.clone(),
        grid_sha256: grid.sha256.clone(),
        metric: metric.clone(),
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
    };
    let mut text = serde_json::to_string_pretty(&file).expect("json");
    text.push('\n');
    staged.add(&args.out.join("calibration.json"), text.as_bytes())?;

    // Plots.
    for f in &fits {
        let run = &plan.runs[f.index];
        let points: Vec<(f64, f64, bool)> = f
            .points
            .iter()
            .map(|c| {
                (
                    c.step as f64 * run.cost_per_step,
                    c.value,
                    c.step >= args.warmup_steps,
                )
            })
            .collect();
        let svg = fit_plot(&FitPlot {
            run_id: &run.run_id,
            unit,
            points: &points,
            curve: &f.curve,
            extrapolation: &f.extrapolation,
        });
        staged.add(
            &plots_dir.join(format!("fit_{}.svg", run.run_id)),
            svg.as_bytes(),
        )?;
    }
    let pairs = |params: &crate::outcome::OutcomeParams| -> Vec<(f64, f64)> {
        observations
            .iter()
            .map(|o| (o.value, predict(params, &o.signal).score))
            .collect()
    };
    let svg = calibration_plot(
        &grid.name,
        &pairs(&grid.outcome),
        &pairs(&calibration.params),
    );
    staged.add(&plots_dir.join("calibration.svg"), svg.as_bytes())?;
    let written = staged.commit()?;

    // Summary.
    let mut report = format!(
        "fitted {} runs of grid `{}` on metric `{metric}` ({} checkpoints{})\n",
        fits.len(),
        grid.name,
        observations.len(),
        if ingested.skipped_rows > 0 {
            format!(", {} bad rows skipped", ingested.skipped_rows)
        } else {
            String::new()
        }
    );
    for e in &ingested.skipped_examples {
        report.push_str(&format!("  skipped {e}\n"));
    }
    if !ingested.missing_runs.is_empty() {
        report.push_str(&format!(
            "  runs without data: {}\n",
            ingested.missing_runs.join(", ")
        ));
    }
    let mut table = Table::new(["run", "points", "R0", "A [90%]", "beta", "C_mid", "rmse"]);
    for f in &fits {
        let run = &plan.runs[f.index];
        match (&f.fit, &f.bootstrap) {
            (Some(s), Some(b)) => table.row([
                run.run_id.clone(),
                f.points.len().to_string(),
                format!("{:.3}", f.base),
                format!(
                    "{:.3} [{:.3}, {:.3}]",
                    s.params.ceiling, b.params[0].0, b.params[0].1
                ),
                format!("{:.2}", s.params.steepness),
                number(s.params.midpoint),
                format!("{:.4}", s.rmse),
            ]),
            _ => table.row([
                run.run_id.clone(),
                f.points.len().to_string(),
                format!("{:.3}", f.base),
                "no fit".into(),
                String::new(),
                String::new(),
                String::new(),
            ]),
        }
    }
    report.push_str(&table.render());
    report.push_str("RACE surfaces (score against update fraction at the pilot budget):\n");
    for l in surface_lines {
        report.push_str(&l);
        report.push('\n');
    }
    report.push_str(&format!(
        "calibration of {} on {} runs: RMSE prior {:.4}, calibrated {:.4}, leave-one-run-out {}, leave-one-model-size-out {}\n",
        calibration.free.join(", "),
        calibration.runs,
        calibration.prior_rmse,
        calibration.fit_rmse,
        calibration.loro_rmse.map(|e| format!("{e:.4}")).unwrap_or_else(|| "n/a".into()),
        calibration.lomso_rmse.map(|e| format!("{e:.4}")).unwrap_or_else(|| "n/a (one model size)".into()),
    ));
    report.push_str(&format!(
        "wrote {} files under {}; next: rlfrontier sweep {} --calibration {}\n",
        written.len(),
        args.out.display(),
        plan.info.grid_file,
        args.out.join("calibration.json").display()
    ));
    super::emit(out, &report)
}

/// `fit-curve`: one sigmoid fit of a `compute,score` CSV.
pub fn fit_curve(args: &FitCurveArgs, out: &mut dyn Write) -> Result<()> {
    if !(0.0..1.0).contains(&args.base_score) {
        return Err(Error::in_flag("--base-score", "must lie in [0, 1)"));
    }
    let mut reader = csv::Reader::from_path(&args.data)
        .map_err(|e| Error::in_file(&args.data, None, "", e.to_string()))?;
    let mut x = Vec::new();
    let mut y = Vec::new();
    for (k, record) in reader.records().enumerate() {
        let record =
            record.map_err(|e| Error::in_file(&args.data, Some(k + 2), "", e.to_string()))?;
        let parse = |i: usize, name: &str| -> Result<f64> {
            record
                .get(i)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::in_file(&args.data, Some(k + 2), name, "not a finite number"))
        };
        x.push(parse(0, "compute")?);
        y.push(parse(1, "score")?);
    }
    let started = std::time::Instant::now();
    let mut result = None;
    for _ in 0..args.repeat {
        result = fit(args.base_score, &x, &y);
    }
    let fit_seconds = started.elapsed().as_secs_f64() / args.repeat as f64;
    let f = result.ok_or_else(|| {
        Error::in_file(
            &args.data,
            None,
            "",
            "no fit: need at least one point with compute > 0",
        )
    })?;
    let p = f.params;
    if args.json {
        let v = json!({
            "base_score": p.base, "ceiling": p.ceiling, "steepness": p.steepness, "midpoint": p.midpoint,
            "standard_errors": f.standard_errors, "rmse": f.rmse, "points": f.points, "converged": f.converged,
            "fit_seconds": fit_seconds,
        });
        let mut text = serde_json::to_string_pretty(&v).expect("json");
        text.push('\n');
        return super::emit(out, &text);
    }
    super::emit(
        out,
        &format!(
            "R0 {:.6} (fixed), A {:.9}, beta {:.9}, C_mid {:.9e}, rmse {:.3e} over {} points\n",
            p.base, p.ceiling, p.steepness, p.midpoint, f.rmse, f.points
        ),
    )
}
