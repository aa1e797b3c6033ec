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
import mmap
import os
import stat
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import IO, cast

import msgspec
import numpy as np
import polars as pl

from tileprof.core.errors import InputError
from tileprof.inputs import parallel
from tileprof.inputs._common import (
    GZIP_MAGIC,
    DeviceHeader,
    ParsedDump,
    json_error_place,
    json_error_text,
    open_input,
    split_validation_error,
)
from tileprof.inputs._format import ProgressFn, Reader
from tileprof.inputs._sniff import NDJSON
from tileprof.inputs.batches import DEFAULT_BATCH_ROWS, SampleBatches, intern_columns
from tileprof.inputs.records import SampleRecord
from tileprof.inputs.tile.json_dump import gc_paused, read_range

FORMAT = NDJSON
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


LineProblem = tuple[int, str, str]
"""Why a line does not decode: (line number, text after "line N" in the place, message)."""


def _line_problem(line_number: int, line: bytes) -> LineProblem:
    """Decode one line alone to get its precise error."""
    try:
        _SAMPLE_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        at, text = split_validation_error(str(exc))
        field_path = at.removeprefix("$").lstrip(".")
        return line_number, "", f"{field_path}: {text}" if field_path else text
    except (msgspec.DecodeError, RecursionError) as exc:
        column = json_error_place(line, str(exc)).rpartition("column ")[2]
        suffix = f", column {column}" if column.isdigit() else ""
        return line_number, suffix, json_error_text(str(exc))
    return line_number, "", "cannot decode sample"


def problem_error(path: Path, problem: LineProblem, lines_before: int = 0) -> InputError:
    """The error for a line problem found ``lines_before`` lines into the file."""
    number, suffix, message = problem
    return InputError(path, f"line {number + lines_before}{suffix}", message)


def decode_lines(sample_lines: list[bytes], numbers: list[int]) -> list[SampleRecord] | LineProblem:
    """The lines' samples decoded in one call; when that fails, the first bad line's problem."""
    try:
        with gc_paused():
            return _BATCH_DECODER.decode(b"[" + b",".join(sample_lines) + b"]")
    except (msgspec.ValidationError, msgspec.DecodeError):
        for number, line in zip(numbers, sample_lines, strict=True):
            try:
                _SAMPLE_DECODER.decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                return _line_problem(number, _strip_newline(line))
        return numbers[0], "", "malformed NDJSON"


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
        records = decode_lines(sample_lines, numbers)
        if isinstance(records, tuple):
            raise problem_error(path, records)
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


TASK_BYTES = 16 * 2**20
"""Most bytes of lines one worker task decodes at once (about 35k samples, ~60 MB of objects)."""


_SPACE = np.frombuffer(b" \t\n\r\x0b\x0c", dtype=np.uint8)


