//! The cells table of a sweep handed to pyarrow as it is computed, through the Arrow C stream
//! interface (<https://arrow.apache.org/docs/format/CStreamInterface.html>) and its PyCapsule
//! protocol (`__arrow_c_stream__`), with no file in between.
//!
//! The sweep runs on a thread of its own with a sink ([`rlfrontier::engine::CellsSink`]) that
//! sends each row group (the row groups `cells.parquet` would hold, in cell order) over a
//! bounded channel; the reader on the other end turns each into an Arrow record batch when
//! pyarrow asks for the next one. At most [`BATCHES_IN_FLIGHT`] row groups wait in the channel,
//! so memory stays bounded however large the grid. A reader that goes away stops the sweep.
//! The sweep commits its folder only once the reader has reached the stream's end: a stream
//! left part-way, even with every row group already sent, leaves nothing committed.

use std::ops::ControlFlow;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int64Builder, LargeStringBuilder, StringViewBuilder,
};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{ArrayRef, RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule};
use rlfrontier::engine::CellsSink;
use rlfrontier::report::parquet::{ColumnData, ColumnType, TypedRows};

use crate::app;

/// Row groups that may wait between the sweep and its reader.
const BATCHES_IN_FLIGHT: usize = 2;

/// What the sweep's thread sends: the columns once, then the rows; or why it failed.
enum Message {
    /// The table's schema and the rows expected (before any rows; 0 when not known).
    Columns(SchemaRef, u64),
    /// One row group, one part per chunk.
    Rows(Vec<TypedRows>),
    /// Every row was sent: the stream ends cleanly here.
    End,
    /// The sweep failed (its one-line message): the stream ends with this error, not cleanly.
    Failed(String),
}

/// Where the reader is: still reading, past the end of the stream, or gone before its end.
const READING: u8 = 0;
/// The reader took the end of the stream (every row).
const ENDED: u8 = 1;
/// The reader (or the receiver never taken) was dropped before the end.
const GONE: u8 = 2;

/// The sweep's side of the channel: sends what it is given; `Break` once the reader is gone or
/// the stream is cancelled, even while it waits for room (so a reader that stopped reading
/// cannot hold the sweep forever).
struct ChannelSink {
    sender: SyncSender<Message>,
    stop: Arc<AtomicBool>,
    reader: Arc<AtomicU8>,
    /// Chunks per handed-over group ([`CellsSink::chunks_per_group`]).
    chunks_per_group: usize,
    /// Text columns as string views ([`arrow_type`]).
    string_views: bool,
}

/// Chunks per group handed to a whole-table reader: 2 (4,096 cells, a chunk per thread of a
/// 2-core machine). A group is built whole before the reader appends it, as typed rows of about
/// 800 bytes per cell, so the 64 chunks of a `cells.parquet` row group held about 100 MB on top
/// of the table (measured with `python/bench_sweep.py grids/big.toml`: pandas' peak RSS 869 MB
/// at 64 chunks, 774 MB at 8, 736 MB at 2, at the same speed); a stream of batches keeps the
/// row groups of the file.
const WHOLE_TABLE_GROUP_CHUNKS: usize = 2;

impl CellsSink for ChannelSink {
    fn columns(
        &self,
        names: &[String],
        types: &[ColumnType],
        expected_rows: u64,
    ) -> ControlFlow<()> {
        let fields: Vec<Field> = names
            .iter()
            .zip(types)
            .map(|(name, kind)| Field::new(name, arrow_type(*kind, self.string_views), true))
            .collect();
        self.send(Message::Columns(
            Arc::new(Schema::new(fields)),
            expected_rows,
        ))
    }

    fn rows(&self, parts: Vec<TypedRows>) -> ControlFlow<()> {
        self.send(Message::Rows(parts))
    }

    fn chunks_per_group(&self) -> usize {
        self.chunks_per_group
    }

    /// Sends the end, then waits until the reader has taken it (`Continue`) or is gone or
    /// cancelled (`Break`): the sweep commits only a table read to its end.
    fn finish(&self) -> ControlFlow<()> {
        self.send(Message::End)?;
        loop {
            if self.stop.load(Ordering::SeqCst) {
                return ControlFlow::Break(());
            }
            match self.reader.load(Ordering::SeqCst) {
                ENDED => return ControlFlow::Continue(()),
                GONE => return ControlFlow::Break(()),
                _ => std::thread::sleep(std::time::Duration::from_millis(1)),
            }
        }
    }
}

