//! The ledger: tokens, FLOPs, seconds, GPU-hours and dollars of every phase of one RL iteration,
//! summed into the three buckets (search, learning, feedback), the iterations a budget affords,
//! memory feasibility and waste.
//!
//! Where each formula is (every one cites its source in its own doc comment; docs/design.md §5
//! derives them):
//!
//! | the formula for | is in |
//! |---|---|
//! | response lengths: capped lognormal, its moments, the longest of n (stragglers) | [`lengths::CappedLognormal`], [`lengths::straggler_tokens`] |
//! | the logged (capped) mean back to the uncapped one | [`lengths::LoggedLengths::uncapped`] |
//! | groups whose answers all agree (Beta pass-rate profile) | [`lengths::zero_signal_rate`] |
//! | FLOPs of a forward, a training pass, prefill, decode; veRL's own count | [`flops`] ([`flops::forward_flops`], [`flops::train_flops`], [`flops::verl_train_flops`]) |
//! | seconds of a compute-bound phase (peak × efficiency) | [`time::compute_seconds`] |
//! | one decode step on a replica (weights + KV reads, roofline, launch overheads) | [`decode::StepCost`] (`new`, `seconds`) |
//! | a replica's batch draining under continuous batching (or static batches) | [`decode::drain`], [`decode::static_drain`] |
//! | the decode phase of a step: replicas, tensor parallel, KV capacity | [`time::decode_time`] |
//! | training passes: micro-batches, padding, attention at long context, Ulysses | [`passes::pass_seconds`], [`passes::ulysses_seconds`] |
//! | host offload of parameters and optimizer state | [`offload::round_trip_seconds`], [`offload::TrainedState`] |
//! | training memory (sharded state, activations) | [`memory::policy_state_bytes`], [`memory::activation_bytes`] |
//! | what is resident when, and whether it fits | `residency` (`training_memory`, `colocated_memory`) |
//! | multi-turn episodes: tool waits, observations, sandboxes, API judges | [`agent`] |
//! | one step: the phases in order, GPU-seconds under the schedule | `step` (`constant_step`, `charge_gpu_seconds`) |
//! | a run: iterations a budget affords, start-up once, waste | `run` ([`evaluate`], [`StepLedger`]) |
//! | beyond the steps: start-up estimate, checkpoint bytes and seconds, validation passes, the run's events | [`whole_run`] ([`whole_run::startup_seconds`], [`whole_run::checkpoint_seconds`], [`whole_run::run_events`]) |
//! | a run in segments (a cap raised in stages) | [`merge_segments`] |
//! | SFT, reward-model and DPO stages | [`supervised`] |

pub mod accuracy;
pub mod agent;
pub mod decode;
pub mod flops;
pub mod lengths;
pub mod memory;
pub mod offload;
pub mod passes;
mod residency;
mod run;
mod step;
pub mod supervised;
pub mod time;
pub mod whole_run;

pub use run::{StepLedger, StepSums, evaluate, merge_segments, step_ledger};

use std::fmt;

use serde::Serialize;

use crate::catalog::ModelSpec;
use crate::config::{
    BudgetUnit, Finetune, Hardware, Reward, RunSettings, SECONDS_PER_HOUR, Stop, Task,
};

/// Where compute goes (RACE's three-way split).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bucket {
    /// Generating responses: prefill and decode.
    Search,
    /// Learning from them: log-prob passes, policy (and critic) updates, weight sync.
    Learning,
    /// Scoring them: reward model, PRM, judge (rules cost no GPU time).
    Feedback,
}

impl Bucket {
    /// The three buckets in report order.
    pub const ALL: [Bucket; 3] = [Bucket::Search, Bucket::Learning, Bucket::Feedback];

    /// Position in [`Bucket::ALL`].
    pub fn index(self) -> usize {
        self as usize
    }

    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Search => "search",
            Bucket::Learning => "learning",
            Bucket::Feedback => "feedback",
        }
    }
}

