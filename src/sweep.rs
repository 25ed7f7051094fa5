//! The sweep: evaluate every cell of a grid in parallel and stream `cells.csv` in cell order.
//!
//! Cells are decoded from their index in fixed chunks; a window of chunks is evaluated in
//! parallel (rayon, on a local pool of `--threads` workers), then written in order, so the output
//! is byte-identical whatever the thread count, and memory holds one window at a time. Summary
//! statistics are reduced per chunk and combined in chunk order (floating-point sums do not depend
//! on scheduling).

use std::collections::BTreeSet;
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
use crate::frontier::{Aggregate, CostBasis, INFEASIBLE_CODES, PLOT_SAMPLE, Point};
use crate::ledger::{Bucket, Ledger, RunConfig, evaluate};
use crate::outcome::{CellSignal, Prediction, predict};
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
    "predicted_score",
    "score_low",
    "score_high",
    "base_score",
    "usd_per_point",
    "gpu_hours_per_point",
    "on_frontier",
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
    /// Which rows `cells.csv` gets (None: all rows up to [`DEFAULT_CELLS_LIMIT`] cells).
    pub cells: Option<CellsMode>,
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
    /// Parses `all`, `feasible`, `frontier` or `none`.
    pub fn parse(text: &str) -> Result<Self> {
        Ok(match text {
            "all" => CellsMode::All,
            "feasible" => CellsMode::Feasible,
            "frontier" => CellsMode::Frontier,
            "none" => CellsMode::None,
            other => {
                return Err(Error::in_flag(
                    "--cells",
                    format!(
                        "`{other}`; {}",
                        crate::error::suggestion(other, ["all", "feasible", "frontier", "none"])
                    ),
                ));
            }
        })
    }

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

/// One evaluated cell: the cell, its ledger and (for feasible cells) its predicted score.
#[derive(Debug, Clone, Copy)]
pub struct Evaluated<'g> {
    /// The cell.
    pub cell: Cell<'g>,
    /// Its ledger.
    pub ledger: Ledger,
    /// The prior's prediction.
    pub prediction: Prediction,
}

/// Evaluates the cell with this id (None when the constraints prune it).
pub fn evaluate_cell(grid: &Grid, id: u64) -> Option<Evaluated<'_>> {
    let cell = grid.cell(id)?;
    let config = RunConfig::from_cell(grid, &cell);
    let ledger = evaluate(&config);
    let signal = CellSignal::of(&config, &ledger);
    let prediction = predict(&grid.outcome, &signal);
    Some(Evaluated {
        cell,
        ledger,
        prediction,
    })
}

/// The spend of an evaluated cell in the grid's budget unit (dollars for fixed-iterations grids).
pub fn cost_in_budget_unit(grid: &Grid, ledger: &Ledger) -> f64 {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, .. } => ledger.per_iteration(*unit) * ledger.iterations as f64,
        BudgetAxis::Iterations(_) => ledger.total_usd(),
    }
}

/// The name of the frontier's cost unit: the budget unit, or `usd` for fixed-iterations grids.
pub fn cost_unit(grid: &Grid) -> &'static str {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, .. } => unit.as_str(),
        BudgetAxis::Iterations(_) => "usd",
    }
}

/// Dollars per percentage point of predicted improvement over the base score (empty when the
/// prediction is no improvement).
pub fn usd_per_point(usd: f64, score: f64, base_score: f64) -> Option<f64> {
    let points = 100.0 * (score - base_score);
    (points > 1e-9).then(|| usd / points)
}

