"""Nsight Compute's per-kernel hardware figures, joined onto other sources' kernels by name.

An ``ncu --csv`` file gives its own run rows (``tileprof.inputs.gpu.ncu``) whose ``metadata``
holds Speed Of Light compute and memory %, achieved and theoretical occupancy and the rules.
A timeline source (nsys, Kineto, rocprofv3) times the same kernels over a whole run but has no
hardware counters. Joining by name puts both on one row: every GPU row whose ``kernel`` (or,
for nsys, its ``short_name``; ncu prints the function's base name by default) equals a profiled
kernel gets an ``ncu`` object in its metadata with those figures and the profiled target.
"""

from __future__ import annotations

import json
from typing import Any

import polars as pl

FIGURES: tuple[str, ...] = (
    "sol_compute_percent",
    "sol_memory_percent",
    "achieved_occupancy_percent",
    "theoretical_occupancy_percent",
)
"""The ncu figures carried over (percentages, as ncu states them)."""
MARK = "sol_compute_percent"
"""The metadata key that makes a row an ncu row."""


def _profiled(runs: pl.DataFrame) -> dict[str, dict[str, Any]]:
    """Kernel name → the ncu figures of its (first) ncu row."""
    rows = runs.filter(pl.col("metadata").str.contains(f'"{MARK}"', literal=True))
    out: dict[str, dict[str, Any]] = {}
    for kernel, target, meta in rows.select("kernel", "target", "metadata").iter_rows():
        figures = json.loads(meta)
        if MARK not in figures or kernel in out:
            continue
        out[kernel] = {"target": target} | {k: figures.get(k) for k in FIGURES}
        rules = figures.get("rules") or []
        if rules:
            top = rules[0]
            out[kernel]["top_rule"] = top["rule"]
            out[kernel]["top_rule_speedup_percent"] = top.get("estimated_speedup_percent")
    return out


def attach_kernel_metrics(runs: pl.DataFrame) -> pl.DataFrame:
    """``runs`` with each GPU kernel row that ncu profiled carrying ``metadata.ncu``.

    The ncu rows themselves are left as they are; a table without ncu rows is returned
    unchanged (same object), so sources without them pay nothing.
    """
    if "metadata" not in runs.columns or runs.height == 0:
        return runs
    if not runs["metadata"].str.contains(f'"{MARK}"', literal=True).any():
        return runs
    profiled = _profiled(runs)
    metas = runs["metadata"].to_list()
    out = []
    for kind, kernel, meta in zip(
        runs["target_kind"].cast(pl.String).to_list(), runs["kernel"].to_list(), metas, strict=True
    ):
        data = json.loads(meta) if meta else {}
        names = (kernel, data.get("short_name"))
        found = next((profiled[n] for n in names if n in profiled), None)
        if kind != "gpu" or found is None or MARK in data:
            out.append(meta)
            continue
        out.append(json.dumps(data | {"ncu": found}, sort_keys=False, default=str))
    return runs.with_columns(pl.Series("metadata", out, dtype=pl.String))


COUNTER_COLUMNS: dict[str, pl.DataType] = {
    "target": pl.String(),
    "target_kind": pl.String(),
    "kernel": pl.String(),
    "op_family": pl.String(),
    "dtype": pl.String(),
    "time_us": pl.Float64(),
    "useful_utilization": pl.Float64(),
    "sol_compute": pl.Float64(),
    "sol_memory": pl.Float64(),
    "achieved_occupancy": pl.Float64(),
    "theoretical_occupancy": pl.Float64(),
    "top_rule": pl.String(),
    "top_rule_speedup": pl.Float64(),
}
"""The columns of ``utilization_beside``; the fractions are 0-1 (ncu's percentages / 100)."""


def _figure(key: str) -> pl.Expr:
    """A figure of an ncu row's own metadata, else of its joined ``ncu`` object."""
    own = pl.col("metadata").str.json_path_match(f"$.{key}")
    joined = pl.col("metadata").str.json_path_match(f"$.ncu.{key}")
    return pl.coalesce(own, joined)


def utilization_beside(runs: pl.DataFrame) -> pl.DataFrame:
    """GPU kernels with Nsight Compute figures beside the tile groups of the same op family.

    For each profiled GPU kernel (an ncu row, or a row that ``attach_kernel_metrics`` joined
    figures onto): SOL compute and memory, achieved and theoretical occupancy, the top rule;
    for each tile run of an op family among them, its useful utilization (``peak_fraction``:
    deviceUsefulUtilization for tile groups). Tile rows first within a family, then by time.
    Empty when no row has ncu figures.
    """
    if runs.height == 0 or "metadata" not in runs.columns:
        return pl.DataFrame(schema=COUNTER_COLUMNS)
    meta = runs.with_columns(pl.col("metadata").fill_null("{}"))
    rule = pl.coalesce(
        pl.col("metadata").str.json_path_match("$.rules[0].rule"), _figure("top_rule")
    )
    speedup = pl.coalesce(
        pl.col("metadata").str.json_path_match("$.rules[0].estimated_speedup_percent"),
        _figure("top_rule_speedup_percent"),
    )
    gpu = (
        meta.filter(pl.col("target_kind").cast(pl.String) == "gpu")
        .with_columns(
            sol_compute=_figure("sol_compute_percent").cast(pl.Float64) / 100,
            sol_memory=_figure("sol_memory_percent").cast(pl.Float64) / 100,
            achieved_occupancy=_figure("achieved_occupancy_percent").cast(pl.Float64) / 100,
            theoretical_occupancy=_figure("theoretical_occupancy_percent").cast(pl.Float64) / 100,
            top_rule=rule,
            top_rule_speedup=speedup.cast(pl.Float64) / 100,
            useful_utilization=pl.lit(None, pl.Float64()),
        )
        .filter(pl.col("sol_compute").is_not_null() | pl.col("sol_memory").is_not_null())
    )
    if gpu.height == 0:
        return pl.DataFrame(schema=COUNTER_COLUMNS)
    families = gpu["op_family"].cast(pl.String).unique().to_list()
    tile = meta.filter(
        (pl.col("target_kind").cast(pl.String) == "tile")
        & pl.col("op_family").cast(pl.String).is_in(families)
    ).with_columns(
        useful_utilization=pl.col("peak_fraction"),
        **{
            c: pl.lit(None, t)
            for c, t in COUNTER_COLUMNS.items()
            if c.startswith(("sol", "ach", "the", "top"))
        },
    )
    both = pl.concat(
        [f.select([pl.col(c).cast(t) for c, t in COUNTER_COLUMNS.items()]) for f in (tile, gpu)]
    )
    order = pl.when(pl.col("target_kind") == "tile").then(0).otherwise(1)
    return both.sort(
        [pl.col("op_family"), order, pl.col("time_us")],
        descending=[False, False, True],
        nulls_last=True,
    )
