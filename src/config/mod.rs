//! The settings every entry point shares, and the single source of their defaults.
//!
//! A grid file, `cost`'s flags, a `compare` project and the pilot planner all describe a run
//! with the same typed values: [`Hardware`] (the cluster and its rollout engine), [`Task`] (prompt
//! and response lengths, the pass-rate profile), [`RunSettings`] (algorithm, KL, caching, ...),
//! and the short values users write ([`Finetune`], [`Reward`], [`Budget`], [`Stop`]). Each default
//! is written once, here, with the evidence behind it; parsers and flag definitions read it from
//! here so the entry points cannot drift apart.

pub mod import;
pub mod setting;
pub mod shell;
mod values;

use std::fmt;

use crate::catalog::{EngineSpec, GpuSpec, ModelSpec};
use crate::error::suggestion;

pub use values::{
    Budget, BudgetUnit, Finetune, MAX_LORA_RANK, Reward, RewardKind, parse_amount, parse_usd,
};

/// Seconds in an hour: GPU-seconds to GPU-hours.
pub const SECONDS_PER_HOUR: f64 = 3600.0;

/// Largest value accepted for G, lengths, epochs, prompts or GPUs: far beyond any real run, and
/// small enough that products of them stay exact in f64 and never overflow u64.
pub const MAX_LEVER: i64 = 100_000_000;

/// The physical bounds of the task's numbers, shared by grids and `cost`: (largest value, what
/// it bounds). A coefficient of variation of response lengths (published spreads are 0.3-1.5).
pub const MAX_LENGTH_CV: (f64, &str) = (
    5.0,
    "a coefficient of variation of response lengths; published spreads are 0.3-1.5",
);

/// A Beta concentration of pass rates (far below it every prompt already passes at the mean).
pub const MAX_PASS_RATE_CONCENTRATION: (f64, &str) = (
    1e4,
    "a Beta concentration; far below it every prompt already passes at the mean rate",
);

/// Prompts in a training set (ten billion).
pub const MAX_DATASET_PROMPTS: (f64, &str) = (1e10, "prompts in a training set");

/// Tokens in one response, uncapped.
pub const MAX_RESPONSE_TOKENS: (f64, &str) = (MAX_LEVER as f64, "tokens in one response");

/// RL algorithm whose step is being priced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Algorithm {
    /// Group-relative policy optimisation: no critic, G responses per prompt.
    Grpo,
    /// PPO: a critic model (values pass and updates) beside the policy.
    Ppo,
}

/// Whether generation and training share GPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum Schedule {
    /// Synchronous: generation then training on the same GPUs; the step is the sum of phases.
    Colocated,
    /// Generation and training on separate GPU pools that overlap; the step is the slower of
    /// the two.
    Async,
    /// Generation and training on separate GPU pools that take turns (OpenRLHF's default
    /// placement, TRL's vLLM server mode): the step is the sum, and each pool waits while the
    /// other works.
    Separate,
}

/// When the old-policy log-probabilities are recomputed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum OldLogprob {
    /// Only when more than one update epoch reuses the batch (the ratio needs π_old).
    Auto,
    /// Every step (veRL's default behaviour).
    Always,
    /// Never (use the rollout engine's log-probs).
    Never,
}

/// Cluster settings shared by every cell of a grid.
#[derive(Debug, Clone)]
pub struct Hardware {
    /// The GPU profile.
    pub gpu: GpuSpec,
    /// Number of GPUs in the cluster.
    pub gpus: u64,
    /// Price in US$ per GPU-hour (the catalog's default unless overridden).
    pub usd_per_gpu_hour: f64,
    /// Colocated or async.
    pub schedule: Schedule,
    /// Share of GPUs given to generation under the split schedules (async, separate).
    pub async_rollout_fraction: f64,
    /// Share of each GPU's memory the rollout engine may use (vLLM `gpu_memory_utilization`).
    pub rollout_gpu_memory_utilization: f64,
    /// The rollout engine's cap on sequences in flight per replica (vLLM `max_num_seqs`).
    pub max_num_seqs: u64,
    /// Share of GPU memory usable by training (the rest: CUDA context, fragmentation).
    pub usable_memory_fraction: f64,
    /// The rollout engine: the floor of a decode step (`rlfrontier catalog engines`).
    pub engine: EngineSpec,
    /// The smallest tensor-parallel degree of a rollout replica (veRL's
    /// `rollout.tensor_model_parallel_size`); larger when the model needs it.
    pub rollout_tensor_parallel: u64,
}

