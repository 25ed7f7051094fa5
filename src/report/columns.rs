//! Rows collected straight into typed Parquet columns, field after field ([`ColumnValue`]), so
//! `cells.parquet` and the Python tables need no CSV text written and parsed back.
//!
//! Values equal the CSV's by construction: a number the CSV prints through
//! [`crate::format::number_text`] is stored as the double that text parses to
//! ([`crate::format::number_value`], computed without the text where one exact operation gives
//! it); an integer or a boolean is stored as the CSV text of it would parse; an empty field is a
//! null. A row's fields are filed in the order its serialisation writes them (`cells.csv`'s
//! rows are [`crate::report::cells::CellRow`], whose one field list gives both). Tests compare
//! the two routes, here and on real grids (`engine::sweep`).

use parquet::data_type::ByteArray;

use super::parquet::{ColumnData, ColumnType, TypedRows};

/// Typed columns filled row by row, a row's fields (nested ones flattened) in column order.
#[derive(Debug)]
pub struct ColumnCollector {
    types: Vec<ColumnType>,
    levels: Vec<Vec<i16>>,
    data: Vec<ColumnData>,
    rows: usize,
    /// The column the next field goes to.
    next: usize,
    /// Per column, the last number filed through [`ColumnCollector::number`] (its bits) and its
    /// CSV value: about half of a sweep's doubles repeat the row before (a step's values at each
    /// of its budgets), and rounding is the dearest part of filing them.
    last_number: Vec<Option<(u64, Option<f64>)>>,
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
            last_number: vec![None; types.len()],
        }
    }

    /// Files one row: `fields` files its fields in column order through [`ColumnValue`] (a row
    /// type's own, e.g. [`crate::report::cells::CellRow`]'s), exactly one per column.
    pub fn push_fields(
        &mut self,
        fields: impl FnOnce(&mut Self) -> Result<(), ColumnError>,
    ) -> Result<(), ColumnError> {
        self.next = 0;
        let filed = fields(self).and_then(|()| {
            if self.next == self.types.len() {
                Ok(())
            } else {
                Err(ColumnError(format!(
                    "row {} has {} fields for {} columns",
                    self.rows,
                    self.next,
                    self.types.len()
                )))
            }
        });
        match filed {
            Ok(()) => self.rows += 1,
            Err(_) => self.drop_partial_row(),
        }
        filed
    }

    /// Takes back the fields of a row that failed part way: every column back to the rows
    /// filed whole (its values: the present ones among them).
    fn drop_partial_row(&mut self) {
        for (levels, data) in self.levels.iter_mut().zip(&mut self.data) {
            levels.truncate(self.rows);
            let present = levels.iter().filter(|&&l| l == 1).count();
            match data {
                ColumnData::Int(d) => d.truncate(present),
                ColumnData::Double(d) => d.truncate(present),
                ColumnData::Bool(d) => d.truncate(present),
                ColumnData::Text(d) => d.truncate(present),
            }
        }
    }

    /// The collected rows.
    pub fn finish(self) -> TypedRows {
        TypedRows::from_columns(self.rows, self.levels, self.data)
    }

    /// Files a present double, integer, boolean or text straight into its column when the column is of
    /// that type (the common case, kept small enough to inline); anything else goes through
    /// [`Self::field`].
    #[inline(always)]
    fn typed(&mut self, value: Field) -> Result<(), ColumnError> {
        let c = self.next;
        let filed = match (self.data.get_mut(c), value) {
            (Some(ColumnData::Double(d)), Field::Float(v)) => {
                d.push(v);
                true
            }
            (Some(ColumnData::Int(d)), Field::Unsigned(v)) if v <= i64::MAX as u64 => {
                d.push(v as i64);
                true
            }
            (Some(ColumnData::Bool(d)), Field::Bool(v)) => {
                d.push(v);
                true
            }
            (Some(ColumnData::Text(d)), Field::Text(v)) if !v.is_empty() => {
                push_text(d, v);
                true
            }
            _ => false,
        };
        if !filed {
            return self.field(value);
        }
        self.levels[c].push(1);
        self.next += 1;
        Ok(())
    }

    /// Files a number as its CSV text parses to ([`crate::format::number_value`]; a null when it
    /// is not finite), reusing the column's last rounding when the same number repeats (the
    /// rounding is a pure function of the bits, so the value is the same either way).
    #[inline]
    pub(crate) fn number(&mut self, x: f64) -> Result<(), ColumnError> {
        let bits = x.to_bits();
        let value = match self.last_number.get(self.next) {
            Some(&Some((last, value))) if last == bits => value,
            _ => {
                let value = crate::format::number_value(x);
                if let Some(slot) = self.last_number.get_mut(self.next) {
                    *slot = Some((bits, value));
                }
                value
            }
        };
        match value {
            Some(v) => self.typed(Field::Float(v)),
            None => self.field(Field::Text("")),
        }
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
            (ColumnData::Int(d), Field::Text(v)) => d.push(v.parse().map_err(|_| bad(&v))?),
            // The nearest double to an integer is what its decimal text parses to.
            (ColumnData::Double(d), Field::Unsigned(v)) => d.push(v as f64),
            (ColumnData::Double(d), Field::Float(v)) => d.push(v),
            (ColumnData::Double(d), Field::Text(v)) => d.push(v.parse().map_err(|_| bad(&v))?),
            // The CSV reader keeps "true" as true and any other text as false.
            (ColumnData::Bool(d), Field::Bool(v)) => d.push(v),
            (ColumnData::Bool(d), Field::Text(v)) => d.push(v == "true"),
            (ColumnData::Bool(d), Field::Unsigned(_) | Field::Float(_)) => d.push(false),
            (ColumnData::Text(d), Field::Text(v)) => push_text(d, v),
            (ColumnData::Text(d), Field::Bool(v)) => {
                d.push(ByteArray::from(if v { "true" } else { "false" }))
            }
            (ColumnData::Text(d), Field::Unsigned(v)) => {
                d.push(ByteArray::from(v.to_string().as_str()))
            }
            (_, other) => return Err(bad(&other)),
        }
        Ok(())
    }
}

