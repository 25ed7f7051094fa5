//! End-to-end tests: the real binary on the bundled grids.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use std::path::Path;

use predicates::prelude::*;

mod common;
use common::{bin, grid, read_csv};

/// The cells.csv contract from the README, spelled out here on purpose rather than taken from
/// `rlfrontier::report::cells::cell_columns()`: a column dropped or renamed in the code must fail this test.
const REQUIRED_COLUMNS: &[&str] = &[
    "cell_id",
    "model",
    "finetune",
    "lora_rank",
    "reward",
    "reward_model",
    "group_size",
    "max_response_len",
    "update_epochs",
    "prompts_per_step",
    "budget",
    "budget_unit",
    "iterations",
    "rollouts",
    "mean_response_tokens",
    "truncation_rate",
    "zero_signal_rate",
    "flops_search",
    "flops_learning",
    "flops_feedback",
    "flops_total",
    "flops_share_search",
    "flops_share_learning",
    "flops_share_feedback",
    "gpu_hours_search",
    "gpu_hours_learning",
    "gpu_hours_feedback",
    "gpu_hours",
    "usd",
    "usd_share_search",
    "usd_share_learning",
    "usd_share_feedback",
    "wall_hours",
    "feasible",
    "infeasible_reason",
];

/// `rlfrontier sweep grids/NAME.toml -q --out OUT`, ready for assertions.
fn quiet_sweep(name: &str, out: &Path) -> assert_cmd::assert::Assert {
    bin()
        .args(["sweep", grid(name).to_str().unwrap(), "-q", "--out"])
        .arg(out)
        .assert()
}

