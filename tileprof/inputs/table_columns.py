"""Turning a table of raw columns (CSV, Parquet) into the typed sample frame.

Both tabular forms name their columns by the dump's raw keys (``physicalTile``, ``offset``,
…, ``metadata``), with the metadata list as JSON text per row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.schema import INTEGER_COLUMNS, RAW_KEYS, REQUIRED_RAW_KEYS, STRING_COLUMNS
from tileprof.inputs._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    build_sample_frame,
    decode_metadata,
    intern_metadata,
)


def typed_from_table(
    table: pl.DataFrame, path: Path, header: DeviceHeader, place: PlaceFn, column_place: str
) -> ParsedDump:
    """Check and convert raw columns; ``column_place`` words the error place ("column", "field")."""
    missing = [key for key in REQUIRED_RAW_KEYS if key not in table.columns]
    if missing:
        raise InputError(path, f"{column_place} {missing[0]}", "required column is missing")
    columns: dict[str, pl.Series] = {}
    for name in (*INTEGER_COLUMNS, *STRING_COLUMNS):
        key = RAW_KEYS[name]
        if key not in table.columns:
            columns[name] = pl.Series(name, [None] * table.height, dtype=pl.String)
            continue
        raw = table.get_column(key)
        if name in STRING_COLUMNS:
            if raw.dtype not in (pl.String, pl.Categorical, pl.Enum, pl.Null):
                raise InputError(path, f"{column_place} {key}", f"expected text, got {raw.dtype}")
            columns[name] = raw.cast(pl.String).replace("", None) if raw.dtype != pl.Null else raw
            continue
        columns[name] = _integer_column(raw, path, key, place, column_place)
        if RAW_KEYS[name] in REQUIRED_RAW_KEYS:
            nulls = columns[name].is_null()
            if nulls.any():
                first = int(nulls.arg_true()[0])
                raise InputError(path, f"{place(first)}, {column_place} {key}", "value is missing")
    metadata = table.get_column("metadata") if "metadata" in table.columns else None
    if metadata is None:
        ids = np.full(table.height, -1, dtype=np.int64)
        distinct: list[bytes | str] = []
    else:
        if metadata.dtype not in (pl.String, pl.Null):
            raise InputError(
                path, f"{column_place} metadata", f"expected JSON text, got {metadata.dtype}"
            )
        ids, distinct = intern_metadata(metadata.cast(pl.String).to_list())
    entries, useful, physical = decode_metadata(path, distinct, ids, place)
    frame = build_sample_frame(columns, ids, useful, physical)
    return ParsedDump(frame, entries, header, place)


def _integer_column(
    raw: pl.Series, path: Path, key: str, place: PlaceFn, column_place: str
) -> pl.Series:
    """An integer column as Int64; text cells are parsed, floats are refused as in JSON."""
    if raw.dtype == pl.Null:
        return raw.cast(pl.Int64)
    if raw.dtype.is_integer():
        text = raw
    elif raw.dtype == pl.String:
        text = raw.str.strip_chars().replace("", None)
    else:
        raise InputError(path, f"{column_place} {key}", f"expected integers, got {raw.dtype}")
    converted = text.cast(pl.Int64, strict=False)
    bad = converted.is_null() & text.is_not_null()
    if bad.any():
        first = int(bad.arg_true()[0])
        raise InputError(
            path,
            f"{place(first)}, {column_place} {key}",
            f"{text[first]!r} is not an integer that fits in 64 bits",
        )
    return converted
