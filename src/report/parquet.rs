//! Parquet output (`sweep --format parquet`): the same tables as the CSV files, with typed,
//! nullable columns and Snappy compression, so a million cells load in pandas or polars in a
//! fraction of the CSV's time and memory.
//!
//! The rows are produced exactly as for the CSV (the same serialisation, so the two formats
//! cannot drift apart): `cells.parquet` is filed straight into typed columns by that
//! serialisation (`report::columns`), one row group per 64 streamed chunks; the small tables
//! are converted here from their CSV text, in one row group. Column types: `cells.parquet` from the column names
//! ([`cells_column_type`]: ids and counts are INT64, labels UTF-8 strings, flags BOOLEAN,
//! everything else DOUBLE); the small tables as they declare them
//! ([`SmallTable`](super::tables::SmallTable)), never from the values one sweep wrote. An empty
//! CSV field is a null.

use std::sync::Arc;

use parquet::basic::{Compression, LogicalType, Repetition, Type as PhysicalType};
use parquet::data_type::ByteArray;
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::types::{ColumnPath, Type};

use super::row_group::{ClosedRowGroup, ColumnBuffer, ColumnEncoder};

/// A column's type in a Parquet table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// 64-bit integer.
    Int,
    /// 64-bit float.
    Double,
    /// true/false.
    Bool,
    /// UTF-8 text.
    Text,
}

/// The type of a `cells.csv` column, from its name.
pub fn cells_column_type(name: &str) -> ColumnType {
    use crate::spec::{Axis, ColumnKind};
    match Axis::column_kind(name) {
        Some(ColumnKind::Text) => return ColumnType::Text,
        Some(ColumnKind::Count) => return ColumnType::Int,
        Some(ColumnKind::Real) => return ColumnType::Double,
        None => {}
    }
    match name {
        "cell_id" | "iterations" | "tensor_parallel" => ColumnType::Int,
        "infeasible_reason" | "infeasible_code" => ColumnType::Text,
        "feasible" | "on_frontier" => ColumnType::Bool,
        _ => ColumnType::Double,
    }
}

/// The Parquet schema of a table.
pub(crate) fn schema(names: &[String], types: &[ColumnType]) -> Result<Arc<Type>, String> {
    let fields = names
        .iter()
        .zip(types)
        .map(|(name, t)| {
            let (physical, logical) = match t {
                ColumnType::Int => (PhysicalType::INT64, None),
                ColumnType::Double => (PhysicalType::DOUBLE, None),
                ColumnType::Bool => (PhysicalType::BOOLEAN, None),
                ColumnType::Text => (PhysicalType::BYTE_ARRAY, Some(LogicalType::String)),
            };
            Type::primitive_type_builder(name, physical)
                .with_repetition(Repetition::OPTIONAL)
                .with_logical_type(logical)
                .build()
                .map(Arc::new)
                .map_err(|e| e.to_string())
        })
        .collect::<Result<Vec<_>, _>>()?;
    Type::group_type_builder("table")
        .with_fields(fields)
        .build()
        .map(Arc::new)
        .map_err(|e| e.to_string())
}

/// A Parquet file being written, one row group at a time.
pub struct ParquetTable<W: std::io::Write + Send> {
    writer: SerializedFileWriter<W>,
    types: Vec<ColumnType>,
}

impl<W: std::io::Write + Send> ParquetTable<W> {
    /// Starts a table with these columns.
    pub fn new(out: W, names: &[String], types: Vec<ColumnType>) -> Result<Self, String> {
        // Dictionary encoding only for text columns: the numeric columns of a sweep are almost
        // all distinct values, where dictionaries cost time (about half the writer's) for nothing.
        let mut properties = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_dictionary_enabled(false);
        for (name, kind) in names.iter().zip(&types) {
            if *kind == ColumnType::Text {
                properties =
                    properties.set_column_dictionary_enabled(ColumnPath::from(name.as_str()), true);
            }
        }
        let properties = properties
            .set_created_by(format!("rlfrontier {}", crate::VERSION))
            .build();
        let writer = SerializedFileWriter::new(out, schema(names, &types)?, Arc::new(properties))
            .map_err(|e| e.to_string())?;
        Ok(ParquetTable { writer, types })
    }

    /// Appends rows given column by column as text (empty = null) as one row group.
    pub fn write_columns(&mut self, columns: &[Vec<String>]) -> Result<(), String> {
        let rows = typed_rows(&self.types, columns)?;
        self.write_row_group(&[rows])
    }

