//! What the encoder's and the group table's bindings share: a polars frame's one chunk,
//! imported in place, and work run on threads with the GIL released and panics caught.

use std::ffi::CStr;
use std::panic::{catch_unwind, AssertUnwindSafe};

use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::{Array, ArrowPrimitiveType, PrimitiveArray, RecordBatch};
use arrow_buffer::NullBuffer;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

/// Why a binding failed: a Python error on the way in, columns it cannot take, or a panic.
pub enum Failure {
    Python(PyErr),
    Columns(String),
    Panic(String),
}

impl Failure {
    /// The Python exception: `error((kind, message))` with kind "columns" or "panic".
    pub fn into_py_err(self, error: fn((&'static str, String)) -> PyErr) -> PyErr {
        match self {
            Failure::Python(error) => error,
            Failure::Columns(message) => error(("columns", message)),
            Failure::Panic(message) => error(("panic", message)),
        }
    }
}

/// The one chunk of a DataFrame (or any Arrow stream exporter), imported without a copy;
/// None for a frame of no chunk.
pub fn one_chunk(frame: &Bound<'_, PyAny>) -> Result<Option<RecordBatch>, Failure> {
    let capsule = frame
        .call_method0("__arrow_c_stream__")
        .and_then(|c| Ok(c.downcast_into::<PyCapsule>()?))
        .map_err(Failure::Python)?;
    if capsule.name().map_err(Failure::Python)? != Some(c"arrow_array_stream" as &CStr) {
        return Err(Failure::Columns(
            "__arrow_c_stream__ gave no arrow_array_stream capsule".into(),
        ));
    }
    // SAFETY: by the Arrow PyCapsule protocol the capsule holds an FFI_ArrowArrayStream;
    // from_raw moves it out and leaves a released one behind, which the capsule's destructor
    // then skips.
    let stream = capsule.pointer().cast::<FFI_ArrowArrayStream>();
    let reader = unsafe { RecordBatchStreamReader::from_raw(stream) }
        .map_err(|e| Failure::Columns(e.to_string()))?;
    let mut chunks = reader
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Failure::Columns(e.to_string()))?;
    match chunks.len() {
        0 => Ok(None),
        1 => Ok(chunks.pop()),
        n => Err(Failure::Columns(format!(
            "{n} chunks: rechunk the frame first"
        ))),
    }
}

/// The values of the primitive column `name` (Int64, Float64: `T`) and its validity (None: no
/// null), read in place.
pub fn values<'a, T: ArrowPrimitiveType>(
    batch: &'a RecordBatch,
    name: &str,
) -> Result<(&'a [T::Native], Option<&'a NullBuffer>), String> {
    let array = batch
        .column_by_name(name)
        .ok_or_else(|| format!("no column {name}"))?;
    let typed = array
        .as_any()
        .downcast_ref::<PrimitiveArray<T>>()
        .ok_or_else(|| format!("{name} is {}, not {}", array.data_type(), T::DATA_TYPE))?;
    Ok((typed.values(), typed.nulls().filter(|n| n.null_count() > 0)))
}

/// The values of the Int64 column `name`, which has no null.
pub fn full_ints<'a>(batch: &'a RecordBatch, name: &str) -> Result<&'a [i64], String> {
    match values::<arrow_array::types::Int64Type>(batch, name)? {
        (values, None) => Ok(values),
        (_, Some(_)) => Err(format!("{name} has nulls")),
    }
}

/// Run `work` on a pool of `jobs` threads with the GIL released; a panic is caught (and kept
/// off stderr) and becomes `Failure::Panic`.
pub fn guarded<T: Send>(
    py: Python<'_>,
    jobs: usize,
    work: impl FnOnce() -> Result<T, String> + Send,
) -> Result<T, Failure> {
    let outcome = py.allow_threads(|| {
        crate::GUARDED.with(|flag| flag.set(true));
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let pool = tileprof_decode::pool(jobs).map_err(|e| e.to_string())?;
            pool.install(work)
        }));
        crate::GUARDED.with(|flag| flag.set(false));
        outcome
    });
    match outcome {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(message)) => Err(Failure::Columns(message)),
        Err(panic) => Err(Failure::Panic(crate::panic_text(panic.as_ref()))),
    }
}
