//! Fuzz target: the grid-spec parser must never panic; every failure is an input error (exit 2)
//! on one line. Run: `cargo +nightly fuzz run grid_spec --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rlfrontier::catalog::Catalog;

static CATALOG: OnceLock<Catalog> = OnceLock::new();

fuzz_target!(|data: &[u8]| {
    let catalog = CATALOG.get_or_init(Catalog::embedded);
    if let Ok(text) = std::str::from_utf8(data) {
        match rlfrontier::spec::parse(text, Path::new("fuzz.toml"), catalog) {
            Ok(grid) => {
                // A valid grid decodes its first and last cells without panicking.
                if let Ok(n) = grid.cell_count() {
                    if n > 0 {
                        let _ = grid.cell(0);
                        let _ = grid.cell(n - 1);
                    }
                }
            }
            Err(e) => {
                assert!(e.is_input());
                assert!(!e.to_string().contains('\n'));
            }
        }
    }
});
