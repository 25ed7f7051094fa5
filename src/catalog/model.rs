//! Model architectures: the shape of a dense or MoE decoder, and the parameter counts and
//! per-token quantities every formula uses.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Bytes per parameter or activation element in BF16.
pub const BF16_BYTES: f64 = 2.0;

/// A transformer decoder's shape, enough to count its parameters, FLOPs and KV-cache bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSpec {
    /// Stable lowercase id used in grids and on the command line (`qwen2.5-7b`).
    pub id: String,
    /// The publisher's name (Hugging Face repository).
    pub name: String,
    /// Other ids that name a model of exactly this shape (instruct and math variants of a base
    /// model share its architecture), so `--model qwen2.5-7b-instruct` prices this entry.
    #[serde(default)]
    pub aliases: Vec<String>,
    /// Number of transformer blocks.
    pub layers: u64,
    /// Residual stream width.
    pub hidden: u64,
    /// Query heads.
    pub heads: u64,
    /// Key/value heads (grouped-query attention).
    pub kv_heads: u64,
    /// Width of one attention head.
    pub head_dim: u64,
    /// Dense MLP width (0 for mixture-of-experts models).
    pub intermediate: u64,
    /// Vocabulary size.
    pub vocab: u64,
    /// Whether the LM head shares the embedding matrix.
    pub tied_embeddings: bool,
    /// Biases on the q, k and v projections (Qwen2 and Qwen2.5).
    #[serde(default)]
    pub qkv_bias: bool,
    /// Per-head RMS norm on q and k (Qwen3).
    #[serde(default)]
    pub qk_norm: bool,
    /// Whether the model has an LM head (reward models replace it by a score head).
    #[serde(default = "default_true")]
    pub lm_head: bool,
    /// Parameters of a reward model's score head.
    #[serde(default)]
    pub score_head_params: u64,
    /// Routed experts per layer (mixture of experts); 0 for dense models.
    #[serde(default)]
    pub experts: u64,
    /// Experts each token is routed to.
    #[serde(default)]
    pub active_experts: u64,
    /// MLP width of one expert.
    #[serde(default)]
    pub expert_intermediate: u64,
    /// Total parameters as published.
    pub published_params: u64,
    /// Half a unit of the last digit the publisher prints (0 when the exact count is published).
    #[serde(default)]
    pub published_params_tolerance: u64,
    /// The context window in tokens (config.json `max_position_embeddings`); prompt plus
    /// response cap beyond it is infeasible. None: not checked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_tokens: Option<u64>,
    /// Context windows of aliases that differ from the entry's (an instruct or math variant of
    /// the same shape: `qwen2.5-math-7b` has 4,096 where `qwen2.5-7b` has 131,072).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub alias_context_tokens: std::collections::BTreeMap<String, u64>,
    /// Where the shape comes from.
    pub source: String,
    /// Release date of the model (or of the source).
    pub date: String,
}

/// The longest context window an entry may state: far above any released model's.
pub const MAX_CONTEXT_TOKENS: u64 = 100_000_000;

fn default_true() -> bool {
    true
}

impl ModelSpec {
    /// Whether the model routes tokens to experts.
    pub fn is_moe(&self) -> bool {
        self.experts > 0
    }

    /// Parameters of one block's attention projections (q, k, v, o, with biases when present).
    fn attention_params_per_layer(&self) -> u64 {
        let q = self.heads * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let weights = self.hidden * q + 2 * self.hidden * kv + q * self.hidden;
        let biases = if self.qkv_bias { q + 2 * kv } else { 0 };
        weights + biases
    }

    /// MLP parameters of one block that a token passes through (SwiGLU: gate, up and down), and
    /// all that are stored. They differ only for mixture-of-experts models.
    fn mlp_params_per_layer(&self) -> (u64, u64) {
        if self.is_moe() {
            let expert = 3 * self.hidden * self.expert_intermediate;
            let router = self.hidden * self.experts;
            (
                expert * self.active_experts + router,
                expert * self.experts + router,
            )
        } else {
            let dense = 3 * self.hidden * self.intermediate;
            (dense, dense)
        }
    }

    /// Norm parameters of one block (two RMS norms, plus q/k norms in Qwen3).
    fn norm_params_per_layer(&self) -> u64 {
        2 * self.hidden + if self.qk_norm { 2 * self.head_dim } else { 0 }
    }

    /// Embedding matrix parameters.
    pub fn embedding_params(&self) -> u64 {
        self.vocab * self.hidden
    }

    /// Parameters of the output projection a token passes through: the LM head (counted even
    /// when tied, since the matmul is done) or a reward model's score head.
    pub fn output_head_matmul_params(&self) -> u64 {
        if self.lm_head {
            self.vocab * self.hidden
        } else {
            self.score_head_params
        }
    }

    /// Total stored parameters, computed from the shape (what memory must hold).
    pub fn total_params(&self) -> u64 {
        let per_layer = self.attention_params_per_layer()
            + self.mlp_params_per_layer().1
            + self.norm_params_per_layer();
        let untied_head = if self.lm_head && !self.tied_embeddings {
            self.vocab * self.hidden
        } else {
            0
        };
        self.layers * per_layer
            + self.hidden
            + self.embedding_params()
            + untied_head
            + self.score_head_params
    }

