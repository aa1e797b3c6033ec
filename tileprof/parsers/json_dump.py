"""JSON dumps: one document ``{"clockHz": …, "tileCount": …, "samples": [ … ], …}``.

Other top-level keys are ignored, so a summary document such as seed 004 is a valid dump of
its listed samples. Samples decode into typed Structs (validated while decoding, the failing
path named); each sample's metadata stays raw bytes until its distinct lists are interned.

Two paths give the same result. ``parse`` decodes a document held in memory all at once: it is
the precise path and words every error. ``parse_file`` is the fast path for plain files: it maps
the file, splits the samples array into raw slices (no objects but one ``Raw`` per sample),
decodes them in batches (``batches.SampleBatches``) with the garbage collector paused, and hands
the mapped pages back to the kernel as it goes, so peak memory stays near the file size. On any
failure it falls back to ``parse``, so errors read the same whichever path met them.
"""

from __future__ import annotations

import contextlib
import gc
import mmap
import re
from collections.abc import Iterator
from pathlib import Path

import msgspec
import numpy as np

from tileprof.errors import InputError
from tileprof.parsers import parallel
from tileprof.parsers._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    json_error_place,
    json_error_text,
    read_bytes,
    split_validation_error,
)
from tileprof.parsers._format import ProgressFn, Reader
from tileprof.parsers._sniff import JSON
from tileprof.parsers.batches import (
    DEFAULT_BATCH_ROWS,
    SampleBatches,
    intern_columns,
)
from tileprof.parsers.records import SampleRecord

FORMAT = JSON


class DumpDocument(msgspec.Struct):
    """The top level of a JSON dump; unknown keys are skipped by the decoder."""

    samples: list[SampleRecord]
    clockHz: int | float | None = None
    tileCount: int | None = None


class RawSamplesDocument(msgspec.Struct):
    """The top level with each sample kept as its raw JSON slice (the fast path's first pass)."""

    samples: list[msgspec.Raw]
    clockHz: int | float | None = None
    tileCount: int | None = None


_DECODER = msgspec.json.Decoder(DumpDocument)
_RAW_DECODER = msgspec.json.Decoder(RawSamplesDocument)
_BATCH_DECODER = msgspec.json.Decoder(list[SampleRecord])
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


def samples_to_parsed(
    records: list[SampleRecord], header: DeviceHeader, path: Path, place: PlaceFn = sample_place
) -> ParsedDump:
    """Columns, interned metadata and the typed frame from decoded sample records."""
    batches = SampleBatches()
    batches.add(records)
    return batches.finish(path, header, place)


def parse(path: Path, data: bytes) -> ParsedDump:
    """Decode a JSON dump document."""
    try:
        document = _DECODER.decode(data)
    except msgspec.ValidationError as exc:
        where, message = validation_place(str(exc))
        raise InputError(path, where, message) from None
    except (msgspec.DecodeError, RecursionError) as exc:
        raise InputError(
            path, json_error_place(data, str(exc)), json_error_text(str(exc))
        ) from None
    header = DeviceHeader(document.clockHz, document.tileCount)
    return samples_to_parsed(document.samples, header, path)


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: decoding allocates millions of acyclic objects, and
    each collection the allocations would trigger rescans all of them for nothing."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _release(mapped: mmap.mmap) -> None:
    """Drop the mapping's resident pages (they are still in the page cache and fault back in)."""
    if hasattr(mmap, "MADV_DONTNEED"):
        with contextlib.suppress(OSError):
            mapped.madvise(mmap.MADV_DONTNEED)


class WorkerDecodeFailed(Exception):
    """A worker could not decode its samples: the caller re-reads the file through ``parse``."""


def read_range(path: str, start: int, end: int) -> bytes:
    """Bytes ``start:end`` of the file (a worker reads its own range; nothing big is sent)."""
    with open(path, "rb") as handle:
        handle.seek(start)
        return handle.read(end - start)


def decode_range(path: str, start: int, end: int) -> tuple[bytes, list[bytes]] | None:
    """Worker task: the samples in bytes ``start:end`` (whole samples and the commas between)
    as Arrow IPC columns and their distinct metadata texts; None when they do not decode."""
    data = b"[" + read_range(path, start, end) + b"]"
    try:
        with gc_paused():
            records = _BATCH_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError):
        return None
    del data
    with gc_paused():
        frame, distinct = intern_columns(records)
    return parallel.encode_columns(frame), distinct


