//! Rows collected straight into typed Parquet columns: the rows' own `Serialize` (the one the CSV
//! writer uses) walked by a serializer that files each field in its column, so `cells.parquet`
//! needs no CSV text written and parsed back.
//!
//! Values equal the CSV's by construction: a number the CSV prints through
//! [`crate::format::number_text`] arrives here as the double that text parses to
//! ([`crate::format::number_value`], computed without the text where one exact operation gives
//! it; this serializer says it is not human-readable, which is how the number knows); an integer
//! or a boolean is stored as the CSV text of it would parse; an empty field is a null. A test
//! compares the two routes on real grids.

use parquet::data_type::ByteArray;
use serde::Serialize;
use serde::ser::{self, Impossible};

use super::parquet::{ColumnData, ColumnType, TypedRows};

/// Typed columns filled row by row from serialisable rows (the row's fields, nested structs,
/// tuples and sequences flattened in order, as the CSV writer flattens them).
#[derive(Debug)]
pub struct ColumnCollector {
    types: Vec<ColumnType>,
    levels: Vec<Vec<i16>>,
    data: Vec<ColumnData>,
    rows: usize,
    /// The column the next field goes to.
    next: usize,
}

/// A text column's newest value, so a repeat (a model, an engine, a budget unit: most text
/// columns repeat row after row) shares its bytes instead of allocating a copy.
fn push_text(column: &mut Vec<ByteArray>, text: &str) {
    if let Some(last) = column.last()
        && last.data() == text.as_bytes()
    {
        let shared = last.clone();
        column.push(shared);
        return;
    }
    column.push(ByteArray::from(text));
}

/// Why a row could not be filed: a field that does not fit its column, or a row of the wrong
/// width.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ColumnError(String);

impl ser::Error for ColumnError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        ColumnError(msg.to_string())
    }
}

impl ColumnCollector {
    /// Empty columns of these types.
    pub fn new(types: &[ColumnType]) -> Self {
        Self::with_capacity(types, 0)
    }

    /// Empty columns of these types, with room for `rows` rows.
    pub fn with_capacity(types: &[ColumnType], rows: usize) -> Self {
        let data = types
            .iter()
            .map(|t| match t {
                ColumnType::Int => ColumnData::Int(Vec::with_capacity(rows)),
                ColumnType::Double => ColumnData::Double(Vec::with_capacity(rows)),
                ColumnType::Bool => ColumnData::Bool(Vec::with_capacity(rows)),
                ColumnType::Text => ColumnData::Text(Vec::with_capacity(rows)),
            })
            .collect();
        ColumnCollector {
            types: types.to_vec(),
            levels: (0..types.len()).map(|_| Vec::with_capacity(rows)).collect(),
            data,
            rows: 0,
            next: 0,
        }
    }

    /// Files one row; it must have exactly one field per column.
    pub fn push<T: Serialize + ?Sized>(&mut self, row: &T) -> Result<(), ColumnError> {
        self.next = 0;
        row.serialize(&mut *self)?;
        if self.next != self.types.len() {
            return Err(ColumnError(format!(
                "row {} has {} fields for {} columns",
                self.rows,
                self.next,
                self.types.len()
            )));
        }
        self.rows += 1;
        Ok(())
    }

    /// The collected rows.
    pub fn finish(self) -> TypedRows {
        TypedRows::from_columns(self.rows, self.levels, self.data)
    }

    /// Files one field, given as what the CSV would hold.
    fn field(&mut self, value: Field) -> Result<(), ColumnError> {
        let c = self.next;
        if c >= self.types.len() {
            return Err(ColumnError(format!(
                "row {} has more than {c} fields",
                self.rows
            )));
        }
        self.next += 1;
        let present = !matches!(value, Field::Text("") | Field::Null);
        self.levels[c].push(i16::from(present));
        if !present {
            return Ok(());
        }
        let bad = |v: &dyn std::fmt::Debug| {
            ColumnError(format!("column {c}: {v:?} does not fit its type"))
        };
        match (&mut self.data[c], value) {
            (ColumnData::Int(d), Field::Unsigned(v)) => {
                d.push(i64::try_from(v).map_err(|_| bad(&v))?)
            }
            (ColumnData::Int(d), Field::Signed(v)) => d.push(v),
            (ColumnData::Int(d), Field::Text(v)) => d.push(v.parse().map_err(|_| bad(&v))?),
            // The nearest double to an integer is what its decimal text parses to.
            (ColumnData::Double(d), Field::Unsigned(v)) => d.push(v as f64),
            (ColumnData::Double(d), Field::Signed(v)) => d.push(v as f64),
            (ColumnData::Double(d), Field::Float(v)) => d.push(v),
            (ColumnData::Double(d), Field::Text(v)) => d.push(v.parse().map_err(|_| bad(&v))?),
            // The CSV reader keeps "true" as true and any other text as false.
            (ColumnData::Bool(d), Field::Bool(v)) => d.push(v),
            (ColumnData::Bool(d), Field::Text(v)) => d.push(v == "true"),
            (ColumnData::Bool(d), Field::Unsigned(_) | Field::Signed(_) | Field::Float(_)) => {
                d.push(false)
            }
            (ColumnData::Text(d), Field::Text(v)) => push_text(d, v),
            (ColumnData::Text(d), Field::Bool(v)) => {
                d.push(ByteArray::from(if v { "true" } else { "false" }))
            }
            (ColumnData::Text(d), Field::Unsigned(v)) => {
                d.push(ByteArray::from(v.to_string().as_str()))
            }
            (ColumnData::Text(d), Field::Signed(v)) => {
                d.push(ByteArray::from(v.to_string().as_str()))
            }
            (_, other) => return Err(bad(&other)),
        }
        Ok(())
    }
}