/// The task: prompt length, the policy's natural response lengths and its pass-rate profile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Task {
    /// Mean prompt tokens.
    pub prompt_tokens: f64,
    /// Mean response tokens the policy would write with no cap (at the start of the run when a
    /// schedule is given).
    pub mean_response_tokens: f64,
    /// The mean at the end of the run, when lengths grow or shrink during training (linear in
    /// steps); the ledger averages the step's cost over the run.
    pub mean_response_tokens_end: Option<f64>,
    /// Coefficient of variation of the uncapped response length (lognormal).
    pub response_length_cv: f64,
    /// Mean per-prompt pass rate of the base policy.
    pub pass_rate_mean: f64,
    /// Concentration α+β of the Beta profile of per-prompt pass rates.
    pub pass_rate_concentration: f64,
    /// Where RL starts: a base model ("zero RL") or a tuned checkpoint (SFT, instruct or
    /// reasoning-distilled). The outcome prior's time scale differs between them
    /// (docs/design.md §6).
    pub start: RlStart,
    /// Distinct prompts in the training set, when known: past one pass over them, repeated
    /// prompts count at the outcome prior's `data_reuse` (absent: every step's prompts are fresh).
    pub dataset_prompts: Option<f64>,
    /// The prompt cap in tokens (veRL `data.max_prompt_length`), when known. veRL left-pads
    /// every prompt to it, and without padding removal the training passes compute the padding
    /// ([`crate::config::PaddingWidth`]); absent, prompts are taken at their mean.
    pub max_prompt_tokens: Option<f64>,
}

/// Where RL post-training starts from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RlStart {
    /// A pretrained base model ("zero RL", as SimpleRL-Zoo): fast early gains in format and
    /// length.
    Base,
    /// An instruct, SFT or preference-tuned chat checkpoint (Qwen2.5-7B-Instruct, Tulu 3's
    /// DPO'd 8B).
    Instruct,
    /// A reasoning model distilled from a stronger one's long chains of thought (the
    /// R1-distilled Qwen checkpoints, Phi-4-reasoning, MiMo-7B-SFT).
    Distilled,
    /// A tuned checkpoint of either kind, when which is not said: the outcome prior pools the
    /// instruct and distilled evidence.
    Tuned,
}

