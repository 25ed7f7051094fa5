//! What a newcomer types on day one (issue 26): GPU names as people write them, models outside
//! the catalog by their config.json or checkpoint folder, Hugging Face ids of common bases, and
//! aliases that keep their own names.

use predicates::prelude::*;

mod common;
use common::bin;

/// `cost --json` with these flags, parsed; the command must exit with `code`.
fn cost_json_exiting(args: &[&str], code: i32) -> serde_json::Value {
    let a = bin()
        .arg("cost")
        .args(args)
        .args(["--steps", "10", "--json"])
        .assert()
        .code(code);
    serde_json::from_slice(&a.get_output().stdout).unwrap()
}

/// `cost --json` with these flags, parsed.
fn cost_json(args: &[&str]) -> serde_json::Value {
    cost_json_exiting(args, 0)
}

/// A Mistral-7B-shaped config.json (the published v0.1 shape), in a checkpoint folder.
fn checkpoint(dir: &std::path::Path, name: &str, name_or_path: Option<&str>) -> std::path::PathBuf {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).unwrap();
    let named = name_or_path
        .map(|n| format!("\"_name_or_path\": \"{n}\", "))
        .unwrap_or_default();
    std::fs::write(
        folder.join("config.json"),
        format!(
            "{{{named}\"model_type\": \"mistral\", \"hidden_size\": 4096, \"intermediate_size\": 14336, \"num_attention_heads\": 32, \"num_hidden_layers\": 32, \"num_key_value_heads\": 8, \"vocab_size\": 32000, \"tie_word_embeddings\": false}}"
        ),
    )
    .unwrap();
    folder
}

