//! Host offload of training state between passes (veRL FSDP `fsdp_config.param_offload`,
//! `fsdp_config.optimizer_offload`, the reference's `param_offload`), docs/design.md §5.
//!
//! What veRL does (volcengine/verl `workers/fsdp_workers.py`, PR #284 "support offload parameter
//! and optimizer during rollout", 2025-02): a worker whose parameters are offloaded loads its
//! shard to the GPU before each pass that uses it and moves it back to host memory after
//! (`load_fsdp_model_to_gpu` / `offload_fsdp_model_to_cpu`); an offloaded optimizer is loaded
//! around the update only. So every pass pays a round trip of the state it touches, and between
//! passes that state is off the GPU, leaving "one model copy at a time in GPU memory" (PR #284).
//!
//! - **Bytes.** The trained models are held by FSDP in FP32 (veRL loads the actor and critic in
//!   `float32`; mixed precision computes in BF16): parameters and their gradients 4 + 4 bytes per
//!   trainable parameter, Adam's two moments 8 (Rajbhandari et al. 2020, "ZeRO", §3.1 counts the
//!   same 16 bytes). A LoRA policy's frozen base is BF16 (2 bytes), the reference model BF16. All
//!   are sharded over the training GPUs.
//! - **Time.** A round trip moves the shard to the GPU and back at
//!   the GPU's offload rate (`GpuSpec::offload_gb_per_second`); the pass waits for it (veRL loads before computing).
//! - **Memory.** An offloaded model's parameters and gradients (or its optimizer's moments) are
//!   not on the GPU while another model trains: the update's peak holds the model being updated,
//!   plus whatever of the others stays resident.

use crate::catalog::{BF16_BYTES, GpuSpec, ModelSpec};
use crate::config::{Finetune, Offload};

/// FP32 bytes per trained parameter of its weights, and again of its gradients.
pub const FP32_BYTES: f64 = 4.0;

/// Adam's two FP32 moments per trainable parameter (4 + 4).
pub const ADAM_MOMENT_BYTES: f64 = 8.0;

/// The state of one trained model (policy or critic) in bytes, unsharded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TrainedState {
    /// Weights a pass loads: FP32 trained weights and a LoRA policy's frozen BF16 base.
    pub weight_bytes: f64,
    /// FP32 gradients of the trained weights (made on the GPU by the backward pass; they leave
    /// it with the weights under parameter offload).
    pub gradient_bytes: f64,
    /// Adam's moments of the trained weights.
    pub optimizer_bytes: f64,
}

impl TrainedState {
    /// The state of `model` under `finetune`: full fine-tuning trains every parameter; LoRA
    /// trains the adapters over a frozen BF16 base.
    pub fn of(model: &ModelSpec, finetune: Finetune) -> Self {
        let total = model.total_params() as f64;
        let (frozen, trained) = match finetune {
            Finetune::Full => (0.0, total),
            Finetune::Lora(rank) => (BF16_BYTES * total, model.lora_params(rank, true)),
        };
        TrainedState {
            weight_bytes: frozen + FP32_BYTES * trained,
            gradient_bytes: FP32_BYTES * trained,
            optimizer_bytes: ADAM_MOMENT_BYTES * trained,
        }
    }

    /// Bytes that stay on the GPU between this model's passes under `offload`.
    pub fn resident_bytes(&self, offload: Offload) -> f64 {
        let parameters = if offload.params {
            0.0
        } else {
            self.weight_bytes + self.gradient_bytes
        };
        let optimizer = if offload.optimizer {
            0.0
        } else {
            self.optimizer_bytes
        };
        parameters + optimizer
    }

    /// Bytes left on the GPU while a colocated rollout runs under `offload`: the weights and
    /// Adam's moments unless offloaded, without the gradients. veRL frees those at the end of
    /// every update (`self.actor_optimizer.zero_grad()` after the last mini-batch of
    /// `DataParallelPPOActor.update_policy`, `workers/actor/dp_actor.py`; PyTorch ≥ 2.0 sets
    /// them to `None`), so this is the least a trained model keeps beside the rollout engine.
    pub fn rollout_resident_bytes(&self, offload: Offload) -> f64 {
        let weights = if offload.params {
            0.0
        } else {
            self.weight_bytes
        };
        let optimizer = if offload.optimizer {
            0.0
        } else {
            self.optimizer_bytes
        };
        weights + optimizer
    }

