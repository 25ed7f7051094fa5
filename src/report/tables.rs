//! CSV and Markdown tables derived from a sweep: `frontier.csv`, `allocation_frontier.csv`,
//! `shortlist.csv`, `shortlist.md`.

use crate::analysis::decision::{Compared, Decision};
use crate::analysis::frontier::{Aggregate, CostBasis, Point, UPDATE_FRACTION_BIN};
use crate::analysis::shortlist::{Entry, Flag};
use crate::evaluate::cost_unit;
use crate::format::{money, number, percent};
use crate::report::parquet::{ColumnType, cells_column_type};
use crate::spec::Axis;
use crate::spec::{BudgetAxis, Grid};
use ColumnType::{Bool, Double, Int, Text};

/// A cell's axis values as table columns ([`Axis::CELL_COLUMNS`]: one quantity per column,
/// numbers as numbers, the fine-tuning mode beside its LoRA rank, the reward kind beside its
/// model, the budget's amount beside its unit, so the files merge and filter in pandas without
/// parsing), and as people write them ([`CellFields::label`]).
#[derive(Debug, Clone, PartialEq)]
pub struct CellFields {
    columns: [String; Axis::COLUMN_COUNT],
    labels: [String; Axis::COUNT],
}

/// Column names of [`CellFields::into_row`], in order; the same names as `cells.csv`.
pub const CELL_HEADER: [&str; Axis::COLUMN_COUNT] = Axis::CELL_COLUMNS;

impl CellFields {
    /// The table columns in [`CELL_HEADER`] order.
    pub fn into_row(self) -> [String; Axis::COLUMN_COUNT] {
        self.columns
    }

    /// The value in one of the [`CELL_HEADER`] columns (`finetune`: the mode alone).
    pub fn column(&self, name: &str) -> &str {
        let k = CELL_HEADER
            .iter()
            .position(|&c| c == name)
            .expect("a cell column");
        &self.columns[k]
    }

    /// The cell's value on `axis` as people write it: `qwen2.5-7b`, `lora:64`,
    /// `prm:qwen2.5-math-prm-7b`, `16`, `1e17 flops`, `100 iterations`.
    pub fn label(&self, axis: Axis) -> &str {
        &self.labels[axis as usize]
    }
}

/// The cell's axis values.
pub fn cell_fields(grid: &Grid, p: &Point) -> CellFields {
    let a = &grid.axes;
    let i = &p.indices;
    let mut columns = Axis::CELL_COLUMNS.map(|_| String::new());
    let values = Axis::ALL
        .iter()
        .flat_map(|&axis| a.cell_values(axis, i[axis]).iter());
    for (column, value) in columns.iter_mut().zip(values) {
        *column = value.to_string();
    }
    let labels = Axis::ALL.map(|axis| match axis {
        Axis::Budget => budget_label(grid, i[axis]),
        _ => a.label(axis, i[axis]),
    });
    CellFields { columns, labels }
}

/// The episode's shape in words, where the grid sweeps it or it is not single-turn
/// (`3 turns`, `tools 5 s`), and the engine where the grid sweeps engines.
fn setup_parts(grid: &Grid, f: &CellFields) -> (Vec<String>, Option<String>) {
    let mut episode = Vec::new();
    let turns = f.label(Axis::Turns);
    if grid.axes.turns.len() > 1 || turns != "1" {
        episode.push(format!("{turns} turns"));
    }
    if grid.axes.tool_seconds.len() > 1 {
        episode.push(format!("tools {} s", f.label(Axis::ToolSeconds)));
    }
    if grid.axes.judge.len() > 1 {
        episode.push(format!("judge {}", f.label(Axis::Judge)));
    }
    let engine = (grid.axes.engine.len() > 1).then(|| f.label(Axis::Engine).to_string());
    (episode, engine)
}

/// Whether the grid sweeps a setting beside the levers (engine, turns, tool latency, judge): the
/// shortlist tables then carry a `setup` column, so two regimes that differ only there can be
/// told apart.
pub fn sweeps_setup(grid: &Grid) -> bool {
    let a = &grid.axes;
    a.engine.len() > 1 || a.turns.len() > 1 || a.tool_seconds.len() > 1 || a.judge.len() > 1
}

/// The `setup` column: the episode's shape and the engine, comma-separated.
pub fn setup_label(grid: &Grid, f: &CellFields) -> String {
    let (mut parts, engine) = setup_parts(grid, f);
    parts.extend(engine);
    parts.join(", ")
}

