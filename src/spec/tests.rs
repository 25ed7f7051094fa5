//! Grid parsing: good grids expand as specified; every bad value gives one line naming the file,
//! line and field.

#![allow(
    clippy::too_many_lines,
    reason = "a test reads top to bottom as one scenario; the 80-line rule is for the library"
)]

use super::*;
use crate::config::{Finetune, Stop};
use crate::toml_text::locate_key;

const GOOD: &str = r#"
name = "t"
seed = 3

[hardware]
gpu = "h100-sxm"
gpus = 8

[task]
prompt_tokens = 200
mean_response_tokens = 800
pass_rate = { mean = 0.4, concentration = 3.0 }

[axes]
model = ["qwen2.5-1.5b", "qwen2.5-7b"]
finetune = ["full", "lora:32"]
reward = ["rule", "prm:qwen2.5-math-prm-7b"]
group_size = [4, 8, 16]
max_response_len = [1024, 2048]
update_epochs = [1, 2]
prompts_per_step = [64, 256]
budget = ["1e17 flops", "1e18 flops"]
"#;

fn parse_text(text: &str) -> Result<Grid> {
    parse(text, Path::new("grid.toml"), &Catalog::embedded())
}

fn error_of(text: &str) -> String {
    let err = parse_text(text).expect_err("should be rejected");
    assert!(err.is_input(), "{err}");
    let message = err.to_string();
    assert!(
        message.starts_with("grid.toml"),
        "names the file: {message}"
    );
    assert!(!message.contains('\n'), "one line: {message}");
    message
}

