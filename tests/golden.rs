//! Golden outputs: every bundled grid and every README command, byte for byte.
//!
//! Each case runs the real binary from the repository root (so recorded paths read like the
//! README's) into a fresh temporary folder, then records the SHA-256 of its standard output and
//! of every file it wrote. `tests/golden/digests.txt` holds the expected digests. A restructure
//! must leave them unchanged; a deliberate change of output is re-recorded with
//! `RLFRONTIER_BLESS=1 cargo test --test golden`, and the README and the closing note say which
//! numbers moved and why. A failing run writes the actual outputs to `target/golden-actual/` so
//! they can be diffed against a build from before the change.
//!
//! Normalised before hashing, because they describe the machine and not the result: the
//! temporary folder's path (written as `$OUT`), and the wall-clock and thread-count fields of
//! `manifest.json` and of sweep's summary line.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use sha2::{Digest, Sha256};

mod common;

/// One recorded command: a name, its arguments (`$OUT` stands for the case's output folder).
struct Case {
    name: &'static str,
    args: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "check-race-pilot",
        args: &["check", "grids/race-pilot.toml"],
    },
    Case {
        name: "check-isocompute",
        args: &["check", "grids/isocompute.toml"],
    },
    Case {
        name: "check-big",
        args: &["check", "grids/big.toml"],
    },
    Case {
        name: "check-ten-million",
        args: &["check", "grids/ten-million.toml"],
    },
    Case {
        name: "sweep-race-pilot",
        args: &["sweep", "grids/race-pilot.toml", "-q", "--out", "$OUT"],
    },
    Case {
        name: "sweep-isocompute",
        args: &["sweep", "grids/isocompute.toml", "-q", "--out", "$OUT"],
    },
    Case {
        name: "check-targets",
        args: &["check", "grids/targets.toml"],
    },
    Case {
        name: "sweep-targets",
        args: &["sweep", "grids/targets.toml", "-q", "--out", "$OUT"],
    },
    Case {
        name: "sweep-big-frontier-rows",
        args: &[
            "sweep",
            "grids/big.toml",
            "-q",
            "--cells",
            "frontier",
            "--out",
            "$OUT",
        ],
    },
    Case {
        name: "cost-readme",
        args: &[
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
        ],
    },
    Case {
        name: "cost-readme-json",
        args: &[
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
        ],
    },
    Case {
        name: "cost-budget-prm-lora",
        args: &[
            "cost",
            "--model",
            "qwen2.5-3b",
            "--finetune",
            "lora:64",
            "--reward",
            "prm:qwen2.5-math-prm-7b",
            "--budget",
            "500 gpu-h",
            "--update-epochs",
            "2",
            "--schedule",
            "async",
        ],
    },
    Case {
        name: "cost-sft",
        args: &[
            "cost",
            "--model",
            "qwen2.5-7b",
            "--algo",
            "sft",
            "--examples",
            "100000",
        ],
    },
    Case {
        name: "cost-dpo-json",
        args: &[
            "cost",
            "--model",
            "qwen2.5-7b",
            "--algo",
            "dpo",
            "--pairs",
            "50000",
            "--json",
        ],
    },
    Case {
        name: "compare",
        args: &["compare"],
    },
    Case {
        name: "compare-json",
        args: &["compare", "--json"],
    },
    Case {
        name: "calibrate-hw-readme",
        args: &[
            "calibrate-hw",
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
            "--out",
            "$OUT/h100-mine.toml",
            "--log-line",
            "step:12 - timing_s/gen:181.5 - timing_s/ref:41.0 - timing_s/update_actor:230.2 - response_length/mean:1850.0",
        ],
    },
    Case {
        name: "catalog",
        args: &["catalog"],
    },
    Case {
        name: "flops-verl",
        args: &[
            "flops",
            "--model",
            "qwen2.5-7b",
            "--seqlens",
            "512,1024,2048",
            "--convention",
            "verl",
            "--seconds",
            "0.05",
            "--gpu",
            "h100-sxm",
        ],
    },
    Case {
        name: "plan-readme",
        args: &[
            "plan",
            "grids/race-pilot.toml",
            "--pilot-budget",
            "3e17 flops",
            "--max-pilots",
            "24",
            "--out",
            "$OUT",
        ],
    },
    Case {
        name: "plan-trl",
        args: &[
            "plan",
            "grids/race-pilot.toml",
            "--pilot-budget",
            "1e17 flops",
            "--max-pilots",
            "6",
            "--framework",
            "trl",
            "--out",
            "$OUT",
        ],
    },
    Case {
        name: "simulate-readme",
        args: &[
            "simulate",
            "--plan",
            "results/examples/race-pilot-pilots/plan.csv",
            "--truth",
            "grids/truth/race-pilot.toml",
            "--noise",
            "0.005",
            "--seed",
            "3",
            "--out",
            "$OUT/results.csv",
        ],
    },
    Case {
        name: "fit-readme",
        args: &[
            "fit",
            "results/examples/race-pilot-pilots/results.csv",
            "--plan",
            "results/examples/race-pilot-pilots/plan.csv",
            "--out",
            "$OUT",
        ],
    },
    Case {
        name: "sweep-calibrated-readme",
        args: &[
            "sweep",
            "grids/race-pilot.toml",
            "-q",
            "--calibration",
            "results/examples/race-pilot-fit/calibration.json",
            "--out",
            "$OUT",
        ],
    },
    Case {
        name: "backtest",
        args: &["backtest", "--csv", "$OUT/backtest.csv"],
    },
    Case {
        name: "front-cells",
        args: &[
            "front",
            "results/examples/race-pilot/frontier.csv",
            "--columns",
            "usd,predicted_score",
            "--senses",
            "min,max",
        ],
    },
];

fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Removes what describes the machine rather than the result.
fn normalise(relative: &str, bytes: Vec<u8>, out: &Path) -> Vec<u8> {
    let Ok(text) = String::from_utf8(bytes.clone()) else {
        return bytes;
    };
    let mut text = text.replace(out.to_str().unwrap(), "$OUT");
    let is_json = relative.ends_with(".json") || (relative == "stdout" && text.starts_with('{'));
    if is_json && let Ok(mut value) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Some(object) = value.as_object_mut() {
            for timing in ["elapsed_seconds", "threads", "seconds", "fit_seconds"] {
                object.remove(timing);
            }
            // The grid's path relative to the output folder depends on where the clone sits
            // relative to the temporary folder (tests/cli.rs checks that it resolves).
            object.remove("grid_file_from_plan");
            if let Some(grid) = object.get_mut("grid").and_then(|g| g.as_object_mut()) {
                grid.remove("file_from_output");
            }
        }
        text = serde_json::to_string_pretty(&value).unwrap();
    }
    if relative == "stdout" {
        text = text
            .lines()
            .map(|line| match line.find(" s on ") {
                Some(at) if line.starts_with("swept ") => {
                    let head = &line[..line.rfind(" in ").unwrap_or(at)];
                    head.to_string()
                }
                _ => line.to_string(),
            })
            .collect::<Vec<_>>()
            .join("\n");
    }
    text.into_bytes()
}

fn files_under(dir: &Path, base: &Path, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, base, found);
        } else {
            found.push(path.strip_prefix(base).unwrap().to_path_buf());
        }
    }
}

/// Runs one case and returns (entry name → digest) plus the normalised bytes.
fn run_case(case: &Case) -> BTreeMap<String, (String, Vec<u8>)> {
    let out = tempfile::tempdir().unwrap();
    let out_text = out.path().to_str().unwrap().to_string();
    let args: Vec<String> = case
        .args
        .iter()
        .map(|a| a.replace("$OUT", &out_text))
        .collect();
    let output = Command::new(env!("CARGO_BIN_EXE_rlfrontier"))
        .args(&args)
        .current_dir(repo_root())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "case {} failed: {}",
        case.name,
        String::from_utf8_lossy(&output.stderr)
    );
    let mut entries = BTreeMap::new();
    let stdout = normalise("stdout", output.stdout, out.path());
    assert!(
        !String::from_utf8_lossy(&stdout).contains('⟨'),
        "case {} printed an unrendered setting name",
        case.name
    );
    entries.insert(
        format!("{}/stdout", case.name),
        (sha256_hex(&stdout), stdout),
    );
    let mut files = Vec::new();
    files_under(out.path(), out.path(), &mut files);
    for relative in files {
        let relative_text = relative.to_str().unwrap().replace('\\', "/");
        let bytes = std::fs::read(out.path().join(&relative)).unwrap();
        let bytes = normalise(&relative_text, bytes, out.path());
        // A setting the library names (`⟨name⟩`) is rendered before anything is written.
        assert!(
            !String::from_utf8_lossy(&bytes).contains('⟨'),
            "{}/{relative_text} holds an unrendered setting name",
            case.name
        );
        entries.insert(
            format!("{}/{}", case.name, relative_text),
            (sha256_hex(&bytes), bytes),
        );
    }
    entries
}

#[test]
fn bundled_grids_and_readme_commands_are_byte_identical_to_the_recorded_outputs() {
    let golden_path = repo_root().join("tests/golden/digests.txt");
    let mut actual = BTreeMap::new();
    for case in CASES {
        actual.extend(run_case(case));
    }
    let actual_text: String = actual
        .iter()
        .map(|(name, (digest, _))| format!("{digest}  {name}\n"))
        .collect();
    if std::env::var_os("RLFRONTIER_BLESS").is_some() {
        common::write_file(&golden_path, actual_text.as_bytes());
        return;
    }
    let expected_text = std::fs::read_to_string(&golden_path).unwrap_or_default();
    if expected_text == actual_text {
        return;
    }
    let expected: BTreeMap<&str, &str> = expected_text
        .lines()
        .filter_map(|line| line.split_once("  ").map(|(d, n)| (n, d)))
        .collect();
    let dump = repo_root().join("target/golden-actual");
    let mut differences = Vec::new();
    for (name, (digest, bytes)) in &actual {
        if expected.get(name.as_str()) != Some(&digest.as_str()) {
            differences.push(format!("changed or new: {name}"));
            common::write_file(&dump.join(name), bytes);
        }
    }
    for name in expected.keys() {
        if !actual.contains_key(*name) {
            differences.push(format!("missing: {name}"));
        }
    }
    panic!(
        "{} golden outputs differ (actual bytes in {}):\n{}\nIf the change is intended, re-record \
         with RLFRONTIER_BLESS=1 cargo test --test golden and say which numbers moved and why.",
        differences.len(),
        dump.display(),
        differences.join("\n")
    );
}
