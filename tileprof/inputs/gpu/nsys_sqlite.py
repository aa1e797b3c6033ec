"""Nsight Systems SQLite exports (``nsys export --type sqlite``).

What is read (``docs/formats.md`` lists it with what is ignored, and why):

- ``CUPTI_ACTIVITY_KIND_KERNEL``: start/end (ns), ``deviceId``, ``streamId``,
  ``correlationId``, ``globalPid``, ``demangledName`` and ``shortName`` (ids into
  ``StringIds``), grid and block;
- ``CUPTI_ACTIVITY_KIND_MEMCPY`` (``bytes``, ``copyKind``) and ``CUPTI_ACTIVITY_KIND_MEMSET``
  (``bytes``), where the export has them;
- ``CUPTI_ACTIVITY_KIND_RUNTIME``: the CUDA runtime call with the same ``correlationId`` in
  the same process (correlation ids restart in every process) is the event's launch;
- ``NVTX_EVENTS`` push/pop and start/end ranges (``text``, else ``StringIds`` by ``textId``);
- ``TARGET_INFO_GPU`` (``id``, ``name``) and ``TARGET_INFO_CUDA_DEVICE`` (``pid``, ``cudaId``,
  ``gpuId``) name the devices; without them a device is ``GPU N``.

The export is opened read-only and immutable (``mode=ro&immutable=1``: nothing is created
beside it), and refused when a non-empty ``-wal`` file or a hot ``-journal`` lies beside it
(content the file itself, and so the printed sha256, does not hold); a gzipped or piped
export is first written to a temporary file (SQLite reads files, not bytes). Every column
read must be a declared, stored (not generated) column of the expected affinity holding values
of that type, and every read has a row and byte budget (``ROW_BUDGET``, ``BYTE_BUDGET``,
``VALUE_LIMIT``; docs/reliability.md), checked by SQLite's own aggregates before the read. The
columns cross as Arrow through ADBC's SQLite driver (no Python row per event), names as
``StringIds`` rows joined to the events' ids. Kernel, memcpy and memset events become the typed
GPU-event frame (``tileprof.core.gpu_events``) and, aggregated per (device, kind, name) as the
Kineto source aggregates them, run-table rows.
"""

from __future__ import annotations

import os
import sqlite3
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from adbc_driver_manager import Error as AdbcError

from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GPU_EVENT_SCHEMA, as_gpu_events, comm_kind, us_of_ns
from tileprof.core.run_schema import ParsedRuns, call_statistics, runs_from_rows
from tileprof.inputs._csv_table import CELL_LIMIT
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import NSYS_SQLITE
from tileprof.inputs.gpu.kineto_host import HOST_SCHEMA

KIND = NSYS_SQLITE
KERNELS = "CUPTI_ACTIVITY_KIND_KERNEL"
MEMCPY = "CUPTI_ACTIVITY_KIND_MEMCPY"
MEMSET = "CUPTI_ACTIVITY_KIND_MEMSET"
RUNTIME = "CUPTI_ACTIVITY_KIND_RUNTIME"
NVTX = "NVTX_EVENTS"
KERNEL_COLUMNS: tuple[str, ...] = (
    "start",
    "end",
    "deviceId",
    "streamId",
    "correlationId",
    "globalPid",
    "demangledName",
    "shortName",
    "gridX",
    "gridY",
    "gridZ",
    "blockX",
    "blockY",
    "blockZ",
)
COPY_COLUMNS: tuple[str, ...] = (
    "start",
    "end",
    "deviceId",
    "streamId",
    "correlationId",
    "globalPid",
    "bytes",
)
NVTX_RANGE_TYPES = (59, 60)
"""``ENUM_NSYS_EVENT_TYPE`` ids of NVTX ranges: 59 push/pop, 60 start/end (marks are skipped)."""
COPY_KINDS: dict[int, str] = {
    0: "Unknown",
    1: "HtoD",
    2: "DtoH",
    3: "HtoA",
    4: "AtoH",
    5: "AtoA",
    6: "AtoD",
    7: "DtoA",
    8: "DtoD",
    9: "HtoH",
    10: "PtoP",
    11: "UVM HtoD",
    12: "UVM DtoH",
    13: "UVM DtoD",
}
"""CUPTI's ``CUpti_ActivityMemcpyKind`` (``ENUM_CUDA_MEMCPY_OPER``), as Kineto abbreviates it."""
PID_SHIFT = 24
PID_MASK = 0xFFFFFF
"""A ``globalPid``/``globalTid`` holds the process id in bits 24-47 (the thread below)."""
EXTRA_COLUMNS: dict[str, pl.DataType] = {
    "pid": pl.Int64(),
    "short_name": pl.String(),
    "grid": pl.String(),
    "block": pl.String(),
}
"""Columns the export's own frame carries after the GPU event frame's."""


