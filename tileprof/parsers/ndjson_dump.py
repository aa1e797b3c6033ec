"""NDJSON dumps: an optional header line ``{"clockHz": …, "tileCount": …}``, then one sample
object per line. Blank lines are skipped; errors name the line."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import numpy as np

from tileprof.errors import InputError
from tileprof.parsers._common import DeviceHeader, ParsedDump, json_error_place
from tileprof.parsers.json_dump import SampleRecord, samples_to_parsed

FORMAT = "ndjson"


class HeaderLine(msgspec.Struct):
    """The optional first line: device facts, no sample fields."""

    clockHz: int | float | None = None
    tileCount: int | None = None


_HEADER_DECODER = msgspec.json.Decoder(HeaderLine)
_SAMPLE_DECODER = msgspec.json.Decoder(SampleRecord)
_BATCH_DECODER = msgspec.json.Decoder(list[SampleRecord])
_ITEM_PATH = re.compile(r"`\$\[(\d+)\]\.?([^`]*)`")


def is_header(line: bytes) -> bool:
    """A first line without ``physicalTile`` that names device facts is the header."""
    return b'"physicalTile"' not in line and (b'"clockHz"' in line or b'"tileCount"' in line)


def _line_error(path: Path, line_number: int, line: bytes) -> InputError:
    """Decode one line alone to get its precise error."""
    try:
        _SAMPLE_DECODER.decode(line)
    except msgspec.ValidationError as exc:
        text, _, at = str(exc).partition(" - at ")
        field_path = at.strip("`").removeprefix("$").lstrip(".")
        detail = f"{field_path}: {text}" if field_path else text
        return InputError(path, f"line {line_number}", detail[:1].lower() + detail[1:])
    except msgspec.DecodeError as exc:
        column = json_error_place(line, str(exc)).rpartition("column ")[2]
        where = f"line {line_number}" + (f", column {column}" if column.isdigit() else "")
        return InputError(path, where, f"malformed JSON: {exc}")
    return InputError(path, f"line {line_number}", "cannot decode sample")


def parse(path: Path, data: bytes) -> ParsedDump:
    """Decode an NDJSON dump: all sample lines in one batch, line by line only on error."""
    lines = data.split(b"\n")
    numbers = np.array([i for i, line in enumerate(lines, 1) if line.strip()], dtype=np.int64)
    header = DeviceHeader()
    if len(numbers) and is_header(lines[numbers[0] - 1]):
        first = lines[numbers[0] - 1]
        try:
            parsed_header = _HEADER_DECODER.decode(first)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            raise InputError(path, f"line {numbers[0]}", f"bad header: {exc}") from None
        header = DeviceHeader(parsed_header.clockHz, parsed_header.tileCount)
        numbers = numbers[1:]
    sample_lines = [lines[n - 1] for n in numbers]
    try:
        records = _BATCH_DECODER.decode(b"[" + b",".join(sample_lines) + b"]")
    except (msgspec.ValidationError, msgspec.DecodeError):
        for line_number, line in zip(numbers, sample_lines, strict=True):
            try:
                _SAMPLE_DECODER.decode(line)
            except (msgspec.ValidationError, msgspec.DecodeError):
                raise _line_error(path, int(line_number), line) from None
        raise InputError(path, None, "malformed NDJSON") from None

    def place(index: int) -> str:
        return f"line {numbers[index]}"

    return samples_to_parsed(records, header, path, place)
