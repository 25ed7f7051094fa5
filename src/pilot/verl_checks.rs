//! veRL's own configuration checks, so that `plan` never writes a launch script veRL would
//! refuse at start-up (after the cluster queue and the model download).
//!
//! The rules are those of volcengine/verl@b178a3cd (2026-01-29), each with its place:
//! - `verl/utils/config.py` `validate_config`: without dynamic batching, `train_batch_size × n`
//!   must be divisible by the GPU count, and the actor (`ppo_micro_batch_size_per_gpu`), the
//!   reference and the rollout log-prob passes (`log_prob_micro_batch_size_per_gpu`) each need
//!   a micro-batch size; a LoRA rank above vLLM's largest (`MaxLoRARanks`, 512;
//!   `verl/workers/rollout/vllm_rollout/utils.py get_vllm_max_lora_rank`) is refused;
//!   `val_kwargs.do_sample` needs a positive temperature.
//! - `verl/workers/config/actor.py` `ActorConfig.__post_init__`/`validate`: without dynamic
//!   batching `train_batch_size ≥ ppo_mini_batch_size`; `critic.py` the same for the critic.
//! - `verl/workers/fsdp_workers.py` l.241-244: the mini-batch normalised per GPU,
//!   `ppo_mini_batch_size × n ÷ (GPUs ÷ ulysses)`, must stay above zero; l.622-628: the GPU count
//!   must be divisible by the rollout's `tensor_model_parallel_size`.
//! - `_generated_ppo_trainer.yaml`: `actor_rollout_ref.rollout.name` is mandatory (`???`).
//!
//! Defaults for keys a script leaves out are veRL's (the same yaml).

use std::collections::BTreeMap;

/// The rules a veRL configuration (given as its Hydra overrides) breaks, one sentence each;
/// empty when veRL would accept it.
pub fn verl_rejections(overrides: &BTreeMap<String, String>) -> Vec<String> {
    let o = Overrides(overrides);
    let mut problems = Vec::new();
    let gpus = o.number("trainer.n_gpus_per_node", 8) * o.number("trainer.nnodes", 1);
    let batch = o.number("data.train_batch_size", 1024);
    let n = o.number("actor_rollout_ref.rollout.n", 1);
    let mini = o.number("actor_rollout_ref.actor.ppo_mini_batch_size", 256);
    let dynamic = o.flag("actor_rollout_ref.actor.use_dynamic_bsz", false);
    let ulysses = o
        .number("actor_rollout_ref.actor.ulysses_sequence_parallel_size", 1)
        .max(1);
    let critic = o.text("algorithm.adv_estimator").is_none_or(|e| e == "gae");
    let reference = o.flag("actor_rollout_ref.actor.use_kl_loss", false)
        || o.flag("algorithm.use_kl_in_reward", false);
    if !o.set("actor_rollout_ref.rollout.name") {
        problems.push("actor_rollout_ref.rollout.name is mandatory (vllm or sglang)".to_string());
    }
    if !dynamic {
        problems.extend(fixed_batch_problems(
            &o,
            [gpus, batch, n, mini],
            reference,
            critic,
        ));
    }
    if gpus > 0 && mini * n / (gpus / ulysses).max(1) < 1 {
        problems.push(format!(
            "ppo_mini_batch_size × rollout.n = {} is below the {gpus} GPUs it is split over",
            mini * n
        ));
    }
    let tp = o.number("actor_rollout_ref.rollout.tensor_model_parallel_size", 2);
    if tp < 1 || gpus % tp != 0 {
        problems.push(format!(
            "the {gpus} GPUs are not divisible by rollout.tensor_model_parallel_size {tp}"
        ));
    }
    let lora = o.number("actor_rollout_ref.model.lora_rank", 0);
    if lora > 512 && o.text("actor_rollout_ref.rollout.name") == Some("vllm") {
        problems.push(format!("lora_rank {lora} is above vLLM's largest, 512"));
    }
    if o.flag("actor_rollout_ref.rollout.val_kwargs.do_sample", false)
        && o.text("actor_rollout_ref.rollout.temperature")
            .and_then(|t| t.parse::<f64>().ok())
            .is_some_and(|t| t <= 0.0)
    {
        problems.push("val_kwargs.do_sample needs rollout.temperature > 0".to_string());
    }
    problems
}

/// veRL's overrides as written, read as text, integers, flags and "set" (present, not null).
struct Overrides<'a>(&'a BTreeMap<String, String>);

