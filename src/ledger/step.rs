//! One RL step priced: [`constant_step`] walks an iteration phase by phase (rollouts, search,
//! feedback, learning), turns phase seconds into GPU-seconds under the schedule and checks
//! memory and the context window; [`super::run`] turns steps into a run. Each part is one
//! function below; the formulas they call live in [`super::lengths`], [`super::flops`],
//! [`super::time`] and [`super::memory`] (docs/design.md §5).

use super::flops::{self, TokenSums};
use super::residency::{
    colocated_memory, engine_resident_bytes_per_gpu, swapped_bytes, training_memory,
};
use super::run::StepLedger;
use super::{
    Infeasible, Ledger, Phase, PhaseCost, RunConfig, TokenStats, Waste, lengths, offload, passes,
    time,
};
use crate::catalog::{BF16_BYTES, ModelSpec};
use crate::config::{Algorithm, Finetune, OldLogprob, RewardKind, Schedule};

/// The GPUs each side of a step holds: all of them for both under the colocated schedule; a
/// split under the async and separate schedules (generation gets `async_rollout_fraction`, at
/// least one GPU each side).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pools {
    /// GPUs that generate.
    pub(super) generation: u64,
    /// GPUs that train.
    pub(super) training: u64,
}

impl Pools {
    fn of(cfg: &RunConfig) -> Self {
        Pools::of_hardware(cfg.hardware)
    }

    /// The pools of `hw` under its schedule.
    pub(super) fn of_hardware(hw: &crate::config::Hardware) -> Self {
        match hw.schedule {
            Schedule::Colocated => Pools {
                generation: hw.gpus,
                training: hw.gpus,
            },
            Schedule::Async | Schedule::Separate => {
                let generation = ((hw.gpus as f64 * hw.async_rollout_fraction).round() as u64)
                    .clamp(1, hw.gpus.saturating_sub(1).max(1));
                Pools {
                    generation,
                    training: hw.gpus - generation,
                }
            }
        }
    }
}

/// What one step generates: rollouts kept and generated (more under dynamic sampling), their
/// length statistics and the straggler.
#[derive(Debug, Clone, Copy)]
pub(super) struct Rollouts {
    /// Rollouts kept for learning.
    pub(super) kept: f64,
    /// Rollouts generated (more than kept under dynamic sampling).
    pub(super) generated: f64,
    /// Share of groups whose answers all agree.
    pub(super) zero_signal: f64,
    /// Their length statistics.
    pub(super) lengths: lengths::ResponseLengths,
    distribution: lengths::CappedLognormal,
    straggler: f64,
    starves: bool,
}

impl Rollouts {
    fn of(cfg: &RunConfig) -> Self {
        let task = cfg.task;
        let cap = cfg.max_response_len as f64;
        let lengths =
            lengths::response_lengths(task.mean_response_tokens, task.response_length_cv, cap);
        let zero_signal = lengths::zero_signal_rate(
            task.pass_rate_mean,
            task.pass_rate_concentration,
            cfg.group_size,
        );
        let kept = cfg.prompts_per_step as f64 * cfg.group_size as f64;
        // Dynamic sampling (DAPO) generates whole batches of `generation_batch_prompts` prompts
        // (veRL's DAPO recipe: `gen_batch_size`, by default the train batch) until enough groups
        // carry signal, and discards the surplus: ceil(B / (batch × (1 − filter rate)))
        // batches, the filter rate the run's logged one when stated, else the zero-signal rate.
        // It never fills a batch when every group agrees.
        let filtered = cfg.run.dynamic_sampling_filter_rate.unwrap_or(zero_signal);
        let starves = cfg.run.dynamic_sampling && filtered >= 1.0 - 1e-12;
        let generated = if cfg.run.dynamic_sampling && !starves {
            let prompts = cfg.prompts_per_step as f64;
            let batch = cfg
                .run
                .generation_batch_prompts
                .map_or(prompts, |b| b.max(1) as f64);
            let batches = (prompts / (batch * (1.0 - filtered)) - 1e-9)
                .ceil()
                .max(1.0);
            batches * batch * cfg.group_size as f64
        } else {
            kept
        };
        let straggler = lengths::straggler_tokens(
            task.mean_response_tokens,
            task.response_length_cv,
            cap,
            generated,
        );
        Rollouts {
            kept,
            generated,
            zero_signal,
            lengths,
            distribution: lengths::CappedLognormal::new(
                task.mean_response_tokens,
                task.response_length_cv,
                cap,
            ),
            straggler,
            starves,
        }
    }
}