/// Run settings shared by every cell.
#[derive(Debug, Clone)]
pub struct RunSettings {
    /// The RL framework whose defaults apply (placement, engine settings, log-prob passes).
    pub framework: Framework,
    /// GRPO or PPO.
    pub algorithm: Algorithm,
    /// Reference-model forward every step (KL loss or penalty).
    pub kl_reference: bool,
    /// KL coefficient; a reference pass with a zero coefficient is waste.
    pub kl_coef: f64,
    /// The prompt is prefilled once per group instead of G times.
    pub prefix_cache: bool,
    /// DAPO-style re-sampling until groups carry signal.
    pub dynamic_sampling: bool,
    /// When old-policy log-probs are recomputed.
    pub old_logprob: OldLogprob,
    /// Activation recomputation during the update (costs one extra forward in time).
    pub gradient_checkpointing: bool,
    /// Training state moved to host memory between passes (veRL FSDP offload), or once per step
    /// around a colocated rollout ([`Offload::per_step`]).
    pub offload: Offload,
    /// Ulysses sequence-parallel degree of the training passes (veRL
    /// `ulysses_sequence_parallel_size`): each sequence is spread over this many GPUs, which
    /// exchange activations around every attention layer. 1: none.
    pub sequence_parallel: u64,
    /// Fixed seconds per step for weight sync and bookkeeping.
    pub step_overhead_seconds: f64,
    /// Tokens per GPU per micro-batch in training passes (veRL `ppo_max_token_len_per_gpu`).
    pub max_tokens_per_gpu: f64,
    /// The PPO critic's tokens per GPU per micro-batch (veRL `critic.ppo_max_token_len_per_gpu`
    /// or its micro-batch size times the sequence length).
    pub critic_max_tokens_per_gpu: f64,
    /// How training-side passes split their sequences into micro-batches, when not by the token
    /// budgets above.
    pub micro_batching: MicroBatching,
    /// Seconds before the first step (loading the model, starting the rollout engine), charged
    /// to the whole cluster once per run; None: `ledger::whole_run::startup_seconds`'s estimate
    /// from the model's size.
    pub startup_seconds: Option<f64>,
    /// Save a checkpoint every this many steps (veRL `trainer.save_freq`; 0: never, veRL's
    /// default -1; the default 20 is the veRL example scripts' most common value).
    pub checkpoint_every_steps: u64,
    /// Seconds one checkpoint takes; None: its bytes over the write bandwidth
    /// (`ledger::whole_run::checkpoint_seconds`).
    pub checkpoint_seconds: Option<f64>,
    /// Checkpoint write bandwidth per node, GB/s (1e9 bytes per second): what a shared file
    /// system or object store sustains for one node's shards.
    pub checkpoint_write_gb_per_second: f64,
    /// Validation every this many steps (veRL `trainer.test_freq`; 0: never, veRL's default -1;
    /// the default 10 is the reasoning recipes' median).
    pub validation_every_steps: u64,
    /// Prompts in the validation set (veRL validates the whole set in one batch; the default
    /// 500 is MATH-500, the benchmark `cost`'s gain is predicted on).
    pub validation_prompts: u64,
    /// Responses per validation prompt (veRL `val_kwargs.n`, default 1, greedy).
    pub validation_samples_per_prompt: u64,
    /// One validation pass before the first step (veRL `trainer.val_before_train`, default
    /// true), when there is a validation set.
    pub validation_before_training: bool,
    /// Unexpected interruptions per GPU-day (hardware and infrastructure faults): each restarts
    /// the run from its last checkpoint (`ledger::whole_run::restart_seconds`).
    pub restarts_per_gpu_day: f64,
    /// Prompts per generation batch under dynamic sampling (veRL's DAPO recipe
    /// `data.gen_batch_size`, default the train batch): whole batches are generated until enough
    /// groups carry signal, and the surplus is discarded. None: the train batch.
    pub generation_batch_prompts: Option<u64>,
    /// The share of generated groups dynamic sampling drops (every answer agrees), as a DAPO-style
    /// run logs it; None: the zero-signal rate of the task's pass-rate profile.
    pub dynamic_sampling_filter_rate: Option<f64>,
    /// Prompts per optimizer step (veRL `ppo_mini_batch_size`): an update epoch over B prompts
    /// takes ceil(B / this) optimizer steps.
    pub mini_batch_prompts: u64,
    /// Fixed seconds of every training-side pass and optimizer step beyond its FLOPs (data
    /// dispatch to workers, padding removal, gathering results).
    pub pass_overhead_seconds: f64,
    /// Seconds per decoder layer per micro-batch of a training-side forward (kernel launches of
    /// eager PyTorch); a forward-backward costs three times as much.
    pub train_launch_seconds_per_layer: f64,
    /// Rubric tokens a judge reads besides the sequence.
    pub judge_rubric_tokens: f64,
    /// Verdict tokens a judge writes.
    pub judge_verdict_tokens: f64,
    /// The PPO critic (defaults to the policy's shape).
    pub critic: Option<ModelSpec>,
    /// Multi-turn episodes with tools, sandboxes and an API judge (default: single-turn, none).
    pub agent: Agent,
}

/// How long a run lasts: until its budget is spent, or a fixed number of iterations.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Stop {
    /// Spend this budget.
    Budget(Budget),
    /// Run this many iterations.
    Iterations(u64),
}

/// Defaults of [`Hardware`] that do not come from the framework or the engine.
///
/// - `async_rollout_fraction` 0.5: half the GPUs generate under the split schedules (an even
///   split, the starting point of veRL's and OpenRLHF's disaggregated examples).
/// - `usable_memory_fraction` 0.9: the rest of GPU memory goes to the CUDA context and
///   fragmentation.
///
/// The schedule, the rollout engine's memory share, `max_num_seqs` and tensor parallelism come
/// from the framework's profile ([`Framework::profile`]), or the engine's own defaults where the
/// framework leaves them to it.
pub const HARDWARE_DEFAULTS: HardwareDefaults = HardwareDefaults {
    async_rollout_fraction: 0.5,
    usable_memory_fraction: 0.9,
};

/// The parts of [`Hardware`] with fixed defaults (see [`HARDWARE_DEFAULTS`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HardwareDefaults {
    /// Share of GPUs given to generation under the split schedules.
    pub async_rollout_fraction: f64,
    /// Share of GPU memory usable by training.
    pub usable_memory_fraction: f64,
}

