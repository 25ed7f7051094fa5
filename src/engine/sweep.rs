//! The sweep: pass 1 aggregates, pass 2 streams `cells.csv`, then every derived output.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::TableFormat;
use super::{
    CellsMode, CellsSink, DEFAULT_CELLS_LIMIT, Manifest, Progress, SweepOptions, SweepSummary,
    chunks_of, shard_range,
};
use crate::analysis::frontier::{Aggregate, PLOT_SAMPLE, Point, Probe};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::evaluate::CellEvaluator;
use crate::report::cells::{
    CellRow, Num, cell_columns, start_cells_csv, target_columns, target_fields,
};
use crate::report::columns::{ColumnCollector, ColumnValue};
use crate::report::parquet::{ColumnType, ParquetTable, TypedRows, cells_column_type};
use crate::report::row_group::{ClosedRowGroup, ColumnBuffer, ColumnChunkEncoder, RowGroupEncoder};
use crate::report::{AtomicFile, prepare_output_dir};
use crate::spec::Grid;

/// Chunks per row group of `cells.parquet`: fixed, so the file is the same whatever the thread
/// count (a window of chunks per thread would move the row-group boundaries).
pub const PARQUET_ROW_GROUP_CHUNKS: usize = 64;

/// Pass 1 over a range of cell ids: evaluate and aggregate without writing (single-threaded;
/// `run_sweep` runs one range of consecutive chunks per thread, each seeded with the floors of
/// the cells before it). Public for benchmarks.
pub fn aggregate_chunk(grid: &Grid, ids: std::ops::Range<u64>, sample_stride: u64) -> Aggregate {
    aggregate_after(grid, ids, sample_stride, &Aggregate::default())
}

/// [`aggregate_chunk`] for cells that come after those `earlier` aggregated: the same
/// aggregate once merged into `earlier`, with the cells that cannot reach `earlier`'s shortlist
/// pools skipped ([`Aggregate::after`]).
fn aggregate_after(
    grid: &Grid,
    ids: std::ops::Range<u64>,
    sample_stride: u64,
    earlier: &Aggregate,
) -> Aggregate {
    let mut agg = Aggregate::after(earlier);
    let mut evaluator = CellEvaluator::default();
    grid.for_each_cell_in(ids, |_, cell| {
        let Some(cell) = cell else {
            agg.pruned += 1;
            return;
        };
        let priced = evaluator.price_lazily(grid, cell);
        agg.evaluated += 1;
        let ledger = priced.ledger;
        match ledger.infeasible {
            None => {
                // The interval and the whole point only for the cells the aggregate takes.
                let shares = priced.cost_shares(grid);
                let probe = Probe::of(cell, priced.score(), &shares);
                agg.add_probed(probe, sample_stride, || {
                    Point::of(cell, ledger, &priced.prediction(), shares.cost)
                });
            }
            Some(reason) => agg.add_infeasible(reason.kind()),
        }
    });
    agg.compact();
    agg
}

/// Consecutive chunks joined into at most `parts` runs of cells, in order (each run a range).
fn consecutive_runs(chunks: &[std::ops::Range<u64>], parts: usize) -> Vec<std::ops::Range<u64>> {
    let per_run = chunks.len().div_ceil(parts.max(1)).max(1);
    chunks
        .chunks(per_run)
        .filter_map(|run| Some(run.first()?.start..run.last()?.end))
        .collect()
}

/// Pass 2 over one chunk: hands `row` each cell the mode keeps, as its `cells.csv` row and, for
/// a multi-metric grid, its target fields (`None` for a single target).
fn for_each_row(
    grid: &Grid,
    ids: std::ops::Range<u64>,
    frontier: &BTreeSet<u64>,
    mode: CellsMode,
    mut row: impl FnMut(CellRow, Option<Vec<Option<Num>>>),
) {
    let mut evaluator = CellEvaluator::default();
    let mut intervals = crate::evaluate::GridIntervals::default();
    for (id, cell) in grid.cells_in(ids) {
        if mode == CellsMode::Frontier && !frontier.contains(&id) {
            continue;
        }
        if let Some(cell) = cell {
            let e = evaluator.evaluate(grid, cell);
            if mode == CellsMode::Feasible && !e.ledger.feasible() {
                continue;
            }
            let targets = (grid.targets.len() >= 2).then(|| target_fields(grid, &e));
            let interval = intervals.of(grid, &e.cell.indices);
            row(
                CellRow::of(&grid.axes, &e, frontier.contains(&id), interval),
                targets,
            );
        }
    }
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
    for_each_row(grid, ids, frontier, mode, |row, targets| {
        match targets {
            Some(targets) => csv.serialize((row, targets)),
            None => csv.serialize(row),
        }
        .expect("writing to memory cannot fail")
    });
    csv.into_inner().expect("flushing to memory cannot fail")
}