impl ChannelSink {
    /// Waits for room in the channel, checking for a cancel every millisecond.
    fn send(&self, mut message: Message) -> ControlFlow<()> {
        loop {
            match self.sender.try_send(message) {
                Ok(()) => return ControlFlow::Continue(()),
                Err(TrySendError::Disconnected(_)) => return ControlFlow::Break(()),
                Err(TrySendError::Full(back)) => {
                    if self.stop.load(Ordering::SeqCst) {
                        return ControlFlow::Break(());
                    }
                    message = back;
                    std::thread::sleep(std::time::Duration::from_millis(1));
                }
            }
        }
    }
}

/// The Arrow type of a cells column: `cells.parquet`'s physical types, strings as UTF-8 with
/// 64-bit offsets (pandas 3's `str` holds those as they are), or with `string_views` as string
/// views, the layout polars keeps its strings in (so `polars.from_arrow` takes them without
/// rebuilding each value's 16-byte view).
fn arrow_type(kind: ColumnType, string_views: bool) -> DataType {
    match kind {
        ColumnType::Int => DataType::Int64,
        ColumnType::Double => DataType::Float64,
        ColumnType::Bool => DataType::Boolean,
        ColumnType::Text if string_views => DataType::Utf8View,
        ColumnType::Text => DataType::LargeUtf8,
    }
}

/// A column being built: its values in order, nulls where a part's level is 0.
enum ColumnBuilder {
    Int(Int64Builder),
    Double(Float64Builder),
    Bool(BooleanBuilder),
    Text(LargeStringBuilder),
    TextView(StringViewBuilder),
}

impl ColumnBuilder {
    /// An empty builder of `kind` with room for `rows` values.
    fn new(kind: &DataType, rows: usize) -> Self {
        match kind {
            DataType::Int64 => ColumnBuilder::Int(Int64Builder::with_capacity(rows)),
            DataType::Float64 => ColumnBuilder::Double(Float64Builder::with_capacity(rows)),
            DataType::Boolean => ColumnBuilder::Bool(BooleanBuilder::with_capacity(rows)),
            DataType::Utf8View => ColumnBuilder::TextView(StringViewBuilder::with_capacity(rows)),
            _ => ColumnBuilder::Text(LargeStringBuilder::with_capacity(rows, rows * 16)),
        }
    }

    /// Appends column `c` of `parts`, in order.
    fn append(&mut self, parts: &[TypedRows], c: usize) -> Result<(), ArrowError> {
        let mismatch = || ArrowError::SchemaError(format!("column {c} changed its type"));
        macro_rules! append {
            ($builder:expr, $variant:ident, |$x:ident| $value:expr) => {{
                for part in parts {
                    let ColumnData::$variant(values) = &part.data()[c] else {
                        return Err(mismatch());
                    };
                    let mut present = values.iter();
                    for &level in &part.levels()[c] {
                        if level == 0 {
                            $builder.append_null();
                            continue;
                        }
                        let $x = present.next().ok_or_else(mismatch)?;
                        $builder.append_value($value);
                    }
                }
            }};
        }
        match self {
            ColumnBuilder::Int(b) => append!(b, Int, |x| *x),
            ColumnBuilder::Double(b) => append!(b, Double, |x| *x),
            ColumnBuilder::Bool(b) => append!(b, Bool, |x| *x),
            ColumnBuilder::Text(b) => append!(b, Text, |x| utf8(x.data())?),
            ColumnBuilder::TextView(b) => append!(b, Text, |x| utf8(x.data())?),
        }
        Ok(())
    }

    /// The column built so far, as one array (the builder is left empty).
    fn finish(&mut self) -> ArrayRef {
        match self {
            ColumnBuilder::Int(b) => Arc::new(b.finish()),
            ColumnBuilder::Double(b) => Arc::new(b.finish()),
            ColumnBuilder::Bool(b) => Arc::new(b.finish()),
            ColumnBuilder::Text(b) => Arc::new(b.finish()),
            ColumnBuilder::TextView(b) => Arc::new(b.finish()),
        }
    }
}