fn replace(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn good_grid_expands_to_the_product_of_axes() {
    let g = parse_text(GOOD).unwrap();
    assert_eq!(g.cell_count().unwrap(), 2 * 2 * 2 * 3 * 2 * 2 * 2 * 2);
    assert_eq!(g.valid_cell_count(), g.cell_count().unwrap());
    assert_eq!(g.seed, 3);
    assert_eq!(g.hardware.usd_per_gpu_hour, 2.99, "catalog default price");
    assert_eq!(g.task.pass_rate_mean, 0.4);
    // Last axis fastest: cell 1 differs from cell 0 in the budget only.
    let c0 = g.cell(0).unwrap();
    let c1 = g.cell(1).unwrap();
    assert_eq!(c0.model.id, "qwen2.5-1.5b");
    assert!(matches!(c0.stop, Stop::Budget(b) if b.amount == 1e17));
    assert!(matches!(c1.stop, Stop::Budget(b) if b.amount == 1e18));
    assert_eq!(c0.group_size, c1.group_size);
    // The last cell takes the last value of every axis.
    let last = g.cell(g.cell_count().unwrap() - 1).unwrap();
    assert_eq!(last.model.id, "qwen2.5-7b");
    assert_eq!(last.finetune, Finetune::Lora(32));
    assert_eq!(last.reward.to_string(), "prm:qwen2.5-math-prm-7b");
    assert_eq!(
        (
            last.group_size,
            last.max_response_len,
            last.update_epochs,
            last.prompts_per_step
        ),
        (16, 2048, 2, 256)
    );
}

#[test]
fn decoding_visits_every_combination_once() {
    let g = parse_text(GOOD).unwrap();
    let n = g.cell_count().unwrap();
    let mut seen = std::collections::BTreeSet::new();
    for id in 0..n {
        let i = g.decode(id);
        assert!(seen.insert((
            i[Axis::Model],
            i[Axis::Finetune],
            i[Axis::Reward],
            i[Axis::GroupSize],
            i[Axis::MaxResponseLen],
            i[Axis::UpdateEpochs],
            i[Axis::PromptsPerStep],
            i[Axis::Budget]
        )));
    }
    assert_eq!(seen.len() as u64, n);
}

#[test]
fn scalars_stand_for_one_element_lists_and_defaults_apply() {
    let text = GOOD
        .replace(
            r#"model = ["qwen2.5-1.5b", "qwen2.5-7b"]"#,
            r#"model = "qwen2.5-7b""#,
        )
        .replace("group_size = [4, 8, 16]", "group_size = 8")
        .replace("update_epochs = [1, 2]\n", "")
        .replace(r#"finetune = ["full", "lora:32"]"#, "");
    let g = parse_text(&text).unwrap();
    assert_eq!(g.axes.model.len(), 1);
    assert_eq!(g.axes.group_size, vec![8]);
    assert_eq!(g.axes.update_epochs, vec![1]);
    assert_eq!(g.axes.finetune, vec![Finetune::Full]);
}

#[test]
fn iterations_axis_replaces_budgets() {
    let g = parse_text(&replace(
        r#"budget = ["1e17 flops", "1e18 flops"]"#,
        "iterations = [10, 100]",
    ))
    .unwrap();
    assert_eq!(g.axes.budget, BudgetAxis::Iterations(vec![10, 100]));
    assert!(matches!(g.cell(0).unwrap().stop, Stop::Iterations(10)));
}

#[test]
fn constraints_prune_prompts_times_group() {
    let text = format!("{GOOD}\n[constraints]\nmax_rollouts_per_step = 1024\n");
    let g = parse_text(&text).unwrap();
    // Allowed (B, G) pairs: (64, 4), (64, 8), (64, 16), (256, 4): 4 of 6.
    assert_eq!(g.valid_cell_count(), g.cell_count().unwrap() / 6 * 4);
    let pruned = (0..g.cell_count().unwrap())
        .filter(|&id| g.cell(id).is_none())
        .count() as u64;
    assert_eq!(pruned, g.cell_count().unwrap() - g.valid_cell_count());
}

#[test]
fn cell_count_overflow_is_an_error_not_a_panic() {
    // 70,000 values on each of four axes: 70,000^4 = 2.4e19 cells, past u64.
    let values: Vec<String> = (2..70_002).map(|i| i.to_string()).collect();
    let list = format!("[{}]", values.join(", "));
    let text = GOOD
        .replace("group_size = [4, 8, 16]", &format!("group_size = {list}"))
        .replace(
            "max_response_len = [1024, 2048]",
            &format!("max_response_len = {list}"),
        )
        .replace(
            "prompts_per_step = [64, 256]",
            &format!("prompts_per_step = {list}"),
        )
        .replace("update_epochs = [1, 2]", &format!("update_epochs = {list}"));
    let message = error_of(&text);
    assert!(message.contains("overflows"), "{message}");
}

#[test]
fn unknown_keys_suggest_the_nearest() {
    let m = error_of(&replace("group_size", "gruop_size"));
    assert!(
        m.contains("axes.gruop_size")
            && m.contains("did you mean `group_size`")
            && m.contains("grid.toml:18:"),
        "{m}"
    );
    let m = error_of(&replace("gpus = 8", "gpu_count = 8"));
    assert!(m.contains("hardware.gpu_count"), "{m}");
    let m = error_of(&replace("[task]", "[tsak]"));
    assert!(m.contains("did you mean `task`"), "{m}");
    let m = error_of(&replace("concentration", "concentraton"));
    assert!(m.contains("did you mean `concentration`"), "{m}");
}

#[test]
fn bad_values_name_the_field_and_line() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "group_size = [4, 8, 16]",
            "group_size = [0]",
            "axes.group_size",
        ),
        (
            "group_size = [4, 8, 16]",
            "group_size = [-8]",
            "axes.group_size",
        ),
        ("group_size = [4, 8, 16]", "group_size = [1]", "at least 2"),
        ("group_size = [4, 8, 16]", "group_size = []", "empty list"),
        (
            "group_size = [4, 8, 16]",
            "group_size = [4, 4]",
            "listed twice",
        ),
        (
            "max_response_len = [1024, 2048]",
            "max_response_len = [0]",
            "axes.max_response_len",
        ),
        (
            "update_epochs = [1, 2]",
            "update_epochs = [0]",
            "axes.update_epochs",
        ),
        (
            "prompts_per_step = [64, 256]",
            "prompts_per_step = [-1]",
            "axes.prompts_per_step",
        ),
        (
            "prompts_per_step = [64, 256]",
            "prompts_per_step = [1e300]",
            "axes.prompts_per_step",
        ),
        ("gpus = 8", "gpus = 0", "hardware.gpus"),
        ("gpus = 8", "gpus = 2.5", "hardware.gpus"),
        (
            "gpu = \"h100-sxm\"",
            "gpu = \"h100-sx\"",
            "did you mean `h100-sxm`",
        ),
        ("gpu = \"h100-sxm\"", "gpu = 100", "expected a string"),
        (
            "\"qwen2.5-7b\"]",
            "\"qwen2.5-7\"]",
            "did you mean `qwen2.5-7b`",
        ),
        (
            "\"qwen2.5-7b\"]",
            "\"qwen2.5-math-prm-7b\"]",
            "reward model",
        ),
        (
            "\"prm:qwen2.5-math-prm-7b\"",
            "\"prm:qwen2.5-math-prm\"",
            "did you mean `qwen2.5-math-prm-7b`",
        ),
        (
            "\"prm:qwen2.5-math-prm-7b\"",
            "\"pmr:qwen2.5-math-prm-7b\"",
            "reward kind",
        ),
        ("\"lora:32\"", "\"lora:0\"", "LoRA rank"),
        ("\"1e18 flops\"", "\"1e18 flop5\"", "did you mean `flops`"),
        ("\"1e18 flops\"", "\"1e8 usd\"", "mixes units"),
        ("\"1e18 flops\"", "\"0 flops\"", "positive"),
        ("\"1e18 flops\"", "\"-1e18 flops\"", "positive"),
        ("\"1e18 flops\"", "\"inf flops\"", "positive"),
        (
            "\"1e18 flops\"",
            "\"1e18\"",
            "has no unit; write \"1e18 usd\"",
        ),
        (
            "mean_response_tokens = 800",
            "mean_response_tokens = 0",
            "task.mean_response_tokens",
        ),
        (
            "mean_response_tokens = 800",
            "mean_response_tokens = nan",
            "not a finite number",
        ),
        (
            "mean_response_tokens = 800",
            "mean_response_tokens = inf",
            "not a finite number",
        ),
        (
            "prompt_tokens = 200",
            "prompt_tokens = -5",
            "task.prompt_tokens",
        ),
        ("mean = 0.4", "mean = 0", "strictly between 0 and 1"),
        ("mean = 0.4", "mean = 1.0", "strictly between 0 and 1"),
        (
            "concentration = 3.0",
            "concentration = -1.0",
            "task.pass_rate.concentration",
        ),
        ("seed = 3", "seed = -3", "seed"),
        ("name = \"t\"", "name = \"a/b\"", "name"),
        ("name = \"t\"", "name = \"\"", "name"),
        ("name = \"t\"", "name = [1", "invalid TOML"),
    ];
    for (from, to, expect) in cases {
        let m = error_of(&replace(from, to));
        assert!(m.contains(expect), "{to}: {m}");
        assert!(m.contains("grid.toml:"), "has a line number: {m}");
    }
}

