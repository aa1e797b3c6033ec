"""A PyTorch profiler (Kineto) trace as a GPU timeline (``core.gpu_events``).

Read from the one Kineto event model (``kineto.read_events``) that every command reads: every
GPU event (``ph: "X"`` of category ``kernel``, ``gpu_memcpy`` or ``gpu_memset``) with its
launching runtime call (the ``cuda_runtime`` or ``cuda_driver`` event of the same
``correlation``: ``cudaLaunchKernel``, ``hipLaunchKernel``, ``cudaMemcpyAsync``, ...), the
``ProfilerStep#N`` annotations (GPU-side ``gpu_user_annotation`` on the device their ``pid``
names, CPU-side ``user_annotation``) and ``distributedInfo``. Step windows:
``core.gpu_events.step_windows``.

The event frame and the NCCL parameters of communication kernels: ``kineto_frame``.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tileprof.core.gpu_events import (
    COMM_NAME,
    STEP_SCHEMA,
    GpuTimeline,
    RankInfo,
    ns_of_us,
    step_windows,
)
from tileprof.core.kineto import KinetoEvents
from tileprof.inputs.gpu.kineto import STEP_NAME, read_events, step_rows
from tileprof.inputs.gpu.kineto_frame import event_frame

__all__ = ["COMM_NAME", "STEP_NAME", "event_frame", "read_timeline", "timeline_of"]


def read_timeline(path: str | Path, data: bytes) -> GpuTimeline:
    """The GPU timeline of one Kineto trace (``data`` read from ``path``)."""
    return timeline_of(read_events(path, data))


def timeline_of(found: KinetoEvents) -> GpuTimeline:
    """The GPU timeline of an already-read trace."""
    events = event_frame(found).drop("index")
    steps = pl.DataFrame(step_rows(found.frame), schema=_STEP_ROW, orient="row").select(
        "device", "step", ns_of_us(pl.col("start")).alias("start_ns"),
        ns_of_us(pl.col("end")).alias("end_ns"), "source",
    )  # fmt: skip
    rank = None if found.rank is None else RankInfo(*found.rank)
    return GpuTimeline(found.name, events, step_windows(events, steps), found.devices, rank)


_STEP_ROW: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "step": pl.Int64(),
    "start": pl.Float64(),
    "end": pl.Float64(),
    "source": STEP_SCHEMA["source"],
}
