//! Decode as a batch that drains: one rollout replica's continuous batching over the real
//! distribution of response lengths, the point mass at the cap included (docs/design.md §5).
//!
//! **The step.** A decode step of a replica of tensor-parallel degree t with b sequences in
//! flight whose contexts sum to C tokens takes
//!
//! step(b, C) = max((b·2N + C·4A) / (t·peak·eff), (W(b) + C·kv) / (t·bandwidth·eff_bw))
//!              + floor + b·per_sequence,
//!
//! (an eager engine whose CPU work overlaps its GPU work, `EngineSpec::overhead_overlaps_gpu`,
//! takes the larger of the roofline plus its small kernels' GPU time and floor + b·per_sequence),
//! the roofline of Kwon et al. 2023 ("Efficient Memory Management for Large Language Model
//! Serving with PagedAttention") with the engine's fixed cost per step and per sequence in flight
//! (`catalog::EngineSpec`). Every running sequence reads its KV at its *current* context, so the
//! memory term is linear in C, not in b times the mean context. For a mixture of experts, W(b)
//! reads the dense weights and the share of routed experts a batch of b tokens touches,
//! 1 − (1 − k/E)^b per layer (tokens routed independently and uniformly: an upper bound, since
//! real routing is skewed).
//!
//! **The batch.** n sequences, lengths ℓ from [`CappedLognormal`], at most b* in flight: b* is
//! the engine's `max_num_seqs` or what the KV cache holds at the running sequences' mean context
//! in steady state, P + E\[ℓ²\]/(2E\[ℓ\]) (a slot holds a length-biased sequence at a uniform age:
//! renewal theory, Cox 1962, "Renewal Theory", ch. 5).
//! - *One wave* (n ≤ b*): all start together; at step τ, n·S(τ) still run with contexts summing
//!   to n·S(τ)·(P + τ); the wave ends with the longest of n, the n/(n+1) quantile (capped: once
//!   n·P(X > L) is about one, the cap).
//! - *Full, then drain* (n > b*): b* run until the queue empties; the running ones then hold
//!   equilibrium residuals, so b*·E\[(ℓ − τ)⁺\]/E\[ℓ\] still run at drain step τ, with contexts
//!   summing to (b*/E\[ℓ\])·((P + τ)·E\[(ℓ − τ)⁺\] + E\[((ℓ − τ)⁺)²\]/2); the drain ends where that
//!   count falls to b*/(b* + 1). The full phase generates the remaining tokens at b* per step and
//!   reads the remaining KV, so over the whole batch the tokens, n·E\[ℓ\], and the KV reads,
//!   n·(P·E\[ℓ\] + E\[ℓ²\]/2), are exact.
//!
//! *Static batches* (an engine with `static_batching`, transformers' `generate()`): batches of
//! b that each run until their longest sequence ends, finished ones kept as padding
//! ([`static_drain`]).
//!
//! The drain's steps are integrated by Gauss-Legendre quadrature over segments cut at the
//! length distribution's quantiles. A discrete-event simulation of the scheduler (admission,
//! growth, preemption with recompute; `reference.rs`, in the tests) is the slow reference the
//! fast form is tested against.

#[cfg(test)]
mod reference;

use super::lengths::{CappedLognormal, GAUSS_LEGENDRE_8};
use crate::catalog::{EngineSpec, GpuSpec, ModelSpec};

/// The cost of one decode step of a replica, as a function of its running sequences and the sum
/// of their contexts (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StepCost {
    /// Compute seconds per running sequence: 2N / (t·peak·eff).
    pub compute_seconds_per_sequence: f64,
    /// Compute seconds per token of context read: 4A / (t·peak·eff).
    pub compute_seconds_per_context_token: f64,
    /// Seconds to read the weights every step reads (all of a dense model; the non-expert part
    /// of a mixture of experts).
    pub dense_weight_seconds: f64,
    /// Seconds to read every routed expert once (0 for a dense model).
    pub expert_weight_seconds: f64,
    /// Share of the routed experts one token activates, k/E.
    pub active_expert_share: f64,
    /// Memory seconds per token of context read: the replica's KV bytes per token (heads
    /// replicated past `kv_heads` GPUs) / (t·bandwidth·eff).
    pub memory_seconds_per_context_token: f64,
    /// The engine's fixed seconds per step (floor, launches, all-reduces; for a mixture of
    /// experts also its layers' routing and grouped-matmul overheads).
    pub overhead_seconds: f64,
    /// The engine's seconds per sequence in flight per step (scheduler, sampler, detokeniser).
    pub overhead_seconds_per_sequence: f64,
    /// GPU seconds per step beyond the roofline (an eager engine's small kernels, per layer).
    pub gpu_overhead_seconds: f64,
    /// Whether the step is the longer of its CPU work (overhead, per-sequence work) and its GPU
    /// work instead of their sum (`EngineSpec::overhead_overlaps_gpu`).
    pub overhead_overlaps_gpu: bool,
    /// Whether the engine batches statically ([`static_drain`]) instead of continuously.
    pub static_batching: bool,
}