/// A text value's UTF-8 (the cells' text is written from Rust strings, so this never fails in
/// practice; a failure is an Arrow error, not a panic).
fn utf8(bytes: &[u8]) -> Result<&str, ArrowError> {
    std::str::from_utf8(bytes).map_err(|e| ArrowError::ExternalError(Box::new(e)))
}

/// Builders for every column of `schema`, with room for `rows` rows.
fn builders(schema: &SchemaRef, rows: usize) -> Vec<ColumnBuilder> {
    schema
        .fields()
        .iter()
        .map(|field| ColumnBuilder::new(field.data_type(), rows))
        .collect()
}

/// Appends a row group's parts to the builders, column by column.
fn append_rows(columns: &mut [ColumnBuilder], parts: &[TypedRows]) -> Result<(), ArrowError> {
    for (c, column) in columns.iter_mut().enumerate() {
        column.append(parts, c)?;
    }
    Ok(())
}

/// The builders' columns as one record batch.
fn finish_batch(
    schema: &SchemaRef,
    columns: &mut [ColumnBuilder],
) -> Result<RecordBatch, ArrowError> {
    let arrays = columns.iter_mut().map(ColumnBuilder::finish).collect();
    RecordBatch::try_new(schema.clone(), arrays)
}

/// A row group as one record batch.
fn record_batch(schema: &SchemaRef, parts: &[TypedRows]) -> Result<RecordBatch, ArrowError> {
    let rows = parts.iter().map(TypedRows::rows).sum();
    let mut columns = builders(schema, rows);
    append_rows(&mut columns, parts)?;
    finish_batch(schema, &mut columns)
}

/// The reader end: record batches until the sweep's thread is done. A failed sweep ends the
/// stream with an error carrying its message; its result comes from [`CellStream::finish`].
struct Reader {
    schema: SchemaRef,
    receiver: Receiver<Message>,
    state: Arc<AtomicU8>,
    /// Whole-table mode: every row group is appended to `columns` and the table is one record
    /// batch at the end, each column one contiguous array that pandas and polars can take
    /// without copying; otherwise one batch per row group.
    whole: bool,
    /// The columns built so far in whole-table mode (none before the first row group).
    columns: Vec<ColumnBuilder>,
    /// The whole table was handed over, or the read gave up: the stream has ended.
    finished: bool,
    /// Rows to make room for at the first row group in whole-table mode: the rows the sweep
    /// expects (bounded by [`WHOLE_TABLE_ROOM_ROWS`]), so the columns seldom grow: a growth is a
    /// copy (Arrow's buffers are over-aligned, so the allocator cannot remap them in place).
    room_rows: usize,
    /// Set to stop the sweep (the stream's cancel flag).
    stop: Arc<AtomicBool>,
}

/// The most rows whole-table mode makes room for before any arrive (16,777,216: 128 MB of
/// address space per numeric column, most of it never touched when fewer rows come).
const WHOLE_TABLE_ROOM_ROWS: usize = 1 << 24;

/// What an interrupted whole-table read reports (the Python package raises `KeyboardInterrupt`
/// on it).
const INTERRUPTED: &str = "rlfrontier: interrupted (KeyboardInterrupt)";

impl Drop for Reader {
    fn drop(&mut self) {
        // Released before its end: the sweep waiting to commit gives up instead.
        let _ = self
            .state
            .compare_exchange(READING, GONE, Ordering::SeqCst, Ordering::SeqCst);
    }
}

