//! The bad-input suite: every case must exit with code 2, print one line on stderr that names
//! the file (and line) or the flag, the field, and how to fix it, and write nothing.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use std::path::Path;

mod common;
use common::{bin, repo};

const GRID: &str = include_str!("../grids/race-pilot.toml");

/// Peak resident memory a refusal may take (issue 24: "each unbounded input refused within a
/// second and 100 MB").
const REFUSAL_MAX_RSS_KB: i64 = 100 * 1024;

/// A refusal taking this long has read what it should have refused: a guard against a hang, far
/// above the milliseconds a refusal takes (speed itself is measured in benchmarks).
const REFUSAL_HANG_SECONDS: f64 = 20.0;

/// What a finished run printed and took: (exit code, stderr, peak RSS in KB, seconds).
// The child is reaped by wait4 (for its rusage), not by `Child::wait`.
#[allow(clippy::zombie_processes)]
fn run_measured(dir: &Path, args: &[String]) -> (Option<i32>, String, i64, f64) {
    use std::io::Read;
    let started = std::time::Instant::now();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_rlfrontier"))
        .current_dir(dir)
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to overwrite.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on our own child's pid, with valid pointers; it reaps the child, which
    // `child` then never waits for.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t, "wait4 failed");
    let seconds = started.elapsed().as_secs_f64();
    let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
    (code, stderr, usage.ru_maxrss, seconds)
}

/// Runs `args` in `dir` and checks the contract; `expect` are substrings the message must hold.
fn refused(dir: &Path, args: &[String], expect: &[&str]) {
    let (code, stderr, rss_kb, seconds) = run_measured(dir, args);
    assert_eq!(code, Some(2), "{args:?}: exit {code:?}, stderr: {stderr}");
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: one line: {stderr}"
    );
    for e in expect {
        assert!(stderr.contains(e), "{args:?}: expected `{e}` in: {stderr}");
    }
    for written in ["out", "fitout"] {
        let p = dir.join(written);
        assert!(
            !p.exists() || std::fs::read_dir(&p).unwrap().next().is_none(),
            "{args:?}: wrote into {written}"
        );
    }
    assert!(
        rss_kb <= REFUSAL_MAX_RSS_KB,
        "{args:?}: refused at a peak of {rss_kb} KB"
    );
    assert!(
        seconds < REFUSAL_HANG_SECONDS,
        "{args:?}: refused after {seconds:.1} s"
    );
}

fn s(v: &[&str]) -> Vec<String> {
    v.iter().map(|x| x.to_string()).collect()
}