#[test]
fn metric_names_and_budget_axes_are_bounded() {
    for bad in [
        "=HYPERLINK(1)",
        "+x",
        "-x",
        "@x",
        "a b",
        "a\\nb",
        &"m".repeat(65),
    ] {
        let m = error_of(&format!("{GOOD}\n[outcome]\nmetric = \"{bad}\"\n"));
        assert!(
            m.contains("outcome.metric") && m.contains("not a metric name"),
            "{bad}: {m}"
        );
        let m = error_of(&format!(
            "{GOOD}\n[outcome]\nmetrics = [\"math500\", \"{bad}\"]\n"
        ));
        assert!(
            m.contains("outcome.metrics") && m.contains("not a metric name"),
            "{bad}: {m}"
        );
    }
    for good in [
        "math500",
        "pass@1",
        "val/test_score/math",
        "AIME24_avg@64",
        "lcb:v5",
    ] {
        assert!(is_metric_name(good), "{good}");
    }
    let many: Vec<String> = (0..=MAX_BUDGET_VALUES)
        .map(|i| format!("\"{} usd\"", 100 + i))
        .collect();
    let m = error_of(&replace(
        r#"budget = ["1e17 flops", "1e18 flops"]"#,
        &format!("budget = [{}]", many.join(", ")),
    ));
    assert!(
        m.contains("axes.budget") && m.contains("at most 256"),
        "{m}"
    );
}

#[test]
fn missing_sections_and_contradictions_are_explained() {
    let m = error_of(&GOOD.replace("[hardware]\ngpu = \"h100-sxm\"\ngpus = 8\n", ""));
    assert!(m.contains("hardware") && m.contains("missing"), "{m}");
    let m = error_of(&replace(r#"budget = ["1e17 flops", "1e18 flops"]"#, ""));
    assert!(m.contains("axes.budget") && m.contains("iterations"), "{m}");
    let m = error_of(&replace(
        r#"budget = ["1e17 flops", "1e18 flops"]"#,
        "budget = [\"1 usd\"]\niterations = [3]",
    ));
    assert!(m.contains("not both"), "{m}");
    let m = error_of(&format!(
        "{GOOD}\n[constraints]\nmax_rollouts_per_step = 2\n"
    ));
    assert!(m.contains("exclude every combination"), "{m}");
    let m = error_of(&replace("gpus = 8", "gpus = 1\nschedule = \"async\""));
    assert!(m.contains("at least 2 GPUs"), "{m}");
    let m = error_of(&replace("gpus = 8", "gpus = 8\nschedule = \"asyn\""));
    assert!(m.contains("did you mean `async`"), "{m}");
}

#[test]
fn locate_key_finds_keys_in_their_section() {
    let text = "a = 1\n[x]\nb = 2\n[y]\nb = 3\nc = { d = 1 }\n";
    assert_eq!(locate_key(text, None, "a"), Some(1));
    assert_eq!(locate_key(text, Some("x"), "b"), Some(3));
    assert_eq!(locate_key(text, Some("y"), "b"), Some(5));
    assert_eq!(locate_key(text, Some("y"), "d"), Some(6));
    assert_eq!(locate_key(text, Some("x"), "zz"), None);
}

/// Every value of every axis fills its columns with the kinds the axis declares.
fn cell_values_have_their_columns_kinds(grid: &Grid) {
    for axis in Axis::ALL {
        for index in 0..grid.axes.len(axis) {
            let values = grid.axes.cell_values(axis, index);
            assert_eq!(values.as_slice().len(), axis.columns().len(), "{axis}");
            for (value, kind) in values.as_slice().iter().zip(axis.column_kinds()) {
                let agrees = matches!(
                    (value, kind),
                    (AxisValue::Text(_), ColumnKind::Text)
                        | (AxisValue::Count(_), ColumnKind::Count)
                        | (AxisValue::Real(_) | AxisValue::Number(_), ColumnKind::Real)
                );
                assert!(agrees, "{axis}: {value:?} in a {kind:?} column");
            }
        }
    }
}

#[test]
fn bundled_grids_are_valid() {
    let catalog = Catalog::embedded();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("grids");
    let mut names = Vec::new();
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            let grid = load(&path, &catalog).unwrap_or_else(|e| panic!("{e}"));
            cell_values_have_their_columns_kinds(&grid);
            names.push((grid.name.clone(), grid.valid_cell_count()));
        }
    }
    names.sort();
    let count = |n: &str| names.iter().find(|(g, _)| g == n).map(|(_, c)| *c).unwrap();
    assert!(count("race-pilot") >= 1000);
    assert!(count("big") >= 1_000_000);
    assert!(count("isocompute") > 0);
}

