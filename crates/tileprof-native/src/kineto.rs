//! `decode_kineto_bytes`: a Kineto trace's complete events (`tileprof_decode::kineto`) as
//! Arrow columns, text columns as dictionaries over one table of distinct texts.

use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, DictionaryArray, Float64Array, Int64Array, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{ArrowError, DataType, Field};
use std::io::{BufRead, BufReader};

use flate2::read::MultiGzDecoder;
use pyo3::prelude::*;
use pyo3::types::PyBytes;
use tileprof_decode::kineto::{self, KinetoColumns, KinetoTrace, Nullable, Rows};
use tileprof_decode::kineto_inventory::{self, Inventory, InventoryColumns};
use tileprof_decode::kineto_stream::{
    self, StreamedTrace, TimelineColumns, WindowColumns, NO_SPAN,
};
use tileprof_decode::read_ahead::{self, ReadAhead};

use crate::{
    converted, guarded, gzip_limit, null_buffer, nullable_ids, open, string_array, ArrowColumns,
    GZIP_MAGIC,
};

fn ints(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::new(ScalarBuffer::from(values), None))
}

/// The values move into the array without a copy.
fn optional_ints(column: Nullable<i64>) -> Result<ArrayRef, ArrowError> {
    let nulls = null_buffer(column.valid.len(), |row| column.valid[row])?;
    Ok(Arc::new(Int64Array::new(
        ScalarBuffer::from(column.values),
        nulls,
    )))
}

fn optional_floats(column: Nullable<f64>) -> Result<ArrayRef, ArrowError> {
    let nulls = null_buffer(column.valid.len(), |row| column.valid[row])?;
    Ok(Arc::new(Float64Array::new(
        ScalarBuffer::from(column.values),
        nulls,
    )))
}

/// Spans, `NO_SPAN` (an event whose bytes a stream did not keep) as null.
fn spans(values: Vec<u64>) -> Result<ArrayRef, ArrowError> {
    let nulls = null_buffer(values.len(), |row| values[row] != NO_SPAN)?;
    // Collected in place: an element of the same size reuses the allocation.
    let values = values.into_iter().map(|v| v as i64).collect::<Vec<i64>>();
    Ok(Arc::new(Int64Array::new(ScalarBuffer::from(values), nulls)))
}

/// A text column (codes into `texts`, `kineto::NONE` null) as a dictionary array.
fn text_column(codes: Vec<u32>, texts: &ArrayRef) -> Result<ArrayRef, ArrowError> {
    let codes = codes
        .into_iter()
        .map(|code| {
            if code == kineto::NONE {
                tileprof_decode::NONE
            } else {
                code
            }
        })
        .collect();
    Ok(Arc::new(DictionaryArray::<UInt32Type>::try_new(
        nullable_ids(codes)?,
        texts.clone(),
    )?))
}

/// Named columns as one struct array, every field nullable.
fn struct_of(named: Vec<(&str, DataType, ArrayRef)>) -> Result<StructArray, ArrowError> {
    let fields: Vec<Field> = named
        .iter()
        .map(|(name, kind, _)| Field::new(*name, kind.clone(), true))
        .collect();
    let arrays = named.into_iter().map(|(_, _, array)| array).collect();
    StructArray::try_new(fields.into(), arrays, None)
}

fn texts_of(texts: &kineto::Texts) -> Result<ArrayRef, ArrowError> {
    Ok(Arc::new(string_array(&texts.values)?))
}

/// The columns as one struct array; of a read for a timeline (`Rows::Timeline`), without the
/// columns it leaves empty.
fn to_arrow(columns: KinetoColumns) -> Result<StructArray, ArrowError> {
    let texts = texts_of(&columns.texts)?;
    let text = |codes: Vec<u32>| text_column(codes, &texts);
    let dictionary = DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8));
    let spans = [
        ("span_start", DataType::Int64, spans(columns.start)?),
        ("span_end", DataType::Int64, spans(columns.end)?),
    ];
    let mut named = vec![
        ("index", DataType::Int64, ints(columns.index)),
        ("cat", dictionary.clone(), text(columns.cat)?),
        ("name", dictionary.clone(), text(columns.name)?),
        ("ts", DataType::Float64, optional_floats(columns.ts)?),
        ("dur", DataType::Float64, optional_floats(columns.dur)?),
        ("pid", DataType::Int64, optional_ints(columns.pid)?),
        ("device", DataType::Int64, optional_ints(columns.device)?),
        ("stream", DataType::Int64, optional_ints(columns.stream)?),
        (
            "correlation",
            DataType::Int64,
            optional_ints(columns.correlation)?,
        ),
        (
            "external_id",
            DataType::Int64,
            optional_ints(columns.external_id)?,
        ),
    ];
    if columns.rows == Rows::Timeline {
        named.extend(spans);
        return struct_of(named);
    }
    named.extend([
        ("grid", dictionary.clone(), text(columns.grid)?),
        ("block", dictionary.clone(), text(columns.block)?),
        ("input_type", dictionary.clone(), text(columns.input_type)?),
        ("thread", dictionary.clone(), text(columns.thread)?),
        ("flops", dictionary.clone(), text(columns.flops)?),
        ("input_dims", dictionary.clone(), text(columns.input_dims)?),
        (
            "concrete_inputs",
            dictionary.clone(),
            text(columns.concrete_inputs)?,
        ),
        ("input_type_raw", dictionary, text(columns.input_type_raw)?),
    ]);
    named.extend(spans);
    struct_of(named)
}

