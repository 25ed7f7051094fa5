//! The keys that set how training passes are cut into micro-batches, padded and recomputed,
//! read into [`Setting`]s for both frameworks. Every one changes the price (the cost model's
//! training passes); a key that is set is never listed as "not priced".
//!
//! veRL (volcengine/verl@b178a3cd `_generated_ppo_trainer.yaml`): with `use_dynamic_bsz` the
//! update packs up to `ppo_max_token_len_per_gpu` tokens per GPU (16,384) and the log-prob
//! passes up to `log_prob_max_token_len_per_gpu`; without it they take
//! `ppo_micro_batch_size_per_gpu` and `log_prob_micro_batch_size_per_gpu` sequences.
//! `use_remove_padding` and `enable_gradient_checkpointing` are read under `actor_rollout_ref.model`;
//! `fsdp_config.param_offload` and `optimizer_offload` under the actor (the critic follows it)
//! and the reference's `param_offload` (the ledger's `offload` module), and the actor's
//! `ulysses_sequence_parallel_size`.
//!
//! TRL 1.16 (`GRPOTrainer`): every pass runs `per_device_train_batch_size` completions at a
//! time, padded (its GRPOConfig has no `padding_free`); `activation_checkpointing` (transformers
//! 5's name; `gradient_checkpointing` is its deprecated alias), on by default in TRL's configs
//! (`trl/trainer/base_config.py`).

use super::{Builder, ImportError, Pairs, Setting};

/// veRL's micro-batching keys.
pub(super) fn verl(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    const ACTOR: &str = "actor_rollout_ref.actor.";
    const ROLLOUT: &str = "actor_rollout_ref.rollout.";
    const MODEL: &str = "actor_rollout_ref.model.";
    let key = |prefix: &str, name: &str| format!("{prefix}{name}");
    let dynamic = pairs.boolean(&key(ACTOR, "use_dynamic_bsz"))?;
    let dynamic_on = dynamic.is_some_and(|(on, _)| on);
    if dynamic_on {
        let budget_key = key(ACTOR, "ppo_max_token_len_per_gpu");
        let (budget, line) = match pairs.positive(&budget_key)? {
            Some((n, line)) => (n, Some(line)),
            None => (16_384, dynamic.map(|d| d.1)),
        };
        b.set(Setting::MaxTokensPerGpu(budget), &budget_key, line);
    } else if let Some((n, line)) = pairs.positive(&key(ACTOR, "ppo_micro_batch_size_per_gpu"))? {
        b.set(
            Setting::MicroBatchSequences(n),
            &key(ACTOR, "ppo_micro_batch_size_per_gpu"),
            Some(line),
        );
    }
    // The log-prob passes follow the rollout's settings (the reference's mirror them).
    let log_dynamic = pairs
        .boolean(&key(ROLLOUT, "log_prob_use_dynamic_bsz"))?
        .map_or(dynamic_on, |(on, _)| on);
    if log_dynamic {
        let budget_key = key(ROLLOUT, "log_prob_max_token_len_per_gpu");
        if let Some((n, line)) = pairs.positive(&budget_key)? {
            b.set(Setting::LogProbMaxTokensPerGpu(n), &budget_key, Some(line));
        }
    } else {
        for prefix in [ROLLOUT, "actor_rollout_ref.ref."] {
            let micro_key = key(prefix, "log_prob_micro_batch_size_per_gpu");
            if let Some((n, line)) = pairs.positive(&micro_key)? {
                b.set(
                    Setting::LogProbMicroBatchSequences(n),
                    &micro_key,
                    Some(line),
                );
                break;
            }
        }
    }
    for (name, make) in [
        (
            "enable_gradient_checkpointing",
            Setting::GradientCheckpointing as fn(bool) -> Setting,
        ),
        ("use_remove_padding", Setting::RemovePadding),
    ] {
        let k = key(MODEL, name);
        if let Some((on, line)) = pairs.boolean(&k)? {
            b.set(make(on), &k, Some(line));
        }
    }
    offload(pairs, b)?;
    sequence_parallel(pairs, b)?;
    let used: Vec<String> = [
        key(ACTOR, "use_dynamic_bsz"),
        key(ACTOR, "ppo_max_token_len_per_gpu"),
        key(ACTOR, "ppo_micro_batch_size_per_gpu"),
        key(ROLLOUT, "log_prob_use_dynamic_bsz"),
        key(ROLLOUT, "log_prob_max_token_len_per_gpu"),
        key(ROLLOUT, "log_prob_micro_batch_size_per_gpu"),
        "actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu".to_string(),
        "actor_rollout_ref.ref.log_prob_use_dynamic_bsz".to_string(),
        "actor_rollout_ref.ref.log_prob_max_token_len_per_gpu".to_string(),
        key(MODEL, "enable_gradient_checkpointing"),
        key(MODEL, "use_remove_padding"),
    ]
    .into();
    b.use_keys(&used.iter().map(String::as_str).collect::<Vec<_>>());
    Ok(())
}

