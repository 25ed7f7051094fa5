//! The catalog: model architectures and GPU profiles, embedded from TOML data files.
//!
//! The embedded files (`models.toml`, `gpus.toml` beside this module) carry a source and a date
//! for every entry. A user's file (`--catalog FILE`) is merged over them: an entry with a known id
//! overrides only the fields it sets (so a calibrated GPU profile can change two efficiencies and
//! keep the rest), an entry with a new id is added.

pub mod listing;

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, suggestion};
use crate::toml_text::toml_error;

/// The embedded model catalog (TOML).
pub const MODELS_TOML: &str = include_str!("models.toml");
/// The embedded GPU catalog (TOML).
pub const GPUS_TOML: &str = include_str!("gpus.toml");
/// The embedded services catalog (TOML).
pub const SERVICES_TOML: &str = include_str!("services.toml");

/// Post-training sold as a service (buy versus build).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Stable id.
    pub id: String,
    /// Who sells it.
    pub provider: String,
    /// The model it trains (a catalog id when the weights are open).
    pub model: String,
    /// `per_million_tokens` or `per_training_hour`.
    pub billing: String,
    /// US$ per million forward-only tokens.
    #[serde(default)]
    pub prefill_usd_per_million: f64,
    /// US$ per million generated tokens.
    #[serde(default)]
    pub sample_usd_per_million: f64,
    /// US$ per million tokens through a training pass.
    #[serde(default)]
    pub train_usd_per_million: f64,
    /// US$ per hour of the training loop's wall-clock.
    #[serde(default)]
    pub usd_per_training_hour: f64,
    /// When the price was read.
    pub date: String,
    /// Where it comes from.
    pub source: String,
}

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
    /// Where the shape comes from.
    pub source: String,
    /// Release date of the model (or of the source).
    pub date: String,
}

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

    /// Bytes of the weights in BF16 (all experts stored for MoE).
    pub fn weight_bytes(&self) -> f64 {
        self.total_params() as f64 * BF16_BYTES
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
    /// HBM capacity, GB (1e9 bytes).
    pub memory_gb: f64,
    /// HBM bandwidth, TB/s (1e12 bytes per second).
    pub bandwidth_tbps: f64,
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
    /// Fixed seconds per decode step (scheduling, sampling, launches).
    pub decode_step_overhead_seconds: f64,
    /// GPUs that share one NVLink domain: the largest tensor-parallel degree the rollout engine
    /// uses (8 in an HGX/DGX server; 72 in a GB200 NVL72 rack). Default 8.
    #[serde(default = "default_nvlink_domain_gpus")]
    pub nvlink_domain_gpus: u64,
    /// Spec-sheet source.
    pub source: String,
}

/// An HGX/DGX server's eight GPUs on one NVLink switch.
fn default_nvlink_domain_gpus() -> u64 {
    8
}

impl GpuSpec {
    /// Peak dense BF16 FLOP/s.
    pub fn peak_flops_per_second(&self) -> f64 {
        self.bf16_dense_tflops * 1e12
    }

    /// Memory in bytes.
    pub fn memory_bytes(&self) -> f64 {
        self.memory_gb * 1e9
    }

    /// Bandwidth in bytes per second.
    pub fn bandwidth_bytes_per_second(&self) -> f64 {
        self.bandwidth_tbps * 1e12
    }

    fn validate(&self, origin: &Path) -> Result<()> {
        let checks: [(&str, f64, bool); 10] = [
            ("bf16_dense_tflops", self.bf16_dense_tflops, false),
            ("memory_gb", self.memory_gb, false),
            ("bandwidth_tbps", self.bandwidth_tbps, false),
            ("usd_per_gpu_hour", self.usd_per_gpu_hour, true),
            ("train_mfu", self.train_mfu, false),
            ("prefill_efficiency", self.prefill_efficiency, false),
            ("forward_efficiency", self.forward_efficiency, false),
            (
                "decode_bandwidth_efficiency",
                self.decode_bandwidth_efficiency,
                false,
            ),
            (
                "decode_step_overhead_seconds",
                self.decode_step_overhead_seconds,
                true,
            ),
            ("nvlink_domain_gpus", self.nvlink_domain_gpus as f64, false),
        ];
        for (field, value, zero_ok) in checks {
            if !value.is_finite() || value < 0.0 || (!zero_ok && value == 0.0) {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("gpu `{}`.{field}", self.id),
                    format!(
                        "{value} is not valid; use a finite number {}",
                        if zero_ok { ">= 0" } else { "> 0" }
                    ),
                ));
            }
        }
        for (field, value) in [
            ("train_mfu", self.train_mfu),
            ("prefill_efficiency", self.prefill_efficiency),
            ("forward_efficiency", self.forward_efficiency),
            (
                "decode_bandwidth_efficiency",
                self.decode_bandwidth_efficiency,
            ),
        ] {
            if value > 1.0 {
                return Err(Error::in_file(
                    origin,
                    None,
                    &format!("gpu `{}`.{field}", self.id),
                    format!("{value} is above 1; efficiencies are fractions of peak in (0, 1]"),
                ));
            }
        }
        Ok(())
    }
}

