//! `tileprof.core._native`: the Python face of `tileprof-decode`.
//!
//! Thin on purpose: open the input (a mapped file, bytes, a gzip stream), release the GIL,
//! decode on `jobs` threads, and hand the columns over as one Arrow struct array through the
//! Arrow C data interface (`__arrow_c_array__`), which polars wraps without a copy. Any
//! failure, a panic included, is a `DecodeError(kind, place, message, text)`; the Python layer
//! words it the way tileprof always has.

use std::ffi::CString;
use std::fs::File;
use std::io::{BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex};

use arrow_array::ffi::{to_ffi, FFI_ArrowArray, FFI_ArrowSchema};
use arrow_array::types::UInt32Type;
use arrow_array::{
    Array, ArrayRef, DictionaryArray, Float64Array, Int64Array, StringArray, StructArray,
    UInt32Array,
};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, OffsetBuffer, ScalarBuffer};
use arrow_data::ArrayData;
use arrow_schema::{ArrowError, DataType, Field};
use flate2::read::MultiGzDecoder;
use memmap2::{Mmap, UncheckedAdvice};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyCapsule, PyList};
use tileprof_decode::columns::{room_for, SLACK_BYTES};
use tileprof_decode::columns::{IntColumn, TextColumn};
use tileprof_decode::{json, ndjson, Columns, DecodeError, Progress, NONE, THREAD_PREFIX};

mod frames;
mod groups;
mod kineto;
mod trace;

create_exception!(_native, NativeDecodeError, PyException);

pub(crate) const GZIP_MAGIC: &[u8] = b"\x1f\x8b";

/// The decoded columns, exported to Arrow consumers (polars) through the C data interface.
#[pyclass(frozen, module = "tileprof.core._native")]
struct ArrowColumns {
    /// None once `columns` has handed them out.
    array: Mutex<Option<StructArray>>,
    len: usize,
}

impl ArrowColumns {
    fn new(array: StructArray) -> Self {
        let len = array.len();
        ArrowColumns {
            array: Mutex::new(Some(array)),
            len,
        }
    }

    fn taken() -> PyErr {
        NativeDecodeError::new_err((
            "panic",
            None::<u64>,
            "the columns were handed out already".to_owned(),
            None::<Vec<u8>>,
        ))
    }
}

#[pymethods]
impl ArrowColumns {
    /// The Arrow PyCapsule protocol: (schema capsule, array capsule) of one struct array.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema; // the columns have one schema; consumers cast if they must
        let data = match &*self.array.lock().unwrap_or_else(|p| p.into_inner()) {
            Some(array) => array.to_data(),
            None => return Err(Self::taken()),
        };
        exported(py, data)
    }

    fn __len__(&self) -> usize {
        self.len
    }

    /// Each column as an Arrow array of its own, by name, handed out once: this object keeps
    /// none of them. Measured: polars keeps an imported struct array whole while any of its
    /// columns lives, so a frame sharing the integer columns held every other decoded column
    /// too (the dictionary keys, the metadata ids: 20-28 bytes a sample, 0.4-0.56 GB at 20M
    /// samples); and while this object kept the struct, the columns polars copies (the
    /// dictionary keys, which it remaps) lived on as long as the caller held it (+43 MB at the
    /// peak of a 5M-sample NDJSON load, `build_sample_frame`). Columns exported one by one are
    /// each freed when polars drops them.
    fn columns(&self) -> PyResult<Vec<(String, ArrowColumn)>> {
        let taken = self.array.lock().unwrap_or_else(|p| p.into_inner()).take();
        let array = taken.ok_or_else(Self::taken)?;
        let (fields, arrays, _) = array.into_parts();
        Ok(fields
            .iter()
            .zip(arrays)
            .map(|(field, array)| (field.name().clone(), ArrowColumn { array }))
            .collect())
    }
}

