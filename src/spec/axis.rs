//! The axes of a grid, named once: the order cells are decoded in, the key each has in a grid
//! file and in every table, and typed access to a cell's index on each.

use std::fmt;

use super::AxisIndices;

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
    pub const NAMES: [&'static str; Axis::COUNT] = {
        let mut names = [""; Axis::COUNT];
        let mut i = 0;
        while i < Axis::ALL.len() {
            names[i] = Axis::ALL[i].name();
            i += 1;
        }
        names
    };

    /// The keys of a grid's `[axes]` table: every axis, and `iterations` (the alternative to
    /// `budget`).
    pub const GRID_KEYS: [&'static str; Axis::COUNT + 1] = {
        let mut keys = ["iterations"; Axis::COUNT + 1];
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

    /// The columns the axis has in every cell table, in order: its name, and for the axes whose
    /// value holds two quantities the second one (the LoRA rank beside the mode, the reward's
    /// model beside its kind, the budget's unit beside its amount). Values:
    /// [`Axes::cell_values`](super::Axes::cell_values).
    pub const fn columns(self) -> &'static [&'static str] {
        match self {
            Axis::Finetune => &["finetune", "lora_rank"],
            Axis::Reward => &["reward", "reward_model"],
            Axis::Budget => &["budget", "budget_unit"],
            _ => std::slice::from_ref(&Axis::NAMES[self as usize]),
        }
    }

    /// The kind of value in each of [`Axis::columns`] (the Parquet and Python tables' column
    /// types; the budget's amount is a real whether it counts dollars or iterations).
    pub const fn column_kinds(self) -> &'static [ColumnKind] {
        use ColumnKind::{Count, Real, Text};
        match self {
            Axis::Engine | Axis::Model | Axis::Judge => &[Text],
            Axis::Finetune => &[Text, Count],
            Axis::Reward => &[Text, Text],
            Axis::Turns | Axis::ToolSeconds => &[Real],
            Axis::GroupSize | Axis::MaxResponseLen | Axis::UpdateEpochs | Axis::PromptsPerStep => {
                &[Count]
            }
            Axis::Budget => &[Real, Text],
        }
    }

    /// The kind of an axis column by its name ([`Axis::CELL_COLUMNS`]); None for other names.
    pub fn column_kind(name: &str) -> Option<ColumnKind> {
        Axis::ALL.into_iter().find_map(|axis| {
            let k = axis.columns().iter().position(|&c| c == name)?;
            Some(axis.column_kinds()[k])
        })
    }

    /// How many cell-table columns the axes have together.
    pub const COLUMN_COUNT: usize = {
        let mut n = 0;
        let mut i = 0;
        while i < Axis::ALL.len() {
            n += Axis::ALL[i].columns().len();
            i += 1;
        }
        n
    };

    /// Every axis's columns ([`Axis::columns`]) in [`Axis::ALL`] order: the cell columns of every
    /// table (`cells.csv`, `frontier.csv`, `shortlist.csv`).
    pub const CELL_COLUMNS: [&'static str; Axis::COLUMN_COUNT] = {
        let mut names = [""; Axis::COLUMN_COUNT];
        let (mut i, mut k) = (0, 0);
        while i < Axis::ALL.len() {
            let columns = Axis::ALL[i].columns();
            let mut j = 0;
            while j < columns.len() {
                names[k] = columns[j];
                k += 1;
                j += 1;
            }
            i += 1;
        }
        names
    };

    /// Whether the axis's values are ordered, so that neighbours on it are close runs (the
    /// shortlist folds a cell one step away into its regime). Engines, models, rewards and
    /// judges are categories: any two differ. The fine-tuning axis is ordered among its LoRA
    /// ranks only (`analysis::shortlist::near_duplicate`).
    pub const fn is_ordered(self) -> bool {
        !matches!(
            self,
            Axis::Engine | Axis::Model | Axis::Finetune | Axis::Reward | Axis::Judge
        )
    }

    /// The lever a team moves through this axis (`analysis::why` splits a regime's advantage
    /// over levers); None for the budget, which is what the levers share.
    pub const fn lever(self) -> Option<Lever> {
        Some(match self {
            Axis::Model => Lever::ModelSize,
            Axis::UpdateEpochs => Lever::Updates,
            Axis::GroupSize | Axis::PromptsPerStep => Lever::Rollouts,
            Axis::MaxResponseLen => Lever::Cap,
            Axis::Reward | Axis::Judge => Lever::Reward,
            Axis::Finetune => Lever::Lora,
            Axis::Engine | Axis::Turns | Axis::ToolSeconds => Lever::Setup,
            Axis::Budget => return None,
        })
    }
}

/// The kind of value in an axis's table column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnKind {
    /// Text: an id or a name.
    Text,
    /// A non-negative integer.
    Count,
    /// A real number.
    Real,
}

/// A lever of the outcome model: what a team chooses, as one or more axes
/// ([`Axis::lever`]); `analysis::why` splits a regime's advantage over them, moving the fields
/// of the outcome model's signal each one moves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Lever {
    /// Policy size (and its base score, measured or the default for the size).
    ModelSize,
    /// Optimizer updates: iterations and update epochs.
    Updates,
    /// Useful rollouts per step, coverage of G, and the share of the data a step uses.
    Rollouts,
    /// The response cap and the truncation it causes.
    Cap,
    /// The reward's kind (rule, PRM, ORM, judge).
    Reward,
    /// LoRA rank or full fine-tuning.
    Lora,
    /// The rollout's setup: the engine (dollars only), the agent's turns and tool latency.
    Setup,
}

impl Lever {
    /// Every lever, in display order.
    pub const ALL: [Lever; 7] = [
        Lever::ModelSize,
        Lever::Updates,
        Lever::Rollouts,
        Lever::Cap,
        Lever::Reward,
        Lever::Lora,
        Lever::Setup,
    ];

    /// The lever's name in text and tables.
    pub fn label(self) -> &'static str {
        match self {
            Lever::ModelSize => "model size",
            Lever::Updates => "updates",
            Lever::Rollouts => "rollouts",
            Lever::Cap => "cap",
            Lever::Reward => "reward",
            Lever::Lora => "LoRA",
            Lever::Setup => "engine and environment",
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
    fn every_axis_column_has_a_kind() {
        for axis in Axis::ALL {
            assert_eq!(axis.columns().len(), axis.column_kinds().len(), "{axis}");
            assert_eq!(axis.columns()[0], axis.name());
        }
        assert_eq!(Axis::CELL_COLUMNS.len(), 15);
        assert_eq!(Axis::column_kind("lora_rank"), Some(ColumnKind::Count));
        assert_eq!(Axis::column_kind("iterations"), None);
    }

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
