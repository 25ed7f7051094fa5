//! Everything written for a reader: `cells.csv` rows ([`cells`]), frontier and shortlist tables
//! ([`tables`]), the recommendation's sentences ([`recommendation`]), plots ([`plots`]), the HTML report ([`html`]), and atomic staging: files are
//! written to a temporary name in the destination folder and renamed into place, so a reader
//! never sees half a file, and an interrupted or failed run leaves nothing behind
//! ([`AtomicFile`], [`Staged`], [`OutputLock`]).

use std::path::Path;

use crate::analysis::decision::Decision;
use crate::analysis::frontier::Aggregate;
use crate::analysis::shortlist::Entry;
use crate::error::{Error, Result};
use crate::spec::Grid;

mod atomic;
pub mod cells;
pub mod columns;
pub mod html;
pub mod parquet;
pub mod plots;
pub mod png;
pub mod recommendation;
pub mod row_group;
pub mod tables;
pub mod targets;

pub use atomic::{
    AtomicFile, LockedFolder, OutputLock, Staged, remove_stale_temporaries, write_atomic,
};

/// Which copies of the tables and plots a sweep writes besides the CSVs and SVGs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct OutputFormats {
    /// A `.parquet` copy of every CSV table.
    pub parquet: bool,
    /// A `.png` copy of every plot.
    pub png: bool,
}

/// Writes the sweep's derived outputs (frontier tables, shortlist, plots, report) under
/// temporary names; the caller commits them once everything succeeded.
/// `decisions` are the primary target's ([`crate::analysis::decision::decide`]); the other
/// targets' are computed here.
pub fn write_sweep_outputs(
    grid: &Grid,
    aggregate: &Aggregate,
    decisions: &[Decision],
    out_dir: &Path,
    other_targets: &[(Grid, Aggregate)],
    formats: OutputFormats,
) -> Result<Staged> {
    let mut staged = Staged::default();
    let shortlist = crate::analysis::decision::shortlist_entries(decisions);
    // Other target metrics: each view's own outputs under targets/<metric>/, and the comparison.
    let mut comparison_html = String::new();
    if !other_targets.is_empty() {
        let other_decisions: Vec<Vec<Decision>> = other_targets
            .iter()
            .map(|(view, agg)| crate::analysis::decision::decide(view, agg))
            .collect();
        let others: Vec<Vec<Entry>> = other_decisions
            .iter()
            .map(|ds| {
                ds.iter()
                    .flat_map(|d| d.shortlist.iter().cloned())
                    .collect()
            })
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
                &other_decisions[index],
                &dir,
                "",
                formats,
            )?);
        }
    }
    staged.extend(write_target_outputs(
        grid,
        aggregate,
        decisions,
        out_dir,
        &comparison_html,
        formats,
    )?);
    Ok(staged)
}

/// One target's frontier tables, shortlist, plots and report, staged.
fn write_target_outputs(
    grid: &Grid,
    aggregate: &Aggregate,
    decisions: &[Decision],
    out_dir: &Path,
    comparison_html: &str,
    formats: OutputFormats,
) -> Result<Staged> {
    let mut staged = Staged::default();
    for (name, table) in [
        ("frontier", tables::frontier_csv(grid, aggregate, decisions)),
        (
            "allocation_frontier",
            tables::allocation_csv(grid, aggregate),
        ),
        ("shortlist", tables::shortlist_csv(grid, decisions)),
    ] {
        staged.add(&out_dir.join(format!("{name}.csv")), &table.to_csv())?;
        if formats.parquet {
            let path = out_dir.join(format!("{name}.parquet"));
            let bytes = self::parquet::small_table_to_parquet(&table)
                .map_err(|m| Error::io(&path, std::io::Error::other(m)))?;
            staged.add(&path, &bytes)?;
        }
    }
    staged.add(
        &out_dir.join("shortlist.md"),
        tables::shortlist_markdown(grid, decisions).as_bytes(),
    )?;
    let plots_dir = out_dir.join("plots");
    std::fs::create_dir_all(&plots_dir).map_err(|e| Error::io(&plots_dir, e))?;
    let svgs = plots::render_all(grid, aggregate, decisions);
    for (name, svg) in &svgs {
        staged.add(&plots_dir.join(name), svg.as_bytes())?;
        if formats.png {
            let path = plots_dir.join(name.replace(".svg", ".png"));
            let bytes =
                png::svg_to_png(svg).map_err(|m| Error::io(&path, std::io::Error::other(m)))?;
            staged.add(&path, &bytes)?;
        }
    }
    let html = html::render(grid, aggregate, decisions, &svgs, comparison_html);
    staged.add(&out_dir.join("report.html"), html.as_bytes())?;
    Ok(staged)
}

