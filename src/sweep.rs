//! The sweep: evaluate every cell of a grid in parallel and stream `cells.csv` in cell order.
//!
//! Cells are decoded from their index in fixed chunks; a window of chunks is evaluated in
//! parallel (rayon, on a local pool of `--threads` workers), then written in order, so the output
//! is byte-identical whatever the thread count, and memory holds one window at a time. Summary
//! statistics are reduced per chunk and combined in chunk order (floating-point sums do not depend
//! on scheduling).

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;
use serde_json::json;

use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::export::{AtomicFile, prepare_output_dir, write_atomic};
use crate::format::number;
use crate::ledger::{Bucket, Ledger, RunConfig, evaluate};
use crate::spec::{BudgetAxis, Cell, Grid, Stop};

/// Cells per chunk: large enough to amortise scheduling, small enough to balance two cores.
pub const CHUNK_CELLS: u64 = 2048;

/// The columns of `cells.csv`, in order.
pub const CELL_COLUMNS: &[&str] = &[
    "cell_id",
    "model",
    "finetune",
    "reward",
    "group_size",
    "max_response_len",
    "update_epochs",
    "prompts_per_step",
    "budget",
    "budget_unit",
    "iterations",
    "rollouts",
    "mean_response_tokens",
    "truncation_rate",
    "zero_signal_rate",
    "flops_search",
    "flops_learning",
    "flops_feedback",
    "flops_total",
    "flops_share_search",
    "flops_share_learning",
    "flops_share_feedback",
    "gpu_hours_search",
    "gpu_hours_learning",
    "gpu_hours_feedback",
    "gpu_hours",
    "usd",
    "usd_share_search",
    "usd_share_learning",
    "usd_share_feedback",
    "wall_hours",
    "feasible",
    "infeasible_reason",
    "infeasible_code",
    "step_seconds",
    "usd_per_step",
    "generated_tokens",
    "straggler_response_tokens",
    "tensor_parallel",
    "sequences_in_flight",
    "training_memory_gb_per_gpu",
    "waste_zero_signal_usd",
    "waste_truncated_usd",
    "waste_straggler_gpu_hours",
];

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
    /// No progress bar.
    pub quiet: bool,
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
}

#[derive(Debug, Clone, Default)]
struct ChunkStats {
    evaluated: u64,
    pruned: u64,
    feasible: u64,
    infeasible: [u64; 4],
    usd_share_search: f64,
    flops_share_search: f64,
}

const INFEASIBLE_CODES: [&str; 4] = [
    "rollout_memory",
    "training_memory",
    "dynamic_sampling_starves",
    "budget_below_one_iteration",
];

impl ChunkStats {
    fn merge(&mut self, other: &ChunkStats) {
        self.evaluated += other.evaluated;
        self.pruned += other.pruned;
        self.feasible += other.feasible;
        for i in 0..4 {
            self.infeasible[i] += other.infeasible[i];
        }
        self.usd_share_search += other.usd_share_search;
        self.flops_share_search += other.flops_share_search;
    }
}