impl Iterator for Reader {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.finished {
            return None;
        }
        loop {
            match self.receiver.recv() {
                Ok(Message::Rows(parts)) if self.whole => {
                    if let Err(e) = self.append_whole(&parts) {
                        // The table cannot be whole: the stream ends here, and the sweep, its
                        // reader gone, stops without committing.
                        self.give_up();
                        return Some(Err(e));
                    }
                }
                Ok(Message::Rows(parts)) => return Some(record_batch(&self.schema, &parts)),
                Ok(Message::End) if self.whole => {
                    // The whole table, once: later calls end the stream. The sweep commits
                    // only once the table is built and handed over.
                    self.finished = true;
                    if self.columns.is_empty() {
                        self.columns = builders(&self.schema, 0);
                    }
                    let batch = finish_batch(&self.schema, &mut self.columns);
                    self.columns = Vec::new();
                    match &batch {
                        Ok(_) => self.mark(ENDED),
                        Err(_) => self.give_up(),
                    }
                    return Some(batch);
                }
                Ok(Message::End) => {
                    self.mark(ENDED);
                    return None;
                }
                Ok(Message::Failed(message)) => {
                    return Some(Err(ArrowError::ComputeError(format!(
                        "rlfrontier sweep failed: {message}"
                    ))));
                }
                Ok(Message::Columns(..)) => continue,
                Err(_) => return None,
            }
        }
    }
}

impl Reader {
    /// Moves the reader from reading to `state` (not back from an end already reached).
    fn mark(&self, state: u8) {
        let _ = self
            .state
            .compare_exchange(READING, state, Ordering::SeqCst, Ordering::SeqCst);
    }

    /// Ends the stream early: the sweep stops at its next check and commits nothing, and later
    /// calls return nothing.
    fn give_up(&mut self) {
        self.finished = true;
        self.columns = Vec::new();
        self.stop.store(true, Ordering::SeqCst);
        self.mark(GONE);
    }

    /// Appends a row group to the whole table (making room at the first), then lets Python run
    /// its signal handlers: the whole sweep runs inside one read, so Ctrl-C is taken here, once
    /// per row group, as an error carrying [`INTERRUPTED`].
    fn append_whole(&mut self, parts: &[TypedRows]) -> Result<(), ArrowError> {
        if self.columns.is_empty() {
            let rows: usize = parts.iter().map(TypedRows::rows).sum();
            self.columns = builders(&self.schema, rows.max(self.room_rows));
        }
        append_rows(&mut self.columns, parts)?;
        Python::attach(|py| py.check_signals())
            .map_err(|_| ArrowError::ExternalError(INTERRUPTED.into()))
    }
}

impl RecordBatchReader for Reader {
    fn schema(&self) -> SchemaRef {
        self.schema.clone()
    }
}

/// The sweep's thread: what it printed, or its failure.
type Worker = JoinHandle<Result<Vec<u8>, app::Failure>>;

/// A running sweep whose cells table is read through `__arrow_c_stream__` (once), then
/// [`CellStream::finish`] for the summary (or the error). Dropping it stops the sweep.
#[pyclass(module = "rlfrontier._native")]
pub struct CellStream {
    schema: Option<SchemaRef>,
    expected_rows: u64,
    whole: bool,
    receiver: Mutex<Option<Receiver<Message>>>,
    worker: Mutex<Option<Worker>>,
    interrupted: Arc<AtomicBool>,
    reader: Arc<AtomicU8>,
}

/// Starts `rlfrontier sweep WORDS...` on a thread of its own with its cells table streamed, and
/// waits (without the GIL) until the table's columns are known or the sweep has ended (an error
/// before any cells, or `--cells none`). With `whole`, the stream holds one record batch, the
/// whole table, built as the row groups arrive (for a DataFrame of every cell: contiguous
/// columns convert without a copy); otherwise one batch per row group (memory stays bounded).
#[pyfunction]
#[pyo3(signature = (words, whole=false, string_views=false))]
pub fn sweep_stream(
    py: Python<'_>,
    words: Vec<String>,
    whole: bool,
    string_views: bool,
) -> CellStream {
    let (sender, receiver) = sync_channel(BATCHES_IN_FLIGHT);
    let interrupted = Arc::new(AtomicBool::new(false));
    let reader = Arc::new(AtomicU8::new(READING));
    let stop = interrupted.clone();
    let reader_state = reader.clone();
    let worker = std::thread::spawn(move || {
        let sink = ChannelSink {
            sender,
            stop: stop.clone(),
            reader: reader_state,
            chunks_per_group: if whole {
                WHOLE_TABLE_GROUP_CHUNKS
            } else {
                rlfrontier::engine::PARQUET_ROW_GROUP_CHUNKS
            },
            string_views,
        };
        let run =
            std::panic::AssertUnwindSafe(|| app::run_captured_into(&words, &stop, Some(&sink)));
        let result = std::panic::catch_unwind(run).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_default();
            Err(app::Failure {
                exit_code: 1,
                message: format!("internal error in the sweep: {what}"),
            })
        });
        if let Err(failure) = &result {
            let _ = sink.send(Message::Failed(failure.message.clone()));
        }
        result
    });
    let (schema, expected_rows, receiver) = py.detach(move || {
        let (schema, expected_rows) = match receiver.recv() {
            Ok(Message::Columns(schema, expected_rows)) => (Some(schema), expected_rows),
            _ => (None, 0),
        };
        (schema, expected_rows, receiver)
    });
    CellStream {
        schema,
        expected_rows,
        whole,
        receiver: Mutex::new(Some(receiver)),
        worker: Mutex::new(Some(worker)),
        interrupted,
        reader,
    }
}

