//! Which training state is on the GPUs when, and whether it fits (docs/design.md §5): the
//! training passes' memory (the policy's update with the other models' resident state and one
//! micro-batch's activations), the state a colocated rollout finds beside it (checked against
//! an engine's claim on the whole memory, or taken off the share of one that claims the memory
//! left free), and what once-per-step offload moves around the rollout.

use super::step::Pools;
use super::{Infeasible, RunConfig, memory, offload};
use crate::catalog::BF16_BYTES;
use crate::config::{Algorithm, Finetune, Schedule};

/// Bytes (unsharded) that offload once per step moves off the GPUs for the rollout and back:
/// what stays beside a rollout without offload less what stays with it
/// ([`rollout_resident_bytes`]). The gradients are freed, not moved.
pub(super) fn swapped_bytes(cfg: &RunConfig) -> f64 {
    rollout_resident_bytes(cfg, crate::config::Offload::default())
        - rollout_resident_bytes(cfg, cfg.run.offload)
}

/// Training memory per GPU: the sharded policy state (plus a full reference copy, the critic's
/// state and the reward model's weights) and one micro-batch's activations; the reason when it
/// exceeds the usable memory.
pub(super) fn training_memory(cfg: &RunConfig, pools: Pools) -> (f64, Option<Infeasible>) {
    let (hw, run, policy) = (cfg.hardware, cfg.run, cfg.policy);
    let o = run.offload.during_training();
    // The policy's update holds its whole state, the resident part of the others' (all of it
    // without offload, `offload::TrainedState::resident_bytes`).
    let mut state = memory::policy_state_bytes(policy, cfg.finetune);
    let mut critic_peak = 0.0;
    let reference = resident_reference_bytes(cfg, o);
    state += reference;
    if run.algorithm == Algorithm::Ppo {
        let critic = run.critic.as_ref().unwrap_or(policy);
        let critic_state = offload::TrainedState::of(critic, Finetune::Full);
        state += critic_state.resident_bytes(o);
        // The critic's update: its whole state, the policy's resident part.
        critic_peak = memory::policy_state_bytes(critic, Finetune::Full)
            + offload::TrainedState::of(policy, cfg.finetune).resident_bytes(o)
            + reference;
    }
    if o != crate::config::Offload::default() {
        state = state.max(critic_peak);
    }
    if let Some(rm) = &cfg.reward.model {
        state += BF16_BYTES * rm.total_params() as f64;
    }
    let p = cfg.task.prompt_tokens;
    // Under sequence parallelism a micro-batch is spread over the group's GPUs.
    let degree = run.sequence_parallel.max(1) as f64;
    let micro_tokens = match run.micro_batching.update_sequences {
        // m sequences, the longest of them padded to or packed at the cap at worst.
        Some(m) => m as f64 * (p + cfg.max_response_len as f64) / degree,
        None => run
            .max_tokens_per_gpu
            .max((p + cfg.max_response_len as f64) / degree),
    };
    let bytes = state / pools.training as f64
        + memory::activation_bytes(policy, micro_tokens, run.gradient_checkpointing);
    let usable = hw.gpu.memory_bytes() * hw.usable_memory_fraction;
    let infeasible = (bytes > usable).then_some(Infeasible::TrainingMemory {
        needed_gb: bytes / 1e9,
        available_gb: usable / 1e9,
    });
    (bytes, infeasible)
}

/// The reference model's BF16 weights kept on the training GPUs: with a KL reference under full
/// fine-tuning, unless offloaded under `o` (under LoRA the reference is the policy with its
/// adapters off).
fn resident_reference_bytes(cfg: &RunConfig, o: crate::config::Offload) -> f64 {
    if cfg.run.kl_reference && cfg.finetune == Finetune::Full && !o.reference {
        BF16_BYTES * cfg.policy.total_params() as f64
    } else {
        0.0
    }
}

