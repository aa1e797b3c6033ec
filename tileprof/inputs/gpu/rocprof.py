"""rocprofv3 kernel traces (``rocprofv3 --kernel-trace --output-format csv``,
``*_kernel_trace.csv``).

Both column sets are read. Older releases write ``Private_Segment_Size`` (scratch per
work-item) and ``Group_Segment_Size`` (LDS per workgroup) and an integer ``Agent_Id``; newer
ones write ``LDS_Block_Size``, ``Scratch_Size``, ``VGPR_Count``, ``Accum_VGPR_Count`` (or
``Arch_VGPR_Count``), ``SGPR_Count`` and ``Agent_Id`` as ``Agent N``; rocpd's CSV export adds a
``Guid`` column and spells the register columns ``Vgpr_Count``. Column names are matched
without regard to case. Timestamps are ns; ``Grid_Size_*`` counts work-items (threads), not
workgroups, as HIP's grid does.

The agents of one trace are one target, ``AMD GPU`` (the kernel trace does not carry the
agents' names, which ``agent_info.csv`` holds), each row's ``device`` the agent (``agent N``).
Dispatches become the shared GPU-event frame (``tileprof.core.gpu_events``) and, aggregated
per (agent, kernel name) as every GPU source is, run-table rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GPU_EVENT_SCHEMA, as_gpu_events, comm_kind
from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.core.text import shorten
from tileprof.inputs._csv_table import LINE, header_spelling, numbers, read_text_table
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import ROCPROF, ROCPROF_REQUIRED
from tileprof.inputs.gpu.nsys_sqlite import aggregate

KIND = ROCPROF
ALIASES: dict[str, tuple[str, ...]] = {
    "lds_bytes": ("lds_block_size", "group_segment_size"),
    "scratch_bytes": ("scratch_size", "private_segment_size"),
    "vgpr": ("vgpr_count", "arch_vgpr_count"),
    "accum_vgpr": ("accum_vgpr_count",),
    "sgpr": ("sgpr_count",),
    "stream": ("stream_id", "queue_id"),
    "correlation": ("correlation_id",),
}
"""Each figure read, and the columns (lower-cased) that hold it, newer layout first."""
DIMS = ("x", "y", "z")
AGENT = r"^\s*(?:[A-Za-z_]+\s*)?(\d{1,18})\s*$"
"""An ``Agent_Id`` cell: ``2``, or ``Agent 2`` (newer releases)."""


def _column(raw: pl.DataFrame, names: tuple[str, ...]) -> str | None:
    return next((n for n in names if n in raw.columns), None)


def read_dispatches(path: str | Path, data: bytes) -> pl.DataFrame:
    """One row per kernel dispatch: the GPU event frame's columns (``core.gpu_events``), then
    ``short_name``, the resource figures, ``grid`` and ``block`` (work-items, ``XxYxZ``)."""
    raw = read_text_table(path, data, sorted(c.lower() for c in ROCPROF_REQUIRED), fold_case=True)
    raw = raw.filter(pl.col("kind").str.strip_chars() == "KERNEL_DISPATCH")
    spelling = header_spelling(data)
    agent = raw["agent_id"].str.extract(AGENT, 1)
    bad = (agent.is_null() & raw["agent_id"].is_not_null()).arg_true()
    if bad.len():
        i = int(bad[0])
        where = f"line {raw[LINE][i]}, column {spelling.get('agent_id', 'Agent_Id')!r}"
        raise InputError(path, where, f"not an agent: {shorten(raw['agent_id'][i], 80)!r}")
    start, end = (
        numbers(path, raw, stamp, spelling, integer=True, minimum=0, required=True)
        for stamp in ("start_timestamp", "end_timestamp")
    )
    if (end < start).any():
        name = raw["kernel_name"][int((end < start).arg_true()[0])]
        raise InputError(path, f"kernel {shorten(name, 120)!r}", "ends before it starts")
    out: dict[str, pl.Series] = {
        "device": agent.cast(pl.Int64),
        "kind": pl.Series(["kernel"] * raw.height),
        "start_ns": _exact(raw["start_timestamp"], start),
        "end_ns": _exact(raw["end_timestamp"], end),
        "name": raw["kernel_name"],
        "short_name": raw["kernel_name"],
    }
    for figure, names in ALIASES.items():
        column = _column(raw, names)
        values = (
            numbers(path, raw, column, spelling, integer=True)
            if column
            else pl.Series([None] * raw.height)
        )
        out[figure] = values.cast(pl.Int64)
    for alias, prefix in (("grid", "grid_size_"), ("block", "workgroup_size_")):
        parts = [
            numbers(path, raw, prefix + d, spelling, integer=True).cast(pl.String) for d in DIMS
        ]
        out[alias] = pl.DataFrame(parts).select(pl.concat_str(pl.all(), separator="x")).to_series()
    frame = pl.DataFrame({k: v.alias(k) for k, v in out.items()})
    frame = frame.with_columns(kind=comm_kind(pl.col("kind"), pl.col("name")))
    return as_gpu_events(frame).sort(["start_ns", "end_ns"], maintain_order=True)


def _exact(cells: pl.Series, values: pl.Series) -> pl.Series:
    """Integer ns as written (a Float64 holds integers exactly only up to 2^53), else the
    number ``values`` read."""
    return cells.str.strip_chars().cast(pl.Int64, strict=False).fill_null(values.cast(pl.Int64))


def gpu_events(path: str | Path, data: bytes) -> pl.DataFrame:
    """The trace's dispatches in the GPU event frame, by start."""
    return read_dispatches(path, data).select(list(GPU_EVENT_SCHEMA))


def agent_target(agent: int | None) -> str:
    """The target an agent's kernels run on."""
    return "AMD GPU" if agent is None else f"AMD GPU (agent {agent})"


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The per-kernel runs of a kernel trace, one row per (agent, kernel); the agents are one
    target told apart by ``device``."""
    dispatches = read_dispatches(path, data)
    resources = dispatches.group_by("device", "name", maintain_order=True).agg(
        [pl.col(c).max() for c in ("lds_bytes", "scratch_bytes", "vgpr", "accum_vgpr", "sgpr")]
    )
    name = Path(path).name
    rows = []
    # a dispatch without an agent (an empty Agent_Id) keeps its resources: null matches null
    agg = aggregate(dispatches).join(
        resources, on=["device", "name"], how="left", nulls_equal=True, maintain_order="left"
    )
    for r in agg.iter_rows(named=True):
        meta: dict[str, Any] = {
            "category": "kernel",
            "streams": r["streams"],
            "grid_work_items": r["grid"],
            "workgroup": r["block"],
        }
        meta |= {k: r[k] for k in ("lds_bytes", "scratch_bytes", "vgpr", "accum_vgpr", "sgpr")}
        rows.append(
            {
                "target": agent_target(None),
                "target_kind": "gpu",
                "device": None if r["device"] is None else f"agent {r['device']}",
                "source": f"{name}: agent {r['device']}",
                "kernel": r["name"],
                "per": "call",
                "time_us": r["mean_us"],
                "calls": r["count"],
                "total_us": r["total_us"],
                "p50_us": r["p50_us"],
                "p95_us": r["p95_us"],
                "max_us": r["max_us"],
                "metadata": {k: v for k, v in meta.items() if v is not None},
            }
        )
    agents = sorted(dispatches["device"].unique().drop_nulls().to_list())
    meta = {"agents": agents, "dispatches": dispatches.height}
    return ParsedRuns(KIND, runs_from_rows(rows), metadata=meta)


READER: Reader[ParsedRuns] = Reader(parse)