/// Phase costs before GPU-seconds are charged.
type Phases = [PhaseCost; super::PHASE_COUNT];

fn set(phases: &mut Phases, phase: Phase, flops: f64, seconds: f64) {
    phases[phase.index()] = PhaseCost {
        flops,
        seconds,
        gpu_seconds: 0.0,
    };
}

/// The rollout engine does not fit: the reason, in GB.
fn rollout_memory(e: time::DecodeDoesNotFit) -> Infeasible {
    Infeasible::RolloutMemory {
        needed_gb: e.needed_bytes / 1e9,
        available_gb: e.available_bytes / 1e9,
        tensor_parallel: e.tensor_parallel,
    }
}

/// Search: prefill (once per group with prefix caching) and decode. Returns the decode model's
/// result, the prompts prefilled, and the reason when the engine does not fit.
fn search(
    cfg: &RunConfig,
    pools: Pools,
    r: &Rollouts,
    phases: &mut Phases,
) -> (time::DecodeTime, f64, Option<Infeasible>) {
    let (gpu, policy, p) = (&cfg.hardware.gpu, cfg.policy, cfg.task.prompt_tokens);
    let (r1, r2) = (r.lengths.mean_tokens, r.lengths.second_moment_tokens);
    let g = cfg.group_size as f64;
    let prefilled_prompts = if cfg.run.prefix_cache {
        r.generated / g
    } else {
        r.generated
    };
    let prefill = prefilled_prompts * flops::prefill_flops_per_prompt(policy, p);
    let lora = lora_slowdown(cfg);
    let prefill_seconds = lora
        * time::compute_seconds(
            prefill,
            pools.generation as f64,
            gpu,
            gpu.prefill_efficiency,
        );
    set(phases, Phase::Prefill, prefill, prefill_seconds);
    let decode_flops = r.generated * flops::decode_flops_per_response(policy, p, r1, r2);
    let decode = time::decode_time(&time::DecodeInput {
        model: policy,
        gpu,
        engine: &cfg.hardware.engine,
        min_tensor_parallel: cfg.hardware.rollout_tensor_parallel,
        pool_gpus: pools.generation,
        sequences: r.generated,
        prompt_tokens: p,
        lengths: r.distribution,
        max_context_tokens: p + cfg.max_response_len as f64,
        memory_utilization: cfg.hardware.rollout_gpu_memory_utilization,
        resident_bytes_per_gpu: engine_resident_bytes_per_gpu(cfg, pools),
        max_num_seqs: cfg.hardware.max_num_seqs,
    });
    let (mut decode, infeasible) = match decode {
        Ok(d) => (d, None),
        Err(e) => {
            // Price it as one sequence at a time on the pool's largest degree (as if its KV
            // cache held a single longest sequence), so the row stays informative and a larger
            // model never looks cheaper than a smaller one that fits.
            let degree = pools.generation.clamp(1, gpu.nvlink_domain_gpus.max(1));
            let replicas = (pools.generation / degree).max(1) as f64;
            let step =
                super::decode::StepCost::new(policy, gpu, &cfg.hardware.engine, degree as f64);
            let batch = super::decode::ReplicaBatch {
                sequences: (r.generated / replicas).max(1.0),
                prompt_tokens: p,
                lengths: r.distribution,
                max_running: 1.0,
                kv_capacity_tokens: p + cfg.max_response_len as f64,
            };
            let seconds = super::decode::drain(&step, &batch).seconds;
            let priced = time::DecodeTime {
                seconds,
                tail_seconds: 0.0,
                tensor_parallel: e.tensor_parallel,
                replicas: 1,
                sequences_in_flight: 1.0,
            };
            (priced, Some(rollout_memory(e)))
        }
    };
    decode.seconds *= lora;
    decode.tail_seconds *= lora;
    set(phases, Phase::Decode, decode_flops, decode.seconds);
    (decode, prefilled_prompts, infeasible)
}

