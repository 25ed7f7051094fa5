//! `rlfrontier sweep GRID`: evaluate every cell and write the frontiers, shortlist, plots,
//! report, `cells.csv` and `manifest.json`.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;

use clap::Args;
use rlfrontier::analysis::decision::{Compared, Decision};
use rlfrontier::analysis::draws::Interval;
use rlfrontier::analysis::shortlist::Flag;
use rlfrontier::engine::{
    CellsMode, CellsSink, Progress, SweepOptions, SweepSummary, TableFormat, default_out_dir,
    run_sweep_into,
};
use rlfrontier::error::Result;
use rlfrontier::format::{percent, thousands};
use rlfrontier::report::recommendation::{one_line, sentences};
use rlfrontier::report::tables::{budget_label, regime_label};
use rlfrontier::spec;

use super::{CatalogFlag, emit};

/// Arguments of `sweep`.
#[derive(Debug, Args)]
pub struct SweepArgs {
    /// The grid file (TOML).
    pub grid: PathBuf,
    /// Output folder [default: results/GRID_NAME].
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Worker threads [default: one per core], at most 256. Outputs do not depend on it.
    #[arg(long, value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// Evaluate only shard I of N (0-based I), a contiguous slice of cell ids.
    #[arg(long, value_name = "I/N", value_parser = parse_shard)]
    pub shard: Option<(u64, u64)>,
    /// Refuse grids with more cells than this.
    #[arg(long, default_value_t = 20_000_000)]
    pub max_cells: u64,
    /// Replace results of a different grid in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress bar.
    #[arg(long, short)]
    pub quiet: bool,
    /// Print the summary as JSON (counts, shares, the answer per budget, files written).
    #[arg(long)]
    pub json: bool,
    /// Print each budget's whole recommendation (the regimes it cannot tell apart, a second to
    /// validate, the cheaper one within noise, why, the grid edges), not one line per budget.
    #[arg(long)]
    pub explain: bool,
    /// `csv`, or `parquet`: cells.parquet instead of cells.csv (typed columns, compressed) and a
    /// .parquet copy of every CSV table.
    #[arg(long, default_value = "csv", value_parser = parse_format)]
    pub format: TableFormat,
    /// Also write plots/*.png beside the SVGs (rasterised with a bundled font, so the text
    /// renders the same on any machine).
    #[arg(long)]
    pub png: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
    /// Predict with a calibration written by `rlfrontier fit` (calibration.json).
    #[arg(long)]
    pub calibration: Option<PathBuf>,
    /// Rows of cells.csv: all, feasible, frontier or none [default: all up to 2,000,000 cells].
    #[arg(long)]
    pub cells: Option<CellsMode>,
}

/// Parses `--format`.
fn parse_format(text: &str) -> std::result::Result<TableFormat, String> {
    match text {
        "csv" => Ok(TableFormat::Csv),
        "parquet" => Ok(TableFormat::Parquet),
        other => Err(format!(
            "`{other}` is not a table format; write csv or parquet"
        )),
    }
}

/// Parses `I/N` (0-based I below N).
fn parse_shard(text: &str) -> std::result::Result<(u64, u64), String> {
    let bad = || format!("`{text}` is not a shard; write I/N with 0 <= I < N, as in 0/4");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let i: u64 = i.trim().parse().map_err(|_| bad())?;
    let n: u64 = n.trim().parse().map_err(|_| bad())?;
    if n == 0 || i >= n {
        return Err(bad());
    }
    Ok((i, n))
}

/// The sweep's progress bar: on stderr, only when it is a terminal and `--quiet` is not given.
struct Bar(indicatif::ProgressBar);

