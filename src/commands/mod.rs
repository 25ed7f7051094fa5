//! What each subcommand does. Each takes its parsed arguments and a writer for standard output,
//! so tests can run them in memory.

pub mod calibrate_hw;
pub mod catalog;
pub mod check;
pub mod compare;
pub mod cost;
pub mod fit;
pub mod flops;
pub mod front;
pub mod plan;
pub mod simulate;
pub mod sweep;

use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Writes text to standard output, mapping a failure to an I/O error on `<stdout>`.
pub fn emit(out: &mut dyn Write, text: &str) -> Result<()> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::io(Path::new("<stdout>"), e))
}

/// Loads the catalog, merged with the user's file when given.
pub fn load_catalog(path: Option<&Path>) -> Result<crate::catalog::Catalog> {
    crate::catalog::Catalog::load(path)
}
