"""Dump parsers, one module per input format, and the detection that picks one.

Every parser returns the same ``ParsedDump`` (typed sample frame, interned metadata, device
header). Detection trusts content first (Parquet magic, a JSON document's ``samples`` key,
NDJSON's one-object-per-line shape, a CSV header row) and falls back to the extension.

Detection reads only the head of the file when the head settles it, so that NDJSON can stream
(``ndjson_dump.parse_file``) and plain JSON can be mapped (``json_dump.parse_file``) instead of
read whole; every other case reads the bytes and parses them in memory.
"""

from __future__ import annotations

import gzip
import os
import zlib
from collections.abc import Callable
from pathlib import Path

import msgspec

from tileprof.errors import InputError
from tileprof.parsers import csv_dump, json_dump, ndjson_dump, parquet_dump
from tileprof.parsers._common import (
    GZIP_MAGIC,
    ParsedDump,
    check_encoding,
    open_input,
    read_bytes,
    resolve_device,
    stream_content,
    validate_samples,
)
from tileprof.progress import progress_bar

SNIFF_BYTES = 65536
"""How much of the (decompressed) start of a file detection looks at."""

DUMP_FORMATS: dict[str, Callable[[Path, bytes], ParsedDump]] = {
    json_dump.FORMAT: json_dump.parse,
    ndjson_dump.FORMAT: ndjson_dump.parse,
    parquet_dump.FORMAT: parquet_dump.parse,
    csv_dump.FORMAT: csv_dump.parse,
}
EXTENSIONS: dict[str, str] = {
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".csv": "csv",
}


def format_from_extension(path: Path) -> str | None:
    """The format the file name suggests, looking through a ``.gz`` suffix."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return EXTENSIONS.get(suffixes[-1]) if suffixes else None


def sniff_format(data: bytes) -> str | None:
    """The dump format the content shows, or None when it is no tile dump."""
    if data[:4] == parquet_dump.MAGIC:
        return "parquet"
    head = data[:65536].lstrip()
    if head.startswith(b"{"):
        first_line = head.split(b"\n", 1)[0]
        try:
            first = msgspec.json.decode(first_line)
        except msgspec.DecodeError:
            first = None
        if isinstance(first, dict) and "samples" not in first:
            if "physicalTile" in first or "clockHz" in first or "tileCount" in first:
                return "ndjson"
            return None
        return "json" if b'"samples"' in data else None
    first_line = head.split(b"\n", 1)[0]
    if head.startswith(b"#"):
        second = head.split(b"\n", 2)[1:2]
        first_line = second[0] if second else b""
    if first_line[:1] not in (b"[", b"{") and b"physicalTile" in first_line and b"," in first_line:
        return "csv"
    return None


def is_tile_dump_head(head: bytes) -> bool:
    """Whether a file's first bytes alone show a tile dump, so its kind needs no full read.

    A JSON document only counts when sample fields show in the head too: other JSON documents
    (a trace, a run table) may mention "samples" somewhere near their start.
    """
    found = sniff_format(head) if head.strip() else None
    return found is not None and (found != "json" or b'"physicalTile"' in head)


def detect_dump_format(path: Path, data: bytes | None = None) -> str | None:
    """The tile-dump format of ``path`` (content first, then extension), or None."""
    content = read_bytes(path) if data is None else data
    return sniff_format(content) or format_from_extension(path)


def peek(path: Path) -> tuple[bytes, bool, int]:
    """(decompressed head, whether gzipped, size on disk); unreadable files are InputErrors."""
    with open_input(path) as handle:
        try:
            head = handle.read(SNIFF_BYTES)
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror}") from None
        stream = stream_content(path)
        size = len(stream) if stream is not None else os.fstat(handle.fileno()).st_size
    if head[:2] != GZIP_MAGIC:
        return check_encoding(path, head), False, size
    try:
        with open_input(path) as raw, gzip.open(raw, "rb") as unzipped:
            return check_encoding(path, unzipped.read(SNIFF_BYTES)), True, size
    except (EOFError, OSError, zlib.error):
        return b"", True, size  # read_bytes words the error


def read_dump(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
) -> tuple[ParsedDump, int | float, int, str]:
    """Parse and validate one dump: (parsed dump, clockHz, tileCount, format name).

    ``quiet=False`` draws a progress bar on stderr for large inputs (see ``tileprof.progress``).
    """
    source = Path(path)
    if format is not None and format not in DUMP_FORMATS:
        raise InputError(
            source, None, f"unknown format {format!r} (one of {', '.join(DUMP_FORMATS)})"
        )
    head, compressed, size = peek(source)
    # a pipe was read whole by peek: parse it from memory (it cannot be mapped or re-opened)
    data: bytes | None = read_bytes(source) if stream_content(source) is not None else None
    chosen = format or (sniff_format(head) if head.strip() else None)
    if chosen is None:
        data = read_bytes(source)
        chosen = detect_dump_format(source, data)
    if chosen is None:
        raise InputError(
            source,
            "start of file",
            "unknown format: not a JSON, NDJSON, Parquet or CSV tile dump (use --format-in)",
        )
    with progress_bar(f"reading {source.name}", size, quiet=quiet) as report:
        if data is None and chosen == "ndjson":
            parsed = ndjson_dump.parse_file(
                source, progress=None if report is None else (lambda done: report(done, size))
            )
        elif data is None and chosen == "json" and not compressed:
            parsed = json_dump.parse_file(source, progress=report)
        else:
            if data is None:
                data = read_bytes(source)
            parsed = DUMP_FORMATS[chosen](source, data)
    clock, tiles = resolve_device(source, parsed.header, clock_hz, tile_count)
    validate_samples(parsed.samples, source, tiles, parsed.place)
    return parsed, clock, tiles, chosen
