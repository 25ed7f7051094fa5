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
//! dropped. The settings are typed values: the command line writes them into its own arguments
//! and shows them as the equivalent flags.

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

    /// The framework's key for a setting the ledger's advice names (`max_tokens_per_gpu`,
    /// `max_response_len`, `rollout_gpu_memory_utilization`, `group_size`), so advice on an
    /// imported file names what to change in that file. TRL's micro-batch is in sequences
    /// (`per_device_train_batch_size`), veRL's in tokens when dynamic batching is on.
    pub fn key_for(self, setting: &str) -> Option<&'static str> {
        Some(match (self, setting) {
            (ConfigFormat::Trl, "max_tokens_per_gpu") => "per_device_train_batch_size",
            (ConfigFormat::Trl, "max_response_len") => "max_completion_length",
            (ConfigFormat::Trl, "rollout_gpu_memory_utilization") => "vllm_gpu_memory_utilization",
            (ConfigFormat::Trl, "group_size") => "num_generations",
            (ConfigFormat::Verl, "max_tokens_per_gpu") => {
                "actor_rollout_ref.actor.ppo_max_token_len_per_gpu"
            }
            (ConfigFormat::Verl, "max_response_len") => "data.max_response_length",
            (ConfigFormat::Verl, "rollout_gpu_memory_utilization") => {
                "actor_rollout_ref.rollout.gpu_memory_utilization"
            }
            (ConfigFormat::Verl, "group_size") => "actor_rollout_ref.rollout.n",
            _ => return None,
        })
    }

    /// `text` (the ledger's advice) with each setting it names written as this framework's
    /// key ([`ConfigFormat::key_for`]); whole words only.
    pub fn in_its_words(self, text: &str) -> String {
        let mut out = String::with_capacity(text.len());
        let mut word = String::new();
        let flush = |word: &mut String, out: &mut String| {
            out.push_str(self.key_for(word).unwrap_or(word));
            word.clear();
        };
        for c in text.chars() {
            if c.is_ascii_alphanumeric() || c == '_' {
                word.push(c);
            } else {
                flush(&mut word, &mut out);
                out.push(c);
            }
        }
        flush(&mut word, &mut out);
        out
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
    /// One validation pass before the first step.
    ValidationBeforeTraining(bool),
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
    /// The trained models' weights and gradients offloaded to host memory between passes.
    ParamOffload(bool),
    /// Their optimizer moments offloaded between updates.
    OptimizerOffload(bool),
    /// The reference model's weights offloaded between its passes.
    ReferenceOffload(bool),
    /// Ulysses sequence-parallel degree of the training passes.
    SequenceParallel(u64),
    /// The prompt cap in tokens, which fixed-width padding computes.
    MaxPromptTokens(u64),
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
        let lines = schema
            .lines()
            .filter(|l| !l.trim().is_empty() && !l.starts_with('#'));
        // `key<TAB>why`: a key the targeted version removed or never reads (frameworks/keys.py).
        let marked: BTreeMap<&str, &str> =
            lines.clone().filter_map(|l| l.split_once('\t')).collect();
        let known: std::collections::BTreeSet<&str> =
            lines.filter(|l| !l.contains('\t')).map(str::trim).collect();
        for key in &pairs.order {
            let line = pairs.get(key).map_or(0, |v| v.line);
            let used = self.used.iter().any(|u| u == key);
            if let Some(why) = marked.get(key.as_str()) {
                if used {
                    self.run.notes.push(format!(
                        "{key} (line {line}) {why}; priced as older versions run it"
                    ));
                } else {
                    self.run.unknown.push(KeyNote {
                        key: key.clone(),
                        line,
                        why: why.to_string(),
                    });
                }
                continue;
            }
            if used {
                continue;
            }
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
                // Suggestions for the first keys only: a file of thousands of foreign keys is not
                // a typo, and each suggestion compares with the whole schema.
                let why = match self.run.unknown.len() < SUGGESTED_UNKNOWN_KEYS {
                    true => nearest_key(key, &known)
                        .map(|k| format!("did you mean `{k}`?"))
                        .unwrap_or_default(),
                    false => String::new(),
                };
                self.run.unknown.push(KeyNote {
                    key: key.clone(),
                    line,
                    why,
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
    let length = key.chars().count();
    for &candidate in known {
        // The distance is at least the difference in length: skip what cannot reach the bar.
        let other = candidate.chars().count();
        let longest = length.max(other).max(1);
        if (length.abs_diff(other) as f64) / (longest as f64) > 1.0 - SUGGESTION_SIMILARITY {
            continue;
        }
        let similarity = strsim::normalized_levenshtein(key, candidate);
        if best.is_none_or(|(b, _)| similarity > b) {
            best = Some((similarity, candidate));
        }
    }
    best.filter(|(s, _)| *s >= SUGGESTION_SIMILARITY)
        .map(|(_, k)| k)
}

/// How many unknown keys of one file get a did-you-mean (the rest are listed without one).
pub const SUGGESTED_UNKNOWN_KEYS: usize = 100;

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

/// The note added to every import: the most sensitive input is never in a config file.
pub const RESPONSE_LENGTH_NOTE: &str = "the mean response length is not in a config file and drives the cost most: give ⟨mean_response_tokens⟩ (veRL logs response_length/mean, TRL completions/mean_length)";

mod passes;
mod trl;
mod verl;

pub use trl::{TrlLaunch, import_trl};
pub use verl::{import_verl, verl_overrides};

#[cfg(test)]
mod tests;
