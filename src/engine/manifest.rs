//! `manifest.json`: what a result was computed with, written by `sweep` and `merge` and read
//! back by `merge` (one typed struct both ways, so the two cannot drift).

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::{CellsMode, SweepOptions, SweepSummary};
use crate::catalog::Catalog;
use crate::error::{Error, Result};
use crate::report::write_atomic;
use crate::spec::{BudgetAxis, Grid};

/// The grid a result came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestGrid {
    /// Grid name.
    pub name: String,
    /// The grid file as given on the command line.
    pub file: String,
    /// The grid file as seen from the output folder (so `merge` finds it from anywhere).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub file_from_output: String,
    /// SHA-256 of the grid file's bytes, hex.
    pub sha256: String,
    /// The grid's seed.
    pub seed: u64,
    /// `flops`, `gpu-h`, `usd` or `iterations`.
    pub budget_unit: String,
    /// Where each setting of the run description came from: `line N` of the grid file, or
    /// `default` (absent from manifests written before it was recorded).
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub settings: std::collections::BTreeMap<String, String>,
}

/// Which shard of how many (absent for a whole sweep).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ManifestShard {
    /// 0-based shard index.
    pub index: u64,
    /// Number of shards.
    pub count: u64,
    /// Data rows of the shard's `cells.csv` (absent with `--cells none`).
    #[serde(default)]
    pub cells_rows: Option<u64>,
    /// SHA-256 of the shard's `cells.csv`, which `merge` checks before using a row of it.
    #[serde(default)]
    pub cells_sha256: Option<String>,
    /// SHA-256 of the shard's `aggregate.json`, which `merge` checks before using any number of
    /// it (absent in shards of older versions, which `merge` refuses).
    #[serde(default)]
    pub aggregate_sha256: Option<String>,
}

/// Cell counts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestCells {
    /// Cells in the product of axes.
    pub total: u64,
    /// Cell ids in this shard's slice.
    pub in_slice: u64,
    /// Cells pruned by the constraints.
    pub pruned: u64,
    /// Cells evaluated.
    pub evaluated: u64,
    /// Of which feasible.
    pub feasible: u64,
    /// Infeasible cells per reason code.
    pub infeasible: BTreeMap<String, u64>,
}

/// The outcome model's state.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestOutcome {
    /// "prior (uncalibrated)" or "calibrated on N pilot runs, ...".
    pub state: String,
    /// Target metric, if the grid names one (the first of several).
    pub metric: Option<String>,
    /// Every target metric when the grid names several (`targets/<metric>/` holds the others'
    /// outputs); absent otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub targets: Vec<String>,
    /// The calibration file applied, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_file: Option<String>,
    /// SHA-256 of that file's bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub calibration_sha256: Option<String>,
}

/// `manifest.json`. Keys are written in sorted order (through `serde_json::Value`), so the file
/// is byte-identical for identical runs apart from `threads` and `elapsed_seconds`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Always "rlfrontier".
    pub tool: String,
    /// The tool's version.
    pub tool_version: String,
    /// The grid.
    pub grid: ManifestGrid,
    /// Catalog version (date).
    pub catalog_version: String,
    /// SHA-256 of the catalog's entries (`Catalog::sha256`): an override changes it.
    #[serde(default)]
    pub catalog_sha256: String,
    /// The model that computed the numbers ([`crate::identity::model_identity`]).
    #[serde(default)]
    pub model_identity: String,
    /// Which rows `cells.csv` holds.
    pub cells_mode: CellsMode,
    /// GPU id.
    pub gpu: String,
    /// Price used, US$ per GPU-hour.
    pub usd_per_gpu_hour: f64,
    /// The shard, for `sweep --shard I/N`.
    pub shard: Option<ManifestShard>,
    /// Cell counts.
    pub cells: ManifestCells,
    /// Files written, relative to the output folder.
    pub files: Vec<String>,
    /// The outcome model's state.
    pub outcome: ManifestOutcome,
    /// Worker threads (does not change any output).
    pub threads: usize,
    /// Wall-clock seconds (differs between identical runs).
    pub elapsed_seconds: f64,
}

