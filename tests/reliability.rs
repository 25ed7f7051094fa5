//! Issue 15's classes with the real binary: SIGTERM as Slurm sends it, a stop request during
//! `fit`, two writers on one folder, temporaries of killed runs, output ownership by hash,
//! merge provenance, closed pipes, and hostile numbers.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use std::path::{Path, PathBuf};
use std::process::{Command as Process, Stdio};
use std::time::Duration;

use assert_cmd::cargo::CommandCargoExt;
use predicates::prelude::*;

mod common;
use common::{bin, grid, repo};

fn names_in(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names
}

fn spawn_sweep(grid_file: &Path, out: &Path, cells: &str) -> std::process::Child {
    Process::cargo_bin("rlfrontier")
        .unwrap()
        .args([
            "sweep",
            grid_file.to_str().unwrap(),
            "--cells",
            cells,
            "-q",
            "--out",
        ])
        .arg(out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

fn signal(pid: u32, name: &str) {
    let status = Process::new("kill")
        .args([&format!("-{name}"), &pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn sigterm_stops_a_sweep_with_143_and_leaves_nothing_half_written() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let child = spawn_sweep(&repo("grids/ten-million.toml"), &out, "all");
    std::thread::sleep(Duration::from_millis(1500));
    signal(child.id(), "TERM");
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        result.status.code(),
        Some(143),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    assert!(String::from_utf8_lossy(&result.stderr).contains("interrupted"));
    assert!(
        names_in(&out).is_empty(),
        "left behind: {:?}",
        names_in(&out)
    );
}

/// Plans race-pilot's 24 pilots (the README's walkthrough) into `plan`.
fn plan_race_pilot(plan: &Path) {
    bin()
        .args([
            "plan",
            grid("race-pilot").to_str().unwrap(),
            "--pilot-budget",
            "3e17 flops",
            "--max-pilots",
            "24",
            "--out",
        ])
        .arg(plan)
        .assert()
        .success();
}

/// A plan of race-pilot and results with many checkpoints per run, so that `fit` takes seconds.
fn slow_fit_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let plan = dir.join("plan");
    plan_race_pilot(&plan);
    let truth = dir.join("truth.toml");
    std::fs::write(
        &truth,
        "k_mid_at_7b = 2500\ngain_logit_at_7b = 1.4\nsteepness = 1.5\n",
    )
    .unwrap();
    let results = plan.join("results.csv");
    bin()
        .args(["simulate", "--plan"])
        .arg(plan.join("plan.csv"))
        .arg("--truth")
        .arg(&truth)
        .args(["--noise", "0.005", "--seed", "3", "--out"])
        .arg(&results)
        .assert()
        .success();
    (plan.join("plan.csv"), results)
}

#[test]
fn a_stop_request_during_fit_writes_nothing_and_exits_130() {
    let dir = tempfile::tempdir().unwrap();
    let (plan, results) = slow_fit_inputs(dir.path());
    let out = dir.path().join("fit");
    // Many bootstrap replicates keep fit busy long enough to be interrupted mid-way.
    let child = Process::cargo_bin("rlfrontier")
        .unwrap()
        .arg("fit")
        .arg(&results)
        .arg("--plan")
        .arg(&plan)
        .args(["--bootstrap", "100000", "--out"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    signal(child.id(), "INT");
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        result.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let left: Vec<String> = names_in(&out)
        .into_iter()
        .filter(|n| n != "plots")
        .collect();
    assert!(left.is_empty(), "fit left {left:?}");
    assert!(names_in(&out.join("plots")).is_empty());
}

#[test]
fn two_sweeps_into_one_folder_one_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let big = repo("grids/big.toml");
    // `--cells frontier`: the second pass evaluates every cell (holding the folder for
    // seconds) but writes only the frontier's rows.
    let first = spawn_sweep(&big, &out, "frontier");
    // Wait until the first run has taken the folder (it creates it when it starts writing).
    let started = std::time::Instant::now();
    while !out.exists() && started.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = bin()
        .args([
            "sweep",
            big.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    let first = first.wait_with_output().unwrap();
    assert!(
        first.status.success(),
        "{}",
        String::from_utf8_lossy(&first.stderr)
    );
    assert_eq!(second.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&second.stderr).contains("another rlfrontier run is writing"),
        "{}",
        String::from_utf8_lossy(&second.stderr)
    );
    // The first run's outputs are complete and consistent.
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["cells"]["evaluated"], 1_008_000);
    assert!(out.join("cells.csv").exists());
}

#[test]
fn a_run_held_between_lock_and_check_cannot_be_overtaken() {
    // Issue 51: the ownership check came before the lock, so a second sweep of another grid,
    // delayed between its check and its lock, replaced the first grid's results without
    // --force. The lock now comes first: the run held just after it (a test-only pause of the
    // debug build) keeps the folder, the other is refused at once, and afterwards the folder
    // is the first grid's, which the other grid may not overwrite without --force.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let held = Process::cargo_bin("rlfrontier")
        .unwrap()
        .args([
            "sweep",
            repo("grids/race-pilot.toml").to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .env("RLFRONTIER_TEST_PAUSE", "after_lock:3000")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    while !out.exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(200));
    let other = repo("grids/isocompute.toml");
    let racing = bin()
        .args([
            "sweep",
            other.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(racing.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&racing.stderr).contains("another rlfrontier run is writing"),
        "{}",
        String::from_utf8_lossy(&racing.stderr)
    );
    let held = held.wait_with_output().unwrap();
    assert!(
        held.status.success(),
        "{}",
        String::from_utf8_lossy(&held.stderr)
    );
    let after = bin()
        .args([
            "sweep",
            other.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(after.status.code(), Some(2));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(out.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(manifest["grid"]["name"], "race-pilot", "{manifest}");
}

#[test]
fn temporaries_of_a_killed_run_are_cleaned_by_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    // What SIGKILL leaves: a half-written table and a moved-aside report of a dead process.
    let dead = 4_000_000_000u32;
    std::fs::write(
        out.join(format!(".cells.csv.rlfrontier-tmp-{dead}")),
        "half",
    )
    .unwrap();
    std::fs::write(
        out.join(format!(".report.html.rlfrontier-bak-{dead}")),
        "old",
    )
    .unwrap();
    bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&out)
        .assert()
        .success();
    let hidden: Vec<String> = names_in(&out)
        .into_iter()
        .filter(|n| n.starts_with('.'))
        .collect();
    assert!(hidden.is_empty(), "{hidden:?}");
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(report.contains("<!DOCTYPE html>"), "the new report won");
}

/// Writes "mine" into each of `paths`: files of the user's that the tool must not touch.
fn plant(paths: &[PathBuf]) {
    for p in paths {
        std::fs::write(p, "mine").unwrap();
    }
}

/// Each of `paths` still holds what [`plant`] wrote.
fn assert_still_mine(paths: &[PathBuf]) {
    for p in paths {
        assert_eq!(
            std::fs::read_to_string(p).unwrap(),
            "mine",
            "{}",
            p.display()
        );
    }
}

#[test]
fn the_cleanup_never_touches_files_it_did_not_write() {
    // Backups and temporaries of the user's own (no tool token), in the folder, in a subfolder
    // and behind a symlink out of it; a folder of the tool's with a symlink loop in it.
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(out.join("notes")).unwrap();
    std::fs::create_dir_all(out.join("plots")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let dead = 4_000_000_000u32;
    let planted = [
        out.join(".x.bak-1"),
        out.join(format!(".deploy.sh.tmp-{dead}")),
        out.join("notes").join(".x.bak-1"),
        out.join("notes")
            .join(format!(".cells.csv.rlfrontier-bak-{dead}")),
        outside.join(format!(".report.html.rlfrontier-bak-{dead}")),
        outside.join(".x.bak-1"),
        out.join("plots").join(".x.bak-1"),
        out.join("plots").join(".x.tmp-1"),
    ];
    plant(&planted);
    std::os::unix::fs::symlink(&outside, out.join("plots").join("elsewhere")).unwrap();
    std::os::unix::fs::symlink(&out, out.join("plots").join("loop")).unwrap();
    // Three symlinks in a ring (a run used to follow them forever).
    let plots = out.join("plots");
    std::os::unix::fs::symlink(plots.join("b"), plots.join("a")).unwrap();
    std::os::unix::fs::symlink(plots.join("c"), plots.join("b")).unwrap();
    std::os::unix::fs::symlink(plots.join("a"), plots.join("c")).unwrap();
    // A manifest of an earlier sweep of this grid, so the folder is the tool's.
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .arg("--force")
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    assert_still_mine(&planted);
    assert!(!outside.join("report.html").exists());
}

#[test]
fn a_sweep_into_the_working_folder_never_touches_its_git_folder() {
    // `--out .` in a repository: the cleanup looks at the folder itself and the tool's own
    // subfolders, never `.git`, whatever its files are called.
    let dir = tempfile::tempdir().unwrap();
    let git = dir.path().join(".git");
    std::fs::create_dir_all(git.join("refs")).unwrap();
    let planted = [
        git.join("HEAD"),
        git.join(".x.bak-1"),
        git.join(".index.tmp-1"),
        git.join(format!(".cells.csv.rlfrontier-bak-{}", 4_000_000_000u32)),
        git.join("refs").join(".main.bak-1"),
    ];
    plant(&planted);
    bin()
        .current_dir(dir.path())
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q"])
        .args(["--cells", "none", "--force", "--out", "."])
        .timeout(std::time::Duration::from_secs(120))
        .assert()
        .success();
    assert_still_mine(&planted);
    assert!(dir.path().join("manifest.json").exists());
}

#[test]
fn a_folder_of_someone_elses_files_is_refused_without_force_and_kept_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("cells.parquet"), "my own table").unwrap();
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let refused = bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("--force") && stderr.lines().count() == 1,
        "{stderr}"
    );
    assert_eq!(names_in(&out), ["cells.parquet", "notes.txt"]);
    // With --force the tool writes its own files beside them and deletes nothing it did not
    // write (its own CSV run does not remove a Parquet table no manifest of its lists).
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
    assert_eq!(
        std::fs::read_to_string(out.join("cells.parquet")).unwrap(),
        "my own table"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("notes.txt")).unwrap(),
        "mine"
    );
}

#[test]
fn a_grid_with_another_file_but_the_same_name_does_not_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("out");
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    // Same name, different content and file.
    let other = dir.path().join("race-pilot.toml");
    let text = std::fs::read_to_string(grid("race-pilot"))
        .unwrap()
        .replace("seed = 7", "seed = 8");
    std::fs::write(&other, text).unwrap();
    bin()
        .args([
            "sweep",
            other.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("from another file"));
    // A grid named to escape its folder is refused before anything is written.
    let escape = dir.path().join("escape.toml");
    std::fs::write(
        &escape,
        std::fs::read_to_string(grid("race-pilot"))
            .unwrap()
            .replace("name = \"race-pilot\"", "name = \"..\""),
    )
    .unwrap();
    bin()
        .current_dir(dir.path())
        .args(["sweep", escape.to_str().unwrap(), "-q"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("name"));
}

#[test]
fn merge_refuses_a_shard_whose_cells_were_swapped_edited_or_cut_short() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |k: u32| {
        let out = dir.path().join(format!("s{k}"));
        bin()
            .args([
                "sweep",
                grid("race-pilot").to_str().unwrap(),
                "-q",
                "--shard",
            ])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        out
    };
    let (s0, s1) = (shard(0), shard(1));
    let original = std::fs::read_to_string(s1.join("cells.csv")).unwrap();
    let merged = dir.path().join("m");
    let refuse = |why: &str| {
        let out = bin()
            .args(["merge"])
            .arg(&s0)
            .arg(&s1)
            .arg("--out")
            .arg(&merged)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "{why}: {stderr}");
        assert!(stderr.contains("sweep the shard again"), "{why}: {stderr}");
        assert!(
            !merged.join("cells.csv").exists(),
            "{why}: nothing is written"
        );
    };
    // Shard 0's rows copied into shard 1.
    std::fs::copy(s0.join("cells.csv"), s1.join("cells.csv")).unwrap();
    refuse("copied");
    // One value edited (the ids still right).
    let mut lines: Vec<String> = original.lines().map(str::to_string).collect();
    lines[5].push('9');
    std::fs::write(s1.join("cells.csv"), lines.join("\n") + "\n").unwrap();
    refuse("edited");
    // Cut short: the header and two rows.
    std::fs::write(s1.join("cells.csv"), lines[..3].join("\n") + "\n").unwrap();
    refuse("short");
    // Put back, it merges.
    std::fs::write(s1.join("cells.csv"), &original).unwrap();
    bin()
        .args(["merge"])
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&merged)
        .assert()
        .success();
}

#[test]
fn merge_checks_what_the_shards_were_computed_with() {
    let dir = tempfile::tempdir().unwrap();
    let shard = |k: u32, extra: &[&str]| {
        let out = dir.path().join(format!("s{k}"));
        bin()
            .args([
                "sweep",
                grid("race-pilot").to_str().unwrap(),
                "-q",
                "--shard",
            ])
            .arg(format!("{k}/2"))
            .args(extra)
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        out
    };
    let s0 = shard(0, &[]);
    let cheap = dir.path().join("cheap.toml");
    std::fs::write(
        &cheap,
        "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 1.0\n",
    )
    .unwrap();
    let s1 = shard(1, &["--catalog", cheap.to_str().unwrap()]);
    bin()
        .args(["merge"])
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(dir.path().join("m"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("another catalog"));
    // Onto a shard's own folder: refused, the shard intact.
    let s1 = shard(1, &[]);
    let before = std::fs::read(s1.join("cells.csv")).unwrap();
    bin()
        .args(["merge"])
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&s1)
        .arg("--force")
        .assert()
        .code(2)
        .stderr(predicate::str::contains("shard 1's folder"));
    assert_eq!(std::fs::read(s1.join("cells.csv")).unwrap(), before);
    // A copied aggregate counts cells twice.
    std::fs::copy(s0.join("aggregate.json"), s1.join("aggregate.json")).unwrap();
    bin()
        .args(["merge"])
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(dir.path().join("m2"))
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "the aggregate.json was copied or edited",
        ));
}