/// Number of phases of a step.
pub const PHASE_COUNT: usize = 12;

/// One phase of an RL iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Prompt prefill in the rollout engine.
    Prefill,
    /// Token-by-token generation.
    Decode,
    /// Generation over the validation set every `validation_every_steps`, amortised per step.
    Validation,
    /// Scoring by a reward model, PRM or judge.
    Reward,
    /// Old-policy log-probs (the ratio's denominator when a batch is reused).
    OldLogprob,
    /// Reference-model log-probs (KL term).
    RefLogprob,
    /// PPO critic values.
    CriticValues,
    /// Policy update epochs.
    Update,
    /// PPO critic update epochs.
    CriticUpdate,
    /// Weight sync to the rollout engine and per-step bookkeeping (and checkpoints, as their
    /// share per step).
    Sync,
    /// Start-up (model loading, engine initialisation), as its share per step of the run.
    Startup,
    /// GPUs idle while episodes wait for their tools (multi-turn rollouts; `ledger::agent`).
    Environment,
}

impl Phase {
    /// Every phase, in execution order.
    pub const ALL: [Phase; PHASE_COUNT] = [
        Phase::Prefill,
        Phase::Decode,
        Phase::Environment,
        Phase::Validation,
        Phase::Reward,
        Phase::OldLogprob,
        Phase::RefLogprob,
        Phase::CriticValues,
        Phase::Update,
        Phase::CriticUpdate,
        Phase::Sync,
        Phase::Startup,
    ];

    /// The bucket the phase's cost belongs to.
    pub fn bucket(self) -> Bucket {
        match self {
            Phase::Prefill | Phase::Decode | Phase::Validation | Phase::Environment => {
                Bucket::Search
            }
            Phase::Reward => Bucket::Feedback,
            _ => Bucket::Learning,
        }
    }

    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Validation => "validation",
            Phase::Reward => "reward",
            Phase::OldLogprob => "old_logprob",
            Phase::RefLogprob => "ref_logprob",
            Phase::CriticValues => "critic_values",
            Phase::Update => "update",
            Phase::CriticUpdate => "critic_update",
            Phase::Sync => "sync",
            Phase::Environment => "environment",
            Phase::Startup => "startup",
        }
    }

    /// Position in [`Phase::ALL`] (a match, not a search: it sits in the hot loop).
    fn index(self) -> usize {
        match self {
            Phase::Prefill => 0,
            Phase::Decode => 1,
            Phase::Environment => 2,
            Phase::Validation => 3,
            Phase::Reward => 4,
            Phase::OldLogprob => 5,
            Phase::RefLogprob => 6,
            Phase::CriticValues => 7,
            Phase::Update => 8,
            Phase::CriticUpdate => 9,
            Phase::Sync => 10,
            Phase::Startup => 11,
        }
    }
}

/// Cost of one phase in one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct PhaseCost {
    /// Model FLOPs (no recomputation).
    pub flops: f64,
    /// Wall seconds the phase keeps its GPU pool busy.
    pub seconds: f64,
    /// GPU-seconds charged to the phase (including its pool's share of idle time under async).
    pub gpu_seconds: f64,
}

