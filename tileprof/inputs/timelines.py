"""GPU traces as typed timelines (``core.gpu_events``) for ``tileprof breakdown``.

A file is detected as the registry detects every input (``tileprof.inputs.detect``); a PyTorch
profiler trace is read by ``gpu.kineto_timeline``, an nsys SQLite export by
``gpu.nsys_timeline``, a Tenstorrent ops report by ``tile.tenstorrent`` (op calls and the
op-to-op gaps between them). Any other kind of file is refused with a
one-line error naming what it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GpuTimeline
from tileprof.inputs import _sniff, detect
from tileprof.inputs._common import read_bytes

if TYPE_CHECKING:
    from tileprof.inputs.sources import FileRead

TIMELINE_FORMATS: tuple[str, ...] = (_sniff.TRACE, _sniff.NSYS_SQLITE, _sniff.TENSTORRENT)
"""The formats that hold a GPU timeline."""
TIMELINE_KINDS = "a PyTorch profiler trace or an nsys SQLite export (what `breakdown` reads)"
"""What ``breakdown`` reads, as an unrecognised file's error names it."""


def load_timeline(path: str | Path) -> GpuTimeline:
    """The GPU timeline of the trace at ``path``; InputError when it holds none. A PyTorch
    trace's bytes are let go once it is decoded, and only the rows a timeline reads are kept
    (``core.kineto.timeline_rows``): the timeline is made from that event frame alone (a
    626 MB trace's peak memory was the file on top of the frames made from it)."""
    from tileprof.inputs.gpu.kineto_timeline import timeline_of

    streamed = _streamed_trace(path)
    if streamed is not None:
        return timeline_of(streamed.kineto_events())
    data = read_bytes(Path(path))
    kind = detect(path, data, TIMELINE_KINDS).name
    if kind != _sniff.TRACE:
        return parse_timeline(path, kind, data)
    from tileprof.inputs.gpu.kineto import decode_events

    pending = decode_events(path, data, timeline=True)
    del data
    return timeline_of(pending.events())


def _streamed_trace(path: str | Path) -> FileRead | None:
    """The PyTorch trace in the regular file at ``path`` decoded through the compiled decoder's
    bounded window (``sources.streamed_trace``): peak memory is the decoder's columns, not the
    file as well (626 MB of text on the issue 33 trace). None when the file is not a regular
    one (a pipe is read whole), the decoder declines it, or its top-level keys show another
    kind: the caller then reads it whole, as before, which words any error."""
    if path == "-" or not Path(path).is_file():
        return None
    from tileprof.inputs.sources import streamed_trace

    return streamed_trace(Path(path), timeline=True)


def parse_timeline(path: str | Path, kind: str, data: bytes) -> GpuTimeline:
    """The GPU timeline of ``data`` (read from ``path``, detected as ``kind``)."""
    if kind == _sniff.TRACE:
        from tileprof.inputs.gpu.kineto_timeline import read_timeline

        return read_timeline(path, data)
    if kind == _sniff.NSYS_SQLITE:
        from tileprof.inputs.gpu.nsys_timeline import read_timeline as read_export_timeline

        return read_export_timeline(path, data)
    if kind == _sniff.TENSTORRENT:
        from tileprof.inputs.tile.tenstorrent import read_timeline as read_report_timeline

        return read_report_timeline(path, data)
    raise InputError(
        path,
        None,
        f"a {kind} holds no GPU timeline; `breakdown` reads PyTorch profiler traces, "
        "nsys SQLite exports and Tenstorrent ops reports",
    )
