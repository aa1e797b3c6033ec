//! The group table's statistics (`tileprof-groups`) for `tileprof.analyses.stats`.
//!
//! Two polars frames come through the Arrow C stream interface, one chunk each, read in
//! place: the samples (offset, duration, tile, phase, usefulCycles, physicalWorkCycles) and the groups' row lists
//! (`rows`, a large list of UInt32 row numbers, as polars' list aggregation of a row index
//! gives). The statistics run on `jobs` threads with the GIL released and come back as one
//! Arrow struct array, one row per group. A column the statistics cannot
//! take is a `GroupsError("columns", message)`, a panic a `GroupsError("panic", message)`.

use std::sync::Arc;

use arrow_array::types::{Float64Type, Int64Type, UInt8Type};
use arrow_array::{
    Array, BooleanArray, Float64Array, Int64Array, LargeListArray, RecordBatch, StructArray,
    UInt32Array,
};
use arrow_buffer::ScalarBuffer;
use arrow_schema::{DataType, Field};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use tileprof_groups::{GroupRows, GroupTable, Samples};

use crate::frames::{self, Failure};

create_exception!(_native, GroupsError, PyException);

fn groups_error(failure: Failure) -> PyErr {
    failure.into_py_err(GroupsError::new_err)
}

fn samples(batch: &RecordBatch) -> Result<Samples<'_>, String> {
    let (phase, phase_valid) = frames::values::<Int64Type>(batch, "phase")?;
    let (useful, useful_valid) = frames::values::<Float64Type>(batch, "usefulCycles")?;
    let (physical, physical_valid) = frames::values::<Float64Type>(batch, "physicalWorkCycles")?;
    Ok(Samples {
        offset: frames::full_ints(batch, "offset")?,
        duration: frames::full_ints(batch, "duration")?,
        tile: frames::full_ints(batch, "tile")?,
        phase,
        phase_valid,
        useful,
        useful_valid,
        physical,
        physical_valid,
    })
}

fn group_rows(batch: &RecordBatch) -> Result<GroupRows<'_>, String> {
    let array = batch.column_by_name("rows").ok_or("no column rows")?;
    let lists = array
        .as_any()
        .downcast_ref::<LargeListArray>()
        .ok_or_else(|| format!("rows is {}, not a large list", array.data_type()))?;
    let rows = lists
        .values()
        .as_any()
        .downcast_ref::<UInt32Array>()
        .ok_or_else(|| format!("rows holds {}, not UInt32", lists.values().data_type()))?;
    if lists.null_count() > 0 || rows.null_count() > 0 {
        return Err("rows has nulls".into());
    }
    Ok(GroupRows {
        starts: lists.offsets(),
        rows: rows.values(),
    })
}

/// The table's columns, named as the group table names them.
fn arrow_table(table: GroupTable, percents: &[u32]) -> Result<StructArray, String> {
    let ints = |name: &str, values: Vec<i64>| {
        let array = Int64Array::new(ScalarBuffer::from(values), None);
        (
            Field::new(name, DataType::Int64, false),
            Arc::new(array) as Arc<dyn Array>,
        )
    };
    let doubles = |name: &str, values: Vec<f64>| {
        let array = Float64Array::new(ScalarBuffer::from(values), None);
        (
            Field::new(name, DataType::Float64, false),
            Arc::new(array) as Arc<dyn Array>,
        )
    };
    let mut columns = vec![
        ints("sampleCount", table.sample_count),
        ints("tileCount", table.tile_count),
        ints("phaseCount", table.phase_count),
        ints("phaseCycles", table.phase_cycles),
        ints("workCycles", table.work_cycles),
        ints("estimatedWorkCycles", table.estimated_work_cycles),
        doubles("usefulCycles", table.useful_cycles),
        doubles("physicalWorkCycles", table.physical_work_cycles),
    ];
    let percentiles = percents.iter().zip(table.percentile_cycles);
    columns.extend(percentiles.map(|(p, values)| ints(&format!("p{p}Cycles"), values)));
    columns.push(ints("maximumCycles", table.maximum_cycles));
    columns.push(ints("firstOffset", table.first_offset));
    columns.push(ints("lastOffset", table.last_offset));
    let (fields, arrays): (Vec<Field>, Vec<Arc<dyn Array>>) = columns.into_iter().unzip();
    StructArray::try_new(fields.into(), arrays, None).map_err(|e| e.to_string())
}

