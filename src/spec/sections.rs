//! One function per table of a grid file: each turns the raw TOML values of its table into
//! validated settings, with one-line errors that name the file, line and field.

use super::raw::{RawAgent, RawAxes, RawConstraints, RawGrid, RawHardware, RawRun, RawTask};
use super::validator::{Spanned, Validator};
use super::{Axes, BudgetAxis, Constraints};
use crate::catalog::Catalog;
use crate::config::{
    Agent, Algorithm, ApiJudge, Budget, Finetune, Framework, Hardware, MAX_LEVER, Reward,
    RunSettings, Schedule, Task,
};
use crate::error::{Result, suggestion};

/// The top-level keys: `name`, `description`, `seed`.
pub(super) fn header(raw: &RawGrid, v: &Validator) -> Result<(String, String, u64)> {
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
    // It names the output folder (results/NAME): no path, no hidden or parent folder.
    if name.is_empty()
        || name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(v.err(None, "name", format!("`{name}` must be non-empty, start with a letter or digit and use only letters, digits, `-`, `_` or `.` (it names the output folder)")));
    }
    let description = match &raw.description {
        Some(value) => v.string(value, None, "description")?,
        None => String::new(),
    };
    let seed = match &raw.seed {
        Some(value) => v.integer(value, None, "seed", 0, i64::MAX)? as u64,
        None => 0,
    };
    Ok((name, description, seed))
}

