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
    if runs.height == 0 or not runs["metadata"].str.contains(f'"{MARK}"', literal=True).any():
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