impl Hardware {
    /// `gpus` GPUs of this profile at its catalog price with this rollout engine, as
    /// `framework` places and configures it (schedule, engine memory share, sequences in
    /// flight, tensor parallelism), the rest at [`HARDWARE_DEFAULTS`].
    pub fn new(gpu: GpuSpec, gpus: u64, engine: EngineSpec, framework: Framework) -> Self {
        let d = HARDWARE_DEFAULTS;
        let profile = framework.profile();
        let hardware = Hardware {
            usd_per_gpu_hour: gpu.usd_per_gpu_hour,
            schedule: profile.schedule,
            async_rollout_fraction: d.async_rollout_fraction,
            rollout_gpu_memory_utilization: profile.rollout_gpu_memory_utilization,
            max_num_seqs: profile
                .max_num_seqs
                .unwrap_or_else(|| engine.default_max_num_seqs(&gpu)),
            usable_memory_fraction: d.usable_memory_fraction,
            rollout_tensor_parallel: profile.rollout_tensor_parallel,
            gpu,
            gpus,
            engine,
        };
        hardware.in_trainer_defaults()
    }

    /// This cluster with another rollout engine (`[axes] engine`), its settings otherwise kept
    /// (an engine that runs inside the trainer takes its own; the cluster's own engine keeps
    /// every setting, as the grid gave it).
    pub fn with_engine(&self, engine: &EngineSpec) -> Self {
        if engine.id == self.engine.id {
            return self.clone();
        }
        Hardware {
            engine: engine.clone(),
            ..self.clone()
        }
        .in_trainer_defaults()
    }

    /// An engine that batches statically (transformers' generate()) runs inside the trainer, one
    /// batch per process: the settings of a vLLM or SGLang server (memory share, sequence cap,
    /// tensor parallelism) do not apply to it, and it takes its own.
    fn in_trainer_defaults(mut self) -> Self {
        if self.engine.static_batching {
            self.rollout_gpu_memory_utilization = self.engine.gpu_memory_utilization;
            self.max_num_seqs = self.engine.default_max_num_seqs(&self.gpu);
            self.rollout_tensor_parallel = 1;
        }
        self
    }
}

impl Default for Task {
    /// A math-reasoning task in the style of RACE's pilots: 256-token prompts, a policy that
    /// writes about 900 tokens uncapped with a lognormal spread of cv 0.6, and a Beta profile of
    /// per-prompt pass rates with mean 0.35 and concentration 2 (a broad, U-leaning spread). These
    /// are placeholders for the user's own measurements (`response_length/mean` in veRL logs, the
    /// base model's pass@1 on the training prompts); the book lists them as assumptions. RL
    /// starts from a tuned checkpoint unless `[task] start = "base"` says otherwise: the slower
    /// of the two time scales, so an unstated start does not promise fast gains.
    fn default() -> Self {
        Task {
            prompt_tokens: 256.0,
            mean_response_tokens: 900.0,
            mean_response_tokens_end: None,
            response_length_cv: 0.6,
            pass_rate_mean: 0.35,
            pass_rate_concentration: 2.0,
            dataset_prompts: None,
            start: RlStart::Tuned,
            max_prompt_tokens: None,
        }
    }
}

/// How training-side passes split their sequences into micro-batches (veRL's and TRL's
/// settings). By default every pass packs sequences up to a token budget per GPU (veRL's
/// `use_dynamic_bsz` with `use_remove_padding`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MicroBatching {
    /// Sequences per GPU per micro-batch of the update (veRL `ppo_micro_batch_size_per_gpu`
    /// without `use_dynamic_bsz`; TRL `per_device_train_batch_size`); None: the token budget
    /// `max_tokens_per_gpu`.
    pub update_sequences: Option<u64>,
    /// Sequences per GPU per micro-batch of the log-prob passes (veRL
    /// `log_prob_micro_batch_size_per_gpu`); None: a token budget.
    pub log_prob_sequences: Option<u64>,
    /// Token budget per GPU of log-prob micro-batches (veRL `log_prob_max_token_len_per_gpu`);
    /// None: the update's.
    pub log_prob_max_tokens_per_gpu: Option<f64>,
    /// Padding removed (veRL `use_remove_padding`, TRL `padding_free`). When false, the
    /// padding is computed: to the framework's [`PaddingWidth`].
    pub remove_padding: bool,
}

