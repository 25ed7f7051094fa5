//! The protocol's steps end to end: a sweep (evaluate every cell in parallel, aggregate the
//! frontiers, write the outputs), merging shards, the manifest that makes a result
//! reproducible, planning pilots ([`plan`]) and fitting their results ([`pilot_fit`]). Everything here reads inputs and writes staged outputs; the binary only parses
//! flags and prints.

#[cfg(feature = "research")]
pub mod backtest;
/// Readers and writers of `calibration.json`.
pub mod calibration_file;
mod manifest;
mod merge;
pub mod pilot_fit;
pub mod plan;
mod sweep;

use std::path::{Path, PathBuf};

pub use manifest::Manifest;
pub use merge::merge;
pub use sweep::{PARQUET_ROW_GROUP_CHUNKS, aggregate_chunk, run_sweep, run_sweep_into};

use crate::spec::Grid;

/// Cells per chunk: large enough to amortise scheduling, small enough to balance two cores.
pub const CHUNK_CELLS: u64 = 2048;

/// Most chunks a sweep's slice is cut into (16 MB of ranges).
pub const MAX_CHUNKS: u64 = 1_000_000;

/// How to run a sweep.
#[derive(Debug, Clone)]
pub struct SweepOptions {
    /// Output folder.
    pub out_dir: PathBuf,
    /// Worker threads (None: rayon's default, one per core).
    pub threads: Option<usize>,
    /// Evaluate only shard `index` of `count` (0-based), a contiguous slice of cell ids.
    pub shard: Option<(u64, u64)>,
    /// Refuse grids with more cells than this.
    pub max_cells: u64,
    /// Overwrite results of another grid.
    pub force: bool,
    /// Which rows `cells.csv` gets (None: all rows up to [`DEFAULT_CELLS_LIMIT`] cells).
    pub cells: Option<CellsMode>,
    /// CSV, or Parquet beside the CSV tables (`cells.parquet` instead of `cells.csv`).
    pub format: TableFormat,
    /// Write a PNG beside every plot's SVG (`plots/*.png`, bundled font).
    pub png: bool,
}

/// The file format of the tables a sweep writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TableFormat {
    /// `cells.csv` and the CSV tables.
    #[default]
    Csv,
    /// `cells.parquet` (typed, compressed) and a `.parquet` copy of every CSV table.
    Parquet,
}

impl TableFormat {
    /// The cells file's name in this format.
    pub fn cells_file(self) -> &'static str {
        match self {
            TableFormat::Csv => "cells.csv",
            TableFormat::Parquet => "cells.parquet",
        }
    }
}

/// Largest grid whose every row is written to `cells.csv` without an explicit `--cells all`
/// (two million rows is about 800 MB of CSV).
pub const DEFAULT_CELLS_LIMIT: u64 = 2_000_000;

/// Which rows `cells.csv` gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellsMode {
    /// Every evaluated cell.
    All,
    /// Feasible cells only.
    Feasible,
    /// Cells on the cost-score front only.
    Frontier,
    /// No cells.csv (frontiers, shortlist, plots and report only).
    None,
}

impl CellsMode {
    /// Lowercase name.
    pub fn as_str(self) -> &'static str {
        match self {
            CellsMode::All => "all",
            CellsMode::Feasible => "feasible",
            CellsMode::Frontier => "frontier",
            CellsMode::None => "none",
        }
    }
}

impl std::str::FromStr for CellsMode {
    type Err = String;

    /// Parses `all`, `feasible`, `frontier` or `none`.
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        Ok(match text {
            "all" => CellsMode::All,
            "feasible" => CellsMode::Feasible,
            "frontier" => CellsMode::Frontier,
            "none" => CellsMode::None,
            other => {
                return Err(format!(
                    "`{other}`; {}",
                    crate::error::suggestion(other, ["all", "feasible", "frontier", "none"])
                ));
            }
        })
    }
}

