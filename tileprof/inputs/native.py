"""The Python side of the compiled decoder: its columns into the typed sample frame.

``tileprof.core._native`` (crates/tileprof-native over crates/tileprof-decode) decodes a JSON
or NDJSON dump on threads into Arrow columns: integers, ``kind``/``operation``/``kernel`` as
dictionaries (polars reads them as Categorical), each sample's metadata list as an id into the
distinct raw texts. ``core`` is that module, imported by its full name so that the layer test
(which sees no compiled module) reads no edge back to the package. ``parsed_dump`` wraps the
columns in polars without a copy (each column handed out on its own, so that each is freed as
soon as nothing uses it; ``metadataId`` is already the frame's nullable UInt32), decodes each
distinct metadata list once (``_common.decode_metadata``, which words a bad one by the first
sample that carries it) and gathers ``usefulCycles``/``physicalWorkCycles`` per sample by id.

While it decodes, the crate reports the bytes of text decoded so far (as each stretch of the
file finishes, on the calling thread, GIL held); ``progress_reporter`` turns that into the
(done, total) calls of a progress bar.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import polars as pl

import tileprof.core._native as core
from tileprof.core.errors import InputError
from tileprof.core.memory import require_room_for_analyses
from tileprof.inputs import threads
from tileprof.inputs._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    build_sample_frame,
    decode_metadata,
)
from tileprof.inputs._format import ProgressFn

DecodeError = core.DecodeError
ArrowColumns = core.ArrowColumns
GZIP_MAGIC = b"\x1f\x8b"
FRAME_BYTES_PER_SAMPLE = 72
"""The sample frame's size a sample (``estimated_size``: 7 eight-byte columns, 3 categorical
keys and the metadata id, with validity)."""
RAW_COLUMNS = ("tile", "offset", "duration", "phase", "epoch", "kind", "operation", "kernel")


def parsed_dump(
    path: Path,
    columns: ArrowColumns,
    metadata: list[bytes],
    header: DeviceHeader,
    place: PlaceFn,
) -> ParsedDump:
    """The typed frame of the decoded ``columns`` (handed out: ``columns`` is empty after;
    ``place`` names a sample's place in errors). polars builds and checks the frame next, and
    aborts where an allocation fails: the room for it is checked first."""
    require_room_for_analyses(len(columns) * FRAME_BYTES_PER_SAMPLE)
    series, decoded_ids = _series(path, columns)
    raw = pl.DataFrame(series)
    ids = raw["metadataId"]
    table, useful, physical = decode_metadata(path, metadata, ids, place)
    by_id = [useful.to_list(), physical.to_list()]
    try:
        gathers = core.gather_by_id(decoded_ids, by_id, threads.jobs())
    except DecodeError as error:  # out of memory: MemoryError; else a bug (a panic, bad ids)
        raise panic_error(path, error_parts(error)[2]) from None
    per_sample = {
        name: pl.Series(gather).alias(name)
        for name, gather in zip(("usefulCycles", "physicalWorkCycles"), gathers, strict=True)
    }
    frame = build_sample_frame(
        {name: raw[name] for name in RAW_COLUMNS}, ids, useful, physical, per_sample=per_sample
    )
    return ParsedDump(frame, table, header, place)


def _series(path: Path, columns: ArrowColumns) -> tuple[list[pl.Series], core.ArrowColumn]:
    """The decoded columns in polars, one by one, each of the decoder's dropped as soon as
    polars holds it (but ``metadataId``, returned too for ``gather_by_id``: polars shares it).
    Column by column: polars keeps an imported struct array whole while any column of it is
    alive, so one struct would keep every decoded column as long as the frame. One at a time:
    polars remaps the dictionary keys (``kind``, ``operation``, ``kernel``) into keys of its own,
    and the decoder's are freed before the next column's are remapped."""
    handed = columns.columns()
    handed.reverse()
    series = []
    ids = None
    while handed:
        name, column = handed.pop()
        series.append(pl.Series(column).alias(name))
        ids = column if name == "metadataId" else ids
    if ids is None:
        raise panic_error(path, "the decoder returned no metadataId column")
    return series, ids


def error_parts(error: DecodeError) -> tuple[str, int | None, str, bytes | None]:
    """(kind, place, message, text) of a decoder error. The decoder running out of memory (its
    columns grow with ``try_reserve``) is raised as ``MemoryError``: the command line's one
    out-of-memory line, naming the input files (``tileprof.commands.cli``)."""
    kind, place, message, text = error.args
    if kind == "memory":
        raise MemoryError(message)
    return str(kind), place, str(message), text


def panic_error(path: Path, message: str) -> InputError:
    """A panic in the decoder, as the one line every input error is."""
    return InputError(path, None, f"internal error in the decoder ({message}); please report it")


DEFLATE_MAX_RATIO = 1032
"""Deflate's largest ratio of text to compressed bytes (a 258-byte match in two bits, about):
a gzip file under 2^32 / 1032 bytes (4.2 MB) cannot hold a text of 4 GiB."""


def text_size(path: Path) -> int:
    """The size of the text the decoder reads from ``path``: the file's, or for gzip the size its
    trailer states (ISIZE, the size modulo 2^32). A file large enough to hold 4 GiB of text
    takes the smallest such size of at least half its own (a text is never much smaller than
    its compressed bytes, which may exceed it by a header and a few bytes a block; a bar over
    a text of more than 4 GiB may still fill early)."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        if stream.read(2) != GZIP_MAGIC or size < 18:
            return size
        stream.seek(-4, 2)
        stated = int.from_bytes(stream.read(4), "little")
    if size * DEFLATE_MAX_RATIO < 1 << 32:
        return stated  # no text this file can hold wraps ISIZE
    while stated < size // 2:
        stated += 1 << 32
    return stated


def progress_reporter(path: Path, progress: ProgressFn | None) -> Callable[[int], None] | None:
    """The decoder's ``progress`` callback (bytes of text decoded so far) as ``progress(done,
    total)`` calls, ``total`` being ``text_size``; None when there is no bar."""
    if progress is None:
        return None
    total = text_size(path)

    def report(done: int) -> None:
        progress(min(done, total), total)

    return report
