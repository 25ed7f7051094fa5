//! FLOPs of the passes an RL step is made of, two FLOPs per multiply-accumulate.
//!
//! Notation (docs/design.md §5): N = matmul parameters a token passes through (non-embedding
//! linear weights plus the output head; active experts for MoE, see
//! [`ModelSpec::matmul_params`]); A = layers × heads × head_dim. Over a batch of sequences with
//! token sum T = Σs and square sum Q = Σs²:
//!
//! - forward: 2·N·T + 2·A·Q (Kaplan et al. 2020: C_forward ≈ 2N per token; causal attention's
//!   QKᵀ and AV cost 4·A·s² for a full square, halved for the causal mask, as veRL's flops counter
//!   has counted since January 2026 and as Megatron-LM does);
//! - training, full fine-tuning: 6·N·T + 6·A·Q (backward = 2 × forward);
//! - training, LoRA rank r: 4·N·T + 4·A·Q + 6·P_lora·T (the backward pass needs activation
//!   gradients through the frozen weights, but no weight gradients; the adapters are trained fully).
//!
//! [`verl_train_flops`] reproduces veRL's own convention exactly.

use crate::catalog::ModelSpec;
use crate::config::Finetune;

/// Token statistics of a batch of sequences: T = Σs, Q = Σs².
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct TokenSums {
    /// Σ s over the batch.
    pub tokens: f64,
    /// Σ s² over the batch.
    pub squared_tokens: f64,
}

impl TokenSums {
    /// Sums over explicit sequence lengths.
    pub fn of_lengths(lengths: &[u64]) -> Self {
        TokenSums {
            tokens: lengths.iter().map(|&s| s as f64).sum(),
            squared_tokens: lengths.iter().map(|&s| (s as f64) * (s as f64)).sum(),
        }
    }

    /// `count` sequences of prompt P plus a response with mean `E[R]` and second moment `E[R²]`:
    /// `T = n(P + E[R])`, `Q = n(P² + 2P·E[R] + E[R²])`.
    pub fn of_sequences(
        count: f64,
        prompt: f64,
        mean_response: f64,
        second_moment_response: f64,
    ) -> Self {
        TokenSums {
            tokens: count * (prompt + mean_response),
            squared_tokens: count
                * (prompt * prompt + 2.0 * prompt * mean_response + second_moment_response),
        }
    }
}

/// Forward pass: 2·N·T + 2·A·Q.
pub fn forward_flops(model: &ModelSpec, batch: TokenSums) -> f64 {
    2.0 * model.matmul_params() * batch.tokens
        + 2.0 * model.attention_coefficient() * batch.squared_tokens
}

/// Training pass (forward and backward) under a fine-tuning mode.
/// Full: 6·N·T + 6·A·Q. LoRA rank r: 4·N·T + 4·A·Q + 6·P_lora·T (Hu et al. 2021 for P_lora).
pub fn train_flops(model: &ModelSpec, finetune: Finetune, batch: TokenSums) -> f64 {
    match finetune {
        Finetune::Full => {
            6.0 * model.matmul_params() * batch.tokens
                + 6.0 * model.attention_coefficient() * batch.squared_tokens
        }
        Finetune::Lora(rank) => {
            4.0 * model.matmul_params() * batch.tokens
                + 4.0 * model.attention_coefficient() * batch.squared_tokens
                + 6.0 * model.lora_params(rank, false) * batch.tokens
        }
    }
}

/// Prefill of one prompt of P tokens: every token passes the blocks, only the last needs the
/// output head (vLLM computes logits for the sampled position only), plus causal attention
/// 2·A·P².
pub fn prefill_flops_per_prompt(model: &ModelSpec, prompt_tokens: f64) -> f64 {
    let head = model.output_head_matmul_params() as f64;
    let blocks = model.matmul_params() - head;
    2.0 * blocks * prompt_tokens
        + 2.0 * head
        + 2.0 * model.attention_coefficient() * prompt_tokens * prompt_tokens
}