/// `[hardware]`: the cluster and its rollout engine.
pub(super) fn hardware(
    raw: Option<RawHardware>,
    v: &Validator,
    catalog: &Catalog,
    framework: Framework,
) -> Result<Hardware> {
    let Some(rh) = raw else {
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
    let engine = match &rh.engine {
        Some(value) => {
            let id = v.string(value, Some(hw), "engine")?;
            catalog
                .engine(&id)
                .map_err(|m| v.err_at(value, Some(hw), "engine", m))?
                .clone()
        }
        None => catalog.default_engine().clone(),
    };
    // The framework's placement and engine settings, then what the grid sets.
    let d = Hardware::new(gpu, gpus, engine, framework);
    let usd_per_gpu_hour = match &rh.usd_per_gpu_hour {
        Some(value) => v.positive_at_most(
            value,
            Some(hw),
            "usd_per_gpu_hour",
            (1000.0, "no GPU rents for more than $1,000 an hour"),
        )?,
        None => d.usd_per_gpu_hour,
    };
    let schedule = v.named_or(&rh.schedule, Some(hw), "schedule", d.schedule)?;
    let async_rollout_fraction = v.fraction_or(
        &rh.async_rollout_fraction,
        Some(hw),
        "async_rollout_fraction",
        d.async_rollout_fraction,
        false,
    )?;
    if schedule != Schedule::Colocated && gpus < 2 {
        return Err(v.err(Some(hw), "gpus", format!("the {schedule} schedule needs at least 2 GPUs (one pool generates, one trains); use schedule = \"colocated\"")));
    }
    let rollout_gpu_memory_utilization = v.fraction_or(
        &rh.rollout_gpu_memory_utilization,
        Some(hw),
        "rollout_gpu_memory_utilization",
        d.rollout_gpu_memory_utilization,
        true,
    )?;
    let max_num_seqs = v.count_or(
        &rh.max_num_seqs,
        Some(hw),
        "max_num_seqs",
        (1, MAX_LEVER),
        d.max_num_seqs,
    )?;
    let rollout_tensor_parallel = v.count_or(
        &rh.rollout_tensor_parallel,
        Some(hw),
        "rollout_tensor_parallel",
        (1, 1024),
        d.rollout_tensor_parallel,
    )?;
    let usable_memory_fraction = v.fraction_or(
        &rh.usable_memory_fraction,
        Some(hw),
        "usable_memory_fraction",
        d.usable_memory_fraction,
        true,
    )?;
    Ok(Hardware {
        usd_per_gpu_hour,
        schedule,
        async_rollout_fraction,
        rollout_gpu_memory_utilization,
        max_num_seqs,
        usable_memory_fraction,
        rollout_tensor_parallel,
        ..d
    })
}

/// `[task]`: prompt and response lengths, the pass-rate profile. `mean_response_tokens` is the
/// logged (capped) mean at `logged_cap_tokens` (default `largest_cap`, the grid's largest cap),
/// with `clip_ratio` optionally pinning the spread; `uncapped_mean_response_tokens` gives the
/// lognormal's own mean instead.
pub(super) fn task(rt: &RawTask, v: &Validator, largest_cap: f64) -> Result<Task> {
    let ts = Some("task");
    let task_defaults = Task::default();
    let prompt_tokens = match &rt.prompt_tokens {
        Some(value) => v.integer(value, ts, "prompt_tokens", 1, MAX_LEVER)? as f64,
        None => task_defaults.prompt_tokens,
    };
    let cv = match &rt.response_length_cv {
        Some(value) => v.positive_at_most(
            value,
            ts,
            "response_length_cv",
            crate::config::MAX_LENGTH_CV,
        )?,
        None => task_defaults.response_length_cv,
    };
    let cap = match &rt.logged_cap_tokens {
        Some(value) => v.integer(value, ts, "logged_cap_tokens", 1, MAX_LEVER)? as f64,
        None => largest_cap,
    };
    let clip_ratio = match &rt.clip_ratio {
        Some(value) => {
            if rt.response_length_cv.is_some() {
                return Err(v.err(ts, "clip_ratio", "give clip_ratio or response_length_cv, not both: the clip ratio fixes the spread"));
            }
            Some(v.float(value, ts, "clip_ratio")?)
        }
        None => None,
    };
    let fit = |key: &str, mean: f64, clip_ratio: Option<f64>, cv: f64| {
        crate::ledger::lengths::LoggedLengths {
            mean_tokens: mean,
            cap_tokens: cap,
            clip_ratio,
        }
        .uncapped(cv)
        .map_err(|e| {
            v.err(
                ts,
                key,
                format!(
                    "{} (logged at the cap {cap}; set logged_cap_tokens if it was another)",
                    e.0
                ),
            )
        })
    };
    let (mean_response_tokens, response_length_cv) =
        match (&rt.mean_response_tokens, &rt.uncapped_mean_response_tokens) {
            (Some(_), Some(_)) => {
                return Err(v.err(
                ts,
                "uncapped_mean_response_tokens",
                "give mean_response_tokens (as logged) or uncapped_mean_response_tokens, not both",
            ));
            }
            (Some(value), None) => {
                let logged = v.positive(value, ts, "mean_response_tokens")?;
                fit("mean_response_tokens", logged, clip_ratio, cv)?
            }
            (None, Some(value)) => (
                v.positive_at_most(
                    value,
                    ts,
                    "uncapped_mean_response_tokens",
                    crate::config::MAX_RESPONSE_TOKENS,
                )?,
                cv,
            ),
            (None, None) => (task_defaults.mean_response_tokens, cv),
        };
    let mean_response_tokens_end = match &rt.mean_response_tokens_end {
        Some(value) => {
            let logged = v.positive(value, ts, "mean_response_tokens_end")?;
            Some(fit("mean_response_tokens_end", logged, None, response_length_cv)?.0)
        }
        None => None,
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
                Some(value) => v.positive_at_most(
                    value,
                    ts,
                    "pass_rate.concentration",
                    crate::config::MAX_PASS_RATE_CONCENTRATION,
                )?,
                None => task_defaults.pass_rate_concentration,
            };
            (mean, concentration)
        }
    };
    let start = v.named_or(&rt.start, ts, "start", task_defaults.start)?;
    let dataset_prompts = match &rt.dataset_prompts {
        Some(value) => Some(v.positive_at_most(
            value,
            ts,
            "dataset_prompts",
            crate::config::MAX_DATASET_PROMPTS,
        )?),
        None => None,
    };
    let task = Task {
        start,
        dataset_prompts,
        mean_response_tokens_end,
        prompt_tokens,
        mean_response_tokens,
        response_length_cv,
        pass_rate_mean,
        pass_rate_concentration,
    };
    Ok(task)
}

