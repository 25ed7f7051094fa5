//! Fuzz target: the files `merge` and `sweep --calibration` trust (a shard's manifest.json and
//! aggregate.json, a calibration.json) are parsed and combined without panicking; aggregates
//! that pass merge's checks against the bundled race-pilot grid (every cell id of the grid, each
//! budget's pool of that budget) are decided as merge decides them.
//! Run: `cargo +nightly fuzz run merge_inputs --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rlfrontier::analysis::frontier::{Aggregate, CostBasis};
use rlfrontier::engine::Manifest;
use rlfrontier::engine::calibration_file::CalibrationFile;

/// The bundled race-pilot grid, parsed once.
fn grid() -> &'static rlfrontier::spec::Grid {
    static GRID: OnceLock<rlfrontier::spec::Grid> = OnceLock::new();
    GRID.get_or_init(|| {
        let catalog = rlfrontier::catalog::Catalog::embedded();
        rlfrontier::spec::load(Path::new("race-pilot"), &catalog).expect("the bundled grid")
    })
}

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
        let g = grid();
        let cells = g.cell_count().expect("a bounded grid");
        let ids = a
            .front_candidates
            .iter()
            .chain(a.sample.iter())
            .chain(a.shortlist_pool.values().flatten())
            .chain(a.allocation.values());
        let pools_of_their_budget = a
            .shortlist_pool
            .iter()
            .all(|(&b, pool)| pool.iter().all(|p| p.id < cells && g.decode(p.id).budget == b));
        if ids.clone().all(|p| p.id < cells) && pools_of_their_budget {
            let _ = rlfrontier::analysis::decision::decide(g, &a);
        }
    }
});