/// Why a cell cannot run.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub enum Infeasible {
    /// The rollout engine cannot hold the weights plus one longest sequence's KV cache.
    RolloutMemory {
        /// GB needed by one replica.
        needed_gb: f64,
        /// GB available at the largest tensor-parallel degree tried.
        available_gb: f64,
        /// That degree.
        tensor_parallel: u64,
    },
    /// Training state plus one micro-batch's activations exceed a GPU.
    TrainingMemory {
        /// GB needed per GPU.
        needed_gb: f64,
        /// GB usable per GPU.
        available_gb: f64,
    },
    /// Under the colocated schedule, the training state left on each GPU during the rollout plus
    /// the rollout engine's share of the GPU's memory exceed the GPU.
    ColocatedMemory {
        /// GB of training state per GPU while the rollout runs.
        training_gb: f64,
        /// GB the rollout engine claims per GPU (`rollout_gpu_memory_utilization` × memory).
        rollout_gb: f64,
        /// GB of one GPU.
        memory_gb: f64,
    },
    /// Every group agrees, so dynamic sampling can never fill a batch.
    DynamicSamplingStarves,
    /// The prompt plus the response cap exceed the policy's context window: the rollout engine
    /// refuses a `max_model_len` above the model's `max_position_embeddings` (vLLM's
    /// `ModelConfig` check), so the run stops before its first step.
    ContextWindow {
        /// Prompt tokens (the task's mean prompt).
        prompt_tokens: f64,
        /// The response cap.
        cap_tokens: u64,
        /// The model's context window.
        context_tokens: u64,
    },
    /// The budget does not buy a single iteration.
    BudgetBelowOneIteration {
        /// Cost of one iteration in the budget's unit.
        per_iteration: f64,
        /// The budget.
        budget: f64,
        /// Its unit.
        unit: BudgetUnit,
    },
}

impl fmt::Display for Infeasible {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use crate::format::number;
        match *self {
            Infeasible::RolloutMemory {
                needed_gb,
                available_gb,
                tensor_parallel,
            } => write!(
                f,
                "rollout engine needs {needed_gb:.1} GB per replica (weights + one longest sequence's KV cache) but has {available_gb:.1} GB at tensor parallel {tensor_parallel}; add GPUs, shorten max_response_len or raise rollout_gpu_memory_utilization (a colocated SGLang or vLLM 0.6 engine takes its share after the training state left on its GPUs: offloading that state gives it more)"
            ),
            Infeasible::TrainingMemory {
                needed_gb,
                available_gb,
            } => write!(
                f,
                "training needs {needed_gb:.1} GB per GPU but {available_gb:.1} GB are usable; add GPUs, use LoRA, or lower max_tokens_per_gpu"
            ),
            Infeasible::ColocatedMemory {
                training_gb,
                rollout_gb,
                memory_gb,
            } => write!(
                f,
                "colocated rollout does not fit: {training_gb:.1} GB of training state stay on each GPU during the rollout (the trained weights, optimizer moments and reference weights not offloaded) and the engine claims {rollout_gb:.1} GB (rollout_gpu_memory_utilization), more than the GPU's {memory_gb:.1} GB; lower rollout_gpu_memory_utilization to {:.2} or less (the engine must still hold its weights and a longest sequence), offload the training state (param_offload, optimizer_offload, reference_offload), or add GPUs",
                (100.0 * (memory_gb - training_gb) / memory_gb)
                    .floor()
                    .max(0.0)
                    / 100.0
            ),
            Infeasible::DynamicSamplingStarves => {
                write!(
                    f,
                    "every group agrees (zero-signal rate 1), so dynamic sampling never fills a batch; raise group_size"
                )
            }
            Infeasible::ContextWindow {
                prompt_tokens,
                cap_tokens,
                context_tokens,
            } => write!(
                f,
                "prompt ({} tokens) plus max_response_len ({}) exceed the model's context window of {} tokens (max_position_embeddings); lower max_response_len to {} or less, or extend the window (rope scaling) in the model's config.json and its catalog entry",
                number(prompt_tokens),
                crate::format::thousands(cap_tokens as f64),
                crate::format::thousands(context_tokens as f64),
                crate::format::thousands((context_tokens as f64 - prompt_tokens).max(0.0).floor())
            ),
            Infeasible::BudgetBelowOneIteration {
                per_iteration,
                budget,
                unit,
            } => write!(
                f,
                "budget {} {} is below one iteration ({} {}); raise the budget or shrink the step",
                number(budget),
                unit.as_str(),
                number(per_iteration),
                unit.as_str()
            ),
        }
    }
}

