//! Reading the files a user names: regular files only, with a size limit, so that a FIFO, a
//! device (`/dev/zero`), a folder or a runaway file is one clear error at once instead of a hang
//! or an exhausted memory.

use std::io::Read;
use std::path::Path;

use crate::error::{Error, Result};

/// Largest configuration-like input (grid, catalog, launch script, config, calibration, truth
/// file): 16 MiB, far above any real one.
pub const MAX_CONFIG_BYTES: u64 = 16 << 20;

/// Largest table-like input (logs, plan and results CSVs, evidence, points): 1 GiB.
pub const MAX_TABLE_BYTES: u64 = 1 << 30;

/// Checks that `path` names a regular file (after symlinks) of at most `max_bytes`.
pub fn check_regular_file(path: &Path, max_bytes: u64) -> Result<()> {
    let metadata = std::fs::metadata(path).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Error::in_file(path, None, "", "file not found; check the path")
        }
        _ => Error::io(path, e),
    })?;
    if !metadata.is_file() {
        let what = if metadata.is_dir() {
            "a folder"
        } else {
            "not a regular file (a pipe, a socket or a device)"
        };
        return Err(Error::in_file(
            path,
            None,
            "",
            format!("is {what}; give the path of a file"),
        ));
    }
    if metadata.len() > max_bytes {
        return Err(Error::in_file(
            path,
            None,
            "",
            format!(
                "is {} bytes, above the {} this input may have; give the file itself, not a dump or an archive",
                metadata.len(),
                max_bytes
            ),
        ));
    }
    Ok(())
}

/// Longest line a streamed table may have: far above any row the tool writes (a cells.csv row
/// is under 2 kB), far below what would exhaust memory.
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// Opens a table the user named to stream it (`front` reads cells.csv files of any size): a
/// regular file, read through [`BoundedLines`] so that one endless line (a dump, `/dev/zero`
/// copied to a file) fails at [`MAX_LINE_BYTES`] instead of filling memory.
pub fn open_table(path: &Path) -> Result<BoundedLines<std::io::BufReader<std::fs::File>>> {
    check_regular_file(path, u64::MAX)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    Ok(BoundedLines {
        inner: std::io::BufReader::new(file),
        since_newline: 0,
    })
}

/// A reader that fails once a line grows past [`MAX_LINE_BYTES`].
#[derive(Debug)]
pub struct BoundedLines<R> {
    inner: R,
    since_newline: usize,
}

impl<R: Read> Read for BoundedLines<R> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buffer)?;
        for &b in &buffer[..n] {
            if b == b'\n' {
                self.since_newline = 0;
            } else {
                self.since_newline += 1;
                if self.since_newline > MAX_LINE_BYTES {
                    return Err(std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!("a line longer than {MAX_LINE_BYTES} bytes; is this a CSV table?"),
                    ));
                }
            }
        }
        Ok(n)
    }
}

/// Reads a file the user named: a regular file of at most `max_bytes` (read with that limit, so
/// a file that grows while read cannot exceed it).
pub fn read_bytes(path: &Path, max_bytes: u64) -> Result<Vec<u8>> {
    check_regular_file(path, max_bytes)?;
    let file = std::fs::File::open(path).map_err(|e| Error::io(path, e))?;
    let mut bytes = Vec::new();
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, e))?;
    if bytes.len() as u64 > max_bytes {
        return Err(Error::in_file(
            path,
            None,
            "",
            format!("grew past {max_bytes} bytes while being read"),
        ));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text; `what` names what the file should be in the error.
pub fn read_text(path: &Path, max_bytes: u64, what: &str) -> Result<String> {
    String::from_utf8(read_bytes(path, max_bytes)?).map_err(|_| {
        Error::in_file(
            path,
            None,
            "",
            format!("not UTF-8 text; give {what} itself"),
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pipes_devices_folders_and_large_files_are_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let e = read_bytes(dir.path(), 10).unwrap_err().to_string();
        assert!(e.contains("a folder"), "{e}");
        let e = read_bytes(Path::new("/dev/zero"), 10)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a regular file"), "{e}");
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let e = read_bytes(&fifo, 10).unwrap_err().to_string();
            assert!(e.contains("not a regular file"), "{e}");
        }
        let big = dir.path().join("big");
        std::fs::write(&big, vec![b'x'; 11]).unwrap();
        let e = read_bytes(&big, 10).unwrap_err().to_string();
        assert!(e.contains("11 bytes"), "{e}");
        assert_eq!(read_bytes(&big, 11).unwrap().len(), 11);
        let e = read_text(&dir.path().join("missing"), 10, "x")
            .unwrap_err()
            .to_string();
        assert!(e.contains("file not found"), "{e}");
    }

    #[test]
    fn a_streamed_table_stops_at_an_endless_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.csv");
        std::fs::write(&path, "a,b\n1,2\n").unwrap();
        let mut text = String::new();
        open_table(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "a,b\n1,2\n");
        std::fs::write(&path, vec![b'x'; MAX_LINE_BYTES + 1]).unwrap();
        let e = open_table(&path)
            .unwrap()
            .read_to_end(&mut Vec::new())
            .unwrap_err();
        assert!(e.to_string().contains("a line longer than"), "{e}");
        assert!(open_table(dir.path()).is_err());
    }
}
