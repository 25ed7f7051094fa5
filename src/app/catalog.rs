//! `rlfrontier catalog [models|gpus|engines|rewards|apis]`: the catalog as aligned tables.

use std::io::Write;

use clap::{Args, ValueEnum};
use rlfrontier::catalog::listing::{
    apis_table, engines_table, gpus_table, models_table, rewards_table,
};
use rlfrontier::error::Result;

use super::{CatalogFlag, emit};

/// Which part of the catalog to list.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum CatalogPart {
    /// Model architectures.
    Models,
    /// GPU profiles and prices.
    Gpus,
    /// Rollout engine profiles (decode step floor, defaults).
    Engines,
    /// Reward mechanisms and the reward models available.
    Rewards,
    /// API-priced judges (per million tokens, dated).
    Apis,
}

/// Arguments of `catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// What to list [default: all of it].
    pub part: Option<CatalogPart>,
    /// Print JSON (every field of every entry, with its source).
    #[arg(long)]
    pub json: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Prints the requested tables.
pub fn run(args: &CatalogArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    if args.json {
        let value = match args.part {
            Some(CatalogPart::Models) => serde_json::json!({ "models": catalog.models }),
            Some(CatalogPart::Gpus) => serde_json::json!({ "gpus": catalog.gpus }),
            Some(CatalogPart::Engines) => serde_json::json!({ "engines": catalog.engines }),
            Some(CatalogPart::Apis) => serde_json::json!({ "apis": catalog.apis }),
            Some(CatalogPart::Rewards) => serde_json::json!({
                "reward_kinds": ["rule", "orm", "prm", "judge"],
                "reward_models": catalog.models.iter().filter(|m| !m.lm_head).collect::<Vec<_>>(),
            }),
            None => serde_json::json!({
                "version": catalog.version,
                "models": catalog.models,
                "gpus": catalog.gpus,
                "engines": catalog.engines,
                "services": catalog.services,
                "apis": catalog.apis,
            }),
        };
        return emit(out, &super::json_text(&value));
    }
    let text = match args.part {
        Some(CatalogPart::Models) => models_table(&catalog),
        Some(CatalogPart::Gpus) => gpus_table(&catalog),
        Some(CatalogPart::Engines) => engines_table(&catalog),
        Some(CatalogPart::Rewards) => rewards_table(&catalog),
        Some(CatalogPart::Apis) => apis_table(&catalog),
        None => format!(
            "models (catalog {}):\n{}\ngpus:\n{}\nengines:\n{}\nrewards:\n{}\napis:\n{}",
            catalog.version,
            models_table(&catalog),
            gpus_table(&catalog),
            engines_table(&catalog),
            rewards_table(&catalog),
            apis_table(&catalog)
        ),
    };
    emit(out, &text)
}

/// Arguments of `import-model`.
#[derive(Debug, Args)]
pub struct ImportModelArgs {
    /// The model's Hugging Face `config.json`.
    pub config: std::path::PathBuf,
    /// The id to give it (lowercase; what grids and --model will name).
    #[arg(long)]
    pub id: String,
    /// The publisher's name, e.g. the repository `org/name` [default: the id].
    #[arg(long)]
    pub name: Option<String>,
    /// The catalog file to write (use it with --catalog).
    #[arg(long)]
    pub out: std::path::PathBuf,
    /// Replace the catalog file if it exists (its other entries are lost: one model per file).
    #[arg(long)]
    pub force: bool,
}

/// Builds a catalog entry from config.json and writes it.
pub fn run_import(args: &ImportModelArgs, out: &mut dyn Write) -> Result<()> {
    use rlfrontier::catalog::import::{model_from_config, model_toml};
    let name = args.name.clone().unwrap_or_else(|| args.id.clone());
    if !rlfrontier::catalog::is_valid_id(&args.id) {
        return Err(rlfrontier::error::Error::in_flag(
            "--id",
            rlfrontier::catalog::invalid_id_message(&args.id),
        ));
    }
    rlfrontier::report::check_file_out("out", &args.out, &[&args.config], args.force)?;
    let model = model_from_config(&args.config, &args.id, &name)?;
    let text = model_toml(&model);
    // Read the entry back as `--catalog` will, and write nothing `--catalog` would refuse.
    rlfrontier::catalog::Catalog::load_text(Some((&args.out, &text))).map_err(|e| {
        rlfrontier::error::Error::in_file(
            &args.config,
            None,
            "",
            format!(
                "the entry made from it would not load as a catalog ({e}); check --id and --name"
            ),
        )
    })?;
    rlfrontier::report::write_atomic(&args.out, text.as_bytes())?;
    emit(
        out,
        &format!(
            "{}: {} layers, hidden {}, {} heads ({} KV), {} parameters{}; wrote {} (use it with --catalog {})\n",
            model.id,
            model.layers,
            model.hidden,
            model.heads,
            model.kv_heads,
            rlfrontier::format::thousands(model.total_params() as f64),
            if model.is_moe() {
                format!(
                    ", {} active ({} of {} experts)",
                    rlfrontier::format::thousands(model.active_params() as f64),
                    model.active_experts,
                    model.experts
                )
            } else {
                String::new()
            },
            args.out.display(),
            args.out.display()
        ),
    )
}