impl Infeasible {
    /// The kind of reason, without its numbers.
    pub fn kind(&self) -> InfeasibleKind {
        match self {
            Infeasible::RolloutMemory { .. } => InfeasibleKind::RolloutMemory,
            Infeasible::TrainingMemory { .. } => InfeasibleKind::TrainingMemory,
            Infeasible::DynamicSamplingStarves => InfeasibleKind::DynamicSamplingStarves,
            Infeasible::ColocatedMemory { .. } => InfeasibleKind::ColocatedMemory,
            Infeasible::ContextWindow { .. } => InfeasibleKind::ContextWindow,
            Infeasible::BudgetBelowOneIteration { .. } => InfeasibleKind::BudgetBelowOneIteration,
        }
    }

    /// A short machine-readable code for CSV filtering (`infeasible_code` in `cells.csv`).
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }
}

/// How many kinds of [`Infeasible`] there are.
pub const INFEASIBLE_KINDS: usize = 6;

/// The kinds of [`Infeasible`], for counting cells per reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum InfeasibleKind {
    /// See [`Infeasible::RolloutMemory`].
    RolloutMemory,
    /// See [`Infeasible::TrainingMemory`].
    TrainingMemory,
    /// See [`Infeasible::DynamicSamplingStarves`].
    DynamicSamplingStarves,
    /// See [`Infeasible::BudgetBelowOneIteration`].
    BudgetBelowOneIteration,
    /// See [`Infeasible::ContextWindow`].
    ContextWindow,
    /// See [`Infeasible::ColocatedMemory`].
    ColocatedMemory,
}

impl InfeasibleKind {
    /// Every kind, in the fixed order counts are kept and reported in.
    pub const ALL: [InfeasibleKind; INFEASIBLE_KINDS] = [
        InfeasibleKind::RolloutMemory,
        InfeasibleKind::TrainingMemory,
        InfeasibleKind::DynamicSamplingStarves,
        InfeasibleKind::BudgetBelowOneIteration,
        InfeasibleKind::ContextWindow,
        InfeasibleKind::ColocatedMemory,
    ];

    /// The machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            InfeasibleKind::RolloutMemory => "rollout_memory",
            InfeasibleKind::TrainingMemory => "training_memory",
            InfeasibleKind::DynamicSamplingStarves => "dynamic_sampling_starves",
            InfeasibleKind::BudgetBelowOneIteration => "budget_below_one_iteration",
            InfeasibleKind::ContextWindow => "context_window",
            InfeasibleKind::ColocatedMemory => "colocated_memory",
        }
    }

    /// Position in [`InfeasibleKind::ALL`] (the index of its count).
    pub fn index(self) -> usize {
        self as usize
    }

    /// What to change when most cells of a grid fail for this reason.
    pub fn fix(self) -> &'static str {
        match self {
            InfeasibleKind::BudgetBelowOneIteration => {
                "raise the budgets, or shrink a step (fewer prompts per step, smaller G, shorter cap)"
            }
            InfeasibleKind::TrainingMemory => {
                "add GPUs, use LoRA, a smaller model or a smaller max_tokens_per_gpu"
            }
            InfeasibleKind::RolloutMemory => {
                "add GPUs, shorten max_response_len or raise rollout_gpu_memory_utilization"
            }
            InfeasibleKind::DynamicSamplingStarves => {
                "raise group_size so that some groups carry signal"
            }
            InfeasibleKind::ColocatedMemory => {
                "lower rollout_gpu_memory_utilization, offload the training state (param_offload, optimizer_offload, reference_offload), add GPUs or run generation on GPUs of its own (schedule)"
            }
            InfeasibleKind::ContextWindow => {
                "lower max_response_len (or the prompt) to fit the model's context window, or pick a model with a longer one"
            }
        }
    }
}