#[test]
fn a_closed_stdout_ends_quietly_and_a_closed_stderr_does_not_panic() {
    for args in [
        vec!["completions", "bash"],
        vec!["catalog"],
        vec!["cost", "--model", "qwen2.5-7b", "--steps", "10"],
    ] {
        let mut child = Process::cargo_bin("rlfrontier")
            .unwrap()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let result = child.wait_with_output().unwrap();
        assert_eq!(result.status.code(), Some(0), "{args:?}");
        assert!(
            result.stderr.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&result.stderr)
        );
    }
    // An error with stderr closed: exit 2, no panic (a panic exits 101).
    let mut child = Process::cargo_bin("rlfrontier")
        .unwrap()
        .args(["cost", "--model", "qwen9", "--steps", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stderr.take());
    assert_eq!(child.wait().unwrap().code(), Some(2));
}

#[test]
fn hostile_numbers_are_refused_at_the_boundary() {
    let dir = tempfile::tempdir().unwrap();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (
            vec!["--finetune".into(), "lora:18014398509481984".into()],
            "the LoRA rank must be an integer from 1 to 65536",
        ),
        (
            vec!["--finetune".into(), "lora:8192".into()],
            "above the hidden size of `qwen2.5-7b` (3584)",
        ),
        (
            vec!["--usd-per-gpu-hour".into(), "1e308".into()],
            "1e308 is above 1000 (no GPU rents for more than $1,000 an hour",
        ),
    ];
    for (extra, wanted) in cases {
        bin()
            .args(["cost", "--model", "qwen2.5-7b", "--steps", "10"])
            .args(&extra)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(wanted));
    }
    for (entry, wanted) in [
        (
            "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 0.0\n",
            "usd_per_gpu_hour: 0 is outside 0.01",
        ),
        (
            "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 1e308\n",
            "no GPU rents for",
        ),
        (
            // Issue 51: a GPU of 1e-300 TFLOP/s priced a run at 3.4e38 seconds, exit 0.
            "[[gpu]]\nid = \"h100-sxm\"\nbf16_dense_tflops = 1e-300\n",
            "bf16_dense_tflops: 1e-300 is outside 1 TFLOP/s to 100000 TFLOP/s",
        ),
        (
            "[[gpu]]\nid = \"h100-sxm\"\nbandwidth_tbps = 500\n",
            "is outside 0.1 TB/s to 100 TB/s",
        ),
        (
            "[[model]]\nid = \"odd\"\nname = \"x/odd\"\nlayers = 2\nhidden = 64\nheads = 4\nkv_heads = 8\nhead_dim = 16\nintermediate = 128\nvocab = 1000\ntied_embeddings = true\npublished_params = 0\nsource = \"t\"\ndate = \"2026\"\n",
            "key-value heads must divide",
        ),
    ] {
        let path = dir.path().join("catalog.toml");
        std::fs::write(&path, entry).unwrap();
        bin()
            .args([
                "cost",
                "--model",
                "qwen2.5-7b",
                "--steps",
                "10",
                "--catalog",
            ])
            .arg(&path)
            .assert()
            .code(2)
            .stderr(predicate::str::contains(wanted));
    }
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "--threads",
            "65535",
        ])
        .assert()
        .code(2);
}