def _dense_lines(data: bytearray, lines: int) -> list[SampleRecord] | None:
    """The samples of ``data`` when every one of its ``lines`` lines holds one (no blank line,
    none starting with white space, no carriage return), decoded straight from the buffer
    without one bytes object per line; None otherwise, or when it does not decode (the line by
    line path then finds the same samples, or words the error)."""
    if not data or data[:1].isspace() or b"\r" in data:
        return None
    text = np.frombuffer(data, dtype=np.uint8)
    after_newline = np.flatnonzero(text[:-1] == ord("\n")) + 1
    if np.isin(text[after_newline], _SPACE).any():
        return None
    try:
        with gc_paused():
            records = _SAMPLE_DECODER.decode_lines(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    return records if len(records) == lines else None


def decode_range(
    path: str, start: int, end: int
) -> tuple[bytes | str, list[bytes], int, LineProblem | None]:
    """Worker task: the samples on the whole lines in bytes ``start:end``.

    Returns the Arrow IPC columns (with each sample's line number counted from the range's
    start, in ``line``), the distinct metadata texts, how many lines the range holds, and the
    first bad line's problem (numbered the same way) when a line does not decode.
    """
    data = read_range(path, start, end)
    lines = data.count(b"\n") + (0 if not data or data.endswith(b"\n") else 1)
    records: list[SampleRecord] | LineProblem | None = _dense_lines(data, lines)
    if records is not None:
        numbers: list[int] | range = range(1, lines + 1)
    else:
        sample_lines: list[bytes] = []
        numbers = []
        for number, line in enumerate(io.BytesIO(data), start=1):
            if line.strip():
                sample_lines.append(line)
                numbers.append(number)
        del data
        records = decode_lines(sample_lines, numbers)
        del sample_lines
    if isinstance(records, tuple):
        return b"", [], lines, records
    with gc_paused():
        frame, distinct = intern_columns(records)
    frame = frame.with_columns(pl.Series("line", numbers, dtype=pl.Int64))
    return parallel.encode_columns(frame), distinct, lines, None


def _samples_start(path: Path, mapped: mmap.mmap) -> tuple[DeviceHeader, int, int]:
    """(header, byte where the sample lines start, lines before it): a header is only ever the
    first line that is not blank."""
    position, number = 0, 0
    while position < len(mapped):
        newline = mapped.find(b"\n", position)
        end = len(mapped) if newline < 0 else newline + 1
        number += 1
        line = mapped[position:end]
        if line.strip():
            if is_header(line):
                return _header(path, number, line), end, number
            break
        position = end
    return DeviceHeader(), 0, 0


def line_ranges(mapped: mmap.mmap, start: int, task_bytes: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``task_bytes`` each from ``start``, each ending after a newline."""
    ranges: list[tuple[int, int]] = []
    while start < len(mapped):
        newline = mapped.find(b"\n", start + max(task_bytes, 1) - 1)
        end = len(mapped) if newline < 0 else newline + 1
        ranges.append((start, end))
        start = end
    return ranges


def _parse_in_workers(
    path: Path, mapped: mmap.mmap, task_bytes: int, progress: PositionFn | None
) -> ParsedDump:
    header, start, lines_before = _samples_start(path, mapped)
    ranges = line_ranges(mapped, start, task_bytes)
    batches = SampleBatches()
    line_numbers: list[np.ndarray] = []
    tasks = [(str(path), first, end) for first, end in ranges]
    results = parallel.run_tasks(path, decode_range, tasks)
    for (_, end), (ipc, distinct, lines, problem) in zip(ranges, results, strict=True):
        if problem is not None:
            raise problem_error(path, problem, lines_before)
        frame = parallel.decode_columns(ipc)
        batches.add_interned(frame, distinct)
        line_numbers.append(frame["line"].to_numpy() + lines_before)
        lines_before += lines
        if progress is not None:
            progress(end)
    all_numbers = np.concatenate(line_numbers) if line_numbers else np.empty(0, np.int64)

    def place(index: int) -> str:
        return f"line {all_numbers[index]}"

    return batches.finish(path, header, place)


def _mapped(handle: IO[bytes]) -> mmap.mmap | None:
    """The open file mapped, when it is a regular file large enough for worker processes."""
    info = os.fstat(handle.fileno())
    if not stat.S_ISREG(info.st_mode) or not parallel.use_workers(info.st_size):
        return None
    try:
        return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def parse_file(
    path: Path,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    on_batch: BatchFn | None = None,
    progress: PositionFn | None = None,
    task_bytes: int | None = None,
) -> ParsedDump:
    """Stream an NDJSON dump file, gzipped or not, without reading it whole.

    A large plain file is decoded by worker processes (``parallel``), ``task_bytes`` of lines
    a task (default: ``TASK_BYTES``, less when that would leave a worker idle).
    """
    with open_input(path) as raw:
        compressed = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        mapped = None if compressed else _mapped(raw)
        if mapped is not None:
            with mapped:
                size = len(mapped) // (4 * parallel.jobs()) + 1
                chunk = task_bytes if task_bytes is not None else min(TASK_BYTES, size)
                return _parse_in_workers(path, mapped, chunk, progress)
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


def _stream(path: Path, progress: ProgressFn | None, size: int) -> ParsedDump:
    position = None if progress is None else (lambda done: progress(done, size))
    return parse_file(path, progress=position)


READER: Reader[ParsedDump] = Reader(parse, parse_file=_stream)