#[test]
fn outcome_overrides_move_values_and_ranges() {
    let text = format!(
        "{GOOD}\n[outcome]\nmetric = \"math500\"\nk_mid_at_7b = 20\nsteepness = {{ value = 1.5, low = 1.0, high = 2.0 }}\n"
    );
    let g = parse_text(&text).unwrap();
    assert_eq!(g.metric.as_deref(), Some("math500"));
    let k = g.outcome[crate::outcome::ParamId::KMidAt7b];
    let d = crate::outcome::OutcomeParams::default()[crate::outcome::ParamId::KMidAt7b];
    assert_eq!(k.value, 20.0);
    assert!(
        (k.low / 20.0 - d.low / d.value).abs() < 1e-12
            && (k.high / 20.0 - d.high / d.value).abs() < 1e-12,
        "a number keeps the relative range: {k:?} against {d:?}"
    );
    let b = g.outcome[crate::outcome::ParamId::Steepness];
    assert_eq!((b.value, b.low, b.high), (1.5, 1.0, 2.0));
    let m = error_of(&format!("{GOOD}\n[outcome]\nk_mid_at_7 = 20\n"));
    assert!(m.contains("did you mean `k_mid_at_7b`"), "{m}");
    let m = error_of(&format!(
        "{GOOD}\n[outcome]\nsteepness = {{ value = 1.0, low = 2.0 }}\n"
    ));
    assert!(
        m.contains("outcome.steepness") && m.contains("low <= value <= high"),
        "{m}"
    );
    let m = error_of(&format!("{GOOD}\n[outcome]\ngain_logit_at_7b = \"high\"\n"));
    assert!(m.contains("expected a number"), "{m}");
    let m = error_of(&format!(
        "{GOOD}\n[outcome]\nepoch_reuse = {{ value = 0.5, high = 1.5 }}\n"
    ));
    assert!(m.contains("epoch_reuse"), "{m}");
}

#[test]
fn value_errors_point_at_the_values_own_line_whatever_the_toml_spelling() {
    // Dotted keys at the top level and quoted keys: a text scan for `gpus =` under
    // `[hardware]` finds neither; the value's span does.
    let dotted = GOOD
        .replacen("[hardware]\ngpu = \"h100-sxm\"\ngpus = 8\n", "", 1)
        .replacen(
            "seed = 3\n",
            "seed = 3\nhardware.gpu = \"h100-sxm\"\nhardware.gpus = 0\n",
            1,
        );
    let m = error_of(&dotted);
    assert!(m.starts_with("grid.toml:5: hardware.gpus:"), "{m}");
    let quoted = replace("gpus = 8", "\"gpus\" = -3");
    let m = error_of(&quoted);
    assert!(m.starts_with("grid.toml:7: hardware.gpus:"), "{m}");
}

#[test]
fn base_score_is_one_number_or_a_table_by_model() {
    let g = parse_text(&replace(
        "mean_response_tokens = 800",
        "mean_response_tokens = 800\nbase_score = 0.5",
    ))
    .unwrap();
    assert_eq!(g.measured_base_scores, vec![Some(0.5), Some(0.5)]);
    let g = parse_text(&replace(
        "mean_response_tokens = 800",
        "mean_response_tokens = 800\nbase_score = { \"qwen2.5-7b\" = 0.646 }",
    ))
    .unwrap();
    assert_eq!(g.measured_base_scores, vec![None, Some(0.646)]);
    let c = g.cell(0).unwrap();
    assert_eq!(c.run_config(&g).measured_base_score, None);
    assert!(
        parse_text(GOOD)
            .unwrap()
            .measured_base_scores
            .iter()
            .all(Option::is_none)
    );
}

#[test]
fn bad_base_scores_name_the_fix() {
    let m = error_of(&replace(
        "mean_response_tokens = 800",
        "mean_response_tokens = 800\nbase_score = 64.6",
    ));
    assert!(
        m.contains("task.base_score") && m.contains("write 0.646"),
        "{m}"
    );
    let m = error_of(&replace(
        "mean_response_tokens = 800",
        "mean_response_tokens = 800\nbase_score = { \"qwen2.5-8b\" = 0.5 }",
    ));
    assert!(
        m.contains("not on the model axis") && m.contains("qwen2.5-7b"),
        "{m}"
    );
}