#[test]
fn default_sweep_writes_cells_and_manifest_under_results() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .current_dir(dir.path())
        .args(["sweep", grid("race-pilot").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("swept 8,640 cells"))
        .stdout(predicate::str::contains("results/race-pilot/cells.csv"));
    let out = dir.path().join("results/race-pilot");
    let (headers, rows) = read_csv(&out.join("cells.csv"));
    for column in REQUIRED_COLUMNS {
        assert!(
            headers.iter().any(|h| h == column),
            "missing column {column}"
        );
    }
    assert!(rows.len() >= 1000);
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let feasible = rows.iter().filter(|r| r[col("feasible")] == "true").count();
    assert!(
        feasible > rows.len() / 2,
        "most cells of the default grid are feasible: {feasible}"
    );
    for row in &rows {
        // Cell ids are in order and every infeasible row says why.
        if row[col("feasible")] == "false" {
            assert!(!row[col("infeasible_reason")].is_empty());
        } else {
            let shares: f64 = [
                "usd_share_search",
                "usd_share_learning",
                "usd_share_feedback",
            ]
            .iter()
            .map(|c| row[col(c)].parse::<f64>().unwrap())
            .sum();
            assert!((shares - 1.0).abs() < 1e-5, "{shares}");
        }
        for cell in row {
            assert!(!cell.contains("NaN") && !cell.contains("inf"), "{row:?}");
        }
    }
    let ids: Vec<u64> = rows.iter().map(|r| r[0].parse().unwrap()).collect();
    assert!(ids.windows(2).all(|w| w[0] < w[1]));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["grid"]["name"], "race-pilot");
    assert_eq!(manifest["grid"]["sha256"].as_str().unwrap().len(), 64);
    assert_eq!(manifest["cells"]["evaluated"], 8640);
    assert!(manifest["tool_version"].is_string() && manifest["catalog_version"].is_string());
    assert!(manifest["threads"].as_u64().unwrap() >= 1);
    assert!(manifest["elapsed_seconds"].is_number());
    // Every output, and no temporary file left behind.
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "allocation_frontier.csv",
            "cells.csv",
            "frontier.csv",
            "manifest.json",
            "plots",
            "report.html",
            "shortlist.csv",
            "shortlist.md"
        ]
    );
    let mut plots: Vec<String> = std::fs::read_dir(out.join("plots"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    plots.sort();
    assert_eq!(
        plots,
        [
            "allocation.svg",
            "frontier.svg",
            "regimes.svg",
            "simplex.svg",
            "split.svg"
        ]
    );
    // on_frontier marks exactly the cells of the budget-unit front in frontier.csv.
    let (fh, front_rows) = read_csv(&out.join("frontier.csv"));
    let front_ids: std::collections::BTreeSet<String> = front_rows
        .iter()
        .filter(|r| r[fh.iter().position(|h| h == "front").unwrap()] == "flops")
        .map(|r| r[fh.iter().position(|h| h == "cell_id").unwrap()].clone())
        .collect();
    let marked: std::collections::BTreeSet<String> = rows
        .iter()
        .filter(|r| r[col("on_frontier")] == "true")
        .map(|r| r[0].clone())
        .collect();
    assert!(!marked.is_empty());
    assert_eq!(marked, front_ids);
    // Tidy tables: every file names a cell with the same columns, one quantity each, numbers as
    // numbers, so they merge on cell_id without parsing.
    let identity = [
        "engine",
        "model",
        "finetune",
        "lora_rank",
        "reward",
        "reward_model",
        "group_size",
        "max_response_len",
        "update_epochs",
        "prompts_per_step",
        "budget",
        "budget_unit",
    ];
    for file in [
        "cells.csv",
        "frontier.csv",
        "shortlist.csv",
        "allocation_frontier.csv",
    ] {
        let (h, rows) = read_csv(&out.join(file));
        for column in identity {
            assert!(h.iter().any(|c| c == column), "{file} lacks {column}");
        }
        assert!(
            !h.iter().any(|c| c == "update_fraction" || c == "flags"),
            "{file}: {h:?}"
        );
        let at = |name: &str| h.iter().position(|c| c == name).unwrap();
        for row in &rows {
            assert!(row[at("budget")].parse::<f64>().is_ok(), "{file}: {row:?}");
            assert!(
                row[at("lora_rank")].parse::<u64>().is_ok(),
                "{file}: {row:?}"
            );
            assert!(["full", "lora"].contains(&row[at("finetune")].as_str()));
            assert!(!row[at("reward")].contains(':'), "{file}: {row:?}");
            assert_eq!(
                row[at("finetune")] == "full",
                row[at("lora_rank")] == "0",
                "{file}: {row:?}"
            );
        }
    }
    let (h, rows) = read_csv(&out.join("shortlist.csv"));
    for flag in ["calibrated", "at_grid_edge", "infeasible_neighbour"] {
        let at = h.iter().position(|c| c == flag).unwrap();
        assert!(rows.iter().all(|r| r[at] == "true" || r[at] == "false"));
    }
}

#[test]
fn sweep_output_does_not_depend_on_thread_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2", "8"] {
        let out = dir.path().join(threads);
        bin()
            .args([
                "sweep",
                grid("race-pilot").to_str().unwrap(),
                "--quiet",
                "--threads",
                threads,
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        outputs.push(std::fs::read(out.join("cells.csv")).unwrap());
    }
    assert!(outputs.windows(2).all(|w| w[0] == w[1]));
}

#[test]
fn shards_partition_the_grid() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    quiet_sweep("isocompute", &whole).success();
    let (_, all_rows) = read_csv(&whole.join("cells.csv"));
    let mut joined = Vec::new();
    for i in 0..3 {
        let out = dir.path().join(format!("shard{i}"));
        bin()
            .args([
                "sweep",
                grid("isocompute").to_str().unwrap(),
                "-q",
                "--shard",
                &format!("{i}/3"),
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        joined.extend(read_csv(&out.join("cells.csv")).1);
    }
    // Every column but on_frontier, which a shard computes over its own slice only (merging
    // shards recomputes it).
    let strip = |rows: Vec<Vec<String>>| -> Vec<Vec<String>> {
        rows.into_iter()
            .map(|mut r| {
                r.pop();
                r
            })
            .collect()
    };
    assert_eq!(strip(joined), strip(all_rows.clone()));
    // The isocompute grid prunes prompts × G above 16,384.
    assert_eq!(all_rows.len(), 243);
}

#[test]
fn sweep_refuses_another_grids_results_without_force() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    quiet_sweep("isocompute", &out).success();
    let before = std::fs::read(out.join("cells.csv")).unwrap();
    quiet_sweep("race-pilot", &out)
        .code(2)
        .stderr(predicate::str::contains("isocompute").and(predicate::str::contains("--force")));
    assert_eq!(
        std::fs::read(out.join("cells.csv")).unwrap(),
        before,
        "untouched"
    );
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "-q",
            "--force",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
}

#[test]
fn sweep_above_max_cells_is_refused_before_writing() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "--max-cells",
            "100",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--max-cells"));
    assert!(!out.exists());
}

#[test]
fn check_prints_axes_and_counts() {
    bin()
        .args(["check", grid("race-pilot").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("cells: 8,640"))
        .stdout(predicate::str::contains(
            "qwen2.5-1.5b, qwen2.5-3b, qwen2.5-7b",
        ));
    bin()
        .args(["check", grid("big").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains("cells: 1,008,000"));
    bin()
        .args(["check", grid("isocompute").to_str().unwrap()])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "cells: 243 (486 in the product of axes, 243 pruned by constraints)",
        ));
}

