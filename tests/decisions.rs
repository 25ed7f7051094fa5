//! The recommendation per budget (issue 25): paired differences narrower than the absolute
//! intervals, indistinguishable regimes named as a group, and one ranking behind the summary,
//! `--json`, shortlist.csv, shortlist.md and report.html.

use std::path::Path;

mod common;
use common::{bin, grid, read_csv};

/// `sweep NAME --json -q --cells none --out OUT`, parsed.
fn sweep_json(name: &str, out: &Path) -> serde_json::Value {
    let a = bin()
        .args(["sweep", grid(name).to_str().unwrap(), "-q", "--json"])
        .args(["--cells", "none", "--out"])
        .arg(out)
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// HTML-escaped as the report escapes text.
fn html_escaped(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[test]
fn on_dollars_without_a_base_score_the_differences_are_much_narrower_than_the_scores() {
    // The dollars grid on the base checkpoints (no published MATH-500 score): the prior's
    // size guess is the shared uncertainty that cancels in a pair.
    let grid_text = std::fs::read_to_string(grid("dollars"))
        .unwrap()
        .replace("-instruct\"", "\"");
    assert!(
        !grid_text.contains("base_score =") && !grid_text.contains("instruct\""),
        "the test needs a grid without a measured or published base score"
    );
    let grid_dir = tempfile::tempdir().unwrap();
    let path = grid_dir.path().join("dollars-base.toml");
    std::fs::write(&path, grid_text).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let a = bin()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "-q",
            "--json",
            "--cells",
            "none",
            "--out",
        ])
        .arg(dir.path())
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let budgets = v["recommendation_per_budget"].as_array().unwrap();
    assert_eq!(budgets.len(), 4);
    let mut compared = 0;
    let mut groups = 0;
    for b in budgets {
        let shortlist = b["shortlist"].as_array().unwrap();
        for c in &shortlist[1..] {
            let absolute = f(&c["score_high"]) - f(&c["score_low"]);
            let d = &c["difference_to_recommended"];
            let paired = f(&d["high"]) - f(&d["low"]);
            // The shared uncertainty (the default base score above all) cancels in a pair. What
            // is left is the regime discrepancy, a share of the gain's (a stated hypothesis, so it
            // grows with the gain): with the tuned kind's gain factor fitted on round 4's
            // instruct pairs (1.5 x zero-RL's logit gain), 47-63% of the absolute width.
            assert!(
                paired < 0.7 * absolute,
                "paired width {paired} against absolute {absolute}"
            );
            compared += 1;
        }
        let indistinguishable = b["indistinguishable"].as_array().unwrap();
        if !b["clear_lead"].as_bool().unwrap() {
            groups += 1;
            assert!(indistinguishable.len() >= 2);
            assert_eq!(indistinguishable[0]["cell_id"], b["recommended"]["cell_id"]);
            for c in &indistinguishable[1..] {
                let d = &c["difference_to_recommended"];
                assert!(f(&d["low"]) <= 0.0 && 0.0 <= f(&d["high"]));
            }
            let group = b["sentences"]
                .as_array()
                .unwrap()
                .iter()
                .find(|s| s.as_str().unwrap().contains("indistinguishable"))
                .expect("the summary names the group");
            // The group is named by the levers it spans and its size.
            let group = group.as_str().unwrap();
            assert!(
                group.starts_with("no clear lead: indistinguishable over "),
                "{group}"
            );
            assert!(
                group.contains(&format!(
                    "({} regimes, point predictions within ",
                    indistinguishable.len()
                )),
                "{group}"
            );
        } else {
            assert!(indistinguishable.is_empty());
        }
    }
    assert!(compared >= 4, "{compared} comparisons");
    // Under the uncalibrated prior the regimes of one model are within noise of each other.
    assert!(groups >= 1);
    let report = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    assert!(report.contains("each of these is indistinguishable from it"));
    assert!(report.contains("vs rank 1 (points)"));
}