impl Bar {
    fn new(quiet: bool) -> Self {
        if quiet || !std::io::stderr().is_terminal() {
            return Bar(indicatif::ProgressBar::hidden());
        }
        let bar = indicatif::ProgressBar::new(0);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} sweep {bar:40} {human_pos}/{human_len} cells  {rate}  {remaining}  {msg}",
            )
            .expect("valid template")
            // Cells per second with a unit and no decimals; the time left from the mean rate so
            // far (indicatif's own estimate weights the first seconds and stalls on fast runs).
            .with_key("rate", |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{} cells/s", thousands(state.per_sec().round()));
            })
            .with_key(
                "remaining",
                |state: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                    let done = state.pos() as f64;
                    let total = state.len().unwrap_or(0) as f64;
                    let elapsed = state.elapsed().as_secs_f64();
                    if done > 0.0 && total > done && elapsed > 0.0 {
                        let left = (total - done) * elapsed / done;
                        let _ = write!(w, "{left:.0} s left");
                    }
                },
            ),
        );
        Bar(bar)
    }
}

impl Progress for Bar {
    fn start(&self, total_cells: u64) {
        self.0.set_length(total_cells);
    }
    fn phase(&self, name: &'static str) {
        self.0.set_message(name);
    }
    fn advance(&self, cells: u64) {
        self.0.inc(cells);
    }
    fn finish(&self) {
        self.0.finish_and_clear();
    }
    fn abandon(&self) {
        // Interrupted: clear the line so the shell prompt does not follow a stale bar.
        self.0.finish_and_clear();
    }
}

/// The summary printed after a sweep.
fn summary_text(grid: &spec::Grid, s: &SweepSummary, explain: bool) -> String {
    let mut text = format!("predictions: {}\n", grid.outcome_state.label());
    text.push_str(&format!(
        "swept {} cells of grid `{}` ({} in the grid, {} pruned by constraints) in {:.2} s on {} threads ({} cells/s)\n",
        thousands(s.cells_evaluated as f64),
        grid.name,
        thousands(s.cells_total as f64),
        thousands(s.cells_pruned as f64),
        s.elapsed_seconds,
        s.threads,
        thousands(s.cells_in_slice as f64 / s.elapsed_seconds.max(1e-9))
    ));
    text.push_str(&format!(
        "feasible: {} of {}",
        thousands(s.cells_feasible as f64),
        thousands(s.cells_evaluated as f64)
    ));
    let reasons: Vec<String> = s
        .infeasible_by_code
        .iter()
        .filter(|(_, n)| *n > 0)
        .map(|(c, n)| format!("{c}: {}", thousands(*n as f64)))
        .collect();
    if !reasons.is_empty() {
        text.push_str(&format!(" (infeasible: {})", reasons.join(", ")));
    }
    text.push('\n');
    if s.cells_feasible > 0 {
        text.push_str(&format!(
            "generation (search) takes {} of the dollars but {} of the FLOPs on average over feasible cells\n",
            percent(s.mean_usd_share_search),
            percent(s.mean_flops_share_search)
        ));
    } else if s.cells_evaluated > 0 {
        text.push_str(
            "no cell is feasible: see infeasible_reason in cells.csv for what to change\n",
        );
    }
    if explain {
        text.push_str(&recommendation_text(grid, &s.decisions));
    } else {
        text.push_str(&one_line_text(grid, &s.decisions));
    }
    for f in &s.files {
        text.push_str(&format!("wrote {}\n", f.display()));
    }
    text
}

/// Each decision's budget as the grid writes it, and the widest label's width (the column the
/// budgets are right-aligned in).
fn budget_labels(grid: &spec::Grid, decisions: &[Decision]) -> (Vec<String>, usize) {
    let labels: Vec<String> = decisions
        .iter()
        .map(|d| budget_label(grid, d.budget_index))
        .collect();
    let width = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    (labels, width)
}