/// One decoded column, exported through the C data interface.
#[pyclass(frozen, module = "tileprof.core._native")]
struct ArrowColumn {
    array: ArrayRef,
}

#[pymethods]
impl ArrowColumn {
    /// The Arrow PyCapsule protocol: (schema capsule, array capsule) of the column.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_array__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyCapsule>, Bound<'py, PyCapsule>)> {
        let _ = requested_schema; // one type per column; consumers cast if they must
        exported(py, self.array.to_data())
    }

    fn __len__(&self) -> usize {
        self.array.len()
    }
}

/// (schema capsule, array capsule) of one array: the Arrow PyCapsule protocol's answer.
fn exported(
    py: Python<'_>,
    data: ArrayData,
) -> PyResult<(Bound<'_, PyCapsule>, Bound<'_, PyCapsule>)> {
    let (array, schema) = to_ffi(&data).map_err(arrow_error)?;
    let schema = capsule::<FFI_ArrowSchema>(py, schema, "arrow_schema")?;
    let array = capsule::<FFI_ArrowArray>(py, array, "arrow_array")?;
    Ok((schema, array))
}

/// What a caught panic said (its `&str` or `String` payload).
fn panic_text(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_owned())
}

fn capsule<'py, T: Send + 'static>(
    py: Python<'py>,
    value: T,
    name: &str,
) -> PyResult<Bound<'py, PyCapsule>> {
    // The consumer moves the struct out (and nulls its release callback); dropping what is left
    // releases it only when nobody took it (the FFI types' Drop checks that).
    let name = CString::new(name).expect("capsule names have no NUL");
    PyCapsule::new_with_destructor(py, value, Some(name), |value, _| drop(value))
}

/// An export that ran out of memory (`ArrowError::MemoryError`: `string_array`, `null_buffer`)
/// is the memory error; any other is a fault of this layer, worded as a panic.
fn arrow_error(error: ArrowError) -> PyErr {
    if let ArrowError::MemoryError(_) = error {
        return to_python(DecodeError::Memory("the Arrow columns"));
    }
    NativeDecodeError::new_err((
        "panic",
        None::<u64>,
        format!("arrow export failed: {error}"),
        None::<Vec<u8>>,
    ))
}

fn int_array(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::new(ScalarBuffer::from(values), None))
}

/// The running out of memory of an export (`string_array`, `null_buffer`): the memory error.
fn short_of_memory(_: std::collections::TryReserveError) -> ArrowError {
    ArrowError::MemoryError("an Arrow buffer".to_owned())
}

/// The validity bitmap of `len` rows (`valid(row)`), allocated fallibly as every buffer of the
/// export is; None when no row is null (arrow's `NullBuffer::from` allocates infallibly).
pub(crate) fn null_buffer(
    len: usize,
    valid: impl Fn(usize) -> bool,
) -> Result<Option<NullBuffer>, ArrowError> {
    let mut words: Vec<u64> = Vec::new();
    words
        .try_reserve_exact(len.div_ceil(64))
        .map_err(short_of_memory)?;
    // Arrow's bit order: row `r` is bit `r % 64` of word `r / 64` (little-endian words); a
    // word is the sum of its rows' distinct bits.
    words.extend((0..len).step_by(64).map(|first| {
        (first..len.min(first + 64))
            .enumerate()
            .map(|(bit, row)| u64::from(valid(row)) << bit)
            .sum::<u64>()
    }));
    let nulls = NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, len));
    Ok((nulls.null_count() > 0).then_some(nulls))
}

fn nullable_array(column: IntColumn) -> Result<ArrayRef, ArrowError> {
    let nulls = null_buffer(column.values.len(), |row| column.valid[row])?;
    Ok(Arc::new(Int64Array::new(
        ScalarBuffer::from(column.values),
        nulls,
    )))
}

