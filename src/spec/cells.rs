//! Cells: one point of the grid, decoded from its index by mixed-radix arithmetic so that a grid of
//! millions of cells is never materialised.
//!
//! Axis order (slowest to fastest): engine, model, finetune, reward, turns, tool_seconds, judge,
//! group_size,
//! max_response_len, update_epochs, prompts_per_step, budget. `cell_id` is the index in the full product; cells
//! pruned by `[constraints]` keep their ids, so ids stay stable when a constraint changes.

use super::{Axis, BudgetAxis, Grid};
use crate::catalog::ModelSpec;
use crate::config::{Budget, Finetune, Reward, Stop};
use crate::ledger::RunConfig;

/// Per-axis indices of a cell, one per [`Axis`](super::Axis), indexed by the axis
/// (`indices[Axis::Model]`). Serialised as a map from axis name to index; the axes added after
/// the first grids (engine, turns, tool_seconds, judge) default to 0 when absent.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AxisIndices(pub [usize; Axis::COUNT]);

impl std::ops::Index<Axis> for AxisIndices {
    type Output = usize;
    fn index(&self, axis: Axis) -> &usize {
        &self.0[axis as usize]
    }
}

impl std::ops::IndexMut<Axis> for AxisIndices {
    fn index_mut(&mut self, axis: Axis) -> &mut usize {
        &mut self.0[axis as usize]
    }
}

impl serde::Serialize for AxisIndices {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(Axis::COUNT))?;
        for axis in Axis::ALL {
            map.serialize_entry(axis.name(), &self[axis])?;
        }
        map.end()
    }
}

impl<'de> serde::Deserialize<'de> for AxisIndices {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        use serde::de::Error;
        let map = std::collections::BTreeMap::<String, usize>::deserialize(deserializer)?;
        if let Some(unknown) = map.keys().find(|k| Axis::from_name(k).is_none()) {
            return Err(D::Error::unknown_field(unknown, &Axis::NAMES));
        }
        let mut indices = AxisIndices::default();
        for axis in Axis::ALL {
            match map.get(axis.name()) {
                Some(&index) => indices[axis] = index,
                None if axis.defaults_to_first() => {}
                None => return Err(D::Error::missing_field(axis.name())),
            }
        }
        Ok(indices)
    }
}

/// One cell: a complete run configuration plus its budget. Borrowed from the grid, no allocation.
#[derive(Debug, Clone, Copy)]
pub struct Cell<'g> {
    /// Index in the full product of axes.
    pub id: u64,
    /// Per-axis indices.
    pub indices: AxisIndices,
    /// Rollout engine.
    pub engine: &'g crate::catalog::EngineSpec,
    /// Policy model.
    pub model: &'g ModelSpec,
    /// Fine-tuning mode.
    pub finetune: Finetune,
    /// Reward mechanism.
    pub reward: &'g Reward,
    /// Model turns per episode.
    pub turns: f64,
    /// Mean seconds of one tool call.
    pub tool_seconds: f64,
    /// The API judge's id (`none` without one).
    pub judge: &'g str,
    /// Responses per prompt.
    pub group_size: u64,
    /// Response length cap, tokens.
    pub max_response_len: u64,
    /// Update epochs per rollout batch.
    pub update_epochs: u64,
    /// Prompts per step.
    pub prompts_per_step: u64,
    /// Budget or iterations.
    pub stop: Stop,
}

impl Grid {
    /// Axis lengths in decoding order (slowest first).
    pub fn radices(&self) -> [u64; Axis::COUNT] {
        Axis::ALL.map(|axis| self.axes.len(axis) as u64)
    }

    /// Number of cells in the full product of axes, with overflow checks.
    pub fn cell_count(&self) -> Result<u64, String> {
        self.radices()
            .iter()
            .try_fold(1u64, |acc, &n| acc.checked_mul(n))
            .ok_or_else(|| {
                "the product of the axes overflows 2^64 cells; shrink an axis".to_string()
            })
    }

    /// Whether prompts × G passes the `[constraints]`.
    pub fn rollouts_allowed(&self, prompts_per_step: u64, group_size: u64) -> bool {
        let rollouts = prompts_per_step.saturating_mul(group_size);
        self.constraints
            .max_rollouts_per_step
            .is_none_or(|max| rollouts <= max)
            && self
                .constraints
                .min_rollouts_per_step
                .is_none_or(|min| rollouts >= min)
    }

    /// Number of cells that survive the constraints (exact: the constraints involve only prompts
    /// per step and G, so the count is the allowed pairs times the other axes). Saturates at
    /// u64::MAX for grids whose product overflows.
    pub fn valid_cell_count(&self) -> u64 {
        let a = &self.axes;
        let pairs = a
            .group_size
            .iter()
            .flat_map(|&g| a.prompts_per_step.iter().map(move |&b| (b, g)))
            .filter(|&(b, g)| self.rollouts_allowed(b, g))
            .count() as u64;
        Axis::ALL
            .into_iter()
            .filter(|&axis| axis != Axis::GroupSize && axis != Axis::PromptsPerStep)
            .fold(pairs, |acc, axis| {
                acc.saturating_mul(self.axes.len(axis) as u64)
            })
    }

    /// Decodes a cell index into per-axis indices (mixed radix, last axis fastest).
    pub fn decode(&self, id: u64) -> AxisIndices {
        AxisIndices::from_digits(self.digits(id))
    }