#[test]
fn a_checkpoint_folder_or_its_config_json_is_a_model() {
    let dir = tempfile::tempdir().unwrap();
    let folder = checkpoint(dir.path(), "my-sft-step500", None);
    let from_folder = cost_json(&["--model", folder.to_str().unwrap()]);
    assert_eq!(from_folder["config"]["model"], "my-sft-step500");
    let config = folder.join("config.json");
    let from_file = cost_json(&["--model", config.to_str().unwrap()]);
    assert_eq!(from_file["usd"], from_folder["usd"]);
    // The same shape as the catalog's Mistral-7B-v0.1 prices the same.
    let catalog = cost_json(&["--model", "mistralai/Mistral-7B-v0.1"]);
    assert_eq!(catalog["usd"], from_folder["usd"]);
    // A config that names its model is shown by that name.
    let named = checkpoint(dir.path(), "ckpt", Some("acme/Acme-7B-SFT"));
    let v = cost_json(&["--model", named.to_str().unwrap()]);
    assert_eq!(v["config"]["model"], "acme-7b-sft");
    // A folder without config.json, or a path that does not exist: one line saying so.
    let empty = dir.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    bin()
        .args(["cost", "--model", empty.to_str().unwrap(), "--steps", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("has no config.json"));
    bin()
        .args(["cost", "--model", "/no/such/checkpoint", "--steps", "3"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("does not exist"));
}

#[test]
fn an_unknown_model_names_the_ways_to_add_one_and_does_not_list_every_id() {
    let a = bin()
        .args(["cost", "--model", "acme/unheard-of-9000", "--steps", "3"])
        .assert()
        .code(2);
    let stderr = String::from_utf8_lossy(&a.get_output().stderr).to_string();
    assert!(stderr.contains("import-model"), "{stderr}");
    assert!(stderr.contains("--model path/to/config.json"), "{stderr}");
    assert!(
        !stderr.contains("qwen2.5-0.5b, "),
        "every id listed: {stderr}"
    );
    assert_eq!(stderr.lines().count(), 1);
}

#[test]
fn common_bases_are_in_the_catalog_and_aliases_keep_their_names() {
    for (typed, shown) in [
        ("mistralai/Mistral-7B-v0.1", "mistral-7b-v0.1"),
        ("meta-llama/Llama-3.2-3B-Instruct", "llama-3.2-3b-instruct"),
        (
            "meta-llama/Llama-3.3-70B-Instruct",
            "llama-3.3-70b-instruct",
        ),
        ("google/gemma-2-9b-it", "gemma-2-9b-it"),
        ("microsoft/phi-4", "phi-4"),
        ("openai/gpt-oss-20b", "gpt-oss-20b"),
        ("Qwen/Qwen2.5-Math-7B", "qwen2.5-math-7b"),
        ("Qwen/Qwen2-7B-Instruct", "qwen2-7b-instruct"),
    ] {
        // A cap that fits every window listed (Qwen2.5-Math-7B's 4,096, Gemma 2's 8,192).
        let v = cost_json(&[
            "--model",
            typed,
            "--gpus",
            "64",
            "--finetune",
            "lora:64",
            "--max-response-len",
            "3072",
        ]);
        assert_eq!(v["config"]["model"], shown, "{typed}");
    }
}

#[test]
fn two_catalog_files_merge_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let price = dir.path().join("price.toml");
    std::fs::write(
        &price,
        "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 2.0\n",
    )
    .unwrap();
    let later = dir.path().join("later.toml");
    std::fs::write(
        &later,
        "[[gpu]]\nid = \"h100-sxm\"\nusd_per_gpu_hour = 1.0\n",
    )
    .unwrap();
    let run = |catalogs: &[&std::path::Path]| {
        let mut args = vec!["--model", "qwen2.5-7b"];
        for c in catalogs {
            args.extend(["--catalog", c.to_str().unwrap()]);
        }
        cost_json(&args)["usd"]["total"].as_f64().unwrap()
    };
    let (one, both) = (run(&[&price]), run(&[&price, &later]));
    // The second file's price wins, and the first is not ignored: halving the price halves the
    // dollars of the same GPU-hours.
    assert!((one / both - 2.0).abs() < 1e-9, "{one} vs {both}");
    assert!((run(&[&later, &price]) - one).abs() < 1e-9);
}

/// `cost --json` of a run that cannot go ahead: exit 3, the JSON still printed.
fn infeasible_json(args: &[&str]) -> serde_json::Value {
    cost_json_exiting(args, 3)
}

#[test]
fn a_cap_beyond_the_model_s_context_window_is_refused_with_the_cap_that_fits() {
    // Qwen2.5-Math-7B's window is 4,096 tokens (its config.json), though it shares Qwen2.5-7B's
    // shape (131,072): prompt 256 + cap 8,192 cannot run; the fix names the cap that fits.
    let v = infeasible_json(&[
        "--model",
        "Qwen/Qwen2.5-Math-7B",
        "--max-response-len",
        "8192",
    ]);
    assert_eq!(v["feasible"], false);
    let reason = v["infeasible_reason"].as_str().unwrap();
    assert!(reason.contains("context window of 4,096"), "{reason}");
    assert!(reason.contains("3,840 or less"), "{reason}");
    let fits = cost_json(&[
        "--model",
        "Qwen/Qwen2.5-Math-7B",
        "--max-response-len",
        "3840",
    ]);
    assert_eq!(fits["feasible"], true);
    let base = cost_json(&["--model", "Qwen/Qwen2.5-7B", "--max-response-len", "8192"]);
    assert_eq!(base["feasible"], true);
    // A checkpoint's own max_position_embeddings is read as import-model reads it.
    let dir = tempfile::tempdir().unwrap();
    let folder = checkpoint(dir.path(), "short-ctx", None);
    let config = folder.join("config.json");
    let text = std::fs::read_to_string(&config).unwrap();
    std::fs::write(
        &config,
        text.replacen('{', "{\"max_position_embeddings\": 2048, ", 1),
    )
    .unwrap();
    let short = infeasible_json(&["--model", folder.to_str().unwrap()]);
    assert_eq!(short["feasible"], false, "{short}");
    assert!(
        short["infeasible_reason"]
            .as_str()
            .unwrap()
            .contains("context window of 2,048")
    );
}