/// Ids as a UInt32 array, null where `NONE` (0 under a null), in the ids' own buffer.
pub(crate) fn nullable_ids(ids: Vec<u32>) -> Result<UInt32Array, ArrowError> {
    let nulls = null_buffer(ids.len(), |row| ids[row] != NONE)?;
    // Collected in place: the same element type reuses the allocation.
    let keys: Vec<u32> = ids
        .into_iter()
        .map(|id| if id == NONE { 0 } else { id })
        .collect();
    Ok(UInt32Array::new(ScalarBuffer::from(keys), nulls))
}

/// `values` as one string array, its text and offsets each allocated once, at its exact size
/// and fallibly: arrow's own builder grows its text by doubling, infallibly, so a dictionary of
/// many distinct names near the end of memory needed up to twice its size and panicked.
pub(crate) fn string_array<T: AsRef<[u8]>>(values: &[T]) -> Result<StringArray, ArrowError> {
    let size: usize = values.iter().map(|value| value.as_ref().len()).sum();
    let mut text: Vec<u8> = Vec::new();
    text.try_reserve_exact(size).map_err(short_of_memory)?;
    // One offset before each value and one after the last, reserved and then filled in place
    // (so that no push grows the buffer past its room).
    let count = values.len() + 1;
    let mut ends: Vec<i32> = Vec::new();
    ends.try_reserve_exact(count).map_err(short_of_memory)?;
    ends.resize(count, 0);
    for (end, value) in ends[1..].iter_mut().zip(values) {
        text.extend_from_slice(value.as_ref());
        *end = i32::try_from(text.len()).map_err(|_| ArrowError::OffsetOverflowError(size))?;
    }
    // `try_new` checks the offsets and that the text is UTF-8 (each value was checked when it
    // was added; this is the export's own check).
    StringArray::try_new(
        OffsetBuffer::new(ScalarBuffer::from(ends)),
        Buffer::from_vec(text),
        None,
    )
}

fn text_array(column: TextColumn) -> Result<ArrayRef, ArrowError> {
    let values = string_array(&column.dictionary.values)?;
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(
        nullable_ids(column.ids)?,
        Arc::new(values),
    )?))
}

/// Distinct raw metadata texts.
type Texts = Vec<Box<[u8]>>;

/// The columns as one struct array, plus the distinct metadata texts.
fn to_arrow(columns: Columns) -> Result<(StructArray, Texts), ArrowError> {
    let text = |name: &str| {
        Field::new(
            name,
            DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8)),
            true,
        )
    };
    let fields = vec![
        Field::new("tile", DataType::Int64, false),
        Field::new("offset", DataType::Int64, false),
        Field::new("duration", DataType::Int64, false),
        Field::new("phase", DataType::Int64, true),
        Field::new("epoch", DataType::Int64, true),
        text("kind"),
        text("operation"),
        text("kernel"),
        Field::new("metadataId", DataType::UInt32, true),
    ];
    let arrays = vec![
        int_array(columns.tile),
        int_array(columns.offset),
        int_array(columns.duration),
        nullable_array(columns.phase)?,
        nullable_array(columns.epoch)?,
        text_array(columns.kind)?,
        text_array(columns.operation)?,
        text_array(columns.kernel)?,
        // The frame's own metadataId (null: no metadata), so polars takes it without a copy.
        // Measured on the 5M-sample NDJSON dump: as an Int64 (-1: none) cast and masked in
        // polars, it was 40 MB here and a 60 MB temporary in `build_sample_frame`.
        Arc::new(nullable_ids(columns.metadata_ids)?),
    ];
    let array = StructArray::try_new(fields.into(), arrays, None)?;
    Ok((array, columns.metadata.values))
}

/// Run `decode` with the GIL released, a panic turned into a `DecodeError`.
fn guarded<T: Send>(
    py: Python<'_>,
    decode: impl FnOnce() -> Result<T, DecodeError> + Send,
) -> PyResult<T> {
    guarded_progress(py, None, |_| decode())
}

