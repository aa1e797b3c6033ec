"""NDJSON dumps: an optional header line ``{"clockHz": …, "tileCount": …}``, then one sample
object per line. Blank lines are skipped; errors name the line.

The compiled decoder (``native``, crates/tileprof-decode) streams the file, plain or gzipped,
through a bounded window of text: the part up to the window's last newline is cut into ranges
of whole lines that threads decode straight into columns, and the rest carries over. Peak memory
is the columns plus the window, whatever the file's size, so a 20M-sample dump reads on a
machine that could never hold its text.

The decoder names the first line that does not decode; that line alone is then decoded by the
typed msgspec decoder (``_line_problem``) to word the error as tileprof always has. The header
line, found by the decoder, is decoded here.
"""

from __future__ import annotations

import gzip
import zlib
from pathlib import Path

import msgspec
import polars as pl

from tileprof.core.errors import InputError
from tileprof.inputs import native, threads
from tileprof.inputs._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    json_error_place,
    json_error_text,
    open_input,
    split_validation_error,
)
from tileprof.inputs._format import ProgressFn, Reader
from tileprof.inputs._sniff import NDJSON
from tileprof.inputs.records import SampleRecord

FORMAT = NDJSON


class HeaderLine(msgspec.Struct):
    """The optional first line: device facts, no sample fields."""

    clockHz: int | float | None = None
    tileCount: int | None = None


_HEADER_DECODER = msgspec.json.Decoder(HeaderLine)
_SAMPLE_DECODER = msgspec.json.Decoder(SampleRecord)

LineProblem = tuple[int, str, str]
"""Why a line does not decode: (line number, text after "line N" in the place, message)."""
UNWORDED = "cannot decode sample"
"""The message of a line that the typed decoder decodes after all."""


def _worded(line: bytes, exc: Exception, column_offset: int = 0) -> tuple[str, str]:
    """A line's decode error as (text after "line N" in the place, message): the field at
    fault and what it holds, or the malformed JSON's reason at its column (``line`` starts
    ``column_offset`` characters into the file's line)."""
    if isinstance(exc, msgspec.ValidationError):
        at, text = split_validation_error(str(exc))
        field_path = at.removeprefix("$").lstrip(".")
        return "", f"{field_path}: {text}" if field_path else text
    column = json_error_place(line, str(exc)).rpartition("column ")[2]
    suffix = f", column {int(column) + column_offset}" if column.isdigit() else ""
    return suffix, json_error_text(str(exc))


def _line_problem(line_number: int, line: bytes) -> LineProblem:
    """Decode one line alone to get its precise error."""
    try:
        _SAMPLE_DECODER.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
        return (line_number, *_worded(line, exc))
    return line_number, "", UNWORDED


def decode_header(
    path: Path, line_number: int, line: bytes, what: str = "header", column_offset: int = 0
) -> DeviceHeader:
    """The device facts of a header line, or an error worded as a sample line's is (the key at
    fault, or the malformed JSON's reason and column); ``what`` names the line in the message
    (a CSV dump's is a "header comment")."""
    try:
        parsed = _HEADER_DECODER.decode(line)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
        suffix, message = _worded(line, exc, column_offset)
        raise InputError(path, f"line {line_number}{suffix}", f"bad {what}: {message}") from None
    return DeviceHeader(parsed.clockHz, parsed.tileCount)


def problem_error(path: Path, problem: LineProblem) -> InputError:
    """The error for a line problem."""
    number, suffix, message = problem
    return InputError(path, f"line {number}{suffix}", message)


def gzip_error(path: Path, detail: str) -> InputError:
    """A corrupt gzip stream, worded with Python's gzip module's reason when it finds one."""
    try:
        with open_input(path) as raw, gzip.GzipFile(fileobj=raw, mode="rb") as stream:
            while stream.read(1 << 24):
                pass
    except (EOFError, OSError, zlib.error) as exc:
        detail = str(exc)
    return InputError(path, None, f"corrupt or truncated gzip data ({detail})")


def _failure(path: Path, error: native.DecodeError) -> InputError:
    kind, place, message, text = native.error_parts(error)
    if kind == "panic":
        return native.panic_error(path, message)
    if kind == "gzip":
        return gzip_error(path, message)
    if kind != "line" or place is None or text is None:
        return InputError(path, None, message)
    problem = _line_problem(place, text)
    if problem[2] == UNWORDED:
        return InputError(path, f"line {place}", message)
    return problem_error(path, problem)


def _by_line(runs: pl.DataFrame) -> PlaceFn:
    """Sample index to its line, from the decoder's runs of consecutive lines (``start``: the
    run's first sample, ``line``: its line). Most dumps have no blank line between samples: one
    run, line i is the first line plus i. The decoder keeps no line per sample (at 20M samples
    that column was 160 MB)."""
    if runs.height < 2:
        first = int(runs["line"][0]) if runs.height else 1

        def consecutive(index: int) -> str:
            return f"line {first + index}"

        return consecutive
    starts, lines = runs["start"], runs["line"]

    def place(index: int) -> str:
        run = int(starts.search_sorted(index, side="right")) - 1
        return f"line {int(lines[run]) + index - int(starts[run])}"

    return place


Decoded = tuple[native.ArrowColumns, list[bytes], int | None, bytes | None, native.ArrowColumns]
"""What the decoder returns: columns, metadata texts, header line and text, line runs."""


def _parsed(path: Path, decoded: Decoded) -> ParsedDump:
    columns, metadata, header_line, header_text, runs = decoded
    header = DeviceHeader()
    if header_line is not None and header_text is not None:
        header = decode_header(path, header_line, header_text)
    place = _by_line(pl.DataFrame(runs))
    return native.parsed_dump(path, columns, metadata, header, place)


def parse(path: Path, data: bytes) -> ParsedDump:
    """Decode an NDJSON dump held in memory (the same decoder as the file reader)."""
    try:
        decoded = native.core.decode_ndjson_bytes(data, threads.jobs())
    except native.DecodeError as error:
        raise _failure(path, error) from None
    return _parsed(path, decoded)


def parse_file(
    path: Path, *, window: int | None = None, progress: ProgressFn | None = None
) -> ParsedDump:
    """Stream an NDJSON dump file, gzipped or not, ``window`` bytes of text at a time (default:
    the decoder's 32 MiB), on ``threads.jobs()`` threads, reporting to ``progress`` as each window
    is decoded."""
    with open_input(path):
        pass  # a missing or unreadable file is named as every reader names it
    report = native.progress_reporter(path, progress)
    try:
        if window is None:
            decoded = native.core.decode_ndjson_file(str(path), threads.jobs(), progress=report)
        else:
            decoded = native.core.decode_ndjson_file(str(path), threads.jobs(), window, report)
    except native.DecodeError as error:
        raise _failure(path, error) from None
    parsed = _parsed(path, decoded)
    if progress is not None:
        total = native.text_size(path)
        progress(total, total)
    return parsed


def _stream(path: Path, progress: ProgressFn | None, size: int) -> ParsedDump:
    return parse_file(path, progress=progress)


READER: Reader[ParsedDump] = Reader(parse, parse_file=_stream)
