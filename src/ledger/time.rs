//! Seconds: compute-bound phases at peak × efficiency, and decode as a memory-bound loop.
//!
//! Decode model (docs/design.md §5; the roofline argument of Kwon et al. 2023, "Efficient Memory
//! Management for Large Language Model Serving with PagedAttention", and of the vLLM and SGLang
//! throughput benchmarks): a rollout replica of tensor-parallel degree t runs decode steps; each
//! step reads the weights once and the KV cache of every sequence in flight, and does 2·N + 4·A·c
//! FLOPs per sequence at mean context c. Its time is the slower of the two, plus a fixed
//! per-step overhead:
//!
//! step(b) = max(b·(2N + 4A·c) / (t·peak·eff_compute), (W + b·c·kv) / (t·bandwidth·eff_bw)) + floor,
//!
//! the floor being the rollout engine's (`catalog::EngineSpec`: per step, per layer when eager,
//! per layer of tensor-parallel all-reduce).
//!
//! b, the sequences in flight, is bounded by the engine's `max_num_seqs`, by the KV cache that
//! fits beside the weights, and by the sequences the replica has. The bulk of the tokens is
//! generated at full occupancy; the longest response's excess over the mean is generated after the
//! bulk drains, nearly alone (the straggler tail).

use crate::catalog::{EngineSpec, GpuSpec, ModelSpec};

/// Compute-bound seconds: FLOPs / (GPUs × peak × efficiency).
pub fn compute_seconds(flops: f64, gpus: f64, gpu: &GpuSpec, efficiency: f64) -> f64 {
    if flops <= 0.0 {
        return 0.0;
    }
    flops / (gpus * gpu.peak_flops_per_second() * efficiency)
}

/// What the decode model needs to know.
#[derive(Debug, Clone, Copy)]
pub struct DecodeInput<'a> {
    /// The model that decodes.
    pub model: &'a ModelSpec,
    /// The GPU profile.
    pub gpu: &'a GpuSpec,
    /// The rollout engine (the floor of a step).
    pub engine: &'a EngineSpec,
    /// The smallest tensor-parallel degree a replica uses (the framework's rollout setting,
    /// e.g. veRL's `tensor_model_parallel_size`); more when the model needs it.
    pub min_tensor_parallel: u64,
    /// GPUs given to generation.
    pub pool_gpus: u64,
    /// Sequences to generate this step.
    pub sequences: f64,
    /// Context before the first generated token (prompt, plus what a judge reads).
    pub prompt_tokens: f64,
    /// Mean generated tokens per sequence.
    pub mean_response_tokens: f64,
    /// Expected length of the longest sequence.
    pub straggler_response_tokens: f64,
    /// Longest context one sequence can reach (prompt + cap): it must fit in the KV cache.
    pub max_context_tokens: f64,
    /// Share of each GPU's memory the engine may use.
    pub memory_utilization: f64,
    /// The engine's cap on sequences in flight.
    pub max_num_seqs: u64,
}

/// Result of the decode model.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DecodeTime {
    /// Wall seconds of the decode phase.
    pub seconds: f64,
    /// Of which the straggler tail.
    pub tail_seconds: f64,
    /// Tensor-parallel degree of one replica.
    pub tensor_parallel: u64,
    /// Replicas in the pool.
    pub replicas: u64,
    /// Sequences in flight per replica at full occupancy.
    pub sequences_in_flight: f64,
}

/// Why decode cannot run: the weights plus one longest sequence's KV cache do not fit even at
/// the largest tensor-parallel degree tried.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DecodeDoesNotFit {
    /// Bytes needed by one replica: weights plus one longest sequence's KV cache.
    pub needed_bytes: f64,
    /// Bytes the engine may use at the largest degree tried.
    pub available_bytes: f64,
    /// That degree.
    pub tensor_parallel: u64,
}