/// `guarded`, with the decode's progress reported to `report(done_bytes)` as it goes: the
/// decode runs on a thread of its own while this thread waits for each new total and calls
/// `report` with the GIL. An exception raised by `report` is raised once the decode is over.
fn guarded_progress<T: Send>(
    py: Python<'_>,
    report: Option<&Bound<'_, PyAny>>,
    decode: impl FnOnce(&Progress) -> Result<T, DecodeError> + Send,
) -> PyResult<T> {
    let run = |progress: Progress| {
        GUARDED.with(|flag| flag.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(|| decode(&progress)));
        GUARDED.with(|flag| flag.set(false));
        outcome
    };
    let (outcome, failed) = match report {
        None => (py.allow_threads(|| run(Progress::default())), None),
        Some(report) => {
            let report = report.clone().unbind();
            py.allow_threads(|| {
                let (events, totals) = std::sync::mpsc::channel();
                std::thread::scope(|scope| {
                    let decoding = scope.spawn(|| run(Progress::new(Some(events))));
                    let (mut failed, mut reported) = (None, 0);
                    // Ends when the decode is over (its Progress, the only sender, is dropped).
                    // Two threads may send their totals out of order: only a larger one is new.
                    for total in totals {
                        if failed.is_none() && total > reported {
                            reported = total;
                            failed = Python::with_gil(|py| report.call1(py, (total,)).err());
                        }
                    }
                    let outcome = decoding.join().unwrap_or_else(Err);
                    (outcome, failed)
                })
            })
        }
    };
    if let Some(error) = failed {
        return Err(error);
    }
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(to_python(error)),
        Err(panic) => {
            let text = panic_text(panic.as_ref());
            Err(NativeDecodeError::new_err((
                "panic",
                None::<u64>,
                text,
                None::<Vec<u8>>,
            )))
        }
    }
}

fn to_python(error: DecodeError) -> PyErr {
    let message = error.to_string();
    let args = match error {
        DecodeError::Json { sample, message } => ("json", sample.map(|i| i as u64), message, None),
        DecodeError::Line {
            line,
            text,
            message,
        } => ("line", Some(line), message, Some(text)),
        DecodeError::Gzip(detail) => ("gzip", None, detail, None),
        DecodeError::Io(_) => ("io", None, message, None),
        DecodeError::Memory(detail) => ("memory", None, detail.to_owned(), None),
    };
    NativeDecodeError::new_err(args)
}

/// A read-only mapping of a file whose decoded pages are handed back as the decode goes.
struct Mapped(Mmap);

impl json::Release for Mapped {
    fn release(&self, start: usize, end: usize) {
        const PAGE: usize = 4096;
        let first = start.div_ceil(PAGE) * PAGE;
        let last = (end / PAGE) * PAGE;
        if last > first {
            // SAFETY: DONTNEED on a read-only shared file mapping only drops this process's
            // copies of the pages; the next read faults the same bytes back in from the page
            // cache, so slices held into the mapping keep their contents. Measured: without
            // it the mapping's pages count toward peak RSS (the whole file).
            let _ = unsafe {
                self.0
                    .unchecked_advise_range(UncheckedAdvice::DontNeed, first, last - first)
            };
        }
    }
}

/// The file mapped read-only, its pages to be handed back as they are decoded (None: it cannot
/// be mapped, e.g. a pipe).
fn mapped(file: &File) -> Option<Mapped> {
    // SAFETY: the file is mapped read-only; tileprof reads dumps that no one writes while it
    // reads them (a file truncated meanwhile would fault, as for any mapped reader).
    let map = unsafe { Mmap::map(file) }.ok()?;
    // Measured: without this the kernel maps most of the file at the first faults (read-around
    // of pages already in the page cache), so RSS reached the file's size before any block was
    // released; MADV_RANDOM maps only the pages touched.
    let _ = map.advise(memmap2::Advice::Random);
    Some(Mapped(map))
}

pub(crate) fn open(path: &str) -> Result<File, DecodeError> {
    File::open(path).map_err(|error| DecodeError::Io(error.to_string()))
}

