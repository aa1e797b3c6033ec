"""The samples of a JSON or NDJSON tile dump whose metadata does not parse, for ``tileprof check``.

The dump loader refuses a dump at its first bad metadata list (docs/formats.md: a list of
``{"name": string, "value": string or number}``, ``usefulCycles`` and
``physicalWorkCycles`` finite, non-negative numbers). The capture check counts them all
instead: ``scan`` finds every such sample and returns the dump with their metadata dropped,
which the loader then reads, so the other checks still run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from tileprof.core.schema import METADATA_NUMBER_KEYS


def metadata_parses(value: Any) -> bool:
    """Whether one sample's ``metadata`` is what the loader accepts (absent or null too): its
    entry type (``MetadataEntry``: a number as ``value`` is read as its text, other keys are
    ignored) and its number check (``metadata_number``)."""
    from tileprof.inputs._common import MetadataEntry, metadata_number

    try:
        entries = msgspec.convert(value, type=list[MetadataEntry] | None)
        for entry in entries or ():
            if entry.name in METADATA_NUMBER_KEYS:
                metadata_number(entry.name, str(entry.value))
    except ValueError:  # msgspec.ValidationError is one too
        return False
    return True


def scan(path: str | Path) -> tuple[list[int], bytes] | None:
    """(indices of the samples whose metadata does not parse, the dump without their
    metadata) for a JSON or NDJSON dump at ``path``; None for any other file."""
    from tileprof.inputs._common import read_bytes

    data = read_bytes(Path(path))
    try:
        document = msgspec.json.decode(data)
    except msgspec.DecodeError:
        return _scan_lines(data)
    if not isinstance(document, dict) or not isinstance(document.get("samples"), list):
        return None
    bad = _strip(document["samples"])
    return bad, msgspec.json.encode(document)


def _strip(samples: list[Any]) -> list[int]:
    bad = []
    for i, sample in enumerate(samples):
        if isinstance(sample, dict) and not metadata_parses(sample.get("metadata")):
            bad.append(i)
            del sample["metadata"]
    return bad


def _scan_lines(data: bytes) -> tuple[list[int], bytes] | None:
    """NDJSON: an optional header line, then one sample per line (blank lines skipped)."""
    out, bad, index = [], [], 0
    for line in data.split(b"\n"):
        if not line.strip():
            out.append(line)
            continue
        try:
            value = msgspec.json.decode(line)
        except msgspec.DecodeError:
            return None
        if isinstance(value, dict) and "physicalTile" in value:
            if _strip([value]):
                bad.append(index)
                line = msgspec.json.encode(value)
            index += 1
        out.append(line)
    return bad, b"\n".join(out)
