//! Output files: written to a temporary name in the destination folder and renamed into place, so
//! a reader never sees half a file, and an interrupted or failed run leaves nothing behind.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

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
    std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
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
        assert!(err.to_string().contains("--force"));
        assert!(prepare_output_dir(dir.path(), "other", false).is_ok());
        assert!(prepare_output_dir(dir.path(), "mine", true).is_ok());
    }
}
