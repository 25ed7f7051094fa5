//! A Parquet row group encoded outside the file, one column writer per column, each into a
//! buffer of its own: the columns can be encoded on many threads at once (encoding and Snappy
//! are most of a Parquet writer's time), fed the group's rows a part at a time as the parts are
//! made, and the finished buffers appended to the file in column order
//! ([`super::parquet::ParquetTable::append_row_group`]).
//!
//! Each column writer sees the same values in the same order as writing the group in the file
//! would give it, so the pages, and the file's bytes, are the same (a test compares them).

use parquet::column::writer::{ColumnCloseResult, ColumnWriter, get_column_writer};
use parquet::file::properties::WriterPropertiesPtr;
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::ColumnDescPtr;

use super::parquet::{ColumnData, TypedRows};

/// The memory one column of a row group is encoded into.
pub type ColumnBuffer = TrackedWrite<Vec<u8>>;

/// What a table's row groups are encoded with: its columns' descriptors and writer properties.
#[derive(Clone)]
pub struct ColumnEncoder {
    columns: Vec<ColumnDescPtr>,
    properties: WriterPropertiesPtr,
}

impl ColumnEncoder {
    /// An encoder for these columns, with these properties (a table's own: see
    /// [`super::parquet::ParquetTable::encoder`]).
    pub(crate) fn new(columns: Vec<ColumnDescPtr>, properties: WriterPropertiesPtr) -> Self {
        ColumnEncoder {
            columns,
            properties,
        }
    }

    /// One empty buffer per column, for [`Self::start`].
    pub fn buffers(&self) -> Vec<ColumnBuffer> {
        self.columns
            .iter()
            .map(|_| TrackedWrite::new(Vec::new()))
            .collect()
    }

    /// A row group whose columns are encoded into `buffers`, one per column
    /// ([`Self::buffers`]).
    pub fn start<'a>(&self, buffers: &'a mut [ColumnBuffer]) -> RowGroupEncoder<'a> {
        let columns = self
            .columns
            .iter()
            .zip(buffers.iter_mut())
            .enumerate()
            .map(|(index, (descr, buffer))| {
                let pages = SerializedPageWriter::new(buffer);
                ColumnChunkEncoder {
                    index,
                    writer: get_column_writer(
                        descr.clone(),
                        self.properties.clone(),
                        Box::new(pages),
                    ),
                }
            })
            .collect();
        RowGroupEncoder { columns }
    }
}

/// A row group being encoded: one [`ColumnChunkEncoder`] per column, each independent of the
/// others (write them on any threads), then [`Self::close`].
pub struct RowGroupEncoder<'a> {
    columns: Vec<ColumnChunkEncoder<'a>>,
}

impl<'a> RowGroupEncoder<'a> {
    /// The columns' encoders, in column order.
    pub fn columns_mut(&mut self) -> &mut [ColumnChunkEncoder<'a>] {
        &mut self.columns
    }

    /// Flushes every column's last page and returns what the file needs to append them.
    pub fn close(self) -> Result<ClosedRowGroup, String> {
        self.columns
            .into_iter()
            .map(ColumnChunkEncoder::close)
            .collect::<Result<Vec<_>, _>>()
            .map(ClosedRowGroup)
    }
}

/// What closing a row group's column writers reported, in column order.
pub struct ClosedRowGroup(Vec<ColumnCloseResult>);

impl ClosedRowGroup {
    /// The columns' close results, in column order.
    pub(crate) fn into_columns(self) -> Vec<ColumnCloseResult> {
        self.0
    }
}

/// One column of a row group being encoded.
pub struct ColumnChunkEncoder<'a> {
    index: usize,
    writer: ColumnWriter<'a>,
}