/// Grid cases: (replace this, with that, expected substrings). Each runs `sweep` on the edited grid.
const GRID_CASES: &[(&str, &str, &[&str])] = &[
    (
        "name = \"race-pilot\"",
        "name = [\"race-pilot\"",
        &["g.toml:", "invalid TOML"],
    ),
    (
        "name = \"race-pilot\"",
        "nmae = \"race-pilot\"",
        &["g.toml:", "nmae", "did you mean `name`"],
    ),
    (
        "group_size = [2, 4, 8, 16]",
        "gruop_size = [2, 4]",
        &["g.toml:", "axes.gruop_size", "did you mean `group_size`"],
    ),
    (
        "[hardware]",
        "[hardwear]",
        &["g.toml:", "did you mean `hardware`"],
    ),
    (
        "gpus = 8",
        "gpus = \"8\"",
        &["g.toml:", "hardware.gpus", "remove the quotes"],
    ),
    (
        "group_size = [2, 4, 8, 16]",
        "group_size = [\"8\"]",
        &["g.toml:", "axes.group_size", "remove the quotes"],
    ),
    (
        "kl_reference = true",
        "kl_reference = 1",
        &["g.toml:", "run.kl_reference", "true or false"],
    ),
    (
        "model = [\"qwen2.5-1.5b\", \"qwen2.5-3b\", \"qwen2.5-7b\"]",
        "model = []",
        &["g.toml:", "axes.model", "empty list"],
    ),
    (
        "budget = [\"1e16 flops\", \"2.5e16 flops\", \"1e17 flops\", \"3e17 flops\", \"1e18 flops\"]",
        "budget = []",
        &["g.toml:", "axes.budget", "empty list"],
    ),
    (
        "group_size = [2, 4, 8, 16]",
        "group_size = [0]",
        &["g.toml:", "axes.group_size", "at least 2"],
    ),
    (
        "group_size = [2, 4, 8, 16]",
        "group_size = [-4]",
        &["g.toml:", "axes.group_size", "at least 2"],
    ),
    (
        "max_response_len = [1024, 2048, 4096]",
        "max_response_len = [0]",
        &["g.toml:", "axes.max_response_len", "at least 1"],
    ),
    (
        "update_epochs = [1, 2, 4, 8]",
        "update_epochs = [0]",
        &["g.toml:", "axes.update_epochs", "at least 1"],
    ),
    (
        "prompts_per_step = [16, 64]",
        "prompts_per_step = [-16]",
        &["g.toml:", "axes.prompts_per_step", "at least 1"],
    ),
    (
        "gpus = 8",
        "gpus = 0",
        &["g.toml:", "hardware.gpus", "at least 1"],
    ),
    (
        "gpus = 8",
        "gpus = 8\nusd_per_gpu_hour = nan",
        &["g.toml:", "hardware.usd_per_gpu_hour", "finite"],
    ),
    (
        "uncapped_mean_response_tokens = 700",
        "uncapped_mean_response_tokens = inf",
        &["g.toml:", "task.uncapped_mean_response_tokens", "finite"],
    ),
    (
        "\"1e18 flops\"]",
        "\"-1e18 flops\"]",
        &["g.toml:", "axes.budget", "positive"],
    ),
    (
        "\"1e18 flops\"]",
        "\"0 flops\"]",
        &["g.toml:", "axes.budget", "positive"],
    ),
    (
        "\"qwen2.5-7b\"]",
        "\"qwen2.5-7\"]",
        &["g.toml:", "axes.model", "did you mean `qwen2.5-7b`"],
    ),
    (
        "gpu = \"h100-sxm\"",
        "gpu = \"h100-sx\"",
        &["g.toml:", "hardware.gpu", "did you mean `h100-sxm`"],
    ),
    (
        "\"prm:qwen2.5-math-prm-7b\"",
        "\"prm:qwen2.5-math-prm-7\"",
        &[
            "g.toml:",
            "axes.reward",
            "did you mean `qwen2.5-math-prm-7b`",
        ],
    ),
    (
        "\"prm:qwen2.5-math-prm-7b\"",
        "\"pmr:qwen2.5-math-prm-7b\"",
        &["g.toml:", "axes.reward", "did you mean `prm`"],
    ),
    (
        "\"1e18 flops\"]",
        "\"1e18 flopz\"]",
        &["g.toml:", "axes.budget", "did you mean `flops`"],
    ),
    (
        "\"1e18 flops\"]",
        "\"1e8 usd\"]",
        &["g.toml:", "axes.budget", "one unit per grid"],
    ),
    (
        "\"1e18 flops\"]",
        "\"1e18 flops\"]\niterations = [10]",
        &["g.toml:", "axes.iterations", "not both"],
    ),
    (
        "mean = 0.35",
        "mean = 1.5",
        &["g.toml:", "task.pass_rate.mean", "between 0 and 1"],
    ),
    (
        "name = \"race-pilot\"",
        "name = \"race/pilot\"",
        &["g.toml:", "name", "letters, digits"],
    ),
    (
        "group_size = [2, 4, 8, 16]",
        "group_size = [2, 2]",
        &["g.toml:", "axes.group_size", "remove the duplicate"],
    ),
    (
        "[hardware]\ngpu = \"h100-sxm\"\ngpus = 8\nschedule = \"colocated\"\n",
        "",
        &["g.toml", "hardware", "add a [hardware] table"],
    ),
    (
        "metric = \"math500_pass1\"",
        "metric = \"math500_pass1\"\nk_mid_at_7 = 3",
        &[
            "g.toml:",
            "outcome.k_mid_at_7",
            "did you mean `k_mid_at_7b`",
        ],
    ),
    (
        "metric = \"math500_pass1\"",
        "metric = \"math500_pass1\"\nsteepness = { value = 1.0, low = 2.0 }",
        &["g.toml:", "outcome.steepness", "low <= value <= high"],
    ),
    (
        "[run]",
        "[constraints]\nmax_rollouts_per_step = 1\n\n[run]",
        &["g.toml:", "constraints", "loosen"],
    ),
    (
        "\"qwen2.5-7b\"]",
        "\"qwen2.5-math-prm-7b\"]",
        &["g.toml:", "axes.model", "reward model"],
    ),
    (
        "budget = [\"1e16 flops\", \"2.5e16 flops\", \"1e17 flops\", \"3e17 flops\", \"1e18 flops\"]",
        "budget = [\"1e3 flops\"]",
        &["g.toml", "every one of the", "raise the budgets"],
    ),
    (
        "schedule = \"colocated\"",
        "schedule = \"asnyc\"",
        &["g.toml:", "hardware.schedule", "did you mean `async`"],
    ),
];

