//! The shortlist: per budget, the regimes worth a real validation run (docs/design.md §8).
//!
//! - Every cell among the budget's [`DRAWN_CELLS`] best by predicted score whose 90% interval
//!   reaches the highest low end of the pool gets the probability that it is the best of the
//!   budget, from [`crate::analysis::draws::DRAWS`] joint draws of the outcome model
//!   ([`crate::analysis::draws::JointDraws`]): parameter uncertainty and the shared part of the
//!   discrepancy move every cell together, the regime's own discrepancy and its seed move it
//!   alone. This replaces the interval-overlap rule, which selected every cell once intervals
//!   were honest.
//! - Cells are grouped into regimes before anything is dropped: highest probability first, a
//!   near-duplicate of a regime (same model, fine-tuning mode and reward, within one grid step of
//!   its first cell on every numeric axis: G, cap, epochs, prompts) says nothing new and adds its
//!   probability to that regime; any other cell opens a regime. Regimes are then ranked by their
//!   summed probability. The first is always listed, so every budget with a feasible cell has a
//!   recommendation however evenly the probability is spread over near-equal cells (before,
//!   a regime was opened only by a cell of [`MIN_PROBABILITY_BEST`] alone, and a grid of many
//!   near-equal cells listed none); the others need at least [`MIN_PROBABILITY_BEST`].
//! - Each entry carries what a full validation run would cost, the dollars per point of predicted
//!   improvement over the base score, and flags: the best at the edge of the grid (widen that
//!   axis), prior only (uncalibrated), infeasible neighbours (the regime is close to a wall).

use crate::analysis::frontier::Point;
use crate::spec::{Axis, AxisIndices, Grid};

/// Entries kept per budget.
pub const MAX_PER_BUDGET: usize = 5;

/// Cells of a budget's pool that are drawn (the best by predicted score).
pub const DRAWN_CELLS: usize = 128;

/// The smallest probability of being best a listed regime needs.
pub const MIN_PROBABILITY_BEST: f64 = 0.02;

/// One shortlisted regime.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Index of the budget on the budget axis.
    pub budget_index: usize,
    /// 1 for the best cell of the budget.
    pub rank: usize,
    /// The cell the regime is shown by: of the cells it folds, the one with the best predicted
    /// score (then the lower id), so the shortlist, the headline, `frontier.csv` and the plots
    /// show the same cell wherever the regime holds the budget's best point prediction.
    pub point: Point,
    /// The cells the regime folds (its near-duplicates and `point`), highest probability first.
    pub members: Vec<Point>,
    /// Dollars per percentage point of predicted improvement over the base score.
    pub usd_per_point: Option<f64>,
    /// Probability that this regime (with its near-duplicates) is the best of its budget.
    pub probability_best: f64,
    /// Warnings and advice.
    pub flags: Vec<Flag>,
}

/// A warning about a shortlisted regime, typed so that tables can give each kind a column.
#[derive(Debug, Clone, PartialEq)]
pub enum Flag {
    /// The regime sits at the lower end of a numeric axis that could go lower.
    LowerEdge {
        /// The axis.
        axis: Axis,
        /// Its smallest value in the grid.
        value: u64,
    },
    /// The regime sits at the upper end of a numeric axis.
    UpperEdge {
        /// The axis.
        axis: Axis,
        /// Its largest value in the grid.
        value: u64,
    },
    /// The outcome model is the uncalibrated prior.
    Uncalibrated,
    /// A neighbouring cell on a numeric axis cannot run.
    InfeasibleNeighbour {
        /// The axis.
        axis: Axis,
        /// The neighbour's value.
        value: u64,
        /// Why it cannot run (`InfeasibleKind` code).
        code: &'static str,
    },
}

impl std::fmt::Display for Flag {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Flag::LowerEdge { axis, value } => {
                write!(
                    f,
                    "at the lower edge of {axis} ({value}): add smaller values"
                )
            }
            Flag::UpperEdge { axis, value } => {
                write!(
                    f,
                    "at the upper edge of {axis} ({value}): add larger values"
                )
            }
            Flag::Uncalibrated => write!(f, "prior only (uncalibrated): validate before trusting"),
            Flag::InfeasibleNeighbour { axis, value, code } => {
                write!(f, "infeasible neighbour at {axis} = {value} ({code})")
            }
        }
    }
}

/// Whether two cells are one regime for the shortlist: the same value on every categorical axis
/// (engine, model, reward, API judge), within one grid step on every ordered one (turns, tool
/// latency, G, cap, epochs, prompts: [`Axis::is_ordered`]), and the same fine-tuning mode (LoRA
/// ranks next to each other on the axis are one regime; full fine-tuning is its own). The budget
/// is not compared: regimes are chosen per budget.
pub fn near_duplicate(grid: &Grid, a: &AxisIndices, b: &AxisIndices) -> bool {
    let close = |x: usize, y: usize| x.abs_diff(y) <= 1;
    let lora = |i: usize| matches!(grid.axes.finetune[i], crate::config::Finetune::Lora(_));
    Axis::ALL
        .into_iter()
        .filter(|&axis| axis != Axis::Budget)
        .all(|axis| {
            let (x, y) = (a[axis], b[axis]);
            if axis == Axis::Finetune {
                x == y || (close(x, y) && lora(x) && lora(y))
            } else if axis.is_ordered() {
                close(x, y)
            } else {
                x == y
            }
        })
}