    /// Appends `parts` (converted in any order, for instance in parallel) one after the other as
    /// one row group, its columns encoded one after the other.
    pub fn write_row_group(&mut self, parts: &[TypedRows]) -> Result<(), String> {
        if parts.iter().all(|p| p.rows == 0) {
            return Ok(());
        }
        let encoder = self.encoder();
        let mut buffers = encoder.buffers();
        let mut group = encoder.start(&mut buffers);
        for column in group.columns_mut() {
            column.write(parts)?;
        }
        let closed = group.close()?;
        self.append_row_group(buffers, closed)
    }

    /// What encodes this table's row groups outside it, column by column on any thread (see
    /// [`super::row_group::RowGroupEncoder`]).
    pub fn encoder(&self) -> ColumnEncoder {
        ColumnEncoder::new(
            self.writer.schema_descr().columns().to_vec(),
            self.writer.properties().clone(),
        )
    }

    /// Appends one row group encoded outside the table: the buffers a [`super::row_group::RowGroupEncoder`] wrote
    /// into and what closing it reported. The encoded bytes are copied as they are, their page
    /// offsets moved to where they land: the same pages as writing the columns here.
    pub fn append_row_group(
        &mut self,
        buffers: Vec<ColumnBuffer>,
        closed: ClosedRowGroup,
    ) -> Result<(), String> {
        let closed = closed.into_columns();
        if buffers.len() != self.types.len() || closed.len() != buffers.len() {
            return Err(format!(
                "a row group of {} columns for a table of {}",
                buffers.len().min(closed.len()),
                self.types.len()
            ));
        }
        let mut group = self.writer.next_row_group().map_err(|e| e.to_string())?;
        for (buffer, close) in buffers.into_iter().zip(closed) {
            let bytes = bytes::Bytes::from(buffer.into_inner().map_err(|e| e.to_string())?);
            group
                .append_column(&bytes, close)
                .map_err(|e| e.to_string())?;
        }
        group.close().map_err(|e| e.to_string())?;
        Ok(())
    }

    /// Writes the footer and returns the output.
    pub fn finish(self) -> Result<W, String> {
        self.writer.into_inner().map_err(|e| e.to_string())
    }
}

/// One column's present values, typed.
#[derive(Debug, Clone, PartialEq)]
pub enum ColumnData {
    /// 64-bit integers.
    Int(Vec<i64>),
    /// Doubles.
    Double(Vec<f64>),
    /// Booleans.
    Bool(Vec<bool>),
    /// UTF-8 text.
    Text(Vec<ByteArray>),
}

/// Rows converted to typed columns, ready for [`ParquetTable::write_row_group`]: the
/// conversion (text parsing) is the expensive part and can run on many threads.
#[derive(Debug, Clone, PartialEq)]
pub struct TypedRows {
    rows: usize,
    /// Per column, 1 for a present value and 0 for a null, per row.
    levels: Vec<Vec<i16>>,
    /// Per column, the present values.
    data: Vec<ColumnData>,
}

impl TypedRows {
    /// Rows from their columns: per column, one level per row (1 present, 0 null) and the
    /// present values.
    pub(crate) fn from_columns(rows: usize, levels: Vec<Vec<i16>>, data: Vec<ColumnData>) -> Self {
        TypedRows { rows, levels, data }
    }

    /// The number of rows.
    pub fn rows(&self) -> usize {
        self.rows
    }

    /// Per column, one level per row: 1 for a present value, 0 for a null.
    pub fn levels(&self) -> &[Vec<i16>] {
        &self.levels
    }

    /// Per column, the present values in row order (nulls skipped).
    pub fn data(&self) -> &[ColumnData] {
        &self.data
    }
}

/// Converts rows given column by column as text (empty = null) to typed columns.
pub fn typed_rows(types: &[ColumnType], columns: &[Vec<String>]) -> Result<TypedRows, String> {
    let rows = columns.first().map_or(0, Vec::len);
    let mut levels = Vec::with_capacity(types.len());
    let mut data = Vec::with_capacity(types.len());
    for (c, (values, kind)) in columns.iter().zip(types).enumerate() {
        levels.push(values.iter().map(|v| i16::from(!v.is_empty())).collect());
        let present = values.iter().filter(|v| !v.is_empty());
        let bad = |v: &str| format!("column {c}: `{v}` does not fit its type");
        data.push(match kind {
            ColumnType::Int => ColumnData::Int(
                present
                    .map(|v| v.parse::<i64>().map_err(|_| bad(v)))
                    .collect::<Result<_, _>>()?,
            ),
            ColumnType::Double => ColumnData::Double(
                present
                    .map(|v| v.parse::<f64>().map_err(|_| bad(v)))
                    .collect::<Result<_, _>>()?,
            ),
            ColumnType::Bool => ColumnData::Bool(present.map(|v| v == "true").collect()),
            ColumnType::Text => {
                ColumnData::Text(present.map(|v| ByteArray::from(v.as_str())).collect())
            }
        });
    }
    Ok(TypedRows { rows, levels, data })
}