/// The training state a colocated rollout finds on each of its GPUs: the trained models' weights
/// and moments that are not offloaded (`offload::TrainedState::rollout_resident_bytes`; a PPO
/// critic too) and the reference's BF16 weights, sharded over the training GPUs. 0 under the
/// other schedules, whose engines have GPUs of their own.
pub(super) fn colocated_resident_bytes_per_gpu(cfg: &RunConfig, pools: Pools) -> f64 {
    if cfg.hardware.schedule != Schedule::Colocated {
        return 0.0;
    }
    rollout_resident_bytes(cfg, cfg.run.offload) / pools.training.max(1) as f64
}

/// The training state (unsharded) left on the GPUs during a rollout under offload `o`: the
/// trained models' weights and moments that are not offloaded
/// (`offload::TrainedState::rollout_resident_bytes`; a PPO critic too) and the reference's BF16
/// weights.
fn rollout_resident_bytes(cfg: &RunConfig, o: crate::config::Offload) -> f64 {
    let (run, policy) = (cfg.run, cfg.policy);
    let mut resident = offload::TrainedState::of(policy, cfg.finetune).rollout_resident_bytes(o)
        + resident_reference_bytes(cfg, o);
    if run.algorithm == Algorithm::Ppo {
        let critic = run.critic.as_ref().unwrap_or(policy);
        resident += offload::TrainedState::of(critic, Finetune::Full).rollout_resident_bytes(o);
    }
    resident
}

/// The resident bytes a rollout engine's share is taken after ([`time::DecodeInput`]): the
/// colocated training state for an engine whose share is of the memory left free, else 0 (not
/// computed: most cells' engines take a share of the whole memory).
pub(super) fn engine_resident_bytes_per_gpu(cfg: &RunConfig, pools: Pools) -> f64 {
    if cfg.hardware.engine.utilization_of_total_memory {
        0.0
    } else {
        colocated_resident_bytes_per_gpu(cfg, pools)
    }
}

/// A colocated rollout engine next to the training state that stays on its GPUs (docs/design.md
/// §5, "Colocated memory"). The engine claims `rollout_gpu_memory_utilization` of each GPU's
/// whole memory when it starts or wakes (vLLM's `requested_memory = total × utilization`,
/// refused when free memory is smaller: `vllm/v1/worker/gpu_worker.py`, vllm-project/vllm#20305);
/// the trained models' weights and moments that are not offloaded and the reference's BF16
/// weights stay on those GPUs meanwhile (`offload::TrainedState::rollout_resident_bytes`).
///
/// The check is a floor: a setup it passes can still run out of memory, one it refuses cannot
/// run. So it counts no CUDA context, NCCL buffers or fragmentation; no reward model or judge
/// (veRL and DeepSpeed can offload it, a judge often has GPUs of its own); and the GPU's memory
/// as the catalog's binary gigabytes ([`GpuSpec::memory_bytes`](crate::catalog::GpuSpec::memory_bytes)),
/// a little above what the device reports (an "80 GB" H100 has 80 GiB and reports 81,559 MiB).
/// Other schedules give the engine
/// GPUs of its own; engines whose share is of the memory left free (SGLang, vLLM 0.6 and
/// earlier: `EngineSpec::utilization_of_total_memory`) shrink their KV cache instead
/// ([`time::engine_bytes_per_gpu`]).
pub(super) fn colocated_memory(cfg: &RunConfig, pools: Pools) -> Option<Infeasible> {
    let hw = cfg.hardware;
    if hw.schedule != Schedule::Colocated || !hw.engine.utilization_of_total_memory {
        return None;
    }
    let training_bytes = colocated_resident_bytes_per_gpu(cfg, pools);
    let memory = hw.gpu.memory_bytes();
    let rollout_bytes = memory * hw.rollout_gpu_memory_utilization;
    (training_bytes + rollout_bytes > memory).then_some(Infeasible::ColocatedMemory {
        training_gb: training_bytes / 1e9,
        rollout_gb: rollout_bytes / 1e9,
        memory_gb: memory / 1e9,
    })
}
