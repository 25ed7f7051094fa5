//! Interruption, determinism and no-panic properties with the real binary and the parsers.

use std::path::Path;
use std::process::{Command as Process, Stdio};
use std::time::{Duration, Instant};

use assert_cmd::cargo::CommandCargoExt;
use proptest::prelude::*;
use rlfrontier::catalog::Catalog;

mod common;
use common::repo;

#[test]
fn ctrl_c_stops_promptly_leaves_no_partial_file_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let child = Process::cargo_bin("rlfrontier")
        .unwrap()
        .args([
            "sweep",
            repo("grids/ten-million.toml").to_str().unwrap(),
            "--cells",
            "all",
            "-q",
            "--out",
        ])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let status = Process::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(status.success());
    let signalled = Instant::now();
    let result = child.wait_with_output().unwrap();
    assert!(
        signalled.elapsed() < Duration::from_secs(20),
        "took {:?} to stop",
        signalled.elapsed()
    );
    assert_eq!(
        result.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(String::from_utf8_lossy(&result.stderr).contains("interrupted"));
    let leftovers: Vec<String> = if out.exists() {
        std::fs::read_dir(&out)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect()
    } else {
        Vec::new()
    };
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

fn without_timings(manifest: &[u8]) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_slice(manifest).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("elapsed_seconds");
    m.remove("threads");
    v
}

#[test]
fn every_output_is_identical_across_thread_counts_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    for grid in ["isocompute", "race-pilot"] {
        let mut runs = Vec::new();
        for (k, threads) in ["1", "2", "8", "2"].iter().enumerate() {
            let out = dir.path().join(format!("{grid}-{k}"));
            Process::cargo_bin("rlfrontier")
                .unwrap()
                .args([
                    "sweep",
                    repo(&format!("grids/{grid}.toml")).to_str().unwrap(),
                    "-q",
                    "--threads",
                    threads,
                    "--out",
                ])
                .arg(&out)
                .stdout(Stdio::null())
                .status()
                .unwrap();
            runs.push(out);
        }
        let files = [
            "cells.csv",
            "frontier.csv",
            "allocation_frontier.csv",
            "shortlist.csv",
            "shortlist.md",
            "report.html",
            "plots/frontier.svg",
            "plots/regimes.svg",
            "plots/allocation.svg",
            "plots/split.svg",
            "plots/simplex.svg",
        ];
        for f in files {
            let first = std::fs::read(runs[0].join(f)).unwrap();
            for r in &runs[1..] {
                assert_eq!(
                    first,
                    std::fs::read(r.join(f)).unwrap(),
                    "{grid}: {f} differs"
                );
            }
        }
        let m0 = without_timings(&std::fs::read(runs[0].join("manifest.json")).unwrap());
        for r in &runs[1..] {
            let mut m = without_timings(&std::fs::read(r.join("manifest.json")).unwrap());
            // The output folder is part of the manifest only through the files list, which is relative.
            m["grid"] = m0["grid"].clone();
            assert_eq!(m0, m, "{grid}: manifest differs beyond timings");
        }
    }
}