/// How much longer the policy's generation takes for its LoRA adapters
/// (`EngineSpec::lora_generation_slowdown`, measured on vLLM); 1 under full fine-tuning.
fn lora_slowdown(cfg: &RunConfig) -> f64 {
    match cfg.finetune {
        Finetune::Lora(_) => cfg.hardware.engine.lora_generation_slowdown,
        Finetune::Full => 1.0,
    }
}

/// Validation: every `validation_every_steps` steps, the validation set's prompts are prefilled
/// and their responses decoded on the generation pool, at the training cap (veRL
/// `trainer.test_freq`, `val_kwargs.n`; veRL's validation generates with the rollout's
/// `response_length`); charged to each step as its share. Returns one pass's wall seconds (0
/// without a validation set), which the pass before training (`val_before_train`) adds to the
/// run's start.
fn validation(cfg: &RunConfig, pools: Pools, r: &Rollouts, phases: &mut Phases) -> f64 {
    let run = cfg.run;
    let needed = run.validation_every_steps > 0 || run.validation_before_training;
    if !needed || run.validation_prompts == 0 {
        return 0.0;
    }
    let (gpu, policy, p) = (&cfg.hardware.gpu, cfg.policy, cfg.task.prompt_tokens);
    let sequences = (run.validation_prompts * run.validation_samples_per_prompt.max(1)) as f64;
    let (r1, r2) = (r.lengths.mean_tokens, r.lengths.second_moment_tokens);
    let prefill = run.validation_prompts as f64 * flops::prefill_flops_per_prompt(policy, p);
    let decode_flops = sequences * flops::decode_flops_per_response(policy, p, r1, r2);
    let decode = time::decode_time(&time::DecodeInput {
        model: policy,
        gpu,
        engine: &cfg.hardware.engine,
        min_tensor_parallel: cfg.hardware.rollout_tensor_parallel,
        pool_gpus: pools.generation,
        sequences,
        prompt_tokens: p,
        lengths: r.distribution,
        max_context_tokens: p + cfg.max_response_len as f64,
        memory_utilization: cfg.hardware.rollout_gpu_memory_utilization,
        resident_bytes_per_gpu: engine_resident_bytes_per_gpu(cfg, pools),
        max_num_seqs: cfg.hardware.max_num_seqs,
    });
    // A model that does not fit is reported by the rollout itself; validation adds nothing then.
    let Ok(decode) = decode else { return 0.0 };
    let seconds = lora_slowdown(cfg)
        * (time::compute_seconds(
            prefill,
            pools.generation as f64,
            gpu,
            gpu.prefill_efficiency,
        ) + decode.seconds);
    if run.validation_every_steps > 0 {
        let every = run.validation_every_steps as f64;
        set(
            phases,
            Phase::Validation,
            (prefill + decode_flops) / every,
            seconds / every,
        );
    }
    seconds
}

