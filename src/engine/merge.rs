//! `merge`: shard outputs combined into exactly what an unsharded sweep writes.

use crate::spec::Axis;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::Instant;

use super::sweep::finish;
use super::{CellsMode, Manifest, SweepOptions, SweepSummary};
use crate::analysis::frontier::Aggregate;
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::report::cells::{cell_columns, start_cells_csv};
use crate::report::{AtomicFile, prepare_output_dir};

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
    let shards = read_shards(shard_dirs)?;
    let mode = shards[0].mode;
    let grid = shards_grid(&shards, catalog)?;
    let total_cells = grid
        .cell_count()
        .map_err(|m| Error::in_file(&grid.path, None, "axes", m))?;
    let aggregate = merged_aggregate(&shards, &grid, total_cells)?;
    // Writing into a shard's own folder would destroy the shard being read.
    let out_canonical = std::fs::canonicalize(out_dir).ok();
    for s in &shards {
        if out_canonical.is_some() && std::fs::canonicalize(&s.dir).ok() == out_canonical {
            return Err(Error::in_setting(
                "out",
                format!(
                    "{} is shard {}'s folder; merge into a new folder",
                    out_dir.display(),
                    s.index
                ),
            ));
        }
    }
    // Locked before its owner is checked, so no other run slips in between.
    let _folder = crate::report::LockedFolder::take(out_dir)?;
    prepare_output_dir(out_dir, &grid, force)?;
    crate::report::remove_stale_temporaries(out_dir);
    let cells_file = match mode {
        CellsMode::None => None,
        _ => Some(merged_cells(&shards, out_dir, &aggregate, mode)?),
    };
    let options = SweepOptions {
        out_dir: out_dir.to_path_buf(),
        threads: None,
        shard: None,
        max_cells: u64::MAX,
        force,
        cells: Some(mode),
        format: super::TableFormat::Csv,
        png: false,
    };
    finish(
        &grid,
        catalog,
        &options,
        mode,
        (aggregate, &[]),
        cells_file,
        total_cells,
        total_cells,
        1,
        started,
    )
}

/// The grid the shards were swept from, with their calibration: refused when the tool version,
/// the catalog, the calibration file or the grid file differ from the shards'.
fn shards_grid(shards: &[Shard], catalog: &Catalog) -> Result<crate::spec::Grid> {
    let (first_file, first_sha) = (&shards[0].file, &shards[0].sha);
    // The grid as named when sweeping (relative to that working directory), else as seen from
    // the shard's folder (merge may run from elsewhere).
    let grid_path = {
        let as_given = PathBuf::from(first_file);
        let from_shard = shards[0].dir.join(&shards[0].file_from_output);
        if as_given.is_file() || shards[0].file_from_output.is_empty() || !from_shard.is_file() {
            as_given
        } else {
            from_shard
        }
    };
    let mut grid = crate::spec::load(&grid_path, catalog)?;
    let (tool_version, catalog_sha, calibration_file, calibration_sha) = &shards[0].provenance;
    if tool_version != crate::VERSION {
        return Err(Error::in_file(
            &shards[0].dir.join("manifest.json"),
            None,
            "tool_version",
            format!(
                "the shards were swept by rlfrontier {tool_version}, this is {}; sweep them again with this version",
                crate::VERSION
            ),
        ));
    }
    if !catalog_sha.is_empty() && *catalog_sha != catalog.sha256() {
        return Err(Error::in_setting(
            "catalog",
            "the shards were priced with another catalog; pass merge the same ⟨catalog⟩ FILE the shards were swept with",
        ));
    }
    // The merged outputs carry the shards' calibration, checked to be the same file.
    if let (Some(file), Some(sha)) = (calibration_file, calibration_sha) {
        super::calibration_file::apply(&mut grid, Path::new(file))?;
        if let crate::outcome::OutcomeState::Calibrated { sha256, .. } = &grid.outcome_state
            && sha256 != sha
        {
            return Err(Error::in_file(
                Path::new(file),
                None,
                "",
                "changed since the shards were swept with it; sweep the shards again",
            ));
        }
    }
    if grid.sha256 != *first_sha {
        return Err(Error::in_file(
            &grid_path,
            None,
            "",
            "the grid file changed since the shards were swept; sweep again",
        ));
    }
    Ok(grid)
}

