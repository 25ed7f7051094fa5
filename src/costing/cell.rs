//! One grid cell as a `cost` request: the cell's levers and stop with the grid's own hardware,
//! task and run settings, so `cost --grid G --cell ID` prices exactly the row `sweep` wrote for
//! that cell (issue 52: `init`'s grid and `cost` had different defaults, and no way to price one
//! cell with the grid's settings existed).

use crate::catalog::Catalog;
use crate::config::{Levers, Ownership, SUPERVISED_DEFAULTS};
use crate::spec::Grid;

use super::{PricedStage, RunRequest, SupervisedData};

/// Why a cell cannot be priced on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CellError {
    /// The id is not below the grid's cell count.
    OutOfRange {
        /// The id asked for.
        id: u64,
        /// The grid's cell count.
        cells: u64,
    },
    /// The grid's constraints prune the cell (the sweep wrote no row for it).
    Pruned {
        /// The id asked for.
        id: u64,
    },
}

impl std::fmt::Display for CellError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CellError::OutOfRange { id, cells } => write!(
                f,
                "cell {id} is not in the grid: its cells are numbered 0 to {} (the `cell` column of cells.csv)",
                cells.saturating_sub(1)
            ),
            CellError::Pruned { id } => write!(
                f,
                "cell {id} is pruned by the grid's [constraints]: the sweep prices no such run; pick a cell id from cells.csv"
            ),
        }
    }
}

/// The request that prices cell `id` of `grid` with the grid's own settings: its model,
/// fine-tuning, reward, levers and budget or iterations, the hardware of its engine, the grid's
/// task and the run settings of its agent axes, and the grid's measured base score of its model.
pub fn request_of_cell(grid: &Grid, id: u64, catalog: Catalog) -> Result<RunRequest, CellError> {
    let cells = grid.cell_count().unwrap_or(u64::MAX);
    if id >= cells {
        return Err(CellError::OutOfRange { id, cells });
    }
    let cell = grid.cell(id).ok_or(CellError::Pruned { id })?;
    let config = cell.run_config(grid);
    Ok(RunRequest {
        stage: PricedStage::Rl(config.run.algorithm),
        policy: cell.model.clone(),
        reward: cell.reward.clone(),
        finetune: cell.finetune,
        hardware: config.hardware.clone(),
        task: *config.task,
        run: config.run.clone(),
        levers: Levers {
            prompts_per_step: cell.prompts_per_step,
            group_size: cell.group_size,
            max_response_len: cell.max_response_len,
            update_epochs: cell.update_epochs,
        },
        stop: cell.stop,
        // An RL run: the supervised stages' data is not read.
        supervised: SupervisedData {
            examples: 0.0,
            tokens_per_example: SUPERVISED_DEFAULTS.tokens_per_example,
            pairs: 0.0,
            tokens_per_pair: SUPERVISED_DEFAULTS.tokens_per_pair,
            epochs: 1,
            precomputed_reference: false,
        },
        ownership: Ownership::default(),
        gain_points: None,
        base_score: config.measured_base_score,
        catalog,
        cap_schedule: Vec::new(),
    })
}