#[test]
fn bad_grids_are_refused_with_file_line_field_and_fix() {
    let dir = tempfile::tempdir().unwrap();
    for (from, to, expect) in GRID_CASES {
        assert!(GRID.contains(from), "fixture: {from}");
        std::fs::write(dir.path().join("g.toml"), GRID.replacen(from, to, 1)).unwrap();
        refused(
            dir.path(),
            &s(&["sweep", "g.toml", "-q", "--out", "out"]),
            expect,
        );
    }
    // Files that are not grids at all.
    std::fs::write(dir.path().join("bin.toml"), [0xff, 0xfe, 0x00, 0x41]).unwrap();
    refused(
        dir.path(),
        &s(&["check", "bin.toml"]),
        &["bin.toml", "UTF-8"],
    );
    refused(
        dir.path(),
        &s(&["check", "missing.toml"]),
        &["missing.toml", "not found"],
    );
    // Too large for --max-cells.
    std::fs::write(dir.path().join("g.toml"), GRID).unwrap();
    refused(
        dir.path(),
        &s(&["sweep", "g.toml", "--max-cells", "10", "--out", "out"]),
        &["g.toml", "--max-cells", "shrink an axis"],
    );
}

#[test]
fn bad_flags_and_output_folders_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    refused(
        d,
        &s(&["sweep", "g.toml", "--shard", "3/3", "--out", "out"]),
        &["--shard", "0 <= I < N"],
    );
    refused(
        d,
        &s(&["sweep", "g.toml", "--cells", "al", "--out", "out"]),
        &["--cells", "did you mean `all`"],
    );
    refused(
        d,
        &s(&["cost", "--model", "qwen2.5-7b", "--budget", "5 bucks"]),
        &["--budget", "valid values: flops, gpu-h, usd"],
    );
    refused(
        d,
        &s(&[
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "1",
            "--gpu",
            "b300",
        ]),
        &["--gpu", "b200"],
    );
    refused(
        d,
        &s(&[
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "1",
            "--mean-response-tokens",
            "nan",
        ]),
        &["--mean-response-tokens", "finite"],
    );
    // --out that cannot be a folder.
    std::fs::write(d.join("file"), "x").unwrap();
    refused(
        d,
        &s(&["sweep", "g.toml", "-q", "--out", "file"]),
        &["--out", "is a file"],
    );
    refused(
        d,
        &s(&["sweep", "g.toml", "-q", "--out", "file/sub"]),
        &["--out", "cannot create"],
    );
    // Existing results of another grid.
    bin()
        .current_dir(d)
        .args([
            "sweep",
            repo("grids/isocompute.toml").to_str().unwrap(),
            "-q",
            "--out",
            "other",
        ])
        .assert()
        .success();
    let before = std::fs::read(d.join("other/cells.csv")).unwrap();
    refused(
        d,
        &s(&["sweep", "g.toml", "-q", "--out", "other"]),
        &["manifest.json", "isocompute", "--force"],
    );
    assert_eq!(std::fs::read(d.join("other/cells.csv")).unwrap(), before);
}

