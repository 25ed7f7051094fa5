//! `rlfrontier plan GRID --pilot-budget B --max-pilots N --out DIR`: choose IsoFLOP pilot runs
//! and write launch scripts (veRL or TRL), a Slurm array and the plan `fit` reads back.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::config::Budget;
use rlfrontier::engine::plan::{PilotPlanSettings, plan_pilots};
use rlfrontier::error::Result;
use rlfrontier::pilot::decide::{DecideRequest, DesignScore, budget_index, compare_designs};
use rlfrontier::pilot::launch::Framework;
use rlfrontier::pilot::plan::PlanRequest;
use rlfrontier::spec;

use super::progress::TaskBar;
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
    /// Choose the pilots that most reduce the chance of recommending the wrong regime at this
    /// budget of the grid (e.g. "1e18 flops"), for at most the space-filling plan's dollars.
    #[arg(long, value_name = "BUDGET")]
    pub decide: Option<Budget>,
    /// With --decide: the noise sd of one checkpoint's score (a 500-problem benchmark near 50%:
    /// 0.022).
    #[arg(long, default_value_t = rlfrontier::pilot::decide::DEFAULT_NOISE_SD, requires = "decide")]
    pub noise_sd: f64,
    /// With --decide: simulate this many truths drawn from the prior and report how often each
    /// design's calibrated recommendation is the truly best cell of the target budget.
    #[arg(long, value_name = "SEEDS", requires = "decide")]
    pub compare_designs: Option<usize>,
    /// Print JSON: plan.json's fields, every run as plan.csv has it, and the files written.
    #[arg(long)]
    pub json: bool,
    /// No progress spinner.
    #[arg(short, long)]
    pub quiet: bool,
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
    let decide = match args.decide {
        Some(budget) => Some(DecideRequest {
            target_budget_index: budget_index(&grid, budget)?,
            noise_sd: args.noise_sd,
        }),
        None => None,
    };
    if let Some(seeds) = args.compare_designs
        && !(1..=1000).contains(&seeds)
    {
        return Err(rlfrontier::error::Error::in_setting(
            "compare_designs",
            format!("{seeds} seeds: give 1 to 1000"),
        ));
    }
    let spinner = TaskBar::spinner(
        if decide.is_some() {
            "choosing the pilots that decide"
        } else {
            "planning pilots"
        },
        args.quiet,
    );
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
            decide,
        },
    )?;
    let comparison = match (decide, args.compare_designs) {
        (Some(d), Some(seeds)) => Some(compare_designs(
            &grid,
            &PlanRequest {
                budget: args.pilot_budget,
                max_pilots: args.max_pilots,
                max_total_usd: args.pilot_usd,
            },
            &d,
            seeds,
        )?),
        _ => None,
    };
    spinner.finish();
    if args.json {
        let value = serde_json::json!({
            "decide": plan.decided.as_ref().map(|d| serde_json::json!({
                "contenders": d.contenders,
                "free": d.free,
                "wrong_before": d.wrong_before,
                "wrong_after": d.wrong_after,
                "space_filling_wrong_after": d.space_filling_wrong_after,
                "space_filling_usd": d.space_filling_usd,
            })),
            "compare_designs": comparison.map(|(space, decided)| serde_json::json!({
                "space_filling": score_json(&space),
                "decide": score_json(&decided),
            })),
            "plan": plan.plan.info,
            "runs": plan_rows(&plan.plan),
            "files": plan.written.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        });
        return emit(out, &super::json_text(&value));
    }
    let mut text = plan.to_text();
    if let Some((space, decided)) = comparison {
        text.push_str(&comparison_text(&space, &decided));
    }
    emit(out, &text)
}

fn score_json(s: &DesignScore) -> serde_json::Value {
    serde_json::json!({
        "hits": s.hits,
        "seeds": s.seeds,
        "mean_regret": s.mean_regret,
        "usd": s.usd,
    })
}

/// The simulated loop's table: each design's hits, regret and pilot dollars.
fn comparison_text(space: &DesignScore, decided: &DesignScore) -> String {
    let mut table = rlfrontier::format::Table::new([
        "design",
        "truly best recommended",
        "mean regret (points)",
        "pilot USD",
    ]);
    for (name, s) in [("space-filling", space), ("decide", decided)] {
        table.row([
            name.to_string(),
            format!("{} of {}", s.hits, s.seeds),
            format!("{:.2}", 100.0 * s.mean_regret),
            rlfrontier::format::money(s.usd),
        ]);
    }
    format!(
        "simulated loop: truths drawn from the prior, pilots simulated under each, calibrated by fit's MAP fit, the recommendation at the target budget against the truth's best cell:\n{}",
        table.render()
    )
}