/// Checks one budget's recommendation against its own shortlist and the written files.
fn check_one_ranking(
    name: &str,
    b: &serde_json::Value,
    rank_one: &[(String, String)],
    report: &str,
) {
    let id = b["recommended"]["cell_id"].to_string();
    assert_eq!(b["shortlist"][0]["cell_id"].to_string(), id, "{name}");
    let budget_index = rank_one
        .iter()
        .find(|(_, cell)| *cell == id)
        .unwrap_or_else(|| {
            panic!("{name}: recommended cell {id} is not a rank 1 in shortlist.csv")
        });
    assert!(!budget_index.0.is_empty());
    let usd = f(&b["recommended"]["usd"]);
    if let Some(c) = b["cheaper_within_noise"].as_object() {
        assert!(f(&c["usd"]) <= 0.9 * usd + 1e-9, "{name}");
        let d = &c["difference_to_recommended"];
        assert!(f(&d["low"]) <= 0.0 && 0.0 <= f(&d["high"]), "{name}");
    }
    if let Some(second) = b["second"].as_object() {
        assert_ne!(second["cell_id"].to_string(), id, "{name}");
        assert!(
            b["shortlist"]
                .as_array()
                .unwrap()
                .iter()
                .any(|c| c["cell_id"] == second["cell_id"]),
            "{name}: the second run is one of the shortlist"
        );
    }
    assert_eq!(
        b["clear_lead"].as_bool().unwrap(),
        b["indistinguishable"].as_array().unwrap().is_empty(),
        "{name}"
    );
    // The first sentence is the table row itself (regime, score, gain, dollars); the others
    // are listed under it.
    let regime = html_escaped(b["recommended"]["regime"].as_str().unwrap());
    assert!(report.contains(&format!("<td>{regime}</td>")), "{name}");
    for sentence in b["sentences"].as_array().unwrap().iter().skip(1) {
        let escaped = html_escaped(sentence.as_str().unwrap());
        assert!(report.contains(&escaped), "{name}: report lacks {escaped}");
    }
}

#[test]
fn the_summary_the_shortlist_and_the_report_are_one_ranking_on_every_bundled_grid() {
    for name in [
        "race-pilot",
        "dollars",
        "agentic",
        "targets",
        "isocompute",
        "big",
    ] {
        let dir = tempfile::tempdir().unwrap();
        let v = sweep_json(name, dir.path());
        let (header, rows) = read_csv(&dir.path().join("shortlist.csv"));
        let col = |n: &str| header.iter().position(|h| h == n).unwrap();
        let rank_one: Vec<(String, String)> = rows
            .iter()
            .filter(|r| r[col("rank")] == "1")
            .map(|r| (r[col("budget_index")].clone(), r[col("cell_id")].clone()))
            .collect();
        let budgets = v["recommendation_per_budget"].as_array().unwrap();
        assert_eq!(budgets.len(), rank_one.len(), "{name}");
        let report = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
        let markdown = std::fs::read_to_string(dir.path().join("shortlist.md")).unwrap();
        assert_eq!(
            markdown.matches("\n- run ").count(),
            budgets.len(),
            "{name}: one recommendation per budget in shortlist.md"
        );
        for b in budgets {
            check_one_ranking(name, b, &rank_one, &report);
        }
    }
}

