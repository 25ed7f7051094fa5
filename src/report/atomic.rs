//! How every output reaches the disk: written under a temporary name, synced, then renamed into
//! place, a set of files all together or not at all; with a lock on the output folder for the
//! duration, and the temporary files of killed runs cleaned up by the next one.
//!
//! - [`AtomicFile`]: one file under `.NAME.rlfrontier-tmp-PID`. Its temporary file is removed on every
//!   failure path: the cleanup stays armed until the rename has succeeded.
//! - [`Staged`]: a set of files committed as one: every destination is checked first (a folder
//!   where a file should go fails before anything moves), existing files are moved aside to
//!   `.NAME.rlfrontier-bak-PID`, the new ones renamed in, and on any failure the moved-aside files are put
//!   back and the temporary files removed, so the folder holds either the old outputs or the new
//!   ones. Files to delete (stale outputs of another format) go only after success; the commit
//!   journal lists them, so a run killed after the commit point has them deleted by the next.
//! - [`OutputLock`]: an exclusive OS lock on the output folder itself (released by the kernel
//!   when the process dies, even by SIGKILL) so two runs cannot write one folder at once.
//! - [`remove_stale_temporaries`]: temporary and backup files whose process is gone (the PID in
//!   their name no longer runs), left by a SIGKILL or a power cut, removed before a new write.
//!   Only names carrying this tool's token are touched, only in the output folder and the
//!   subfolders this tool writes (never behind a symlink): a user's own `.x.bak-1` is never
//!   this tool's.

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The token every temporary and backup name of this tool carries.
const TOKEN: &str = "rlfrontier";

/// The suffix marking a temporary file of process `pid`.
fn temp_suffix(kind: &str, pid: u32) -> String {
    format!(".{TOKEN}-{kind}-{pid}")
}

/// Whether a file name is one of this tool's temporaries, backups or commit journals
/// (`.NAME.rlfrontier-tmp-PID-RANDOM`, `.NAME.rlfrontier-bak-PID`, `.rlfrontier-commit-PID`).
pub fn is_own_temporary(name: &str) -> bool {
    name.starts_with('.')
        && ["tmp", "bak", "commit"]
            .iter()
            .any(|kind| owner_pid(name, kind).is_some())
}

/// The process id in one of this tool's names of `kind` (`….rlfrontier-KIND-PID`, a temporary
/// also `-RANDOM` after it), or None when `name` is not one.
fn owner_pid(name: &str, kind: &str) -> Option<u32> {
    let marker = format!(".{TOKEN}-{kind}-");
    let at = name.rfind(&marker)?;
    let rest = &name[at + marker.len()..];
    let pid = match (kind, rest.split_once('-')) {
        ("tmp", Some((pid, random))) if random.bytes().all(|b| b.is_ascii_hexdigit()) => pid,
        _ => rest,
    };
    (!pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit()))
        .then(|| pid.parse().ok())
        .flatten()
}

/// 64 unpredictable bits (the standard library's randomly seeded hasher, fresh per call): a
/// temporary's name cannot be guessed ahead to plant a link there.
fn random_hex() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    format!("{:016x}", h.finish())
}

/// Creates `path` as a new file: never opens what is already there, a symlink planted at the
/// name included (`O_CREAT | O_EXCL` does not follow links).
fn create_new(path: &Path) -> Result<File> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(path)
        .map_err(|e| Error::io(path, e))
}

/// The subfolders of an output folder this tool writes (`targets` holds one folder per metric,
/// each with its own `plots`).
const OWN_SUBFOLDERS: [&str; 3] = ["plots", "launch", "targets"];

/// How deep below the output folder the cleanup looks (`targets/METRIC/plots`).
const OWN_DEPTH: usize = 3;

/// `.NAME.rlfrontier-KIND-PID` beside `path`, for process `pid`.
fn sibling_of(path: &Path, kind: &str, pid: u32) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".to_string());
    path.with_file_name(format!(".{name}{}", temp_suffix(kind, pid)))
}

/// A file being written under a temporary name; [`AtomicFile::commit`] renames it into place.
/// Dropped without a successful commit, it removes its temporary file.
pub struct AtomicFile {
    final_path: PathBuf,
    temp_path: PathBuf,
    writer: Option<BufWriter<File>>,
    armed: bool,
}