/// One `cells.csv` row for an evaluated cell.
pub fn cell_row(e: &Evaluated, on_frontier: bool) -> Vec<String> {
    let (cell, ledger, prediction) = (&e.cell, &e.ledger, &e.prediction);
    let (budget, unit) = match cell.stop {
        Stop::Budget(b) => (number(b.amount), b.unit.as_str().to_string()),
        Stop::Iterations(n) => (n.to_string(), "iterations".to_string()),
    };
    let reason = ledger.infeasible.map(|r| r.to_string()).unwrap_or_default();
    let code = ledger
        .infeasible
        .map(|r| r.code().to_string())
        .unwrap_or_default();
    let feasible = ledger.feasible();
    let predicted = |x: f64| if feasible { number(x) } else { String::new() };
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
        feasible.to_string(),
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
        predicted(prediction.score),
        predicted(prediction.score_low),
        predicted(prediction.score_high),
        number(prediction.base_score),
        if feasible {
            usd_per_point(ledger.total_usd(), prediction.score, prediction.base_score)
                .map(number)
                .unwrap_or_default()
        } else {
            String::new()
        },
        if feasible {
            usd_per_point(
                ledger.total_gpu_hours(),
                prediction.score,
                prediction.base_score,
            )
            .map(number)
            .unwrap_or_default()
        } else {
            String::new()
        },
        on_frontier.to_string(),
    ]
}

/// Pass 1 over one chunk of cell ids: evaluate and aggregate without writing (single-threaded;
/// `run_sweep` runs chunks in parallel). Public for benchmarks.
pub fn aggregate_chunk(grid: &Grid, ids: std::ops::Range<u64>, sample_stride: u64) -> Aggregate {
    let mut agg = Aggregate::default();
    // Every feasible cell is a front candidate until `compact`; reserving avoids regrowth copies.
    agg.front_candidates
        .reserve((ids.end - ids.start).try_into().unwrap_or(0));
    for id in ids {
        let Some(e) = evaluate_cell(grid, id) else {
            agg.pruned += 1;
            continue;
        };
        agg.evaluated += 1;
        match e.ledger.infeasible {
            None => {
                let cost = cost_in_budget_unit(grid, &e.ledger);
                agg.add_feasible(
                    Point::of(&e.cell, &e.ledger, &e.prediction, cost),
                    sample_stride,
                );
            }
            Some(reason) => agg.add_infeasible(reason.code()),
        }
    }
    agg.compact();
    agg
}

/// Pass 2 over one chunk: the CSV rows the mode keeps.
fn write_chunk(
    grid: &Grid,
    ids: std::ops::Range<u64>,
    frontier: &BTreeSet<u64>,
    mode: CellsMode,
) -> Vec<u8> {
    let mut csv = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::with_capacity(64 * 1024));
    for id in ids {
        if mode == CellsMode::Frontier && !frontier.contains(&id) {
            continue;
        }
        if let Some(e) = evaluate_cell(grid, id) {
            if mode == CellsMode::Feasible && !e.ledger.feasible() {
                continue;
            }
            csv.write_record(cell_row(&e, frontier.contains(&id)))
                .expect("writing to memory cannot fail");
        }
    }
    csv.into_inner().expect("flushing to memory cannot fail")
}

/// The slice of cell ids shard `index` of `count` evaluates: contiguous, covering every id once.
pub fn shard_range(total: u64, index: u64, count: u64) -> std::ops::Range<u64> {
    let start = (total as u128 * index as u128 / count as u128) as u64;
    let end = (total as u128 * (index as u128 + 1) / count as u128) as u64;
    start..end
}

fn chunks_of(range: std::ops::Range<u64>) -> Vec<std::ops::Range<u64>> {
    let mut v = Vec::new();
    let mut start = range.start;
    while start < range.end {
        let end = (start + CHUNK_CELLS).min(range.end);
        v.push(start..end);
        start = end;
    }
    v
}

fn progress_bar(quiet: bool, length: u64) -> indicatif::ProgressBar {
    if quiet || !std::io::stderr().is_terminal() {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(length);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} sweep {bar:40} {percent:>3}%  {per_sec}  eta {eta}  {msg}",
        )
        .expect("valid template"),
    );
    bar
}

