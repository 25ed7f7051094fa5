//! Reading a run from the files users already have: a veRL launch script (or a list of its Hydra
//! overrides) and a TRL GRPO configuration (YAML, JSON, or the `trl grpo` / `accelerate launch`
//! command line).
//!
//! The result is a list of typed [`Setting`]s, each with the key and line it came from, or with
//! no line when the framework's own default applies because the file does not set the key. The
//! defaults are the frameworks' (not rlfrontier's), read from their source at the commits named
//! below, so an imported run is priced as the framework would run it:
//! - veRL: `verl/trainer/config/_generated_ppo_trainer.yaml` at volcengine/verl@b178a3cd
//!   (2026-01-29): `data.train_batch_size` 1024, `actor_rollout_ref.rollout.n` 1,
//!   `data.max_response_length` 512, `actor_rollout_ref.actor.ppo_epochs` 1,
//!   `actor_rollout_ref.actor.ppo_mini_batch_size` 256, `algorithm.adv_estimator` gae (PPO with a
//!   critic), `actor_rollout_ref.actor.use_kl_loss` false and `algorithm.use_kl_in_reward` false
//!   (no reference pass), `trainer.n_gpus_per_node` 8 × `trainer.nnodes` 1, `trainer.test_freq`
//!   and `trainer.save_freq` −1 (never).
//! - TRL: `trl/trainer/grpo_config.py` at huggingface/trl@f2cd5771 (2026-07-24):
//!   `num_generations` 8, `max_completion_length` 512, `num_iterations` 1, `beta` 0.0 (no
//!   reference model), `use_vllm` false, `vllm_mode` "colocate"; transformers' `TrainingArguments`:
//!   `per_device_train_batch_size` 8, `gradient_accumulation_steps` 1.
//!
//! Keys that do not change the cost (learning rate, clipping, logging, paths) are listed as read
//! but not priced; keys outside the framework's schema are listed as unknown, never silently
//! dropped. The mapping from setting to `cost` flag is [`Setting::cost_flag`], so what was
//! imported can be printed as the equivalent command line.

use std::collections::BTreeMap;
use std::fmt;

use super::shell::{self, Word};
use super::{Algorithm, Finetune, Framework, Schedule};

/// Every key of veRL's PPO trainer configuration (one per line, `#` comments).
const VERL_KEYS: &str = include_str!("verl_keys.txt");
/// Every key of TRL's GRPO configuration and the launch options around it.
const TRL_KEYS: &str = include_str!("trl_keys.txt");

/// Which framework's file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConfigFormat {
    /// A veRL launch script or a list of Hydra overrides.
    Verl,
    /// A TRL GRPO configuration: YAML, JSON or a command line.
    Trl,
}

impl ConfigFormat {
    /// The framework the imported run is priced under.
    pub fn framework(self) -> Framework {
        match self {
            ConfigFormat::Verl => Framework::Verl,
            ConfigFormat::Trl => Framework::Trl,
        }
    }
}

/// One priced quantity read from a file, in the units `cost` takes.
#[derive(Debug, Clone, PartialEq)]
pub enum Setting {
    /// The policy model (a Hugging Face id, a catalog id or a local path).
    Model(String),
    /// GRPO-style (no critic) or PPO (critic).
    Algorithm(Algorithm),
    /// Full fine-tuning or LoRA of a rank.
    Finetune(Finetune),
    /// The reward, as `cost --reward` writes it (`rule`, `orm:MODEL`).
    Reward(String),
    /// Prompts per iteration, B.
    PromptsPerStep(u64),
    /// Responses per prompt, G.
    GroupSize(u64),
    /// Response cap in tokens.
    MaxResponseLen(u64),
    /// Update epochs over each rollout batch.
    UpdateEpochs(u64),
    /// Iterations (generation + update rounds) the run lasts.
    Steps(u64),
    /// Passes over the training set (veRL `trainer.total_epochs`); the steps follow from the
    /// dataset's size.
    DataEpochs(u64),
    /// Whether a reference-model pass runs every step.
    KlReference(bool),
    /// The KL coefficient.
    KlCoef(f64),
    /// Dynamic sampling (groups whose answers all agree are dropped and refilled).
    DynamicSampling(bool),
    /// Prompts generated per batch under dynamic sampling.
    GenerationBatchPrompts(u64),
    /// Prompts per optimizer step.
    MiniBatchPrompts(u64),
    /// Validate every N iterations.
    ValidationEverySteps(u64),
    /// Responses per validation prompt.
    ValidationSamplesPerPrompt(u64),
    /// Checkpoint every N iterations.
    CheckpointEverySteps(u64),
    /// GPUs in the cluster.
    Gpus(u64),
    /// Rollout engine profile id.
    Engine(String),
    /// Placement of generation and training.
    Schedule(Schedule),
    /// Share of GPU memory the rollout engine may use.
    RolloutGpuMemoryUtilization(f64),
    /// The rollout engine's cap on sequences in flight.
    MaxNumSeqs(u64),
    /// Tensor-parallel degree of a rollout replica.
    RolloutTensorParallel(u64),
    /// The framework whose defaults price the rest.
    Framework(Framework),
    /// Token budget per GPU of an update micro-batch.
    MaxTokensPerGpu(u64),
    /// Sequences per GPU per update micro-batch.
    MicroBatchSequences(u64),
    /// Sequences per GPU per log-prob micro-batch.
    LogProbMicroBatchSequences(u64),
    /// Token budget per GPU of a log-prob micro-batch.
    LogProbMaxTokensPerGpu(u64),
    /// Activation recomputation in the backward pass.
    GradientCheckpointing(bool),
    /// Padding removed (packed sequences).
    RemovePadding(bool),
}