/// veRL's FSDP offload keys: the actor's parameters and optimizer, the reference's parameters.
/// The ledger offloads the critic as the actor; a critic key that disagrees gets a note.
fn offload(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    const ACTOR: &str = "actor_rollout_ref.actor.fsdp_config.";
    const CRITIC: &str = "critic.model.fsdp_config.";
    let reference = "actor_rollout_ref.ref.fsdp_config.param_offload";
    for (name, make) in [
        (
            "param_offload",
            Setting::ParamOffload as fn(bool) -> Setting,
        ),
        ("optimizer_offload", Setting::OptimizerOffload),
    ] {
        let actor_key = format!("{ACTOR}{name}");
        let actor = pairs.boolean(&actor_key)?;
        if let Some((on, line)) = actor {
            b.set(make(on), &actor_key, Some(line));
        }
        let critic_key = format!("{CRITIC}{name}");
        if let Some((on, line)) = pairs.boolean(&critic_key)?
            && on != actor.is_some_and(|(a, _)| a)
        {
            b.run.notes.push(format!(
                "line {line}: {critic_key}={on} differs from the actor's; the ledger offloads the critic as the actor"
            ));
        }
        b.use_keys(&[actor_key.as_str(), critic_key.as_str()]);
    }
    if let Some((on, line)) = pairs.boolean(reference)? {
        b.set(Setting::ReferenceOffload(on), reference, Some(line));
    }
    b.use_keys(&[reference]);
    Ok(())
}

/// veRL's Ulysses degree: the actor's; the reference's and the critic's are priced at the
/// actor's, with a note when a file sets them otherwise.
fn sequence_parallel(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // Newer veRL reads the degree under `fsdp_config`; older under the worker.
    let actor_keys = [
        "actor_rollout_ref.actor.ulysses_sequence_parallel_size",
        "actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size",
    ];
    let mut actor = None;
    for key in actor_keys {
        if let Some((n, line)) = pairs.positive(key)? {
            b.set(Setting::SequenceParallel(n), key, Some(line));
            actor = Some((n, line));
            break;
        }
    }
    let others = [
        "actor_rollout_ref.ref.ulysses_sequence_parallel_size",
        "actor_rollout_ref.ref.fsdp_config.ulysses_sequence_parallel_size",
        "critic.ulysses_sequence_parallel_size",
        "critic.model.fsdp_config.ulysses_sequence_parallel_size",
    ];
    for key in others {
        if let Some((n, line)) = pairs.positive(key)?
            && n != actor.map_or(1, |(a, _)| a)
        {
            b.run.notes.push(format!(
                "line {line}: {key}={n} differs from the actor's; the ledger prices every training pass at the actor's degree"
            ));
        }
    }
    b.use_keys(&actor_keys);
    b.use_keys(&others);
    Ok(())
}

/// TRL's: completions per pass, padding and recomputation.
pub(super) fn trl(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    let (n, line) = match pairs.positive("per_device_train_batch_size")? {
        Some((n, line)) => (n, Some(line)),
        None => (8, None),
    };
    b.set(
        Setting::MicroBatchSequences(n),
        "per_device_train_batch_size",
        line,
    );
    b.set(
        Setting::LogProbMicroBatchSequences(n),
        "per_device_train_batch_size",
        line,
    );
    // TRL 1.16's GRPOConfig has no padding_free: every batch is padded to its longest sequence.
    b.set(
        Setting::RemovePadding(false),
        "(TRL 1.16 pads every batch: GRPOConfig has no padding_free)",
        None,
    );
    // transformers 5 renamed gradient_checkpointing to activation_checkpointing (the old name
    // is a deprecated alias used when the new one is unset); TRL's configs default it to True.
    let checkpointing = match pairs.boolean("activation_checkpointing")? {
        Some(v) => Some((v, "activation_checkpointing")),
        None => pairs
            .boolean("gradient_checkpointing")?
            .map(|v| (v, "gradient_checkpointing")),
    };
    match checkpointing {
        Some(((on, line), key)) => b.set(Setting::GradientCheckpointing(on), key, Some(line)),
        None => b.set(
            Setting::GradientCheckpointing(true),
            "activation_checkpointing (TRL's default: true)",
            None,
        ),
    }
    b.use_keys(&["activation_checkpointing", "gradient_checkpointing"]);
    deepspeed_offload(pairs, b)
}

