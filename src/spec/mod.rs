//! Grid specs: parse a TOML grid, validate every value with a one-line error that names the file,
//! line and field, and expand it into cells decoded from their index (never materialised).
//!
//! The file format is documented in the book (docs/book/src/grid-spec.md); `grids/race-pilot.toml` is the
//! annotated example.

mod axes;
mod axes_table;
mod axis;
mod cells;
mod describe;
mod outcome_table;
mod raw;
mod sections;
mod validator;

use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

use crate::catalog::Catalog;
use crate::catalog::base_score::PublishedBase;
use crate::config::{Hardware, RunSettings, Task};
use crate::error::{Error, Result};
use crate::outcome::OutcomeParams;
pub use axes_table::MAX_BUDGET_VALUES;
use outcome_table::parse_outcome;
pub use outcome_table::{MAX_METRIC_NAME_CHARS, is_metric_name, outcome_from_toml};
use raw::{RawGrid, unknown_key_error};
use validator::Validator;

pub use axes::{Axes, AxisValue, AxisValues, BudgetAxis, JudgeChoice};
pub use axis::{Axis, ColumnKind, Lever};
pub use cells::{AxisIndices, Cell};
pub use describe::{describe, describe_json};

/// Prunes the product of axes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Constraints {
    /// Upper bound on rollouts per step, prompts × G (IsoCompute caps it by hardware).
    pub max_rollouts_per_step: Option<u64>,
    /// Lower bound on rollouts per step.
    pub min_rollouts_per_step: Option<u64>,
}

/// A validated grid.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Grid name (output folder name).
    pub name: String,
    /// What question the grid answers.
    pub description: String,
    /// Seed for anything random downstream.
    pub seed: u64,
    /// The file the grid came from.
    pub path: PathBuf,
    /// SHA-256 of the file's bytes, hex.
    pub sha256: String,
    /// Each setting of the run description (`config::setting::SETTINGS`) with the line of the
    /// file that gives it (its table's, or `[axes]` for a swept agent setting); None where the
    /// grid leaves it to the default. The manifest records it.
    pub setting_lines: Vec<(&'static str, Option<usize>)>,
    /// Cluster.
    pub hardware: Hardware,
    /// The cluster once per entry of `axes.engine` (the same settings, that engine): what each
    /// cell runs on.
    pub engine_hardware: Vec<Hardware>,
    /// The run settings once per combination of `axes.turns`, `axes.tool_seconds` and
    /// `axes.judge` (the same settings with that episode shape and judge), in that order, the
    /// last fastest: what each cell runs with ([`Grid::run_settings`]).
    pub agent_runs: Vec<RunSettings>,
    /// Task.
    pub task: Task,
    /// Run settings.
    pub run: RunSettings,
    /// Axes.
    pub axes: Axes,
    /// Pruning rules.
    pub constraints: Constraints,
    /// Target metric name, if given.
    pub metric: Option<String>,
    /// The kind of benchmark the target metric is (from its name; standard when none is given).
    pub benchmark: crate::outcome::Benchmark,
    /// The outcome prior's parameters (defaults, overridden by `[outcome]`, or calibrated).
    pub outcome: OutcomeParams,
    /// Whether `outcome` is the prior or a calibration.
    pub outcome_state: crate::outcome::OutcomeState,
    /// Measured pre-RL scores on the target metric (`[task] base_score`), one per entry of
    /// `axes.model` (None where the prior's own default applies). With several target metrics,
    /// those of the first.
    pub measured_base_scores: Vec<Option<f64>>,
    /// Per entry of `axes.model`: the published score its checkpoint's owner gives on the target
    /// metric, where `[task] base_score` gives none and one is published
    /// (`catalog::base_score`); `measured_base_scores` holds its value. With several target
    /// metrics, those of the first.
    pub published_base_scores: Vec<Option<PublishedBase>>,
    /// Per entry of `axes.model`: the score on the target metric that the model's base scores on
    /// the grid's other math metrics imply (`outcome::ability`; None without one). With several
    /// target metrics, those of the first.
    pub ability_scores: Vec<Option<f64>>,
    /// Every target metric with its base scores, when `[outcome] metrics` names two or more
    /// (empty otherwise). The first is the primary one, the same as `metric` and
    /// `measured_base_scores`.
    pub targets: Vec<TargetMetric>,
}