/// Feedback: a reward model's forward pass over every generated sequence, or a judge's prefill
/// of sequence plus rubric and its decode of the verdict. Rules cost no GPU time.
fn feedback(
    cfg: &RunConfig,
    pools: Pools,
    r: &Rollouts,
    phases: &mut Phases,
) -> Option<Infeasible> {
    let (hw, run, p) = (cfg.hardware, cfg.run, cfg.task.prompt_tokens);
    let gpu = &hw.gpu;
    let (r1, r2) = (r.lengths.mean_tokens, r.lengths.second_moment_tokens);
    let train_pool = pools.training as f64;
    match (cfg.reward.kind, &cfg.reward.model) {
        (RewardKind::Rule, _) | (_, None) => None,
        (RewardKind::Orm | RewardKind::Prm, Some(rm)) => {
            let f = flops::forward_flops(rm, TokenSums::of_sequences(r.generated, p, r1, r2));
            let seconds = time::compute_seconds(f, train_pool, gpu, gpu.forward_efficiency);
            set(phases, Phase::Reward, f, seconds);
            None
        }
        (RewardKind::Judge, Some(judge)) => {
            let read = TokenSums::of_sequences(r.generated, p + run.judge_rubric_tokens, r1, r2);
            let head = judge.output_head_matmul_params() as f64;
            // The judge reads without predicting each read token: no LM head over the input.
            let prefill =
                flops::forward_flops(judge, read) - 2.0 * head * (read.tokens - r.generated);
            let verdict = run.judge_verdict_tokens;
            let context = p + run.judge_rubric_tokens + r1;
            let verdict_flops = r.generated
                * flops::decode_flops_per_response(judge, context, verdict, verdict * verdict);
            let (verdict_seconds, infeasible) = match time::decode_time(&time::DecodeInput {
                model: judge,
                gpu,
                engine: &hw.engine,
                min_tensor_parallel: 1,
                pool_gpus: pools.training,
                sequences: r.generated,
                prompt_tokens: context,
                lengths: lengths::CappedLognormal::fixed(verdict),
                max_context_tokens: context + verdict,
                memory_utilization: hw.rollout_gpu_memory_utilization,
                // The judge's own share is not reduced by the training state (not modelled).
                resident_bytes_per_gpu: 0.0,
                max_num_seqs: hw.max_num_seqs,
            }) {
                Ok(d) => (d.seconds, None),
                Err(e) => (0.0, Some(rollout_memory(e))),
            };
            let seconds = time::compute_seconds(prefill, train_pool, gpu, gpu.prefill_efficiency)
                + verdict_seconds;
            set(phases, Phase::Reward, prefill + verdict_flops, seconds);
            infeasible
        }
    }
}

/// Forward FLOPs of the policy, including its LoRA adapters (2 per adapter parameter per token).
fn policy_forward_flops(policy: &ModelSpec, finetune: Finetune, batch: TokenSums) -> f64 {
    let adapters = match finetune {
        Finetune::Full => 0.0,
        Finetune::Lora(r) => 2.0 * policy.lora_params(r, false) * batch.tokens,
    };
    flops::forward_flops(policy, batch) + adapters
}

/// Whether old-policy log-probs are recomputed this step.
fn needs_old_logprobs(cfg: &RunConfig) -> bool {
    match cfg.run.old_logprob {
        OldLogprob::Always => true,
        OldLogprob::Never => false,
        OldLogprob::Auto => cfg.update_epochs > 1,
    }
}

/// Seconds a training-side pass spends beyond its FLOPs (docs/design.md §5): a fixed cost per
/// pass (or per optimizer step) and, for every micro-batch, the kernel launches of each layer
/// (`launches` forward-equivalents: 1 for a forward, 3 for a forward-backward). Each GPU of the
/// training pool runs its share of `tokens` in micro-batches of `max_tokens_per_gpu`.
fn pass_overhead_seconds(
    cfg: &RunConfig,
    model: &ModelSpec,
    tokens: f64,
    train_pool: f64,
    passes: f64,
    launches: f64,
    micro_tokens_per_gpu: f64,
) -> f64 {
    let run = cfg.run;
    let micro_batches = (tokens / (train_pool * micro_tokens_per_gpu))
        .ceil()
        .max(1.0);
    passes * run.pass_overhead_seconds
        + micro_batches * model.layers as f64 * launches * run.train_launch_seconds_per_layer
}

/// What every training pass of a step shares: the pool, the batches' token sums, the epochs
/// and optimizer steps, sequence parallelism and checkpointing (see [`learning`]).
struct TrainingPasses<'a> {
    cfg: &'a RunConfig<'a>,
    gpu: &'a crate::catalog::GpuSpec,
    pool: f64,
    epochs: f64,
    optimizer_steps: f64,
    checkpointing: f64,
    log_prob_sums: TokenSums,
    update_sums: TokenSums,
}