#[test]
fn fit_refuses_an_edited_plan_and_another_catalog() {
    let dir = tempfile::tempdir().unwrap();
    let plan = dir.path().join("plan");
    plan_race_pilot(&plan);
    let results = repo("results/examples/race-pilot-pilots/results.csv");
    let fit = |extra: &[&str]| {
        bin()
            .arg("fit")
            .arg(&results)
            .arg("--plan")
            .arg(plan.join("plan.csv"))
            .args(["--bootstrap", "5", "--out"])
            .arg(dir.path().join("fit"))
            .args(extra)
            .assert()
    };
    let cheap = dir.path().join("cheap.toml");
    std::fs::write(
        &cheap,
        "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 1.0\n",
    )
    .unwrap();
    fit(&["--catalog", cheap.to_str().unwrap()])
        .code(2)
        .stderr(predicate::str::contains("priced with another catalog"));
    let text = std::fs::read_to_string(plan.join("plan.csv")).unwrap();
    std::fs::write(plan.join("plan.csv"), text.replacen(",631,", ",632,", 1)).unwrap();
    fit(&[]).code(2).stderr(predicate::str::contains(
        "changed since `rlfrontier plan` wrote it",
    ));
}

#[test]
fn merge_finds_the_grid_from_another_working_directory() {
    // Shards swept from the repository with a relative grid path, merged from elsewhere.
    let dir = tempfile::tempdir().unwrap();
    for k in 0..2 {
        bin()
            .current_dir(repo(""))
            .args(["sweep", "grids/race-pilot.toml", "-q", "--shard"])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(dir.path().join(format!("s{k}")))
            .assert()
            .success();
    }
    let elsewhere = tempfile::tempdir().unwrap();
    bin()
        .current_dir(elsewhere.path())
        .arg("merge")
        .arg(dir.path().join("s0"))
        .arg(dir.path().join("s1"))
        .arg("--out")
        .arg(dir.path().join("merged"))
        .assert()
        .success();
    assert!(dir.path().join("merged/cells.csv").exists());
}

