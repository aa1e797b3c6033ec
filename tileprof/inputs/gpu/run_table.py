"""The generic run table: anything else, written by hand or by another tool.

CSV with a header row, or JSON as ``{"runs": [ {…}, … ]}`` (or a bare list of such objects).
Required fields: ``target``, ``workload``, ``kernel``, ``time_us``. Optional: ``target_kind``
(default gpu), ``implementation``, ``op_family``, ``dtype``, ``shape``, ``per`` (default call),
``calls``, ``total_us``, ``p50_us``, ``p95_us``, ``max_us``, ``mac``, ``energy_j``,
``energy_raw_j``, ``baseline_implementation``, ``baseline_time_us``, ``peak_fraction``,
``bytes`` (bytes moved per time_us, for the roofline columns).
Unknown fields are an error (they are usually misspellings); an empty CSV cell is null.
"""

from __future__ import annotations

import csv
import io
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from tileprof.core.classify import DTYPES, OP_FAMILIES
from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.core.text import opening_byte
from tileprof.inputs._csv_table import ANY_CELL, field_limit
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import RUN_TABLE, RUN_TABLE_REQUIRED

KIND = RUN_TABLE
REQUIRED = RUN_TABLE_REQUIRED


class GenericRun(msgspec.Struct, forbid_unknown_fields=True):
    target: str
    workload: str | None
    kernel: str | None
    time_us: float
    target_kind: str = "gpu"
    device: str | None = None
    implementation: str | None = None
    op_family: str | None = None
    dtype: str | None = None
    shape: str | None = None
    per: str = "call"
    calls: int | None = None
    total_us: float | None = None
    p50_us: float | None = None
    p95_us: float | None = None
    max_us: float | None = None
    mac: int | None = None
    energy_j: float | None = None
    energy_raw_j: float | None = None
    baseline_implementation: str | None = None
    baseline_time_us: float | None = None
    peak_fraction: float | None = None
    bytes: int | None = None


class RunDoc(msgspec.Struct):
    runs: list[GenericRun]


FIELDS: tuple[str, ...] = GenericRun.__struct_fields__
_INT_FIELDS = frozenset({"calls", "mac", "bytes"})
_FLOAT_FIELDS = frozenset(
    {
        "time_us",
        "total_us",
        "p50_us",
        "p95_us",
        "max_us",
        "energy_j",
        "energy_raw_j",
        "baseline_time_us",
        "peak_fraction",
    }
)


def parse_json(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of a JSON run table."""
    from tileprof.inputs._decode import decode_json

    stripped = data.lstrip()
    runs = (
        decode_json(path, data, list[GenericRun])
        if stripped[:1] == b"["
        else decode_json(path, data, RunDoc).runs
    )
    prefix = "$" if stripped[:1] == b"[" else "$.runs"
    return _finish(
        path,
        [msgspec.structs.asdict(r) for r in runs],
        [f"{prefix}[{i}]" for i in range(len(runs))],
    )


def parse_csv(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of a CSV run table."""
    text = data.decode("utf-8-sig", errors="replace")
    try:
        return _parse_csv_text(path, text)
    except csv.Error as exc:
        raise InputError(path, "CSV", f"malformed CSV: {exc}") from None


def _parse_csv_text(path: str | Path, text: str) -> ParsedRuns:
    with field_limit(ANY_CELL):  # a long kernel name is a name, not a fault
        return _parse_csv_records(path, text)


def _parse_csv_records(path: str | Path, text: str) -> ParsedRuns:
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    try:
        header = [h.strip() for h in next(reader)]
    except csv.Error as exc:
        raise InputError(path, "line 1", f"malformed CSV: {exc}") from None
    for col, h in enumerate(header, start=1):
        if h in header[: col - 1]:
            raise InputError(path, f"line 1, column {col}", f"column {h!r} is named twice")
        if h not in FIELDS:
            raise InputError(path, f"line 1, column {col}", f"unknown column {h!r}")
    for r in REQUIRED:
        if r not in header:
            raise InputError(path, "line 1", f"missing column {r!r}")
    records: list[dict[str, Any]] = []
    places: list[str] = []
    for record in _records(path, reader):
        line_no = reader.line_num
        if not record:
            continue
        if len(record) != len(header):
            raise InputError(
                path, f"line {line_no}", f"{len(record)} fields, expected {len(header)}"
            )
        row: dict[str, Any] = {}
        for col, (key, raw) in enumerate(zip(header, record, strict=True), start=1):
            value: Any = raw.strip() or None
            try:
                if value is not None and key in _INT_FIELDS:
                    value = int(value)
                elif value is not None and key in _FLOAT_FIELDS:
                    value = float(value)
            except ValueError:
                raise InputError(
                    path, f"line {line_no}, column {col} ({key})", f"not a number: {raw!r}"
                ) from None
            row[key] = value
        for key in ("target", "time_us"):
            if row.get(key) is None:
                column = header.index(key) + 1
                raise InputError(path, f"line {line_no}, column {column}", f"{key} is empty")
        records.append(row)
        places.append(f"line {line_no}")
    return _finish(path, records, places)


def _records(path: str | Path, reader: Any) -> Iterator[list[str]]:
    """The reader's records; a fault (an unclosed quote) names the line it is found on."""
    while True:
        try:
            yield next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise InputError(path, f"line {reader.line_num}", f"malformed CSV: {exc}") from None


def _finish(path: str | Path, records: list[dict[str, Any]], places: list[str]) -> ParsedRuns:
    name = Path(path).name
    rows = []
    for rec, place in zip(records, places, strict=True):
        for key, allowed in (
            ("op_family", OP_FAMILIES),
            ("dtype", DTYPES),
            ("target_kind", ("tile", "gpu")),
        ):
            if rec.get(key) is not None and rec[key] not in allowed:
                raise InputError(
                    path, f"{place} ({key})", f"{rec[key]!r} is not one of {', '.join(allowed)}"
                )
        for key in _FLOAT_FIELDS | _INT_FIELDS:
            if rec.get(key) is None:
                continue
            if key in _FLOAT_FIELDS and not math.isfinite(rec[key]):
                raise InputError(path, f"{place} ({key})", f"not a finite number: {rec[key]}")
            if rec[key] < 0:
                raise InputError(path, f"{place} ({key})", f"negative value {rec[key]}")
            if key in _INT_FIELDS and rec[key] > 2**63 - 1:
                raise InputError(path, f"{place} ({key})", f"{rec[key]} is beyond 2^63 - 1")
        rows.append(
            {k: v for k, v in rec.items()}
            | {
                "source": f"{name}: {place}",
                "target_kind": rec.get("target_kind") or "gpu",
                "per": rec.get("per") or "call",
            }
        )
    return ParsedRuns(KIND, runs_from_rows(rows))


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The runs of a run table, JSON (an object or an array) or CSV."""
    if opening_byte(data) in (b"{", b"["):
        return parse_json(path, data)
    return parse_csv(path, data)


READER: Reader[ParsedRuns] = Reader(parse)