impl Setting {
    /// The `rlfrontier cost` flag that sets this quantity, and its value (None for a switch).
    pub fn cost_flag(&self) -> (&'static str, Option<String>) {
        match self {
            Setting::Model(m) => ("--model", Some(m.clone())),
            Setting::Algorithm(a) => ("--algo", Some(a.to_string())),
            Setting::Finetune(f) => ("--finetune", Some(f.to_string())),
            Setting::Reward(r) => ("--reward", Some(r.clone())),
            Setting::PromptsPerStep(n) => ("--prompts-per-step", Some(n.to_string())),
            Setting::GroupSize(n) => ("--group-size", Some(n.to_string())),
            Setting::MaxResponseLen(n) => ("--max-response-len", Some(n.to_string())),
            Setting::UpdateEpochs(n) => ("--update-epochs", Some(n.to_string())),
            Setting::Steps(n) => ("--steps", Some(n.to_string())),
            Setting::DataEpochs(n) => ("--data-epochs", Some(n.to_string())),
            Setting::KlReference(true) => ("--kl-reference", None),
            Setting::KlReference(false) => ("--no-kl-reference", None),
            Setting::KlCoef(x) => ("--kl-coef", Some(crate::format::number(*x))),
            Setting::DynamicSampling(true) => ("--dynamic-sampling", None),
            Setting::DynamicSampling(false) => ("--no-dynamic-sampling", None),
            Setting::GenerationBatchPrompts(n) => {
                ("--generation-batch-prompts", Some(n.to_string()))
            }
            Setting::MiniBatchPrompts(n) => ("--mini-batch-prompts", Some(n.to_string())),
            Setting::ValidationEverySteps(n) => ("--validation-every-steps", Some(n.to_string())),
            Setting::ValidationSamplesPerPrompt(n) => {
                ("--validation-samples-per-prompt", Some(n.to_string()))
            }
            Setting::CheckpointEverySteps(n) => ("--checkpoint-every-steps", Some(n.to_string())),
            Setting::Gpus(n) => ("--gpus", Some(n.to_string())),
            Setting::Engine(e) => ("--engine", Some(e.clone())),
            Setting::Schedule(s) => ("--schedule", Some(s.to_string())),
            Setting::RolloutGpuMemoryUtilization(x) => (
                "--rollout-gpu-memory-utilization",
                Some(crate::format::number(*x)),
            ),
            Setting::MaxNumSeqs(n) => ("--max-num-seqs", Some(n.to_string())),
            Setting::RolloutTensorParallel(n) => ("--rollout-tensor-parallel", Some(n.to_string())),
            Setting::Framework(f) => ("--framework", Some(f.to_string())),
            Setting::MaxTokensPerGpu(n) => ("--max-tokens-per-gpu", Some(n.to_string())),
            Setting::MicroBatchSequences(n) => ("--micro-batch-sequences", Some(n.to_string())),
            Setting::LogProbMicroBatchSequences(n) => {
                ("--log-prob-micro-batch-sequences", Some(n.to_string()))
            }
            Setting::LogProbMaxTokensPerGpu(n) => {
                ("--log-prob-max-tokens-per-gpu", Some(n.to_string()))
            }
            Setting::GradientCheckpointing(true) => ("--gradient-checkpointing", None),
            Setting::GradientCheckpointing(false) => ("--no-gradient-checkpointing", None),
            Setting::RemovePadding(true) => ("--remove-padding", None),
            Setting::RemovePadding(false) => ("--no-remove-padding", None),
        }
    }
}