impl AtomicFile {
    /// Starts writing `path` (its folder must exist).
    pub fn create(path: &Path) -> Result<Self> {
        if path.is_dir() {
            return Err(Error::in_setting(
                "out",
                format!(
                    "{} is a folder where a file should be written; remove it or choose another ⟨out⟩",
                    path.display()
                ),
            ));
        }
        let name = path
            .file_name()
            .map_or_else(|| "out".to_string(), |n| n.to_string_lossy().into_owned());
        let temp_path = path.with_file_name(format!(
            ".{name}{}-{}",
            temp_suffix("tmp", std::process::id()),
            random_hex()
        ));
        let file = create_new(&temp_path)?;
        Ok(AtomicFile {
            final_path: path.to_path_buf(),
            temp_path,
            writer: Some(BufWriter::with_capacity(1 << 20, file)),
            armed: true,
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

    /// Where the file goes.
    pub fn final_path(&self) -> &Path {
        &self.final_path
    }

    /// Flushes, syncs and closes the temporary file; the cleanup stays armed.
    fn finish_writing(&mut self) -> Result<()> {
        if let Some(writer) = self.writer.take() {
            let file = writer
                .into_inner()
                .map_err(|e| Error::io(&self.temp_path, e.into_error()))?;
            file.sync_all().map_err(|e| Error::io(&self.temp_path, e))?;
        }
        Ok(())
    }

    /// Flushes, syncs and renames the file into place. On any failure the temporary file is
    /// removed and the destination is untouched.
    pub fn commit(mut self) -> Result<()> {
        // A stop request wins over the rename: the old file stays, the temporary goes.
        crate::interrupt::check()?;
        self.finish_writing()?;
        std::fs::rename(&self.temp_path, &self.final_path)
            .map_err(|e| Error::io(&self.final_path, e))?;
        self.armed = false;
        Ok(())
    }
}

impl Drop for AtomicFile {
    fn drop(&mut self) {
        if self.armed {
            drop(self.writer.take());
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

/// Files staged under temporary names, renamed into place together by [`Staged::commit`].
#[derive(Default)]
pub struct Staged {
    files: Vec<AtomicFile>,
    removals: Vec<PathBuf>,
}

impl Staged {
    /// Stages a whole file (written, synced and closed now: no file stays open).
    pub fn add(&mut self, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut file = AtomicFile::create(path)?;
        let temp = file.temp_path().to_path_buf();
        file.writer()
            .write_all(bytes)
            .map_err(|e| Error::io(&temp, e))?;
        file.finish_writing()?;
        self.files.push(file);
        Ok(())
    }

    /// Stages a file written elsewhere (a streamed table).
    pub fn add_file(&mut self, mut file: AtomicFile) -> Result<()> {
        file.finish_writing()?;
        self.files.push(file);
        Ok(())
    }

    /// Deletes `path`, if it exists, once the commit has succeeded (a stale output).
    pub fn remove_after_commit(&mut self, path: &Path) {
        self.removals.push(path.to_path_buf());
    }

    /// Takes over another set of staged files.
    pub fn extend(&mut self, other: Staged) {
        self.files.extend(other.files);
        self.removals.extend(other.removals);
    }

    /// The destinations, in staging order.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files.iter().map(|f| f.final_path.clone()).collect()
    }

    /// Renames every staged file into place, all or nothing; returns their paths.
    ///
    /// Crash consistency: before the first rename a journal (`.rlfrontier-commit-PID` in the
    /// top folder of the set) lists every destination and whether it existed. A run killed at
    /// any instant of the commit (even by SIGKILL) leaves that journal; the next run's
    /// [`remove_stale_temporaries`] finds it and rolls the set back to the old files. Once every
    /// new file is in place the journal is replaced, in one rename, by a committed one listing
    /// the stale outputs to delete: that is the commit point. A run killed after it is finished
    /// forward by the next one (backups and those stale outputs deleted), never rolled back.
    pub fn commit(self) -> Result<Vec<PathBuf>> {
        self.commit_until(usize::MAX, std::process::id())
    }

    /// [`Staged::commit`], stopping dead after `renames` renames as a SIGKILL would (for the
    /// crash tests; `usize::MAX` never stops), with `pid` in the journal's and backups' names.
    fn commit_until(mut self, renames: usize, pid: u32) -> Result<Vec<PathBuf>> {
        crate::interrupt::check()?;
        for file in &self.files {
            if file.final_path.is_dir() {
                return Err(Error::in_setting(
                    "out",
                    format!(
                        "{} is a folder where a file should be written; remove it or choose another ⟨out⟩",
                        file.final_path.display()
                    ),
                ));
            }
        }
        let journal = self.write_journal(pid)?;
        // (destination, backup of what it held) for the files already swapped in.
        let mut done: Vec<(PathBuf, Option<PathBuf>)> = Vec::new();
        let outcome = self.swap_in(renames, pid, &mut done);
        if renames != usize::MAX && outcome.is_err() {
            // A crash test: leave everything as a SIGKILL would (the temporaries too).
            for file in &mut self.files {
                file.armed = false;
            }
            return outcome.map(|()| Vec::new());
        }
        match outcome {
            Ok(()) => self.finish_forward(journal.as_deref(), &done, renames, pid),
            Err(error) => {
                // Put the old outputs back, newest first; the remaining temporaries go with
                // `self` (their cleanup is still armed).
                for (path, backup) in done.iter().rev() {
                    match backup {
                        Some(b) => {
                            let _ = std::fs::rename(b, path);
                        }
                        None => {
                            let _ = std::fs::remove_file(path);
                        }
                    }
                }
                if let Some(j) = &journal {
                    let _ = std::fs::remove_file(j);
                }
                Err(error)
            }
        }
    }

    /// Moves each staged file into place, what it replaces to a backup first; `done` gathers
    /// (destination, backup) for each file swapped in. Stops after `renames` renames (crash
    /// tests; `usize::MAX` never stops).
    fn swap_in(
        &mut self,
        renames: usize,
        pid: u32,
        done: &mut Vec<(PathBuf, Option<PathBuf>)>,
    ) -> Result<()> {
        let mut renamed = 0usize;
        for file in &mut self.files {
            let backup = if file.final_path.exists() {
                let backup = sibling_of(&file.final_path, "bak", pid);
                if renamed == renames {
                    return Err(Error::in_setting("out", "stopped (crash test)"));
                }
                std::fs::rename(&file.final_path, &backup)
                    .map_err(|e| Error::io(&file.final_path, e))?;
                renamed += 1;
                Some(backup)
            } else {
                None
            };
            if renamed == renames {
                return Err(Error::in_setting("out", "stopped (crash test)"));
            }
            if let Err(e) = std::fs::rename(&file.temp_path, &file.final_path) {
                if let Some(b) = &backup {
                    let _ = std::fs::rename(b, &file.final_path);
                }
                return Err(Error::io(&file.final_path, e));
            }
            renamed += 1;
            file.armed = false;
            done.push((file.final_path.clone(), backup));
        }
        if renamed == renames {
            // Crash test: every file in place, the commit point not yet reached.
            return Err(Error::in_setting("out", "stopped (crash test)"));
        }
        Ok(())
    }

    /// With every file in place: the commit point, then the backups, the stale outputs and the
    /// journal deleted. `renames` just below `usize::MAX` stops dead at the crash tests' points.
    fn finish_forward(
        &self,
        journal: Option<&Path>,
        done: &[(PathBuf, Option<PathBuf>)],
        renames: usize,
        pid: u32,
    ) -> Result<Vec<PathBuf>> {
        // The commit point: the new set is complete, and the journal is replaced (one rename)
        // by one that says so, so a run killed from here on is finished forward by the next one
        // (backups and stale outputs deleted), never rolled back.
        if let Some(j) = journal {
            self.mark_committed(j, pid)?;
        }
        if renames == usize::MAX - 1 {
            return Ok(Vec::new()); // crash test: killed just after the commit point
        }
        for (_, backup) in done {
            if let Some(b) = backup {
                let _ = std::fs::remove_file(b);
            }
        }
        if renames == usize::MAX - 2 {
            // Crash test: killed between deleting the backups and the stale outputs.
            return Ok(Vec::new());
        }
        for path in &self.removals {
            if path.exists() {
                std::fs::remove_file(path).map_err(|e| Error::io(path, e))?;
            }
        }
        if let Some(j) = journal {
            std::fs::remove_file(j).map_err(|e| Error::io(j, e))?;
        }
        Ok(self.files.iter().map(|f| f.final_path.clone()).collect())
    }

    /// The folder the journal goes in: the top folder of the staged set.
    fn journal_folder(&self) -> Option<&Path> {
        self.files
            .iter()
            .filter_map(|f| f.final_path.parent())
            .min_by_key(|p| p.components().count())
    }

    /// The journal's lines for the stale outputs to delete after the commit: `r`, a tab, the
    /// path relative to `top`.
    fn removal_lines(&self, top: &Path) -> String {
        let mut text = String::new();
        for path in &self.removals {
            let relative = path.strip_prefix(top).unwrap_or(path);
            text.push_str("r\t");
            text.push_str(&relative.to_string_lossy());
            text.push('\n');
        }
        text
    }

    /// Writes the commit journal (synced, then renamed into place): one line per destination,
    /// `1` or `0` (it existed or not), a tab, its path relative to the journal's folder, then
    /// the removals. None when nothing is staged.
    fn write_journal(&self, pid: u32) -> Result<Option<PathBuf>> {
        let Some(top) = self.journal_folder() else {
            return Ok(None);
        };
        let mut text = String::new();
        for f in &self.files {
            let relative = f.final_path.strip_prefix(top).unwrap_or(&f.final_path);
            text.push_str(if f.final_path.exists() { "1\t" } else { "0\t" });
            text.push_str(&relative.to_string_lossy());
            text.push('\n');
        }
        text.push_str(&self.removal_lines(top));
        let journal = top.join(format!(".{TOKEN}-commit-{pid}"));
        replace_synced(&journal, &text, pid)?;
        Ok(Some(journal))
    }

    /// Replaces the journal by its committed form: [`COMMITTED`], then the removals.
    fn mark_committed(&self, journal: &Path, pid: u32) -> Result<()> {
        let top = journal.parent().unwrap_or(Path::new("."));
        let text = format!("{COMMITTED}\n{}", self.removal_lines(top));
        replace_synced(journal, &text, pid)
    }
}

/// The first line of a journal whose commit point was passed: the next run finishes it forward.
const COMMITTED: &str = "committed";

/// Writes `text` to `path` through a synced temporary renamed over it (one atomic step).
fn replace_synced(path: &Path, text: &str, pid: u32) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let temp = path.with_file_name(format!("{name}.{TOKEN}-tmp-{pid}-{}", random_hex()));
    let mut file = create_new(&temp)?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::io(&temp, e))?;
    std::fs::rename(&temp, path).map_err(|e| Error::io(path, e))
}

/// Settles the commit a dead process's journal describes. Before the commit point every
/// destination that had a backup gets its old file back and every destination that did not
/// exist is removed; after it (a [`COMMITTED`] journal) the new set stays and the stale outputs
/// it lists are deleted (its backups then go with the other stale temporaries). Then the journal
/// goes. Returns the paths restored or removed.
fn roll_back(journal: &Path, pid: u32) -> Vec<PathBuf> {
    let mut touched = Vec::new();
    let Some(top) = journal.parent() else {
        return touched;
    };
    let Ok(text) = std::fs::read_to_string(journal) else {
        return touched;
    };
    let committed = text.lines().next() == Some(COMMITTED);
    for line in text.lines() {
        let Some((kind, relative)) = line.split_once('\t') else {
            continue;
        };
        // Only paths inside the folder (the journal is this tool's, but never trust a path).
        let relative = Path::new(relative);
        if relative.is_absolute()
            || relative
                .components()
                .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            continue;
        }
        // Every folder on the way is a real folder (a planted symlink would lead outside), and
        // only files of the kinds this tool writes are touched.
        if !within_without_links(top, relative) || !is_output_name(relative) {
            continue;
        }
        let destination = top.join(relative);
        let regular_file = |path: &Path| std::fs::symlink_metadata(path).is_ok_and(|m| m.is_file());
        if kind == "r" {
            if committed && regular_file(&destination) && std::fs::remove_file(&destination).is_ok()
            {
                touched.push(destination);
            }
            continue;
        }
        if committed {
            continue;
        }
        let existed = kind;
        let backup = sibling_of(&destination, "bak", pid);
        if std::fs::symlink_metadata(&backup).is_ok_and(|m| m.is_file()) {
            if std::fs::rename(&backup, &destination).is_ok() {
                touched.push(destination);
            }
        } else if existed == "0"
            && std::fs::symlink_metadata(&destination).is_ok_and(|m| m.is_file())
            && std::fs::remove_file(&destination).is_ok()
        {
            touched.push(destination);
        }
    }
    let _ = std::fs::remove_file(journal);
    touched
}

/// Whether every folder of `relative` below `top` is a real folder, not a symlink: a path of a
/// journal never leads outside the output folder.
fn within_without_links(top: &Path, relative: &Path) -> bool {
    let mut at = top.to_path_buf();
    let parts: Vec<_> = relative.components().collect();
    for part in &parts[..parts.len().saturating_sub(1)] {
        let std::path::Component::Normal(name) = part else {
            return false;
        };
        at.push(name);
        if !std::fs::symlink_metadata(&at).is_ok_and(|m| m.is_dir()) {
            return false;
        }
    }
    !parts.is_empty()
}

/// Whether a path names a file of a kind this tool writes (its outputs' extensions): a journal
/// never makes the tool delete anything else.
fn is_output_name(path: &Path) -> bool {
    const OUTPUTS: [&str; 11] = [
        "csv", "json", "svg", "png", "html", "md", "parquet", "sh", "txt", "toml", "jsonl",
    ];
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| OUTPUTS.contains(&e))
}

/// Whether process `pid` is running (Linux: `/proc/PID` exists; elsewhere assumed running, so
/// nothing of another live process is ever removed).
fn process_alive(pid: u32) -> bool {
    if pid == std::process::id() {
        return true;
    }
    let proc = Path::new("/proc");
    if proc.is_dir() {
        proc.join(pid.to_string()).exists()
    } else {
        true
    }
}

/// Removes, in `dir` and the subfolders this tool writes there, the temporary
/// (`.NAME.rlfrontier-tmp-PID`) and backup (`.NAME.rlfrontier-bak-PID`) files of processes that
/// no longer run; a backup is restored first when its file is missing (a run killed mid-commit).
/// Symlinks are never followed or touched. Returns what was removed or restored.
pub fn remove_stale_temporaries(dir: &Path) -> Vec<PathBuf> {
    let mut touched = Vec::new();
    // An interrupted commit first: its journal rolls the set back to the old files.
    let marker = format!(".{TOKEN}-commit-");
    if let Ok(entries) = std::fs::read_dir(dir) {
        let mut journals: Vec<(PathBuf, u32)> = entries
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                let pid = name.strip_prefix(&marker)?.parse::<u32>().ok()?;
                Some((e.path(), pid))
            })
            .filter(|(_, pid)| !process_alive(*pid))
            .collect();
        journals.sort();
        for (journal, pid) in journals {
            touched.extend(roll_back(&journal, pid));
        }
    }
    clean_folder(dir, 0, &mut touched);
    touched
}

