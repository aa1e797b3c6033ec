"""JSON dumps: one document ``{"clockHz": …, "tileCount": …, "samples": [ … ], …}``.

Other top-level keys are ignored, so a summary document such as seed 004 is a valid dump of
its listed samples.

The compiled decoder (``native``, crates/tileprof-decode) reads every JSON dump: a plain file
mapped (its pages handed back as they are decoded, so memory stays near the columns), a gzipped
one through flate2, bytes from a pipe. Each thread decodes a byte range of the samples array
straight into columns, from where it guesses a sample starts; the parts are chained so that
every kept sample was decoded from a true sample start and every byte of the array was decoded
(docs/architecture.md). A document that does not decode is decoded again in blocks found by a
structural scan (strings and nesting), which says exactly where it fails.

When the document does not decode, the error is worded by the typed msgspec decode of the
whole document (``precise_error``): the sample index and field, or the line and column of bad
JSON, exactly as tileprof has always named them. That decode runs only on failure.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import msgspec

from tileprof.core.errors import InputError
from tileprof.inputs import native, threads
from tileprof.inputs._common import (
    DeviceHeader,
    ParsedDump,
    json_error_place,
    json_error_text,
    read_bytes,
    split_validation_error,
)
from tileprof.inputs._format import ProgressFn, Reader
from tileprof.inputs._sniff import JSON
from tileprof.inputs.records import SampleRecord

FORMAT = JSON


class DumpDocument(msgspec.Struct):
    """The top level of a JSON dump, typed: what words a document's error."""

    samples: list[SampleRecord]
    clockHz: int | float | None = None
    tileCount: int | None = None


_DECODER = msgspec.json.Decoder(DumpDocument)
_CLOCK = msgspec.json.Decoder(int | float | None)
_TILES = msgspec.json.Decoder(int | None)
_SAMPLE_PATH = re.compile(r"\$\.samples\[(\d+)\]\.?(.*)")


def validation_place(message: str, container: str = "samples") -> tuple[str, str]:
    """Split msgspec's ``… - at `$.samples[12].offset``` into ("sample 12", "offset: …")."""
    at, text = split_validation_error(message)
    match = _SAMPLE_PATH.fullmatch(at) if container == "samples" else None
    if match:
        index, field_path = match.groups()
        return f"sample {index}", f"{field_path}: {text}" if field_path else text
    return "document" if at == "$" else at, text


def sample_place(index: int) -> str:
    """Where sample ``index`` of a JSON document is, for error messages."""
    return f"sample {index}"


def precise_error(path: Path, data: bytes) -> InputError | None:
    """The error of the document's typed decode in tileprof's words (the sample and field, or
    the line and column); None when it decodes."""
    try:
        _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        where, message = validation_place(str(exc))
        return InputError(path, where, message)
    except (msgspec.DecodeError, RecursionError) as exc:
        return InputError(path, json_error_place(data, str(exc)), json_error_text(str(exc)))
    return None


def _failure(path: Path, error: native.DecodeError, data: Callable[[], bytes]) -> InputError:
    """The InputError for a decoder error: the precise wording when the typed decode finds it
    too (``data`` reads the bytes; a gzip or read error is worded by reading them), else the
    decoder's own message at the sample it names."""
    kind, place, message, _ = native.error_parts(error)
    if kind == "panic":
        return native.panic_error(path, message)
    precise = precise_error(path, data())
    if precise is not None:
        return precise
    return InputError(path, "document" if place is None else sample_place(place), message)


def _header(
    path: Path, clock: str | None, tiles: str | None, data: Callable[[], bytes]
) -> DeviceHeader:
    """The device facts from their raw JSON text (typed as the document declares them)."""
    try:
        return DeviceHeader(
            None if clock is None else _CLOCK.decode(clock),
            None if tiles is None else _TILES.decode(tiles),
        )
    except msgspec.ValidationError as exc:
        precise = precise_error(path, data())
        raise (precise or InputError(path, "document", str(exc))) from None


def _parsed(
    path: Path,
    decoded: tuple[native.ArrowColumns, list[bytes], str | None, str | None],
    data: Callable[[], bytes],
) -> ParsedDump:
    columns, metadata, clock, tiles = decoded
    header = _header(path, clock, tiles, data)
    return native.parsed_dump(path, columns, metadata, header, sample_place)


def parse(path: Path, data: bytes, *, block_bytes: int | None = None) -> ParsedDump:
    """Decode a JSON dump document held in memory (``block_bytes``: the size of the blocks the
    threads take, default chosen from the size; tests make it tiny)."""
    try:
        decoded = native.core.decode_json_bytes(data, threads.jobs(), block_bytes)
    except native.DecodeError as error:
        raise _failure(path, error, lambda: data) from None
    return _parsed(path, decoded, lambda: data)


def parse_file(
    path: Path, *, progress: ProgressFn | None = None, block_bytes: int | None = None
) -> ParsedDump:
    """Decode a JSON dump file, plain (mapped) or gzipped, on ``threads.jobs()`` threads,
    reporting to ``progress`` as the samples are decoded."""
    report = native.progress_reporter(path, progress)
    try:
        decoded, _ = native.core.decode_json_file(str(path), threads.jobs(), block_bytes, report)
    except native.DecodeError as error:
        raise _failure(path, error, lambda: read_bytes(path)) from None
    parsed = _parsed(path, decoded, lambda: read_bytes(path))
    if progress is not None:
        total = native.text_size(path)
        progress(total, total)
    return parsed


def _stream(path: Path, progress: ProgressFn | None, size: int) -> ParsedDump:
    return parse_file(path, progress=progress)


READER: Reader[ParsedDump] = Reader(parse, parse_file=_stream)
