//! One pilot run's curve: the bounded sigmoid fit of its checkpoints, one bootstrap that serves
//! both the extrapolations to the grid's budgets and the plot's band, and the observations the
//! calibration of the prior uses.

use crate::config::Stop;
use crate::fit::calibrate::Observation;
use crate::fit::sigmoid::{Bootstrap, NoFit, SigmoidFit, bootstrap, fit};
use crate::format::number;
use crate::outcome::predict;
use crate::pilot::ingest::Checkpoint;
use crate::pilot::{PilotRun, config_at};
use crate::spec::{AxisIndices, BudgetAxis, Grid};

/// One run's fit and what it needs for outputs.
pub(super) struct RunFit {
    pub index: usize,
    pub indices: AxisIndices,
    pub points: Vec<Checkpoint>,
    pub base: f64,
    pub fit: Option<SigmoidFit>,
    /// Why there is no fit, when there is none.
    pub no_fit: Option<NoFit>,
    pub bootstrap: Option<Bootstrap>,
    /// (grid budget label, compute in pilot units) extrapolation targets.
    pub targets: Vec<(String, f64)>,
    pub final_compute: f64,
    /// The plot's fitted curve with its band: (compute, score, low, high).
    pub curve: Vec<(f64, f64, f64, f64)>,
    /// The dashed extrapolation with its band.
    pub extrapolation: Vec<(f64, f64, f64, f64)>,
}

/// The extrapolation targets of a run: each budget of the grid as (label, compute in the pilot's
/// units), through the run's cost per step.
fn targets_of(
    grid: &Grid,
    per_grid_unit: impl Fn(crate::config::BudgetUnit) -> f64,
    cost_per_step: f64,
) -> Vec<(String, f64)> {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, amounts } => {
            let per_grid_unit = per_grid_unit(*unit);
            amounts
                .iter()
                .map(|&b| {
                    (
                        format!("{} {}", number(b), unit.as_str()),
                        (b / per_grid_unit).floor() * cost_per_step,
                    )
                })
                .collect()
        }
        BudgetAxis::Iterations(n) => n
            .iter()
            .map(|&m| (format!("{m} iterations"), m as f64 * cost_per_step))
            .collect(),
    }
}

/// 41 points evenly spaced in log between `a` and `b`.
fn log_grid(a: f64, b: f64) -> Vec<f64> {
    (0..=40)
        .map(|i| (a.ln() + (b.ln() - a.ln()) * i as f64 / 40.0).exp())
        .collect()
}

/// What fitting one run needs besides its checkpoints.
pub(super) struct RunFitSettings {
    /// Checkpoints before this step are left out of the curve fit.
    pub warmup_steps: u64,
    /// Bootstrap replicates.
    pub bootstrap: usize,
    /// Seed of the bootstraps.
    pub seed: u64,
}

/// A band along the curve: (compute, score, low, high) points.
type Band = Vec<(f64, f64, f64, f64)>;

/// One bootstrap serves the extrapolation targets and the plot's band: the fitted range (41
/// points on a log grid) and, dashed, beyond it to the largest target. Returns the bootstrap and
/// the two bands as (compute, score, low, high).
fn bootstrap_bands(
    f: &SigmoidFit,
    (x, y): (&[f64], &[f64]),
    points: &[Checkpoint],
    run: &PilotRun,
    targets: &[(String, f64)],
    settings: &RunFitSettings,
    k: usize,
) -> (Bootstrap, Band, Band) {
    let x_lo = points
        .iter()
        .filter(|c| c.step > 0)
        .map(|c| c.step as f64 * run.cost_per_step)
        .fold(f64::INFINITY, f64::min);
    let x_hi = (run.steps as f64 * run.cost_per_step).max(x_lo);
    let x_far = targets.iter().map(|t| t.1).fold(x_hi, f64::max);
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
    let b = bootstrap(f, x, y, &at, settings.bootstrap, settings.seed, k as u64);
    let band = |xs: &[f64], offset: usize| -> Band {
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
    let curve = band(&curve_x, targets.len());
    let extrapolation = band(&extra_x, targets.len() + curve_x.len());
    (b, curve, extrapolation)
}

/// Fits run `k` of the plan and appends its checkpoints to `observations`.
pub(super) fn fit_run(
    grid: &Grid,
    k: usize,
    run: &PilotRun,
    indices: AxisIndices,
    points: &[Checkpoint],
    settings: &RunFitSettings,
    observations: &mut Vec<Observation>,
) -> RunFit {
    let config0 = config_at(grid, &indices, Stop::Iterations(0));
    let ledger0 = crate::ledger::evaluate(&config0);
    let prior_base = predict(
        &grid.outcome,
        &crate::evaluate::grid_signal(grid, &config0, &ledger0),
    )
    .base_score;
    let base = points
        .iter()
        .find(|c| c.step == 0)
        .map(|c| c.value)
        .unwrap_or(prior_base)
        .clamp(0.0, 0.999);
    let used: Vec<&Checkpoint> = points
        .iter()
        .filter(|c| c.step > 0 && c.step >= settings.warmup_steps)
        .collect();
    let x: Vec<f64> = used
        .iter()
        .map(|c| c.step as f64 * run.cost_per_step)
        .collect();
    let y: Vec<f64> = used.iter().map(|c| c.value).collect();
    let targets = targets_of(grid, |unit| ledger0.per_iteration(unit), run.cost_per_step);
    let (fitted, no_fit) = match fit(base, &x, &y) {
        Ok(f) => (Some(f), None),
        Err(reason) => (None, Some(reason)),
    };
    let (mut curve, mut extrapolation) = (Vec::new(), Vec::new());
    let boot = fitted.as_ref().map(|f| {
        let (b, c, e) = bootstrap_bands(f, (&x, &y), points, run, &targets, settings, k);
        (curve, extrapolation) = (c, e);
        b
    });
    for c in points
        .iter()
        .filter(|c| c.step >= settings.warmup_steps || c.step == 0)
    {
        let config = config_at(grid, &indices, Stop::Iterations(c.step));
        let ledger = crate::ledger::evaluate(&config);
        observations.push(Observation {
            run: k,
            signal: crate::evaluate::grid_signal(grid, &config, &ledger),
            value: c.value,
        });
    }
    RunFit {
        index: k,
        indices,
        points: points.to_vec(),
        base,
        fit: fitted,
        no_fit,
        bootstrap: boot,
        targets,
        final_compute: run.steps as f64 * run.cost_per_step,
        curve,
        extrapolation,
    }
}
