"""The typed GPU timeline every GPU trace reader produces for ``tileprof breakdown``.

One frame of GPU events (kernels, memcpys, memsets, communication kernels) with the CUDA/HIP
runtime call that launched each, one frame of the GPU-side step windows (``ProfilerStep#N``),
and the rank the trace belongs to. A reader of another format (nsys SQLite) fills the same
columns, so the analyses (``analyses/gpu_breakdown``, ``analyses/collectives``) read one shape.
Times are microseconds on the trace's own clock. Definitions: docs/metrics.md, "Time
breakdown".
"""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

EVENT_KINDS: tuple[str, ...] = ("kernel", "comm", "memcpy", "memset")
"""What a GPU event is: a compute kernel, a communication (NCCL/RCCL) kernel, a copy or a
fill. TraceLens counts memsets with computation; docs/metrics.md says so."""

EVENT_SCHEMA: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "stream": pl.Int64(),
    "kind": pl.Enum(list(EVENT_KINDS)),
    "start": pl.Float64(),
    "end": pl.Float64(),
    "name": pl.String(),
    "correlation": pl.Int64(),
    "launch_name": pl.String(),
    "launch_start": pl.Float64(),
    "launch_dur": pl.Float64(),
    "collective": pl.String(),
    "process_group": pl.String(),
    "seq": pl.Int64(),
    "in_nelems": pl.Int64(),
    "out_nelems": pl.Int64(),
    "group_size": pl.Int64(),
    "dtype": pl.String(),
}
"""One row per GPU event. ``launch_*`` is the runtime call with the same correlation (null when
the trace holds none); the collective columns are filled for communication kernels whose
trace records NCCL's parameters (``record_param_comms`` or the kernel's own args)."""

STEP_SOURCES: tuple[str, ...] = ("gpu_annotation", "cpu_step")
"""Where a step window comes from: the GPU-side ``ProfilerStep#N`` annotation, or (for a step
that has none) the GPU events launched during the CPU-side ``ProfilerStep#N``."""

STEP_SCHEMA: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "step": pl.Int64(),
    "start": pl.Float64(),
    "end": pl.Float64(),
    "source": pl.Enum(list(STEP_SOURCES)),
}
"""One row per step and device: the step's window on that device."""


@dataclass(frozen=True)
class RankInfo:
    """The ``distributedInfo`` of a trace: which rank of which job wrote it."""

    rank: int
    world_size: int
    backend: str | None = None


@dataclass(frozen=True)
class GpuTimeline:
    """One trace's GPU events, step windows and rank, as every reader gives them."""

    name: str
    events: pl.DataFrame
    steps: pl.DataFrame
    devices: dict[int, str] = field(default_factory=dict)
    rank: RankInfo | None = None


def empty_events() -> pl.DataFrame:
    """An event frame with no rows."""
    return pl.DataFrame(schema=EVENT_SCHEMA)


def empty_steps() -> pl.DataFrame:
    """A step frame with no rows."""
    return pl.DataFrame(schema=STEP_SCHEMA)
