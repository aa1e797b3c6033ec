"""An Nsight Systems SQLite export as the typed GPU timeline (``core.gpu_timeline``).

The export's GPU events come from ``nsys_sqlite.read_export`` (the shared GPU-event frame of
``core.gpu_events``: kernels, memcpys and memsets per device and stream, with the CUDA runtime
call of the same correlation). A kernel whose name holds ``nccl`` or ``rccl`` is communication,
as in Kineto traces; exports carry no NCCL parameters, so the collective columns are null. An
NVTX range named ``ProfilerStep#N`` (the PyTorch profiler's step, pushed on the host) is a CPU
step: its window on each device runs from the first start to the last end of the GPU events
whose launch call began inside it.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tileprof.core.gpu_timeline import EVENT_SCHEMA, GpuTimeline
from tileprof.inputs.gpu.kineto_timeline import COMM_NAME, STEP_NAME, launched_windows


def read_timeline(path: str | Path, data: bytes) -> GpuTimeline:
    """The GPU timeline of one nsys SQLite export."""
    from tileprof.inputs.gpu.nsys_sqlite import read_export

    export = read_export(path, data)
    e = export.events
    comm = (pl.col("kind") == "kernel") & pl.col("name").str.contains(COMM_NAME.pattern)
    events = e.select(
        "device",
        "stream",
        pl.when(comm).then(pl.lit("comm")).otherwise(pl.col("kind").cast(pl.String)).alias("kind"),
        pl.col("start_us").alias("start"),
        pl.col("end_us").alias("end"),
        "name",
        "correlation",
        pl.lit(None, pl.String).alias("launch_name"),
        pl.col("launch_start_us").alias("launch_start"),
        (pl.col("launch_end_us") - pl.col("launch_start_us")).alias("launch_dur"),
    ).select(
        [
            pl.col(c).cast(t) if c in e.columns or c in ("kind", "start", "end", "launch_name",
                                                         "launch_start", "launch_dur")
            else pl.lit(None, t).alias(c)
            for c, t in EVENT_SCHEMA.items()
        ]
    )  # fmt: skip
    steps = [
        (None, int(found.group(1)), r["start_us"], r["end_us"], "cpu_step")
        for r in export.nvtx.iter_rows(named=True)
        if (found := STEP_NAME.match(r["name"] or ""))
    ]
    return GpuTimeline(Path(path).name, events, launched_windows(events, steps), export.devices)