/// `[agent]`: multi-turn episodes, tools, sandboxes and an API judge (absent: single-turn).
pub(super) fn agent(ra: &RawAgent, v: &Validator, catalog: &Catalog) -> Result<Agent> {
    let s = Some("agent");
    let d = Agent::default();
    let number = |value: &Option<Spanned>, key: &str, default: f64| {
        v.non_negative_or(value, s, key, default)
    };
    // A judge from the catalog's price list; explicit prices override it.
    let listed = match &ra.judge_api {
        Some(value) => {
            let id = v.string(value, s, "judge_api")?;
            Some(
                catalog
                    .api(&id)
                    .map_err(|m| v.err_at(value, s, "judge_api", m))?
                    .clone(),
            )
        }
        None => None,
    };
    let judge_keys = [
        &ra.judge_api,
        &ra.judge_usd_per_million_input,
        &ra.judge_usd_per_million_output,
        &ra.judge_output_tokens,
        &ra.judge_tokens_per_minute,
    ];
    let api_judge = if judge_keys.iter().any(|k| k.is_some()) {
        Some(ApiJudge {
            usd_per_million_input_tokens: number(
                &ra.judge_usd_per_million_input,
                "judge_usd_per_million_input",
                listed
                    .as_ref()
                    .map_or(0.0, |a| a.usd_per_million_input_tokens),
            )?,
            usd_per_million_output_tokens: number(
                &ra.judge_usd_per_million_output,
                "judge_usd_per_million_output",
                listed
                    .as_ref()
                    .map_or(0.0, |a| a.usd_per_million_output_tokens),
            )?,
            output_tokens: number(&ra.judge_output_tokens, "judge_output_tokens", 64.0)?,
            tokens_per_minute: number(&ra.judge_tokens_per_minute, "judge_tokens_per_minute", 0.0)?,
        })
    } else {
        None
    };
    let agent = Agent {
        turns: number(&ra.turns, "turns", d.turns)?,
        observation_tokens: number(&ra.observation_tokens, "observation_tokens", 0.0)?,
        turns_cv: number(&ra.turns_cv, "turns_cv", 0.0)?,
        tool_seconds: number(&ra.tool_seconds, "tool_seconds", 0.0)?,
        tool_seconds_p99: number(&ra.tool_seconds_p99, "tool_seconds_p99", 0.0)?,
        tool_failure_rate: number(&ra.tool_failure_rate, "tool_failure_rate", 0.0)?,
        wait: v.named_or(&ra.wait, s, "wait", d.wait)?,
        sandbox_usd_per_hour: number(&ra.sandbox_usd_per_hour, "sandbox_usd_per_hour", 0.0)?,
        reward_sandbox_seconds: number(&ra.reward_sandbox_seconds, "reward_sandbox_seconds", 0.0)?,
        api_judge,
    };
    // Checked in `parse`, once per turns and tool-latency value: those may come from `[axes]`.
    Ok(agent)
}

