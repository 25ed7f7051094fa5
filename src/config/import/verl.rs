//! veRL: a launch script, or a file of its Hydra overrides, read into settings (the defaults are
//! veRL's own at the commit the parent module names).

use std::collections::BTreeMap;

use super::*;

/// veRL keys whose effect on the cost the ledger does not model.
const VERL_NOT_MODELLED: &[(&str, &str)] = &[
    (
        "reward_model.model.fsdp_config.param_offload",
        "the reward model's offload frees memory during the update and adds host-device copies to scoring; the ledger keeps its weights on the GPU",
    ),
    (
        "reward_model.ulysses_sequence_parallel_size",
        "the reward model's sequence parallelism; scoring is priced without it",
    ),
    (
        "*fsdp_config.offload_policy",
        "FSDP2's CPUOffloadPolicy keeps parameters in host memory during compute and steps the optimizer on the CPU; not modelled (far slower than param_offload)",
    ),
    (
        "actor_rollout_ref.rollout.multi_turn.*",
        "multi-turn: the file gives caps, not means; give ⟨turns⟩, ⟨observation_tokens⟩ and ⟨tool_seconds⟩ to price the episodes",
    ),
    (
        "reward_model.overlong_buffer.*",
        "a length penalty: it changes the response lengths you should give with ⟨mean_response_tokens⟩",
    ),
    (
        "algorithm.filter_groups.max_num_gen_batches",
        "a cap on refill rounds; the ledger refills until the batch is full",
    ),
    (
        "trainer.val_before_train",
        "one validation before training; priced only with ⟨validation_prompts⟩",
    ),
    (
        "data.val_files",
        "the validation set's size is not in the script: give ⟨validation_prompts⟩ N to price validation",
    ),
];

/// Reads a veRL launch script, or a file of Hydra overrides (one or more per line).
pub fn import_verl(text: &str) -> Result<ImportedRun, ImportError> {
    let (pairs, ignored) = read_overrides(text)?;
    let mut b = Builder::new(ConfigFormat::Verl);
    b.set(Setting::Framework(Framework::Verl), "(veRL file)", None);
    if let Some(ignored) = ignored {
        b.run.notes.push(ignored);
    }
    levers(&pairs, &mut b)?;
    algorithm(&pairs, &mut b)?;
    finetune_and_reward(&pairs, &mut b)?;
    steps(&pairs, &mut b)?;
    rollout(&pairs, &mut b)?;
    sampling_validation_checkpoints(&pairs, &mut b)?;
    passes::verl(&pairs, &mut b)?;
    if b.run.find(|s| matches!(s, Setting::Steps(_))).is_none() {
        let note = match b.run.find(|s| matches!(s, Setting::DataEpochs(_))) {
            Some(_) => {
                "no trainer.total_training_steps: the steps are trainer.total_epochs passes over the training set; give ⟨dataset_prompts⟩ N (its prompts), or ⟨steps⟩ N"
            }
            None => {
                "no trainer.total_training_steps: give ⟨steps⟩ N or ⟨budget⟩ (veRL otherwise runs total_epochs over the dataset)"
            }
        };
        b.run.notes.push(note.to_string());
    }
    b.run.notes.push(RESPONSE_LENGTH_NOTE.to_string());
    b.run.settings.sort_by_key(|s| s.line.is_none());
    Ok(b.finish(&pairs, VERL_KEYS, VERL_NOT_MODELLED))
}

/// The Hydra overrides of the script's launch command (or of the whole file of plain overrides),
/// with a note on what other commands set; an error when there are none.
fn read_overrides(text: &str) -> Result<(Pairs, Option<String>), ImportError> {
    let words = shell::words(text).map_err(|e| error(Some(e.line), "", e.message))?;
    let (words, ignored) = launch_words(&words);
    let mut pairs = Pairs::default();
    for word in &words {
        if let Some((key, value)) = hydra_override(word) {
            pairs.insert(
                key,
                Value {
                    text: value,
                    line: word.line,
                    unresolved: word.unresolved,
                },
            );
        }
    }
    if pairs.order.is_empty() {
        let hint = if super::trl::looks_like_trl(text) {
            "it looks like a TRL config or command: read it with ⟨from_trl⟩"
        } else {
            "is this a veRL launch script?"
        };
        return Err(error(
            None,
            "",
            format!("no Hydra override (`section.key=value`) found; {hint}"),
        ));
    }
    Ok((pairs, ignored))
}

