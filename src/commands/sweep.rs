//! `rlfrontier sweep GRID`: evaluate every cell and write `cells.csv` and `manifest.json`.

use std::io::Write;
use std::sync::atomic::AtomicBool;

use crate::cli::SweepArgs;
use crate::engine::{SweepOptions, default_out_dir, run_sweep};
use crate::error::{Error, Result};
use crate::format::{percent, thousands};
use crate::spec;

/// Parses `I/N` (0-based I below N).
pub fn parse_shard(text: &str) -> Result<(u64, u64)> {
    let bad = || {
        Error::in_flag(
            "--shard",
            format!("`{text}` is not a shard; write I/N with 0 <= I < N, as in 0/4"),
        )
    };
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// Runs the sweep and prints a summary.
pub fn run(args: &SweepArgs, interrupted: &AtomicBool, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let mut grid = spec::load(&args.grid, &catalog)?;
    if let Some(path) = &args.calibration {
        crate::outcome::calibration_file::apply(&mut grid, path)?;
    }
    let shard = args.shard.as_deref().map(parse_shard).transpose()?;
    let options = SweepOptions {
        out_dir: args.out.clone().unwrap_or_else(|| default_out_dir(&grid)),
        threads: args.threads.map(usize::from),
        shard,
        max_cells: args.max_cells,
        force: args.force,
        quiet: args.quiet,
        cells: args
            .cells
            .as_deref()
            .map(crate::engine::CellsMode::parse)
            .transpose()?,
    };
    let s = run_sweep(&grid, &catalog, &options, interrupted)?;
    let mut text = format!("predictions: {}\n", grid.outcome_state.label());
    text.push_str(&format!(
        "swept {} cells of grid `{}` ({} in the grid, {} pruned by constraints) in {:.2} s on {} threads ({} cells/s)\n",
        thousands(s.cells_evaluated as f64),
        grid.name,
        thousands(s.cells_total as f64),
        thousands(s.cells_pruned as f64),
        s.elapsed_seconds,
        s.threads,
        thousands(s.cells_in_slice as f64 / s.elapsed_seconds.max(1e-9))
    ));
    text.push_str(&format!(
        "feasible: {} of {}",
        thousands(s.cells_feasible as f64),
        thousands(s.cells_evaluated as f64)
    ));
    let reasons: Vec<String> = s
        .infeasible_by_code
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{c}: {}", thousands(*n as f64)))
        .collect();
    if !reasons.is_empty() {
        text.push_str(&format!(" (infeasible: {})", reasons.join(", ")));
    }
    text.push('\n');
    if s.cells_feasible > 0 {
        text.push_str(&format!(
            "generation (search) takes {} of the dollars but {} of the FLOPs on average over feasible cells\n",
            percent(s.mean_usd_share_search),
            percent(s.mean_flops_share_search)
        ));
    } else if s.cells_evaluated > 0 {
        text.push_str(
            "no cell is feasible: see infeasible_reason in cells.csv for what to change\n",
        );
    }
    for f in &s.files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    super::emit(out, &text)
}

/// `rlfrontier merge DIR... --out DIR`.
pub fn merge(args: &crate::cli::MergeArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let s = crate::engine::merge(&args.shards, &args.out, &catalog, args.force)?;
    let mut text = format!(
        "merged {} shards: {} cells evaluated, {} feasible\n",
        args.shards.len(),
        thousands(s.cells_evaluated as f64),
        thousands(s.cells_feasible as f64)
    );
    for f in &s.files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    super::emit(out, &text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("0/4").unwrap(), (0, 4));
        assert_eq!(parse_shard("3/4").unwrap(), (3, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("a/b").is_err());
        assert!(parse_shard("2").is_err());
    }
}
