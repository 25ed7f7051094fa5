//! The axes of a grid, named once: the order cells are decoded in, the key each has in a grid
//! file and in every table, and typed access to a cell's index on each.

use std::fmt;

use super::{Axes, AxisIndices};

/// One axis of a grid, in decoding order (slowest first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Axis {
    /// Rollout engine (slowest, so a grid with one engine keeps the cell ids it had before the
    /// axis existed).
    Engine,
    /// Policy model.
    Model,
    /// Fine-tuning mode.
    Finetune,
    /// Reward mechanism.
    Reward,
    /// Model turns per episode (multi-turn agents; 1 for single-turn rollouts).
    Turns,
    /// Mean seconds of one tool call (multi-turn agents).
    ToolSeconds,
    /// The API judge that scores each rollout (`none`, or an `[[api]]` id of the catalog).
    Judge,
    /// Responses per prompt, G.
    GroupSize,
    /// Response cap, tokens.
    MaxResponseLen,
    /// Update epochs per rollout batch.
    UpdateEpochs,
    /// Prompts per step, B.
    PromptsPerStep,
    /// Budget (or iterations).
    Budget,
}

impl Axis {
    /// How many axes a grid has.
    pub const COUNT: usize = 12;

    /// Every axis, in decoding order (the last varies fastest along cell ids); each axis's
    /// position is its discriminant (`axis as usize`).
    pub const ALL: [Axis; Axis::COUNT] = [
        Axis::Engine,
        Axis::Model,
        Axis::Finetune,
        Axis::Reward,
        Axis::Turns,
        Axis::ToolSeconds,
        Axis::Judge,
        Axis::GroupSize,
        Axis::MaxResponseLen,
        Axis::UpdateEpochs,
        Axis::PromptsPerStep,
        Axis::Budget,
    ];

    /// The integer levers: the axes with ordered numeric values, whose edges the shortlist
    /// flags.
    pub const NUMERIC: [Axis; 4] = [
        Axis::GroupSize,
        Axis::MaxResponseLen,
        Axis::UpdateEpochs,
        Axis::PromptsPerStep,
    ];

    /// The key in grid files and the column name in tables.
    pub const fn name(self) -> &'static str {
        match self {
            Axis::Engine => "engine",
            Axis::Model => "model",
            Axis::Finetune => "finetune",
            Axis::Reward => "reward",
            Axis::Turns => "turns",
            Axis::ToolSeconds => "tool_seconds",
            Axis::Judge => "judge",
            Axis::GroupSize => "group_size",
            Axis::MaxResponseLen => "max_response_len",
            Axis::UpdateEpochs => "update_epochs",
            Axis::PromptsPerStep => "prompts_per_step",
            Axis::Budget => "budget",
        }
    }

    /// Every axis's name, in [`Axis::ALL`] order (the cell columns of the tables).
    pub const NAMES: [&'static str; 12] = {
        let mut names = [""; 12];
        let mut i = 0;
        while i < Axis::ALL.len() {
            names[i] = Axis::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The keys of a grid's `[axes]` table: every axis, and `iterations` (the alternative to
    /// `budget`).
    pub const GRID_KEYS: [&'static str; 13] = {
        let mut keys = ["iterations"; 13];
        let mut i = 0;
        while i < Axis::NAMES.len() {
            keys[i] = Axis::NAMES[i];
            i += 1;
        }
        keys
    };

    /// The axis of a name ([`Axis::name`]).
    pub fn from_name(name: &str) -> Option<Axis> {
        Axis::ALL.into_iter().find(|a| a.name() == name)
    }

    /// Whether a record written before the axis existed (with no index on it) means its first
    /// value: the axes added after the first grids.
    pub const fn defaults_to_first(self) -> bool {
        matches!(
            self,
            Axis::Engine | Axis::Turns | Axis::ToolSeconds | Axis::Judge
        )
    }

    /// The axis's values when it is numeric ([`Axis::NUMERIC`]); None otherwise.
    pub fn numeric_values(self, axes: &Axes) -> Option<&[u64]> {
        match self {
            Axis::GroupSize => Some(&axes.group_size),
            Axis::MaxResponseLen => Some(&axes.max_response_len),
            Axis::UpdateEpochs => Some(&axes.update_epochs),
            Axis::PromptsPerStep => Some(&axes.prompts_per_step),
            _ => None,
        }
    }
}

impl fmt::Display for Axis {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl AxisIndices {
    /// The index on `axis`.
    pub fn get(&self, axis: Axis) -> usize {
        self[axis]
    }

    /// The same indices with `axis` moved to `index`.
    pub fn with(mut self, axis: Axis, index: usize) -> Self {
        self[axis] = index;
        self
    }

    /// Indices from digits in [`Axis::ALL`] order.
    pub fn from_digits(digits: [usize; Axis::COUNT]) -> Self {
        AxisIndices(digits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indices_round_trip_through_every_axis() {
        let digits = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12];
        let indices = AxisIndices::from_digits(digits);
        for (k, axis) in Axis::ALL.iter().enumerate() {
            assert_eq!(indices.get(*axis), digits[k], "{axis}");
        }
        assert_eq!(indices.with(Axis::Reward, 9).get(Axis::Reward), 9);
    }
}