/// Models and GPUs known to a run: the embedded catalog, possibly merged with a user's file.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Models, in file order.
    pub models: Vec<ModelSpec>,
    /// GPUs, in file order.
    pub gpus: Vec<GpuSpec>,
    /// Services, in file order.
    pub services: Vec<ServiceSpec>,
    /// Version string: the embedded catalog's, plus `+FILE` when a user file was merged.
    pub version: String,
}

impl Catalog {
    /// The catalog compiled into the binary.
    pub fn embedded() -> Self {
        Self::load(None).expect("the embedded catalog is valid (checked by unit tests)")
    }

    /// The embedded catalog, merged with `user_file` when one is given.
    pub fn load(user_file: Option<&Path>) -> Result<Self> {
        match user_file {
            None => Self::load_text(None),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        Error::in_file(path, None, "", "file not found")
                    } else if e.kind() == std::io::ErrorKind::InvalidData {
                        Error::in_file(path, None, "", "not valid UTF-8 text")
                    } else {
                        Error::io(path, e)
                    }
                })?;
                Self::load_text(Some((path, &text)))
            }
        }
    }

    /// The embedded catalog merged with a user catalog's text (`path` names it in messages).
    pub fn load_text(user: Option<(&Path, &str)>) -> Result<Self> {
        let embedded_models = Path::new("<embedded models.toml>");
        let embedded_gpus = Path::new("<embedded gpus.toml>");
        let mut model_tables = entries(MODELS_TOML, "model", embedded_models)?;
        let mut gpu_tables = entries(GPUS_TOML, "gpu", embedded_gpus)?;
        let mut service_tables = entries(
            SERVICES_TOML,
            "service",
            Path::new("<embedded services.toml>"),
        )?;
        let version = version_of(MODELS_TOML);
        let mut full_version = version.clone();
        if let Some((path, text)) = user {
            let table: toml::Table =
                toml::from_str(text).map_err(|e| toml_error(path, text, &e))?;
            for key in table.keys() {
                if !["model", "gpu", "service", "version"].contains(&key.as_str()) {
                    return Err(Error::in_file(
                        path,
                        crate::toml_text::locate_key(text, None, key),
                        key,
                        format!(
                            "unknown catalog section; {}",
                            suggestion(key, ["model", "gpu", "service", "version"])
                        ),
                    ));
                }
            }
            merge_entries(&mut model_tables, entries(text, "model", path)?, path)?;
            merge_entries(&mut gpu_tables, entries(text, "gpu", path)?, path)?;
            merge_entries(&mut service_tables, entries(text, "service", path)?, path)?;
            full_version = format!("{version}+{}", path.display());
        }
        let mut models = Vec::new();
        for (origin, table) in model_tables {
            let model: ModelSpec =
                toml::Value::Table(table)
                    .try_into()
                    .map_err(|e: toml::de::Error| {
                        Error::in_file(&origin, None, "model", e.message().to_string())
                    })?;
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
                        &origin,
                        None,
                        &format!("model `{}`.{field}", model.id),
                        "must be at least 1",
                    ));
                }
            }
            if !model.is_moe() && model.intermediate == 0 {
                return Err(Error::in_file(
                    &origin,
                    None,
                    &format!("model `{}`.intermediate", model.id),
                    "a dense model needs intermediate >= 1 (or set experts, active_experts and expert_intermediate)",
                ));
            }
            if model.is_moe() && (model.active_experts == 0 || model.active_experts > model.experts)
            {
                return Err(Error::in_file(
                    &origin,
                    None,
                    &format!("model `{}`.active_experts", model.id),
                    "must be between 1 and experts",
                ));
            }
            models.push(model);
        }
        let mut gpus = Vec::new();
        for (origin, table) in gpu_tables {
            let gpu: GpuSpec =
                toml::Value::Table(table)
                    .try_into()
                    .map_err(|e: toml::de::Error| {
                        Error::in_file(&origin, None, "gpu", e.message().to_string())
                    })?;
            gpu.validate(&origin)?;
            gpus.push(gpu);
        }
        let mut services = Vec::new();
        for (origin, table) in service_tables {
            let service: ServiceSpec =
                toml::Value::Table(table)
                    .try_into()
                    .map_err(|e: toml::de::Error| {
                        Error::in_file(&origin, None, "service", e.message().to_string())
                    })?;
            let prices = [
                service.prefill_usd_per_million,
                service.sample_usd_per_million,
                service.train_usd_per_million,
                service.usd_per_training_hour,
            ];
            if prices.iter().any(|p| !p.is_finite() || *p < 0.0)
                || !["per_million_tokens", "per_training_hour"].contains(&service.billing.as_str())
            {
                return Err(Error::in_file(
                    &origin,
                    None,
                    &format!("service `{}`", service.id),
                    "prices must be finite and non-negative, billing `per_million_tokens` or `per_training_hour`",
                ));
            }
            services.push(service);
        }
        Ok(Catalog {
            models,
            gpus,
            services,
            version: full_version,
        })
    }

    /// The model with this id, or an error suggesting the nearest id.
    pub fn model(&self, id: &str) -> std::result::Result<&ModelSpec, String> {
        self.models.iter().find(|m| m.id == id).ok_or_else(|| {
            format!(
                "unknown model `{id}`; {} (see `rlfrontier catalog models`)",
                suggestion(id, self.models.iter().map(|m| m.id.as_str()))
            )
        })
    }

    /// The GPU with this id, or an error suggesting the nearest id.
    pub fn gpu(&self, id: &str) -> std::result::Result<&GpuSpec, String> {
        self.gpus.iter().find(|g| g.id == id).ok_or_else(|| {
            format!(
                "unknown GPU `{id}`; {} (see `rlfrontier catalog gpus`)",
                suggestion(id, self.gpus.iter().map(|g| g.id.as_str()))
            )
        })
    }
}

