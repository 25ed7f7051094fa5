//! `cost --from-verl` and `cost --from-trl` with the real binary: the fixtures in
//! tests/fixtures/import (written in the shapes of veRL's example scripts and TRL's GRPOConfig),
//! flags that override the file, one-line errors naming file, line and key, and the round trip
//! from the launch scripts `plan` writes back to the same cell.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use std::path::Path;

use predicates::prelude::*;

mod common;
use common::{bin, grid, read_csv, repo};

fn fixture(name: &str) -> String {
    repo(&format!("tests/fixtures/import/{name}"))
        .to_str()
        .unwrap()
        .to_string()
}

fn cost_json(args: &[&str]) -> serde_json::Value {
    let a = bin()
        .arg("cost")
        .args(args)
        .arg("--json")
        .assert()
        .success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

#[test]
fn a_verl_script_is_priced_as_written() {
    let v = cost_json(&["--from-verl", &fixture("verl_grpo_qwen2.5-7b.sh")]);
    let c = &v["config"];
    // Qwen2.5-7B-Instruct: its own name, priced with Qwen2.5-7B's shape.
    assert_eq!(c["model"], "qwen2.5-7b-instruct");
    assert_eq!(c["prompts_per_step"], 512);
    assert_eq!(c["group_size"], 8);
    assert_eq!(c["max_response_len"], 4096);
    assert_eq!(c["gpus"], 16, "n_gpus_per_node 8 × nnodes 2");
    assert_eq!(c["kl_reference"], true);
    assert_eq!(c["algo"], "grpo");
    assert_eq!(v["iterations"], 300);
    let settings = v["imported"]["settings"].as_array().unwrap();
    let g = settings
        .iter()
        .find(|s| s["flag"] == "--group-size")
        .unwrap();
    assert_eq!(g["key"], "actor_rollout_ref.rollout.n");
    assert_eq!(g["line"], 26);
    // The same run typed as flags costs the same.
    let typed = cost_json(&[
        "--model",
        "Qwen/Qwen2.5-7B-Instruct",
        "--prompts-per-step",
        "512",
        "--group-size",
        "8",
        "--max-response-len",
        "4096",
        "--mini-batch-prompts",
        "128",
        "--kl-reference",
        "--steps",
        "300",
        "--gpus",
        "16",
        "--rollout-gpu-memory-utilization",
        "0.6",
        "--rollout-tensor-parallel",
        "2",
        "--validation-every-steps",
        "10",
        // veRL's `val_kwargs.n` default, which the script leaves out.
        "--validation-samples-per-prompt",
        "1",
        "--checkpoint-every-steps",
        "50",
        "--max-tokens-per-gpu",
        "24000",
        "--gradient-checkpointing",
    ]);
    assert_eq!(v["usd"]["total"], typed["usd"]["total"]);
}

#[test]
fn flags_on_the_command_line_win_over_the_file() {
    let v = cost_json(&[
        "--from-verl",
        &fixture("verl_grpo_qwen2.5-7b.sh"),
        "--group-size",
        "16",
        "--budget",
        "1000 usd",
        "--no-kl-reference",
    ]);
    assert_eq!(v["config"]["group_size"], 16);
    assert_eq!(v["config"]["kl_reference"], false);
    assert!((v["usd"]["total"].as_f64().unwrap() - 1000.0).abs() < 20.0);
    let overridden: Vec<&str> = v["imported"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["overridden"] == true)
        .map(|s| s["flag"].as_str().unwrap())
        .collect();
    assert_eq!(overridden, ["--group-size", "--kl-reference", "--steps"]);
}

#[test]
fn a_dapo_shaped_script_prices_dynamic_sampling_and_offload_and_lists_what_it_cannot_model() {
    bin()
        .args(["cost", "--from-verl", &fixture("verl_dapo_shaped.sh")])
        .assert()
        .success()
        .stdout(predicate::str::contains("--max-response-len 3072"))
        .stdout(predicate::str::contains("--generation-batch-prompts 768"))
        .stdout(predicate::str::contains("--dynamic-sampling"))
        .stdout(predicate::str::contains("--gpus 32"))
        .stdout(predicate::str::contains(
            "--param-offload                              <- actor_rollout_ref.actor.fsdp_config.param_offload (line 36)",
        ))
        .stdout(predicate::str::contains(
            "not modelled: algorithm.filter_groups.max_num_gen_batches (line 33)",
        ))
        // The model is shown by the name the script gives it, priced with the shape it shares.
        .stdout(predicate::str::contains("qwen2.5-math-7b"));
}

#[test]
fn trl_yaml_json_and_the_verl_equivalent_agree() {
    let yaml = cost_json(&["--from-trl", &fixture("trl_grpo.yaml")]);
    let json = cost_json(&["--from-trl", &fixture("trl_grpo.json")]);
    assert_eq!(yaml["config"], json["config"]);
    assert_eq!(yaml["usd"], json["usd"]);
    // 16 per device × 8 processes × 4 accumulation steps = 512 completions = 64 prompts of 8.
    assert_eq!(yaml["config"]["prompts_per_step"], 64);
    assert_eq!(yaml["config"]["kl_reference"], false);
    assert_eq!(yaml["iterations"], 400);
    // With 16 processes the same per-device batch is twice the prompts.
    let wider = cost_json(&["--from-trl", &fixture("trl_grpo.yaml"), "--gpus", "16"]);
    assert_eq!(wider["config"]["prompts_per_step"], 128);
}

#[test]
fn bad_files_fail_with_one_line_naming_file_line_and_key() {
    for (flag, name, wanted) in [
        (
            "--from-verl",
            "verl_unresolved.sh",
            "verl_unresolved.sh:4: actor_rollout_ref.rollout.n: `${N_RESPONSES}` refers to a shell variable",
        ),
        (
            "--from-trl",
            "trl_bad_mode.yaml",
            "trl_bad_mode.yaml:3: vllm_mode: `remote` is not a vLLM mode of TRL",
        ),
        (
            "--from-trl",
            "trl_bad.json",
            "trl_bad.json:3: not valid JSON",
        ),
        ("--from-trl", "missing.yaml", "missing.yaml: file not found"),
    ] {
        let out = bin()
            .args(["cost", flag, &fixture(name)])
            .assert()
            .code(2)
            .get_output()
            .clone();
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
        assert!(stderr.contains(wanted), "{stderr}");
    }
    // Both formats at once is a usage error.
    bin()
        .args([
            "cost",
            "--from-verl",
            &fixture("verl_grpo_qwen2.5-7b.sh"),
            "--from-trl",
            &fixture("trl_grpo.yaml"),
        ])
        .assert()
        .code(2);
}

/// The cell a plan row describes, as `cost --json` reports its config.
fn plan_cell(headers: &[String], row: &[String]) -> serde_json::Value {
    let col = |name: &str| &row[headers.iter().position(|h| h == name).unwrap()];
    let number = |name: &str| col(name).parse::<u64>().unwrap();
    serde_json::json!({
        "model": col("model"),
        "finetune": match col("finetune").as_str() {
            "lora" => format!("lora:{}", col("lora_rank")),
            other => other.to_string(),
        },
        "group_size": number("group_size"),
        "max_response_len": number("max_response_len"),
        "update_epochs": number("update_epochs"),
        "prompts_per_step": number("prompts_per_step"),
    })
}

fn round_trip(framework: &str, flag: &str, dir: &Path) {
    let out = dir.join(framework);
    bin()
        .args([
            "plan",
            grid("race-pilot").to_str().unwrap(),
            "--pilot-budget",
            "3e17 flops",
            "--max-pilots",
            "8",
            "--framework",
            framework,
            "--out",
        ])
        .arg(&out)
        .assert()
        .success();
    let (headers, rows) = read_csv(&out.join("plan.csv"));
    assert_eq!(rows.len(), 8);
    for row in &rows {
        let id = &row[0];
        let script = out.join(format!("launch/{id}.sh"));
        let v = cost_json(&[flag, script.to_str().unwrap()]);
        let c = &v["config"];
        let got = serde_json::json!({
            "model": c["model"],
            "finetune": c["finetune"],
            "group_size": c["group_size"],
            "max_response_len": c["max_response_len"],
            "update_epochs": c["update_epochs"],
            "prompts_per_step": c["prompts_per_step"],
        });
        assert_eq!(got, plan_cell(&headers, row), "{framework} {id}");
        let steps = row[headers.iter().position(|h| h == "steps").unwrap()]
            .parse::<u64>()
            .unwrap();
        assert_eq!(v["iterations"], steps, "{framework} {id}");
        assert_eq!(c["kl_reference"], true, "race-pilot keeps the KL reference");
        assert!(
            v["imported"]["unknown"].as_array().unwrap().is_empty(),
            "{framework} {id}: plan writes only keys the framework knows: {}",
            v["imported"]["unknown"]
        );
    }
}

#[test]
fn the_ulysses_degree_is_priced_and_checked() {
    // Issue 22: `ulysses_sequence_parallel_size` changes the price (the all-to-alls) and a
    // degree veRL refuses is refused with the reason.
    let dir = tempfile::tempdir().unwrap();
    let usd = |name: &str, extra: &[&str]| -> f64 {
        let file = overrides_with(dir.path(), name, extra);
        let v = cost_json(&["--from-verl", &file, "--mean-response-tokens", "6000"]);
        for list in ["not_modelled", "not_priced", "unknown"] {
            assert!(
                !v["imported"][list].to_string().contains("ulysses"),
                "{}",
                v["imported"][list]
            );
        }
        v["usd"]["total"].as_f64().unwrap()
    };
    let key = "actor_rollout_ref.actor.ulysses_sequence_parallel_size";
    let base = usd("base.txt", &[]);
    let four = usd("four.txt", &[&format!("{key}=4")]);
    assert!(four > base * (1.0 + 1e-4), "${four} at 4, ${base} without");
    // Qwen2.5-7B's 28 heads do not split 8 ways.
    let eight = overrides_with(dir.path(), "eight.txt", &[&format!("{key}=8")]);
    bin()
        .args(["cost", "--from-verl", &eight])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "eight.txt:8: actor_rollout_ref.actor.ulysses_sequence_parallel_size: sequence parallel 8 does not split qwen2.5-7b-instruct's 28 attention heads",
        ));
}