#[test]
fn target_folder_names_are_safe() {
    assert_eq!(super::folder_name("math500"), "math500");
    assert_eq!(super::folder_name("aime24/pass@1"), "aime24_pass_1");
    assert_eq!(super::folder_name(".."), "metric_2");
    assert_eq!(super::folder_name("a b"), "a_b");
}

#[test]
fn several_target_metrics_with_base_scores_per_metric() {
    let text = format!(
        "{}\n[outcome]\nmetrics = [\"math500\", \"aime24\"]\n",
        replace(
            "mean_response_tokens = 800",
            "mean_response_tokens = 800\nbase_score = { math500 = { \"qwen2.5-7b\" = 0.646 }, aime24 = 0.03 }",
        )
    );
    let g = parse_text(&text).unwrap();
    assert_eq!(g.metric.as_deref(), Some("math500"));
    assert_eq!(g.targets.len(), 2);
    assert_eq!(g.targets[1].name, "aime24");
    assert_eq!(g.measured_base_scores, vec![None, Some(0.646)]);
    assert_eq!(
        g.targets[1].measured_base_scores,
        vec![Some(0.03), Some(0.03)]
    );
    let view = g.for_target(1);
    assert_eq!(view.metric.as_deref(), Some("aime24"));
    assert_eq!(view.measured_base_scores, vec![Some(0.03), Some(0.03)]);
    assert!(view.targets.is_empty());
    // A target without base scores: the prior's default for every model.
    let g = parse_text(&format!(
        "{GOOD}\n[outcome]\nmetrics = [\"math500\", \"aime24\"]\n"
    ))
    .unwrap();
    assert!(
        g.targets
            .iter()
            .all(|t| t.measured_base_scores.iter().all(Option::is_none))
    );
}

#[test]
fn bad_target_metrics_name_the_fix() {
    let m = error_of(&format!(
        "{GOOD}\n[outcome]\nmetric = \"a\"\nmetrics = [\"a\", \"b\"]\n"
    ));
    assert!(
        m.contains("either `metric`") && m.contains("not both"),
        "{m}"
    );
    let m = error_of(&format!("{GOOD}\n[outcome]\nmetrics = [\"a\", \"a\"]\n"));
    assert!(m.contains("listed twice"), "{m}");
    let m = error_of(&format!("{GOOD}\n[outcome]\nmetrics = \"a\"\n"));
    assert!(
        m.contains("outcome.metrics") && m.contains("list of metric names"),
        "{m}"
    );
    let m = error_of(&format!(
        "{GOOD}\n[outcome]\nmetrics = [\"a/b\", \"a_b\"]\n"
    ));
    assert!(m.contains("share the output folder"), "{m}");
    let several = |scores: &str| {
        format!(
            "{}\n[outcome]\nmetrics = [\"math500\", \"aime24\"]\n",
            replace(
                "mean_response_tokens = 800",
                &format!("mean_response_tokens = 800\nbase_score = {scores}"),
            )
        )
    };
    let m = error_of(&several("0.5"));
    assert!(
        m.contains("table keyed by metric") && m.contains("math500 = 0.6"),
        "{m}"
    );
    let m = error_of(&several("{ math50 = 0.5 }"));
    assert!(
        m.contains("not in [outcome] metrics") && m.contains("math500"),
        "{m}"
    );
    let m = error_of(&several("{ aime24 = 3.3 }"));
    assert!(
        m.contains("task.base_score.aime24") && m.contains("write 0.033"),
        "{m}"
    );
}

#[test]
fn an_engine_axis_sweeps_engines_and_keeps_single_engine_ids() {
    let single = parse_text(GOOD).unwrap();
    let text = replace(
        "[axes]",
        "[axes]\nengine = [\"vllm-cudagraph\", \"vllm-eager\"]",
    );
    let both = parse_text(&text).unwrap();
    let n = single.cell_count().unwrap();
    assert_eq!(both.cell_count().unwrap(), 2 * n);
    assert_eq!(both.engine_hardware.len(), 2);
    // The engine is the slowest axis: the first half of the ids are the single-engine grid's
    // cells on the first engine, the same runs with the same ids.
    for id in [0, n / 2, n - 1] {
        let (a, b) = (single.cell(id), both.cell(id));
        assert_eq!(a.map(|c| c.indices), b.map(|c| c.indices), "{id}");
        if let Some(c) = both.cell(id + n) {
            assert_eq!(c.engine.id, "vllm-eager");
            assert_eq!(c.run_config(&both).hardware.engine.id, "vllm-eager");
        }
    }
    // An eager engine pays per-layer launches on every decode step: the same run costs more.
    let id = (0..n)
        .find(|&id| crate::evaluate::evaluate_cell(&both, id).is_some_and(|e| e.ledger.feasible()))
        .unwrap();
    let graphs = crate::evaluate::evaluate_cell(&both, id).unwrap();
    let eager = crate::evaluate::evaluate_cell(&both, id + n).unwrap();
    assert!(eager.ledger.total_usd() > graphs.ledger.total_usd());
    let m = error_of(&replace("[axes]", "[axes]\nengine = [\"vllm-eagr\"]"));
    assert!(
        m.contains("axes.engine") && m.contains("did you mean `vllm-eager`"),
        "{m}"
    );
}

