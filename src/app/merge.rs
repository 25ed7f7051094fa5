//! `rlfrontier merge DIR... --out DIR`: shard outputs combined into what an unsharded sweep
//! writes.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::error::Result;
use rlfrontier::format::thousands;

use super::{CatalogFlag, emit};

/// Arguments of `merge`.
#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Shard output folders (from `sweep --shard I/N`), every I once.
    #[arg(required = true)]
    pub shards: Vec<PathBuf>,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace results of a different grid in the output folder.
    #[arg(long)]
    pub force: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Merges and prints what was written.
pub fn run(args: &MergeArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let s = rlfrontier::engine::merge(&args.shards, &args.out, &catalog, args.force)?;
    let mut text = format!(
        "merged {} shards: {} cells evaluated, {} feasible\n",
        args.shards.len(),
        thousands(s.cells_evaluated as f64),
        thousands(s.cells_feasible as f64)
    );
    for f in &s.files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    emit(out, &text)
}
