//! `rlfrontier plan GRID --pilot-budget B --max-pilots N --out DIR`: choose IsoFLOP pilot runs
//! and write launch scripts (veRL or TRL), a Slurm array and the plan `fit` reads back.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::config::Budget;
use rlfrontier::engine::plan::{PilotPlanSettings, plan_pilots};
use rlfrontier::error::Result;
use rlfrontier::pilot::launch::Framework;
use rlfrontier::spec;

use super::{CatalogFlag, emit};

/// Arguments of `plan`.
#[derive(Debug, Args)]
pub struct PlanArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// The budget every pilot spends, as "1e17 flops", "20 gpu-h" or "100 usd".
    #[arg(long)]
    pub pilot_budget: Budget,
    /// Most pilot runs.
    #[arg(long)]
    pub max_pilots: usize,
    /// Most dollars for all pilots together.
    #[arg(long)]
    pub pilot_usd: Option<f64>,
    /// `verl` or `trl`.
    #[arg(long, default_value = "verl")]
    pub framework: Framework,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// Replace another grid's plan in the output folder.
    #[arg(long)]
    pub force: bool,
    /// Print JSON: plan.json's fields, every run as plan.csv has it, and the files written.
    #[arg(long)]
    pub json: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// The runs as plan.csv writes them (same column names; numbers as numbers).
fn plan_rows(plan: &rlfrontier::pilot::Plan) -> Vec<serde_json::Value> {
    let bytes = rlfrontier::pilot::plan_csv(plan);
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let headers = reader.headers().cloned().unwrap_or_default();
    reader
        .records()
        .filter_map(|r| r.ok())
        .map(|record| {
            headers
                .iter()
                .zip(record.iter())
                .map(|(h, v)| {
                    let value = match v.parse::<f64>() {
                        Ok(x) if !h.ends_with("_id") && !h.starts_with("model") => {
                            serde_json::json!(x)
                        }
                        _ => serde_json::json!(v),
                    };
                    (h.to_string(), value)
                })
                .collect::<serde_json::Map<_, _>>()
                .into()
        })
        .collect()
}

/// Plans, writes and prints the pilots.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let grid = spec::load(&args.grid, &catalog)?;
    let plan = plan_pilots(
        &grid,
        &PilotPlanSettings {
            grid_file: args.grid.clone(),
            budget: args.pilot_budget,
            max_pilots: args.max_pilots,
            max_total_usd: args.pilot_usd,
            framework: args.framework,
            out: args.out.clone(),
            force: args.force,
            catalog_sha256: catalog.sha256(),
        },
    )?;
    if args.json {
        let value = serde_json::json!({
            "plan": plan.plan.info,
            "runs": plan_rows(&plan.plan),
            "files": plan.written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        return emit(out, &super::json_text(&value));
    }
    emit(out, &plan.to_text())
}
