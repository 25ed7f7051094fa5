//! `rlfrontier check GRID`: validate a grid and print its axes and cell count.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::error::Result;
use rlfrontier::spec;

use super::{CatalogFlag, emit};

/// Arguments of `check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Validates the grid and prints its summary.
pub fn run(args: &CheckArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let grid = spec::load(&args.grid, &catalog)?;
    if args.json {
        return emit(out, &super::json_text(&spec::describe_json(&grid)));
    }
    emit(out, &spec::describe(&grid))
}