ROW_BUDGET = 20_000_000
"""The most rows one read (one table's events, the string table, …) may return."""
BYTE_BUDGET = 2**31
"""The most bytes of text one read may return (each name is read once, from ``StringIds``)."""
VALUE_LIMIT = CELL_LIMIT
"""The longest text or blob SQLite may hand back (``SQLITE_LIMIT_LENGTH``), as a CSV cell."""
SQLITE_LIMIT_LENGTH = 0
"""SQLite's id of the length limit (``sqlite3.SQLITE_LIMIT_LENGTH`` from Python 3.11)."""
INTEGER, TEXT = "INTEGER", "TEXT"
EXPECTED: dict[str, dict[str, str]] = {
    KERNELS: dict.fromkeys(KERNEL_COLUMNS, INTEGER),
    MEMCPY: dict.fromkeys((*COPY_COLUMNS, "copyKind"), INTEGER),
    MEMSET: dict.fromkeys(COPY_COLUMNS, INTEGER),
    RUNTIME: dict.fromkeys(("globalTid", "correlationId", "start", "end"), INTEGER),
    "StringIds": {"id": INTEGER, "value": TEXT},
    NVTX: dict.fromkeys(("start", "end", "eventType", "textId", "globalTid"), INTEGER)
    | {"text": TEXT},
    "TARGET_INFO_GPU": {"id": INTEGER, "name": TEXT},
    "TARGET_INFO_CUDA_DEVICE": dict.fromkeys(("pid", "cudaId", "gpuId"), INTEGER),
}
"""Each column read, per table, and the affinity it must be declared with (and the type of
the values it holds; NULL is allowed)."""


@dataclass(frozen=True)
class Column:
    """A column as ``PRAGMA table_xinfo`` declares it."""

    declared: str
    hidden: int


@dataclass(frozen=True)
class NsysExport:
    """What one export holds: its GPU events (the GPU event frame, then ``EXTRA_COLUMNS``),
    the name of each device, and its NVTX ranges (``name``, ``start_ns``, ``end_ns``, ``tid``)."""

    events: pl.DataFrame
    devices: dict[int, str]
    nvtx: pl.DataFrame
    models: dict[int, str] = field(default_factory=dict)
    """Export GPU id → the name the export gives it (its model; absent when unnamed): the
    target of its runs, which the GPUs of one export share (docs/runs.md, "Devices of one
    target")."""


def _connect(path: str | Path, data: bytes, scratch: Path) -> sqlite3.Connection:
    """The export, read-only and immutable: the file itself when ``data`` is its content
    (refused with a journal beside it), else a copy of ``data`` in the ``scratch`` folder (a
    gzipped or piped export)."""
    file = Path(path)
    if file.is_file() and os.path.getsize(file) == len(data):
        _refuse_journals(file)
    else:
        file = scratch / "export.sqlite"
        file.write_bytes(data)
    conn = sqlite3.connect(file.resolve().as_uri() + "?mode=ro&immutable=1", uri=True)
    setlimit = getattr(conn, "setlimit", None)  # Python 3.11 and later
    if setlimit is not None:
        setlimit(SQLITE_LIMIT_LENGTH, VALUE_LIMIT)
    return conn


JOURNAL_MAGIC = bytes.fromhex("d9d505f920a163d7")
"""The first bytes of a rollback journal that still holds a rollback (a hot journal)."""