/// A setting with where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Imported {
    /// The quantity.
    pub setting: Setting,
    /// The key(s) it was read from (or the framework default it stands for).
    pub key: String,
    /// 1-based line in the file; None when the framework's default applies.
    pub line: Option<usize>,
}

/// A key in the file, with its line and what became of it.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyNote {
    /// The key as written.
    pub key: String,
    /// 1-based line.
    pub line: usize,
    /// Why it is not priced (empty for an unknown key).
    pub why: String,
}

/// Everything read from one file.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportedRun {
    /// The file's framework.
    pub format: ConfigFormat,
    /// The priced settings, file values first in file order, then framework defaults.
    pub settings: Vec<Imported>,
    /// Keys that change the cost but that the ledger does not model, with the consequence.
    pub not_modelled: Vec<KeyNote>,
    /// Keys read that do not change the cost (learning rate, clipping, logging, paths).
    pub not_priced: Vec<KeyNote>,
    /// Keys outside the framework's schema (a typo, or a newer version).
    pub unknown: Vec<KeyNote>,
    /// Things the user should know (a step count that depends on the dataset size, ...).
    pub notes: Vec<String>,
}

impl ImportedRun {
    /// The imported value of a setting kind, if any (the first match).
    pub fn find(&self, matches: impl Fn(&Setting) -> bool) -> Option<&Imported> {
        self.settings.iter().find(|i| matches(&i.setting))
    }
}

/// A file that cannot be read as the framework's configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportError {
    /// 1-based line, when one is to blame.
    pub line: Option<usize>,
    /// The key, when one is to blame.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl fmt::Display for ImportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.message)
    }
}

fn error(line: Option<usize>, key: &str, message: impl Into<String>) -> ImportError {
    ImportError {
        line,
        key: key.to_string(),
        message: message.into(),
    }
}

/// A key's value as written, with its line and whether it holds an unresolved reference.
#[derive(Debug, Clone)]
struct Value {
    text: String,
    line: usize,
    unresolved: bool,
}

/// The key/value pairs of a file, the last assignment of a key winning (as in Hydra and
/// argparse), in the order keys first appear.
#[derive(Debug, Default)]
struct Pairs {
    values: BTreeMap<String, Value>,
    order: Vec<String>,
}

impl Pairs {
    fn insert(&mut self, key: String, value: Value) {
        if !self.values.contains_key(&key) {
            self.order.push(key.clone());
        }
        self.values.insert(key, value);
    }

    fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    /// The value as text, refusing an unresolved shell reference.
    fn text(&self, key: &str) -> Result<Option<(&str, usize)>, ImportError> {
        match self.values.get(key) {
            None => Ok(None),
            Some(v) if v.unresolved => Err(error(
                Some(v.line),
                key,
                format!(
                    "`{}` refers to a shell variable or command the file does not define (the environment is not read); define it in the file",
                    v.text
                ),
            )),
            Some(v) => Ok(Some((v.text.as_str(), v.line))),
        }
    }

    fn integer(&self, key: &str) -> Result<Option<(i64, usize)>, ImportError> {
        let Some((text, line)) = self.text(key)? else {
            return Ok(None);
        };
        let parsed = text
            .parse::<i64>()
            .ok()
            .or_else(|| {
                text.parse::<f64>()
                    .ok()
                    .filter(|x| x.fract() == 0.0 && x.abs() < 1e15)
                    .map(|x| x as i64)
            })
            .ok_or_else(|| error(Some(line), key, format!("`{text}` is not a whole number")))?;
        Ok(Some((parsed, line)))
    }

    fn positive(&self, key: &str) -> Result<Option<(u64, usize)>, ImportError> {
        match self.integer(key)? {
            Some((n, line)) if n < 1 => {
                Err(error(Some(line), key, format!("{n} must be 1 or more")))
            }
            Some((n, line)) if n > crate::config::MAX_LEVER => Err(error(
                Some(line),
                key,
                format!(
                    "{n} is beyond any real run (at most {})",
                    crate::config::MAX_LEVER
                ),
            )),
            other => Ok(other.map(|(n, line)| (n as u64, line))),
        }
    }

