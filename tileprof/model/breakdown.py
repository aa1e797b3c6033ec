"""Reading GPU traces for ``tileprof breakdown`` (and the report's breakdown section).

Each file becomes a typed GPU timeline (``tileprof.inputs.timelines``); the breakdown and the
ranks' collectives are computed from those timelines by the analyses.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tileprof.analyses.collectives import Job, RankPart, jobs, jobs_of, rank_part
from tileprof.analyses.gpu_breakdown import (
    KERNEL_WAIT_US,
    Breakdown,
    breakdown,
    concat_breakdowns,
)
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GpuTimeline
from tileprof.inputs.timelines import load_timeline
from tileprof.model.engines import Engine, map_ordered
from tileprof.model.naming import display_names


@dataclass(frozen=True)
class TraceBreakdown:
    """The breakdown of some traces and the jobs their ranks form."""

    breakdown: Breakdown
    job: Job


@dataclass(frozen=True)
class _TracePart:
    """One trace's share of the answer, computed where the trace was read: its breakdown rows
    and its rank's part of the jobs (``model.engines``: a dask worker returns only this)."""

    breakdown: Breakdown
    rank: RankPart | None


def named_timeline(path: Path, name: str) -> GpuTimeline:
    """The timeline of the trace at ``path``, named ``name``; a trace with no GPU event is an
    input error (nothing to break down)."""
    timeline = load_timeline(path)
    if timeline.events.height == 0:
        raise InputError(path, "$.traceEvents", "no GPU events (a CPU-only trace)")
    return dataclasses.replace(timeline, name=name)


def _trace_part(named: tuple[Path, str], kernel_wait_us: float) -> _TracePart:
    timeline = named_timeline(*named)
    return _TracePart(breakdown([timeline], kernel_wait_us), rank_part(timeline))


def trace_breakdown(
    paths: Sequence[Path], kernel_wait_us: float = KERNEL_WAIT_US, engine: Engine | None = None
) -> TraceBreakdown:
    """The breakdown of the traces at ``paths``, with the collectives of their ranks: each
    trace read and broken down by ``engine`` (threads by default), then put together."""
    named = list(zip(paths, display_names(paths), strict=True))
    parts = map_ordered(
        functools.partial(_trace_part, kernel_wait_us=kernel_wait_us), named, engine
    )
    return TraceBreakdown(
        concat_breakdowns([p.breakdown for p in parts], kernel_wait_us),
        jobs_of([p.rank for p in parts]),
    )


def report_breakdown(
    timelines: Sequence[GpuTimeline], kernel_wait_us: float = KERNEL_WAIT_US
) -> TraceBreakdown | None:
    """The breakdown of the report's traces that hold GPU events (a CPU-only trace is noted in
    the report's GPU section already); None when none does."""
    kept = tuple(t for t in timelines if t.events.height)
    if not kept:
        return None
    return TraceBreakdown(breakdown(kept, kernel_wait_us), jobs(kept))


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