/// A complete run configuration: a cell's levers plus the grid's hardware, task and settings.
#[derive(Debug, Clone, Copy)]
pub struct RunConfig<'a> {
    /// Policy.
    pub policy: &'a ModelSpec,
    /// Fine-tuning mode.
    pub finetune: Finetune,
    /// Reward mechanism.
    pub reward: &'a Reward,
    /// Responses per prompt, G.
    pub group_size: u64,
    /// Response cap, tokens.
    pub max_response_len: u64,
    /// Update epochs per rollout batch.
    pub update_epochs: u64,
    /// Prompts per step, B.
    pub prompts_per_step: u64,
    /// Budget or iterations.
    pub stop: Stop,
    /// Cluster.
    pub hardware: &'a Hardware,
    /// Task.
    pub task: &'a Task,
    /// Run settings.
    pub run: &'a RunSettings,
    /// The policy's measured score on the target metric before RL (`[task] base_score`), when
    /// the user gave it; the outcome prior then starts from it instead of its own default.
    pub measured_base_score: Option<f64>,
    /// The score on the target metric that the policy's base scores on the grid's other math
    /// metrics imply (`outcome::ability`), when they do.
    pub ability_score: Option<f64>,
}

/// Token statistics of one iteration.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct TokenStats {
    /// Rollouts kept for learning per step, B·G.
    pub rollouts_per_step: f64,
    /// Rollouts generated per step (more than kept under dynamic sampling).
    pub generated_rollouts_per_step: f64,
    /// Mean generated tokens per response, E[min(X, L)].
    pub mean_response_tokens: f64,
    /// Generated tokens per step.
    pub generated_tokens_per_step: f64,
    /// Prompt tokens per step (over generated rollouts).
    pub prompt_tokens_per_step: f64,
    /// Share of responses cut at the cap.
    pub truncation_rate: f64,
    /// Share of generated tokens in truncated responses.
    pub truncated_token_share: f64,
    /// Share of groups whose answers all agree.
    pub zero_signal_rate: f64,
    /// Expected length of the step's longest response.
    pub straggler_response_tokens: f64,
    /// Tokens prefilled by the rollout engine per step.
    pub prefill_tokens_per_step: f64,
    /// Responses per prompt, G.
    pub group_size: f64,
    /// Tokens through forward-only passes of the policy (old-policy, reference) per step.
    pub forward_tokens_per_step: f64,
    /// Tokens through training passes of the policy per step (epochs included).
    pub train_tokens_per_step: f64,
}

/// Waste of the whole run (overlapping categories: a truncated rollout may also sit in a
/// zero-signal group).
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct Waste {
    /// Dollars spent on rollouts in zero-signal groups (generating, scoring and, without dynamic
    /// sampling, learning from them).
    pub zero_signal_usd: f64,
    /// Dollars spent on the tokens of truncated responses.
    pub truncated_usd: f64,
    /// GPU-hours idle while the longest responses finish.
    pub straggler_idle_gpu_hours: f64,
    /// The same in dollars.
    pub straggler_idle_usd: f64,
    /// Dollars of reference-model passes whose KL coefficient is zero (computed, never used).
    pub reference_without_kl_usd: f64,
    /// Dollars generating and scoring groups that dynamic sampling then discards.
    pub oversampling_usd: f64,
    /// Dollars prefilling each prompt G times instead of once (prefix caching off).
    pub uncached_prefill_usd: f64,
}

