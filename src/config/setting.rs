//! The run settings that more than one front door sets, each declared once: its name (the grid
//! key, the `cost` flag with dashes, the Python keyword), where it sits in a grid, its unit, its
//! doc line and the range it must lie in. Grids (`spec::sections`), `cost`'s flags (`app/cost`)
//! and the framework importers (through `cost`) check a value with [`check_count`] or
//! [`check_real`], so the same bad value gets the same message whichever door it came through;
//! only the location differs (a file's line and key, a flag, a keyword), added by the caller.
//!
//! The ranges are physical or framework limits, not preferences: a count up to
//! [`MAX_LEVER`] (1e8, beyond any real batch or run), a tensor-parallel degree up
//! to 1,024, a sequence-parallel degree up to 64 (veRL's Ulysses splits the heads), fractions of
//! memory in (0, 1]. Where the doors disagreed before this table existed (`max_num_seqs` allowed
//! 1e8 in a grid and 1e6 as a flag; the rollout memory share allowed 1.0 in a grid only), the
//! grid's range was kept.

use super::agent::{MAX_TOOL_SECONDS, MAX_TURNS};
use super::{MAX_DATASET_PROMPTS, MAX_LENGTH_CV, MAX_LEVER, MAX_PASS_RATE_CONCENTRATION};

/// The range a setting's value must lie in.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Range {
    /// A whole number in `[min, max]`.
    Count {
        /// Smallest accepted value.
        min: u64,
        /// Largest accepted value.
        max: u64,
    },
    /// A finite number of 0 or more.
    NonNegative,
    /// A finite number above 0 and at most `max` (`why`: what lies beyond).
    Positive {
        /// Largest accepted value.
        max: f64,
        /// Why nothing real lies above `max`.
        why: &'static str,
    },
    /// A finite number from `min` to `max`, both included (`why`: what the ends mean).
    Between {
        /// Smallest accepted value.
        min: f64,
        /// Largest accepted value.
        max: f64,
        /// What the range means, in a few words.
        why: &'static str,
    },
    /// A share: above 0 and below 1, or up to 1 when `one_allowed`.
    Fraction {
        /// Whether 1 itself is accepted.
        one_allowed: bool,
    },
}

/// Where a setting sits in a grid file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridTable {
    /// `[hardware]`.
    Hardware,
    /// `[task]`.
    Task,
    /// `[run]`.
    Run,
    /// `[agent]`.
    Agent,
}

impl GridTable {
    /// The table's name as a grid writes it.
    pub fn name(self) -> &'static str {
        match self {
            GridTable::Hardware => "hardware",
            GridTable::Task => "task",
            GridTable::Run => "run",
            GridTable::Agent => "agent",
        }
    }
}

/// One run setting, declared once.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SettingDef {
    /// The setting's name: the grid key, the `cost` flag (`--` and dashes) and the Python keyword.
    pub name: &'static str,
    /// Its table in a grid file.
    pub table: GridTable,
    /// Its unit, in words.
    pub unit: &'static str,
    /// What it is, in one line.
    pub doc: &'static str,
    /// The range it must lie in.
    pub range: Range,
}

const LEVER: u64 = MAX_LEVER as u64;

/// A count from `min` to the largest lever.
const fn count(min: u64) -> Range {
    Range::Count { min, max: LEVER }
}