/// Training state kept in host memory between passes, as veRL's FSDP workers offload it
/// (the ledger's `offload` module): each pass loads what it uses and moves it back, a round trip of
/// host-device copies, and the GPU holds one model's state at a time; or, with
/// [`Offload::per_step`], moved off the GPUs once for a colocated rollout and back once for the
/// training passes. None by default (veRL's defaults). The RL ledger prices it; the supervised
/// stages (SFT, reward model, DPO) do not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Offload {
    /// The trained models' weights and gradients (veRL `actor.fsdp_config.param_offload`, and
    /// the critic's).
    pub params: bool,
    /// Their optimizer moments (veRL `actor.fsdp_config.optimizer_offload`, and the critic's).
    pub optimizer: bool,
    /// The reference model's weights (veRL `ref.fsdp_config.param_offload`).
    pub reference: bool,
    /// The parts above leave the GPU once per step, for a colocated rollout, and return once for
    /// the training passes (slime's `offload_train` under `--colocate`, OpenRLHF's
    /// `--deepspeed_enable_sleep`), instead of around every pass as veRL's FSDP workers move
    /// them. The training passes then find the whole state on the GPU.
    pub per_step: bool,
}

impl Offload {
    /// What stays off the GPU during the training passes: everything flagged when it moves
    /// around each pass, nothing when it moves once per step ([`Offload::per_step`]).
    pub fn during_training(self) -> Offload {
        if self.per_step {
            Offload::default()
        } else {
            self
        }
    }
}

/// Why once-per-step offload ([`Offload::per_step`]) cannot be priced as asked: it moves the
/// flagged parts of the training state off the GPUs for a colocated rollout, so it needs at least
/// one part flagged that exists (the reference only with a KL reference), the colocated schedule (under the others the rollout has GPUs of its own) and
/// a rollout engine of its own (one that generates inside the trainer, such as transformers'
/// `generate()`, uses the policy's weights, which would be off the GPUs). None when it can.
pub fn offload_per_step_refusal(
    run: &RunSettings,
    schedule: Schedule,
    engine: &crate::catalog::EngineSpec,
) -> Option<String> {
    let offload = run.offload;
    if !offload.per_step {
        return None;
    }
    if !(offload.params || offload.optimizer || (offload.reference && run.kl_reference)) {
        return Some(
            "offload_per_step moves nothing by itself: also set param_offload, optimizer_offload or (with kl_reference) reference_offload".to_string(),
        );
    }
    if schedule != Schedule::Colocated {
        return Some(format!(
            "offload_per_step frees the GPUs for a colocated rollout, but the schedule is {}, whose rollout has GPUs of its own; use the colocated schedule or offload per pass",
            schedule.as_str()
        ));
    }
    if engine.static_batching {
        return Some(format!(
            "offload_per_step moves the training state off the GPUs for the rollout, but engine {} generates inside the trainer with the policy's own weights; use a rollout engine (vLLM, SGLang) or offload per pass",
            engine.id
        ));
    }
    None
}

/// Why a Ulysses degree cannot run the models (the policy, and a critic of its own) on a
/// training pool, as veRL checks it: the degree divides the training GPUs and each model's
/// attention heads, and its key-value heads divide the degree or the degree divides them (veRL
/// repeats key-value heads up to the degree; `verl/utils/ulysses.py`,
/// `verl/models/transformers/monkey_patch.py`). None when it can.
pub fn sequence_parallel_refusal<'m>(
    models: impl IntoIterator<Item = &'m ModelSpec>,
    training_gpus: u64,
    degree: u64,
) -> Option<String> {
    if degree <= 1 {
        return None;
    }
    if !training_gpus.is_multiple_of(degree) {
        return Some(format!(
            "sequence parallel {degree} does not divide the {training_gpus} training GPUs"
        ));
    }
    models.into_iter().find_map(|model| {
        let (heads, kv) = (model.heads, model.kv_heads);
        let splits = heads.is_multiple_of(degree)
            && (kv.is_multiple_of(degree) || degree.is_multiple_of(kv.max(1)));
        (!splits).then(|| {
            format!(
                "sequence parallel {degree} does not split {}'s {heads} attention heads ({kv} key-value heads) evenly; use a degree that divides both",
                model.id
            )
        })
    })
}

impl Default for MicroBatching {
    /// Token budgets, padding removed.
    fn default() -> Self {
        MicroBatching {
            update_sequences: None,
            log_prob_sequences: None,
            log_prob_max_tokens_per_gpu: None,
            remove_padding: true,
        }
    }
}