/// Runs a sweep: pass 1 evaluates every cell and aggregates the frontiers, the shortlist pool
/// and a plot sample; pass 2 (unless `--cells none`) evaluates them again and streams
/// `cells.csv` with `on_frontier`. Then the frontier tables, shortlist, plots, report and
/// manifest are written (and, for a shard, `aggregate.json`, which `merge` combines).
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
    let mode = match options.cells {
        Some(m) => m,
        None if grid.valid_cell_count() <= DEFAULT_CELLS_LIMIT => CellsMode::All,
        None => {
            return Err(Error::in_flag(
                "--cells",
                format!(
                    "the grid has {} cells: cells.csv would hold about {} GB; choose --cells frontier, feasible or none (frontiers, shortlist and report are written either way), or --cells all to write every row",
                    crate::format::thousands(grid.valid_cell_count() as f64),
                    (grid.valid_cell_count() as f64 * 420.0 / 1e9).ceil()
                ),
            ));
        }
    };
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
    let slice = range.end - range.start;
    let passes = if mode == CellsMode::None { 1 } else { 2 };
    let progress = progress_bar(options.quiet, passes * slice);
    let chunks = chunks_of(range);
    let window = (threads * 8).max(1);
    let sample_stride = (grid.valid_cell_count() / PLOT_SAMPLE).max(1);

    // Pass 1: aggregate.
    progress.set_message("frontiers");
    let mut aggregate = Aggregate::default();
    for group in chunks.chunks(window) {
        if interrupted.load(Ordering::SeqCst) {
            progress.abandon();
            return Err(Error::Interrupted);
        }
        let parts: Vec<Aggregate> = pool.install(|| {
            group
                .par_iter()
                .map(|ids| aggregate_chunk(grid, ids.clone(), sample_stride))
                .collect()
        });
        for part in parts {
            aggregate.merge(part);
        }
        progress.inc(group.iter().map(|r| r.end - r.start).sum());
    }
    if options.shard.is_none() && aggregate.evaluated > 0 && aggregate.feasible == 0 {
        return Err(all_infeasible(grid, &aggregate));
    }
    crate::export::create_output_dir(&options.out_dir)?;
    let frontier_ids: BTreeSet<u64> = aggregate
        .front(CostBasis::BudgetUnit)
        .iter()
        .map(|p| p.id)
        .collect();

    // Pass 2: cells.csv in cell order.
    let mut cells_file = None;
    if mode != CellsMode::None {
        progress.set_message("cells.csv");
        let cells_path = options.out_dir.join("cells.csv");
        let mut file = AtomicFile::create(&cells_path)?;
        let temp = file.temp_path().to_path_buf();
        file.writer()
            .write_all(&cells_header())
            .map_err(|e| Error::io(&temp, e))?;
        for group in chunks.chunks(window) {
            if interrupted.load(Ordering::SeqCst) {
                progress.abandon();
                return Err(Error::Interrupted);
            }
            let parts: Vec<Vec<u8>> = pool.install(|| {
                group
                    .par_iter()
                    .map(|ids| write_chunk(grid, ids.clone(), &frontier_ids, mode))
                    .collect()
            });
            for bytes in &parts {
                file.writer()
                    .write_all(bytes)
                    .map_err(|e| Error::io(&temp, e))?;
            }
            progress.inc(group.iter().map(|r| r.end - r.start).sum());
        }
        cells_file = Some(file);
    }
    progress.finish_and_clear();
    if interrupted.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    finish(
        grid, catalog, options, mode, aggregate, cells_file, total, slice, threads, started,
    )
}

/// The error for a grid none of whose cells can run: how many fail for each reason, and what to
/// change for the most common one. Nothing is written.
fn all_infeasible(grid: &Grid, aggregate: &Aggregate) -> Error {
    let reasons: Vec<String> = INFEASIBLE_CODES
        .iter()
        .zip(aggregate.infeasible)
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{c}: {}", crate::format::thousands(n as f64)))
        .collect();
    let most = INFEASIBLE_CODES
        .iter()
        .zip(aggregate.infeasible)
        .max_by_key(|(_, n)| *n)
        .map(|(c, _)| *c)
        .unwrap_or("");
    let fix = match most {
        "budget_below_one_iteration" => {
            "raise the budgets, or shrink a step (fewer prompts per step, smaller G, shorter cap)"
        }
        "training_memory" => "add GPUs, use LoRA, a smaller model or a smaller max_tokens_per_gpu",
        "rollout_memory" => {
            "add GPUs, shorten max_response_len or raise rollout_gpu_memory_utilization"
        }
        _ => "raise group_size so that some groups carry signal",
    };
    Error::in_file(
        &grid.path,
        None,
        "axes",
        format!(
            "every one of the {} cells is infeasible ({}); {fix}. Nothing was written",
            crate::format::thousands(aggregate.evaluated as f64),
            reasons.join(", ")
        ),
    )
}