#[test]
fn a_turns_axis_sweeps_episode_turns_and_one_turn_is_the_single_turn_grid() {
    let single = parse_text(GOOD).unwrap();
    assert_eq!(single.axes.turns, vec![1.0]);
    // A one-value axis at 1 turn is today's grid: same ids, same ledgers.
    let one = parse_text(&replace("[axes]", "[axes]\nturns = [1]")).unwrap();
    let n = single.cell_count().unwrap();
    assert_eq!(one.cell_count().unwrap(), n);
    for id in [0, n / 3, n - 1] {
        let (a, b) = (
            crate::evaluate::evaluate_cell(&single, id),
            crate::evaluate::evaluate_cell(&one, id),
        );
        assert_eq!(
            a.map(|e| e.ledger.total_usd()),
            b.map(|e| e.ledger.total_usd())
        );
    }
    // Turns 1, 2, 4: each cell's run settings carry its turns; at a fixed iteration count an
    // episode with more turns costs more (more tokens generated and prefilled per rollout).
    let text = replace("[axes]", "[axes]\nturns = [1, 2, 4]").replace(
        "budget = [\"1e17 flops\", \"1e18 flops\"]",
        "iterations = [20]",
    );
    let three = parse_text(&text).unwrap();
    assert_eq!(three.agent_runs.len(), 3);
    let mut costs = Vec::new();
    for t in 0..3u64 {
        let i = three.decode(0).with(Axis::Turns, t as usize);
        let id = three.encode(&i);
        let cell = three.cell(id).unwrap();
        assert_eq!(cell.turns, [1.0, 2.0, 4.0][t as usize]);
        assert_eq!(cell.run_config(&three).run.agent.turns, cell.turns);
        costs.push(
            crate::evaluate::evaluate_cell(&three, id)
                .unwrap()
                .ledger
                .total_usd(),
        );
    }
    assert!(costs[0] < costs[1] && costs[1] < costs[2], "{costs:?}");
    // Bad values and the double definition are named.
    let m = error_of(&replace("[axes]", "[axes]\nturns = [0.5]"));
    assert!(m.contains("axes.turns") && m.contains("between 1"), "{m}");
    let m = error_of(&replace("[axes]", "[axes]\nturns = [2, 2]"));
    assert!(m.contains("listed twice"), "{m}");
    let m = error_of(&replace(
        "[axes]",
        "[agent]\nturns = 2\n\n[axes]\nturns = [1, 2]",
    ));
    assert!(m.contains("axes.turns") && m.contains("[agent]"), "{m}");
}

#[test]
fn a_tool_latency_axis_prices_waiting_and_each_combination_is_checked() {
    let text = replace(
        "[axes]",
        "[agent]\nturns = 3\nwait = \"sync\"\nsandbox_usd_per_hour = 1.0\n\n[axes]\ntool_seconds = [0.5, 5, 30]",
    )
    .replace(
        "budget = [\"1e17 flops\", \"1e18 flops\"]",
        "iterations = [20]",
    );
    let g = parse_text(&text).unwrap();
    assert_eq!(g.axes.tool_seconds, vec![0.5, 5.0, 30.0]);
    assert_eq!(g.agent_runs.len(), 3);
    let base = g.decode(0);
    let mut waits = Vec::new();
    for k in 0..3 {
        let i = base.with(Axis::ToolSeconds, k);
        let cell = g.cell(g.encode(&i)).unwrap();
        let config = cell.run_config(&g);
        assert_eq!(config.run.agent.tool_seconds, cell.tool_seconds);
        assert_eq!(config.run.agent.turns, 3.0);
        let e = crate::evaluate::evaluate_cell(&g, cell.id).unwrap();
        waits.push(e.ledger.environment_usd_per_step + e.ledger.total_usd());
    }
    // Sync rollouts wait 2 calls x t per step: more latency, more idle GPU and sandbox money.
    assert!(waits[0] < waits[1] && waits[1] < waits[2], "{waits:?}");
    // A p99 below one of the swept means is refused, naming the combination.
    let m = error_of(&text.replace("turns = 3\n", "turns = 3\ntool_seconds_p99 = 6\n"));
    assert!(
        m.contains("tool_seconds = 30") && m.contains("99th percentile"),
        "{m}"
    );
    let m = error_of(&replace("[axes]", "[axes]\ntool_seconds = [-1]"));
    assert!(
        m.contains("axes.tool_seconds") && m.contains("between 0"),
        "{m}"
    );
    let m = error_of(&replace(
        "[axes]",
        "[agent]\ntool_seconds = 2\n\n[axes]\ntool_seconds = [1, 2]",
    ));
    assert!(m.contains("[agent]"), "{m}");
}