#[test]
fn bad_pilot_results_plans_and_calibrations_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    bin()
        .current_dir(d)
        .args([
            "plan",
            "g.toml",
            "--pilot-budget",
            "3e17 flops",
            "--max-pilots",
            "6",
            "--out",
            "plan",
        ])
        .assert()
        .success();
    std::fs::write(d.join("truth.toml"), "k_mid_at_7b = 12\n").unwrap();
    bin()
        .current_dir(d)
        .args([
            "simulate",
            "--plan",
            "plan/plan.csv",
            "--truth",
            "truth.toml",
            "--noise",
            "0.004",
            "--out",
            "r.csv",
        ])
        .assert()
        .success();
    let good = std::fs::read_to_string(d.join("r.csv")).unwrap();
    let lines: Vec<&str> = good.lines().collect();
    let insert = |row: &str| format!("{}\n{row}\n{}\n", lines[0], lines[1..].join("\n"));
    let fit = |name: &str, text: &str, extra: &[&str], expect: &[&str]| {
        std::fs::write(d.join(name), text).unwrap();
        let mut args = s(&[
            "fit",
            name,
            "--plan",
            "plan/plan.csv",
            "--bootstrap",
            "5",
            "--out",
            "fitout",
        ]);
        args.extend(extra.iter().map(|x| x.to_string()));
        refused(d, &args, expect);
    };
    fit(
        "a.csv",
        &good.replace("metric,", "metrc,"),
        &[],
        &["a.csv:1", "metric", "missing column"],
    );
    fit(
        "b.csv",
        &insert("p001,4,math500_pass1,high"),
        &[],
        &["b.csv:2", "not a number", "--skip-bad-rows"],
    );
    fit(
        "c.csv",
        &insert("p001,4,math500_pass1,NaN"),
        &[],
        &["c.csv:2", "not finite"],
    );
    fit(
        "d.csv",
        &insert(lines[1]),
        &[],
        &["d.csv:", "appears twice"],
    );
    fit(
        "e.csv",
        &insert("p777,4,math500_pass1,0.5"),
        &[],
        &["e.csv:2", "unknown run_id", "valid values: p001"],
    );
    fit("f.csv", "", &[], &["f.csv:1", "empty file"]);
    fit(
        "g.csv",
        &insert(&format!("p001,4,math500_pass1,0.{}", "5".repeat(80_000))),
        &[],
        &["g.csv:2", "longer than"],
    );
    fit(
        "h.csv",
        &good
            .lines()
            .filter(|l| !l.starts_with("p002,"))
            .collect::<Vec<_>>()
            .join("\n"),
        &[],
        &["h.csv", "run_id", "p002"],
    );
    fit(
        "i.csv",
        &insert("p001,4.5,math500_pass1,0.5"),
        &[],
        &["i.csv:2", "whole number"],
    );
    fit(
        "j.csv",
        &good,
        &["--metric", "critic/rewards/mean"],
        &["--metric", "--allow-train-metric"],
    );
    fit(
        "k.csv",
        &good,
        &["--metric", "math500_pass"],
        &["k.csv", "did you mean `math500_pass1`"],
    );
    // A plan whose grid changed since.
    std::fs::write(d.join("g.toml"), GRID.replace("gpus = 8", "gpus = 16")).unwrap();
    fit(
        "l.csv",
        &good,
        &[],
        &["plan.json", "grid_sha256", "re-run `rlfrontier plan`"],
    );
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    // Calibrations for another grid or another tool version.
    bin()
        .current_dir(d)
        .args([
            "fit",
            "r.csv",
            "--plan",
            "plan/plan.csv",
            "--bootstrap",
            "5",
            "--out",
            "cal",
        ])
        .assert()
        .success();
    let cal = std::fs::read_to_string(d.join("cal/calibration.json")).unwrap();
    refused(
        d,
        &s(&[
            "sweep",
            repo("grids/isocompute.toml").to_str().unwrap(),
            "--calibration",
            "cal/calibration.json",
            "--out",
            "out",
        ]),
        &[
            "calibration.json",
            "grid_sha256",
            "calibrate on pilots of this grid",
        ],
    );
    std::fs::write(
        d.join("old.json"),
        cal.replace(
            &format!("\"tool_version\": \"{}\"", env!("CARGO_PKG_VERSION")),
            "\"tool_version\": \"0.0.1\"",
        ),
    )
    .unwrap();
    refused(
        d,
        &s(&[
            "sweep",
            "g.toml",
            "--calibration",
            "old.json",
            "--out",
            "out",
        ]),
        &["old.json", "tool_version", "re-run `rlfrontier fit`"],
    );
    refused(
        d,
        &s(&[
            "sweep",
            "g.toml",
            "--calibration",
            "nope.json",
            "--out",
            "out",
        ]),
        &["nope.json", "not found"],
    );
}