    /// Parameters a token activates (equal to the total for dense models).
    pub fn active_params(&self) -> u64 {
        let (active, stored) = self.mlp_params_per_layer();
        self.total_params() - self.layers * (stored - active)
    }

    /// N in the design's notation: the matmul parameters one token passes through, i.e. the
    /// non-embedding linear weights of every block (active experts and router for MoE) plus the
    /// output head. Embedding lookups and norms do no matmul. Source: Kaplan et al. 2020
    /// ("Scaling Laws for Neural Language Models", C_forward ≈ 2N), with N excluding embeddings.
    pub fn matmul_params(&self) -> f64 {
        let q = self.heads * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let attention = self.hidden * q + 2 * self.hidden * kv + q * self.hidden;
        let mlp = self.mlp_params_per_layer().0;
        (self.layers * (attention + mlp) + self.output_head_matmul_params()) as f64
    }

    /// A in the design's notation: layers × heads × head_dim, the coefficient of the quadratic
    /// attention term (causal attention over s tokens costs 2·A·s² FLOPs forward).
    pub fn attention_coefficient(&self) -> f64 {
        (self.layers * self.heads * self.head_dim) as f64
    }

    /// KV-cache bytes per token in BF16: 2 (K and V) × layers × kv_heads × head_dim × 2 bytes.
    /// Source: vLLM's cache sizing (PagedAttention, Kwon et al. 2023).
    pub fn kv_cache_bytes_per_token(&self) -> f64 {
        2.0 * (self.layers * self.kv_heads * self.head_dim) as f64 * BF16_BYTES
    }

    /// KV-cache bytes per token across a replica of `tensor_parallel` GPUs: the heads are
    /// split over the GPUs, but never below one per GPU, so past `kv_heads` GPUs every GPU
    /// stores a replica of one head and the replica holds (and each decode step reads)
    /// tensor_parallel / kv_heads times the model's own figure. Source: vLLM's
    /// `QKVParallelLinear` (`vllm/model_executor/layers/linear.py`: one KV head per rank and
    /// `num_kv_head_replicas = tp_size / total_num_kv_heads` when the ranks outnumber the
    /// heads) and `ModelConfig.get_num_kv_heads` (max(1, total / tp)), which sizes the cache.
    pub fn kv_cache_bytes_per_token_on(&self, tensor_parallel: f64) -> f64 {
        self.kv_cache_bytes_per_token() * (tensor_parallel / self.kv_heads as f64).max(1.0)
    }

    /// Bytes of the weights in BF16 (all experts stored for MoE).
    pub fn weight_bytes(&self) -> f64 {
        self.total_params() as f64 * BF16_BYTES
    }

    /// Bytes of the routed experts' weights in BF16 (0 for a dense model): what a decode step
    /// reads only for the experts its tokens are routed to.
    pub fn routed_expert_bytes(&self) -> f64 {
        if !self.is_moe() {
            return 0.0;
        }
        (self.layers * self.experts * 3 * self.hidden * self.expert_intermediate) as f64
            * BF16_BYTES
    }

    /// The share of a dense model's training efficiency a mixture of experts reaches (1 for a
    /// dense model): small experts make small, memory-bound grouped matmuls and the all-to-all
    /// of expert parallelism adds time. 0.65·(expert_intermediate/1536)^1.115, at most 0.85,
    /// chosen against Megatron-Bridge 25.11's MoE benchmarks on H100 (NVIDIA-NeMo/Megatron-Bridge
    /// docs/performance-summary.md @ 00b7660b: Qwen3-235B-A22B 233-276 TFLOP/s, 24-28% of BF16
    /// peak, expert size 1,536; Qwen3-30B-A3B 121 TFLOP/s, 12%, expert size 768) against the
    /// catalog's dense 40%.
    pub fn moe_training_efficiency(&self) -> f64 {
        if !self.is_moe() {
            return 1.0;
        }
        (0.65 * (self.expert_intermediate as f64 / 1536.0).powf(1.115)).min(0.85)
    }

    /// Share of the routed experts one token activates, k/E (0 for a dense model).
    pub fn active_expert_share(&self) -> f64 {
        if self.is_moe() {
            self.active_experts as f64 / self.experts as f64
        } else {
            0.0
        }
    }

    /// Trainable parameters of LoRA adapters of rank `rank` on every linear layer of every block
    /// (veRL's `target_modules: all-linear`): r·(d_in + d_out) per adapted matrix (Hu et al. 2021,
    /// "LoRA", section 4). For MoE, the adapters of the active experts are the ones a token uses;
    /// `stored` selects all experts instead (for memory).
    pub fn lora_params(&self, rank: u64, stored: bool) -> f64 {
        let h = self.hidden;
        let q = self.heads * self.head_dim;
        let kv = self.kv_heads * self.head_dim;
        let attention = (h + q) + 2 * (h + kv) + (q + h);
        let mlp = if self.is_moe() {
            let experts = if stored {
                self.experts
            } else {
                self.active_experts
            };
            experts * 3 * (h + self.expert_intermediate)
        } else {
            3 * (h + self.intermediate)
        };
        (rank * self.layers * (attention + mlp)) as f64
    }
}

