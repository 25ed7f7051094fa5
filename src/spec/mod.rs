//! Grid specs: parse a TOML grid, validate every value with a one-line error that names the file,
//! line and field, and expand it into cells decoded from their index (never materialised).
//!
//! The file format is documented in the README ("Grid spec"); `grids/race-pilot.toml` is the
//! annotated example.

mod axis;
mod cells;
mod describe;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use sha2::{Digest, Sha256};

use crate::catalog::{Catalog, ModelSpec};
use crate::config::{
    Algorithm, Budget, BudgetUnit, Finetune, HARDWARE_DEFAULTS, Hardware, MAX_LEVER, OldLogprob,
    Reward, RunSettings, Schedule, Task,
};
use crate::error::{Error, Result, suggestion};
use crate::outcome::{OutcomeParams, PARAM_NAMES, Param};
use crate::toml_text::{line_of_offset, locate_key, toml_error};

pub use axis::Axis;
pub use cells::{AxisIndices, Cell};
pub use describe::describe;

/// Prunes the product of axes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Constraints {
    /// Upper bound on rollouts per step, prompts × G (IsoCompute caps it by hardware).
    pub max_rollouts_per_step: Option<u64>,
    /// Lower bound on rollouts per step.
    pub min_rollouts_per_step: Option<u64>,
}

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

/// The axes of a grid, validated.
#[derive(Debug, Clone)]
pub struct Axes {
    /// Policy models.
    pub model: Vec<ModelSpec>,
    /// Fine-tuning modes.
    pub finetune: Vec<Finetune>,
    /// Reward mechanisms.
    pub reward: Vec<Reward>,
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

/// A validated grid.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Grid name (output folder name).
    pub name: String,
    /// What question the grid answers.
    pub description: String,
    /// Seed for anything random downstream.
    pub seed: u64,
    /// The file the grid came from.
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// Cluster.
    pub hardware: Hardware,
    /// Task.
    pub task: Task,
    /// Run settings.
    pub run: RunSettings,
    /// Axes.
    pub axes: Axes,
    /// Pruning rules.
    pub constraints: Constraints,
    /// Target metric name, if given.
    pub metric: Option<String>,
    /// The outcome prior's parameters (defaults, overridden by `[outcome]`, or calibrated).
    pub outcome: OutcomeParams,
    /// Whether `outcome` is the prior or a calibration.
    pub outcome_state: crate::outcome::OutcomeState,
}

