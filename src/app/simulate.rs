//! `rlfrontier simulate --plan DIR/plan.csv --truth PARAMS.toml --noise SD --seed S --out FILE`:
//! results from known parameters, standing in for a cluster in tests and demos.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;

use super::{CatalogFlag, emit};
use rlfrontier::error::{Error, Result};
use rlfrontier::pilot::{plan_grid, read_plan, simulate::simulate};

/// Arguments of `simulate`.
#[derive(Debug, Args)]
pub struct SimulateArgs {
    /// The plan (plan.csv; plan.json must sit beside it).
    #[arg(long)]
    pub plan: PathBuf,
    /// True parameters: a TOML file in the format of a grid's `[outcome]` table.
    #[arg(long)]
    pub truth: PathBuf,
    /// Standard deviation of the measurement noise.
    #[arg(long, default_value_t = 0.01)]
    pub noise: f64,
    /// Seed of the noise.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Metric name written in the CSV [default: the grid's, or "score"].
    #[arg(long)]
    pub metric: Option<String>,
    /// Output CSV.
    #[arg(long)]
    pub out: PathBuf,
    /// The grid file, when it moved since the plan was made.
    #[arg(long)]
    pub grid: Option<PathBuf>,
    /// Replace the output file if it exists (never when it is one of the inputs).
    #[arg(long)]
    pub force: bool,
    /// The catalog.
    #[command(flatten)]
    pub catalog: CatalogFlag,
}

/// Writes the simulated results CSV.
pub fn run(args: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    if !(args.noise.is_finite() && args.noise >= 0.0) {
        return Err(Error::in_flag(
            "--noise",
            format!("{} must be a standard deviation of 0 or more", args.noise),
        ));
    }
    let plan_json = args.plan.with_file_name("plan.json");
    let mut inputs = vec![
        args.plan.as_path(),
        plan_json.as_path(),
        args.truth.as_path(),
    ];
    inputs.extend(args.grid.as_deref());
    inputs.extend(args.catalog.paths.iter().map(PathBuf::as_path));
    rlfrontier::report::check_file_out("out", &args.out, &inputs, args.force)?;
    let catalog = args.catalog.load()?;
    let plan = read_plan(&args.plan)?;
    let grid = plan_grid(&plan, &args.plan, args.grid.as_deref(), &catalog)?;
    let text = rlfrontier::input::read_text(
        &args.truth,
        rlfrontier::input::MAX_CONFIG_BYTES,
        "a truth file ([outcome] keys)",
    )?;
    let truth = rlfrontier::spec::outcome_from_toml(&text, &args.truth)?;
    let metric = args
        .metric
        .clone()
        .or_else(|| grid.metric.clone())
        .unwrap_or_else(|| "score".to_string());
    if !metric.starts_with(|c: char| c.is_ascii_alphanumeric())
        || metric.chars().any(char::is_control)
    {
        // The name is a cell of results.csv: a leading = + - @ would be a spreadsheet formula.
        return Err(Error::in_flag(
            "--metric",
            format!(
                "`{}` must start with a letter or digit and hold no control characters; name the metric as the logs do",
                rlfrontier::error::one_line(&metric)
            ),
        ));
    }
    let rows = simulate(&grid, &plan, &truth, args.noise, args.seed, &args.plan)?;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(["run_id", "step", "metric", "value"])
        .expect("memory");
    for (run, step, value) in &rows {
        w.write_record([
            run.clone(),
            step.to_string(),
            metric.clone(),
            format!("{value:.6}"),
        ])
        .expect("memory");
    }
    let bytes = w.into_inner().expect("memory");
    if let Some(parent) = args.out.parent()
        && !parent.as_os_str().is_empty()
    {
        rlfrontier::report::create_output_dir(parent)?;
    }
    rlfrontier::report::write_atomic(&args.out, &bytes)?;
    emit(
        out,
        &format!(
            "simulated {} checkpoints of {} runs (metric `{metric}`, noise sd {}, seed {}) into {}\n",
            rows.len(),
            plan.runs.len(),
            args.noise,
            args.seed,
            args.out.display()
        ),
    )
}
