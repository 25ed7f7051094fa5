//! The pilot loop: choose pilot runs ([`plan`]), write launch scripts for veRL or TRL
//! ([`launch`]), read measured results back ([`ingest`]) and simulate them from known parameters
//! for tests and demos ([`simulate`]).
//!
//! A plan is two files in the plan folder: `plan.csv` (one row per run, what `fit` reads back) and
//! `plan.json` (the grid it came from, with its SHA-256, the pilot budget and the framework), so
//! that results are never matched against a different grid silently.

pub mod collect;
pub mod decide;
pub mod frameworks;
pub mod ingest;
pub mod launch;
pub mod plan;
pub mod run_record;
pub mod simulate;
pub mod verl_checks;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::catalog::Catalog;
use crate::config::{Budget, BudgetUnit, Stop};
use crate::error::{Error, Result};
use crate::ledger::{Ledger, RunConfig, evaluate};
use crate::spec::{Axis, AxisIndices, Grid};

/// One pilot run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PilotRun {
    /// Run id (`p001`, ...), the key of the results CSV.
    pub run_id: String,
    /// Policy model id.
    pub model: String,
    /// `full` or `lora:R`.
    pub finetune: String,
    /// Reward mechanism.
    pub reward: String,
    /// Responses per prompt.
    pub group_size: u64,
    /// Response cap.
    pub max_response_len: u64,
    /// Update epochs.
    pub update_epochs: u64,
    /// Prompts per step.
    pub prompts_per_step: u64,
    /// The pilot budget's amount.
    pub pilot_budget: f64,
    /// Its unit.
    pub budget_unit: String,
    /// RL iterations the budget affords.
    pub steps: u64,
    /// Evaluate the held-out metric every this many steps.
    pub eval_every_steps: u64,
    /// Learning share of FLOPs.
    pub update_fraction: f64,
    /// Spend per step in the budget unit.
    pub cost_per_step: f64,
    /// Expected dollars of the run.
    pub expected_usd: f64,
    /// Expected GPU-hours.
    pub expected_gpu_hours: f64,
    /// Expected wall-clock hours.
    pub expected_wall_hours: f64,
    /// The prior's predicted score at the end of the run.
    pub prior_score: f64,
}

/// What `plan.json` records.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlanInfo {
    /// Always "rlfrontier".
    pub tool: String,
    /// Tool version that made the plan.
    pub tool_version: String,
    /// Grid name.
    pub grid_name: String,
    /// Grid file as given to `plan`.
    pub grid_file: String,
    /// The grid file relative to the plan's folder, so `fit` and `simulate` find it from any
    /// working directory (empty in plans made before it was recorded).
    #[serde(default)]
    pub grid_file_from_plan: String,
    /// SHA-256 of the grid file.
    pub grid_sha256: String,
    /// SHA-256 of the catalog the plan was priced with (`Catalog::sha256`): `fit` must use the
    /// same numbers (empty in plans of older versions: not checked).
    #[serde(default)]
    pub catalog_sha256: String,
    /// SHA-256 of `plan.csv` as written: an edited plan (its steps and budgets drive the fit) is
    /// refused (empty in plans of older versions: not checked).
    #[serde(default)]
    pub plan_csv_sha256: String,
    /// Pilot budget amount.
    pub pilot_budget: f64,
    /// Its unit.
    pub budget_unit: String,
    /// `verl` or `trl`.
    pub framework: String,
    /// The framework release the scripts target and the version CI tests them with
    /// ([`frameworks::describe`]; empty in plans of older versions).
    #[serde(default)]
    pub framework_version: String,
    /// The model that priced the plan ([`crate::identity::model_identity`]; empty in plans of
    /// older versions: not compared).
    #[serde(default)]
    pub model_identity: String,
    /// Number of runs.
    pub runs: usize,
    /// How the pilots were chosen: `space-filling`, or `decide BUDGET` for `plan --decide`
    /// (empty in plans of older versions).
    #[serde(default)]
    pub design: String,
}

/// A plan: its runs and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Provenance.
    pub info: PlanInfo,
    /// Runs in id order.
    pub runs: Vec<PilotRun>,
}

