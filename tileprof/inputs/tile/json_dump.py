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

With worker processes (``parallel``), one scan (``SamplesSpan``: the samples array as one raw
slice, no object per sample) finds the header and where the array lies; candidate cuts between
samples (``sample_ranges``) split it into byte ranges that the workers decode, and the decoding
itself proves each cut right. When a range does not decode, the file is decoded in process as
above (which words any error), so a wrong cut costs time, never a wrong frame.
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

from tileprof.core.errors import InputError
from tileprof.inputs import parallel
from tileprof.inputs._common import (
    DeviceHeader,
    ParsedDump,
    PlaceFn,
    json_error_place,
    json_error_text,
    read_bytes,
    split_validation_error,
)
from tileprof.inputs._format import ProgressFn, Reader
from tileprof.inputs._sniff import JSON
from tileprof.inputs.batches import (
    DEFAULT_BATCH_ROWS,
    SampleBatches,
    intern_columns,
)
from tileprof.inputs.records import SampleRecord

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
    """A worker could not decode its samples: the caller decodes the file in process."""


class SamplesSpan(msgspec.Struct):
    """The top level with the samples array kept as one raw slice: a scan that validates the
    whole document's syntax but makes no object per sample (where the array lies, the header)."""

    samples: msgspec.Raw
    clockHz: int | float | None = None
    tileCount: int | None = None


_SPAN_DECODER = msgspec.json.Decoder(SamplesSpan)
_JSON_SPACE = b" \t\n\r"
_SAMPLE_KEYS = b"|".join(field.encode() for field in SampleRecord.__struct_fields__)
_BETWEEN_SAMPLES = re.compile(
    rb"\}[ \t\n\r]*,[ \t\n\r]*\{[ \t\n\r]*\"(?:" + _SAMPLE_KEYS + rb")\"[ \t\n\r]*:"
)
"""Where one sample object ends and the next begins, as candidates: ``}``, a comma, then an
object whose first key is a sample field. Inside a string of a valid document this never
matches (its ``"`` after ``{`` would end the string, and a string is never followed by a key
name), so a candidate only errs by depth (a nested object with such a key); the decode of each
range then fails and the file is decoded in process."""
TASK_BYTES = 48 * 2**20
"""Most bytes of samples one worker task decodes (about 100k samples, ~50 MB of objects)."""


def _address(buffer: object) -> int:
    view = np.frombuffer(buffer, dtype=np.uint8)  # type: ignore[call-overload]
    return int(view.ctypes.data)


def samples_span(mapped: mmap.mmap, raw: msgspec.Raw) -> tuple[int, int] | None:
    """(first byte of the first sample, byte after the last sample) of the samples array
    ``raw``, a view of ``mapped``; None when it is not a view, or not a non-empty array of
    objects (the in-process path then words whatever is wrong)."""
    if not len(raw):
        return None
    start = _address(raw) - _address(mapped)
    end = start + len(raw)
    if (
        not (0 <= start < end <= len(mapped))
        or mapped[start] != ord("[")
        or mapped[end - 1] != ord("]")
    ):
        return None
    first = start + 1
    while first < end and mapped[first] in _JSON_SPACE:
        first += 1
    last = end - 1
    while last > first and mapped[last - 1] in _JSON_SPACE:
        last -= 1
    if mapped[first] != ord("{") or mapped[last - 1] != ord("}"):
        return None
    return first, last


def sample_ranges(
    buffer: mmap.mmap | bytes, start: int, end: int, task_bytes: int
) -> list[tuple[int, int]]:
    """Byte ranges of about ``task_bytes`` from ``start`` to ``end`` (the samples of one
    array, from ``samples_span``), cut at the candidate boundaries of ``_BETWEEN_SAMPLES``:
    each range is whole samples and the commas between, if every cut is a real boundary.

    The cuts are guesses that decoding validates: the first range starts at a sample, and a
    range that starts at a sample and decodes as ``[`` range ``]`` ends at one (a cut inside a
    string or a nested object leaves that decode truncated), so by induction, when every range
    decodes, every cut was a sample boundary."""
    ranges: list[tuple[int, int]] = []
    position = start
    while position < end:
        found = _BETWEEN_SAMPLES.search(buffer, min(position + max(task_bytes, 1), end), end)
        if found is None:
            ranges.append((position, end))
            break
        ranges.append((position, found.start() + 1))
        position = buffer.find(b"{", found.start() + 1)
    return ranges