/// One target metric of a multi-metric grid and the models' measured scores on it before RL.
#[derive(Debug, Clone, PartialEq)]
pub struct TargetMetric {
    /// The metric's name (`[outcome] metrics`).
    pub name: String,
    /// Measured pre-RL scores, one per entry of the model axis (None: the prior's default).
    pub measured_base_scores: Vec<Option<f64>>,
    /// Per entry of the model axis, the published score behind its measured score, if any.
    pub published_base_scores: Vec<Option<PublishedBase>>,
    /// Per entry of the model axis, the score the model's base scores on the other metrics imply
    /// on this one (`outcome::ability`; None without one).
    pub ability_scores: Vec<Option<f64>>,
}

impl TargetMetric {
    /// The folder of this target's outputs under `targets/`: the metric name with every
    /// character other than letters, digits, `.`, `_` and `-` replaced by `_` (and never `.` or
    /// `..`).
    pub fn folder_name(&self) -> String {
        folder_name(&self.name)
    }
}

/// Per target metric, per model: the score the model's base scores on the other metrics imply
/// (`outcome::ability::implied_scores_of_metrics`); all None with fewer than two metrics.
fn grid_ability_scores(
    metrics: &[String],
    base_scores: &[Vec<Option<f64>>],
    models: usize,
) -> Vec<Vec<Option<f64>>> {
    let mut out = vec![vec![None; models]; metrics.len().max(1)];
    if metrics.len() < 2 {
        return out;
    }
    for model in 0..models {
        let of_model: Vec<(&str, Option<f64>)> = metrics
            .iter()
            .zip(base_scores)
            .map(|(name, scores)| (name.as_str(), scores[model]))
            .collect();
        for (k, implied) in crate::outcome::ability::implied_scores_of_metrics(&of_model)
            .into_iter()
            .enumerate()
        {
            out[k][model] = implied;
        }
    }
    out
}

fn folder_name(metric: &str) -> String {
    let name: String = metric
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .collect();
    if name.chars().all(|c| c == '.') {
        format!("metric_{}", name.len())
    } else {
        name
    }
}

impl Grid {
    /// The grid as seen from target metric `index` of [`Grid::targets`]: that metric and its base
    /// scores become the grid's own, and the view has no further targets. Frontiers, shortlist
    /// and report of a metric are those of its view.
    pub fn for_target(&self, index: usize) -> Grid {
        let target = &self.targets[index];
        Grid {
            metric: Some(target.name.clone()),
            benchmark: crate::outcome::Benchmark::of_metric(&target.name),
            measured_base_scores: target.measured_base_scores.clone(),
            published_base_scores: target.published_base_scores.clone(),
            ability_scores: target.ability_scores.clone(),
            targets: Vec::new(),
            ..self.clone()
        }
    }
}

/// The grids bundled into the binary, by name: (name, text). `sweep race-pilot` and
/// `grids/race-pilot.toml` outside the clone read these.
pub const BUNDLED_GRIDS: [(&str, &str); 7] = [
    ("race-pilot", include_str!("../../grids/race-pilot.toml")),
    ("dollars", include_str!("../../grids/dollars.toml")),
    ("agentic", include_str!("../../grids/agentic.toml")),
    ("targets", include_str!("../../grids/targets.toml")),
    ("isocompute", include_str!("../../grids/isocompute.toml")),
    ("big", include_str!("../../grids/big.toml")),
    ("ten-million", include_str!("../../grids/ten-million.toml")),
];

/// The bundled grid `path` names when no such file exists: a bundled name (`race-pilot`) or its
/// path in the repository (`grids/race-pilot.toml`).
pub fn bundled_grid(path: &Path) -> Option<&'static str> {
    let text = path.to_str()?;
    let name = text
        .strip_prefix("grids/")
        .and_then(|t| t.strip_suffix(".toml"))
        .unwrap_or(text);
    BUNDLED_GRIDS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// Reads, parses and validates a grid file (a bundled grid by name, or by its repository path