fn clean_folder(dir: &Path, depth: usize, touched: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let path = entry.path();
        // The entry itself, not what a symlink points to.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let name = entry.file_name().to_string_lossy().into_owned();
        if kind.is_dir() {
            let own = depth == 0 && OWN_SUBFOLDERS.contains(&name.as_str())
                || depth > 0 && dir.ancestors().any(|a| a.ends_with("targets"));
            if own && depth + 1 < OWN_DEPTH {
                clean_folder(&path, depth + 1, touched);
            }
            continue;
        }
        if !kind.is_file() {
            continue;
        }
        let Some(rest) = name.strip_prefix('.') else {
            continue;
        };
        for kind in ["tmp", "bak"] {
            let marker = format!(".{TOKEN}-{kind}-");
            let Some(at) = rest.rfind(&marker) else {
                continue;
            };
            let Some(pid) = owner_pid(rest, kind) else {
                continue;
            };
            if process_alive(pid) {
                continue;
            }
            let original = path.with_file_name(&rest[..at]);
            let original_present = std::fs::symlink_metadata(&original).is_ok();
            if kind == "bak" && !original_present {
                if std::fs::rename(&path, &original).is_ok() {
                    touched.push(original);
                }
            } else if std::fs::remove_file(&path).is_ok() {
                touched.push(path.clone());
            }
        }
    }
}

