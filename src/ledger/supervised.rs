//! Ledgers of the non-RL stages of a post-training project: supervised fine-tuning, reward-model
//! training and DPO, on the same phases, buckets and time model as the RL ledger, so that a
//! project can be priced stage by stage.
//!
//! - SFT: one training pass per example and epoch (6·N·s + 6·A·s², or LoRA's cheaper backward).
//! - Reward model: a training pass over chosen and rejected responses of every pair (the model
//!   is the policy's backbone with a scalar head, Ouyang et al. 2022's recipe).
//! - DPO (Rafailov et al. 2023): a training pass of the policy over chosen and rejected, plus a
//!   reference forward over both, every epoch, or once when reference log-probs are precomputed.
//!
//! All of it is learning: no generation, no feedback. One iteration is one epoch over the data.

use crate::catalog::{BF16_BYTES, ModelSpec};
use crate::config::{Finetune, Hardware, RunSettings};

use super::flops::{TokenSums, forward_flops, train_flops};
use super::{Infeasible, Ledger, Phase, PhaseCost, TokenStats, Waste, memory, time};

/// Which supervised stage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stage {
    /// Supervised fine-tuning on demonstrations.
    Sft,
    /// Reward-model training on preference pairs.
    RewardModel,
    /// Direct preference optimisation.
    Dpo {
        /// Reference log-probs computed once before training instead of every epoch.
        precomputed_reference: bool,
    },
}

/// A supervised run.
#[derive(Debug, Clone, Copy)]
pub struct SupervisedRun<'a> {
    /// The stage.
    pub stage: Stage,
    /// The model trained (the policy, or the reward model for `RewardModel`).
    pub model: &'a ModelSpec,
    /// Full or LoRA.
    pub finetune: Finetune,
    /// Examples (SFT) or preference pairs (RM, DPO).
    pub examples: f64,
    /// Tokens per sequence (SFT: prompt + demonstration; pairs: prompt + one response).
    pub tokens_per_sequence: f64,
    /// Epochs.
    pub epochs: u64,
    /// Cluster.
    pub hardware: &'a Hardware,
    /// Settings (checkpointing, micro-batch tokens).
    pub run: &'a RunSettings,
}

/// Prices a supervised run.
pub fn evaluate_supervised(r: &SupervisedRun) -> Ledger {
    let hw = r.hardware;
    let gpu = &hw.gpu;
    let gpus = hw.gpus as f64;
    let sequences = match r.stage {
        Stage::Sft => r.examples,
        Stage::RewardModel | Stage::Dpo { .. } => 2.0 * r.examples,
    };
    let batch = TokenSums::of_sequences(sequences, r.tokens_per_sequence, 0.0, 0.0);
    let finetune = if r.stage == Stage::RewardModel {
        Finetune::Full
    } else {
        r.finetune
    };
    let mut phases = [PhaseCost::default(); super::PHASE_COUNT];
    let update = train_flops(r.model, finetune, batch);
    let recompute = if r.run.gradient_checkpointing {
        forward_flops(r.model, batch)
    } else {
        0.0
    };
    let update_seconds = time::compute_seconds(update + recompute, gpus, gpu, gpu.train_mfu);
    phases[Phase::ALL
        .iter()
        .position(|&p| p == Phase::Update)
        .expect("listed")] = PhaseCost {
        flops: update,
        seconds: update_seconds,
        gpu_seconds: update_seconds * gpus,
    };
    if let Stage::Dpo {
        precomputed_reference,
    } = r.stage
    {
        let per_epoch = if precomputed_reference {
            1.0 / r.epochs.max(1) as f64
        } else {
            1.0
        };
        let f = forward_flops(r.model, batch) * per_epoch;
        let s = time::compute_seconds(f, gpus, gpu, gpu.forward_efficiency);
        phases[Phase::ALL
            .iter()
            .position(|&p| p == Phase::RefLogprob)
            .expect("listed")] = PhaseCost {
            flops: f,
            seconds: s,
            gpu_seconds: s * gpus,
        };
    }
    let step_seconds: f64 = phases.iter().map(|p| p.seconds).sum();
    let (bytes, infeasible) = supervised_memory(r, finetune);
    Ledger {
        phases,
        step_seconds,
        iterations: r.epochs,
        gpus: hw.gpus,
        usd_per_gpu_hour: hw.usd_per_gpu_hour,
        tokens: TokenStats {
            forward_tokens_per_step: if matches!(r.stage, Stage::Dpo { .. }) {
                batch.tokens
            } else {
                0.0
            },
            train_tokens_per_step: batch.tokens,
            ..TokenStats::default()
        },
        decode: time::DecodeTime::default(),
        training_memory_gb_per_gpu: bytes / 1e9,
        infeasible,
        waste: Waste::default(),
        external_usd_per_step: [0.0; 3],
        environment_usd_per_step: 0.0,
        api_usd_per_step: 0.0,
        validation_pass_seconds: 0.0,
        start_seconds: 0.0,
        restarts_per_step: 0.0,
        restart_seconds: 0.0,
    }
}

