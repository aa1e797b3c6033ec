"""Which kind of input a file is, read once, and its runs: thin calls into the input registry.

Detection reads content, not names (``tileprof.inputs.detect``: JSON objects by their
top-level keys, CSV by its header line, anything else offered to the tile-dump formats).
``docs/runs.md`` lists the rules. ``read_input`` opens a file once: a tile dump is recognised
from its first bytes and left to the tile loader (it streams or maps large files); any other
file is read whole from the same handle, detected once, and its size and sha256 taken from
the bytes read, so that nothing reads it a second time.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import os
import re
import stat
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof.core.errors import InputError
from tileprof.core.text import opening_byte
from tileprof.inputs import KNOWN_KINDS, RUN_INPUTS, SUMMARY_INPUT, detect, is_tile_dump_head
from tileprof.inputs._common import (
    GZIP_MAGIC,
    check_encoding,
    decode_content,
    open_input,
    stream_content,
)
from tileprof.inputs._format import SNIFF_BYTES, SUMMARY_DOCUMENT, TILE_DUMP
from tileprof.inputs._sniff import NCU, NSYS, NSYS_SQLITE, ROCPROF, TRACE, is_summary_head

if TYPE_CHECKING:
    import polars as pl

    from tileprof.core.kineto import KinetoEvents
    from tileprof.core.run_schema import ParsedRuns
    from tileprof.inputs.gpu.kineto import PendingEvents

KERNEL_TIMELINE_KINDS: tuple[str, ...] = (TRACE, NSYS, NSYS_SQLITE, ROCPROF)
"""The kinds whose run rows are kernels timed as they ran (the findings' ``kernels`` rows)."""

__all__ = [
    "KERNEL_TIMELINE_KINDS",
    "NCU",
    "SUMMARY_DOCUMENT",
    "TILE_DUMP",
    "TRACE",
    "FileRead",
    "detect_file_kind",
    "detect_kind",
    "file_digest",
    "kineto_events_of",
    "load_runs",
    "parse_runs",
    "parse_summary_document",
    "read_input",
    "read_kineto_events",
]


@dataclass(frozen=True)
class FileRead:
    """One input file after its one read: its kind, its content when it was read whole (None
    for a tile dump, which its loader reads), and the size and sha256 of its bytes on disk
    (None when the read was not asked to digest them)."""

    path: Path
    kind: str
    data: bytes | None
    size: int | None = None
    sha256: str | None = None
    _decoding: list[PendingEvents] = field(default_factory=list, compare=False, repr=False)

    def kineto_events(self) -> KinetoEvents:
        """The events of a PyTorch (Kineto) trace, decoded on first use and then kept:
        ``report`` and ``findings`` read a trace's runs, op rows, timeline and critical path
        from the one decoding."""
        return self._decoded().events()

    def _decoded(self) -> PendingEvents:
        if not self._decoding:
            from tileprof.inputs.gpu.kineto import decode_events

            self._decoding.append(decode_events(self.path, self.data or b""))
        return self._decoding[0]

    @property
    def streamed(self) -> bool:
        """Whether this read of a PyTorch trace decoded it through the compiled decoder's
        window (``streamed_trace``) without holding its bytes."""
        return self.data is None and bool(self._decoding)

    def decoded(self) -> FileRead:
        """This read of a PyTorch trace with its bytes decoded (the decoder's errors raised
        now) and then let go: the event model is made from what was copied out of them
        (``kineto.decode_events``) when first asked for, and what reads the trace afterwards
        reads its event frame. So the file is not in memory while the text columns are cast
        and the analyses run (``runs`` of a 626 MB trace peaked in its op rows with the file
        still held)."""
        self._decoded()
        return dataclasses.replace(self, data=None)


def detect_kind(path: str | Path, data: bytes, reads: str = KNOWN_KINDS) -> str:
    """The kind of input ``data`` (read from ``path``) is: "tile dump", "summary document" or
    a run source's name; InputError if none (naming ``reads``, what the command reads)."""
    found = detect(path, data, reads)
    return found.kind if found.kind in (TILE_DUMP, SUMMARY_DOCUMENT) else found.name


def _head_of(raw: bytes) -> bytes:
    """The decompressed start of ``raw`` (the first bytes of a file), for detection."""
    if raw[:2] != GZIP_MAGIC:
        return raw
    try:
        return zlib.decompressobj(wbits=31).decompress(raw, SNIFF_BYTES)
    except zlib.error:
        return b""  # the whole read words the error


WHOLE_DUMP_BYTES = 50 * 2**20
"""Tile dumps up to this size on disk are read whole by ``read_input(whole_dumps=True)``, with
the one open that detected them; larger ones are left to the tile loader, which maps or
streams them (and may decode them in parallel: files under 50 MB always decode in one)."""


StreamReader = Callable[[Path], "FileRead | None"]
"""Reads a regular file through a bounded window instead of whole (``read_input``'s
``stream``): its read, or None to have it read whole."""


def read_input(
    path: str | Path,
    *,
    whole_dumps: bool = False,
    reads: str = KNOWN_KINDS,
    digest: bool = True,
    stream: StreamReader | None = None,
) -> FileRead:
    """The file at ``path``, opened once: a tile dump is recognised from its head and left to
    the tile loader (with ``whole_dumps``, one up to ``WHOLE_DUMP_BYTES`` is read whole too);
    a regular file of another kind is offered to ``stream`` first (a PyTorch trace, decoded
    through the compiled decoder's window: ``streamed_trace``), its digest taken in chunks;
    anything else is read whole, detected and (with ``digest``) digested from that one read:
    a command that shows no sha256 skips it (0.35 s on a 626 MB trace). A file of no kind
    tileprof knows is an InputError naming ``reads``, what the command reads."""
    source = Path(path)
    with open_input(source) as handle:
        try:
            raw = handle.read(SNIFF_BYTES)
            head = check_encoding(source, _head_of(raw))
            dump = head.strip() and is_tile_dump_head(head) and not is_summary_head(head)
            if dump and not (whole_dumps and _size(handle, raw) <= WHOLE_DUMP_BYTES):
                return FileRead(source, TILE_DUMP, None)
            if stream is not None and not dump and _regular(handle):
                streamed = _streamed(source, handle, raw, digest, stream)
                if streamed is not None:
                    return streamed
                handle.seek(len(raw))
            raw += handle.read()
        except OSError as exc:
            raise InputError(source, None, f"cannot read: {exc.strerror}") from None
    data = decode_content(source, raw)
    kind = TILE_DUMP if dump else detect_kind(source, data, reads)
    sha256 = hashlib.sha256(raw).hexdigest() if digest else None
    return FileRead(source, kind, data, len(raw), sha256)


def kind_of_keys(path: str | Path, keys: set[str], reads: str = KNOWN_KINDS) -> str | None:
    """``detect_kind`` of a JSON object document with these top-level keys (None where it would
    refuse the document)."""
    from tileprof.inputs import _by_json_keys

    try:
        found = _by_json_keys(path, keys, None if reads == KNOWN_KINDS else reads)
    except InputError:
        return None
    return found.kind if found.kind in (TILE_DUMP, SUMMARY_DOCUMENT) else found.name


def streamed_trace(path: Path, *, timeline: bool = False) -> FileRead | None:
    """The PyTorch trace in the regular file at ``path`` as ``read_input`` reads it, but decoded
    through the compiled decoder's bounded window, never held whole: its events pending
    (``FileRead.kineto_events``), no ``data``; with ``timeline``, only the rows a GPU timeline
    reads (``core.kineto.timeline_rows``). None when the decoder declines the file or its
    keys show another kind: the caller reads it whole, which words any error."""
    from tileprof.inputs.gpu.kineto import decode_file

    found = decode_file(path, timeline=timeline)
    if found is None:
        return None
    pending, keys = found
    if kind_of_keys(path, keys) != TRACE:
        return None
    return FileRead(path, TRACE, None, _decoding=[pending])


def _regular(handle: Any) -> bool:
    """Whether an open input is a regular file (not a pipe read into memory)."""
    try:
        return stat.S_ISREG(os.fstat(handle.fileno()).st_mode)
    except (AttributeError, OSError, ValueError):
        return False


def _streamed(
    source: Path, handle: Any, raw: bytes, digest: bool, stream: StreamReader
) -> FileRead | None:
    """``stream``'s read of the open regular file, with its size and (``digest``) its sha256,
    read in chunks from ``handle`` (its first bytes: ``raw``) without holding the file."""
    streamed = stream(source)
    if streamed is None:
        return None
    if not digest:
        return dataclasses.replace(streamed, size=os.fstat(handle.fileno()).st_size)
    hashed, size = hashlib.sha256(raw), len(raw)
    for chunk in iter(lambda: handle.read(1 << 20), b""):
        hashed.update(chunk)
        size += len(chunk)
    return dataclasses.replace(streamed, size=size, sha256=hashed.hexdigest())


def _size(handle: Any, raw: bytes) -> int:
    """The size on disk of an open input (an in-memory pipe's: its length)."""
    try:
        return os.fstat(handle.fileno()).st_size
    except (AttributeError, OSError, ValueError):
        return len(handle.getbuffer()) if hasattr(handle, "getbuffer") else len(raw)


def detect_file_kind(path: str | Path) -> tuple[str, bytes | None]:
    """The kind of the file at ``path``, and its content when reading it was needed."""
    found = read_input(path, digest=False)
    return found.kind, found.data


def file_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """Size and sha256 of a file, read in chunks (a tile dump, which its loader read)."""
    digest = hashlib.sha256()
    size = 0
    stream = stream_content(Path(path))  # a pipe was read once already; it cannot be re-read
    if stream is not None:
        return len(stream), hashlib.sha256(stream).hexdigest()
    with open_input(Path(path)) as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def load_runs(
    path: str | Path, *, tile_loader: Callable[[Path], ParsedRuns] | None = None, **_: Any
) -> ParsedRuns:
    """The runs of one file, whatever its kind; tile dumps go to ``tile_loader``."""
    found = read_input(path, digest=False)
    if found.kind == TILE_DUMP or found.data is None:
        if tile_loader is None:
            raise InputError(path, None, "tile dumps need the tile core (tileprof.load)")
        return tile_loader(Path(path))
    return parse_runs(path, found.kind, found.data)


def parse_runs(path: str | Path, kind: str, data: bytes) -> ParsedRuns:
    """The runs of a GPU run file of ``kind`` (as ``detect_kind`` named it)."""
    for source in RUN_INPUTS:
        if source.name == kind:
            return source.parse(path, data)
    raise InputError(path, None, f"{kind} files hold no GPU runs")


def parse_summary_document(path: str | Path, data: bytes) -> dict[str, Any]:
    """A ``summary --format json`` document, decoded."""
    return SUMMARY_INPUT.parse(path, data)


def kineto_events_of(path: str | Path, data: bytes) -> KinetoEvents:
    """The typed events of the Kineto trace ``data`` read from ``path``."""
    from tileprof.inputs.gpu.kineto import read_events

    return read_events(path, data)


def read_kineto_events(
    path: str | Path,
    *,
    need: str | None = None,
    found: FileRead | None = None,
    expected: str = "a PyTorch profiler (Kineto) trace",
) -> KinetoEvents:
    """The events of the PyTorch (Kineto) trace at ``path``, read once (or from ``found``).

    A file of another kind is an InputError: ``need`` words it ("--ops needs a PyTorch
    trace; this is a …"), else it names the kind, what was ``expected`` and, for a tile dump,
    where one goes."""
    found = found or read_input(path, digest=False, stream=streamed_trace)
    if found.kind == TRACE and (found.data is not None or found.streamed):
        return found.kineto_events()
    if need is not None:
        raise InputError(path, None, f"{need}; this is a {found.kind}")
    if found.data is not None and opening_byte(found.data) != b"{":
        kineto_events_of(path, found.data)  # not a JSON object: the decoder names the place
    hint = " (give the one tile DUMP first, then GPU traces)" if "tile" in found.kind else ""
    raise InputError(path, None, f"{found.kind}, not {expected}{hint}")


CALL_SOURCES: tuple[str, ...] = (TRACE, NSYS_SQLITE, ROCPROF)
"""The GPU kinds that hold one event per kernel call (``core.gpu_events``)."""


def runs_and_calls(
    path: str | Path, kind: str, data: bytes, read: KinetoEvents | None = None
) -> tuple[ParsedRuns, pl.DataFrame | None]:
    """The run table of a GPU source and, for a source that holds one event per call
    (``CALL_SOURCES``), one row per call: ``name`` (as the run table names the kernel) and
    ``value``, its duration in µs, in the event frame's order (None for a source of
    aggregates: nsys CSV, run tables). ``read``: the trace, decoded already."""
    import polars as pl

    if kind == TRACE:
        from tileprof.inputs.gpu.kineto import gpu_events_of, parse_events

        found = read if read is not None else kineto_events_of(path, data)
        runs, events = parse_events(found), gpu_events_of(found).events
    elif kind == NSYS_SQLITE:
        from tileprof.inputs.gpu.nsys_sqlite import gpu_events as export_events

        runs, events = parse_runs(path, kind, data), export_events(path, data)
    elif kind == ROCPROF:
        from tileprof.inputs.gpu.rocprof import gpu_events as dispatch_events

        runs, events = parse_runs(path, kind, data), dispatch_events(path, data)
    else:
        return parse_runs(path, kind, data), None
    duration = (pl.col("end_ns") - pl.col("start_ns")).cast(pl.Float64) / 1000.0
    return runs, events.select(pl.col("name").cast(pl.String), duration.alias("value"))


KINETO_VERSIONS = re.compile(
    rb'"(cuda_runtime_version|cuda_driver_version|hip_runtime_version|hip_driver_version)"'
    rb'\s*:\s*"?([0-9][0-9A-Za-z.]*)'
)
"""The top-level keys of a Kineto trace that state software versions."""
KINETO_FIELDS: dict[bytes, str] = {
    b"cuda_runtime_version": "cudaRuntime",
    b"cuda_driver_version": "cudaDriver",
    b"hip_runtime_version": "rocm",
    b"hip_driver_version": "driver",
}


VERSION_TAIL_BYTES = 1 << 16
"""How far back from a chunk's end ``trace_versions`` looks again with the next chunk: a
version key, its colon and its value are a few dozen bytes."""


def trace_versions(path: str | Path, chunk_bytes: int = 8 << 20) -> list[tuple[bytes, bytes]]:
    """``KINETO_VERSIONS.findall`` of the text of the trace file at ``path`` (gzip
    decompressed), read in chunks of ``chunk_bytes`` and never held whole. A match that reaches
    a chunk's end, and the last ``VERSION_TAIL_BYTES`` after the last match taken, are looked
    at again with the next chunk, so a version cut by a chunk's end is found whole, and found
    once (a key cut and followed by more whitespace than that look-back would be missed)."""
    found: list[tuple[bytes, bytes]] = []
    tail = b""
    try:
        with _trace_text(Path(path)) as handle:
            for chunk in iter(lambda: handle.read(chunk_bytes), b""):
                text = tail + chunk
                keep = _final_versions(text, found)
                tail = text[keep:]
    except (OSError, EOFError, zlib.error) as exc:
        raise InputError(path, None, f"cannot read: {exc}") from None
    found += KINETO_VERSIONS.findall(tail) if b"_version" in tail else []
    return found


def _final_versions(text: bytes, found: list[tuple[bytes, bytes]]) -> int:
    """Append to ``found`` the version matches in ``text`` that the rest of the file cannot
    change; return where the next scan starts (the part kept for it)."""
    keep = max(0, len(text) - VERSION_TAIL_BYTES)  # a key cut by the chunk's end is in it
    if b"_version" not in text:  # every match holds it; the common chunk is skipped at once
        return keep
    for match in KINETO_VERSIONS.finditer(text):
        if match.end() >= len(text):  # its value may go on in the next chunk
            return match.start()
        found.append((match[1], match[2]))
        keep = max(keep, match.end())
    return keep


@contextlib.contextmanager
def _trace_text(path: Path) -> Iterator[Any]:
    """The text of the trace file at ``path``, opened once for reading in chunks (gzip
    decompressed)."""
    import gzip

    with open_input(path) as raw:
        gzipped = raw.read(2) == GZIP_MAGIC
        raw.seek(0)
        if not gzipped:
            yield raw
            return
        with gzip.GzipFile(fileobj=raw, mode="rb") as text:
            yield text


def source_environment(path: str | Path, kind: str, data: bytes | None) -> dict[str, str]:
    """The software versions a GPU source states (``analyses.comparability``): a Kineto
    trace's CUDA or HIP runtime and driver (``data`` None: a trace read through the decoder's
    window, whose text is scanned from its file), an nsys export's driver and CUDA driver API;
    empty for the others."""
    if kind == TRACE:
        found: dict[str, str] = {}
        versions = KINETO_VERSIONS.findall(data) if data is not None else trace_versions(path)
        for key, value in versions:
            found.setdefault(KINETO_FIELDS[key], value.decode())
        return found
    if kind == NSYS_SQLITE:
        from tileprof.inputs.gpu.nsys_sqlite import export_environment

        assert data is not None  # only a PyTorch trace is read through the decoder's window
        return export_environment(path, data)
    return {}
