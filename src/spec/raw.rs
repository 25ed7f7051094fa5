//! The grid file's raw, serde-facing structure: only key names and table shapes are checked
//! here (unknown keys are refused with the nearest valid key); every value is kept as a TOML
//! value so that validation can say exactly what is wrong with it.

use std::path::Path;

use serde::Deserialize;

use super::Axis;
use super::validator::Spanned;
use crate::error::{Error, suggestion};
use crate::toml_text::{line_of_offset, toml_error};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawGrid {
    pub(super) name: Option<Spanned>,
    pub(super) description: Option<Spanned>,
    pub(super) seed: Option<Spanned>,
    pub(super) hardware: Option<RawHardware>,
    #[serde(default)]
    pub(super) task: RawTask,
    pub(super) axes: Option<RawAxes>,
    #[serde(default)]
    pub(super) run: RawRun,
    #[serde(default)]
    pub(super) agent: RawAgent,
    #[serde(default)]
    pub(super) constraints: RawConstraints,
    #[serde(default)]
    pub(super) outcome: toml::Table,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawHardware {
    pub(super) gpu: Option<Spanned>,
    pub(super) gpus: Option<Spanned>,
    pub(super) usd_per_gpu_hour: Option<Spanned>,
    pub(super) schedule: Option<Spanned>,
    pub(super) async_rollout_fraction: Option<Spanned>,
    pub(super) rollout_gpu_memory_utilization: Option<Spanned>,
    pub(super) max_num_seqs: Option<Spanned>,
    pub(super) usable_memory_fraction: Option<Spanned>,
    pub(super) engine: Option<Spanned>,
    pub(super) rollout_tensor_parallel: Option<Spanned>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTask {
    pub(super) prompt_tokens: Option<Spanned>,
    pub(super) mean_response_tokens: Option<Spanned>,
    pub(super) mean_response_tokens_end: Option<Spanned>,
    pub(super) uncapped_mean_response_tokens: Option<Spanned>,
    pub(super) clip_ratio: Option<Spanned>,
    pub(super) logged_cap_tokens: Option<Spanned>,
    pub(super) response_length_cv: Option<Spanned>,
    pub(super) pass_rate: Option<RawPassRate>,
    pub(super) base_score: Option<Spanned>,
    pub(super) start: Option<Spanned>,
    pub(super) dataset_prompts: Option<Spanned>,
    pub(super) max_prompt_tokens: Option<Spanned>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawPassRate {
    pub(super) mean: Option<Spanned>,
    pub(super) concentration: Option<Spanned>,
}

/// `[axes]`: each axis's list under its key ([`Axis::name`]), and `iterations`. Read key by key
/// from the axis list, so an axis needs no field here; an unknown key is refused where serde's
/// derive refuses one (in the key, so the error carries its span) with the same message.
#[derive(Default)]
pub(super) struct RawAxes {
    lists: [Option<Spanned>; Axis::COUNT],
    /// `iterations`, the alternative to `budget`.
    pub(super) iterations: Option<Spanned>,
}

impl RawAxes {
    /// The list given for `axis`, if any.
    pub(super) fn list(&self, axis: Axis) -> &Option<Spanned> {
        &self.lists[axis as usize]
    }
}

/// A key of `[axes]`: an axis, or None for `iterations`.
struct AxesKey(Option<Axis>);

impl<'de> Deserialize<'de> for AxesKey {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = AxesKey;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an axis name")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<AxesKey, E> {
                match Axis::from_name(key) {
                    Some(axis) => Ok(AxesKey(Some(axis))),
                    None if key == "iterations" => Ok(AxesKey(None)),
                    None => Err(E::unknown_field(key, &Axis::GRID_KEYS)),
                }
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

impl<'de> Deserialize<'de> for RawAxes {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TableVisitor;
        impl<'de> serde::de::Visitor<'de> for TableVisitor {
            type Value = RawAxes;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("the [axes] table")
            }
            fn visit_map<M: serde::de::MapAccess<'de>>(
                self,
                mut map: M,
            ) -> Result<RawAxes, M::Error> {
                let mut axes = RawAxes::default();
                while let Some(AxesKey(axis)) = map.next_key()? {
                    let value = Some(map.next_value()?);
                    match axis {
                        Some(axis) => axes.lists[axis as usize] = value,
                        None => axes.iterations = value,
                    }
                }
                Ok(axes)
            }
        }
        deserializer.deserialize_map(TableVisitor)
    }
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRun {
    pub(super) framework: Option<Spanned>,
    pub(super) algorithm: Option<Spanned>,
    pub(super) kl_reference: Option<Spanned>,
    pub(super) kl_coef: Option<Spanned>,
    pub(super) prefix_cache: Option<Spanned>,
    pub(super) dynamic_sampling: Option<Spanned>,
    pub(super) old_logprob: Option<Spanned>,
    pub(super) gradient_checkpointing: Option<Spanned>,
    pub(super) param_offload: Option<Spanned>,
    pub(super) optimizer_offload: Option<Spanned>,
    pub(super) reference_offload: Option<Spanned>,
    pub(super) offload_per_step: Option<Spanned>,
    pub(super) sequence_parallel: Option<Spanned>,
    pub(super) step_overhead_seconds: Option<Spanned>,
    pub(super) max_tokens_per_gpu: Option<Spanned>,
    pub(super) critic_max_tokens_per_gpu: Option<Spanned>,
    pub(super) micro_batch_sequences: Option<Spanned>,
    pub(super) log_prob_micro_batch_sequences: Option<Spanned>,
    pub(super) log_prob_max_tokens_per_gpu: Option<Spanned>,
    pub(super) remove_padding: Option<Spanned>,
    pub(super) mini_batch_prompts: Option<Spanned>,
    pub(super) startup_seconds: Option<Spanned>,
    pub(super) checkpoint_every_steps: Option<Spanned>,
    pub(super) checkpoint_seconds: Option<Spanned>,
    pub(super) checkpoint_write_gb_per_second: Option<Spanned>,
    pub(super) validation_every_steps: Option<Spanned>,
    pub(super) validation_prompts: Option<Spanned>,
    pub(super) validation_samples_per_prompt: Option<Spanned>,
    pub(super) validation_before_training: Option<Spanned>,
    pub(super) restarts_per_gpu_day: Option<Spanned>,
    pub(super) generation_batch_prompts: Option<Spanned>,
    pub(super) dynamic_sampling_filter_rate: Option<Spanned>,
    pub(super) pass_overhead_seconds: Option<Spanned>,
    pub(super) train_launch_seconds_per_layer: Option<Spanned>,
    pub(super) judge_rubric_tokens: Option<Spanned>,
    pub(super) judge_verdict_tokens: Option<Spanned>,
    pub(super) critic: Option<Spanned>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawAgent {
    pub(super) turns: Option<Spanned>,
    pub(super) observation_tokens: Option<Spanned>,
    pub(super) turns_cv: Option<Spanned>,
    pub(super) tool_seconds: Option<Spanned>,
    pub(super) tool_seconds_p99: Option<Spanned>,
    pub(super) tool_failure_rate: Option<Spanned>,
    /// `wait`, or `environment_wait` as `cost`'s flag and the Python keyword spell it.
    #[serde(alias = "environment_wait")]
    pub(super) wait: Option<Spanned>,
    pub(super) sandbox_usd_per_hour: Option<Spanned>,
    pub(super) reward_sandbox_seconds: Option<Spanned>,
    pub(super) judge_api: Option<Spanned>,
    pub(super) judge_usd_per_million_input: Option<Spanned>,
    pub(super) judge_usd_per_million_output: Option<Spanned>,
    pub(super) judge_output_tokens: Option<Spanned>,
    pub(super) judge_tokens_per_minute: Option<Spanned>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawConstraints {
    pub(super) max_rollouts_per_step: Option<Spanned>,
    pub(super) min_rollouts_per_step: Option<Spanned>,
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
            "agent",
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
            "engine",
            "rollout_tensor_parallel",
        ],
    ),
    (
        "task",
        &[
            "prompt_tokens",
            "mean_response_tokens",
            "mean_response_tokens_end",
            "uncapped_mean_response_tokens",
            "clip_ratio",
            "logged_cap_tokens",
            "response_length_cv",
            "pass_rate",
            "base_score",
            "start",
            "dataset_prompts",
            "max_prompt_tokens",
        ],
    ),
    ("task.pass_rate", &["mean", "concentration"]),
    ("axes", &Axis::GRID_KEYS),
    (
        "run",
        &[
            "framework",
            "algorithm",
            "kl_reference",
            "kl_coef",
            "prefix_cache",
            "dynamic_sampling",
            "old_logprob",
            "gradient_checkpointing",
            "param_offload",
            "optimizer_offload",
            "reference_offload",
            "offload_per_step",
            "sequence_parallel",
            "step_overhead_seconds",
            "max_tokens_per_gpu",
            "critic_max_tokens_per_gpu",
            "micro_batch_sequences",
            "log_prob_micro_batch_sequences",
            "log_prob_max_tokens_per_gpu",
            "remove_padding",
            "mini_batch_prompts",
            "startup_seconds",
            "checkpoint_every_steps",
            "checkpoint_seconds",
            "checkpoint_write_gb_per_second",
            "validation_every_steps",
            "validation_prompts",
            "validation_samples_per_prompt",
            "validation_before_training",
            "restarts_per_gpu_day",
            "generation_batch_prompts",
            "dynamic_sampling_filter_rate",
            "pass_overhead_seconds",
            "train_launch_seconds_per_layer",
            "judge_rubric_tokens",
            "judge_verdict_tokens",
            "critic",
        ],
    ),
    (
        "agent",
        &[
            "turns",
            "observation_tokens",
            "tool_seconds",
            "wait",
            "sandbox_usd_per_hour",
            "reward_sandbox_seconds",
            "judge_api",
            "judge_usd_per_million_input",
            "judge_usd_per_million_output",
            "judge_output_tokens",
            "judge_tokens_per_minute",
        ],
    ),
    (
        "constraints",
        &["max_rollouts_per_step", "min_rollouts_per_step"],
    ),
    ("outcome", &["metric", "metrics"]),
];

/// Turns serde's "unknown field" into "unknown key, did you mean"; other errors keep their text.
pub(super) fn unknown_key_error(path: &Path, text: &str, error: &toml::de::Error) -> Error {
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