/// One leaf value of a row.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Null,
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Float(f64),
    Text(&'a str),
}

impl ser::Serializer for &mut ColumnCollector {
    type Ok = ();
    type Error = ColumnError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Impossible<(), ColumnError>;
    type SerializeMap = Impossible<(), ColumnError>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), ColumnError>;

    /// Not human-readable: a table number ([`crate::report::cells::Num`]) then arrives as the
    /// double its CSV text parses to ([`crate::format::number_value`]), not as the text.
    fn is_human_readable(&self) -> bool {
        false
    }

    fn serialize_bool(self, v: bool) -> Result<(), ColumnError> {
        self.field(Field::Bool(v))
    }
    fn serialize_i8(self, v: i8) -> Result<(), ColumnError> {
        self.field(Field::Signed(v.into()))
    }
    fn serialize_i16(self, v: i16) -> Result<(), ColumnError> {
        self.field(Field::Signed(v.into()))
    }
    fn serialize_i32(self, v: i32) -> Result<(), ColumnError> {
        self.field(Field::Signed(v.into()))
    }
    fn serialize_i64(self, v: i64) -> Result<(), ColumnError> {
        self.field(Field::Signed(v))
    }
    fn serialize_u8(self, v: u8) -> Result<(), ColumnError> {
        self.field(Field::Unsigned(v.into()))
    }
    fn serialize_u16(self, v: u16) -> Result<(), ColumnError> {
        self.field(Field::Unsigned(v.into()))
    }
    fn serialize_u32(self, v: u32) -> Result<(), ColumnError> {
        self.field(Field::Unsigned(v.into()))
    }
    fn serialize_u64(self, v: u64) -> Result<(), ColumnError> {
        self.field(Field::Unsigned(v))
    }
    fn serialize_f32(self, v: f32) -> Result<(), ColumnError> {
        self.field(Field::Float(v.into()))
    }
    fn serialize_f64(self, v: f64) -> Result<(), ColumnError> {
        self.field(Field::Float(v))
    }
    fn serialize_char(self, v: char) -> Result<(), ColumnError> {
        self.field(Field::Text(v.encode_utf8(&mut [0u8; 4])))
    }
    fn serialize_str(self, v: &str) -> Result<(), ColumnError> {
        self.field(Field::Text(v))
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), ColumnError> {
        Err(ColumnError("bytes have no column type".into()))
    }
    fn serialize_none(self) -> Result<(), ColumnError> {
        self.field(Field::Null)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), ColumnError> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), ColumnError> {
        self.field(Field::Null)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), ColumnError> {
        self.field(Field::Null)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<(), ColumnError> {
        self.field(Field::Text(variant))
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<(), ColumnError> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), ColumnError> {
        Err(ColumnError("enum variants with data have no column".into()))
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, ColumnError> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, ColumnError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, ColumnError> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, ColumnError> {
        Err(ColumnError("enum variants with data have no column".into()))
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, ColumnError> {
        Err(ColumnError("maps have no column".into()))
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, ColumnError> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, ColumnError> {
        Err(ColumnError("enum variants with data have no column".into()))
    }
}

/// Nested sequences, tuples and structs are flattened into the row, field after field.
macro_rules! flatten {
    ($trait:ident, $method:ident $(, $key:ty)?) => {
        impl ser::$trait for &mut ColumnCollector {
            type Ok = ();
            type Error = ColumnError;
            fn $method<T: Serialize + ?Sized>(
                &mut self,
                $(_: $key,)?
                value: &T,
            ) -> Result<(), ColumnError> {
                value.serialize(&mut **self)
            }
            fn end(self) -> Result<(), ColumnError> {
                Ok(())
            }
        }
    };
}

flatten!(SerializeSeq, serialize_element);
flatten!(SerializeTuple, serialize_element);
flatten!(SerializeTupleStruct, serialize_field);
flatten!(SerializeStruct, serialize_field, &'static str);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::parquet::typed_rows_from_csv;

    #[derive(Serialize)]
    struct Row {
        id: u64,
        label: &'static str,
        value: crate::report::cells::Num,
        missing: Option<crate::report::cells::Num>,
        flag: bool,
        extra: Vec<Option<crate::report::cells::Num>>,
    }

    #[test]
    fn rows_file_as_the_csv_reader_parses_them() {
        use crate::report::cells::Num;
        let types = [
            ColumnType::Int,
            ColumnType::Text,
            ColumnType::Double,
            ColumnType::Double,
            ColumnType::Bool,
            ColumnType::Double,
            ColumnType::Double,
        ];
        let rows = [
            Row {
                id: 7,
                label: "lora",
                value: Num(0.723_456_149_9),
                missing: None,
                flag: true,
                extra: vec![Some(Num(2.5e16)), None],
            },
            Row {
                id: 8,
                label: "",
                value: Num(1.0 / 3.0),
                missing: Some(Num(f64::NAN)),
                flag: false,
                extra: vec![None, Some(Num(-1e-7))],
            },
        ];
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        let mut columns = ColumnCollector::new(&types);
        for row in &rows {
            csv.serialize(row).unwrap();
            columns.push(row).unwrap();
        }
        let via_csv = typed_rows_from_csv(&types, &csv.into_inner().unwrap()).unwrap();
        assert_eq!(columns.finish(), via_csv);
    }

    #[test]
    fn a_row_of_the_wrong_width_or_type_is_refused() {
        let mut columns = ColumnCollector::new(&[ColumnType::Int, ColumnType::Int]);
        assert!(columns.push(&(1u64,)).is_err());
        assert!(columns.push(&(1u64, 2u64, 3u64)).is_err());
        assert!(columns.push(&(1u64, "x")).is_err());
        assert!(columns.push(&(1u64, 2u64)).is_ok());
    }
}