def _refuse_journals(file: Path) -> None:
    """InputError naming a non-empty ``-wal`` file, or a hot ``-journal``, beside the export:
    it holds content the export itself (and its sha256) does not, which an immutable read
    would leave out silently."""
    wal = file.with_name(file.name + "-wal")
    if wal.is_file() and wal.stat().st_size > 0:
        raise InputError(
            wal,
            None,
            f"a write-ahead log beside the export holds changes that {file.name} itself (and "
            f"its sha256) does not; merge it (sqlite3 {file.name} 'PRAGMA wal_checkpoint') "
            "or remove it",
        )
    journal = file.with_name(file.name + "-journal")
    if journal.is_file():
        with journal.open("rb") as handle:
            hot = handle.read(len(JOURNAL_MAGIC)) == JOURNAL_MAGIC
        if hot:
            raise InputError(
                journal,
                None,
                f"a rollback journal beside the export: a write to {file.name} was cut short; "
                "open it once with sqlite3 to roll that back, or remove the journal",
            )


def _tables(conn: sqlite3.Connection) -> dict[str, dict[str, Column]]:
    """Every ordinary table of the export (not a view or virtual table) with its columns,
    generated and hidden ones included."""
    sql = "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
    names = [r[0] for r in conn.execute(sql) if "\x00" not in r[0]]  # none nsys reads
    return {
        n: {
            str(r[1]): Column(str(r[2] or ""), int(r[6]))
            for r in conn.execute(f"PRAGMA table_xinfo({_quoted(n)})")
        }
        for n in names
    }


def _quoted(name: str) -> str:
    """``name`` as an SQL identifier."""
    return '"' + name.replace('"', '""') + '"'


def affinity(declared: str) -> str:
    """SQLite's column affinity of a declared type (its rules, in order)."""
    text = declared.upper()
    if "INT" in text:
        return INTEGER
    if any(w in text for w in ("CHAR", "CLOB", "TEXT")):
        return TEXT
    if "BLOB" in text or not text:
        return "BLOB"
    if any(w in text for w in ("REAL", "FLOA", "DOUB")):
        return "REAL"
    return "NUMERIC"


def _check_columns(
    path: str | Path, conn: sqlite3.Connection, tables: dict[str, dict[str, Column]]
) -> None:
    """InputError for a column read that is generated or hidden, declared with another
    affinity, or holding a value of another type (one scan per table, SQLite's typeof)."""
    for table, expected in EXPECTED.items():
        columns = {c: t for c, t in expected.items() if c in tables.get(table, {})}
        for name, want in columns.items():
            column = tables[table][name]
            place = f"table {table}, column {name}"
            if column.hidden:
                what = "a generated column" if column.hidden in (2, 3) else "a hidden column"
                raise InputError(path, place, f"{what}, not stored data")
            if affinity(column.declared) not in (want, "NUMERIC" if want == INTEGER else want):
                raise InputError(path, place, f"declared {column.declared!r}, not {want}")
        if columns:
            _check_values(path, conn, table, columns)


def _check_values(
    path: str | Path, conn: sqlite3.Connection, table: str, columns: dict[str, str]
) -> None:
    kinds = {INTEGER: "'integer'", TEXT: "'text'"}
    wrong = [f"typeof(\"{c}\") NOT IN ('null', {kinds[t]})" for c, t in columns.items()]
    shown = ", ".join(f'typeof("{c}")' for c in columns)
    sql = f"SELECT rowid, {shown} FROM {_quoted(table)} WHERE {' OR '.join(wrong)} LIMIT 1"
    row = conn.execute(sql).fetchone()
    if row is None:
        return
    for (name, want), got in zip(columns.items(), row[1:], strict=True):
        if got not in ("null", want.lower()):
            place = f"table {table}, row {row[0]}, column {name}"
            raise InputError(path, place, f"a value of type {got}, not {want.lower()}")


def _require(
    path: str | Path, tables: dict[str, dict[str, Column]], table: str, columns: Sequence[str]
) -> None:
    missing = [c for c in columns if c not in tables[table]]
    if missing:
        raise InputError(path, f"table {table}", f"column {missing[0]} is missing")


@dataclass(frozen=True)
class _Database:
    """One export opened twice, read-only and immutable: through ``sqlite3`` for the schema,
    the type checks and the budgets (aggregates computed by SQLite), and through ADBC's SQLite
    driver, which hands each query's result over as Arrow columns (no Python row per event)."""

    conn: sqlite3.Connection
    columns: Any


