//! The shortlist: per budget, the regimes worth a real validation run (docs/design.md §8).
//!
//! - The best cell is the one with the highest predicted score. Another cell is a candidate only
//!   if its interval overlaps the best's (its high end reaches the best's low end): within the
//!   prior's stated uncertainty, it could be the best.
//! - Candidates are taken best first, skipping near-duplicates: a cell with the same model,
//!   fine-tuning mode and reward as one already chosen, and within one grid step of it on every
//!   numeric axis (G, cap, epochs, prompts), says nothing new.
//! - Each entry carries what a full validation run would cost, the dollars per point of predicted
//!   improvement over the base score, and flags: the best at the edge of the grid (widen that
//!   axis), prior only (uncalibrated), infeasible neighbours (the regime is close to a wall).

use crate::analysis::frontier::{Aggregate, Point};
use crate::spec::{Axis, AxisIndices, Grid};

/// Entries kept per budget.
pub const MAX_PER_BUDGET: usize = 5;

/// One shortlisted regime.
#[derive(Debug, Clone, PartialEq)]
pub struct Entry {
    /// Index of the budget on the budget axis.
    pub budget_index: usize,
    /// 1 for the best cell of the budget.
    pub rank: usize,
    /// The cell.
    pub point: Point,
    /// Dollars per percentage point of predicted improvement over the base score.
    pub usd_per_point: Option<f64>,
    /// Warnings and advice.
    pub flags: Vec<String>,
}

fn near_duplicate(grid: &Grid, a: &AxisIndices, b: &AxisIndices) -> bool {
    let close = |x: usize, y: usize| x.abs_diff(y) <= 1;
    // Two LoRA ranks next to each other on the axis are one regime; full fine-tuning is its own.
    let same_finetune = a.finetune == b.finetune
        || (close(a.finetune, b.finetune)
            && matches!(
                grid.axes.finetune[a.finetune],
                crate::config::Finetune::Lora(_)
            )
            && matches!(
                grid.axes.finetune[b.finetune],
                crate::config::Finetune::Lora(_)
            ));
    a.model == b.model
        && same_finetune
        && a.reward == b.reward
        && close(a.group_size, b.group_size)
        && close(a.max_response_len, b.max_response_len)
        && close(a.update_epochs, b.update_epochs)
        && close(a.prompts_per_step, b.prompts_per_step)
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
            let values = axis
                .numeric_values(&grid.axes)
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

fn flags(grid: &Grid, point: &Point) -> Vec<String> {
    let mut flags = Vec::new();
    for (axis, values, index, minimum) in numeric_axes(grid, &point.indices) {
        if values.len() > 1 && index == 0 && values[0] > minimum {
            flags.push(format!(
                "at the lower edge of {axis} ({}): add smaller values",
                values[0]
            ));
        } else if values.len() > 1 && index + 1 == values.len() {
            flags.push(format!(
                "at the upper edge of {axis} ({}): add larger values",
                values[index]
            ));
        }
    }
    if grid.outcome_state == crate::outcome::OutcomeState::Prior {
        flags.push("prior only (uncalibrated): validate before trusting".to_string());
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
                flags.push(format!(
                    "infeasible neighbour at {axis} = {} ({})",
                    values[neighbour],
                    reason.code()
                ));
            }
        }
    }
    flags
}

/// Selects the shortlist from a sweep's aggregate.
pub fn select(grid: &Grid, aggregate: &Aggregate) -> Vec<Entry> {
    let mut entries = Vec::new();
    for (&budget_index, pool) in &aggregate.shortlist_pool {
        let Some(best) = pool.first() else { continue };
        let mut chosen: Vec<Point> = Vec::new();
        for p in pool {
            if chosen.len() == MAX_PER_BUDGET {
                break;
            }
            if p.score_high < best.score_low {
                continue; // its interval does not reach the best's
            }
            if chosen
                .iter()
                .any(|c| near_duplicate(grid, &c.indices, &p.indices))
            {
                continue;
            }
            chosen.push(*p);
        }
        for (rank, p) in chosen.into_iter().enumerate() {
            entries.push(Entry {
                budget_index,
                rank: rank + 1,
                point: p,
                usd_per_point: crate::evaluate::usd_per_point(p.usd, p.score, p.base_score),
                flags: flags(grid, &p),
            });
        }
    }
    entries
}