/// Converts CSV rows without a header (the CSV writer's output) to typed columns.
pub fn typed_rows_from_csv(types: &[ColumnType], csv_bytes: &[u8]) -> Result<TypedRows, String> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(csv_bytes);
    let mut columns: Vec<Vec<String>> = vec![Vec::new(); types.len()];
    for record in reader.records() {
        let record = record.map_err(|e| e.to_string())?;
        for (c, value) in record.iter().enumerate().take(types.len()) {
            columns[c].push(value.to_string());
        }
    }
    typed_rows(types, &columns)
}

/// A small table as Parquet bytes, its columns typed as it declares them.
pub fn small_table_to_parquet(table: &super::tables::SmallTable) -> Result<Vec<u8>, String> {
    let header: Vec<String> = table.columns.iter().map(|(n, _)| n.clone()).collect();
    let types: Vec<ColumnType> = table.columns.iter().map(|&(_, t)| t).collect();
    let mut columns: Vec<Vec<String>> = vec![Vec::with_capacity(table.rows.len()); header.len()];
    for row in &table.rows {
        for (c, v) in row.iter().enumerate() {
            columns[c].push(v.clone());
        }
    }
    let mut writer = ParquetTable::new(Vec::new(), &header, types)?;
    writer.write_columns(&columns)?;
    writer.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};
    use parquet::record::Field;

    #[test]
    fn a_small_table_round_trips_with_types_and_nulls() {
        // `turns` holds whole numbers here, but is declared a real: typed from the declaration.
        let text = |row: [&str; 6]| row.map(str::to_string).to_vec();
        let table = crate::report::tables::SmallTable {
            columns: [
                ("cell_id", ColumnType::Int),
                ("model", ColumnType::Text),
                ("usd", ColumnType::Double),
                ("feasible", ColumnType::Bool),
                ("note", ColumnType::Text),
                ("turns", ColumnType::Double),
            ]
            .map(|(n, t)| (n.to_string(), t))
            .to_vec(),
            rows: vec![
                text(["3", "qwen2.5-7b", "1.5", "true", "", "1"]),
                text(["7", "qwen2.5-3b", "", "false", "edge", "2"]),
            ],
        };
        let bytes = small_table_to_parquet(&table).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        std::fs::write(&path, bytes).unwrap();
        let reader = SerializedFileReader::new(std::fs::File::open(&path).unwrap()).unwrap();
        assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
        let rows: Vec<Vec<(String, Field)>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                r.unwrap()
                    .get_column_iter()
                    .map(|(n, f)| (n.clone(), f.clone()))
                    .collect()
            })
            .collect();
        assert_eq!(rows[0][0], ("cell_id".to_string(), Field::Long(3)));
        assert_eq!(
            rows[0][1],
            ("model".to_string(), Field::Str("qwen2.5-7b".into()))
        );
        assert_eq!(rows[0][2], ("usd".to_string(), Field::Double(1.5)));
        assert_eq!(rows[0][3], ("feasible".to_string(), Field::Bool(true)));
        assert_eq!(rows[0][4], ("note".to_string(), Field::Null));
        assert_eq!(rows[1][2], ("usd".to_string(), Field::Null));
        assert_eq!(rows[1][4], ("note".to_string(), Field::Str("edge".into())));
        assert_eq!(rows[0][5], ("turns".to_string(), Field::Double(1.0)));
    }

    #[test]
    fn cells_columns_are_typed_by_name() {
        assert_eq!(cells_column_type("cell_id"), ColumnType::Int);
        assert_eq!(cells_column_type("lora_rank"), ColumnType::Int);
        assert_eq!(cells_column_type("reward_model"), ColumnType::Text);
        assert_eq!(cells_column_type("on_frontier"), ColumnType::Bool);
        assert_eq!(cells_column_type("budget"), ColumnType::Double);
        assert_eq!(
            cells_column_type("predicted_score_gsm8k"),
            ColumnType::Double
        );
    }
}
