//! TRL: a GRPOConfig as YAML or JSON, or the `trl grpo` / `accelerate launch` command line, read
//! into settings (the defaults are TRL's own at the commit the parent module names).

use super::*;

/// TRL keys whose effect on the cost the ledger does not model.
const TRL_NOT_MODELLED: &[(&str, &str)] = &[
    (
        "max_prompt_length",
        "a cap; the ledger prices the mean prompt (⟨prompt_tokens⟩)",
    ),
    (
        "max_tool_calling_iterations",
        "a cap on tool calls, not their mean; give ⟨turns⟩, ⟨observation_tokens⟩ and ⟨tool_seconds⟩ to price the episodes",
    ),
    (
        "use_transformers_paged",
        "transformers' paged generation has no engine profile; priced as vLLM",
    ),
    (
        "num_generations_eval",
        "validation is priced only with ⟨validation_prompts⟩",
    ),
    (
        "num_train_epochs",
        "steps then depend on the dataset size: give ⟨steps⟩ or ⟨budget⟩",
    ),
];

/// What the command line says about a TRL run that its batch arithmetic depends on: TRL's batch
/// sizes count completions per device, so prompts per step depend on the number of processes
/// and on G.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TrlLaunch {
    /// Training processes when the file does not say (`accelerate launch --num_processes`).
    pub processes: Option<u64>,
    /// G when the command line overrides `num_generations`.
    pub num_generations: Option<u64>,
}

/// Reads a TRL GRPO configuration: a JSON object, a flat YAML file, or a command line
/// (`trl grpo --key value …`, `accelerate launch … -m trl.scripts.grpo …`).
pub fn import_trl(text: &str, launch: TrlLaunch) -> Result<ImportedRun, ImportError> {
    let pairs = read_config(text)?;
    let mut b = Builder::new(ConfigFormat::Trl);
    b.set(Setting::Framework(Framework::Trl), "(TRL file)", None);
    if let Some(model) = pairs.get("model_name_or_path") {
        b.set(
            Setting::Model(model.text.clone()),
            "model_name_or_path",
            Some(model.line),
        );
    }
    b.use_keys(&["model_name_or_path"]);
    b.set(Setting::Algorithm(Algorithm::Grpo), "GRPOTrainer", None);
    let (accumulation, steps_per_generation, epochs) = batch_shape(&pairs, launch, &mut b)?;
    // One generation feeds steps_per_generation ÷ accumulation optimizer steps, num_iterations
    // times over (trl/trainer/grpo_trainer.py: the buffered generation is reused).
    let optimizer_steps_per_iteration =
        (steps_per_generation as f64 / accumulation as f64) * epochs as f64;
    let to_iterations = |n: u64| ((n as f64 / optimizer_steps_per_iteration).ceil() as u64).max(1);
    if let Some((n, line)) = pairs.positive("max_steps")? {
        b.set(Setting::Steps(to_iterations(n)), "max_steps", Some(line));
    } else {
        b.run.notes.push(
            "no max_steps: give ⟨steps⟩ N or ⟨budget⟩ (TRL otherwise runs num_train_epochs over the dataset)".to_string(),
        );
    }
    b.use_keys(&["max_steps"]);
    kl_and_generation(&pairs, &mut b)?;
    lora_and_reward(&pairs, &mut b)?;
    evaluation_and_checkpoints(&pairs, &mut b, &to_iterations)?;
    passes::trl(&pairs, &mut b)?;
    b.run.notes.push(RESPONSE_LENGTH_NOTE.to_string());
    b.run.settings.sort_by_key(|s| s.line.is_none());
    Ok(b.finish(&pairs, TRL_KEYS, TRL_NOT_MODELLED))
}

