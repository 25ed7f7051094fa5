//! `rlfrontier init`: a commented grid from a few flags, checked before it is written, and
//! `rlfrontier completions SHELL`: shell completions from the clap definitions.

use std::io::Write;
use std::path::PathBuf;

use clap::{Args, CommandFactory};
use rlfrontier::error::{Error, Result};
use rlfrontier::spec;

use super::{CatalogFlag, emit};

/// Arguments of `init`.
#[derive(Debug, Args)]
pub struct InitArgs {
    /// Where to write the grid (TOML).
    pub out: PathBuf,
    /// The grid's name (its results go to results/NAME/) [default: the file's stem].
    #[arg(long)]
    pub name: Option<String>,
    /// Policy models, comma-separated catalog ids or Hugging Face names.
    #[arg(long, value_delimiter = ',', default_value = "qwen2.5-7b")]
    pub models: Vec<String>,
    /// GPU id (see `rlfrontier catalog gpus`).
    #[arg(long, default_value = "h100-sxm")]
    pub gpu: String,
    /// GPUs in the cluster.
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub gpus: u64,
    /// Budgets in dollars, comma-separated: 20000, $20k, 20k usd, 1.5M.
    #[arg(long, value_delimiter = ',', default_value = "1000,10000,100000", value_parser = rlfrontier::config::parse_usd)]
    pub budget_usd: Vec<f64>,
    /// `base` (zero RL from a pretrained model), `instruct` (instruct, SFT or DPO'd chat model),
    /// `distilled` (reasoning model distilled from long chains of thought) or `tuned` (either).
    #[arg(long, default_value = "tuned")]
    pub start: String,
    /// Replace an existing file.
    #[arg(long)]
    pub force: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// The metric `init`'s grid targets.
const METRIC: &str = "math500_pass1";

/// The `[task] base_score` comment: each model's score on [`METRIC`] published for its checkpoint
/// (which the grid uses unless the line is filled in), or the prior's size guess.
fn base_score_lines(models: &[String]) -> String {
    let mut text = String::new();
    for model in models {
        match rlfrontier::catalog::base_score::published(model, METRIC) {
            Some(b) => text.push_str(&format!(
                "# {model}: base score {} published for {} ({}, {}), used unless you give your own\n",
                b.published.score, b.checkpoint, b.published.source, b.published.setting
            )),
            None => text.push_str(&format!(
                "# {model}: no published score on {METRIC}; the prior guesses one from the model's size\n"
            )),
        }
    }
    let first = models.first().map(String::as_str).unwrap_or("MODEL");
    text.push_str(&format!(
        "# base_score = {{ \"{first}\" = 0.50 }}   # your own measured score before RL, in your prompt format (narrows the intervals)\n"
    ));
    text
}

/// The grid text: every section with a comment saying what it is and what to measure. The task
/// and run values written are the defaults a grid without them (and `cost` without their
/// flags) uses, so the grid `init` writes and `cost` price the same setup alike.
fn grid_text(args: &InitArgs, name: &str) -> String {
    use rlfrontier::format::number;
    let task = rlfrontier::config::Task::default();
    let run = rlfrontier::config::RunSettings::default();
    let list = |items: &[String]| {
        items
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let budgets: Vec<String> = args
        .budget_usd
        .iter()
        .map(|b| format!("{} usd", rlfrontier::format::number(*b)))
        .collect();
    format!(
        r#"# {name}: written by `rlfrontier init`; edit it, then `rlfrontier check {file}`.
#
# Question: under budgets of {budget_text}, which policy, group size, response cap, update epochs
# and prompts per step should GRPO use on {gpus} x {gpu}? State your own question here: the
# report and the shortlist answer it per budget.
#
# Run: rlfrontier sweep {file}

name = "{name}"
description = "GRPO on {gpus} x {gpu}: {model_names}"
seed = 1

[hardware]
gpu = "{gpu}"
gpus = {gpus}
# engine = "vllm-cudagraph"        # or "vllm-eager", "sglang" (rlfrontier catalog engines)

[task]
start = "{start}"                   # "base" (zero RL), "instruct", "distilled" or "tuned" (either)
prompt_tokens = {prompt_tokens}                 # mean prompt length of your training set
uncapped_mean_response_tokens = {response_tokens}  # the cost's biggest input: measure it and give it as logged instead,
                                    # mean_response_tokens = N (veRL response_length/mean at your cap)
response_length_cv = {cv}
pass_rate = {{ mean = {pass_mean}, concentration = {pass_concentration} }}   # the policy's pass@1 on the training prompts
{base_scores}
[axes]
model = [{models}]
finetune = ["full", "lora:64"]
reward = ["rule"]                   # or "orm:MODEL", "prm:MODEL", "judge:MODEL" (rlfrontier catalog rewards)
group_size = [4, 8, 16]
max_response_len = [4096, 8192]
update_epochs = [1, 2]
prompts_per_step = [128, 256]
budget = [{budgets}]

[run]
framework = "verl"                  # or "trl", "openrlhf": whose defaults price the passes and placement
kl_reference = {kl_reference}
prefix_cache = {prefix_cache}
dynamic_sampling = {dynamic_sampling}

[outcome]
metric = "{metric}"
"#,
        metric = METRIC,
        file = args.out.display(),
        budget_text = budgets.join(", "),
        gpus = args.gpus,
        gpu = args.gpu,
        models = list(&args.models),
        model_names = args.models.join(", "),
        base_scores = base_score_lines(&args.models),
        start = args.start,
        budgets = list(&budgets),
        prompt_tokens = number(task.prompt_tokens),
        response_tokens = number(task.mean_response_tokens),
        cv = number(task.response_length_cv),
        pass_mean = number(task.pass_rate_mean),
        pass_concentration = number(task.pass_rate_concentration),
        kl_reference = run.kl_reference,
        prefix_cache = run.prefix_cache,
        dynamic_sampling = run.dynamic_sampling,
    )
}

/// Writes the grid after checking it parses and validates.
pub fn run(args: &InitArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    if args.out.exists() && !args.force {
        return Err(Error::in_file(
            &args.out,
            None,
            "",
            "already exists; choose another path or pass --force",
        ));
    }
    for budget in &args.budget_usd {
        if !(budget.is_finite() && *budget > 0.0) {
            return Err(Error::in_flag(
                "--budget-usd",
                format!("{budget} must be a positive number of dollars"),
            ));
        }
    }
    let name = args.name.clone().unwrap_or_else(|| {
        args.out
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "grid".to_string())
    });
    let text = grid_text(args, &name);
    // The grid must load as written: a bad model id or GPU fails here, not at the first sweep.
    let grid = spec::parse(&text, &args.out, &catalog).map_err(|e| match e {
        Error::Input(input) => Error::in_flag(
            match input.field.as_str() {
                f if f.contains("model") => "--models",
                f if f.contains("gpu") => "--gpu",
                f if f.contains("start") => "--start",
                _ => "--name (the generated grid)",
            },
            input.message,
        ),
        other => other,
    })?;
    if let Some(parent) = args.out.parent()
        && !parent.as_os_str().is_empty()
    {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    rlfrontier::report::write_atomic(&args.out, text.as_bytes())?;
    emit(
        out,
        &format!(
            "wrote {} ({} cells); next: rlfrontier check {0}, then rlfrontier sweep {0}\n",
            args.out.display(),
            rlfrontier::format::thousands(grid.valid_cell_count() as f64)
        ),
    )
}

/// Arguments of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

/// Prints the completion script (e.g. `rlfrontier completions bash > ~/.local/share/bash-completion/completions/rlfrontier`).
pub fn run_completions(args: &CompletionsArgs, out: &mut dyn Write) -> Result<()> {
    let mut command = super::Cli::command();
    let mut bytes = Vec::new();
    clap_complete::generate(args.shell, &mut command, "rlfrontier", &mut bytes);
    out.write_all(&bytes)
        .map_err(|e| Error::io(std::path::Path::new("<stdout>"), e))
}
