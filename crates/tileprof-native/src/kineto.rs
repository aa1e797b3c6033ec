//! `decode_kineto_bytes`: a Kineto trace's complete events (`tileprof_decode::kineto`) as
//! Arrow columns, text columns as dictionaries over one table of distinct texts.

use std::sync::Arc;

use arrow_array::types::UInt32Type;
use arrow_array::{ArrayRef, DictionaryArray, Float64Array, Int64Array, StringArray, StructArray};
use arrow_buffer::{NullBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field};
use pyo3::prelude::*;
use tileprof_decode::kineto::{self, KinetoColumns, KinetoTrace, Nullable};
use tileprof_decode::kineto_inventory::{self, Inventory, InventoryColumns};

use crate::{arrow_error, guarded, nullable_ids, ArrowColumns};

fn ints(values: Vec<i64>) -> ArrayRef {
    Arc::new(Int64Array::new(ScalarBuffer::from(values), None))
}

/// The validity of a `Nullable` column as Arrow's null buffer (None when no row is null).
fn validity(valid: Vec<bool>) -> Option<NullBuffer> {
    let nulls = NullBuffer::from(valid);
    (nulls.null_count() > 0).then_some(nulls)
}

/// The values move into the array without a copy.
fn optional_ints(column: Nullable<i64>) -> ArrayRef {
    Arc::new(Int64Array::new(
        ScalarBuffer::from(column.values),
        validity(column.valid),
    ))
}

fn optional_floats(column: Nullable<f64>) -> ArrayRef {
    Arc::new(Float64Array::new(
        ScalarBuffer::from(column.values),
        validity(column.valid),
    ))
}

fn spans(values: Vec<u64>) -> ArrayRef {
    ints(values.into_iter().map(|v| v as i64).collect())
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
        nullable_ids(codes),
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

fn texts_of(texts: &kineto::Texts) -> ArrayRef {
    Arc::new(StringArray::from_iter_values(texts.values.iter()))
}

/// The columns as one struct array.
fn to_arrow(columns: KinetoColumns) -> Result<StructArray, ArrowError> {
    let texts = texts_of(&columns.texts);
    let text = |codes: Vec<u32>| text_column(codes, &texts);
    let dictionary = DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8));
    let named = vec![
        ("index", DataType::Int64, ints(columns.index)),
        ("cat", dictionary.clone(), text(columns.cat)?),
        ("name", dictionary.clone(), text(columns.name)?),
        ("ts", DataType::Float64, optional_floats(columns.ts)),
        ("dur", DataType::Float64, optional_floats(columns.dur)),
        ("pid", DataType::Int64, optional_ints(columns.pid)),
        ("device", DataType::Int64, optional_ints(columns.device)),
        ("stream", DataType::Int64, optional_ints(columns.stream)),
        (
            "correlation",
            DataType::Int64,
            optional_ints(columns.correlation),
        ),
        (
            "external_id",
            DataType::Int64,
            optional_ints(columns.external_id),
        ),
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
        ("span_start", DataType::Int64, spans(columns.start)),
        ("span_end", DataType::Int64, spans(columns.end)),
    ];
    struct_of(named)
}

/// The inventory's columns as one struct array (`INVENTORY_SCHEMA`'s names and order).
fn inventory_to_arrow(columns: InventoryColumns) -> Result<StructArray, ArrowError> {
    let texts = texts_of(&columns.texts);
    let text = |codes: Vec<u32>| text_column(codes, &texts);
    let dictionary = DataType::Dictionary(Box::new(DataType::UInt32), Box::new(DataType::Utf8));
    let int = DataType::Int64;
    struct_of(vec![
        ("index", int.clone(), ints(columns.index)),
        ("cat", dictionary.clone(), text(columns.cat)?),
        ("name", dictionary.clone(), text(columns.name)?),
        ("ts", DataType::Float64, optional_floats(columns.ts)),
        ("dur", DataType::Float64, optional_floats(columns.dur)),
        ("pid", int.clone(), optional_ints(columns.pid)),
        ("device", int.clone(), optional_ints(columns.device)),
        ("stream", int.clone(), optional_ints(columns.stream)),
        (
            "correlation",
            int.clone(),
            optional_ints(columns.correlation),
        ),
        (
            "external_id",
            int.clone(),
            optional_ints(columns.external_id),
        ),
        ("collective", dictionary.clone(), text(columns.collective)?),
        ("process_group", dictionary, text(columns.process_group)?),
        ("seq", int, optional_ints(columns.seq)),
    ])
}

/// (columns, the spans of `deviceProperties` and `distributedInfo`) of a decoded trace.
type Decoded = (ArrowColumns, Option<(usize, usize)>, Option<(usize, usize)>);

/// Decode a Kineto trace held in memory, its events on `jobs` threads (`part`: the bytes a
/// thread takes, default `kineto::PART_BYTES`; tests make it tiny): `(decoded, None)`, or
/// `(None, why)` when the decoder leaves the document to the Python reader
/// (`tileprof_decode::kineto`); a panic is a `DecodeError` of kind "panic".
#[pyfunction]
#[pyo3(signature = (data, jobs=1, part=None))]
fn decode_kineto_bytes(
    py: Python<'_>,
    data: &[u8],
    jobs: usize,
    part: Option<usize>,
) -> PyResult<(Option<Decoded>, Option<String>)> {
    let outcome = guarded(py, || {
        let pool = tileprof_decode::pool(jobs)?;
        Ok(kineto::decode_on(
            data,
            &pool,
            part.unwrap_or(kineto::PART_BYTES),
        ))
    })?;
    match outcome {
        Ok(KinetoTrace {
            columns,
            device_properties,
            distributed_info,
        }) => {
            let array = to_arrow(columns).map_err(arrow_error)?;
            let decoded = (
                ArrowColumns::new(array),
                device_properties,
                distributed_info,
            );
            Ok((Some(decoded), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
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
            let array = inventory_to_arrow(columns).map_err(arrow_error)?;
            Ok((Some((ArrowColumns::new(array), distributed_info)), None))
        }
        Err(declined) => Ok((None, Some(declined.0))),
    }
}

pub fn register(module: &Bound<'_, PyModule>) -> PyResult<()> {
    module.add_function(wrap_pyfunction!(decode_kineto_bytes, module)?)?;
    module.add_function(wrap_pyfunction!(decode_kineto_inventory, module)?)
}
