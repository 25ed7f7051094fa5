//! `rlfrontier compare [PROJECT.toml]`: one post-training project priced as SFT, RM + PPO, DPO
//! and GRPO side by side.

use std::io::Write;
use std::path::{Path, PathBuf};

use clap::Args;
use rlfrontier::costing::compare::{SEED_PROJECT, SEED_PROJECT_PATH, price};
use rlfrontier::error::Result;

use super::{CatalogFlag, emit, json_text};

/// Arguments of `compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// A project file [default: the bundled seed back-of-envelope].
    pub project: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Prices the project and prints the comparison.
pub fn run(args: &CompareArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let (text, path) = match &args.project {
        Some(p) => (
            rlfrontier::input::read_text(
                p,
                rlfrontier::input::MAX_TABLE_BYTES,
                "a comparison table",
            )?,
            p.clone(),
        ),
        None => (
            SEED_PROJECT.to_string(),
            Path::new(SEED_PROJECT_PATH).to_path_buf(),
        ),
    };
    let project = price(&text, &path, &catalog)?;
    if args.json {
        emit(out, &json_text(&project.to_json()))
    } else {
        emit(out, &project.to_text())
    }
}