/// Pass 2 over one chunk for `cells.parquet`: the rows the mode keeps, filed straight into
/// typed columns (`report::columns::ColumnValue`: the values the CSV rows parse to).
fn chunk_columns(
    grid: &Grid,
    ids: std::ops::Range<u64>,
    frontier: &BTreeSet<u64>,
    mode: CellsMode,
    types: &[ColumnType],
) -> std::result::Result<TypedRows, String> {
    // Every cell is a row in `all` mode; the other modes keep a few, and grow as needed.
    let rows = match mode {
        CellsMode::All => usize::try_from(ids.end - ids.start).map_or(0, |n| n.min(1 << 16)),
        _ => 0,
    };
    let mut columns = ColumnCollector::with_capacity(types, rows);
    let mut failed = None;
    for_each_row(grid, ids, frontier, mode, |row, targets| {
        if failed.is_none() {
            let filed = columns.push_fields(|columns| {
                row.file(columns)?;
                match &targets {
                    Some(targets) => targets.file(columns),
                    None => Ok(()),
                }
            });
            failed = filed.err();
        }
    });
    match failed {
        Some(e) => Err(e.to_string()),
        None => Ok(columns.finish()),
    }
}

/// Runs a sweep: pass 1 evaluates every cell and aggregates the frontiers, the shortlist pool
/// and a plot sample; pass 2 (unless `--cells none`) evaluates them again and streams
/// `cells.csv` with `on_frontier`. Then the frontier tables, shortlist, plots, report and
/// manifest are written (and, for a shard, `aggregate.json`, which `merge` combines).
pub fn run_sweep(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    progress: &dyn Progress,
    interrupted: &AtomicBool,
) -> Result<SweepSummary> {
    run_sweep_into(grid, catalog, options, progress, interrupted, None)
}

/// [`run_sweep`], with the cells table handed to `sink` (when given) instead of being written:
/// the rows `--cells` selects, in cell order, a row group at a time. Every other output is
/// written to the folder as `run_sweep` writes it; the manifest records no cells file.
pub fn run_sweep_into(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    progress: &dyn Progress,
    interrupted: &AtomicBool,
    sink: Option<&dyn CellsSink>,
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
                "the grid has {} cells, above ⟨max_cells⟩ {}; shrink an axis, split it with ⟨shard⟩ I/N, or raise ⟨max_cells⟩",
                crate::format::thousands(total as f64),
                crate::format::thousands(options.max_cells as f64)
            ),
        ));
    }
    let mode = cells_mode(grid, options)?;
    if options.shard.is_some() && grid.targets.len() >= 2 {
        return Err(Error::in_setting(
            "shard",
            "sharded sweeps of grids with several [outcome] metrics are not supported yet; sweep without ⟨shard⟩, or shard one grid per metric",
        ));
    }
    let range = match options.shard {
        Some((index, count)) => shard_range(total, index, count),
        None => 0..total,
    };
    // The folder is this run's from the start: locked before its owner is checked (a second run
    // is refused now, not after minutes of work, and cannot slip in between check and lock),
    // what killed runs left cleaned first, and removed again if created here and left empty.
    let folder = crate::report::LockedFolder::take(&options.out_dir)?;
    prepare_output_dir(&options.out_dir, grid, options.force)?;
    crate::report::remove_stale_temporaries(&options.out_dir);
    let outcome = sweep_locked(
        grid,
        catalog,
        options,
        progress,
        interrupted,
        (total, mode, range, started),
        sink,
    );
    drop(folder);
    outcome
}

