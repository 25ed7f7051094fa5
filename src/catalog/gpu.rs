//! GPU profiles: peak numbers, price, NVLink domain and roofline efficiencies.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// The default of [`GpuSpec::offload_gb_per_second`]: 5 GB/s, veRL's pageable copies.
fn pageable_offload_gb_per_second() -> f64 {
    5.0
}

/// Bytes in a binary gigabyte (GiB).
pub const BYTES_PER_GIB: f64 = 1_073_741_824.0;

/// A GPU's peak numbers, default price and roofline efficiencies.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GpuSpec {
    /// Stable lowercase id (`h100-sxm`).
    pub id: String,
    /// Marketing name.
    pub name: String,
    /// Dense BF16 tensor throughput, TFLOP/s.
    pub bf16_dense_tflops: f64,
    /// Memory capacity, GiB (2^30 bytes): the capacity vendors sell as "GB", which counts DRAM
    /// in binary units (an "80 GB" H100 carries 80 GiB of HBM3, of which the device reports
    /// 81,559 MiB, about 79.6 GiB, after reserved memory). A user catalog's older key
    /// `memory_gb` is read as this one (`catalog::RENAMED_KEYS`).
    pub memory_gib: f64,
    /// HBM bandwidth, TB/s (1e12 bytes per second).
    pub bandwidth_tbps: f64,
    /// Host↔device bytes per second per GPU of offload copies, GB/s (1e9 bytes per second):
    /// veRL's parameter and optimizer offload with every GPU of a node copying at once from
    /// pageable host memory (`tensor.to(device, non_blocking=True)` without pinning, which the
    /// driver stages through a pinned buffer). 5 GB/s on every GPU of the catalog, chosen
    /// against per-step phase timings, not derived: the veRL playground pair of
    /// `validation/phase_timings.csv` (`playverl_qwen2_7b_ppo_min_mean`, actor and critic with
    /// parameter and optimizer offload, against `playverl_qwen2_7b_ppo_recommended_mean`
    /// without) measures its offloaded passes 0.7-5.2 s slower than priced without offload;
    /// divided by the bytes each pass moves, 10.5 GB/s (old log-probs), 5.1 (critic values), 4.6
    /// (actor update) and 4.4 (critic update), median 4.8. That row is in-sample for this number.
    /// A PCIe Gen5 x16 link moves about 50 GB/s pinned, NVLink-C2C (GB200) far more: no timing
    /// of those hosts has been checked, so their entries keep 5 and price offload high. Default
    /// (a user's GPU that does not give it): 5.
    #[serde(default = "pageable_offload_gb_per_second")]
    pub offload_gb_per_second: f64,
    /// Default on-demand price, US$ per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// Where the price comes from.
    pub price_provider: String,
    /// When the price was read.
    pub price_date: String,
    /// Model-FLOPs utilisation of a training pass, before recomputation.
    pub train_mfu: f64,
    /// Fraction of peak reached by prefill.
    pub prefill_efficiency: f64,
    /// Fraction of peak reached by training-side forward passes.
    pub forward_efficiency: f64,
    /// Fraction of peak bandwidth reached by decode.
    pub decode_bandwidth_efficiency: f64,
    /// Fraction of peak the attention kernel's forward reaches at long sequences in training
    /// passes (FlashAttention-2, as veRL's FSDP workers run it). Default 0.35: FA2's forward on
    /// H100 at 8k-16k tokens, head dim 128, about 330-350 TFLOP/s of 989 (the FA2 baseline of
    /// Shah et al. 2024, "FlashAttention-3", Figs. 5-6).
    #[serde(default = "default_attention_forward_efficiency")]
    pub attention_forward_efficiency: f64,
    /// The same for the attention backward. Default 0.28: FA2's backward on H100, about
    /// 250-300 TFLOP/s (same source).
    #[serde(default = "default_attention_backward_efficiency")]
    pub attention_backward_efficiency: f64,
    /// GPUs that share one NVLink domain: the largest tensor-parallel degree the rollout engine
    /// uses (8 in an HGX/DGX server; 72 in a GB200 NVL72 rack). Default 8.
    #[serde(default = "default_nvlink_domain_gpus")]
    pub nvlink_domain_gpus: u64,
    /// Line rate of one GPU's links to the other GPUs of its NVLink domain, one direction, in
    /// GB/s: what sequence parallelism's all-to-alls move activations over. Default 450 (an
    /// HGX H100's NVLink 4, 900 GB/s both ways).
    #[serde(default = "default_nvlink_gbps")]
    pub nvlink_gbps: f64,
    /// Spec-sheet source.
    pub source: String,
}

