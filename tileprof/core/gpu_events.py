"""The typed GPU-event frame: one row per kernel, memcpy or memset on a GPU timeline.

Every timeline source (Nsight Systems SQLite exports here; Kineto traces through the
time-breakdown analysis) hands analyses the same columns, so an interval analysis reads one
frame whatever tool wrote the events. Times are µs on the source's own clock; ``launch_*`` is
the host call that launched the event (the CUDA runtime call with the same correlation id),
null when the source has none.
"""

from __future__ import annotations

import polars as pl

GPU_EVENT_KINDS: tuple[str, ...] = ("kernel", "memcpy", "memset")

GPU_EVENT_SCHEMA: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "stream": pl.Int64(),
    "kind": pl.Enum(list(GPU_EVENT_KINDS)),
    "start_us": pl.Float64(),
    "end_us": pl.Float64(),
    "name": pl.String(),
    "correlation": pl.Int64(),
    "launch_start_us": pl.Float64(),
    "launch_end_us": pl.Float64(),
    "bytes": pl.Int64(),
}
"""Column names and types of the GPU-event frame (``bytes`` is null for kernels)."""


def empty_gpu_events() -> pl.DataFrame:
    """A GPU-event frame with no rows."""
    return pl.DataFrame(schema=GPU_EVENT_SCHEMA)