def _frame(db: _Database, sql: str, schema: Mapping[str, pl.DataType]) -> pl.DataFrame:
    """The query's columns as a frame, typed by ``schema`` (its keys name the query's result
    columns, in order), read within ``ROW_BUDGET`` rows and ``BYTE_BUDGET`` bytes of text
    (``_Budget`` when past either, counted by SQLite before anything is read).

    A text column must hold no NULL (ADBC types a column by its first rows): queries select
    text where it is not NULL and join it to the integer columns here."""
    names = list(schema)
    text = [n for n, t in schema.items() if t == pl.String()]
    lengths = "".join(f', coalesce(sum(length("{n}")), 0)' for n in text)
    count, *sizes = db.conn.execute(f"SELECT count(*){lengths} FROM ({sql})").fetchone()
    if count > ROW_BUDGET:
        raise _Budget(f"more than {ROW_BUDGET:,} rows")
    if sum(sizes) > BYTE_BUDGET:
        raise _Budget(f"more than {BYTE_BUDGET:,} characters of text")
    cursor = db.columns.cursor()
    try:
        cursor.execute(sql)
        table = cursor.fetch_arrow_table()
    finally:
        cursor.close()
    frame = pl.from_arrow(table)
    assert isinstance(frame, pl.DataFrame)
    types: dict[Any, Any] = dict(schema)
    return frame.rename(dict(zip(frame.columns, names, strict=True))).cast(types)


class _Budget(Exception):
    """A read past its budget; ``read_export`` names the file."""


def _strings(db: _Database, ids: str) -> pl.DataFrame:
    """``StringIds`` rows whose id the subquery ``ids`` selects: each string read once."""
    sql = f"""
        SELECT id AS id, value AS value FROM StringIds
        WHERE value IS NOT NULL AND id IN ({ids}) ORDER BY rowid"""
    return _frame(db, sql, {"id": pl.Int64(), "value": pl.String()})


def _named(frame: pl.DataFrame, strings: pl.DataFrame, key: str, name: str) -> pl.DataFrame:
    """``frame`` with column ``name`` looked up from ``strings`` by the id in ``key`` (as a
    LEFT JOIN of ``StringIds`` would: rows in order, null where no string)."""
    table = strings.rename({"id": key, "value": name})
    return frame.join(table, on=key, how="left", maintain_order="left").drop(key)


def _shape(prefix: str) -> pl.Expr:
    """``XxYxZ`` of the columns ``{prefix}X``, ``…Y``, ``…Z`` (null when one is null)."""
    parts = [pl.col(f"{prefix}{axis}").cast(pl.String) for axis in "XYZ"]
    return pl.concat_str([parts[0], pl.lit("x"), parts[1], pl.lit("x"), parts[2]])


def _kernels(db: _Database) -> pl.DataFrame:
    sql = f"""
        SELECT deviceId, streamId, start, end, correlationId,
               (globalPid >> {PID_SHIFT}) & {PID_MASK}, demangledName, shortName,
               gridX, gridY, gridZ, blockX, blockY, blockZ
        FROM {KERNELS} ORDER BY rowid"""
    schema = {
        "device": pl.Int64(),
        "stream": pl.Int64(),
        "start_ns": pl.Int64(),
        "end_ns": pl.Int64(),
        "correlation": pl.Int64(),
        "pid": pl.Int64(),
        "demangled": pl.Int64(),
        "short": pl.Int64(),
        **{f"grid{a}": pl.Int64() for a in "XYZ"},
        **{f"block{a}": pl.Int64() for a in "XYZ"},
    }
    frame = _frame(db, sql, schema)
    strings = _strings(
        db, f"SELECT demangledName FROM {KERNELS} UNION SELECT shortName FROM {KERNELS}"
    )
    frame = _named(_named(frame, strings, "demangled", "name"), strings, "short", "short_name")
    return frame.with_columns(
        kind=pl.lit("kernel"),
        bytes=pl.lit(None, pl.Int64()),
        name=pl.coalesce("name", "short_name", pl.lit("(unnamed kernel)")),
        grid=_shape("grid"),
        block=_shape("block"),
    )