impl TrainingPasses<'_> {
    /// Ulysses' all-to-alls (zero without sequence parallelism), per forward-equivalent.
    fn ulysses(&self, model: &ModelSpec, sums: TokenSums, passes: f64) -> f64 {
        let sp = self.cfg.run.sequence_parallel;
        passes::ulysses_seconds(model, self.gpu, sums.tokens, self.pool, sp, passes)
    }

    /// The fixed costs of a log-prob pass in micro-batches of `micro` tokens.
    fn forward_overhead(&self, model: &ModelSpec, micro: f64) -> f64 {
        let tokens = self.log_prob_sums.tokens;
        pass_overhead_seconds(self.cfg, model, tokens, self.pool, 1.0, 1.0, micro)
    }

    /// The fixed costs of the update: an optimizer step per mini-batch of prompts per epoch,
    /// a forward-backward per micro-batch.
    fn update_overhead(&self, model: &ModelSpec, micro: f64) -> f64 {
        let tokens = self.epochs * self.update_sums.tokens;
        pass_overhead_seconds(
            self.cfg,
            model,
            tokens,
            self.pool,
            self.optimizer_steps,
            3.0,
            micro,
        )
    }

    /// Attention FLOPs of one forward over `sums`: 2·A·Σℓ².
    fn attention(model: &ModelSpec, sums: TokenSums) -> f64 {
        2.0 * model.attention_coefficient() * sums.squared_tokens
    }

    /// A forward pass: its matmuls at the forward efficiency, its attention at the kernel's.
    fn forward_seconds(&self, model: &ModelSpec, flops: f64, sums: TokenSums) -> f64 {
        let a = Self::attention(model, sums);
        let efficiency = self.gpu.forward_efficiency * model.moe_training_efficiency();
        passes::pass_seconds(self.gpu, self.pool, flops - a, a, 0.0, efficiency, sums)
            + self.ulysses(model, sums, 1.0)
    }

    /// A training pass over every epoch: FLOPs and seconds. The attention forward runs once
    /// (plus once more when recomputed), its backward twice the forward for full fine-tuning and
    /// once for LoRA (no weight gradients through frozen attention projections; the attention
    /// itself has none).
    fn update_seconds(&self, model: &ModelSpec, finetune: Finetune, micro: f64) -> (f64, f64) {
        let (epochs, checkpointing, sums) = (self.epochs, self.checkpointing, self.update_sums);
        let total = epochs * flops::train_flops(model, finetune, sums);
        let recompute = checkpointing * epochs * policy_forward_flops(model, finetune, sums);
        let a = epochs * Self::attention(model, sums);
        let backward = if finetune == Finetune::Full {
            2.0 * a
        } else {
            a
        };
        let matmul = total + recompute - a * (1.0 + checkpointing) - backward;
        let forward_attention = a * (1.0 + checkpointing);
        let seconds = passes::pass_seconds(
            self.gpu,
            self.pool,
            matmul,
            forward_attention,
            backward,
            self.gpu.train_mfu * model.moe_training_efficiency(),
            sums,
        );
        // The backward repeats the forward's all-to-alls; recomputation adds a forward's.
        let exchanges = self.ulysses(model, sums, epochs * (2.0 + checkpointing));
        (
            total,
            seconds + self.update_overhead(model, micro) + exchanges,
        )
    }
}

