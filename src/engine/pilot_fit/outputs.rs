//! The files `fit` writes: `fits.csv`, `extrapolations.csv`, `surfaces.csv` and the plots.

use crate::spec::Axis;
use std::collections::BTreeMap;

use super::runs::RunFit;
use crate::error::Result;
use crate::fit::calibrate::Observation;
use crate::fit::surface::fit_slice;
use crate::format::number;
use crate::outcome::{OutcomeParams, predict};
use crate::pilot::Plan;
use crate::report::Staged;
use crate::report::cells::{Num, csv_table};
use crate::report::plots::{FitPlot, calibration_plot, fit_plot};
use crate::spec::Grid;
use serde::Serialize;

fn opt(x: Option<f64>) -> String {
    x.map(number).unwrap_or_default()
}

/// One row of `fits.csv`: a run's levers and its fitted sigmoid, each parameter with its standard
/// error and bootstrap interval (empty when the fit failed).
#[derive(Debug, Default, Serialize)]
struct FitRow {
    run_id: String,
    model: String,
    finetune: String,
    reward: String,
    group_size: u64,
    max_response_len: u64,
    update_epochs: u64,
    prompts_per_step: u64,
    update_fraction: Num,
    points: usize,
    base_score: Num,
    ceiling: Option<Num>,
    ceiling_se: Option<Num>,
    ceiling_low: Option<Num>,
    ceiling_high: Option<Num>,
    steepness: Option<Num>,
    steepness_se: Option<Num>,
    steepness_low: Option<Num>,
    steepness_high: Option<Num>,
    midpoint: Option<Num>,
    midpoint_se: Option<Num>,
    midpoint_low: Option<Num>,
    midpoint_high: Option<Num>,
    compute_unit: String,
    rmse: Option<Num>,
    converged: bool,
    final_measured: Option<Num>,
    final_fitted: Option<Num>,
    /// Whether the data reach the fitted midpoint (empty without a fit).
    identified: Option<bool>,
    /// Why there is no fit, or what an unidentified fit cannot say.
    note: String,
}

/// One row of `extrapolations.csv`: a run's fitted curve at one of the grid's budgets.
#[derive(Debug, Default, Serialize)]
struct ExtrapolationRow {
    run_id: String,
    budget: String,
    compute: Num,
    predicted_score: Num,
    score_low: Num,
    score_high: Num,
}

/// `fits.csv` (one row per run: the fitted sigmoid with standard errors and bootstrap
/// intervals) and `extrapolations.csv` (each run's prediction at each of the grid's budgets).
pub(super) fn fits_tables(plan: &Plan, fits: &[RunFit]) -> (Vec<u8>, Vec<u8>) {
    let mut fit_rows = Vec::new();
    let mut extrapolations = Vec::new();
    for f in fits {
        let run = &plan.runs[f.index];
        let mut row = FitRow {
            run_id: run.run_id.clone(),
            model: run.model.clone(),
            finetune: run.finetune.clone(),
            reward: run.reward.clone(),
            group_size: run.group_size,
            max_response_len: run.max_response_len,
            update_epochs: run.update_epochs,
            prompts_per_step: run.prompts_per_step,
            update_fraction: Num(run.update_fraction),
            points: f.points.len(),
            base_score: Num(f.base),
            compute_unit: plan.info.budget_unit.clone(),
            final_measured: f.points.last().map(|c| Num(c.value)),
            ..FitRow::default()
        };
        if let (Some(s), Some(b)) = (&f.fit, &f.bootstrap) {
            let p = s.params;
            let se = |k: usize| s.standard_errors.map(|e| Num(e[k]));
            let interval = |k: usize| (Some(Num(b.params[k].0)), Some(Num(b.params[k].1)));
            (row.ceiling, row.ceiling_se) = (Some(Num(p.ceiling)), se(0));
            (row.ceiling_low, row.ceiling_high) = interval(0);
            (row.steepness, row.steepness_se) = (Some(Num(p.steepness)), se(1));
            (row.steepness_low, row.steepness_high) = interval(1);
            (row.midpoint, row.midpoint_se) = (Some(Num(p.midpoint)), se(2));
            (row.midpoint_low, row.midpoint_high) = interval(2);
            row.rmse = Some(Num(s.rmse));
            row.converged = s.converged;
            row.final_fitted = Some(Num(p.predict(f.final_compute)));
            row.identified = Some(s.identified);
            if !s.identified {
                row.note = s.identification_note().to_string();
            }
            for (t, (label, x)) in f.targets.iter().enumerate() {
                let (low, high) = b.predictions[t];
                extrapolations.push(ExtrapolationRow {
                    run_id: run.run_id.clone(),
                    budget: label.clone(),
                    compute: Num(*x),
                    predicted_score: Num(p.predict(*x)),
                    score_low: Num(low),
                    score_high: Num(high),
                });
            }
        }
        if let Some(reason) = f.no_fit {
            row.note = format!("no fit: {reason}");
        }
        fit_rows.push(row);
    }
    (csv_table(&fit_rows), csv_table(&extrapolations))
}

/// `surfaces.csv` (one RACE surface per model and reward at the pilot budget) and one summary
/// line per surface.
pub(super) fn surfaces_table(grid: &Grid, plan: &Plan, fits: &[RunFit]) -> (Vec<u8>, Vec<String>) {
    let unit = &plan.info.budget_unit;
    let mut slices: BTreeMap<(usize, usize), Vec<&RunFit>> = BTreeMap::new();
    for f in fits {
        slices
            .entry((f.indices[Axis::Model], f.indices[Axis::Reward]))
            .or_default()
            .push(f);
    }
    let mut sw = csv::Writer::from_writer(Vec::new());
    sw.write_record([
        "model",
        "reward",
        "reward_model",
        "pilot_budget",
        "budget_unit",
        "points",
        "loo_rmse_constant",
        "loo_rmse_linear",
        "loo_rmse_log_linear",
        "loo_rmse_quadratic",
        "form",
        "best_flops_share_learning",
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
        let reward_spec = &grid.axes.reward[*r];
        let reward = reward_spec.to_string();
        sw.write_record([
            model.clone(),
            reward_spec.kind.as_str().to_string(),
            reward_spec.model_id().to_string(),
            number(plan.info.pilot_budget),
            unit.clone(),
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
        let warning = match (&f.fit, f.no_fit) {
            (Some(s), _) if !s.identified => Some("before the knee: A not identified"),
            (None, Some(_)) => Some("no fit"),
            _ => None,
        };
        let svg = fit_plot(&FitPlot {
            run_id: &run.run_id,
            unit,
            points: &points,
            curve: &f.curve,
            extrapolation: &f.extrapolation,
            warning,
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
