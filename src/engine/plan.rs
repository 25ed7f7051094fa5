//! `plan`: choose IsoFLOP pilot runs of a grid and write, together, the plan table that `fit`
//! reads back (`plan.csv`, `plan.json`), one launch script per run for veRL or TRL, and a Slurm
//! array that runs them.

use crate::spec::Axis;
use std::path::{Path, PathBuf};

use crate::config::Budget;
use crate::error::{Error, Result};
use crate::format::{Table, money, percent};
use crate::pilot::decide::{DecideRequest, DecidedPlan, choose_to_decide};
use crate::pilot::launch::{Framework, LaunchContext, slurm_array, trl_script, verl_script};
use crate::pilot::plan::{PlanRequest, choose, run_ledger};
use crate::pilot::{PilotRun, Plan, PlanInfo, plan_csv, run_indices};
use crate::report::Staged;
use crate::spec::Grid;

/// What `plan` is asked to do.
#[derive(Debug, Clone)]
pub struct PilotPlanSettings {
    /// The grid file as the user named it (recorded in `plan.json`).
    pub grid_file: PathBuf,
    /// The budget every pilot spends.
    pub budget: Budget,
    /// Most pilot runs.
    pub max_pilots: usize,
    /// Most dollars for all pilots together.
    pub max_total_usd: Option<f64>,
    /// Launch scripts for this framework.
    pub framework: Framework,
    /// Output folder.
    pub out: PathBuf,
    /// Replace another grid's plan in the output folder.
    pub force: bool,
    /// SHA-256 of the catalog the plan is priced with (recorded in `plan.json`).
    pub catalog_sha256: String,
    /// Choose the pilots to settle the recommendation at this target budget (`--decide`)
    /// instead of filling space.
    pub decide: Option<DecideRequest>,
}

/// A plan written to disk.
pub struct PilotPlan {
    /// The plan.
    pub plan: Plan,
    /// Files written.
    pub written: Vec<PathBuf>,
    /// What `--decide` expects the pilots to settle (None for the space-filling plan).
    pub decided: Option<DecidedPlan>,
    grid_name: String,
    budget: Budget,
    framework: Framework,
    out: PathBuf,
}

/// The run ids of the plan this folder holds (its plan.csv, read before the new one is
/// committed), those of the tool's own form only (`p` and digits); empty without one.
fn earlier_run_ids(plan_csv: &Path) -> Vec<String> {
    let Ok(mut reader) = csv::Reader::from_path(plan_csv) else {
        return Vec::new();
    };
    let Some(column) = reader
        .headers()
        .ok()
        .and_then(|h| h.iter().position(|c| c == "run_id"))
    else {
        return Vec::new();
    };
    reader
        .records()
        .flatten()
        .filter_map(|r| r.get(column).map(str::to_string))
        .filter(|id| {
            id.len() > 1 && id.starts_with('p') && id[1..].bytes().all(|b| b.is_ascii_digit())
        })
        .collect()
}

/// Refuses to overwrite another grid's plan unless forced.
fn check_out_dir(dir: &Path, grid: &Grid, grid_file: &Path, force: bool) -> Result<()> {
    let existing = dir.join("plan.json");
    if !existing.exists() {
        return crate::report::refuse_foreign_files(dir, "plan.json", force);
    }
    if force {
        return Ok(());
    }
    let info = std::fs::read_to_string(&existing)
        .ok()
        .and_then(|text| serde_json::from_str::<PlanInfo>(&text).ok());
    let Some(info) = info else {
        return Err(Error::in_file(
            &existing,
            None,
            "",
            format!(
                "{} holds a plan.json rlfrontier cannot read; choose another ⟨out⟩ or pass ⟨force⟩ to replace it",
                dir.display()
            ),
        ));
    };
    let same = info.grid_sha256 == grid.sha256
        || (info.grid_name == grid.name && Path::new(&info.grid_file) == grid_file);
    if !same {
        return Err(Error::in_file(
            &existing,
            None,
            "grid_sha256",
            format!(
                "{} holds a plan for grid `{}` ({}), not `{}`; choose another ⟨out⟩ or pass ⟨force⟩",
                dir.display(),
                info.grid_name,
                info.grid_file,
                grid.name
            ),
        ));
    }
    Ok(())
}

/// Every model name a veRL pilot script could carry is a plain Hydra string
/// ([`crate::pilot::launch::is_hydra_plain`]); checked before the output folder is touched.
fn check_hydra_names(grid: &Grid) -> Result<()> {
    let policies = grid.axes.model.iter().map(|m| &m.name);
    let rewards = grid
        .axes
        .reward
        .iter()
        .filter_map(|r| r.model.as_ref())
        .map(|m| &m.name);
    if let Some(bad) = policies
        .chain(rewards)
        .find(|n| !crate::pilot::launch::is_hydra_plain(n))
    {
        return Err(Error::in_setting(
            "framework",
            format!(
                "the model name `{}` holds characters veRL's Hydra overrides would interpret (a `${{…}}` is resolved, a comma starts a sweep, brackets a list); veRL pilots take Hugging Face ids and paths of letters, digits and . _ - / ~ only: rename it in the catalog, or plan with ⟨framework⟩ trl",
                crate::error::one_line(bad)
            ),
        ));
    }
    Ok(())
}