/// Learning, over the kept rollouts: old-policy and reference log-probs, the update epochs
/// (plus one forward per epoch with gradient checkpointing, in time only), the PPO critic, and
/// the fixed per-step sync. Micro-batches, padding and the attention kernel's efficiency are
/// [`passes`]'; each pass also pays [`pass_overhead_seconds`].
fn learning(cfg: &RunConfig, pools: Pools, r: &Rollouts, phases: &mut Phases) {
    let (run, policy) = (cfg.run, cfg.policy);
    let PassTokens {
        log_prob_sums,
        log_prob_micro,
        update_sums,
        update_micro,
    } = PassTokens::of(cfg, r);
    let epochs = cfg.update_epochs as f64;
    let t = TrainingPasses {
        cfg,
        gpu: &cfg.hardware.gpu,
        pool: pools.training as f64,
        epochs,
        // An epoch takes one optimizer step per mini-batch of prompts.
        optimizer_steps: epochs
            * (cfg.prompts_per_step as f64 / run.mini_batch_prompts.max(1) as f64).ceil(),
        checkpointing: if run.gradient_checkpointing { 1.0 } else { 0.0 },
        log_prob_sums,
        update_sums,
    };
    let moves = OffloadMoves::of(cfg, pools);
    let forward = policy_forward_flops(policy, cfg.finetune, log_prob_sums);
    if needs_old_logprobs(cfg) {
        let seconds = t.forward_seconds(policy, forward, log_prob_sums)
            + t.forward_overhead(policy, log_prob_micro)
            + moves.policy_forward;
        set(phases, Phase::OldLogprob, forward, seconds);
    }
    if run.kl_reference {
        let f = flops::forward_flops(policy, log_prob_sums);
        let seconds = t.forward_seconds(policy, f, log_prob_sums)
            + t.forward_overhead(policy, log_prob_micro)
            + moves.reference;
        set(phases, Phase::RefLogprob, f, seconds);
    }
    let (update, seconds) = t.update_seconds(policy, cfg.finetune, update_micro);
    set(phases, Phase::Update, update, seconds + moves.policy_update);
    if run.algorithm == Algorithm::Ppo {
        let critic = run.critic.as_ref().unwrap_or(policy);
        let critic_micro = run.critic_max_tokens_per_gpu;
        let values = flops::forward_flops(critic, log_prob_sums);
        let seconds = t.forward_seconds(critic, values, log_prob_sums)
            + t.forward_overhead(critic, critic_micro)
            + moves.critic_forward;
        set(phases, Phase::CriticValues, values, seconds);
        let (critic_update, seconds) = t.update_seconds(critic, Finetune::Full, critic_micro);
        set(
            phases,
            Phase::CriticUpdate,
            critic_update,
            seconds + moves.critic_update,
        );
    }
    let checkpoints = if run.checkpoint_every_steps > 0 {
        super::whole_run::checkpoint_seconds(cfg) / run.checkpoint_every_steps as f64
    } else {
        0.0
    };
    set(
        phases,
        Phase::Sync,
        0.0,
        run.step_overhead_seconds + checkpoints + moves.policy_forward + moves.step_swap,
    );
}

/// The tokens the training passes compute (packed, or with the framework's padding) and their
/// micro-batches' tokens per GPU: the log-prob passes' and the update's.
struct PassTokens {
    log_prob_sums: TokenSums,
    log_prob_micro: f64,
    update_sums: TokenSums,
    update_micro: f64,
}

impl PassTokens {
    fn of(cfg: &RunConfig, r: &Rollouts) -> Self {
        let run = cfg.run;
        let mb = run.micro_batching;
        let kept = passes::PassBatch {
            sequences: r.kept,
            prompt_tokens: cfg.task.prompt_tokens,
            lengths: r.distribution,
            moments: (r.lengths.mean_tokens, r.lengths.second_moment_tokens),
        };
        // The framework's padding width only matters (and is only looked up) when padding is
        // kept.
        let padding = if mb.remove_padding {
            passes::Padding::Removed
        } else {
            passes::Padding::kept(
                run.framework.profile().padding,
                cfg.task.max_prompt_tokens.unwrap_or(cfg.task.prompt_tokens),
                cfg.max_response_len as f64,
            )
        };
        let log_prob_sums = kept.computed_sums(mb.log_prob_sequences, padding);
        let log_prob_budget = mb
            .log_prob_max_tokens_per_gpu
            .unwrap_or(run.max_tokens_per_gpu);
        let sp = run.sequence_parallel;
        let update_sums = kept.computed_sums(mb.update_sequences, padding);
        PassTokens {
            log_prob_sums,
            log_prob_micro: kept.micro_batch_tokens(
                mb.log_prob_sequences,
                log_prob_budget,
                log_prob_sums,
                sp,
            ),
            update_sums,
            update_micro: kept.micro_batch_tokens(
                mb.update_sequences,
                run.max_tokens_per_gpu,
                update_sums,
                sp,
            ),
        }
    }
}