/// A row field filed straight into its column, holding what the CSV writer's text of its
/// serialisation parses to (tests compare the two, here and on real grids).
pub trait ColumnValue {
    /// Files the value in the next column (nested values: in the next columns).
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError>;
}

impl ColumnValue for u64 {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.typed(Field::Unsigned(*self))
    }
}

impl ColumnValue for bool {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.typed(Field::Bool(*self))
    }
}

impl ColumnValue for str {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.typed(Field::Text(self))
    }
}

impl ColumnValue for String {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.typed(Field::Text(self))
    }
}

impl<T: ColumnValue + ?Sized> ColumnValue for &T {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        (**self).file(columns)
    }
}

impl<T: ColumnValue> ColumnValue for Option<T> {
    /// An absent value is a null, as `serialize_none` files it.
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        match self {
            Some(v) => v.file(columns),
            None => columns.field(Field::Null),
        }
    }
}

impl<T: ColumnValue> ColumnValue for [T] {
    /// Each element in its own column, as a serialised sequence is flattened.
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        self.iter().try_for_each(|v| v.file(columns))
    }
}

impl<T: ColumnValue> ColumnValue for Vec<T> {
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        self.as_slice().file(columns)
    }
}

impl ColumnValue for crate::report::cells::Num {
    /// The double the number's text parses to, or a null when it has no text (not finite), as
    /// its serialisation for a serializer that is not human-readable gives.
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.number(self.0)
    }
}

impl ColumnValue for crate::format::NumberText {
    #[inline]
    fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
        columns.typed(Field::Text(self.as_str()))
    }
}