/// The shards' aggregates merged, each checked to describe its own slice of the grid and all of
/// them the whole grid.
fn merged_aggregate(
    shards: &[Shard],
    grid: &crate::spec::Grid,
    total_cells: u64,
) -> Result<Aggregate> {
    let mut aggregate = Aggregate::default();
    for s in shards {
        let path = s.dir.join("aggregate.json");
        let text = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, e))?;
        // Every number merge uses is the shard's own: the file must be the one its sweep wrote.
        use sha2::Digest;
        let digest = crate::format::hex(&sha2::Sha256::digest(text.as_bytes()));
        if s.aggregate_sha256.as_deref() != Some(digest.as_str()) {
            return Err(Error::in_file(
                &path,
                None,
                "",
                format!(
                    "is not the aggregate shard {}/{}'s sweep wrote: the aggregate.json was copied or edited (its SHA-256 differs from the manifest's, or the manifest records none): sweep the shard again",
                    s.index, s.count
                ),
            ));
        }
        let part: Aggregate = serde_json::from_str(&text)
            .map_err(|e| Error::in_file(&path, Some(e.line()), "", e.to_string()))?;
        // Each shard's aggregate must describe its own slice: its cell count, and every cell it
        // names inside the slice (a copied or edited aggregate fails here).
        let range = super::shard_range(total_cells, s.index, s.count);
        let outside = part
            .front_candidates
            .iter()
            .chain(part.sample.iter())
            .chain(part.shortlist_pool.values().flatten())
            .chain(part.allocation.values())
            .find(|p| !range.contains(&p.id));
        // Each budget's pool holds cells of that budget (a key no cell has would be decided
        // as a budget the grid does not have).
        let misfiled = part
            .shortlist_pool
            .iter()
            .any(|(&b, cells)| cells.iter().any(|p| grid.decode(p.id)[Axis::Budget] != b));
        if part.evaluated + part.pruned != range.end - range.start || outside.is_some() || misfiled
        {
            return Err(Error::in_file(
                &path,
                None,
                "",
                format!(
                    "does not describe shard {}/{} (cells {}..{}): the aggregate.json was copied or edited; sweep the shard again",
                    s.index, s.count, range.start, range.end
                ),
            ));
        }
        aggregate.merge(part);
    }
    if aggregate.evaluated + aggregate.pruned != total_cells {
        return Err(Error::in_setting(
            "DIR",
            format!(
                "the shards' aggregates count {} cells but the grid has {}; an aggregate.json was copied or edited: sweep the shards again",
                aggregate.evaluated + aggregate.pruned,
                total_cells
            ),
        ));
    }
    Ok(aggregate)
}

/// One shard's output folder, as its manifest describes it.
struct Shard {
    dir: PathBuf,
    index: u64,
    count: u64,
    sha: String,
    file: String,
    file_from_output: String,
    mode: CellsMode,
    /// What the shard's numbers were computed with: tool version, catalog hash, calibration
    /// (file and hash).
    provenance: (String, String, Option<String>, Option<String>),
    /// Its cells file's data rows and SHA-256, as its sweep wrote them.
    cells_digest: Option<(u64, String)>,
    /// Cells in its slice.
    range: std::ops::Range<u64>,
    /// The SHA-256 of its `aggregate.json` as its sweep wrote it.
    aggregate_sha256: Option<String>,
}

/// Reads every shard's manifest and checks they are shards 0..N of one grid file with one
/// `--cells` mode, each given once; sorted by index.
fn read_shards(shard_dirs: &[PathBuf]) -> Result<Vec<Shard>> {
    let mut shards = shard_dirs
        .iter()
        .map(|dir| read_shard(dir))
        .collect::<Result<Vec<_>>>()?;
    if shards.is_empty() {
        return Err(Error::in_setting("DIR", "give the shard folders to merge"));
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
                    "shards must be 0..{count} of the same grid file with the same ⟨cells⟩; found shard {}/{} of grid {}…",
                    s.index,
                    s.count,
                    &s.sha[..12.min(s.sha.len())]
                ),
            ));
        }
    }
    same_provenance(&shards)?;
    if shards.len() as u64 != count {
        return Err(Error::in_setting(
            "DIR",
            format!(
                "{} of {count} shards given; every shard is needed",
                shards.len()
            ),
        ));
    }
    Ok(shards)
}