/// The numeric axes: the axis, its values, the cell's index on it, and the smallest value the
/// axis allows (no "add smaller values" advice below it).
fn numeric_axes<'g>(grid: &'g Grid, i: &AxisIndices) -> Vec<(Axis, &'g [u64], usize, u64)> {
    let min_group = if grid.run.algorithm == crate::config::Algorithm::Grpo {
        2
    } else {
        1
    };
    Axis::NUMERIC
        .iter()
        .map(|&axis| {
            let values = grid
                .axes
                .numeric_values(axis)
                .expect("NUMERIC axes have numeric values");
            let minimum = if axis == Axis::GroupSize {
                min_group
            } else {
                1
            };
            (axis, values, i.get(axis), minimum)
        })
        .collect()
}

/// The flags of a regime: grid edges, prior only, infeasible neighbours.
pub fn flags(grid: &Grid, point: &Point) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (axis, values, index, minimum) in numeric_axes(grid, &point.indices) {
        if values.len() > 1 && index == 0 && values[0] > minimum {
            flags.push(Flag::LowerEdge {
                axis,
                value: values[0],
            });
        } else if values.len() > 1 && index + 1 == values.len() {
            flags.push(Flag::UpperEdge {
                axis,
                value: values[index],
            });
        }
    }
    if grid.outcome_state == crate::outcome::OutcomeState::Prior {
        flags.push(Flag::Uncalibrated);
    }
    for (axis, values, index, _) in numeric_axes(grid, &point.indices) {
        for neighbour in [index.checked_sub(1), Some(index + 1)]
            .into_iter()
            .flatten()
        {
            if neighbour >= values.len() {
                continue;
            }
            let id = grid.encode(&point.indices.with(axis, neighbour));
            if let Some(e) = crate::evaluate::evaluate_cell(grid, id)
                && let Some(reason) = e.ledger.infeasible
            {
                flags.push(Flag::InfeasibleNeighbour {
                    axis,
                    value: values[neighbour],
                    code: reason.code(),
                });
            }
        }
    }
    flags
}

/// The cells of one budget's shortlist pool that can be best with any real chance, in a fixed
/// order (best predicted score first, then id), so the draws do not depend on how the sweep's
/// chunks filled the pool.
///
/// Only cells whose 90% interval reaches the highest low end are kept (the draws share most of
/// their uncertainty, so differences are narrower than the intervals: the others get
/// probability 0 without being drawn), and of those the best [`DRAWN_CELLS`].
pub fn drawn_pool(pool: &[Point]) -> Vec<Point> {
    let mut pool = pool.to_vec();
    pool.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.id.cmp(&b.id)));
    let floor = pool
        .iter()
        .map(|p| p.score_low)
        .fold(f64::NEG_INFINITY, f64::max);
    pool.retain(|p| p.score_high >= floor);
    pool.truncate(DRAWN_CELLS);
    pool
}

/// One budget's entries from its drawn pool and each cell's probability of being best: cells
/// folded into regimes (highest probability first, each near-duplicate into the first regime it
/// duplicates), regimes ranked by their summed probability, the first always kept and the
/// others from [`MIN_PROBABILITY_BEST`], up to [`MAX_PER_BUDGET`].
pub fn entries(
    grid: &Grid,
    budget_index: usize,
    pool: &[Point],
    probability: &[f64],
) -> Vec<Entry> {
    let mut order: Vec<usize> = (0..pool.len()).collect();
    // Highest probability first; ties (often zero) by predicted score, then id.
    order.sort_by(|&a, &b| {
        probability[b]
            .total_cmp(&probability[a])
            .then(pool[b].score.total_cmp(&pool[a].score))
            .then(pool[a].id.cmp(&pool[b].id))
    });
    // Each regime: the cells it folds (its first cell first) and their summed probability.
    let mut regimes: Vec<(Vec<Point>, f64)> = Vec::new();
    for k in order {
        let p = pool[k];
        match regimes
            .iter_mut()
            .find(|(cells, _)| near_duplicate(grid, &cells[0].indices, &p.indices))
        {
            Some(regime) => {
                regime.0.push(p);
                regime.1 += probability[k];
            }
            None => regimes.push((vec![p], probability[k])),
        }
    }
    let mut chosen = regimes;
    chosen.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0[0].id.cmp(&b.0[0].id)));
    chosen
        .into_iter()
        .enumerate()
        .take_while(|(rank, (_, probability))| *rank == 0 || *probability >= MIN_PROBABILITY_BEST)
        .take(MAX_PER_BUDGET)
        .map(|(rank, (members, probability_best))| {
            let p = shown_cell(&members);
            Entry {
                budget_index,
                rank: rank + 1,
                point: p,
                members,
                usd_per_point: crate::evaluate::usd_per_point(p.usd, p.score, p.base_score),
                probability_best,
                flags: flags(grid, &p),
            }
        })
        .collect()
}