/// Axis indices of a run's levers in the grid (budget index 0), or an error naming the field.
pub fn run_indices(grid: &Grid, run: &PilotRun, path: &Path, line: usize) -> Result<AxisIndices> {
    let a = &grid.axes;
    let find = |field: &str, found: Option<usize>, value: String| {
        found.ok_or_else(|| {
            Error::in_file(
                path,
                Some(line),
                field,
                format!(
                    "`{value}` is not on the grid's {field} axis; the plan does not match this grid"
                ),
            )
        })
    };
    // Pilots run on the grid's first engine, turns, tool latency and judge (src/pilot/plan.rs
    // says why): the first value, index 0, is the default on every axis not set here.
    let mut indices = AxisIndices::default();
    indices[Axis::Model] = find(
        Axis::Model.name(),
        a.model.iter().position(|m| m.id == run.model),
        run.model.clone(),
    )?;
    indices[Axis::Finetune] = find(
        Axis::Finetune.name(),
        a.finetune
            .iter()
            .position(|f| f.to_string() == run.finetune),
        run.finetune.clone(),
    )?;
    indices[Axis::Reward] = find(
        Axis::Reward.name(),
        a.reward.iter().position(|r| r.to_string() == run.reward),
        run.reward.clone(),
    )?;
    let numeric = [
        (Axis::GroupSize, &a.group_size, run.group_size),
        (
            Axis::MaxResponseLen,
            &a.max_response_len,
            run.max_response_len,
        ),
        (Axis::UpdateEpochs, &a.update_epochs, run.update_epochs),
        (
            Axis::PromptsPerStep,
            &a.prompts_per_step,
            run.prompts_per_step,
        ),
    ];
    for (axis, values, value) in numeric {
        indices[axis] = find(
            axis.name(),
            values.iter().position(|&v| v == value),
            value.to_string(),
        )?;
    }
    Ok(indices)
}

/// The run configuration of a lever combination at a given stop (budget or steps).
pub fn config_at<'g>(grid: &'g Grid, i: &AxisIndices, stop: Stop) -> RunConfig<'g> {
    let a = &grid.axes;
    RunConfig {
        policy: &a.model[i[Axis::Model]],
        finetune: a.finetune[i[Axis::Finetune]],
        reward: &a.reward[i[Axis::Reward]],
        group_size: a.group_size[i[Axis::GroupSize]],
        max_response_len: a.max_response_len[i[Axis::MaxResponseLen]],
        update_epochs: a.update_epochs[i[Axis::UpdateEpochs]],
        prompts_per_step: a.prompts_per_step[i[Axis::PromptsPerStep]],
        stop,
        hardware: &grid.engine_hardware[0],
        task: &grid.task,
        run: grid.run_settings(i),
        measured_base_score: grid.measured_base_scores[i[Axis::Model]],
        ability_score: grid.ability_scores[i[Axis::Model]],
    }
}

/// The ledger of a lever combination at a stop.
pub fn ledger_at(grid: &Grid, i: &AxisIndices, stop: Stop) -> Ledger {
    evaluate(&config_at(grid, i, stop))
}

/// Column order of `plan.csv`: the same names as the sweep's tables (`finetune` beside
/// `lora_rank`, `reward` beside `reward_model`, `flops_share_learning` for RACE's update
/// fraction).
pub const PLAN_COLUMNS: [&str; 20] = [
    "run_id",
    "model",
    "finetune",
    "lora_rank",
    "reward",
    "reward_model",
    "group_size",
    "max_response_len",
    "update_epochs",
    "prompts_per_step",
    "pilot_budget",
    "budget_unit",
    "steps",
    "eval_every_steps",
    "flops_share_learning",
    "cost_per_step",
    "expected_usd",
    "expected_gpu_hours",
    "expected_wall_hours",
    "prior_score",
];

/// One row of `plan.csv` as written and read.
#[derive(Debug, Deserialize)]
struct PlanRow {
    run_id: String,
    model: String,
    finetune: String,
    lora_rank: u64,
    reward: String,
    reward_model: String,
    group_size: u64,
    max_response_len: u64,
    update_epochs: u64,
    prompts_per_step: u64,
    pilot_budget: f64,
    budget_unit: String,
    steps: u64,
    eval_every_steps: u64,
    flops_share_learning: f64,
    cost_per_step: f64,
    expected_usd: f64,
    expected_gpu_hours: f64,
    expected_wall_hours: f64,
    prior_score: f64,
}