/// The policy and the levers, with veRL's defaults (see the module doc).
fn levers(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // A path under an unresolved folder (`${HOME}/models/Qwen2.5-7B`) still names the model by
    // its last component, which the catalog resolves.
    let model_key = "actor_rollout_ref.model.path";
    if let Some(path) = pairs.get(model_key) {
        b.set(
            Setting::Model(path.text.clone()),
            model_key,
            Some(path.line),
        );
    }
    b.use_keys(&[model_key]);
    // The levers, with veRL's defaults (see the module doc).
    for (key, default, make) in [
        (
            "data.train_batch_size",
            1024,
            Setting::PromptsPerStep as fn(u64) -> Setting,
        ),
        ("actor_rollout_ref.rollout.n", 1, Setting::GroupSize),
        ("data.max_response_length", 512, Setting::MaxResponseLen),
        (
            "actor_rollout_ref.actor.ppo_epochs",
            1,
            Setting::UpdateEpochs,
        ),
        (
            "actor_rollout_ref.actor.ppo_mini_batch_size",
            256,
            Setting::MiniBatchPrompts,
        ),
    ] {
        match pairs.positive(key)? {
            Some((n, line)) => b.set(make(n), key, Some(line)),
            None => b.set(make(default), key, None),
        }
        b.use_keys(&[key]);
    }
    // The prompt cap: what veRL pads every prompt to, computed when padding is kept. Only as
    // the file gives it (the mean prompt, --prompt-tokens, is not in the file).
    let prompt_cap_key = "data.max_prompt_length";
    if let Some((n, line)) = pairs.positive(prompt_cap_key)? {
        b.set(Setting::MaxPromptTokens(n), prompt_cap_key, Some(line));
    }
    b.use_keys(&[prompt_cap_key]);
    Ok(())
}

/// The algorithm (the advantage estimator) and the reference pass with its coefficient.
fn algorithm(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // Algorithm: the advantage estimator; only GAE trains a critic.
    let estimator_key = "algorithm.adv_estimator";
    let (estimator, estimator_line) = match pairs.text(estimator_key)? {
        Some((e, line)) => (e.to_string(), Some(line)),
        None => ("gae".to_string(), None),
    };
    let algorithm = if estimator == "gae" {
        Algorithm::Ppo
    } else {
        Algorithm::Grpo
    };
    b.set(Setting::Algorithm(algorithm), estimator_key, estimator_line);
    if !matches!(estimator.as_str(), "gae" | "grpo") {
        b.run.notes.push(format!(
            "adv_estimator `{estimator}` has no critic: priced as GRPO (same passes)"
        ));
    }
    // Reference pass: a KL loss or a KL penalty in the reward needs it.
    let kl_loss = pairs.boolean("actor_rollout_ref.actor.use_kl_loss")?;
    let kl_reward = pairs.boolean("algorithm.use_kl_in_reward")?;
    let kl_on = kl_loss.is_some_and(|(x, _)| x) || kl_reward.is_some_and(|(x, _)| x);
    let kl_line = kl_loss.or(kl_reward).map(|(_, line)| line);
    b.set(
        Setting::KlReference(kl_on),
        "actor_rollout_ref.actor.use_kl_loss / algorithm.use_kl_in_reward",
        kl_line,
    );
    let coef_key = if kl_reward.is_some_and(|(x, _)| x) {
        "algorithm.kl_ctrl.kl_coef"
    } else {
        "actor_rollout_ref.actor.kl_loss_coef"
    };
    if let Some((coef, line)) = pairs.float(coef_key)? {
        b.set(Setting::KlCoef(coef), coef_key, Some(line));
    }
    b.use_keys(&[
        "actor_rollout_ref.actor.use_kl_loss",
        "algorithm.use_kl_in_reward",
        "algorithm.kl_ctrl.kl_coef",
        "actor_rollout_ref.actor.kl_loss_coef",
        estimator_key,
    ]);
    Ok(())
}

