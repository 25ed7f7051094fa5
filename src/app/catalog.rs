//! `rlfrontier catalog [models|gpus|engines|rewards]`: the catalog as aligned tables.

use std::io::Write;

use clap::{Args, ValueEnum};
use rlfrontier::catalog::listing::{engines_table, gpus_table, models_table, rewards_table};
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
}

/// Arguments of `catalog`.
#[derive(Debug, Args)]
pub struct CatalogArgs {
    /// What to list [default: all four].
    pub part: Option<CatalogPart>,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Prints the requested tables.
pub fn run(args: &CatalogArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let text = match args.part {
        Some(CatalogPart::Models) => models_table(&catalog),
        Some(CatalogPart::Gpus) => gpus_table(&catalog),
        Some(CatalogPart::Engines) => engines_table(&catalog),
        Some(CatalogPart::Rewards) => rewards_table(&catalog),
        None => format!(
            "models (catalog {}):\n{}\ngpus:\n{}\nengines:\n{}\nrewards:\n{}",
            catalog.version,
            models_table(&catalog),
            gpus_table(&catalog),
            engines_table(&catalog),
            rewards_table(&catalog)
        ),
    };
    emit(out, &text)
}
