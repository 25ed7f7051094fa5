//! The ledger: tokens, FLOPs, seconds, GPU-hours and dollars of every phase of one RL iteration,
//! summed into the three buckets (search, learning, feedback), the iterations a budget affords,
//! memory feasibility and waste.
//!
//! Formulas and their sources live in the submodules: [`lengths`] (lognormal truncation, Beta
//! pass-rate profile), [`flops`] (per-pass FLOPs, veRL's convention), [`time`] (compute-bound
//! phases and the memory-bound decode loop), [`memory`] (training state and activations).

pub mod flops;
pub mod lengths;
pub mod memory;
pub mod supervised;
pub mod time;

use std::fmt;

use serde::Serialize;

use crate::catalog::{BF16_BYTES, ModelSpec};
use crate::config::{
    Algorithm, BudgetUnit, Finetune, Hardware, OldLogprob, Reward, RewardKind, RunSettings,
    SECONDS_PER_HOUR, Schedule, Stop, Task,
};
use flops::TokenSums;

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

    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            Bucket::Search => "search",
            Bucket::Learning => "learning",
            Bucket::Feedback => "feedback",
        }
    }
}

/// One phase of an RL iteration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Prompt prefill in the rollout engine.
    Prefill,
    /// Token-by-token generation.
    Decode,
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
    /// Weight sync to the rollout engine and per-step bookkeeping.
    Sync,
}

impl Phase {
    /// Every phase, in execution order.
    pub const ALL: [Phase; 9] = [
        Phase::Prefill,
        Phase::Decode,
        Phase::Reward,
        Phase::OldLogprob,
        Phase::RefLogprob,
        Phase::CriticValues,
        Phase::Update,
        Phase::CriticUpdate,
        Phase::Sync,
    ];

    /// The bucket the phase's cost belongs to.
    pub fn bucket(self) -> Bucket {
        match self {
            Phase::Prefill | Phase::Decode => Bucket::Search,
            Phase::Reward => Bucket::Feedback,
            _ => Bucket::Learning,
        }
    }

    /// Snake-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Prefill => "prefill",
            Phase::Decode => "decode",
            Phase::Reward => "reward",
            Phase::OldLogprob => "old_logprob",
            Phase::RefLogprob => "ref_logprob",
            Phase::CriticValues => "critic_values",
            Phase::Update => "update",
            Phase::CriticUpdate => "critic_update",
            Phase::Sync => "sync",
        }
    }

    fn index(self) -> usize {
        Phase::ALL.iter().position(|&p| p == self).expect("listed")
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
    /// Every group agrees, so dynamic sampling can never fill a batch.
    DynamicSamplingStarves,
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
                "rollout engine needs {needed_gb:.1} GB per replica (weights + one longest sequence's KV cache) but has {available_gb:.1} GB at tensor parallel {tensor_parallel}; add GPUs, shorten max_response_len or raise rollout_gpu_memory_utilization"
            ),
            Infeasible::TrainingMemory {
                needed_gb,
                available_gb,
            } => write!(
                f,
                "training needs {needed_gb:.1} GB per GPU but {available_gb:.1} GB are usable; add GPUs, use LoRA, or lower max_tokens_per_gpu"
            ),
            Infeasible::DynamicSamplingStarves => {
                write!(
                    f,
                    "every group agrees (zero-signal rate 1), so dynamic sampling never fills a batch; raise group_size"
                )
            }
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
            Infeasible::BudgetBelowOneIteration { .. } => InfeasibleKind::BudgetBelowOneIteration,
        }
    }

    /// A short machine-readable code for CSV filtering (`infeasible_code` in `cells.csv`).
    pub fn code(&self) -> &'static str {
        self.kind().code()
    }
}

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
}

impl InfeasibleKind {
    /// Every kind, in the fixed order counts are kept and reported in.
    pub const ALL: [InfeasibleKind; 4] = [
        InfeasibleKind::RolloutMemory,
        InfeasibleKind::TrainingMemory,
        InfeasibleKind::DynamicSamplingStarves,
        InfeasibleKind::BudgetBelowOneIteration,
    ];

