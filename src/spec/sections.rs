//! One function per table of a grid file: each turns the raw TOML values of its table into
//! validated settings, with one-line errors that name the file, line and field. The `[axes]`
//! and `[constraints]` tables are [`super::axes_table`]'s.

use super::raw::{RawAgent, RawGrid, RawHardware, RawRun, RawTask};
use super::validator::{Spanned, Validator};
use crate::catalog::Catalog;
use crate::config::{Agent, ApiJudge, Framework, Hardware, MAX_LEVER, RunSettings, Schedule, Task};
use crate::error::Result;

/// Longest grid name: it names a folder (`results/NAME`) and, with a suffix, files in it, which
/// file systems cap at 255 bytes.
pub const MAX_GRID_NAME: usize = 100;

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
        || name.len() > MAX_GRID_NAME
        || name.starts_with('.')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c))
    {
        return Err(v.err(None, "name", format!("`{name}` must be 1 to {MAX_GRID_NAME} characters, start with a letter or digit and use only letters, digits, `-`, `_` or `.` (it names the output folder)")));
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
    let (gpu, gpus, engine) = hardware_cluster(&rh, v, catalog)?;
    // The framework's placement and engine settings, then what the grid sets.
    let d = Hardware::new(gpu, gpus, engine, framework);
    let usd_per_gpu_hour = v.setting_real_or(
        &rh.usd_per_gpu_hour,
        Some(hw),
        "usd_per_gpu_hour",
        d.usd_per_gpu_hour,
    )?;
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
    let rollout_gpu_memory_utilization = v.setting_real_or(
        &rh.rollout_gpu_memory_utilization,
        Some(hw),
        "rollout_gpu_memory_utilization",
        d.rollout_gpu_memory_utilization,
    )?;
    let max_num_seqs =
        v.setting_count_or(&rh.max_num_seqs, Some(hw), "max_num_seqs", d.max_num_seqs)?;
    let rollout_tensor_parallel = v.setting_count_or(
        &rh.rollout_tensor_parallel,
        Some(hw),
        "rollout_tensor_parallel",
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

/// `[hardware]`'s GPU, GPU count (both required) and rollout engine (the catalog's default when
/// absent).
fn hardware_cluster(
    rh: &RawHardware,
    v: &Validator,
    catalog: &Catalog,
) -> Result<(crate::catalog::GpuSpec, u64, crate::catalog::EngineSpec)> {
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
        Some(value) => v.setting_count(value, Some(hw), "gpus")?,
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
    Ok((gpu, gpus, engine))
}

/// `[task]`: prompt and response lengths, the pass-rate profile. `mean_response_tokens` is the
/// logged (capped) mean at `logged_cap_tokens` (default `largest_cap`, the grid's largest cap),
/// with `clip_ratio` optionally pinning the spread; `uncapped_mean_response_tokens` gives the
/// lognormal's own mean instead.
pub(super) fn task(rt: &RawTask, v: &Validator, largest_cap: f64) -> Result<Task> {
    let ts = Some("task");
    let task_defaults = Task::default();
    let prompt_tokens = match &rt.prompt_tokens {
        Some(value) => v.setting_count(value, ts, "prompt_tokens")? as f64,
        None => task_defaults.prompt_tokens,
    };
    let (mean_response_tokens, response_length_cv, mean_response_tokens_end) =
        task_lengths(rt, v, largest_cap)?;
    let (pass_rate_mean, pass_rate_concentration) = task_pass_rate(rt, v)?;
    let start = v.named_or(&rt.start, ts, "start", task_defaults.start)?;
    let dataset_prompts = match &rt.dataset_prompts {
        Some(value) => Some(v.setting_real_as(value, ts, "dataset_prompts", "dataset_prompts")?),
        None => None,
    };
    let max_prompt_tokens = match &rt.max_prompt_tokens {
        Some(value) => {
            let cap = v.setting_count(value, ts, "max_prompt_tokens")? as f64;
            if cap < prompt_tokens {
                return Err(v.err_at(
                    value,
                    ts,
                    "max_prompt_tokens",
                    format!("the prompt cap {cap} is below the mean prompt ({prompt_tokens} tokens, prompt_tokens); give a cap at least as long as the mean"),
                ));
            }
            Some(cap)
        }
        None => None,
    };
    let task = Task {
        start,
        dataset_prompts,
        max_prompt_tokens,
        mean_response_tokens_end,
        prompt_tokens,
        mean_response_tokens,
        response_length_cv,
        pass_rate_mean,
        pass_rate_concentration,
    };
    Ok(task)
}

/// `[task]`'s response lengths: the uncapped mean and spread behind the logged mean (or the
/// uncapped mean as given), and the uncapped mean at the run's end for a length schedule.
fn task_lengths(rt: &RawTask, v: &Validator, largest_cap: f64) -> Result<(f64, f64, Option<f64>)> {
    let ts = Some("task");
    let task_defaults = Task::default();
    let cv = v.setting_real_or(
        &rt.response_length_cv,
        ts,
        "response_length_cv",
        task_defaults.response_length_cv,
    )?;
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
    Ok((
        mean_response_tokens,
        response_length_cv,
        mean_response_tokens_end,
    ))
}

/// `[task] pass_rate`: the base policy's mean per-prompt pass rate and its concentration.
fn task_pass_rate(rt: &RawTask, v: &Validator) -> Result<(f64, f64)> {
    let ts = Some("task");
    let task_defaults = Task::default();
    Ok(match &rt.pass_rate {
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
                Some(value) => v.setting_real_as(
                    value,
                    ts,
                    "pass_rate.concentration",
                    "pass_rate_concentration",
                )?,
                None => task_defaults.pass_rate_concentration,
            };
            (mean, concentration)
        }
    })
}

