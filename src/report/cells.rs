//! `cells.csv`: one row per evaluated cell. The row is a struct ([`CellRow`]); its field names
//! are the CSV header, so a column cannot be added to the rows without reaching the header.

use serde::ser::SerializeStruct;
use serde::{Serialize, Serializer};

use crate::evaluate::{Evaluated, usd_per_point};
use crate::ledger::{Bucket, Phase};
use crate::report::columns::{ColumnCollector, ColumnError, ColumnValue};
use crate::spec::{Axes, Axis, AxisIndices, AxisValue};

/// A number as the tables write it (`crate::format::number`: about seven significant digits,
/// trailing zeros trimmed; empty when not finite).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Num(pub f64);

impl Serialize for Num {
    /// The text, empty when not finite. (Typed columns hold the double that text parses to:
    /// `report::columns::ColumnValue`.)
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(crate::format::number_text(self.0).as_str())
    }
}

/// A cell's values on every axis, as the columns [`Axis::CELL_COLUMNS`] of a row: written from
/// the grid's axes ([`Axes::cell_values`]), so a new axis reaches every cell table without a
/// field here. The default (no grid) writes empty columns: only the header is read from it.
#[derive(Debug, Clone, Copy, Default)]
pub struct CellAxes<'g> {
    axes: Option<&'g Axes>,
    indices: AxisIndices,
}

impl<'g> CellAxes<'g> {
    /// The cell at `indices` of `axes`.
    pub fn new(axes: &'g Axes, indices: AxisIndices) -> Self {
        CellAxes {
            axes: Some(axes),
            indices,
        }
    }

    /// The values in column order (none without a grid).
    fn values(&self) -> impl Iterator<Item = AxisValue<'g>> + '_ {
        self.axes.into_iter().flat_map(move |axes| {
            Axis::ALL
                .into_iter()
                .flat_map(move |axis| axes.cell_values(axis, self.indices[axis]).iter())
        })
    }

    /// Calls `f` with each column's name and value in order (nothing without a grid): the one
    /// walk over the axes both the CSV row and the typed columns are written from.
    fn try_for_each_column<E>(
        &self,
        mut f: impl FnMut(&'static str, AxisValue<'g>) -> Result<(), E>,
    ) -> Result<(), E> {
        let Some(axes) = self.axes else {
            return Ok(());
        };
        for axis in Axis::ALL {
            let values = axes.cell_values(axis, self.indices[axis]);
            for (&name, &value) in axis.columns().iter().zip(values.as_slice()) {
                f(name, value)?;
            }
        }
        Ok(())
    }

    /// Serialises the columns as fields of the row's struct (empty ones without a grid: the
    /// header row).
    fn serialize_fields<S: SerializeStruct>(&self, row: &mut S) -> Result<(), S::Error> {
        if self.axes.is_none() {
            for name in Axis::CELL_COLUMNS {
                row.serialize_field(name, "")?;
            }
            return Ok(());
        }
        self.try_for_each_column(|name, value| match value {
            AxisValue::Text(text) => row.serialize_field(name, text),
            AxisValue::Count(n) => row.serialize_field(name, &n),
            AxisValue::Real(x) => row.serialize_field(name, &Num(x)),
            AxisValue::Number(text) => row.serialize_field(name, &text),
        })
    }
}

impl PartialEq for CellAxes<'_> {
    /// The same values in every column.
    fn eq(&self, other: &Self) -> bool {
        self.axes.is_some() == other.axes.is_some() && self.values().eq(other.values())
    }
}

impl ColumnValue for CellAxes<'_> {
    /// The values in typed columns: ids as text, counts as integers, reals as doubles, the
    /// budget's amount as its text.
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        self.try_for_each_column(|_, value| match value {
            AxisValue::Text(text) => text.file(columns),
            AxisValue::Count(n) => n.file(columns),
            AxisValue::Real(x) => Num(x).file(columns),
            AxisValue::Number(text) => text.file(columns),
        })
    }
}