/// Stops a running command, sends it `name`, and lets it go on: the signal is then handled at a
/// known point of its run (after start-up, before it could finish), whatever the machine's load.
fn signal_mid_run(child: &std::process::Child, after: Duration, name: &str) {
    std::thread::sleep(after);
    signal(child.id(), "STOP");
    signal(child.id(), name);
    signal(child.id(), "CONT");
}

/// Runs `rlfrontier ARGS`, sends it `name` mid-run and checks its exit code.
fn interrupted_run(args: &[std::ffi::OsString], name: &str, expected_code: i32) {
    interrupted_run_once(args, name, expected_code, None);
}

/// [`interrupted_run`], the signal sent as soon as `started` exists (the command has begun its
/// work) instead of after a fixed delay, which a release build can outrun.
fn interrupted_run_once(
    args: &[std::ffi::OsString],
    name: &str,
    expected_code: i32,
    started: Option<&Path>,
) {
    let child = Process::cargo_bin("rlfrontier")
        .unwrap()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let delay = match started {
        Some(path) => {
            let t0 = std::time::Instant::now();
            while !path.exists() && t0.elapsed() < Duration::from_secs(30) {
                std::thread::sleep(Duration::from_micros(200));
            }
            Duration::ZERO
        }
        None => Duration::from_millis(120),
    };
    signal_mid_run(&child, delay, name);
    let result = child.wait_with_output().unwrap();
    assert_eq!(
        result.status.code(),
        Some(expected_code),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
}

/// The entries of `dir` other than `folder` (an empty subfolder a command creates up front).
fn names_besides(dir: &Path, folder: &str) -> Vec<String> {
    let left: Vec<String> = names_in(dir).into_iter().filter(|n| n != folder).collect();
    assert!(
        names_in(&dir.join(folder)).is_empty(),
        "{folder} is not empty"
    );
    left
}

#[test]
fn sigterm_during_plan_exits_143_and_writes_no_plan() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("plan");
    // Planning the million-cell grid takes a few hundred milliseconds in a debug build.
    let args: Vec<std::ffi::OsString> = vec![
        "plan".into(),
        repo("grids/big.toml").into(),
        "--pilot-budget".into(),
        "3e17 flops".into(),
        "--max-pilots".into(),
        "24".into(),
        "--out".into(),
        out.clone().into(),
    ];
    // The output folder exists before the pilots are chosen, the slow part.
    interrupted_run_once(&args, "TERM", 143, Some(&out));
    let left = names_besides(&out, "launch");
    assert!(left.is_empty(), "plan left {left:?}");
}