/// when run outside the clone).
pub fn load(path: &Path, catalog: &Catalog) -> Result<Grid> {
    if !path.exists() {
        if let Some(text) = bundled_grid(path) {
            let mut grid = parse(text, path, catalog)?;
            grid.sha256 = hex(&Sha256::digest(text.as_bytes()));
            return Ok(grid);
        }
        return Err(Error::in_file(
            path,
            None,
            "",
            format!(
                "file not found; check the path (bundled grids: {})",
                BUNDLED_GRIDS.map(|(n, _)| n).join(", ")
            ),
        ));
    }
    let bytes = crate::input::read_bytes(path, crate::input::MAX_CONFIG_BYTES)?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| {
        Error::in_file(
            path,
            None,
            "",
            "not valid UTF-8 text; save the grid as UTF-8",
        )
    })?;
    let mut grid = parse(&text, path, catalog)?;
    grid.sha256 = hex(&Sha256::digest(&bytes));
    Ok(grid)
}

/// Each declared setting with the line of `text` that gives it, if any.
fn setting_lines(text: &str) -> Vec<(&'static str, Option<usize>)> {
    use crate::toml_text::locate_key;
    crate::config::setting::SETTINGS
        .iter()
        .map(|def| {
            let line = match def.name {
                "pass_rate_concentration" => locate_key(text, Some("task"), "pass_rate"),
                name => locate_key(text, Some(def.table.name()), name)
                    .or_else(|| locate_key(text, Some("axes"), name)),
            };
            (def.name, line)
        })
        .collect()
}

/// Lower-case hex of bytes.
pub fn hex(bytes: &[u8]) -> String {
    crate::format::hex(bytes)
}

impl Grid {
    /// The run settings of a cell: the grid's `[run]` with the cell's episode shape (turns and
    /// tool latency) in its agent settings.
    pub fn run_settings(&self, i: &AxisIndices) -> &RunSettings {
        let a = &self.axes;
        &self.agent_runs[(i[Axis::Turns] * a.tool_seconds.len() + i[Axis::ToolSeconds])
            * a.judge.len()
            + i[Axis::Judge]]
    }
}

/// `[axes]`, with the episode's shape and judge that `[agent]` sets outside them.
fn parse_axes(
    raw_axes: Option<raw::RawAxes>,
    agent: &raw::RawAgent,
    v: &Validator,
    catalog: &Catalog,
    run: &RunSettings,
    hardware: &Hardware,
) -> Result<Axes> {
    let agent_judge_keys = [
        &agent.judge_api,
        &agent.judge_usd_per_million_input,
        &agent.judge_usd_per_million_output,
    ]
    .iter()
    .any(|k| k.is_some());
    axes_table::axes(
        raw_axes,
        v,
        catalog,
        run.algorithm,
        &hardware.engine,
        [
            (run.agent.turns, agent.turns.is_some()),
            (run.agent.tool_seconds, agent.tool_seconds.is_some()),
        ],
        (
            &run.agent,
            agent
                .judge_api
                .as_ref()
                .and_then(|s| s.get_ref().as_str().map(str::to_string)),
            agent_judge_keys,
        ),
    )
}

/// A grid's base scores on its first target metric, and every target with its own.
struct GridBaseScores {
    measured: Vec<Option<f64>>,
    published: Vec<Option<PublishedBase>>,
    ability: Vec<Option<f64>>,
    targets: Vec<TargetMetric>,
}