/// Appends one `cells.csv` row for a cell and its ledger.
pub fn cell_row(grid: &Grid, cell: &Cell, ledger: &Ledger) -> Vec<String> {
    let (budget, unit) = match cell.stop {
        Stop::Budget(b) => (number(b.amount), b.unit.as_str().to_string()),
        Stop::Iterations(n) => (n.to_string(), "iterations".to_string()),
    };
    let _ = grid;
    let reason = ledger.infeasible.map(|r| r.to_string()).unwrap_or_default();
    let code = ledger
        .infeasible
        .map(|r| r.code().to_string())
        .unwrap_or_default();
    vec![
        cell.id.to_string(),
        cell.model.id.clone(),
        cell.finetune.to_string(),
        cell.reward.to_string(),
        cell.group_size.to_string(),
        cell.max_response_len.to_string(),
        cell.update_epochs.to_string(),
        cell.prompts_per_step.to_string(),
        budget,
        unit,
        ledger.iterations.to_string(),
        number(ledger.tokens.rollouts_per_step * ledger.iterations as f64),
        number(ledger.tokens.mean_response_tokens),
        number(ledger.tokens.truncation_rate),
        number(ledger.tokens.zero_signal_rate),
        number(ledger.flops(Bucket::Search)),
        number(ledger.flops(Bucket::Learning)),
        number(ledger.flops(Bucket::Feedback)),
        number(ledger.total_flops()),
        number(ledger.flops_share(Bucket::Search)),
        number(ledger.flops_share(Bucket::Learning)),
        number(ledger.flops_share(Bucket::Feedback)),
        number(ledger.gpu_hours(Bucket::Search)),
        number(ledger.gpu_hours(Bucket::Learning)),
        number(ledger.gpu_hours(Bucket::Feedback)),
        number(ledger.total_gpu_hours()),
        number(ledger.total_usd()),
        number(ledger.usd_share(Bucket::Search)),
        number(ledger.usd_share(Bucket::Learning)),
        number(ledger.usd_share(Bucket::Feedback)),
        number(ledger.wall_hours()),
        ledger.feasible().to_string(),
        reason,
        code,
        number(ledger.step_seconds),
        number(ledger.total_usd_per_step()),
        number(ledger.tokens.generated_tokens_per_step * ledger.iterations as f64),
        number(ledger.tokens.straggler_response_tokens),
        ledger.decode.tensor_parallel.to_string(),
        number(ledger.decode.sequences_in_flight),
        number(ledger.training_memory_gb_per_gpu),
        number(ledger.waste.zero_signal_usd),
        number(ledger.waste.truncated_usd),
        number(ledger.waste.straggler_idle_gpu_hours),
    ]
}

/// Evaluates one chunk of cell ids into CSV bytes and statistics.
fn evaluate_chunk(grid: &Grid, ids: std::ops::Range<u64>) -> (Vec<u8>, ChunkStats) {
    let mut stats = ChunkStats::default();
    let mut csv = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::with_capacity(64 * 1024));
    for id in ids {
        let Some(cell) = grid.cell(id) else {
            stats.pruned += 1;
            continue;
        };
        let ledger = evaluate(&RunConfig::from_cell(grid, &cell));
        stats.evaluated += 1;
        match ledger.infeasible {
            None => {
                stats.feasible += 1;
                stats.usd_share_search += ledger.usd_share(Bucket::Search);
                stats.flops_share_search += ledger.flops_share(Bucket::Search);
            }
            Some(reason) => {
                let i = INFEASIBLE_CODES
                    .iter()
                    .position(|&c| c == reason.code())
                    .expect("known code");
                stats.infeasible[i] += 1;
            }
        }
        csv.write_record(cell_row(grid, &cell, &ledger))
            .expect("writing to memory cannot fail");
    }
    (
        csv.into_inner().expect("flushing to memory cannot fail"),
        stats,
    )
}

/// The slice of cell ids shard `index` of `count` evaluates: contiguous, covering every id once.
pub fn shard_range(total: u64, index: u64, count: u64) -> std::ops::Range<u64> {
    let start = (total as u128 * index as u128 / count as u128) as u64;
    let end = (total as u128 * (index as u128 + 1) / count as u128) as u64;
    start..end
}