/// Decode of one response after a prompt of P tokens: 2·N per generated token, plus attention of
/// each new token over its growing context, 4·A·(P·R + R²/2), taken in expectation over the
/// response length (`E[R]` and `E[R²]`).
pub fn decode_flops_per_response(
    model: &ModelSpec,
    prompt_tokens: f64,
    mean_response: f64,
    second_moment_response: f64,
) -> f64 {
    2.0 * model.matmul_params() * mean_response
        + 4.0
            * model.attention_coefficient()
            * (prompt_tokens * mean_response + second_moment_response / 2.0)
}

/// veRL's convention (`verl/utils/flops_counter.py`, verl-project/verl at commit 34ae987, 2026):
/// 6 × N' × Σs + 6 × Σs² × layers × heads × head_dim, where N' counts the embedding and LM head
/// both (2·V·H) and every block's q, k, v, o and SwiGLU weights without biases or norms; for
/// Qwen3-MoE it counts the router (H × experts) and the active experts. Computed in exact integer
/// arithmetic, as Python does. veRL has no forward-only convention; `pass = forward` is this
/// number divided by 3.
pub fn verl_train_flops(model: &ModelSpec, seqlens: &[u64]) -> u128 {
    let h = model.hidden as u128;
    let q = (model.heads * model.head_dim) as u128;
    let kv = (model.kv_heads * model.head_dim) as u128;
    let attn_linear = h * (q + kv + kv + q);
    let mlp = if model.is_moe() {
        h * model.active_experts as u128 * model.expert_intermediate as u128 * 3
            + h * model.experts as u128
    } else {
        h * model.intermediate as u128 * 3
    };
    let embedding_and_head = model.vocab as u128 * h * 2;
    let dense = (mlp + attn_linear) * model.layers as u128 + embedding_and_head;
    let tokens: u128 = seqlens.iter().map(|&s| s as u128).sum();
    let squares: u128 = seqlens.iter().map(|&s| s as u128 * s as u128).sum();
    6 * dense * tokens
        + 6 * squares * model.head_dim as u128 * model.heads as u128 * model.layers as u128
}

/// One pass over a batch counted both ways: rlfrontier's convention and veRL's
/// `flops_counter.py` (for reconciling with the `perf/mfu/actor` veRL logs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConventionCounts {
    /// rlfrontier's count (LoRA-aware, no embedding matmul).
    pub rlfrontier: f64,
    /// veRL's count: its training count, or a third of it for a forward-only pass (veRL counts
    /// training passes only).
    pub verl: f64,
    /// veRL's exact integer training count.
    pub verl_train_exact: u128,
    /// Tokens in the batch.
    pub tokens: f64,
}

