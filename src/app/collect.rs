//! `rlfrontier collect FILES... --metric NAME --out results.csv`: the pilots' held-out metric
//! from veRL's file-logger JSON lines, wandb CSV exports or TRL's trainer_state.json, as the
//! tidy CSV `fit` reads.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::error::{Error, Result};
use rlfrontier::format::Table;
use rlfrontier::pilot::collect::{collect, results_csv};
use rlfrontier::pilot::{plan_csv_path, read_plan};

use super::emit;

/// Arguments of `collect`.
#[derive(Debug, Args)]
pub struct CollectArgs {
    /// Metric files, one per run: `metrics/p001.jsonl` (veRL file logger), `p001.csv` (wandb
    /// export) or `p001/trainer_state.json` (TRL).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// The held-out metric to collect (without it, the files' metrics are listed).
    #[arg(long)]
    pub metric: Option<String>,
    /// Where to write the tidy CSV (run_id, step, metric, value).
    #[arg(long)]
    pub out: PathBuf,
    /// The plan the runs came from (its folder or its plan.csv): every run must be one of its
    /// runs, and TRL's optimizer steps become iterations by its update epochs when a run's
    /// folder has no run record (required then for TRL logs).
    #[arg(long, value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// The log's format (`verl-console`, `verl-jsonl`, `jsonl`, `wandb-csv`, `trl-state`)
    /// [default: detected from the file].
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<rlfrontier::logs::LogFormat>,
    /// Replace the output file if it exists (never when it is one of the inputs).
    #[arg(long)]
    pub force: bool,
}

/// Collects and writes.
pub fn run(args: &CollectArgs, out: &mut dyn Write) -> Result<()> {
    let paths: Vec<&std::path::Path> = args.files.iter().map(PathBuf::as_path).collect();
    let plan_csv = args.plan.as_deref().map(plan_csv_path);
    let mut inputs = paths.clone();
    inputs.extend(plan_csv.as_deref());
    let plan_json = plan_csv.as_ref().map(|p| p.with_file_name("plan.json"));
    inputs.extend(plan_json.as_deref());
    rlfrontier::report::check_file_out("out", &args.out, &inputs, args.force)?;
    let plan = args
        .plan
        .as_deref()
        .map(|p| read_plan(&plan_csv_path(p)))
        .transpose()?;
    let c = collect(&paths, args.metric.as_deref(), args.format, plan.as_ref())?;
    if c.rows.is_empty() {
        return Err(Error::in_flag("--metric", "no file has a value of it"));
    }
    rlfrontier::report::write_atomic(&args.out, &results_csv(&c.rows))?;
    let mut table = Table::new(["run", "format", "points", "steps"]);
    for (run, format, n, how) in &c.files {
        let how = if how.is_empty() { "iterations" } else { how };
        table.row([
            run.clone(),
            format.to_string(),
            n.to_string(),
            how.to_string(),
        ]);
    }
    let mut text = table.render();
    text.push_str(&format!(
        "wrote {} rows of `{}` to {} (next: rlfrontier fit {} --plan PLAN/plan.csv --out FIT)\n",
        c.rows.len(),
        args.metric.as_deref().unwrap_or_default(),
        args.out.display(),
        args.out.display()
    ));
    emit(out, &text)
}
