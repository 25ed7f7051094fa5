//! Seconds: compute-bound phases at peak × efficiency, and decode on a pool of rollout replicas.
//!
//! Compute-bound phases take FLOPs / (GPUs × peak × efficiency). Decode (docs/design.md §5): the
//! pool is split into replicas of tensor-parallel degree t (the smallest degree at which the
//! weights and one longest sequence's KV cache fit, within one NVLink domain); each replica
//! decodes its share of the step's sequences as a batch that drains ([`super::decode`]: the
//! roofline step of Kwon et al. 2023 at every running sequence's current context, continuous
//! batching bounded by `max_num_seqs` and the KV cache, the tail where few sequences remain,
//! preemption when the cache fills).

use super::decode::{self, ReplicaBatch, StepCost};
use super::lengths::CappedLognormal;
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
    /// The distribution of generated lengths (the cap's point mass included).
    pub lengths: CappedLognormal,
    /// Longest context one sequence can reach (prompt + cap): it must fit in the KV cache.
    pub max_context_tokens: f64,
    /// Share of each GPU's memory the engine may use.
    pub memory_utilization: f64,
    /// Bytes other state keeps on each GPU of the pool while the engine runs (a colocated
    /// rollout's training state; 0 on GPUs of its own). An engine whose share is of the memory
    /// left free (`EngineSpec::utilization_of_total_memory` false: SGLang, vLLM 0.6 and earlier)
    /// takes `memory_utilization` of what remains; the others of the whole memory.
    pub resident_bytes_per_gpu: f64,
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
/// floor, [`EngineSpec::step_overhead_seconds`]). The sweep computes it through
/// [`decode::StepCost`]; this one-call form is for tests.
#[cfg(test)]
pub(crate) fn decode_step_seconds(
    model: &ModelSpec,
    gpu: &GpuSpec,
    engine: &EngineSpec,
    tp: f64,
    b: f64,
    context: f64,
) -> f64 {
    StepCost::new(model, gpu, engine, tp).seconds(b, b * context)
}

/// A drain's inputs, as bits.
type DrainKey = [u64; 18];

/// Per-thread memory of drains: the last few (neighbouring cells of a grid share their decode
/// inputs: the budget, reward, epochs and LoRA axes do not change them), then every distinct
/// one seen (a grid has few: model × G × cap × prompts × hardware). Bounded; results are
/// bit-identical with or without it, so outputs do not depend on the thread count.
struct DrainMemo {
    recent: [Option<(DrainKey, decode::Drain)>; 4],
    next: usize,
    seen: std::collections::HashMap<DrainKey, decode::Drain>,
}

/// Distinct drains a thread keeps before it starts over.
const DRAIN_MEMO_CAPACITY: usize = 1 << 16;

thread_local! {
    static DRAINS: std::cell::RefCell<DrainMemo> = std::cell::RefCell::new(DrainMemo {
        recent: [None; 4],
        next: 0,
        seen: std::collections::HashMap::new(),
    });
}

/// [`decode::drain`], memoised per thread on the bits of its inputs.
fn drain_memoised(step: &StepCost, batch: &ReplicaBatch) -> decode::Drain {
    let key: DrainKey = [
        step.compute_seconds_per_sequence,
        step.compute_seconds_per_context_token,
        step.dense_weight_seconds,
        step.expert_weight_seconds,
        step.active_expert_share,
        step.memory_seconds_per_context_token,
        step.overhead_seconds,
        step.overhead_seconds_per_sequence,
        step.gpu_overhead_seconds,
        f64::from(u8::from(step.overhead_overlaps_gpu)),
        f64::from(u8::from(step.static_batching)),
        batch.sequences,
        batch.prompt_tokens,
        batch.lengths.mu,
        batch.lengths.sigma,
        batch.lengths.cap_tokens,
        batch.max_running,
        batch.kv_capacity_tokens,
    ]
    .map(f64::to_bits);
    DRAINS.with(|memo| {
        let mut memo = memo.borrow_mut();
        if let Some((_, d)) = memo.recent.iter().flatten().find(|(k, _)| *k == key) {
            return *d;
        }
        let d = match memo.seen.get(&key) {
            Some(d) => *d,
            None => {
                let d = decode::drain(step, batch);
                if memo.seen.len() >= DRAIN_MEMO_CAPACITY {
                    memo.seen.clear();
                }
                memo.seen.insert(key, d);
                d
            }
        };
        let slot = memo.next;
        memo.recent[slot] = Some((key, d));
        memo.next = (slot + 1) % memo.recent.len();
        d
    })
}