/// The grid of issue 53's first item: `init`'s grid for Qwen3-8B on 32 H100s, widened as the
/// sweep advised (G to 128, caps to 32k, epochs to 4, prompts from 64 to 512, three fine-tuning
/// modes), at two dollar budgets: 720 cells per budget, all feasible, the probability of being
/// best spread thin over near-equal cells.
fn widened_qwen3_grid(dir: &Path) -> std::path::PathBuf {
    let path = init_qwen3(dir, "widened.toml", "20000,40000");
    let text = std::fs::read_to_string(&path).unwrap();
    let widened = [
        ("finetune = ", r#"["full", "lora:16", "lora:64"]"#),
        ("group_size = ", "[8, 16, 32, 64, 128]"),
        ("max_response_len = ", "[8192, 16384, 24576, 32768]"),
        ("update_epochs = ", "[1, 2, 4]"),
        ("prompts_per_step = ", "[64, 128, 256, 512]"),
    ];
    let lines: Vec<String> = text
        .lines()
        .map(|line| {
            widened
                .iter()
                .find(|(key, _)| line.starts_with(key))
                .map_or(line.to_string(), |(key, value)| format!("{key}{value}"))
        })
        .collect();
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

#[test]
fn every_budget_of_a_widened_grid_of_near_equal_cells_gets_a_recommendation() {
    let dir = tempfile::tempdir().unwrap();
    let grid_path = widened_qwen3_grid(dir.path());
    let out = dir.path().join("out");
    let a = bin()
        .args([
            "sweep",
            grid_path.to_str().unwrap(),
            "-q",
            "--json",
            "--cells",
            "none",
        ])
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let budgets = v["recommendation_per_budget"].as_array().unwrap();
    // Before regimes were folded ahead of the 2% threshold, the $20k budget had no regime with a
    // cell of 2% alone and vanished from the summary, the shortlist and the report.
    assert_eq!(budgets.len(), 2, "{v}");
    let shortlist = std::fs::read_to_string(out.join("shortlist.md")).unwrap();
    assert!(!shortlist.contains("No feasible cell"));
    assert_eq!(shortlist.matches("## Budget").count(), 2);
    let (headers, rows) = read_csv(&out.join("shortlist.csv"));
    let rank = headers.iter().position(|h| h == "rank").unwrap();
    assert_eq!(rows.iter().filter(|r| r[rank] == "1").count(), 2);
}

/// A grid on `models` with the given axis values, at dollar budgets.
fn random_grid_text(
    models: &[&str],
    finetune: &[&str],
    group_size: &[u64],
    caps: &[u64],
    epochs: &[u64],
    prompts: &[u64],
    budgets_usd: &[u64],
) -> String {
    let quoted = |xs: &[&str]| {
        xs.iter()
            .map(|x| format!("\"{x}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let numbers = |xs: &[u64]| xs.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
    let budgets: Vec<String> = budgets_usd.iter().map(|b| format!("{b} usd")).collect();
    let budgets: Vec<&str> = budgets.iter().map(String::as_str).collect();
    format!(
        "name = \"random\"\n[hardware]\ngpu = \"h100-sxm\"\ngpus = 16\nusd_per_gpu_hour = 2.5\n\
         [axes]\nmodel = [{}]\nfinetune = [{}]\nreward = [\"rule\"]\ngroup_size = [{}]\n\
         max_response_len = [{}]\nupdate_epochs = [{}]\nprompts_per_step = [{}]\nbudget = [{}]\n",
        quoted(models),
        quoted(finetune),
        numbers(group_size),
        numbers(caps),
        numbers(epochs),
        numbers(prompts),
        quoted(&budgets),
    )
}

/// Distinct sorted values: a non-empty subset of `from`, chosen by the bits of `mask`.
fn subset<T: Copy>(from: &[T], mask: u32) -> Vec<T> {
    let chosen: Vec<T> = from
        .iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, &x)| x)
        .collect();
    if chosen.is_empty() {
        vec![from[mask as usize % from.len()]]
    } else {
        chosen
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]
    /// Every budget of a grid with a feasible cell gets a recommendation, however the
    /// probability of being best spreads over its cells.
    #[test]
    fn every_budget_with_a_feasible_cell_has_a_recommendation(
        masks in proptest::array::uniform7(1u32..64),
    ) {
        let text = random_grid_text(
            &subset(&["qwen2.5-1.5b", "qwen3-8b", "qwen2.5-32b"], masks[0]),
            &subset(&["full", "lora:16", "lora:64"], masks[1]),
            &subset(&[4, 8, 16, 32, 64, 128], masks[2]),
            &subset(&[2048, 4096, 8192, 16384, 32768], masks[3]),
            &subset(&[1, 2, 4], masks[4]),
            &subset(&[32, 64, 128, 256, 512], masks[5]),
            &subset(&[300, 3_000, 20_000, 200_000], masks[6]),
        );
        let catalog = rlfrontier::catalog::Catalog::embedded();
        let grid = rlfrontier::spec::parse(&text, Path::new("random.toml"), &catalog).unwrap();
        let count = grid.cell_count().unwrap();
        let aggregate = rlfrontier::engine::aggregate_chunk(&grid, 0..count, 1);
        let decisions = rlfrontier::analysis::decision::decide(&grid, &aggregate);
        let decided: Vec<usize> = decisions.iter().map(|d| d.budget_index).collect();
        for id in 0..count {
            let Some(e) = rlfrontier::evaluate::evaluate_cell(&grid, id) else { continue };
            if e.ledger.feasible() {
                let budget = e.cell.indices[rlfrontier::spec::Axis::Budget];
                proptest::prop_assert!(
                    decided.contains(&budget),
                    "budget {budget} has feasible cell {id} and no recommendation:\n{text}"
                );
            }
        }
    }
}

/// The issue's question as `init` writes it: Qwen3-8B on 32 H100s, $20k.
fn qwen3_grid(dir: &Path) -> std::path::PathBuf {
    init_qwen3(dir, "q.toml", "20000")
}

/// `init --models qwen3-8b --gpus 32 --budget-usd BUDGETS` written to `dir/NAME`.
fn init_qwen3(dir: &Path, name: &str, budgets: &str) -> std::path::PathBuf {
    let path = dir.join(name);
    bin()
        .args(["init", "--models", "qwen3-8b", "--gpus", "32"])
        .args(["--budget-usd", budgets])
        .arg(&path)
        .assert()
        .success();
    path
}

/// The whole summary `sweep --explain` prints for the grid at `path`, its outputs written to
/// `out`.
fn summary_of(path: &Path, out: &Path) -> String {
    let a = bin()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--force",
            "--explain",
        ])
        .arg("--out")
        .arg(out)
        .assert()
        .success();
    String::from_utf8_lossy(&a.get_output().stdout).to_string()
}

/// [`qwen3_grid`] swept into `dir/out`: the grid's path and the summary.
fn qwen3_grid_swept(dir: &Path) -> (std::path::PathBuf, String) {
    let path = qwen3_grid(dir);
    let stdout = summary_of(&path, &dir.join("out"));
    (path, stdout)
}

#[test]
fn a_qwen3_8b_grid_without_a_base_score_uses_and_names_the_published_one() {
    // Qwen3 Technical Report (arXiv 2505.09388) Table 18: Qwen3-8B, non-thinking, MATH-500 87.4.
    // Before the published table, the prior guessed 0.409 from the model's size and the
    // recommendation read a post-RL score below the model's own pre-RL score.
    let dir = tempfile::tempdir().unwrap();
    let path = qwen3_grid(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains("# qwen3-8b: base score 0.874 published for Qwen/Qwen3-8B (Qwen3 Technical Report, arXiv 2505.09388, Table 18, non-thinking)"),
        "{text}"
    );
    let stdout = summary_of(&path, &dir.path().join("out"));
    let run = stdout.lines().find(|l| l.contains(" run ")).unwrap();
    assert!(
        run.contains("from a base of 0.874 (published for Qwen/Qwen3-8B: Qwen3 Technical Report"),
        "{run}"
    );
    // "run REGIME for N steps ..., $DOLLARS: SCORE [LOW, HIGH] from a base of ...".
    let score: f64 = run.split(": ").nth(1).unwrap()[..5].parse().unwrap();
    assert!(score >= 0.874, "{run}");
    // Its own evaluation wins.
    std::fs::write(
        &path,
        text.replace("[task]\n", "[task]\nbase_score = 0.8\n"),
    )
    .unwrap();
    let stdout = summary_of(&path, &dir.path().join("out"));
    assert!(
        stdout.contains("from a base of 0.800 (given in [task] base_score)"),
        "{stdout}"
    );
}

#[test]
fn dollar_amounts_are_read_as_people_type_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("g.toml");
    bin()
        .args([
            "init",
            "--models",
            "qwen3-8b",
            "--budget-usd",
            "$20k,1.5M usd",
        ])
        .arg(&path)
        .assert()
        .success();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(r#"budget = ["20000 usd", "1500000 usd"]"#),
        "{text}"
    );
    let by_words = bin()
        .args([
            "cost", "--model", "qwen3-8b", "--gpus", "8", "--budget", "20k usd", "--json",
        ])
        .assert()
        .success();
    let by_number = bin()
        .args([
            "cost",
            "--model",
            "qwen3-8b",
            "--gpus",
            "8",
            "--budget",
            "20000 usd",
            "--json",
        ])
        .assert()
        .success();
    let iterations = |out: &[u8]| {
        let v: serde_json::Value = serde_json::from_slice(out).unwrap();
        v["iterations"].clone()
    };
    assert_eq!(
        iterations(&by_words.get_output().stdout),
        iterations(&by_number.get_output().stdout)
    );
    // A grid's bare number gets the units to choose from, with its line.
    let bad = text.replace(
        r#"budget = ["20000 usd", "1500000 usd"]"#,
        "budget = [20000]",
    );
    std::fs::write(&path, bad).unwrap();
    let a = bin().arg("check").arg(&path).assert().code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(
        stderr.contains("found an integer; write it as in budget = [\"20000 usd\"]"),
        "{stderr}"
    );
    let a = bin()
        .args(["init", "--budget-usd", "20k flops"])
        .arg(dir.path().join("h.toml"))
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("is not a dollar amount"), "{stderr}");
}

