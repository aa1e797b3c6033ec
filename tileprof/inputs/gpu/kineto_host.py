"""The host side of a PyTorch profiler (Kineto) trace: every CPU op and runtime call on its
thread, the events the dependency graph of ``critical`` nests and links to the GPU events
(docs/metrics.md, "GPU critical path").

One row per ``cpu_op`` and per ``cuda_runtime``/``cuda_driver`` call, with integer-ns times on
the trace's clock (``core.gpu_events.ns_of_us``), the ``pid/tid`` thread, and the correlation
id that links a runtime call to the GPU events it launched or waited for.
"""

from __future__ import annotations

import polars as pl

from tileprof.core.gpu_events import ns_of_us
from tileprof.core.kineto import KinetoEvents

HOST_SCHEMA: dict[str, pl.DataType] = {
    "index": pl.Int64(),
    "cat": pl.String(),
    "name": pl.String(),
    "thread": pl.String(),
    "start_ns": pl.Int64(),
    "end_ns": pl.Int64(),
    "correlation": pl.Int64(),
}
"""The host frame's columns: ``cat`` is ``op`` or ``runtime``."""


def host_frame(found: KinetoEvents) -> pl.DataFrame:
    """Every CPU op and runtime call of an already-read trace, in file order."""
    ops = pl.DataFrame(
        {
            "index": [op.index for op in found.cpu_ops],
            "name": [op.name for op in found.cpu_ops],
            "thread": [op.thread for op in found.cpu_ops],
            "ts": [op.ts for op in found.cpu_ops],
            "dur": [op.dur for op in found.cpu_ops],
        },
        schema={"index": pl.Int64, "name": pl.String, "thread": pl.String,
                "ts": pl.Float64, "dur": pl.Float64},
    ).with_columns(cat=pl.lit("op"), correlation=pl.lit(None, pl.Int64))  # fmt: skip
    calls = pl.DataFrame(
        found.runtime,
        schema={"index": pl.Int64, "name": pl.String, "thread": pl.String,
                "ts": pl.Float64, "dur": pl.Float64, "correlation": pl.Int64},
        orient="row",
    ).with_columns(cat=pl.lit("runtime"))  # fmt: skip
    both = pl.concat([ops, calls], how="diagonal_relaxed").sort("index")
    start = ns_of_us(pl.col("ts"))
    return both.select(
        "index",
        "cat",
        "name",
        "thread",
        start.alias("start_ns"),
        (start + ns_of_us(pl.col("dur"))).alias("end_ns"),
        "correlation",
    ).cast(dict(HOST_SCHEMA.items()))