/// The inventory's columns as one struct array (`INVENTORY_SCHEMA`'s names and order).
fn inventory_to_arrow(columns: InventoryColumns) -> Result<StructArray, ArrowError> {
    let texts = texts_of(&columns.texts)?;
    let text = |codes: Vec<u32>| text_column(codes, &texts);
    let dictionary = DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8));
    let int = DataType::Int64;
    struct_of(vec![
        ("index", int.clone(), ints(columns.index)),
        ("cat", dictionary.clone(), text(columns.cat)?),
        ("name", dictionary.clone(), text(columns.name)?),
        ("ts", DataType::Float64, optional_floats(columns.ts)?),
        ("dur", DataType::Float64, optional_floats(columns.dur)?),
        ("pid", int.clone(), optional_ints(columns.pid)?),
        ("device", int.clone(), optional_ints(columns.device)?),
        ("stream", int.clone(), optional_ints(columns.stream)?),
        (
            "correlation",
            int.clone(),
            optional_ints(columns.correlation)?,
        ),
        (
            "external_id",
            int.clone(),
            optional_ints(columns.external_id)?,
        ),
        ("collective", dictionary.clone(), text(columns.collective)?),
        ("process_group", dictionary, text(columns.process_group)?),
        ("seq", int, optional_ints(columns.seq)?),
    ])
}

/// (columns, the spans of `deviceProperties`, `distributedInfo` and `baseTimeNanoseconds`) of
/// a decoded trace.
type Decoded = (
    ArrowColumns,
    Option<(usize, usize)>,
    Option<(usize, usize)>,
    Option<(usize, usize)>,
);