/// The full accounting of one run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ledger {
    /// Per-phase cost of one iteration, indexed like [`Phase::ALL`].
    pub phases: [PhaseCost; PHASE_COUNT],
    /// Wall seconds of one iteration.
    pub step_seconds: f64,
    /// Iterations run.
    pub iterations: u64,
    /// GPUs in the cluster.
    pub gpus: u64,
    /// Price per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// Tokens.
    pub tokens: TokenStats,
    /// Decode model outputs (tensor parallel, replicas, occupancy).
    pub decode: time::DecodeTime,
    /// Training memory per GPU, GB.
    pub training_memory_gb_per_gpu: f64,
    /// Why the run cannot happen, if it cannot.
    pub infeasible: Option<Infeasible>,
    /// Waste over the run.
    pub waste: Waste,
    /// Dollars of one iteration paid outside the GPUs, by bucket (search, learning, feedback):
    /// sandboxes running tool calls and reward tests, API judges (`ledger::agent`). Zero for
    /// single-turn rollouts without an environment.
    pub external_usd_per_step: [f64; 3],
    /// Of those, the sandboxes' (tool calls during rollouts and reward tests).
    pub environment_usd_per_step: f64,
    /// Of those, the API judge's.
    pub api_usd_per_step: f64,
    /// Wall seconds of one pass over the validation set (0 without one): `validation` per step
    /// is its share every `validation_every_steps`; the pass before training is in
    /// [`Ledger::start_seconds`].
    pub validation_pass_seconds: f64,
    /// Wall seconds before the first step, the whole cluster held: the start-up and, with
    /// `validation_before_training`, one validation pass (its GPU time, not its FLOPs). Charged
    /// once per run, as the `startup` phase's share of each step.
    pub start_seconds: f64,
    /// Expected restarts per step (`whole_run::restarts_per_step`), each of
    /// [`Ledger::restart_seconds`]; their share is in the `sync` phase.
    pub restarts_per_step: f64,
    /// Wall seconds one restart holds the cluster (`whole_run::restart_seconds`).
    pub restart_seconds: f64,
}

impl Ledger {
    /// Cost of one phase in one iteration.
    pub fn phase(&self, phase: Phase) -> PhaseCost {
        self.phases[phase.index()]
    }

    /// FLOPs of one iteration in a bucket.
    pub fn flops_per_step(&self, bucket: Bucket) -> f64 {
        Phase::ALL
            .iter()
            .filter(|p| p.bucket() == bucket)
            .map(|&p| self.phase(p).flops)
            .sum()
    }

    /// FLOPs of one iteration.
    pub fn total_flops_per_step(&self) -> f64 {
        self.phases.iter().map(|p| p.flops).sum()
    }

    /// GPU-hours of one iteration in a bucket.
    pub fn gpu_hours_per_step(&self, bucket: Bucket) -> f64 {
        Phase::ALL
            .iter()
            .filter(|p| p.bucket() == bucket)
            .map(|&p| self.phase(p).gpu_seconds)
            .sum::<f64>()
            / SECONDS_PER_HOUR
    }

    /// GPU-hours of one iteration (step seconds × GPUs).
    pub fn total_gpu_hours_per_step(&self) -> f64 {
        self.phases.iter().map(|p| p.gpu_seconds).sum::<f64>() / SECONDS_PER_HOUR
    }

    /// Dollars of one iteration: GPU-hours at the price, plus what is paid outside the GPUs.
    pub fn total_usd_per_step(&self) -> f64 {
        self.total_gpu_hours_per_step() * self.usd_per_gpu_hour
            + self.external_usd_per_step.iter().sum::<f64>()
    }

    /// Dollars of one iteration in a bucket.
    pub fn usd_per_step(&self, bucket: Bucket) -> f64 {
        self.gpu_hours_per_step(bucket) * self.usd_per_gpu_hour
            + self.external_usd_per_step[bucket.index()]
    }

    /// Run FLOPs in a bucket.
    pub fn flops(&self, bucket: Bucket) -> f64 {
        self.flops_per_step(bucket) * self.iterations as f64
    }

    /// Run FLOPs.
    pub fn total_flops(&self) -> f64 {
        self.total_flops_per_step() * self.iterations as f64
    }

    /// Run GPU-hours in a bucket.
    pub fn gpu_hours(&self, bucket: Bucket) -> f64 {
        self.gpu_hours_per_step(bucket) * self.iterations as f64
    }

    /// Run GPU-hours.
    pub fn total_gpu_hours(&self) -> f64 {
        self.total_gpu_hours_per_step() * self.iterations as f64
    }