#[test]
fn check_rejects_bad_grids_with_file_line_and_field() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(grid("race-pilot")).unwrap();
    let cases = [
        (
            "group_size = [2, 4, 8, 16]",
            "group_size = [0, 4]",
            "axes.group_size",
        ),
        (
            "group_size = [2, 4, 8, 16]",
            "gruop_size = [4]",
            "did you mean `group_size`",
        ),
        (
            "gpu = \"h100-sxm\"",
            "gpu = \"h10-sxm\"",
            "did you mean `h100-sxm`",
        ),
        (
            "\"1e17 flops\"",
            "\"1e17 flops\", \"5 gpu-hr\"",
            "did you mean `gpu-h`",
        ),
        (
            "max_response_len = [1024, 2048, 4096]",
            "max_response_len = []",
            "empty list",
        ),
    ];
    for (from, to, expect) in cases {
        let path = dir.path().join("bad.toml");
        std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
        let assert = bin().args(["check"]).arg(&path).assert().code(2);
        let stderr = String::from_utf8(assert.get_output().stderr.clone()).unwrap();
        assert!(
            stderr.contains("bad.toml:") && stderr.contains(expect),
            "{to}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "one line: {stderr}");
    }
    // A bad grid given to sweep writes nothing.
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, text.replacen("gpus = 8", "gpus = -8", 1)).unwrap();
    let out = dir.path().join("never");
    bin()
        .args(["sweep"])
        .arg(&path)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2);
    assert!(!out.exists());
}

#[test]
fn cost_json_has_the_ledger() {
    let assert = bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--gpus",
            "16",
            "--prompts-per-step",
            "1024",
            "--group-size",
            "8",
            "--max-response-len",
            "8192",
            "--mean-response-tokens",
            "2000",
            "--steps",
            "100",
            "--json",
        ])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(v["iterations"], 100);
    assert!(v["wall_hours"].as_f64().unwrap() > 0.0);
    for key in ["flops", "gpu_hours", "usd"] {
        let parts: f64 = ["search", "learning", "feedback"]
            .iter()
            .map(|b| v[key][b].as_f64().unwrap())
            .sum();
        let total = v[key]["total"].as_f64().unwrap();
        assert!((parts - total).abs() <= 1e-9 * total, "{key}");
    }
    let phases = v["phases"].as_array().unwrap();
    assert!(
        phases
            .iter()
            .any(|p| p["name"] == "decode" && p["bucket"] == "search")
    );
    for p in phases {
        for k in ["name", "bucket", "flops", "seconds", "gpu_hours", "usd"] {
            assert!(!p[k].is_null(), "{k}");
        }
    }
    assert!(v["waste"]["zero_signal_usd"].as_f64().unwrap() > 0.0);
    assert!(v["verdict"].as_str().unwrap().starts_with("generation is"));
}

#[test]
fn cost_table_and_budget_mode() {
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-1.5b",
            "--finetune",
            "lora:64",
            "--reward",
            "prm:qwen2.5-math-prm-7b",
            "--budget",
            "500 usd",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("decode"))
        .stdout(predicate::str::contains("feedback"))
        .stdout(predicate::str::contains("generation is"));
    bin()
        .args(["cost", "--model", "qwen2.5-7", "--steps", "1"])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--model")
                .and(predicate::str::contains("did you mean `qwen2.5-7b`")),
        );
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "1",
            "--group-size",
            "0",
        ])
        .assert()
        .code(2);
    bin()
        .args(["cost", "--model", "qwen2.5-7b", "--budget", "10 bucks"])
        .assert()
        .code(2);
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "1",
            "--usd-per-gpu-hour",
            "NaN",
        ])
        .assert()
        .code(2);
}

#[test]
fn flops_reproduces_verl_convention() {
    // veRL tests/utils/test_flops_counter.py, qwen2 case: 167073690943488.
    bin()
        .args([
            "flops",
            "--model",
            "qwen2.5-7b",
            "--seqlens",
            "512,1024,2048",
            "--convention",
            "verl",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "selected (verl): 167073690943488 FLOPs",
        ));
    let assert = bin()
        .args([
            "flops",
            "--model",
            "qwen2.5-7b",
            "--seqlens",
            "512,1024,2048",
            "--json",
        ])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&assert.get_output().stdout).unwrap();
    assert_eq!(v["flops_verl"].as_f64().unwrap(), 167_073_690_943_488.0);
    assert!(v["flops_rlfrontier"].as_f64().unwrap() < v["flops_verl"].as_f64().unwrap());
    bin()
        .args([
            "flops",
            "--model",
            "qwen2.5-7b",
            "--seqlens",
            "4096",
            "--seconds",
            "2",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("MFU"));
    bin()
        .args(["flops", "--model", "qwen2.5-7b", "--seqlens", "0"])
        .assert()
        .code(2);
}

#[test]
fn catalog_lists_models_gpus_and_rewards() {
    bin().args(["catalog", "models"]).assert().success().stdout(
        predicate::str::contains("qwen3-30b-a3b")
            .and(predicate::str::contains("deepseek-r1-distill-qwen-1.5b")),
    );
    bin()
        .args(["catalog", "gpus"])
        .assert()
        .success()
        .stdout(predicate::str::contains("mi300x"));
    bin()
        .args(["catalog", "rewards"])
        .assert()
        .success()
        .stdout(predicate::str::contains("qwen2.5-math-prm-7b"));
}