#[test]
fn unbounded_and_empty_inputs_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("g.toml"), GRID).unwrap();
    // A device, a folder and a FIFO where a grid, catalog, script or log should be.
    std::fs::create_dir_all(d.join("folder.toml")).unwrap();
    let fifo = d.join("fifo.sh");
    let fifo_made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .is_ok_and(|s| s.success());
    refused(
        d,
        &s(&["sweep", "/dev/zero", "--out", "out"]),
        &["/dev/zero", "not a regular file"],
    );
    refused(
        d,
        &s(&["sweep", "folder.toml", "--out", "out"]),
        &["folder.toml", "a folder"],
    );
    refused(
        d,
        &s(&["sweep", "g.toml", "--catalog", "/dev/zero", "--out", "out"]),
        &["/dev/zero", "not a regular file"],
    );
    if fifo_made {
        refused(
            d,
            &s(&[
                "cost",
                "--from-verl",
                "fifo.sh",
                "--gpu",
                "h100-sxm",
                "--gpus",
                "8",
            ]),
            &["fifo.sh", "not a regular file"],
        );
    }
    // A 774-byte script of doubling variables.
    let mut script = String::from("a=xxxxxxxxxxxxxxxxxxxxxxxxx\n");
    for _ in 0..30 {
        script.push_str("a=$a$a\n");
    }
    script.push_str("python3 -m verl.trainer.main_ppo data.train_batch_size=$a\n");
    std::fs::write(d.join("double.sh"), script).unwrap();
    refused(
        d,
        &s(&[
            "cost",
            "--from-verl",
            "double.sh",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
        ]),
        &["double.sh", "1 MiB"],
    );
    // Header-only evidence: refused as fit-prior refuses it, not scored as NaN.
    let header = std::fs::read_to_string(repo("evidence/published_results.csv")).unwrap();
    std::fs::write(
        d.join("published_results.csv"),
        header.lines().next().unwrap(),
    )
    .unwrap();
    std::fs::copy(
        repo("evidence/before_after.csv"),
        d.join("before_after.csv"),
    )
    .unwrap();
    refused(
        d,
        &s(&["backtest", "published_results.csv"]),
        &["published_results.csv", "ScaleRL"],
    );
    // Files past the limits (sparse: their size is stated, nothing is stored): a 2 GiB grid and
    // a 20 MiB launch script refused by their size before a read; a 1 GiB table of one endless
    // line, which `front` streams, refused at its line bound.
    for (name, bytes) in [
        ("huge.toml", 2u64 << 30),
        ("huge.sh", 20 << 20),
        ("huge.csv", (1 << 30) + 1),
    ] {
        std::fs::File::create(d.join(name))
            .unwrap()
            .set_len(bytes)
            .unwrap();
    }
    refused(
        d,
        &s(&["sweep", "huge.toml", "--out", "out"]),
        &["huge.toml", "bytes, above the"],
    );
    refused(
        d,
        &s(&[
            "cost",
            "--from-verl",
            "huge.sh",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
        ]),
        &["huge.sh", "bytes, above the"],
    );
    refused(
        d,
        &s(&[
            "front",
            "huge.csv",
            "--columns",
            "usd,predicted_score",
            "--senses",
            "min,max",
        ]),
        &["huge.csv", "a line longer than"],
    );
    // The same through the TRL reader and a log: a device is refused before it is read.
    refused(
        d,
        &s(&[
            "cost",
            "--from-trl",
            "/dev/zero",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
        ]),
        &["/dev/zero", "not a regular file"],
    );
    refused(
        d,
        &s(&[
            "calibrate-hw",
            "--model",
            "qwen2.5-7b",
            "--gpu",
            "h100-sxm",
            "--gpus",
            "8",
            "--log",
            "/dev/zero",
            "--out",
            "out/cal.json",
        ]),
        &["/dev/zero", "not a regular file"],
    );
    // A budget beyond any run, and a metric name of 300 characters: refused when the grid is
    // read, before any folder exists.
    std::fs::write(
        d.join("g3.toml"),
        GRID.replace("budget = [\"1e16 flops\", \"2.5e16 flops\", \"1e17 flops\", \"3e17 flops\", \"1e18 flops\"]", "budget = [\"1e300 usd\"]"),
    )
    .unwrap();
    refused(
        d,
        &s(&["sweep", "g3.toml", "--out", "out"]),
        &["g3.toml", "budget"],
    );
    let long_metric = format!("m{}", "x".repeat(299));
    std::fs::write(
        d.join("g4.toml"),
        GRID.replace(
            "metric = \"math500_pass1\"",
            &format!("metric = \"{long_metric}\""),
        ),
    )
    .unwrap();
    refused(
        d,
        &s(&["sweep", "g4.toml", "--out", "out"]),
        &["g4.toml", "metric"],
    );
    // Evidence with a value that is not a number: refused as fit-prior refuses it.
    let evidence = std::fs::read_to_string(repo("evidence/published_results.csv")).unwrap();
    let mut lines: Vec<String> = evidence.lines().map(str::to_string).collect();
    let value_column = lines[0].split(',').position(|c| c == "value").unwrap();
    let row = lines
        .iter()
        .position(|l| l.ends_with(",yes") || l.contains(",yes:"))
        .unwrap_or(1);
    let mut record: Vec<String> = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(lines[row].as_bytes())
        .records()
        .next()
        .unwrap()
        .unwrap()
        .iter()
        .map(str::to_string)
        .collect();
    record[value_column] = "NaN".into();
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(&record).unwrap();
    lines[row] = String::from_utf8(w.into_inner().unwrap())
        .unwrap()
        .trim_end()
        .to_string();
    std::fs::write(d.join("nan_results.csv"), lines.join("\n") + "\n").unwrap();
    refused(
        d,
        &s(&["backtest", "nan_results.csv"]),
        &["nan_results.csv", "value"],
    );
    // An id that a catalog would then refuse.
    std::fs::write(
        d.join("config.json"),
        r#"{"hidden_size": 896, "num_hidden_layers": 24, "num_attention_heads": 14, "num_key_value_heads": 2, "intermediate_size": 4864, "vocab_size": 151936}"#,
    )
    .unwrap();
    refused(
        d,
        &s(&[
            "import-model",
            "config.json",
            "--id",
            "Bad Id",
            "--out",
            "out/m.toml",
        ]),
        &["--id", "Bad Id"],
    );
    // A price no GPU has.
    std::fs::write(
        d.join("g2.toml"),
        GRID.replacen("[hardware]", "[hardware]\nusd_per_gpu_hour = 1e308", 1),
    )
    .unwrap();
    refused(
        d,
        &s(&["sweep", "g2.toml", "--out", "out"]),
        &["g2.toml", "usd_per_gpu_hour"],
    );
    refused(
        d,
        &s(&[
            "fit",
            "r.csv",
            "--plan",
            "p.csv",
            "--bootstrap",
            "1000000000",
            "--out",
            "fitout",
        ]),
        &["--bootstrap", "100000"],
    );
}

