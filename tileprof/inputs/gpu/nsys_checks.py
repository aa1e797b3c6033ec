"""What ``tileprof check`` reads of an nsys SQLite export, beyond its GPU events.

The GPU events' rows as stored (table, ``rowid``, device, start and end in ns, no name
lookup; read as columns through ADBC, as ``nsys_sqlite`` reads its events), the capture range
(``ANALYSIS_DETAILS``: ``startTime``, ``stopTime`` in ns on the events' clock), the string ids
that kernels and NVTX ranges name but ``StringIds`` lacks, and the devices ``TARGET_INFO_GPU``
names. The export is opened as ``nsys_sqlite`` opens it, and its columns checked as it checks
them.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tileprof.inputs.gpu.nsys_sqlite import (
    KERNELS,
    MEMCPY,
    MEMSET,
    NVTX,
    _check_columns,
    _Database,
    _frame,
    _opened,
    _tables,
)

STRING_COLUMNS: dict[str, tuple[str, ...]] = {
    KERNELS: ("demangledName", "shortName"),
    NVTX: ("textId",),
}
"""Columns that hold ids into ``StringIds``, per table."""


@dataclass(frozen=True)
class ExportFacts:
    """An export's GPU event rows, capture range, missing string ids and named devices."""

    events: pl.DataFrame
    capture: tuple[float, float] | None
    missing_strings: pl.DataFrame
    named_devices: tuple[int, ...]


def read_facts(path: str | Path, data: bytes) -> ExportFacts:
    """The facts of one export; InputError when it is not a readable SQLite database, or a
    column read holds values of another type."""
    with _opened(path, data) as db:
        return _facts(path, db)


def _facts(path: str | Path, db: _Database) -> ExportFacts:
    conn = db.conn
    described = _tables(conn)
    _check_columns(path, conn, described)
    tables = {name: set(columns) for name, columns in described.items()}
    capture = None
    if {"startTime", "stopTime"} <= tables.get("ANALYSIS_DETAILS", set()):
        found = conn.execute(
            "SELECT MIN(startTime), MAX(stopTime) FROM ANALYSIS_DETAILS"
        ).fetchone()
        if found is not None and None not in found:
            capture = (float(found[0]), float(found[1]))
    named: tuple[int, ...] = ()
    if {"id", "name"} <= tables.get("TARGET_INFO_GPU", set()):
        named = tuple(
            int(i) for (i,) in conn.execute("SELECT id FROM TARGET_INFO_GPU WHERE name IS NOT NULL")
        )
        if {"cudaId", "gpuId"} <= tables.get("TARGET_INFO_CUDA_DEVICE", set()):
            pairs = conn.execute("SELECT DISTINCT cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE")
            named += tuple(int(c) for c, g in pairs if g in named and c not in named)
    return ExportFacts(_events(db, tables), capture, _missing_strings(conn, tables), named)


EVENT_SCHEMA: dict[str, pl.DataType] = {
    "order": pl.Int64(),
    "table": pl.String(),
    "row": pl.Int64(),
    "device": pl.Int64(),
    "start_ns": pl.Int64(),
    "end_ns": pl.Int64(),
}
"""The GPU event rows as ``check`` reads them (``order``: the table's place in the query)."""


def _events(db: _Database, tables: dict[str, set[str]]) -> pl.DataFrame:
    """Every GPU event row of the three tables, by table then rowid, read as columns (no
    Python row per event: an export holds millions)."""
    parts = [
        f'SELECT {i} AS "order", \'{table}\' AS "table", rowid AS "row", '
        f'"deviceId", "start", "end" FROM "{table}"'
        for i, table in enumerate((KERNELS, MEMCPY, MEMSET))
        if {"start", "end", "deviceId"} <= tables.get(table, set())
    ]
    if not parts:
        return pl.DataFrame(schema=EVENT_SCHEMA).drop("order")
    sql = " UNION ALL ".join(parts) + ' ORDER BY "order", "row"'
    return _frame(db, sql, EVENT_SCHEMA).drop("order")


def _missing_strings(conn: sqlite3.Connection, tables: dict[str, set[str]]) -> pl.DataFrame:
    """(table, row, column, id) of every string id that ``StringIds`` does not hold."""
    found = []
    has_strings = "id" in tables.get("StringIds", set())
    for table, columns in STRING_COLUMNS.items():
        for column in columns:
            if column not in tables.get(table, set()):
                continue
            lookup = f'"{column}" NOT IN (SELECT id FROM StringIds)' if has_strings else "1"
            sql = (
                f'SELECT ?, rowid, ?, "{column}" FROM "{table}" '
                f'WHERE "{column}" IS NOT NULL AND {lookup} ORDER BY rowid'
            )
            found.extend(conn.execute(sql, (table, column)).fetchall())
    schema = {"table": pl.String(), "row": pl.Int64(), "column": pl.String(), "id": pl.Int64()}
    return pl.DataFrame(found, schema=schema, orient="row").sort("table", "row", "column")
