"""Reading GPU traces for ``tileprof breakdown`` (and the report's breakdown section).

Each file becomes a typed GPU timeline (``tileprof.inputs.timelines``); the breakdown and the
ranks' collectives are computed from those timelines by the analyses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tileprof.analyses.collectives import Job, jobs
from tileprof.analyses.gpu_breakdown import KERNEL_WAIT_US, Breakdown, breakdown
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GpuTimeline
from tileprof.inputs.timelines import load_timeline


@dataclass(frozen=True)
class TraceBreakdown:
    """The breakdown of some traces and the jobs their ranks form."""

    timelines: tuple[GpuTimeline, ...]
    breakdown: Breakdown
    job: Job


def read_timelines(paths: Sequence[Path]) -> tuple[GpuTimeline, ...]:
    """Every trace's timeline; a trace with no GPU event is an input error (nothing to break
    down). Traces are named by file name, or by the path as given when two share a name."""
    timelines = []
    for path in paths:
        timeline = load_timeline(path)
        if timeline.events.height == 0:
            raise InputError(path, "$.traceEvents", "no GPU events (a CPU-only trace)")
        timelines.append(timeline)
    names = [t.name for t in timelines]
    if len(set(names)) < len(names):  # rank0/trace.json, rank1/trace.json: name them in full
        timelines = [
            dataclasses.replace(t, name=str(p)) for t, p in zip(timelines, paths, strict=True)
        ]
    return tuple(timelines)


def trace_breakdown(
    paths: Sequence[Path], kernel_wait_us: float = KERNEL_WAIT_US
) -> TraceBreakdown:
    """The breakdown of the traces at ``paths``, with the collectives of their ranks."""
    timelines = read_timelines(paths)
    return TraceBreakdown(timelines, breakdown(timelines, kernel_wait_us), jobs(timelines))


def report_breakdown(
    timelines: Sequence[GpuTimeline], kernel_wait_us: float = KERNEL_WAIT_US
) -> TraceBreakdown | None:
    """The breakdown of the report's traces that hold GPU events (a CPU-only trace is noted in
    the report's GPU section already); None when none does."""
    kept = tuple(t for t in timelines if t.events.height)
    if not kept:
        return None
    return TraceBreakdown(kept, breakdown(kept, kernel_wait_us), jobs(kept))


def read_breakdown(path: Path) -> Breakdown:
    """The breakdown of one side of ``diff --breakdown``: a trace's, or a document that
    ``breakdown --format json`` wrote (its ``breakdown``, ``launches`` and ``streams``)."""
    from tileprof.inputs import peek

    head, _, _ = peek(path)
    if head.lstrip()[:1] == b"{" and b'"breakdown"' in head and b'"launches"' in head:
        return _document_breakdown(path)
    return trace_breakdown([path]).breakdown


def _document_breakdown(path: Path) -> Breakdown:
    import json

    from tileprof.analyses.gpu_breakdown import LAUNCH_SCHEMA, ROW_SCHEMA, STREAM_SCHEMA
    from tileprof.inputs import read_bytes

    data = read_bytes(path)  # gunzipped within the bomb limit (docs/reliability.md)
    try:
        document = json.loads(data)
        frames = [
            pl.DataFrame(document[key], schema=schema, strict=False)
            for key, schema in (("breakdown", ROW_SCHEMA), ("launches", LAUNCH_SCHEMA),
                                ("streams", STREAM_SCHEMA))
        ]  # fmt: skip
        wait = float(document.get("options", {}).get("kernel_wait_us", KERNEL_WAIT_US))
    except (
        ValueError,
        KeyError,
        TypeError,
        AttributeError,
        OSError,
        pl.exceptions.PolarsError,
    ) as exc:
        raise InputError(path, None, f"not a breakdown document ({exc})") from None
    return Breakdown(frames[0], frames[1], frames[2], kernel_wait_us=wait)
