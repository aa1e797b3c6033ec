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
from tileprof.core.kineto import KinetoEvents, as_text, placeable, runtime_calls
from tileprof.inputs.gpu.kineto import step_rows

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
    """Every CPU op and runtime call of an already-read trace, in file order, from the Kineto
    event frame's columns: a CPU op's missing ``name``, ``ts`` or ``dur`` as ``""``, 0 and 0;
    a CPU op or runtime call without a place on the ns clock left out, as a runtime call or
    step annotation is everywhere (``core.kineto.runtime_calls``)."""
    frame = found.frame
    # lazy: only these columns of the kept rows are copied, not every column of the frame
    ops = (
        frame.lazy()
        .filter(pl.col("cat") == "cpu_op")
        .select(
            "index",
            pl.lit("op").alias("cat"),
            as_text("name").fill_null(""),
            as_text("thread"),
            pl.col("ts").fill_null(0.0),
            pl.col("dur").fill_null(0.0),
            pl.lit(None, pl.Int64()).alias("correlation"),
        )
        .filter(placeable(pl.col("ts")) & placeable(pl.col("ts") + pl.col("dur")))
    )
    calls = runtime_calls(frame).select(
        "index",
        pl.lit("runtime").alias("cat"),
        "name",
        as_text("thread"),
        "ts",
        "dur",
        "correlation",
    )
    start = ns_of_us(pl.col("ts"))
    return (
        pl.concat([ops, calls])
        .sort("index")
        .select(
            "index",
            "cat",
            "name",
            "thread",
            start.alias("start_ns"),
            (start + ns_of_us(pl.col("dur"))).alias("end_ns"),
            "correlation",
        )
        .cast(dict(HOST_SCHEMA.items()))
        .collect()
    )


def cpu_step_windows(found: KinetoEvents) -> list[tuple[int, int, int]]:
    """The CPU-side ``ProfilerStep#N`` annotations (``kineto.step_rows``) as the windows whose
    host and GPU events ``critical``'s dependency graph takes: (N, start ns, end ns), the µs
    times rounded to whole ns."""
    return [
        (step, round(lo * 1000), round(hi * 1000))
        for _, step, lo, hi, source in step_rows(found.frame)
        if source == "cpu_step"
    ]