impl StepCost {
    /// The step cost of `model` on a replica of `tensor_parallel` GPUs of `gpu` under `engine`.
    pub fn new(
        model: &ModelSpec,
        gpu: &GpuSpec,
        engine: &EngineSpec,
        tensor_parallel: f64,
    ) -> Self {
        let flops_rate = tensor_parallel * gpu.peak_flops_per_second() * gpu.prefill_efficiency;
        let bytes_rate =
            tensor_parallel * gpu.bandwidth_bytes_per_second() * gpu.decode_bandwidth_efficiency;
        // Routed experts stream at the dense weights' bandwidth efficiency; what a mixture of
        // experts costs beyond its bytes is a fixed time per MoE layer per step
        // (`EngineSpec::moe_layer_seconds_per_step`), which dominates at small batches and fades
        // at large.
        let experts = model.routed_expert_bytes();
        let moe_layers_seconds = if model.is_moe() {
            model.layers as f64 * engine.moe_layer_seconds_per_step
        } else {
            0.0
        };
        StepCost {
            compute_seconds_per_sequence: 2.0 * model.matmul_params() / flops_rate,
            compute_seconds_per_context_token: 4.0 * model.attention_coefficient() / flops_rate,
            dense_weight_seconds: (model.weight_bytes() - experts) / bytes_rate,
            expert_weight_seconds: experts / bytes_rate,
            active_expert_share: model.active_expert_share(),
            memory_seconds_per_context_token: model.kv_cache_bytes_per_token_on(tensor_parallel)
                * engine.kv_passes_per_step
                / bytes_rate,
            overhead_seconds: engine.step_overhead_seconds(model.layers, tensor_parallel)
                + moe_layers_seconds,
            overhead_seconds_per_sequence: engine.sequence_seconds_per_step,
            gpu_overhead_seconds: model.layers as f64 * engine.gpu_seconds_per_layer,
            overhead_overlaps_gpu: engine.overhead_overlaps_gpu,
            static_batching: engine.static_batching,
        }
    }

    /// Seconds to read the weights a step of `running` sequences touches.
    pub fn weight_seconds(&self, running: f64) -> f64 {
        if self.expert_weight_seconds <= 0.0 {
            return self.dense_weight_seconds;
        }
        let touched = 1.0 - (1.0 - self.active_expert_share).powf(running.max(1.0));
        self.dense_weight_seconds + self.expert_weight_seconds * touched
    }

    /// Seconds of one step with `running` sequences whose contexts sum to `context_tokens`.
    pub fn seconds(&self, running: f64, context_tokens: f64) -> f64 {
        let compute = running * self.compute_seconds_per_sequence
            + context_tokens * self.compute_seconds_per_context_token;
        let memory =
            self.weight_seconds(running) + context_tokens * self.memory_seconds_per_context_token;
        let gpu = compute.max(memory) + self.gpu_overhead_seconds;
        if self.overhead_overlaps_gpu {
            gpu.max(self.overhead_seconds + running * self.overhead_seconds_per_sequence)
        } else {
            gpu + self.overhead_seconds + running * self.overhead_seconds_per_sequence
        }
    }
}

/// One replica's share of a step's generation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplicaBatch {
    /// Sequences this replica generates (at least one).
    pub sequences: f64,
    /// Context before the first generated token.
    pub prompt_tokens: f64,
    /// Their generated lengths.
    pub lengths: CappedLognormal,
    /// The engine's cap on sequences in flight (`max_num_seqs`).
    pub max_running: f64,
    /// Tokens of KV the replica's cache holds beside the weights.
    pub kv_capacity_tokens: f64,
}