/// Training memory per GPU: the training state sharded over the cluster plus one micro-batch's
/// activations; DPO under full fine-tuning also holds the frozen reference (unless its
/// log-probs are precomputed). The bytes, and the refusal when they exceed the usable memory.
fn supervised_memory(r: &SupervisedRun, finetune: Finetune) -> (f64, Option<Infeasible>) {
    let (hw, gpus) = (r.hardware, r.hardware.gpus as f64);
    let gpu = &hw.gpu;
    let mut state = memory::policy_state_bytes(r.model, finetune);
    if matches!(
        r.stage,
        Stage::Dpo {
            precomputed_reference: false
        }
    ) && finetune == Finetune::Full
    {
        state += BF16_BYTES * r.model.total_params() as f64;
    }
    let micro = r.run.max_tokens_per_gpu.max(r.tokens_per_sequence);
    let bytes =
        state / gpus + memory::activation_bytes(r.model, micro, r.run.gradient_checkpointing);
    let usable = gpu.memory_bytes() * hw.usable_memory_fraction;
    let infeasible = (bytes > usable).then_some(Infeasible::TrainingMemory {
        needed_gb: bytes / 1e9,
        available_gb: usable / 1e9,
    });
    (bytes, infeasible)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::ledger::Bucket;

    fn hardware() -> Hardware {
        let gpu = Catalog::embedded().gpu("h100-sxm").unwrap().clone();
        Hardware {
            usd_per_gpu_hour: 2.0,
            gpu,
            gpus: 8,
            schedule: crate::config::Schedule::Colocated,
            async_rollout_fraction: 0.5,
            rollout_gpu_memory_utilization: 0.6,
            max_num_seqs: 256,
            usable_memory_fraction: 0.9,
            engine: Catalog::embedded().default_engine().clone(),
            rollout_tensor_parallel: 1,
        }
    }

    fn settings() -> RunSettings {
        RunSettings {
            framework: crate::config::Framework::Verl,
            algorithm: crate::config::Algorithm::Grpo,
            kl_reference: false,
            kl_coef: 0.0,
            prefix_cache: true,
            dynamic_sampling: false,
            old_logprob: crate::config::OldLogprob::Auto,
            gradient_checkpointing: false,
            offload: crate::config::Offload::default(),
            sequence_parallel: 1,
            step_overhead_seconds: 0.0,
            max_tokens_per_gpu: 16384.0,
            critic_max_tokens_per_gpu: 16384.0,
            micro_batching: crate::config::MicroBatching::default(),
            startup_seconds: Some(0.0),
            checkpoint_every_steps: 0,
            checkpoint_seconds: Some(0.0),
            checkpoint_write_gb_per_second: 1.0,
            validation_every_steps: 0,
            validation_prompts: 0,
            validation_samples_per_prompt: 1,
            validation_before_training: false,
            restarts_per_gpu_day: 0.0,
            generation_batch_prompts: None,
            dynamic_sampling_filter_rate: None,
            mini_batch_prompts: 256,
            // No training-pass overheads: the hand-computed values are FLOPs over peak.
            pass_overhead_seconds: 0.0,
            train_launch_seconds_per_layer: 0.0,
            judge_rubric_tokens: 0.0,
            judge_verdict_tokens: 1.0,
            critic: None,
            agent: crate::config::Agent::default(),
        }
    }

    #[test]
    fn sft_hand_value() {
        // Qwen2.5-0.5B, 1,000 examples of 300 tokens, one epoch, no checkpointing:
        // 6·N·T + 6·A·Q with N = 493,961,216, A = 21,504, T = 300,000, Q = 9e7.
        let m = Catalog::embedded().model("qwen2.5-0.5b").unwrap().clone();
        let (hw, run) = (hardware(), settings());
        let l = evaluate_supervised(&SupervisedRun {
            stage: Stage::Sft,
            model: &m,
            finetune: Finetune::Full,
            examples: 1000.0,
            tokens_per_sequence: 300.0,
            epochs: 1,
            hardware: &hw,
            run: &run,
        });
        let expected = 6.0 * 493_961_216.0 * 300_000.0 + 6.0 * 21_504.0 * 9e7;
        assert!((l.total_flops() - expected).abs() / expected < 1e-12);
        assert_eq!(l.flops_share(Bucket::Learning), 1.0);
        // Time: FLOPs / (8 × 989e12 × 0.40).
        assert!((l.step_seconds - expected / (8.0 * 989e12 * 0.40)).abs() < 1e-9);
    }

    #[test]
    fn dpo_precomputing_the_reference_saves_passes() {
        let m = Catalog::embedded().model("qwen2.5-1.5b").unwrap().clone();
        let (hw, run) = (hardware(), settings());
        let dpo = |pre| {
            evaluate_supervised(&SupervisedRun {
                stage: Stage::Dpo {
                    precomputed_reference: pre,
                },
                model: &m,
                finetune: Finetune::Full,
                examples: 2000.0,
                tokens_per_sequence: 400.0,
                epochs: 3,
                hardware: &hw,
                run: &run,
            })
        };
        let (every, once) = (dpo(false), dpo(true));
        let r = |l: &Ledger| l.phase(Phase::RefLogprob).flops * l.iterations as f64;
        assert!((r(&every) - 3.0 * r(&once)).abs() / r(&every) < 1e-12);
        assert!(once.total_usd() < every.total_usd());
    }
}
