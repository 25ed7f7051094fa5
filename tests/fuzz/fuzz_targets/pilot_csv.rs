//! Fuzz target: the pilot-results reader must never panic on any bytes.
//! Run: `cargo +nightly fuzz run pilot_csv --fuzz-dir tests/fuzz`.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;
use rlfrontier::pilot::ingest::{IngestOptions, read_results_from};
use rlfrontier::pilot::{PilotRun, Plan, PlanInfo};

fn run(id: &str) -> PilotRun {
    PilotRun {
        run_id: id.into(),
        model: "qwen2.5-1.5b".into(),
        finetune: "full".into(),
        reward: "rule".into(),
        group_size: 4,
        max_response_len: 1024,
        update_epochs: 1,
        prompts_per_step: 16,
        pilot_budget: 1e17,
        budget_unit: "flops".into(),
        steps: 10,
        eval_every_steps: 2,
        update_fraction: 0.5,
        cost_per_step: 1e16,
        expected_usd: 1.0,
        expected_gpu_hours: 1.0,
        expected_wall_hours: 1.0,
        prior_score: 0.5,
    }
}

fuzz_target!(|data: &[u8]| {
    let plan = Plan {
        info: PlanInfo {
            tool: "rlfrontier".into(),
            tool_version: "0".into(),
            grid_name: "g".into(),
            grid_file: "g.toml".into(),
            grid_file_from_plan: String::new(),
            catalog_sha256: String::new(),
            plan_csv_sha256: String::new(),
            grid_sha256: "0".repeat(64),
            pilot_budget: 1e17,
            budget_unit: "flops".into(),
            framework: "verl".into(),
            framework_version: String::new(),
            model_identity: String::new(),
            runs: 2,
            design: String::new(),
        },
        runs: vec![run("p001"), run("p002")],
    };
    for skip in [false, true] {
        let options = IngestOptions { metric: "score".into(), skip_bad_rows: skip, allow_train_metric: false, scale: Default::default() };
        if let Err(e) = read_results_from(data, Path::new("fuzz.csv"), &plan, &options) {
            assert!(!matches!(e, rlfrontier::error::Error::Interrupted));
        }
    }
});