impl Manifest {
    /// The manifest of a finished sweep.
    pub fn of(
        grid: &Grid,
        catalog: &Catalog,
        options: &SweepOptions,
        mode: CellsMode,
        summary: &SweepSummary,
    ) -> Self {
        let budget_unit = match &grid.axes.budget {
            BudgetAxis::Budgets { unit, .. } => unit.as_str(),
            BudgetAxis::Iterations(_) => "iterations",
        };
        Manifest {
            tool: "rlfrontier".to_string(),
            tool_version: crate::VERSION.to_string(),
            grid: ManifestGrid {
                name: grid.name.clone(),
                file: grid.path.display().to_string(),
                file_from_output: crate::pilot::relative_path(&options.out_dir, &grid.path),
                sha256: grid.sha256.clone(),
                seed: grid.seed,
                budget_unit: budget_unit.to_string(),
                settings: grid
                    .setting_lines
                    .iter()
                    .map(|&(name, line)| {
                        let source = line.map_or("default".to_string(), |l| format!("line {l}"));
                        (name.to_string(), source)
                    })
                    .collect(),
            },
            catalog_version: catalog.version.clone(),
            catalog_sha256: catalog.sha256(),
            model_identity: crate::identity::model_identity().to_string(),
            cells_mode: mode,
            gpu: grid.hardware.gpu.id.clone(),
            usd_per_gpu_hour: grid.hardware.usd_per_gpu_hour,
            shard: options.shard.map(|(index, count)| ManifestShard {
                index,
                count,
                cells_rows: summary.cells_digest.as_ref().map(|d| d.0),
                cells_sha256: summary.cells_digest.as_ref().map(|d| d.1.clone()),
                aggregate_sha256: summary.aggregate_sha256.clone(),
            }),
            cells: ManifestCells {
                total: summary.cells_total,
                in_slice: summary.cells_in_slice,
                pruned: summary.cells_pruned,
                evaluated: summary.cells_evaluated,
                feasible: summary.cells_feasible,
                infeasible: summary.infeasible_by_code.iter().cloned().collect(),
            },
            files: summary
                .files
                .iter()
                .filter_map(|f| f.strip_prefix(&options.out_dir).ok())
                .map(|f| f.display().to_string())
                .collect(),
            outcome: ManifestOutcome {
                state: grid.outcome_state.label(),
                metric: grid.metric.clone(),
                targets: grid.targets.iter().map(|t| t.name.clone()).collect(),
                calibration_file: match &grid.outcome_state {
                    crate::outcome::OutcomeState::Calibrated { file, .. } => Some(file.clone()),
                    crate::outcome::OutcomeState::Prior => None,
                },
                calibration_sha256: match &grid.outcome_state {
                    crate::outcome::OutcomeState::Calibrated { sha256, .. } => Some(sha256.clone()),
                    crate::outcome::OutcomeState::Prior => None,
                },
            },
            threads: summary.threads,
            elapsed_seconds: summary.elapsed_seconds,
        }
    }

    /// Reads a manifest, with the file and line of what is wrong.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
        serde_json::from_str(&text).map_err(|e| {
            Error::in_file(
                path,
                Some(e.line()),
                "",
                format!("not a sweep manifest: {e}"),
            )
        })
    }

    /// The JSON text: pretty-printed with sorted keys and a final newline.
    pub fn to_json_text(&self) -> String {
        let value = serde_json::to_value(self).expect("a manifest is plain data");
        let mut text = serde_json::to_string_pretty(&value).expect("json");
        text.push('\n');
        text
    }

    /// Writes `manifest.json` into `out_dir` atomically.
    pub fn write(&self, out_dir: &Path) -> Result<()> {
        write_atomic(
            &out_dir.join("manifest.json"),
            self.to_json_text().as_bytes(),
        )
    }
}