    /// Bytes a forward pass (log-probs, values, the rollout's weight sync) moves to the GPU and
    /// back: the weights, when they are offloaded.
    pub fn forward_round_trip_bytes(&self, offload: Offload) -> f64 {
        if offload.params {
            self.weight_bytes
        } else {
            0.0
        }
    }

    /// Bytes an update moves to the GPU and back: the weights and the moments, each when
    /// offloaded.
    pub fn update_round_trip_bytes(&self, offload: Offload) -> f64 {
        let optimizer = if offload.optimizer {
            self.optimizer_bytes
        } else {
            0.0
        };
        self.forward_round_trip_bytes(offload) + optimizer
    }
}

/// Seconds to move `bytes` (unsharded) to `gpus` GPUs of `gpu` and back, each GPU copying its
/// shard at the GPU's offload rate ([`GpuSpec::offload_bytes_per_second`]).
pub fn round_trip_seconds(bytes: f64, gpus: f64, gpu: &GpuSpec) -> f64 {
    if bytes <= 0.0 || gpus <= 0.0 {
        return 0.0;
    }
    2.0 * bytes / gpus / gpu.offload_bytes_per_second()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    const ALL: Offload = Offload {
        params: true,
        optimizer: true,
        reference: true,
        per_step: false,
    };

    #[test]
    fn full_state_is_the_zero_papers_sixteen_bytes() {
        // Qwen2.5-7B, 7,615,616,512 parameters: 4 + 4 + 8 bytes each, the 16 of memory.rs.
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        let s = TrainedState::of(&m, Finetune::Full);
        let n = 7_615_616_512.0;
        assert_eq!((s.weight_bytes, s.gradient_bytes), (4.0 * n, 4.0 * n));
        assert_eq!(s.optimizer_bytes, 8.0 * n);
        assert_eq!(
            s.resident_bytes(Offload::default()),
            crate::ledger::memory::policy_state_bytes(&m, Finetune::Full)
        );
        assert_eq!(s.resident_bytes(ALL), 0.0);
    }

    #[test]
    fn the_playground_update_by_hand() {
        // The veRL playground's 7B actor on 8 GPUs with parameter and optimizer offload: an
        // update moves (4 + 8) × 7.6156e9 / 8 = 11.42 GB per GPU each way; at 5 GB/s there and
        // back, 4.569 s. A forward moves the FP32 weights: 3.81 GB each way, 1.523 s.
        let catalog = Catalog::embedded();
        let m = catalog.model("qwen2.5-7b").unwrap().clone();
        let h100 = catalog.gpu("h100-sxm").unwrap();
        assert_eq!(h100.offload_gb_per_second, 5.0);
        let s = TrainedState::of(&m, Finetune::Full);
        let update = round_trip_seconds(s.update_round_trip_bytes(ALL), 8.0, h100);
        assert!((update - 4.5694).abs() < 1e-3, "{update}");
        let forward = round_trip_seconds(s.forward_round_trip_bytes(ALL), 8.0, h100);
        assert!((forward - 1.5231).abs() < 1e-3, "{forward}");
        assert_eq!(
            round_trip_seconds(s.update_round_trip_bytes(Offload::default()), 8.0, h100),
            0.0
        );
    }

    #[test]
    fn lora_moves_its_frozen_base_and_small_adapters() {
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        let s = TrainedState::of(&m, Finetune::Lora(32));
        let base = 2.0 * m.total_params() as f64;
        let adapters = m.lora_params(32, true);
        assert_eq!(s.weight_bytes, base + 4.0 * adapters);
        assert_eq!(s.optimizer_bytes, 8.0 * adapters);
        assert_eq!(
            s.resident_bytes(Offload::default()),
            crate::ledger::memory::policy_state_bytes(&m, Finetune::Lora(32))
        );
    }
}