/// A regime in a few words: `qwen2.5-32b full, rule, G 16, cap 8192, 2 epochs, 512 prompts`.
pub fn regime_label(grid: &Grid, p: &Point) -> String {
    let f = cell_fields(grid, p);
    let (episode, engine) = setup_parts(grid, &f);
    let episode: String = episode.iter().map(|part| format!(", {part}")).collect();
    let engine = engine.map(|e| format!(", {e}")).unwrap_or_default();
    format!(
        "{} {}, {}{episode}, G {}, cap {}, {} epoch{}, {} prompts{engine}",
        f.label(Axis::Model),
        f.label(Axis::Finetune),
        f.label(Axis::Reward),
        f.label(Axis::GroupSize),
        f.label(Axis::MaxResponseLen),
        f.label(Axis::UpdateEpochs),
        if f.label(Axis::UpdateEpochs) == "1" {
            ""
        } else {
            "s"
        },
        f.label(Axis::PromptsPerStep),
    )
}

/// A budget's amount and unit as two columns (`1e17`, `flops`; a fixed count: `100`,
/// `iterations`).
pub fn budget_columns(grid: &Grid, index: usize) -> (String, String) {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, amounts } => {
            (number(amounts[index]), unit.as_str().to_string())
        }
        BudgetAxis::Iterations(n) => (n[index].to_string(), "iterations".to_string()),
    }
}

/// A budget as written in the grid (`1e17 flops`, `100 iterations`).
pub fn budget_label(grid: &Grid, index: usize) -> String {
    match &grid.axes.budget {
        BudgetAxis::Budgets { unit, amounts } => {
            format!("{} {}", number(amounts[index]), unit.as_str())
        }
        BudgetAxis::Iterations(n) => format!("{} iterations", n[index]),
    }
}

/// The shortlist flags as columns: whether the regime sits at an edge of the grid and which
/// (`max_response_len:lower;prompts_per_step:lower`), whether a neighbour is infeasible and
/// which (`prompts_per_step=64:budget_below_one_iteration`). Calibration is a column of its own.
pub fn flag_columns(flags: &[Flag]) -> [String; 4] {
    let edges: Vec<String> = flags
        .iter()
        .filter_map(|f| match f {
            Flag::LowerEdge { axis, .. } => Some(format!("{axis}:lower")),
            Flag::UpperEdge { axis, .. } => Some(format!("{axis}:upper")),
            _ => None,
        })
        .collect();
    let neighbours: Vec<String> = flags
        .iter()
        .filter_map(|f| match f {
            Flag::InfeasibleNeighbour { axis, value, code } => {
                Some(format!("{axis}={value}:{code}"))
            }
            _ => None,
        })
        .collect();
    [
        (!edges.is_empty()).to_string(),
        edges.join(";"),
        (!neighbours.is_empty()).to_string(),
        neighbours.join(";"),
    ]
}

/// A small table (`frontier`, `allocation_frontier`, `shortlist`) with its declared schema: each
/// column's name and type, so `.parquet` types its columns from the declaration, never from the
/// values one sweep happened to write (a column of whole numbers is not an integer column when
/// it holds reals elsewhere).
#[derive(Debug, Clone, PartialEq)]
pub struct SmallTable {
    /// Column names and types, in order.
    pub columns: Vec<(String, ColumnType)>,
    /// Rows as the CSV writes them (an empty field is a null).
    pub rows: Vec<Vec<String>>,
}

impl SmallTable {
    /// A table of `leading` columns, the cell's axis columns ([`CELL_HEADER`], typed by their
    /// axes) and `trailing` columns.
    fn with_cell_columns(
        leading: &[(&str, ColumnType)],
        trailing: &[(&str, ColumnType)],
        rows: Vec<Vec<String>>,
    ) -> Self {
        let named = |&(name, t): &(&str, ColumnType)| (name.to_string(), t);
        let columns = leading
            .iter()
            .map(named)
            .chain(
                CELL_HEADER
                    .iter()
                    .map(|&name| (name.to_string(), cells_column_type(name))),
            )
            .chain(trailing.iter().map(named))
            .collect();
        SmallTable { columns, rows }
    }

    /// The CSV text: the header, then the rows.
    pub fn to_csv(&self) -> Vec<u8> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(self.columns.iter().map(|(name, _)| name))
            .expect("memory");
        for row in &self.rows {
            w.write_record(row).expect("memory");
        }
        w.into_inner().expect("memory")
    }
}