/// Checks a single-file output before anything is read or computed: it is never one of the
/// run's inputs (the same file, by device and inode, whatever the spelling), never a folder, and
/// an existing file is replaced only with `force` (the tool cannot tell its own file from the
/// user's there). `inputs` that do not exist are ignored.
pub fn check_file_out(setting: &str, out: &Path, inputs: &[&Path], force: bool) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let Ok(meta) = std::fs::metadata(out) else {
        return Ok(());
    };
    if meta.is_dir() {
        return Err(Error::in_setting(
            setting,
            format!("{} is a folder; name the file to write", out.display()),
        ));
    }
    let same = |input: &Path| {
        std::fs::metadata(input).is_ok_and(|m| m.dev() == meta.dev() && m.ino() == meta.ino())
    };
    if let Some(input) = inputs.iter().find(|i| same(i)) {
        return Err(Error::in_setting(
            setting,
            format!(
                "{} is also an input of this run ({}); write the output to another file",
                out.display(),
                input.display()
            ),
        ));
    }
    if !force {
        return Err(Error::in_setting(
            setting,
            format!(
                "{} exists; pass ⟨force⟩ to replace it, or choose another file",
                out.display()
            ),
        ));
    }
    Ok(())
}

/// Refuses a folder that holds files but not `marker` (this tool's manifest or plan), unless
/// `force`: those files are someone else's. With `force` the tool writes its own files beside
/// them and removes none of theirs (see [`previous_outputs`]).
pub fn refuse_foreign_files(dir: &Path, marker: &str, force: bool) -> Result<()> {
    refuse_foreign_files_but(dir, marker, force, &[])
}

/// [`refuse_foreign_files`], where `own` names files the calling command itself wrote there
/// first (`fit --logs` keeps the collected results as `results.csv`).
pub fn refuse_foreign_files_but(dir: &Path, marker: &str, force: bool, own: &[&str]) -> Result<()> {
    if force {
        return Ok(());
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Ok(());
    };
    // This tool's own temporaries and backups (a killed run's) do not make the folder foreign.
    let foreign = entries.flatten().any(|e| {
        let name = e.file_name().to_string_lossy().into_owned();
        !atomic::is_own_temporary(&name) && !own.contains(&name.as_str())
    });
    if !foreign {
        return Ok(());
    }
    Err(Error::in_setting(
        "out",
        format!(
            "{} holds files but no {marker} of rlfrontier; choose an empty or new ⟨out⟩, or pass ⟨force⟩ to write rlfrontier's files beside them (it replaces only its own and deletes none of the others)",
            dir.display()
        ),
    ))
}

/// The files the folder's manifest says an earlier run of this tool wrote there (relative
/// names; empty without a readable manifest). Stale outputs are removed only from this list.
pub fn previous_outputs(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("manifest.json"))
        .ok()
        .and_then(|text| serde_json::from_str::<serde_json::Value>(&text).ok())
        .and_then(|v| {
            v.get("files").and_then(|f| f.as_array()).map(|files| {
                files
                    .iter()
                    .filter_map(|f| f.as_str().map(str::to_string))
                    .collect()
            })
        })
        .unwrap_or_default()
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

/// Refuses an output folder path that names a file.
pub fn refuse_a_file(dir: &Path) -> Result<()> {
    if dir.exists() && !dir.is_dir() {
        return Err(Error::in_setting(
            "out",
            format!(
                "{} is a file, not a folder; choose another ⟨out⟩",
                dir.display()
            ),
        ));
    }
    Ok(())
}

