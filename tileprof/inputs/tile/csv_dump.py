"""CSV dumps: one sample per row, columns named by the dump's keys, metadata as JSON text.

An optional first line ``# {"clockHz": …, "tileCount": …}`` carries the device facts.
Errors name the line (the header row is line 1, or 2 after a comment line) and the column.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import polars as pl

from tileprof.core.errors import InputError
from tileprof.inputs._common import DeviceHeader, ParsedDump
from tileprof.inputs._csv_table import ANY_CELL, field_limit
from tileprof.inputs._decode import check_utf8
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import CSV
from tileprof.inputs.table_columns import typed_from_table
from tileprof.inputs.tile.ndjson_dump import decode_header

FORMAT = CSV


def parse(path: Path, data: bytes) -> ParsedDump:
    """Read every cell as text, then convert with per-cell error places."""
    header = DeviceHeader()
    first_line_number = 1
    whole = data
    if data.startswith(b"#"):
        comment, _, data = data.partition(b"\n")
        # the JSON after "#" (its spaces and a CRLF's CR are JSON's whitespace)
        header = decode_header(path, 1, comment[1:], "header comment", column_offset=1)
        first_line_number = 2
    try:
        table = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        located = locate_csv_fault(data, first_line_number)
        if located is not None:
            raise InputError(path, located[0], f"malformed CSV: {located[1]}") from None
        check_utf8(path, whole)  # names the line and column of a byte that is not UTF-8
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, "CSV", f"malformed CSV: {message}") from None

    def place(index: int) -> str:
        return f"line {index + first_line_number + 1}"

    return typed_from_table(table, path, header, place, "column")


def locate_csv_fault(data: bytes, first_line_number: int = 1) -> tuple[str, str] | None:
    """("line L[, column C]", what is wrong) for the first row a strict CSV reader refuses or
    whose field count differs from the header's; None when it finds nothing wrong.

    The fast reader (polars) says what broke but not where, so a failure is re-read here, in
    Python, only to name the place.
    """
    text = data.decode("utf-8", errors="replace")
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    expected: int | None = None
    record_start = first_line_number
    try:
        with field_limit(ANY_CELL):  # a long kernel name is a name, not a fault
            for record in reader:
                line = record_start
                record_start = reader.line_num + first_line_number
                if expected is None:
                    expected = len(record)
                elif record and len(record) != expected:
                    column = sum(len(field) + 1 for field in record[:expected]) + 1
                    return (
                        f"line {line}, column {column}",
                        f"{len(record)} fields, expected {expected} as in the header",
                    )
    except csv.Error as exc:
        return f"line {record_start}", str(exc)
    return None


READER: Reader[ParsedDump] = Reader(parse)