fn version_of(text: &str) -> String {
    toml::from_str::<toml::Table>(text)
        .ok()
        .and_then(|t| {
            t.get("version")
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .unwrap_or_else(|| "unknown".to_string())
}

type Entries = Vec<(std::path::PathBuf, toml::Table)>;

fn entries(text: &str, key: &str, origin: &Path) -> Result<Entries> {
    let table: toml::Table = toml::from_str(text).map_err(|e| toml_error(origin, text, &e))?;
    let Some(value) = table.get(key) else {
        return Ok(Vec::new());
    };
    let Some(array) = value.as_array() else {
        return Err(Error::in_file(
            origin,
            None,
            key,
            format!("must be an array of tables: write [[{key}]]"),
        ));
    };
    let mut out = Vec::new();
    for item in array {
        let Some(entry) = item.as_table() else {
            return Err(Error::in_file(
                origin,
                None,
                key,
                format!("must be an array of tables: write [[{key}]]"),
            ));
        };
        if !entry.get("id").is_some_and(|v| v.is_str()) {
            return Err(Error::in_file(
                origin,
                None,
                &format!("{key}.id"),
                "every entry needs a string `id`",
            ));
        }
        out.push((origin.to_path_buf(), entry.clone()));
    }
    Ok(out)
}

fn merge_entries(base: &mut Entries, user: Entries, path: &Path) -> Result<()> {
    for (origin, table) in user {
        let id = table["id"].as_str().unwrap_or_default().to_string();
        if id != id.to_ascii_lowercase() || id.contains(char::is_whitespace) {
            return Err(Error::in_file(
                path,
                None,
                "id",
                format!("`{id}` must be lowercase without spaces"),
            ));
        }
        match base
            .iter_mut()
            .find(|(_, t)| t["id"].as_str() == Some(id.as_str()))
        {
            Some((existing_origin, existing)) => {
                for (k, v) in table {
                    existing.insert(k, v);
                }
                *existing_origin = origin;
            }
            None => base.push((origin, table)),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_model_total_matches_its_published_count() {
        // Source: each entry's `source` (Hugging Face config.json and model card).
        let catalog = Catalog::embedded();
        assert!(catalog.models.len() >= 20);
        for m in &catalog.models {
            let computed = m.total_params() as i64;
            let published = m.published_params as i64;
            assert!(
                (computed - published).abs() <= m.published_params_tolerance as i64,
                "{}: computed {computed}, published {published} ± {}",
                m.id,
                m.published_params_tolerance
            );
        }
    }

    #[test]
    fn qwen3_moe_active_parameters_match_model_card() {
        // Qwen3-30B-A3B model card: 3.3B activated parameters (printed to two digits; the shape
        // gives 3.353B including both embedding matrices).
        let m = Catalog::embedded().model("qwen3-30b-a3b").unwrap().clone();
        let active = m.active_params() as f64 / 1e9;
        assert!((active - 3.3).abs() < 0.06, "{active}");
        assert!(m.matmul_params() < m.active_params() as f64);
    }

    #[test]
    fn reward_models_are_backbones_without_lm_head() {
        let c = Catalog::embedded();
        let base = c.model("qwen2.5-7b").unwrap();
        let prm = c.model("qwen2.5-math-prm-7b").unwrap();
        assert_eq!(
            prm.total_params(),
            base.total_params() - base.vocab * base.hidden + prm.score_head_params
        );
        // Score head Linear(3584, 3584) + Linear(3584, 2), both with bias.
        assert_eq!(prm.score_head_params, 3584 * 3584 + 3584 + 3584 * 2 + 2);
    }

    #[test]
    fn kv_bytes_per_token_hand_value() {
        // Qwen2.5-7B: 2 × 28 layers × 4 kv heads × 128 × 2 bytes = 57,344 bytes per token.
        let m = Catalog::embedded().model("qwen2.5-7b").unwrap().clone();
        assert_eq!(m.kv_cache_bytes_per_token(), 57_344.0);
    }

    #[test]
    fn required_ids_exist() {
        let c = Catalog::embedded();
        for id in [
            "qwen2.5-7b",
            "qwen3-4b",
            "qwen3-30b-a3b",
            "llama-3.1-8b",
            "deepseek-r1-distill-qwen-1.5b",
            "qwen2.5-math-prm-7b",
            "qwen2.5-math-rm-72b",
        ] {
            assert!(c.model(id).is_ok(), "{id}");
        }
        for id in [
            "a100-80gb",
            "a800",
            "h100-sxm",
            "h800",
            "h20",
            "h200",
            "b200",
            "gb200",
            "l40s",
            "mi300x",
        ] {
            assert!(c.gpu(id).is_ok(), "{id}");
        }
        assert!(
            c.gpu("h100")
                .unwrap_err()
                .contains("did you mean `h100-sxm`")
        );
    }

    #[test]
    fn user_file_overrides_fields_and_adds_entries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mine.toml");
        std::fs::write(
            &path,
            "[[gpu]]\nid = \"h100-sxm\"\ndecode_bandwidth_efficiency = 0.55\n\n[[model]]\nid = \"tiny\"\nname = \"t\"\nlayers = 2\nhidden = 64\nheads = 4\nkv_heads = 4\nhead_dim = 16\nintermediate = 128\nvocab = 1000\ntied_embeddings = true\npublished_params = 0\nsource = \"test\"\ndate = \"2026\"\n",
        )
        .unwrap();
        let c = Catalog::load(Some(&path)).unwrap();
        let h100 = c.gpu("h100-sxm").unwrap();
        assert_eq!(h100.decode_bandwidth_efficiency, 0.55);
        assert_eq!(h100.bf16_dense_tflops, 989.0);
        assert!(c.model("tiny").is_ok());
        assert!(c.version.contains("mine.toml"));
    }

    #[test]
    fn user_file_with_bad_efficiency_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, "[[gpu]]\nid = \"h100-sxm\"\ntrain_mfu = 1.5\n").unwrap();
        let err = Catalog::load(Some(&path)).unwrap_err().to_string();
        assert!(
            err.contains("train_mfu") && err.contains("bad.toml"),
            "{err}"
        );
    }
}