impl PlanRow {
    /// The run, with fine-tuning and reward joined back into the grid's spelling.
    fn into_run(self) -> std::result::Result<PilotRun, (&'static str, String)> {
        let finetune = crate::config::Finetune::from_columns(&self.finetune, self.lora_rank)
            .map_err(|m| ("finetune", m))?;
        let reward = if self.reward_model.is_empty() {
            self.reward
        } else {
            format!("{}:{}", self.reward, self.reward_model)
        };
        Ok(PilotRun {
            run_id: self.run_id,
            model: self.model,
            finetune: finetune.to_string(),
            reward,
            group_size: self.group_size,
            max_response_len: self.max_response_len,
            update_epochs: self.update_epochs,
            prompts_per_step: self.prompts_per_step,
            pilot_budget: self.pilot_budget,
            budget_unit: self.budget_unit,
            steps: self.steps,
            eval_every_steps: self.eval_every_steps,
            update_fraction: self.flops_share_learning,
            cost_per_step: self.cost_per_step,
            expected_usd: self.expected_usd,
            expected_gpu_hours: self.expected_gpu_hours,
            expected_wall_hours: self.expected_wall_hours,
            prior_score: self.prior_score,
        })
    }
}

/// `plan.csv` bytes.
pub fn plan_csv(plan: &Plan) -> Vec<u8> {
    use crate::format::number;
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(PLAN_COLUMNS).expect("memory");
    for r in &plan.runs {
        let (finetune, lora_rank) = match crate::config::Finetune::parse(&r.finetune) {
            Ok(f) => (f.mode().to_string(), f.lora_rank().to_string()),
            Err(_) => (r.finetune.clone(), String::new()),
        };
        let (reward, reward_model) = match r.reward.split_once(':') {
            Some((kind, model)) => (kind.to_string(), model.to_string()),
            None => (r.reward.clone(), String::new()),
        };
        w.write_record([
            r.run_id.clone(),
            r.model.clone(),
            finetune,
            lora_rank,
            reward,
            reward_model,
            r.group_size.to_string(),
            r.max_response_len.to_string(),
            r.update_epochs.to_string(),
            r.prompts_per_step.to_string(),
            number(r.pilot_budget),
            r.budget_unit.clone(),
            r.steps.to_string(),
            r.eval_every_steps.to_string(),
            number(r.update_fraction),
            number(r.cost_per_step),
            number(r.expected_usd),
            number(r.expected_gpu_hours),
            number(r.expected_wall_hours),
            number(r.prior_score),
        ])
        .expect("memory");
    }
    w.into_inner().expect("memory")
}

/// The `plan.csv` a plan argument names: the file itself, or `plan.csv` in a plan folder.
pub fn plan_csv_path(plan: &Path) -> PathBuf {
    if plan.is_dir() {
        plan.join("plan.csv")
    } else {
        plan.to_path_buf()
    }
}

/// Reads a plan: `plan.csv` and the `plan.json` beside it.
pub fn read_plan(csv_path: &Path) -> Result<Plan> {
    let info = read_plan_info(csv_path)?;
    let mut reader = csv::Reader::from_path(csv_path).map_err(|e| match e.kind() {
        csv::ErrorKind::Io(io) if io.kind() == std::io::ErrorKind::NotFound => Error::in_file(
            csv_path,
            None,
            "",
            "file not found; run `rlfrontier plan` first",
        ),
        _ => Error::in_file(csv_path, None, "", e.to_string()),
    })?;
    let headers = reader
        .headers()
        .map_err(|e| Error::in_file(csv_path, Some(1), "", e.to_string()))?
        .clone();
    for column in PLAN_COLUMNS {
        if !headers.iter().any(|h| h == column) {
            return Err(Error::in_file(
                csv_path,
                Some(1),
                column,
                "missing column; regenerate the plan with `rlfrontier plan`",
            ));
        }
    }
    let runs = read_runs(reader, csv_path)?;
    if runs.is_empty() {
        return Err(Error::in_file(csv_path, None, "", "the plan has no runs"));
    }
    Ok(Plan { info, runs })
}

/// The plan.json beside `csv_path`, refused when missing, not a plan, or when plan.csv has
/// changed since it was written (its digest).
fn read_plan_info(csv_path: &Path) -> Result<PlanInfo> {
    let json_path = csv_path.with_file_name("plan.json");
    let info_text = std::fs::read_to_string(&json_path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::in_file(
                &json_path,
                None,
                "",
                "missing: a plan is plan.csv plus plan.json, both written by `rlfrontier plan`",
            )
        } else {
            Error::io(&json_path, e)
        }
    })?;
    let info: PlanInfo = serde_json::from_str(&info_text).map_err(|e| {
        Error::in_file(
            &json_path,
            Some(e.line()),
            "",
            format!("not a plan.json written by rlfrontier: {e}"),
        )
    })?;
    if !info.plan_csv_sha256.is_empty()
        && let Ok(bytes) = std::fs::read(csv_path)
    {
        use sha2::Digest;
        if crate::format::hex(&sha2::Sha256::digest(&bytes)) != info.plan_csv_sha256 {
            return Err(Error::in_file(
                csv_path,
                None,
                "",
                "changed since `rlfrontier plan` wrote it (its steps and budgets drive the fit and the simulation); restore it or plan again",
            ));
        }
    }
    Ok(info)
}