/// Seconds of host-device copies that offloaded training state adds to each pass
/// ([`offload`]): the policy's weights around its log-prob pass and the rollout's weight sync,
/// its weights and moments around the update, the reference's weights around its pass (under
/// LoRA the reference is the policy with its adapters off), and the critic's likewise. Offload
/// once per step ([`crate::config::Offload::per_step`]) moves none of these: the offloaded
/// parts make one round trip around the rollout instead (`step_swap`, charged to the sync
/// phase, between rollout and training).
struct OffloadMoves {
    policy_forward: f64,
    policy_update: f64,
    reference: f64,
    critic_forward: f64,
    critic_update: f64,
    step_swap: f64,
}

impl OffloadMoves {
    fn of(cfg: &RunConfig, pools: Pools) -> Self {
        let (run, policy) = (cfg.run, cfg.policy);
        let trip = |bytes: f64| {
            offload::round_trip_seconds(bytes, pools.training as f64, &cfg.hardware.gpu)
        };
        if run.offload.per_step {
            return OffloadMoves {
                policy_forward: 0.0,
                policy_update: 0.0,
                reference: 0.0,
                critic_forward: 0.0,
                critic_update: 0.0,
                step_swap: trip(swapped_bytes(cfg)),
            };
        }
        let o = run.offload;
        let state = offload::TrainedState::of(policy, cfg.finetune);
        let reference = match cfg.finetune {
            Finetune::Full if o.reference => trip(BF16_BYTES * policy.total_params() as f64),
            Finetune::Full => 0.0,
            Finetune::Lora(_) => trip(state.forward_round_trip_bytes(o)),
        };
        let critic =
            offload::TrainedState::of(run.critic.as_ref().unwrap_or(policy), Finetune::Full);
        OffloadMoves {
            policy_forward: trip(state.forward_round_trip_bytes(o)),
            policy_update: trip(state.update_round_trip_bytes(o)),
            reference,
            critic_forward: trip(critic.forward_round_trip_bytes(o)),
            critic_update: trip(critic.update_round_trip_bytes(o)),
            step_swap: 0.0,
        }
    }
}

fn pool_share(seconds: f64, busy: f64, held: f64) -> f64 {
    if busy > 0.0 {
        seconds / busy * held
    } else {
        0.0
    }
}

/// The step's wall seconds and each phase's GPU-seconds. Colocated: phases run one after
/// another on every GPU. Async: the step is the slower pool. Separate: the pools take turns, so
/// the step is the sum. Under both split schedules each pool is held for the whole step, its
/// idle time charged to its phases in proportion to their busy time.
fn charge_gpu_seconds(cfg: &RunConfig, pools: Pools, phases: &mut Phases) -> f64 {
    let hw = cfg.hardware;
    let is_generation =
        |ph: Phase| matches!(ph, Phase::Prefill | Phase::Decode | Phase::Validation);
    let gen_busy: f64 = [Phase::Prefill, Phase::Decode, Phase::Validation]
        .iter()
        .map(|&ph| phases[ph.index()].seconds)
        .sum();
    let train_busy: f64 = Phase::ALL
        .iter()
        .filter(|&&ph| !is_generation(ph) && ph != Phase::Sync && ph != Phase::Startup)
        .map(|&ph| phases[ph.index()].seconds)
        .sum();
    let sync = phases[Phase::Sync.index()].seconds;
    let step_seconds = match hw.schedule {
        Schedule::Colocated | Schedule::Separate => gen_busy + train_busy + sync,
        Schedule::Async => gen_busy.max(train_busy) + sync,
    };
    for &ph in &Phase::ALL {
        let i = ph.index();
        let seconds = phases[i].seconds;
        phases[i].gpu_seconds = match (hw.schedule, ph) {
            (_, Phase::Sync) | (Schedule::Colocated, _) => seconds * hw.gpus as f64,
            (Schedule::Async | Schedule::Separate, ph) if is_generation(ph) => {
                pool_share(seconds, gen_busy, step_seconds - sync) * pools.generation as f64
            }
            (Schedule::Async | Schedule::Separate, _) => {
                pool_share(seconds, train_busy, step_seconds - sync) * pools.training as f64
            }
        };
    }
    step_seconds
}