/// `--max-pilots` at least 1, `--pilot-usd`, when given, a positive number of dollars, and a grid
/// whose offload the pilot scripts can run as priced (not once per step).
fn check_settings(grid: &Grid, settings: &PilotPlanSettings) -> Result<()> {
    if settings.max_pilots == 0 {
        return Err(Error::in_setting("max_pilots", "must be at least 1"));
    }
    if let Some(x) = settings.max_total_usd
        && !(x.is_finite() && x > 0.0)
    {
        return Err(Error::in_setting(
            "pilot_usd",
            format!("{x} must be a positive number of dollars"),
        ));
    }
    if grid.run.offload.per_step {
        // veRL's FSDP workers move offloaded state around every pass, DeepSpeed's ZeRO offload
        // inside every pass: neither runs the once-per-step swap the grid prices.
        return Err(Error::in_file(
            &grid.path,
            None,
            "offload_per_step",
            format!(
                "the grid prices offload once per step (slime, OpenRLHF's sleep mode), which the {} pilot scripts cannot run as priced; plan pilots of a copy with offload_per_step = false",
                settings.framework.as_str()
            ),
        ));
    }
    if settings.framework == Framework::Verl {
        check_hydra_names(grid)?;
    }
    let engine = &grid.engine_hardware[0].engine;
    if settings.framework == Framework::Verl && engine.static_batching {
        // veRL 0.9 registers vLLM and SGLang rollouts only; its transformers `hf` rollout is
        // gone, and a script naming it stops at start-up.
        return Err(Error::in_setting(
            "framework",
            format!(
                "the grid's first engine `{}` is transformers' generate(), which veRL 0.9 cannot run (it has vLLM and SGLang rollouts only); plan with ⟨framework⟩ trl, or price the pilots with a vLLM or SGLang engine",
                engine.id
            ),
        ));
    }
    Ok(())
}

/// Pilot `run`'s launch script for `framework` (the plan's line `line` of `plan_path`), priced at
/// the pilot budget; a veRL script is read back and refused if veRL's own checks would refuse it.
fn launch_script(
    grid: &Grid,
    run: &PilotRun,
    (plan_path, line): (&Path, usize),
    budget: Budget,
    framework: Framework,
) -> Result<String> {
    let indices = run_indices(grid, run, plan_path, line)?;
    let ledger = run_ledger(grid, &indices, budget);
    let context = LaunchContext {
        grid,
        run,
        policy: &grid.axes.model[indices[Axis::Model]],
        finetune: grid.axes.finetune[indices[Axis::Finetune]],
        reward: &grid.axes.reward[indices[Axis::Reward]],
        ledger: &ledger,
    };
    let script = match framework {
        Framework::Verl => verl_script(&context),
        Framework::Trl => trl_script(&context),
    };
    if framework == Framework::Verl {
        // Never hand out a script veRL refuses after the queue wait and the model download.
        let overrides = crate::config::import::verl_overrides(&script).map_err(|e| {
            Error::in_setting(
                "framework",
                format!(
                    "pilot {}'s veRL script cannot be read back ({e}); a catalog name holds characters veRL's overrides cannot carry: rename it",
                    run.run_id
                ),
            )
        })?;
        let problems = crate::pilot::verl_checks::verl_rejections(&overrides);
        if !problems.is_empty() {
            return Err(Error::in_setting(
                "framework",
                format!(
                    "pilot {}'s veRL script would be refused by veRL's config checks: {}; use fewer GPUs, more prompts per step, or ⟨framework⟩ trl",
                    run.run_id,
                    problems.join("; ")
                ),
            ));
        }
    }
    Ok(script)
}