/// Defines a row struct with a cell's axis columns ([`CellAxes`]) after its leading fields, and
/// serialises and files it field after field in the struct's order (the CSV's column order): one
/// field list, so the serialised row (`cells.csv`) and the filed one (`cells.parquet`, the
/// Python tables) cannot disagree on the columns.
macro_rules! table_row {
    (
        $(#[$meta:meta])*
        pub struct $name:ident<$lt:lifetime> {
            $( $(#[$lead_meta:meta])* pub $lead:ident : $lead_ty:ty, )*
            @axes $(#[$axes_meta:meta])* pub $axes:ident : $axes_ty:ty,
            $( $(#[$field_meta:meta])* pub $field:ident : $ty:ty, )*
        }
    ) => {
        $(#[$meta])*
        pub struct $name<$lt> {
            $( $(#[$lead_meta])* pub $lead: $lead_ty, )*
            $(#[$axes_meta])* pub $axes: $axes_ty,
            $( $(#[$field_meta])* pub $field: $ty, )*
        }

        impl Serialize for $name<'_> {
            /// The fields as named columns, the axes' columns in their place.
            fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                let count = [$(stringify!($lead),)* $(stringify!($field),)*].len()
                    + Axis::COLUMN_COUNT;
                let mut row = serializer.serialize_struct(stringify!($name), count)?;
                $( row.serialize_field(stringify!($lead), &self.$lead)?; )*
                self.$axes.serialize_fields(&mut row)?;
                $( row.serialize_field(stringify!($field), &self.$field)?; )*
                row.end()
            }
        }

        impl ColumnValue for $name<'_> {
            /// The row's fields in column order.
            fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
                $( self.$lead.file(columns)?; )*
                self.$axes.file(columns)?;
                $( self.$field.file(columns)?; )*
                Ok(())
            }
        }
    };
}

table_row! {
    /// One row of `cells.csv`. Field order is column order; the book's outputs chapter (docs/book/src/outputs.md)
    /// documents each column. Prediction columns are empty for infeasible cells.
    #[derive(Debug, Clone, Default, PartialEq)]
    #[allow(missing_docs)] // the column contract is documented in the book (docs/book/src/outputs.md)
    pub struct CellRow<'g> {
        pub cell_id: u64,
        @axes
        /// The cell's axis values ([`Axis::CELL_COLUMNS`]).
        pub axes: CellAxes<'g>,
        pub iterations: u64,
        pub rollouts: Num,
        pub mean_response_tokens: Num,
        pub truncation_rate: Num,
        pub zero_signal_rate: Num,
        pub flops_search: Num,
        pub flops_learning: Num,
        pub flops_feedback: Num,
        pub flops_total: Num,
        pub flops_share_search: Num,
        pub flops_share_learning: Num,
        pub flops_share_feedback: Num,
        pub gpu_hours_search: Num,
        pub gpu_hours_learning: Num,
        pub gpu_hours_feedback: Num,
        pub gpu_hours: Num,
        pub usd: Num,
        pub usd_share_search: Num,
        pub usd_share_learning: Num,
        pub usd_share_feedback: Num,
        pub wall_hours: Num,
        pub feasible: bool,
        pub infeasible_reason: String,
        pub infeasible_code: &'static str,
        pub step_seconds: Num,
        pub usd_per_step: Num,
        pub generated_tokens: Num,
        pub straggler_response_tokens: Num,
        pub tensor_parallel: u64,
        pub sequences_in_flight: Num,
        pub training_memory_gb_per_gpu: Num,
        pub waste_zero_signal_usd: Num,
        pub waste_truncated_usd: Num,
        pub waste_straggler_gpu_hours: Num,
        /// Seconds the cluster waits for tools over the run (multi-turn episodes).
        pub environment_seconds: Num,
        /// Sandbox dollars over the run (tool calls and reward tests), outside the GPU-hours.
        pub environment_usd: Num,
        /// API judge dollars over the run, outside the GPU-hours.
        pub api_usd: Num,
        pub predicted_score: Option<Num>,
        pub score_low: Option<Num>,
        pub score_high: Option<Num>,
        pub base_score: Num,
        pub usd_per_point: Option<Num>,
        pub gpu_hours_per_point: Option<Num>,
        pub step_seconds_low: Option<Num>,
        pub step_seconds_high: Option<Num>,
        pub iterations_low: Option<Num>,
        pub iterations_high: Option<Num>,
        pub usd_low: Option<Num>,
        pub usd_high: Option<Num>,
        pub on_frontier: bool,
    }
}

impl<'g> CellRow<'g> {
    /// The row of an evaluated cell of `axes` (its text borrowed from the grid and its catalog:
    /// a row allocates only an infeasible cell's reason), with the price's 90% interval
    /// (`costing::price_interval`) when there is one: on the steps a dollar or GPU-hour budget
    /// buys, on the dollars of a FLOP or iteration budget, on the step's seconds always.
    pub fn of(
        axes: &'g Axes,
        e: &Evaluated<'g>,
        on_frontier: bool,
        interval: Option<&crate::ledger::accuracy::PriceInterval>,
    ) -> Self {
        let (cell, ledger, prediction) = (&e.cell, &e.ledger, &e.prediction);
        let feasible = ledger.feasible();
        let bands = interval
            .filter(|_| feasible)
            .map(|i| IntervalColumns::of(axes, ledger, i))
            .unwrap_or_default();
        let iterations = ledger.iterations as f64;
        let predicted = |x: f64| feasible.then_some(Num(x));
        let per_point = |spend: f64| {
            feasible
                .then(|| usd_per_point(spend, prediction.score, prediction.base_score))
                .flatten()
                .map(Num)
        };
        CellRow {
            cell_id: cell.id,
            axes: CellAxes::new(axes, cell.indices),
            iterations: ledger.iterations,
            rollouts: Num(ledger.tokens.rollouts_per_step * iterations),
            mean_response_tokens: Num(ledger.tokens.mean_response_tokens),
            truncation_rate: Num(ledger.tokens.truncation_rate),
            zero_signal_rate: Num(ledger.tokens.zero_signal_rate),
            flops_search: Num(ledger.flops(Bucket::Search)),
            flops_learning: Num(ledger.flops(Bucket::Learning)),
            flops_feedback: Num(ledger.flops(Bucket::Feedback)),
            flops_total: Num(ledger.total_flops()),
            flops_share_search: Num(ledger.flops_share(Bucket::Search)),
            flops_share_learning: Num(ledger.flops_share(Bucket::Learning)),
            flops_share_feedback: Num(ledger.flops_share(Bucket::Feedback)),
            gpu_hours_search: Num(ledger.gpu_hours(Bucket::Search)),
            gpu_hours_learning: Num(ledger.gpu_hours(Bucket::Learning)),
            gpu_hours_feedback: Num(ledger.gpu_hours(Bucket::Feedback)),
            gpu_hours: Num(ledger.total_gpu_hours()),
            usd: Num(ledger.total_usd()),
            usd_share_search: Num(ledger.usd_share(Bucket::Search)),
            usd_share_learning: Num(ledger.usd_share(Bucket::Learning)),
            usd_share_feedback: Num(ledger.usd_share(Bucket::Feedback)),
            wall_hours: Num(ledger.wall_hours()),
            feasible,
            infeasible_reason: ledger.infeasible.map(|r| r.to_string()).unwrap_or_default(),
            infeasible_code: ledger.infeasible.map(|r| r.code()).unwrap_or_default(),
            step_seconds: Num(ledger.step_seconds),
            usd_per_step: Num(ledger.total_usd_per_step()),
            generated_tokens: Num(ledger.tokens.generated_tokens_per_step * iterations),
            straggler_response_tokens: Num(ledger.tokens.straggler_response_tokens),
            tensor_parallel: ledger.decode.tensor_parallel,
            sequences_in_flight: Num(ledger.decode.sequences_in_flight),
            training_memory_gb_per_gpu: Num(ledger.training_memory_gb_per_gpu),
            waste_zero_signal_usd: Num(ledger.waste.zero_signal_usd),
            waste_truncated_usd: Num(ledger.waste.truncated_usd),
            waste_straggler_gpu_hours: Num(ledger.waste.straggler_idle_gpu_hours),
            environment_seconds: Num(ledger.phase(Phase::Environment).seconds * iterations),
            environment_usd: Num(ledger.environment_usd_per_step * iterations),
            api_usd: Num(ledger.api_usd_per_step * iterations),
            predicted_score: predicted(prediction.score),
            score_low: predicted(prediction.score_low),
            score_high: predicted(prediction.score_high),
            base_score: Num(prediction.base_score),
            usd_per_point: per_point(ledger.total_usd()),
            gpu_hours_per_point: per_point(ledger.total_gpu_hours()),
            step_seconds_low: bands.step_seconds.map(|b| Num(b.0)),
            step_seconds_high: bands.step_seconds.map(|b| Num(b.1)),
            iterations_low: bands.iterations.map(|b| Num(b.0)),
            iterations_high: bands.iterations.map(|b| Num(b.1)),
            usd_low: bands.usd.map(|b| Num(b.0)),
            usd_high: bands.usd.map(|b| Num(b.1)),
            on_frontier,
        }
    }
}

/// A cell's 90% price interval as low/high pairs (see [`CellRow::of`]).
#[derive(Debug, Clone, Copy, Default)]
struct IntervalColumns {
    step_seconds: Option<(f64, f64)>,
    iterations: Option<(f64, f64)>,
    usd: Option<(f64, f64)>,
}

impl IntervalColumns {
    /// Under a dollar or GPU-hour budget the dollars are fixed and the steps move; under a FLOP
    /// or iteration budget the steps are fixed and the dollars move.
    fn of(
        axes: &Axes,
        ledger: &crate::ledger::Ledger,
        i: &crate::ledger::accuracy::PriceInterval,
    ) -> Self {
        use crate::config::BudgetUnit;
        let iterations = ledger.iterations as f64;
        let usd = ledger.total_usd();
        let fixed_dollars = matches!(
            &axes.budget,
            crate::spec::BudgetAxis::Budgets {
                unit: BudgetUnit::Usd | BudgetUnit::GpuHours,
                ..
            }
        );
        let (steps, dollars) = if fixed_dollars {
            let (low, high) = i.of_steps(iterations);
            ((low.floor(), high.floor()), (usd, usd))
        } else {
            ((iterations, iterations), i.of(usd))
        };
        IntervalColumns {
            step_seconds: Some(i.of(ledger.step_seconds)),
            iterations: Some(steps),
            usd: Some(dollars),
        }
    }
}

/// The header line of `cells.csv`, taken from [`CellRow`]'s field names.
pub fn cells_header() -> Vec<u8> {
    header_of::<CellRow>()
}

/// The CSV header line of a row struct: its field names (the csv crate writes them before the
/// first serialised struct; the row itself is dropped).
pub fn header_of<T: Serialize + Default>() -> Vec<u8> {
    let mut writer = csv::Writer::from_writer(Vec::new());
    writer
        .serialize(T::default())
        .expect("writing to memory cannot fail");
    let bytes = writer.into_inner().expect("flushing memory cannot fail");
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .expect("a header line")
        + 1;
    bytes[..end].to_vec()
}

/// A whole CSV table from row structs: the header (even with no rows), then the rows.
pub fn csv_table<T: Serialize + Default>(rows: &[T]) -> Vec<u8> {
    let mut bytes = header_of::<T>();
    let mut writer = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for row in rows {
        writer
            .serialize(row)
            .expect("writing to memory cannot fail");
    }
    bytes.extend(writer.into_inner().expect("flushing memory cannot fail"));
    bytes
}

/// Starts `out_dir/cells.csv`: staged under a temporary name with its header (the row's
/// columns, then `extra_columns`) written; returns the staged file and its temporary path (for
/// error messages).
pub fn start_cells_csv(
    out_dir: &std::path::Path,
    extra_columns: &[String],
) -> crate::error::Result<(super::AtomicFile, std::path::PathBuf)> {
    use std::io::Write;
    let mut file = super::AtomicFile::create(&out_dir.join("cells.csv"))?;
    let temp = file.temp_path().to_path_buf();
    let mut header = cells_header();
    if !extra_columns.is_empty() {
        header.pop(); // the newline
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.write_record(extra_columns)
            .expect("writing to memory cannot fail");
        header.push(b',');
        header.extend(w.into_inner().expect("flushing memory cannot fail"));
    }
    file.writer()
        .write_all(&header)
        .map_err(|e| crate::error::Error::io(&temp, e))?;
    Ok((file, temp))
}

/// The extra columns of a multi-metric grid's `cells.csv`: `predicted_score_<metric>`,
/// `score_low_<metric>` and `score_high_<metric>` for every target metric after the first (the
/// first is in `predicted_score`, `score_low`, `score_high`).
pub fn target_columns(grid: &crate::spec::Grid) -> Vec<String> {
    grid.targets
        .iter()
        .skip(1)
        .flat_map(|t| {
            ["predicted_score", "score_low", "score_high"].map(|c| format!("{c}_{}", t.name))
        })
        .collect()
}

/// The values of [`target_columns`] for one cell (empty for infeasible cells, as the primary
/// prediction's columns).
pub fn target_fields(grid: &crate::spec::Grid, e: &Evaluated) -> Vec<Option<Num>> {
    let feasible = e.ledger.feasible();
    crate::evaluate::secondary_predictions(grid, e)
        .iter()
        .flat_map(|p| [p.score, p.score_low, p.score_high])
        .map(|x| feasible.then_some(Num(x)))
        .collect()
}

/// The column names of `cells.csv`, in order.
pub fn cell_columns() -> Vec<String> {
    csv::Reader::from_reader(cells_header().as_slice())
        .headers()
        .expect("the header parses")
        .iter()
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_is_the_rows_field_list() {
        let columns = cell_columns();
        assert_eq!(columns.len(), 66);
        assert_eq!(columns.first().map(String::as_str), Some("cell_id"));
        assert_eq!(columns.last().map(String::as_str), Some("on_frontier"));
        assert_eq!(
            String::from_utf8(cells_header()).unwrap().trim_end(),
            columns.join(",")
        );
    }

    #[test]
    fn numbers_are_written_as_the_tables_write_them() {
        let mut w = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        w.serialize((
            Num(0.1234567),
            Some(Num(2.5e20)),
            None::<Num>,
            Num(f64::NAN),
        ))
        .unwrap();
        let text = String::from_utf8(w.into_inner().unwrap()).unwrap();
        assert_eq!(text, "0.1234567,2.5e20,,\n");
    }
}
