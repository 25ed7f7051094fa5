//! Rollout engine profiles: what one decode step costs beyond the roofline, and the engine's
//! defaults (sequences in flight, memory share).
//!
//! A decode step of a replica reads the weights and the KV cache (the roofline in
//! `ledger::time`), plus a floor that does not shrink with batch or bandwidth: scheduling,
//! sampling and Python overhead per step, kernel launches per decoder layer when the engine runs
//! eagerly (CUDA graphs replay a step's launches at once), and the all-reduces of tensor
//! parallelism (two per layer). That floor is why a recipe measured on A100, H100 and H200 can
//! take about the same seconds per step, which a bandwidth roofline alone cannot explain.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The default of [`EngineSpec::utilization_of_total_memory`]: vLLM's current meaning.
fn share_of_total_memory() -> bool {
    true
}

/// The default of [`EngineSpec::kv_passes_per_step`]: attention reads each running sequence's
/// KV once per step (a paged cache is written in place).
fn one_kv_pass() -> f64 {
    1.0
}

/// The default of [`EngineSpec::moe_layer_seconds_per_step`]: vLLM's 20 µs per MoE layer.
fn vllm_moe_layer_seconds() -> f64 {
    20e-6
}

/// The default of [`EngineSpec::lora_generation_slowdown`]: vLLM's measured 1.51×, the ratio of
/// 2,693.62 output tokens/s without LoRA to 1,787.78 with a rank-8 adapter (Llama-2-7B on one
/// A100, ShareGPT, 1,000 prompts; vLLM PR #11267, `benchmark_throughput.py --enable-lora`,
/// 2024-12-17).
fn vllm_lora_slowdown() -> f64 {
    2693.62 / 1787.78
}

/// A rollout engine's per-step floor and defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EngineSpec {
    /// Stable lowercase id (`vllm-cudagraph`).
    pub id: String,
    /// What it is, with the versions it stands for.
    pub name: String,
    /// Whether decode steps replay CUDA graphs (no per-layer launch cost).
    pub cuda_graphs: bool,
    /// Fixed seconds per decode step: scheduling, sampling, detokenisation, Python.
    pub step_floor_seconds: f64,
    /// Seconds per decoder layer per step from kernel launches (0 with CUDA graphs).
    pub launch_seconds_per_layer: f64,
    /// Seconds per decoder layer per step of tensor-parallel all-reduces, when the degree > 1.
    pub allreduce_seconds_per_layer: f64,
    /// Seconds per sequence in flight per step: the scheduler's, sampler's and detokeniser's
    /// work that grows with the batch (0 when not measured).
    #[serde(default)]
    pub sequence_seconds_per_step: f64,
    /// Default cap on sequences in flight per replica (vLLM `max_num_seqs`).
    pub max_num_seqs: u64,
    /// The default on GPUs with at least 70 GiB of memory other than the A100, when the engine
    /// raises it there (vLLM's `EngineArgs._set_default_args`: 1,024).
    #[serde(default)]
    pub max_num_seqs_large_gpu: Option<u64>,
    /// Default share of each GPU's memory the engine may use (vLLM `gpu_memory_utilization`).
    pub gpu_memory_utilization: f64,
    /// Whether that share is of the GPU's whole memory (vLLM 0.7 and later: the engine asks for
    /// `total × gpu_memory_utilization` when it starts or wakes and refuses to start with less
    /// free), or of what other models leave free (vLLM 0.6 and earlier in veRL, "the proportion
    /// of the remaining GPU memory ... after other models have initialized"; SGLang's
    /// `mem_fraction_static`, "the fraction of the free GPU memory": veRL's `config.rst`). Only
    /// the first can fail beside colocated training state; the second shrinks its KV cache
    /// instead. Default true (vLLM's current meaning).
    #[serde(default = "share_of_total_memory")]
    pub utilization_of_total_memory: bool,
    /// Whether a batch decodes until its longest sequence ends, finished sequences kept as
    /// padding and no new ones admitted (transformers' `generate()`), instead of continuous
    /// batching (vLLM, SGLang). Default false.
    #[serde(default)]
    pub static_batching: bool,
    /// Times each step moves the running sequences' KV: 1 when attention reads a paged cache
    /// written in place; 3 for a cache grown by concatenation, which reads and rewrites it too
    /// (transformers' `DynamicCache`). Default 1.
    #[serde(default = "one_kv_pass")]
    pub kv_passes_per_step: f64,
    /// Whether the per-step CPU work (floor, launches, per-sequence work) runs while the GPU
    /// works, so that a step takes the longer of the two, not their sum: PyTorch launches an
    /// eager model's kernels asynchronously (transformers' `generate()`). Default false: the
    /// vLLM and SGLang profiles were chosen as sums.
    #[serde(default)]
    pub overhead_overlaps_gpu: bool,
    /// GPU seconds per decoder layer per step beyond the roofline: an eager layer's many small
    /// kernels (norms, rotary, activations) each take a few microseconds of the GPU. Default 0.
    #[serde(default)]
    pub gpu_seconds_per_layer: f64,
    /// Fixed seconds per decode step of each mixture-of-experts layer beyond reading its
    /// experts: the routing softmax and top-k, the token-to-expert alignment, and the launch and
    /// tail of the two grouped matmuls (vLLM's `fused_moe`), none of which a dense MLP has.
    /// Derived on vLLM, not fitted: Qwen3-30B-A3B decodes one sequence in 9.6 ms per token on an
    /// A100 at 128 prompt and 128 output tokens (tenstorrent/tt-inference-server issue #340,
    /// "Qwen3 Family: GPU Benchmarks", comment of 2025-07-18, first row); the step model without
    /// this term gives 8.6 ms, and the remaining 1.0 ms over 48 layers is 20 µs per layer (the
    /// unit test `one_token_of_qwen3_30b_a3b_on_an_a100_takes_the_measured_9_6_ms` holds the
    /// derivation). Default: that value, for engines with no measurement of their own.
    #[serde(default = "vllm_moe_layer_seconds")]
    pub moe_layer_seconds_per_step: f64,
    /// Times a LoRA policy's generation (prefill and decode) takes beside the same model's
    /// without adapters: the engine runs the adapters' kernels (punica's shrink and expand on
    /// every adapted linear layer) on every token, besides the base weights. Measured on vLLM at
    /// 1.51× (vLLM PR #11267: 2,693.62 against 1,787.78 output tokens/s, Llama-2-7B, rank 8, one
    /// A100); other published measurements bracket it: 1.25× (vLLM issue #10062: a 7B model on
    /// an A100 40 GB at rank 64, 35 s against 28 s) and 1.75× (issue #2829: long prompts, the
    /// older kernels of early 2024). Default: vLLM's 1.51×, for engines with no measurement of
    /// their own (SGLang's LoRA uses kernels of the same design; none was found).
    #[serde(default = "vllm_lora_slowdown")]
    pub lora_generation_slowdown: f64,
    /// When the profile was written.
    pub date: String,
    /// Where its numbers come from.
    pub source: String,
}

