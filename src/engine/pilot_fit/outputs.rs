//! The files `fit` writes: `fits.csv`, `extrapolations.csv`, `surfaces.csv` and the plots.

use std::collections::BTreeMap;

use super::runs::RunFit;
use crate::error::Result;
use crate::fit::calibrate::Observation;
use crate::fit::surface::fit_slice;
use crate::format::number;
use crate::outcome::{OutcomeParams, predict};
use crate::pilot::Plan;
use crate::report::Staged;
use crate::report::plots::{FitPlot, calibration_plot, fit_plot};
use crate::spec::Grid;

fn opt(x: Option<f64>) -> String {
    x.map(number).unwrap_or_default()
}

/// `fits.csv` (one row per run: the fitted sigmoid with standard errors and bootstrap
/// intervals) and `extrapolations.csv` (each run's prediction at each of the grid's budgets).
pub(super) fn fits_tables(plan: &Plan, fits: &[RunFit]) -> (Vec<u8>, Vec<u8>) {
    let unit = &plan.info.budget_unit;
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
    for f in fits {
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
    (
        fw.into_inner().expect("memory"),
        ew.into_inner().expect("memory"),
    )
}

/// `surfaces.csv` (one RACE surface per model and reward at the pilot budget) and one summary
/// line per surface.
pub(super) fn surfaces_table(grid: &Grid, plan: &Plan, fits: &[RunFit]) -> (Vec<u8>, Vec<String>) {
    let unit = &plan.info.budget_unit;
    let mut slices: BTreeMap<(usize, usize), Vec<&RunFit>> = BTreeMap::new();
    for f in fits {
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
    (sw.into_inner().expect("memory"), surface_lines)
}

/// What the plots are drawn from.
pub(super) struct PlotInputs<'a> {
    /// The grid.
    pub grid: &'a Grid,
    /// The plan.
    pub plan: &'a Plan,
    /// Every run's fit.
    pub fits: &'a [RunFit],
    /// Checkpoints before this step are drawn as left out of the fit.
    pub warmup_steps: u64,
    /// Every checkpoint with its signal.
    pub observations: &'a [Observation],
    /// The calibrated parameters.
    pub calibrated: &'a OutcomeParams,
}

/// One plot per run (checkpoints, fitted curve, band, extrapolation) and the calibration plot
/// (measured against predicted, prior and calibrated), staged under `plots/`.
pub(super) fn stage_plots(
    staged: &mut Staged,
    plots_dir: &std::path::Path,
    inputs: &PlotInputs,
) -> Result<()> {
    let PlotInputs {
        grid,
        plan,
        fits,
        warmup_steps,
        observations,
        calibrated,
    } = *inputs;
    let unit = &plan.info.budget_unit;
    for f in fits {
        let run = &plan.runs[f.index];
        let points: Vec<(f64, f64, bool)> = f
            .points
            .iter()
            .map(|c| {
                (
                    c.step as f64 * run.cost_per_step,
                    c.value,
                    c.step >= warmup_steps,
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
    let pairs = |params: &OutcomeParams| -> Vec<(f64, f64)> {
        observations
            .iter()
            .map(|o| (o.value, predict(params, &o.signal).score))
            .collect()
    };
    let svg = calibration_plot(&grid.name, &pairs(&grid.outcome), &pairs(calibrated));
    staged.add(&plots_dir.join("calibration.svg"), svg.as_bytes())?;
    Ok(())
}