/// Seconds of one decode step with `b` sequences in flight at mean context `context` on a
/// replica of degree `tp` (see the module doc for the formula; the overhead is the engine's
/// floor, [`EngineSpec::step_overhead_seconds`]).
pub fn decode_step_seconds(
    model: &ModelSpec,
    gpu: &GpuSpec,
    engine: &EngineSpec,
    tp: f64,
    b: f64,
    context: f64,
) -> f64 {
    let compute = b * (2.0 * model.matmul_params() + 4.0 * model.attention_coefficient() * context)
        / (tp * gpu.peak_flops_per_second() * gpu.prefill_efficiency);
    let bytes = model.weight_bytes() + b * context * model.kv_cache_bytes_per_token();
    let memory = bytes / (tp * gpu.bandwidth_bytes_per_second() * gpu.decode_bandwidth_efficiency);
    compute.max(memory) + engine.step_overhead_seconds(model.layers, tp)
}

/// Decode time of one step's sequences on a pool of GPUs.
pub fn decode_time(input: &DecodeInput) -> Result<DecodeTime, DecodeDoesNotFit> {
    let model = input.model;
    let kv_per_token = model.kv_cache_bytes_per_token();
    let per_gpu = input.gpu.memory_bytes() * input.memory_utilization;
    // Tensor parallelism stays inside one NVLink domain (8 GPUs per HGX server, 72 per NVL72).
    let max_tp = input
        .pool_gpus
        .clamp(1, input.gpu.nvlink_domain_gpus.max(1));
    let mut tp = input.min_tensor_parallel.clamp(1, max_tp);
    loop {
        let needed = model.weight_bytes() + input.max_context_tokens * kv_per_token;
        let available = per_gpu * tp as f64;
        if needed <= available {
            break;
        }
        if tp * 2 > max_tp {
            return Err(DecodeDoesNotFit {
                needed_bytes: needed,
                available_bytes: available,
                tensor_parallel: tp,
            });
        }
        tp *= 2;
    }
    let tpf = tp as f64;
    let replicas = (input.pool_gpus / tp).max(1);
    let kv_capacity_tokens = (per_gpu * tpf - model.weight_bytes()) / kv_per_token;
    let mean_context = input.prompt_tokens + input.mean_response_tokens / 2.0;
    let per_replica = input.sequences / replicas as f64;
    let in_flight = (input.max_num_seqs as f64)
        .min(kv_capacity_tokens / mean_context)
        .min(per_replica)
        .max(1.0);
    let bulk_steps = per_replica * input.mean_response_tokens / in_flight;
    let tail_steps = (input.straggler_response_tokens - input.mean_response_tokens).max(0.0);
    let bulk = bulk_steps
        * decode_step_seconds(model, input.gpu, input.engine, tpf, in_flight, mean_context);
    let tail =
        tail_steps * decode_step_seconds(model, input.gpu, input.engine, tpf, 1.0, mean_context);
    Ok(DecodeTime {
        seconds: bulk + tail,
        tail_seconds: tail,
        tensor_parallel: tp,
        replicas,
        sequences_in_flight: in_flight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn memory_bound_step_hand_value() {
        // Qwen2.5-7B on one H100, one sequence at context 1,000: the step reads 15.23 GB of
        // weights plus 1,000 × 57,344 bytes of KV: (15,231,233,024 + 57,344,000) B /
        // (3.35e12 B/s × 0.7) = 6.5197 ms, plus 4 ms overhead. Compute would take
        // (2·N + 4·A·1000)/(989e12 × 0.6) ≈ 0.026 ms, so memory wins.
        let c = Catalog::embedded();
        let m = c.model("qwen2.5-7b").unwrap();
        let g = c.gpu("h100-sxm").unwrap();
        let s = decode_step_seconds(m, g, c.default_engine(), 1.0, 1.0, 1000.0);
        let expected = (15_231_233_024.0 + 57_344_000.0) / (3.35e12 * 0.7) + 0.004;
        assert!((s - expected).abs() < 1e-12, "{s} vs {expected}");
    }

    #[test]
    fn default_decode_profile_is_near_published_vllm_throughput() {
        // Published anchor: vLLM serves about 12,500 output tokens/s for Llama-3.1-8B (BF16) on
        // one H100 80GB at high concurrency (morphllm.com "vLLM Benchmarks", April 2026, citing
        // third-party 2025-2026 runs). With the catalog defaults (70% of bandwidth, 4 ms per
        // step) 256 sequences at a mean context of 500 tokens give about 14,200 tokens/s: within
        // 15% of the anchor, on the optimistic side. Users should calibrate with their own logs.
        let c = Catalog::embedded();
        let m = c.model("llama-3.1-8b").unwrap();
        let g = c.gpu("h100-sxm").unwrap();
        let tokens_per_second =
            256.0 / decode_step_seconds(m, g, c.default_engine(), 1.0, 256.0, 500.0);
        assert!(
            (12_500.0 * 0.85..12_500.0 * 1.2).contains(&tokens_per_second),
            "{tokens_per_second}"
        );
    }

    #[test]
    fn large_batches_become_compute_bound() {
        let c = Catalog::embedded();
        let m = c.model("qwen2.5-0.5b").unwrap();
        let g = c.gpu("h100-sxm").unwrap();
        let small = decode_step_seconds(m, g, c.default_engine(), 1.0, 1.0, 100.0);
        let large = decode_step_seconds(m, g, c.default_engine(), 1.0, 4096.0, 100.0);
        // 4096× the sequences for far less than 4096× the time: decode is memory-bound.
        assert!(large < 100.0 * small);
    }

    #[test]
    fn decode_needs_more_tensor_parallelism_for_large_models() {
        let c = Catalog::embedded();
        let g = c.gpu("h100-sxm").unwrap();
        let big = c.model("qwen2.5-72b").unwrap();
        let input = DecodeInput {
            model: big,
            gpu: g,
            engine: c.default_engine(),
            min_tensor_parallel: 1,
            pool_gpus: 8,
            sequences: 1024.0,
            prompt_tokens: 256.0,
            mean_response_tokens: 900.0,
            straggler_response_tokens: 4096.0,
            max_context_tokens: 4352.0,
            memory_utilization: 0.6,
            max_num_seqs: 256,
        };
        let d = decode_time(&input).unwrap();
        assert_eq!(d.tensor_parallel, 4);
        assert_eq!(d.replicas, 2);
        let one_gpu = DecodeInput {
            pool_gpus: 1,
            ..input
        };
        let err = decode_time(&one_gpu).unwrap_err();
        assert!(err.needed_bytes > err.available_bytes);
    }

    #[test]
    fn tensor_parallelism_stops_at_the_nvlink_domain() {
        // Qwen2.5-72B's 145.4 GB of weights on 10 GB GPUs at 60% utilisation (6 GB each) needs
        // tensor parallelism 32 (24.2 GPUs' worth). In an 8-GPU NVLink domain that is impossible;
        // in a 72-GPU NVL72 domain it fits.
        let c = Catalog::embedded();
        let big = c.model("qwen2.5-72b").unwrap();
        let mut small_gpu = c.gpu("gb200").unwrap().clone();
        assert_eq!(small_gpu.nvlink_domain_gpus, 72);
        small_gpu.memory_gb = 10.0;
        let input = DecodeInput {
            model: big,
            gpu: &small_gpu,
            engine: c.default_engine(),
            min_tensor_parallel: 1,
            pool_gpus: 64,
            sequences: 64.0,
            prompt_tokens: 256.0,
            mean_response_tokens: 256.0,
            straggler_response_tokens: 512.0,
            max_context_tokens: 768.0,
            memory_utilization: 0.6,
            max_num_seqs: 256,
        };
        assert_eq!(decode_time(&input).unwrap().tensor_parallel, 32);
        let mut hgx_gpu = small_gpu.clone();
        hgx_gpu.nvlink_domain_gpus = 8;
        let hgx = DecodeInput {
            gpu: &hgx_gpu,
            ..input
        };
        assert_eq!(decode_time(&hgx).unwrap_err().tensor_parallel, 8);
    }
}