/// `[run]`: algorithm, KL, caching, sampling and the other run settings.
pub(super) fn run(rr: &RawRun, v: &Validator, catalog: &Catalog) -> Result<RunSettings> {
    let rs = Some("run");
    let d = RunSettings::default();
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
    let tokens = |value: &Option<Spanned>, key: &str, min: i64, default: f64| {
        v.count_or(value, rs, key, (min, MAX_LEVER), default as u64)
            .map(|n| n as f64)
    };
    let optional_count = |value: &Option<Spanned>, key: &str| -> Result<Option<u64>> {
        match value {
            Some(_) => v.count_or(value, rs, key, (1, MAX_LEVER), 1).map(Some),
            None => Ok(None),
        }
    };
    let framework = v.named_or(&rr.framework, rs, "framework", d.framework)?;
    Ok(RunSettings {
        framework,
        algorithm: v.named_or(&rr.algorithm, rs, "algorithm", d.algorithm)?,
        kl_reference: v.bool_or(&rr.kl_reference, rs, "kl_reference", d.kl_reference)?,
        kl_coef: v.non_negative_or(&rr.kl_coef, rs, "kl_coef", d.kl_coef)?,
        prefix_cache: v.bool_or(&rr.prefix_cache, rs, "prefix_cache", d.prefix_cache)?,
        dynamic_sampling: v.bool_or(
            &rr.dynamic_sampling,
            rs,
            "dynamic_sampling",
            d.dynamic_sampling,
        )?,
        old_logprob: v.named_or(
            &rr.old_logprob,
            rs,
            "old_logprob",
            framework.profile().old_logprob,
        )?,
        gradient_checkpointing: v.bool_or(
            &rr.gradient_checkpointing,
            rs,
            "gradient_checkpointing",
            d.gradient_checkpointing,
        )?,
        step_overhead_seconds: v.non_negative_or(
            &rr.step_overhead_seconds,
            rs,
            "step_overhead_seconds",
            d.step_overhead_seconds,
        )?,
        max_tokens_per_gpu: tokens(
            &rr.max_tokens_per_gpu,
            "max_tokens_per_gpu",
            1,
            d.max_tokens_per_gpu,
        )?,
        critic_max_tokens_per_gpu: tokens(
            &rr.critic_max_tokens_per_gpu,
            "critic_max_tokens_per_gpu",
            1,
            d.critic_max_tokens_per_gpu,
        )?,
        micro_batching: crate::config::MicroBatching {
            update_sequences: optional_count(&rr.micro_batch_sequences, "micro_batch_sequences")?,
            log_prob_sequences: optional_count(
                &rr.log_prob_micro_batch_sequences,
                "log_prob_micro_batch_sequences",
            )?,
            log_prob_max_tokens_per_gpu: optional_count(
                &rr.log_prob_max_tokens_per_gpu,
                "log_prob_max_tokens_per_gpu",
            )?
            .map(|n| n as f64),
            remove_padding: v.bool_or(&rr.remove_padding, rs, "remove_padding", true)?,
        },
        startup_seconds: v.non_negative_or(
            &rr.startup_seconds,
            rs,
            "startup_seconds",
            d.startup_seconds,
        )?,
        checkpoint_every_steps: v.count_or(
            &rr.checkpoint_every_steps,
            rs,
            "checkpoint_every_steps",
            (0, MAX_LEVER),
            d.checkpoint_every_steps,
        )?,
        checkpoint_seconds: v.non_negative_or(
            &rr.checkpoint_seconds,
            rs,
            "checkpoint_seconds",
            d.checkpoint_seconds,
        )?,
        validation_every_steps: v.count_or(
            &rr.validation_every_steps,
            rs,
            "validation_every_steps",
            (0, MAX_LEVER),
            d.validation_every_steps,
        )?,
        validation_prompts: v.count_or(
            &rr.validation_prompts,
            rs,
            "validation_prompts",
            (0, MAX_LEVER),
            d.validation_prompts,
        )?,
        validation_samples_per_prompt: v.count_or(
            &rr.validation_samples_per_prompt,
            rs,
            "validation_samples_per_prompt",
            (1, MAX_LEVER),
            d.validation_samples_per_prompt,
        )?,
        generation_batch_prompts: match &rr.generation_batch_prompts {
            Some(_) => Some(v.count_or(
                &rr.generation_batch_prompts,
                rs,
                "generation_batch_prompts",
                (1, MAX_LEVER),
                1,
            )?),
            None => None,
        },
        mini_batch_prompts: v.count_or(
            &rr.mini_batch_prompts,
            rs,
            "mini_batch_prompts",
            (1, MAX_LEVER),
            d.mini_batch_prompts,
        )?,
        pass_overhead_seconds: v.non_negative_or(
            &rr.pass_overhead_seconds,
            rs,
            "pass_overhead_seconds",
            d.pass_overhead_seconds,
        )?,
        train_launch_seconds_per_layer: v.non_negative_or(
            &rr.train_launch_seconds_per_layer,
            rs,
            "train_launch_seconds_per_layer",
            d.train_launch_seconds_per_layer,
        )?,
        judge_rubric_tokens: tokens(
            &rr.judge_rubric_tokens,
            "judge_rubric_tokens",
            0,
            d.judge_rubric_tokens,
        )?,
        judge_verdict_tokens: tokens(
            &rr.judge_verdict_tokens,
            "judge_verdict_tokens",
            1,
            d.judge_verdict_tokens,
        )?,
        critic,
        agent: Agent::default(),
    })
}