/// Evaluation and checkpoints, in optimizer steps converted to iterations, with the defaults of
/// `transformers.TrainingArguments` where a key is left out: `eval_strategy="no"` (never),
/// `eval_on_start=False`, `save_strategy="steps"` every `save_steps=500`; evaluation samples
/// `num_generations_eval` responses per prompt (TRL 0.26 and later; None: `num_generations`).
fn evaluation_and_checkpoints(
    pairs: &Pairs,
    b: &mut Builder,
    to_iterations: &dyn Fn(u64) -> u64,
) -> Result<(), ImportError> {
    let strategy = |key: &str| -> Result<bool, ImportError> {
        Ok(pairs.text(key)?.is_none_or(|(s, _)| s == "steps"))
    };
    let evaluating = strategy("eval_strategy")? && pairs.get("eval_strategy").is_some();
    match pairs.positive("eval_steps")? {
        Some((n, line)) if evaluating => b.set(
            Setting::ValidationEverySteps(to_iterations(n)),
            "eval_steps",
            Some(line),
        ),
        _ => b.set(
            Setting::ValidationEverySteps(0),
            "eval_strategy (TrainingArguments' default, \"no\")",
            None,
        ),
    }
    match pairs.boolean("eval_on_start")? {
        Some((on, line)) => b.set(
            Setting::ValidationBeforeTraining(on),
            "eval_on_start",
            Some(line),
        ),
        None => b.set(
            Setting::ValidationBeforeTraining(false),
            "eval_on_start (TrainingArguments' default, false)",
            None,
        ),
    }
    for key in ["num_generations_eval", "num_generations"] {
        if let Some((n, line)) = pairs.positive(key)? {
            b.set(Setting::ValidationSamplesPerPrompt(n), key, Some(line));
            break;
        }
    }
    if strategy("save_strategy")? {
        match pairs.positive("save_steps")? {
            Some((n, line)) => b.set(
                Setting::CheckpointEverySteps(to_iterations(n)),
                "save_steps",
                Some(line),
            ),
            None => b.set(
                Setting::CheckpointEverySteps(to_iterations(500)),
                "save_steps (TrainingArguments' default, 500)",
                None,
            ),
        }
    } else {
        b.set(Setting::CheckpointEverySteps(0), "save_strategy", None);
    }
    b.use_keys(&[
        "eval_strategy",
        "eval_steps",
        "eval_on_start",
        "num_generations_eval",
        "save_strategy",
        "save_steps",
    ]);
    Ok(())
}

/// The TRL keys of `text`; an error naming the right flag when it is a veRL script, or when it
/// has no TRL key at all.
fn read_config(text: &str) -> Result<Pairs, ImportError> {
    if let Some(line) = verl_launch_line(text) {
        return Err(error(
            Some(line),
            "",
            "this is a veRL launch script (it runs a verl entry point with Hydra overrides), not a TRL config: read it with ⟨from_verl⟩",
        ));
    }
    let pairs = trl_pairs(text)?;
    if pairs.order.is_empty() {
        return Err(error(
            None,
            "",
            "no TRL key found; give a GRPOConfig as YAML (`key: value`), JSON, or a `trl grpo --key value` command",
        ));
    }
    Ok(pairs)
}

/// The group, cap, epochs, batch sizes and processes: set on `b`, with (gradient accumulation,
/// steps per generation, num_iterations) returned for the conversion of optimizer steps.
fn batch_shape(
    pairs: &Pairs,
    launch: TrlLaunch,
    b: &mut Builder,
) -> Result<(u64, u64, u64), ImportError> {
    let devices = launch.processes;
    let get = |key: &str, default: u64| -> Result<(u64, Option<usize>), ImportError> {
        Ok(pairs
            .positive(key)?
            .map_or((default, None), |(n, line)| (n, Some(line))))
    };
    let (file_group, group_line) = get("num_generations", 8)?;
    let group = launch.num_generations.unwrap_or(file_group);
    let (cap, cap_line) = get("max_completion_length", 512)?;
    let (epochs, epochs_line) = get("num_iterations", 1)?;
    let (per_device, per_device_line) = get("per_device_train_batch_size", 8)?;
    let (accumulation, _) = get("gradient_accumulation_steps", 1)?;
    let (processes, processes_line) = match pairs.positive("num_processes")? {
        Some((n, line)) => (n, Some(line)),
        None => (devices.unwrap_or(8), None),
    };
    let (steps_per_generation, _) = get("steps_per_generation", accumulation)?;
    let (optimizer_batch, generation_batch) = batches(
        pairs,
        [per_device, processes, accumulation, steps_per_generation],
        per_device_line,
    )?;
    if generation_batch % group != 0 {
        return Err(error(
            per_device_line.or(group_line),
            "per_device_train_batch_size",
            format!(
                "the generation batch ({generation_batch} completions: per_device_train_batch_size {per_device} × {processes} processes × steps_per_generation {steps_per_generation}) is not a multiple of num_generations {group}; TRL refuses this"
            ),
        ));
    }
    if processes_line.is_none() {
        b.run.notes.push(format!(
            "TRL's batch sizes are per device: assumed {processes} training processes (⟨gpus⟩, or num_processes in the file)"
        ));
    }
    let prompts = generation_batch / group;
    b.set(Setting::GroupSize(group), "num_generations", group_line);
    b.set(
        Setting::MaxResponseLen(cap),
        "max_completion_length",
        cap_line,
    );
    b.set(Setting::UpdateEpochs(epochs), "num_iterations", epochs_line);
    b.set(
        Setting::PromptsPerStep(prompts),
        "per_device_train_batch_size × processes × steps_per_generation ÷ num_generations",
        per_device_line,
    );
    b.set(
        Setting::MiniBatchPrompts((optimizer_batch / group).max(1)),
        "per_device_train_batch_size × processes × gradient_accumulation_steps ÷ num_generations",
        per_device_line,
    );
    let processes_key = if processes_line.is_some() {
        "num_processes"
    } else {
        "⟨gpus⟩ (num_processes is not in the file)"
    };
    b.set(Setting::Gpus(processes), processes_key, processes_line);
    b.use_keys(&[
        "num_generations",
        "max_completion_length",
        "num_iterations",
        "per_device_train_batch_size",
        "gradient_accumulation_steps",
        "num_processes",
        "steps_per_generation",
        "generation_batch_size",
    ]);
    Ok((accumulation, steps_per_generation, epochs))
}