/// An exclusive lock on an output folder for the duration of a write: a second run into the
/// same folder is refused at once, instead of both writing. The lock is an OS lock (`flock`) on
/// the folder itself, so no lock file is left behind and the kernel releases it when the process
/// ends, even by SIGKILL.
pub struct OutputLock {
    _folder: File,
}

impl OutputLock {
    /// Takes the lock on `dir` (which must exist).
    pub fn acquire(dir: &Path) -> Result<Self> {
        let folder = File::open(dir).map_err(|e| Error::io(dir, e))?;
        match folder.try_lock() {
            Ok(()) => Ok(OutputLock { _folder: folder }),
            Err(std::fs::TryLockError::WouldBlock) => Err(Error::in_setting(
                "out",
                format!(
                    "another rlfrontier run is writing {}; wait for it to finish or choose another ⟨out⟩",
                    dir.display()
                ),
            )),
            Err(std::fs::TryLockError::Error(e)) => Err(Error::io(dir, e)),
        }
    }
}

/// An output folder held by one run: created when missing, locked before anything in it is read
/// (so the ownership check that follows cannot be raced by another run: it waits for nothing,
/// it is refused), and removed again if this run created it and leaves it empty (a refused or
/// failed run leaves no folder behind).
pub struct LockedFolder {
    _lock: OutputLock,
    dir: PathBuf,
    created: bool,
}