/// `[axes]`: every axis's values, checked for duplicates and for what the algorithm needs.
pub(super) fn axes(
    raw: Option<RawAxes>,
    v: &Validator,
    catalog: &Catalog,
    algorithm: Algorithm,
    hardware_engine: &crate::catalog::EngineSpec,
    agent_shape: [(f64, bool); 2],
    (agent, agent_judge_id, agent_judge_keys): (&Agent, Option<String>, bool),
) -> Result<Axes> {
    let Some(ra) = raw else {
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
        let m = catalog
            .resolve_model(id)
            .map_err(|msg| v.err(ax, "model", msg))?;
        if !m.lm_head {
            return Err(v.err(ax, "model", format!("`{id}` is a reward model (no LM head) and cannot be the policy; use it as `reward = [\"prm:{id}\"]`")));
        }
        model.push(m);
    }
    let finetune = v
        .string_list_or(&ra.finetune, ax, "finetune", "full")?
        .iter()
        .map(|s| Finetune::parse(s).map_err(|m| v.err(ax, "finetune", m)))
        .collect::<Result<Vec<_>>>()?;
    // A LoRA rank above a policy's hidden size is not low-rank.
    for f in &finetune {
        if let Finetune::Lora(rank) = f
            && let Some(m) = model.iter().find(|m| *rank > m.hidden)
        {
            return Err(v.err(
                ax,
                "finetune",
                format!(
                    "`lora:{rank}` is above the hidden size of `{}` ({}); use a rank below it, or `full`",
                    m.id, m.hidden
                ),
            ));
        }
    }
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
    let budget = budget_axis(&ra, v)?;
    // Engines: `[axes] engine` sweeps them (costs only: the outcome does not depend on the
    // engine); otherwise the one of `[hardware] engine`.
    let engine = match &ra.engine {
        None => vec![hardware_engine.clone()],
        Some(_) => {
            let ids = v.string_list(
                &ra.engine,
                ax,
                "engine",
                "engine = [\"vllm-cudagraph\", \"vllm-eager\"]",
            )?;
            v.no_duplicates(ax, "engine", &ids)?;
            ids.iter()
                .map(|id| {
                    catalog
                        .engine(id)
                        .cloned()
                        .map_err(|m| v.err(ax, "engine", m))
                })
                .collect::<Result<Vec<_>>>()?
        }
    };
    // The episode's shape: `[axes] turns` and `[axes] tool_seconds` sweep the mean model turns
    // per episode and the mean tool latency (the rest of `[agent]` is shared); otherwise the one
    // value of `[agent]` (single-turn, no tools, by default).
    let [(agent_turns, turns_in_agent), (agent_tool, tool_in_agent)] = agent_shape;
    let turns = agent_axis(
        v,
        &ra.turns,
        "turns",
        (agent_turns, turns_in_agent),
        (1.0, crate::config::MAX_TURNS),
        "turns = [1, 2, 4]",
    )?;
    let tool_seconds = agent_axis(
        v,
        &ra.tool_seconds,
        "tool_seconds",
        (agent_tool, tool_in_agent),
        (0.0, crate::config::MAX_TOOL_SECONDS),
        "tool_seconds = [0.5, 5, 30]",
    )?;
    let judge = judge_axis(
        v,
        &ra.judge,
        catalog,
        (agent, agent_judge_id),
        agent_judge_keys,
    )?;
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
        engine,
        model,
        finetune,
        reward,
        turns,
        tool_seconds,
        judge,
        group_size,
        max_response_len,
        update_epochs,
        prompts_per_step,
        budget,
    };
    Ok(axes)
}

/// An axis of the episode's shape (`turns`, `tool_seconds`): the listed numbers, each within
/// `range` and listed once; or, without the key, `[agent]`'s one value. Setting it in both
/// places is refused, naming both.
fn agent_axis(
    v: &Validator,
    value: &Option<Spanned>,
    key: &str,
    (agent_value, in_agent): (f64, bool),
    (low, high): (f64, f64),
    example: &str,
) -> Result<Vec<f64>> {
    let ax = Some("axes");
    if value.is_none() {
        return Ok(vec![agent_value]);
    }
    if in_agent {
        return Err(v.err(
            ax,
            key,
            format!(
                "is also set in [agent]; keep one: `[axes] {example}` to sweep it, or `[agent] {key}` for one value"
            ),
        ));
    }
    let mut out: Vec<f64> = Vec::new();
    for item in &v.list(value, ax, key, example)? {
        let x = v.float(item, ax, key)?;
        if !(low..=high).contains(&x) {
            return Err(v.err_at(
                item,
                ax,
                key,
                format!("{x} must lie between {low} and {high}"),
            ));
        }
        if out.contains(&x) {
            return Err(v.err_at(
                item,
                ax,
                key,
                format!("{x} is listed twice; remove the duplicate"),
            ));
        }
        out.push(x);
    }
    Ok(out)
}