/// The optimizer batch and the generation batch in completions, from `[per_device, processes,
/// accumulation, steps_per_generation]` (or the file's `generation_batch_size`). Products of
/// counts that each pass the bound can still overflow (found by fuzzing): refused.
fn batches(
    pairs: &Pairs,
    [per_device, processes, accumulation, steps_per_generation]: [u64; 4],
    per_device_line: Option<usize>,
) -> Result<(u64, u64), ImportError> {
    let product = |factors: [u64; 3]| {
        factors
            .iter()
            .try_fold(1u64, |a, &b| a.checked_mul(b))
            .filter(|&n| n <= crate::config::MAX_LEVER as u64)
            .ok_or_else(|| {
                error(
                    per_device_line,
                    "per_device_train_batch_size",
                    format!(
                        "per_device_train_batch_size {per_device} × {processes} processes × {} steps is beyond any real batch",
                        factors[2]
                    ),
                )
            })
    };
    let optimizer_batch = product([per_device, processes, accumulation])?;
    let generation_batch = match pairs.positive("generation_batch_size")? {
        Some((n, _)) => n,
        None => product([per_device, processes, steps_per_generation])?,
    };
    Ok((optimizer_batch, generation_batch))
}

/// The reference pass (beta) and the generation mode with its vLLM settings.
fn kl_and_generation(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // KL: beta > 0 loads a reference model.
    let (beta, beta_line) = match pairs.float("beta")? {
        Some((x, line)) => (x, Some(line)),
        None => (0.0, None),
    };
    b.set(Setting::KlReference(beta > 0.0), "beta", beta_line);
    if beta > 0.0 {
        b.set(Setting::KlCoef(beta), "beta", beta_line);
    }
    b.use_keys(&["beta"]);
    // Generation: vLLM colocated, vLLM server (dedicated GPUs), or transformers.
    let use_vllm = pairs.boolean("use_vllm")?;
    let mode = pairs.text("vllm_mode")?;
    match (use_vllm.is_some_and(|(x, _)| x), mode.map(|(m, _)| m)) {
        (false, _) => {
            // TRL then generates with the training model's own generate(), on the training
            // GPUs: static batches, eager, a concatenated KV cache.
            let line = use_vllm.map(|(_, line)| line);
            b.set(
                Setting::Engine("transformers-generate".to_string()),
                "use_vllm",
                line,
            );
            b.set(Setting::Schedule(Schedule::Colocated), "use_vllm", line);
        }
        (true, Some("server")) => {
            b.set(
                Setting::Schedule(Schedule::Separate),
                "vllm_mode",
                mode.map(|m| m.1),
            );
            b.run.notes.push(
                "vllm_mode server: generation runs on GPUs of their own (`trl vllm-serve`); ⟨gpus⟩ counts both pools".to_string(),
            );
        }
        (true, Some("colocate") | None) => b.set(
            Setting::Schedule(Schedule::Colocated),
            "vllm_mode",
            mode.map(|m| m.1),
        ),
        (true, Some(other)) => {
            return Err(error(
                mode.map(|m| m.1),
                "vllm_mode",
                format!("`{other}` is not a vLLM mode of TRL; use `colocate` or `server`"),
            ));
        }
    }
    if let Some((x, line)) = pairs.float("vllm_gpu_memory_utilization")? {
        b.set(
            Setting::RolloutGpuMemoryUtilization(x),
            "vllm_gpu_memory_utilization",
            Some(line),
        );
    }
    if let Some((n, line)) = pairs.positive("vllm_tensor_parallel_size")? {
        b.set(
            Setting::RolloutTensorParallel(n),
            "vllm_tensor_parallel_size",
            Some(line),
        );
    }
    b.use_keys(&[
        "use_vllm",
        "vllm_mode",
        "vllm_gpu_memory_utilization",
        "vllm_tensor_parallel_size",
    ]);
    Ok(())
}