/// An Accelerate config's DeepSpeed offload devices (`cpu` or `nvme` offloads, `none` does not):
/// the parameters' device moves every model DeepSpeed wraps, the reference's with the policy's;
/// the optimizer's moves Adam's moments.
fn deepspeed_offload(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    let device = |key: &str| -> Result<Option<(bool, usize)>, ImportError> {
        match pairs.text(key)? {
            None => Ok(None),
            Some(("cpu" | "nvme", line)) => Ok(Some((true, line))),
            Some(("none", line)) => Ok(Some((false, line))),
            Some((other, line)) => Err(super::error(
                Some(line),
                key,
                format!("`{other}` is not a DeepSpeed offload device; use cpu, nvme or none"),
            )),
        }
    };
    let [params_key, optimizer_key] = super::trl::DEEPSPEED_OFFLOAD_KEYS;
    if let Some((on, line)) = device(params_key)? {
        b.set(Setting::ParamOffload(on), params_key, Some(line));
        b.set(Setting::ReferenceOffload(on), params_key, Some(line));
    }
    if let Some((on, line)) = device(optimizer_key)? {
        b.set(Setting::OptimizerOffload(on), optimizer_key, Some(line));
    }
    b.use_keys(&super::trl::DEEPSPEED_OFFLOAD_KEYS);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::{Setting, import_trl, import_verl};

    fn settings(run: &super::super::ImportedRun) -> Vec<Setting> {
        run.settings.iter().map(|s| s.setting.clone()).collect()
    }

    #[test]
    fn verl_micro_batch_keys_become_settings() {
        let run = import_verl(
            "python3 -m verl.trainer.main_ppo \\\n actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 \\\n actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4 \\\n actor_rollout_ref.model.enable_gradient_checkpointing=False \\\n actor_rollout_ref.model.use_remove_padding=False\n",
        )
        .unwrap();
        let s = settings(&run);
        assert!(s.contains(&Setting::MicroBatchSequences(2)));
        assert!(s.contains(&Setting::LogProbMicroBatchSequences(4)));
        assert!(s.contains(&Setting::GradientCheckpointing(false)));
        assert!(s.contains(&Setting::RemovePadding(false)));
        assert!(
            run.not_priced
                .iter()
                .all(|k| !k.key.contains("micro_batch"))
        );
    }

    #[test]
    fn verl_dynamic_batches_take_the_token_budget() {
        let run = import_verl(
            "python3 -m verl.trainer.main_ppo actor_rollout_ref.actor.use_dynamic_bsz=True actor_rollout_ref.actor.ppo_max_token_len_per_gpu=24000 actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=2 actor_rollout_ref.rollout.log_prob_max_token_len_per_gpu=48000\n",
        )
        .unwrap();
        let s = settings(&run);
        assert!(s.contains(&Setting::MaxTokensPerGpu(24_000)));
        assert!(s.contains(&Setting::LogProbMaxTokensPerGpu(48_000)));
        // The sequence count is ignored under dynamic batching, as veRL does.
        assert!(
            !s.iter()
                .any(|x| matches!(x, Setting::MicroBatchSequences(_)))
        );
    }

    #[test]
    fn trl_passes_run_per_device_batches_padded() {
        let run = import_trl(
            "model_name_or_path: Qwen/Qwen2.5-7B\nper_device_train_batch_size: 4\ngradient_checkpointing: true\n",
            Default::default(),
        )
        .unwrap();
        let s = settings(&run);
        assert!(s.contains(&Setting::MicroBatchSequences(4)));
        assert!(s.contains(&Setting::RemovePadding(false)));
        assert!(s.contains(&Setting::GradientCheckpointing(true)));
    }

    #[test]
    fn a_trl_scripts_deepspeed_offload_is_read_and_a_bad_device_refused() {
        let script = |device: &str| {
            format!(
                "cat > accelerate.yaml <<'YAML'\ndistributed_type: DEEPSPEED # don't quote\ndeepspeed_config:\n  zero_stage: 3\n  offload_param_device: {device}\n  offload_optimizer_device: none\nYAML\nsrun accelerate launch --config_file accelerate.yaml -m trl.scripts.grpo --model_name_or_path Qwen/Qwen2.5-7B --num_generations 8\n"
            )
        };
        let s = settings(&import_trl(&script("cpu"), Default::default()).unwrap());
        assert!(s.contains(&Setting::ParamOffload(true)));
        assert!(s.contains(&Setting::ReferenceOffload(true)));
        assert!(s.contains(&Setting::OptimizerOffload(false)));
        // The command's flags are still read beside the here-document's keys.
        assert!(s.contains(&Setting::GroupSize(8)));
        let e = import_trl(&script("gpu"), Default::default()).unwrap_err();
        assert_eq!(e.line, Some(5));
        assert!(e.to_string().contains("cpu, nvme or none"), "{e}");
    }
}
