//! Everything written for a reader: `cells.csv` rows ([`cells`]), frontier and shortlist tables
//! ([`tables`]), plots ([`plots`]), the HTML report ([`html`]), and atomic staging: files are
//! written to a temporary name in the destination folder and renamed into place, so a reader
//! never sees half a file, and an interrupted or failed run leaves nothing behind.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::analysis::frontier::Aggregate;
use crate::error::{Error, Result};
use crate::spec::Grid;

pub mod cells;
pub mod html;
pub mod parquet;
pub mod plots;
pub mod tables;
pub mod targets;

/// Files written under temporary names, renamed into place together by [`Staged::commit`]; if
/// dropped uncommitted, every temporary file is removed.
#[derive(Default)]
pub struct Staged {
    files: Vec<(std::path::PathBuf, AtomicFile)>,
}

impl Staged {
    /// Stages a whole file.
    pub fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut file = AtomicFile::create(path)?;
        let temp = file.temp_path().to_path_buf();
        file.writer()
            .write_all(bytes)
            .map_err(|e| Error::io(&temp, e))?;
        self.files.push((path.to_path_buf(), file));
        Ok(())
    }

    /// Takes over another set of staged files.
    pub fn extend(&mut self, other: Staged) {
        self.files.extend(other.files);
    }

    /// Renames every staged file into place; returns their paths.
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        let mut paths = Vec::new();
        for (path, file) in self.files {
            file.commit()?;
            paths.push(path);
        }
        Ok(paths)
    }
}

/// Writes the sweep's derived outputs (frontier tables, shortlist, plots, report) under
/// temporary names; the caller commits them once everything succeeded.
pub fn write_sweep_outputs(
    grid: &Grid,
    aggregate: &Aggregate,
    out_dir: &Path,
    other_targets: &[(Grid, Aggregate)],
    parquet: bool,
) -> Result<Staged> {
    let mut staged = Staged::default();
    let shortlist = crate::analysis::shortlist::select(grid, aggregate);
    // Other target metrics: each view's own outputs under targets/<metric>/, and the comparison.
    let mut comparison_html = String::new();
    if !other_targets.is_empty() {
        let others: Vec<Vec<crate::analysis::shortlist::Entry>> = other_targets
            .iter()
            .map(|(view, agg)| crate::analysis::shortlist::select(view, agg))
            .collect();
        let primary_name = grid.metric.clone().unwrap_or_default();
        let mut compared = vec![targets::TargetShortlist {
            name: &primary_name,
            grid,
            shortlist: &shortlist,
        }];
        for ((view, _), list) in other_targets.iter().zip(&others) {
            compared.push(targets::TargetShortlist {
                name: view.metric.as_deref().unwrap_or_default(),
                grid: view,
                shortlist: list,
            });
        }
        staged.add(
            &out_dir.join("targets.md"),
            targets::targets_markdown(grid, &compared).as_bytes(),
        )?;
        comparison_html = targets::targets_section(grid, &compared);
        for (index, (view, agg)) in other_targets.iter().enumerate() {
            let dir = out_dir
                .join("targets")
                .join(grid.targets[index + 1].folder_name());
            std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
            staged.extend(write_target_outputs(
                view,
                agg,
                &others[index],
                &dir,
                "",
                parquet,
            )?);
        }
    }
    staged.extend(write_target_outputs(
        grid,
        aggregate,
        &shortlist,
        out_dir,
        &comparison_html,
        parquet,
    )?);
    Ok(staged)
}

/// One target's frontier tables, shortlist, plots and report, staged.
fn write_target_outputs(
    grid: &Grid,
    aggregate: &Aggregate,
    shortlist: &[crate::analysis::shortlist::Entry],
    out_dir: &Path,
    comparison_html: &str,
    parquet: bool,
) -> Result<Staged> {
    let mut staged = Staged::default();
    for (name, bytes) in [
        ("frontier", tables::frontier_csv(grid, aggregate)),
        (
            "allocation_frontier",
            tables::allocation_csv(grid, aggregate),
        ),
        ("shortlist", tables::shortlist_csv(grid, shortlist)),
    ] {
        staged.add(&out_dir.join(format!("{name}.csv")), &bytes)?;
        if parquet {
            let path = out_dir.join(format!("{name}.parquet"));
            let table = self::parquet::csv_table_to_parquet(&bytes)
                .map_err(|m| Error::io(&path, std::io::Error::other(m)))?;
            staged.add(&path, &table)?;
        }
    }
    staged.add(
        &out_dir.join("shortlist.md"),
        tables::shortlist_markdown(grid, shortlist).as_bytes(),
    )?;
    let plots_dir = out_dir.join("plots");
    std::fs::create_dir_all(&plots_dir).map_err(|e| Error::io(&plots_dir, e))?;
    let svgs = plots::render_all(grid, aggregate);
    for (name, svg) in &svgs {
        staged.add(&plots_dir.join(name), svg.as_bytes())?;
    }
    let html = html::render(grid, aggregate, shortlist, &svgs, comparison_html);
    staged.add(&out_dir.join("report.html"), html.as_bytes())?;
    Ok(staged)
}