    fn float(&self, key: &str) -> Result<Option<(f64, usize)>, ImportError> {
        let Some((text, line)) = self.text(key)? else {
            return Ok(None);
        };
        match text.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Some((x, line))),
            _ => Err(error(Some(line), key, format!("`{text}` is not a number"))),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<(bool, usize)>, ImportError> {
        let Some((text, line)) = self.text(key)? else {
            return Ok(None);
        };
        match text.to_ascii_lowercase().as_str() {
            "true" | "1" | "yes" => Ok(Some((true, line))),
            "false" | "0" | "no" => Ok(Some((false, line))),
            _ => Err(error(
                Some(line),
                key,
                format!("`{text}` is not true or false"),
            )),
        }
    }
}

/// Collects settings, tracking which keys were used.
struct Builder {
    run: ImportedRun,
    used: Vec<String>,
}

impl Builder {
    fn new(format: ConfigFormat) -> Self {
        Builder {
            run: ImportedRun {
                format,
                settings: Vec::new(),
                not_modelled: Vec::new(),
                not_priced: Vec::new(),
                unknown: Vec::new(),
                notes: Vec::new(),
            },
            used: Vec::new(),
        }
    }

    fn set(&mut self, setting: Setting, key: &str, line: Option<usize>) {
        self.run.settings.push(Imported {
            setting,
            key: key.to_string(),
            line,
        });
    }

    fn use_keys(&mut self, keys: &[&str]) {
        self.used.extend(keys.iter().map(|k| k.to_string()));
    }

    /// Sorts the remaining keys into not modelled, not priced and unknown.
    fn finish(mut self, pairs: &Pairs, schema: &str, not_modelled: &[(&str, &str)]) -> ImportedRun {
        let known: std::collections::BTreeSet<&str> = schema
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .collect();
        for key in &pairs.order {
            if self.used.iter().any(|u| u == key) {
                continue;
            }
            let line = pairs.get(key).map_or(0, |v| v.line);
            if let Some((_, why)) = not_modelled
                .iter()
                .find(|(pattern, _)| key_matches(key, pattern))
            {
                self.run.not_modelled.push(KeyNote {
                    key: key.clone(),
                    line,
                    why: why.to_string(),
                });
            } else if known.contains(key.as_str()) || has_known_parent(key, &known) {
                self.run.not_priced.push(KeyNote {
                    key: key.clone(),
                    line,
                    why: "does not change the cost".to_string(),
                });
            } else {
                self.run.unknown.push(KeyNote {
                    key: key.clone(),
                    line,
                    why: nearest_key(key, &known)
                        .map(|k| format!("did you mean `{k}`?"))
                        .unwrap_or_default(),
                });
            }
        }
        self.run
    }
}

/// The schema key a mistyped `key` most likely meant: the most similar by normalised Levenshtein
/// similarity, when at least [`SUGGESTION_SIMILARITY`] (one or two letters off in a key of
/// ordinary length); ties to the first in sorted order.
fn nearest_key<'k>(key: &str, known: &std::collections::BTreeSet<&'k str>) -> Option<&'k str> {
    let mut best: Option<(f64, &str)> = None;
    for &candidate in known {
        let similarity = strsim::normalized_levenshtein(key, candidate);
        if best.is_none_or(|(b, _)| similarity > b) {
            best = Some((similarity, candidate));
        }
    }
    best.filter(|(s, _)| *s >= SUGGESTION_SIMILARITY)
        .map(|(_, k)| k)
}

/// How similar a schema key must be to an unknown one to be suggested.
pub const SUGGESTION_SIMILARITY: f64 = 0.85;

/// `key` equals `pattern`, or `pattern` ends with `.` or `*` and prefixes/suffixes it.
fn key_matches(key: &str, pattern: &str) -> bool {
    if let Some(suffix) = pattern.strip_prefix('*') {
        key.ends_with(suffix)
    } else if let Some(prefix) = pattern.strip_suffix('*') {
        key.starts_with(prefix)
    } else {
        key == pattern
    }
}

/// A key under a mapping the schema leaves open (`engine_kwargs.vllm.x` under
/// `engine_kwargs.vllm`, `override_config.x`, a `+new.key` added with Hydra's plus).
fn has_known_parent(key: &str, known: &std::collections::BTreeSet<&str>) -> bool {
    let mut parent = key;
    while let Some((head, _)) = parent.rsplit_once('.') {
        if known.contains(head) {
            return true;
        }
        parent = head;
    }
    false
}

