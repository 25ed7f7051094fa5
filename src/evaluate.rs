//! One cell evaluated: its ledger and its predicted score, and the quantities derived from both
//! that every table shares (cost in the grid's budget unit, dollars per point).

use crate::ledger::{Bucket, Ledger, RunConfig, StepLedger, StepSums, step_ledger};
use crate::outcome::{CellSignal, Median, Prediction, PreparedPrediction, predict};
use crate::spec::Axis;
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
    /// [`CellEvaluator::evaluate`] without building the evaluated cell.
    pub fn price(&mut self, grid: &Grid, cell: &Cell) -> (&Ledger, Prediction, CellSignal) {
        let config = cell.run_config(grid);
        if !self.hold_step(grid, &config, cell) {
            return self.price_whole(grid, &config);
        }
        let (_, step, prepared) = self.last.as_ref().expect("a step held");
        let ledger = self.ledger.as_mut().expect("set with the step");
        step.with_stop_into(&config, ledger);
        let signal = grid_signal(grid, &config, ledger);
        (ledger, prepared.at(signal.iterations), signal)
    }

    /// [`CellEvaluator::price`] for a sweep's first pass: the ledger without its waste, and the
    /// prediction's median, with the interval computed only if [`Priced::prediction`] is asked
    /// for (most cells of a large grid never enter a frontier or a pool, and the interval is
    /// most of a prediction's cost). Everything else has the same bits as `price`.
    pub fn price_lazily(&mut self, grid: &Grid, cell: &Cell) -> Priced<'_> {
        // A cell of the step held needs only its stop: its configuration is built for a new
        // step or a run priced whole.
        if !self.holds_step_of(cell) {
            let config = cell.run_config(grid);
            if !self.hold_step(grid, &config, cell) {
                let (ledger, prediction, _) = self.price_whole(grid, &config);
                return Priced {
                    ledger,
                    sums: None,
                    estimate: Estimate::Whole(prediction),
                };
            }
        }
        let (_, step, prepared) = self.last.as_ref().expect("a step held");
        let ledger = self.ledger.as_mut().expect("set with the step");
        step.at_stop_into_without_waste(cell.stop, ledger);
        // The signal's iterations are the ledger's (`CellSignal::of`).
        let median = prepared.median_at(ledger.iterations as f64);
        Priced {
            ledger,
            sums: Some(step.sums()),
            estimate: Estimate::Median(prepared, median),
        }
    }

    /// A run priced whole (not by the step): its ledger, held until the next cell, its
    /// prediction and its signal.
    fn price_whole(
        &mut self,
        grid: &Grid,
        config: &RunConfig,
    ) -> (&Ledger, Prediction, CellSignal) {
        let ledger = self.ledger.insert(crate::ledger::evaluate(config));
        let signal = grid_signal(grid, config, ledger);
        (ledger, predict(&grid.outcome, &signal), signal)
    }

    /// Whether the step held is `cell`'s (the same axes but the budget).
    fn holds_step_of(&self, cell: &Cell) -> bool {
        matches!(&self.last, Some((key, _, _)) if *key == step_key(cell))
    }

    /// Holds the step of `cell` (all its axes but the budget), priced now unless it is the one
    /// held already; false (nothing held) for runs priced whole, not by the step.
    fn hold_step(&mut self, grid: &Grid, config: &RunConfig, cell: &Cell) -> bool {
        if self.holds_step_of(cell) {
            return true;
        }
        let step_key = step_key(cell);
        match step_ledger(config) {
            Some(step) => {
                let signal_at_any_stop = grid_signal(grid, config, step.step());
                let prepared = PreparedPrediction::of(&grid.outcome, &signal_at_any_stop);
                self.ledger = Some(*step.step());
                self.last = Some((step_key, step, prepared));
                true
            }
            None => {
                self.last = None;
                false
            }
        }
    }
}

/// The axes of a cell's step: all of its indices but the budget's.
fn step_key(cell: &Cell) -> AxisIndices {
    cell.indices.with(Axis::Budget, 0)
}

/// A cell priced by [`CellEvaluator::price_lazily`]: its ledger (without the waste, for runs
/// priced by the step: a first pass aggregates none), and its prediction with the interval still
/// to compute.
#[derive(Debug)]
pub struct Priced<'e> {
    /// The cell's ledger (held by the evaluator until the next cell).
    pub ledger: &'e Ledger,
    /// The sums over its step's phases, for runs priced by the step.
    sums: Option<&'e StepSums>,
    estimate: Estimate<'e>,
}

/// A cell's costs and shares as a sweep's first pass reads them: each the value the [`Ledger`]
/// method named gives, bit for bit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostShares {
    /// [`cost_in_budget_unit`].
    pub cost: f64,
    /// [`Ledger::total_usd`].
    pub usd: f64,
    /// [`Ledger::flops_share`] of the learning bucket (RACE's update fraction).
    pub learning_flops_share: f64,
    /// [`Ledger::flops_share`] of the search bucket.
    pub search_flops_share: f64,
    /// [`Ledger::usd_share`] of the search bucket.
    pub search_usd_share: f64,
}

impl CostShares {
    /// The costs and shares of `ledger`, a run of `grid`, from the ledger's own methods.
    pub fn of(grid: &Grid, ledger: &Ledger) -> Self {
        CostShares {
            cost: cost_in_budget_unit(grid, ledger),
            usd: ledger.total_usd(),
            learning_flops_share: ledger.flops_share(Bucket::Learning),
            search_flops_share: ledger.flops_share(Bucket::Search),
            search_usd_share: ledger.usd_share(Bucket::Search),
        }
    }