/// The bytes the engine claims on each GPU of its pool: its share of the whole memory, or, for an
/// engine whose share is of the memory left free, of what the resident state leaves (veRL's
/// `docs/examples/config.rst`: `gpu_memory_utilization` is "the proportion of the remaining GPU
/// memory" for vLLM 0.5.4 and 0.6.3, and SGLang's `mem_fraction_static` a fraction of the free
/// memory). A colocated SGLang rollout beside training state therefore gets a smaller KV cache
/// (fewer sequences in flight) where vLLM 0.7 and later would refuse to start
/// (`ledger::residency::colocated_memory`).
pub fn engine_bytes_per_gpu(input: &DecodeInput) -> f64 {
    let memory = input.gpu.memory_bytes();
    if input.engine.utilization_of_total_memory {
        memory * input.memory_utilization
    } else {
        (memory - input.resident_bytes_per_gpu).max(0.0) * input.memory_utilization
    }
}

/// Decode time of one step's sequences on a pool of GPUs.
pub fn decode_time(input: &DecodeInput) -> Result<DecodeTime, DecodeDoesNotFit> {
    let model = input.model;
    let per_gpu = engine_bytes_per_gpu(input);
    // Tensor parallelism stays inside one NVLink domain (8 GPUs per HGX server, 72 per NVL72).
    let max_tp = input
        .pool_gpus
        .clamp(1, input.gpu.nvlink_domain_gpus.max(1));
    let mut tp = input.min_tensor_parallel.clamp(1, max_tp);
    loop {
        let kv_per_token = model.kv_cache_bytes_per_token_on(tp as f64);
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
    let kv_per_token = model.kv_cache_bytes_per_token_on(tpf);
    let replicas = (input.pool_gpus / tp).max(1);
    let batch = ReplicaBatch {
        sequences: (input.sequences / replicas as f64).max(1.0),
        prompt_tokens: input.prompt_tokens,
        lengths: input.lengths,
        max_running: input.max_num_seqs.max(1) as f64,
        kv_capacity_tokens: ((per_gpu * tpf - model.weight_bytes()) / kv_per_token)
            .max(input.max_context_tokens),
    };
    let step = StepCost::new(model, input.gpu, input.engine, tpf);
    let d = drain_memoised(&step, &batch);
    Ok(DecodeTime {
        seconds: d.seconds,
        tail_seconds: d.tail_seconds,
        tensor_parallel: tp,
        replicas,
        sequences_in_flight: d.concurrency,
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
            lengths: CappedLognormal::new(900.0, 0.6, 4096.0),
            max_context_tokens: 4352.0,
            memory_utilization: 0.6,
            resident_bytes_per_gpu: 0.0,
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
    fn an_engine_sharing_free_memory_takes_its_share_after_the_resident_state() {
        // An H100 (80 GiB = 85.90e9 bytes) with 13.33e9 bytes of training state left on it,
        // engine share 0.6: vLLM 0.7+ claims 0.6 × 85.90e9 = 51.54e9 whatever else is there (the
        // colocated check refuses what does not fit); SGLang and vLLM 0.6 claim
        // 0.6 × (85.90e9 − 13.33e9) = 43.54e9 bytes.
        let c = Catalog::embedded();
        let model = c.model("qwen2.5-7b").unwrap();
        let input = DecodeInput {
            model,
            gpu: c.gpu("h100-sxm").unwrap(),
            engine: c.default_engine(),
            min_tensor_parallel: 1,
            pool_gpus: 8,
            sequences: 4096.0,
            prompt_tokens: 256.0,
            lengths: CappedLognormal::new(2000.0, 0.6, 8192.0),
            max_context_tokens: 8448.0,
            memory_utilization: 0.6,
            resident_bytes_per_gpu: 13.33e9,
            max_num_seqs: 1024,
        };
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b;
        let gpu_bytes = 80.0 * 1_073_741_824.0;
        assert!(close(engine_bytes_per_gpu(&input), 0.6 * gpu_bytes));
        for id in ["sglang", "vllm-v0-eager"] {
            let engine = c.engine(id).unwrap();
            let free = DecodeInput { engine, ..input };
            assert!(
                close(engine_bytes_per_gpu(&free), 0.6 * (gpu_bytes - 13.33e9)),
                "{id}"
            );
            // A smaller KV cache holds fewer sequences at once: the drain is no faster.
            let alone = DecodeInput {
                resident_bytes_per_gpu: 0.0,
                ..free
            };
            let (shrunk, full) = (decode_time(&free).unwrap(), decode_time(&alone).unwrap());
            assert!(shrunk.seconds >= full.seconds, "{id}: {shrunk:?} {full:?}");
            assert!(
                shrunk.sequences_in_flight < full.sequences_in_flight,
                "{id}: {shrunk:?} {full:?}"
            );
        }
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
        small_gpu.memory_gib = 10.0;
        let input = DecodeInput {
            model: big,
            gpu: &small_gpu,
            engine: c.default_engine(),
            min_tensor_parallel: 1,
            pool_gpus: 64,
            sequences: 64.0,
            prompt_tokens: 256.0,
            lengths: CappedLognormal::new(256.0, 0.6, 512.0),
            max_context_tokens: 768.0,
            memory_utilization: 0.6,
            resident_bytes_per_gpu: 0.0,
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