/// Where a sweep's cells table goes instead of `cells.csv` or `cells.parquet`
/// ([`run_sweep_into`]): the Python extension turns the rows into Arrow record batches, with no
/// file in between. Called from the thread that runs the sweep, in cell order.
pub trait CellsSink {
    /// The table's columns (the names and types of `cells.parquet`), once, before any rows,
    /// with the rows expected: the cells swept for `--cells all` and `feasible` (at most that
    /// many come), 0 for `frontier` (a few, not known in advance). `Break` stops the sweep.
    fn columns(
        &self,
        names: &[String],
        types: &[crate::report::parquet::ColumnType],
        expected_rows: u64,
    ) -> std::ops::ControlFlow<()>;
    /// The rows of the next consecutive cells (one part per chunk, in order, in groups of
    /// [`CellsSink::chunks_per_group`] chunks). `Break` (the reader is gone) stops the sweep.
    fn rows(&self, parts: Vec<crate::report::parquet::TypedRows>) -> std::ops::ControlFlow<()>;
    /// How many chunks of cells each [`CellsSink::rows`] call hands over: by default those of a
    /// row group of `cells.parquet` ([`PARQUET_ROW_GROUP_CHUNKS`], 64 chunks of 2,048 cells). A group is built whole before
    /// it is handed over, so a sink that keeps every row anyway (one table in memory) asks for
    /// fewer: the group in the making is its only memory on top of the table.
    fn chunks_per_group(&self) -> usize {
        PARQUET_ROW_GROUP_CHUNKS
    }
    /// Called once after the last rows and before anything is committed: a sink whose reader
    /// has not taken every row answers `Break` (or waits until it has), so a table read only in
    /// part never leaves a committed folder behind. The default accepts at once.
    fn finish(&self) -> std::ops::ControlFlow<()> {
        std::ops::ControlFlow::Continue(())
    }
}

/// Progress of a long computation, reported in cells. The library only calls it; a front end
/// decides how (and whether) to show it: the CLI draws a bar on a terminal, tests and the Python
/// package pass [`NoProgress`].
pub trait Progress: Sync {
    /// The work ahead, in cells (both passes counted).
    fn start(&self, total_cells: u64);
    /// The name of the current phase ("frontiers", "cells.csv").
    fn phase(&self, name: &'static str);
    /// `cells` more are done.
    fn advance(&self, cells: u64);
    /// Everything is done.
    fn finish(&self);
    /// The computation stopped early (interrupted).
    fn abandon(&self);
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _: u64) {}
    fn phase(&self, _: &'static str) {}
    fn advance(&self, _: u64) {}
    fn finish(&self) {}
    fn abandon(&self) {}
}

/// What a sweep did.
#[derive(Debug, Clone, PartialEq)]
pub struct SweepSummary {
    /// Cells in the product of axes.
    pub cells_total: u64,
    /// Cell ids in this shard's slice.
    pub cells_in_slice: u64,
    /// Cells pruned by the constraints.
    pub cells_pruned: u64,
    /// Cells evaluated and written.
    pub cells_evaluated: u64,
    /// Of which feasible.
    pub cells_feasible: u64,
    /// Infeasible cells per reason code, in a fixed order.
    pub infeasible_by_code: Vec<(String, u64)>,
    /// Mean share of dollars spent on search over feasible cells.
    pub mean_usd_share_search: f64,
    /// Mean share of FLOPs spent on search over feasible cells.
    pub mean_flops_share_search: f64,
    /// Threads used.
    pub threads: usize,
    /// Wall seconds.
    pub elapsed_seconds: f64,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Per budget, the recommendation (`analysis::decision`).
    pub decisions: Vec<crate::analysis::decision::Decision>,
    /// For a shard: the rows of its cells file and the file's SHA-256, which `merge` checks.
    pub cells_digest: Option<(u64, String)>,
    /// For a shard: the SHA-256 of its `aggregate.json`, which `merge` checks.
    pub aggregate_sha256: Option<String>,
}

/// The slice of cell ids shard `index` of `count` evaluates: contiguous, covering every id once.
pub fn shard_range(total: u64, index: u64, count: u64) -> std::ops::Range<u64> {
    let start = (total as u128 * index as u128 / count as u128) as u64;
    let end = (total as u128 * (index as u128 + 1) / count as u128) as u64;
    start..end
}

/// The slice cut into chunks of [`CHUNK_CELLS`] cells, or larger ones when that would make more
/// than [`MAX_CHUNKS`] (a 1e12-cell grid would otherwise allocate gigabytes of ranges up front).
/// Outputs do not depend on the chunking (sums are kept in fixed point, selections are ordered).
fn chunks_of(range: std::ops::Range<u64>) -> Vec<std::ops::Range<u64>> {
    let size = CHUNK_CELLS.max((range.end - range.start).div_ceil(MAX_CHUNKS));
    let mut v = Vec::new();
    let mut start = range.start;
    while start < range.end {
        let end = start.saturating_add(size).min(range.end);
        v.push(start..end);
        start = end;
    }
    v
}

/// The default output folder of a grid: `results/<name>`.
pub fn default_out_dir(grid: &Grid) -> PathBuf {
    Path::new("results").join(&grid.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_every_id_once() {
        for total in [0u64, 1, 7, 1000, 1_000_003] {
            for count in [1u64, 2, 3, 16] {
                let mut next = 0;
                for i in 0..count {
                    let r = shard_range(total, i, count);
                    assert_eq!(r.start, next);
                    next = r.end;
                }
                assert_eq!(next, total);
            }
        }
    }
}
