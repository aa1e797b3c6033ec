"""A GPU file's rows of the run table (shared by ``gather``, which reads every input, and
``gpu_critical``, which reads a trace's rooflines for ``roofline:GLOB``)."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tileprof.core.kineto import KinetoEvents
from tileprof.core.run_schema import ParsedRuns, concat_runs
from tileprof.inputs.sources import parse_runs


def gpu_runs(path: Path, kind: str, data: bytes) -> ParsedRuns:
    """A GPU file's runs; a PyTorch trace's op rows that carry work follow its kernel rows
    (``tileprof.analyses.ops.op_runs``), so that they can be linked."""
    from tileprof.inputs.gpu.kineto import KIND

    if kind != KIND:
        return parse_runs(path, kind, data)
    from tileprof.inputs.gpu.kineto import read_events

    return trace_runs(read_events(path, data))


def trace_runs(events: KinetoEvents) -> ParsedRuns:
    """A PyTorch trace's runs from its decoded events: the kernel rows, then the op rows
    that carry work."""
    return trace_runs_and_op_rows(events)[0]


def trace_runs_and_op_rows(events: KinetoEvents) -> tuple[ParsedRuns, pl.DataFrame | None]:
    """``trace_runs``, and the op rows they were made from (``analyses.ops.op_rows``; None for
    a CPU-only trace, whose runs need none), so that a caller that shows the op rows as well
    does not make them twice."""
    from tileprof.analyses.ops import op_rows, op_runs, work_notes
    from tileprof.inputs.gpu.kineto import parse_events

    parsed = parse_events(events)
    if parsed.frame.height == 0:
        return parsed, None
    rows = op_rows(events).frame
    ops = op_runs(rows)
    if ops.height == 0:
        return parsed, rows
    frame = concat_runs([parsed.frame, ops])
    notes = [*parsed.notes, *work_notes(rows, events.name)]
    metadata = parsed.metadata | {"op_rows": ops.height}
    return ParsedRuns(parsed.kind, frame, notes, metadata), rows
