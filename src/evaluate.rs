//! One cell evaluated: its ledger and its predicted score, and the quantities derived from both
//! that every table shares (cost in the grid's budget unit, dollars per point).

use crate::ledger::{Ledger, RunConfig};
use crate::outcome::{CellSignal, Prediction, predict};
use crate::spec::{BudgetAxis, Cell, Grid};

/// One evaluated cell: the cell, its ledger and (for feasible cells) its predicted score.
#[derive(Debug, Clone, Copy)]
pub struct Evaluated<'g> {
    /// The cell.
    pub cell: Cell<'g>,
    /// Its ledger.
    pub ledger: Ledger,
    /// The prior's prediction.
    pub prediction: Prediction,
    /// What the prior was told about the cell (to predict it again on another target metric).
    pub signal: CellSignal,
}

/// Evaluates the cell with this id (None when the constraints prune it).
pub fn evaluate_cell(grid: &Grid, id: u64) -> Option<Evaluated<'_>> {
    Some(evaluate(grid, grid.cell(id)?))
}

/// Evaluates a cell of `grid` (from [`Grid::cell`] or [`Grid::cells_in`]).
pub fn evaluate<'g>(grid: &'g Grid, cell: Cell<'g>) -> Evaluated<'g> {
    let config = cell.run_config(grid);
    let ledger = crate::ledger::evaluate(&config);
    let signal = grid_signal(grid, &config, &ledger);
    let prediction = predict(&grid.outcome, &signal);
    Evaluated {
        cell,
        ledger,
        prediction,
        signal,
    }
}

/// What the prior needs to know about a run of `grid`: the run's signal, on the grid's target
/// metric's kind of benchmark.
pub fn grid_signal(grid: &Grid, config: &RunConfig, ledger: &Ledger) -> CellSignal {
    CellSignal {
        benchmark: grid.benchmark,
        ..CellSignal::of(config, ledger)
    }
}

/// The cell's prediction on every target metric after the first (`[outcome] metrics`): the same
/// run, started from that metric's measured base score. Empty for single-metric grids.
pub fn secondary_predictions(grid: &Grid, e: &Evaluated) -> Vec<Prediction> {
    grid.targets
        .iter()
        .skip(1)
        .map(|target| {
            let signal = CellSignal {
                measured_base_score: target.measured_base_scores[e.cell.indices.model],
                benchmark: crate::outcome::Benchmark::of_metric(&target.name),
                ..e.signal
            };
            predict(&grid.outcome, &signal)
        })
        .collect()
}

/// The spend of an evaluated cell in the grid's budget unit (dollars for fixed-iterations grids).
pub fn cost_in_budget_unit(grid: &Grid, ledger: &Ledger) -> f64 {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, .. } => ledger.per_iteration(*unit) * ledger.iterations as f64,
        BudgetAxis::Iterations(_) => ledger.total_usd(),
    }
}

/// The name of the frontier's cost unit: the budget unit, or `usd` for fixed-iterations grids.
pub fn cost_unit(grid: &Grid) -> &'static str {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, .. } => unit.as_str(),
        BudgetAxis::Iterations(_) => "usd",
    }
}

/// Dollars per percentage point of predicted improvement over the base score (empty when the
/// prediction is no improvement).
pub fn usd_per_point(usd: f64, score: f64, base_score: f64) -> Option<f64> {
    let points = 100.0 * (score - base_score);
    (points > 1e-9).then(|| usd / points)
}