/// Gzip data read whole may decompress to at most this many times its size on disk, and always
/// to `GZIP_FLOOR_BYTES` (tileprof/inputs/_common.py's GZIP_MAX_RATIO and GZIP_FLOOR_BYTES, which
/// word the error when the Python side reads the file again; docs/reliability.md).
const GZIP_MAX_RATIO: u64 = 100;
const GZIP_FLOOR_BYTES: u64 = 64 << 20;

/// The most bytes `compressed` bytes of gzip data may decompress to.
pub(crate) fn gzip_limit(compressed: u64) -> u64 {
    GZIP_FLOOR_BYTES.max(GZIP_MAX_RATIO.saturating_mul(compressed))
}

/// The gzip file decompressed in memory, at most `gzip_limit` of its size (a file that is not
/// a regular file has no size to bound it by; the Python side reads those), growing the buffer
/// with `try_reserve` so that running out of memory is an error, not an abort.
fn read_gzip(file: File) -> Result<Vec<u8>, DecodeError> {
    let limit = match file.metadata() {
        Ok(meta) if meta.is_file() => gzip_limit(meta.len()),
        _ => u64::MAX,
    };
    read_bounded(MultiGzDecoder::new(BufReader::new(file)), limit)
}

fn read_bounded(mut reader: impl Read, limit: u64) -> Result<Vec<u8>, DecodeError> {
    let mut data: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 1 << 20];
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(0) => return Ok(data),
            Ok(n) => n,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(DecodeError::Gzip(error.to_string())),
        };
        if (data.len() + n) as u64 > limit {
            return Err(DecodeError::Gzip(format!(
                "decompresses to more than {limit} bytes, over {GZIP_MAX_RATIO} times its size"
            )));
        }
        if data.len() + n > data.capacity() {
            let grow = data.capacity().max(n);
            data.try_reserve(grow)
                .or_else(|_| data.try_reserve_exact(n))
                .map_err(|_| DecodeError::Memory("the decompressed text could not grow"))?;
        }
        data.extend_from_slice(&chunk[..n]);
    }
}

fn json_file(
    path: &str,
    jobs: usize,
    block: Option<usize>,
    progress: &Progress,
) -> Result<(json::JsonDump, bool), DecodeError> {
    afford(SLACK_BYTES)?;
    let pool = tileprof_decode::pool(jobs)?;
    let mut file = open(path)?;
    let mut magic = [0u8; 2];
    let gzip = file
        .read(&mut magic)
        .is_ok_and(|n| n == 2 && magic == GZIP_MAGIC);
    let file = open(path)?;
    if gzip {
        let data = read_gzip(file)?;
        return json::decode(&data, &pool, &json::Keep, block, progress).map(|dump| (dump, true));
    }
    match mapped(&file) {
        Some(mapped) => {
            json::decode(&mapped.0, &pool, &mapped, block, progress).map(|dump| (dump, false))
        }
        None => {
            let mut data = Vec::new();
            BufReader::new(file)
                .read_to_end(&mut data)
                .map_err(|e| match e.kind() {
                    std::io::ErrorKind::OutOfMemory => DecodeError::Memory("the text read"),
                    _ => DecodeError::Io(e.to_string()),
                })?;
            json::decode(&data, &pool, &json::Keep, block, progress).map(|dump| (dump, false))
        }
    }
}

type Decoded<'py> = (ArrowColumns, Bound<'py, PyList>);
/// (columns, distinct metadata texts, raw clockHz, raw tileCount).
type JsonResult<'py> = (
    ArrowColumns,
    Bound<'py, PyList>,
    Option<String>,
    Option<String>,
);

/// Check that `bytes` can be had now (`room_for`): before a decode starts (`SLACK_BYTES`: its
/// small allocations before the columns first grow), so that running out is the one-line
/// error, not an abort.
fn afford(bytes: usize) -> Result<(), DecodeError> {
    room_for(bytes).map_err(|_| DecodeError::Memory("room for the decode"))
}