#[test]
fn the_summary_names_the_command_that_prices_the_pick_alone_with_the_same_steps() {
    let dir = tempfile::tempdir().unwrap();
    let (path, stdout) = qwen3_grid_swept(dir.path());
    let run = stdout.lines().find(|l| l.contains(" run ")).unwrap();
    // The summary gives the command that prices the pick alone; it prices the same steps.
    let command = stdout
        .lines()
        .find_map(|l| {
            l.split("price it alone, phase by phase: rlfrontier ")
                .nth(1)
        })
        .unwrap();
    let words: Vec<&str> = command.split_whitespace().collect();
    assert_eq!(
        (words[0], words[1], words[3]),
        ("cost", "--grid", "--cell"),
        "{command}"
    );
    let priced = bin()
        .args([
            "cost",
            "--grid",
            path.to_str().unwrap(),
            "--cell",
            words[4],
            "--json",
        ])
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&priced.get_output().stdout).unwrap();
    let steps = format!(
        " for {} steps of ",
        thousands(v["iterations"].as_u64().unwrap())
    );
    assert!(run.contains(&steps), "{run} / {steps}");
}

/// `n` with thousands separators, as the summary prints it.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[test]
fn by_default_the_console_gives_one_line_per_budget_with_steps_dollars_gain_and_base() {
    let dir = tempfile::tempdir().unwrap();
    let path = qwen3_grid(dir.path());
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(
        &path,
        text.replace(
            "budget = [\"20000 usd\"]",
            "budget = [\"20000 usd\", \"40000 usd\"]",
        ),
    )
    .unwrap();
    let a = bin()
        .args([
            "sweep",
            path.to_str().unwrap(),
            "-q",
            "--cells",
            "none",
            "--out",
        ])
        .arg(dir.path().join("out"))
        .assert()
        .success();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let lines: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains(" usd  cell "))
        .collect();
    assert_eq!(lines.len(), 2, "{stdout}");
    for l in &lines {
        for part in [
            " steps of ",
            " hours on 32 GPUs), $",
            " points over a published base of 0.874, P(best) ",
        ] {
            assert!(l.contains(part), "{part} missing: {l}");
        }
    }
    // The long sentences are under --explain, and the summary says where.
    assert!(!stdout.contains("within noise for less"), "{stdout}");
    assert!(stdout.contains("--explain"), "{stdout}");
    assert!(stdout.contains("rlfrontier cost --grid"), "{stdout}");
}