/// LoRA and a reward model.
fn finetune_and_reward(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // Fine-tuning.
    if let Some((rank, line)) = pairs.integer("actor_rollout_ref.model.lora_rank")? {
        let finetune = if rank > 0 {
            Finetune::Lora(rank as u64)
        } else {
            Finetune::Full
        };
        b.set(
            Setting::Finetune(finetune),
            "actor_rollout_ref.model.lora_rank",
            Some(line),
        );
        b.use_keys(&["actor_rollout_ref.model.lora_rank"]);
    }
    // Reward model: the old `reward_model.*` section or the newer `reward.reward_model.*`.
    for (enable_key, path_key) in [
        ("reward_model.enable", "reward_model.model.path"),
        (
            "reward.reward_model.enable",
            "reward.reward_model.model_path",
        ),
    ] {
        if pairs.boolean(enable_key)?.is_some_and(|(x, _)| x) {
            let Some((path, line)) = pairs.text(path_key)? else {
                return Err(error(
                    pairs.get(enable_key).map(|v| v.line),
                    enable_key,
                    format!("a reward model is enabled but `{path_key}` is not set"),
                ));
            };
            b.set(Setting::Reward(format!("orm:{path}")), path_key, Some(line));
            b.use_keys(&[enable_key, path_key]);
        }
    }
    Ok(())
}

/// The run's length: its steps, or its epochs over the data.
fn steps(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // Steps: veRL writes -1 or null for "from total_epochs".
    let steps_key = "trainer.total_training_steps";
    let steps_unset = pairs
        .text(steps_key)?
        .is_none_or(|(t, _)| matches!(t, "null" | "None" | "~" | "-1"));
    if !steps_unset && let Some((n, line)) = pairs.positive(steps_key)? {
        b.set(Setting::Steps(n), steps_key, Some(line));
    } else if let Some((n, line)) = pairs.positive("trainer.total_epochs")? {
        b.set(Setting::DataEpochs(n), "trainer.total_epochs", Some(line));
    }
    b.use_keys(&[steps_key, "trainer.total_epochs"]);
    Ok(())
}

/// The cluster and the rollout engine's settings.
fn rollout(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // The cluster.
    let per_node = pairs.positive("trainer.n_gpus_per_node")?;
    let nodes = pairs.positive("trainer.nnodes")?;
    let gpus = per_node.map_or(8, |x| x.0) * nodes.map_or(1, |x| x.0);
    b.set(
        Setting::Gpus(gpus),
        "trainer.n_gpus_per_node × trainer.nnodes",
        per_node.or(nodes).map(|x| x.1),
    );
    b.use_keys(&["trainer.n_gpus_per_node", "trainer.nnodes"]);
    // The rollout engine.
    let name = pairs.text("actor_rollout_ref.rollout.name")?;
    let eager = pairs.boolean("actor_rollout_ref.rollout.enforce_eager")?;
    let engine = match name.map(|(n, _)| n) {
        Some("sglang") => Some("sglang"),
        // veRL's HFRollout: transformers' generate() on the actor's own weights.
        Some("hf") => Some("transformers-generate"),
        Some("vllm") | None => Some(if eager.is_some_and(|(x, _)| x) {
            "vllm-eager"
        } else {
            "vllm-cudagraph"
        }),
        Some(other) => {
            b.run.notes.push(format!(
                "rollout engine `{other}` has no profile: priced with the default engine"
            ));
            None
        }
    };
    if let Some(engine) = engine {
        b.set(
            Setting::Engine(engine.to_string()),
            "actor_rollout_ref.rollout.name / enforce_eager",
            name.map(|n| n.1).or(eager.map(|e| e.1)),
        );
    }
    b.use_keys(&[
        "actor_rollout_ref.rollout.name",
        "actor_rollout_ref.rollout.enforce_eager",
    ]);
    if let Some((x, line)) = pairs.float("actor_rollout_ref.rollout.gpu_memory_utilization")? {
        b.set(
            Setting::RolloutGpuMemoryUtilization(x),
            "actor_rollout_ref.rollout.gpu_memory_utilization",
            Some(line),
        );
    }
    if let Some((n, line)) = pairs.positive("actor_rollout_ref.rollout.max_num_seqs")? {
        b.set(
            Setting::MaxNumSeqs(n),
            "actor_rollout_ref.rollout.max_num_seqs",
            Some(line),
        );
    }
    if let Some((n, line)) =
        pairs.positive("actor_rollout_ref.rollout.tensor_model_parallel_size")?
    {
        b.set(
            Setting::RolloutTensorParallel(n),
            "actor_rollout_ref.rollout.tensor_model_parallel_size",
            Some(line),
        );
    }
    b.use_keys(&[
        "actor_rollout_ref.rollout.gpu_memory_utilization",
        "actor_rollout_ref.rollout.max_num_seqs",
        "actor_rollout_ref.rollout.tensor_model_parallel_size",
    ]);
    Ok(())
}

