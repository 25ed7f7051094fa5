//! The values of a grid's axes, validated: what each axis holds, its values as grids write
//! them, and a cell's value on it as table columns.
//!
//! Adding an axis touches four files (`docs/developers.md`, "Adding an axis"): the axis's name,
//! columns, order and lever (`axis.rs`); its values here (a field of [`Axes`], its length, its
//! labels and its cell values); how a grid's `[axes]` table gives them (`axes_table.rs`); and
//! what a cell's run takes from it (`cells.rs`, and the model code that gives it a meaning).

use crate::catalog::ModelSpec;
use crate::config::{BudgetUnit, Finetune, Reward};
use crate::format::{NumberText, number_text};

use super::Axis;

/// The budget axis: budgets in one unit, or a fixed number of iterations.
#[derive(Debug, Clone, PartialEq)]
pub enum BudgetAxis {
    /// Each cell spends this budget; iterations follow.
    Budgets {
        /// The common unit.
        unit: BudgetUnit,
        /// Amounts in that unit.
        amounts: Vec<f64>,
    },
    /// Each cell runs this many iterations; the spend follows.
    Iterations(Vec<u64>),
}

impl BudgetAxis {
    /// Number of values on the axis.
    pub fn len(&self) -> usize {
        match self {
            BudgetAxis::Budgets { amounts, .. } => amounts.len(),
            BudgetAxis::Iterations(v) => v.len(),
        }
    }

    /// Whether the axis is empty (never true for a validated grid).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Axes {
    /// How many values `axis` has.
    pub fn len(&self, axis: Axis) -> usize {
        match axis {
            Axis::Engine => self.engine.len(),
            Axis::Model => self.model.len(),
            Axis::Finetune => self.finetune.len(),
            Axis::Reward => self.reward.len(),
            Axis::Turns => self.turns.len(),
            Axis::ToolSeconds => self.tool_seconds.len(),
            Axis::Judge => self.judge.len(),
            Axis::GroupSize => self.group_size.len(),
            Axis::MaxResponseLen => self.max_response_len.len(),
            Axis::UpdateEpochs => self.update_epochs.len(),
            Axis::PromptsPerStep => self.prompts_per_step.len(),
            Axis::Budget => self.budget.len(),
        }
    }

    /// The values of `axis` as grids write them (`lora:64`, `prm:qwen2.5-math-prm-7b`, `1e17`).
    pub fn labels(&self, axis: Axis) -> Vec<String> {
        (0..self.len(axis)).map(|i| self.label(axis, i)).collect()
    }

    /// The value at `index` on `axis` as grids write it (`lora:64`, `prm:qwen2.5-math-prm-7b`,
    /// `1e17`: a budget without its unit).
    pub fn label(&self, axis: Axis, index: usize) -> String {
        match axis {
            Axis::Finetune => self.finetune[index].to_string(),
            Axis::Reward => self.reward[index].to_string(),
            _ => self.cell_values(axis, index).as_slice()[0].to_string(),
        }
    }
}

/// The axes of a grid, validated.
#[derive(Debug, Clone)]
pub struct Axes {
    /// Rollout engines (`[axes] engine`; otherwise the one of `[hardware] engine`).
    pub engine: Vec<crate::catalog::EngineSpec>,
    /// Policy models.
    pub model: Vec<ModelSpec>,
    /// Fine-tuning modes.
    pub finetune: Vec<Finetune>,
    /// Reward mechanisms.
    pub reward: Vec<Reward>,
    /// Mean model turns per episode (`[axes] turns`; otherwise the one of `[agent] turns`).
    pub turns: Vec<f64>,
    /// Mean seconds of one tool call (`[axes] tool_seconds`; otherwise `[agent] tool_seconds`).
    pub tool_seconds: Vec<f64>,
    /// API judges (`[axes] judge`; otherwise the one of `[agent]`, or none).
    pub judge: Vec<JudgeChoice>,
    /// Responses per prompt, G.
    pub group_size: Vec<u64>,
    /// Response length caps, tokens.
    pub max_response_len: Vec<u64>,
    /// Passes over each rollout batch (ppo_epochs / num_iterations).
    pub update_epochs: Vec<u64>,
    /// Prompts per step, B.
    pub prompts_per_step: Vec<u64>,
    /// Budgets or iterations.
    pub budget: BudgetAxis,
}