def _copies(db: _Database, table: str, kind: str, copy_kind: bool) -> pl.DataFrame:
    label = "copyKind" if copy_kind else "NULL"
    sql = f"""
        SELECT deviceId, streamId, start, end, correlationId,
               (globalPid >> {PID_SHIFT}) & {PID_MASK}, bytes, {label}
        FROM {table} ORDER BY rowid"""
    schema = {
        "device": pl.Int64(),
        "stream": pl.Int64(),
        "start_ns": pl.Int64(),
        "end_ns": pl.Int64(),
        "correlation": pl.Int64(),
        "pid": pl.Int64(),
        "bytes": pl.Int64(),
        "copy_kind": pl.Int64(),
    }
    frame = _frame(db, sql, schema)
    if kind == "memcpy":
        word = pl.col("copy_kind").replace_strict(
            COPY_KINDS, default="Unknown", return_dtype=pl.String
        )
        name = pl.lit("Memcpy ") + word
    else:
        name = pl.lit("Memset")
    return frame.with_columns(
        kind=pl.lit(kind),
        name=name,
        short_name=name,
        grid=pl.lit(None, pl.String()),
        block=pl.lit(None, pl.String()),
    ).drop("copy_kind")


def _launches(db: _Database) -> pl.DataFrame:
    """Each runtime call's (pid, correlation) and its start/end in ns."""
    sql = f"""
        SELECT (globalTid >> {PID_SHIFT}) & {PID_MASK}, correlationId, start, end FROM {RUNTIME}
        WHERE correlationId IS NOT NULL ORDER BY rowid"""
    schema = {
        "pid": pl.Int64(),
        "correlation": pl.Int64(),
        "launch_start_ns": pl.Int64(),
        "launch_end_ns": pl.Int64(),
    }
    return _frame(db, sql, schema).unique(["pid", "correlation"], keep="first", maintain_order=True)


def _device_map(db: _Database, tables: dict[str, dict[str, Column]]) -> pl.DataFrame:
    """(pid, CUDA device id) → export GPU id, from ``TARGET_INFO_CUDA_DEVICE`` where present."""
    schema = {"pid": pl.Int64(), "device": pl.Int64(), "gpu": pl.Int64()}
    cols = tables.get("TARGET_INFO_CUDA_DEVICE", {})
    if not {"cudaId", "gpuId"} <= cols.keys():
        return pl.DataFrame(schema=schema)
    pid = "pid" if "pid" in cols else "NULL"
    sql = f"SELECT DISTINCT {pid}, cudaId, gpuId FROM TARGET_INFO_CUDA_DEVICE"
    return _frame(db, sql, schema)


def _gpu_names(db: _Database, tables: dict[str, dict[str, Column]]) -> dict[int, str]:
    """Export GPU id → name, from ``TARGET_INFO_GPU`` where present."""
    if not {"id", "name"} <= tables.get("TARGET_INFO_GPU", {}).keys():
        return {}
    sql = "SELECT id, name FROM TARGET_INFO_GPU WHERE id IS NOT NULL AND name IS NOT NULL"
    rows = _frame(db, sql, {"id": pl.Int64(), "name": pl.String()})
    return {int(i): str(n) for i, n in rows.iter_rows()}


def _physical_devices(events: pl.DataFrame, mapping: pl.DataFrame) -> pl.DataFrame:
    """``device`` as the export's GPU id where the process's CUDA device maps to one.

    A process sees its GPUs renumbered from 0 (``CUDA_VISIBLE_DEVICES``), so two processes'
    device 0 may be different GPUs; ``TARGET_INFO_CUDA_DEVICE`` says which. Without a pid
    column a CUDA id maps only when every process agrees on it.
    """
    if mapping.height == 0:
        return events
    if mapping["pid"].null_count() == mapping.height:
        agreed = mapping.group_by("device").agg(pl.col("gpu").unique())
        agreed = agreed.filter(pl.col("gpu").list.len() == 1).select(
            "device", pl.col("gpu").list.first()
        )
        joined = events.join(agreed, on="device", how="left")
    else:
        joined = events.join(mapping, on=["pid", "device"], how="left")
    return joined.with_columns(device=pl.coalesce("gpu", "device")).drop("gpu")


def target_names(devices: Sequence[int], names: dict[int, str]) -> dict[int, str]:
    """One target per GPU: its name where the export names it (with ``(GPU N)`` when two
    GPUs share a name, so they stay two targets), else ``GPU N``."""
    named = [names.get(d) for d in devices]
    out = {}
    for device, name in zip(devices, named, strict=True):
        if name is None:
            out[device] = f"GPU {device}"
        elif named.count(name) > 1:
            out[device] = f"{name} (GPU {device})"
        else:
            out[device] = name
    return out