/// An HGX/DGX server's eight GPUs on one NVLink switch.
fn default_nvlink_domain_gpus() -> u64 {
    8
}

/// An HGX H100's NVLink 4: 18 links of 25 GB/s each way.
fn default_nvlink_gbps() -> f64 {
    450.0
}

fn default_attention_forward_efficiency() -> f64 {
    0.35
}

fn default_attention_backward_efficiency() -> f64 {
    0.28
}

/// Tokens at which the attention kernel reaches half its long-sequence efficiency: FA3's
/// forward on H100 runs 467 TFLOP/s at 512 tokens and 648 at 16k (Shah et al. 2024, Fig. 5, head
/// dim 128; 467/648 = 0.72 = 512/(512 + 200)).
pub const ATTENTION_HALF_EFFICIENCY_TOKENS: f64 = 200.0;

impl GpuSpec {
    /// Peak dense BF16 FLOP/s.
    pub fn peak_flops_per_second(&self) -> f64 {
        self.bf16_dense_tflops * 1e12
    }

    /// NVLink line rate, one direction, in bytes per second.
    pub fn nvlink_bytes_per_second(&self) -> f64 {
        self.nvlink_gbps * 1e9
    }

    /// Memory in bytes ([`GpuSpec::memory_gib`] × 2^30).
    pub fn memory_bytes(&self) -> f64 {
        self.memory_gib * BYTES_PER_GIB
    }

    /// Offload copy bytes per second per GPU ([`GpuSpec::offload_gb_per_second`] × 1e9).
    pub fn offload_bytes_per_second(&self) -> f64 {
        self.offload_gb_per_second * 1e9
    }

    /// Bandwidth in bytes per second.
    pub fn bandwidth_bytes_per_second(&self) -> f64 {
        self.bandwidth_tbps * 1e12
    }

    /// The attention kernel's efficiency (forward, backward) over sequences whose token-weighted
    /// mean length is `tokens`: the long-sequence figures × s/(s + 200).
    pub fn attention_efficiency(&self, tokens: f64) -> (f64, f64) {
        let ramp = tokens / (tokens + ATTENTION_HALF_EFFICIENCY_TOKENS);
        (
            self.attention_forward_efficiency * ramp,
            self.attention_backward_efficiency * ramp,
        )
    }

    /// Checks every number lies in its physical range ([`crate::bounds`]): peaks, memory,
    /// price and links of a real GPU, efficiencies fractions of peak of at least 0.1%.
    pub fn validate(&self, origin: &Path) -> Result<()> {
        use crate::bounds::{
            BANDWIDTH_TBPS, BF16_TFLOPS, EFFICIENCY, GPUS, MEMORY_GIB, NVLINK_GBPS,
            OFFLOAD_GB_PER_SECOND, USD_PER_GPU_HOUR,
        };
        let checks = [
            ("bf16_dense_tflops", self.bf16_dense_tflops, BF16_TFLOPS),
            ("memory_gib", self.memory_gib, MEMORY_GIB),
            ("bandwidth_tbps", self.bandwidth_tbps, BANDWIDTH_TBPS),
            (
                "offload_gb_per_second",
                self.offload_gb_per_second,
                OFFLOAD_GB_PER_SECOND,
            ),
            ("usd_per_gpu_hour", self.usd_per_gpu_hour, USD_PER_GPU_HOUR),
            ("nvlink_domain_gpus", self.nvlink_domain_gpus as f64, GPUS),
            ("nvlink_gbps", self.nvlink_gbps, NVLINK_GBPS),
            ("train_mfu", self.train_mfu, EFFICIENCY),
            ("prefill_efficiency", self.prefill_efficiency, EFFICIENCY),
            ("forward_efficiency", self.forward_efficiency, EFFICIENCY),
            (
                "decode_bandwidth_efficiency",
                self.decode_bandwidth_efficiency,
                EFFICIENCY,
            ),
            (
                "attention_forward_efficiency",
                self.attention_forward_efficiency,
                EFFICIENCY,
            ),
            (
                "attention_backward_efficiency",
                self.attention_backward_efficiency,
                EFFICIENCY,
            ),
        ];
        for (field, value, bound) in checks {
            bound.check(value).map_err(|m| {
                Error::in_file(origin, None, &format!("gpu `{}`.{field}", self.id), m)
            })?;
        }
        Ok(())
    }
}