/// `frontier.csv`: the cost–score front in the grid's budget unit and in dollars, each sorted by
/// cost; `front` names the cost the front is drawn against, in `budget_unit` spelling (`flops`,
/// `gpu-h` or `usd`). `recommended` marks the cells that are a budget's recommendation (the
/// shortlist's rank 1; a recommendation off the front is not added to it).
pub fn frontier_csv(grid: &Grid, aggregate: &Aggregate, decisions: &[Decision]) -> SmallTable {
    let picks: Vec<u64> = decisions.iter().map(|d| d.recommended().point.id).collect();
    let unit = cost_unit(grid);
    let cost_column = format!("cost_{}", unit.replace('-', "_"));
    let mut trailing = vec![(cost_column.as_str(), Double)];
    trailing.extend(
        [
            "usd",
            "gpu_hours",
            "wall_hours",
            "predicted_score",
            "score_low",
            "score_high",
            "flops_share_search",
            "flops_share_learning",
            "flops_share_feedback",
            "usd_share_search",
            "usd_share_learning",
            "usd_share_feedback",
        ]
        .map(|name| (name, Double)),
    );
    trailing.push(("recommended", Bool));
    let mut rows = Vec::new();
    let bases: Vec<(CostBasis, &str)> = if unit == "usd" {
        vec![(CostBasis::BudgetUnit, "usd")]
    } else {
        vec![(CostBasis::BudgetUnit, unit), (CostBasis::Usd, "usd")]
    };
    for &(basis, label) in &bases {
        for p in aggregate.front(basis) {
            let mut row = vec![label.to_string(), p.id.to_string()];
            row.extend(cell_fields(grid, &p).into_row());
            row.extend(
                [
                    p.cost,
                    p.usd,
                    p.gpu_hours,
                    p.wall_hours,
                    p.score,
                    p.score_low,
                    p.score_high,
                    p.flops_shares[0],
                    p.flops_shares[1],
                    p.flops_shares[2],
                    p.usd_shares[0],
                    p.usd_shares[1],
                    p.usd_shares[2],
                ]
                .map(number),
            );
            row.push(picks.contains(&p.id).to_string());
            rows.push(row);
        }
    }
    SmallTable::with_cell_columns(&[("front", Text), ("cell_id", Int)], &trailing, rows)
}

/// `allocation_frontier.csv`: per model, reward and budget, the best predicted score in each bin
/// of the learning share of FLOPs (RACE's update fraction) and the cell attaining it (the RACE
/// picture as a table).
pub fn allocation_csv(grid: &Grid, aggregate: &Aggregate) -> SmallTable {
    let mut rows = Vec::new();
    for (&(_, _, _, bin), p) in &aggregate.allocation {
        let mut row = vec![
            number(bin as f64 * UPDATE_FRACTION_BIN),
            number((bin + 1) as f64 * UPDATE_FRACTION_BIN),
            p.id.to_string(),
        ];
        row.extend(cell_fields(grid, p).into_row());
        row.extend([p.update_fraction, p.score, p.score_low, p.score_high, p.usd].map(number));
        rows.push(row);
    }
    SmallTable::with_cell_columns(
        &[
            ("flops_share_learning_low", Double),
            ("flops_share_learning_high", Double),
            ("cell_id", Int),
        ],
        &[
            "flops_share_learning",
            "predicted_score",
            "score_low",
            "score_high",
            "usd",
        ]
        .map(|name| (name, Double)),
        rows,
    )
}

/// The shortlist's columns after the cell's own ([`CELL_HEADER`]): the prediction, the
/// comparison with rank 1, the gain over the base score, the validation run's price and the
/// flags.
const SHORTLIST_COLUMNS: [(&str, ColumnType); 25] = [
    ("predicted_score", Double),
    ("score_low", Double),
    ("score_high", Double),
    ("probability_best", Double),
    ("difference_to_rank_1", Double),
    ("difference_low", Double),
    ("difference_high", Double),
    ("gain_over_base", Double),
    ("gain_low", Double),
    ("gain_high", Double),
    ("indistinguishable_from_rank_1", Bool),
    ("base_score", Double),
    ("flops_share_learning", Double),
    ("validation_usd", Double),
    ("validation_gpu_hours", Double),
    ("validation_wall_hours", Double),
    ("iterations", Int),
    ("usd_per_point", Double),
    ("gpu_hours_per_point", Double),
    ("calibrated", Bool),
    ("at_grid_edge", Bool),
    ("edge_axes", Text),
    ("infeasible_neighbour", Bool),
    ("infeasible_neighbours", Text),
    ("folds", Text),
];