/// Every `font-size` of an SVG's `<text>` elements, in pixels.
fn svg_font_sizes(text: &str) -> Vec<f64> {
    let doc = roxmltree::Document::parse(text).unwrap();
    doc.descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.attribute("font-size"))
        .map(|s| s.parse::<f64>().unwrap())
        .collect()
}

#[test]
fn plot_text_is_at_least_12_px_and_dollar_budgets_read_as_money() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["race-pilot", "dollars"] {
        let out = dir.path().join(name);
        quiet_sweep(name, &out).success();
        for plot in ["frontier", "regimes", "allocation", "split", "simplex"] {
            let text = std::fs::read_to_string(out.join(format!("plots/{plot}.svg"))).unwrap();
            let sizes = svg_font_sizes(&text);
            assert!(!sizes.is_empty(), "{name}/{plot}: no text");
            let smallest = sizes.iter().copied().fold(f64::INFINITY, f64::min);
            assert!(smallest >= 12.0, "{name}/{plot}: text at {smallest:.1} px");
        }
    }
    // The committed fit's plots (written by `fit`, regenerated by scripts/regenerate-examples).
    let fit = common::repo("results/examples/race-pilot-fit/plots");
    for entry in std::fs::read_dir(&fit).unwrap() {
        let path = entry.unwrap().path();
        let sizes = svg_font_sizes(&std::fs::read_to_string(&path).unwrap());
        let smallest = sizes.iter().copied().fold(f64::INFINITY, f64::min);
        assert!(
            smallest >= 12.0,
            "{}: text at {smallest:.1} px",
            path.display()
        );
    }
    // The dollar grid's budgets are the frontier's ticks, in money.
    let frontier = std::fs::read_to_string(dir.path().join("dollars/plots/frontier.svg")).unwrap();
    for tick in ["$10k", "$50k", "$200k", "$1M"] {
        assert!(
            frontier.contains(&format!(">\n{tick}\n<")),
            "no tick {tick}"
        );
    }
    assert!(!frontier.contains("1000000\n"), "raw dollar ticks");
    // The allocation plot's axis fits the data: no tick at 0.0 when no cell is below 0.4.
    let allocation =
        std::fs::read_to_string(dir.path().join("race-pilot/plots/allocation.svg")).unwrap();
    assert!(
        !allocation.contains(">\n0.00\n<"),
        "the update-fraction axis starts at 0"
    );
}