/// Keys whose effect on the cost the ledger does not model (shared by both formats' lists).
const VERL_NOT_MODELLED: &[(&str, &str)] = &[
    (
        "*fsdp_config.param_offload",
        "parameter offload changes memory and adds host-device copies; the ledger's memory check and times assume none",
    ),
    (
        "*fsdp_config.optimizer_offload",
        "optimizer offload changes memory and adds host-device copies; the ledger's memory check and times assume none",
    ),
    (
        "*ulysses_sequence_parallel_size",
        "sequence parallelism changes per-GPU memory and communication; not modelled",
    ),
    (
        "actor_rollout_ref.rollout.multi_turn.*",
        "multi-turn: the file gives caps, not means; give --turns, --observation-tokens and --tool-seconds to price the episodes",
    ),
    (
        "reward_model.overlong_buffer.*",
        "a length penalty: it changes the response lengths you should give with --mean-response-tokens",
    ),
    (
        "algorithm.filter_groups.max_num_gen_batches",
        "a cap on refill rounds; the ledger refills until the batch is full",
    ),
    (
        "data.max_prompt_length",
        "a cap; the ledger prices the mean prompt (--prompt-tokens)",
    ),
    (
        "trainer.val_before_train",
        "one validation before training; priced only with --validation-prompts",
    ),
    (
        "data.val_files",
        "the validation set's size is not in the script: give --validation-prompts N to price validation",
    ),
];

/// The note added to every import: the most sensitive input is never in a config file.
pub const RESPONSE_LENGTH_NOTE: &str = "the mean response length is not in a config file and drives the cost most: give --mean-response-tokens (veRL logs response_length/mean, TRL completions/mean_length)";

/// Reads a veRL launch script, or a file of Hydra overrides (one or more per line).
pub fn import_verl(text: &str) -> Result<ImportedRun, ImportError> {
    let words = shell::words(text).map_err(|e| error(Some(e.line), "", e.message))?;
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
        return Err(error(
            None,
            "",
            "no Hydra override (`section.key=value`) found; is this a veRL launch script?",
        ));
    }
    let mut b = Builder::new(ConfigFormat::Verl);
    b.set(Setting::Framework(Framework::Verl), "(veRL file)", None);

    // The policy.
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
        model_key,
    ]);
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
    // Validation and checkpoints: −1 (veRL's default) means never.
    for (key, make) in [
        (
            "trainer.test_freq",
            Setting::ValidationEverySteps as fn(u64) -> Setting,
        ),
        ("trainer.save_freq", Setting::CheckpointEverySteps),
    ] {
        if let Some((n, line)) = pairs.integer(key)? {
            b.set(make(n.max(0) as u64), key, Some(line));
        }
        b.use_keys(&[key]);
    }
    if let Some((n, line)) = pairs.positive("actor_rollout_ref.rollout.val_kwargs.n")? {
        b.set(
            Setting::ValidationSamplesPerPrompt(n),
            "actor_rollout_ref.rollout.val_kwargs.n",
            Some(line),
        );
    }
    b.use_keys(&["actor_rollout_ref.rollout.val_kwargs.n"]);
    passes::verl(&pairs, &mut b)?;
    if b.run.find(|s| matches!(s, Setting::Steps(_))).is_none() {
        let note = match b.run.find(|s| matches!(s, Setting::DataEpochs(_))) {
            Some(_) => {
                "no trainer.total_training_steps: the steps are trainer.total_epochs passes over the training set; give --dataset-prompts N (its prompts), or --steps N"
            }
            None => {
                "no trainer.total_training_steps: give --steps N or --budget (veRL otherwise runs total_epochs over the dataset)"
            }
        };
        b.run.notes.push(note.to_string());
    }
    b.run.notes.push(RESPONSE_LENGTH_NOTE.to_string());
    b.run.settings.sort_by_key(|s| s.line.is_none());
    Ok(b.finish(&pairs, VERL_KEYS, VERL_NOT_MODELLED))
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