#[test]
fn a_grids_offload_reaches_its_verl_launch_scripts_and_imports_back() {
    let dir = tempfile::tempdir().unwrap();
    let out = common::plan_edited_race_pilot(
        dir.path(),
        "offloaded",
        |text| {
            text.replace(
                "[run]\n",
                "[run]\nparam_offload = true\noptimizer_offload = true\nreference_offload = true\nsequence_parallel = 2\n",
            )
        },
        "verl",
        "8",
    );
    let (_, rows) = read_csv(&out.join("plan.csv"));
    let script = out.join(format!("launch/{}.sh", rows[0][0]));
    let v = cost_json(&["--from-verl", script.to_str().unwrap()]);
    // race-pilot trains LoRA adapters: veRL 0.9 builds no reference engine then (the base
    // weights are the reference), so the script writes no reference offload for it to read.
    assert_offload_flags_imported(&v, &["--param-offload", "--optimizer-offload"]);
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(
        !text.contains("actor_rollout_ref.ref.fsdp_config.param_offload"),
        "{text}"
    );
    assert!(
        text.contains("actor_rollout_ref.actor.fsdp_config.ulysses_sequence_parallel_size=2"),
        "{text}"
    );
}

#[test]
fn a_grids_offload_reaches_its_trl_accelerate_config_and_imports_back() {
    // TRL offloads through DeepSpeed: plan writes the devices into the run's Accelerate config,
    // and `cost --from-trl` reads them back as the three offload settings.
    let dir = tempfile::tempdir().unwrap();
    let plan_with = |name: &str, run_keys: &str| {
        let out = common::plan_edited_race_pilot(
            dir.path(),
            name,
            |text| text.replace("[run]\n", &format!("[run]\n{run_keys}")),
            "trl",
            "8",
        );
        let (_, rows) = read_csv(&out.join("plan.csv"));
        out.join(format!("launch/{}.sh", rows[0][0]))
    };
    let script = plan_with(
        "offloaded",
        "param_offload = true\noptimizer_offload = true\nreference_offload = true\n",
    );
    let text = std::fs::read_to_string(&script).unwrap();
    assert!(text.contains("  offload_param_device: cpu\n  offload_optimizer_device: cpu\n"));
    let v = cost_json(&[
        "--from-trl",
        script.to_str().unwrap(),
        "--mean-response-tokens",
        "900",
    ]);
    assert_all_offload_flags_imported(&v);
    // What DeepSpeed cannot do as priced is said in the script.
    let apart = plan_with("apart", "reference_offload = true\nsequence_parallel = 2\n");
    let text = std::fs::read_to_string(apart).unwrap();
    assert!(
        text.contains("DeepSpeed offloads both or neither (here: none)")
            && text.contains("sequence parallelism of degree 2"),
        "{text}"
    );
}