/// `shortlist.csv`: every budget's shortlist, each regime with its paired difference to the
/// budget's recommendation (rank 1; median and 90% interval from the joint draws), its gain over
/// its base score (the predicted score and its interval less the base) and its steps.
pub fn shortlist_csv(grid: &Grid, decisions: &[Decision]) -> SmallTable {
    let rows = decisions
        .iter()
        .flat_map(|d| {
            d.shortlist
                .iter()
                .zip(&d.compared)
                .enumerate()
                .map(move |(k, ec)| (d, k, ec))
        })
        .map(|(d, k, (e, c))| shortlist_row(grid, d, k, e, c))
        .collect();
    SmallTable::with_cell_columns(
        &[("budget_index", Int), ("rank", Int), ("cell_id", Int)],
        &SHORTLIST_COLUMNS,
        rows,
    )
}

/// One shortlist row: the entry's rank and cell, then [`SHORTLIST_COLUMNS`].
fn shortlist_row(grid: &Grid, d: &Decision, k: usize, e: &Entry, c: &Compared) -> Vec<String> {
    let p = &e.point;
    let mut row = vec![
        e.budget_index.to_string(),
        e.rank.to_string(),
        p.id.to_string(),
    ];
    row.extend(cell_fields(grid, p).into_row());
    row.extend(
        [
            p.score,
            p.score_low,
            p.score_high,
            e.probability_best,
            c.difference.median,
            c.difference.low,
            c.difference.high,
            c.gain.median,
            c.gain.low,
            c.gain.high,
        ]
        .map(number),
    );
    row.push(d.indistinguishable.contains(&k).to_string());
    row.extend(
        [
            p.base_score,
            p.update_fraction,
            p.usd,
            p.gpu_hours,
            p.wall_hours,
        ]
        .map(number),
    );
    row.push(p.iterations.to_string());
    row.push(e.usd_per_point.map(number).unwrap_or_default());
    row.push(
        crate::evaluate::usd_per_point(p.gpu_hours, p.score, p.base_score)
            .map(number)
            .unwrap_or_default(),
    );
    row.push((!e.flags.contains(&Flag::Uncalibrated)).to_string());
    row.extend(flag_columns(&e.flags));
    row.push(folds_column(grid, e));
    row
}

/// The `folds` column: each axis on which the regime's near-duplicate cells differ from one
/// another, with the values they take (`update_epochs:1|2;prompts_per_step:256|512`); empty
/// when the regime is its one cell.
fn folds_column(grid: &Grid, e: &Entry) -> String {
    crate::analysis::shortlist::spread(&e.members)
        .into_iter()
        .map(|(axis, indices)| {
            let values: Vec<String> = indices.iter().map(|&i| grid.axes.label(axis, i)).collect();
            format!("{axis}:{}", values.join("|"))
        })
        .collect::<Vec<_>>()
        .join(";")
}

/// A shortlist entry's cells as people read them: the cell's axis values and the formatted
/// numbers, shared by `shortlist.md` and `report.html`.
pub struct ShortlistCells {
    /// The cell's axis values.
    pub fields: CellFields,
    /// `score [low, high]`, three decimals.
    pub score: String,
    /// Probability of being the budget's best, a percentage.
    pub probability_best: String,
    /// Update fraction as a percentage.
    pub update_fraction: String,
    /// Validation-run dollars.
    pub usd: String,
    /// Validation-run steps (iterations).
    pub steps: String,
    /// Validation-run GPU-hours.
    pub gpu_hours: String,
    /// Validation-run wall-clock hours.
    pub wall_hours: String,
    /// `$` per point of predicted improvement, or `-`.
    pub usd_per_point: String,
}

/// The formatted cells of one shortlist entry.
pub fn shortlist_cells(grid: &Grid, e: &Entry) -> ShortlistCells {
    let p = &e.point;
    ShortlistCells {
        fields: cell_fields(grid, p),
        score: format!("{:.3} [{:.3}, {:.3}]", p.score, p.score_low, p.score_high),
        probability_best: format!("{:.0}%", 100.0 * e.probability_best),
        update_fraction: percent(p.update_fraction),
        usd: money(p.usd),
        steps: crate::format::thousands(p.iterations as f64),
        gpu_hours: money(p.gpu_hours),
        wall_hours: money(p.wall_hours),
        usd_per_point: e
            .usd_per_point
            .map(|x| format!("${}", money(x)))
            .unwrap_or_else(|| "-".to_string()),
    }
}

