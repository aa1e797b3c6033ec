"""The one GPU event frame: what every GPU source produces and every GPU analysis reads.

One row per kernel, communication kernel, memcpy or memset on a GPU timeline. Every source
fills the same typed polars columns: Kineto traces (``inputs/gpu/kineto.py``), Nsight Systems
SQLite exports (``inputs/gpu/nsys_sqlite.py``) and rocprofv3 kernel traces
(``inputs/gpu/rocprof.py``); the run table, the op rows, the breakdown, the collectives and
the trace read it. The columns are declared as data (``GPU_EVENT_COLUMNS``: name, type,
whether a source may leave it null, and what it holds), the way HTA's trace parser declares
the fields it keeps. Times are integer ns on the source's own clock (a Float64 µs loses ns on
epoch timestamps); a unit is always in the column's name. A source adds its own columns after
these (``grid``, ``block``, ...), which no analysis of another source reads.

A ``GpuTimeline`` is one capture's frame with its step windows, device names and rank
(definitions: docs/metrics.md, "Time breakdown").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

GPU_EVENT_KINDS: tuple[str, ...] = ("kernel", "comm", "memcpy", "memset")
"""What a GPU event is: a compute kernel, a communication (NCCL/RCCL) kernel, a copy or a
fill. TraceLens counts memsets with computation; docs/metrics.md says so."""

COMM_NAME = re.compile(r"(?i)nccl|rccl")
"""A kernel whose name matches (any case) is communication (``comm``), as TraceLens counts it;
the flag is inside the pattern so that polars' ``str.contains(COMM_NAME.pattern)`` keeps it."""


@dataclass(frozen=True)
class Column:
    """One column of the GPU event frame."""

    name: str
    dtype: pl.DataType
    nullable: bool
    holds: str


GPU_EVENT_COLUMNS: tuple[Column, ...] = (
    Column("device", pl.Int64(), True, "device id (a GPU, an agent); null when unnamed"),
    Column("stream", pl.Int64(), True, "stream or queue id; null when unnamed"),
    Column("kind", pl.Enum(list(GPU_EVENT_KINDS)), False, "one of GPU_EVENT_KINDS"),
    Column("start_ns", pl.Int64(), False, "start on the source's clock"),
    Column("end_ns", pl.Int64(), False, "end on the source's clock (≥ start_ns)"),
    Column("name", pl.String(), False, "kernel name, or Memcpy/Memset with its kind"),
    Column("correlation", pl.Int64(), True, "id linking the event to its launch call"),
    Column("launch_name", pl.String(), True, "the launching runtime call's name"),
    Column("launch_start_ns", pl.Int64(), True, "the launching runtime call's start"),
    Column("launch_end_ns", pl.Int64(), True, "the launching runtime call's end"),
    Column("bytes", pl.Int64(), True, "bytes a memcpy or memset moves; null for kernels"),
    Column("collective", pl.String(), True, "NCCL's collective name (comm kernels)"),
    Column("process_group", pl.String(), True, "NCCL process group name or id"),
    Column("seq", pl.Int64(), True, "the collective's sequence number in its group"),
    Column("in_nelems", pl.Int64(), True, "elements in the collective's input message"),
    Column("out_nelems", pl.Int64(), True, "elements in the collective's output message"),
    Column("group_size", pl.Int64(), True, "ranks in the process group"),
    Column("dtype", pl.String(), True, "the collective's element type as PyTorch names it"),
)
"""The frame's columns, in order. Sources without launch calls, bytes or NCCL parameters leave
those columns null."""

GPU_EVENT_SCHEMA: dict[str, pl.DataType] = {c.name: c.dtype for c in GPU_EVENT_COLUMNS}
"""Column names and types of the GPU event frame."""

STEP_SOURCES: tuple[str, ...] = ("gpu_annotation", "cpu_step", "launch_attribution")
"""Where a step window comes from: the GPU-side ``ProfilerStep#N`` annotation; for a step that
has none, the GPU events launched during the CPU-side ``ProfilerStep#N`` (``cpu_step``); for
a step whose GPU-side annotation covers fewer GPU events than its CPU step launched, the same
launch attribution (``launch_attribution``)."""