#[test]
fn a_hundred_megabyte_log_line_is_read_in_bounded_memory() {
    // Issue 51: a 100 MB one-line log took about 16 times its size (read as a JSON tree) and
    // aborted under a 1.2 GB limit. A line's members are now read into its metrics as they are
    // parsed: the peak is the file plus its numeric metrics.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("p001.jsonl");
    // Written in pieces: this test process stays small (a child forked from it would otherwise
    // start with its pages, and the other tests' peaks measure their children).
    {
        use std::io::Write;
        let mut f = std::io::BufWriter::new(std::fs::File::create(&log).unwrap());
        f.write_all(b"{\"step\":0,\"data\":{\"val/acc\":0.4,\"blob\":\"")
            .unwrap();
        let chunk = vec![b'x'; 1_000_000];
        for _ in 0..100 {
            f.write_all(&chunk).unwrap();
        }
        f.write_all(b"\",\"list\":[1,2,3]}}\n").unwrap();
    }
    let args: Vec<String> = [
        "collect",
        log.to_str().unwrap(),
        "--metric",
        "val/acc",
        "--out",
        dir.path().join("r.csv").to_str().unwrap(),
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let (code, stderr, rss_kb, _) = run_measured(dir.path(), &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        rss_kb < 400 * 1024,
        "a 100 MB line peaked at {} MB",
        rss_kb / 1024
    );
}