/// One row per group of `rows` (frame `rows`, column `rows`) over the samples of `samples`:
/// sampleCount, tileCount, phaseCount, phaseCycles, workCycles, estimatedWorkCycles (Int64),
/// usefulCycles and physicalWorkCycles (Float64, summed in row order), then p{P}Cycles for each
/// of `percents`, maximumCycles, firstOffset, lastOffset (Int64).
#[pyfunction]
#[pyo3(signature = (samples, rows, *, percents, jobs))]
fn group_statistics(
    py: Python<'_>,
    samples: &Bound<'_, PyAny>,
    rows: &Bound<'_, PyAny>,
    percents: Vec<u32>,
    jobs: usize,
) -> PyResult<crate::ArrowColumns> {
    let no_chunk = || groups_error(Failure::Columns("a frame of no chunk".into()));
    let sample_chunk = frames::one_chunk(samples)
        .map_err(groups_error)?
        .ok_or_else(no_chunk)?;
    let row_chunk = frames::one_chunk(rows)
        .map_err(groups_error)?
        .ok_or_else(no_chunk)?;
    let array = frames::guarded(py, jobs, || {
        let table = tileprof_groups::group_statistics(
            &self::samples(&sample_chunk)?,
            &group_rows(&row_chunk)?,
            &percents,
        )
        .map_err(|e| e.0)?;
        arrow_table(table, &percents)
    })
    .map_err(groups_error)?;
    Ok(crate::ArrowColumns::new(array))
}

/// The flag column `name` (UInt8, no null) as booleans.
fn flags(batch: &RecordBatch, name: &str) -> Result<Vec<bool>, String> {
    match frames::values::<UInt8Type>(batch, name)? {
        (values, None) => Ok(values.iter().map(|&v| v != 0).collect()),
        (_, Some(_)) => Err(format!("{name} has nulls")),
    }
}

/// How the CPU ops of `ops` nest (`tileprof_groups::nesting`): a frame of the ops in stack
/// order with `thread` (Int64), `ts`, `dur` (Float64), `candidate`, `composite` (UInt8), no
/// nulls. One row per op: `parent` (its row, null at the top), `counted`, `owner` (a row).
#[pyfunction]
fn op_nesting(py: Python<'_>, ops: &Bound<'_, PyAny>) -> PyResult<crate::ArrowColumns> {
    let chunk = frames::one_chunk(ops).map_err(groups_error)?;
    let chunk =
        chunk.ok_or_else(|| groups_error(Failure::Columns("a frame of no chunk".into())))?;
    let array = frames::guarded(py, 1, || {
        let (ts, dur) = (
            frames::values::<Float64Type>(&chunk, "ts")?,
            frames::values::<Float64Type>(&chunk, "dur")?,
        );
        if ts.1.is_some() || dur.1.is_some() {
            return Err("ts or dur has nulls".into());
        }
        let (candidate, composite) = (flags(&chunk, "candidate")?, flags(&chunk, "composite")?);
        let nesting = tileprof_groups::nesting::op_nesting(&tileprof_groups::nesting::Ops {
            thread: frames::full_ints(&chunk, "thread")?,
            ts: ts.0,
            dur: dur.0,
            candidate: &candidate,
            composite: &composite,
        })
        .map_err(|e| e.0)?;
        let row = |i: usize| i as i64;
        let columns: [(&str, Arc<dyn Array>); 3] = [
            (
                "parent",
                Arc::new(Int64Array::from_iter(
                    nesting.parent.into_iter().map(|p| p.map(row)),
                )),
            ),
            ("counted", Arc::new(BooleanArray::from(nesting.counted))),
            (
                "owner",
                Arc::new(Int64Array::from_iter_values(
                    nesting.owner.into_iter().map(row),
                )),
            ),
        ];
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, array)| Field::new(*name, array.data_type().clone(), true))
            .collect();
        let arrays = columns.into_iter().map(|(_, array)| array).collect();
        StructArray::try_new(fields.into(), arrays, None).map_err(|e| e.to_string())
    })
    .map_err(groups_error)?;
    Ok(crate::ArrowColumns::new(array))
}

/// Panic inside the statistics' guard, on one of its threads: the tests hold the guard to
/// turning it into a `GroupsError` of kind "panic".
#[pyfunction]
fn _panic_in_groups(py: Python<'_>, jobs: usize) -> PyResult<()> {
    frames::guarded(py, jobs, || {
        rayon::join(|| (), || panic!("a group thread panicked on purpose"));
        Ok(())
    })
    .map_err(groups_error)
}

/// Add the statistics' function and its error to the module.
pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add("GroupsError", module.py().get_type::<GroupsError>())?;
    module.add_function(wrap_pyfunction!(group_statistics, module)?)?;
    module.add_function(wrap_pyfunction!(_panic_in_groups, module)?)?;
    module.add_function(wrap_pyfunction!(op_nesting, module)?)?;
    Ok(())
}
