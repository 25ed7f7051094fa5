//! Fuzz target: the files `merge` and `sweep --calibration` trust (a shard's manifest.json and
//! aggregate.json, a calibration.json) are parsed and combined without panicking.
//! Run: `cargo +nightly fuzz run merge_inputs --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rlfrontier::analysis::frontier::{Aggregate, CostBasis};
use rlfrontier::engine::Manifest;
use rlfrontier::engine::calibration_file::CalibrationFile;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\u{1e}');
    let (first, second) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let _ = serde_json::from_str::<Manifest>(first);
    if let Ok(file) = serde_json::from_str::<CalibrationFile>(first) {
        let _ = file.outcome_params(Path::new("calibration.json"));
    }
    if let (Ok(mut a), Ok(b)) = (
        serde_json::from_str::<Aggregate>(first),
        serde_json::from_str::<Aggregate>(second),
    ) {
        a.merge(b);
        let _ = a.front(CostBasis::Usd);
        let _ = a.front_ids();
        let _ = rlfrontier::analysis::headline::headlines(&a);
    }
});
