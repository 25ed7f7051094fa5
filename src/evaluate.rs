//! One cell evaluated: its ledger and its predicted score, and the quantities derived from both
//! that every table shares (cost in the grid's budget unit, dollars per point).

use crate::ledger::{Ledger, RunConfig, StepLedger, step_ledger};
use crate::outcome::{CellSignal, Prediction, PreparedPrediction, predict};
use crate::spec::{AxisIndices, BudgetAxis, Cell, Grid};

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

/// Evaluates the cells of one grid in id order, pricing a step once for all the budgets it is
/// swept at: the budget axis is the last digit of a cell id, so the cells that share a step
/// come in a row, and the evaluator keeps the last step it priced
/// ([`crate::ledger::StepLedger`]). The results are [`evaluate`]'s, bit for bit, in any order;
/// only the reuse depends on the order. Use one evaluator per grid.
#[derive(Debug, Default)]
pub struct CellEvaluator {
    last: Option<(AxisIndices, StepLedger, PreparedPrediction)>,
    /// The last cell's ledger: the step's, finished at that cell's stop.
    ledger: Option<Ledger>,
}

impl CellEvaluator {
    /// Evaluates a cell of the evaluator's grid.
    pub fn evaluate<'g>(&mut self, grid: &'g Grid, cell: Cell<'g>) -> Evaluated<'g> {
        let (ledger, prediction, signal) = self.price(grid, &cell);
        Evaluated {
            cell,
            ledger: *ledger,
            prediction,
            signal,
        }
    }

    /// The cell's ledger (held by the evaluator until the next cell), prediction and signal:
    /// [`CellEvaluator::evaluate`] without building the evaluated cell, so a sweep's first pass
    /// copies no ledger per cell.
    pub fn price(&mut self, grid: &Grid, cell: &Cell) -> (&Ledger, Prediction, CellSignal) {
        let config = cell.run_config(grid);
        let step_key = AxisIndices {
            budget: 0,
            ..cell.indices
        };
        let reuse = matches!(&self.last, Some((key, _, _)) if *key == step_key);
        if !reuse {
            match step_ledger(&config) {
                Some(step) => {
                    let signal_at_any_stop = grid_signal(grid, &config, step.step());
                    let prepared = PreparedPrediction::of(&grid.outcome, &signal_at_any_stop);
                    self.ledger = Some(*step.step());
                    self.last = Some((step_key, step, prepared));
                }
                None => {
                    self.last = None;
                    let ledger = self.ledger.insert(crate::ledger::evaluate(&config));
                    let signal = grid_signal(grid, &config, ledger);
                    return (ledger, predict(&grid.outcome, &signal), signal);
                }
            }
        }
        let (_, step, prepared) = self.last.as_ref().expect("a step priced above");
        let ledger = self.ledger.as_mut().expect("set with the step");
        step.with_stop_into(&config, ledger);
        let signal = grid_signal(grid, &config, ledger);
        (ledger, prepared.at(signal.iterations), signal)
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
                ability_score: target.ability_scores[e.cell.indices.model],
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn grid(name: &str) -> Grid {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("grids")
            .join(format!("{name}.toml"));
        crate::spec::load(&path, &Catalog::embedded()).unwrap()
    }

    /// The evaluator's reuse gives `evaluate`'s results bit for bit, on a grid of budgets, a
    /// grid of dollar budgets and an agentic grid (priced whole, no reuse).
    #[test]
    fn the_evaluator_reuses_steps_and_gives_the_same_bits() {
        for (name, ids) in [
            ("ten-million", 4_321_900..4_322_100u64),
            ("dollars", 0..400),
            ("agentic", 0..200),
        ] {
            let g = grid(name);
            let ids = ids.start..ids.end.min(g.cell_count().unwrap());
            let mut evaluator = CellEvaluator::default();
            let mut compared = 0;
            for (id, cell) in g.cells_in(ids) {
                let Some(cell) = cell else { continue };
                let reused = evaluator.evaluate(&g, cell);
                let fresh = evaluate(&g, g.cell(id).unwrap());
                assert_eq!(reused.ledger, fresh.ledger, "{name} cell {id}");
                assert_eq!(reused.prediction, fresh.prediction, "{name} cell {id}");
                assert_eq!(
                    format!("{:?}", reused.signal),
                    format!("{:?}", fresh.signal),
                    "{name} cell {id}"
                );
                compared += 1;
            }
            assert!(compared > 50, "{name}: {compared}");
        }
    }
}