/// What `convert` makes of decoded columns, run with the GIL released and under the guard:
/// every buffer a conversion to Arrow allocates (text, bitmaps) is allocated fallibly, so
/// running out of memory on the way is the memory error, and a panic the one-line panic
/// error, not a traceback. The tile and Kineto exports both go through it.
pub(crate) fn converted<T: Send>(
    py: Python<'_>,
    convert: impl FnOnce() -> Result<T, ArrowError> + Send,
) -> PyResult<T> {
    guarded(py, || Ok(convert()))?.map_err(arrow_error)
}

fn handed_over(py: Python<'_>, columns: Columns) -> PyResult<Decoded<'_>> {
    let (array, metadata) = converted(py, || to_arrow(columns))?;
    let texts = PyList::new(py, metadata.iter().map(|text| PyBytes::new(py, text)))?;
    Ok((ArrowColumns::new(array), texts))
}

/// Decode a JSON dump file (plain: mapped; gzip: decompressed in memory) on `jobs` threads, in
/// blocks of `block` bytes (None: chosen from the size), calling `progress(bytes)` with the
/// bytes of the samples array decoded so far as the decode goes (of the decompressed text, for
/// gzip). Returns ((columns, distinct metadata texts, raw clockHz, raw tileCount), whether
/// gzipped).
#[pyfunction]
#[pyo3(signature = (path, jobs, block=None, progress=None))]
fn decode_json_file<'py>(
    py: Python<'py>,
    path: &str,
    jobs: usize,
    block: Option<usize>,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<(JsonResult<'py>, bool)> {
    let (dump, gzip) = guarded_progress(py, progress.as_ref(), |counter| {
        json_file(path, jobs, block, counter)
    })?;
    let (columns, metadata) = handed_over(py, dump.columns)?;
    Ok(((columns, metadata, dump.clock_hz, dump.tile_count), gzip))
}

/// Decode a JSON dump held in memory on `jobs` threads (same result as `decode_json_file`,
/// without the gzip flag).
#[pyfunction]
#[pyo3(signature = (data, jobs, block=None))]
fn decode_json_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    jobs: usize,
    block: Option<usize>,
) -> PyResult<JsonResult<'py>> {
    let dump = guarded(py, || {
        afford(SLACK_BYTES)?;
        let pool = tileprof_decode::pool(jobs)?;
        json::decode(data, &pool, &json::Keep, block, &Progress::default())
    })?;
    let (columns, metadata) = handed_over(py, dump.columns)?;
    Ok((columns, metadata, dump.clock_hz, dump.tile_count))
}

/// (columns, distinct metadata texts, header line number, header text, line runs).
type NdjsonResult<'py> = (
    ArrowColumns,
    Bound<'py, PyList>,
    Option<u64>,
    Option<Bound<'py, PyBytes>>,
    ArrowColumns,
);

/// The line runs (`ndjson::LineRuns`) as a struct of two Int64 columns: `start` (the first
/// sample of a run) and `line` (its line).
fn line_runs(lines: ndjson::LineRuns) -> Result<StructArray, ArrowError> {
    let column = |values: Vec<u64>| -> ArrayRef {
        int_array(values.into_iter().map(|value| value as i64).collect())
    };
    let fields = vec![
        Field::new("start", DataType::Int64, false),
        Field::new("line", DataType::Int64, false),
    ];
    let arrays = vec![column(lines.starts), column(lines.lines)];
    StructArray::try_new(fields.into(), arrays, None)
}