/// One leaf value of a row.
#[derive(Debug, Clone, Copy)]
enum Field<'a> {
    Null,
    Bool(bool),
    Unsigned(u64),
    Float(f64),
    Text(&'a str),
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::NumberText;
    use crate::report::cells::Num;
    use crate::report::parquet::typed_rows_from_csv;
    use serde::Serialize;

    #[derive(Serialize)]
    struct Row {
        id: u64,
        label: &'static str,
        owned: String,
        budget: NumberText,
        value: Num,
        missing: Option<Num>,
        flag: bool,
        extra: Vec<Option<Num>>,
    }

    impl ColumnValue for Row {
        fn file(&self, columns: &mut ColumnCollector) -> Result<(), ColumnError> {
            self.id.file(columns)?;
            self.label.file(columns)?;
            self.owned.file(columns)?;
            self.budget.file(columns)?;
            self.value.file(columns)?;
            self.missing.file(columns)?;
            self.flag.file(columns)?;
            self.extra.file(columns)
        }
    }

    #[test]
    fn rows_file_as_the_csv_reader_parses_them() {
        let types = [
            ColumnType::Int,
            ColumnType::Text,
            ColumnType::Text,
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
                owned: "qwen2.5-7b".to_string(),
                budget: crate::format::number_text(1000.0),
                value: Num(0.723_456_149_9),
                missing: None,
                flag: true,
                extra: vec![Some(Num(2.5e16)), None],
            },
            Row {
                id: 8,
                label: "",
                owned: "qwen2.5-7b".to_string(),
                budget: NumberText::integer(250),
                value: Num(1.0 / 3.0),
                missing: Some(Num(f64::NAN)),
                flag: false,
                extra: vec![None, Some(Num(-1e-7))],
            },
            // Repeats of the row before (a column's last rounding is reused), a repeated NaN
            // (null again), then values that change back.
            Row {
                id: 9,
                label: "",
                owned: "qwen2.5-7b".to_string(),
                budget: NumberText::integer(250),
                value: Num(1.0 / 3.0),
                missing: Some(Num(f64::NAN)),
                flag: false,
                extra: vec![None, Some(Num(-1e-7))],
            },
            Row {
                id: 10,
                label: "full",
                owned: "qwen2.5-7b".to_string(),
                budget: NumberText::integer(250),
                value: Num(0.723_456_149_9),
                missing: Some(Num(1.0 / 3.0)),
                flag: true,
                extra: vec![Some(Num(2.5e16)), Some(Num(2.5e16))],
            },
        ];
        let mut csv = csv::WriterBuilder::new()
            .has_headers(false)
            .from_writer(Vec::new());
        let mut columns = ColumnCollector::new(&types);
        for row in &rows {
            csv.serialize(row).unwrap();
            columns.push_fields(|c| row.file(c)).unwrap();
        }
        let via_csv = typed_rows_from_csv(&types, &csv.into_inner().unwrap()).unwrap();
        assert_eq!(columns.finish(), via_csv);
    }

    #[test]
    fn a_row_of_the_wrong_width_or_type_is_refused() {
        let mut columns = ColumnCollector::new(&[ColumnType::Int, ColumnType::Int]);
        assert!(columns.push_fields(|c| 1u64.file(c)).is_err());
        assert!(columns.push_fields(|c| [1u64, 2, 3].file(c)).is_err());
        assert!(
            columns
                .push_fields(|c| {
                    1u64.file(c)?;
                    "x".file(c)
                })
                .is_err()
        );
        assert!(columns.push_fields(|c| [1u64, 2].file(c)).is_ok());
        // The refused rows left nothing behind.
        let rows = columns.finish();
        assert_eq!(rows.rows(), 1);
        assert_eq!(rows.levels(), [vec![1], vec![1]]);
        assert_eq!(
            rows.data(),
            [ColumnData::Int(vec![1]), ColumnData::Int(vec![2])]
        );
    }
}
