//! Training-side passes at long sequences (docs/design.md §5): how the batch is cut into
//! micro-batches, what padding costs, and the attention kernel's own efficiency.
//!
//! - **Micro-batches.** veRL packs each GPU's sequences up to a token budget
//!   (`use_dynamic_bsz` with `ppo_max_token_len_per_gpu`, `log_prob_max_token_len_per_gpu`) or
//!   cuts them into micro-batches of a fixed number of sequences (`ppo_micro_batch_size_per_gpu`,
//!   `log_prob_micro_batch_size_per_gpu`; TRL's `per_device_train_batch_size`). The micro-batch
//!   sets the activation memory and the number of kernel-launch rounds.
//! - **Padding.** Without padding removal (veRL `use_remove_padding = false`, TRL without
//!   `padding_free`) the padded positions are computed like tokens. veRL's batch tensors have
//!   fixed widths: every sequence is the prompt cap plus the response cap, W = P_max + L_max,
//!   so T = n·W and Q = n·W² ([`crate::config::PaddingWidth::FixedWidths`]). A collator's
//!   dynamic padding (TRL) pads a micro-batch of m sequences to its longest, M = P + E[max of m
//!   lengths]: T = n·M, Q = n·M².
//! - **Attention.** Causal attention's 2·A·Q forward FLOPs (and twice that backward) run at the
//!   attention kernel's efficiency ([`crate::catalog::GpuSpec::attention_efficiency`], rising with
//!   the token-weighted mean length Q/T) times [`END_TO_END_ATTENTION_SHARE`], the matmuls at the
//!   pass's MFU. At 16k tokens attention is about 20% of a 7B model's FLOPs and 40% of a 1.5B
//!   model's.

use super::flops::TokenSums;
use super::lengths::CappedLognormal;
use crate::catalog::{BF16_BYTES, GpuSpec, ModelSpec};

/// The sequences one training pass runs over.
#[derive(Debug, Clone, Copy)]
pub struct PassBatch {
    /// Sequences.
    pub sequences: f64,
    /// Prompt tokens of each.
    pub prompt_tokens: f64,
    /// Their generated lengths.
    pub lengths: CappedLognormal,
    /// E\[ℓ\] and E\[ℓ²\] of those lengths (the ledger's memoised values of `lengths`' moments).
    pub moments: (f64, f64),
}

/// What a training pass computes besides the real tokens ([`PassBatch::computed_sums`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Padding {
    /// Sequences packed: only real tokens are computed (padding removed).
    Removed,
    /// Every sequence computed at a fixed width in tokens (veRL without padding removal: the
    /// prompt cap plus the response cap).
    FixedWidth(f64),
    /// Each micro-batch of a fixed number of sequences padded to its longest; packed under a
    /// token budget, whose micro-batches are cut by real length.
    LongestInMicroBatch,
}

impl Padding {
    /// The padding a run's training passes compute when it is kept (not removed): the
    /// framework's width, with the prompt cap (the mean prompt when none is given) and the
    /// response cap for fixed widths.
    pub fn kept(
        width: crate::config::PaddingWidth,
        prompt_cap_tokens: f64,
        response_cap_tokens: f64,
    ) -> Self {
        use crate::config::PaddingWidth;
        match width {
            PaddingWidth::FixedWidths => {
                Padding::FixedWidth(prompt_cap_tokens + response_cap_tokens)
            }
            PaddingWidth::LongestInMicroBatch => Padding::LongestInMicroBatch,
        }
    }
}

impl PassBatch {
    /// Token sums as computed: packed, every sequence at a fixed width, or each micro-batch of
    /// `micro_sequences` padded to its longest sequence ([`Padding`]).
    pub fn computed_sums(&self, micro_sequences: Option<u64>, padding: Padding) -> TokenSums {
        let (n, p, l) = (self.sequences, self.prompt_tokens, &self.lengths);
        let padded_to = |width: f64| TokenSums {
            tokens: n * width,
            squared_tokens: n * width * width,
        };
        match (padding, micro_sequences) {
            (Padding::FixedWidth(width), _) => padded_to(width),
            (Padding::LongestInMicroBatch, Some(m)) => padded_to(p + l.expected_max(m as f64)),
            _ => TokenSums::of_sequences(n, p, self.moments.0, self.moments.1),
        }
    }