/// Counts a training (or forward-only) pass of `model` over sequences of these lengths.
pub fn convention_counts(
    model: &ModelSpec,
    finetune: Finetune,
    seqlens: &[u64],
    forward_only: bool,
) -> ConventionCounts {
    let batch = TokenSums::of_lengths(seqlens);
    let verl_train_exact = verl_train_flops(model, seqlens);
    ConventionCounts {
        rlfrontier: if forward_only {
            forward_flops(model, batch)
        } else {
            train_flops(model, finetune, batch)
        },
        verl: if forward_only {
            verl_train_exact as f64 / 3.0
        } else {
            verl_train_exact as f64
        },
        verl_train_exact,
        tokens: batch.tokens,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn model(id: &str) -> ModelSpec {
        Catalog::embedded().model(id).unwrap().clone()
    }

    #[test]
    fn verl_convention_reproduces_verl_test_values() {
        // Source: verl-project/verl tests/utils/test_flops_counter.py (commit 7de1304), the
        // "qwen2" (Qwen2.5-7B-Instruct shape) and "qwen3" (Qwen3-8B) and "qwen3_moe"
        // (Qwen3-30B-A3B) cases, batches [512, 1024, 2048] and [4096, 4096, 4096].
        let qwen25_7b = model("qwen2.5-7b");
        assert_eq!(
            verl_train_flops(&qwen25_7b, &[512, 1024, 2048]),
            167_073_690_943_488
        );
        assert_eq!(
            verl_train_flops(&qwen25_7b, &[4096, 4096, 4096]),
            591_764_889_010_176
        );
        let qwen3_8b = model("qwen3-8b");
        assert_eq!(
            verl_train_flops(&qwen3_8b, &[512, 1024, 2048]),
            180_997_438_046_208
        );
        assert_eq!(
            verl_train_flops(&qwen3_8b, &[4096, 4096, 4096]),
            648_394_032_807_936
        );
        let moe = model("qwen3-30b-a3b");
        assert_eq!(
            verl_train_flops(&moe, &[512, 1024, 2048]),
            78_593_069_678_592
        );
        assert_eq!(
            verl_train_flops(&moe, &[4096, 4096, 4096]),
            306_570_470_621_184
        );
    }

    #[test]
    fn our_convention_differs_from_verl_by_the_embedding_matmul_only() {
        // Ours counts N without the embedding lookup (it is a gather, not a matmul); veRL counts
        // V·H twice. For an untied dense model with no biases the gap is exactly 6·V·H·Σs.
        let m = model("llama-3.1-8b");
        let lens = [512u64, 1024, 2048];
        let ours = train_flops(&m, Finetune::Full, TokenSums::of_lengths(&lens));
        let verl = verl_train_flops(&m, &lens) as f64;
        let gap = 6.0 * (m.vocab * m.hidden) as f64 * 3584.0;
        assert!((verl - ours - gap).abs() < 1.0, "{verl} {ours} {gap}");
    }

    #[test]
    fn forward_and_training_hand_values() {
        // Qwen2.5-0.5B: N = 24·(896·896·2 + 2·896·128 + 3·896·4864) + 151936·896
        //             = 24·(1,605,632 + 229,376 + 13,074,432) + 136,134,656 = 493,961,216.
        let m = model("qwen2.5-0.5b");
        assert_eq!(m.matmul_params(), 493_961_216.0);
        // A = 24 · 14 · 64 = 21,504.
        assert_eq!(m.attention_coefficient(), 21_504.0);
        let batch = TokenSums::of_lengths(&[1000]);
        let fwd = forward_flops(&m, batch);
        assert_eq!(fwd, 2.0 * 493_961_216.0 * 1000.0 + 2.0 * 21_504.0 * 1e6);
        assert_eq!(train_flops(&m, Finetune::Full, batch), 3.0 * fwd);
        // LoRA rank 8 on all linear layers: per block 8·[(896+896) + 2(896+128) + (896+896)
        // + 3(896+4864)] = 8·22,912 = 183,296; × 24 blocks = 4,399,104 adapter parameters.
        assert_eq!(m.lora_params(8, false), 4_399_104.0);
        let lora = train_flops(&m, Finetune::Lora(8), batch);
        assert_eq!(lora, 2.0 * fwd + 6.0 * 4_399_104.0 * 1000.0);
    }

    #[test]
    fn decode_attention_matches_a_token_by_token_sum() {
        // Σ_{t=1..R} 4·A·(P + t) = 4·A·(P·R + R(R+1)/2): the closed form uses R²/2 and differs by
        // the 2·A·R term only.
        let m = model("qwen2.5-1.5b");
        let (p, r) = (256.0, 1000.0);
        let exact: f64 = (1..=1000)
            .map(|t| 2.0 * m.matmul_params() + 4.0 * m.attention_coefficient() * (p + t as f64))
            .sum();
        let closed = decode_flops_per_response(&m, p, r, r * r);
        assert!((exact - closed - 2.0 * m.attention_coefficient() * r).abs() / exact < 1e-12);
    }
}