#[test]
fn png_copies_of_the_plots_have_content_and_go_when_not_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    bin()
        .args([
            "sweep",
            grid("dollars").to_str().unwrap(),
            "-q",
            "--png",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    for plot in ["frontier", "regimes", "allocation", "split", "simplex"] {
        let path = out.join(format!("plots/{plot}.png"));
        let (share, colours) = common::ink(&path);
        assert!(
            share > 0.01 && colours > 5,
            "{plot}.png is empty ({:.2}% inked, {colours} colours)",
            100.0 * share
        );
        assert!(share < 0.6, "{plot}.png is mostly ink");
    }
    // The same sweep again without --png: the earlier PNGs are not left beside new SVGs.
    bin()
        .args(["sweep", grid("dollars").to_str().unwrap(), "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    assert!(!out.join("plots/frontier.png").exists());
    assert!(out.join("plots/frontier.svg").exists());
}

#[test]
fn plots_are_well_formed_svg_with_data_marks() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    quiet_sweep("race-pilot", &out).success();
    for (name, min_marks) in [
        ("frontier.svg", 500),
        ("regimes.svg", 5),
        ("allocation.svg", 30),
        ("split.svg", 20),
        ("simplex.svg", 500),
    ] {
        let text = std::fs::read_to_string(out.join("plots").join(name)).unwrap();
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let count = |tag: &str| doc.descendants().filter(|n| n.has_tag_name(tag)).count();
        let marks =
            count("circle") + count("rect") + count("polyline") + count("polygon") + count("path");
        assert!(marks >= min_marks, "{name}: {marks} data marks");
        let texts: Vec<String> = doc
            .descendants()
            .filter(|n| n.has_tag_name("text"))
            .filter_map(|n| n.text().map(str::to_string))
            .collect();
        assert!(
            texts.iter().any(|t| t.contains("race-pilot")),
            "{name} has a title naming the grid"
        );
        assert!(
            !text.contains("NaN") && !text.contains("inf\""),
            "{name} has no non-finite coordinates"
        );
    }
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("prior (uncalibrated)"));
    assert_eq!(report.matches("<svg").count(), 5, "five inline plots");
    // Inline script is allowed (the shortlist's filter and sorting); nothing is fetched.
    for forbidden in [
        "<script src",
        "<link",
        "src=\"http",
        "href=\"http",
        "url(",
        "fetch(",
        "XMLHttpRequest",
        "@import",
        "@font-face",
    ] {
        assert!(
            !report.contains(forbidden),
            "self-contained: found {forbidden}"
        );
    }
}

#[test]
fn merged_shards_equal_the_unsharded_sweep_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    let whole = dir.path().join("whole");
    quiet_sweep("race-pilot", &whole).success();
    let mut shards = Vec::new();
    for i in 0..3 {
        let out = dir.path().join(format!("s{i}"));
        bin()
            .args([
                "sweep",
                grid("race-pilot").to_str().unwrap(),
                "-q",
                "--threads",
                "1",
                "--shard",
                &format!("{i}/3"),
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        assert!(out.join("aggregate.json").exists());
        shards.push(out);
    }
    let merged = dir.path().join("merged");
    // Shards given out of order: merge sorts them by index.
    bin()
        .arg("merge")
        .arg(&shards[2])
        .arg(&shards[0])
        .arg(&shards[1])
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
    for f in [
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
    ] {
        assert_eq!(
            std::fs::read(whole.join(f)).unwrap(),
            std::fs::read(merged.join(f)).unwrap(),
            "{f} differs"
        );
    }
    // A missing shard is refused.
    bin()
        .arg("merge")
        .arg(&shards[0])
        .arg(&shards[1])
        .arg("--out")
        .arg(dir.path().join("m2"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shards"));
}

#[test]
fn cells_modes_choose_the_rows() {
    let dir = tempfile::tempdir().unwrap();
    let rows = |mode: &str| -> Option<usize> {
        let out = dir.path().join(mode);
        bin()
            .args([
                "sweep",
                grid("race-pilot").to_str().unwrap(),
                "-q",
                "--cells",
                mode,
                "--out",
            ])
            .arg(&out)
            .assert()
            .success();
        assert!(out.join("frontier.csv").exists() && out.join("report.html").exists());
        std::fs::read_to_string(out.join("cells.csv"))
            .ok()
            .map(|t| t.lines().count() - 1)
    };
    assert_eq!(rows("all"), Some(8640));
    assert_eq!(rows("feasible"), Some(7106));
    let frontier = rows("frontier").unwrap();
    assert!(frontier > 0 && frontier < 200);
    assert_eq!(rows("none"), None);
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "--cells",
            "some",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--cells"));
}

/// `grids/targets.toml` with its `[outcome] metrics` replaced by one metric and its base scores
/// by that metric's table (what a single-target grid of the same question says).
fn single_target_grid(dir: &Path, metric: &str) -> std::path::PathBuf {
    let text = std::fs::read_to_string(grid("targets")).unwrap();
    let scores = text
        .lines()
        .find(|l| l.starts_with("base_score"))
        .expect("the grid's base_score line");
    let table_start = scores.find(&format!("{metric} = {{")).unwrap() + metric.len() + 3;
    let table_end = table_start + scores[table_start..].find('}').unwrap() + 1;
    let single = text
        .replace(
            scores,
            &format!("base_score = {}", &scores[table_start..table_end]),
        )
        .replace(
            "metrics = [\"math500\", \"aime24\"]",
            &format!("metric = \"{metric}\""),
        );
    let path = dir.join(format!("{metric}.toml"));
    std::fs::write(&path, single).unwrap();
    path
}

#[test]
fn each_target_metric_predicts_as_its_own_grid_save_the_ability_bound_of_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let both = dir.path().join("both");
    bin()
        .args(["sweep", "-q", "--out"])
        .arg(&both)
        .arg(grid("targets"))
        .assert()
        .success();
    for f in [
        "targets.md",
        "report.html",
        "targets/aime24/report.html",
        "targets/aime24/shortlist.csv",
        "targets/aime24/frontier.csv",
    ] {
        assert!(both.join(f).exists(), "{f}");
    }
    let markdown = std::fs::read_to_string(both.join("targets.md")).unwrap();
    assert!(markdown.contains("best for math500") && markdown.contains("best for aime24"));
    let report = std::fs::read_to_string(both.join("report.html")).unwrap();
    assert!(report.contains("<h2>Target metrics</h2>"));
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(both.join("manifest.json")).unwrap())
            .unwrap();
    assert_eq!(
        manifest["outcome"]["targets"],
        serde_json::json!(["math500", "aime24"])
    );

    // MATH-500's predictions equal those of a grid that names only that target, and its outputs
    // equal that grid's. AIME24's do too for the model whose MATH-500 base implies no format gap
    // on AIME (Qwen2.5-0.5B); for the others the grid's MATH-500 base scores bound their AIME
    // ability from below (outcome::ability), which a grid naming AIME alone cannot know: their
    // predictions are at least the single-target ones, and some higher.
    let (header, rows) = read_csv(&both.join("cells.csv"));
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    for (metric, suffix, outputs) in [
        ("math500", "", both.clone()),
        ("aime24", "_aime24", both.join("targets/aime24")),
    ] {
        let single_dir = dir.path().join(metric);
        bin()
            .args(["sweep", "-q", "--out"])
            .arg(&single_dir)
            .arg(single_target_grid(dir.path(), metric))
            .assert()
            .success();
        let (single_header, single_rows) = read_csv(&single_dir.join("cells.csv"));
        let single_col = |name: &str| single_header.iter().position(|h| h == name).unwrap();
        assert_eq!(rows.len(), single_rows.len());
        let mut raised = 0;
        for (row, single) in rows.iter().zip(&single_rows) {
            let bounded = metric == "aime24" && row[col("model")] != "qwen2.5-0.5b";
            for name in ["predicted_score", "score_low", "score_high"] {
                let (got, alone) = (
                    &row[col(&format!("{name}{suffix}"))],
                    &single[single_col(name)],
                );
                if !bounded {
                    assert_eq!(got, alone, "{metric} {name}");
                } else if !got.is_empty() {
                    let (got, alone): (f64, f64) = (got.parse().unwrap(), alone.parse().unwrap());
                    assert!(got >= alone, "{metric} {name}: {got} < {alone}");
                    raised += usize::from(name == "predicted_score" && got > alone);
                }
            }
        }
        if metric == "math500" {
            for f in ["shortlist.csv", "frontier.csv", "allocation_frontier.csv"] {
                assert_eq!(
                    std::fs::read(outputs.join(f)).unwrap(),
                    std::fs::read(single_dir.join(f)).unwrap(),
                    "{metric} {f}"
                );
            }
        } else {
            assert!(
                raised > 0,
                "no AIME prediction raised by the MATH-500 bases"
            );
            assert!(outputs.join("shortlist.csv").exists());
        }
    }
}

#[test]
fn several_target_metrics_refuse_shards_in_one_line() {
    let dir = tempfile::tempdir().unwrap();
    bin()
        .args(["sweep", "-q", "--shard", "1/2", "--out"])
        .arg(dir.path().join("o"))
        .arg(grid("targets"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("several [outcome] metrics"));
}

#[test]
fn front_reads_the_tools_own_cells_csv_and_names_rows_by_id() {
    // Infeasible cells have empty scores: they are skipped and counted; the front is given by
    // data-row index and by cell_id (the first column), and every id is a feasible cell.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("rp");
    bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    let cells = out.join("cells.csv");
    let (header, rows) = read_csv(&cells);
    let col = |name: &str| header.iter().position(|h| h == name).unwrap();
    let infeasible = rows
        .iter()
        .filter(|r| r[col("feasible")] == "false")
        .count();
    assert!(infeasible > 0);
    let a = bin()
        .arg("front")
        .arg(&cells)
        .args(["--columns", "usd,predicted_score", "--senses", "min,max"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["skipped_rows"], infeasible);
    assert_eq!(v["id_column"], "cell_id");
    let ids = v["front_ids"].as_array().unwrap();
    let row_indices = v["front_rows"].as_array().unwrap();
    assert!(!ids.is_empty() && ids.len() == row_indices.len());
    for (id, row) in ids.iter().zip(row_indices) {
        let r = &rows[row.as_u64().unwrap() as usize];
        assert_eq!(r[col("cell_id")], id.as_str().unwrap());
        assert_eq!(r[col("feasible")], "true");
    }
}

#[test]
fn init_writes_a_grid_that_checks_and_sweeps() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("grids/mine.toml");
    bin()
        .args([
            "init",
            path.to_str().unwrap(),
            "--models",
            "qwen2.5-7b,Qwen/Qwen2.5-14B-Instruct",
            "--gpus",
            "32",
            "--budget-usd",
            "5000,50000",
        ])
        .assert()
        .success()
        .stdout(predicate::str::contains("(192 cells)"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("# Question:") && text.contains("mean_response_tokens"));
    let a = bin()
        .args(["check", path.to_str().unwrap(), "--json"])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["name"], "mine");
    assert_eq!(v["cells"]["valid"], 192);
    assert_eq!(v["budget_unit"], "usd");
    assert_eq!(v["axes"]["budget"], serde_json::json!([5000.0, 50000.0]));
    // An existing file is kept unless --force; a bad model is named by its flag.
    bin()
        .args(["init", path.to_str().unwrap()])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("already exists"));
    bin()
        .args([
            "init",
            dir.path().join("bad.toml").to_str().unwrap(),
            "--models",
            "qwen9",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with(
            "error: --models: unknown model `qwen9`",
        ));
    assert!(!dir.path().join("bad.toml").exists());
    let a = bin()
        .args(["sweep", path.to_str().unwrap(), "-q", "--json", "--out"])
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["cells_evaluated"], 192);
    let answers = v["recommendation_per_budget"].as_array().unwrap();
    assert_eq!(answers.len(), 2);
    for a in answers {
        let recommended = &a["recommended"];
        assert_eq!(recommended["cell_id"], a["shortlist"][0]["cell_id"]);
        if let Some(cheaper) = a["cheaper_within_noise"].as_object() {
            assert!(cheaper["usd"].as_f64().unwrap() <= 0.9 * recommended["usd"].as_f64().unwrap());
        }
    }
}

#[test]
fn completions_and_json_listings() {
    for shell in ["bash", "zsh", "fish"] {
        let a = bin().args(["completions", shell]).assert().success();
        let text = String::from_utf8(a.get_output().stdout.clone()).unwrap();
        assert!(
            text.contains("rlfrontier") && text.contains("sweep"),
            "{shell}"
        );
    }
    let a = bin().args(["catalog", "gpus", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert!(
        v["gpus"]
            .as_array()
            .unwrap()
            .iter()
            .any(|g| g["id"] == "h100-sxm")
    );
    let dir = tempfile::tempdir().unwrap();
    let a = bin()
        .args([
            "plan",
            grid("race-pilot").to_str().unwrap(),
            "--pilot-budget",
            "3e17 flops",
            "--max-pilots",
            "24",
            "--json",
            "--out",
        ])
        .arg(dir.path().join("plan"))
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let runs = v["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 24);
    assert_eq!(runs[0]["run_id"], "p001");
    assert!(runs[0]["lora_rank"].is_number() && runs[0]["flops_share_learning"].is_number());
    assert_eq!(v["plan"]["grid_name"], "race-pilot");
}

#[test]
fn parquet_tables_hold_the_csv_rows_with_types() {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;
    let dir = tempfile::tempdir().unwrap();
    let csv_dir = dir.path().join("csv");
    let pq_dir = dir.path().join("pq");
    quiet_sweep("race-pilot", &csv_dir).success();
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "-q",
            "--format",
            "parquet",
            "--out",
        ])
        .arg(&pq_dir)
        .assert()
        .success();
    assert!(!pq_dir.join("cells.csv").exists());
    let (headers, rows) = read_csv(&csv_dir.join("cells.csv"));
    let reader =
        SerializedFileReader::new(std::fs::File::open(pq_dir.join("cells.parquet")).unwrap())
            .unwrap();
    assert_eq!(
        reader.metadata().file_metadata().num_rows() as usize,
        rows.len()
    );
    let names: Vec<String> = reader
        .metadata()
        .file_metadata()
        .schema_descr()
        .columns()
        .iter()
        .map(|c| c.name().to_string())
        .collect();
    assert_eq!(names, headers);
    // Every 97th row, every column: the same value, typed.
    for (k, row) in reader.get_row_iter(None).unwrap().enumerate() {
        if k % 97 != 0 {
            continue;
        }
        let row = row.unwrap();
        for (c, (name, field)) in row.get_column_iter().enumerate() {
            let text = &rows[k][c];
            match field {
                Field::Null => assert!(text.is_empty(), "{name} row {k}: {text}"),
                Field::Long(v) => assert_eq!(&v.to_string(), text, "{name}"),
                Field::Double(v) => {
                    let want: f64 = text.parse().unwrap();
                    assert!((v - want).abs() <= 1e-9 * want.abs().max(1.0), "{name}");
                }
                Field::Bool(v) => assert_eq!(&v.to_string(), text, "{name}"),
                Field::Str(v) => assert_eq!(v, text, "{name}"),
                other => panic!("{name}: unexpected {other:?}"),
            }
        }
    }
    for table in ["frontier", "shortlist", "allocation_frontier"] {
        assert!(pq_dir.join(format!("{table}.parquet")).exists(), "{table}");
    }
    // Sweeping the same folder as CSV again removes the stale Parquet cells.
    bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&pq_dir)
        .assert()
        .success();
    assert!(pq_dir.join("cells.csv").exists() && !pq_dir.join("cells.parquet").exists());
    assert!(!pq_dir.join("frontier.parquet").exists());
}

#[test]
fn shortlists_of_grids_that_sweep_turns_show_each_regime_s_setup() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("agentic");
    quiet_sweep("agentic", &out).success();
    let md = std::fs::read_to_string(out.join("shortlist.md")).unwrap();
    assert!(md.contains("| reward | setup | G |"), "{md}");
    assert!(md.contains("| rule | 2 turns |"), "{md}");
    let html = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(html.contains("<th>setup</th>"));
    // The turns column is in every table, and cells.csv carries each cell's turns.
    let cells = std::fs::read_to_string(out.join("cells.csv")).unwrap();
    let header: Vec<&str> = cells.lines().next().unwrap().split(',').collect();
    assert!(header.contains(&"turns") && header.contains(&"tool_seconds"));
    // A grid that sweeps neither has no setup column.
    let plain = dir.path().join("race");
    quiet_sweep("race-pilot", &plain).success();
    let md = std::fs::read_to_string(plain.join("shortlist.md")).unwrap();
    assert!(!md.contains("setup"));
}

#[test]
fn validate_phases_shows_where_the_ledger_puts_a_step_known_only_by_its_total() {
    // NeMo-RL's Qwen3-235B rows publish only their step: --phases lists the ledger's decode,
    // log-prob and update seconds for them, and the TPOT benchmarks are compared as such.
    let out = bin().args(["validate", "--phases"]).assert().success();
    let text = String::from_utf8(out.get_output().stdout.clone()).unwrap();
    assert!(
        text.contains("the ledger's phases of each priced RL row"),
        "{text}"
    );
    let decode_line = text
        .lines()
        .find(|l| l.starts_with("nemo05_q235b_gb200_64_on") && l.contains(" decode "))
        .expect("a decode line for a step-only row");
    assert!(decode_line.trim_end().ends_with('%'), "{decode_line}");
    assert!(
        text.lines().any(|l| l.contains(" tpot ")),
        "no TPOT comparison"
    );
    assert!(text.contains("engine benchmarks"), "{text}");
}

#[test]
#[ignore = "slow (backtest and fit-prior in full); CI runs it: cargo test -- --include-ignored"]
fn the_binary_works_from_an_empty_folder_with_its_bundled_data() {
    // An installed binary, run where there is no clone: the bundled grids (by name or by their
    // repository path), the validation set and the evidence (for backtest and fit-prior) are in
    // the binary.
    let dir = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| bin().current_dir(dir.path()).args(args).assert().success();
    run(&["validate"]).stdout(predicate::str::contains("published timings"));
    run(&["backtest"]).stdout(
        predicate::str::contains("leave one study out")
            .or(predicate::str::contains("each study held out")),
    );
    run(&["fit-prior", "-q"]).stdout(predicate::str::contains(
        "outcome prior fitted to the evidence bundled into the binary",
    ));
    run(&["sweep", "race-pilot", "-q", "--cells", "none", "--out", "a"]);
    run(&[
        "sweep",
        "grids/dollars.toml",
        "-q",
        "--cells",
        "none",
        "--out",
        "b",
    ]);
    assert!(dir.path().join("a/report.html").exists());
    assert!(dir.path().join("b/manifest.json").exists());
}

#[test]
fn check_prints_token_counts_rounded_for_reading() {
    // A logged mean (capped) becomes an uncapped one with many digits; `check` printed it raw
    // (`3630.3034517146757 tokens`, issue 53).
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.toml");
    let text = std::fs::read_to_string(grid("race-pilot"))
        .unwrap()
        .lines()
        .map(|l| {
            if l.starts_with("uncapped_mean_response_tokens") {
                "mean_response_tokens = 900"
            } else {
                l
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&path, text).unwrap();
    let a = bin().arg("check").arg(&path).assert().success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let task = stdout.lines().find(|l| l.starts_with("task:")).unwrap();
    let tokens = task
        .split("responses of ")
        .nth(1)
        .unwrap()
        .split(" tokens")
        .next()
        .unwrap();
    assert!(
        tokens.chars().all(|c| c.is_ascii_digit() || c == ','),
        "{task}"
    );
}

#[test]
fn cells_carry_the_price_interval_on_what_the_budget_leaves_free() {
    // Issue 54: under a dollar budget the dollars are fixed and the interval is on the steps;
    // under a FLOP budget the steps are fixed and it is on the dollars.
    let dir = tempfile::tempdir().unwrap();
    for (name, dollars_fixed) in [("dollars", true), ("race-pilot", false)] {
        let out = dir.path().join(name);
        let summary = quiet_sweep(name, &out).success();
        let (header, rows) = read_csv(&out.join("cells.csv"));
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        let num = |r: &Vec<String>, n: &str| r[col(n)].parse::<f64>().unwrap();
        let feasible: Vec<&Vec<String>> = rows
            .iter()
            .filter(|r| r[col("feasible")] == "true")
            .collect();
        assert!(!feasible.is_empty());
        for r in feasible {
            let (steps, usd, step) = (num(r, "iterations"), num(r, "usd"), num(r, "step_seconds"));
            assert!(num(r, "step_seconds_low") < step && step < num(r, "step_seconds_high"));
            if dollars_fixed {
                assert!(num(r, "iterations_low") <= steps && steps <= num(r, "iterations_high"));
                assert_eq!((num(r, "usd_low"), num(r, "usd_high")), (usd, usd));
            } else {
                assert_eq!(
                    (num(r, "iterations_low"), num(r, "iterations_high")),
                    (steps, steps)
                );
                assert!(num(r, "usd_low") < usd && usd < num(r, "usd_high"));
            }
        }
        // On the dollar grid the prior predicts the same score at every budget: the summary
        // says why in one line.
        let text = String::from_utf8_lossy(&summary.get_output().stdout).to_string();
        assert_eq!(
            text.contains("so the larger budgets' extra steps add nothing it can predict"),
            dollars_fixed,
            "{text}"
        );
    }
}