def read_range(
    path: str, start: int, end: int, before: bytes = b"", after: bytes = b""
) -> bytearray:
    """``before``, bytes ``start:end`` of the file, then ``after``, read straight into one
    buffer (a worker reads its own range; nothing big is sent to it, and nothing is copied
    twice)."""
    size = end - start
    buffer = bytearray(len(before) + size + len(after))
    buffer[: len(before)] = before
    view = memoryview(buffer)[len(before) : len(before) + size]
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        while view:
            count = handle.readinto(view)
            if not count:
                break
            view = view[count:]
    view.release()
    buffer[len(before) + size :] = after
    return buffer


def decode_range(path: str, start: int, end: int) -> tuple[bytes | str, list[bytes]] | None:
    """Worker task: the samples in bytes ``start:end`` (whole samples and the commas between)
    as Arrow IPC columns and their distinct metadata texts; None when they do not decode."""
    data = read_range(path, start, end, b"[", b"]")
    try:
        with gc_paused():
            records = _BATCH_DECODER.decode(data)
    except (msgspec.ValidationError, msgspec.DecodeError, RecursionError):
        return None
    with gc_paused():
        frame, distinct = intern_columns(records)
        del records, data
    return parallel.encode_columns(frame), distinct


def _decode_in_workers(
    path: Path, ranges: list[tuple[int, int]], total: int, progress: ProgressFn | None
) -> SampleBatches:
    batches = SampleBatches()
    tasks = [(str(path), start, end) for start, end in ranges]
    for (_, end), result in zip(ranges, parallel.run_tasks(path, decode_range, tasks), strict=True):
        if result is None:
            raise WorkerDecodeFailed
        ipc, distinct = result
        batches.add_interned(parallel.decode_columns(ipc), distinct)
        if progress is not None:
            progress(end, total)
    return batches


def _parse_spans(
    path: Path, mapped: mmap.mmap, task_bytes: int | None, progress: ProgressFn | None
) -> ParsedDump | None:
    """Worker mode: one scan for the header and the samples array, then ranges of it decoded
    by the workers; None when the array is not one this can cut (empty, not a view)."""
    with gc_paused():
        document = _SPAN_DECODER.decode(mapped)
    span = samples_span(mapped, document.samples)
    if span is None:
        return None
    header = DeviceHeader(document.clockHz, document.tileCount)
    del document
    first, last = span
    if task_bytes is None:
        # Tasks small enough that every worker gets several: the load evens out, and the
        # workers' decoded objects together stay well under the file's size.
        task_bytes = min(TASK_BYTES, (last - first) // (4 * parallel.jobs()) + 1)
    ranges = sample_ranges(mapped, first, last, task_bytes)
    _release(mapped)
    try:
        batches = _decode_in_workers(path, ranges, last, progress)
    except WorkerDecodeFailed:
        return None
    return batches.finish(path, header, sample_place)


def _parse_mapped(
    path: Path, mapped: mmap.mmap, batch_rows: int, progress: ProgressFn | None
) -> ParsedDump:
    with gc_paused():
        document = _RAW_DECODER.decode(mapped)
    header = DeviceHeader(document.clockHz, document.tileCount)
    raws = document.samples
    del document
    total = len(raws)
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
    path: Path,
    *,
    batch_rows: int = DEFAULT_BATCH_ROWS,
    progress: ProgressFn | None = None,
    task_bytes: int | None = None,
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
            if parallel.use_workers(len(mapped)):
                parsed = _parse_spans(path, mapped, task_bytes, progress)
            if parsed is None:
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