/// `[agent]`: multi-turn episodes, tools, sandboxes and an API judge (absent: single-turn).
pub(super) fn agent(ra: &RawAgent, v: &Validator, catalog: &Catalog) -> Result<Agent> {
    let s = Some("agent");
    let d = Agent::default();
    // Each number checked against its declared range (`config::setting`), as `cost` checks it.
    let number = |value: &Option<Spanned>, key: &str, default: f64| {
        v.setting_real_or(value, s, key, default)
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
    // `[run] key` read into the field of the same name, with the default's value when absent:
    // a whole number in a range, a number ≥ 0, or a boolean.
    macro_rules! count {
        ($key:ident) => {
            v.setting_count_or(&rr.$key, rs, stringify!($key), d.$key)?
        };
    }
    macro_rules! setting_real {
        ($key:ident) => {
            v.setting_real_or(&rr.$key, rs, stringify!($key), d.$key)?
        };
    }
    macro_rules! non_negative {
        ($key:ident) => {
            v.non_negative_or(&rr.$key, rs, stringify!($key), d.$key)?
        };
    }
    macro_rules! boolean {
        ($key:ident) => {
            v.bool_or(&rr.$key, rs, stringify!($key), d.$key)?
        };
    }
    macro_rules! tokens {
        ($key:ident, $min:expr) => {
            v.count_or(
                &rr.$key,
                rs,
                stringify!($key),
                ($min, MAX_LEVER),
                d.$key as u64,
            )? as f64
        };
    }
    let framework = v.named_or(&rr.framework, rs, "framework", d.framework)?;
    Ok(RunSettings {
        framework,
        algorithm: v.named_or(&rr.algorithm, rs, "algorithm", d.algorithm)?,
        kl_reference: boolean!(kl_reference),
        kl_coef: setting_real!(kl_coef),
        prefix_cache: boolean!(prefix_cache),
        dynamic_sampling: boolean!(dynamic_sampling),
        old_logprob: v.named_or(
            &rr.old_logprob,
            rs,
            "old_logprob",
            framework.profile().old_logprob,
        )?,
        gradient_checkpointing: boolean!(gradient_checkpointing),
        sequence_parallel: v.setting_count_or(&rr.sequence_parallel, rs, "sequence_parallel", 1)?,
        offload: run_offload(rr, v)?,
        step_overhead_seconds: setting_real!(step_overhead_seconds),
        max_tokens_per_gpu: v.setting_count_or(
            &rr.max_tokens_per_gpu,
            rs,
            "max_tokens_per_gpu",
            d.max_tokens_per_gpu as u64,
        )? as f64,
        critic_max_tokens_per_gpu: tokens!(critic_max_tokens_per_gpu, 1),
        micro_batching: run_micro_batching(rr, v)?,
        generation_batch_prompts: optional_count(
            v,
            &rr.generation_batch_prompts,
            "generation_batch_prompts",
        )?,
        dynamic_sampling_filter_rate: optional_real(
            v,
            &rr.dynamic_sampling_filter_rate,
            "dynamic_sampling_filter_rate",
        )?,
        mini_batch_prompts: count!(mini_batch_prompts),
        pass_overhead_seconds: non_negative!(pass_overhead_seconds),
        train_launch_seconds_per_layer: non_negative!(train_launch_seconds_per_layer),
        judge_rubric_tokens: tokens!(judge_rubric_tokens, 0),
        judge_verdict_tokens: tokens!(judge_verdict_tokens, 1),
        critic: run_critic(rr, v, catalog)?,
        agent: Agent::default(),
        ..run_beyond_steps(rr, v)?
    })
}

/// `[run]`'s keys for what a run pays beyond its steps (start-up, checkpoints, validation), on
/// the defaults elsewhere.
fn run_beyond_steps(rr: &RawRun, v: &Validator) -> Result<RunSettings> {
    let (rs, d) = (Some("run"), RunSettings::default());
    let count = |value: &Option<Spanned>, key: &str, default: u64| {
        v.setting_count_or(value, rs, key, default)
    };
    Ok(RunSettings {
        startup_seconds: optional_real(v, &rr.startup_seconds, "startup_seconds")?,
        checkpoint_every_steps: count(
            &rr.checkpoint_every_steps,
            "checkpoint_every_steps",
            d.checkpoint_every_steps,
        )?,
        checkpoint_seconds: optional_real(v, &rr.checkpoint_seconds, "checkpoint_seconds")?,
        checkpoint_write_gb_per_second: v.setting_real_or(
            &rr.checkpoint_write_gb_per_second,
            rs,
            "checkpoint_write_gb_per_second",
            d.checkpoint_write_gb_per_second,
        )?,
        validation_every_steps: count(
            &rr.validation_every_steps,
            "validation_every_steps",
            d.validation_every_steps,
        )?,
        validation_prompts: count(
            &rr.validation_prompts,
            "validation_prompts",
            d.validation_prompts,
        )?,
        validation_samples_per_prompt: count(
            &rr.validation_samples_per_prompt,
            "validation_samples_per_prompt",
            d.validation_samples_per_prompt,
        )?,
        validation_before_training: v.bool_or(
            &rr.validation_before_training,
            rs,
            "validation_before_training",
            d.validation_before_training,
        )?,
        restarts_per_gpu_day: v.setting_real_or(
            &rr.restarts_per_gpu_day,
            rs,
            "restarts_per_gpu_day",
            d.restarts_per_gpu_day,
        )?,
        ..d
    })
}

/// `[run]`'s offload keys (veRL FSDP's `param_offload`, `optimizer_offload` and the
/// reference's `param_offload`; `offload_per_step` moves them once per step instead of around
/// each pass, as slime and OpenRLHF's sleep mode do).
fn run_offload(rr: &RawRun, v: &Validator) -> Result<crate::config::Offload> {
    let (rs, d) = (Some("run"), crate::config::Offload::default());
    Ok(crate::config::Offload {
        params: v.bool_or(&rr.param_offload, rs, "param_offload", d.params)?,
        optimizer: v.bool_or(&rr.optimizer_offload, rs, "optimizer_offload", d.optimizer)?,
        reference: v.bool_or(&rr.reference_offload, rs, "reference_offload", d.reference)?,
        per_step: v.bool_or(&rr.offload_per_step, rs, "offload_per_step", d.per_step)?,
    })
}

/// `[run] critic`: the critic model's catalog entry, when one is named.
fn run_critic(
    rr: &RawRun,
    v: &Validator,
    catalog: &Catalog,
) -> Result<Option<crate::catalog::ModelSpec>> {
    let Some(value) = &rr.critic else {
        return Ok(None);
    };
    let id = v.string(value, Some("run"), "critic")?;
    let model = catalog
        .model(&id)
        .map_err(|m| v.err(Some("run"), "critic", m))?;
    Ok(Some(model.clone()))
}

/// An optional `[run]` count of at least 1 (None when absent).
/// `[run] key` as a number in its setting's range, or None when absent (a default that depends on
/// the model).
fn optional_real(v: &Validator, value: &Option<Spanned>, key: &str) -> Result<Option<f64>> {
    match value {
        Some(value) => v.setting_real_as(value, Some("run"), key, key).map(Some),
        None => Ok(None),
    }
}

fn optional_count(v: &Validator, value: &Option<Spanned>, key: &str) -> Result<Option<u64>> {
    match value {
        Some(_) => v.setting_count_or(value, Some("run"), key, 1).map(Some),
        None => Ok(None),
    }
}

/// `[run]`'s micro-batch keys.
fn run_micro_batching(rr: &RawRun, v: &Validator) -> Result<crate::config::MicroBatching> {
    Ok(crate::config::MicroBatching {
        update_sequences: optional_count(v, &rr.micro_batch_sequences, "micro_batch_sequences")?,
        log_prob_sequences: optional_count(
            v,
            &rr.log_prob_micro_batch_sequences,
            "log_prob_micro_batch_sequences",
        )?,
        log_prob_max_tokens_per_gpu: optional_count(
            v,
            &rr.log_prob_max_tokens_per_gpu,
            "log_prob_max_tokens_per_gpu",
        )?
        .map(|n| n as f64),
        remove_padding: v.bool_or(&rr.remove_padding, Some("run"), "remove_padding", true)?,
    })
}