/// Dynamic sampling, validation and checkpoints.
fn sampling_validation_checkpoints(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // Dynamic sampling (veRL's DAPO recipe).
    if let Some((on, line)) = pairs.boolean("algorithm.filter_groups.enable")? {
        b.set(
            Setting::DynamicSampling(on),
            "algorithm.filter_groups.enable",
            Some(line),
        );
    }
    if let Some((n, line)) = pairs.positive("data.gen_batch_size")? {
        b.set(
            Setting::GenerationBatchPrompts(n),
            "data.gen_batch_size",
            Some(line),
        );
    }
    b.use_keys(&["algorithm.filter_groups.enable", "data.gen_batch_size"]);
    // Validation and checkpoints: −1 (veRL's default, `ppo_trainer.yaml`) means never, and a
    // key left out is veRL's default, not the tool's.
    for (key, make) in [
        (
            "trainer.test_freq",
            Setting::ValidationEverySteps as fn(u64) -> Setting,
        ),
        ("trainer.save_freq", Setting::CheckpointEverySteps),
    ] {
        match pairs.integer(key)? {
            Some((n, line)) => b.set(make(n.max(0) as u64), key, Some(line)),
            None => b.set(make(0), &format!("{key} (veRL's default, -1: never)"), None),
        }
        b.use_keys(&[key]);
    }
    let samples = "actor_rollout_ref.rollout.val_kwargs.n";
    match pairs.positive(samples)? {
        Some((n, line)) => b.set(Setting::ValidationSamplesPerPrompt(n), samples, Some(line)),
        None => b.set(
            Setting::ValidationSamplesPerPrompt(1),
            &format!("{samples} (veRL's default, 1)"),
            None,
        ),
    }
    if let Some((on, line)) = pairs.boolean("trainer.val_before_train")? {
        b.set(
            Setting::ValidationBeforeTraining(on),
            "trainer.val_before_train",
            Some(line),
        );
    }
    b.use_keys(&[samples, "trainer.val_before_train"]);
    Ok(())
}

/// The words veRL reads: those of the script's launch command when it has one (the first
/// command that runs a veRL entry point, `python3 -m verl.trainer.main_ppo`, a recipe's
/// `main_*` module or a `main_ppo.py` path), else every word (a file of overrides, one or more
/// per line). With a launch command, a note says how many overrides of other commands (a second
/// script, an evaluation after training) were left out.
fn launch_words(words: &[Word]) -> (Vec<&Word>, Option<String>) {
    let is_entry = |w: &Word| {
        let t = w.text.as_str();
        t.starts_with("verl.") || t.contains("main_ppo") || t.starts_with("recipe.")
    };
    let Some(launch) = words.iter().find(|w| is_entry(w)).map(|w| w.command) else {
        return (words.iter().collect(), None);
    };
    let (own, other): (Vec<&Word>, Vec<&Word>) = words.iter().partition(|w| w.command == launch);
    let left_out: Vec<&Word> = other
        .into_iter()
        .filter(|w| hydra_override(w).is_some())
        .collect();
    let note = left_out.first().map(|first| {
        format!(
            "read the overrides of the launch command on line {} only; {} key=value word(s) of other commands were left out (the first on line {})",
            own.first().map_or(0, |w| w.line),
            left_out.len(),
            first.line
        )
    });
    (own, note)
}

/// The Hydra overrides of a veRL launch script, key → value after shell expansion (the last
/// assignment of a key wins, as in Hydra). Used to check generated scripts against veRL's own
/// configuration rules (`pilot::verl_checks`).
pub fn verl_overrides(text: &str) -> Result<BTreeMap<String, String>, ImportError> {
    let words = shell::words(text).map_err(|e| error(Some(e.line), "", e.message))?;
    Ok(words.iter().filter_map(hydra_override).collect())
}

/// `key=value` (or `+key=value`, `++key=value`) with a dotted key: a Hydra override.
fn hydra_override(word: &Word) -> Option<(String, String)> {
    let text = word.text.trim_start_matches('+');
    let (key, value) = text.split_once('=')?;
    let valid = key.contains('.')
        && key.split('.').all(|part| {
            !part.is_empty() && part.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
    valid.then(|| (key.to_string(), value.to_string()))
}