impl EngineSpec {
    /// The engine's default `max_num_seqs` on this GPU.
    pub fn default_max_num_seqs(&self, gpu: &super::GpuSpec) -> u64 {
        let gib = gpu.memory_gib;
        match self.max_num_seqs_large_gpu {
            Some(large) if gib >= 70.0 && !gpu.id.starts_with("a100") => large,
            _ => self.max_num_seqs,
        }
    }

    /// The floor of one decode step of a model with `layers` decoder layers on a replica of
    /// tensor-parallel degree `tp`: step floor + layers × (launch + all-reduce if tp > 1).
    pub fn step_overhead_seconds(&self, layers: u64, tp: f64) -> f64 {
        let allreduce = if tp > 1.0 {
            self.allreduce_seconds_per_layer
        } else {
            0.0
        };
        self.step_floor_seconds + layers as f64 * (self.launch_seconds_per_layer + allreduce)
    }

    /// Checks every number is finite and non-negative, the memory share is in (0, 1] and the
    /// sequence cap is at least 1.
    pub fn validate(&self, origin: &Path) -> Result<()> {
        let bad = |field: &str, message: String| {
            Err(Error::in_file(
                origin,
                None,
                &format!("engine `{}`.{field}", self.id),
                message,
            ))
        };
        for (field, value) in [
            ("step_floor_seconds", self.step_floor_seconds),
            ("launch_seconds_per_layer", self.launch_seconds_per_layer),
            (
                "allreduce_seconds_per_layer",
                self.allreduce_seconds_per_layer,
            ),
            ("sequence_seconds_per_step", self.sequence_seconds_per_step),
            ("gpu_seconds_per_layer", self.gpu_seconds_per_layer),
            (
                "moe_layer_seconds_per_step",
                self.moe_layer_seconds_per_step,
            ),
        ] {
            if !value.is_finite() || value < 0.0 {
                return bad(
                    field,
                    format!("{value} is not valid; use a finite number >= 0"),
                );
            }
        }
        if !(self.gpu_memory_utilization > 0.0 && self.gpu_memory_utilization <= 1.0) {
            return bad(
                "gpu_memory_utilization",
                format!(
                    "{} must lie in (0, 1]: the share of each GPU's memory the engine may use",
                    self.gpu_memory_utilization
                ),
            );
        }
        if self.max_num_seqs == 0 {
            return bad("max_num_seqs", "must be at least 1".to_string());
        }
        // The factors of at least 1, each with why nothing smaller is real.
        for (field, value, rule) in [
            (
                "lora_generation_slowdown",
                self.lora_generation_slowdown,
                "a finite factor of at least 1 (adapters add work)",
            ),
            (
                "kv_passes_per_step",
                self.kv_passes_per_step,
                "a number >= 1 (attention reads the KV at least once)",
            ),
        ] {
            if !(value.is_finite() && value >= 1.0) {
                return bad(field, format!("{value} is not valid; use {rule}"));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_overhead_by_hand() {
        let e = EngineSpec {
            id: "x".into(),
            name: "x".into(),
            cuda_graphs: false,
            step_floor_seconds: 0.004,
            launch_seconds_per_layer: 0.0005,
            allreduce_seconds_per_layer: 0.00002,
            sequence_seconds_per_step: 0.0,
            max_num_seqs: 256,
            max_num_seqs_large_gpu: None,
            gpu_memory_utilization: 0.9,
            utilization_of_total_memory: true,
            static_batching: false,
            kv_passes_per_step: 1.0,
            overhead_overlaps_gpu: false,
            gpu_seconds_per_layer: 0.0,
            moe_layer_seconds_per_step: 20e-6,
            lora_generation_slowdown: 1.0,
            date: String::new(),
            source: String::new(),
        };
        // 28 layers, one GPU: 4 ms + 28 × 0.5 ms = 18 ms.
        assert!((e.step_overhead_seconds(28, 1.0) - 0.018).abs() < 1e-12);
        // Degree 2 adds 28 × 20 µs = 0.56 ms.
        assert!((e.step_overhead_seconds(28, 2.0) - 0.01856).abs() < 1e-12);
    }
}