// ---------------------------------------------------------------------------------------------
// Raw, serde-facing structure: only key names and table shapes are checked here; every value is
// kept as a TOML value so that validation can say exactly what is wrong with it.

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGrid {
    name: Option<toml::Value>,
    description: Option<toml::Value>,
    seed: Option<toml::Value>,
    hardware: Option<RawHardware>,
    #[serde(default)]
    task: RawTask,
    axes: Option<RawAxes>,
    #[serde(default)]
    run: RawRun,
    #[serde(default)]
    constraints: RawConstraints,
    #[serde(default)]
    outcome: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawHardware {
    gpu: Option<toml::Value>,
    gpus: Option<toml::Value>,
    usd_per_gpu_hour: Option<toml::Value>,
    schedule: Option<toml::Value>,
    async_rollout_fraction: Option<toml::Value>,
    rollout_gpu_memory_utilization: Option<toml::Value>,
    max_num_seqs: Option<toml::Value>,
    usable_memory_fraction: Option<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawTask {
    prompt_tokens: Option<toml::Value>,
    mean_response_tokens: Option<toml::Value>,
    response_length_cv: Option<toml::Value>,
    pass_rate: Option<RawPassRate>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPassRate {
    mean: Option<toml::Value>,
    concentration: Option<toml::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAxes {
    model: Option<toml::Value>,
    finetune: Option<toml::Value>,
    reward: Option<toml::Value>,
    group_size: Option<toml::Value>,
    max_response_len: Option<toml::Value>,
    update_epochs: Option<toml::Value>,
    prompts_per_step: Option<toml::Value>,
    budget: Option<toml::Value>,
    iterations: Option<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawRun {
    algorithm: Option<toml::Value>,
    kl_reference: Option<toml::Value>,
    kl_coef: Option<toml::Value>,
    prefix_cache: Option<toml::Value>,
    dynamic_sampling: Option<toml::Value>,
    old_logprob: Option<toml::Value>,
    gradient_checkpointing: Option<toml::Value>,
    step_overhead_seconds: Option<toml::Value>,
    max_tokens_per_gpu: Option<toml::Value>,
    judge_rubric_tokens: Option<toml::Value>,
    judge_verdict_tokens: Option<toml::Value>,
    critic: Option<toml::Value>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawConstraints {
    max_rollouts_per_step: Option<toml::Value>,
    min_rollouts_per_step: Option<toml::Value>,
}

/// Valid keys per table, for "did you mean" suggestions.
const KEYS: &[(&str, &[&str])] = &[
    (
        "",
        &[
            "name",
            "description",
            "seed",
            "hardware",
            "task",
            "axes",
            "run",
            "constraints",
            "outcome",
        ],
    ),
    (
        "hardware",
        &[
            "gpu",
            "gpus",
            "usd_per_gpu_hour",
            "schedule",
            "async_rollout_fraction",
            "rollout_gpu_memory_utilization",
            "max_num_seqs",
            "usable_memory_fraction",
        ],
    ),
    (
        "task",
        &[
            "prompt_tokens",
            "mean_response_tokens",
            "response_length_cv",
            "pass_rate",
        ],
    ),
    ("task.pass_rate", &["mean", "concentration"]),
    (
        "axes",
        &[
            "model",
            "finetune",
            "reward",
            "group_size",
            "max_response_len",
            "update_epochs",
            "prompts_per_step",
            "budget",
            "iterations",
        ],
    ),
    (
        "run",
        &[
            "algorithm",
            "kl_reference",
            "kl_coef",
            "prefix_cache",
            "dynamic_sampling",
            "old_logprob",
            "gradient_checkpointing",
            "step_overhead_seconds",
            "max_tokens_per_gpu",
            "judge_rubric_tokens",
            "judge_verdict_tokens",
            "critic",
        ],
    ),
    (
        "constraints",
        &["max_rollouts_per_step", "min_rollouts_per_step"],
    ),
    ("outcome", &["metric"]),
];

/// Reads, parses and validates a grid file.
pub fn load(path: &Path, catalog: &Catalog) -> Result<Grid> {
    let bytes = std::fs::read(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::in_file(
                path,
                None,
                "",
                "file not found; check the path (bundled grids are in grids/)",
            )
        } else {
            Error::io(path, e)
        }
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| {
        Error::in_file(
            path,
            None,
            "",
            "not valid UTF-8 text; save the grid as UTF-8",
        )
    })?;
    let mut grid = parse(&text, path, catalog)?;
    grid.sha256 = hex(&Sha256::digest(&bytes));
    Ok(grid)
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Parses and validates grid text; `path` is used in messages only.
pub fn parse(text: &str, path: &Path, catalog: &Catalog) -> Result<Grid> {
    let raw: RawGrid = toml::from_str(text).map_err(|e| unknown_key_error(path, text, &e))?;
    let v = Validator { text, path };

    let name = match &raw.name {
        Some(value) => v.string(value, None, "name")?,
        None => {
            return Err(v.missing(
                None,
                "name",
                "add `name = \"my-grid\"` at the top (it names the output folder)",
            ));
        }
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(v.err(None, "name", format!("`{name}` must be non-empty and use only letters, digits, `-`, `_` or `.` (it names the output folder)")));
    }
    let description = match &raw.description {
        Some(value) => v.string(value, None, "description")?,
        None => String::new(),
    };
    let seed = match &raw.seed {
        Some(value) => v.integer(value, None, "seed", 0, i64::MAX)? as u64,
        None => 0,
    };

    let Some(rh) = raw.hardware else {
        return Err(v.missing(
            None,
            "hardware",
            "add a [hardware] table with `gpu` and `gpus`",
        ));
    };
    let hw = "hardware";
    let gpu_id = match &rh.gpu {
        Some(value) => v.string(value, Some(hw), "gpu")?,
        None => {
            return Err(v.missing(
                Some(hw),
                "gpu",
                "add `gpu = \"h100-sxm\"` (see `rlfrontier catalog gpus`)",
            ));
        }
    };
    let gpu = catalog
        .gpu(&gpu_id)
        .map_err(|m| v.err(Some(hw), "gpu", m))?
        .clone();
    let gpus = match &rh.gpus {
        Some(value) => v.integer(value, Some(hw), "gpus", 1, MAX_LEVER)? as u64,
        None => {
            return Err(v.missing(
                Some(hw),
                "gpus",
                "add `gpus = 8` (the number of GPUs in the cluster)",
            ));
        }
    };
    let usd_per_gpu_hour = match &rh.usd_per_gpu_hour {
        Some(value) => v.positive(value, Some(hw), "usd_per_gpu_hour")?,
        None => gpu.usd_per_gpu_hour,
    };
    let schedule = match &rh.schedule {
        None => HARDWARE_DEFAULTS.schedule,
        Some(value) => match v.string(value, Some(hw), "schedule")?.as_str() {
            "colocated" => Schedule::Colocated,
            "async" => Schedule::Async,
            other => {
                return Err(v.err(
                    Some(hw),
                    "schedule",
                    format!(
                        "`{other}` is not a schedule; {}",
                        suggestion(other, ["colocated", "async"])
                    ),
                ));
            }
        },
    };
    let async_rollout_fraction = v.fraction_or(
        &rh.async_rollout_fraction,
        Some(hw),
        "async_rollout_fraction",
        HARDWARE_DEFAULTS.async_rollout_fraction,
        false,
    )?;
    if schedule == Schedule::Async && gpus < 2 {
        return Err(v.err(Some(hw), "gpus", "the async schedule needs at least 2 GPUs (one pool generates, one trains); use schedule = \"colocated\""));
    }
    let rollout_gpu_memory_utilization = v.fraction_or(
        &rh.rollout_gpu_memory_utilization,
        Some(hw),
        "rollout_gpu_memory_utilization",
        HARDWARE_DEFAULTS.rollout_gpu_memory_utilization,
        true,
    )?;
    let max_num_seqs = match &rh.max_num_seqs {
        Some(value) => v.integer(value, Some(hw), "max_num_seqs", 1, MAX_LEVER)? as u64,
        None => HARDWARE_DEFAULTS.max_num_seqs,
    };
    let usable_memory_fraction = v.fraction_or(
        &rh.usable_memory_fraction,
        Some(hw),
        "usable_memory_fraction",
        HARDWARE_DEFAULTS.usable_memory_fraction,
        true,
    )?;
    let hardware = Hardware {
        gpu,
        gpus,
        usd_per_gpu_hour,
        schedule,
        async_rollout_fraction,
        rollout_gpu_memory_utilization,
        max_num_seqs,
        usable_memory_fraction,
    };

    let ts = Some("task");
    let rt = &raw.task;
    let task_defaults = Task::default();
    let prompt_tokens = match &rt.prompt_tokens {
        Some(value) => v.integer(value, ts, "prompt_tokens", 1, MAX_LEVER)? as f64,
        None => task_defaults.prompt_tokens,
    };
    let mean_response_tokens = match &rt.mean_response_tokens {
        Some(value) => v.positive(value, ts, "mean_response_tokens")?,
        None => task_defaults.mean_response_tokens,
    };
    let response_length_cv = match &rt.response_length_cv {
        Some(value) => v.positive(value, ts, "response_length_cv")?,
        None => task_defaults.response_length_cv,
    };
    let (pass_rate_mean, pass_rate_concentration) = match &rt.pass_rate {
        None => (
            task_defaults.pass_rate_mean,
            task_defaults.pass_rate_concentration,
        ),
        Some(p) => {
            let mean = match &p.mean {
                Some(value) => v.float(value, ts, "pass_rate.mean")?,
                None => task_defaults.pass_rate_mean,
            };
            if !(mean > 0.0 && mean < 1.0) {
                return Err(v.err(ts, "pass_rate.mean", format!("{mean} must lie strictly between 0 and 1 (the base policy's mean per-prompt pass rate)")));
            }
            let concentration = match &p.concentration {
                Some(value) => v.positive(value, ts, "pass_rate.concentration")?,
                None => task_defaults.pass_rate_concentration,
            };
            (mean, concentration)
        }
    };
    let task = Task {
        prompt_tokens,
        mean_response_tokens,
        response_length_cv,
        pass_rate_mean,
        pass_rate_concentration,
    };

    let rs = Some("run");
    let rr = &raw.run;
    let run_defaults = RunSettings::default();
    let algorithm = match &rr.algorithm {
        None => run_defaults.algorithm,
        Some(value) => match v.string(value, rs, "algorithm")?.as_str() {
            "grpo" => Algorithm::Grpo,
            "ppo" => Algorithm::Ppo,
            other => {
                return Err(v.err(
                    rs,
                    "algorithm",
                    format!(
                        "`{other}` is not supported in grids; {}",
                        suggestion(other, ["grpo", "ppo"])
                    ),
                ));
            }
        },
    };
    let old_logprob = match &rr.old_logprob {
        None => run_defaults.old_logprob,
        Some(value) => match v.string(value, rs, "old_logprob")?.as_str() {
            "auto" => OldLogprob::Auto,
            "always" => OldLogprob::Always,
            "never" => OldLogprob::Never,
            other => {
                return Err(v.err(
                    rs,
                    "old_logprob",
                    format!(
                        "`{other}` is not valid; {}",
                        suggestion(other, ["auto", "always", "never"])
                    ),
                ));
            }
        },
    };
    let critic = match &rr.critic {
        None => None,
        Some(value) => {
            let id = v.string(value, rs, "critic")?;
            Some(
                catalog
                    .model(&id)
                    .map_err(|m| v.err(rs, "critic", m))?
                    .clone(),
            )
        }
    };
    let run = RunSettings {
        algorithm,
        kl_reference: v.bool_or(
            &rr.kl_reference,
            rs,
            "kl_reference",
            run_defaults.kl_reference,
        )?,
        kl_coef: match &rr.kl_coef {
            Some(value) => v.non_negative(value, rs, "kl_coef")?,
            None => run_defaults.kl_coef,
        },
        prefix_cache: v.bool_or(
            &rr.prefix_cache,
            rs,
            "prefix_cache",
            run_defaults.prefix_cache,
        )?,
        dynamic_sampling: v.bool_or(
            &rr.dynamic_sampling,
            rs,
            "dynamic_sampling",
            run_defaults.dynamic_sampling,
        )?,
        old_logprob,
        gradient_checkpointing: v.bool_or(
            &rr.gradient_checkpointing,
            rs,
            "gradient_checkpointing",
            run_defaults.gradient_checkpointing,
        )?,
        step_overhead_seconds: match &rr.step_overhead_seconds {
            Some(value) => v.non_negative(value, rs, "step_overhead_seconds")?,
            None => run_defaults.step_overhead_seconds,
        },
        max_tokens_per_gpu: match &rr.max_tokens_per_gpu {
            Some(value) => v.integer(value, rs, "max_tokens_per_gpu", 1, MAX_LEVER)? as f64,
            None => run_defaults.max_tokens_per_gpu,
        },
        judge_rubric_tokens: match &rr.judge_rubric_tokens {
            Some(value) => v.integer(value, rs, "judge_rubric_tokens", 0, MAX_LEVER)? as f64,
            None => run_defaults.judge_rubric_tokens,
        },
        judge_verdict_tokens: match &rr.judge_verdict_tokens {
            Some(value) => v.integer(value, rs, "judge_verdict_tokens", 1, MAX_LEVER)? as f64,
            None => run_defaults.judge_verdict_tokens,
        },
        critic,
    };

    let Some(ra) = raw.axes else {
        return Err(v.missing(
            None,
            "axes",
            "add an [axes] table listing model, group_size, max_response_len, ... and budget",
        ));
    };
    let ax = Some("axes");
    let model_ids = v.string_list(&ra.model, ax, "model", "model = [\"qwen2.5-7b\"]")?;
    let mut model = Vec::new();
    for id in &model_ids {
        let m = catalog.model(id).map_err(|msg| v.err(ax, "model", msg))?;
        if !m.lm_head {
            return Err(v.err(ax, "model", format!("`{id}` is a reward model (no LM head) and cannot be the policy; use it as `reward = [\"prm:{id}\"]`")));
        }
        model.push(m.clone());
    }
    let finetune = v
        .string_list_or(&ra.finetune, ax, "finetune", "full")?
        .iter()
        .map(|s| Finetune::parse(s).map_err(|m| v.err(ax, "finetune", m)))
        .collect::<Result<Vec<_>>>()?;
    let reward = v
        .string_list_or(&ra.reward, ax, "reward", "rule")?
        .iter()
        .map(|s| Reward::parse(s, catalog).map_err(|m| v.err(ax, "reward", m)))
        .collect::<Result<Vec<_>>>()?;
    let min_group = if algorithm == Algorithm::Grpo { 2 } else { 1 };
    let group_size = v.int_list(
        &ra.group_size,
        ax,
        "group_size",
        min_group,
        "group_size = [4, 8, 16]",
    )?;
    let max_response_len = v.int_list(
        &ra.max_response_len,
        ax,
        "max_response_len",
        1,
        "max_response_len = [2048, 4096]",
    )?;
    let update_epochs = match &ra.update_epochs {
        Some(_) => v.int_list(
            &ra.update_epochs,
            ax,
            "update_epochs",
            1,
            "update_epochs = [1, 2, 4]",
        )?,
        None => vec![1],
    };
    let prompts_per_step = v.int_list(
        &ra.prompts_per_step,
        ax,
        "prompts_per_step",
        1,
        "prompts_per_step = [256]",
    )?;
    let budget = match (&ra.budget, &ra.iterations) {
        (Some(_), Some(_)) => {
            return Err(v.err(ax, "iterations", "give either `budget` or `iterations`, not both: a budget fixes the spend and derives the steps, iterations fix the steps"));
        }
        (None, None) => {
            return Err(v.missing(ax, "budget", "add `budget = [\"1e17 flops\"]` (or \"500 gpu-h\", \"2000 usd\"), or a fixed `iterations = [100]`"));
        }
        (None, Some(_)) => BudgetAxis::Iterations(v.int_list(
            &ra.iterations,
            ax,
            "iterations",
            1,
            "iterations = [100, 200]",
        )?),
        (Some(_), None) => {
            let texts = v.string_list(&ra.budget, ax, "budget", "budget = [\"1e17 flops\"]")?;
            let mut unit = None;
            let mut amounts = Vec::new();
            for t in &texts {
                let b = Budget::parse(t).map_err(|m| v.err(ax, "budget", m))?;
                match unit {
                    None => unit = Some(b.unit),
                    Some(u) if u != b.unit => {
                        return Err(v.err(ax, "budget", format!(
                            "mixes units (`{}` and `{}`); use one unit per grid so that cells compare on one cost axis",
                            u.as_str(),
                            b.unit.as_str()
                        )));
                    }
                    _ => {}
                }
                if amounts.contains(&b.amount) {
                    return Err(v.err(
                        ax,
                        "budget",
                        format!("`{t}` is listed twice; remove the duplicate"),
                    ));
                }
                amounts.push(b.amount);
            }
            BudgetAxis::Budgets {
                unit: unit.expect("non-empty list"),
                amounts,
            }
        }
    };
    v.no_duplicates(ax, "model", &model_ids)?;
    v.no_duplicates(
        ax,
        "finetune",
        &finetune.iter().map(|f| f.to_string()).collect::<Vec<_>>(),
    )?;
    v.no_duplicates(
        ax,
        "reward",
        &reward.iter().map(|r| r.to_string()).collect::<Vec<_>>(),
    )?;
    let axes = Axes {
        model,
        finetune,
        reward,
        group_size,
        max_response_len,
        update_epochs,
        prompts_per_step,
        budget,
    };

    let cs = Some("constraints");
    let constraints = Constraints {
        max_rollouts_per_step: match &raw.constraints.max_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "max_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
        min_rollouts_per_step: match &raw.constraints.min_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "min_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
    };
    let (metric, outcome) = parse_outcome(&raw.outcome, &v)?;

    let grid = Grid {
        name,
        description,
        seed,
        path: path.to_path_buf(),
        sha256: hex(&Sha256::digest(text.as_bytes())),
        hardware,
        task,
        run,
        axes,
        constraints,
        metric,
        outcome,
        outcome_state: crate::outcome::OutcomeState::Prior,
    };
    grid.cell_count().map_err(|m| v.err(ax, "", m))?;
    if grid.valid_cell_count() == 0 {
        return Err(v.err(cs, "", "the constraints exclude every combination of prompts_per_step and group_size; loosen max_rollouts_per_step / min_rollouts_per_step"));
    }
    Ok(grid)
}

/// Parses `[outcome]`: the metric name and prior-parameter overrides. A number moves a
/// parameter's value and keeps the relative width of its range; `{ value, low, high }` sets all
/// three.
fn parse_outcome(table: &toml::Table, v: &Validator) -> Result<(Option<String>, OutcomeParams)> {
    parse_outcome_in(table, v, Some("outcome"))
}

fn parse_outcome_in(
    table: &toml::Table,
    v: &Validator,
    section: Option<&str>,
) -> Result<(Option<String>, OutcomeParams)> {
    let mut params = OutcomeParams::default();
    let mut metric = None;
    for (key, value) in table {
        if key == "metric" {
            metric = Some(v.string(value, section, "metric")?);
            continue;
        }
        let Some(param) = params.get_mut(key) else {
            let valid = std::iter::once("metric").chain(PARAM_NAMES.iter().copied());
            return Err(v.err(
                section,
                key,
                format!("unknown key in [outcome]; {}", suggestion(key, valid)),
            ));
        };
        match value {
            toml::Value::Table(t) => {
                for k in t.keys() {
                    if !["value", "low", "high"].contains(&k.as_str()) {
                        return Err(v.err(
                            section,
                            key,
                            format!(
                                "unknown field `{k}`; {}",
                                suggestion(k, ["value", "low", "high"])
                            ),
                        ));
                    }
                }
                let get = |name: &str, default: f64| -> Result<f64> {
                    match t.get(name) {
                        Some(x) => v.float(x, section, key),
                        None => Ok(default),
                    }
                };
                let value = get("value", param.value)?;
                *param = Param {
                    value,
                    low: get("low", value.min(param.low))?,
                    high: get("high", value.max(param.high))?,
                };
            }
            other => {
                let x = v.float(other, section, key)?;
                let (low_ratio, high_ratio) = if param.value != 0.0 {
                    (param.low / param.value, param.high / param.value)
                } else {
                    (1.0, 1.0)
                };
                *param = if param.value != 0.0 && x != 0.0 {
                    let (a, b) = (x * low_ratio, x * high_ratio);
                    Param {
                        value: x,
                        low: a.min(b),
                        high: a.max(b),
                    }
                } else {
                    Param {
                        value: x,
                        low: x.min(param.low),
                        high: x.max(param.high),
                    }
                };
            }
        }
    }
    params.validate().map_err(|m| {
        let key = m.split(':').next().unwrap_or("").to_string();
        v.err(
            section,
            &key,
            m.split_once(": ").map(|(_, r)| r.to_string()).unwrap_or(m),
        )
    })?;
    Ok((metric, params))
}

/// Outcome parameters from a TOML file whose top-level keys are parameter names (the format of a
/// grid's `[outcome]` table), e.g. the truth file of `rlfrontier simulate`.
pub fn outcome_from_toml(text: &str, path: &Path) -> Result<OutcomeParams> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
    // Reuse the [outcome] parser: wrap the table so line lookups find the keys at top level.
    let v = Validator { text, path };
    let (_, params) = parse_outcome_in(&table, &v, None)?;
    Ok(params)
}

/// Turns serde's "unknown field" into "unknown key, did you mean"; other errors keep their text.
fn unknown_key_error(path: &Path, text: &str, error: &toml::de::Error) -> Error {
    let message = error.message();
    if let Some(rest) = message.strip_prefix("unknown field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        let line = error.span().map(|s| line_of_offset(text, s.start));
        let section = line
            .and_then(|l| section_at_line(text, l))
            .unwrap_or_default();
        let valid = KEYS
            .iter()
            .find(|(s, _)| *s == section)
            .map(|(_, k)| *k)
            .unwrap_or(&[]);
        let place = if section.is_empty() {
            "at the top level".to_string()
        } else {
            format!("in [{section}]")
        };
        let field = if section.is_empty() {
            key.to_string()
        } else {
            format!("{section}.{key}")
        };
        return Error::in_file(
            path,
            line,
            &field,
            format!(
                "unknown key {place}; {}",
                suggestion(key, valid.iter().copied())
            ),
        );
    }
    if let Some(rest) = message.strip_prefix("missing field `")
        && let Some((key, _)) = rest.split_once('`')
    {
        let line = error.span().map(|s| line_of_offset(text, s.start));
        return Error::in_file(path, line, key, "is required but missing");
    }
    toml_error(path, text, error)
}

/// The `[section]` a line belongs to ("" for the top level); inline tables on the line itself
/// (`pass_rate = { ... }`) are reported as `section.key`.
fn section_at_line(text: &str, line: usize) -> Option<String> {
    let mut current = String::new();
    for (i, l) in text.lines().enumerate() {
        let t = l.trim();
        if i + 1 == line {
            if t.starts_with('[') {
                // The unknown key is the table header itself: it belongs to the parent table.
                let name = t
                    .trim_start_matches('[')
                    .split(']')
                    .next()
                    .unwrap_or("")
                    .trim();
                return Some(
                    name.rsplit_once('.')
                        .map(|(parent, _)| parent.to_string())
                        .unwrap_or_default(),
                );
            }
            if let Some((key, rest)) = t.split_once('=')
                && rest.trim_start().starts_with('{')
            {
                let key = key.trim();
                return Some(if current.is_empty() {
                    key.to_string()
                } else {
                    format!("{current}.{key}")
                });
            }
            return Some(current);
        }
        if t.starts_with('[') {
            current = t
                .trim_start_matches('[')
                .split(']')
                .next()
                .unwrap_or("")
                .trim()
                .to_string();
        }
    }
    Some(current)
}

/// Value checks with one-line errors that point at the key's line.
struct Validator<'a> {
    text: &'a str,
    path: &'a Path,
}

impl Validator<'_> {
    fn field_name(section: Option<&str>, key: &str) -> String {
        match (section, key) {
            (Some(s), "") => s.to_string(),
            (Some(s), k) => format!("{s}.{k}"),
            (None, k) => k.to_string(),
        }
    }

    fn err(&self, section: Option<&str>, key: &str, message: impl Into<String>) -> Error {
        let lookup = key.split('.').next().unwrap_or(key);
        let line = if key.is_empty() {
            section.and_then(|s| {
                self.text
                    .lines()
                    .position(|l| l.trim() == format!("[{s}]"))
                    .map(|p| p + 1)
            })
        } else {
            locate_key(self.text, section, lookup)
        };
        Error::in_file(self.path, line, &Self::field_name(section, key), message)
    }

    fn missing(&self, section: Option<&str>, key: &str, how: &str) -> Error {
        let line = section.and_then(|s| {
            self.text
                .lines()
                .position(|l| l.trim() == format!("[{s}]"))
                .map(|p| p + 1)
        });
        Error::in_file(
            self.path,
            line,
            &Self::field_name(section, key),
            format!("is required but missing; {how}"),
        )
    }

    fn type_name(value: &toml::Value) -> &'static str {
        value.type_str()
    }

    fn string(&self, value: &toml::Value, section: Option<&str>, key: &str) -> Result<String> {
        value.as_str().map(str::to_string).ok_or_else(|| {
            self.err(
                section,
                key,
                format!(
                    "expected a string in quotes, found a {}",
                    Self::type_name(value)
                ),
            )
        })
    }

    fn float(&self, value: &toml::Value, section: Option<&str>, key: &str) -> Result<f64> {
        let x = match value {
            toml::Value::Float(f) => *f,
            toml::Value::Integer(i) => *i as f64,
            other => {
                return Err(self.err(
                    section,
                    key,
                    format!("expected a number, found a {}", Self::type_name(other)),
                ));
            }
        };
        if !x.is_finite() {
            return Err(self.err(section, key, format!("{x} is not a finite number")));
        }
        Ok(x)
    }

    fn positive(&self, value: &toml::Value, section: Option<&str>, key: &str) -> Result<f64> {
        let x = self.float(value, section, key)?;
        if x <= 0.0 {
            return Err(self.err(section, key, format!("{x} must be greater than 0")));
        }
        Ok(x)
    }

    fn non_negative(&self, value: &toml::Value, section: Option<&str>, key: &str) -> Result<f64> {
        let x = self.float(value, section, key)?;
        if x < 0.0 {
            return Err(self.err(section, key, format!("{x} must be 0 or more")));
        }
        Ok(x)
    }

    fn fraction_or(
        &self,
        value: &Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        default: f64,
        one_allowed: bool,
    ) -> Result<f64> {
        let Some(value) = value else {
            return Ok(default);
        };
        let x = self.float(value, section, key)?;
        let ok = x > 0.0 && (x < 1.0 || (one_allowed && x == 1.0));
        if !ok {
            let range = if one_allowed {
                "in (0, 1]"
            } else {
                "strictly between 0 and 1"
            };
            return Err(self.err(section, key, format!("{x} must be a fraction {range}")));
        }
        Ok(x)
    }

    fn integer(
        &self,
        value: &toml::Value,
        section: Option<&str>,
        key: &str,
        min: i64,
        max: i64,
    ) -> Result<i64> {
        let i = match value {
            toml::Value::Integer(i) => *i,
            toml::Value::Float(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 => {
                *f as i64
            }
            other => {
                return Err(self.err(
                    section,
                    key,
                    format!("expected a whole number, found {}", describe_value(other)),
                ));
            }
        };
        if i < min {
            return Err(self.err(
                section,
                key,
                format!("{i} is too small; use a whole number of at least {min}"),
            ));
        }
        if i > max {
            return Err(self.err(section, key, format!("{i} is too large; use at most {max}")));
        }
        Ok(i)
    }

    fn bool_or(
        &self,
        value: &Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        default: bool,
    ) -> Result<bool> {
        match value {
            None => Ok(default),
            Some(toml::Value::Boolean(b)) => Ok(*b),
            Some(other) => Err(self.err(
                section,
                key,
                format!("expected true or false, found {}", describe_value(other)),
            )),
        }
    }

    /// A list (or a single value meaning a one-element list) of non-empty values.
    fn list<'v>(
        &self,
        value: &'v Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        example: &str,
    ) -> Result<Vec<&'v toml::Value>> {
        match value {
            None => Err(self.missing(section, key, &format!("add `{example}`"))),
            Some(toml::Value::Array(items)) if items.is_empty() => Err(self.err(
                section,
                key,
                format!("is an empty list; give at least one value, as in `{example}`"),
            )),
            Some(toml::Value::Array(items)) => Ok(items.iter().collect()),
            Some(single) => Ok(vec![single]),
        }
    }

    fn string_list(
        &self,
        value: &Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        example: &str,
    ) -> Result<Vec<String>> {
        self.list(value, section, key, example)?
            .into_iter()
            .map(|item| self.string(item, section, key))
            .collect()
    }

    fn string_list_or(
        &self,
        value: &Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        default: &str,
    ) -> Result<Vec<String>> {
        if value.is_none() {
            return Ok(vec![default.to_string()]);
        }
        self.string_list(value, section, key, &format!("{key} = [\"{default}\"]"))
    }

    fn int_list(
        &self,
        value: &Option<toml::Value>,
        section: Option<&str>,
        key: &str,
        min: i64,
        example: &str,
    ) -> Result<Vec<u64>> {
        let items = self.list(value, section, key, example)?;
        let mut out = Vec::with_capacity(items.len());
        let mut seen = BTreeSet::new();
        for item in items {
            let i = self.integer(item, section, key, min, MAX_LEVER)? as u64;
            if !seen.insert(i) {
                return Err(self.err(
                    section,
                    key,
                    format!("{i} is listed twice; remove the duplicate"),
                ));
            }
            out.push(i);
        }
        Ok(out)
    }

    fn no_duplicates(&self, section: Option<&str>, key: &str, names: &[String]) -> Result<()> {
        let mut seen = BTreeSet::new();
        for n in names {
            if !seen.insert(n) {
                return Err(self.err(
                    section,
                    key,
                    format!("`{n}` is listed twice; remove the duplicate"),
                ));
            }
        }
        Ok(())
    }
}

fn describe_value(value: &toml::Value) -> String {
    match value {
        toml::Value::Float(f) => format!("{f} (a number with a fraction or not finite)"),
        toml::Value::String(s) => format!("the string \"{s}\" (remove the quotes)"),
        other => format!("a {}", other.type_str()),
    }
}

#[cfg(test)]
mod tests;