    /// Tokens per GPU in one micro-batch: `micro_sequences` sequences as computed, or the token
    /// budget (at least one longest sequence, which veRL requires the budget to hold).
    ///
    /// Under Ulysses sequence parallelism of `degree`, a micro-batch is spread over that many
    /// GPUs: its sequences' tokens are divided among them, and the token budget need only hold
    /// a longest sequence across the group (veRL multiplies `ppo_max_token_len_per_gpu` by the
    /// degree).
    pub fn micro_batch_tokens(
        &self,
        micro_sequences: Option<u64>,
        budget_tokens: f64,
        sums: TokenSums,
        degree: u64,
    ) -> f64 {
        let degree = degree.max(1) as f64;
        match micro_sequences {
            Some(m) => m as f64 * sums.tokens / self.sequences.max(1e-12) / degree,
            None => budget_tokens.max((self.prompt_tokens + self.lengths.cap_tokens) / degree),
        }
    }
}

/// The share of the attention kernel's benchmark efficiency that an RL framework's training
/// pass reaches end to end: 0.45. The kernel figures (FA2 on H100: 0.35 forward, 0.28 backward;
/// Dao 2023) are measured on one kernel call over a full batch; inside veRL's and RLinf's
/// packed, unpadded passes the attention of long sequences runs at less than half of that.
///
/// Chosen against per-step phase timings, not derived: at the kernel figures the three 27k-cap
/// H100 rows of `validation/phase_timings.csv` (`rlinf_doc_verl_r1d15b_27k_8xh100`,
/// `rlinf_doc_rlinf_r1d15b_27k_8xh100`, `rlinf_doc_verl_r1d7b_27k_64gpu`; RLinf's
/// compare_with_verl table) price the old-log-prob pass 1.6-1.7× fast and the update 1.2-1.3×
/// fast. Over the validation set's 36 phase timings, 0.45 gives the lowest median
/// |log2(predicted/measured)| of 1.0, 0.6, 0.5, 0.45, 0.4 and 0.35 (0.33 at 1.0, 0.23 at 0.45;
/// the long-context phases 0.41 → 0.21, the short ones unchanged at 0.25). These rows are
/// therefore in-sample for this number.
pub const END_TO_END_ATTENTION_SHARE: f64 = 0.45;

/// Compute seconds of a training-side pass on `gpus` GPUs: the matmul FLOPs at `efficiency`, the
/// attention forward and backward FLOPs at the attention kernel's efficiency at the batch's
/// token-weighted mean length Q/T times [`END_TO_END_ATTENTION_SHARE`].
pub fn pass_seconds(
    gpu: &GpuSpec,
    gpus: f64,
    matmul_flops: f64,
    attention_forward_flops: f64,
    attention_backward_flops: f64,
    efficiency: f64,
    sums: TokenSums,
) -> f64 {
    let peak = gpus * gpu.peak_flops_per_second();
    if peak <= 0.0 {
        return 0.0;
    }
    let length = if sums.tokens > 0.0 {
        sums.squared_tokens / sums.tokens
    } else {
        0.0
    };
    let (kernel_forward, kernel_backward) = gpu.attention_efficiency(length);
    let forward = kernel_forward * END_TO_END_ATTENTION_SHARE;
    let backward = kernel_backward * END_TO_END_ATTENTION_SHARE;
    let mut seconds = matmul_flops.max(0.0) / (peak * efficiency);
    if attention_forward_flops > 0.0 {
        seconds += attention_forward_flops / (peak * forward);
    }
    if attention_backward_flops > 0.0 {
        seconds += attention_backward_flops / (peak * backward);
    }
    seconds
}

/// NCCL's share of the NVLink line rate in bandwidth-bound collectives other than all-reduce:
/// 370 of H100's 450 GB/s, the rest protocol overhead (NVIDIA's NCCL maintainer,
/// NVIDIA/nccl-tests issue #212, 2024-05-06).
pub const NVLINK_PROTOCOL_EFFICIENCY: f64 = 370.0 / 450.0;

