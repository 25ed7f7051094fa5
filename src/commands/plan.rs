//! `rlfrontier plan GRID --pilot-budget B --max-pilots N [--pilot-usd X] [--framework verl|trl]
//! --out DIR`: choose IsoFLOP pilot runs and write the plan, one launch script per run and a Slurm
//! array script.

use std::io::Write;
use std::path::Path;

use crate::cli::PlanArgs;
use crate::error::{Error, Result};
use crate::format::{Table, money, percent};
use crate::pilot::launch::{Framework, LaunchContext, slurm_array, trl_script, verl_script};
use crate::pilot::plan::{PlanRequest, choose, run_ledger};
use crate::pilot::{Plan, PlanInfo, plan_csv, run_indices};
use crate::report::Staged;
use crate::spec::{self, Budget};

/// Refuses to overwrite another grid's plan without `--force`.
fn check_out_dir(dir: &Path, grid_name: &str, force: bool) -> Result<()> {
    crate::report::create_output_dir(dir)?;
    let existing = dir.join("plan.json");
    if !force
        && let Ok(text) = std::fs::read_to_string(&existing)
        && let Ok(info) = serde_json::from_str::<PlanInfo>(&text)
        && info.grid_name != grid_name
    {
        return Err(Error::in_file(
            &existing,
            None,
            "grid_name",
            format!(
                "{} holds a plan for grid `{}`; choose another --out or pass --force",
                dir.display(),
                info.grid_name
            ),
        ));
    }
    Ok(())
}

/// Plans the pilots and writes the files.
pub fn run(args: &PlanArgs, out: &mut dyn Write) -> Result<()> {
    let catalog = super::load_catalog(args.catalog.as_deref())?;
    let grid = spec::load(&args.grid, &catalog)?;
    let budget =
        Budget::parse(&args.pilot_budget).map_err(|m| Error::in_flag("--pilot-budget", m))?;
    if args.max_pilots == 0 {
        return Err(Error::in_flag("--max-pilots", "must be at least 1"));
    }
    if let Some(x) = args.pilot_usd
        && !(x.is_finite() && x > 0.0)
    {
        return Err(Error::in_flag(
            "--pilot-usd",
            format!("{x} must be a positive number of dollars"),
        ));
    }
    let framework = match args.framework.as_str() {
        "verl" => Framework::Verl,
        "trl" => Framework::Trl,
        other => {
            return Err(Error::in_flag(
                "--framework",
                format!(
                    "`{other}`; {}",
                    crate::error::suggestion(other, ["verl", "trl"])
                ),
            ));
        }
    };
    let runs = choose(
        &grid,
        &PlanRequest {
            budget,
            max_pilots: args.max_pilots,
            max_total_usd: args.pilot_usd,
        },
    )?;
    let plan = Plan {
        info: PlanInfo {
            tool: "rlfrontier".to_string(),
            tool_version: crate::VERSION.to_string(),
            grid_name: grid.name.clone(),
            grid_file: args.grid.display().to_string(),
            grid_sha256: grid.sha256.clone(),
            pilot_budget: budget.amount,
            budget_unit: budget.unit.as_str().to_string(),
            framework: framework.as_str().to_string(),
            runs: runs.len(),
        },
        runs,
    };
    check_out_dir(&args.out, &grid.name, args.force)?;
    let launch_dir = args.out.join("launch");
    std::fs::create_dir_all(&launch_dir).map_err(|e| Error::io(&launch_dir, e))?;
    let mut staged = Staged::default();
    staged.add(&args.out.join("plan.csv"), &plan_csv(&plan))?;
    let mut json = serde_json::to_string_pretty(&plan.info).expect("json");
    json.push('\n');
    staged.add(&args.out.join("plan.json"), json.as_bytes())?;
    let plan_path = args.out.join("plan.csv");
    for (k, run) in plan.runs.iter().enumerate() {
        let indices = run_indices(&grid, run, &plan_path, k + 2)?;
        let ledger = run_ledger(&grid, &indices, budget);
        let context = LaunchContext {
            grid: &grid,
            run,
            policy: &grid.axes.model[indices.model],
            finetune: grid.axes.finetune[indices.finetune],
            reward: &grid.axes.reward[indices.reward],
            ledger: &ledger,
        };
        let script = match framework {
            Framework::Verl => verl_script(&context),
            Framework::Trl => trl_script(&context),
        };
        staged.add(
            &launch_dir.join(format!("{}.sh", run.run_id)),
            script.as_bytes(),
        )?;
    }
    staged.add(
        &args.out.join("slurm_array.sh"),
        slurm_array(&grid, &plan.runs).as_bytes(),
    )?;
    let written = staged.commit()?;

    let mut table = Table::new([
        "run",
        "model",
        "finetune",
        "reward",
        "G",
        "cap",
        "epochs",
        "prompts",
        "steps",
        "update fraction",
        "USD",
        "GPU-h",
    ]);
    for r in &plan.runs {
        table.row([
            r.run_id.clone(),
            r.model.clone(),
            r.finetune.clone(),
            r.reward.clone(),
            r.group_size.to_string(),
            r.max_response_len.to_string(),
            r.update_epochs.to_string(),
            r.prompts_per_step.to_string(),
            r.steps.to_string(),
            percent(r.update_fraction),
            money(r.expected_usd),
            money(r.expected_gpu_hours),
        ]);
    }
    let total_usd: f64 = plan.runs.iter().map(|r| r.expected_usd).sum();
    let total_gpu_hours: f64 = plan.runs.iter().map(|r| r.expected_gpu_hours).sum();
    let mut text = format!(
        "{} pilots of grid `{}` at {} each ({} framework): ${} and {} GPU-hours in all\n",
        plan.runs.len(),
        grid.name,
        budget,
        framework.as_str(),
        money(total_usd),
        money(total_gpu_hours)
    );
    text.push_str(&table.render());
    text.push_str(&format!(
        "wrote {} files under {} (launch/*.sh, slurm_array.sh, plan.csv, plan.json)\n",
        written.len(),
        args.out.display()
    ));
    super::emit(out, &text)
}