STEP_SCHEMA: dict[str, pl.DataType] = {
    "device": pl.Int64(),
    "step": pl.Int64(),
    "start_ns": pl.Int64(),
    "end_ns": pl.Int64(),
    "source": pl.Enum(list(STEP_SOURCES)),
}
"""One row per step and device: the step's window on that device."""


@dataclass(frozen=True)
class RankInfo:
    """The ``distributedInfo`` of a trace: which rank of which job wrote it."""

    rank: int
    world_size: int
    backend: str | None = None


@dataclass(frozen=True)
class GpuTimeline:
    """One capture's GPU event frame, step windows, device names and rank."""

    name: str
    events: pl.DataFrame
    steps: pl.DataFrame
    devices: dict[int, str] = field(default_factory=dict)
    rank: RankInfo | None = None


def empty_gpu_events() -> pl.DataFrame:
    """A GPU event frame with no rows."""
    return pl.DataFrame(schema=GPU_EVENT_SCHEMA)


def empty_steps() -> pl.DataFrame:
    """A step frame with no rows."""
    return pl.DataFrame(schema=STEP_SCHEMA)


def as_gpu_events(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with the GPU event columns first, in order and typed (a column it lacks is
    null), then its own other columns as they are."""
    own = [c for c in frame.columns if c not in GPU_EVENT_SCHEMA]
    typed = [
        pl.col(c.name).cast(c.dtype)
        if c.name in frame.columns
        else pl.lit(None, c.dtype).alias(c.name)
        for c in GPU_EVENT_COLUMNS
    ]
    return frame.select(*typed, *own)


def comm_kind(kind: pl.Expr, name: pl.Expr) -> pl.Expr:
    """``kind`` with a kernel whose name holds ``nccl``/``rccl`` (any case) as ``comm``."""
    comm = (kind == "kernel") & name.str.contains(COMM_NAME.pattern)
    return pl.when(comm).then(pl.lit("comm")).otherwise(kind.cast(pl.String))


def ns_of_us(us: pl.Expr) -> pl.Expr:
    """Float µs as written (Kineto's ``ts``/``dur``, ns as three decimals) to integer ns: the
    whole µs and the fraction apart, so that epoch timestamps keep their ns."""
    whole = us.floor()
    return whole.cast(pl.Int64) * 1000 + ((us - whole) * 1000).round().cast(pl.Int64)


def us_of_ns(ns: pl.Expr) -> pl.Expr:
    """Integer ns as float µs, each the float nearest to ns / 1000 (so 1376 ns is 1.376 µs,
    the number Kineto wrote): divided by numpy, as polars multiplies a column by 0.001."""
    return ns.map_batches(_divided, return_dtype=pl.Float64(), is_elementwise=True)


def _divided(ns: pl.Series) -> pl.Series:
    return pl.Series(ns.name, ns.cast(pl.Float64).to_numpy() / 1000.0, nan_to_null=True)


def step_windows(events: pl.DataFrame, steps: pl.DataFrame) -> pl.DataFrame:
    """Each step's window per device, from a capture's ``ProfilerStep#N`` annotations
    (``steps``: rows of ``STEP_SCHEMA``, sourced ``gpu_annotation`` or ``cpu_step``).

    A GPU-side annotation is the window, unless its CPU-side step launched more GPU events on
    that device than the annotation covers (overlaps): then, as for a step with no GPU-side
    annotation, the window runs from the first start to the last end of the GPU events whose
    launch call began inside the CPU step (launch attribution); ``source`` says which rule.
    The events launched in each CPU step are found by binary search (``_launched_in``), not
    by one filter of every event per step: a long capture has thousands of steps.
    """
    gpu = steps.filter(pl.col("source") == "gpu_annotation")
    cpu = steps.filter(pl.col("source") == "cpu_step").select("step", "start_ns", "end_ns")
    launched = _launched_in(events, cpu)
    rows = cpu.select(pl.col("step"), pl.int_range(pl.len(), dtype=pl.UInt32).alias("cpu_row"))
    windows = _launch_windows(launched).join(rows, on="cpu_row")  # in no set order: sorted last
    annotations: dict[int, list[tuple[int, dict[str, Any]]]] = {}
    for i, a in enumerate(gpu.rows(named=True)):
        annotations.setdefault(a["step"], []).append((i, a))
    plain = windows.filter(~pl.col("step").is_in(list(annotations))).with_columns(
        part=pl.lit(0), source=pl.lit("cpu_step")
    )
    dropped, attributed = _given_way(launched, windows, annotations)
    kept = gpu.filter(~pl.int_range(pl.len()).is_in(sorted(dropped)))
    # each step's windows in the order the loop over steps would have written them
    in_order = pl.concat([plain, *attributed], how="diagonal").sort("cpu_row", "part", "first")
    frames = [kept, in_order]
    return pl.concat([f.select(list(STEP_SCHEMA)).cast(dict(STEP_SCHEMA.items())) for f in frames])


def _given_way(
    launched: pl.DataFrame,
    windows: pl.DataFrame,
    annotations: dict[int, list[tuple[int, dict[str, Any]]]],
) -> tuple[set[int], list[pl.DataFrame]]:
    """The annotations (their rows among the GPU-side ones) that cover fewer of their CPU
    step's events than it launched, and, for each, the step's launch windows on the devices
    of those events (``part``: the annotation's row + 1, so that they sort after it)."""
    annotated = windows.filter(pl.col("step").is_in(list(annotations)))
    by_row = launched.join(annotated.select("cpu_row").unique(), on="cpu_row", how="semi")
    launched_in = by_row.partition_by("cpu_row", as_dict=True)
    dropped: set[int] = set()
    attributed = []
    for (row, step), mine_windows in annotated.group_by("cpu_row", "step"):
        mine = launched_in[(row,)]
        for i, a in annotations[step]:
            on = mine if a["device"] is None else mine.filter(pl.col("device") == a["device"])
            covered = on.filter(
                pl.col("start_ns") <= a["end_ns"], pl.col("end_ns") >= a["start_ns"]
            )
            if covered.height < on.height:
                dropped.add(i)
                devices = on.get_column("device").unique().implode()
                attributed.append(
                    mine_windows.filter(
                        pl.col("device").is_in(devices, nulls_equal=True)
                    ).with_columns(part=pl.lit(i + 1), source=pl.lit("launch_attribution"))
                )
    return dropped, attributed


def _launched_in(events: pl.DataFrame, cpu: pl.DataFrame) -> pl.DataFrame:
    """One row per (event, CPU step its launch call began in: ``start_ns`` <= launch <
    ``end_ns``): ``cpu_row`` (the step's row in ``cpu``), ``event_row`` (the event's in
    ``events``), the event's ``device``, ``start_ns`` and ``end_ns``; in no set order.
    The events sorted by launch once, each step's are a range of them (two binary searches),
    so steps may overlap and an event belong to several."""
    by_launch = (
        events.select("device", "start_ns", "end_ns", "launch_start_ns")
        .with_row_index("event_row")
        .filter(pl.col("launch_start_ns").is_not_null())
        .sort("launch_start_ns")
    )
    launch = by_launch.get_column("launch_start_ns")
    at = launched_between(launch, cpu.get_column("start_ns"), cpu.get_column("end_ns"))
    rows = pl.DataFrame([at]).with_row_index("cpu_row").explode("at").drop_nulls("at")
    events_at = by_launch.drop("launch_start_ns")[rows.get_column("at")]
    return pl.concat([rows.select("cpu_row"), events_at], how="horizontal")


def launched_between(launch: pl.Series, start: pl.Series, end: pl.Series) -> pl.Series:
    """``at``: for each window ``start[i]`` <= launch < ``end[i]``, the positions in
    ``launch`` (sorted) of the values inside it, a list a window (empty where none, or where
    the end is not after the start). Two binary searches a window, not a filter of every
    launch: the rule by which a CPU step launched a GPU event, here and in the checks."""
    first = launch.search_sorted(start, side="left")
    past = launch.search_sorted(end, side="left")
    return pl.int_ranges(first, past, eager=True).alias("at")


def _launch_windows(launched: pl.DataFrame) -> pl.DataFrame:
    """Per CPU step and device (``_launched_in``'s rows): the first start and last end of the
    events launched in the step, and ``first``, the row of its first event (which orders a
    step's devices), in no set order."""
    return launched.group_by("cpu_row", "device").agg(
        pl.col("event_row").min().alias("first"),
        pl.col("start_ns").min(),
        pl.col("end_ns").max(),
    )