impl Overrides<'_> {
    fn text(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    fn number(&self, key: &str, default: i64) -> i64 {
        self.text(key)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(default)
    }

    fn flag(&self, key: &str, default: bool) -> bool {
        self.text(key)
            .map_or(default, |v| v.eq_ignore_ascii_case("true"))
    }

    fn set(&self, key: &str) -> bool {
        self.text(key).is_some_and(|v| v != "null" && v != "None")
    }
}

/// What veRL checks of fixed-size batches (without `use_dynamic_bsz`): the batch divides over
/// the GPUs and covers the mini-batches, and each pass has exactly one micro-batch setting.
fn fixed_batch_problems(
    o: &Overrides,
    [gpus, batch, n, mini]: [i64; 4],
    reference: bool,
    critic: bool,
) -> Vec<String> {
    let mut problems = Vec::new();
    if gpus > 0 && (batch * n) % gpus != 0 {
        problems.push(format!(
            "train_batch_size × rollout.n = {} is not divisible by the {gpus} GPUs",
            batch * n
        ));
    }
    if batch < mini {
        problems.push(format!(
            "train_batch_size {batch} is below actor.ppo_mini_batch_size {mini}"
        ));
    }
    let micro_pairs = [
        ("actor_rollout_ref.actor", "ppo_micro_batch_size", true),
        (
            "actor_rollout_ref.ref",
            "log_prob_micro_batch_size",
            reference,
        ),
        (
            "actor_rollout_ref.rollout",
            "log_prob_micro_batch_size",
            true,
        ),
    ];
    for (section, param, needed) in micro_pairs {
        let deprecated = o.set(&format!("{section}.{param}"));
        let per_gpu = o.set(&format!("{section}.{param}_per_gpu"));
        if needed && !deprecated && !per_gpu {
            problems.push(format!(
                "{section}.{param}_per_gpu is needed without use_dynamic_bsz"
            ));
        }
        if deprecated && per_gpu {
            problems.push(format!(
                "{section}.{param} and {param}_per_gpu are both set"
            ));
        }
    }
    if critic {
        let critic_mini = o.number("critic.ppo_mini_batch_size", mini);
        if batch < critic_mini {
            problems.push(format!(
                "train_batch_size {batch} is below critic.ppo_mini_batch_size {critic_mini}"
            ));
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn overrides(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn a_script_without_dynamic_batching_needs_micro_batches() {
        let problems = verl_rejections(&overrides(&[
            ("actor_rollout_ref.rollout.name", "vllm"),
            ("algorithm.adv_estimator", "grpo"),
            ("data.train_batch_size", "16"),
            ("actor_rollout_ref.rollout.n", "2"),
            ("actor_rollout_ref.actor.ppo_mini_batch_size", "16"),
        ]));
        assert_eq!(
            problems,
            [
                "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu is needed without use_dynamic_bsz",
                "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu is needed without use_dynamic_bsz",
            ]
        );
    }

    #[test]
    fn dynamic_batching_lifts_the_micro_batch_rules_but_not_the_per_gpu_split() {
        let base = [
            ("actor_rollout_ref.rollout.name", "vllm"),
            ("algorithm.adv_estimator", "grpo"),
            ("actor_rollout_ref.actor.use_dynamic_bsz", "True"),
            ("data.train_batch_size", "16"),
            ("actor_rollout_ref.rollout.n", "2"),
            ("actor_rollout_ref.actor.ppo_mini_batch_size", "16"),
        ];
        assert!(verl_rejections(&overrides(&base)).is_empty());
        // 16 prompts × 2 responses split over 64 GPUs: zero per GPU.
        let mut wide = base.to_vec();
        wide.push(("trainer.nnodes", "8"));
        assert_eq!(
            verl_rejections(&overrides(&wide)),
            ["ppo_mini_batch_size × rollout.n = 32 is below the 64 GPUs it is split over"]
        );
    }

    #[test]
    fn tensor_parallel_lora_and_engine_name() {
        let problems = verl_rejections(&overrides(&[
            ("actor_rollout_ref.actor.use_dynamic_bsz", "True"),
            ("actor_rollout_ref.rollout.tensor_model_parallel_size", "3"),
            ("actor_rollout_ref.model.lora_rank", "1024"),
        ]));
        assert_eq!(
            problems,
            [
                "actor_rollout_ref.rollout.name is mandatory (vllm or sglang)",
                "the 8 GPUs are not divisible by rollout.tensor_model_parallel_size 3",
            ]
        );
    }
}
