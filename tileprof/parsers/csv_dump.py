"""CSV dumps: one sample per row, columns named by the dump's keys, metadata as JSON text.

An optional first line ``# {"clockHz": …, "tileCount": …}`` carries the device facts.
Errors name the line (the header row is line 1, or 2 after a comment line) and the column.
"""

from __future__ import annotations

import io
from pathlib import Path

import msgspec
import polars as pl

from tileprof.errors import InputError
from tileprof.parsers._common import DeviceHeader, ParsedDump
from tileprof.parsers.ndjson_dump import HeaderLine
from tileprof.parsers.table_columns import typed_from_table

FORMAT = "csv"


def parse(path: Path, data: bytes) -> ParsedDump:
    """Read every cell as text, then convert with per-cell error places."""
    header = DeviceHeader()
    first_line_number = 1
    if data.startswith(b"#"):
        comment, _, data = data.partition(b"\n")
        try:
            parsed = msgspec.json.decode(comment[1:].strip(), type=HeaderLine)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise InputError(path, "line 1", f"bad header comment: {exc}") from None
        header = DeviceHeader(parsed.clockHz, parsed.tileCount)
        first_line_number = 2
    try:
        table = pl.read_csv(io.BytesIO(data), infer_schema=False)
    except pl.exceptions.PolarsError as exc:
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, "CSV", f"malformed CSV: {message}") from None

    def place(index: int) -> str:
        return f"line {index + first_line_number + 1}"

    return typed_from_table(table, path, header, place, "column")