/// Chooses the pilots and writes the plan, launch scripts and Slurm array.
pub fn plan_pilots(grid: &Grid, settings: &PilotPlanSettings) -> Result<PilotPlan> {
    check_settings(grid, settings)?;
    let (budget, framework) = (settings.budget, settings.framework);
    // The folder is locked, then checked, for the whole plan, choosing included.
    let _folder = crate::report::LockedFolder::take(&settings.out)?;
    check_out_dir(&settings.out, grid, &settings.grid_file, settings.force)?;
    crate::report::remove_stale_temporaries(&settings.out);
    let request = PlanRequest {
        budget,
        max_pilots: settings.max_pilots,
        max_total_usd: settings.max_total_usd,
    };
    let (runs, decided, design) = match &settings.decide {
        None => (choose(grid, &request)?, None, "space-filling".to_string()),
        Some(d) => {
            let decided = choose_to_decide(grid, &request, d)?;
            let design = format!(
                "decide {}",
                crate::report::tables::budget_label(grid, d.target_budget_index)
            );
            (decided.runs.clone(), Some(decided), design)
        }
    };
    let mut plan = Plan {
        info: plan_info(grid, settings, runs.len(), design),
        runs,
    };
    // The folder exists now: record where the grid is as seen from it.
    plan.info.grid_file_from_plan = crate::pilot::relative_path(&settings.out, &settings.grid_file);
    let launch_dir = settings.out.join("launch");
    std::fs::create_dir_all(&launch_dir).map_err(|e| Error::io(&launch_dir, e))?;
    let mut staged = Staged::default();
    let csv_bytes = plan_csv(&plan);
    {
        use sha2::Digest;
        plan.info.plan_csv_sha256 = crate::format::hex(&sha2::Sha256::digest(&csv_bytes));
    }
    staged.add(&settings.out.join("plan.csv"), &csv_bytes)?;
    let mut json = serde_json::to_string_pretty(&plan.info).expect("json");
    json.push('\n');
    staged.add(&settings.out.join("plan.json"), json.as_bytes())?;
    let plan_path = settings.out.join("plan.csv");
    for (k, run) in plan.runs.iter().enumerate() {
        let script = launch_script(grid, run, (&plan_path, k + 2), budget, framework)?;
        staged.add(
            &launch_dir.join(format!("{}.sh", run.run_id)),
            script.as_bytes(),
        )?;
    }
    staged.add(
        &settings.out.join("slurm_array.sh"),
        slurm_array(grid, &plan.runs, framework).as_bytes(),
    )?;
    // Launch scripts of the earlier plan in this folder (the runs its plan.csv lists) that this
    // plan does not have would sit beside a Slurm array of another size: removed with the
    // commit. Any other file in launch/ is not this tool's and stays.
    for id in earlier_run_ids(&plan_path) {
        if !plan.runs.iter().any(|r| r.run_id == id) {
            staged.remove_after_commit(&launch_dir.join(format!("{id}.sh")));
        }
    }
    let written = staged.commit()?;
    Ok(PilotPlan {
        plan,
        written,
        decided,
        grid_name: grid.name.clone(),
        budget,
        framework,
        out: settings.out.clone(),
    })
}

/// plan.json's record of the plan (before its CSV digest and the grid's path from the plan's
/// folder are known).
fn plan_info(grid: &Grid, settings: &PilotPlanSettings, runs: usize, design: String) -> PlanInfo {
    PlanInfo {
        tool: "rlfrontier".to_string(),
        tool_version: crate::VERSION.to_string(),
        grid_name: grid.name.clone(),
        grid_file: settings.grid_file.display().to_string(),
        grid_file_from_plan: String::new(),
        grid_sha256: grid.sha256.clone(),
        catalog_sha256: settings.catalog_sha256.clone(),
        plan_csv_sha256: String::new(),
        pilot_budget: settings.budget.amount,
        budget_unit: settings.budget.unit.as_str().to_string(),
        framework: settings.framework.as_str().to_string(),
        framework_version: crate::pilot::frameworks::describe(settings.framework),
        model_identity: crate::identity::model_identity().to_string(),
        runs,
        design,
    }
}

/// What `--decide` says about its pilots: the contenders and P(wrong) before and after, beside
/// the space-filling plan's.
fn decided_text(d: &DecidedPlan) -> String {
    format!(
        "chosen to settle the recommendation among {} contenders (cells {}); free parameters: {}\n\
         P(recommending the wrong regime at the target budget), linear-Gaussian model: {} before the pilots, {} after these (${}), {} after the space-filling plan (${})\n",
        d.contenders.len(),
        d.contenders
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", "),
        d.free.join(", "),
        percent(d.wrong_before),
        percent(d.wrong_after),
        money(d.runs.iter().map(|r| r.expected_usd).sum()),
        percent(d.space_filling_wrong_after),
        money(d.space_filling_usd),
    )
}

impl PilotPlan {
    /// The summary `plan` prints: one row per pilot, the totals, and what was written.
    pub fn to_text(&self) -> String {
        let (plan, written, budget, framework) =
            (&self.plan, &self.written, self.budget, self.framework);
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
            self.grid_name,
            budget,
            framework.as_str(),
            money(total_usd),
            money(total_gpu_hours)
        );
        text.push_str(&table.render());
        if let Some(d) = &self.decided {
            text.push_str(&decided_text(d));
        }
        text.push_str(&format!(
            "wrote {} files under {} (launch/*.sh, slurm_array.sh, plan.csv, plan.json)\n",
            written.len(),
            self.out.display()
        ));
        text
    }
}