fn cells_header() -> Vec<u8> {
    let mut header = csv::Writer::from_writer(Vec::new());
    header.write_record(CELL_COLUMNS).expect("memory");
    header.into_inner().expect("memory")
}

/// Writes everything derived from the aggregate and commits all outputs together.
#[allow(clippy::too_many_arguments)]
fn finish(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    mode: CellsMode,
    aggregate: Aggregate,
    cells_file: Option<AtomicFile>,
    total: u64,
    slice: u64,
    threads: usize,
    started: Instant,
) -> Result<SweepSummary> {
    let mut staged = crate::export::write_sweep_outputs(grid, &aggregate, &options.out_dir)?;
    if options.shard.is_some() {
        let mut text = serde_json::to_string(&aggregate).expect("json");
        text.push('\n');
        staged.add(&options.out_dir.join("aggregate.json"), text.as_bytes())?;
    }
    let mut files = Vec::new();
    if let Some(file) = cells_file {
        file.commit()?;
        files.push(options.out_dir.join("cells.csv"));
    } else {
        // A cells.csv from an earlier run would not match these outputs.
        let stale = options.out_dir.join("cells.csv");
        if stale.exists() {
            std::fs::remove_file(&stale).map_err(|e| Error::io(&stale, e))?;
        }
    }
    files.extend(staged.commit()?);
    files.push(options.out_dir.join("manifest.json"));
    let summary = SweepSummary {
        cells_total: total,
        cells_in_slice: slice,
        cells_pruned: aggregate.pruned,
        cells_evaluated: aggregate.evaluated,
        cells_feasible: aggregate.feasible,
        infeasible_by_code: INFEASIBLE_CODES
            .iter()
            .zip(aggregate.infeasible)
            .map(|(c, n)| (c.to_string(), n))
            .collect(),
        mean_usd_share_search: aggregate.mean_usd_share_search(),
        mean_flops_share_search: aggregate.mean_flops_share_search(),
        threads,
        elapsed_seconds: started.elapsed().as_secs_f64(),
        files,
    };
    write_manifest(grid, catalog, options, mode, &summary)?;
    Ok(summary)
}