    /// A cell index's digits in [`Axis::ALL`](super::Axis::ALL) order.
    fn digits(&self, id: u64) -> [usize; Axis::COUNT] {
        let r = self.radices();
        let mut rest = id;
        let mut digits = [0usize; Axis::COUNT];
        for axis in (0..Axis::COUNT).rev() {
            digits[axis] = (rest % r[axis]) as usize;
            rest /= r[axis];
        }
        digits
    }

    /// The cells with ids in `ids`, in order, each with its id (None where the constraints prune
    /// it). The first id is decoded; the next ones count up digit by digit, with no division per
    /// cell (sweeps walk millions of consecutive ids). `ids` must lie below [`Grid::cell_count`]
    /// (checked in debug builds; past it the ids would wrap around).
    pub fn cells_in(
        &self,
        ids: std::ops::Range<u64>,
    ) -> impl Iterator<Item = (u64, Option<Cell<'_>>)> + '_ {
        debug_assert!(self.cell_count().is_ok_and(|n| ids.end <= n) || ids.is_empty());
        let mut odometer = Odometer::new(self, ids.start);
        ids.map(move |id| {
            let cell = self.cell_with(id, AxisIndices::from_digits(odometer.digits));
            odometer.advance();
            (id, cell)
        })
    }

    /// [`Grid::cells_in`] as a loop that hands `visit` each cell by reference: the same cells in
    /// the same order, built in place (the iterator's 216-byte item was moved twice per cell:
    /// 6.7% of a ten-million-cell sweep's first pass in `memcpy`).
    pub fn for_each_cell_in(
        &self,
        ids: std::ops::Range<u64>,
        mut visit: impl FnMut(u64, Option<&Cell<'_>>),
    ) {
        debug_assert!(self.cell_count().is_ok_and(|n| ids.end <= n) || ids.is_empty());
        let mut odometer = Odometer::new(self, ids.start);
        for id in ids {
            let cell = self.cell_with(id, AxisIndices::from_digits(odometer.digits));
            visit(id, cell.as_ref());
            odometer.advance();
        }
    }

    /// Encodes per-axis indices back into a cell id (the inverse of [`Grid::decode`]).
    pub fn encode(&self, i: &AxisIndices) -> u64 {
        let r = self.radices();
        let digits = i.0;
        digits
            .iter()
            .zip(r)
            .fold(0u64, |acc, (&d, radix)| acc * radix + d as u64)
    }

    /// The cell with this index, or None when the constraints prune it. Panics if `id` is not
    /// below [`Grid::cell_count`].
    pub fn cell(&self, id: u64) -> Option<Cell<'_>> {
        self.cell_with(id, self.decode(id))
    }

    /// The cell `id` whose indices `i` are already decoded.
    fn cell_with(&self, id: u64, i: AxisIndices) -> Option<Cell<'_>> {
        let a = &self.axes;
        let group_size = a.group_size[i[Axis::GroupSize]];
        let prompts_per_step = a.prompts_per_step[i[Axis::PromptsPerStep]];
        if !self.rollouts_allowed(prompts_per_step, group_size) {
            return None;
        }
        let stop = match &a.budget {
            BudgetAxis::Budgets { unit, amounts } => Stop::Budget(Budget {
                amount: amounts[i[Axis::Budget]],
                unit: *unit,
            }),
            BudgetAxis::Iterations(n) => Stop::Iterations(n[i[Axis::Budget]]),
        };
        Some(Cell {
            id,
            indices: i,
            engine: &a.engine[i[Axis::Engine]],
            model: &a.model[i[Axis::Model]],
            finetune: a.finetune[i[Axis::Finetune]],
            reward: &a.reward[i[Axis::Reward]],
            turns: a.turns[i[Axis::Turns]],
            tool_seconds: a.tool_seconds[i[Axis::ToolSeconds]],
            judge: &a.judge[i[Axis::Judge]].id,
            group_size,
            max_response_len: a.max_response_len[i[Axis::MaxResponseLen]],
            update_epochs: a.update_epochs[i[Axis::UpdateEpochs]],
            prompts_per_step,
            stop,
        })
    }
}

/// A cell id's digits (one per axis, the budget last), counted up one id at a time.
struct Odometer {
    digits: [usize; Axis::COUNT],
    radices: [usize; Axis::COUNT],
}

impl Odometer {
    /// The digits of `id` in `grid`'s radices.
    fn new(grid: &Grid, id: u64) -> Self {
        Odometer {
            digits: grid.digits(id),
            radices: grid.radices().map(|r| r as usize),
        }
    }

    /// The next id's digits: the last axis counts up, carrying into the ones before it.
    fn advance(&mut self) {
        for axis in (0..self.digits.len()).rev() {
            self.digits[axis] += 1;
            if self.digits[axis] < self.radices[axis] {
                break;
            }
            self.digits[axis] = 0;
        }
    }
}

impl<'g> Cell<'g> {
    /// The run this cell describes, with the grid's cluster, task and run settings.
    pub fn run_config(&self, grid: &'g Grid) -> RunConfig<'g> {
        RunConfig {
            policy: self.model,
            finetune: self.finetune,
            reward: self.reward,
            group_size: self.group_size,
            max_response_len: self.max_response_len,
            update_epochs: self.update_epochs,
            prompts_per_step: self.prompts_per_step,
            stop: self.stop,
            hardware: &grid.engine_hardware[self.indices[Axis::Engine]],
            task: &grid.task,
            run: grid.run_settings(&self.indices),
            measured_base_score: grid.measured_base_scores[self.indices[Axis::Model]],
            ability_score: grid.ability_scores[self.indices[Axis::Model]],
        }
    }
}
