//! Training-side passes at long sequences (docs/design.md §5): how the batch is cut into
//! micro-batches, what padding costs, and the attention kernel's own efficiency.
//!
//! - **Micro-batches.** veRL packs each GPU's sequences up to a token budget
//!   (`use_dynamic_bsz` with `ppo_max_token_len_per_gpu`, `log_prob_max_token_len_per_gpu`) or
//!   cuts them into micro-batches of a fixed number of sequences (`ppo_micro_batch_size_per_gpu`,
//!   `log_prob_micro_batch_size_per_gpu`; TRL's `per_device_train_batch_size`). The micro-batch
//!   sets the activation memory and the number of kernel-launch rounds.
//! - **Padding.** Without padding removal (veRL `use_remove_padding = false`, TRL without
//!   `padding_free`) a micro-batch of m sequences is padded to its longest, P + E[max of m
//!   lengths], and the padded tokens are computed: T = n·(P + M), Q = n·(P + M)².
//! - **Attention.** Causal attention's 2·A·Q forward FLOPs (and twice that backward) run at the
//!   attention kernel's efficiency ([`crate::catalog::GpuSpec::attention_efficiency`], rising with
//!   the token-weighted mean length Q/T) times [`END_TO_END_ATTENTION_SHARE`], the matmuls at the
//!   pass's MFU. At 16k tokens attention is about 20% of a 7B model's FLOPs and 40% of a 1.5B
//!   model's.

use super::flops::TokenSums;
use super::lengths::CappedLognormal;
use crate::catalog::GpuSpec;

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

impl PassBatch {
    /// Token sums as computed: packed, or with each micro-batch of `micro_sequences` padded to
    /// its longest sequence when padding is kept.
    pub fn computed_sums(&self, micro_sequences: Option<u64>, remove_padding: bool) -> TokenSums {
        let (n, p, l) = (self.sequences, self.prompt_tokens, &self.lengths);
        match micro_sequences {
            Some(m) if !remove_padding => {
                let longest = p + l.expected_max(m as f64);
                TokenSums {
                    tokens: n * longest,
                    squared_tokens: n * longest * longest,
                }
            }
            _ => TokenSums::of_sequences(n, p, self.moments.0, self.moments.1),
        }
    }

    /// Tokens per GPU in one micro-batch: `micro_sequences` sequences as computed, or the token
    /// budget (at least one longest sequence, which veRL requires the budget to hold).
    pub fn micro_batch_tokens(
        &self,
        micro_sequences: Option<u64>,
        budget_tokens: f64,
        sums: TokenSums,
    ) -> f64 {
        match micro_sequences {
            Some(m) => m as f64 * sums.tokens / self.sequences.max(1e-12),
            None => budget_tokens.max(self.prompt_tokens + self.lengths.cap_tokens),
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
    fn padding_computes_the_longest_of_each_micro_batch() {
        let lengths = CappedLognormal::new(2000.0, 0.6, 8192.0);
        let batch = PassBatch {
            sequences: 64.0,
            prompt_tokens: 100.0,
            lengths,
            moments: (lengths.mean_tokens(), lengths.second_moment_tokens()),
        };
        let packed = batch.computed_sums(Some(4), true);
        let padded = batch.computed_sums(Some(4), false);
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
        let one = batch.computed_sums(Some(1), false);
        assert!((one.tokens / packed.tokens - 1.0).abs() < 1e-3);
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