/// The base scores of every target metric: `[task] base_score`, then the published scores of
/// the checkpoints it leaves out, then what each model's scores on the other metrics imply.
fn grid_base_scores(
    value: &Option<validator::Spanned>,
    v: &Validator,
    axes: &Axes,
    outcome_table: &outcome_table::OutcomeTable,
) -> Result<GridBaseScores> {
    let metrics = &outcome_table.metrics;
    let mut base_scores = axes_table::base_scores(value, v, axes, metrics)?;
    let mut published = published_base_scores(
        &mut base_scores,
        metrics,
        outcome_table.metric.as_deref(),
        axes,
    );
    let mut ability = grid_ability_scores(metrics, &base_scores, axes.model.len());
    let targets = target_metrics(metrics, &base_scores, &published, &ability, v)?;
    Ok(GridBaseScores {
        measured: base_scores.swap_remove(0),
        published: published.swap_remove(0),
        ability: ability.swap_remove(0),
        targets,
    })
}

/// Fills each model's base score that `[task] base_score` leaves out, on each target metric
/// (`metrics` with two or more, else the grid's one `metric`), with the score its checkpoint's
/// owner published on that metric (`catalog::base_score::published`), and returns those
/// published scores in the same layout (None where the grid gave the score or none is
/// published). Without a named metric nothing is filled: the benchmark is unknown.
fn published_base_scores(
    base_scores: &mut [Vec<Option<f64>>],
    metrics: &[String],
    metric: Option<&str>,
    axes: &Axes,
) -> Vec<Vec<Option<PublishedBase>>> {
    let names: Vec<Option<&str>> = if metrics.len() >= 2 {
        metrics.iter().map(|m| Some(m.as_str())).collect()
    } else {
        vec![metric]
    };
    base_scores
        .iter_mut()
        .zip(names)
        .map(|(scores, name)| {
            scores
                .iter_mut()
                .zip(&axes.model)
                .map(|(score, model)| {
                    let found = score
                        .is_none()
                        .then(|| crate::catalog::base_score::published(&model.id, name?))
                        .flatten()?;
                    *score = Some(found.published.score);
                    Some(found)
                })
                .collect()
        })
        .collect()
}

/// The grid's target metrics after the first, when `[outcome] metrics` names two or more (none
/// otherwise), each with its measured and implied base scores; two metrics may not share an
/// output folder.
fn target_metrics(
    metrics: &[String],
    base_scores: &[Vec<Option<f64>>],
    published: &[Vec<Option<PublishedBase>>],
    ability: &[Vec<Option<f64>>],
    v: &Validator,
) -> Result<Vec<TargetMetric>> {
    if metrics.len() < 2 {
        return Ok(Vec::new());
    }
    let targets: Vec<TargetMetric> = metrics
        .iter()
        .zip(base_scores)
        .zip(published)
        .zip(ability)
        .map(|(((name, scores), published), implied)| TargetMetric {
            name: name.clone(),
            measured_base_scores: scores.clone(),
            published_base_scores: published.clone(),
            ability_scores: implied.clone(),
        })
        .collect();
    let mut folders = std::collections::BTreeSet::new();
    for t in &targets {
        if !folders.insert(t.folder_name()) {
            return Err(v.err(
                Some("outcome"),
                "metrics",
                format!(
                    "`{}` and another metric share the output folder `targets/{}`; rename one",
                    t.name,
                    t.folder_name()
                ),
            ));
        }
    }
    Ok(targets)
}

/// The run settings of each combination of the turns, tool-latency and judge values, each
/// checked (`[agent]`'s values may come from `[axes]`: a turns_cv needs more than one turn, a
/// p99 at least the mean latency); `swept` says whether `[axes]` sweeps them, so that a
/// message names the combination.
fn agent_runs(
    run: &RunSettings,
    axes: &Axes,
    swept: bool,
    v: &Validator,
) -> Result<Vec<RunSettings>> {
    let mut agent_runs =
        Vec::with_capacity(axes.turns.len() * axes.tool_seconds.len() * axes.judge.len());
    for &turns in &axes.turns {
        for &tool_seconds in &axes.tool_seconds {
            for judge in &axes.judge {
                let mut settings = run.clone();
                settings.agent.turns = turns;
                settings.agent.tool_seconds = tool_seconds;
                settings.agent.api_judge = judge.api;
                settings.agent.validate().map_err(|(key, message)| {
                    let from_axes = swept && (key == "turns" || key == "tool_seconds");
                    let section = if from_axes { "axes" } else { "agent" };
                    let message = if swept {
                        format!(
                            "with turns = {turns}, tool_seconds = {tool_seconds} and judge = {}: {message}",
                            judge.id
                        )
                    } else {
                        message
                    };
                    v.err(Some(section), key, message)
                })?;
                agent_runs.push(settings);
            }
        }
    }
    Ok(agent_runs)
}