/// How a replica's batch decodes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Drain {
    /// Wall seconds from the first decode step to the last.
    pub seconds: f64,
    /// Of which the steps with fewer than half the peak sequences in flight (the straggler
    /// tail, when the replica mostly waits on a few long responses).
    pub tail_seconds: f64,
    /// Decode steps.
    pub steps: f64,
    /// Sequences in flight at full occupancy (b*).
    pub concurrency: f64,
}

/// ∫ f over [a, b] by 8-point Gauss-Legendre.
fn integrate(a: f64, b: f64, f: &mut impl FnMut(f64) -> [f64; 4]) -> [f64; 4] {
    let (half, mid) = ((b - a) / 2.0, (a + b) / 2.0);
    let mut sum = [0.0; 4];
    for (x, w) in GAUSS_LEGENDRE_8 {
        let v = f(mid + half * x);
        for k in 0..4 {
            sum[k] += w * half * v[k];
        }
    }
    sum
}

/// What is decoding at drain step τ, in expectation.
#[derive(Debug, Clone, Copy)]
struct Moment {
    /// P(at least one sequence still runs).
    busy: f64,
    /// Expected sequences running.
    running: f64,
    /// Expected sum of their contexts.
    context_tokens: f64,
}

/// The shape of the drain.
#[derive(Debug, Clone, Copy)]
enum Shape {
    /// Every sequence started at step 0.
    Wave { sequences: f64 },
    /// `slots` slots at renewal equilibrium when the queue empties.
    Equilibrium { slots: f64 },
}

impl Shape {
    /// The drain at step τ: each of the `count` sequences still runs with probability s; one
    /// runs at all with probability 1 − (1 − s)^count (independent lengths).
    fn at(self, lengths: &CappedLognormal, prompt: f64, tau: f64) -> Moment {
        let (count, share, context) = match self {
            Shape::Wave { sequences } => {
                let s = lengths.survival(tau);
                (sequences, s, sequences * s * (prompt + tau))
            }
            Shape::Equilibrium { slots } => {
                let per_slot = slots / lengths.mean_tokens().max(1e-12);
                let excess = lengths.excess_tokens(tau);
                let context =
                    per_slot * ((prompt + tau) * excess + lengths.excess_second_moment(tau) / 2.0);
                (slots, (excess * per_slot / slots).min(1.0), context)
            }
        };
        Moment {
            busy: -(count * (-share).ln_1p()).exp_m1(),
            running: count * share,
            context_tokens: context,
        }
    }

