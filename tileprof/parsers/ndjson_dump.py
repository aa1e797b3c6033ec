"""NDJSON dumps: an optional header line ``{"clockHz": …, "tileCount": …}``, then one sample
object per line. Blank lines are skipped; errors name the line.

The reader streams: it takes ``batch_rows`` lines at a time from the file, decodes them in one
msgspec call, turns them into typed columns (``batches.SampleBatches``) and drops the decoded
records before reading on. Peak memory is the frame plus one batch, whatever the file size, so a
20M-sample dump reads on a machine that could never hold its text. Only when a batch fails are
its lines decoded one by one, to name the bad line.
"""

from __future__ import annotations

import gzip
import io
import itertools
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

import msgspec
import numpy as np

from tileprof.errors import InputError
from tileprof.parsers._common import (
    GZIP_MAGIC,
    DeviceHeader,
    ParsedDump,
    json_error_place,
    json_error_text,
    open_input,
    split_validation_error,
)
from tileprof.parsers._format import TILE_DUMP, Content, InputFormat, ProgressFn
from tileprof.parsers.batches import DEFAULT_BATCH_ROWS, SampleBatches
from tileprof.parsers.json_dump import gc_paused
from tileprof.parsers.records import SampleRecord

FORMAT = "ndjson"
BatchFn = Callable[[int], None]
"""Told the number of samples in each batch as it is decoded (tests pin the chunking with it)."""
PositionFn = Callable[[int], None]
"""Told how many bytes of the file have been read so far (drives the progress bar)."""


class HeaderLine(msgspec.Struct):
    """The optional first line: device facts, no sample fields."""

    clockHz: int | float | None = None
    tileCount: int | None = None


_HEADER_DECODER = msgspec.json.Decoder(HeaderLine)
_SAMPLE_DECODER = msgspec.json.Decoder(SampleRecord)
_BATCH_DECODER = msgspec.json.Decoder(list[SampleRecord])


def is_header(line: bytes) -> bool:
    """A first line without ``physicalTile`` that names device facts is the header."""
    return b'"physicalTile"' not in line and (b'"clockHz"' in line or b'"tileCount"' in line)


def _line_error(path: Path, line_number: int, line: bytes) -> InputError:
    """Decode one line alone to get its precise error."""
    try:
        _SAMPLE_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        at, text = split_validation_error(str(exc))
        field_path = at.removeprefix("$").lstrip(".")
        detail = f"{field_path}: {text}" if field_path else text
        return InputError(path, f"line {line_number}", detail)
    except (msgspec.DecodeError, RecursionError) as exc:
        column = json_error_place(line, str(exc)).rpartition("column ")[2]
        where = f"line {line_number}" + (f", column {column}" if column.isdigit() else "")
        return InputError(path, where, json_error_text(str(exc)))
    return InputError(path, f"line {line_number}", "cannot decode sample")


def _header(path: Path, line_number: int, line: bytes) -> DeviceHeader:
    try:
        parsed = _HEADER_DECODER.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
        raise InputError(path, f"line {line_number}", f"bad header: {exc}") from None
    return DeviceHeader(parsed.clockHz, parsed.tileCount)


def _strip_newline(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\n") else line


def read_stream(
    path: Path,
    handle: IO[bytes],
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    on_batch: BatchFn | None = None,
    position: Callable[[], int] | None = None,
    progress: PositionFn | None = None,
) -> ParsedDump:
    """Decode NDJSON from an open binary handle, ``batch_rows`` lines at a time."""
    if batch_rows < 1:
        raise ValueError("batch_rows must be at least 1")
    header = DeviceHeader()
    batches = SampleBatches()
    line_numbers: list[np.ndarray] = []
    line_number = 0
    seen_first = False
    while True:
        lines = list(itertools.islice(handle, batch_rows))
        if not lines:
            break
        sample_lines: list[bytes] = []
        numbers: list[int] = []
        for line in lines:
            line_number += 1
            if not line.strip():
                continue
            if not seen_first:
                seen_first = True
                if is_header(line):
                    header = _header(path, line_number, line)
                    continue
            sample_lines.append(line)
            numbers.append(line_number)
        del lines
        if not sample_lines:
            continue
        try:
            with gc_paused():
                records = _BATCH_DECODER.decode(b"[" + b",".join(sample_lines) + b"]")
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
            for number, line in zip(numbers, sample_lines, strict=True):
                try:
                    _SAMPLE_DECODER.decode(line)
                except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
                    raise _line_error(path, number, _strip_newline(line)) from None
            raise InputError(path, f"line {numbers[0]}", "malformed NDJSON") from None
        del sample_lines
        with gc_paused():
            batches.add(records)
        line_numbers.append(np.asarray(numbers, dtype=np.int64))
        if on_batch is not None:
            on_batch(len(records))
        del records
        if progress is not None and position is not None:
            progress(position())
    all_numbers = np.concatenate(line_numbers) if line_numbers else np.empty(0, np.int64)

    def place(index: int) -> str:
        return f"line {all_numbers[index]}"

    return batches.finish(path, header, place)


def parse(path: Path, data: bytes) -> ParsedDump:
    """Decode an NDJSON dump held in memory (same batches as the file reader)."""
    return read_stream(path, io.BytesIO(data))


def parse_file(
    path: Path,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    on_batch: BatchFn | None = None,
    progress: PositionFn | None = None,
) -> ParsedDump:
    """Stream an NDJSON dump file, gzipped or not, without reading it whole."""
    with open_input(path) as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        handle = cast(IO[bytes], gzip.GzipFile(fileobj=raw, mode="rb") if compressed else raw)
        try:
            return read_stream(
                path,
                handle,
                batch_rows=batch_rows,
                on_batch=on_batch,
                position=raw.tell,
                progress=progress,
            )
        except (EOFError, OSError, zlib.error) as exc:
            raise InputError(path, None, f"corrupt or truncated gzip data ({exc})") from None


def sniff(content: Content) -> bool:
    """NDJSON: a one-line JSON object first (not a whole dump) that names a sample or the device."""
    first = content.first_value
    return (
        content.head.startswith(b"{")
        and content.first_line_is_object_without_samples
        and ("physicalTile" in first or "clockHz" in first or "tileCount" in first)
    )


def _stream(path: Path, progress: ProgressFn | None, size: int) -> ParsedDump:
    position = None if progress is None else (lambda done: progress(done, size))
    return parse_file(path, progress=position)


INPUT: InputFormat[ParsedDump] = InputFormat(
    FORMAT, TILE_DUMP, sniff, parse, extensions=(".ndjson", ".jsonl"), parse_file=_stream
)
