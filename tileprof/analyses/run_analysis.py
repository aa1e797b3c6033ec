"""Analyses of the run table (docs/runs.md) that the report's GPU sections show.

Pure functions from a run table to the rows of each part (docs/metrics.md, "HTML report" →
"GPU runs and linked sets"): speedups over a baseline, calibration sets, GEMM runs per
precision and the per-kernel detail rows of traces.
"""

from __future__ import annotations

import polars as pl

OPTIONAL_RUN_COLUMNS: dict[str, pl.DataType] = {
    "target": pl.String(),
    "target_kind": pl.String(),
    "source": pl.String(),
    "workload": pl.String(),
    "implementation": pl.String(),
    "kernel": pl.String(),
    "op_family": pl.String(),
    "dtype": pl.String(),
    "shape": pl.String(),
    "per": pl.String(),
    "time_us": pl.Float64(),
    "calls": pl.Int64(),
    "total_us": pl.Float64(),
    "p50_us": pl.Float64(),
    "p95_us": pl.Float64(),
    "max_us": pl.Float64(),
    "mac": pl.Int64(),
    "energy_j": pl.Float64(),
    "energy_raw_j": pl.Float64(),
    "baseline_implementation": pl.String(),
    "baseline_time_us": pl.Float64(),
    "speedup": pl.Float64(),
    "peak_fraction": pl.Float64(),
    "tflops": pl.Float64(),
    "peak_tflops": pl.Float64(),
    "bytes": pl.Int64(),
    "arithmetic_intensity": pl.Float64(),
    "roofline_us": pl.Float64(),
    "bound": pl.String(),
    "roofline_fraction": pl.Float64(),
    "launch_op": pl.String(),
    "device": pl.String(),
    "devices": pl.Int64(),
    "device_min_us": pl.Float64(),
    "device_max_us": pl.Float64(),
    "device_spread": pl.Float64(),
    "slowest_device": pl.String(),
}


def normalize_runs(runs: pl.DataFrame) -> pl.DataFrame:
    """The run table with every column the report reads; enums as strings, absent ones null."""
    columns = []
    for name, dtype in OPTIONAL_RUN_COLUMNS.items():
        if name in runs.columns:
            columns.append(pl.col(name).cast(pl.String if dtype == pl.String() else dtype))
        else:
            columns.append(pl.lit(None, dtype).alias(name))
    return runs.select(columns)


def source_file(source: str | None) -> str:
    """The file part of a run's ``source`` ("file: place")."""
    return "(unknown)" if source is None else source.split(": ", 1)[0]


def speedup_rows(runs: pl.DataFrame) -> pl.DataFrame:
    """GPU runs compared with a baseline, outside calibration sets."""
    return runs.filter(
        (pl.col("target_kind") == "gpu")
        & pl.col("speedup").is_not_null()
        & ~pl.col("source").fill_null("").str.to_lowercase().str.contains("calibration")
    )


def calibration_sets(runs: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """Per (target, workload): the schedules of runs whose source is a calibration section."""
    rows = runs.filter(
        pl.col("source").fill_null("").str.to_lowercase().str.contains("calibration")
    )
    sets = []
    for (target, workload), frame in rows.group_by(["target", "workload"], maintain_order=True):
        sets.append((f"{target} · {workload}", frame))
    return sets


PRECISION_ORDER: tuple[tuple[str, ...], ...] = (
    ("fp64", "f64", "float64", "double"),
    ("fp32", "f32", "float32", "float"),
    ("tf32",),
    ("fp16", "f16", "float16", "half"),
    ("bf16", "bfloat16"),
    ("fp8", "f8", "e4m3", "e5m2", "float8"),
    ("int8", "i8", "s8", "u8"),
    ("int4", "i4", "s4", "u4", "fp4", "f4"),
    ("b1", "binary", "int1"),
)
"""Precisions from widest to narrowest, each with the spellings the inputs use."""
_PRECISION_RANK = {name: rank for rank, names in enumerate(PRECISION_ORDER) for name in names}


def precision_rank(dtype: str | None) -> int:
    """Place of ``dtype`` in ``PRECISION_ORDER``; unknown precisions come after all of them."""
    return _PRECISION_RANK.get((dtype or "").strip().lower(), len(PRECISION_ORDER))


def gemm_rows(runs: pl.DataFrame) -> pl.DataFrame:
    """GPU GEMM runs that state energy or MACs, per target from the widest precision down
    (fp32, tf32, fp16, bf16, fp8, int8, b1; others after, by name).
    """
    rows = runs.filter(
        (pl.col("target_kind") == "gpu")
        & (pl.col("op_family") == "gemm")
        & (pl.col("energy_j").is_not_null() | pl.col("mac").is_not_null())
    )
    rank = pl.col("dtype").map_elements(precision_rank, return_dtype=pl.Int64, skip_nulls=False)
    return (
        rows.with_columns(_rank=rank)
        .sort(["target", "_rank", "dtype"], nulls_last=True, maintain_order=True)
        .drop("_rank")
    )


def is_kernel_row() -> pl.Expr:
    """A per-call kernel row with a timing distribution (traces, nsys, run tables that give
    ``total_us``): these also get a per-file detail table, besides their row in the run table.
    A trace's op rows are not kernels: they stay in the run table.
    """
    from tileprof.core.run_schema import OP_ROW_SOURCE

    return (
        (pl.col("target_kind") == "gpu")
        & (pl.col("per") == "call").fill_null(False)
        & pl.col("total_us").is_not_null()
        & ~pl.col("source").str.ends_with(OP_ROW_SOURCE).fill_null(False)
    )


def kernel_sets(runs: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """Per (file, target, device): its per-kernel rows, by total time; titled "FILE · TARGET"
    ("FILE · TARGET · DEVICE" where the target has several devices in the file, "FILE ·
    DEVICE" where the device's name starts with the target's: ``GPU 1`` of an unnamed
    ``GPU``)."""
    rows = runs.filter(is_kernel_row())
    rows = rows.with_columns(
        file=pl.col("source").map_elements(source_file, return_dtype=pl.String, skip_nulls=False),
        target=pl.col("target").fill_null("(unknown target)"),
    )
    several = rows.with_columns(
        several=pl.col("device").drop_nulls().n_unique().over("file", "target") > 1
    )
    sets = []
    keys = ["file", "target", "device", "several"]
    for (file, target, device, many), frame in several.group_by(keys, maintain_order=True):
        where = str(target)
        if device is not None and str(device).startswith(where):
            where = str(device)
        elif device is not None and many:
            where = f"{target} · {device}"
        ordered = frame.drop("several").sort("total_us", descending=True, nulls_last=True)
        sets.append((f"{file} · {where}", ordered))
    return sets


def device_spread_rows(runs: pl.DataFrame) -> pl.DataFrame:
    """One row per run that two or more devices of one target ran (its slowest device's
    row), with ``file`` (its source's file), by spread, largest first (docs/runs.md, "Devices
    of one target")."""
    rows = runs.filter(
        (pl.col("devices") >= 2) & (pl.col("device") == pl.col("slowest_device"))
    ).with_columns(
        file=pl.col("source").map_elements(source_file, return_dtype=pl.String, skip_nulls=False)
    )
    return rows.sort(
        ["device_spread", "target", "kernel"], descending=[True, False, False], nulls_last=True
    )