#[test]
fn sigint_during_merge_exits_130_and_writes_no_merged_output() {
    let dir = tempfile::tempdir().unwrap();
    // A slice of the big grid, in two shards with every row.
    let grid_file = common::big_slice_grid(dir.path());
    let shards: Vec<PathBuf> = (0..2).map(|k| dir.path().join(format!("s{k}"))).collect();
    for (k, shard) in shards.iter().enumerate() {
        bin()
            .args(["sweep", grid_file.to_str().unwrap(), "-q", "--shard"])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(shard)
            .assert()
            .success();
    }
    let out = dir.path().join("merged");
    let mut args: Vec<std::ffi::OsString> = vec!["merge".into()];
    args.extend(shards.iter().map(|s| s.clone().into()));
    args.extend(["--out".into(), out.clone().into()]);
    interrupted_run(&args, "INT", 130);
    let left = names_besides(&out, "plots");
    assert!(left.is_empty(), "merge left {left:?}");
    // The shards are untouched and still merge.
    bin()
        .arg("merge")
        .args(&shards)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    assert!(out.join("cells.csv").exists());
}

/// A small tmpfs mounted for one test and unmounted when dropped; None where this process may
/// not mount (not root, or a sandbox without the capability), and the test then says so.
struct SmallDisk {
    dir: tempfile::TempDir,
}

impl SmallDisk {
    fn mount(size: &str) -> Option<SmallDisk> {
        let dir = tempfile::tempdir().ok()?;
        let mounted = Process::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir.path())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        mounted.then_some(SmallDisk { dir })
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Process::new("umount").arg(self.dir.path()).status();
    }
}

fn digests(dir: &Path) -> Vec<(String, Vec<u8>)> {
    names_in(dir)
        .into_iter()
        .filter(|n| n != "plots")
        .map(|n| {
            let bytes = std::fs::read(dir.join(&n)).unwrap();
            (n, bytes)
        })
        .collect()
}