fn ndjson_result(py: Python<'_>, dump: ndjson::NdjsonDump) -> PyResult<NdjsonResult<'_>> {
    let (columns, metadata) = handed_over(py, dump.columns)?;
    let (line, text) = match dump.header {
        Some((line, text)) => (Some(line), Some(PyBytes::new(py, &text))),
        None => (None, None),
    };
    let lines = ArrowColumns::new(line_runs(dump.lines).map_err(arrow_error)?);
    Ok((columns, metadata, line, text, lines))
}

/// Stream an NDJSON dump file (plain or gzip) through a window of `window` bytes, on `jobs`
/// threads, calling `progress(bytes)` with the bytes of text decoded so far as each window
/// finishes (of the decompressed text, for gzip). Returns (columns, distinct metadata texts,
/// header line number, header text, each sample's line as runs: `line_runs`).
#[pyfunction]
#[pyo3(signature = (path, jobs, window=ndjson::WINDOW_BYTES, progress=None))]
fn decode_ndjson_file<'py>(
    py: Python<'py>,
    path: &str,
    jobs: usize,
    window: usize,
    progress: Option<Bound<'py, PyAny>>,
) -> PyResult<NdjsonResult<'py>> {
    let dump = guarded_progress(py, progress.as_ref(), |counter| {
        afford(SLACK_BYTES)?;
        let pool = tileprof_decode::pool(jobs)?;
        let mut file = BufReader::with_capacity(1 << 20, open(path)?);
        let mut magic = [0u8; 2];
        let gzip = file
            .read(&mut magic)
            .is_ok_and(|n| n == 2 && magic == GZIP_MAGIC);
        let file = open(path)?;
        if gzip {
            let file = BufReader::with_capacity(1 << 20, file);
            return ndjson::decode(MultiGzDecoder::new(file), &pool, window, true, counter);
        }
        match mapped(&file) {
            Some(mapped) => ndjson::decode_slice(&mapped.0, &pool, window, &mapped, counter),
            None => {
                let file = BufReader::with_capacity(1 << 20, file);
                ndjson::decode(file, &pool, window, false, counter)
            }
        }
    })?;
    ndjson_result(py, dump)
}

/// Decode NDJSON held in memory (same result as `decode_ndjson_file`).
#[pyfunction]
#[pyo3(signature = (data, jobs, window=ndjson::WINDOW_BYTES))]
fn decode_ndjson_bytes<'py>(
    py: Python<'py>,
    data: &[u8],
    jobs: usize,
    window: usize,
) -> PyResult<NdjsonResult<'py>> {
    let dump = guarded(py, || {
        afford(SLACK_BYTES)?;
        let pool = tileprof_decode::pool(jobs)?;
        ndjson::decode_slice(data, &pool, window, &json::Keep, &Progress::default())
    })?;
    ndjson_result(py, dump)
}

/// One value per sample: `by_id[id]` for each sample's id (null where the id or that value is
/// null), its values and bitmap allocated fallibly (`null_buffer`): gathering more than memory
/// holds is the memory error, not an abort in a gathering thread.
fn gathered(ids: &UInt32Array, by_id: &[Option<f64>]) -> Result<ArrayRef, ArrowError> {
    let found = |id: u32| by_id.get(id as usize).copied().flatten();
    let keys = ids.values();
    let mut values: Vec<f64> = Vec::new();
    values
        .try_reserve_exact(keys.len())
        .map_err(short_of_memory)?;
    values.extend(keys.iter().map(|&id| found(id).unwrap_or(0.0)));
    let nulls = null_buffer(keys.len(), |row| {
        ids.is_valid(row) && found(keys[row]).is_some()
    })?;
    Ok(Arc::new(Float64Array::new(
        ScalarBuffer::from(values),
        nulls,
    )))
}