/// `shortlist.md`: the same, for people, each budget opened by its recommendation.
pub fn shortlist_markdown(grid: &Grid, decisions: &[Decision]) -> String {
    let mut md = format!("# Shortlist: grid `{}`\n\n", grid.name);
    md.push_str(&format!(
        "Per budget, the regimes most likely to be the best (P(best) from joint draws of the outcome model; \
         near-duplicates, the same engine, model, fine-tuning and reward within one grid step on turns, tool latency and every numeric axis, \
         count towards the regime they duplicate; the most likely regime is always listed, the others from {:.0}%). 90% predictive intervals. \
         \"vs rank 1\" is the paired difference to the recommendation in points, from the same draws: what two regimes share \
         (the model's parameters, the default base score of a model both train) cancels in it. \
         Predictions: **{}**. Treat them as a plan for validation runs, not as results.\n\n",
        100.0 * crate::analysis::shortlist::MIN_PROBABILITY_BEST,
        grid.outcome_state.label()
    ));
    if decisions.is_empty() {
        md.push_str("No feasible cell: see `infeasible_reason` in cells.csv.\n");
    }
    if let Some(trend) = super::recommendation::budget_trend_phrase(grid, decisions) {
        md.push_str(&format!(
            "Across budgets: {}.\n\n",
            crate::format::markdown_text(&trend)
        ));
    }
    for d in decisions {
        let b = d.budget_index;
        md.push_str(&format!("## Budget {}\n\n", budget_label(grid, b)));
        for sentence in super::recommendation::sentences(grid, d).all() {
            md.push_str(&format!("- {}\n", crate::format::markdown_text(sentence)));
        }
        md.push('\n');
        let entries = &d.shortlist;
        let setup = sweeps_setup(grid);
        let (setup_head, setup_rule) = if setup {
            (" setup |", "---|")
        } else {
            ("", "")
        };
        md.push_str(&format!("| rank | P(best) | model | finetune | reward |{setup_head} G | cap | epochs | prompts | score [low, high] | vs rank 1 | update fraction | validation run | $/point | folds |\n"));
        md.push_str(&format!(
            "|---:|---:|---|---|---|{setup_rule}---:|---:|---:|---:|---|---|---:|---:|---:|---|\n"
        ));
        for (e, compared) in entries.iter().zip(&d.compared) {
            let c = shortlist_cells(grid, e);
            let f = &c.fields;
            let setup_cell = if setup {
                format!(" {} |", setup_label(grid, f))
            } else {
                String::new()
            };
            md.push_str(&format!(
                "| {} | {} | {} | {} | {} |{setup_cell} {} | {} | {} | {} | {} | {} | {} | ${} ({} steps, {} GPU-h, {} h) | {} | {} |\n",
                e.rank,
                c.probability_best,
                f.label(Axis::Model),
                f.label(Axis::Finetune),
                f.label(Axis::Reward),
                f.label(Axis::GroupSize),
                f.label(Axis::MaxResponseLen),
                f.label(Axis::UpdateEpochs),
                f.label(Axis::PromptsPerStep),
                c.score,
                if e.rank == 1 {
                    "-".to_string()
                } else {
                    super::recommendation::points_interval(&compared.difference)
                },
                c.update_fraction,
                c.usd,
                c.steps,
                c.gpu_hours,
                c.wall_hours,
                c.usd_per_point,
                super::recommendation::spread_phrase(grid, &e.members)
                    .map(|f| crate::format::markdown_text(&f))
                    .unwrap_or_else(|| "-".to_string()),
            ));
        }
        md.push('\n');
        md.push_str(&flag_notes(entries));
        md.push('\n');
    }
    md
}

/// One markdown line per distinct flag of the shortlisted regimes (the calibration flag aside),
/// with the ranks it applies to: an edge most regimes share is said once.
fn flag_notes(entries: &[Entry]) -> String {
    let mut notes: Vec<(String, Vec<usize>)> = Vec::new();
    for e in entries {
        for f in e.flags.iter().filter(|f| **f != Flag::Uncalibrated) {
            let text = f.to_string();
            match notes.iter_mut().find(|(t, _)| *t == text) {
                Some((_, ranks)) => ranks.push(e.rank),
                None => notes.push((text, vec![e.rank])),
            }
        }
    }
    notes
        .into_iter()
        .map(|(text, ranks)| {
            let ranks: Vec<String> = ranks.iter().map(usize::to_string).collect();
            let which = if ranks.len() == entries.len() && entries.len() > 1 {
                "every rank".to_string()
            } else if ranks.len() == 1 {
                format!("rank {}", ranks[0])
            } else {
                format!("ranks {}", ranks.join(", "))
            };
            format!("- {which}: {text}\n")
        })
        .collect()
}