/// One line per budget (regime, steps, dollars, score, gain, P(best)), then where the rest is:
/// the command that prices one alone, the grid edges to extend, `--explain`.
fn one_line_text(grid: &spec::Grid, decisions: &[Decision]) -> String {
    if decisions.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "per budget, the recommendation (P(best) from {} joint draws; gains are points over the base score, with 90% intervals):\n",
        thousands(rlfrontier::analysis::draws::DRAWS as f64)
    );
    let (labels, width) = budget_labels(grid, decisions);
    for (d, label) in decisions.iter().zip(&labels) {
        text.push_str(&format!(
            "  {label:>width$}  cell {}: {}\n",
            d.recommended().point.id,
            one_line(grid, d)
        ));
    }
    if let Some(trend) = rlfrontier::report::recommendation::budget_trend_phrase(grid, decisions) {
        text.push_str(&trend);
        text.push('\n');
    }
    let mut edges: Vec<String> = Vec::new();
    for d in decisions {
        for f in d.edges() {
            let name = match f {
                Flag::LowerEdge { axis, value } => format!("{axis} below {value}"),
                Flag::UpperEdge { axis, value } => format!("{axis} above {value}"),
                _ => continue,
            };
            if !edges.contains(&name) {
                edges.push(name);
            }
        }
    }
    if !edges.is_empty() {
        text.push_str(&format!(
            "at the grid's edge: extend {} and sweep again before trusting {}\n",
            edges.join(", "),
            if decisions.len() == 1 { "it" } else { "them" }
        ));
    }
    text.push_str(&format!(
        "price one alone, phase by phase: rlfrontier cost --grid {} --cell ID; the regimes it cannot tell apart, a second to validate, the cheaper one within noise and why: --explain, or shortlist.md\n",
        grid.path.display()
    ));
    text
}

/// Per budget: the recommendation, its paired comparisons, why, and the edges to extend.
fn recommendation_text(grid: &spec::Grid, decisions: &[Decision]) -> String {
    if decisions.is_empty() {
        return String::new();
    }
    let mut text = format!(
        "per budget, the recommendation (P(best) from {} joint draws; differences are paired, in points, so what two regimes share cancels):\n",
        thousands(rlfrontier::analysis::draws::DRAWS as f64)
    );
    let (labels, width) = budget_labels(grid, decisions);
    for (d, label) in decisions.iter().zip(&labels) {
        for (k, sentence) in sentences(grid, d).all().into_iter().enumerate() {
            let label = if k == 0 { label.as_str() } else { "" };
            text.push_str(&format!("  {label:>width$}  {sentence}\n"));
            if k == 0 {
                // The command that prices the recommendation alone, with the grid's settings.
                text.push_str(&format!(
                    "  {:>width$}  price it alone, phase by phase: rlfrontier cost --grid {} --cell {}\n",
                    "",
                    grid.path.display(),
                    d.recommended().point.id
                ));
            }
        }
    }
    text
}

/// Runs the sweep and prints a summary.
pub fn run(args: &SweepArgs, interrupted: &AtomicBool, out: &mut dyn Write) -> Result<()> {
    run_to(args, interrupted, out, None)
}

/// [`run`], with the cells table handed to `sink` when one is given (the Python extension).
pub fn run_to(
    args: &SweepArgs,
    interrupted: &AtomicBool,
    out: &mut dyn Write,
    sink: Option<&dyn CellsSink>,
) -> Result<()> {
    let catalog = args.catalog.load()?;
    let mut grid = spec::load(&args.grid, &catalog)?;
    if let Some(path) = &args.calibration {
        rlfrontier::engine::calibration_file::apply(&mut grid, path)?;
    }
    let options = SweepOptions {
        out_dir: args.out.clone().unwrap_or_else(|| default_out_dir(&grid)),
        threads: args.threads.map(usize::from),
        shard: args.shard,
        max_cells: args.max_cells,
        force: args.force,
        cells: args.cells,
        format: args.format,
        png: args.png,
    };
    let summary = run_sweep_into(
        &grid,
        &catalog,
        &options,
        &Bar::new(args.quiet),
        interrupted,
        sink,
    )?;
    if args.json {
        return emit(out, &super::json_text(&summary_json(&grid, &summary)));
    }
    emit(out, &summary_text(&grid, &summary, args.explain))
}

/// A point's fields in the summary's JSON.
fn point_json(grid: &spec::Grid, p: &rlfrontier::analysis::frontier::Point) -> serde_json::Value {
    serde_json::json!({
        "cell_id": p.id,
        "regime": regime_label(grid, p),
        "predicted_score": p.score,
        "score_low": p.score_low,
        "score_high": p.score_high,
        "usd": p.usd,
        "gpu_hours": p.gpu_hours,
        "flops_share_learning": p.update_fraction,
    })
}