/// The cell a regime is shown by: the best predicted score among the cells it folds (then the
/// lower id).
fn shown_cell(members: &[Point]) -> Point {
    *members
        .iter()
        .max_by(|a, b| a.score.total_cmp(&b.score).then(b.id.cmp(&a.id)))
        .expect("a regime folds at least one cell")
}

/// For each axis on which `cells` differ (the budget aside), the axis and the distinct value
/// indices they take on it, in axis order: what a regime's name stands for beyond its shown cell
/// ("1-2 epochs"), or which levers a group of indistinguishable regimes spans.
pub fn spread(cells: &[Point]) -> Vec<(Axis, Vec<usize>)> {
    Axis::ALL
        .into_iter()
        .filter(|&axis| axis != Axis::Budget)
        .filter_map(|axis| {
            let values: std::collections::BTreeSet<usize> =
                cells.iter().map(|p| p.indices[axis]).collect();
            (values.len() > 1).then(|| (axis, values.into_iter().collect()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The bundled RACE pilot grid (seven numeric levers, near-duplicates on every axis).
    fn pilot_grid() -> Grid {
        crate::spec::parse(
            include_str!("../../grids/race-pilot.toml"),
            std::path::Path::new("race-pilot.toml"),
            &crate::catalog::Catalog::embedded(),
        )
        .unwrap()
    }

    /// Points at these cells of `grid`, with scores falling in id order.
    fn points(grid: &Grid, ids: &[u64]) -> Vec<Point> {
        ids.iter()
            .map(|&id| {
                let mut p = crate::analysis::frontier::tests::point(id, 1.0, 1.0, 0.5);
                p.indices = grid.cell(id).unwrap().indices;
                p.score -= id as f64 * 1e-6;
                p
            })
            .collect()
    }

    #[test]
    fn probability_spread_thin_over_near_equal_cells_still_gives_a_recommendation() {
        // Two hundred cells of one budget, none with 2% alone: before regimes were folded ahead of the
        // threshold, no regime was listed and the budget had no recommendation.
        let grid = pilot_grid();
        let ids: Vec<u64> = (0..grid.cell_count().unwrap())
            .filter(|&id| grid.cell(id).is_some_and(|c| c.indices[Axis::Budget] == 0))
            .take(200)
            .collect();
        let pool = points(&grid, &ids);
        let probability = vec![1.0 / pool.len() as f64; pool.len()];
        assert!(probability[0] < MIN_PROBABILITY_BEST);
        let e = entries(&grid, 0, &pool, &probability);
        assert!(!e.is_empty());
        assert_eq!(e[0].rank, 1);
        // Folding sums: the first regime holds more than any one cell.
        assert!(e[0].probability_best > probability[0]);
        // The regime is shown by the best-scoring cell it folds (scores fall with the id here).
        let best = e[0].members.iter().map(|p| p.id).min().unwrap();
        assert_eq!(e[0].point.id, best);
        assert!(e[0].members.len() > 1);
        assert!(!spread(&e[0].members).is_empty());
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        /// Any non-empty pool with any probabilities gives a first entry; the listed regimes'
        /// probabilities sum to at most the whole; each after the first has the threshold; the
        /// ranks run 1, 2, ...
        #[test]
        fn every_non_empty_pool_gives_a_recommendation(
            picks in proptest::collection::btree_set(0u64..2000, 1..120),
            weights in proptest::collection::vec(0.0f64..1.0, 120),
        ) {
            let grid = pilot_grid();
            let count = grid.cell_count().unwrap();
            let ids: Vec<u64> = picks.into_iter().map(|i| i % count).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
            let pool = points(&grid, &ids);
            let total: f64 = weights[..pool.len()].iter().sum::<f64>().max(1e-12);
            let probability: Vec<f64> = weights[..pool.len()].iter().map(|w| w / total).collect();
            let e = entries(&grid, 0, &pool, &probability);
            prop_assert!(!e.is_empty());
            prop_assert!(e.len() <= MAX_PER_BUDGET);
            prop_assert!(e.iter().map(|x| x.probability_best).sum::<f64>() <= 1.0 + 1e-9);
            for (k, x) in e.iter().enumerate() {
                prop_assert_eq!(x.rank, k + 1);
                prop_assert!(k == 0 || x.probability_best >= MIN_PROBABILITY_BEST);
                // Shown by its best-scoring member, which it folds.
                prop_assert!(x.members.iter().any(|m| m.id == x.point.id));
                prop_assert!(x.members.iter().all(|m| m.score <= x.point.score));
            }
        }
    }
}