impl Default for RunSettings {
    /// veRL's GRPO with a reference-model KL term at coefficient 0.001 (veRL's `kl_loss_coef`
    /// default), prefix caching on (vLLM's automatic prefix caching), no dynamic sampling,
    /// old-policy log-probs as veRL computes them (every step), gradient checkpointing on, 3 s
    /// of weight sync and bookkeeping (chosen against `validation/phase_timings.csv`: the median
    /// step error is 0.26 at 5 s, 0.23 at 3 s, 0.22 at 2 s), 256 prompts per optimizer step
    /// (veRL's `ppo_mini_batch_size`), the training-pass overheads [`PASS_OVERHEAD_SECONDS`] and
    /// [`TRAIN_LAUNCH_SECONDS_PER_LAYER`]
    /// per step, 16,384 tokens per GPU per micro-batch (veRL's `ppo_max_token_len_per_gpu`
    /// default), and a judge that reads a 512-token rubric and writes a 64-token verdict.
    fn default() -> Self {
        RunSettings {
            framework: DEFAULT_FRAMEWORK,
            algorithm: Algorithm::Grpo,
            kl_reference: true,
            kl_coef: 0.001,
            prefix_cache: true,
            dynamic_sampling: false,
            old_logprob: DEFAULT_FRAMEWORK.profile().old_logprob,
            gradient_checkpointing: true,
            offload: Offload::default(),
            sequence_parallel: 1,
            step_overhead_seconds: 3.0,
            max_tokens_per_gpu: 16384.0,
            critic_max_tokens_per_gpu: 16384.0,
            micro_batching: MicroBatching::default(),
            startup_seconds: None,
            checkpoint_every_steps: DEFAULT_CHECKPOINT_EVERY_STEPS,
            checkpoint_seconds: None,
            checkpoint_write_gb_per_second: DEFAULT_CHECKPOINT_WRITE_GB_PER_SECOND,
            validation_every_steps: DEFAULT_VALIDATION_EVERY_STEPS,
            validation_prompts: DEFAULT_VALIDATION_PROMPTS,
            validation_samples_per_prompt: DEFAULT_VALIDATION_SAMPLES_PER_PROMPT,
            validation_before_training: true,
            restarts_per_gpu_day: DEFAULT_RESTARTS_PER_GPU_DAY,
            generation_batch_prompts: None,
            dynamic_sampling_filter_rate: None,
            mini_batch_prompts: 256,
            pass_overhead_seconds: PASS_OVERHEAD_SECONDS,
            train_launch_seconds_per_layer: TRAIN_LAUNCH_SECONDS_PER_LAYER,
            judge_rubric_tokens: 512.0,
            judge_verdict_tokens: 64.0,
            critic: None,
            agent: Agent::default(),
        }
    }
}

impl RunSettings {
    /// The same settings with nothing charged beyond the steps (no start-up, validation or
    /// checkpoint): a step as a per-step timing measures it (`validate`, `calibrate-hw`).
    pub fn steps_only(&self) -> RunSettings {
        RunSettings {
            startup_seconds: Some(0.0),
            checkpoint_every_steps: 0,
            validation_every_steps: 0,
            validation_before_training: false,
            restarts_per_gpu_day: 0.0,
            ..self.clone()
        }
    }
}

/// Default [`RunSettings::validation_every_steps`]: the median interval of published reasoning
/// recipes' launch scripts (`trainer.test_freq` 5-20; `research/ledger/whole_run_defaults_2026-12.md`
/// §1). Frameworks default to never (veRL and OpenRLHF -1, TRL `eval_strategy="no"`); an
/// imported file keeps its framework's default.
pub const DEFAULT_VALIDATION_EVERY_STEPS: u64 = 10;

/// Default [`RunSettings::validation_prompts`]: MATH-500, the benchmark the outcome prior and
/// `cost`'s gain are stated on. Published recipes validate on sets from AIME's 30 problems
/// (sampled 8-32 times: 240-960 responses) to GSM8K's 1,319 (same note, §1); 500 greedy
/// responses sit inside that range.
pub const DEFAULT_VALIDATION_PROMPTS: u64 = 500;

/// Default [`RunSettings::validation_samples_per_prompt`]: one greedy response per prompt,
/// veRL's `val_kwargs` default (`n: 1`, `do_sample: False`).
pub const DEFAULT_VALIDATION_SAMPLES_PER_PROMPT: u64 = 1;