/// One shard folder's manifest, as the merge needs it; refused unless `sweep --shard` wrote it.
fn read_shard(dir: &Path) -> Result<Shard> {
    let path = dir.join("manifest.json");
    let manifest = Manifest::read(&path)?;
    let Some(shard) = manifest.shard else {
        return Err(Error::in_file(
            &path,
            None,
            "shard",
            "not the output of `sweep ⟨shard⟩ I/N`",
        ));
    };
    let cells_digest = shard.cells_rows.zip(shard.cells_sha256.clone());
    let range = super::shard_range(manifest.cells.total, shard.index, shard.count);
    if manifest.model_identity != crate::identity::model_identity() {
        return Err(Error::in_file(
            &path,
            None,
            "model_identity",
            format!(
                "the shard was computed by another build of the model ({} against this build's {}); sweep every shard with the same rlfrontier as the merge",
                if manifest.model_identity.is_empty() {
                    "none recorded"
                } else {
                    manifest.model_identity.as_str()
                },
                crate::identity::model_identity()
            ),
        ));
    }
    Ok(Shard {
        aggregate_sha256: shard.aggregate_sha256.clone(),
        cells_digest,
        range,
        dir: dir.to_path_buf(),
        index: shard.index,
        count: shard.count,
        sha: manifest.grid.sha256,
        file: manifest.grid.file,
        file_from_output: manifest.grid.file_from_output,
        mode: manifest.cells_mode,
        provenance: (
            manifest.tool_version,
            manifest.catalog_sha256,
            manifest.outcome.calibration_file,
            manifest.outcome.calibration_sha256,
        ),
    })
}

/// Every shard must have been computed with the same tool, catalog and calibration as shard 0.
fn same_provenance(shards: &[Shard]) -> Result<()> {
    for s in &shards[1..] {
        let (a, b) = (&shards[0].provenance, &s.provenance);
        let differs = if a.0 != b.0 {
            Some(format!("rlfrontier {} against {}", b.0, a.0))
        } else if a.1 != b.1 {
            Some("another catalog (a different ⟨catalog⟩ override)".to_string())
        } else if a.3 != b.3 {
            Some(format!(
                "another calibration ({} against {})",
                b.2.as_deref().unwrap_or("none"),
                a.2.as_deref().unwrap_or("none")
            ))
        } else {
            None
        };
        if let Some(what) = differs {
            return Err(Error::in_file(
                &s.dir.join("manifest.json"),
                None,
                "",
                format!(
                    "shard {} was computed with {what} than shard 0; sweep every shard the same way",
                    s.index
                ),
            ));
        }
    }
    Ok(())
}

/// The shards' `cells.csv` rows concatenated in shard order (that is, cell order), with
/// `on_frontier` recomputed over the merged front. Rows stream from each shard's file to the
/// output one at a time (memory does not grow with the shards), and a stop request (SIGINT,
/// SIGTERM) is honoured every [`INTERRUPT_CHECK_ROWS`] rows.
fn merged_cells(
    shards: &[Shard],
    out_dir: &Path,
    aggregate: &Aggregate,
    mode: CellsMode,
) -> Result<AtomicFile> {
    let frontier_ids = aggregate.front_ids();
    let (mut file, temp) = start_cells_csv(out_dir, &[])?;
    {
        let mut writer = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(file.writer());
        for s in shards {
            let path = s.dir.join("cells.csv");
            let (rows, sha) =
                copy_shard_cells(&path, &frontier_ids, (mode, &s.range), (&mut writer, &temp))?;
            // The file must be the one the shard's sweep wrote: its row count and hash, checked
            // before the merged file is committed (a mismatch leaves nothing written).
            let Some((want_rows, want_sha)) = &s.cells_digest else {
                return Err(Error::in_file(
                    &s.dir.join("manifest.json"),
                    None,
                    "shard.cells_sha256",
                    "records no hash of the shard's cells.csv; sweep the shard again with this version",
                ));
            };
            if rows != *want_rows || sha != *want_sha {
                return Err(Error::in_file(
                    &path,
                    None,
                    "",
                    format!(
                        "is not the file shard {}/{}'s sweep wrote ({rows} rows against {want_rows} in its manifest, or another SHA-256): it was copied, edited or cut short; sweep the shard again",
                        s.index, s.count
                    ),
                ));
            }
        }
        writer.flush().map_err(|e| Error::io(&temp, e))?;
    }
    Ok(file)
}

