"""Two GPU time breakdowns compared (``tileprof diff --breakdown``): figure by figure, per device
and window (docs/metrics.md, "Time breakdown: comparing two").

Rows are paired by rank, trace position (a side of several traces: its first trace of that rank,
its second, ...), device position (the trace's first device, its second, ..., then the
all-devices row) and window position (the whole trace, then the steps in order), so that GPU 0
of one machine meets GPU 2 of another and ``ProfilerStep#6`` of one run meets
``ProfilerStep#10`` of another run of the same program. Each figure gives before, after, their
difference and the relative change (``analyses.diff.relative``: (after − before) / |before|).
"""

from __future__ import annotations

import polars as pl

from tileprof.analyses.diff import relative
from tileprof.analyses.gpu_breakdown import IDLE_COLUMNS, LAUNCH_COLUMNS, TIME_COLUMNS, Breakdown

COMPARED: tuple[str, ...] = (*TIME_COLUMNS, *IDLE_COLUMNS, *LAUNCH_COLUMNS)
"""The figures compared, in the order shown."""
_KEYS = ("trace", "rank", "device", "device_name", "step")
_PAIR = ("rank", "trace_at", "gpu", "window")

DIFF_SCHEMA: dict[str, pl.DataType] = {
    "rank": pl.Int64(),
    "trace_at": pl.Int64(),
    "trace_before": pl.String(),
    "trace_after": pl.String(),
    "gpu": pl.Int64(),
    "window": pl.Int64(),
    "device_before": pl.String(),
    "device_after": pl.String(),
    "step_before": pl.Int64(),
    "step_after": pl.Int64(),
    "figure": pl.String(),
    "before": pl.Float64(),
    "after": pl.Float64(),
    "delta": pl.Float64(),
    "change": pl.Float64(),
    "kernels_before": pl.Int64(),
    "kernels_after": pl.Int64(),
    "per_kernel_change": pl.Float64(),
}

PER_KERNEL: frozenset[str] = frozenset((*TIME_COLUMNS, *IDLE_COLUMNS))
"""The figures that also compare per kernel: times, which more or fewer kernels change."""


def _wide(result: Breakdown) -> pl.DataFrame:
    """One row per (rank, trace position, device position, window position) with every
    compared figure. A side of several traces (a ``breakdown --format json`` document) pairs
    its k-th trace of a rank with the other side's k-th: two traces with no rank would
    otherwise meet every trace of the other side."""
    rows = result.rows.join(result.launches, on=list(_KEYS), how="left", nulls_equal=True)
    traces = rows.select("trace", "rank").unique(maintain_order=True)
    at = pl.int_range(pl.len()).over("rank", mapping_strategy="group_to_rows").cast(pl.Int64)
    traces = traces.with_columns(at.alias("trace_at"))
    rows = rows.join(traces, on=["trace", "rank"], how="left", nulls_equal=True)
    window = pl.int_range(pl.len()).over("trace", "rank", "device").cast(pl.Int64)
    every = pl.col("device_name").is_null()  # the all-devices row
    position = pl.col("device").fill_null(-1).rank("dense").over("trace", "rank", every)
    gpu = pl.when(every).then(None).otherwise(position.cast(pl.Int64) - 1)
    label = (
        pl.when(pl.col("device").is_null())
        .then(pl.lit("all"))
        .otherwise(pl.format("{} {}", pl.col("device"), pl.col("device_name")))
    )
    return rows.with_columns(window.alias("window"), gpu.alias("gpu"), label.alias("label")).select(
        *_PAIR, "trace", "label", "step", *[pl.col(c).cast(pl.Float64) for c in COMPARED]
    )


def compare_breakdowns(before: Breakdown, after: Breakdown) -> pl.DataFrame:
    """One row per paired window and figure; a window on one side only has null on the other.

    Each row also holds its window's kernels on both sides and, for a time figure, the
    relative change per kernel (figure / kernels): when the two captures hold different
    numbers of kernels, that and not the change of the time is the change in speed."""
    joined = _wide(before).join(
        _wide(after), on=list(_PAIR), how="full", suffix="_after", coalesce=True, nulls_equal=True
    )
    parts = []
    kernels_b, kernels_a = pl.col("kernels").cast(pl.Int64), pl.col("kernels_after").cast(pl.Int64)
    counted = (kernels_b > 0) & (kernels_a > 0)
    for figure in COMPARED:
        old, new = pl.col(figure), pl.col(f"{figure}_after")
        per_kernel = (
            relative(old / kernels_b, new / kernels_a)
            if figure in PER_KERNEL
            else pl.lit(None, pl.Float64)
        )
        parts.append(
            joined.select(
                *_PAIR,
                pl.col("trace").alias("trace_before"),
                pl.col("trace_after"),
                pl.col("label").alias("device_before"),
                pl.col("label_after").alias("device_after"),
                pl.col("step").alias("step_before"),
                pl.col("step_after"),
                pl.lit(figure).alias("figure"),
                old.alias("before"),
                new.alias("after"),
                (new - old).alias("delta"),
                relative(old, new).alias("change"),
                kernels_b.alias("kernels_before"),
                kernels_a.alias("kernels_after"),
                pl.when(counted).then(per_kernel).alias("per_kernel_change"),
            )
        )
    frame = pl.concat(parts) if parts else pl.DataFrame(schema=DIFF_SCHEMA)
    order = {f: i for i, f in enumerate(COMPARED)}
    rank = pl.col("figure").replace_strict(order, return_dtype=pl.Int64)
    return (
        frame.with_columns(rank.alias("_order"))
        .sort(*_PAIR, "_order", nulls_last=True)
        .select(list(DIFF_SCHEMA))
        .cast(dict(DIFF_SCHEMA.items()))
    )


_WINDOW_KEYS = (
    *_PAIR, "trace_before", "trace_after", "device_before", "device_after", "step_before",
    "step_after",
)  # fmt: skip
_BOTH_SIDES = pl.col("device_before").is_not_null() & pl.col("device_after").is_not_null()


def kernel_counts_differ(comparison: pl.DataFrame) -> pl.DataFrame:
    """The paired windows whose two sides hold different numbers of kernels (one row per
    window: its pairing keys, traces, devices, steps, kernels before and after). A window on one
    side only is not among them: nothing of it is compared (``unpaired_windows``)."""
    return comparison.filter(
        (pl.col("figure") == "kernels")
        & _BOTH_SIDES
        & pl.col("kernels_before").ne_missing(pl.col("kernels_after"))
    ).select(*_WINDOW_KEYS, "kernels_before", "kernels_after")


def unpaired_windows(comparison: pl.DataFrame) -> pl.DataFrame:
    """The windows on one side only (one row per window: its pairing keys, traces, devices,
    steps): no window of the other side has their rank, trace position, device position and
    window position, so their figures are shown and not compared."""
    return comparison.filter(~_BOTH_SIDES).select(_WINDOW_KEYS).unique(maintain_order=True)