/// The judge axis: `none` or `[[api]]` ids of the catalog, each listed once, priced at the
/// catalog's list prices with `[agent]`'s `judge_output_tokens` and `judge_tokens_per_minute`
/// (64 and none by default). Without the key: the one judge of `[agent]` (its id, `custom` for
/// prices given there, or `none`). Prices given in `[agent]` and a judge axis together are
/// refused, naming both.
fn judge_axis(
    v: &Validator,
    value: &Option<Spanned>,
    catalog: &Catalog,
    (agent, agent_judge_id): (&Agent, Option<String>),
    agent_judge_keys: bool,
) -> Result<Vec<crate::spec::JudgeChoice>> {
    let ax = Some("axes");
    let Some(raw) = value else {
        return Ok(vec![crate::spec::JudgeChoice {
            id: match &agent.api_judge {
                None => "none".to_string(),
                Some(_) => agent_judge_id.unwrap_or_else(|| "custom".to_string()),
            },
            api: agent.api_judge,
        }]);
    };
    if agent_judge_keys {
        return Err(v.err_at(
            raw,
            ax,
            "judge",
            "the judge is also set in [agent] (judge_api or its prices); keep one: `[axes] judge = [\"none\", \"gpt-4o-mini\"]` to sweep it, or `[agent] judge_api` for one",
        ));
    }
    let ids = v.string_list(value, ax, "judge", "judge = [\"none\", \"gpt-4o-mini\"]")?;
    v.no_duplicates(ax, "judge", &ids)?;
    let (output_tokens, tokens_per_minute) = agent
        .api_judge
        .map_or((64.0, 0.0), |j| (j.output_tokens, j.tokens_per_minute));
    ids.iter()
        .map(|id| {
            if id.eq_ignore_ascii_case("none") {
                return Ok(crate::spec::JudgeChoice {
                    id: "none".to_string(),
                    api: None,
                });
            }
            let spec = catalog.api(id).map_err(|m| v.err_at(raw, ax, "judge", m))?;
            Ok(crate::spec::JudgeChoice {
                id: spec.id.clone(),
                api: Some(ApiJudge {
                    usd_per_million_input_tokens: spec.usd_per_million_input_tokens,
                    usd_per_million_output_tokens: spec.usd_per_million_output_tokens,
                    output_tokens,
                    tokens_per_minute,
                }),
            })
        })
        .collect()
}

/// `[constraints]`: bounds on rollouts per step.
pub(super) fn constraints(rc: &RawConstraints, v: &Validator) -> Result<Constraints> {
    let cs = Some("constraints");
    let constraints = Constraints {
        max_rollouts_per_step: match &rc.max_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "max_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
        min_rollouts_per_step: match &rc.min_rollouts_per_step {
            Some(value) => Some(v.integer(value, cs, "min_rollouts_per_step", 1, i64::MAX)? as u64),
            None => None,
        },
    };
    Ok(constraints)
}

/// Most values of the budget (or iterations) axis.
pub const MAX_BUDGET_VALUES: usize = 256;