/// The plan's runs, from its second line on: each a valid row with a safe, unique run id.
fn read_runs(mut reader: csv::Reader<std::fs::File>, csv_path: &Path) -> Result<Vec<PilotRun>> {
    let mut runs = Vec::new();
    for (k, record) in reader.deserialize::<PlanRow>().enumerate() {
        let line = k + 2;
        let run = record
            .map_err(|e| Error::in_file(csv_path, Some(line), "", format!("bad plan row: {e}")))?
            .into_run()
            .map_err(|(field, m)| Error::in_file(csv_path, Some(line), field, m))?;
        if !is_safe_id(&run.run_id) {
            return Err(Error::in_file(
                csv_path,
                Some(line),
                "run_id",
                format!(
                    "`{}` is not a run id: use letters, digits, `-`, `_` and `.`, starting with a letter or digit (it names files)",
                    run.run_id.escape_default()
                ),
            ));
        }
        if runs.iter().any(|r: &PilotRun| r.run_id == run.run_id) {
            return Err(Error::in_file(
                csv_path,
                Some(line),
                "run_id",
                format!("`{}` appears twice", run.run_id),
            ));
        }
        runs.push(run);
    }
    Ok(runs)
}

/// Whether `id` may name a file: 1-128 letters, digits, `-`, `_` or `.`, starting with a letter
/// or a digit (no path separators, no `..`, nothing a spreadsheet reads as a formula).
pub fn is_safe_id(id: &str) -> bool {
    let bytes = id.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && bytes[0].is_ascii_alphanumeric()
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
}

/// Loads the grid a plan was made from (or `override_grid`), checking it is the same file.
pub fn plan_grid(
    plan: &Plan,
    plan_path: &Path,
    override_grid: Option<&Path>,
    catalog: &Catalog,
) -> Result<Grid> {
    // The grid as named when planning (relative to the working directory then), else as seen
    // from the plan's folder (the working directory may have changed since).
    let from_plan = plan_path
        .parent()
        .map(|dir| dir.join(&plan.info.grid_file_from_plan))
        .filter(|p| !plan.info.grid_file_from_plan.is_empty() && p.is_file());
    let path: PathBuf = match override_grid {
        Some(p) => p.to_path_buf(),
        None => {
            let as_given = PathBuf::from(&plan.info.grid_file);
            if as_given.is_file() {
                as_given
            } else {
                from_plan.unwrap_or(as_given)
            }
        }
    };
    let grid = crate::spec::load(&path, catalog)?;
    if grid.sha256 != plan.info.grid_sha256 {
        return Err(Error::in_file(
            &plan_path.with_file_name("plan.json"),
            None,
            "grid_sha256",
            format!(
                "the plan was made from a different version of {} (hash {}…, now {}…); re-run `rlfrontier plan`, or pass ⟨grid⟩ with the original file",
                path.display(),
                &plan.info.grid_sha256[..12.min(plan.info.grid_sha256.len())],
                &grid.sha256[..12]
            ),
        ));
    }
    Ok(grid)
}

/// `to` as a path relative to the folder `from_dir` (both made absolute first); `to` as given
/// when either cannot be resolved.
pub fn relative_path(from_dir: &Path, to: &Path) -> String {
    let (Ok(from), Ok(target)) = (std::fs::canonicalize(from_dir), std::fs::canonicalize(to))
    else {
        return to.display().to_string();
    };
    let from: Vec<_> = from.components().collect();
    let target: Vec<_> = target.components().collect();
    let common = from.iter().zip(&target).take_while(|(a, b)| a == b).count();
    let mut rel = PathBuf::new();
    for _ in common..from.len() {
        rel.push("..");
    }
    for part in &target[common..] {
        rel.push(part.as_os_str());
    }
    rel.display().to_string()
}

/// The pilot budget as a [`Budget`].
pub fn pilot_budget(info: &PlanInfo) -> Result<Budget> {
    let unit = BudgetUnit::parse(&info.budget_unit)
        .map_err(|m| Error::in_file(Path::new("plan.json"), None, "budget_unit", m))?;
    Ok(Budget {
        amount: info.pilot_budget,
        unit,
    })
}
