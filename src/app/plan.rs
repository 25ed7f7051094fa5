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
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
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
        },
    )?;
    emit(out, &plan.to_text())
}
