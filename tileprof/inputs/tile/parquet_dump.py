"""Parquet dumps: one sample per row.

Two layouts are read. The dump layout names columns by the dump's keys with metadata as JSON
text and ``clockHz``/``tileCount`` in the file's key-value metadata. The cache layout, written
by ``Profile.save`` and ``tileprof convert``, stores the typed frame itself plus the interned
metadata table, so loading it does no conversion at all.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import polars as pl
from polars.exceptions import PanicException

from tileprof.core.errors import InputError
from tileprof.core.schema import SAMPLE_COLUMNS, SAMPLE_SCHEMA, MetadataEntries
from tileprof.inputs._common import DeviceHeader, ParsedDump
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import PARQUET, PARQUET_MAGIC
from tileprof.inputs.table_columns import typed_from_table

FORMAT = PARQUET
MAGIC = PARQUET_MAGIC
CACHE_LAYOUT_KEY = "tileprof.layout"
CACHE_LAYOUT = "samples-v1"
METADATA_TABLE_KEY = "tileprof.metadata"


DEVICE_KEY = "device"
"""Key-value metadata: the device's name where the dump stated one (``Profile.device``)."""


def cache_bytes(
    samples: pl.DataFrame,
    metadata: tuple[MetadataEntries, ...],
    clock_hz: int | float,
    tile_count: int,
    device: str | None = None,
) -> bytes:
    """The cache layout of a profile: its typed frame plus the metadata table, as Parquet.

    Written here, beside the reader of the same layout, so that ``Profile.save`` (model) and
    ``tileprof.views.writers`` (outputs) both use it without importing each other.
    """
    kv = {"clockHz": str(clock_hz), "tileCount": str(tile_count)}
    if device is not None:
        kv[DEVICE_KEY] = device
    kv[CACHE_LAYOUT_KEY] = CACHE_LAYOUT
    kv[METADATA_TABLE_KEY] = msgspec.json.encode([list(map(list, m)) for m in metadata]).decode()
    buffer = io.BytesIO()
    samples.write_parquet(buffer, metadata=kv, compression="zstd")
    return buffer.getvalue()


def row_place(index: int) -> str:
    """Where row ``index`` of a Parquet dump is, for error messages."""
    return f"row {index}"


def _header(kv: dict[str, str], path: Path) -> DeviceHeader:
    try:
        clock = msgspec.json.decode(kv["clockHz"]) if "clockHz" in kv else None
        tiles = msgspec.json.decode(kv["tileCount"]) if "tileCount" in kv else None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise InputError(path, "key-value metadata", f"bad clockHz/tileCount: {exc}") from None
    if clock is not None and (isinstance(clock, bool) or not isinstance(clock, (int, float))):
        raise InputError(path, "key-value metadata clockHz", f"not a number: {clock!r}")
    if tiles is not None and (isinstance(tiles, bool) or not isinstance(tiles, int)):
        raise InputError(path, "key-value metadata tileCount", f"not an integer: {tiles!r}")
    return DeviceHeader(clock, tiles, kv.get(DEVICE_KEY) or None)


