//! `rlfrontier backtest [EVIDENCE.csv] [--csv FILE]`: the outcome prior on published before/after
//! RL outcomes, beside the baselines "no gain" and "base + mean gain of the other models".

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::engine::backtest::{SIMPLERL_RUN, backtest, isocompute_difficulty, read_outcomes};
use rlfrontier::error::Result;
use rlfrontier::format::{Table, number};
use rlfrontier::outcome::OutcomeParams;

use super::{CatalogFlag, emit};

/// Arguments of `backtest`.
#[derive(Debug, Args)]
pub struct BacktestArgs {
    /// The evidence CSV [default: evidence/published_results.csv].
    #[arg(default_value = "evidence/published_results.csv")]
    pub evidence: PathBuf,
    /// Also write one row per outcome (measured, predicted, interval, baselines) to this CSV.
    #[arg(long)]
    pub csv: Option<PathBuf>,
    /// The grid that asks IsoCompute's question (best G against compute, easy and hard problems).
    #[arg(long, default_value = "grids/isocompute.toml")]
    pub isocompute_grid: PathBuf,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Runs the backtest and prints the summary.
pub fn run(args: &BacktestArgs, out: &mut dyn Write) -> Result<()> {
    let outcomes = read_outcomes(&args.evidence)?;
    let (rows, s) = backtest(&outcomes, &OutcomeParams::default());
    if let Some(path) = &args.csv {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record([
            "model",
            "metric",
            "base",
            "measured",
            "predicted",
            "low",
            "high",
            "base_plus_mean_gain",
        ])
        .expect("memory");
        for r in &rows {
            let o = &r.outcome;
            w.write_record([
                o.model.clone(),
                o.metric.clone(),
                number(o.base),
                number(o.after),
                number(r.predicted),
                number(r.low),
                number(r.high),
                number(r.mean_gain_baseline),
            ])
            .expect("memory");
        }
        rlfrontier::report::write_atomic(path, &w.into_inner().expect("memory"))?;
    }
    let (prompts, group, cap, steps) = SIMPLERL_RUN;
    let mut text = format!(
        "backtest of the outcome prior (uncalibrated) on {} published outcomes (SimpleRL-Zoo: base score -> after zero-RL GRPO, {prompts} prompts x {group}, cap {cap}, {steps} steps assumed where unstated)\n",
        s.outcomes
    );
    let mut table = Table::new(["predictor", "RMSE (points)"]);
    table.row(["outcome prior".to_string(), format!("{:.1}", s.rmse_model)]);
    table.row(["no RL gain".to_string(), format!("{:.1}", s.rmse_no_gain)]);
    table.row([
        "base + mean gain of the other models".to_string(),
        format!("{:.1}", s.rmse_mean_gain),
    ]);
    text.push_str(&table.render());
    text.push_str(&format!(
        "prior intervals: {:.0}% of outcomes inside (nominal 90%), mean width {:.1} points; correlation of predicted and measured gains {:.2}\n",
        100.0 * s.coverage,
        s.mean_interval_width,
        s.gain_correlation
    ));
    let grid = rlfrontier::spec::load(&args.isocompute_grid, &args.catalog.load()?)?;
    let o = isocompute_difficulty(&grid);
    text.push_str("orderings (published finding against the prior):\n");
    let mut orderings = Table::new(["finding", "published", "prior", "reproduced"]);
    orderings.row([
        o.finding,
        o.published,
        o.prior,
        if o.reproduced { "yes" } else { "no" }.to_string(),
    ]);
    text.push_str(&orderings.render());
    emit(out, &text)
}