/// LoRA and the reward.
fn lora_and_reward(pairs: &Pairs, b: &mut Builder) -> Result<(), ImportError> {
    // LoRA (TRL's ModelConfig: lora_r defaults to 16).
    if let Some((on, line)) = pairs.boolean("use_peft")? {
        let rank = pairs.positive("lora_r")?.map_or(16, |x| x.0);
        let finetune = if on {
            Finetune::Lora(rank)
        } else {
            Finetune::Full
        };
        b.set(Setting::Finetune(finetune), "use_peft / lora_r", Some(line));
        b.use_keys(&["use_peft", "lora_r"]);
    }
    // Reward: a reward model id, or reward functions (a model id among them counts as a model).
    if let Some((model, line)) = pairs.text("reward_model_name_or_path")? {
        b.set(
            Setting::Reward(format!("orm:{model}")),
            "reward_model_name_or_path",
            Some(line),
        );
    } else if let Some((funcs, line)) = pairs.text("reward_funcs")? {
        let model = funcs
            .split([',', ' '])
            .map(|f| f.trim_matches(|c| "[]'\" ".contains(c)))
            .find(|f| f.contains('/'));
        let reward = model.map_or("rule".to_string(), |m| format!("orm:{m}"));
        b.set(Setting::Reward(reward), "reward_funcs", Some(line));
    }
    b.use_keys(&["reward_model_name_or_path", "reward_funcs"]);
    Ok(())
}

/// The line of a veRL entry point (`verl.trainer.main_ppo`, `main_ppo.py`) or of a veRL-only
/// override (`actor_rollout_ref.…=`) outside comments: the file is veRL's, not TRL's.
fn verl_launch_line(text: &str) -> Option<usize> {
    text.lines().enumerate().find_map(|(k, line)| {
        let code = line.split('#').next().unwrap_or("");
        (code.contains("verl.trainer.")
            || code.contains("main_ppo")
            || code.contains("actor_rollout_ref."))
        .then_some(k + 1)
    })
}

/// Whether the text looks like a TRL GRPO config or command: a `trl grpo` / `trl.scripts.grpo`
/// launch, or GRPOConfig's own keys (`num_generations`, `max_completion_length`).
pub(super) fn looks_like_trl(text: &str) -> bool {
    [
        "trl grpo",
        "trl.scripts.grpo",
        "num_generations",
        "max_completion_length",
    ]
    .iter()
    .any(|k| text.contains(k))
}

/// The key/value pairs of a TRL configuration in any of its three forms. A launch script is a
/// command even when it writes an Accelerate config in a here-document (as `rlfrontier plan`'s
/// do); that config's DeepSpeed offload keys are read beside the command's flags.
fn trl_pairs(text: &str) -> Result<Pairs, ImportError> {
    if text.trim_start().starts_with('{') {
        json_pairs(text)
    } else if has_trl_launch_line(text) {
        let mut pairs = command_pairs(&without_here_document_bodies(text))?;
        deepspeed_offload_pairs(text, &mut pairs);
        Ok(pairs)
    } else if text.contains("--") && !text.lines().any(is_yaml_pair) {
        command_pairs(text)
    } else {
        yaml_pairs(text)
    }
}

