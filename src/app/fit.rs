//! `rlfrontier fit RESULTS.csv --plan DIR/plan.csv --out DIR` (every pilot's curve, the RACE
//! surfaces and the calibrated prior) and `rlfrontier fit-curve` (one sigmoid fit of a
//! compute,score CSV, for checking against `scipy.optimize.curve_fit`).

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use rlfrontier::engine::pilot_fit::{PilotFitSettings, PilotResults, fit_pilots};
use rlfrontier::error::{Error, Result};
use rlfrontier::fit::sigmoid::{bootstrap, fit};
use rlfrontier::pilot::ingest::ValueScale;
use serde_json::json;

use super::progress::TaskBar;
use super::{CatalogFlag, emit, json_text};

/// Most bootstrap replicates a fit may ask for: 90% intervals settle long before (each replicate
/// refits every run, so more only costs time and memory).
const MAX_BOOTSTRAP: usize = 100_000;

/// Parses `--bootstrap`: a count of at most [`MAX_BOOTSTRAP`].
fn bootstrap_count(text: &str) -> std::result::Result<usize, String> {
    let n: usize = text
        .parse()
        .map_err(|_| format!("`{text}` is not a whole number of replicates"))?;
    if n > MAX_BOOTSTRAP {
        return Err(format!(
            "{n} replicates is above the {MAX_BOOTSTRAP} a fit may ask for (90% intervals settle long before)"
        ));
    }
    Ok(n)
}