    /// The machine-readable code.
    pub fn code(self) -> &'static str {
        match self {
            InfeasibleKind::RolloutMemory => "rollout_memory",
            InfeasibleKind::TrainingMemory => "training_memory",
            InfeasibleKind::DynamicSamplingStarves => "dynamic_sampling_starves",
            InfeasibleKind::BudgetBelowOneIteration => "budget_below_one_iteration",
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
    pub phases: [PhaseCost; 9],
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

    /// Dollars of one iteration.
    pub fn total_usd_per_step(&self) -> f64 {
        self.total_gpu_hours_per_step() * self.usd_per_gpu_hour
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
        self.gpu_hours(bucket) * self.usd_per_gpu_hour
    }

    /// Run dollars.
    pub fn total_usd(&self) -> f64 {
        self.total_gpu_hours() * self.usd_per_gpu_hour
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

    /// Share of GPU-hours (and so of dollars) in a bucket.
    pub fn usd_share(&self, bucket: Bucket) -> f64 {
        share(
            self.gpu_hours_per_step(bucket),
            self.total_gpu_hours_per_step(),
        )
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

/// Iterations a budget affords: the largest M with M × per_iteration ≤ budget (computed by
/// division, then corrected by one step either way against rounding).
pub fn affordable_iterations(budget: f64, per_iteration: f64) -> u64 {
    if per_iteration <= 0.0 || !per_iteration.is_finite() {
        return 0;
    }
    let mut m = (budget / per_iteration).floor().max(0.0) as u64;
    while m > 0 && m as f64 * per_iteration > budget {
        m -= 1;
    }
    while ((m + 1) as f64) * per_iteration <= budget && m < u64::MAX / 2 {
        m += 1;
    }
    m
}

/// Forward FLOPs of the policy, including its LoRA adapters (2 per adapter parameter per token).
fn policy_forward_flops(policy: &ModelSpec, finetune: Finetune, batch: TokenSums) -> f64 {
    let adapters = match finetune {
        Finetune::Full => 0.0,
        Finetune::Lora(r) => 2.0 * policy.lora_params(r, false) * batch.tokens,
    };
    flops::forward_flops(policy, batch) + adapters
}

/// Evaluates one run: the ledger of its iterations.
pub fn evaluate(cfg: &RunConfig) -> Ledger {
    let hw = cfg.hardware;
    let gpu = &hw.gpu;
    let task = cfg.task;
    let run = cfg.run;
    let policy = cfg.policy;
    let g = cfg.group_size as f64;
    let b = cfg.prompts_per_step as f64;
    let cap = cfg.max_response_len as f64;
    let p = task.prompt_tokens;

    // Pools: colocated uses every GPU for everything; async splits them.
    let (gen_gpus, train_gpus) = match hw.schedule {
        Schedule::Colocated => (hw.gpus, hw.gpus),
        Schedule::Async => {
            let generation_gpus = ((hw.gpus as f64 * hw.async_rollout_fraction).round() as u64)
                .clamp(1, hw.gpus.saturating_sub(1).max(1));
            (generation_gpus, hw.gpus - generation_gpus)
        }
    };

    // Tokens.
    let lengths =
        lengths::response_lengths(task.mean_response_tokens, task.response_length_cv, cap);
    let zero_signal = lengths::zero_signal_rate(
        task.pass_rate_mean,
        task.pass_rate_concentration,
        cfg.group_size,
    );
    let mut infeasible = None;
    let kept = b * g;
    let generated = if run.dynamic_sampling {
        if zero_signal >= 1.0 - 1e-12 {
            infeasible = Some(Infeasible::DynamicSamplingStarves);
            kept
        } else {
            kept / (1.0 - zero_signal)
        }
    } else {
        kept
    };
    let straggler = lengths::straggler_tokens(
        task.mean_response_tokens,
        task.response_length_cv,
        cap,
        generated,
    );
    let (r1, r2) = (lengths.mean_tokens, lengths.second_moment_tokens);

    let mut phases = [PhaseCost::default(); 9];
    let set = |phases: &mut [PhaseCost; 9], phase: Phase, flops: f64, seconds: f64| {
        phases[phase.index()] = PhaseCost {
            flops,
            seconds,
            gpu_seconds: 0.0,
        };
    };

    // Search: prefill (once per group with prefix caching) and decode.
    let prefilled_prompts = if run.prefix_cache {
        generated / g
    } else {
        generated
    };
    let prefill = prefilled_prompts * flops::prefill_flops_per_prompt(policy, p);
    set(
        &mut phases,
        Phase::Prefill,
        prefill,
        time::compute_seconds(prefill, gen_gpus as f64, gpu, gpu.prefill_efficiency),
    );
    let decode_flops = generated * flops::decode_flops_per_response(policy, p, r1, r2);
    let decode = time::decode_time(&time::DecodeInput {
        model: policy,
        gpu,
        pool_gpus: gen_gpus,
        sequences: generated,
        prompt_tokens: p,
        mean_response_tokens: r1,
        straggler_response_tokens: straggler,
        max_context_tokens: p + cap,
        memory_utilization: hw.rollout_gpu_memory_utilization,
        max_num_seqs: hw.max_num_seqs,
    });
    let decode = match decode {
        Ok(d) => d,
        Err(e) => {
            infeasible = infeasible.or(Some(Infeasible::RolloutMemory {
                needed_gb: e.needed_bytes / 1e9,
                available_gb: e.available_bytes / 1e9,
                tensor_parallel: e.tensor_parallel,
            }));
            // Price it as if it ran at the largest degree, so the row stays informative.
            time::DecodeTime {
                seconds: generated
                    * r1
                    * time::decode_step_seconds(policy, gpu, 8.0, 1.0, p + r1 / 2.0)
                    / 8.0,
                tail_seconds: 0.0,
                tensor_parallel: e.tensor_parallel,
                replicas: 1,
                sequences_in_flight: 1.0,
            }
        }
    };
    set(&mut phases, Phase::Decode, decode_flops, decode.seconds);

    // Feedback: scored over every generated sequence.
    let generated_batch = TokenSums::of_sequences(generated, p, r1, r2);
    let train_pool = train_gpus as f64;
    match (cfg.reward.kind, &cfg.reward.model) {
        (RewardKind::Rule, _) | (_, None) => {}
        (RewardKind::Orm | RewardKind::Prm, Some(rm)) => {
            let f = flops::forward_flops(rm, generated_batch);
            set(
                &mut phases,
                Phase::Reward,
                f,
                time::compute_seconds(f, train_pool, gpu, gpu.forward_efficiency),
            );
        }
        (RewardKind::Judge, Some(judge)) => {
            let read = TokenSums::of_sequences(generated, p + run.judge_rubric_tokens, r1, r2);
            let head = judge.output_head_matmul_params() as f64;
            let prefill =
                flops::forward_flops(judge, read) - 2.0 * head * (read.tokens - generated);
            let verdict = run.judge_verdict_tokens;
            let context = p + run.judge_rubric_tokens + r1;
            let verdict_flops = generated
                * flops::decode_flops_per_response(judge, context, verdict, verdict * verdict);
            let verdict_time = time::decode_time(&time::DecodeInput {
                model: judge,
                gpu,
                pool_gpus: train_gpus,
                sequences: generated,
                prompt_tokens: context,
                mean_response_tokens: verdict,
                straggler_response_tokens: verdict,
                max_context_tokens: context + verdict,
                memory_utilization: hw.rollout_gpu_memory_utilization,
                max_num_seqs: hw.max_num_seqs,
            })
            .map(|d| d.seconds)
            .unwrap_or_else(|e| {
                infeasible = infeasible.or(Some(Infeasible::RolloutMemory {
                    needed_gb: e.needed_bytes / 1e9,
                    available_gb: e.available_bytes / 1e9,
                    tensor_parallel: e.tensor_parallel,
                }));
                0.0
            });
            let seconds = time::compute_seconds(prefill, train_pool, gpu, gpu.prefill_efficiency)
                + verdict_time;
            set(&mut phases, Phase::Reward, prefill + verdict_flops, seconds);
        }
    }

    // Learning: over the kept rollouts.
    let batch = TokenSums::of_sequences(kept, p, r1, r2);
    let epochs = cfg.update_epochs as f64;
    let needs_old = match run.old_logprob {
        OldLogprob::Always => true,
        OldLogprob::Never => false,
        OldLogprob::Auto => cfg.update_epochs > 1,
    };
    let forward = policy_forward_flops(policy, cfg.finetune, batch);
    if needs_old {
        set(
            &mut phases,
            Phase::OldLogprob,
            forward,
            time::compute_seconds(forward, train_pool, gpu, gpu.forward_efficiency),
        );
    }
    if run.kl_reference {
        let f = flops::forward_flops(policy, batch);
        set(
            &mut phases,
            Phase::RefLogprob,
            f,
            time::compute_seconds(f, train_pool, gpu, gpu.forward_efficiency),
        );
    }
    let update = epochs * flops::train_flops(policy, cfg.finetune, batch);
    let recompute = if run.gradient_checkpointing {
        epochs * forward
    } else {
        0.0
    };
    set(
        &mut phases,
        Phase::Update,
        update,
        time::compute_seconds(update + recompute, train_pool, gpu, gpu.train_mfu),
    );
    let critic = run.critic.as_ref().unwrap_or(policy);
    if run.algorithm == Algorithm::Ppo {
        let values = flops::forward_flops(critic, batch);
        set(
            &mut phases,
            Phase::CriticValues,
            values,
            time::compute_seconds(values, train_pool, gpu, gpu.forward_efficiency),
        );
        let critic_update = epochs * flops::train_flops(critic, Finetune::Full, batch);
        let critic_recompute = if run.gradient_checkpointing {
            epochs * values
        } else {
            0.0
        };
        set(
            &mut phases,
            Phase::CriticUpdate,
            critic_update,
            time::compute_seconds(
                critic_update + critic_recompute,
                train_pool,
                gpu,
                gpu.train_mfu,
            ),
        );
    }
    set(&mut phases, Phase::Sync, 0.0, run.step_overhead_seconds);

    // Step time and GPU-seconds per phase.
    let gen_busy: f64 = [Phase::Prefill, Phase::Decode]
        .iter()
        .map(|&ph| phases[ph.index()].seconds)
        .sum();
    let train_busy: f64 = Phase::ALL
        .iter()
        .filter(|&&ph| !matches!(ph, Phase::Prefill | Phase::Decode | Phase::Sync))
        .map(|&ph| phases[ph.index()].seconds)
        .sum();
    let sync = run.step_overhead_seconds;
    let step_seconds = match hw.schedule {
        Schedule::Colocated => gen_busy + train_busy + sync,
        Schedule::Async => gen_busy.max(train_busy) + sync,
    };
    for &ph in &Phase::ALL {
        let i = ph.index();
        let seconds = phases[i].seconds;
        phases[i].gpu_seconds = match (hw.schedule, ph) {
            (_, Phase::Sync) | (Schedule::Colocated, _) => seconds * hw.gpus as f64,
            (Schedule::Async, Phase::Prefill | Phase::Decode) => {
                // The generation pool is held for the whole step; its idle time is charged to
                // its phases in proportion to their busy time.
                pool_share(seconds, gen_busy, step_seconds - sync) * gen_gpus as f64
            }
            (Schedule::Async, _) => {
                pool_share(seconds, train_busy, step_seconds - sync) * train_gpus as f64
            }
        };
    }

    // Training memory per GPU.
    let mut state = memory::policy_state_bytes(policy, cfg.finetune);
    if run.kl_reference && cfg.finetune == Finetune::Full {
        state += BF16_BYTES * policy.total_params() as f64;
    }
    if run.algorithm == Algorithm::Ppo {
        state += memory::policy_state_bytes(critic, Finetune::Full);
    }
    if let Some(rm) = &cfg.reward.model {
        state += BF16_BYTES * rm.total_params() as f64;
    }
    let micro_tokens = run.max_tokens_per_gpu.max(p + cap);
    let training_bytes = state / train_pool
        + memory::activation_bytes(policy, micro_tokens, run.gradient_checkpointing);
    let usable = gpu.memory_bytes() * hw.usable_memory_fraction;
    if training_bytes > usable {
        infeasible = infeasible.or(Some(Infeasible::TrainingMemory {
            needed_gb: training_bytes / 1e9,
            available_gb: usable / 1e9,
        }));
    }

    let mut ledger = Ledger {
        phases,
        step_seconds,
        iterations: 0,
        gpus: hw.gpus,
        usd_per_gpu_hour: hw.usd_per_gpu_hour,
        tokens: TokenStats {
            rollouts_per_step: kept,
            generated_rollouts_per_step: generated,
            mean_response_tokens: r1,
            generated_tokens_per_step: generated * r1,
            prompt_tokens_per_step: generated * p,
            truncation_rate: lengths.truncation_rate,
            truncated_token_share: lengths.truncated_token_share,
            zero_signal_rate: zero_signal,
            straggler_response_tokens: straggler,
            prefill_tokens_per_step: prefilled_prompts * p,
            group_size: g,
            forward_tokens_per_step: batch.tokens
                * (f64::from(u8::from(needs_old)) + f64::from(u8::from(run.kl_reference))),
            train_tokens_per_step: batch.tokens * epochs,
        },
        decode,
        training_memory_gb_per_gpu: training_bytes / 1e9,
        infeasible,
        waste: Waste::default(),
    };

    ledger.iterations = match cfg.stop {
        Stop::Iterations(n) => n,
        Stop::Budget(budget) => {
            let per = ledger.per_iteration(budget.unit);
            let m = affordable_iterations(budget.amount, per);
            if m == 0 {
                ledger.infeasible =
                    ledger
                        .infeasible
                        .or(Some(Infeasible::BudgetBelowOneIteration {
                            per_iteration: per,
                            budget: budget.amount,
                            unit: budget.unit,
                        }));
            }
            m
        }
    };

    // Waste over the run.
    let iterations = ledger.iterations as f64;
    let price = hw.usd_per_gpu_hour;
    let usd_of = |ph: Phase| ledger.phase(ph).gpu_seconds / SECONDS_PER_HOUR * price * iterations;
    let search_feedback: f64 = [Phase::Prefill, Phase::Decode, Phase::Reward]
        .iter()
        .map(|&ph| usd_of(ph))
        .sum();
    let learning: f64 = Phase::ALL
        .iter()
        .filter(|&&ph| ph.bucket() == Bucket::Learning && ph != Phase::Sync)
        .map(|&ph| usd_of(ph))
        .sum();
    // Zero-signal groups reach learning only without dynamic sampling; with it, they are
    // generated and scored, then discarded (over-sampling).
    let (zero_signal_usd, oversampling_usd) = if run.dynamic_sampling {
        (0.0, zero_signal * search_feedback)
    } else {
        (zero_signal * (search_feedback + learning), 0.0)
    };
    // During the tail the generation pool waits (under the colocated schedule that is the whole
    // cluster; under async the trainer's idle time is already charged to its phases).
    let straggler_idle_gpu_hours =
        decode.tail_seconds * gen_gpus as f64 * iterations / SECONDS_PER_HOUR;
    ledger.waste = Waste {
        zero_signal_usd,
        truncated_usd: lengths.truncated_token_share * (search_feedback + learning),
        straggler_idle_gpu_hours,
        straggler_idle_usd: straggler_idle_gpu_hours * price,
        reference_without_kl_usd: if run.kl_reference && run.kl_coef == 0.0 {
            usd_of(Phase::RefLogprob)
        } else {
            0.0
        },
        oversampling_usd,
        uncached_prefill_usd: if run.prefix_cache {
            0.0
        } else {
            usd_of(Phase::Prefill) * (g - 1.0) / g
        },
    };
    ledger
}

fn pool_share(seconds: f64, busy: f64, held: f64) -> f64 {
    if busy > 0.0 {
        seconds / busy * held
    } else {
        0.0
    }
}

#[cfg(test)]
mod tests;