/// Runs a sweep: writes `cells.csv` and `manifest.json` into the output folder.
pub fn run_sweep(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    interrupted: &AtomicBool,
) -> Result<SweepSummary> {
    let started = Instant::now();
    let total = grid
        .cell_count()
        .map_err(|m| Error::in_file(&grid.path, None, "axes", m))?;
    if total > options.max_cells {
        return Err(Error::in_file(
            &grid.path,
            None,
            "axes",
            format!(
                "the grid has {} cells, above --max-cells {}; shrink an axis, split it with --shard I/N, or raise --max-cells",
                crate::format::thousands(total as f64),
                crate::format::thousands(options.max_cells as f64)
            ),
        ));
    }
    let range = match options.shard {
        Some((index, count)) => shard_range(total, index, count),
        None => 0..total,
    };
    prepare_output_dir(&options.out_dir, &grid.name, options.force)?;

    let pool = {
        let mut builder = rayon::ThreadPoolBuilder::new();
        if let Some(n) = options.threads {
            builder = builder.num_threads(n);
        }
        builder
            .build()
            .map_err(|e| Error::in_flag("--threads", format!("cannot start {e}")))?
    };
    let threads = pool.current_num_threads();

    let progress = if options.quiet || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let bar = indicatif::ProgressBar::new(range.end - range.start);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} sweep {bar:40} {human_pos}/{human_len} cells  {per_sec}  eta {eta}",
            )
            .expect("valid template"),
        );
        bar
    };

    let cells_path = options.out_dir.join("cells.csv");
    let mut file = AtomicFile::create(&cells_path)?;
    let temp = file.temp_path().to_path_buf();
    {
        let mut header = csv::Writer::from_writer(Vec::new());
        header.write_record(CELL_COLUMNS).expect("memory");
        let bytes = header.into_inner().expect("memory");
        file.writer()
            .write_all(&bytes)
            .map_err(|e| Error::io(&temp, e))?;
    }

    let chunks: Vec<std::ops::Range<u64>> = {
        let mut v = Vec::new();
        let mut start = range.start;
        while start < range.end {
            let end = (start + CHUNK_CELLS).min(range.end);
            v.push(start..end);
            start = end;
        }
        v
    };
    let window = (threads * 8).max(1);
    let mut stats = ChunkStats::default();
    for group in chunks.chunks(window) {
        if interrupted.load(Ordering::SeqCst) {
            progress.abandon();
            return Err(Error::Interrupted);
        }
        let results: Vec<(Vec<u8>, ChunkStats)> = pool.install(|| {
            group
                .par_iter()
                .map(|ids| evaluate_chunk(grid, ids.clone()))
                .collect()
        });
        for (bytes, chunk_stats) in &results {
            file.writer()
                .write_all(bytes)
                .map_err(|e| Error::io(&temp, e))?;
            stats.merge(chunk_stats);
        }
        progress.inc(group.iter().map(|r| r.end - r.start).sum());
    }
    progress.finish_and_clear();
    if interrupted.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    file.commit()?;

    let elapsed_seconds = started.elapsed().as_secs_f64();
    let feasible = stats.feasible.max(1) as f64;
    let summary = SweepSummary {
        cells_total: total,
        cells_in_slice: range.end - range.start,
        cells_pruned: stats.pruned,
        cells_evaluated: stats.evaluated,
        cells_feasible: stats.feasible,
        infeasible_by_code: INFEASIBLE_CODES
            .iter()
            .zip(stats.infeasible)
            .map(|(c, n)| (c.to_string(), n))
            .collect(),
        mean_usd_share_search: stats.usd_share_search / feasible,
        mean_flops_share_search: stats.flops_share_search / feasible,
        threads,
        elapsed_seconds,
        files: vec![cells_path.clone(), options.out_dir.join("manifest.json")],
    };
    write_manifest(grid, catalog, options, &summary)?;
    Ok(summary)
}

/// Writes `manifest.json`: tool and catalog versions, the grid's hash, seed, counts, threads and
/// timing (the only field that differs between identical runs).
fn write_manifest(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    summary: &SweepSummary,
) -> Result<()> {
    let budget = match &grid.axes.budget {
        BudgetAxis::Budgets { unit, .. } => unit.as_str(),
        BudgetAxis::Iterations(_) => "iterations",
    };
    let manifest = json!({
        "tool": "rlfrontier",
        "tool_version": crate::VERSION,
        "grid": {
            "name": grid.name,
            "file": grid.path.display().to_string(),
            "sha256": grid.sha256,
            "seed": grid.seed,
            "budget_unit": budget,
        },
        "catalog_version": catalog.version,
        "gpu": grid.hardware.gpu.id,
        "usd_per_gpu_hour": grid.hardware.usd_per_gpu_hour,
        "shard": options.shard.map(|(i, n)| json!({"index": i, "count": n})),
        "cells": {
            "total": summary.cells_total,
            "in_slice": summary.cells_in_slice,
            "pruned": summary.cells_pruned,
            "evaluated": summary.cells_evaluated,
            "feasible": summary.cells_feasible,
            "infeasible": summary.infeasible_by_code.iter().map(|(c, n)| (c.clone(), json!(n))).collect::<serde_json::Map<_, _>>(),
        },
        "files": ["cells.csv"],
        "threads": summary.threads,
        "elapsed_seconds": summary.elapsed_seconds,
    });
    let mut text = serde_json::to_string_pretty(&manifest).expect("json");
    text.push('\n');
    write_atomic(&options.out_dir.join("manifest.json"), text.as_bytes())
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