/// A file being written under a temporary name; [`AtomicFile::commit`] renames it into place,
/// dropping it without committing removes the temporary file.
pub struct AtomicFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    writer: Option<BufWriter<File>>,
}

impl AtomicFile {
    /// Starts writing `path` (its folder must exist).
    pub fn create(path: &Path) -> Result<Self> {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".to_string());
        let temp_path = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
        let file = File::create(&temp_path).map_err(|e| Error::io(&temp_path, e))?;
        Ok(AtomicFile {
            final_path: path.to_path_buf(),
            temp_path,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
        })
    }

    /// The writer of the temporary file.
    pub fn writer(&mut self) -> &mut BufWriter<File> {
        self.writer.as_mut().expect("not yet committed")
    }

    /// The temporary file's path (for error messages).
    pub fn temp_path(&self) -> &Path {
        &self.temp_path
    }

    /// Flushes, syncs and renames the file into place.
    pub fn commit(mut self) -> Result<()> {
        let writer = self.writer.take().expect("not yet committed");
        let file = writer
            .into_inner()
            .map_err(|e| Error::io(&self.temp_path, e.into_error()))?;
        file.sync_all().map_err(|e| Error::io(&self.temp_path, e))?;
        std::fs::rename(&self.temp_path, &self.final_path)
            .map_err(|e| Error::io(&self.final_path, e))?;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.writer.take().is_some() {
            let _ = std::fs::remove_file(&self.temp_path);
        }
    }
}

/// Creates an output folder, or says which `--out` cannot be created and why (exit code 2).
pub fn create_output_dir(dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::in_setting(
            "out",
            format!(
                "cannot create {}: {e}; choose a folder you can write to",
                dir.display()
            ),
        )
    })
}

/// Writes a whole file atomically.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut file = AtomicFile::create(path)?;
    let temp = file.temp_path().to_path_buf();
    file.writer()
        .write_all(bytes)
        .map_err(|e| Error::io(&temp, e))?;
    file.commit()
}

/// Creates the output folder, refusing to overwrite the results of a different grid (a
/// `manifest.json` naming another grid) unless `force` is set.
pub fn prepare_output_dir(dir: &Path, grid_name: &str, force: bool) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::in_setting(
            "out",
            format!(
                "{} is a file, not a folder; choose another --out",
                dir.display()
            ),
        ));
    }
    let manifest = dir.join("manifest.json");
    if !force && let Ok(text) = std::fs::read_to_string(&manifest) {
        let previous = serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| {
                v.get("grid")
                    .and_then(|g| g.get("name"))
                    .and_then(|n| n.as_str().map(str::to_string))
            });
        match previous {
            Some(name) if name == grid_name => {}
            Some(name) => {
                return Err(Error::in_file(
                    &manifest,
                    None,
                    "grid.name",
                    format!(
                        "{} holds results of grid `{name}`, not `{grid_name}`; choose another --out or pass --force to replace them",
                        dir.display()
                    ),
                ));
            }
            None => {
                return Err(Error::in_file(
                    &manifest,
                    None,
                    "",
                    format!(
                        "{} holds a manifest rlfrontier cannot read; choose another --out or pass --force to replace it",
                        dir.display()
                    ),
                ));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dropped_file_leaves_nothing_behind() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.csv");
        {
            let mut f = AtomicFile::create(&path).unwrap();
            f.writer().write_all(b"half").unwrap();
        }
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        write_atomic(&path, b"whole").unwrap();
        assert_eq!(std::fs::read(&path).unwrap(), b"whole");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn refuses_other_grids_results() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("manifest.json"),
            r#"{"grid":{"name":"other"}}"#,
        )
        .unwrap();
        let err = prepare_output_dir(dir.path(), "mine", false).unwrap_err();
        assert!(create_output_dir(&dir.path().join("manifest.json").join("sub")).is_err());
        assert!(err.to_string().contains("--force"));
        assert!(prepare_output_dir(dir.path(), "other", false).is_ok());
        assert!(prepare_output_dir(dir.path(), "mine", true).is_ok());
    }
}