def _nvtx(db: _Database, tables: dict[str, dict[str, Column]]) -> pl.DataFrame:
    """The NVTX ranges (push/pop and start/end) with a known end, named by text or textId."""
    schema = {"name": pl.String(), "start_ns": pl.Int64(), "end_ns": pl.Int64(), "tid": pl.Int64()}
    cols = tables.get(NVTX, {})
    if not {"start", "end", "eventType"} <= cols.keys():
        return pl.DataFrame(schema=schema)
    tid = "globalTid & 16777215" if "globalTid" in cols else "NULL"
    text_id = "textId" if "textId" in cols else "NULL"
    types = ", ".join(str(t) for t in NVTX_RANGE_TYPES)
    ranges = f"FROM {NVTX} WHERE eventType IN ({types}) AND end IS NOT NULL"
    sql = f"SELECT rowid, start, end, {tid}, {text_id} {ranges} ORDER BY rowid"
    integers = {"row": pl.Int64(), "start_ns": pl.Int64(), "end_ns": pl.Int64()}
    frame = _frame(db, sql, integers | {"tid": pl.Int64(), "text_id": pl.Int64()})
    text = pl.DataFrame(schema={"row": pl.Int64(), "text": pl.String()})
    if "text" in cols:
        sql = f"SELECT rowid, text {ranges} AND text IS NOT NULL ORDER BY rowid"
        text = _frame(db, sql, {"row": pl.Int64(), "text": pl.String()})
    strings = pl.DataFrame(schema={"id": pl.Int64(), "value": pl.String()})
    if "textId" in cols:
        strings = _strings(db, f"SELECT textId {ranges}").unique(
            "id", keep="first", maintain_order=True
        )
    frame = _named(frame, strings, "text_id", "id_text")
    frame = frame.join(text, on="row", how="left", maintain_order="left")
    named = frame.with_columns(name=pl.coalesce("text", "id_text"))
    return named.sort("start_ns", maintain_order=True).select(list(schema))


def read_export(path: str | Path, data: bytes) -> NsysExport:
    """The GPU events, device names and NVTX ranges of one export; InputError when the file
    is not a readable nsys export (a truncated or garbled database, a missing table)."""
    with _opened(path, data) as db:
        return _read(path, db)


@contextmanager
def _opened(path: str | Path, data: bytes) -> Iterator[_Database]:
    """The export opened (``_connect``) for the ``with`` block, closed after it; every failure
    of SQLite, ADBC or a budget inside the block is the one-line InputError naming the file."""
    with tempfile.TemporaryDirectory(prefix="tileprof-nsys-") as scratch:
        try:
            conn = _connect(path, data, Path(scratch))
        except sqlite3.Error as exc:
            raise InputError(path, None, f"cannot open the SQLite database ({exc})") from None
        columns = None
        try:
            columns = _columns_of(conn)
            yield _Database(conn, columns)
        except (sqlite3.Error, AdbcError) as exc:
            raise InputError(path, None, f"unreadable SQLite database ({_first(exc)})") from None
        except UnicodeDecodeError as exc:  # SQLite's own message quotes a corrupt schema
            why = f"text that is not UTF-8 (byte 0x{exc.object[exc.start]:02x})"
            raise InputError(path, None, f"unreadable SQLite database ({why})") from None
        except _Budget as exc:
            raise InputError(path, None, f"a read of {exc} (over its budget)") from None
        finally:
            if columns is not None:
                columns.close()
            conn.close()


