//! `rlfrontier collect FILES... --metric NAME --out results.csv`: the pilots' held-out metric
//! from veRL's file-logger JSON lines, wandb CSV exports or TRL's trainer_state.json, as the
//! tidy CSV `fit` reads.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::error::{Error, Result};
use rlfrontier::format::Table;
use rlfrontier::pilot::collect::{collect, results_csv};

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
    /// The log's format (`verl-console`, `verl-jsonl`, `jsonl`, `wandb-csv`, `trl-state`)
    /// [default: detected from the file].
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<rlfrontier::logs::LogFormat>,
}

/// Collects and writes.
pub fn run(args: &CollectArgs, out: &mut dyn Write) -> Result<()> {
    let paths: Vec<&std::path::Path> = args.files.iter().map(PathBuf::as_path).collect();
    let c = collect(&paths, args.metric.as_deref(), args.format)?;
    if c.rows.is_empty() {
        return Err(Error::in_flag("--metric", "no file has a value of it"));
    }
    rlfrontier::report::write_atomic(&args.out, &results_csv(&c.rows))?;
    let mut table = Table::new(["run", "format", "points"]);
    for (run, format, n) in &c.files {
        table.row([run.clone(), format.to_string(), n.to_string()]);
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