#[pymethods]
impl CellStream {
    /// Whether the sweep produced a cells table (false after an early error or `--cells none`).
    #[getter]
    fn has_cells(&self) -> bool {
        self.schema.is_some()
    }

    /// The Arrow PyCapsule protocol: an `ArrowArrayStream` of the cells' record batches, one per
    /// row group (or one in all, `whole`). A `requested_schema` is ignored (the protocol makes it best effort; the table
    /// has one schema). It can be taken once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The protocol makes a requested schema best effort: the table has one, given as it is.
        let _ = requested_schema;
        let schema = self.schema.clone().ok_or_else(|| {
            pyo3::exceptions::PyValueError::new_err("this sweep produced no cells table")
        })?;
        let receiver = take_once(&self.receiver, "the cells stream was already read")?;
        let stream = FFI_ArrowArrayStream::new(Box::new(Reader {
            schema,
            receiver,
            state: self.reader.clone(),
            whole: self.whole,
            columns: Vec::new(),
            finished: false,
            room_rows: usize::try_from(self.expected_rows)
                .unwrap_or(usize::MAX)
                .min(WHOLE_TABLE_ROOM_ROWS),
            stop: self.interrupted.clone(),
        }));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Waits (without the GIL) for the sweep to end and returns `(0, summary bytes)` or
    /// `(exit code, message bytes)`, as `run` does. Call it once the stream is read to its end
    /// or released; while a reader holds unread batches the sweep waits for it, so call
    /// [`CellStream::cancel`] first to give up on them. A stream never taken is dropped here,
    /// which stops the sweep.
    fn finish<'py>(&self, py: Python<'py>) -> PyResult<(u8, Bound<'py, PyBytes>)> {
        let worker = take_once(&self.worker, "finish() was already called")?;
        // A stream never taken cannot be read any more: dropping its receiver lets the sweep end
        // (interrupted) instead of waiting for a reader.
        self.drop_receiver();
        let result = py.detach(|| worker.join()).map_err(|_| {
            pyo3::exceptions::PyRuntimeError::new_err("the sweep's thread panicked")
        })?;
        Ok(crate::outcome(py, result))
    }

    /// Stops the sweep at its next check (a reader that stops early calls this).
    fn cancel(&self) {
        self.interrupted.store(true, Ordering::SeqCst);
        self.drop_receiver();
    }
}

impl CellStream {
    /// Drops the receiver if the stream was never taken: the sweep's next send fails, and a
    /// sweep waiting for its reader to reach the end gives up.
    fn drop_receiver(&self) {
        if let Ok(mut receiver) = self.receiver.lock()
            && receiver.take().is_some()
        {
            self.reader.store(GONE, Ordering::SeqCst);
        }
    }
}

/// What `slot` holds, taken out; `gone` is the error once it has been taken.
fn take_once<T>(slot: &Mutex<Option<T>>, gone: &str) -> PyResult<T> {
    slot.lock()
        .map_err(|_| pyo3::exceptions::PyRuntimeError::new_err("the stream's lock failed"))?
        .take()
        .ok_or_else(|| pyo3::exceptions::PyValueError::new_err(gone.to_string()))
}

impl Drop for CellStream {
    fn drop(&mut self) {
        // An abandoned stream: the sweep stops at its next check; its thread ends on its own.
        self.interrupted.store(true, Ordering::SeqCst);
    }
}