/// TRL keys whose effect on the cost the ledger does not model.
const TRL_NOT_MODELLED: &[(&str, &str)] = &[
    (
        "max_prompt_length",
        "a cap; the ledger prices the mean prompt (--prompt-tokens)",
    ),
    (
        "max_tool_calling_iterations",
        "a cap on tool calls, not their mean; give --turns, --observation-tokens and --tool-seconds to price the episodes",
    ),
    (
        "use_transformers_paged",
        "transformers' paged generation has no engine profile; priced as vLLM",
    ),
    (
        "num_generations_eval",
        "validation is priced only with --validation-prompts",
    ),
    (
        "num_train_epochs",
        "steps then depend on the dataset size: give --steps or --budget",
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
    let devices = launch.processes;
    let pairs = trl_pairs(text)?;
    if pairs.order.is_empty() {
        return Err(error(
            None,
            "",
            "no TRL key found; give a GRPOConfig as YAML (`key: value`), JSON, or a `trl grpo --key value` command",
        ));
    }
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
    // Products of counts that each pass the bound can still overflow (found by fuzzing).
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
            "TRL's batch sizes are per device: assumed {processes} training processes (--gpus, or num_processes in the file)"
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
        "--gpus (num_processes is not in the file)"
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
    // One generation feeds steps_per_generation ÷ accumulation optimizer steps, num_iterations
    // times over (trl/trainer/grpo_trainer.py: the buffered generation is reused).
    let optimizer_steps_per_iteration =
        (steps_per_generation as f64 / accumulation as f64) * epochs as f64;
    let to_iterations = |n: u64| ((n as f64 / optimizer_steps_per_iteration).ceil() as u64).max(1);
    if let Some((n, line)) = pairs.positive("max_steps")? {
        b.set(Setting::Steps(to_iterations(n)), "max_steps", Some(line));
    } else {
        b.run.notes.push(
            "no max_steps: give --steps N or --budget (TRL otherwise runs num_train_epochs over the dataset)".to_string(),
        );
    }
    b.use_keys(&["max_steps"]);
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
        (false, _) => b.run.notes.push(
            "use_vllm is off: TRL then generates with transformers' generate(), much slower than vLLM; priced as vLLM, so this is a lower bound".to_string(),
        ),
        (true, Some("server")) => {
            b.set(
                Setting::Schedule(Schedule::Separate),
                "vllm_mode",
                mode.map(|m| m.1),
            );
            b.run.notes.push(
                "vllm_mode server: generation runs on GPUs of their own (`trl vllm-serve`); --gpus counts both pools".to_string(),
            );
        }
        (true, Some("colocate") | None) => {
            b.set(
                Setting::Schedule(Schedule::Colocated),
                "vllm_mode",
                mode.map(|m| m.1),
            )
        }
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
    // Evaluation and checkpoints, in optimizer steps; converted to iterations.
    let strategy = |key: &str| -> Result<bool, ImportError> {
        Ok(pairs.text(key)?.is_none_or(|(s, _)| s == "steps"))
    };
    if strategy("eval_strategy")?
        && pairs.get("eval_strategy").is_some()
        && let Some((n, line)) = pairs.positive("eval_steps")?
    {
        b.set(
            Setting::ValidationEverySteps(to_iterations(n)),
            "eval_steps",
            Some(line),
        );
    }
    if strategy("save_strategy")?
        && let Some((n, line)) = pairs.positive("save_steps")?
    {
        b.set(
            Setting::CheckpointEverySteps(to_iterations(n)),
            "save_steps",
            Some(line),
        );
    }
    b.use_keys(&["eval_strategy", "eval_steps", "save_strategy", "save_steps"]);
    passes::trl(&pairs, &mut b)?;
    b.run.notes.push(RESPONSE_LENGTH_NOTE.to_string());
    b.run.settings.sort_by_key(|s| s.line.is_none());
    Ok(b.finish(&pairs, TRL_KEYS, TRL_NOT_MODELLED))
}

/// The key/value pairs of a TRL configuration in any of its three forms.
fn trl_pairs(text: &str) -> Result<Pairs, ImportError> {
    let trimmed = text.trim_start();
    let mut pairs = Pairs::default();
    if trimmed.starts_with('{') {
        let value: serde_json::Value = serde_json::from_str(text)
            .map_err(|e| error(Some(e.line()), "", format!("not valid JSON: {e}")))?;
        let object = value
            .as_object()
            .ok_or_else(|| error(None, "", "the JSON is not an object of GRPOConfig keys"))?;
        for (key, v) in object {
            let line = json_key_line(text, key);
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
        return Ok(pairs);
    }
    let looks_like_command = text.contains("--") && !text.lines().any(is_yaml_pair);
    if looks_like_command {
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
        return Ok(pairs);
    }
    // Flat YAML: `key: value`, lists as `- item` lines under `key:`.
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

/// The 1-based line of `"key":` in a JSON text (1 when not found).
fn json_key_line(text: &str, key: &str) -> usize {
    let needle = format!("\"{key}\"");
    text.lines()
        .position(|l| l.contains(&needle))
        .map_or(1, |i| i + 1)
}

mod passes;
#[cfg(test)]
mod tests;