fn mutate(base: &[u8], edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut bytes = base.to_vec();
    for &(position, byte, kind) in edits {
        if bytes.is_empty() {
            bytes.push(byte);
            continue;
        }
        let i = position % bytes.len();
        match kind % 4 {
            0 => bytes[i] = byte,
            1 => bytes.insert(i, byte),
            2 => {
                bytes.remove(i);
            }
            _ => bytes.truncate(i),
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    /// The grid parser never panics: mutated bundled grids parse or fail with an input error.
    #[test]
    fn grid_parser_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..8)) {
        let catalog = Catalog::embedded();
        let base = include_bytes!("../grids/race-pilot.toml");
        let bytes = mutate(base, &edits);
        if let Ok(text) = String::from_utf8(bytes) {
            let result = rlfrontier::spec::parse(&text, Path::new("fuzz.toml"), &catalog);
            if let Err(e) = result {
                prop_assert!(e.is_input());
                prop_assert!(!e.to_string().contains('\n'));
            }
        }
    }

    /// The catalog reader never panics on mutated catalog files.
    #[test]
    fn catalog_reader_never_panics(edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..6)) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.toml");
        let base = b"[[gpu]]\nid = \"h100-sxm\"\ndecode_bandwidth_efficiency = 0.55\n\n[[model]]\nid = \"tiny\"\nname = \"t\"\nlayers = 2\nhidden = 64\nheads = 4\nkv_heads = 4\nhead_dim = 16\nintermediate = 128\nvocab = 1000\ntied_embeddings = true\npublished_params = 0\nsource = \"s\"\ndate = \"d\"\n";
        std::fs::write(&path, mutate(base, &edits)).unwrap();
        match Catalog::load(Some(&path)) {
            // A bad catalog file is the user's input: one line, exit code 2 at the edge.
            Err(e) => {
                prop_assert!(e.is_input(), "not an input error: {e}");
                prop_assert!(!e.to_string().contains('\n'), "more than one line: {e}");
            }
            // A file that still parses merges over the embedded catalog without losing it.
            Ok(catalog) => {
                prop_assert!(catalog.models.len() >= Catalog::embedded().models.len());
                prop_assert!(catalog.gpu("h100-sxm").is_ok());
            }
        }
    }

    /// The pilot-results reader never panics, on arbitrary text and on rows that name the plan's
    /// runs (so step and value parsing are reached), and every refusal is one input-error line.
    #[test]
    fn results_reader_never_panics(
        noise in "[ -~\n,]{0,200}",
        rows in prop::collection::vec(("(p001|p002|p00|zz)", "[-0-9a-z.]{0,5}", "(score|loss|)", "[-0-9.eEa-z ]{0,7}"), 0..12),
        skip_bad_rows in any::<bool>(),
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.csv");
        let mut text = String::from("run_id,step,metric,value\n");
        for (run, step, metric, value) in &rows {
            text.push_str(&format!("{run},{step},{metric},{value}\n"));
        }
        text.push_str(&noise);
        std::fs::write(&path, &text).unwrap();
        let plan = rlfrontier::pilot::Plan {
            info: rlfrontier::pilot::PlanInfo {
                tool: "rlfrontier".into(), tool_version: "0".into(), grid_name: "g".into(), grid_file: "g.toml".into(), grid_file_from_plan: String::new(), catalog_sha256: String::new(), plan_csv_sha256: String::new(),
                grid_sha256: "0".repeat(64), pilot_budget: 1e17, budget_unit: "flops".into(), framework: "verl".into(), framework_version: String::new(), model_identity: String::new(), runs: 2, design: String::new(),
            },
            runs: vec![pilot_run("p001"), pilot_run("p002")],
        };
        let options = rlfrontier::pilot::ingest::IngestOptions { metric: "score".into(), skip_bad_rows, allow_train_metric: false, scale: Default::default() };
        match rlfrontier::pilot::ingest::read_results(&path, &plan, &options) {
            Err(e) => {
                prop_assert!(e.is_input(), "not an input error: {e}");
                prop_assert!(!e.to_string().contains('\n'), "more than one line: {e}");
            }
            Ok(ingested) => {
                for (run, points) in &ingested.runs {
                    prop_assert!(run == "p001" || run == "p002");
                    prop_assert!(points.iter().all(|c| c.value.is_finite()));
                }
            }
        }
    }
}

/// A pilot run of the test plan.
fn pilot_run(id: &str) -> rlfrontier::pilot::PilotRun {
    rlfrontier::pilot::PilotRun {
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

#[test]
fn fuzzer_regressions_give_one_line_errors() {
    // Inputs the fuzzers found (tests/fuzz/corpus/*/regression-*), kept as regression tests.
    let catalog = Catalog::embedded();
    let mut checked = 0;
    for entry in std::fs::read_dir(repo("tests/fuzz/corpus/grid_spec")).unwrap() {
        let path = entry.unwrap().path();
        if !path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("regression-")
        {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        // Every regression input is a bad grid: it must be refused, with one line.
        let e = rlfrontier::spec::parse(&text, &path, &catalog)
            .expect_err(&format!("{} was accepted", path.display()));
        assert!(e.is_input());
        assert!(!e.to_string().contains('\n'), "{}: {e}", path.display());
        checked += 1;
    }
    assert!(
        checked >= 1,
        "no regression input found under tests/fuzz/corpus/grid_spec"
    );
}

#[test]
fn cells_parquet_is_identical_across_thread_counts() {
    // More than one Parquet row group (64 chunks of 2,048 cells each).
    let dir = tempfile::tempdir().unwrap();
    let grid_file = common::big_slice_grid(dir.path());
    let mut files = Vec::new();
    for threads in ["1", "3"] {
        let out = dir.path().join(threads);
        let status = Process::cargo_bin("rlfrontier")
            .unwrap()
            .args([
                "sweep",
                grid_file.to_str().unwrap(),
                "-q",
                "--format",
                "parquet",
            ])
            .args(["--threads", threads, "--out"])
            .arg(&out)
            .stdout(Stdio::null())
            .status()
            .unwrap();
        assert!(status.success());
        files.push(std::fs::read(out.join("cells.parquet")).unwrap());
    }
    assert!(files[0].len() > 100_000);
    assert!(
        files[0] == files[1],
        "cells.parquet differs between 1 and 3 threads"
    );
}