/// Default [`RunSettings::checkpoint_every_steps`]: `trainer.save_freq=20`, the most common value
/// in veRL's example scripts (45 scripts; same note, §1).
pub const DEFAULT_CHECKPOINT_EVERY_STEPS: u64 = 20;

/// Default [`RunSettings::checkpoint_write_gb_per_second`]: 1 GB/s per node, within the range
/// published for checkpoint writes (0.25-0.6 GB/s effective for `torch.save`/DCP, 0.67 sustained
/// and 2.3 peak per node on Llama 3's Tectonic, 2.2-2.5 GB/s raw media; same note, §2): a
/// low-confidence middle.
pub const DEFAULT_CHECKPOINT_WRITE_GB_PER_SECOND: f64 = 1.0;

/// Default [`RunSettings::restarts_per_gpu_day`]: Llama 3's pre-training, 419 unexpected
/// interruptions in 54 days on 16,384 H100s (arXiv 2407.21783, §3.3.4): 4.7e-4 per GPU-day.
/// Smaller clusters report up to 3e-3 (Meta's research clusters' mean time between failures,
/// arXiv 2410.21680); RL-specific crashes (out of memory, hung collectives) are not counted.
pub const DEFAULT_RESTARTS_PER_GPU_DAY: f64 = 419.0 / (16_384.0 * 54.0);

/// Default [`RunSettings::pass_overhead_seconds`]: chosen against the per-phase timings of
/// `validation/phase_timings.csv` (`rlfrontier validate`), where small models' log-prob passes
/// take 0.2-2 s more than their FLOPs explain.
pub const PASS_OVERHEAD_SECONDS: f64 = 0.15;

/// Default [`RunSettings::train_launch_seconds_per_layer`]: chosen against the same timings
/// (per-micro-batch costs of 30-50 ms for a 24-28-layer forward in veRL's logs).
pub const TRAIN_LAUNCH_SECONDS_PER_LAYER: f64 = 0.001;

/// The levers of one RL run that a grid sweeps, with the defaults `cost` uses when a flag is
/// not given.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Levers {
    /// Prompts per step, B.
    pub prompts_per_step: u64,
    /// Responses per prompt, G.
    pub group_size: u64,
    /// Response cap, tokens.
    pub max_response_len: u64,
    /// Update epochs per rollout batch.
    pub update_epochs: u64,
}

impl Default for Levers {
    /// 256 prompts x 8 responses, a 4,096-token cap and one update epoch: a mid-sized GRPO step
    /// (veRL's GSM8K example uses 1,024 prompts x 5; TRL's default is 8 generations).
    fn default() -> Self {
        Levers {
            prompts_per_step: 256,
            group_size: 8,
            max_response_len: 4096,
            update_epochs: 1,
        }
    }
}

/// Economics of an owned cluster, for buy-versus-build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ownership {
    /// All-in cost of one of your GPUs per hour, when known directly.
    pub own_gpu_usd_per_hour: Option<f64>,
    /// Purchase price of one GPU with its share of server and network.
    pub gpu_capex_usd: Option<f64>,
    /// Years over which the purchase is amortised.
    pub amortization_years: f64,
    /// Share of hours the GPUs do useful work.
    pub utilization: f64,
    /// Power, hosting and operations per GPU-hour.
    pub opex_usd_per_gpu_hour: f64,
}

impl Default for Ownership {
    /// Four-year straight-line amortisation (a common server depreciation schedule), 70%
    /// utilisation, and $0.35 per GPU-hour for power, hosting and operations (about 1 kW per
    /// H100 with its server share at data-centre rates plus staff); the book says these are
    /// assumptions to replace with your own.
    fn default() -> Self {
        Ownership {
            own_gpu_usd_per_hour: None,
            gpu_capex_usd: None,
            amortization_years: 4.0,
            utilization: 0.7,
            opex_usd_per_gpu_hour: 0.35,
        }
    }
}

/// Defaults of the supervised stages' data when only the count of examples or pairs is given.
pub const SUPERVISED_DEFAULTS: SupervisedDefaults = SupervisedDefaults {
    tokens_per_example: 300.0,
    tokens_per_pair: 200.0,
};

/// See [`SUPERVISED_DEFAULTS`]: 300 tokens per SFT demonstration and 200 per preference
/// sequence, the sizes of the budgeting note `compare` starts from (docs/design.md §11).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SupervisedDefaults {
    /// Tokens per SFT demonstration (prompt + answer).
    pub tokens_per_example: f64,
    /// Tokens per sequence of a preference pair (prompt + one response).
    pub tokens_per_pair: f64,
}

