//! A model's shape from its Hugging Face `config.json`, as a catalog entry (`rlfrontier catalog
//! import`): the fields the ledger needs, read from the keys transformers uses
//! (`num_hidden_layers`, `hidden_size`, `num_attention_heads`, `num_key_value_heads`, `head_dim`,
//! `intermediate_size`, `vocab_size`, `tie_word_embeddings`, and for mixtures of experts
//! `num_experts`/`n_routed_experts`, `num_experts_per_tok`, `moe_intermediate_size`). Biases on
//! q/k/v and the per-head q/k norm follow the model type (Qwen2: biases; Qwen3: q/k norm), or
//! `attention_bias` when the config states it.

use std::path::Path;

use super::ModelSpec;
use crate::error::{Error, Result};

/// Reads `config.json` and builds the entry `id` (named `name`, e.g. the repository).
pub fn model_from_config(path: &Path, id: &str, name: &str) -> Result<ModelSpec> {
    let text = crate::input::read_text(path, crate::input::MAX_CONFIG_BYTES, "a config.json")?;
    let config: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| Error::in_file(path, Some(e.line()), "", e.to_string()))?;
    // Multimodal configs nest the language model's shape.
    let c = config.get("text_config").unwrap_or(&config);
    let number = |key: &str| c.get(key).and_then(|v| v.as_u64());
    let required = |key: &str| {
        number(key).ok_or_else(|| {
            Error::in_file(
                path,
                None,
                key,
                "missing or not a whole number: is this a transformers config.json of a decoder model?",
            )
        })
    };
    let model_type = c
        .get("model_type")
        .and_then(|v| v.as_str())
        .unwrap_or_default()
        .to_ascii_lowercase();
    let layers = required("num_hidden_layers")?;
    let hidden = required("hidden_size")?;
    let heads = required("num_attention_heads")?;
    let kv_heads = number("num_key_value_heads").unwrap_or(heads);
    let head_dim = number("head_dim").unwrap_or(hidden / heads.max(1));
    let vocab = required("vocab_size")?;
    let (experts, active_experts, expert_intermediate) = experts_of(&number);
    let intermediate = if experts > 0 {
        0
    } else {
        required("intermediate_size")?
    };
    let qkv_bias = c
        .get("attention_bias")
        .and_then(|v| v.as_bool())
        .unwrap_or(model_type.starts_with("qwen2"));
    let mut model = ModelSpec {
        id: id.to_ascii_lowercase(),
        name: name.to_string(),
        aliases: Vec::new(),
        layers,
        hidden,
        heads,
        kv_heads,
        head_dim,
        intermediate,
        vocab,
        tied_embeddings: c
            .get("tie_word_embeddings")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        qkv_bias,
        qk_norm: model_type.starts_with("qwen3"),
        lm_head: true,
        score_head_params: 0,
        experts,
        active_experts,
        expert_intermediate,
        published_params: 0,
        published_params_tolerance: 0,
        context_tokens: number("max_position_embeddings"),
        alias_context_tokens: Default::default(),
        source: format!("{} (imported by rlfrontier catalog import)", path.display()),
        date: String::new(),
    };
    // The count is the shape's own: compare it with the model card before trusting it.
    model.published_params = model.total_params();
    model.validate(path)?;
    Ok(model)
}

/// A config's mixture of experts: the routed experts (0 for a dense model; transformers names
/// them `num_experts`, `n_routed_experts` or `num_local_experts`), those active per token and
/// each expert's intermediate size.
fn experts_of(number: &dyn Fn(&str) -> Option<u64>) -> (u64, u64, u64) {
    let experts = number("num_experts")
        .or_else(|| number("n_routed_experts"))
        .or_else(|| number("num_local_experts"))
        .unwrap_or(0);
    if experts == 0 {
        return (0, 0, 0);
    }
    (
        experts,
        number("num_experts_per_tok").unwrap_or(1),
        number("moe_intermediate_size")
            .or_else(|| number("intermediate_size"))
            .unwrap_or(0),
    )
}

/// The entry as a catalog file's `[[model]]` table.
pub fn model_toml(model: &ModelSpec) -> String {
    let mut table = toml::Table::new();
    table.insert(
        "model".to_string(),
        toml::Value::Array(vec![
            toml::Value::try_from(model).expect("a model serialises"),
        ]),
    );
    let mut text = String::from(
        "# A catalog entry from config.json: use it with --catalog FILE. published_params is the\n# shape's own count; replace it with the model card's to check the shape.\n",
    );
    text.push_str(&toml::to_string(&table).expect("a table serialises"));
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    #[test]
    fn qwen2_5_7b_config_gives_the_catalog_shape() {
        // Qwen/Qwen2.5-7B config.json (the keys the importer reads).
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"model_type": "qwen2", "num_hidden_layers": 28, "hidden_size": 3584,
                "num_attention_heads": 28, "num_key_value_heads": 4, "intermediate_size": 18944,
                "vocab_size": 152064, "tie_word_embeddings": false}"#,
        )
        .unwrap();
        let m = model_from_config(&path, "my-7b", "me/my-7b").unwrap();
        let catalog = Catalog::embedded();
        let reference = catalog.model("qwen2.5-7b").unwrap();
        assert_eq!(m.total_params(), reference.total_params());
        assert_eq!(
            m.kv_cache_bytes_per_token(),
            reference.kv_cache_bytes_per_token()
        );
        // The written entry loads back through --catalog.
        let file = dir.path().join("mine.toml");
        std::fs::write(&file, model_toml(&m)).unwrap();
        let merged = Catalog::load(Some(&file)).unwrap();
        assert_eq!(
            merged.model("my-7b").unwrap().total_params(),
            m.total_params()
        );
    }

    #[test]
    fn a_moe_config_gives_experts_and_missing_keys_are_named() {
        // Qwen/Qwen3-30B-A3B config.json.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(
            &path,
            r#"{"model_type": "qwen3_moe", "num_hidden_layers": 48, "hidden_size": 2048,
                "num_attention_heads": 32, "num_key_value_heads": 4, "head_dim": 128,
                "num_experts": 128, "num_experts_per_tok": 8, "moe_intermediate_size": 768,
                "intermediate_size": 6144, "vocab_size": 151936, "tie_word_embeddings": false}"#,
        )
        .unwrap();
        let m = model_from_config(&path, "moe", "me/moe").unwrap();
        let reference = Catalog::embedded();
        let reference = reference.model("qwen3-30b-a3b").unwrap();
        assert_eq!(m.total_params(), reference.total_params());
        assert_eq!(m.active_params(), reference.active_params());
        std::fs::write(&path, r#"{"hidden_size": 64}"#).unwrap();
        let e = model_from_config(&path, "x", "x").unwrap_err().to_string();
        assert!(
            e.contains("num_hidden_layers") && e.contains("config.json"),
            "{e}"
        );
    }
}