    /// The step where the expected running count falls to `level`, by bisection on [0, L].
    fn step_where_running_is(self, lengths: &CappedLognormal, prompt: f64, level: f64) -> f64 {
        let (mut lo, mut hi) = (0.0, lengths.cap_tokens);
        if self.at(lengths, prompt, lo).running <= level {
            return 0.0;
        }
        for _ in 0..60 {
            let mid = (lo + hi) / 2.0;
            if self.at(lengths, prompt, mid).running > level {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        (lo + hi) / 2.0
    }
}

/// Expected seconds of a drain step: while any sequence runs, a step with the running count
/// and contexts given that one does.
fn expected_step_seconds(step: &StepCost, m: Moment) -> f64 {
    if m.busy <= 0.0 {
        return 0.0;
    }
    m.busy * step.seconds(m.running / m.busy, m.context_tokens / m.busy)
}

/// Sequences in flight at full occupancy: the engine's cap, or what the KV cache holds at the
/// steady-state mean context P + E\[ℓ²\]/(2E\[ℓ\]); at least one.
pub fn concurrency(batch: &ReplicaBatch) -> f64 {
    let l = &batch.lengths;
    let mean = l.mean_tokens().max(1e-9);
    let steady_context = batch.prompt_tokens + l.second_moment_tokens() / (2.0 * mean);
    (batch.kv_capacity_tokens / steady_context)
        .min(batch.max_running)
        .max(1.0)
}

/// Quantiles of the uncapped length where the drain's integrand bends.
const CUT_QUANTILES: [f64; 11] = [
    0.25,
    0.5,
    0.75,
    0.9,
    0.99,
    0.999,
    0.9999,
    1.0 - 1e-5,
    1.0 - 1e-6,
    1.0 - 1e-8,
    1.0 - 1e-10,
];

/// The cut points of the integrals: the uncapped distribution's quantiles and `extra`, within
/// [0, end].
fn cuts(l: &CappedLognormal, extra: &[f64], end: f64) -> Vec<f64> {
    let mut cuts: Vec<f64> = CUT_QUANTILES
        .iter()
        .map(|&q| l.quantile(q))
        .chain([0.0, end])
        .chain(extra.iter().copied())
        .filter(|&t| (0.0..=end).contains(&t))
        .collect();
    cuts.sort_by(f64::total_cmp);
    cuts.dedup();
    cuts
}

/// The first step where a wave's contexts fill `capacity` tokens of KV, if they ever do.
fn saturation_step(wave: Shape, l: &CappedLognormal, prompt: f64, capacity: f64) -> Option<f64> {
    let context = |t: f64| wave.at(l, prompt, t).context_tokens;
    let points = cuts(l, &[], l.cap_tokens);
    let grid: Vec<f64> = points
        .windows(2)
        .flat_map(|w| (0..8).map(move |k| w[0] + (w[1] - w[0]) * f64::from(k) / 8.0))
        .collect();
    let mut lo = 0.0;
    for &t in &grid {
        if context(t) >= capacity {
            let mut hi = t;
            for _ in 0..50 {
                let mid = (lo + hi) / 2.0;
                if context(mid) >= capacity {
                    hi = mid;
                } else {
                    lo = mid;
                }
            }
            return Some(hi);
        }
        lo = t;
    }
    None
}

/// ∫ over [0, end] of (expected step seconds, P(busy), running, contexts), and the part of the
/// seconds from `tail_from` on.
fn integrate_shape(
    step: &StepCost,
    shape: Shape,
    l: &CappedLognormal,
    prompt: f64,
    end: f64,
    tail_from: f64,
) -> ([f64; 4], f64) {
    let mut body = [0.0; 4];
    let mut tail = 0.0;
    for pair in cuts(l, &[tail_from], end).windows(2) {
        let (a, b) = (pair[0], pair[1]);
        if b <= a {
            continue;
        }
        let part = integrate(a, b, &mut |tau| {
            let m = shape.at(l, prompt, tau);
            [
                expected_step_seconds(step, m),
                m.busy,
                m.running,
                m.context_tokens,
            ]
        });
        if a >= tail_from {
            tail += part[0];
        }
        for k in 0..4 {
            body[k] += part[k];
        }
    }
    (body, tail)
}

/// Expected seconds and steps of one static batch of `running` sequences from step `from` on:
/// ∫ step(b, b·(P + τ)) · P(max of b lengths > τ) dτ and ∫ P(max > τ) dτ over [from, L], since
/// the batch runs step τ exactly when its longest sequence is longer than τ (independent
/// lengths: P(max > τ) = 1 − F(τ)^b). By 8-point Gauss-Legendre on the drain's segments
/// (`cuts`).
fn static_batch(
    step: &StepCost,
    l: &CappedLognormal,
    prompt: f64,
    running: f64,
    from: f64,
) -> [f64; 2] {
    let mut total = [0.0; 2];
    let points = cuts(l, &[from], l.cap_tokens);
    for w in points.windows(2).filter(|w| w[0] >= from) {
        let (half, mid) = ((w[1] - w[0]) / 2.0, (w[0] + w[1]) / 2.0);
        for (x, weight) in GAUSS_LEGENDRE_8 {
            let tau = mid + half * x;
            let busy = -(running * (-l.survival(tau)).ln_1p()).exp_m1();
            let seconds = step.seconds(running, running * (prompt + tau));
            total[0] += weight * half * busy * seconds;
            total[1] += weight * half * busy;
        }
    }
    total
}

/// How one replica's batch decodes under static batching (transformers' `generate()`): the
/// sequences go in batches of b = min(n, `max_num_seqs`, what the KV cache holds at the cap,
/// KV/(P + L)); each batch decodes until its longest sequence ends, all b kept in the batch as
/// padding, so every step runs b sequences whose contexts sum to b·(P + τ) (`static_batch`).
/// The steps after the lengths' median, when most of a batch is padding, are its straggler
/// tail. Source of the behaviour: transformers' `GenerationMixin._sample` keeps decoding every
/// row, finished ones as padding, until `unfinished_sequences` is all zero
/// (`src/transformers/generation/utils.py`).
pub fn static_drain(step: &StepCost, batch: &ReplicaBatch) -> Drain {
    let l = &batch.lengths;
    let n = batch.sequences.max(1.0);
    let prompt = batch.prompt_tokens;
    let fits = (batch.kv_capacity_tokens / (prompt + l.cap_tokens)).floor();
    let size = n.min(batch.max_running.max(1.0)).min(fits.max(1.0));
    let full = (n / size).floor();
    let rest = n - full * size;
    let median = l.quantile(0.5).min(l.cap_tokens);
    let mut out = Drain {
        concurrency: size,
        ..Drain::default()
    };
    for (count, running) in [(full, size), (1.0, rest)] {
        if count <= 0.0 || running <= 0.0 {
            continue;
        }
        let [seconds, steps] = static_batch(step, l, prompt, running, 0.0);
        out.seconds += count * seconds;
        out.tail_seconds += count * static_batch(step, l, prompt, running, median)[0];
        out.steps += count * steps;
    }
    out
}

/// How one replica's batch decodes (see the module doc).
pub fn drain(step: &StepCost, batch: &ReplicaBatch) -> Drain {
    if step.static_batching {
        return static_drain(step, batch);
    }
    let l = &batch.lengths;
    let n = batch.sequences.max(1.0);
    let prompt = batch.prompt_tokens;
    let slots = concurrency(batch);
    // The first admission: up to `max_num_seqs` start together, their contexts small. Unless
    // their contexts ever fill the cache, that wave is the whole story.
    let first = n.min(batch.max_running.max(1.0));
    let wave = Shape::Wave { sequences: first };
    let saturation = saturation_step(wave, l, prompt, batch.kv_capacity_tokens);
    if n <= first && saturation.is_none() {
        let half = wave.step_where_running_is(l, prompt, first / 2.0);
        let (body, tail) = integrate_shape(step, wave, l, prompt, l.cap_tokens, half);
        return Drain {
            seconds: body[0],
            tail_seconds: tail,
            steps: body[1],
            concurrency: first,
        };
    }
    // Otherwise: the first wave until the cache fills (if it does before the queue empties), the
    // full phase at `slots` in flight, and the drain at renewal equilibrium.
    let start = match saturation {
        Some(t) if n <= first => integrate_shape(step, wave, l, prompt, t, f64::INFINITY).0,
        _ => [0.0; 4],
    };
    // When the first wave fills the cache, the engine preempts the newest sequences and later
    // recomputes their contexts: with r(t) = KV/(P + t) running, r'(t)·(P + t) = −KV/(P + t)
    // tokens per step, KV·ln(C/(P + t_s)) in all until the contexts reach the steady mean C.
    let steady_context = batch.kv_capacity_tokens / slots;
    let recompute_tokens = match saturation {
        Some(t) if steady_context > prompt + t => {
            batch.kv_capacity_tokens * (steady_context / (prompt + t)).ln()
        }
        _ => 0.0,
    };
    let recompute_seconds = recompute_tokens * step.compute_seconds_per_sequence;
    let drain_shape = Shape::Equilibrium { slots };
    let half = drain_shape.step_where_running_is(l, prompt, slots / 2.0);
    let (body, tail) = integrate_shape(step, drain_shape, l, prompt, l.cap_tokens, half);
    let (mean, second) = (l.mean_tokens(), l.second_moment_tokens());
    // What the start and the drain leave: the rest of the tokens at `slots` per step and the
    // rest of the KV reads, n·(P·E[ℓ] + E[ℓ²]/2) in all.
    let steps = ((n * mean - start[2] - body[2]) / slots).max(0.0);
    let context_total = n * (prompt * mean + second / 2.0);
    let per_step = ((context_total - start[3] - body[3]) / steps.max(1e-12)).max(0.0);
    let full_seconds = steps * step.seconds(slots, per_step);
    Drain {
        seconds: start[0] + full_seconds + body[0] + recompute_seconds,
        tail_seconds: tail,
        steps: start[1] + steps + body[1],
        concurrency: slots,
    }
}

/// The step cost of a catalog model on one GPU of a catalog type under the default engine
/// (for the tests).
#[cfg(test)]
pub(crate) fn catalog_step(model: &str, gpu: &str) -> StepCost {
    let c = crate::catalog::Catalog::embedded();
    StepCost::new(
        c.model(model).unwrap(),
        c.gpu(gpu).unwrap(),
        c.default_engine(),
        1.0,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn batch(n: f64, mean: f64, cv: f64, cap: f64, max_running: f64) -> ReplicaBatch {
        ReplicaBatch {
            sequences: n,
            prompt_tokens: 200.0,
            lengths: CappedLognormal::new(mean, cv, cap),
            max_running,
            kv_capacity_tokens: 1e12,
        }
    }

    #[test]
    fn a_fixed_length_wave_is_steps_times_the_step() {
        // 64 sequences of exactly 1,000 tokens in one wave: 1,000 steps, each with 64 running at
        // contexts 200 + τ: Σ step(64, 64·(200 + τ)) ≈ 1000·step(64, 64·700) when the step is
        // linear in the context (memory-bound).
        let step = catalog_step("qwen2.5-7b", "h100-sxm");
        let b = ReplicaBatch {
            lengths: CappedLognormal::fixed(1000.0),
            ..batch(64.0, 1000.0, 0.6, 4096.0, 256.0)
        };
        let d = drain(&step, &b);
        let expected = 1000.0 * step.seconds(64.0, 64.0 * 700.0);
        assert!(
            (d.seconds / expected - 1.0).abs() < 1e-6,
            "{} {expected}",
            d.seconds
        );
        assert!((d.steps - 1000.0).abs() < 1e-6);
    }

    #[test]
    fn the_kv_reads_follow_the_second_moment() {
        // At cv 0.6 the mean context of the running sequences in steady state is
        // P + E[ℓ²]/(2E[ℓ]) = P + m(1 + cv²)/2: 1.36× the mean-context figure P + m/2 at P = 0.
        let l = CappedLognormal::new(4000.0, 0.6, 1e9);
        let ratio = (l.second_moment_tokens() / (2.0 * l.mean_tokens())) / 2000.0;
        assert!((ratio - 1.36).abs() < 1e-9, "{ratio}");
    }

    #[test]
    fn the_cap_mass_sets_the_wave_length() {
        // 8,192 responses, mean 2,000, cap 28k: with cv 0.6 the longest is about 13k tokens
        // (exp(μ + σ·Φ⁻¹(8192/8193)) = exp(7.447 + 0.555 × 3.67)); with a heavier spread (cv 1.5)
        // the cap is hit and the wave lasts 28k.
        let light = CappedLognormal::new(2000.0, 0.6, 28_000.0);
        let heavy = CappedLognormal::new(2000.0, 1.5, 28_000.0);
        let q = 8192.0 / 8193.0;
        assert!(light.quantile(q) < 16_000.0 && light.quantile(q) > 12_000.0);
        assert_eq!(heavy.quantile(q), 28_000.0);
    }

    #[test]
    fn more_sequences_take_longer_and_a_larger_cap_never_helps() {
        let step = catalog_step("qwen2.5-1.5b", "h100-sxm");
        let mut last = 0.0;
        for n in [1.0, 8.0, 64.0, 256.0, 512.0, 2048.0] {
            let s = drain(&step, &batch(n, 2000.0, 0.8, 8192.0, 256.0)).seconds;
            assert!(s >= last, "{n}: {s} < {last}");
            last = s;
        }
        let mut last = 0.0;
        for cap in [1024.0, 4096.0, 16_384.0, 65_536.0] {
            let s = drain(&step, &batch(512.0, 2000.0, 0.8, cap, 256.0)).seconds;
            assert!(s >= last, "{cap}: {s} < {last}");
            last = s;
        }
    }

    #[test]
    fn one_token_of_qwen3_30b_a3b_on_an_a100_takes_the_measured_9_6_ms() {
        // tenstorrent/tt-inference-server #340: 9.6 ms per output token at concurrency 1,
        // 128 in / 128 out, vLLM on one A100 (TP 1). Context ~192 tokens on average.
        let catalog = crate::catalog::Catalog::embedded();
        let engine = catalog.engine("vllm-cudagraph").unwrap();
        let step = StepCost::new(
            catalog.model("qwen3-30b-a3b").unwrap(),
            catalog.gpu("a100-80gb").unwrap(),
            engine,
            1.0,
        );
        let seconds = step.seconds(1.0, 192.0);
        assert!((seconds / 9.6e-3 - 1.0).abs() < 0.03, "{seconds}");
        // Without the per-layer term it would be 1 ms (48 × 20 µs) short.
        assert_eq!(engine.moe_layer_seconds_per_step, 20e-6);
        let bare = seconds - 48.0 * engine.moe_layer_seconds_per_step;
        assert!(bare < 8.8e-3 && bare > 8.4e-3, "{bare}");
    }

    #[test]
    fn transformers_generate_reproduces_the_optimum_table_it_was_chosen_against() {
        // huggingface/optimum tests/benchmark/README.md @ 0963862: Llama-2-13B fp16 generate()
        // on one A100-SXM4-80GB, prompt 512, 512 new tokens; per-token latency at batch 1, 2, 4,
        // 8 and 16 less the prefill amortised over 512 tokens (96.38, 169.95, 305.99, 600.47 and
        // 1,209.07 ms): 36.77, 37.02, 37.29, 46.20 and 67.58 ms. Llama-2-13B by hand (40 layers,
        // hidden 5,120, MLP 13,824, vocabulary 32,000, no GQA): 13,015,864,320 parameters,
        // 26.03 GB of weights; KV 2 × 40 × 5,120 × 2 = 819,200 bytes per token; mean context
        // 512 + 256. Batch 1-4 are CPU-bound (1.4 + 40 × 0.884 = 36.76 ms), 8 and 16 GPU-bound.
        let catalog = crate::catalog::Catalog::embedded();
        let (gpu, engine) = (
            catalog.gpu("a100-80gb").unwrap(),
            catalog.engine("transformers-generate").unwrap(),
        );
        let bytes_rate = gpu.bandwidth_bytes_per_second() * gpu.decode_bandwidth_efficiency;
        let flops_rate = gpu.peak_flops_per_second() * gpu.prefill_efficiency;
        let step = StepCost {
            compute_seconds_per_sequence: 2.0 * 12_852_024_320.0 / flops_rate,
            compute_seconds_per_context_token: 4.0 * 40.0 * 5120.0 / flops_rate,
            dense_weight_seconds: 26_031_728_640.0 / bytes_rate,
            expert_weight_seconds: 0.0,
            active_expert_share: 0.0,
            memory_seconds_per_context_token: 819_200.0 * engine.kv_passes_per_step / bytes_rate,
            overhead_seconds: engine.step_overhead_seconds(40, 1.0),
            overhead_seconds_per_sequence: engine.sequence_seconds_per_step,
            gpu_overhead_seconds: 40.0 * engine.gpu_seconds_per_layer,
            overhead_overlaps_gpu: engine.overhead_overlaps_gpu,
            static_batching: engine.static_batching,
        };
        for (b, measured) in [
            (1.0, 36.77e-3),
            (2.0, 37.02e-3),
            (4.0, 37.29e-3),
            (8.0, 46.20e-3),
            (16.0, 67.58e-3),
        ] {
            let seconds = step.seconds(b, b * 768.0);
            assert!((seconds / measured - 1.0).abs() < 0.015, "{b}: {seconds}");
        }
    }

    #[test]
    fn experts_touched_grow_with_the_batch() {
        // Qwen3-30B-A3B routes each token to 8 of 128 experts: one token reads 1/16 of them,
        // 64 tokens 1 − (15/16)^64 = 98.4%.
        let step = catalog_step("qwen3-30b-a3b", "h100-sxm");
        let share = |b: f64| {
            (step.weight_seconds(b) - step.dense_weight_seconds) / step.expert_weight_seconds
        };
        assert!((share(1.0) - 1.0 / 16.0).abs() < 1e-12);
        assert!((share(64.0) - (1.0 - (15.0f64 / 16.0).powi(64))).abs() < 1e-12);
    }
}