impl LockedFolder {
    /// Creates `dir` if missing and locks it.
    pub fn take(dir: &Path) -> Result<Self> {
        super::refuse_a_file(dir)?;
        let created = !dir.exists();
        super::create_output_dir(dir)?;
        let lock = OutputLock::acquire(dir).inspect_err(|_| {
            if created {
                let _ = std::fs::remove_dir(dir);
            }
        })?;
        pause_for_tests("after_lock");
        Ok(LockedFolder {
            _lock: lock,
            dir: dir.to_path_buf(),
            created,
        })
    }
}

impl Drop for LockedFolder {
    fn drop(&mut self) {
        if self.created
            && std::fs::read_dir(&self.dir).is_ok_and(|mut entries| entries.next().is_none())
        {
            let _ = std::fs::remove_dir(&self.dir);
        }
    }
}

/// A pause at a named point of a debug build, for the concurrency tests: the environment
/// variable `RLFRONTIER_TEST_PAUSE` = `POINT:MILLISECONDS` (release builds never read it).
pub fn pause_for_tests(point: &str) {
    if !cfg!(debug_assertions) {
        return;
    }
    if let Ok(spec) = std::env::var("RLFRONTIER_TEST_PAUSE")
        && let Some((at, ms)) = spec.split_once(':')
        && at == point
        && let Ok(ms) = ms.parse::<u64>()
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(60_000)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The visible files under `dir` (recursively) with their contents, sorted.
    fn visible(dir: &Path) -> Vec<(String, String)> {
        let mut out = Vec::new();
        for entry in std::fs::read_dir(dir).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().unwrap().is_dir() {
                for (n, c) in visible(&entry.path()) {
                    out.push((format!("{name}/{n}"), c));
                }
            } else if !name.starts_with('.') {
                out.push((name, std::fs::read_to_string(entry.path()).unwrap()));
            }
        }
        out.sort();
        out
    }

    #[test]
    fn a_commit_killed_at_any_rename_is_rolled_back_by_the_next_run() {
        let dead = 4_000_000_001u32;
        let old = |dir: &Path| {
            std::fs::create_dir_all(dir.join("plots")).unwrap();
            std::fs::write(dir.join("a.csv"), "old a").unwrap();
            std::fs::write(dir.join("b.csv"), "old b").unwrap();
            std::fs::write(dir.join("plots").join("c.svg"), "old c").unwrap();
            std::fs::write(dir.join("stale.parquet"), "old format").unwrap();
        };
        let stage = |dir: &Path| {
            let mut staged = Staged::default();
            for (name, text) in [
                ("a.csv", "new a"),
                ("plots/c.svg", "new c"),
                ("d.csv", "new d"),
                ("b.csv", "new b"),
            ] {
                staged.add(&dir.join(name), text.as_bytes()).unwrap();
            }
            staged.remove_after_commit(&dir.join("stale.parquet"));
            staged
        };
        let reference = tempfile::tempdir().unwrap();
        old(reference.path());
        let old_set = visible(reference.path());
        stage(reference.path()).commit().unwrap();
        let new_set = visible(reference.path());
        assert!(old_set.iter().any(|(name, _)| name == "stale.parquet"));
        assert!(!new_set.iter().any(|(name, _)| name == "stale.parquet"));
        // Three files existed (two renames each), one did not (one rename): 7 renames; a kill
        // before each of them, after all of them but before the commit point, just after the
        // commit point (backups still there), and between deleting the backups and the stale
        // output.
        for renames in (0..=7).chain([usize::MAX - 1, usize::MAX - 2]) {
            let dir = tempfile::tempdir().unwrap();
            old(dir.path());
            let _ = stage(dir.path()).commit_until(renames, dead);
            remove_stale_temporaries(dir.path());
            // Before the commit point the journal rolls back to the old set, even with every
            // new file in place; after it the journal says committed and the new set stays,
            // its backups and the stale output of the old format deleted by the cleanup.
            let expected = if renames > 7 { &new_set } else { &old_set };
            assert_eq!(
                &visible(dir.path()),
                expected,
                "killed after {renames} renames"
            );
            let journals = std::fs::read_dir(dir.path())
                .unwrap()
                .flatten()
                .filter(|e| e.file_name().to_string_lossy().contains("-commit-"))
                .count();
            assert_eq!(journals, 0);
        }
    }

    #[test]
    fn a_failed_commit_restores_the_old_outputs_and_leaves_no_temporaries() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b, c) = (
            dir.path().join("a.csv"),
            dir.path().join("b.csv"),
            dir.path().join("c.csv"),
        );
        std::fs::write(&a, "old a").unwrap();
        std::fs::write(&b, "old b").unwrap();
        let mut staged = Staged::default();
        staged.add(&a, b"new a").unwrap();
        staged.add(&b, b"new b").unwrap();
        staged.add(&c, b"new c").unwrap();
        // The third rename will fail: its temporary file disappears (as on a full disk or a
        // vanished mount).
        let temp_c = staged.files[2].temp_path.clone();
        std::fs::remove_file(&temp_c).unwrap();
        assert!(staged.commit().is_err());
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "old a");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "old b");
        assert!(!c.exists());
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["a.csv", "b.csv"]);
    }

    #[test]
    fn a_folder_in_the_way_fails_before_anything_moves() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.csv"), "old").unwrap();
        std::fs::create_dir(dir.path().join("b.csv")).unwrap();
        let mut staged = Staged::default();
        staged.add(&dir.path().join("a.csv"), b"new").unwrap();
        assert!(AtomicFile::create(&dir.path().join("b.csv")).is_err());
        // Someone turns a destination into a folder between staging and commit.
        std::fs::create_dir(dir.path().join("c.csv")).unwrap();
        let mut late = AtomicFile::create(&dir.path().join("d.csv")).unwrap();
        late.final_path = dir.path().join("c.csv");
        staged.add_file(late).unwrap();
        let m = staged.commit().unwrap_err().to_string();
        assert!(m.contains("is a folder"), "{m}");
        assert_eq!(
            std::fs::read_to_string(dir.path().join("a.csv")).unwrap(),
            "old"
        );
        let names: Vec<String> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(names.is_empty(), "{names:?}");
    }

    #[test]
    fn stale_temporaries_of_dead_processes_are_removed_and_backups_restored() {
        let dir = tempfile::tempdir().unwrap();
        // A PID far above Linux's pid_max (2^22): a dead run's leftovers.
        let dead = u32::MAX - 1;
        std::fs::write(
            dir.path().join(format!(".cells.csv.rlfrontier-tmp-{dead}")),
            "half",
        )
        .unwrap();
        std::fs::write(
            dir.path()
                .join(format!(".report.html.rlfrontier-bak-{dead}")),
            "old",
        )
        .unwrap();
        let live = std::process::id();
        std::fs::write(
            dir.path().join(format!(".x.csv.rlfrontier-tmp-{live}")),
            "mine",
        )
        .unwrap();
        let touched = remove_stale_temporaries(dir.path());
        assert_eq!(touched.len(), 2, "{touched:?}");
        assert!(
            !dir.path()
                .join(format!(".cells.csv.rlfrontier-tmp-{dead}"))
                .exists()
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("report.html")).unwrap(),
            "old"
        );
        assert!(
            dir.path()
                .join(format!(".x.csv.rlfrontier-tmp-{live}"))
                .exists()
        );
    }

    #[test]
    fn a_second_lock_on_a_folder_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let first = OutputLock::acquire(dir.path()).unwrap();
        let m = OutputLock::acquire(dir.path()).err().unwrap().to_string();
        assert!(m.contains("another rlfrontier run"), "{m}");
        drop(first);
        OutputLock::acquire(dir.path()).unwrap();
    }

    #[test]
    fn temporaries_are_new_files_under_names_no_one_can_guess() {
        // Issue 51: a symlink planted at the temporary's name was followed. Names now carry 64
        // random bits, and the file is created exclusively (a planted link makes it fail, never
        // write through).
        let dir = tempfile::tempdir().unwrap();
        let outside = dir.path().join("victim.txt");
        std::fs::write(&outside, "mine").unwrap();
        let target = dir.path().join("out.csv");
        let a = AtomicFile::create(&target).unwrap();
        let b = AtomicFile::create(&target).unwrap();
        assert_ne!(a.temp_path(), b.temp_path());
        let name = a
            .temp_path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(is_own_temporary(&name), "{name}");
        assert_eq!(owner_pid(&name, "tmp"), Some(std::process::id()));
        drop((a, b));
        let planted = dir.path().join("planted");
        std::os::unix::fs::symlink(&outside, &planted).unwrap();
        assert!(create_new(&planted).is_err());
        assert_eq!(std::fs::read_to_string(&outside).unwrap(), "mine");
    }

    #[test]
    fn a_planted_journal_never_reaches_outside_the_folder_or_foreign_files() {
        // Issue 51: a journal naming `plots/x` with `plots` a symlink to another folder made the
        // rollback delete files there; a journal naming a user's file deleted it.
        let dir = tempfile::tempdir().unwrap();
        let out = dir.path().join("out");
        let elsewhere = dir.path().join("elsewhere");
        std::fs::create_dir_all(&out).unwrap();
        std::fs::create_dir_all(&elsewhere).unwrap();
        std::fs::write(elsewhere.join("precious.csv"), "keep").unwrap();
        std::fs::write(out.join("notes.docx"), "keep").unwrap();
        std::os::unix::fs::symlink(&elsewhere, out.join("plots")).unwrap();
        // A dead process's journals, committed (remove lines) and not (new files to remove).
        let dead = 999_999_999u32;
        std::fs::write(
            out.join(format!(".{TOKEN}-commit-{dead}")),
            "committed\nr\tplots/precious.csv\nr\tnotes.docx\n",
        )
        .unwrap();
        remove_stale_temporaries(&out);
        std::fs::write(
            out.join(format!(".{TOKEN}-commit-{dead}")),
            "0\tplots/precious.csv\n0\tnotes.docx\n",
        )
        .unwrap();
        remove_stale_temporaries(&out);
        assert_eq!(
            std::fs::read_to_string(elsewhere.join("precious.csv")).unwrap(),
            "keep"
        );
        assert_eq!(
            std::fs::read_to_string(out.join("notes.docx")).unwrap(),
            "keep"
        );
    }
}