impl ColumnChunkEncoder<'_> {
    /// Writes this column of `parts`, one part after the other. Errs when a part's column is
    /// missing or of another type.
    pub fn write(&mut self, parts: &[TypedRows]) -> Result<(), String> {
        let c = self.index;
        for part in parts {
            let levels = part.levels().get(c).map(Vec::as_slice);
            match (&mut self.writer, part.data().get(c)) {
                (ColumnWriter::Int64ColumnWriter(w), Some(ColumnData::Int(d))) => {
                    w.write_batch(d, levels, None)
                }
                (ColumnWriter::DoubleColumnWriter(w), Some(ColumnData::Double(d))) => {
                    w.write_batch(d, levels, None)
                }
                (ColumnWriter::BoolColumnWriter(w), Some(ColumnData::Bool(d))) => {
                    w.write_batch(d, levels, None)
                }
                (ColumnWriter::ByteArrayColumnWriter(w), Some(ColumnData::Text(d))) => {
                    w.write_batch(d, levels, None)
                }
                _ => return Err(format!("column {c}: writer and type disagree")),
            }
            .map_err(|e| e.to_string())?;
        }
        Ok(())
    }

    fn close(self) -> Result<ColumnCloseResult, String> {
        match self.writer {
            ColumnWriter::BoolColumnWriter(w) => w.close(),
            ColumnWriter::Int32ColumnWriter(w) => w.close(),
            ColumnWriter::Int64ColumnWriter(w) => w.close(),
            ColumnWriter::Int96ColumnWriter(w) => w.close(),
            ColumnWriter::FloatColumnWriter(w) => w.close(),
            ColumnWriter::DoubleColumnWriter(w) => w.close(),
            ColumnWriter::ByteArrayColumnWriter(w) => w.close(),
            ColumnWriter::FixedLenByteArrayColumnWriter(w) => w.close(),
        }
        .map_err(|e| e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::parquet::{ColumnType, ParquetTable, typed_rows};

    /// Three parts of a four-column table, with nulls, repeats and enough rows for several pages.
    fn parts() -> (Vec<String>, Vec<ColumnType>, Vec<TypedRows>) {
        let names: Vec<String> = ["id", "usd", "model", "feasible"]
            .map(String::from)
            .to_vec();
        let types = vec![
            ColumnType::Int,
            ColumnType::Double,
            ColumnType::Text,
            ColumnType::Bool,
        ];
        let part = |from: usize, rows: usize| {
            let column = |f: &dyn Fn(usize) -> String| (from..from + rows).map(f).collect();
            let columns: Vec<Vec<String>> = vec![
                column(&|i| i.to_string()),
                column(&|i| {
                    if i % 7 == 0 {
                        String::new()
                    } else {
                        format!("{}", (i as f64).sqrt())
                    }
                }),
                column(&|i| format!("qwen2.5-{}b", i / 1000 % 4)),
                column(&|i| (i % 3 == 0).to_string()),
            ];
            typed_rows(&types, &columns).unwrap()
        };
        let parts = vec![part(0, 40_000), part(40_000, 1), part(40_001, 90_000)];
        (names, types, parts)
    }

    /// The bytes the parquet crate writes for one row group written column after column in the
    /// file, the route this module replaces.
    fn written_in_the_file(names: &[String], types: &[ColumnType], parts: &[TypedRows]) -> Vec<u8> {
        let table = ParquetTable::new(Vec::new(), names, types.to_vec()).unwrap();
        let properties = table.encoder().properties.clone();
        let schema = crate::report::parquet::schema(names, types).unwrap();
        let mut writer =
            parquet::file::writer::SerializedFileWriter::new(Vec::new(), schema, properties)
                .unwrap();
        let mut group = writer.next_row_group().unwrap();
        let mut c = 0;
        while let Some(mut column) = group.next_column().unwrap() {
            for part in parts {
                let levels = Some(part.levels()[c].as_slice());
                match (column.untyped(), &part.data()[c]) {
                    (ColumnWriter::Int64ColumnWriter(w), ColumnData::Int(d)) => {
                        w.write_batch(d, levels, None)
                    }
                    (ColumnWriter::DoubleColumnWriter(w), ColumnData::Double(d)) => {
                        w.write_batch(d, levels, None)
                    }
                    (ColumnWriter::BoolColumnWriter(w), ColumnData::Bool(d)) => {
                        w.write_batch(d, levels, None)
                    }
                    (ColumnWriter::ByteArrayColumnWriter(w), ColumnData::Text(d)) => {
                        w.write_batch(d, levels, None)
                    }
                    _ => panic!("column {c}: writer and type disagree"),
                }
                .unwrap();
            }
            column.close().unwrap();
            c += 1;
        }
        group.close().unwrap();
        writer.into_inner().unwrap()
    }

    #[test]
    fn a_group_encoded_outside_the_file_is_the_group_written_in_it() {
        let (names, types, parts) = parts();
        let expected = written_in_the_file(&names, &types, &parts);
        let mut table = ParquetTable::new(Vec::new(), &names, types.clone()).unwrap();
        let encoder = table.encoder();
        let mut buffers = encoder.buffers();
        let mut group = encoder.start(&mut buffers);
        // Columns in reverse order, each fed one part at a time: the order of columns and the
        // moment a part arrives do not matter, only each column's order of parts.
        for column in group.columns_mut().iter_mut().rev() {
            for part in &parts {
                column.write(std::slice::from_ref(part)).unwrap();
            }
        }
        let closed = group.close().unwrap();
        table.append_row_group(buffers, closed).unwrap();
        assert_eq!(table.finish().unwrap(), expected);
        // write_row_group is the same route.
        let mut table = ParquetTable::new(Vec::new(), &names, types).unwrap();
        table.write_row_group(&parts).unwrap();
        assert_eq!(table.finish().unwrap(), expected);
    }

    #[test]
    fn a_part_of_the_wrong_shape_is_refused() {
        let (names, types, parts) = parts();
        let table = ParquetTable::new(Vec::new(), &names, types).unwrap();
        let encoder = table.encoder();
        let mut buffers = encoder.buffers();
        let mut group = encoder.start(&mut buffers);
        let narrow = typed_rows(&[ColumnType::Int], &[vec!["1".to_string()]]).unwrap();
        // Column 1 (doubles) of a one-column part: there is none.
        assert!(
            group.columns_mut()[1]
                .write(std::slice::from_ref(&narrow))
                .is_err()
        );
        // Column 0 of a part whose column 0 is text.
        let text = typed_rows(&[ColumnType::Text], &[vec!["a".to_string()]]).unwrap();
        assert!(group.columns_mut()[0].write(&[text]).is_err());
        assert!(group.columns_mut()[0].write(&parts).is_ok());
    }
}
