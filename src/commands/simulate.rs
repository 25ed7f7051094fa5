//! `rlfrontier simulate --plan DIR/plan.csv --truth PARAMS.toml --noise SD --seed S --out FILE`:
//! results from known parameters, standing in for a cluster in tests and demos.

use std::io::Write;

use crate::cli::SimulateArgs;
use crate::error::{Error, Result};
use crate::pilot::{plan_grid, read_plan, simulate::simulate};

/// Writes the simulated results CSV.
pub fn run(args: &SimulateArgs, out: &mut dyn Write) -> Result<()> {
    if !(args.noise.is_finite() && args.noise >= 0.0) {
        return Err(Error::in_flag(
            "--noise",
            format!("{} must be a standard deviation of 0 or more", args.noise),
        ));
    }
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let plan = read_plan(&args.plan)?;
    let grid = plan_grid(&plan, &args.plan, args.grid.as_deref(), &catalog)?;
    let text = std::fs::read_to_string(&args.truth).map_err(|e| Error::io(&args.truth, e))?;
    let truth = crate::spec::outcome_from_toml(&text, &args.truth)?;
    let metric = args
        .metric
        .clone()
        .or_else(|| grid.metric.clone())
        .unwrap_or_else(|| "score".to_string());
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
        crate::report::create_output_dir(parent)?;
    }
    crate::report::write_atomic(&args.out, &bytes)?;
    super::emit(
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