impl ModelSpec {
    /// Checks the shape is usable: positive sizes, and MoE fields that agree.
    pub fn validate(&self, origin: &Path) -> Result<()> {
        self.validate_dimensions(origin)?;
        self.validate_contexts(origin)?;
        self.validate_shape(origin)?;
        self.validate_published_count(origin)
    }

    /// Each dimension at least 1 (those every model has) and far below where products of
    /// dimensions could overflow.
    fn validate_dimensions(&self, origin: &Path) -> Result<()> {
        let model = self;
        for (field, value) in [
            ("layers", model.layers),
            ("hidden", model.hidden),
            ("heads", model.heads),
            ("kv_heads", model.kv_heads),
            ("head_dim", model.head_dim),
            ("vocab", model.vocab),
        ] {
            if value == 0 {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("model `{}`.{field}", model.id),
                    "must be at least 1",
                ));
            }
        }
        // Upper bounds far above any real model and far below where products of dimensions
        // could overflow (parameter counts are computed in u64).
        for (field, value, max) in [
            ("layers", model.layers, 10_000),
            ("hidden", model.hidden, 1_000_000),
            ("heads", model.heads, 100_000),
            ("head_dim", model.head_dim, 100_000),
            ("intermediate", model.intermediate, 10_000_000),
            ("vocab", model.vocab, 100_000_000),
            ("experts", model.experts, 100_000),
        ] {
            if value > max {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("model `{}`.{field}", model.id),
                    format!("{value} is beyond any real model (at most {max}); check config.json"),
                ));
            }
        }
        Ok(())
    }

    /// The context windows, the entry's own and its aliases', each of an alias it has.
    fn validate_contexts(&self, origin: &Path) -> Result<()> {
        let model = self;
        let contexts = model
            .context_tokens
            .iter()
            .map(|&c| ("context_tokens".to_string(), c))
            .chain(
                model
                    .alias_context_tokens
                    .iter()
                    .map(|(alias, &c)| (format!("alias_context_tokens.{alias}"), c)),
            );
        for (field, value) in contexts {
            if !(1..=MAX_CONTEXT_TOKENS).contains(&value) {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("model `{}`.{field}", model.id),
                    format!(
                        "{value} is not a context window (1 to {MAX_CONTEXT_TOKENS} tokens); check max_position_embeddings in config.json"
                    ),
                ));
            }
        }
        for alias in model.alias_context_tokens.keys() {
            if !model.aliases.iter().any(|a| a.eq_ignore_ascii_case(alias)) {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("model `{}`.alias_context_tokens.{alias}", model.id),
                    format!(
                        "`{alias}` is not one of the entry's aliases ({}); add it to aliases or remove it",
                        model.aliases.join(", ")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Grouped-query heads that divide the attention heads; a dense model's MLP, or an MoE's
    /// experts.
    fn validate_shape(&self, origin: &Path) -> Result<()> {
        let model = self;
        if model.kv_heads > model.heads || !model.heads.is_multiple_of(model.kv_heads) {
            return Err(Error::in_file(
                origin,
                None,
                &format!("model `{}`.kv_heads", model.id),
                format!(
                    "{} key-value heads must divide the {} attention heads (grouped-query attention)",
                    model.kv_heads, model.heads
                ),
            ));
        }
        if !model.is_moe() && model.intermediate == 0 {
            return Err(Error::in_file(
                origin,
                None,
                &format!("model `{}`.intermediate", model.id),
                "a dense model needs intermediate >= 1 (or set experts, active_experts and expert_intermediate)",
            ));
        }
        if model.is_moe() && (model.active_experts == 0 || model.active_experts > model.experts) {
            return Err(Error::in_file(
                origin,
                None,
                &format!("model `{}`.active_experts", model.id),
                "must be between 1 and experts",
            ));
        }
        Ok(())
    }

    /// The published parameter count against the one the shape gives.
    fn validate_published_count(&self, origin: &Path) -> Result<()> {
        let model = self;
        // The published count checks the shape: a typo in a dimension shows up here. Allowed:
        // the entry's tolerance, or 2% for counts rounded in a model card.
        if model.published_params > 0 {
            let computed = model.total_params() as f64;
            let published = model.published_params as f64;
            let allowed = (model.published_params_tolerance as f64).max(0.02 * published);
            if (computed - published).abs() > allowed {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("model `{}`.published_params", model.id),
                    format!(
                        "{} disagrees with the {} parameters the shape gives ({:+.1}%); check the dimensions against config.json, or set published_params = 0 to skip the check",
                        model.published_params,
                        model.total_params(),
                        100.0 * (computed / published - 1.0)
                    ),
                ));
            }
        }
        Ok(())
    }
}