/// Decode a Kineto trace held in memory, its events on `jobs` threads (`part`: the bytes a
/// thread takes, default `kineto::PART_BYTES`; tests make it tiny), only the rows a GPU
/// timeline reads when `timeline` (`kineto::Rows::Timeline`): `(decoded, None)`, or
/// `(None, why)` when the decoder leaves the document to the Python reader
/// (`tileprof_decode::kineto`); a panic is a `DecodeError` of kind "panic".
#[pyfunction]
#[pyo3(signature = (data, jobs=1, part=None, timeline=false))]
fn decode_kineto_bytes(
    py: Python<'_>,
    data: &[u8],
    jobs: usize,
    part: Option<usize>,
    timeline: bool,
) -> PyResult<(Option<Decoded>, Option<String>)> {
    let outcome = guarded(py, || {
        let pool = tileprof_decode::pool(jobs)?;
        Ok(kineto::decode_on(
            data,
            &pool,
            part.unwrap_or(kineto::PART_BYTES),
            rows(timeline),
        ))
    })?;
    match outcome {
        Ok(KinetoTrace {
            columns,
            device_properties,
            distributed_info,
            base_time,
        }) => {
            let array = converted(py, || to_arrow(columns))?;
            let decoded = (
                ArrowColumns::new(array),
                device_properties,
                distributed_info,
                base_time,
            );
            Ok((Some(decoded), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
    }
}

/// The rows a decode files: `Rows::Timeline` when `timeline`, else every kept row.
fn rows(timeline: bool) -> Rows {
    if timeline {
        Rows::Timeline
    } else {
        Rows::All
    }
}

/// (columns, the span of `distributedInfo`) of a trace's inventory.
type DecodedInventory = (ArrowColumns, Option<(usize, usize)>);

/// The inventory of a Kineto trace held in memory, for the capture checks
/// (`tileprof_decode::kineto_inventory`): `((columns, the span of distributedInfo), None)`, or
/// `(None, why)` when it leaves the document to the Python reader; a panic is a
/// `DecodeError` of kind "panic".
#[pyfunction]
fn decode_kineto_inventory(
    py: Python<'_>,
    data: &[u8],
) -> PyResult<(Option<DecodedInventory>, Option<String>)> {
    let outcome = guarded(py, || Ok(kineto_inventory::inventory(data)))?;
    match outcome {
        Ok(Inventory {
            columns,
            distributed_info,
        }) => {
            let array = converted(py, || inventory_to_arrow(columns))?;
            Ok((Some((ArrowColumns::new(array), distributed_info)), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
    }
}

/// (columns, raw `deviceProperties`, raw `distributedInfo`, the kept bytes that the spans
/// point into, the top-level keys, raw `baseTimeNanoseconds`) of a trace decoded from its
/// file.
type Streamed<'py> = (
    ArrowColumns,
    Option<Bound<'py, PyBytes>>,
    Option<Bound<'py, PyBytes>>,
    Bound<'py, PyBytes>,
    Vec<String>,
    Option<Bound<'py, PyBytes>>,
);

/// Decode the Kineto trace in the file at `path` (plain or gzip, at most `gzip_limit` of its
/// size for gzip) through a window of `window` bytes (`tileprof_decode::kineto_stream`), its
/// events on `jobs` threads in parts of `part` bytes, only the rows a GPU timeline reads when
/// `timeline`: `(decoded, None)`, or `(None, why)` when it leaves the file to the Python
/// reader (a file it cannot open or read included); a panic is a `DecodeError` of kind
/// "panic".
#[pyfunction]
#[pyo3(signature = (path, jobs=1, part=None, window=None, timeline=false))]
fn decode_kineto_file<'py>(
    py: Python<'py>,
    path: &str,
    jobs: usize,
    part: Option<usize>,
    window: Option<usize>,
    timeline: bool,
) -> PyResult<(Option<Streamed<'py>>, Option<String>)> {
    let outcome = guarded(py, || {
        let pool = tileprof_decode::pool(jobs)?;
        let split = Some((&pool, part.unwrap_or(kineto::PART_BYTES)));
        Ok(match rows(timeline) {
            Rows::All => stream_file::<KinetoColumns>(path, split, window),
            Rows::Timeline => stream_file::<TimelineColumns>(path, split, window).map(Into::into),
        })
    })?;
    match outcome {
        Ok(StreamedTrace {
            columns,
            kept,
            device_properties,
            distributed_info,
            base_time,
            keys,
        }) => {
            let array = converted(py, || to_arrow(columns))?;
            let raw = |text: Option<Vec<u8>>| text.map(|text| PyBytes::new(py, &text));
            let decoded = (
                ArrowColumns::new(array),
                raw(device_properties),
                raw(distributed_info),
                PyBytes::new(py, &kept),
                keys,
                raw(base_time),
            );
            Ok((Some(decoded), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
    }
}

/// The trace in the file at `path`, plain or gzip (at most `gzip_limit` of its size),
/// decoded through a window of `window` bytes (default `kineto_stream::WINDOW_BYTES`); a file
/// it cannot open or read is declined, for the Python reader to word.
fn stream_file<C: WindowColumns>(
    path: &str,
    split: Option<(&rayon::ThreadPool, usize)>,
    window: Option<usize>,
) -> Result<StreamedTrace<C>, kineto::Declined> {
    let window = window.unwrap_or(kineto_stream::WINDOW_BYTES);
    let unread = |why: String| kineto::Declined(format!("cannot read: {why}"));
    let file = open(path).map_err(|error| unread(error.to_string()))?;
    let size = file.metadata().map_err(|e| unread(e.to_string()))?.len();
    let mut file = BufReader::with_capacity(1 << 20, file);
    let head = file.fill_buf().map_err(|error| unread(error.to_string()))?;
    if head.starts_with(GZIP_MAGIC) {
        // inflated on a thread of its own while the decoder's threads read the windows
        let text = ReadAhead::new(
            MultiGzDecoder::new(file),
            read_ahead::CHUNK_BYTES,
            read_ahead::DEPTH,
        )
        .map_err(|error| unread(error.to_string()))?;
        kineto_stream::decode_stream(text, split, window, gzip_limit(size))
    } else {
        kineto_stream::decode_stream(file, split, window, u64::MAX)
    }
}

/// (columns, raw `distributedInfo`, the top-level keys) of a trace's inventory read from its
/// file.
type StreamedInventory<'py> = (ArrowColumns, Option<Bound<'py, PyBytes>>, Vec<String>);

/// The inventory of the Kineto trace in the file at `path` (plain or gzip), read through a
/// window of `window` bytes (`tileprof_decode::kineto_stream`): `(inventory, None)`, or
/// `(None, why)` when it leaves the file to the Python reader; a panic is a `DecodeError` of
/// kind "panic".
#[pyfunction]
#[pyo3(signature = (path, window=None))]
fn decode_kineto_inventory_file<'py>(
    py: Python<'py>,
    path: &str,
    window: Option<usize>,
) -> PyResult<(Option<StreamedInventory<'py>>, Option<String>)> {
    let outcome = guarded(py, || {
        Ok(stream_file::<InventoryColumns>(path, None, window))
    })?;
    match outcome {
        Ok(StreamedTrace {
            columns,
            distributed_info,
            keys,
            ..
        }) => {
            let array = converted(py, || inventory_to_arrow(columns))?;
            let info = distributed_info.map(|text| PyBytes::new(py, &text));
            Ok((Some((ArrowColumns::new(array), info, keys)), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_kineto_inventory_file, module)?)?;
    module.add_function(wrap_pyfunction!(decode_kineto_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(decode_kineto_file, module)?)?;
    module.add_function(wrap_pyfunction!(decode_kineto_inventory, module)?)
}
