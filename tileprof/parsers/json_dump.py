"""JSON dumps: one document ``{"clockHz": …, "tileCount": …, "samples": [ … ], …}``.

Other top-level keys are ignored, so a summary document such as seed 004 is a valid dump of
its listed samples. Samples decode into typed Structs (validated while decoding, the failing
path named); each sample's metadata stays raw bytes until its distinct lists are interned.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import msgspec

from tileprof.errors import InputError
from tileprof.parsers._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    build_sample_frame,
    decode_metadata,
    intern_metadata,
    json_error_place,
)

FORMAT = "json"


class SampleRecord(msgspec.Struct):
    """One sample in the dump's layout; absent optional fields decode as None."""

    physicalTile: int
    offset: int
    duration: int
    phase: int | None = None
    epoch: int | None = None
    kind: str | None = None
    operation: str | None = None
    kernel: str | None = None
    metadata: msgspec.Raw = msgspec.Raw()


class DumpDocument(msgspec.Struct):
    """The top level of a JSON dump; unknown keys are skipped by the decoder."""

    samples: list[SampleRecord]
    clockHz: int | float | None = None
    tileCount: int | None = None


_DECODER = msgspec.json.Decoder(DumpDocument)
_SAMPLE_PATH = re.compile(r"`\$\.samples\[(\d+)\]\.?([^`]*)`")


def validation_place(message: str, container: str = "samples") -> tuple[str, str]:
    """Split msgspec's ``… - at `$.samples[12].offset``` into ("sample 12", "offset: …")."""
    text, _, at = message.partition(" - at ")
    match = _SAMPLE_PATH.search(at) if container == "samples" else None
    if match:
        index, field_path = match.groups()
        detail = f"{field_path}: {text}" if field_path else text
        return f"sample {index}", detail[:1].lower() + detail[1:]
    return at.strip("`") or "document", text


def sample_place(index: int) -> str:
    """Where sample ``index`` of a JSON document is, for error messages."""
    return f"sample {index}"


def samples_to_parsed(
    records: list[SampleRecord], header: DeviceHeader, path: Path, place: PlaceFn = sample_place
) -> ParsedDump:
    """Columns, interned metadata and the typed frame from decoded sample records."""
    ids, distinct = intern_metadata([bytes(record.metadata) for record in records])
    table, useful, physical = decode_metadata(path, distinct, ids, place)
    columns: dict[str, Sequence[object]] = {
        "tile": [r.physicalTile for r in records],
        "offset": [r.offset for r in records],
        "duration": [r.duration for r in records],
        "phase": [r.phase for r in records],
        "epoch": [r.epoch for r in records],
        "kind": [r.kind for r in records],
        "operation": [r.operation for r in records],
        "kernel": [r.kernel for r in records],
    }
    frame = build_sample_frame(columns, ids, useful, physical)
    return ParsedDump(frame, table, header, place)


def parse(path: Path, data: bytes) -> ParsedDump:
    """Decode a JSON dump document."""
    try:
        document = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        where, message = validation_place(str(exc))
        raise InputError(path, where, message) from None
    except msgspec.DecodeError as exc:
        raise InputError(path, json_error_place(data, str(exc)), f"malformed JSON: {exc}") from None
    header = DeviceHeader(document.clockHz, document.tileCount)
    return samples_to_parsed(document.samples, header, path)
