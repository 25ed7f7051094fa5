//! Fuzz target: a `compare` project file (stages, sizes, GPUs, prices, multipliers) is priced or
//! refused with one input error; every number it accepts is within the physical bounds
//! (`rlfrontier::bounds`), so no price is NaN, infinite or saturated. Issue 51: NaN, infinity,
//! negative multipliers and 2^64 GPUs were priced.
//! Run: `cargo +nightly fuzz run project_file --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rlfrontier::catalog::Catalog;

fn catalog() -> &'static Catalog {
    static CATALOG: OnceLock<Catalog> = OnceLock::new();
    CATALOG.get_or_init(Catalog::embedded)
}

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match rlfrontier::costing::compare::price(&text, Path::new("project.toml"), catalog()) {
        Ok(cost) => {
            for stage in &cost.stages {
                assert!(stage.usd.is_finite() && stage.usd >= 0.0, "{stage:?}");
                assert!(stage.gpu_hours.is_finite() && stage.gpu_hours >= 0.0, "{stage:?}");
            }
        }
        Err(e) => {
            assert!(e.is_input(), "{e}");
            assert!(!e.to_string().contains('\n'), "{e}");
        }
    }
});
