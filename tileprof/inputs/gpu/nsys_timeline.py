"""An Nsight Systems SQLite export as a GPU timeline (``core.gpu_events``).

The export's GPU events are ``nsys_sqlite.read_export``'s GPU event frame as it is (kernels,
communication kernels, memcpys and memsets per device and stream, with the CUDA runtime call
of the same correlation); exports carry no NCCL parameters, so the collective columns are
null. An NVTX range named ``ProfilerStep#N`` (the PyTorch profiler's step, pushed on the host)
is a CPU step: its window on each device comes from launch attribution
(``core.gpu_events.step_windows``).
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tileprof.core.gpu_events import GPU_EVENT_SCHEMA, STEP_SCHEMA, GpuTimeline, step_windows
from tileprof.inputs.gpu.kineto import STEP_NAME


def read_timeline(path: str | Path, data: bytes) -> GpuTimeline:
    """The GPU timeline of one nsys SQLite export."""
    from tileprof.inputs.gpu.nsys_sqlite import read_export

    export = read_export(path, data)
    steps = (
        export.nvtx.with_columns(
            step=pl.col("name").str.extract("^" + STEP_NAME.pattern, 1).cast(pl.Int64)
        )
        .filter(pl.col("step").is_not_null())
        .select(
            pl.lit(None, pl.Int64).alias("device"), "step", "start_ns", "end_ns",
            pl.lit("cpu_step").cast(STEP_SCHEMA["source"]).alias("source"),
        )
    )  # fmt: skip
    events = export.events.select(list(GPU_EVENT_SCHEMA))
    return GpuTimeline(Path(path).name, events, step_windows(events, steps), export.devices)