def _first(exc: BaseException) -> str:
    """An error's first line (ADBC's messages run to several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def _columns_of(conn: sqlite3.Connection) -> Any:
    """The ADBC connection to the file ``conn`` reads, opened as ``conn`` was."""
    import adbc_driver_sqlite.dbapi

    (file,) = [row[2] for row in conn.execute("PRAGMA database_list") if row[1] == "main"]
    return adbc_driver_sqlite.dbapi.connect(Path(file).resolve().as_uri() + "?mode=ro&immutable=1")


def _read(path: str | Path, db: _Database) -> NsysExport:
    conn = db.conn
    tables = _tables(conn)
    _check_columns(path, conn, tables)
    if KERNELS not in tables and MEMCPY not in tables:
        raise InputError(
            path,
            None,
            f"SQLite database without {KERNELS} or {MEMCPY}: not an nsys export with CUDA trace",
        )
    parts = []
    if KERNELS in tables:
        _require(path, tables, KERNELS, KERNEL_COLUMNS)
        if "StringIds" not in tables:
            raise InputError(path, None, "table StringIds is missing (kernel names)")
        parts.append(_kernels(db))
    for table, kind in ((MEMCPY, "memcpy"), (MEMSET, "memset")):
        if table in tables:
            _require(path, tables, table, COPY_COLUMNS)
            parts.append(_copies(db, table, kind, "copyKind" in tables[table]))
    events = pl.concat([p.select(_RAW_COLUMNS) for p in parts], how="vertical")
    events = _physical_devices(events, _device_map(db, tables))
    if RUNTIME in tables:
        _require(path, tables, RUNTIME, ("globalTid", "correlationId", "start", "end"))
        events = events.join(
            _launches(db), on=["pid", "correlation"], how="left", maintain_order="left"
        )
    else:
        events = events.with_columns(
            launch_start_ns=pl.lit(None, pl.Int64()), launch_end_ns=pl.lit(None, pl.Int64())
        )
    bad = events.filter(pl.col("end_ns") < pl.col("start_ns"))
    if bad.height:
        row = bad.row(0, named=True)
        raise InputError(path, f"{row['kind']} {row['name']!r}", "ends before it starts")
    events = _typed(events).sort(["start_ns", "end_ns"], maintain_order=True)
    ids = sorted(events["device"].unique().drop_nulls().to_list())
    names = _gpu_names(db, tables)
    return NsysExport(events, target_names(ids, names), _nvtx(db, tables), names)


_RAW_COLUMNS: tuple[str, ...] = (
    "device",
    "stream",
    "kind",
    "start_ns",
    "end_ns",
    "name",
    "short_name",
    "correlation",
    "pid",
    "grid",
    "block",
    "bytes",
)


def _typed(events: pl.DataFrame) -> pl.DataFrame:
    """The GPU event frame (a kernel named ``nccl``/``rccl`` is ``comm``), then
    ``EXTRA_COLUMNS``."""
    events = events.with_columns(kind=comm_kind(pl.col("kind"), pl.col("name")))
    return as_gpu_events(events).select(*GPU_EVENT_SCHEMA, *EXTRA_COLUMNS)


def gpu_events(path: str | Path, data: bytes) -> pl.DataFrame:
    """The export's GPU events in the GPU event frame (``tileprof.core.gpu_events``), by start."""
    return read_export(path, data).events.select(list(GPU_EVENT_SCHEMA))


def category(kind: pl.Expr) -> pl.Expr:
    """The run table's category of a GPU event's kind: a communication kernel is a kernel."""
    return kind.cast(pl.String).replace("comm", "kernel")