    /// [`CostShares::of`] for `ledger`, a run of `grid` priced by the step whose sums are
    /// `sums`: two additions and a few products instead of eight sums over the phases.
    pub fn of_step(grid: &Grid, ledger: &Ledger, sums: &StepSums) -> Self {
        let iterations = ledger.iterations as f64;
        let usd_per_step = sums.total_usd_per_step(ledger);
        let cost = match &grid.axes.budget {
            BudgetAxis::Budgets { unit, .. } => sums.per_iteration(ledger, *unit) * iterations,
            BudgetAxis::Iterations(_) => usd_per_step * iterations,
        };
        CostShares {
            cost,
            usd: usd_per_step * iterations,
            learning_flops_share: sums.learning_flops_share(),
            search_flops_share: sums.search_flops_share(),
            search_usd_share: sums.search_usd_share(usd_per_step),
        }
    }
}

/// A prediction made whole, or its median and what finishes it.
#[derive(Debug)]
enum Estimate<'e> {
    Whole(Prediction),
    Median(&'e PreparedPrediction, Median),
}

impl Priced<'_> {
    /// The predicted score ([`Prediction::score`]).
    pub fn score(&self) -> f64 {
        match &self.estimate {
            Estimate::Whole(prediction) => prediction.score,
            Estimate::Median(_, median) => median.score,
        }
    }

    /// The cell's costs and shares (from its step's sums when it was priced by the step).
    pub fn cost_shares(&self, grid: &Grid) -> CostShares {
        match self.sums {
            Some(sums) => CostShares::of_step(grid, self.ledger, sums),
            None => CostShares::of(grid, self.ledger),
        }
    }

    /// The whole prediction, interval included.
    pub fn prediction(&self) -> Prediction {
        match &self.estimate {
            Estimate::Whole(prediction) => *prediction,
            Estimate::Median(prepared, median) => prepared.interval(median),
        }
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
                measured_base_score: target.measured_base_scores[e.cell.indices[Axis::Model]],
                ability_score: target.ability_scores[e.cell.indices[Axis::Model]],
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

/// The intervals of a grid's cells, memoised by the axes a setup's tags depend on (engine,
/// model, fine-tuning, cap): a sweep asks for millions of cells and computes a handful.
#[derive(Debug, Default)]
pub struct GridIntervals {
    residuals: Option<Vec<crate::ledger::accuracy::Residual>>,
    memo: std::collections::HashMap<[usize; 4], Option<crate::ledger::accuracy::PriceInterval>>,
}

impl GridIntervals {
    /// The interval of the cell at `indices` of `grid` (None without residuals).
    pub fn of(
        &mut self,
        grid: &crate::spec::Grid,
        indices: &crate::spec::AxisIndices,
    ) -> Option<&crate::ledger::accuracy::PriceInterval> {
        use crate::spec::Axis;
        let key = [
            indices[Axis::Engine],
            indices[Axis::Model],
            indices[Axis::Finetune],
            indices[Axis::MaxResponseLen],
        ];
        let residuals = self.residuals.get_or_insert_with(|| {
            crate::ledger::accuracy::parse_residuals(crate::ledger::accuracy::EMBEDDED_RESIDUALS)
        });
        self.memo
            .entry(key)
            .or_insert_with(|| {
                let a = &grid.axes;
                let setup = crate::ledger::accuracy::tags(
                    &a.engine[key[0]].id,
                    &grid.hardware.gpu.id,
                    a.model[key[1]].is_moe(),
                    a.max_response_len[key[3]] as f64,
                    grid.run.algorithm,
                    matches!(a.finetune[key[2]], crate::config::Finetune::Lora(_)),
                    grid.hardware.schedule,
                );
                crate::ledger::accuracy::interval(&setup, residuals)
            })
            .as_ref()
    }
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
    /// Slices of a grid of budgets, a grid of dollar budgets and an agentic grid, by name.
    const SLICES: [(&str, std::ops::Range<u64>); 3] = [
        ("ten-million", 4_321_900..4_322_100),
        ("dollars", 0..400),
        ("agentic", 0..200),
    ];

    #[test]
    fn the_evaluator_reuses_steps_and_gives_the_same_bits() {
        for (name, ids) in SLICES {
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

    /// A first pass's lazy pricing gives the same ledger (but the waste) and prediction, and
    /// interleaving it with whole pricing on one evaluator changes nothing.
    #[test]
    fn lazy_pricing_gives_the_same_bits_but_the_waste() {
        for (name, ids) in SLICES {
            let g = grid(name);
            let ids = ids.start..ids.end.min(g.cell_count().unwrap());
            let mut evaluator = CellEvaluator::default();
            for (id, cell) in g.cells_in(ids) {
                let Some(cell) = cell else { continue };
                let fresh = evaluate(&g, g.cell(id).unwrap());
                let priced = evaluator.price_lazily(&g, &cell);
                assert_eq!(priced.score().to_bits(), fresh.prediction.score.to_bits());
                assert_eq!(priced.prediction(), fresh.prediction, "{name} cell {id}");
                let (a, b) = (priced.cost_shares(&g), CostShares::of(&g, &fresh.ledger));
                let bits = |c: CostShares| {
                    [
                        c.cost,
                        c.usd,
                        c.learning_flops_share,
                        c.search_flops_share,
                        c.search_usd_share,
                    ]
                    .map(f64::to_bits)
                };
                assert_eq!(bits(a), bits(b), "{name} cell {id}");
                let waste_free = crate::ledger::Ledger {
                    waste: priced.ledger.waste,
                    ..fresh.ledger
                };
                assert_eq!(*priced.ledger, waste_free, "{name} cell {id}");
                if id % 3 == 0 {
                    assert_eq!(evaluator.evaluate(&g, cell).ledger, fresh.ledger);
                }
            }
        }
    }
}