/// An interval's fields (score units).
fn interval_json(i: &Interval) -> serde_json::Value {
    serde_json::json!({"median": i.median, "low": i.low, "high": i.high})
}

/// A compared regime: its point, P(best), paired difference to the recommendation and gain.
fn compared_json(grid: &spec::Grid, c: &Compared) -> serde_json::Value {
    let mut v = point_json(grid, &c.point);
    v["probability_best"] = serde_json::json!(c.probability_best);
    v["difference_to_recommended"] = interval_json(&c.difference);
    v["gain_over_base"] = interval_json(&c.gain);
    v
}

/// Each lever's dollars (null where only points were split).
fn lever_usd_json(
    shares: &[rlfrontier::analysis::why::LeverShare],
) -> serde_json::Map<String, serde_json::Value> {
    shares
        .iter()
        .map(|s| (s.lever.label().to_string(), serde_json::json!(s.usd)))
        .collect()
}

/// One budget's recommendation as JSON (the sentences included, as the text prints them).
fn decision_json(grid: &spec::Grid, d: &Decision) -> serde_json::Value {
    let (budget, _) = rlfrontier::report::tables::budget_columns(grid, d.budget_index);
    serde_json::json!({
        "budget": budget.parse::<f64>().unwrap_or(f64::NAN),
        "recommended": compared_json(grid, d.recommended()),
        "clear_lead": d.clear_lead,
        "indistinguishable": d.indistinguishable.iter().map(|&k| compared_json(grid, &d.compared[k])).collect::<Vec<_>>(),
        "second": d.second.map(|k| compared_json(grid, &d.compared[k])),
        "cheaper_within_noise": d.cheaper.as_ref().map(|c| compared_json(grid, c)),
        "runner_up": d.runner_up.as_ref().map(|c| compared_json(grid, c)),
        "why_points": d.why.iter().map(|s| (s.lever.label().to_string(), serde_json::json!(100.0 * s.score))).collect::<serde_json::Map<_, _>>(),
        "why_usd": lever_usd_json(&d.why),
        "why_cheaper_points": d.why_cheaper.iter().map(|s| (s.lever.label().to_string(), serde_json::json!(100.0 * s.score))).collect::<serde_json::Map<_, _>>(),
        "why_cheaper_usd": lever_usd_json(&d.why_cheaper),
        "edges": d.edges().iter().map(|f| f.to_string()).collect::<Vec<_>>(),
        "shortlist": d.compared.iter().map(|c| compared_json(grid, c)).collect::<Vec<_>>(),
        "sentences": sentences(grid, d).all(),
    })
}

/// The summary as JSON.
fn summary_json(grid: &spec::Grid, s: &SweepSummary) -> serde_json::Value {
    let (_, budget_unit) = rlfrontier::report::tables::budget_columns(grid, 0);
    serde_json::json!({
        "grid": grid.name,
        "predictions": grid.outcome_state.label(),
        "cells_total": s.cells_total,
        "cells_in_slice": s.cells_in_slice,
        "cells_pruned": s.cells_pruned,
        "cells_evaluated": s.cells_evaluated,
        "cells_feasible": s.cells_feasible,
        "infeasible_by_code": s.infeasible_by_code.iter().map(|(c, n)| (c.clone(), serde_json::json!(n))).collect::<serde_json::Map<_, _>>(),
        "mean_usd_share_search": s.mean_usd_share_search,
        "mean_flops_share_search": s.mean_flops_share_search,
        "threads": s.threads,
        "elapsed_seconds": s.elapsed_seconds,
        "budget_unit": budget_unit,
        "recommendation_per_budget": s.decisions.iter().map(|d| decision_json(grid, d)).collect::<Vec<_>>(),
        "files": s.files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shard_syntax() {
        assert_eq!(parse_shard("0/4").unwrap(), (0, 4));
        assert_eq!(parse_shard("3/4").unwrap(), (3, 4));
        assert!(parse_shard("4/4").is_err());
        assert!(parse_shard("1/0").is_err());
        assert!(parse_shard("a/b").is_err());
        assert!(parse_shard("2").is_err());
    }
}