#[test]
fn a_prompt_cap_is_read_and_must_hold_the_mean_prompt() {
    // `[task] max_prompt_tokens` (veRL's data.max_prompt_length) is kept for fixed-width
    // padding; a cap below the mean prompt is a contradiction, named with the line.
    let g = parse_text(&replace(
        "prompt_tokens = 200",
        "prompt_tokens = 200\nmax_prompt_tokens = 1024",
    ))
    .unwrap();
    assert_eq!(g.task.max_prompt_tokens, Some(1024.0));
    assert_eq!(parse_text(GOOD).unwrap().task.max_prompt_tokens, None);
    let m = error_of(&replace(
        "prompt_tokens = 200",
        "prompt_tokens = 200\nmax_prompt_tokens = 100",
    ));
    assert!(
        m.contains("task.max_prompt_tokens") && m.contains("below the mean prompt"),
        "{m}"
    );
}

#[test]
fn walking_cells_in_order_matches_decoding_each_id() {
    // Constraints prune some cells; the walk crosses every digit's wrap-around.
    let g = parse_text(&format!(
        "{GOOD}\n[constraints]\nmax_rollouts_per_step = 1024\n"
    ))
    .unwrap();
    let n = g.cell_count().unwrap();
    for range in [0..n, 7..n - 3, 5..5, n - 1..n] {
        let walked: Vec<_> = g
            .cells_in(range.clone())
            .map(|(id, c)| (id, c.map(|c| c.indices)))
            .collect();
        let decoded: Vec<_> = range
            .clone()
            .map(|id| (id, g.cell(id).map(|c| c.indices)))
            .collect();
        assert_eq!(walked, decoded, "{range:?}");
        let mut visited = Vec::new();
        g.for_each_cell_in(range.clone(), |id, c| {
            visited.push((id, c.map(|c| c.indices)))
        });
        assert_eq!(visited, decoded, "{range:?}, visited in place");
    }
    assert!(
        g.cells_in(0..n).any(|(_, c)| c.is_none()),
        "some cells are pruned"
    );
}

#[test]
fn agent_settings_are_checked_per_swept_value() {
    // turns_cv needs more than one turn: with a turns axis it is checked against each value.
    let ok = replace(
        "[axes]",
        "[agent]\nturns_cv = 0.3\n\n[axes]\nturns = [2, 4]",
    );
    let g = parse_text(&ok).unwrap();
    assert!(
        g.agent_runs
            .iter()
            .all(|r| r.agent.turns_cv == 0.3 && r.agent.turns >= 2.0)
    );
    let m = error_of(&replace(
        "[axes]",
        "[agent]\nturns_cv = 0.3\n\n[axes]\nturns = [1, 2]",
    ));
    assert!(
        m.contains("agent.turns_cv")
            && m.contains("with turns = 1, tool_seconds = 0 and judge = none"),
        "{m}"
    );
    // Without axes, the message is the setting's own.
    let m = error_of(&replace("[axes]", "[agent]\nturns_cv = 0.3\n\n[axes]"));
    assert!(
        m.contains("agent.turns_cv") && !m.contains("with turns"),
        "{m}"
    );
}

#[test]
fn a_judge_axis_prices_each_api_judge_and_none() {
    let text = replace(
        "[axes]",
        "[agent]\njudge_output_tokens = 100\n\n[axes]\njudge = [\"none\", \"gpt-4o-mini\", \"gpt-4o\"]",
    )
    .replace(
        "budget = [\"1e17 flops\", \"1e18 flops\"]",
        "iterations = [20]",
    );
    let g = parse_text(&text).unwrap();
    let ids: Vec<&str> = g.axes.judge.iter().map(|j| j.id.as_str()).collect();
    assert_eq!(ids, ["none", "gpt-4o-mini", "gpt-4o"]);
    // [agent]'s output tokens apply to every judge of the axis; prices come from the catalog.
    let mini = g.axes.judge[1].api.unwrap();
    assert_eq!(mini.output_tokens, 100.0);
    let listed = Catalog::embedded().api("gpt-4o-mini").unwrap().clone();
    assert_eq!(
        mini.usd_per_million_input_tokens,
        listed.usd_per_million_input_tokens
    );
    let base = g.decode(0);
    let api_usd: Vec<f64> = (0..3)
        .map(|k| {
            let id = g.encode(&base.with(Axis::Judge, k));
            let cell = g.cell(id).unwrap();
            assert_eq!(cell.judge, ids[k]);
            assert_eq!(cell.run_config(&g).run.agent.api_judge, g.axes.judge[k].api);
            crate::evaluate::evaluate_cell(&g, id)
                .unwrap()
                .ledger
                .api_usd_per_step
        })
        .collect();
    // No judge costs nothing; the larger model's list price costs more than the small one's.
    assert_eq!(api_usd[0], 0.0);
    assert!(0.0 < api_usd[1] && api_usd[1] < api_usd[2], "{api_usd:?}");
    // Unknown ids and a judge priced in [agent] as well are refused by name.
    let m = error_of(&replace("[axes]", "[axes]\njudge = [\"gpt-9\"]"));
    assert!(m.contains("axes.judge") && m.contains("unknown API"), "{m}");
    let m = error_of(&replace(
        "[axes]",
        "[agent]\njudge_api = \"gpt-4o\"\n\n[axes]\njudge = [\"none\", \"gpt-4o-mini\"]",
    ));
    assert!(m.contains("axes.judge") && m.contains("[agent]"), "{m}");
}