def _address(buffer: object) -> int:
    view = np.frombuffer(buffer, dtype=np.uint8)  # type: ignore[call-overload]
    return int(view.ctypes.data)


def sample_ranges(
    mapped: mmap.mmap, raws: list[msgspec.Raw], batch_rows: int
) -> list[tuple[int, int]] | None:
    """Byte ranges of ``batch_rows`` whole samples each, from where the raw split's slices lie
    in the mapping (msgspec's ``Raw`` is a view of the mapped bytes, not a copy). The split
    parsed every string and bracket, so a ``},{`` inside a string never cuts a sample. None
    when a slice is not such a view (a msgspec that copies): the caller decodes in process."""
    base = _address(mapped)
    ranges: list[tuple[int, int]] = []
    for first in range(0, len(raws), batch_rows):
        head, tail = raws[first], raws[min(first + batch_rows, len(raws)) - 1]
        start = _address(head) - base
        end = _address(tail) - base + len(tail)
        if not (0 <= start < end <= len(mapped)) or (
            mapped[start : start + 1] != b"{" or mapped[end - 1 : end] != b"}"
        ):
            return None
        ranges.append((start, end))
    return ranges


def _decode_in_workers(
    path: Path, ranges: list[tuple[int, int]], total: int, progress: ProgressFn | None
) -> SampleBatches:
    batches = SampleBatches()
    tasks = [(str(path), start, end) for start, end in ranges]
    for result in parallel.run_tasks(path, decode_range, tasks):
        if result is None:
            raise WorkerDecodeFailed
        ipc, distinct = result
        batches.add_interned(parallel.decode_columns(ipc), distinct)
        if progress is not None:
            progress(batches.rows, total)
    return batches


def _parse_mapped(
    path: Path, mapped: mmap.mmap, batch_rows: int, progress: ProgressFn | None
) -> ParsedDump:
    with gc_paused():
        document = _RAW_DECODER.decode(mapped)
    header = DeviceHeader(document.clockHz, document.tileCount)
    raws = document.samples
    del document
    total = len(raws)
    ranges = None
    if parallel.use_workers(len(mapped)):
        # Tasks small enough that every worker gets several: the load evens out, and the
        # workers' decoded objects together stay well under the file's size.
        ranges = sample_ranges(mapped, raws, min(batch_rows, total // (4 * parallel.jobs()) + 1))
    if ranges is not None:
        del raws
        _release(mapped)
        batches = _decode_in_workers(path, ranges, total, progress)
        return batches.finish(path, header, sample_place)
    _release(mapped)
    batches = SampleBatches()
    for start in range(0, total, batch_rows):
        chunk = raws[start : start + batch_rows]
        with gc_paused():
            records = _BATCH_DECODER.decode(b"[" + b",".join(chunk) + b"]")
            del chunk
            batches.add(records)
            del records
        _release(mapped)
        if progress is not None:
            progress(min(start + batch_rows, total), total)
    del raws
    return batches.finish(path, header, sample_place)


def parse_file(
    path: Path, *, batch_rows: int = DEFAULT_BATCH_ROWS, progress: ProgressFn | None = None
) -> ParsedDump:
    """Decode a plain (not gzipped) JSON dump file through the fast path.

    A decoding failure (bad JSON, a wrong type) re-reads the file through ``parse``, whose error
    names the sample and field exactly; bad metadata is already named by sample here. Nothing
    else falls back, so memory pressure or a bug never turns into a silent whole-file decode.
    """
    parsed: ParsedDump | None = None
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        mapped = None
    if mapped is not None:
        try:
            parsed = _parse_mapped(path, mapped, batch_rows, progress)
        except (msgspec.ValidationError, msgspec.DecodeError, WorkerDecodeFailed, RecursionError):
            parsed = None
        finally:
            with contextlib.suppress(BufferError):
                mapped.close()
    if parsed is None:
        parsed = parse(path, read_bytes(path))
    return parsed


def _stream(path: Path, progress: ProgressFn | None, size: int) -> ParsedDump:
    return parse_file(path, progress=progress)


READER: Reader[ParsedDump] = Reader(
    parse,
    parse_file=_stream,
    stream_gzip=False,  # the fast path maps the file: only a plain one
)
