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
from tileprof.parsers._format import TILE_DUMP, Content, InputFormat
from tileprof.parsers.ndjson_dump import HeaderLine
from tileprof.parsers.parquet_dump import MAGIC as PARQUET_MAGIC
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


def sniff(content: Content) -> bool:
    """A CSV dump: its header row (after an optional ``#`` comment line) names physicalTile."""
    head = content.head
    if head.startswith(b"{") or content.data[:4] == PARQUET_MAGIC:
        return False
    first_line = content.first_line
    if head.startswith(b"#"):
        second = head.split(b"\n", 2)[1:2]
        first_line = second[0] if second else b""
    return (
        first_line[:1] not in (b"[", b"{") and b"physicalTile" in first_line and b"," in first_line
    )


INPUT: InputFormat[ParsedDump] = InputFormat(FORMAT, TILE_DUMP, sniff, parse, extensions=(".csv",))