/// Whether a line outside comments launches TRL's GRPO (`trl grpo`, `-m trl.scripts.grpo`,
/// also behind `srun` or variable assignments).
fn has_trl_launch_line(text: &str) -> bool {
    text.lines().any(|line| {
        let code = line.split('#').next().unwrap_or("");
        code.contains("trl.scripts.grpo") || code.contains("trl grpo")
    })
}

/// The text with the bodies of its here-documents (`<<TAG`, `<<'TAG'`, `<<-"TAG"` … `TAG`)
/// blanked, line for line: a config written by the script is data, not shell words (an
/// apostrophe in its comments would otherwise read as an unclosed quote).
fn without_here_document_bodies(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut tag: Option<String> = None;
    for line in text.lines() {
        match &tag {
            Some(t) => {
                if line.trim() == t {
                    tag = None;
                    out.push_str(line);
                }
            }
            None => {
                out.push_str(line);
                let code = line.split('#').next().unwrap_or("");
                // A here-string (`<<<`) or an arithmetic shift (`$((x << 2))`) is no here-document:
                // its word does not start with a letter, `_` or a quote.
                if let Some((_, rest)) = code.split_once("<<") {
                    let rest = rest.strip_prefix('-').unwrap_or(rest).trim_start();
                    let word: String = rest
                        .trim_start_matches(['\'', '"'])
                        .chars()
                        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                        .collect();
                    if word.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
                        tag = Some(word);
                    }
                }
            }
        }
        out.push('\n');
    }
    out
}

/// The DeepSpeed offload devices of an Accelerate config (`deepspeed_config:` entries
/// `offload_param_device` and `offload_optimizer_device`, indented), each at its line.
fn deepspeed_offload_pairs(text: &str, pairs: &mut Pairs) {
    for (k, line) in text.lines().enumerate() {
        let Some((key, value)) = strip_yaml_comment(line).trim().split_once(':') else {
            continue;
        };
        if DEEPSPEED_OFFLOAD_KEYS.contains(&key.trim()) {
            pairs.insert(
                key.trim().to_string(),
                Value {
                    text: unquote(value.trim()).to_string(),
                    line: k + 1,
                    unresolved: false,
                },
            );
        }
    }
}

/// The Accelerate config's DeepSpeed offload keys that `passes::trl` prices.
pub(super) const DEEPSPEED_OFFLOAD_KEYS: [&str; 2] =
    ["offload_param_device", "offload_optimizer_device"];

/// A GRPOConfig as a JSON object (lists joined with commas), each key at its line.
fn json_pairs(text: &str) -> Result<Pairs, ImportError> {
    let mut pairs = Pairs::default();
    let value: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| error(Some(e.line()), "", format!("not valid JSON: {e}")))?;
    let object = value
        .as_object()
        .ok_or_else(|| error(None, "", "the JSON is not an object of GRPOConfig keys"))?;
    let key_lines = json_key_lines(text);
    for (key, v) in object {
        let line = key_lines.get(key.as_str()).copied().unwrap_or(1);
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            serde_json::Value::Array(items) => items
                .iter()
                .map(|i| i.as_str().map_or(i.to_string(), str::to_string))
                .collect::<Vec<_>>()
                .join(","),
            other => other.to_string(),
        };
        pairs.insert(
            key.clone(),
            Value {
                text,
                line,
                unresolved: false,
            },
        );
    }
    Ok(pairs)
}

/// `trl grpo --key value …` (or `--key=value`, a bare flag is `true`; dashes read as
/// underscores).
fn command_pairs(text: &str) -> Result<Pairs, ImportError> {
    let mut pairs = Pairs::default();
    let words = shell::words(text).map_err(|e| error(Some(e.line), "", e.message))?;
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if let Some(flag) = word.text.strip_prefix("--") {
            let (key, value, unresolved) = match flag.split_once('=') {
                Some((k, v)) => (k.to_string(), v.to_string(), word.unresolved),
                None => match words.get(i + 1) {
                    Some(next) if !next.text.starts_with('-') && next.line == word.line => {
                        i += 1;
                        (flag.to_string(), next.text.clone(), next.unresolved)
                    }
                    _ => (flag.to_string(), "true".to_string(), false),
                },
            };
            if !key.is_empty() {
                pairs.insert(
                    key.replace('-', "_"),
                    Value {
                        text: value,
                        line: word.line,
                        unresolved,
                    },
                );
            }
        }
        i += 1;
    }
    Ok(pairs)
}