/// Seconds of Ulysses sequence parallelism's all-to-alls over `tokens` tokens of `model`, on
/// `gpus` training GPUs in groups of `degree`, for `forward_equivalents` passes' worth (1 for a
/// forward; a forward-backward 2, plus 1 when activations are recomputed).
///
/// DeepSpeed-Ulysses (Jacobs et al. 2023, arXiv 2309.14509, §3) moves each attention layer's
/// queries, keys and values from sequence shards to head shards before attention and its output
/// back after it: four all-to-alls, which the backward pass repeats on the gradients. Each GPU
/// holds tokens/gpus tokens and sends (degree − 1)/degree of each BF16 activation, over its
/// NVLink at [`NVLINK_PROTOCOL_EFFICIENCY`]. Key-value heads fewer than the degree are repeated
/// up to it first (veRL), so their volume is max(kv heads, degree) head dims.
pub fn ulysses_seconds(
    model: &ModelSpec,
    gpu: &GpuSpec,
    tokens: f64,
    gpus: f64,
    degree: u64,
    forward_equivalents: f64,
) -> f64 {
    if degree <= 1 || gpus <= 0.0 || tokens <= 0.0 {
        return 0.0;
    }
    let q = (model.heads * model.head_dim) as f64;
    let kv = (model.kv_heads.max(degree) * model.head_dim) as f64;
    let bytes_per_token = (2.0 * q + 2.0 * kv) * BF16_BYTES * model.layers as f64;
    let sent = (degree - 1) as f64 / degree as f64;
    let rate = gpu.nvlink_bytes_per_second() * NVLINK_PROTOCOL_EFFICIENCY;
    forward_equivalents * tokens / gpus * bytes_per_token * sent / rate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn attention_at_its_own_efficiency_by_hand() {
        // H100 (989 TFLOP/s): 1e15 matmul FLOPs at MFU 0.4 take 2.528 s; 1e14 attention forward
        // FLOPs at 0.35 × 16,000/16,200 × 0.45 take 0.650 s.
        let c = Catalog::embedded();
        let g = c.gpu("h100-sxm").unwrap();
        let sums = TokenSums {
            tokens: 1.0,
            squared_tokens: 16_000.0,
        };
        let s = pass_seconds(g, 1.0, 1e15, 1e14, 0.0, 0.4, sums);
        let expected: f64 =
            1e15 / (989e12 * 0.4) + 1e14 / (989e12 * 0.35 * 16_000.0 / 16_200.0 * 0.45);
        assert!((expected - 3.1782).abs() < 1e-3, "{expected}");
        assert!((s - expected).abs() < 1e-12, "{s} {expected}");
    }

    #[test]
    fn ulysses_exchange_by_hand() {
        // Qwen2.5-7B (28 heads and 4 key-value heads of 128, 28 layers) on 8 H100s at degree 4,
        // one forward over 1e6 tokens: per token (2·3584 + 2·512) × 2 bytes × 28 layers =
        // 458,752 bytes; each GPU holds 125,000 tokens and sends 3/4 of them at 370 GB/s:
        // 125,000 × 458,752 × 0.75 / 3.7e11 = 0.11624 s.
        let c = Catalog::embedded();
        let (m, g) = (c.model("qwen2.5-7b").unwrap(), c.gpu("h100-sxm").unwrap());
        let s = ulysses_seconds(m, g, 1e6, 8.0, 4, 1.0);
        assert!((s - 0.116238).abs() < 1e-5, "{s}");
        // A forward-backward with recomputation: three forwards' worth.
        assert!((ulysses_seconds(m, g, 1e6, 8.0, 4, 3.0) - 3.0 * s).abs() < 1e-12);
        assert_eq!(ulysses_seconds(m, g, 1e6, 8.0, 1, 1.0), 0.0);
        // At degree 8 the 4 key-value heads are repeated to 8 first.
        let eight = ulysses_seconds(m, g, 1e6, 8.0, 8, 1.0);
        let by_hand = 125_000.0 * (2.0 * 3584.0 + 2.0 * 1024.0) * 2.0 * 28.0 * 7.0 / 8.0 / 3.7e11;
        assert!((eight - by_hand).abs() < 1e-9, "{eight} {by_hand}");
    }

    #[test]
    fn sequence_parallel_spreads_a_micro_batch_over_its_group() {
        let lengths = CappedLognormal::new(20_000.0, 0.6, 32_768.0);
        let batch = PassBatch {
            sequences: 64.0,
            prompt_tokens: 100.0,
            lengths,
            moments: (lengths.mean_tokens(), lengths.second_moment_tokens()),
        };
        let sums = batch.computed_sums(None, Padding::Removed);
        // A 16k budget must hold a 32,868-token sequence alone; across 4 GPUs it need not.
        assert_eq!(batch.micro_batch_tokens(None, 16_384.0, sums, 1), 32_868.0);
        assert_eq!(batch.micro_batch_tokens(None, 16_384.0, sums, 4), 16_384.0);
        let one = batch.micro_batch_tokens(Some(2), 0.0, sums, 1);
        assert!((batch.micro_batch_tokens(Some(2), 0.0, sums, 4) - one / 4.0).abs() < 1e-9);
    }

    #[test]
    fn padding_computes_the_longest_of_each_micro_batch() {
        let lengths = CappedLognormal::new(2000.0, 0.6, 8192.0);
        let batch = PassBatch {
            sequences: 64.0,
            prompt_tokens: 100.0,
            lengths,
            moments: (lengths.mean_tokens(), lengths.second_moment_tokens()),
        };
        let packed = batch.computed_sums(Some(4), Padding::Removed);
        let padded = batch.computed_sums(Some(4), Padding::LongestInMicroBatch);
        assert!((packed.tokens - 64.0 * (100.0 + batch.lengths.mean_tokens())).abs() < 1e-6);
        assert!(
            (lengths.mean_tokens()
                - crate::ledger::lengths::response_lengths(2000.0, 0.6, 8192.0).mean_tokens)
                .abs()
                < 1e-9
        );
        // The longest of 4 is above the mean, below the cap.
        assert!(padded.tokens > 1.3 * packed.tokens && padded.tokens < 64.0 * 8292.0);
        // One sequence per micro-batch needs no padding.
        let one = batch.computed_sums(Some(1), Padding::LongestInMicroBatch);
        assert!((one.tokens / packed.tokens - 1.0).abs() < 1e-3);
    }

    #[test]
    fn fixed_widths_compute_the_caps_whatever_the_lengths() {
        // veRL without padding removal: 64 sequences at a 512-token prompt cap and a 256-token
        // response cap are 64 × 768 = 49,152 positions and 64 × 768² = 37,748,736 for attention,
        // however short the responses and however the micro-batches are cut.
        let lengths = CappedLognormal::new(200.0, 0.6, 256.0);
        let batch = PassBatch {
            sequences: 64.0,
            prompt_tokens: 100.0,
            lengths,
            moments: (lengths.mean_tokens(), lengths.second_moment_tokens()),
        };
        let padding = Padding::kept(crate::config::PaddingWidth::FixedWidths, 512.0, 256.0);
        assert_eq!(padding, Padding::FixedWidth(768.0));
        for micro in [None, Some(1), Some(4)] {
            let sums = batch.computed_sums(micro, padding);
            assert_eq!(sums.tokens, 49_152.0);
            assert_eq!(sums.squared_tokens, 37_748_736.0);
        }
        // Removed padding packs at any micro-batch; dynamic padding without a sequence count
        // packs too.
        let packed = batch.computed_sums(None, Padding::Removed);
        assert_eq!(batch.computed_sums(Some(4), Padding::Removed), packed);
        assert_eq!(
            batch.computed_sums(None, Padding::LongestInMicroBatch),
            packed
        );
    }

    #[test]
    fn expected_max_matches_order_statistics() {
        // Fixed lengths: the maximum is the length. Two draws of a lognormal: E[max] =
        // E[X] + E|X1 − X2|/2 > E[X]; a huge count reaches the cap.
        let fixed = CappedLognormal::fixed(1000.0);
        assert!((fixed.expected_max(16.0) - 1000.0).abs() < 1e-6);
        let l = CappedLognormal::new(2000.0, 0.6, 1e6);
        assert!((l.expected_max(1.0) - 2000.0).abs() < 2.0);
        assert!(l.expected_max(2.0) > 2000.0 && l.expected_max(2.0) < 3000.0);
        let capped = CappedLognormal::new(2000.0, 0.6, 8192.0);
        assert!(capped.expected_max(1e6) > 8100.0);
    }
}