/// Every setting a grid and `cost` both take (the axes aside: they are lists in a grid).
pub const SETTINGS: &[SettingDef] = &[
    def(
        "gpus",
        GridTable::Hardware,
        "GPUs",
        "GPUs in the cluster",
        count(1),
    ),
    def(
        "usd_per_gpu_hour",
        GridTable::Hardware,
        "US$ per GPU-hour",
        "price of one GPU for one hour",
        Range::Positive {
            max: crate::bounds::USD_PER_GPU_HOUR.max,
            why: "no GPU rents for more than $1,000 an hour; the price is per GPU, not per node",
        },
    ),
    def(
        "rollout_gpu_memory_utilization",
        GridTable::Hardware,
        "share of GPU memory",
        "share of each GPU's memory the rollout engine may use",
        Range::Fraction { one_allowed: true },
    ),
    def(
        "max_num_seqs",
        GridTable::Hardware,
        "sequences",
        "the rollout engine's cap on sequences in flight per replica",
        count(1),
    ),
    def(
        "rollout_tensor_parallel",
        GridTable::Hardware,
        "GPUs",
        "tensor-parallel degree of a rollout replica",
        Range::Count { min: 1, max: 1024 },
    ),
    def(
        "prompt_tokens",
        GridTable::Task,
        "tokens",
        "mean prompt length",
        count(1),
    ),
    def(
        "max_prompt_tokens",
        GridTable::Task,
        "tokens",
        "the prompt cap (veRL data.max_prompt_length)",
        count(1),
    ),
    def(
        "response_length_cv",
        GridTable::Task,
        "ratio",
        "coefficient of variation of response lengths",
        Range::Positive {
            max: MAX_LENGTH_CV.0,
            why: MAX_LENGTH_CV.1,
        },
    ),
    def(
        "dataset_prompts",
        GridTable::Task,
        "prompts",
        "distinct prompts in the training set",
        Range::Positive {
            max: MAX_DATASET_PROMPTS.0,
            why: MAX_DATASET_PROMPTS.1,
        },
    ),
    def(
        "pass_rate_concentration",
        GridTable::Task,
        "ratio",
        "concentration of the Beta pass-rate profile ([task.pass_rate] concentration in a grid)",
        Range::Positive {
            max: MAX_PASS_RATE_CONCENTRATION.0,
            why: MAX_PASS_RATE_CONCENTRATION.1,
        },
    ),
    def(
        "kl_coef",
        GridTable::Run,
        "ratio",
        "the KL coefficient",
        Range::NonNegative,
    ),
    def(
        "step_overhead_seconds",
        GridTable::Run,
        "seconds",
        "fixed seconds per step for weight sync and bookkeeping",
        Range::NonNegative,
    ),
    def(
        "startup_seconds",
        GridTable::Run,
        "seconds",
        "seconds before the first step, once per run (default: from the model's size)",
        Range::NonNegative,
    ),
    def(
        "checkpoint_seconds",
        GridTable::Run,
        "seconds",
        "seconds one checkpoint takes (default: its bytes over the write bandwidth)",
        Range::NonNegative,
    ),
    def(
        "dynamic_sampling_filter_rate",
        GridTable::Run,
        "share of groups",
        "the share of generated groups dynamic sampling drops, as the run logs it",
        Range::Between {
            min: 0.0,
            max: 0.999,
            why: "a share of groups; at 1 no batch would ever fill",
        },
    ),
    def(
        "restarts_per_gpu_day",
        GridTable::Run,
        "restarts per GPU-day",
        "unexpected interruptions per GPU-day, each a restart from the last checkpoint",
        Range::Between {
            min: 0.0,
            max: 1.0,
            why: "a rate per GPU-day; published clusters lose a GPU every 300 to 2,000 GPU-days",
        },
    ),
    def(
        "checkpoint_write_gb_per_second",
        GridTable::Run,
        "GB/s per node",
        "checkpoint write bandwidth per node",
        Range::Positive {
            max: 1000.0,
            why: "no node writes a terabyte a second; the bandwidth is per node, in GB/s",
        },
    ),
    def(
        "checkpoint_every_steps",
        GridTable::Run,
        "steps",
        "steps between checkpoints (0: never)",
        count(0),
    ),
    def(
        "validation_every_steps",
        GridTable::Run,
        "steps",
        "steps between validations (0: never)",
        count(0),
    ),
    def(
        "validation_prompts",
        GridTable::Run,
        "prompts",
        "prompts in the validation set",
        count(0),
    ),
    def(
        "validation_samples_per_prompt",
        GridTable::Run,
        "responses",
        "responses per validation prompt",
        count(1),
    ),
    def(
        "generation_batch_prompts",
        GridTable::Run,
        "prompts",
        "prompts per generation batch under dynamic sampling",
        count(1),
    ),
    def(
        "mini_batch_prompts",
        GridTable::Run,
        "prompts",
        "prompts per optimizer step",
        count(1),
    ),
    def(
        "sequence_parallel",
        GridTable::Run,
        "GPUs",
        "Ulysses sequence-parallel degree of the training passes",
        Range::Count { min: 1, max: 64 },
    ),
    def(
        "max_tokens_per_gpu",
        GridTable::Run,
        "tokens",
        "token budget per GPU of an update micro-batch",
        count(1),
    ),
    def(
        "micro_batch_sequences",
        GridTable::Run,
        "sequences",
        "sequences per GPU per update micro-batch",
        count(1),
    ),
    def(
        "log_prob_micro_batch_sequences",
        GridTable::Run,
        "sequences",
        "sequences per GPU per log-prob micro-batch",
        count(1),
    ),
    def(
        "log_prob_max_tokens_per_gpu",
        GridTable::Run,
        "tokens",
        "token budget per GPU of a log-prob micro-batch",
        count(1),
    ),
    def(
        "turns",
        GridTable::Agent,
        "turns",
        "mean model turns per episode (1: single-turn)",
        Range::Between {
            min: 1.0,
            max: MAX_TURNS,
            why: "1 is a single-turn rollout",
        },
    ),
    def(
        "observation_tokens",
        GridTable::Agent,
        "tokens",
        "mean tokens a tool returns into the context per call",
        Range::NonNegative,
    ),
    def(
        "turns_cv",
        GridTable::Agent,
        "ratio",
        "coefficient of variation of turns per episode",
        Range::Between {
            min: 0.0,
            max: 10.0,
            why: "0 when every episode has the same turns",
        },
    ),
    def(
        "tool_seconds",
        GridTable::Agent,
        "seconds",
        "mean seconds of one tool call",
        Range::Between {
            min: 0.0,
            max: MAX_TOOL_SECONDS,
            why: "at most a day per call: check the unit, seconds",
        },
    ),
    def(
        "tool_seconds_p99",
        GridTable::Agent,
        "seconds",
        "99th percentile of a tool call's seconds (0: no tail given)",
        Range::NonNegative,
    ),
    def(
        "tool_failure_rate",
        GridTable::Agent,
        "share of calls",
        "share of tool calls that fail and are retried",
        Range::Between {
            min: 0.0,
            max: 0.95,
            why: "a share of calls, retried until they succeed",
        },
    ),
    def(
        "sandbox_usd_per_hour",
        GridTable::Agent,
        "US$ per hour",
        "price of one sandbox for one hour",
        Range::NonNegative,
    ),
    def(
        "reward_sandbox_seconds",
        GridTable::Agent,
        "seconds",
        "sandbox seconds the reward's tests take per rollout",
        Range::NonNegative,
    ),
    def(
        "judge_usd_per_million_input",
        GridTable::Agent,
        "US$ per million tokens",
        "the API judge's input price",
        Range::NonNegative,
    ),
    def(
        "judge_usd_per_million_output",
        GridTable::Agent,
        "US$ per million tokens",
        "the API judge's output price",
        Range::NonNegative,
    ),
    def(
        "judge_output_tokens",
        GridTable::Agent,
        "tokens",
        "tokens of one verdict",
        Range::NonNegative,
    ),
    def(
        "judge_tokens_per_minute",
        GridTable::Agent,
        "tokens per minute",
        "the API's rate limit (0: none)",
        Range::NonNegative,
    ),
];