/// A flat YAML file: `key: value`, lists as `- item` lines under `key:`.
fn yaml_pairs(text: &str) -> Result<Pairs, ImportError> {
    let mut pairs = Pairs::default();
    let mut list_key: Option<(String, usize, Vec<String>)> = None;
    let flush = |pairs: &mut Pairs, list: &mut Option<(String, usize, Vec<String>)>| {
        if let Some((key, line, items)) = list.take() {
            pairs.insert(
                key,
                Value {
                    text: items.join(","),
                    line,
                    unresolved: false,
                },
            );
        }
    };
    for (index, raw) in text.lines().enumerate() {
        let line = index + 1;
        let content = strip_yaml_comment(raw);
        if content.trim().is_empty() || content.trim() == "---" {
            continue;
        }
        let indented = content.starts_with([' ', '\t']);
        if let Some(item) = content.trim().strip_prefix("- ") {
            if let Some((_, _, items)) = list_key.as_mut() {
                items.push(unquote(item.trim()).to_string());
                continue;
            }
            return Err(error(Some(line), "", "a list item outside a list"));
        }
        if indented {
            // A nested mapping (model_init_kwargs: {…} written as a block): recorded under its
            // parent for the unknown/not-priced listing.
            if let (Some((parent, _, items)), Some((key, _))) =
                (list_key.as_mut(), content.trim().split_once(':'))
            {
                items.clear();
                let nested = format!("{parent}.{}", key.trim());
                pairs.insert(
                    nested,
                    Value {
                        text: String::new(),
                        line,
                        unresolved: false,
                    },
                );
            }
            continue;
        }
        flush(&mut pairs, &mut list_key);
        let Some((key, value)) = content.split_once(':') else {
            return Err(error(
                Some(line),
                "",
                format!("`{}` is not `key: value`", content.trim()),
            ));
        };
        let key = key.trim().to_string();
        let value = value.trim();
        if value.is_empty() {
            list_key = Some((key, line, Vec::new()));
        } else {
            let value = value.trim_start_matches('[').trim_end_matches(']');
            let value = value
                .split(',')
                .map(|v| unquote(v.trim()))
                .collect::<Vec<_>>()
                .join(",");
            pairs.insert(
                key,
                Value {
                    text: value,
                    line,
                    unresolved: false,
                },
            );
        }
    }
    flush(&mut pairs, &mut list_key);
    Ok(pairs)
}

/// `key: value` at the start of a line (a YAML mapping entry).
fn is_yaml_pair(line: &str) -> bool {
    let Some((key, _)) = line.split_once(':') else {
        return false;
    };
    !key.is_empty()
        && !line.starts_with([' ', '\t', '-', '#'])
        && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn strip_yaml_comment(line: &str) -> &str {
    let mut quote = None;
    for (i, c) in line.char_indices() {
        match (c, quote) {
            ('"' | '\'', None) => quote = Some(c),
            (q, Some(open)) if q == open => quote = None,
            ('#', None) if i == 0 || line[..i].ends_with([' ', '\t']) => return &line[..i],
            _ => {}
        }
    }
    line
}

fn unquote(text: &str) -> &str {
    text.strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .or_else(|| text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')))
        .unwrap_or(text)
}

/// The 1-based line of each `"key":` in a JSON text, first occurrence, in one pass over the text
/// (a key written with escapes is not found and reads as line 1).
fn json_key_lines(text: &str) -> std::collections::HashMap<&str, usize> {
    let mut lines = std::collections::HashMap::new();
    for (index, line) in text.lines().enumerate() {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'"' {
                i += 1;
                continue;
            }
            let start = i + 1;
            let mut end = start;
            while end < bytes.len() && bytes[end] != b'"' {
                end += if bytes[end] == b'\\' { 2 } else { 1 };
            }
            if end >= bytes.len() {
                break;
            }
            let after = line[end + 1..].trim_start();
            if after.starts_with(':') {
                lines.entry(&line[start..end]).or_insert(index + 1);
            }
            i = end + 1;
        }
    }
    lines
}