/// The sweep proper, with the output folder locked.
fn sweep_locked(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    progress: &dyn Progress,
    interrupted: &AtomicBool,
    (total, mode, range, started): (u64, CellsMode, std::ops::Range<u64>, Instant),
    sink: Option<&dyn CellsSink>,
) -> Result<SweepSummary> {
    let pool = thread_pool(options)?;
    let threads = pool.current_num_threads();
    let slice = range.end - range.start;
    // Pass 1 once per target metric, pass 2 (cells.csv) once.
    let targets = grid.targets.len().max(1) as u64;
    let passes = if mode == CellsMode::None {
        targets
    } else {
        targets + 1
    };
    progress.start(passes * slice);
    let run = Passes {
        grid,
        pool: &pool,
        chunks: chunks_of(range),
        window: (threads * 8).max(1),
        progress,
        interrupted,
    };
    let aggregate = run.aggregate()?;
    if options.shard.is_none() && aggregate.evaluated > 0 && aggregate.feasible == 0 {
        return Err(all_infeasible(grid, &aggregate));
    }
    // Every other target metric: the same cells predicted from its base scores, aggregated on
    // their own (its frontiers and shortlist can differ).
    let mut other_targets = Vec::new();
    for index in 1..grid.targets.len() {
        let view = grid.for_target(index);
        let aggregate = Passes {
            grid: &view,
            chunks: run.chunks.clone(),
            ..run
        }
        .aggregate()?;
        other_targets.push((view, aggregate));
    }
    let cells_file = match (mode, sink) {
        (CellsMode::None, _) => None,
        (_, Some(sink)) => {
            run.cells_to_sink(&aggregate, mode, sink)?;
            None
        }
        (_, None) => Some(run.cells_table(&options.out_dir, &aggregate, mode, options.format)?),
    };
    // The manifest says what the folder holds: no cells file when the rows went to a sink.
    let written = if sink.is_some() {
        CellsMode::None
    } else {
        mode
    };
    progress.finish();
    if interrupted.load(Ordering::SeqCst) {
        return Err(Error::Interrupted);
    }
    finish(
        grid,
        catalog,
        options,
        written,
        (aggregate, &other_targets),
        cells_file,
        total,
        slice,
        threads,
        started,
    )
}

/// Which rows `cells.csv` gets: as asked, or every row up to [`DEFAULT_CELLS_LIMIT`] cells (an
/// explicit choice is required above it).
fn cells_mode(grid: &Grid, options: &SweepOptions) -> Result<CellsMode> {
    match options.cells {
        Some(m) => Ok(m),
        None if grid.valid_cell_count() <= DEFAULT_CELLS_LIMIT => Ok(CellsMode::All),
        None => Err(Error::in_setting(
            "cells",
            format!(
                "the grid has {} cells: cells.csv would hold about {} GB; choose ⟨cells⟩ frontier, feasible or none (frontiers, shortlist and report are written either way), or ⟨cells⟩ all to write every row",
                crate::format::thousands(grid.valid_cell_count() as f64),
                (grid.valid_cell_count() as f64 * 420.0 / 1e9).ceil()
            ),
        )),
    }
}

/// A local pool with the requested threads (a global pool can be built only once).
fn thread_pool(options: &SweepOptions) -> Result<rayon::ThreadPool> {
    let mut builder = rayon::ThreadPoolBuilder::new();
    if let Some(n) = options.threads {
        builder = builder.num_threads(n);
    }
    builder
        .build()
        .map_err(|e| Error::in_setting("threads", format!("cannot start {e}")))
}

/// The two passes over the grid's chunks: windows of chunks run in parallel, results are
/// combined in chunk order (so outputs do not depend on the thread count), and Ctrl-C is
/// checked between windows.
struct Passes<'a> {
    grid: &'a Grid,
    pool: &'a rayon::ThreadPool,
    chunks: Vec<std::ops::Range<u64>>,
    window: usize,
    progress: &'a dyn Progress,
    interrupted: &'a AtomicBool,
}