/// Parses and validates grid text; `path` is used in messages only.
pub fn parse(text: &str, path: &Path, catalog: &Catalog) -> Result<Grid> {
    let raw: RawGrid = toml::from_str(text).map_err(|e| unknown_key_error(path, text, &e))?;
    let v = Validator { text, path };
    let (name, description, seed) = sections::header(&raw, &v)?;
    // [run] first: its framework decides the hardware's defaults (placement, engine settings).
    let mut run = sections::run(&raw.run, &v, catalog)?;
    run.agent = sections::agent(&raw.agent, &v, catalog)?;
    let hardware = sections::hardware(raw.hardware, &v, catalog, run.framework)?;
    // Whether `[axes]` sweeps the episode's shape (turns, tool latency): `[agent]`'s check then
    // names the combination.
    let swept = raw.axes.as_ref().is_some_and(|a| {
        [Axis::Turns, Axis::ToolSeconds, Axis::Judge]
            .iter()
            .any(|&axis| a.list(axis).is_some())
    });
    let axes = parse_axes(raw.axes, &raw.agent, &v, catalog, &run, &hardware)?;
    // veRL refuses a Ulysses degree that does not split the heads or the training GPUs.
    let training_gpus = crate::ledger::training_gpus(&hardware);
    let models = axes.model.iter().chain(run.critic.as_ref());
    if let Some(why) =
        crate::config::sequence_parallel_refusal(models, training_gpus, run.sequence_parallel)
    {
        return Err(v.err(Some("run"), "sequence_parallel", why));
    }
    for engine in std::iter::once(&hardware.engine).chain(&axes.engine) {
        if let Some(why) = crate::config::offload_per_step_refusal(&run, hardware.schedule, engine)
        {
            return Err(v.err(Some("run"), "offload_per_step", why));
        }
    }
    let largest_cap = axes.max_response_len.iter().copied().max().unwrap_or(1) as f64;
    let task = sections::task(&raw.task, &v, largest_cap)?;
    let constraints = axes_table::constraints(&raw.constraints, &v)?;
    let outcome_table = parse_outcome(&raw.outcome, &v)?;
    let bases = grid_base_scores(&raw.task.base_score, &v, &axes, &outcome_table)?;
    let (metric, outcome) = (outcome_table.metric, outcome_table.params);
    let engine_hardware = axes
        .engine
        .iter()
        .map(|engine| hardware.with_engine(engine))
        .collect();
    let agent_runs = agent_runs(&run, &axes, swept, &v)?;
    let grid = Grid {
        engine_hardware,
        agent_runs,
        name,
        description,
        seed,
        path: path.to_path_buf(),
        sha256: hex(&Sha256::digest(text.as_bytes())),
        setting_lines: setting_lines(text),
        hardware,
        task,
        run,
        axes,
        constraints,
        benchmark: metric.as_deref().map_or(
            crate::outcome::Benchmark::Standard,
            crate::outcome::Benchmark::of_metric,
        ),
        metric,
        outcome,
        outcome_state: crate::outcome::OutcomeState::Prior,
        measured_base_scores: bases.measured,
        published_base_scores: bases.published,
        ability_scores: bases.ability,
        targets: bases.targets,
    };
    grid.cell_count().map_err(|m| v.err(Some("axes"), "", m))?;
    if grid.valid_cell_count() == 0 {
        return Err(v.err(Some("constraints"), "", "the constraints exclude every combination of prompts_per_step and group_size; loosen max_rollouts_per_step / min_rollouts_per_step"));
    }
    Ok(grid)
}

#[cfg(test)]
mod tests;