/// The prompt plus the cap beyond the policy's context window, when its catalog entry states one
/// (vLLM refuses a `max_model_len` above `max_position_embeddings` unless told otherwise).
fn context_window(cfg: &RunConfig) -> Option<Infeasible> {
    let context_tokens = cfg.policy.context_tokens?;
    let prompt_tokens = cfg.task.prompt_tokens;
    (prompt_tokens + cfg.max_response_len as f64 > context_tokens as f64).then_some(
        Infeasible::ContextWindow {
            prompt_tokens,
            cap_tokens: cfg.max_response_len,
            context_tokens,
        },
    )
}

/// [`super::run::StepLedger`] of a run at a constant mean response length.
pub(super) fn constant_step(cfg: &RunConfig) -> StepLedger {
    let pools = Pools::of(cfg);
    let rollouts = Rollouts::of(cfg);
    let mut phases: Phases = [PhaseCost::default(); super::PHASE_COUNT];
    let (decode, prefilled_prompts, rollout_infeasible) =
        search(cfg, pools, &rollouts, &mut phases);
    let validation_pass_seconds = validation(cfg, pools, &rollouts, &mut phases);
    let judge_infeasible = feedback(cfg, pools, &rollouts, &mut phases);
    let (p, r1, r2) = (
        cfg.task.prompt_tokens,
        rollouts.lengths.mean_tokens,
        rollouts.lengths.second_moment_tokens,
    );
    let batch = TokenSums::of_sequences(rollouts.kept, p, r1, r2);
    learning(cfg, pools, &rollouts, &mut phases);
    let mut step_seconds = charge_gpu_seconds(cfg, pools, &mut phases);
    let start_seconds = super::whole_run::startup_seconds(cfg)
        + if cfg.run.validation_before_training {
            validation_pass_seconds
        } else {
            0.0
        };
    // Restarts after faults: their expected share of each step, the whole cluster held.
    let restarts_per_step =
        super::whole_run::restarts_per_step(cfg.run, cfg.hardware.gpus, step_seconds);
    let restart_seconds = super::whole_run::restart_seconds(cfg.run, start_seconds, step_seconds);
    let share = restarts_per_step * restart_seconds;
    let sync = &mut phases[Phase::Sync.index()];
    sync.seconds += share;
    sync.gpu_seconds += share * cfg.hardware.gpus as f64;
    step_seconds += share;
    let (training_bytes, memory_infeasible) = training_memory(cfg, pools);
    let infeasible = context_window(cfg)
        .or(rollouts
            .starves
            .then_some(Infeasible::DynamicSamplingStarves))
        .or(rollout_infeasible)
        .or(judge_infeasible)
        .or(memory_infeasible)
        .or_else(|| colocated_memory(cfg, pools));
    let forward_passes = u8::from(needs_old_logprobs(cfg)) + u8::from(cfg.run.kl_reference);
    let ledger = Ledger {
        phases,
        step_seconds,
        iterations: 0,
        gpus: cfg.hardware.gpus,
        usd_per_gpu_hour: cfg.hardware.usd_per_gpu_hour,
        tokens: TokenStats {
            rollouts_per_step: rollouts.kept,
            generated_rollouts_per_step: rollouts.generated,
            mean_response_tokens: r1,
            generated_tokens_per_step: rollouts.generated * r1,
            prompt_tokens_per_step: rollouts.generated * p,
            truncation_rate: rollouts.lengths.truncation_rate,
            truncated_token_share: rollouts.lengths.truncated_token_share,
            zero_signal_rate: rollouts.zero_signal,
            straggler_response_tokens: rollouts.straggler,
            prefill_tokens_per_step: prefilled_prompts * p,
            group_size: cfg.group_size as f64,
            forward_tokens_per_step: batch.tokens * f64::from(forward_passes),
            train_tokens_per_step: batch.tokens * cfg.update_epochs as f64,
        },
        decode,
        training_memory_gb_per_gpu: training_bytes / 1e9,
        infeasible,
        waste: Waste::default(),
        external_usd_per_step: [0.0; 3],
        environment_usd_per_step: 0.0,
        api_usd_per_step: 0.0,
        validation_pass_seconds,
        start_seconds,
        restarts_per_step,
        restart_seconds,
    };
    StepLedger::new(ledger, pools, rollouts, cfg.hardware.gpus as f64)
}