/// One value of the judge axis: an API judge by its catalog id, or `none`.
#[derive(Debug, Clone, PartialEq)]
pub struct JudgeChoice {
    /// The catalog's `[[api]]` id, `none`, or `custom` for prices given in `[agent]`.
    pub id: String,
    /// Its prices and limits (None for `none`).
    pub api: Option<crate::config::ApiJudge>,
}

/// A cell's value on an axis, in one table column ([`Axis::columns`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum AxisValue<'g> {
    /// A name or id (`qwen2.5-7b`, `lora`, `rule`).
    Text(&'g str),
    /// A count (G, the cap in tokens, a LoRA rank).
    Count(u64),
    /// A real number (mean turns, tool seconds).
    Real(f64),
    /// A number as the grid wrote it (the budget's amount, or a fixed iteration count).
    Number(NumberText),
}

impl std::fmt::Display for AxisValue<'_> {
    /// The value as the tables write it (reals with about seven significant digits:
    /// [`crate::format::number`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            AxisValue::Text(text) => f.write_str(text),
            AxisValue::Count(n) => write!(f, "{n}"),
            AxisValue::Real(x) => f.write_str(number_text(*x).as_str()),
            AxisValue::Number(text) => f.write_str(text.as_str()),
        }
    }
}

/// A cell's values on one axis: one per column of [`Axis::columns`] (one or two).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AxisValues<'g> {
    values: [AxisValue<'g>; 2],
    len: usize,
}

impl<'g> AxisValues<'g> {
    fn one(value: AxisValue<'g>) -> Self {
        AxisValues {
            values: [value, value],
            len: 1,
        }
    }

    fn two(first: AxisValue<'g>, second: AxisValue<'g>) -> Self {
        AxisValues {
            values: [first, second],
            len: 2,
        }
    }

    /// The values, in column order.
    pub fn as_slice(&self) -> &[AxisValue<'g>] {
        &self.values[..self.len]
    }

    /// The values, in column order, by value (no allocation).
    pub fn iter(self) -> impl Iterator<Item = AxisValue<'g>> {
        self.values.into_iter().take(self.len)
    }
}

impl Axes {
    /// The integer values of an ordered numeric axis ([`Axis::NUMERIC`]); None otherwise.
    pub fn numeric_values(&self, axis: Axis) -> Option<&[u64]> {
        match axis {
            Axis::GroupSize => Some(&self.group_size),
            Axis::MaxResponseLen => Some(&self.max_response_len),
            Axis::UpdateEpochs => Some(&self.update_epochs),
            Axis::PromptsPerStep => Some(&self.prompts_per_step),
            _ => None,
        }
    }

    /// The value at `index` on `axis` as table columns ([`Axis::columns`]): what `cells.csv`,
    /// `frontier.csv` and the shortlist write for a cell.
    pub fn cell_values(&self, axis: Axis, index: usize) -> AxisValues<'_> {
        use AxisValue::{Count, Number, Real, Text};
        let one = AxisValues::one;
        match axis {
            Axis::Engine => one(Text(&self.engine[index].id)),
            Axis::Model => one(Text(&self.model[index].id)),
            Axis::Finetune => {
                let f = self.finetune[index];
                AxisValues::two(Text(f.mode()), Count(f.lora_rank()))
            }
            Axis::Reward => {
                let r = &self.reward[index];
                AxisValues::two(Text(r.kind.as_str()), Text(r.model_id()))
            }
            Axis::Turns => one(Real(self.turns[index])),
            Axis::ToolSeconds => one(Real(self.tool_seconds[index])),
            Axis::Judge => one(Text(&self.judge[index].id)),
            Axis::GroupSize | Axis::MaxResponseLen | Axis::UpdateEpochs | Axis::PromptsPerStep => {
                let values = self.numeric_values(axis).expect("a numeric axis");
                one(Count(values[index]))
            }
            Axis::Budget => match &self.budget {
                BudgetAxis::Budgets { unit, amounts } => {
                    AxisValues::two(Number(number_text(amounts[index])), Text(unit.as_str()))
                }
                BudgetAxis::Iterations(n) => {
                    AxisValues::two(Number(NumberText::integer(n[index])), Text("iterations"))
                }
            },
        }
    }
}