/// The budget axis: budgets in one unit (no duplicates), or a fixed number of iterations.
fn budget_axis(ra: &RawAxes, v: &Validator) -> Result<BudgetAxis> {
    let ax = Some("axes");
    // Refused before the values are read one by one: a list of thousands is a mistake.
    let at_most = |count: usize, key: &str| -> Result<()> {
        match count > MAX_BUDGET_VALUES {
            true => Err(v.err(ax, key, format!(
                "lists {count} values; at most {MAX_BUDGET_VALUES}: each one gets its own frontier, shortlist and recommendation from joint draws over its candidates, so thousands of budgets take minutes; sample the range with fewer values (20 log-spaced ones resolve a frontier)"
            ))),
            false => Ok(()),
        }
    };
    Ok(match (&ra.budget, &ra.iterations) {
        (Some(_), Some(_)) => {
            return Err(v.err(ax, "iterations", "give either `budget` or `iterations`, not both: a budget fixes the spend and derives the steps, iterations fix the steps"));
        }
        (None, None) => {
            return Err(v.missing(ax, "budget", "add `budget = [\"1e17 flops\"]` (or \"500 gpu-h\", \"2000 usd\"), or a fixed `iterations = [100]`"));
        }
        (None, Some(_)) => {
            let steps = v.int_list(
                &ra.iterations,
                ax,
                "iterations",
                1,
                "iterations = [100, 200]",
            )?;
            at_most(steps.len(), "iterations")?;
            BudgetAxis::Iterations(steps)
        }
        (Some(_), None) => {
            let texts = v.string_list(&ra.budget, ax, "budget", "budget = [\"1e17 flops\"]")?;
            at_most(texts.len(), "budget")?;
            let mut unit = None;
            let mut amounts = Vec::new();
            let mut seen = std::collections::BTreeSet::new();
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
                // Amounts are finite and positive, so equal amounts have equal bits.
                if !seen.insert(b.amount.to_bits()) {
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
    })
}

/// `[task] base_score`: the measured pre-RL score per model on each target metric. With one
/// metric: a number for every model or a table `{ "model-id" = score }`. With several
/// (`[outcome] metrics`): a table keyed by metric, each value a number or a per-model table.
/// Returns one list per metric (one list when there is one metric), one entry per model (None
/// where the prior's default applies).
pub(super) fn base_scores(
    value: &Option<Spanned>,
    v: &Validator,
    axes: &Axes,
    metrics: &[String],
) -> Result<Vec<Vec<Option<f64>>>> {
    let ts = Some("task");
    let per_metric = metrics.len().max(1);
    let Some(spanned) = value else {
        return Ok(vec![vec![None; axes.model.len()]; per_metric]);
    };
    if metrics.len() < 2 {
        return Ok(vec![model_scores(
            spanned,
            spanned.get_ref(),
            v,
            axes,
            "base_score",
        )?]);
    }
    let toml::Value::Table(table) = spanned.get_ref() else {
        return Err(v.err_at(
            spanned,
            ts,
            "base_score",
            format!(
                "with several target metrics, give a table keyed by metric, e.g. base_score = {{ {} = 0.6 }}",
                metrics[0]
            ),
        ));
    };
    for key in table.keys() {
        if !metrics.contains(key) {
            return Err(v.err_at(
                spanned,
                ts,
                "base_score",
                format!(
                    "`{key}` is not in [outcome] metrics; {}",
                    suggestion(key, metrics.iter().map(String::as_str))
                ),
            ));
        }
    }
    metrics
        .iter()
        .map(|m| match table.get(m) {
            Some(x) => model_scores(spanned, x, v, axes, &format!("base_score.{m}")),
            None => Ok(vec![None; axes.model.len()]),
        })
        .collect()
}

/// One metric's base scores: a number for every model, or a per-model table.
fn model_scores(
    spanned: &Spanned,
    value: &toml::Value,
    v: &Validator,
    axes: &Axes,
    key: &str,
) -> Result<Vec<Option<f64>>> {
    let ts = Some("task");
    let score = |x: &toml::Value, key: &str| -> Result<f64> {
        let s = v.float(x, ts, key)?;
        if !(0.0..=1.0).contains(&s) {
            let fix = if (1.0..=100.0).contains(&s) {
                format!(
                    "; scores are fractions: write {}",
                    crate::format::number(s / 100.0)
                )
            } else {
                String::new()
            };
            return Err(v.err_at(
                spanned,
                ts,
                key,
                format!("{s} must lie in [0, 1] (the measured pass rate before RL){fix}"),
            ));
        }
        Ok(s)
    };
    match value {
        toml::Value::Table(table) => {
            let ids: Vec<&str> = axes.model.iter().map(|m| m.id.as_str()).collect();
            for k in table.keys() {
                if !ids.contains(&k.as_str()) {
                    return Err(v.err_at(
                        spanned,
                        ts,
                        key,
                        format!(
                            "`{k}` is not on the model axis; {}",
                            suggestion(k, ids.iter().copied())
                        ),
                    ));
                }
            }
            axes.model
                .iter()
                .map(|m| {
                    table
                        .get(&m.id)
                        .map(|x| score(x, &format!("{key}.{}", m.id)))
                        .transpose()
                })
                .collect()
        }
        single => Ok(vec![Some(score(single, key)?); axes.model.len()]),
    }
}