#[test]
fn task_numbers_beyond_their_physical_range_are_refused_with_the_bound() {
    for (from, to, field, bound) in [
        (
            "prompt_tokens = 200",
            "prompt_tokens = 200\nresponse_length_cv = 60",
            "task.response_length_cv",
            "above 5",
        ),
        (
            "concentration = 3.0",
            "concentration = 3e6",
            "task.pass_rate.concentration",
            "above 10000",
        ),
        (
            "prompt_tokens = 200",
            "prompt_tokens = 200\ndataset_prompts = 1e13",
            "task.dataset_prompts",
            "above 10000000000",
        ),
        (
            "mean_response_tokens = 800",
            "uncapped_mean_response_tokens = 1e9",
            "task.uncapped_mean_response_tokens",
            "above 100000000",
        ),
    ] {
        let m = error_of(&replace(from, to));
        assert!(m.contains(field) && m.contains(bound), "{m}");
        assert!(m.contains("check the units"), "{m}");
    }
    // At their bounds they are accepted.
    for (from, to) in [
        (
            "prompt_tokens = 200",
            "prompt_tokens = 200\nresponse_length_cv = 5",
        ),
        ("concentration = 3.0", "concentration = 1e4"),
    ] {
        parse_text(&replace(from, to)).unwrap();
    }
}

#[test]
fn a_ulysses_degree_that_does_not_split_a_models_heads_is_refused() {
    // Qwen2.5-1.5B has 12 heads and Qwen2.5-7B 28: 4 splits both, 8 neither.
    let ok = parse_text(&replace("[axes]", "[run]\nsequence_parallel = 4\n\n[axes]")).unwrap();
    assert_eq!(ok.run.sequence_parallel, 4);
    let m = error_of(&replace("[axes]", "[run]\nsequence_parallel = 8\n\n[axes]"));
    assert!(
        m.contains("run.sequence_parallel") && m.contains("attention heads"),
        "{m}"
    );
}

#[test]
fn transformers_generate_on_the_engine_axis_takes_its_own_settings() {
    // An engine inside the trainer (transformers' generate()) does not take the framework's
    // vLLM-server settings (veRL: memory share 0.5, tensor parallel 2, 256 sequences); the
    // grid's own engine keeps them.
    let text = replace(
        "[axes]",
        "[axes]\nengine = [\"vllm-cudagraph\", \"transformers-generate\"]",
    );
    let grid = parse_text(&text).unwrap();
    let (vllm, generate) = (&grid.engine_hardware[0], &grid.engine_hardware[1]);
    assert_eq!(generate.engine.id, "transformers-generate");
    assert_eq!(generate.rollout_gpu_memory_utilization, 0.9);
    assert_eq!(generate.rollout_tensor_parallel, 1);
    assert_eq!(generate.max_num_seqs, 1024);
    assert_eq!(vllm.rollout_gpu_memory_utilization, 0.5);
    assert_eq!(vllm.rollout_tensor_parallel, 2);
    assert_eq!(vllm.max_num_seqs, 256);
}

#[test]
fn the_environment_wait_is_read_under_either_name() {
    // `wait` in a grid, `--environment-wait` as a flag (`environment_wait` in Python): a grid
    // takes both spellings.
    for key in ["wait", "environment_wait"] {
        let text = format!(
            "{}\n[agent]\nturns = 2\n{key} = \"async\"\n",
            include_str!("../../grids/race-pilot.toml")
        );
        let grid = parse_text(&text).unwrap_or_else(|e| panic!("{key}: {e}"));
        assert_eq!(
            grid.run.agent.wait,
            crate::config::EnvironmentWait::Async,
            "{key}"
        );
    }
}

#[test]
fn the_grid_records_the_line_of_each_setting_it_gives() {
    // Issue 52: which source set each value. race-pilot gives `gpus` on its own line and leaves
    // `checkpoint_seconds` to the default; a swept agent setting is found in `[axes]`.
    let text = include_str!("../../grids/race-pilot.toml");
    let grid = parse_text(text).unwrap();
    let line_of = |name: &str| {
        grid.setting_lines
            .iter()
            .find(|(n, _)| *n == name)
            .unwrap()
            .1
    };
    let gpus_line = text.lines().position(|l| l.starts_with("gpus = ")).unwrap() + 1;
    assert_eq!(line_of("gpus"), Some(gpus_line));
    assert_eq!(line_of("checkpoint_seconds"), None);
    let swept = text.replace("[axes]\n", "[axes]\nturns = [2, 3]\n");
    let grid = parse_text(&swept).unwrap();
    let turns = grid
        .setting_lines
        .iter()
        .find(|(n, _)| *n == "turns")
        .unwrap();
    assert!(turns.1.is_some());
}
