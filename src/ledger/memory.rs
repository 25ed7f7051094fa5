//! Training-side memory per GPU: what FSDP / ZeRO-3 sharding leaves on each GPU, plus the
//! activations of one micro-batch.
//!
//! - Full fine-tuning with mixed-precision Adam holds 16 bytes per parameter: BF16 weights and
//!   gradients (2 + 2) and FP32 master weights, first and second moments (4 + 4 + 4) (Rajbhandari
//!   et al. 2020, "ZeRO", section 3.1), sharded over the training GPUs.
//! - LoRA keeps the frozen base in BF16 (2 bytes per parameter) and 16 bytes per adapter parameter.
//! - Frozen models on the training GPUs (the reference policy under full fine-tuning, a reward
//!   model) hold 2 bytes per parameter, sharded. Under LoRA the reference is the base with the
//!   adapters switched off, so it costs nothing extra.
//! - Activations per micro-batch of T tokens: with checkpointing, each block keeps its input
//!   (2·H bytes per token) and one block at a time is recomputed, holding 34·H bytes per token
//!   (Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models",
//!   eq. 1 with the attention-score term removed by FlashAttention); without checkpointing every
//!   block holds 34·H per token. The output logits add T·V·4 bytes (FP32 for the log-softmax).

use crate::catalog::{BF16_BYTES, ModelSpec};
use crate::config::Finetune;

/// Bytes per trainable parameter under mixed-precision Adam (ZeRO paper, section 3.1).
pub const ADAM_MIXED_PRECISION_BYTES_PER_PARAM: f64 = 16.0;

/// Activation bytes per token per block held while a block is recomputed or (without
/// checkpointing) stored: 34·H (Korthikanti et al. 2022).
pub const ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN: f64 = 34.0;

/// Bytes of weights and optimizer state of the policy under a fine-tuning mode (unsharded).
pub fn policy_state_bytes(model: &ModelSpec, finetune: Finetune) -> f64 {
    match finetune {
        Finetune::Full => ADAM_MIXED_PRECISION_BYTES_PER_PARAM * model.total_params() as f64,
        Finetune::Lora(rank) => {
            BF16_BYTES * model.total_params() as f64
                + ADAM_MIXED_PRECISION_BYTES_PER_PARAM * model.lora_params(rank, true)
        }
    }
}

/// Activation bytes of one micro-batch of `tokens` tokens on one GPU.
pub fn activation_bytes(model: &ModelSpec, tokens: f64, gradient_checkpointing: bool) -> f64 {
    let h = model.hidden as f64;
    let per_block = ACTIVATION_BYTES_PER_TOKEN_PER_HIDDEN * h * tokens;
    let blocks = if gradient_checkpointing {
        model.layers as f64 * BF16_BYTES * h * tokens + per_block
    } else {
        model.layers as f64 * per_block
    };
    let logits = if model.lm_head {
        tokens * model.vocab as f64 * 4.0
    } else {
        0.0
    };
    blocks + logits
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn full_finetuning_state_is_sixteen_bytes_per_parameter() {
        // Qwen2.5-7B: 16 × 7,615,616,512 = 121.85 GB before sharding (ZeRO paper's 16Ψ).
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        assert_eq!(
            policy_state_bytes(&m, Finetune::Full),
            16.0 * 7_615_616_512.0
        );
        let lora = policy_state_bytes(&m, Finetune::Lora(8));
        assert!(lora < 2.1 * 7_615_616_512.0 && lora > 2.0 * 7_615_616_512.0);
    }

    #[test]
    fn activation_hand_value() {
        // Qwen2.5-1.5B, 16,384 tokens, checkpointing: 28 × 2 × 1536 × 16384 (block inputs)
        // + 34 × 1536 × 16384 (one block) + 16384 × 151936 × 4 (logits).
        let m = Catalog::embedded().model("qwen2.5-1.5b").unwrap().clone();
        let expected =
            28.0 * 2.0 * 1536.0 * 16384.0 + 34.0 * 1536.0 * 16384.0 + 16384.0 * 151936.0 * 4.0;
        assert_eq!(activation_bytes(&m, 16384.0, true), expected);
        assert!(activation_bytes(&m, 16384.0, false) > expected);
    }
}