def aggregate(events: pl.DataFrame) -> pl.DataFrame:
    """Per (device, kind, name): count, total, mean, nearest-rank p50/p95 and max of the
    duration (µs), summed bytes, mean launch delay (event start − end of its runtime call),
    distinct streams, and the first call's short name, grid and block; largest total first."""
    return (
        events.with_columns(category(pl.col("kind")).alias("kind"))
        .group_by("device", "kind", "name", maintain_order=True)
        .agg(
            *call_statistics(us_of_ns(pl.col("end_ns") - pl.col("start_ns"))),
            pl.col("bytes").sum().alias("bytes"),
            us_of_ns(pl.col("start_ns") - pl.col("launch_end_ns")).mean().alias("launch_delay_us"),
            pl.col("launch_end_ns").count().alias("launched"),
            pl.col("stream").unique().sort().cast(pl.String).str.join(",").alias("streams"),
            pl.col("short_name").first(),
            pl.col("grid").first(),
            pl.col("block").first(),
        )
        .sort(["total_us", "name"], descending=[True, False])
    )


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The per-kernel (and per-copy) runs of an export: one row per kernel and GPU, the
    GPUs one target (their model, ``GPU`` when the export names none) told apart by
    ``device``."""
    export = read_export(path, data)
    name = Path(path).name
    rows = []
    for r in aggregate(export.events).iter_rows(named=True):
        device = r["device"]
        meta: dict[str, Any] = {"category": r["kind"], "short_name": r["short_name"]}
        meta |= {"streams": r["streams"], "grid": r["grid"], "block": r["block"]}
        if r["kind"] != "kernel":
            meta["bytes"] = r["bytes"]
        if r["launched"]:
            meta |= {"launch_delay_us": r["launch_delay_us"], "launched_calls": r["launched"]}
        rows.append(
            {
                "target": export.models.get(device, "GPU"),
                "target_kind": "gpu",
                "device": None if device is None else f"GPU {device}",
                "source": f"{name}: device {device}",
                "kernel": r["name"],
                "classify_hint": r["name"],
                "per": "call",
                "time_us": r["mean_us"],
                "calls": r["count"],
                "total_us": r["total_us"],
                "p50_us": r["p50_us"],
                "p95_us": r["p95_us"],
                "max_us": r["max_us"],
                "metadata": {k: v for k, v in meta.items() if v is not None},
            }
        )
    counts = export.events.select(category(pl.col("kind"))).to_series().value_counts(sort=True)
    meta = {
        "devices": export.devices,
        "gpu_events": {str(k): int(n) for k, n in counts.iter_rows()},
        "nvtx_ranges": export.nvtx.height,
    }
    return ParsedRuns(KIND, runs_from_rows(rows), metadata=meta)


READER: Reader[ParsedRuns] = Reader(parse)


ENVIRONMENT_NAMES: dict[str, str] = {"NvDriverVersion": "driver", "CudaDriverVersion": "cudaDriver"}
"""TARGET_INFO_SYSTEM_ENV rows that state software versions, and their comparability field
(``analyses.comparability``)."""


def export_environment(path: str | Path, data: bytes) -> dict[str, str]:
    """The software versions the export's TARGET_INFO_SYSTEM_ENV states (driver, CUDA
    driver API); empty when it has no such table."""
    with _opened(path, data) as db:
        if "TARGET_INFO_SYSTEM_ENV" not in _tables(db.conn):
            return {}
        marks = ", ".join("?" * len(ENVIRONMENT_NAMES))
        rows = db.conn.execute(
            f"SELECT name, value FROM TARGET_INFO_SYSTEM_ENV WHERE name IN ({marks}) "
            "ORDER BY rowid",
            list(ENVIRONMENT_NAMES),
        ).fetchall()
    return {ENVIRONMENT_NAMES[str(name)]: str(value) for name, value in rows}


def host_calls(path: str | Path, data: bytes) -> pl.DataFrame:
    """The CUDA runtime calls of an export on their threads, for the dependency graph of
    ``critical`` (``inputs.gpu.kineto_host.HOST_SCHEMA`` and ``pid``): named without CUPTI's
    version suffix (``cudaLaunchKernel_v7000`` → ``cudaLaunchKernel``); no CPU ops (an export
    holds none). Empty without a runtime table."""
    schema = {**HOST_SCHEMA, "pid": pl.Int64()}
    with _opened(path, data) as db:
        if RUNTIME not in _tables(db.conn):
            return pl.DataFrame(schema=schema)
        frame = _runtime_calls(db)
    name = pl.col("name").fill_null("").str.replace(r"_v\d+$", "")
    return frame.with_columns(name).select(list(schema))


def _runtime_calls(db: _Database) -> pl.DataFrame:
    """The runtime table's calls, names joined from ``StringIds`` by ``nameId``."""
    sql = f"""
        SELECT rowid, globalTid, start, end, correlationId,
               (globalTid >> {PID_SHIFT}) & {PID_MASK}, nameId
        FROM {RUNTIME} ORDER BY rowid"""
    schema = {
        "index": pl.Int64(),
        "tid": pl.Int64(),
        "start_ns": pl.Int64(),
        "end_ns": pl.Int64(),
        "correlation": pl.Int64(),
        "pid": pl.Int64(),
        "name_id": pl.Int64(),
    }
    frame = _frame(db, sql, schema)
    frame = _named(frame, _strings(db, f"SELECT nameId FROM {RUNTIME}"), "name_id", "name")
    return frame.with_columns(cat=pl.lit("runtime"), thread=pl.col("tid").cast(pl.String)).drop(
        "tid"
    )