/// Rows between two checks for a stop request while merging cells.
pub const INTERRUPT_CHECK_ROWS: usize = 65_536;

/// Copies one shard's `cells.csv` rows to `writer`, with `on_frontier` recomputed over the
/// whole grid (and only frontier rows kept in frontier mode). Columns are found by name; a shard
/// written with other columns (another tool version) is refused. Write errors name `out_path`.
///
/// Every row's id must lie in the shard's slice, in increasing order (a row copied from another
/// shard, or repeated, fails at once). Returns the rows read and the file's SHA-256.
fn copy_shard_cells<W: std::io::Write>(
    path: &Path,
    frontier_ids: &BTreeSet<u64>,
    (mode, slice): (CellsMode, &std::ops::Range<u64>),
    (writer, out_path): (&mut csv::Writer<W>, &Path),
) -> Result<(u64, String)> {
    if !path.exists() && path.with_extension("parquet").exists() {
        return Err(Error::in_file(
            &path.with_extension("parquet"),
            None,
            "",
            "merge combines CSV shards; sweep the shards without ⟨format⟩ parquet (or merge with ⟨cells⟩ none)",
        ));
    }
    let file =
        std::fs::File::open(path).map_err(|e| Error::in_file(path, None, "", e.to_string()))?;
    let mut reader = csv::Reader::from_reader(HashingReader::new(file));
    let header = reader
        .headers()
        .map_err(|e| Error::in_file(path, Some(1), "", e.to_string()))?
        .clone();
    if header.iter().collect::<Vec<_>>() != cell_columns() {
        return Err(Error::in_file(
            path,
            Some(1),
            "",
            "these are not the columns this version writes; sweep the shard again",
        ));
    }
    let column = |name: &str| header.iter().position(|h| h == name).expect("checked");
    let (id_column, frontier_column) = (column("cell_id"), column("on_frontier"));
    let mut record = csv::StringRecord::new();
    let mut k = 0usize;
    let mut previous: Option<u64> = None;
    while reader
        .read_record(&mut record)
        .map_err(|e| Error::in_file(path, Some(k + 2), "", e.to_string()))?
    {
        if k.is_multiple_of(INTERRUPT_CHECK_ROWS) {
            crate::interrupt::check()?;
        }
        let id: u64 = record
            .get(id_column)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Error::in_file(path, Some(k + 2), "cell_id", "not a cell id"))?;
        if !slice.contains(&id) || previous.is_some_and(|p| id <= p) {
            return Err(Error::in_file(
                path,
                Some(k + 2),
                "cell_id",
                format!(
                    "cell {id} is not the next cell of this shard's slice ({}..{}); the file was copied or edited: sweep the shard again",
                    slice.start, slice.end
                ),
            ));
        }
        previous = Some(id);
        k += 1;
        let on = frontier_ids.contains(&id);
        if mode == CellsMode::Frontier && !on {
            continue;
        }
        let flag = if on { "true" } else { "false" };
        let fields = record
            .iter()
            .enumerate()
            .map(|(j, field)| if j == frontier_column { flag } else { field });
        writer
            .write_record(fields)
            .map_err(|e| Error::io(out_path, std::io::Error::other(e.to_string())))?;
    }
    // The rest of the file (nothing after the last record, normally) joins the hash.
    let mut rest = reader.into_inner();
    std::io::copy(&mut rest, &mut std::io::sink()).map_err(|e| Error::io(path, e))?;
    Ok((k as u64, rest.hex_digest()))
}

/// A reader that hashes what passes through it (SHA-256).
struct HashingReader<R> {
    inner: R,
    hasher: sha2::Sha256,
}

impl<R: std::io::Read> HashingReader<R> {
    fn new(inner: R) -> Self {
        use sha2::Digest;
        HashingReader {
            inner,
            hasher: sha2::Sha256::new(),
        }
    }

    fn hex_digest(self) -> String {
        use sha2::Digest;
        crate::format::hex(&self.hasher.finalize())
    }
}

impl<R: std::io::Read> std::io::Read for HashingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        use sha2::Digest;
        let n = self.inner.read(buffer)?;
        self.hasher.update(&buffer[..n]);
        Ok(n)
    }
}