/// Combines shard outputs (`sweep --shard I/N` for every I) into exactly what an unsharded sweep
/// writes: the aggregates are merged, `on_frontier` is recomputed over the whole grid, and every
/// derived output is written again.
pub fn merge(
    shard_dirs: &[PathBuf],
    out_dir: &Path,
    catalog: &Catalog,
    force: bool,
) -> Result<SweepSummary> {
    let started = Instant::now();
    struct Shard {
        dir: PathBuf,
        index: u64,
        count: u64,
        sha: String,
        file: String,
        mode: CellsMode,
    }
    let mut shards = Vec::new();
    for dir in shard_dirs {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let m: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::in_file(
                &path,
                Some(e.line()),
                "",
                format!("not a sweep manifest: {e}"),
            )
        })?;
        let shard = &m["shard"];
        let (Some(index), Some(count)) = (shard["index"].as_u64(), shard["count"].as_u64()) else {
            return Err(Error::in_file(
                &path,
                None,
                "shard",
                "not the output of `sweep --shard I/N`",
            ));
        };
        shards.push(Shard {
            dir: dir.clone(),
            index,
            count,
            sha: m["grid"]["sha256"].as_str().unwrap_or_default().to_string(),
            file: m["grid"]["file"].as_str().unwrap_or_default().to_string(),
            mode: serde_json::from_value(m["cells_mode"].clone()).unwrap_or(CellsMode::All),
        });
    }
    if shards.is_empty() {
        return Err(Error::in_flag("DIR", "give the shard folders to merge"));
    }
    shards.sort_by_key(|s| s.index);
    let count = shards[0].count;
    for (k, s) in shards.iter().enumerate() {
        if s.count != count
            || s.index != k as u64
            || s.sha != shards[0].sha
            || s.mode != shards[0].mode
        {
            return Err(Error::in_file(
                &s.dir.join("manifest.json"),
                None,
                "shard",
                format!(
                    "shards must be 0..{count} of the same grid file with the same --cells; found shard {}/{} of grid {}…",
                    s.index,
                    s.count,
                    &s.sha[..12.min(s.sha.len())]
                ),
            ));
        }
    }
    if shards.len() as u64 != count {
        return Err(Error::in_flag(
            "DIR",
            format!(
                "{} of {count} shards given; every shard is needed",
                shards.len()
            ),
        ));
    }
    let grid = crate::spec::load(Path::new(&shards[0].file), catalog)?;
    if grid.sha256 != shards[0].sha {
        return Err(Error::in_file(
            Path::new(&shards[0].file),
            None,
            "",
            "the grid file changed since the shards were swept; sweep again",
        ));
    }
    let mode = shards[0].mode;
    let mut aggregate = Aggregate::default();
    for s in &shards {
        let path = s.dir.join("aggregate.json");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        let part: Aggregate = serde_json::from_str(&text)
            .map_err(|e| Error::in_file(&path, Some(e.line()), "", e.to_string()))?;
        aggregate.merge(part);
    }
    prepare_output_dir(out_dir, &grid.name, force)?;
    crate::export::create_output_dir(out_dir)?;
    let frontier_ids: BTreeSet<u64> = aggregate
        .front(CostBasis::BudgetUnit)
        .iter()
        .map(|p| p.id)
        .collect();
    let mut cells_file = None;
    if mode != CellsMode::None {
        let mut file = AtomicFile::create(&out_dir.join("cells.csv"))?;
        let temp = file.temp_path().to_path_buf();
        file.writer()
            .write_all(&cells_header())
            .map_err(|e| Error::io(&temp, e))?;
        for s in &shards {
            let path = s.dir.join("cells.csv");
            let mut reader = csv::Reader::from_path(&path)
                .map_err(|e| Error::in_file(&path, None, "", e.to_string()))?;
            let mut writer = csv::WriterBuilder::new()
                .has_headers(false)
                .from_writer(Vec::new());
            for record in reader.records() {
                let record = record.map_err(|e| Error::in_file(&path, None, "", e.to_string()))?;
                let id: u64 = record
                    .get(0)
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(u64::MAX);
                let on = frontier_ids.contains(&id);
                if mode == CellsMode::Frontier && !on {
                    continue;
                }
                let mut fields: Vec<&str> = record.iter().collect();
                let flag = on.to_string();
                if let Some(last) = fields.last_mut() {
                    *last = &flag;
                }
                writer.write_record(&fields).expect("memory");
            }
            file.writer()
                .write_all(&writer.into_inner().expect("memory"))
                .map_err(|e| Error::io(&temp, e))?;
        }
        cells_file = Some(file);
    }
    let options = SweepOptions {
        out_dir: out_dir.to_path_buf(),
        threads: None,
        shard: None,
        max_cells: u64::MAX,
        force,
        quiet: true,
        cells: Some(mode),
    };
    let total = grid
        .cell_count()
        .map_err(|m| Error::in_file(&grid.path, None, "axes", m))?;
    finish(
        &grid, catalog, &options, mode, aggregate, cells_file, total, total, 1, started,
    )
}

/// Writes `manifest.json`: tool and catalog versions, the grid's hash, seed, counts, threads and
/// timing (the only field that differs between identical runs).
fn write_manifest(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    mode: CellsMode,
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
        "cells_mode": mode.as_str(),
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
        "files": summary.files.iter().filter_map(|f| f.strip_prefix(&options.out_dir).ok()).map(|f| f.display().to_string()).collect::<Vec<_>>(),
        "outcome": {
            "state": grid.outcome_state.label(),
            "metric": grid.metric,
        },
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