#[test]
fn the_launch_scripts_plan_writes_import_back_to_the_same_cells() {
    let dir = tempfile::tempdir().unwrap();
    round_trip("verl", "--from-verl", dir.path());
    round_trip("trl", "--from-trl", dir.path());
}

/// Asserts that `cost --json`'s imported settings include the three offload flags.
fn assert_all_offload_flags_imported(v: &serde_json::Value) {
    assert_offload_flags_imported(
        v,
        &[
            "--param-offload",
            "--optimizer-offload",
            "--reference-offload",
        ],
    );
}

/// Asserts that `cost --json`'s imported settings include `expected` flags.
fn assert_offload_flags_imported(v: &serde_json::Value, expected: &[&str]) {
    let flags: Vec<&str> = v["imported"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["flag"].as_str().unwrap())
        .collect();
    for flag in expected {
        assert!(flags.contains(flag), "{flag} not in {flags:?}");
    }
}

/// `cost --json` of the veRL overrides file [`overrides_with`] writes, at a 6,000-token logged
/// mean; the run must be priced (exit 0).
fn cost_json_of_overrides(dir: &std::path::Path, name: &str, extra: &[&str]) -> serde_json::Value {
    let file = overrides_with(dir, name, extra);
    let out = bin()
        .args([
            "cost",
            "--from-verl",
            &file,
            "--mean-response-tokens",
            "6000",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// A veRL overrides file: a 7B GRPO run at a 16k cap, plus `extra` lines.
fn overrides_with(dir: &std::path::Path, name: &str, extra: &[&str]) -> String {
    let mut text = String::from(
        "actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct\n\
         data.train_batch_size=128\n\
         actor_rollout_ref.rollout.n=8\n\
         data.max_response_length=16384\n\
         trainer.n_gpus_per_node=8\n\
         trainer.total_training_steps=10\n\
         algorithm.adv_estimator=grpo\n",
    );
    for line in extra {
        text.push_str(line);
        text.push('\n');
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn every_micro_batching_key_changes_the_price() {
    // Issue 22: the keys that set micro-batches, token budgets, padding and recomputation are
    // priced, never "read, not priced". Each is compared with the run without it.
    let dir = tempfile::tempdir().unwrap();
    // Dollars, or None when the setting makes the run infeasible (exit 3: out of memory).
    let priced = |file: &str| -> Option<f64> {
        let out = bin()
            .args([
                "cost",
                "--from-verl",
                file,
                "--mean-response-tokens",
                "6000",
                "--json",
            ])
            .output()
            .unwrap();
        match out.status.code() {
            Some(0) => {
                let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
                Some(v["usd"]["total"].as_f64().unwrap())
            }
            Some(3) => None,
            other => panic!(
                "{file}: exit {other:?}: {}",
                String::from_utf8_lossy(&out.stderr)
            ),
        }
    };
    let usd = |file: &str| priced(file).expect("feasible");
    let base = usd(&overrides_with(dir.path(), "base.txt", &[]));
    let cases: [(&str, &[&str]); 5] = [
        (
            "ppo_micro_batch_size_per_gpu",
            &["actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1"],
        ),
        (
            "ppo_max_token_len_per_gpu",
            &[
                "actor_rollout_ref.actor.use_dynamic_bsz=True",
                "actor_rollout_ref.actor.ppo_max_token_len_per_gpu=32768",
            ],
        ),
        (
            "log_prob_micro_batch_size_per_gpu",
            &["actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=1"],
        ),
        (
            "enable_gradient_checkpointing",
            &["actor_rollout_ref.model.enable_gradient_checkpointing=False"],
        ),
        (
            "use_remove_padding",
            &[
                "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
                "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
                "actor_rollout_ref.model.use_remove_padding=False",
            ],
        ),
    ];
    for (key, extra) in cases {
        // A change of price, or of feasibility (keeping every activation of a 16k-token
        // micro-batch of a 7B model does not fit an 80 GB GPU).
        if let Some(with) = priced(&overrides_with(dir.path(), &format!("{key}.txt"), extra)) {
            assert!(
                (with / base - 1.0).abs() > 1e-4,
                "{key}: ${with} with it, ${base} without"
            );
        }
    }
    assert!(
        priced(&overrides_with(
            dir.path(),
            "no_checkpointing.txt",
            &["actor_rollout_ref.model.enable_gradient_checkpointing=False"],
        ))
        .is_none(),
        "without checkpointing a 16k-token micro-batch of a 7B model does not fit"
    );
    // Padding kept costs more than padding removed at the same micro-batches (veRL computes
    // every sequence at the prompt cap plus the response cap).
    let micro = [
        "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1",
        "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu=4",
    ];
    let packed = usd(&overrides_with(dir.path(), "packed.txt", &micro));
    let padded = usd(&overrides_with(
        dir.path(),
        "padded.txt",
        &[
            micro[0],
            micro[1],
            "actor_rollout_ref.model.use_remove_padding=False",
        ],
    ));
    assert!(padded > packed, "padded ${padded} vs packed ${packed}");
}

#[test]
fn the_prompt_cap_is_priced_when_verl_keeps_its_padding() {
    // Issue 22: `data.max_prompt_length` is what veRL left-pads every prompt to. With the
    // padding kept its padded positions are computed, so a longer cap costs more; with the
    // padding removed (veRL's packed default) the cap changes nothing. Either way it is read
    // into --max-prompt-tokens, not listed as "read, not priced".
    let dir = tempfile::tempdir().unwrap();
    let run = |name: &str, extra: &[&str]| cost_json_of_overrides(dir.path(), name, extra);
    let usd = |v: &serde_json::Value| v["usd"]["total"].as_f64().unwrap();
    let micro = "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=1";
    let kept = "actor_rollout_ref.model.use_remove_padding=False";
    let padded_short = run("short.txt", &[micro, kept, "data.max_prompt_length=512"]);
    let padded_long = run("long.txt", &[micro, kept, "data.max_prompt_length=4096"]);
    assert!(
        usd(&padded_long) > usd(&padded_short) * 1.01,
        "${} at a 4,096-token prompt cap, ${} at 512",
        usd(&padded_long),
        usd(&padded_short)
    );
    let packed_short = run("packed_short.txt", &[micro, "data.max_prompt_length=512"]);
    let packed_long = run("packed_long.txt", &[micro, "data.max_prompt_length=4096"]);
    assert_eq!(usd(&packed_short), usd(&packed_long));
    let imported = &padded_long["imported"];
    assert!(
        imported["settings"].as_array().unwrap().iter().any(|s| {
            s["flag"] == "--max-prompt-tokens"
                && s["value"] == "4096"
                && s["key"] == "data.max_prompt_length"
        }),
        "{imported}"
    );
    assert!(
        !imported["not_priced"]
            .to_string()
            .contains("data.max_prompt_length"),
        "{imported}"
    );
}

#[test]
fn every_offload_key_costs_copies_and_frees_memory() {
    // Issue 22: veRL's FSDP offload keys are priced (ledger::offload), not "not modelled".
    let dir = tempfile::tempdir().unwrap();
    let json = |name: &str, extra: &[&str]| cost_json_of_overrides(dir.path(), name, extra);
    let usd = |v: &serde_json::Value| v["usd"]["total"].as_f64().unwrap();
    // The reference pass runs with a KL loss (veRL's GRPO default has none).
    let kl = "actor_rollout_ref.actor.use_kl_loss=True";
    let base = json("base.txt", &[kl]);
    for key in [
        "actor_rollout_ref.actor.fsdp_config.param_offload",
        "actor_rollout_ref.actor.fsdp_config.optimizer_offload",
        "actor_rollout_ref.ref.fsdp_config.param_offload",
    ] {
        let with = json(&format!("{key}.txt"), &[kl, &format!("{key}=True")]);
        assert!(
            usd(&with) > usd(&base) * (1.0 + 1e-4),
            "{key}: ${} with it, ${} without",
            usd(&with),
            usd(&base)
        );
        let imported = &with["imported"];
        for list in ["not_modelled", "not_priced", "unknown"] {
            assert!(
                !imported[list].to_string().contains(key),
                "{key} is listed as {list}: {}",
                imported[list]
            );
        }
    }
    // The reference's weights off the GPU during the update: 2 bytes x 7.6e9 / 8 GPUs = 1.9 GB.
    let memory = |v: &serde_json::Value| v["training_memory_gb_per_gpu"].as_f64().unwrap();
    let reference = json(
        "reference.txt",
        &[kl, "actor_rollout_ref.ref.fsdp_config.param_offload=True"],
    );
    let freed = memory(&base) - memory(&reference);
    assert!((freed - 2.0 * 7.615_616_512 / 8.0).abs() < 0.01, "{freed}");
}

#[test]
fn a_colocated_rollout_that_leaves_no_room_for_the_training_state_is_refused_until_offloaded() {
    // Issue 22: vLLM claims gpu_memory_utilization of each GPU's memory while the actor's FP32
    // weights and Adam moments stay beside it (12 bytes x 7.6e9 / 8 GPUs = 11.4 GB): at 0.9 of
    // 80 GiB (85.9 GB) that is 88.7 GB, refused (exit 3) with the utilization that fits
    // ((85.9 - 11.4) / 85.9 = 0.867); offloading the optimizer leaves 3.8 + 77.3 GB, which fits.
    let dir = tempfile::tempdir().unwrap();
    let cost = |name: &str, extra: &[&str]| {
        let mut lines = vec!["actor_rollout_ref.rollout.gpu_memory_utilization=0.9"];
        lines.extend_from_slice(extra);
        let file = overrides_with(dir.path(), name, &lines);
        bin()
            .args(["cost", "--from-verl", &file, "--json"])
            .output()
            .unwrap()
    };
    let refused = cost("plain.txt", &[]);
    assert_eq!(refused.status.code(), Some(3));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("colocated rollout does not fit")
            && stderr.contains("to 0.86 or less")
            && stderr.contains("optimizer_offload"),
        "{stderr}"
    );
    let offloaded = cost(
        "offloaded.txt",
        &["actor_rollout_ref.actor.fsdp_config.optimizer_offload=True"],
    );
    assert!(
        offloaded.status.success(),
        "{}",
        String::from_utf8_lossy(&offloaded.stderr)
    );
}

/// A copy of a fixture with some text replaced, in `dir`.
fn edited_fixture(dir: &Path, name: &str, edits: &[(&str, &str)]) -> String {
    let mut text = std::fs::read_to_string(fixture(name)).unwrap();
    for (from, to) in edits {
        assert!(text.contains(from), "{name} has no {from}");
        text = text.replace(from, to);
    }
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn total_epochs_gives_the_steps_with_the_dataset_size_and_says_which_flag_is_missing() {
    let dir = tempfile::tempdir().unwrap();
    let script = edited_fixture(
        dir.path(),
        "verl_grpo_qwen2.5-7b.sh",
        &[(
            "trainer.total_training_steps=300",
            "trainer.total_epochs=15",
        )],
    );
    // Without the dataset's size: the import summary is printed, then one error naming the flag.
    bin()
        .args(["cost", "--from-verl", &script])
        .assert()
        .code(2)
        .stdout(predicate::str::contains("--data-epochs 15"))
        .stdout(predicate::str::contains("trainer.total_epochs (line"))
        .stderr(predicate::str::contains("--dataset-prompts"));
    // With it: floor(7,473 / 512) = 14 batches per pass × 15 passes = 210 steps.
    let v = cost_json(&["--from-verl", &script, "--dataset-prompts", "7473"]);
    assert_eq!(v["iterations"], 210);
}

#[test]
fn mistyped_keys_get_the_key_meant_and_strict_stops_on_them() {
    let dir = tempfile::tempdir().unwrap();
    let script = edited_fixture(
        dir.path(),
        "verl_grpo_qwen2.5-7b.sh",
        &[("data.train_batch_size=512", "data.train_bach_size=512")],
    );
    bin()
        .args(["cost", "--from-verl", &script])
        .assert()
        .success()
        .stdout(predicate::str::contains(
            "data.train_bach_size (line 11: did you mean `data.train_batch_size`?)",
        ));
    bin()
        .args(["cost", "--from-verl", &script, "--strict"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(":11"))
        .stderr(predicate::str::contains(
            "did you mean `data.train_batch_size`?",
        ));
    let yaml = edited_fixture(
        dir.path(),
        "trl_grpo.yaml",
        &[("num_generations: 8", "num_generation: 8")],
    );
    let v = cost_json(&["--from-trl", &yaml]);
    let unknown = v["imported"]["unknown"].as_array().unwrap();
    assert!(
        unknown
            .iter()
            .any(|k| k["key"] == "num_generation" && k["why"] == "did you mean `num_generations`?"),
        "{unknown:?}"
    );
}

#[test]
fn a_run_without_vllm_is_priced_with_generate_and_its_trl_and_verl_pilots_say_so() {
    // TRL's default generation is transformers' generate(): static batches that wait for their
    // longest completion, on the training GPUs. The same config with vLLM costs less.
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("grpo.yaml");
    std::fs::write(
        &yaml,
        "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nnum_generations: 8\nmax_completion_length: 1024\nper_device_train_batch_size: 16\nmax_steps: 100\n",
    )
    .unwrap();
    let file = yaml.to_str().unwrap();
    let generate = cost_json(&["--from-trl", file, "--gpus", "8", "--gpu", "a100-80gb"]);
    assert_eq!(generate["assumptions"]["engine"], "transformers-generate");
    let vllm = cost_json(&[
        "--from-trl",
        file,
        "--gpus",
        "8",
        "--gpu",
        "a100-80gb",
        "--engine",
        "vllm-cudagraph",
    ]);
    let usd = |v: &serde_json::Value| v["usd"]["total"].as_f64().unwrap();
    assert!(
        usd(&generate) > 1.5 * usd(&vllm),
        "{} {}",
        usd(&generate),
        usd(&vllm)
    );
    // A grid priced with generate() plans TRL pilots without --use_vllm, and they import back
    // as priced.
    let out = common::plan_edited_race_pilot(
        dir.path(),
        "generate",
        |g| {
            g.replace(
                "schedule = \"colocated\"",
                "schedule = \"colocated\"\nengine = \"transformers-generate\"",
            )
        },
        "trl",
        "6",
    );
    let (_, rows) = read_csv(&out.join("plan.csv"));
    for row in &rows {
        let script = out.join(format!("launch/{}.sh", row[0]));
        let text = std::fs::read_to_string(&script).unwrap();
        assert!(!text.contains("--use_vllm"), "{text}");
        let v = cost_json(&["--from-trl", script.to_str().unwrap()]);
        assert_eq!(v["assumptions"]["engine"], "transformers-generate");
    }
    // veRL 0.9 has no generate() rollout (its `hf` rollout is gone): veRL pilots of such a
    // grid are refused with the reason before anything is written (issue 50 item 4).
    let grid_path = dir.path().join("generate.toml");
    let out = dir.path().join("generate-verl");
    let a = bin()
        .args([
            "plan",
            grid_path.to_str().unwrap(),
            "--pilot-budget",
            "3e17 flops",
        ])
        .args(["--max-pilots", "6", "--framework", "verl", "--out"])
        .arg(&out)
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).into_owned();
    assert!(
        stderr.contains("veRL 0.9 cannot run") && stderr.contains("--framework trl"),
        "{stderr}"
    );
    assert!(!out.exists());
}

#[test]
fn trl_keys_are_those_of_the_installed_release_with_removed_keys_named() {
    // Issue 50 item 9: the key list is generated from TRL 1.16 (frameworks/keys.py, checked in
    // CI against the installed package): keys TRL 1.16 accepts are known, keys it removed are
    // reported with what replaced them, and --strict refuses those but not the valid ones.
    let dir = tempfile::tempdir().unwrap();
    let yaml = dir.path().join("grpo.yaml");
    std::fs::write(
        &yaml,
        "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nnum_generations: 8\nmax_completion_length: 1024\n\
         per_device_train_batch_size: 16\nmax_steps: 100\neval_on_start: true\nuse_cpu: false\n\
         activation_checkpointing: true\nnum_generations_eval: 4\n",
    )
    .unwrap();
    let file = yaml.to_str().unwrap();
    let v = cost_json(&["--from-trl", file]);
    assert!(
        v["imported"]["unknown"].as_array().unwrap().is_empty(),
        "{v}"
    );
    bin()
        .args(["cost", "--from-trl", file, "--strict"])
        .assert()
        .success();
    let old = dir.path().join("old.yaml");
    std::fs::write(
        &old,
        "model_name_or_path: Qwen/Qwen2.5-1.5B-Instruct\nmax_steps: 100\nmax_prompt_length: 512\nwarmup_ratio: 0.1\n",
    )
    .unwrap();
    let v = cost_json(&["--from-trl", old.to_str().unwrap()]);
    let unknown = v["imported"]["unknown"].as_array().unwrap();
    assert!(
        unknown.iter().any(|k| k["key"] == "warmup_ratio"
            && k["why"].as_str().unwrap().contains("use warmup_steps")),
        "{unknown:?}"
    );
    bin()
        .args(["cost", "--from-trl", old.to_str().unwrap(), "--strict"])
        .assert()
        .code(2);
    // TRL 1.16 has no padding_free: its batches are priced padded, from TRL's behaviour, and
    // activation checkpointing is read under transformers 5's name.
    let padded = v["imported"]["settings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["flag"] == "--remove-padding")
        .cloned();
    assert!(
        padded.as_ref().is_none_or(|s| s["value"] != "true"),
        "{padded:?}"
    );
}

#[test]
fn an_infeasible_trl_config_is_told_what_to_change_in_trl_s_keys() {
    // Issue 53: the advice named `max_tokens_per_gpu`, which TRL does not have.
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("grpo.yaml");
    std::fs::write(
        &config,
        "model_name_or_path: Qwen/Qwen2.5-7B-Instruct\nnum_generations: 8\nmax_completion_length: 4096\nper_device_train_batch_size: 64\nuse_vllm: true\n",
    )
    .unwrap();
    let a = bin()
        .args(["cost", "--gpus", "8", "--steps", "10", "--from-trl"])
        .arg(&config)
        .assert()
        .failure();
    let stdout = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    for text in [&stdout, &stderr] {
        assert!(
            text.contains("or lower per_device_train_batch_size"),
            "{text}"
        );
        assert!(!text.contains("max_tokens_per_gpu"), "{text}");
    }
}

/// The `what` of each run event `cost --json` lists.
fn events(v: &serde_json::Value) -> Vec<String> {
    v["run_events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["what"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_verl_file_without_test_and_save_freq_keeps_verls_defaults() {
    // Issue 54 item 4: veRL validates and saves never by default (`trainer.test_freq` and
    // `save_freq` -1) but validates once before training (`val_before_train`): the file is
    // priced so, not with the tool's recipe defaults (every 10 and 20 steps).
    let dir = tempfile::tempdir().unwrap();
    let v = cost_json_of_overrides(dir.path(), "plain", &[]);
    assert_eq!(
        events(&v),
        ["startup", "validation_before_training", "restarts"]
    );
    let off = cost_json_of_overrides(dir.path(), "off", &["trainer.val_before_train=False"]);
    assert_eq!(events(&off), ["startup", "restarts"]);
    let on = cost_json_of_overrides(
        dir.path(),
        "on",
        &["trainer.test_freq=5", "trainer.save_freq=25"],
    );
    assert_eq!(
        events(&on),
        [
            "startup",
            "validation_before_training",
            "validation",
            "checkpoints",
            "restarts"
        ]
    );
    let every = |what: &str| {
        on["run_events"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["what"] == what)
            .unwrap()["every_steps"]
            .clone()
    };
    assert_eq!(every("validation"), 5);
    assert_eq!(every("checkpoints"), 25);
}

#[test]
fn a_trl_config_evaluates_and_saves_as_its_training_arguments_say() {
    // TrainingArguments' defaults where the file is silent: no evaluation (`eval_strategy`
    // "no"), none at the start, a save every 500 optimizer steps; evaluation samples
    // `num_generations_eval` (TRL 0.26+), else `num_generations`.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(fixture("trl_grpo.yaml")).unwrap();
    let silent: String = text
        .lines()
        .filter(|l| !l.starts_with("eval_") && !l.starts_with("save_steps"))
        .map(|l| format!("{l}\n"))
        .collect();
    let path = dir.path().join("silent.yaml");
    std::fs::write(&path, &silent).unwrap();
    let v = cost_json(&["--from-trl", path.to_str().unwrap()]);
    assert_eq!(events(&v), ["startup", "checkpoints", "restarts"]);
    // One generation per optimizer step (`steps_per_generation` defaults to the accumulation
    // steps): a save every 500 optimizer steps is one every 500 iterations.
    let save = &v["run_events"][1];
    assert_eq!(save["every_steps"], 500);
    let evaluating = dir.path().join("evaluating.yaml");
    std::fs::write(
        &evaluating,
        format!("{silent}eval_strategy: steps\neval_steps: 40\neval_on_start: true\nnum_generations_eval: 2\n"),
    )
    .unwrap();
    let v = cost_json(&["--from-trl", evaluating.to_str().unwrap()]);
    let settings = v["imported"]["settings"].as_array().unwrap();
    let samples = settings
        .iter()
        .find(|s| s["flag"] == "--validation-samples-per-prompt")
        .unwrap();
    assert_eq!(
        (&samples["key"], &samples["value"]),
        (&"num_generations_eval".into(), &"2".into())
    );
    assert_eq!(
        events(&v),
        [
            "startup",
            "validation_before_training",
            "validation",
            "checkpoints",
            "restarts"
        ]
    );
}