def check_footer(path: Path, data: bytes) -> None:
    """Read the footer with pyarrow and check that the column chunks it lists lie inside the
    file's data, one after another without overlapping.

    polars trusts the footer: a negative or out-of-file offset or size makes its reader panic
    (``Option::unwrap()`` on a ``None`` value), which says nothing of where. pyarrow reads the
    footer without panicking, so when polars fails this names the place. It runs only then:
    importing pyarrow costs 0.2 s or more, which every read of a good cache would pay.
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        meta = pq.read_metadata(pa.BufferReader(data))
        end = len(data) - 8 - meta.serialized_size  # the footer, its length and magic follow
        chunks = []
        for index in range(meta.num_row_groups):
            group = meta.row_group(index)
            if group.num_rows < 0:
                raise InputError(path, f"parquet footer, row group {index}", "negative row count")
            for column in range(group.num_columns):
                place = f"parquet footer, row group {index}, column {column}"
                chunks.append((*_chunk_bytes(path, group.column(column), place), place))
    except (OSError, pa.ArrowException, ValueError) as exc:  # UnicodeDecodeError included
        raise InputError(path, "parquet footer", f"unreadable Parquet: {_first(exc)}") from None
    reached = len(PARQUET_MAGIC)
    for start, stop, place in sorted(chunks):
        if start < reached or stop > end:
            raise InputError(path, place, f"pages at bytes {start}-{stop} overlap other data")
        reached = stop


_DICTIONARY_ENCODINGS = frozenset({"RLE_DICTIONARY", "PLAIN_DICTIONARY"})


def _chunk_bytes(path: Path, chunk: Any, place: str) -> tuple[int, int]:
    """Where one column chunk's pages are (start, stop) as its metadata says: the dictionary
    page first when there is one, then the data pages, ``total_compressed_size`` in all."""
    sizes = {
        "num_values": chunk.num_values,
        "total_compressed_size": chunk.total_compressed_size,
        "total_uncompressed_size": chunk.total_uncompressed_size,
        "data_page_offset": chunk.data_page_offset,
        "dictionary_page_offset": chunk.dictionary_page_offset,
    }
    for name, value in sizes.items():
        if value is not None and value < 0:
            raise InputError(path, place, f"negative {name} ({value})")
    dictionary = chunk.dictionary_page_offset
    if dictionary is not None and dictionary >= chunk.data_page_offset:
        raise InputError(path, place, "dictionary page after the data pages")
    if dictionary is None and _DICTIONARY_ENCODINGS.intersection(chunk.encodings):
        raise InputError(path, place, "dictionary-encoded pages without a dictionary page")
    start = chunk.data_page_offset if dictionary is None else dictionary
    return start, start + chunk.total_compressed_size


@contextlib.contextmanager
def panic_output_held() -> Iterator[None]:
    """Hold what is written to file descriptor 2 while polars reads; drop it if polars panics.

    A corrupt file (a negative chunk size in the footer, a damaged page header, the polars
    schema in the key-value metadata) can panic polars' reader, and Rust's panic hook writes
    its lines (a backtrace under ``RUST_BACKTRACE=1``) to descriptor 2 before Python sees the
    ``PanicException``. The held bytes are written out as they were when the read ends any
    other way (warnings are delayed, never lost).
    """
    sys.stderr.flush()
    try:
        saved = os.dup(2)
    except OSError:  # no descriptor 2 at all: nothing to hold
        yield
        return
    panicked = False
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        except PanicException:
            panicked = True
            raise
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            if not panicked:
                held.seek(0)
                kept = held.read()
                while kept:
                    kept = kept[os.write(2, kept) :]


def _first(exc: BaseException) -> str:
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def parse(path: Path, data: bytes) -> ParsedDump:
    """Read either layout; types are checked per column, values per row.

    A file polars cannot read is one ``InputError`` line: a panic's own lines are held back
    (``panic_output_held``), and the footer check names the place when the footer is at fault.
    """
    source = io.BytesIO(data)
    try:
        with panic_output_held():
            kv = pl.read_parquet_metadata(source)
            source.seek(0)
            table = pl.read_parquet(source)
    except (pl.exceptions.PolarsError, OSError, PanicException) as exc:
        check_footer(path, data)
        raise InputError(path, "parquet", f"unreadable Parquet: {_first(exc)}") from None
    header = _header(kv, path)
    if kv.get(CACHE_LAYOUT_KEY) == CACHE_LAYOUT:
        return _read_cache_layout(table, kv, path, header)
    return typed_from_table(table, path, header, row_place, "column")


def _read_cache_layout(
    table: pl.DataFrame, kv: dict[str, str], path: Path, header: DeviceHeader
) -> ParsedDump:
    if set(table.columns) != set(SAMPLE_SCHEMA):
        raise InputError(path, "columns", "cache layout does not hold the sample columns")
    try:
        entries = msgspec.json.decode(
            kv.get(METADATA_TABLE_KEY, "[]"), type=list[list[tuple[str, str]]]
        )
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
        raise InputError(path, METADATA_TABLE_KEY, f"bad metadata table: {exc}") from None
    metadata: list[MetadataEntries] = [tuple(pairs) for pairs in entries]
    frame = _typed_cache_frame(table, path)
    ids = frame.get_column("metadataId")
    beyond = ids >= len(metadata)
    if beyond.any():
        first = int(beyond.arg_true()[0])
        raise InputError(
            path,
            f"{row_place(first)}, column metadataId",
            f"{ids[first]} is not below the {len(metadata)} entries of the metadata table",
        )
    return ParsedDump(frame, metadata, header, row_place)


def _typed_cache_frame(table: pl.DataFrame, path: Path) -> pl.DataFrame:
    """The cache layout's columns checked against the sample schema and cast to it.

    The layout is written by tileprof, but a file that claims it is still input: a column of
    another kind (tile as text), a value that does not fit or a missing required value is an
    InputError naming the column and row, not a polars error.
    """
    required = {c.name for c in SAMPLE_COLUMNS if c.required}
    columns = []
    for name, dtype in SAMPLE_SCHEMA.items():
        raw = table.get_column(name)
        expected_text = dtype == pl.Categorical
        fits = (
            raw.dtype in (pl.String, pl.Categorical, pl.Enum, pl.Null)
            if expected_text
            else raw.dtype.is_integer() or raw.dtype == pl.Null
            if dtype.is_integer()
            else raw.dtype.is_numeric() or raw.dtype == pl.Null
        )
        if not fits:
            raise InputError(path, f"column {name}", f"expected {dtype}, got {raw.dtype}")
        converted = raw.cast(dtype, strict=False)
        lost = converted.is_null() & raw.is_not_null()
        missing = converted.is_null() if name in required else lost
        if missing.any():
            first = int(missing.arg_true()[0])
            problem = "value is missing" if raw[first] is None else f"{raw[first]} does not fit"
            raise InputError(path, f"{row_place(first)}, column {name}", problem)
        columns.append(converted)
    return pl.DataFrame(columns)


READER: Reader[ParsedDump] = Reader(parse)