macro_rules! named_enum {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every value, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];
            /// The lowercase names users write, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// The lowercase name users write.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;

            /// Parses the lowercase name; the error suggests the nearest valid one.
            fn from_str(text: &str) -> Result<Self, String> {
                match text {
                    $($name => Ok($ty::$variant),)+
                    other => Err(format!(
                        "`{other}` is not valid; {}",
                        suggestion(other, $ty::NAMES.iter().copied())
                    )),
                }
            }
        }

        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}

named_enum!(Algorithm { Grpo => "grpo", Ppo => "ppo" });
named_enum!(Schedule { Colocated => "colocated", Async => "async", Separate => "separate" });
named_enum!(OldLogprob { Auto => "auto", Always => "always", Never => "never" });
named_enum!(RlStart { Base => "base", Instruct => "instruct", Distilled => "distilled", Tuned => "tuned" });

// After the macro: the framework module uses it.
mod framework;
pub use framework::{DEFAULT_FRAMEWORK, Framework, FrameworkProfile, PaddingWidth};
mod agent;
pub use agent::{Agent, ApiJudge, EnvironmentWait, MAX_TOOL_SECONDS, MAX_TURNS};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn offload_once_per_step_needs_something_to_move_a_colocated_rollout_and_its_own_engine() {
        let catalog = Catalog::embedded();
        let vllm = catalog.default_engine();
        let in_trainer = catalog.engine("transformers-generate").unwrap();
        let run = |offload: Offload, kl_reference: bool| RunSettings {
            offload,
            kl_reference,
            ..RunSettings::default()
        };
        let params = Offload {
            params: true,
            per_step: true,
            ..Offload::default()
        };
        let reference_only = Offload {
            reference: true,
            per_step: true,
            ..Offload::default()
        };
        let refusal = |r: &RunSettings, schedule, engine| {
            offload_per_step_refusal(r, schedule, engine).unwrap_or_default()
        };
        // Per pass, anything goes; once per step with the weights, colocated, on vLLM, priced.
        let per_pass = Offload {
            per_step: false,
            ..params
        };
        assert_eq!(
            refusal(&run(per_pass, true), Schedule::Async, in_trainer),
            ""
        );
        assert_eq!(refusal(&run(params, true), Schedule::Colocated, vllm), "");
        // Nothing to move: no part, or the reference without a KL reference.
        let nothing = Offload {
            per_step: true,
            ..Offload::default()
        };
        assert!(refusal(&run(nothing, true), Schedule::Colocated, vllm).contains("moves nothing"));
        assert!(
            refusal(&run(reference_only, false), Schedule::Colocated, vllm)
                .contains("moves nothing")
        );
        assert_eq!(
            refusal(&run(reference_only, true), Schedule::Colocated, vllm),
            ""
        );
        // A rollout on GPUs of its own, or generation inside the trainer.
        for schedule in [Schedule::Async, Schedule::Separate] {
            assert!(refusal(&run(params, true), schedule, vllm).contains("GPUs of its own"));
        }
        assert!(
            refusal(&run(params, true), Schedule::Colocated, in_trainer)
                .contains("generates inside the trainer")
        );
    }

    #[test]
    fn a_ulysses_degree_must_split_the_heads_and_the_gpus() {
        // Qwen2.5-7B: 28 attention heads, 4 key-value heads.
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        let refusal = |gpus, degree| sequence_parallel_refusal([&m], gpus, degree);
        assert_eq!(refusal(8, 1), None);
        assert_eq!(refusal(8, 2), None);
        assert_eq!(refusal(8, 4), None);
        let heads = refusal(8, 8).unwrap();
        assert!(heads.contains("28 attention heads"), "{heads}");
        let gpus = refusal(6, 4).unwrap();
        assert!(gpus.contains("6 training GPUs"), "{gpus}");
        // 7 divides 28 but neither divides nor is divided by the 4 key-value heads.
        assert!(refusal(14, 7).is_some());
        // Every model is checked: Qwen2.5-1.5B's 12 heads split 4 ways, the 7B's do not split 8.
        let small = Catalog::embedded().model("qwen2.5-1.5b").unwrap().clone();
        assert_eq!(sequence_parallel_refusal([&small, &m], 8, 4), None);
        assert!(sequence_parallel_refusal([&small, &m], 8, 8).is_some());
    }
}
