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
from typing import Any

import msgspec
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
from tileprof.core.kineto import Int64
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


def _is_document(path: Path) -> bool:
    """Whether ``path`` holds a document ``breakdown --format json`` wrote (not a trace)."""
    from tileprof.inputs import peek

    head, _, _ = peek(path)
    return head.lstrip()[:1] == b"{" and b'"breakdown"' in head and b'"launches"' in head


def compared_breakdowns(before: Path, after: Path) -> tuple[Breakdown, Breakdown]:
    """The two sides of ``diff --breakdown``, each a trace's breakdown or a document that
    ``breakdown --format json`` wrote, split at one kernel-wait threshold: a trace is broken
    down at the threshold of the document on the other side (the default when both are
    traces). Two documents made at different thresholds are refused: their idle causes
    (``idle_kernel_wait_us``, ``idle_other_us``) would differ by the threshold, not the run."""
    documents = {path: _document_breakdown(path) for path in (before, after) if _is_document(path)}
    waits = {found.kernel_wait_us for found in documents.values()}
    if len(waits) > 1:
        raise InputError(
            after,
            "options.kernel_wait_us",
            f"made at a kernel-wait threshold of {documents[after].kernel_wait_us:g} µs, "
            f"{before} at {documents[before].kernel_wait_us:g} µs: their idle causes do not "
            "compare (write both with one --kernel-wait-us)",
        )
    wait = next(iter(waits), KERNEL_WAIT_US)

    def side(path: Path) -> Breakdown:
        return documents[path] if path in documents else trace_breakdown([path], wait).breakdown

    return side(before), side(after)


def _rows_type(name: str, schema: dict[str, pl.DataType]) -> Any:
    """The rows of one of a breakdown document's tables, typed as its frame's ``schema``:
    every field may be null or left out (the frame holds null then), an integer column takes
    only integers that fit it (not 2.5, not true, not 2^70) and a text column only text."""
    python = {pl.String(): str, pl.Int64(): Int64, pl.Float64(): float}
    fields = [(k, python[v] | None, None) for k, v in schema.items()]
    return list[msgspec.defstruct(name, fields)]  # type: ignore[misc]


@functools.cache
def _document_type() -> type[msgspec.Struct]:
    """A ``breakdown --format json`` document as ``_document_breakdown`` reads it."""
    from tileprof.analyses.gpu_breakdown import LAUNCH_SCHEMA, ROW_SCHEMA, STREAM_SCHEMA

    options = msgspec.defstruct("Options", [("kernel_wait_us", float, KERNEL_WAIT_US)])
    return msgspec.defstruct(
        "BreakdownDocument",
        [
            ("breakdown", _rows_type("Row", ROW_SCHEMA)),
            ("launches", _rows_type("Launch", LAUNCH_SCHEMA)),
            ("streams", _rows_type("Stream", STREAM_SCHEMA)),
            ("options", options, msgspec.field(default_factory=options)),
        ],
    )


def _document_breakdown(path: Path) -> Breakdown:
    """The breakdown a document of ``breakdown --format json`` holds, each value checked
    against its column's type: a wrong one is named by its JSON path, not cast (polars would
    read a rank of 2.5 as 2)."""
    from tileprof.analyses.gpu_breakdown import LAUNCH_SCHEMA, ROW_SCHEMA, STREAM_SCHEMA
    from tileprof.inputs import decode_typed_json, read_bytes

    data = read_bytes(path)  # gunzipped within the bomb limit (docs/reliability.md)
    try:
        document: Any = decode_typed_json(path, data, _document_type())
    except InputError as error:
        raise InputError(path, error.where, f"not a breakdown document ({error.message})") from None
    rows, launches, streams = (
        pl.DataFrame({k: [getattr(row, k) for row in found] for k in schema}, schema=schema)
        for found, schema in (
            (document.breakdown, ROW_SCHEMA),
            (document.launches, LAUNCH_SCHEMA),
            (document.streams, STREAM_SCHEMA),
        )
    )
    return Breakdown(rows, launches, streams, kernel_wait_us=document.options.kernel_wait_us)