/// A table row (a `const fn`, so the table is a constant).
const fn def(
    name: &'static str,
    table: GridTable,
    unit: &'static str,
    doc: &'static str,
    range: Range,
) -> SettingDef {
    SettingDef {
        name,
        table,
        unit,
        doc,
        range,
    }
}

/// The declaration of `name`. Panics on a name the table does not hold: a programming error,
/// caught by every test that reads a grid or prices a run.
pub fn setting(name: &str) -> &'static SettingDef {
    SETTINGS
        .iter()
        .find(|s| s.name == name)
        .unwrap_or_else(|| panic!("`{name}` is not in config::setting::SETTINGS"))
}

/// `n` when the count setting `name` accepts it, else what is wrong (the caller adds where).
pub fn check_count(name: &str, n: i64) -> Result<u64, String> {
    let Range::Count { min, max } = setting(name).range else {
        panic!("`{name}` is not a count");
    };
    if n < min as i64 {
        return Err(format!(
            "{n} is too small; use a whole number of at least {min}"
        ));
    }
    if n > max as i64 {
        return Err(format!("{n} is too large; use at most {max}"));
    }
    Ok(n as u64)
}

/// A number as a message shows it: as written below 1e15, in scientific notation above (a
/// hostile 1e308 is not 309 digits).
fn shown(x: f64) -> String {
    if x.abs() >= 1e15 {
        format!("{x:e}")
    } else {
        format!("{x}")
    }
}

/// `x` when the number setting `name` accepts it, else what is wrong (the caller adds where).
pub fn check_real(name: &str, x: f64) -> Result<f64, String> {
    let x_text = shown(x);
    if !x.is_finite() {
        return Err(format!("{x} is not a finite number"));
    }
    match setting(name).range {
        Range::Count { .. } => panic!("`{name}` is a count"),
        Range::NonNegative if x < 0.0 => Err(format!("{x_text} must be 0 or more")),
        Range::Positive { .. } if x <= 0.0 => Err(format!("{x_text} must be greater than 0")),
        Range::Positive { max, why } if x > max => Err(format!(
            "{x_text} is above {} ({why}); check the units",
            shown(max)
        )),
        Range::Between { min, max, why } if !(min..=max).contains(&x) => Err(format!(
            "{x_text} must lie between {} and {} ({why})",
            shown(min),
            shown(max)
        )),
        Range::Fraction { one_allowed } if !(x > 0.0 && (x < 1.0 || (one_allowed && x == 1.0))) => {
            let range = if one_allowed {
                "in (0, 1]"
            } else {
                "strictly between 0 and 1"
            };
            Err(format!("{x_text} must be a fraction {range}"))
        }
        _ => Ok(x),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_declared_once_and_counts_and_numbers_are_checked_by_kind() {
        let mut names: Vec<&str> = SETTINGS.iter().map(|s| s.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), SETTINGS.len());
        assert_eq!(check_count("gpus", 8), Ok(8));
        assert!(check_count("gpus", 0).unwrap_err().contains("at least 1"));
        assert!(
            check_count("sequence_parallel", 65)
                .unwrap_err()
                .contains("at most 64")
        );
        assert_eq!(check_real("kl_coef", 0.0), Ok(0.0));
        assert!(
            check_real("kl_coef", -0.1)
                .unwrap_err()
                .contains("0 or more")
        );
        assert!(
            check_real("usd_per_gpu_hour", 2000.0)
                .unwrap_err()
                .contains("per GPU")
        );
        assert!(check_real("rollout_gpu_memory_utilization", 1.0).is_ok());
        assert!(check_real("rollout_gpu_memory_utilization", 1.5).is_err());
        assert!(
            check_real("kl_coef", f64::NAN)
                .unwrap_err()
                .contains("finite")
        );
    }
}
