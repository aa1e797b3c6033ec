//! The `.pftrace` encoder (`tileprof-pftrace`) for `tileprof.views.trace`, and the overlap
//! lanes and counter bins for `tileprof.model.trace`.
//!
//! Columns come as a polars DataFrame through the Arrow C stream interface
//! (`__arrow_c_stream__`, one chunk) and are read in place; the GIL is released while the
//! batches are encoded and compressed on `jobs` threads. A column the encoder cannot take is
//! an `EncodeError("columns", message)`, a panic an `EncodeError("panic", message)`.

use std::sync::Arc;

use arrow_array::types::{Float64Type, Int64Type};
use arrow_array::{Array, ArrowPrimitiveType, Float64Array, Int64Array, RecordBatch, StructArray};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList};
use tileprof_pftrace::{
    counters, lanes, Arg, Bits, Column, ColumnError, Encoded, Lists, Slices, Tracks,
};

use crate::frames::{self, Failure};

create_exception!(_native, EncodeError, PyException);

fn columns_error(message: impl Into<String>) -> PyErr {
    EncodeError::new_err(("columns", message.into()))
}

/// The one chunk of a DataFrame, imported without a copy (`frames::one_chunk`).
fn one_chunk(frame: &Bound<'_, PyAny>) -> PyResult<Option<RecordBatch>> {
    frames::one_chunk(frame).map_err(encode_error)
}

fn encode_error(failure: Failure) -> PyErr {
    failure.into_py_err(EncodeError::new_err)
}

/// A column as the encoder reads it: values, and the validity bitmap in place.
fn column<'a, T: ArrowPrimitiveType>(
    batch: &'a RecordBatch,
    name: &str,
) -> Result<Column<'a, T::Native>, ColumnError> {
    let (values, nulls) = frames::values::<T>(batch, name).map_err(ColumnError)?;
    let valid = nulls.map(|n| Bits {
        bytes: n.buffer().as_slice(),
        offset: n.offset(),
    });
    Ok(Column { values, valid })
}

fn ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<Column<'a, i64>, ColumnError> {
    column::<Int64Type>(batch, name)
}

fn full_ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a [i64], ColumnError> {
    frames::full_ints(batch, name).map_err(ColumnError)
}

fn doubles<'a>(batch: &'a RecordBatch, name: &str) -> Result<Column<'a, f64>, ColumnError> {
    column::<Float64Type>(batch, name)
}

fn args<'a, T>(
    batch: &'a RecordBatch,
    spec: &[(u64, String)],
    read: fn(&'a RecordBatch, &str) -> Result<Column<'a, T>, ColumnError>,
) -> Result<Vec<Arg<'a, T>>, ColumnError> {
    spec.iter()
        .map(|(name_iid, column)| {
            Ok(Arg {
                name_iid: *name_iid,
                column: read(batch, column)?,
            })
        })
        .collect()
}

/// Run `work` on `jobs` threads with the GIL released; a panic becomes an `EncodeError`.
fn encoding<T: Send>(
    py: Python<'_>,
    jobs: usize,
    work: impl FnOnce() -> Result<T, ColumnError> + Send,
) -> PyResult<T> {
    frames::guarded(py, jobs, || work().map_err(|e| e.0)).map_err(encode_error)
}

fn handed_back(py: Python<'_>, encoded: Encoded) -> PyResult<Bound<'_, PyList>> {
    PyList::new(py, encoded.iter().map(|chunk| PyBytes::new(py, chunk)))
}

/// The slices of `frame` (columns track, begin, end, name, category and the argument columns)
/// as compressed batches of `batch` slices, in Trace framing: the bytes to write, in order.
/// `ints`, `doubles`, `strings`: (name iid, column) per debug annotation (a string column
/// holds value iids); `lists`/`list_column`: per row an index into shared annotation lists.
#[pyfunction]
#[pyo3(signature = (frame, *, sequence, ints, doubles, strings, lists, list_column, batch, level, jobs))]
#[allow(clippy::too_many_arguments)]
fn encode_slices<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
    sequence: u32,
    ints: Vec<(u64, String)>,
    doubles: Vec<(u64, String)>,
    strings: Vec<(u64, String)>,
    lists: Vec<Vec<(u64, u64)>>,
    list_column: Option<String>,
    batch: usize,
    level: u32,
    jobs: usize,
) -> PyResult<Bound<'py, PyList>> {
    let Some(chunk) = one_chunk(frame)? else {
        return PyList::new(py, Vec::<Vec<u8>>::new());
    };
    let encoded = encoding(py, jobs, || {
        let slices = Slices {
            sequence,
            track: full_ints(&chunk, "track")?,
            begin: full_ints(&chunk, "begin")?,
            end: full_ints(&chunk, "end")?,
            name: full_ints(&chunk, "name")?,
            category: self::ints(&chunk, "category")?,
            ints: args(&chunk, &ints, self::ints)?,
            doubles: args(&chunk, &doubles, self::doubles)?,
            strings: args(&chunk, &strings, self::ints)?,
            lists: match &list_column {
                Some(column) => Some(Lists {
                    entries: &lists,
                    index: self::ints(&chunk, column)?,
                }),
                None => None,
            },
        };
        slices.encode(batch, level)
    })?;
    handed_back(py, encoded)
}

