//! The catalog as aligned tables (`rlfrontier catalog [models|gpus|rewards]`).

use super::Catalog;
use crate::format::{Table, money};

fn billions(params: u64) -> String {
    format!("{:.2}", params as f64 / 1e9)
}

/// The models table.
pub fn models_table(catalog: &Catalog) -> String {
    let mut t = Table::new([
        "id",
        "params (B)",
        "active (B)",
        "layers",
        "hidden",
        "heads/kv",
        "vocab",
        "context",
        "kind",
        "date",
        "source",
    ]);
    for m in &catalog.models {
        let kind = if !m.lm_head {
            "reward model"
        } else if m.is_moe() {
            "MoE policy"
        } else {
            "policy"
        };
        t.row([
            m.id.clone(),
            billions(m.total_params()),
            billions(m.active_params()),
            m.layers.to_string(),
            m.hidden.to_string(),
            format!("{}/{}", m.heads, m.kv_heads),
            m.vocab.to_string(),
            context(m),
            kind.to_string(),
            m.date.clone(),
            m.name.clone(),
        ]);
    }
    t.render()
}

/// The context window, with the aliases whose window differs (`131072 (qwen2.5-math-7b 4096)`);
/// `-` when the entry states none.
fn context(m: &crate::catalog::ModelSpec) -> String {
    let Some(own) = m.context_tokens else {
        return "-".to_string();
    };
    if m.alias_context_tokens.is_empty() {
        return own.to_string();
    }
    let aliases: Vec<String> = m
        .alias_context_tokens
        .iter()
        .map(|(alias, c)| format!("{alias} {c}"))
        .collect();
    format!("{own} ({})", aliases.join(", "))
}

/// The GPUs table.
pub fn gpus_table(catalog: &Catalog) -> String {
    let mut t = Table::new([
        "id",
        "BF16 TFLOP/s",
        "memory GiB",
        "TB/s",
        "USD/GPU-h",
        "train MFU",
        "decode BW eff",
        "price date",
        "price source",
    ]);
    for g in &catalog.gpus {
        t.row([
            g.id.clone(),
            format!("{}", g.bf16_dense_tflops),
            format!("{}", g.memory_gib),
            format!("{}", g.bandwidth_tbps),
            money(g.usd_per_gpu_hour),
            format!("{}", g.train_mfu),
            format!("{}", g.decode_bandwidth_efficiency),
            g.price_date.clone(),
            g.price_provider.clone(),
        ]);
    }
    t.render()
}

/// The rollout engines table: each profile's step floor and defaults.
pub fn engines_table(catalog: &Catalog) -> String {
    let mut t = Table::new([
        "id",
        "CUDA graphs",
        "floor ms/step",
        "launch ms/layer",
        "all-reduce ms/layer",
        "GPU ms/layer",
        "ms/sequence",
        "batching",
        "KV passes",
        "max_num_seqs",
        "memory share",
        "date",
        "name",
    ]);
    for e in &catalog.engines {
        t.row([
            e.id.clone(),
            if e.cuda_graphs { "yes" } else { "no" }.to_string(),
            crate::format::number(1e3 * e.step_floor_seconds),
            crate::format::number(1e3 * e.launch_seconds_per_layer),
            crate::format::number(1e3 * e.allreduce_seconds_per_layer),
            crate::format::number(1e3 * e.gpu_seconds_per_layer),
            crate::format::number(1e3 * e.sequence_seconds_per_step),
            match (e.static_batching, e.overhead_overlaps_gpu) {
                (true, true) => "static, CPU overlaps GPU",
                (true, false) => "static",
                (false, true) => "continuous, CPU overlaps GPU",
                (false, false) => "continuous",
            }
            .to_string(),
            crate::format::number(e.kv_passes_per_step),
            e.max_num_seqs.to_string(),
            crate::format::number(e.gpu_memory_utilization),
            e.date.clone(),
            e.name.clone(),
        ]);
    }
    t.render()
}

/// The reward mechanisms and the reward models available.
pub fn rewards_table(catalog: &Catalog) -> String {
    let mut t = Table::new(["reward", "cost per rollout", "example"]);
    t.row([
        "rule",
        "no GPU FLOPs (verifier or exact match on CPU)",
        "rule",
    ]);
    t.row([
        "orm:MODEL",
        "one forward pass of MODEL over prompt + response",
        "orm:qwen2.5-math-rm-72b",
    ]);
    t.row([
        "prm:MODEL",
        "one forward pass of MODEL, scoring every step",
        "prm:qwen2.5-math-prm-7b",
    ]);
    t.row([
        "judge:MODEL",
        "prefill of prompt + response + rubric, then a short verdict",
        "judge:qwen2.5-7b",
    ]);
    let mut text = t.render();
    let reward_models: Vec<&str> = catalog
        .models
        .iter()
        .filter(|m| !m.lm_head)
        .map(|m| m.id.as_str())
        .collect();
    text.push_str(&format!(
        "\nreward models in the catalog: {}\n",
        reward_models.join(", ")
    ));
    text.push_str("any policy model with an LM head can also serve as judge:MODEL\n");
    text
}

/// The API price list as a table.
pub fn apis_table(catalog: &Catalog) -> String {
    let mut t = Table::new([
        "id",
        "provider",
        "$/M input",
        "$/M output",
        "date",
        "source",
    ]);
    for a in &catalog.apis {
        t.row([
            a.id.clone(),
            a.provider.clone(),
            crate::format::number(a.usd_per_million_input_tokens),
            crate::format::number(a.usd_per_million_output_tokens),
            a.date.clone(),
            a.source.clone(),
        ]);
    }
    t.render()
}