/// Checks the output folder, refusing to overwrite the results of a different grid unless
/// `force` is set. The folder's `manifest.json` names the grid that wrote it: its results are
/// this grid's when the SHA-256 matches, or when the name and the file match (the same grid file,
/// edited). A manifest that cannot be read counts as another grid's, never as absent.
pub fn prepare_output_dir(dir: &Path, grid: &Grid, force: bool) -> Result<()> {
    refuse_a_file(dir)?;
    let manifest = dir.join("manifest.json");
    if !manifest.exists() {
        return refuse_foreign_files(dir, "manifest.json", force);
    }
    if force {
        return Ok(());
    }
    let unreadable = |why: String| {
        Error::in_file(
            &manifest,
            None,
            "",
            format!(
                "{} holds a manifest rlfrontier cannot read ({why}); choose another ⟨out⟩ or pass ⟨force⟩ to replace it",
                dir.display()
            ),
        )
    };
    let text = std::fs::read_to_string(&manifest).map_err(|e| unreadable(e.to_string()))?;
    let value: serde_json::Value =
        serde_json::from_str(&text).map_err(|e| unreadable(e.to_string()))?;
    let field = |key: &str| {
        value
            .get("grid")
            .and_then(|g| g.get(key))
            .and_then(|n| n.as_str())
            .map(str::to_string)
    };
    let (Some(name), sha, file) = (field("name"), field("sha256"), field("file")) else {
        return Err(unreadable("no grid name".to_string()));
    };
    let same_hash = sha.as_deref() == Some(grid.sha256.as_str());
    let same_file = name == grid.name && file.as_deref() == Some(&*grid.path.to_string_lossy());
    if same_hash || same_file {
        return Ok(());
    }
    let what = if name == grid.name {
        format!(
            "grid `{name}` from another file ({})",
            file.unwrap_or_default()
        )
    } else {
        format!("grid `{name}`")
    };
    Err(Error::in_file(
        &manifest,
        None,
        "grid",
        format!(
            "{} holds results of {what}, not of `{}` ({}); choose another ⟨out⟩ or pass ⟨force⟩ to replace them",
            dir.display(),
            grid.name,
            grid.path.display()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

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
    fn refuses_other_grids_results_by_hash_or_file_not_name_alone() {
        let catalog = crate::catalog::Catalog::embedded();
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("grids/race-pilot.toml");
        let grid = crate::spec::load(&path, &catalog).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let write = |json: &str| std::fs::write(dir.path().join("manifest.json"), json).unwrap();
        // Another grid's results.
        write(r#"{"grid":{"name":"other","sha256":"00","file":"x.toml"}}"#);
        let err = prepare_output_dir(dir.path(), &grid, false).unwrap_err();
        assert!(err.to_string().contains("pass force"), "{err}");
        let shown = err.with_flag_names().to_string();
        assert!(shown.contains("--force") && !shown.contains("⟨"), "{shown}");
        assert!(prepare_output_dir(dir.path(), &grid, true).is_ok());
        // The same name from another file is not the same grid.
        write(r#"{"grid":{"name":"race-pilot","sha256":"00","file":"elsewhere/race-pilot.toml"}}"#);
        let err = prepare_output_dir(dir.path(), &grid, false).unwrap_err();
        assert!(err.to_string().contains("from another file"), "{err}");
        // The same file edited, or the same bytes anywhere, is.
        write(&format!(
            r#"{{"grid":{{"name":"race-pilot","sha256":"00","file":"{}"}}}}"#,
            path.display()
        ));
        assert!(prepare_output_dir(dir.path(), &grid, false).is_ok());
        write(&format!(
            r#"{{"grid":{{"name":"x","sha256":"{}","file":"y"}}}}"#,
            grid.sha256
        ));
        assert!(prepare_output_dir(dir.path(), &grid, false).is_ok());
        // An unreadable manifest is never taken as absent.
        write("{not json");
        let err = prepare_output_dir(dir.path(), &grid, false).unwrap_err();
        assert!(err.to_string().contains("cannot read"), "{err}");
        assert!(create_output_dir(&dir.path().join("manifest.json").join("sub")).is_err());
    }
}