#[test]
fn a_full_disk_fails_with_exit_1_and_keeps_the_previous_results_whole() {
    let Some(disk) = SmallDisk::mount("3m") else {
        eprintln!(
            "skipped: cannot mount a tmpfs here (needs root); the commit protocol's unit tests inject the same failure"
        );
        return;
    };
    let out = disk.path().join("out");
    // Frontier rows only: about 1 MB, fits.
    bin()
        .args([
            "sweep",
            grid("race-pilot").to_str().unwrap(),
            "-q",
            "--cells",
            "frontier",
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let before = digests(&out);
    // Every row: cells.csv alone needs 3.6 MB. The disk fills while staging.
    let result = bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(result.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert!(
        stderr.contains("No space left on device") && stderr.lines().count() == 1,
        "{stderr}"
    );
    // The previous results are still there, byte for byte, with no temporary beside them.
    assert_eq!(digests(&out), before);
    // Into an empty folder, nothing is left at all.
    let fresh = disk.path().join("fresh");
    bin()
        .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q", "--out"])
        .arg(&fresh)
        .assert()
        .code(1);
    assert!(names_in(&fresh).is_empty(), "left {:?}", names_in(&fresh));
}

/// Every visible file under `dir` with its bytes (`manifest.json` reduced to its grid hash: its
/// timings differ between runs).
fn snapshot(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), String::new())];
    while let Some((folder, prefix)) = stack.pop() {
        for entry in std::fs::read_dir(&folder).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let path = entry.path();
            if entry.file_type().unwrap().is_dir() {
                stack.push((path, format!("{prefix}{name}/")));
            } else if name == "manifest.json" {
                let m: serde_json::Value =
                    serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
                out.push((
                    format!("{prefix}{name}"),
                    m["grid"]["sha256"].to_string().into_bytes(),
                ));
            } else {
                out.push((format!("{prefix}{name}"), std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn a_sweep_killed_at_any_moment_leaves_the_old_set_or_the_new_one() {
    let dir = tempfile::tempdir().unwrap();
    let new_grid = dir.path().join("new.toml");
    std::fs::write(
        &new_grid,
        std::fs::read_to_string(grid("race-pilot"))
            .unwrap()
            .replace("seed = 7", "seed = 8"),
    )
    .unwrap();
    let sweep = |grid_path: &Path, out: &Path| {
        bin()
            .args(["sweep", "-q", "--force"])
            .arg(grid_path)
            .arg("--out")
            .arg(out)
            .assert()
            .success();
    };
    let (old_out, new_out) = (dir.path().join("old"), dir.path().join("new"));
    sweep(&grid("race-pilot"), &old_out);
    sweep(&new_grid, &new_out);
    let (old_set, new_set) = (snapshot(&old_out), snapshot(&new_out));
    let mut seen = Vec::new();
    for k in 0..12u64 {
        let out = dir.path().join(format!("k{k}"));
        sweep(&grid("race-pilot"), &out);
        let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rlfrontier"))
            .args(["sweep", "-q", "--force"])
            .arg(&new_grid)
            .arg("--out")
            .arg(&out)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        // Spread over a sweep's run time (the commit is its last few milliseconds).
        std::thread::sleep(std::time::Duration::from_millis(40 + 97 * k));
        let _ = child.kill(); // SIGKILL
        let _ = child.wait();
        // What the next run does first.
        rlfrontier::report::remove_stale_temporaries(&out);
        let now = snapshot(&out);
        assert!(
            now == old_set || now == new_set,
            "kill {k}: a mix of old and new files: {:?}",
            now.iter().map(|(n, _)| n).collect::<Vec<_>>()
        );
        seen.push(now == new_set);
        let hidden: Vec<String> = names_in(&out)
            .into_iter()
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "kill {k}: {hidden:?}");
    }
    // Which of the two each kill left depends on the machine's speed; both are consistent. The
    // kill at each step of the commit itself is `report::atomic`'s crash test.
    eprintln!(
        "kills that left the old set: {}, the new set: {}",
        seen.iter().filter(|&&new| !new).count(),
        seen.iter().filter(|&&new| new).count()
    );
}

/// race-pilot swept in two shards without cells (`s0`, `s1` under `dir`), for the merge tests.
fn race_pilot_halves(dir: &Path) -> (PathBuf, PathBuf) {
    let shard = |k: u32| {
        let out = dir.join(format!("s{k}"));
        bin()
            .args(["sweep", grid("race-pilot").to_str().unwrap(), "-q"])
            .args(["--cells", "none", "--shard"])
            .arg(format!("{k}/2"))
            .arg("--out")
            .arg(&out)
            .assert()
            .success();
        out
    };
    (shard(0), shard(1))
}

#[test]
fn fit_plan_and_merge_are_refused_a_folder_another_run_holds() {
    // Issue 24: sweep, plan, fit and merge hold the output folder's lock for as long as they
    // write it. The test holds the lock as another run would, and each command is refused at
    // once without writing anything into the folder.
    let dir = tempfile::tempdir().unwrap();
    let (plan_csv, results) = slow_fit_inputs(dir.path());
    let (s0, s1) = race_pilot_halves(dir.path());
    let held = dir.path().join("held");
    std::fs::create_dir(&held).unwrap();
    let lock = std::fs::File::open(&held).unwrap();
    lock.try_lock().unwrap();
    let race_pilot = grid("race-pilot");
    let commands: [Vec<std::ffi::OsString>; 3] = [
        vec![
            "plan".into(),
            race_pilot.clone().into(),
            "--pilot-budget".into(),
            "3e17 flops".into(),
            "--max-pilots".into(),
            "8".into(),
        ],
        vec![
            "fit".into(),
            results.into(),
            "--plan".into(),
            plan_csv.into(),
            "--bootstrap".into(),
            "20".into(),
        ],
        vec!["merge".into(), s0.into(), s1.into()],
    ];
    for args in commands {
        let out = bin().args(&args).arg("--out").arg(&held).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("another rlfrontier run is writing"),
            "{args:?}: {stderr}"
        );
        assert!(
            names_in(&held).is_empty(),
            "{args:?}: {:?}",
            names_in(&held)
        );
    }
    drop(lock);
}

#[test]
fn plan_and_fit_with_force_write_beside_someone_elses_files_and_keep_them() {
    // Issue 24: --force replaces only the files the tool would write.
    let dir = tempfile::tempdir().unwrap();
    let (plan_csv, results) = slow_fit_inputs(dir.path());
    let foreign = |out: &Path| {
        std::fs::create_dir_all(out.join("launch")).unwrap();
        std::fs::write(out.join("notes.txt"), "mine").unwrap();
        std::fs::write(out.join("launch").join("deploy.sh"), "mine").unwrap();
    };
    let kept = |out: &Path| {
        for f in ["notes.txt", "launch/deploy.sh"] {
            assert_eq!(std::fs::read_to_string(out.join(f)).unwrap(), "mine", "{f}");
        }
    };
    let planned = dir.path().join("planned");
    foreign(&planned);
    let plan = |force: bool| {
        let mut c = bin();
        c.args(["plan", grid("race-pilot").to_str().unwrap()])
            .args(["--pilot-budget", "3e17 flops", "--max-pilots", "8", "--out"])
            .arg(&planned);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    assert_eq!(plan(false).status.code(), Some(2));
    kept(&planned);
    assert!(plan(true).status.success());
    kept(&planned);
    assert!(planned.join("plan.csv").exists());
    let fitted = dir.path().join("fitted");
    foreign(&fitted);
    let fit = |force: bool| {
        let mut c = bin();
        c.arg("fit")
            .arg(&results)
            .arg("--plan")
            .arg(&plan_csv)
            .args(["--bootstrap", "20", "--out"])
            .arg(&fitted);
        if force {
            c.arg("--force");
        }
        c.output().unwrap()
    };
    assert_eq!(fit(false).status.code(), Some(2));
    kept(&fitted);
    let out = fit(true);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    kept(&fitted);
    assert!(fitted.join("calibration.json").exists());
}

#[test]
fn merge_refuses_an_aggregate_whose_pools_are_filed_under_another_budget() {
    // A shard's aggregate.json whose budget pools were re-keyed (edited, or copied from a grid
    // with more budgets) is refused before anything is written, instead of being decided as a
    // budget the grid does not have.
    let dir = tempfile::tempdir().unwrap();
    let (s0, s1) = race_pilot_halves(dir.path());
    let path = s1.join("aggregate.json");
    let mut aggregate: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    // The pools are a list of [budget index, cells] pairs: move the first to budget 999.
    aggregate["shortlist_pool"][0][0] = serde_json::json!(999);
    std::fs::write(&path, serde_json::to_vec(&aggregate).unwrap()).unwrap();
    let merged = dir.path().join("m");
    let out = bin()
        .arg("merge")
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&merged)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("aggregate.json"), "{stderr}");
    assert!(!merged.exists() || names_in(&merged).is_empty());
}

#[test]
fn no_single_file_writer_replaces_its_input_or_an_existing_file_without_force() {
    // Issue 51: `collect a/p001.jsonl --out a/p001.jsonl`, `import-model m/config.json --out
    // m/config.json`, `simulate --plan P/plan.csv --out P/plan.csv`, `validate v.csv --csv v.csv`
    // replaced the file they read; calibrate-hw --out and backtest --csv overwrote any file.
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let log = d.join("p001.jsonl");
    std::fs::write(&log, "{\"step\":0,\"data\":{\"val/acc\":0.4}}\n").unwrap();
    let config = d.join("config.json");
    std::fs::write(
        &config,
        r#"{"architectures":["Qwen2ForCausalLM"],"hidden_size":896,"intermediate_size":4864,"num_hidden_layers":24,"num_attention_heads":14,"num_key_value_heads":2,"vocab_size":151936,"max_position_embeddings":32768,"tie_word_embeddings":true}"#,
    )
    .unwrap();
    let timings = d.join("v.csv");
    std::fs::copy(repo("validation/phase_timings.csv"), &timings).unwrap();
    let mine = d.join("mine.txt");
    std::fs::write(&mine, "keep").unwrap();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let cases: Vec<(Vec<String>, &Path)> = vec![
        (
            vec![
                "collect".into(),
                s(&log),
                "--metric".into(),
                "val/acc".into(),
                "--out".into(),
                s(&log),
            ],
            &log,
        ),
        (
            vec![
                "import-model".into(),
                s(&config),
                "--id".into(),
                "m".into(),
                "--out".into(),
                s(&config),
            ],
            &config,
        ),
        (
            vec!["validate".into(), s(&timings), "--csv".into(), s(&timings)],
            &timings,
        ),
        (
            vec![
                "collect".into(),
                s(&log),
                "--metric".into(),
                "val/acc".into(),
                "--out".into(),
                s(&mine),
            ],
            &mine,
        ),
        (
            vec![
                "import-model".into(),
                s(&config),
                "--id".into(),
                "m".into(),
                "--out".into(),
                s(&mine),
            ],
            &mine,
        ),
        (
            [
                "calibrate-hw",
                "--model",
                "qwen2.5-7b",
                "--gpus",
                "8",
                "--gen-seconds",
                "100",
                "--update-seconds",
                "50",
                "--out",
            ]
            .iter()
            .map(|a| a.to_string())
            .chain([s(&mine)])
            .collect(),
            &mine,
        ),
        (
            vec!["validate".into(), s(&timings), "--csv".into(), s(&mine)],
            &mine,
        ),
        (
            vec![
                "backtest".into(),
                "--summary".into(),
                "--quiet".into(),
                "--csv".into(),
                s(&mine),
            ],
            &mine,
        ),
    ];
    for (args, kept) in &cases {
        let before = std::fs::read(kept).unwrap();
        let out = bin().args(args).current_dir(repo(".")).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("is also an input") || stderr.contains("exists; pass --force"),
            "{args:?}: {stderr}"
        );
        assert_eq!(
            std::fs::read(kept).unwrap(),
            before,
            "{args:?} changed {}",
            kept.display()
        );
    }
    // With --force an existing output is replaced; an input never is.
    bin()
        .args([
            "collect",
            &s(&log),
            "--metric",
            "val/acc",
            "--force",
            "--out",
            &s(&mine),
        ])
        .assert()
        .success();
    bin()
        .args([
            "collect",
            &s(&log),
            "--metric",
            "val/acc",
            "--force",
            "--out",
            &s(&log),
        ])
        .assert()
        .code(2);
}

#[test]
fn merge_uses_no_number_the_shards_sweep_did_not_write() {
    // Issue 51: merge trusted aggregate.json's numbers (only ids and counts were checked): an
    // edited score or cost gave a frontier.csv contradicting cells.csv, and a cost of 1e-305
    // looped forever in the plotting library. The manifest records the aggregate's SHA-256 and
    // the model's identity; both must match.
    let dir = tempfile::tempdir().unwrap();
    let grid_file = repo("grids/race-pilot.toml");
    let shard = |i: u32| {
        let out = dir.path().join(format!("s{i}"));
        bin()
            .args([
                "sweep",
                grid_file.to_str().unwrap(),
                "-q",
                "--cells",
                "none",
            ])
            .args(["--shard", &format!("{i}/2"), "--out"])
            .arg(&out)
            .assert()
            .success();
        out
    };
    let (s0, s1) = (shard(0), shard(1));
    let manifest: serde_json::Value =
        serde_json::from_slice(&std::fs::read(s0.join("manifest.json")).unwrap()).unwrap();
    assert_eq!(
        manifest["model_identity"].as_str().unwrap().len(),
        32,
        "{manifest}"
    );
    let aggregate = s1.join("aggregate.json");
    let text = std::fs::read_to_string(&aggregate).unwrap();
    // One number edited, ids and counts intact.
    let at = text.find("\"usd\":").expect("a cost in the aggregate") + "\"usd\":".len();
    let edited = format!(
        "{}1e-305{}",
        &text[..at],
        &text[at..].trim_start_matches(|c: char| c.is_ascii_digit()
            || c == '.'
            || c == 'e'
            || c == '-'
            || c == '+')
    );
    std::fs::write(&aggregate, edited).unwrap();
    let out = dir.path().join("merged");
    bin()
        .arg("merge")
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&out)
        .timeout(std::time::Duration::from_secs(60))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("SHA-256 differs"));
    assert!(!out.exists(), "a refused merge left {}", out.display());
    // A shard of another build of the model is refused by its identity.
    std::fs::write(&aggregate, text).unwrap();
    let m1 = s1.join("manifest.json");
    let manifest = std::fs::read_to_string(&m1).unwrap();
    let id = manifest_field(&manifest, "model_identity");
    std::fs::write(&m1, manifest.replace(&id, &"0".repeat(32))).unwrap();
    bin()
        .arg("merge")
        .arg(&s0)
        .arg(&s1)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("another build of the model"));
}

/// The string value of a top-level field of a JSON text.
fn manifest_field(text: &str, field: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(text).unwrap();
    v[field].as_str().unwrap().to_string()
}