    /// Run dollars in a bucket.
    pub fn usd(&self, bucket: Bucket) -> f64 {
        self.usd_per_step(bucket) * self.iterations as f64
    }

    /// Run dollars.
    pub fn total_usd(&self) -> f64 {
        self.total_usd_per_step() * self.iterations as f64
    }

    /// Wall-clock hours of the run.
    pub fn wall_hours(&self) -> f64 {
        self.step_seconds * self.iterations as f64 / SECONDS_PER_HOUR
    }

    /// Share of FLOPs in a bucket (per step, so defined even for zero iterations). The learning
    /// share is RACE's update fraction p.
    pub fn flops_share(&self, bucket: Bucket) -> f64 {
        share(self.flops_per_step(bucket), self.total_flops_per_step())
    }

    /// Share of dollars in a bucket (GPU-hours at the price plus what is paid outside them).
    pub fn usd_share(&self, bucket: Bucket) -> f64 {
        share(self.usd_per_step(bucket), self.total_usd_per_step())
    }

    /// Cost of one iteration in a budget unit.
    pub fn per_iteration(&self, unit: BudgetUnit) -> f64 {
        match unit {
            BudgetUnit::Flops => self.total_flops_per_step(),
            BudgetUnit::GpuHours => self.total_gpu_hours_per_step(),
            BudgetUnit::Usd => self.total_usd_per_step(),
        }
    }

    /// Whether the run can happen.
    pub fn feasible(&self) -> bool {
        self.infeasible.is_none()
    }
}

fn share(part: f64, whole: f64) -> f64 {
    if whole > 0.0 { part / whole } else { 0.0 }
}

/// GPUs that run the training passes of `hw`: all of them under the colocated schedule, the
/// training pool under the split ones.
pub fn training_gpus(hw: &crate::config::Hardware) -> u64 {
    step::Pools::of_hardware(hw).training
}

/// Iterations a budget affords: the largest M with M × per_iteration ≤ budget (computed by
/// division, then corrected by one step either way against rounding).
pub fn affordable_iterations(budget: f64, per_iteration: f64) -> u64 {
    if per_iteration <= 0.0 || !per_iteration.is_finite() {
        return 0;
    }
    // `as u64` truncates toward zero and saturates (NaN and negatives to 0): for the quotient it
    // is `floor().max(0.0) as u64`, without a call into libm's floor.
    let m = (budget / per_iteration) as u64;
    // The quotient is almost always right or one off: one check each way here, and the loops
    // (which the compiler vectorises, a set-up every call would pay) only past a first step.
    if m > 0 && exact_f64(m) * per_iteration > budget {
        return correct_down(m - 1, budget, per_iteration);
    }
    // The bound first: a saturated quotient (u64::MAX) must not be incremented.
    if m < u64::MAX / 2 && exact_f64(m + 1) * per_iteration <= budget {
        return correct_up(m + 1, budget, per_iteration);
    }
    m
}

/// [`affordable_iterations`] from `m` down: the largest count at or below it whose cost is
/// within the budget.
#[cold]
#[inline(never)]
fn correct_down(mut m: u64, budget: f64, per_iteration: f64) -> u64 {
    while m > 0 && exact_f64(m) * per_iteration > budget {
        m -= 1;
    }
    m
}

/// [`affordable_iterations`] from `m` up: `m`, or the largest count above it still within the
/// budget.
#[cold]
#[inline(never)]
fn correct_up(mut m: u64, budget: f64, per_iteration: f64) -> u64 {
    while m < u64::MAX / 2 && exact_f64(m + 1) * per_iteration <= budget {
        m += 1;
    }
    m
}

/// `m as f64` (the same double: both round the same integer to nearest), through the signed
/// conversion (one instruction on x86-64) when `m` fits it.
fn exact_f64(m: u64) -> f64 {
    match i64::try_from(m) {
        Ok(signed) => signed as f64,
        Err(_) => m as f64,
    }
}

#[cfg(test)]
mod tests;
