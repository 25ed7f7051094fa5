//! Fuzz target: merging a user catalog must never panic.
//! Run: `cargo +nightly fuzz run catalog --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rlfrontier::catalog::Catalog;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        if let Err(e) = Catalog::load_text(Some((Path::new("fuzz-catalog.toml"), text))) {
            assert!(e.is_input());
        }
    }
});
