//! `calibration.json`: the outcome prior's parameters fitted by `rlfrontier fit`, with the grid
//! and tool they belong to and their cross-validated errors. `sweep --calibration FILE` applies it
//! after checking that it was made for the same grid file and the same tool version.

use sha2::Digest;
use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::outcome::{OutcomeParams, OutcomeState, PARAM_NAMES, Param};
use crate::spec::Grid;

/// A parameter's value and interval in the file.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ParamEntry {
    /// Point value.
    pub value: f64,
    /// Low end.
    pub low: f64,
    /// High end.
    pub high: f64,
}

/// The file's contents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CalibrationFile {
    /// Always "rlfrontier".
    pub tool: String,
    /// Version of the tool that wrote it.
    pub tool_version: String,
    /// Grid name.
    pub grid_name: String,
    /// SHA-256 of the grid file.
    pub grid_sha256: String,
    /// The held-out metric fitted.
    pub metric: String,
    /// Runs used.
    pub runs: usize,
    /// Checkpoints used.
    pub checkpoints: usize,
    /// Fitted parameter names.
    pub free: Vec<String>,
    /// Every parameter (fitted or as given).
    pub params: BTreeMap<String, ParamEntry>,
    /// Uncalibrated prior's run-weighted RMSE.
    pub prior_rmse: f64,
    /// Calibrated in-sample RMSE.
    pub fit_rmse: f64,
    /// Leave-one-run-out RMSE.
    pub loro_rmse: Option<f64>,
    /// Leave-one-model-size-out RMSE.
    pub lomso_rmse: Option<f64>,
    /// Successful bootstrap replicates over runs.
    pub bootstrap_replicates: usize,
    /// Seed of the bootstrap.
    pub seed: u64,
    /// For each fitted parameter: "data" when the pilots decided it, "prior" when the prior did.
    #[serde(default)]
    pub decided_by: BTreeMap<String, String>,
    /// The model that fitted it ([`crate::identity::model_identity`]; empty in files of older
    /// versions).
    #[serde(default)]
    pub model_identity: String,
}

impl CalibrationFile {
    /// Parameters from the file's table.
    pub fn outcome_params(&self, path: &Path) -> Result<OutcomeParams> {
        let mut params = OutcomeParams::default();
        for name in PARAM_NAMES {
            let Some(e) = self.params.get(name) else {
                return Err(Error::in_file(
                    path,
                    None,
                    &format!("params.{name}"),
                    "missing; regenerate the file with `rlfrontier fit`",
                ));
            };
            *params.get_mut(name).expect("listed") = Param {
                value: e.value,
                low: e.low,
                high: e.high,
            };
        }
        params
            .validate()
            .map_err(|m| Error::in_file(path, None, "params", m))?;
        Ok(params)
    }
}

/// Entries of every parameter.
pub fn entries(params: &OutcomeParams) -> BTreeMap<String, ParamEntry> {
    PARAM_NAMES
        .iter()
        .map(|n| {
            let p = params.get(n).expect("listed");
            (
                n.to_string(),
                ParamEntry {
                    value: p.value,
                    low: p.low,
                    high: p.high,
                },
            )
        })
        .collect()
}

/// Reads a calibration file and applies it to a grid, refusing files made for another grid or
/// another tool version.
pub fn apply(grid: &mut Grid, path: &Path) -> Result<()> {
    let (file, text) = read_calibration_file(path)?;
    if file.grid_name != grid.name || file.grid_sha256 != grid.sha256 {
        return Err(Error::in_file(
            path,
            None,
            "grid_sha256",
            format!(
                "calibrated for grid `{}` ({}…), not this grid `{}` ({}…); calibrate on pilots of this grid, or sweep the grid the pilots came from",
                file.grid_name,
                &file.grid_sha256[..12.min(file.grid_sha256.len())],
                grid.name,
                &grid.sha256[..12.min(grid.sha256.len())]
            ),
        ));
    }
    check_fitted(&file, path)?;
    grid.outcome = file.outcome_params(path)?;
    grid.outcome_state = OutcomeState::Calibrated {
        runs: file.runs,
        loro_rmse: file.loro_rmse,
        prior_rmse: file.prior_rmse,
        file: path.display().to_string(),
        sha256: crate::spec::hex(&sha2::Sha256::digest(text.as_bytes())),
    };
    Ok(())
}

/// Reads and parses a calibration file: refused when missing, not JSON of this shape, or written
/// by another tool or version. The file with its text (for its digest).
fn read_calibration_file(path: &Path) -> Result<(CalibrationFile, String)> {
    crate::input::check_regular_file(path, crate::input::MAX_CONFIG_BYTES)?;
    let text = std::fs::read_to_string(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::in_file(
                path,
                None,
                "",
                "file not found; `rlfrontier fit` writes calibration.json into its ⟨out⟩ folder",
            )
        } else {
            Error::io(path, e)
        }
    })?;
    let file: CalibrationFile = serde_json::from_str(&text).map_err(|e| {
        Error::in_file(
            path,
            Some(e.line()),
            "",
            format!("not a calibration file written by rlfrontier: {e}"),
        )
    })?;
    if file.tool != "rlfrontier" {
        return Err(Error::in_file(
            path,
            None,
            "tool",
            "not written by rlfrontier",
        ));
    }
    if file.tool_version != crate::VERSION {
        return Err(Error::in_file(
            path,
            None,
            "tool_version",
            format!(
                "written by rlfrontier {}, this is {}; re-run `rlfrontier fit` with this version",
                file.tool_version,
                crate::VERSION
            ),
        ));
    }
    Ok((file, text))
}

/// A calibration must have been fitted to something (at least one run with checkpoints), with
/// errors that are errors (finite, 0 or more).
fn check_fitted(file: &CalibrationFile, path: &Path) -> Result<()> {
    let bad_error = |x: f64| !(x.is_finite() && x >= 0.0);
    if file.runs == 0 || file.checkpoints < file.runs {
        return Err(Error::in_file(
            path,
            None,
            "runs",
            format!(
                "claims {} runs and {} checkpoints; a calibration needs at least one run with checkpoints: re-run `rlfrontier fit`",
                file.runs, file.checkpoints
            ),
        ));
    }
    for (field, value) in [
        ("prior_rmse", Some(file.prior_rmse)),
        ("fit_rmse", Some(file.fit_rmse)),
        ("loro_rmse", file.loro_rmse),
        ("lomso_rmse", file.lomso_rmse),
    ] {
        if let Some(x) = value
            && bad_error(x)
        {
            return Err(Error::in_file(
                path,
                None,
                field,
                format!(
                    "{x} is not an error (a finite number, 0 or more): the file was edited or damaged; re-run `rlfrontier fit`"
                ),
            ));
        }
    }
    Ok(())
}