/// One TrackDescriptor per row of `frame` (uuid, parent, rank, name: an index into `names`),
/// as compressed batches of `batch` descriptors, in Trace framing.
#[pyfunction]
#[pyo3(signature = (frame, names, *, sequence, batch, level, jobs))]
fn encode_tracks<'py>(
    py: Python<'py>,
    frame: &Bound<'py, PyAny>,
    names: Vec<String>,
    sequence: u32,
    batch: usize,
    level: u32,
    jobs: usize,
) -> PyResult<Bound<'py, PyList>> {
    let Some(chunk) = one_chunk(frame)? else {
        return PyList::new(py, Vec::<Vec<u8>>::new());
    };
    let encoded = encoding(py, jobs, || {
        let tracks = Tracks {
            sequence,
            uuid: full_ints(&chunk, "uuid")?,
            parent: full_ints(&chunk, "parent")?,
            rank: full_ints(&chunk, "rank")?,
            name: full_ints(&chunk, "name")?,
            names: &names,
        };
        tracks.encode(batch, level)
    })?;
    handed_back(py, encoded)
}

/// The overlap lane of every interval of `frame` (key, start, end), as an Arrow struct array
/// with one Int64 column `lane`.
#[pyfunction]
#[pyo3(signature = (frame, *, jobs))]
fn assign_lanes(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    jobs: usize,
) -> PyResult<crate::ArrowColumns> {
    let lanes = match one_chunk(frame)? {
        None => Vec::new(),
        Some(chunk) => encoding(py, jobs, || {
            lanes::assign_lanes(
                full_ints(&chunk, "key")?,
                full_ints(&chunk, "start")?,
                full_ints(&chunk, "end")?,
            )
        })?,
    };
    let field = Field::new("lane", DataType::Int64, false);
    let column = Arc::new(Int64Array::new(ScalarBuffer::from(lanes), None));
    let array = StructArray::try_new(vec![field].into(), vec![column], None)
        .map_err(|e| columns_error(e.to_string()))?;
    Ok(crate::ArrowColumns::new(array))
}

/// The counters' values per time bin of `frame` (start, end, useful: Float64, NaN where not
/// known), as an Arrow struct array of two Float64 columns: `cycles` (the samples' cycles in
/// the bin) and `useful` (their useful cycles spread evenly over their length).
#[pyfunction]
#[pyo3(signature = (frame, *, start, width, count))]
fn binned_counters(
    py: Python<'_>,
    frame: &Bound<'_, PyAny>,
    start: i64,
    width: i64,
    count: usize,
) -> PyResult<crate::ArrowColumns> {
    if width < 1 || count < 1 {
        return Err(columns_error(format!("{count} bins of {width} cycles")));
    }
    let bins = counters::Bins {
        start,
        width,
        count,
    };
    let (cycles, useful) = match one_chunk(frame)? {
        None => (vec![0.0; count], vec![0.0; count]),
        Some(chunk) => encoding(py, 1, || {
            let (starts, ends) = (full_ints(&chunk, "start")?, full_ints(&chunk, "end")?);
            let amounts = doubles(&chunk, "useful")?;
            if amounts.valid.is_some() || starts.len() != ends.len() {
                return Err(ColumnError("useful has nulls (NaN is no value)".into()));
            }
            Ok((
                counters::binned_cycles(starts, ends, bins),
                counters::spread(starts, ends, amounts.values, bins),
            ))
        })?,
    };
    let fields = vec![
        Field::new("cycles", DataType::Float64, false),
        Field::new("useful", DataType::Float64, false),
    ];
    let columns: Vec<Arc<dyn Array>> = vec![
        Arc::new(Float64Array::new(ScalarBuffer::from(cycles), None)),
        Arc::new(Float64Array::new(ScalarBuffer::from(useful), None)),
    ];
    let array = StructArray::try_new(fields.into(), columns, None)
        .map_err(|e| columns_error(e.to_string()))?;
    Ok(crate::ArrowColumns::new(array))
}

/// Panic inside the encoder's guard, on one of its threads: the tests hold the guard to
/// turning it into an `EncodeError` of kind "panic".
#[pyfunction]
fn _panic_in_encoder(py: Python<'_>, jobs: usize) -> PyResult<()> {
    encoding(py, jobs, || {
        rayon::join(|| (), || panic!("an encoding thread panicked on purpose"));
        Ok(())
    })
}

/// Add the encoder's functions and its error to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("EncodeError", module.py().get_type::<EncodeError>())?;
    module.add_function(wrap_pyfunction!(encode_slices, module)?)?;
    module.add_function(wrap_pyfunction!(encode_tracks, module)?)?;
    module.add_function(wrap_pyfunction!(assign_lanes, module)?)?;
    module.add_function(wrap_pyfunction!(binned_counters, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_in_encoder, module)?)?;
    Ok(())
}
