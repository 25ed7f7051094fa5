//! The cost calculator with the real binary: the README's worked example, every stage, the waste
//! lines, cost per point, buy versus build, the stage comparison and the hardware calibration.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use predicates::prelude::*;

mod common;
use common::{bin, repo};

fn json(args: &[&str]) -> serde_json::Value {
    let a = bin().args(args).arg("--json").assert().success();
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

const WORKED: &[&str] = &[
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
];

#[test]
fn readme_worked_example_is_reproduced() {
    // README, "Worked example: one run": GRPO on Qwen2.5-7B, 16 H100s at $2.99, 100 steps, as
    // veRL runs it (old log-probs every step, rollout tensor parallel 2, memory share 0.5).
    let v = json(WORKED);
    let close =
        |x: &serde_json::Value, want: f64, tol: f64| (x.as_f64().unwrap() - want).abs() <= tol;
    assert!(
        close(&v["usd"]["total"], 569.73, 0.005),
        "{}",
        v["usd"]["total"]
    );
    assert!(close(&v["gpu_hours"]["total"], 190.54, 0.005));
    // The step alone, and with the start-up, validation and checkpoints spread over it.
    assert!(close(&v["training_step_seconds"], 418.37, 0.005));
    assert!(close(&v["step_seconds"], 428.72, 0.005));
    assert!(close(&v["wall_hours"], 11.91, 0.005));
    assert!(close(&v["usd_share"]["search"], 0.347, 0.0005));
    assert!(close(&v["flops_share"]["search"], 0.154, 0.0005));
    assert!(close(&v["waste"]["zero_signal_usd"], 155.56, 0.005));
    assert!(close(&v["waste"]["straggler_idle_usd"], 66.94, 0.005));
    let decode = v["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "decode")
        .unwrap()
        .clone();
    assert!(close(&decode["seconds_per_step"], 143.26, 0.005));
}

#[test]
fn every_stage_is_priced_on_the_same_ledger() {
    let sft = json(&[
        "cost",
        "--algo",
        "sft",
        "--model",
        "qwen2.5-7b",
        "--examples",
        "50000",
        "--tokens-per-example",
        "300",
    ]);
    let rm = json(&[
        "cost",
        "--algo",
        "rm",
        "--model",
        "qwen2.5-7b",
        "--pairs",
        "20000",
        "--tokens-per-pair",
        "200",
    ]);
    let dpo = json(&[
        "cost",
        "--algo",
        "dpo",
        "--model",
        "qwen2.5-7b",
        "--pairs",
        "20000",
        "--tokens-per-pair",
        "200",
        "--epochs",
        "2",
    ]);
    let dpo_pre = json(&[
        "cost",
        "--algo",
        "dpo",
        "--model",
        "qwen2.5-7b",
        "--pairs",
        "20000",
        "--tokens-per-pair",
        "200",
        "--epochs",
        "2",
        "--precomputed-reference",
    ]);
    let ppo = json(&[
        "cost",
        "--algo",
        "ppo",
        "--model",
        "qwen2.5-7b",
        "--group-size",
        "4",
        "--reward",
        "orm:qwen2.5-math-rm-72b",
        "--gpus",
        "16",
        "--steps",
        "20",
    ]);
    for v in [&sft, &rm, &dpo, &ppo] {
        assert!(v["usd"]["total"].as_f64().unwrap() > 0.0);
        let parts: f64 = ["search", "learning", "feedback"]
            .iter()
            .map(|b| v["usd"][b].as_f64().unwrap())
            .sum();
        assert!((parts - v["usd"]["total"].as_f64().unwrap()).abs() < 1e-6);
    }
    assert_eq!(sft["usd_share"]["learning"], 1.0);
    // SFT FLOPs: 6·N·T + 6·A·Q with N = 28 × (2·3584² + 2·3584·512 + 3·3584·18944) + 152064·3584
    // = 7,070,285,824 (Qwen2.5-7B matmul parameters), A = 28·28·128 = 100,352,
    // T = 50,000 × 300, Q = 50,000 × 300².
    let expected = 6.0 * 7_070_285_824.0 * 15e6 + 6.0 * 100_352.0 * 50_000.0 * 90_000.0;
    assert!((sft["flops"]["total"].as_f64().unwrap() - expected).abs() / expected < 1e-9);
    assert!(dpo_pre["usd"]["total"].as_f64().unwrap() < dpo["usd"]["total"].as_f64().unwrap());
    let critic = ppo["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "critic_update")
        .unwrap()["flops"]
        .as_f64()
        .unwrap();
    assert!(critic > 0.0 && ppo["usd"]["feedback"].as_f64().unwrap() > 0.0);
    bin()
        .args(["cost", "--algo", "sft", "--model", "qwen2.5-7b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--examples"));
    bin()
        .args([
            "cost",
            "--algo",
            "dop",
            "--model",
            "qwen2.5-7b",
            "--pairs",
            "5",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `dpo`"));
    bin()
        .args(["cost", "--model", "qwen2.5-7b"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--steps"));
}

#[test]
fn waste_lines_follow_their_levers() {
    let base = json(&["cost", "--model", "qwen2.5-1.5b", "--steps", "10"]);
    assert_eq!(base["waste"]["reference_without_kl_usd"], 0.0);
    assert_eq!(base["waste"]["uncached_prefill_usd"], 0.0);
    assert_eq!(base["waste"]["oversampling_usd"], 0.0);
    let no_kl = json(&[
        "cost",
        "--model",
        "qwen2.5-1.5b",
        "--steps",
        "10",
        "--kl-coef",
        "0",
    ]);
    let reference = no_kl["phases"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "ref_logprob")
        .unwrap()["usd"]
        .as_f64()
        .unwrap();
    assert!(
        (no_kl["waste"]["reference_without_kl_usd"].as_f64().unwrap() - reference).abs() < 1e-9
            && reference > 0.0
    );
    let uncached = json(&[
        "cost",
        "--model",
        "qwen2.5-1.5b",
        "--steps",
        "10",
        "--no-prefix-cache",
    ]);
    assert!(uncached["waste"]["uncached_prefill_usd"].as_f64().unwrap() > 0.0);
    let dynamic = json(&[
        "cost",
        "--model",
        "qwen2.5-1.5b",
        "--steps",
        "10",
        "--dynamic-sampling",
    ]);
    assert!(dynamic["waste"]["oversampling_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(dynamic["waste"]["zero_signal_usd"], 0.0);
    // Larger G leaves fewer zero-signal groups.
    let g16 = json(&[
        "cost",
        "--model",
        "qwen2.5-1.5b",
        "--steps",
        "10",
        "--group-size",
        "16",
    ]);
    assert!(
        g16["tokens"]["zero_signal_rate"].as_f64().unwrap()
            < base["tokens"]["zero_signal_rate"].as_f64().unwrap()
    );
}

#[test]
fn cost_per_point_and_buy_versus_build() {
    let v = json(&[WORKED, &["--gain", "5", "--gpu-capex-usd", "30000"]].concat());
    let usd = v["usd"]["total"].as_f64().unwrap();
    assert!((v["cost_per_point"]["usd_per_point"].as_f64().unwrap() - usd / 5.0).abs() < 1e-9);
    assert!(
        v["break_even"]
            .as_str()
            .unwrap()
            .contains("owning beats renting")
    );
    let options = v["where_to_run"].as_array().unwrap();
    assert!(
        options
            .iter()
            .any(|o| o["option"] == "own cluster" && o["usd"].as_f64().unwrap() < usd)
    );
    // Tinker prices Qwen3-8B by the token.
    let q = json(&["cost", "--model", "qwen3-8b", "--steps", "10"]);
    let tinker = q["where_to_run"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["option"].as_str().unwrap().contains("tinker-qwen3-8b"))
        .unwrap()
        .clone();
    assert!(tinker["usd"].as_f64().unwrap() > 0.0);
    bin()
        .args(WORKED)
        .args(["--own-gpu-usd-per-hour", "1.5"])
        .assert()
        .success()
        .stdout(predicate::str::contains("cheaper per hour than renting"));
}

#[test]
fn compare_prices_the_seed_project() {
    let a = bin().args(["compare", "--json"]).assert().success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let stages = v["stages"].as_array().unwrap();
    let get = |name: &str| {
        stages
            .iter()
            .find(|s| s["stage"].as_str().unwrap().starts_with(name))
            .unwrap()
            .clone()
    };
    // The seed's flat pricing: SFT $30, RM $16, PPO $163.84 (5.5 x SFT).
    assert!((get("SFT")["flat_pricing_usd"].as_f64().unwrap() - 30.0).abs() < 1e-9);
    assert!((get("reward model")["flat_pricing_usd"].as_f64().unwrap() - 16.0).abs() < 1e-9);
    assert!((get("PPO")["flat_pricing_usd"].as_f64().unwrap() - 163.84).abs() < 1e-9);
    // On real GPUs RL costs more relative to SFT than flat pricing says, and generation shows.
    let ppo = get("PPO");
    assert!(ppo["ratio_to_sft"].as_f64().unwrap() > ppo["flat_ratio_to_sft"].as_f64().unwrap());
    assert!(ppo["generation_share_of_usd"].as_f64().unwrap() > 0.0);
    assert_eq!(get("SFT")["generation_share_of_usd"], 0.0);
    bin()
        .arg("compare")
        .assert()
        .success()
        .stdout(predicate::str::contains("RM + PPO").and(predicate::str::contains("memory-bound")));
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("p.toml");
    std::fs::write(
        &bad,
        include_str!("../grids/projects/seed-back-of-envelope.toml")
            .replace("examples = 50000", "exampels = 50000"),
    )
    .unwrap();
    bin()
        .arg("compare")
        .arg(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("p.toml"));
}

#[test]
fn calibrate_hw_recovers_the_defaults_from_the_models_own_timings() {
    // Feed the model's own phase times back as "measurements": the calibrated efficiencies must
    // equal the catalog's defaults.
    let args = [
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--prompts-per-step",
        "512",
        "--group-size",
        "8",
        "--max-response-len",
        "4096",
        "--mean-response-tokens",
        "1500",
    ];
    let v = json(&[&["cost"][..], &args, &["--steps", "1"]].concat());
    let phase = |n: &str| {
        v["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == n)
            .unwrap()["seconds_per_step"]
            .as_f64()
            .unwrap()
    };
    let line = format!(
        "step:3 - timing_s/gen:{} - timing_s/ref:{} - timing_s/update_actor:{} - response_length/mean:{}",
        phase("prefill") + phase("decode"),
        phase("ref_logprob"),
        phase("update"),
        v["tokens"]["mean_response_tokens"].as_f64().unwrap()
    );
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("cal.toml");
    bin()
        .arg("calibrate-hw")
        .args(args)
        .args(["--log-line", &line, "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    let value = |key: &str| -> f64 {
        text.lines()
            .find(|l| l.starts_with(key))
            .unwrap()
            .split('=')
            .nth(1)
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    };
    assert!((value("train_mfu") - 0.40).abs() < 1e-4, "{text}");
    assert!((value("forward_efficiency") - 0.50).abs() < 1e-4, "{text}");
    assert!(
        (value("decode_bandwidth_efficiency") - 0.70).abs() < 1e-3,
        "{text}"
    );
    // TRL's name for the same length (completions/mean_length) reads as veRL's.
    let trl_out = dir.path().join("cal-trl.toml");
    bin()
        .arg("calibrate-hw")
        .args(args)
        .args([
            "--log-line",
            &line.replace("response_length/mean", "completions/mean_length"),
            "--out",
        ])
        .arg(&trl_out)
        .assert()
        .success();
    assert_eq!(std::fs::read_to_string(&trl_out).unwrap(), text);
    // The override is accepted by cost.
    bin()
        .args(["cost", "--steps", "1", "--catalog"])
        .arg(&out)
        .args(args)
        .assert()
        .success();
    bin()
        .arg("calibrate-hw")
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("no timings"));
}

#[test]
fn a_measured_base_score_moves_the_predicted_gain_and_is_reported() {
    let base = ["cost", "--model", "qwen2.5-7b", "--steps", "200"];
    let prior = json(&base);
    assert!(prior["config"]["base_score"].is_null());
    let with: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--base-score", "0.55"])
        .collect();
    let measured = json(&with);
    assert_eq!(measured["config"]["base_score"], 0.55);
    let (g0, g1) = (
        prior["cost_per_point"]["points"].as_f64().unwrap(),
        measured["cost_per_point"]["points"].as_f64().unwrap(),
    );
    // A higher starting point leaves less headroom under the same ceiling: a smaller gain.
    assert!(g1 < g0, "gain from the prior base {g0}, from 0.55 {g1}");
    assert!(
        measured["cost_per_point"]["basis"]
            .as_str()
            .unwrap()
            .contains("measured base score")
    );
    // Costs do not depend on the prediction.
    assert_eq!(prior["usd"]["total"], measured["usd"]["total"]);
    // Percent is refused with the fix.
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "1",
            "--base-score",
            "64.6",
        ])
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--base-score").and(predicate::str::contains("write 0.646")),
        );
}

#[test]
fn an_infeasible_run_prints_its_report_and_exits_3() {
    // Qwen2.5-72B's 145 GB of weights cannot be served by one 80 GB GPU: the report still prints,
    // its last line says INFEASIBLE, stderr has one line, and the exit code is 3.
    let out = bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-72b",
            "--gpus",
            "1",
            "--steps",
            "2",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout
            .trim_end()
            .lines()
            .last()
            .unwrap()
            .starts_with("INFEASIBLE: "),
        "{stdout}"
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(stderr.starts_with("error: the run is infeasible: rollout engine needs"));
}

#[test]
fn models_are_found_by_hugging_face_name_alias_and_any_case() {
    // Each is priced with Qwen2.5-7B's shape, and shown by the name it was given (at a cap that
    // fits Qwen2.5-Math-7B's 4,096-token window).
    let priced = |model: &str| {
        json(&[
            "cost",
            "--model",
            model,
            "--gpu",
            "H100-SXM",
            "--max-response-len",
            "3072",
            "--steps",
            "2",
        ])
    };
    let base = priced("qwen2.5-7b");
    for (model, shown) in [
        ("Qwen/Qwen2.5-Math-7B", "qwen2.5-math-7b"),
        ("qwen2.5-7b-instruct", "qwen2.5-7b-instruct"),
        ("QWEN2.5-7B", "qwen2.5-7b"),
    ] {
        let v = priced(model);
        assert_eq!(v["config"]["model"], shown, "{model}");
        assert_eq!(v["usd"], base["usd"], "{model}");
    }
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--reward",
            "prm",
            "--steps",
            "2",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "`prm` needs its reward model: write `prm:MODEL`, e.g. `prm:qwen2.5-math-prm-7b`",
        ));
}

#[test]
fn calibrate_hw_reads_verl_file_logger_lines_prints_json_and_refuses_unused_flags() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("metrics.jsonl");
    // veRL's file logger: step 1 is slow (start-up) and left out; the medians of steps 2-4 are
    // gen 62, update 72, ref 31, old log-prob 30, step 172, length 1,950.
    std::fs::write(
        &log,
        "{\"step\":1,\"data\":{\"timing_s/gen\":90,\"timing_s/update_actor\":80,\"timing_s/step\":200,\"response_length/mean\":1800}}\n\
         {\"step\":2,\"data\":{\"timing_s/gen\":60,\"timing_s/update_actor\":70,\"timing_s/ref\":30,\"timing_s/old_log_prob\":31,\"timing_s/step\":170,\"response_length/mean\":1900}}\n\
         {\"step\":3,\"data\":{\"timing_s/gen\":62,\"timing_s/update_actor\":72,\"timing_s/ref\":31,\"timing_s/old_log_prob\":30,\"timing_s/step\":172,\"response_length/mean\":1950}}\n\
         {\"step\":4,\"data\":{\"timing_s/gen\":64,\"timing_s/update_actor\":74,\"timing_s/ref\":32,\"timing_s/old_log_prob\":29,\"timing_s/step\":174,\"response_length/mean\":2000}}\n",
    )
    .unwrap();
    let base = [
        "calibrate-hw",
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--prompts-per-step",
        "512",
        "--group-size",
        "8",
        "--max-response-len",
        "4096",
    ];
    let out = dir.path().join("hw.toml");
    let a = bin()
        .args(base)
        .arg("--log")
        .arg(&log)
        .arg("--out")
        .arg(&out)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    assert_eq!(v["measured"]["timing_s/gen"], 62.0);
    assert_eq!(v["measured"]["timing_s/old_log_prob"], 30.0);
    assert_eq!(v["logged_step_seconds"], 172.0);
    assert!(v["modelled_step_seconds"].as_f64().unwrap() > 0.0);
    assert!(
        v["source"]
            .as_str()
            .unwrap()
            .contains("median of 3 of 4 logged steps")
    );
    assert!(out.exists());
    bin()
        .args(base)
        .args(["--steps", "3", "--log"])
        .arg(&log)
        .arg("--out")
        .arg(&out)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--steps: calibrate-hw fits one measured step",
        ));
}

#[test]
fn calibrate_hw_on_a_log_with_every_phase_reproduces_its_step_within_two_percent() {
    // Issue 13's bar. A veRL file-logger log whose phases add up (gen + old log-prob + ref +
    // update, plus 3 s of reward, advantages and bookkeeping): medians gen 62, old 30, ref 31,
    // update 72, step 198, length 1,950 over steps 2-4 (step 1, the start-up step, is left out).
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("metrics.jsonl");
    std::fs::write(
        &log,
        "{\"step\":1,\"data\":{\"timing_s/gen\":90,\"timing_s/update_actor\":80,\"timing_s/step\":230,\"response_length/mean\":1800}}\n\
         {\"step\":2,\"data\":{\"timing_s/gen\":60,\"timing_s/update_actor\":70,\"timing_s/ref\":30,\"timing_s/old_log_prob\":31,\"timing_s/step\":195,\"response_length/mean\":1900}}\n\
         {\"step\":3,\"data\":{\"timing_s/gen\":62,\"timing_s/update_actor\":72,\"timing_s/ref\":31,\"timing_s/old_log_prob\":30,\"timing_s/step\":198,\"response_length/mean\":1950}}\n\
         {\"step\":4,\"data\":{\"timing_s/gen\":64,\"timing_s/update_actor\":74,\"timing_s/ref\":32,\"timing_s/old_log_prob\":29,\"timing_s/step\":201,\"response_length/mean\":2000}}\n",
    )
    .unwrap();
    let run = [
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--prompts-per-step",
        "512",
        "--group-size",
        "8",
        "--max-response-len",
        "4096",
    ];
    let overrides = dir.path().join("hw.toml");
    let a = bin()
        .arg("calibrate-hw")
        .args(run)
        .arg("--log")
        .arg(&log)
        .arg("--out")
        .arg(&overrides)
        .arg("--json")
        .assert()
        .success();
    let v: serde_json::Value = serde_json::from_slice(&a.get_output().stdout).unwrap();
    let logged = v["logged_step_seconds"].as_f64().unwrap();
    assert_eq!(logged, 198.0);
    let modelled = v["modelled_step_seconds"].as_f64().unwrap();
    assert!(
        (modelled / logged - 1.0).abs() <= 0.02,
        "calibrated step {modelled} s against the log's {logged} s"
    );
    // The follow-up `cost` with the override and the measured length prices the same step.
    let length = v["uncapped_mean_response_tokens"]
        .as_f64()
        .unwrap()
        .to_string();
    let mut cost_args: Vec<&str> = vec!["cost"];
    cost_args.extend(run);
    cost_args.extend([
        "--steps",
        "1",
        "--uncapped-mean-response-tokens",
        &length,
        "--catalog",
    ]);
    cost_args.push(overrides.to_str().unwrap());
    let c = json(&cost_args);
    // The training step alone, as the log times it (no start-up, validation or save in it).
    let step = c["training_step_seconds"].as_f64().unwrap();
    assert!(
        (step / logged - 1.0).abs() <= 0.02,
        "cost with the override prices a step of {step} s against the log's {logged} s"
    );
}

#[test]
fn agentic_runs_price_the_environment_and_keep_buckets_summing() {
    let base = [
        "cost",
        "--model",
        "qwen2.5-3b-instruct",
        "--gpus",
        "8",
        "--prompts-per-step",
        "512",
        "--group-size",
        "5",
        "--max-response-len",
        "3000",
        "--mean-response-tokens",
        "400",
        "--steps",
        "200",
    ];
    let single = json(&base);
    let mut agentic: Vec<&str> = base.to_vec();
    agentic.extend([
        "--turns",
        "2",
        "--observation-tokens",
        "300",
        "--tool-seconds",
        "0.5",
        "--sandbox-usd-per-hour",
        "0.5",
        "--judge-usd-per-million-input",
        "0.15",
        "--judge-usd-per-million-output",
        "0.6",
    ]);
    let v = json(&agentic);
    let env = &v["environment"];
    // Turn-synchronous by default: one 0.5 s search per episode idles the cluster 0.5 s a step.
    assert!((env["wait_seconds"].as_f64().unwrap() - 100.0).abs() < 1e-9);
    // 512 × 5 episodes × 0.5 s × 200 steps at $0.50/h.
    assert!((env["sandbox_usd"].as_f64().unwrap() - 35.555_555_555).abs() < 1e-6);
    assert!(env["api_usd"].as_f64().unwrap() > 0.0);
    let usd = &v["usd"];
    let sum: f64 = ["search", "learning", "feedback"]
        .iter()
        .map(|b| usd[b].as_f64().unwrap())
        .sum();
    assert!((sum - usd["total"].as_f64().unwrap()).abs() < 1e-6 * sum);
    // The API judge's dollars sit in feedback without GPU-hours.
    assert_eq!(v["gpu_hours"]["feedback"], 0.0);
    assert!(usd["feedback"].as_f64().unwrap() > 0.0);
    assert!(usd["total"].as_f64().unwrap() > single["usd"]["total"].as_f64().unwrap());
    assert_eq!(single["environment"]["usd_outside_gpus"], 0.0);
    // Bad agent numbers are named by their flag.
    let mut bad = base.to_vec();
    bad.extend(["--turns", "0.5"]);
    bin()
        .args(&bad)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--turns: 0.5 must lie between 1"));
}

#[test]
fn an_api_judge_from_the_catalog_is_priced_as_its_listed_prices() {
    let base = ["cost", "--model", "qwen2.5-7b", "--steps", "10"];
    let by_id = json(&[&base[..], &["--judge-api", "GPT-4o-mini"]].concat());
    let by_price = json(
        &[
            &base[..],
            &[
                "--judge-usd-per-million-input",
                "0.15",
                "--judge-usd-per-million-output",
                "0.6",
            ],
        ]
        .concat(),
    );
    let api = by_id["environment"]["api_usd"].as_f64().unwrap();
    assert!(api > 0.0);
    assert_eq!(by_id["environment"], by_price["environment"]);
    // An explicit price overrides the list's.
    let cheaper = json(
        &[
            &base[..],
            &[
                "--judge-api",
                "gpt-4o-mini",
                "--judge-usd-per-million-input",
                "0",
            ],
        ]
        .concat(),
    );
    assert!(cheaper["environment"]["api_usd"].as_f64().unwrap() < api);
    bin()
        .args(base)
        .args(["--judge-api", "gpt4o-mini"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("did you mean `gpt-4o-mini`"));
}

/// The agentic comparison of the book's agents chapter (docs/book/src/agents.md): veRL's published per-step timings of a
/// ReTool run on 32 H20s (volcengine/verl@b178a3cd docs/advance/fully_async.md) against this
/// ledger. That chapter's table quotes these numbers; a ledger change that moves them must update
/// it.
#[test]
fn the_readme_retool_comparison_holds() {
    let output = common::bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b-instruct",
            "--gpu",
            "h20",
            "--gpus",
            "32",
            "--prompts-per-step",
            "64",
            "--group-size",
            "16",
            "--max-response-len",
            "16384",
            "--mean-response-tokens",
            "560",
            "--turns",
            "7.78",
            "--observation-tokens",
            "100",
            "--tool-seconds",
            "1.61",
            "--no-kl-reference",
            "--steps",
            "100",
            "--json",
        ])
        .output()
        .unwrap();
    assert!(output.status.success());
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
    let phase = |name: &str| -> f64 {
        report["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap()["seconds_per_step"]
            .as_f64()
            .unwrap()
    };
    let generation = phase("prefill") + phase("decode") + phase("environment");
    // The chapter's table: | phase | published | this ledger | ratio |, read from the page so
    // that no number is pinned twice.
    let page = std::fs::read_to_string(common::repo("docs/book/src/agents.md")).unwrap();
    let table_row = |label: &str| -> (f64, f64, f64) {
        let line = page
            .lines()
            .find(|l| l.starts_with(&format!("| {label}")))
            .unwrap_or_else(|| panic!("agents.md has no `{label}` row"));
        let cells: Vec<f64> = line
            .split('|')
            .filter_map(|c| c.trim().parse::<f64>().ok())
            .collect();
        assert_eq!(cells.len(), 3, "{line}");
        (cells[0], cells[1], cells[2])
    };
    let round = |x: f64| (x * 100.0).round() / 100.0;
    for (label, ours) in [
        ("generation", generation),
        ("old log-prob", phase("old_logprob")),
        ("actor update", phase("update")),
        ("step", report["training_step_seconds"].as_f64().unwrap()),
    ] {
        let (published, stated, ratio) = table_row(label);
        assert_eq!(round(ours), stated, "agents.md `{label}`: this ledger");
        assert_eq!(round(ours / published), ratio, "agents.md `{label}`: ratio");
    }
}

#[test]
fn cost_refuses_task_numbers_beyond_their_physical_range_naming_the_flag() {
    for (flag, value, bound) in [
        ("--response-length-cv", "60", "above 5"),
        ("--pass-rate-concentration", "3e6", "above 10000"),
        ("--dataset-prompts", "1e13", "above 10000000000"),
        ("--uncapped-mean-response-tokens", "1e9", "above 100000000"),
    ] {
        bin()
            .args([
                "cost",
                "--model",
                "qwen2.5-1.5b",
                "--steps",
                "10",
                flag,
                value,
            ])
            .assert()
            .code(2)
            .stderr(predicate::str::contains(flag).and(predicate::str::contains(bound)));
    }
}

#[test]
fn offload_once_per_step_is_priced_and_refused_where_it_cannot_run() {
    // The worked example with the policy's weights and moments offloaded: around every pass
    // (veRL) or once per step around the rollout (slime, OpenRLHF's sleep mode). Once per step
    // moves 12n bytes there and back; per pass moves 4n around the old log-probs and the weight
    // sync and 12n around the update, so it costs more.
    let with = |extra: &[&str]| {
        let mut args = WORKED.to_vec();
        args.extend_from_slice(extra);
        json(&args)
    };
    let plain = with(&[]);
    let per_pass = with(&["--param-offload", "--optimizer-offload"]);
    let per_step = with(&[
        "--param-offload",
        "--optimizer-offload",
        "--offload-per-step",
    ]);
    assert_eq!(per_step["config"]["offload"]["per_step"], true);
    assert_eq!(per_pass["config"]["offload"]["per_step"], false);
    assert_eq!(per_pass["config"]["offload"]["optimizer"], true);
    let step = |v: &serde_json::Value| v["step_seconds"].as_f64().unwrap();
    assert!(
        step(&plain) < step(&per_step),
        "{} {}",
        step(&plain),
        step(&per_step)
    );
    assert!(
        step(&per_step) < step(&per_pass),
        "{} {}",
        step(&per_step),
        step(&per_pass)
    );
    // Refused: nothing to move, and a rollout on GPUs of its own.
    bin()
        .args(WORKED)
        .arg("--offload-per-step")
        .assert()
        .code(2)
        .stderr(
            predicate::str::contains("--offload-per-step").and(predicate::str::contains(
                "also set param_offload, optimizer_offload or (with kl_reference) reference_offload",
            )),
        );
    bin()
        .args(WORKED)
        .args([
            "--param-offload",
            "--offload-per-step",
            "--schedule",
            "async",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("the schedule is async"));
    // The reference alone moves nothing without a KL reference.
    bin()
        .args(WORKED)
        .args([
            "--reference-offload",
            "--offload-per-step",
            "--no-kl-reference",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("moves nothing"));
    // An engine inside the trainer generates with the policy's weights, which would be gone.
    bin()
        .args(WORKED)
        .args(["--param-offload", "--offload-per-step"])
        .args(["--engine", "transformers-generate"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("generates inside the trainer"));
}

#[test]
fn a_prompt_cap_bounds_the_default_prompt_and_refuses_a_longer_mean() {
    // --max-prompt-tokens (veRL data.max_prompt_length, often imported): a cap shorter than the
    // default mean prompt becomes the mean; a mean given above the cap is refused, exit 2,
    // naming the flag.
    let capped = json(&[
        "cost",
        "--model",
        "qwen2.5-7b",
        "--steps",
        "10",
        "--max-prompt-tokens",
        "128",
    ]);
    assert_eq!(capped["config"]["prompt_tokens"], 128);
    assert_eq!(capped["config"]["max_prompt_tokens"], 128);
    let out = bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--steps",
            "10",
            "--prompt-tokens",
            "300",
            "--max-prompt-tokens",
            "200",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("--max-prompt-tokens") && stderr.contains("below the mean prompt"),
        "{stderr}"
    );
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
}

#[test]
fn calibrate_hw_calibrates_the_run_of_its_from_verl_file() {
    // Issue 52: `calibrate-hw --from-verl FILE` was accepted and ignored, calibrating the
    // defaults (8 GPUs, cap 4096) into a profile 2-3x too optimistic. The file's run (here
    // Qwen2.5-7B-Instruct on 2 x 8 GPUs) is the one calibrated now.
    let dir = tempfile::tempdir().unwrap();
    let script = repo("tests/fixtures/import/verl_grpo_qwen2.5-7b.sh");
    let out = dir.path().join("cal.toml");
    bin()
        .args(["calibrate-hw", "--from-verl"])
        .arg(&script)
        .args(["--gen-seconds", "120", "--update-seconds", "60", "--out"])
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("qwen2.5-7b-instruct on 16 x"), "{text}");
    let defaults = dir.path().join("defaults.toml");
    bin()
        .args([
            "calibrate-hw",
            "--model",
            "qwen2.5-7b-instruct",
            "--gen-seconds",
            "120",
        ])
        .args(["--update-seconds", "60", "--out"])
        .arg(&defaults)
        .assert()
        .success();
    assert_ne!(std::fs::read_to_string(&defaults).unwrap(), text);
}

#[test]
fn an_imported_value_meets_its_flag_s_bounds_and_the_error_names_the_file_line_and_key() {
    // Issue 52: imported settings are written into `cost`'s arguments as typed values (no
    // command line is rebuilt); each still meets the bound its flag has, and a value out of it
    // is blamed on the file's line and key, not on a flag the user never typed.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("run.sh");
    std::fs::write(
        &script,
        "python3 -m verl.trainer.main_ppo \\\n  actor_rollout_ref.model.path=Qwen/Qwen2.5-7B-Instruct \\\n  actor_rollout_ref.rollout.tensor_model_parallel_size=2048 \\\n  trainer.total_training_steps=10\n",
    )
    .unwrap();
    let output = bin()
        .args(["cost", "--from-verl"])
        .arg(&script)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    for part in [
        "run.sh:3",
        "actor_rollout_ref.rollout.tensor_model_parallel_size",
        "2048 is too large; use at most 1024",
        "(imported as --rollout-tensor-parallel)",
    ] {
        assert!(stderr.contains(part), "{part} not in {stderr}");
    }
    // The same value typed as the flag overrides the file's and is priced.
    bin()
        .args(["cost", "--from-verl"])
        .arg(&script)
        .args(["--rollout-tensor-parallel", "2"])
        .assert()
        .success()
        .stdout(predicate::str::contains("overridden on the command line"));
}

#[test]
fn cost_of_a_grid_cell_is_the_row_the_sweep_wrote_for_it() {
    // Issue 52: `cost --grid G --cell ID` prices one cell with the grid's own settings (task,
    // hardware, run settings of its agent axes, measured base score), so it equals the sweep's
    // row of cells.csv: iterations exactly, and every money and time column to the 7 significant
    // digits cells.csv prints. Over a spread of the feasible cells (every k-th, about a dozen) of
    // a one-turn grid and a multi-turn one.
    for grid in ["grids/race-pilot.toml", "grids/agentic.toml"] {
        let dir = tempfile::tempdir().unwrap();
        bin()
            .args(["sweep", grid, "-q", "--out"])
            .arg(dir.path())
            .assert()
            .success();
        let mut reader = csv::Reader::from_path(dir.path().join("cells.csv")).unwrap();
        let headers = reader.headers().unwrap().clone();
        let column = |name: &str| headers.iter().position(|h| h == name).unwrap();
        let feasible: Vec<csv::StringRecord> = reader
            .records()
            .map(Result::unwrap)
            .filter(|row| &row[column("feasible")] == "true")
            .collect();
        let stride = feasible.len().div_ceil(12).max(1);
        let mut checked = 0;
        for row in feasible.iter().step_by(stride) {
            let id = &row[column("cell_id")];
            let output = bin()
                .current_dir(repo("."))
                .args(["cost", "--grid", grid, "--cell", id, "--json"])
                .output()
                .unwrap();
            assert!(output.status.success(), "cell {id} of {grid}");
            let json: serde_json::Value = serde_json::from_slice(&output.stdout).unwrap();
            let number = |name: &str| row[column(name)].parse::<f64>().unwrap();
            assert_eq!(json["iterations"].as_f64().unwrap(), number("iterations"));
            for (ours, theirs) in [
                (json["usd"]["total"].as_f64().unwrap(), number("usd")),
                (
                    json["gpu_hours"]["total"].as_f64().unwrap(),
                    number("gpu_hours"),
                ),
                (
                    json["step_seconds"].as_f64().unwrap(),
                    number("step_seconds"),
                ),
                (json["wall_hours"].as_f64().unwrap(), number("wall_hours")),
            ] {
                assert!(
                    (ours - theirs).abs() <= 1e-6 * theirs.abs().max(1e-12),
                    "cell {id} of {grid}: cost says {ours}, the sweep {theirs}"
                );
            }
            checked += 1;
        }
        assert!(checked >= 8, "{grid}: {checked} feasible cells");
        eprintln!("{grid}: {checked} cells priced alike");
    }
    // A pruned or absent cell, and a run flag beside --grid, are refused with the reason.
    bin()
        .args([
            "cost",
            "--grid",
            "grids/race-pilot.toml",
            "--cell",
            "99999999",
        ])
        .current_dir(repo("."))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("numbered 0 to"));
    bin()
        .args(["cost", "--grid", "grids/race-pilot.toml", "--cell", "0"])
        .args(["--group-size", "16"])
        .current_dir(repo("."))
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--group-size"));
}

#[test]
fn the_grid_init_writes_and_cost_without_flags_price_a_run_alike() {
    // Issue 52: `init` writes the task and run defaults a grid without them and `cost` without
    // their flags use (it wrote its own: 300-token prompts, 1,500-token responses, a cv of 0.7,
    // a pass rate of 0.4 and no reference model, so the same run was 415 steps in one and 407 in
    // the other). Cell 0 of the written grid, priced by `cost --grid --cell`, is `cost` with the
    // cell's levers alone.
    let dir = tempfile::tempdir().unwrap();
    let grid = dir.path().join("g.toml");
    bin()
        .args(["init", "--models", "qwen2.5-7b", "--gpus", "8"])
        .arg(&grid)
        .assert()
        .success();
    let grid = grid.to_str().unwrap();
    let cell = json(&["cost", "--grid", grid, "--cell", "0"]);
    let flags = json(&[
        "cost",
        "--model",
        "qwen2.5-7b",
        "--gpu",
        "h100-sxm",
        "--gpus",
        "8",
        "--group-size",
        "4",
        "--max-response-len",
        "4096",
        "--update-epochs",
        "1",
        "--prompts-per-step",
        "128",
        "--budget",
        "1000 usd",
    ]);
    for key in ["iterations", "step_seconds", "wall_hours"] {
        assert_eq!(cell[key], flags[key], "{key}");
    }
    assert_eq!(cell["usd"]["total"], flags["usd"]["total"]);
}

#[test]
fn cost_json_says_where_each_setting_came_from() {
    // Issue 52: which source set each value. A flag the user typed wins over the imported file;
    // the file's values name its line and key; everything else is the default. A grid cell's
    // settings are all the grid's.
    let script = repo("tests/fixtures/import/verl_grpo_qwen2.5-7b.sh");
    let script_text = script.to_str().unwrap();
    let value = json(&["cost", "--from-verl", script_text, "--group-size", "4"]);
    let sources = &value["sources"];
    assert_eq!(sources["group_size"], "flag");
    assert_eq!(
        sources["max_response_len"],
        format!("{script_text}:13 data.max_response_length").as_str()
    );
    assert_eq!(sources["prompt_tokens"], "default");
    assert_eq!(
        sources["kl_reference"].as_str().map(|s| s.is_empty()),
        Some(false)
    );
    assert!(sources.get("json").is_none() && sources.get("no_kl_reference").is_none());
    let grid = repo("grids/race-pilot.toml");
    let grid = grid.to_str().unwrap();
    let cell = json(&["cost", "--grid", grid, "--cell", "0"]);
    assert_eq!(cell["sources"]["grid"], grid);
}

#[test]
fn under_a_budget_the_length_band_is_in_the_steps_the_budget_buys() {
    // The budget fixes the dollars, so half or twice the response length moves the steps it
    // buys (issue 53: the band read "$19,995 at half, $19,990 at twice").
    const RUN: &[&str] = &[
        "cost",
        "--model",
        "qwen3-8b",
        "--gpus",
        "32",
        "--budget",
        "20000 usd",
    ];
    let a = bin().args(RUN).assert().success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(
        text.contains("at half that length the budget buys "),
        "{text}"
    );
    let v = json(RUN);
    let band = &v["length_band_iterations"];
    let (half, twice) = (
        band["half_length"].as_u64().unwrap(),
        band["twice_length"].as_u64().unwrap(),
    );
    let at_length = v["iterations"].as_u64().unwrap();
    assert!(
        half > at_length && at_length > twice,
        "{half} {at_length} {twice}"
    );
    // For a number of steps the length moves the dollars.
    let a = bin()
        .args([
            "cost", "--model", "qwen3-8b", "--gpus", "32", "--steps", "100",
        ])
        .assert()
        .success();
    let text = String::from_utf8_lossy(&a.get_output().stdout).to_string();
    assert!(text.contains("at half that length $"), "{text}");
}

#[test]
fn every_rl_price_carries_a_90_percent_interval_widest_where_no_timing_was_published() {
    // Issue 54: the interval comes from the ledger's held-out error (validation/loso_residuals.csv).
    let seen = json(WORKED);
    let usd = seen["usd"]["total"].as_f64().unwrap();
    let interval = |v: &serde_json::Value| -> (f64, f64) {
        let a = v.as_array().unwrap();
        (a[0].as_f64().unwrap(), a[1].as_f64().unwrap())
    };
    let (low, high) = interval(&seen["usd_interval"]);
    assert!(low < usd && usd < high, "{low} {usd} {high}");
    let step = seen["step_seconds"].as_f64().unwrap();
    let (s_low, s_high) = interval(&seen["step_seconds_interval"]);
    assert!(s_low < step && step < s_high);
    // Dollars scale with the step for a number of steps: the same factors.
    assert!(((low / usd) - (s_low / step)).abs() < 1e-9);
    assert_eq!(seen["price_interval_unseen"], serde_json::json!([]));
    // An A100 with LoRA: no published RL step on either, so the widest interval, named.
    let mut unseen_args: Vec<&str> = WORKED.to_vec();
    unseen_args.extend(["--gpu", "a100-80gb", "--finetune", "lora:64"]);
    let unseen = json(&unseen_args);
    assert_eq!(
        unseen["price_interval_unseen"],
        serde_json::json!(["gpu a100-80gb", "LoRA"])
    );
    let (u_low, u_high) = interval(&unseen["step_seconds_interval"]);
    let u_step = unseen["step_seconds"].as_f64().unwrap();
    // (The low ends share their factor; the quotients differ in the last bit at most.)
    assert!(u_high / u_step > s_high / step && u_low / u_step <= s_low / step + 1e-12);
    // Under a budget the dollars are the budget's and the interval is on the steps it buys.
    let budget = json(&[
        "cost",
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--budget",
        "2000 usd",
    ]);
    let (i_low, i_high) = interval(&budget["iterations_interval"]);
    let iterations = budget["iterations"].as_f64().unwrap();
    assert!(i_low < iterations && iterations < i_high);
    let (d_low, d_high) = interval(&budget["usd_interval"]);
    assert_eq!(d_low, d_high);
    let text = bin().args(WORKED).assert().success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(text.contains("90% interval: steps of "), "{text}");
}

#[test]
fn a_cap_schedule_is_one_run_priced_segment_by_segment() {
    // Issue 54 item 4: 8k for 300 steps, 16k for 200, each at its logged mean; the run's
    // iterations are the segments', its dollars their sum (the start-up in the first), and the
    // text lists each segment and the events beyond the steps.
    let schedule = [
        "cost",
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--cap-schedule",
        "8192:300:3000,16384:200:7000",
    ];
    let v = json(&schedule);
    assert_eq!(v["iterations"], 500);
    let segments = v["cap_schedule"].as_array().unwrap();
    assert_eq!(segments.len(), 2);
    assert_eq!(segments[1]["max_response_len"], 16384);
    let sum: f64 = segments.iter().map(|s| s["usd"].as_f64().unwrap()).sum();
    let total = v["usd"]["total"].as_f64().unwrap();
    assert!((sum / total - 1.0).abs() < 1e-9, "{sum} vs {total}");
    assert!(segments[1]["step_seconds"].as_f64() > segments[0]["step_seconds"].as_f64());
    let text = bin().args(schedule).assert().success();
    let text = String::from_utf8_lossy(&text.get_output().stdout).to_string();
    assert!(text.contains("of 8,192 -> 16,384 tokens"), "{text}");
    assert!(text.contains("cap schedule (one run"), "{text}");
    for event in [
        "start-up",
        "validation before training",
        "validation",
        "checkpoints",
    ] {
        assert!(text.contains(&format!("\n{event} ")), "{event}: {text}");
    }
}

#[test]
fn under_a_budget_the_last_segment_of_a_schedule_takes_what_is_left() {
    let v = json(&[
        "cost",
        "--model",
        "qwen2.5-7b",
        "--gpus",
        "16",
        "--cap-schedule",
        "8192:300,16384",
        "--budget",
        "5000 usd",
    ]);
    let segments = v["cap_schedule"].as_array().unwrap();
    assert_eq!(segments[0]["iterations"], 300);
    let last = &segments[1];
    let total = v["usd"]["total"].as_f64().unwrap();
    let step_usd = last["usd"].as_f64().unwrap() / last["iterations"].as_f64().unwrap();
    assert!(
        total <= 5000.0 && total > 5000.0 - 2.0 * step_usd,
        "{total}"
    );
    // Segments that spend the budget before the last are refused, in one line.
    bin()
        .args([
            "cost",
            "--model",
            "qwen2.5-7b",
            "--cap-schedule",
            "8192:3000,16384",
            "--budget",
            "500 usd",
        ])
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "--cap-schedule: the segments with steps spend",
        ));
}

#[test]
fn without_anything_beyond_the_steps_the_step_is_the_training_step() {
    let v = json(&[
        "cost",
        "--model",
        "qwen2.5-7b",
        "--steps",
        "100",
        "--startup-seconds",
        "0",
        "--validation-every-steps",
        "0",
        "--no-validation-before-training",
        "--checkpoint-every-steps",
        "0",
    ]);
    assert_eq!(v["run_events"].as_array().unwrap().len(), 0);
    assert_eq!(v["step_seconds"], v["training_step_seconds"]);
}