/// Each per-id table (`usefulCycles`, `physicalWorkCycles`) gathered by the decoded metadata
/// ids, the tables on `jobs` threads: what `build_sample_frame` would gather in polars.
/// Measured on the 5M-sample NDJSON dump: polars' two gathers, one after the other (it holds
/// the GIL, and in one select its allocator kept 46 MB more), were 0.12-0.15 s.
#[pyfunction]
fn gather_by_id(
    py: Python<'_>,
    ids: PyRef<'_, ArrowColumn>,
    tables: Vec<Vec<Option<f64>>>,
    jobs: usize,
) -> PyResult<Vec<ArrowColumn>> {
    let array = ids.array.clone();
    let gathers = guarded(py, || {
        let ids = array
            .as_any()
            .downcast_ref::<UInt32Array>()
            .ok_or_else(|| {
                DecodeError::Io("the metadata ids are not a UInt32 column".to_owned())
            })?;
        let pool = tileprof_decode::pool(jobs)?;
        Ok(pool.install(|| {
            use rayon::prelude::*;
            tables
                .par_iter()
                .map(|table| gathered(ids, table))
                .collect::<Result<Vec<_>, _>>()
        }))
    })?
    .map_err(arrow_error)?;
    Ok(gathers
        .into_iter()
        .map(|array| ArrowColumn { array })
        .collect())
}

/// The top-level keys of a JSON object document, its values skipped unchecked
/// (`tileprof_decode::json::top_level_keys`); None when it is not one plain object.
#[pyfunction]
fn top_level_keys(py: Python<'_>, data: &[u8]) -> PyResult<Option<Vec<String>>> {
    guarded(py, || Ok(json::top_level_keys(data)))
}

/// The floor the decoder is measured against (benchmarks/ingest.py): serde_json's validating
/// parse of the whole file on one thread (every byte checked, nothing built).
#[pyfunction]
fn _validate_json_file(py: Python<'_>, path: &str) -> PyResult<()> {
    guarded(py, || {
        // SAFETY: as in `json_file`: a read-only mapping of a file nobody writes meanwhile.
        let map = unsafe { Mmap::map(&open(path)?) }.map_err(|e| DecodeError::Io(e.to_string()))?;
        serde_json::from_slice::<serde::de::IgnoredAny>(&map)
            .map(|_| ())
            .map_err(|e| DecodeError::json(None, e.to_string()))
    })
}

/// Panic inside the guard, as a decoding thread would: the tests hold the guard to turning it
/// into a `DecodeError` of kind "panic" instead of a crash.
#[pyfunction]
fn _panic_in_decoder(py: Python<'_>, jobs: usize) -> PyResult<()> {
    guarded(py, || {
        let pool = tileprof_decode::pool(jobs)?;
        pool.install(|| rayon::join(|| (), || panic!("a decoding thread panicked on purpose")));
        Ok(())
    })
}

thread_local! {
    /// Set while this thread runs `guarded` (the caller's thread; rayon's are named).
    static GUARDED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Keep the default panic message off stderr for panics in the decoder (they become one-line
/// errors); every other panic in the process is printed as before.
fn quiet_decoder_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let decoding = std::thread::current()
            .name()
            .is_some_and(|name| name.starts_with(THREAD_PREFIX));
        if !(decoding || GUARDED.with(|flag| flag.get())) {
            previous(info);
        }
    }));
}

#[pymodule]
fn _native(module: &Bound<'_, PyModule>) -> PyResult<()> {
    quiet_decoder_panics();
    module.add("DecodeError", module.py().get_type::<NativeDecodeError>())?;
    module.add_class::<ArrowColumns>()?;
    module.add_class::<ArrowColumn>()?;
    module.add_function(wrap_pyfunction!(decode_json_file, module)?)?;
    module.add_function(wrap_pyfunction!(decode_json_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(decode_ndjson_file, module)?)?;
    module.add_function(wrap_pyfunction!(decode_ndjson_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_in_decoder, module)?)?;
    module.add_function(wrap_pyfunction!(_validate_json_file, module)?)?;
    module.add_function(wrap_pyfunction!(top_level_keys, module)?)?;
    module.add_function(wrap_pyfunction!(gather_by_id, module)?)?;
    trace::register(module)?;
    groups::register(module)?;
    kineto::register(module)?;
    Ok(())
}