/// Arguments of `fit`.
#[derive(Debug, Args)]
pub struct FitArgs {
    /// Results: a CSV with columns run_id, step, metric, value (or give the runs' logs with
    /// --logs).
    #[arg(required_unless_present = "logs", conflicts_with = "logs")]
    pub results: Option<PathBuf>,
    /// The pilots' logs instead of a results CSV: veRL file-logger JSON lines
    /// (`metrics/p001.jsonl`), wandb CSV exports or TRL `trainer_state.json`, one per run (run
    /// ids from the file names, as `collect` reads them; steps as iterations, by the plan). The
    /// metric is --metric or the grid's. The collected rows are written as OUT/results.csv
    /// with the other outputs.
    #[arg(long, num_args = 1.., value_name = "FILES")]
    pub logs: Vec<PathBuf>,
    /// The format of --logs (`verl-console`, `verl-jsonl`, `jsonl`, `wandb-csv`, `trl-state`)
    /// [default: detected from each file].
    #[arg(long, value_name = "FORMAT", requires = "logs")]
    pub format: Option<rlfrontier::logs::LogFormat>,
    /// The plan the runs came from (its folder or its plan.csv; plan.json beside it).
    #[arg(long)]
    pub plan: PathBuf,
    /// Output folder.
    #[arg(long)]
    pub out: PathBuf,
    /// The held-out metric to fit [default: the grid's `[outcome]` metric, or "score"].
    #[arg(long)]
    pub metric: Option<String>,
    /// Skip bad rows (counted and reported) instead of failing.
    #[arg(long)]
    pub skip_bad_rows: bool,
    /// Accept a training signal (reward, loss) as the target.
    #[arg(long)]
    pub allow_train_metric: bool,
    /// `fraction` (scores in 0-1, as veRL logs them) or `percent` (0-100).
    #[arg(long, default_value = "fraction")]
    pub scale: rlfrontier::pilot::ingest::ValueScale,
    /// Ignore checkpoints before this step in the curve fits (ScaleRL skips early compute).
    #[arg(long, default_value_t = 0)]
    pub warmup_steps: u64,
    /// Bootstrap replicates (at most 100,000).
    #[arg(long, default_value_t = 200, value_parser = bootstrap_count)]
    pub bootstrap: usize,
    /// Seed of the bootstraps [default: the grid's].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Prior parameters to calibrate, comma-separated [default: those the pilots identify].
    #[arg(long, value_delimiter = ',')]
    pub free: Option<Vec<String>>,
    /// The grid file, when it moved since the plan was made.
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Replace another grid's calibration in the output folder.
    #[arg(long)]
    pub force: bool,
    /// No progress spinner.
    #[arg(short, long)]
    pub quiet: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Fits everything, writes the outputs and prints the summary.
pub fn run(args: &FitArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = args.catalog.load()?;
    let results = match &args.results {
        Some(path) => PilotResults::Csv(path.clone()),
        None => PilotResults::Logs {
            paths: args.logs.clone(),
            format: args.format,
        },
    };
    if let Some(names) = &args.free
        && names.iter().all(|n| n.trim().is_empty())
    {
        return Err(Error::in_flag(
            "--free",
            "names no parameter; give at least one, e.g. --free k_mid_at_7b,gain_logit_at_7b (or leave --free out for the default set)",
        ));
    }
    let settings = PilotFitSettings {
        results,
        plan: rlfrontier::pilot::plan_csv_path(&args.plan),
        out: args.out.clone(),
        metric: args.metric.clone(),
        skip_bad_rows: args.skip_bad_rows,
        allow_train_metric: args.allow_train_metric,
        scale: args.scale,
        warmup_steps: args.warmup_steps,
        bootstrap: args.bootstrap,
        seed: args.seed,
        free: args.free.as_ref().map(|names| {
            names
                .iter()
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect()
        }),
        grid: args.grid.clone(),
        force: args.force,
    };
    let spinner = TaskBar::spinner("fitting the pilots", args.quiet);
    let report = fit_pilots(&settings, &catalog)?;
    spinner.finish();
    emit(out, &report.to_text())
}

/// Arguments of `fit-curve`.
#[derive(Debug, Args)]
pub struct FitCurveArgs {
    /// CSV with a header and two columns: compute, score.
    pub data: PathBuf,
    /// R0, the score at zero compute (fixed).
    #[arg(long)]
    pub base_score: f64,
    /// Fit this many times and report the mean time of one fit (for benchmarks).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub repeat: u64,
    /// Residual-bootstrap replicates for the 90% intervals (0: none; at most 100,000).
    #[arg(long, default_value_t = 200, value_parser = bootstrap_count)]
    pub bootstrap: usize,
    /// Seed of the bootstrap.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// `fraction` (scores in 0-1) or `percent` (0-100).
    #[arg(long, default_value = "fraction")]
    pub scale: rlfrontier::pilot::ingest::ValueScale,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Reads the (compute, score) pairs of a two-column CSV.
fn read_points(args: &FitCurveArgs) -> Result<(Vec<f64>, Vec<f64>)> {
    let mut reader = csv::Reader::from_path(&args.data)
        .map_err(|e| Error::in_file(&args.data, None, "", e.to_string()))?;
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for (k, record) in reader.records().enumerate() {
        let record =
            record.map_err(|e| Error::in_file(&args.data, Some(k + 2), "", e.to_string()))?;
        let parse = |i: usize, name: &str| -> Result<f64> {
            record
                .get(i)
                .and_then(|v| v.trim().parse::<f64>().ok())
                .filter(|v| v.is_finite())
                .ok_or_else(|| Error::in_file(&args.data, Some(k + 2), name, "not a finite number"))
        };
        x.push(parse(0, "compute")?);
        let score = match args.scale {
            ValueScale::Percent => parse(1, "score")? / 100.0,
            ValueScale::Fraction => parse(1, "score")?,
        };
        if !(0.0..=1.0).contains(&score) {
            return Err(Error::in_file(
                &args.data,
                Some(k + 2),
                "score",
                if args.scale == ValueScale::Fraction && (1.0..=100.0).contains(&score) {
                    format!(
                        "{score} looks like a percentage; scores are fractions in [0, 1]: divide by 100 or pass --scale percent"
                    )
                } else {
                    format!("{score} is outside the score range [0, 1]")
                },
            ));
        }
        y.push(score);
    }
    Ok((x, y))
}

/// `fit-curve`: one sigmoid fit of a `compute,score` CSV.
pub fn run_fit_curve(args: &FitCurveArgs, out: &mut dyn Write) -> Result<()> {
    if !(0.0..1.0).contains(&args.base_score) {
        return Err(Error::in_flag("--base-score", "must lie in [0, 1)"));
    }
    let (x, y) = read_points(args)?;
    let started = std::time::Instant::now();
    let mut result = fit(args.base_score, &x, &y);
    for _ in 1..args.repeat {
        result = fit(args.base_score, &x, &y);
    }
    let fit_seconds = started.elapsed().as_secs_f64() / args.repeat as f64;
    let f = result
        .map_err(|reason| Error::in_file(&args.data, None, "", format!("no fit: {reason}")))?;
    let p = f.params;
    let boot =
        (args.bootstrap > 0).then(|| bootstrap(&f, &x, &y, &[], args.bootstrap, args.seed, 0));
    let interval = |k: usize| boot.as_ref().map(|b| b.params[k]);
    if args.json {
        return emit(
            out,
            &json_text(&json!({
                "base_score": p.base, "ceiling": p.ceiling, "steepness": p.steepness, "midpoint": p.midpoint,
                "standard_errors": f.standard_errors, "rmse": f.rmse, "points": f.points, "converged": f.converged,
                "identified": f.identified,
                "intervals_90": {
                    "ceiling": interval(0), "steepness": interval(1), "midpoint": interval(2),
                    "bootstrap_replicates": boot.as_ref().map(|b| b.replicates),
                },
                "fit_seconds": fit_seconds,
            })),
        );
    }
    let with_interval = |value: String, k: usize| match interval(k) {
        Some((low, high)) => format!("{value} [{low:.4}, {high:.4}]"),
        None => value,
    };
    let midpoint = match interval(2) {
        Some((low, high)) => format!("{:.6e} [{low:.4e}, {high:.4e}]", p.midpoint),
        None => format!("{:.9e}", p.midpoint),
    };
    emit(
        out,
        &format!(
            "R0 {:.6} (fixed), A {}, beta {}, C_mid {midpoint}, rmse {:.3e} over {} points{}\n{}\n",
            p.base,
            with_interval(format!("{:.9}", p.ceiling), 0),
            with_interval(format!("{:.9}", p.steepness), 1),
            f.rmse,
            f.points,
            if boot.is_some() {
                format!(
                    " (90% residual-bootstrap intervals, {} replicates)",
                    args.bootstrap
                )
            } else {
                String::new()
            },
            f.identification_note()
        ),
    )
}