impl Passes<'_> {
    /// Stops when interrupted.
    fn check_interrupt(&self) -> Result<()> {
        if self.interrupted.load(Ordering::SeqCst) {
            self.progress.abandon();
            return Err(Error::Interrupted);
        }
        Ok(())
    }

    /// Pass 1: evaluate every cell and aggregate the frontiers, the shortlist pool and a plot
    /// sample.
    fn aggregate(&self) -> Result<Aggregate> {
        let sample_stride = (self.grid.valid_cell_count() / PLOT_SAMPLE).max(1);
        self.progress.phase("frontiers");
        let mut aggregate = Aggregate::default();
        for group in self.chunks.chunks(self.window) {
            self.check_interrupt()?;
            // Merged on the pool too: rayon's reduce keeps the chunks' order (the left part is
            // always the earlier cells), and `Aggregate::merge` gives the same aggregate however
            // the chunks are grouped, so the result does not depend on the thread count.
            // One run of consecutive cells per thread: fewer, larger aggregates to merge.
            let runs = consecutive_runs(group, self.pool.current_num_threads());
            let window = self.pool.install(|| {
                runs.par_iter()
                    .map(|ids| aggregate_after(self.grid, ids.clone(), sample_stride, &aggregate))
                    .reduce(Aggregate::default, |mut earlier, later| {
                        earlier.merge(later);
                        earlier
                    })
            });
            aggregate.merge(window);
            self.progress
                .advance(group.iter().map(|r| r.end - r.start).sum());
        }
        Ok(aggregate)
    }

    /// Pass 2: evaluate again and stream `cells.csv` (or `cells.parquet`) in cell order, with
    /// `on_frontier`. The Parquet columns are filled by the CSV rows' own serialisation
    /// (`report::columns`), so the two formats hold the same values.
    fn cells_table(
        &self,
        out_dir: &std::path::Path,
        aggregate: &Aggregate,
        mode: CellsMode,
        format: TableFormat,
    ) -> Result<AtomicFile> {
        let frontier_ids = aggregate.front_ids();
        self.progress.phase(format.cells_file());
        let extra = target_columns(self.grid);
        let (mut file, temp) = match format {
            TableFormat::Csv => start_cells_csv(out_dir, &extra)?,
            TableFormat::Parquet => {
                let file = AtomicFile::create(&out_dir.join(format.cells_file()))?;
                let temp = file.temp_path().to_path_buf();
                (file, temp)
            }
        };
        let mut names = cell_columns();
        names.extend(extra);
        let parquet_error = |m: String| Error::io(&temp, std::io::Error::other(m));
        let rows_of = |group: &[std::ops::Range<u64>]| -> Vec<Vec<u8>> {
            self.pool.install(|| {
                group
                    .par_iter()
                    .map(|ids| write_chunk(self.grid, ids.clone(), &frontier_ids, mode))
                    .collect()
            })
        };
        match format {
            TableFormat::Csv => {
                for group in self.chunks.chunks(self.window) {
                    self.check_interrupt()?;
                    for bytes in &rows_of(group) {
                        file.writer()
                            .write_all(bytes)
                            .map_err(|e| Error::io(&temp, e))?;
                    }
                    self.progress
                        .advance(group.iter().map(|r| r.end - r.start).sum());
                }
            }
            TableFormat::Parquet => {
                let types: Vec<_> = names.iter().map(|n| cells_column_type(n)).collect();
                let mut table = ParquetTable::new(file.writer(), &names, types.clone())
                    .map_err(parquet_error)?;
                self.write_cells_parquet(&mut table, &frontier_ids, mode, &types, &parquet_error)?;
                table.finish().map_err(parquet_error)?;
            }
        }
        Ok(file)
    }

    /// Pass 2 into `cells.parquet`: row groups of a fixed number of chunks (so the file's bytes
    /// do not depend on the thread count), each encoded outside the file
    /// ([`Self::encode_row_group`]) and appended in order while the next one is encoded (so the
    /// copy into the file and the pool's encoding overlap instead of taking turns).
    fn write_cells_parquet<W: std::io::Write + Send>(
        &self,
        table: &mut ParquetTable<W>,
        frontier_ids: &BTreeSet<u64>,
        mode: CellsMode,
        types: &[ColumnType],
        parquet_error: &(dyn Fn(String) -> Error + Sync),
    ) -> Result<()> {
        let encoder = table.encoder();
        // The previous group, encoded and not yet appended (none when it had no rows).
        let mut pending: Option<(Vec<ColumnBuffer>, ClosedRowGroup)> = None;
        for group in self.chunks.chunks(PARQUET_ROW_GROUP_CHUNKS) {
            let mut buffers = encoder.buffers();
            let mut encoding = encoder.start(&mut buffers);
            let previous = pending.take();
            let (appended, rows) = self.pool.install(|| {
                rayon::join(
                    || previous.map(|(b, closed)| table.append_row_group(b, closed)),
                    || {
                        self.encode_row_group(
                            &mut encoding,
                            group,
                            frontier_ids,
                            mode,
                            types,
                            parquet_error,
                        )
                    },
                )
            });
            appended.transpose().map_err(parquet_error)?;
            let rows = rows?;
            let closed = encoding.close().map_err(parquet_error)?;
            if rows > 0 {
                pending = Some((buffers, closed));
            }
        }
        if let Some((buffers, closed)) = pending {
            table
                .append_row_group(buffers, closed)
                .map_err(parquet_error)?;
        }
        Ok(())
    }

    /// One row group's chunks, a window at a time: each window's rows are filed into typed
    /// columns on the pool, then the columns encode them on the pool, one task per column; a
    /// window is encoded while the next one is filed, so neither waits for the other and only
    /// two windows of rows are held. The group's row count.
    fn encode_row_group(
        &self,
        encoding: &mut RowGroupEncoder<'_>,
        group: &[std::ops::Range<u64>],
        frontier_ids: &BTreeSet<u64>,
        mode: CellsMode,
        types: &[ColumnType],
        parquet_error: &(dyn Fn(String) -> Error + Sync),
    ) -> Result<usize> {
        let cells_of = |w: &[std::ops::Range<u64>]| w.iter().map(|r| r.end - r.start).sum();
        let encode = |columns: &mut [ColumnChunkEncoder<'_>], parts: &[TypedRows]| {
            columns
                .par_iter_mut()
                .try_for_each(|column| column.write(parts))
        };
        let mut rows = 0;
        // The previous window's rows and cell count, filed and not yet encoded.
        let mut pending: Option<(Vec<TypedRows>, u64)> = None;
        for window in group.chunks(self.window) {
            self.check_interrupt()?;
            let columns = encoding.columns_mut();
            let (encoded, parts) = self.pool.install(|| {
                rayon::join(
                    || pending.as_ref().map(|(parts, _)| encode(columns, parts)),
                    || self.column_parts(window, frontier_ids, mode, types),
                )
            });
            encoded.transpose().map_err(parquet_error)?;
            self.progress.advance(pending.map_or(0, |(_, cells)| cells));
            let parts = parts.map_err(parquet_error)?;
            rows += parts.iter().map(TypedRows::rows).sum::<usize>();
            pending = Some((parts, cells_of(window)));
        }
        if let Some((parts, cells)) = pending {
            let columns = encoding.columns_mut();
            self.pool
                .install(|| encode(columns, &parts))
                .map_err(parquet_error)?;
            self.progress.advance(cells);
        }
        Ok(rows)
    }

    /// A group of chunks' rows filed into typed columns on the pool, one part per chunk, in
    /// order.
    fn column_parts(
        &self,
        group: &[std::ops::Range<u64>],
        frontier_ids: &BTreeSet<u64>,
        mode: CellsMode,
        types: &[ColumnType],
    ) -> std::result::Result<Vec<TypedRows>, String> {
        self.pool.install(|| {
            group
                .par_iter()
                .map(|ids| chunk_columns(self.grid, ids.clone(), frontier_ids, mode, types))
                .collect()
        })
    }

    /// Pass 2 into a sink: the same rows as `cells.parquet`'s row groups, in the same groups and
    /// order, handed over instead of written. A sink that stops reading stops the sweep
    /// ([`Error::Interrupted`]; nothing is committed).
    fn cells_to_sink(
        &self,
        aggregate: &Aggregate,
        mode: CellsMode,
        sink: &dyn CellsSink,
    ) -> Result<()> {
        let frontier_ids = aggregate.front_ids();
        self.progress.phase("cells");
        let mut names = cell_columns();
        names.extend(target_columns(self.grid));
        let types: Vec<_> = names.iter().map(|n| cells_column_type(n)).collect();
        let stopped = || {
            self.progress.abandon();
            Error::Interrupted
        };
        let expected_rows = match mode {
            CellsMode::All | CellsMode::Feasible => {
                self.chunks.iter().map(|r| r.end - r.start).sum()
            }
            CellsMode::Frontier | CellsMode::None => 0,
        };
        if sink.columns(&names, &types, expected_rows).is_break() {
            return Err(stopped());
        }
        for group in self.chunks.chunks(sink.chunks_per_group().max(1)) {
            self.check_interrupt()?;
            let parts = self
                .column_parts(group, &frontier_ids, mode, &types)
                .map_err(|m| {
                    Error::io(
                        std::path::Path::new("cells table"),
                        std::io::Error::other(m),
                    )
                })?;
            if sink.rows(parts).is_break() {
                return Err(stopped());
            }
            self.progress
                .advance(group.iter().map(|r| r.end - r.start).sum());
        }
        if sink.finish().is_break() {
            return Err(stopped());
        }
        Ok(())
    }
}

/// The error for a grid none of whose cells can run: how many fail for each reason, and what to
/// change for the most common one. Nothing is written.
fn all_infeasible(grid: &Grid, aggregate: &Aggregate) -> Error {
    let reasons: Vec<String> = aggregate
        .infeasible_counts()
        .filter(|(_, n)| *n > 0)
        .map(|(kind, n)| format!("{}: {}", kind.code(), crate::format::thousands(n as f64)))
        .collect();
    let fix = aggregate
        .infeasible_counts()
        .max_by_key(|(_, n)| *n)
        .map(|(kind, _)| kind.fix())
        .unwrap_or_default();
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

/// The data rows (lines after the header) and SHA-256 of a CSV file.
pub(super) fn csv_digest(path: &std::path::Path) -> Result<(u64, String)> {
    use sha2::Digest;
    use std::io::Read;
    let mut file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut hasher = sha2::Sha256::new();
    let mut lines = 0u64;
    let mut buffer = vec![0u8; 1 << 16];
    loop {
        let n = file.read(&mut buffer).map_err(|e| Error::io(path, e))?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        lines += buffer[..n].iter().filter(|b| **b == b'\n').count() as u64;
    }
    Ok((
        lines.saturating_sub(1),
        crate::format::hex(&hasher.finalize()),
    ))
}

/// Marks for removal after the commit the outputs of an earlier run in the folder that these do
/// not replace and would contradict: a cells file of the other format (or any, when this run
/// writes none), Parquet tables beside CSV ones, PNG plots when none are drawn. Only files the
/// folder's manifest says this tool wrote are touched.
fn remove_stale_outputs(
    staged: &mut crate::report::Staged,
    options: &SweepOptions,
    writes_cells: bool,
) {
    let previous = crate::report::previous_outputs(&options.out_dir);
    let mut remove_stale = |name: String| {
        if previous.contains(&name) {
            staged.remove_after_commit(&options.out_dir.join(name));
        }
    };
    for format in [TableFormat::Csv, TableFormat::Parquet] {
        if !writes_cells || format != options.format {
            remove_stale(format.cells_file().to_string());
        }
    }
    if options.format == TableFormat::Csv {
        for table in ["frontier", "allocation_frontier", "shortlist"] {
            remove_stale(format!("{table}.parquet"));
        }
    }
    if !options.png {
        for plot in crate::report::plots::PLOT_NAMES {
            remove_stale(format!("plots/{plot}.png"));
        }
    }
}

/// Writes everything derived from the aggregate and commits all outputs together.
#[allow(clippy::too_many_arguments)]
pub(super) fn finish(
    grid: &Grid,
    catalog: &Catalog,
    options: &SweepOptions,
    mode: CellsMode,
    (aggregate, other_targets): (Aggregate, &[(Grid, Aggregate)]),
    cells_file: Option<AtomicFile>,
    total: u64,
    slice: u64,
    threads: usize,
    started: Instant,
) -> Result<SweepSummary> {
    let decisions =
        thread_pool(options)?.install(|| crate::analysis::decision::decide(grid, &aggregate));
    crate::interrupt::check()?;
    let mut staged = crate::report::write_sweep_outputs(
        grid,
        &aggregate,
        &decisions,
        &options.out_dir,
        other_targets,
        crate::report::OutputFormats {
            parquet: options.format == TableFormat::Parquet,
            png: options.png,
        },
    )?;
    let mut aggregate_sha256 = None;
    if options.shard.is_some() {
        let mut text = serde_json::to_string(&aggregate).expect("json");
        text.push('\n');
        staged.add(&options.out_dir.join("aggregate.json"), text.as_bytes())?;
        use sha2::Digest;
        aggregate_sha256 = Some(crate::format::hex(&sha2::Sha256::digest(text.as_bytes())));
    }
    remove_stale_outputs(&mut staged, options, cells_file.is_some());
    let mut files = Vec::new();
    let mut cells_digest = None;
    if let Some(file) = cells_file {
        files.push(file.final_path().to_path_buf());
        let temp = file.temp_path().to_path_buf();
        staged.add_file(file)?;
        if options.shard.is_some() && options.format == TableFormat::Csv {
            cells_digest = Some(csv_digest(&temp)?);
        }
    }
    let cells_path = files.first().cloned();
    files.extend(
        staged
            .paths()
            .into_iter()
            .filter(|p| Some(p) != cells_path.as_ref()),
    );
    files.push(options.out_dir.join("manifest.json"));
    let summary = SweepSummary {
        cells_total: total,
        cells_in_slice: slice,
        cells_pruned: aggregate.pruned,
        cells_evaluated: aggregate.evaluated,
        cells_feasible: aggregate.feasible,
        infeasible_by_code: aggregate
            .infeasible_counts()
            .map(|(kind, n)| (kind.code().to_string(), n))
            .collect(),
        mean_usd_share_search: aggregate.mean_usd_share_search(),
        mean_flops_share_search: aggregate.mean_flops_share_search(),
        threads,
        elapsed_seconds: started.elapsed().as_secs_f64(),
        files,
        decisions,
        cells_digest,
        aggregate_sha256,
    };
    // The manifest joins the same commit: the folder never holds new tables beside an old
    // manifest (or the reverse).
    let manifest = Manifest::of(grid, catalog, options, mode, &summary);
    staged.add(
        &options.out_dir.join("manifest.json"),
        manifest.to_json_text().as_bytes(),
    )?;
    staged.commit()?;
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::frontier::CostBasis;

    /// What an aggregate says once finished: the fronts, the allocation, the pools, the sample.
    fn finished(a: &Aggregate) -> String {
        let fronts = [CostBasis::BudgetUnit, CostBasis::Usd].map(|b| a.front(b));
        serde_json::to_string(&(
            (a.evaluated, a.pruned, a.feasible, a.infeasible),
            (a.usd_share_search_sum, a.flops_share_search_sum),
            fronts,
            a.allocation.iter().collect::<Vec<_>>(),
            a.shortlist_pool.iter().collect::<Vec<_>>(),
            a.sorted_sample(),
        ))
        .expect("serialisable")
    }

    #[test]
    fn the_first_pass_aggregates_what_every_whole_point_would() {
        // Pass 1 builds a cell's point only when the aggregate takes it (the front guard, the
        // floors, the sample): the aggregate must be the one of every cell's whole point. A slice
        // of ten-million large enough for the front candidates to be reduced and the guard rebuilt.
        let catalog = Catalog::embedded();
        let grid = crate::spec::load(std::path::Path::new("ten-million"), &catalog).unwrap();
        let ids = 3_000_000..3_030_000u64;
        let mut whole = Aggregate::default();
        for (id, cell) in grid.cells_in(ids.clone()) {
            let Some(cell) = cell else { continue };
            let e = crate::evaluate::evaluate(&grid, cell);
            whole.evaluated += 1;
            match e.ledger.infeasible {
                None => {
                    let cost = crate::evaluate::cost_in_budget_unit(&grid, &e.ledger);
                    whole.add_feasible(Point::of(&cell, &e.ledger, &e.prediction, cost), 11);
                }
                Some(reason) => whole.add_infeasible(reason.kind()),
            }
            assert_eq!(cell.id, id);
        }
        whole.compact();
        let lazy = aggregate_chunk(&grid, ids, 11);
        assert!(lazy.feasible > 20_000);
        assert_eq!(finished(&lazy), finished(&whole));
        assert_eq!(
            serde_json::to_string(&lazy).unwrap(),
            serde_json::to_string(&whole).unwrap()
        );
    }

    #[test]
    fn runs_seeded_with_earlier_floors_aggregate_as_chunks_merged_one_by_one() {
        // The sweep's pass 1 joins chunks into one run per thread and hands each run the
        // shortlist floors of the cells before it; the result must be the plain chunk-by-chunk
        // merge, whatever the run length (small chunks here, so pools fill and trim).
        let catalog = Catalog::embedded();
        let grid = crate::spec::load(std::path::Path::new("race-pilot"), &catalog).unwrap();
        let total = grid.cell_count().unwrap();
        let chunks: Vec<std::ops::Range<u64>> = (0..total)
            .step_by(97)
            .map(|s| s..(s + 97).min(total))
            .collect();
        let mut plain = Aggregate::default();
        for ids in &chunks {
            plain.merge(aggregate_chunk(&grid, ids.clone(), 7));
        }
        for (window, parts) in [(3, 2), (8, 3), (chunks.len(), 1)] {
            let mut seeded = Aggregate::default();
            for group in chunks.chunks(window) {
                let mut joined = Aggregate::default();
                for run in consecutive_runs(group, parts) {
                    joined.merge(aggregate_after(&grid, run, 7, &seeded));
                }
                seeded.merge(joined);
            }
            assert_eq!(
                finished(&seeded),
                finished(&plain),
                "window {window}, {parts} runs"
            );
        }
    }

    #[test]
    fn parquet_columns_hold_what_the_csv_rows_parse_to() {
        // cells.parquet is filled by the rows' serialisation, not by parsing cells.csv back; on
        // real grids (one with several target metrics) the two must be the same typed rows.
        let catalog = Catalog::embedded();
        for name in ["race-pilot", "targets"] {
            let grid = crate::spec::load(std::path::Path::new(name), &catalog).unwrap();
            let mut names = cell_columns();
            names.extend(target_columns(&grid));
            let types: Vec<ColumnType> = names.iter().map(|n| cells_column_type(n)).collect();
            let ids = 0..grid.cell_count().unwrap().min(3000);
            let frontier = BTreeSet::from([1, 5, 8]);
            for mode in [CellsMode::All, CellsMode::Feasible, CellsMode::Frontier] {
                let csv = write_chunk(&grid, ids.clone(), &frontier, mode);
                let via_csv = crate::report::parquet::typed_rows_from_csv(&types, &csv).unwrap();
                let direct = chunk_columns(&grid, ids.clone(), &frontier, mode, &types).unwrap();
                assert_eq!(direct, via_csv, "{name}, {mode:?}");
            }
        }
    }

    /// A sink that keeps what it is given, or stops at once, or refuses at the end.
    #[derive(Default)]
    struct Kept {
        names: std::sync::Mutex<Vec<String>>,
        parts: std::sync::Mutex<Vec<TypedRows>>,
        refuse: bool,
        refuse_at_end: bool,
    }

    impl CellsSink for Kept {
        fn columns(&self, names: &[String], _: &[ColumnType], _: u64) -> std::ops::ControlFlow<()> {
            *self.names.lock().unwrap() = names.to_vec();
            if self.refuse {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        }
        fn rows(&self, parts: Vec<TypedRows>) -> std::ops::ControlFlow<()> {
            self.parts.lock().unwrap().extend(parts);
            std::ops::ControlFlow::Continue(())
        }
        fn finish(&self) -> std::ops::ControlFlow<()> {
            if self.refuse_at_end {
                std::ops::ControlFlow::Break(())
            } else {
                std::ops::ControlFlow::Continue(())
            }
        }
    }

    /// Rows concatenated: per column, the levels and each present value's debug text.
    fn concatenated(parts: &[TypedRows]) -> Vec<(Vec<i16>, Vec<String>)> {
        use crate::report::parquet::ColumnData;
        fn texts(data: &ColumnData) -> Vec<String> {
            match data {
                ColumnData::Int(v) => v.iter().map(|x| format!("{x:?}")).collect(),
                ColumnData::Double(v) => v.iter().map(|x| format!("{:x}", x.to_bits())).collect(),
                ColumnData::Bool(v) => v.iter().map(|x| format!("{x:?}")).collect(),
                ColumnData::Text(v) => v.iter().map(|x| format!("{x:?}")).collect(),
            }
        }
        let columns = parts.first().map_or(0, |p| p.levels().len());
        (0..columns)
            .map(|c| {
                let levels = parts.iter().flat_map(|p| p.levels()[c].clone()).collect();
                let values = parts.iter().flat_map(|p| texts(&p.data()[c])).collect();
                (levels, values)
            })
            .collect()
    }

    #[test]
    fn a_sink_gets_the_rows_of_cells_csv_and_the_folder_no_cells_file() {
        let catalog = Catalog::embedded();
        let grid = crate::spec::load(std::path::Path::new("race-pilot"), &catalog).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let options = |out: &str, format| SweepOptions {
            out_dir: dir.path().join(out),
            threads: Some(2),
            shard: None,
            max_cells: u64::MAX,
            force: false,
            cells: Some(CellsMode::All),
            format,
            png: false,
        };
        let stop = AtomicBool::new(false);
        let progress = crate::engine::NoProgress;
        let kept = Kept::default();
        let sunk = options("sink", TableFormat::Parquet);
        let summary =
            run_sweep_into(&grid, &catalog, &sunk, &progress, &stop, Some(&kept)).unwrap();
        assert!(summary.files.iter().all(|f| !f.ends_with("cells.parquet")));
        assert!(!sunk.out_dir.join("cells.parquet").exists());
        let csv = options("csv", TableFormat::Csv);
        run_sweep(&grid, &catalog, &csv, &progress, &stop).unwrap();
        let text = std::fs::read(csv.out_dir.join("cells.csv")).unwrap();
        let newline = text.iter().position(|&b| b == b'\n').unwrap();
        let (header, body) = (&text[..newline], &text[newline + 1..]);
        let names = kept.names.lock().unwrap().clone();
        assert_eq!(names.join(",").as_bytes(), header);
        let types: Vec<ColumnType> = names.iter().map(|n| cells_column_type(n)).collect();
        let via_csv = crate::report::parquet::typed_rows_from_csv(&types, body).unwrap();
        let parts = kept.parts.lock().unwrap();
        assert_eq!(
            parts.iter().map(TypedRows::rows).sum::<usize>() as u64,
            grid.cell_count().unwrap()
        );
        assert_eq!(
            concatenated(&parts),
            concatenated(std::slice::from_ref(&via_csv))
        );
        // A sink that stops reading stops the sweep, and nothing is committed.
        let refused = Kept {
            refuse: true,
            ..Kept::default()
        };
        let stopped = options("stopped", TableFormat::Parquet);
        let outcome = run_sweep_into(&grid, &catalog, &stopped, &progress, &stop, Some(&refused));
        assert!(matches!(outcome, Err(Error::Interrupted)));
        assert!(!stopped.out_dir.join("manifest.json").exists());
        // So does one that took every row but was not read to its end.
        let unread = Kept {
            refuse_at_end: true,
            ..Kept::default()
        };
        let late = options("late", TableFormat::Parquet);
        let outcome = run_sweep_into(&grid, &catalog, &late, &progress, &stop, Some(&unread));
        assert!(matches!(outcome, Err(Error::Interrupted)));
        assert!(!late.out_dir.join("manifest.json").exists());
    }

    #[test]
    fn consecutive_runs_cover_the_chunks_in_order() {
        let chunks: Vec<std::ops::Range<u64>> = (0..10u64).map(|i| i * 5..i * 5 + 5).collect();
        assert_eq!(consecutive_runs(&chunks, 3), vec![0..20, 20..40, 40..50]);
        assert_eq!(consecutive_runs(&chunks, 1), vec![0..50]);
        assert_eq!(consecutive_runs(&chunks, 64).len(), 10);
        assert!(consecutive_runs(&[], 2).is_empty());
    }
}
