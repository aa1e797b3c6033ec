"""The report's view model: plain, typed data that the templates render and tests check.

Everything the page shows is computed here, once, from a ``Profile`` (tile dumps) and a run
table (GPU runs); the Jinja2 templates only lay it out and ``charts`` draws it at render
time. Numbers are binned with numpy so a million samples cost a few array passes, never a
Python loop per sample. Definitions of every figure: docs/metrics.md, "Report".


The analyses it shows live beside ``tileprof.analyses.stats`` (``timeline``, ``balance``,
``quality``,
``run_analysis``); their names stay importable from here for earlier callers.
"""

from __future__ import annotations

import dataclasses
import math
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import polars as pl

from tileprof.analyses.balance import tile_balance
from tileprof.analyses.filters import Filters, group_name
from tileprof.analyses.findings import Finding, combined, evaluate
from tileprof.analyses.kernel_metrics import utilization_beside
from tileprof.analyses.quality import overlapping_samples as overlapping_samples  # re-exported
from tileprof.analyses.quality import run_quality, tile_quality
from tileprof.analyses.run_analysis import (
    calibration_sets,
    device_spread_rows,
    gemm_rows,  # also re-exported
    is_kernel_row,
    kernel_sets,
    normalize_runs,
    speedup_rows,
)
from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.analyses.summary import Summary
from tileprof.analyses.timeline import IDLE as IDLE  # re-exported, as the two below
from tileprof.analyses.timeline import TIME_BINS, tile_activity
from tileprof.analyses.timeline import binned_cycles as binned_cycles
from tileprof.analyses.timeline import time_bins as time_bins
from tileprof.core import numbers
from tileprof.core.errors import OptionError
from tileprof.core.text import KERNEL_NAME_LIMIT, kernel_display_name, shorten, told_apart
from tileprof.model.findings import profile_frames
from tileprof.model.gather import LINKS_KIND, InputFile, LinkedSet, RunInputs
from tileprof.model.profile import Profile
from tileprof.views.html.supersteps_data import superstep_section
from tileprof.views.html.view import (
    BreakdownSection,
    Cell,
    ChartedTable,
    Column,
    DurationSpread,
    Figure,
    GpuSection,
    Header,
    PhaseSplit,
    Plot,
    QualityCheck,
    Report,
    RooflinePlot,
    Table,
    TileSection,
)

# ---------------------------------------------------------------- formatting


def format_number(value: Any, *, percent: bool = False, digits: int = numbers.DIGITS) -> str:
    """How the page prints a number (the exact value goes in the cell's hover title): the one
    policy of ``tileprof.core.numbers`` (docs/metrics.md, "How numbers are shown")."""
    if percent:
        return numbers.percent(value)
    return numbers.number(value, digits)


def unit_of(key: str) -> str | None:
    """The unit a column's numbers carry, read from its name (docs/metrics.md, "How numbers
    are shown"): ``µs`` for ``*_us`` and ``us`` (shown as the terminal's run table shows a
    time, in µs, ms or s), ``×`` for a speedup; None for the rest (counts, cycles, ratios, and
    ``phaseMs``, printed as the terminal's ``phase ms`` column prints it)."""
    if key == "us" or key.endswith("_us"):
        return "µs"
    return "×" if key == "speedup" else None


def _with_unit(value: Any, unit: str | None) -> str:
    if unit == "µs":
        return numbers.duration_us(value)
    return numbers.speedup(value) if unit == "×" else numbers.number(value)


def number_cell(value: Any, *, percent: bool = False, unit: str | None = None) -> Cell:
    """A numeric cell whose title holds the exact value; ``unit``: ``unit_of`` its column."""
    sort = None if value is None or (isinstance(value, float) and math.isnan(value)) else value
    return Cell(
        format_number(value, percent=percent)
        if percent or unit is None
        else _with_unit(value, unit),
        None if sort is None else float(sort),
        "" if sort is None else repr(value),
    )


TITLE_LIMIT = 4096
"""Longest text a cell's hover title holds (a name from an input can be megabytes)."""


def text_cell(value: Any) -> Cell:
    """A text cell (escaped by the template, as every cell is)."""
    text = "—" if value is None else str(value)
    return Cell(
        text,
        None if value is None else text.lower(),
        shorten(text, TITLE_LIMIT) if len(text) > 40 else "",
    )


def kernel_cell(value: Any) -> Cell:
    """A CUDA kernel name shortened around its functor (``kernel_display_name``); the full
    name sorts the cell and is its hover title."""
    if value is None:
        return text_cell(None)
    text = str(value)
    return Cell(kernel_display_name(text), text.lower(), shorten(text, TITLE_LIMIT))


def with_dittos(cells: list[tuple[Cell, ...]], columns: Sequence[Column]) -> list[tuple[Cell, ...]]:
    """Mark each cell of a ``ditto`` column whose text equals the one above it."""
    marked = [i for i, c in enumerate(columns) if c.ditto]
    if not marked:
        return cells
    out = []
    for r, row in enumerate(cells):
        if r == 0:
            out.append(row)
            continue
        above = cells[r - 1]
        out.append(
            tuple(
                dataclasses.replace(cell, ditto=True)
                if i in marked and cell.sort is not None and cell.text == above[i].text
                else cell
                for i, cell in enumerate(row)
            )
        )
    return out


def table_from_frame(
    id: str,
    frame: pl.DataFrame,
    columns: Sequence[str],
    *,
    percent: Sequence[str] = (),
    docs: dict[str, str] | None = None,
    ditto: Sequence[str] = (),
    kernels: Sequence[str] = (),
    top: int | None = None,
    labels: dict[str, str] | None = None,
) -> Table:
    """A table of ``frame``'s ``columns`` (absent ones show as null).

    ``ditto`` columns show a value equal to the row above as a ditto mark; ``kernels`` columns
    hold CUDA kernel names, shown shortened (``kernel_cell``); past ``top`` rows the page shows
    an "all" toggle; ``labels`` heads a column otherwise than its key.
    """
    docs = docs or {}
    present = [c for c in columns if c in frame.columns]
    cols = []
    for name in present:
        dtype = frame.schema[name]
        label = "µs" if name == "us" else name  # the unit's one spelling (numbers.MICRO)
        label = (labels or {}).get(name, label)
        cols.append(Column(name, label, dtype.is_numeric(), docs.get(name, ""), name in ditto))
    rows = []
    for row in frame.select(present).iter_rows():
        cells = []
        for column, value in zip(cols, row, strict=False):
            if column.numeric:
                percentage = column.key in percent
                unit = None if percentage else unit_of(column.key)
                cells.append(number_cell(value, percent=percentage, unit=unit))
            elif column.key in kernels:
                cells.append(kernel_cell(value))
            else:
                cells.append(text_cell(value))
        rows.append(tuple(cells))
    rows = _kernels_told_apart(rows, [i for i, c in enumerate(cols) if c.key in kernels])
    cols = [
        dataclasses.replace(c, blank=all(row[i].sort is None for row in rows)) if i else c
        for i, c in enumerate(cols)
    ]
    top = TOP_ROWS if top is None else top
    shown = top if len(rows) > top + TOP_SLACK else None
    return Table(id, tuple(cols), tuple(with_dittos(rows, cols)), shown)


TOP_ROWS = 25
"""Rows a table shows before its "show all" toggle, unless it asks for fewer (kernel tables)."""
TOP_SLACK = 5
"""A table only this many rows over its top shows them all: a toggle to reveal three rows
costs more reading than the rows."""


def _kernels_told_apart(
    rows: list[tuple[Cell, ...]], columns: list[int], limit: int = KERNEL_NAME_LIMIT
) -> list[tuple[Cell, ...]]:
    """Kernel names that shorten alike but differ in full numbered apart (``…~1``, ``…~2``),
    so two rows never show the same label for different kernels."""
    for index in columns:
        cells = [row[index] for row in rows]
        labels = told_apart([c.text for c in cells], [str(c.sort or c.text) for c in cells], limit)
        rows = [
            (*row[:index], dataclasses.replace(row[index], text=label), *row[index + 1 :])
            for row, label in zip(rows, labels, strict=True)
        ]
    return rows


# ---------------------------------------------------------------- header


def generation_time(environ: dict[str, str] | None = None) -> str:
    """UTC generation time: ``SOURCE_DATE_EPOCH`` when set (reproducible builds), else now.

    A value that is not a whole number of seconds is an ``OptionError`` (one line, exit 2).
    """
    env = os.environ if environ is None else environ
    epoch = env.get("SOURCE_DATE_EPOCH")
    if not epoch:
        return datetime.now(tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    try:
        moment = datetime.fromtimestamp(int(epoch), tz=timezone.utc)
    except (ValueError, OverflowError, OSError):
        raise OptionError(
            f"SOURCE_DATE_EPOCH={epoch!r}: expected a whole number of seconds since 1970"
        ) from None
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


# ---------------------------------------------------------------- tile device


GROUP_PERCENT_FIELDS = ("usefulUtilization", "workLaneOccupancy", "deviceUsefulUtilization")


GROUP_LEADING_FIELDS: tuple[str, ...] = (
    "phaseCycles",
    "phaseMs",
    "usefulUtilization",
    "deviceUsefulUtilization",
    "p50Cycles",
    "p95Cycles",
    "averageActiveTiles",
)
"""The figures people come for, first in the group table (the rest follow in the summary's
order, behind a horizontal scroll on a narrow screen)."""


def group_table(summary: Summary, id: str) -> Table:
    """Every group with every statistic of docs/metrics.md: name, the dimensions, the
    ``GROUP_LEADING_FIELDS``, then the others in the summary's order."""
    rest = [f for f in GROUP_FIELDS if f not in GROUP_LEADING_FIELDS]
    columns = ["name", *summary.group_by, *GROUP_LEADING_FIELDS, *rest]
    frame = summary.groups.with_columns(
        [pl.col(d).cast(pl.String) for d in summary.group_by if d in ("operation", "kind")]
    )
    return table_from_frame(id, frame, columns, percent=GROUP_PERCENT_FIELDS)


def _display_names(summary: Summary) -> tuple[str, ...]:
    names = []
    for row in summary.groups.iter_rows(named=True):
        dims = ", ".join(f"{d}={row[d]}" for d in summary.group_by)
        names.append(f"{row['name']} ({dims})" if dims else str(row["name"]))
    return tuple(names)


def phase_split(summary: Summary, matched: pl.DataFrame | None = None) -> PhaseSplit:
    """Each group's phaseCycles split by its usefulUtilization (no estimate: all "other");
    a group whose ``matched`` samples are all of kind exchange is all "exchange"."""
    groups = summary.groups
    phase = groups["phaseCycles"].cast(pl.Float64).fill_null(0).to_numpy()
    share = groups["usefulUtilization"].fill_null(0.0).clip(0.0, 1.0).to_numpy()
    useful = phase * share
    exchange = np.zeros_like(phase)
    if matched is not None and matched.height:
        names = exchange_groups(matched)
        is_exchange = groups["name"].cast(pl.String).is_in(list(names)).to_numpy()
        exchange = np.where(is_exchange, phase, 0.0)
        useful = np.where(is_exchange, 0.0, useful)
    return PhaseSplit(_display_names(summary), useful, phase - useful - exchange, exchange)


def exchange_groups(matched: pl.DataFrame) -> set[str]:
    """Names of the groups whose samples are all of kind ``exchange``."""
    frame = (
        matched.lazy()
        .group_by(name=group_name().cast(pl.String))
        .agg(exchange=(pl.col("kind").cast(pl.String) == "exchange").all())
        .filter(pl.col("exchange"))
        .collect()
    )
    return set(frame["name"].drop_nulls().to_list())


def duration_spread(summary: Summary) -> DurationSpread:
    """p50, p95 and max cycles per group, as the summary gives them."""
    groups = summary.groups

    def col(name: str) -> np.ndarray:
        return groups[name].cast(pl.Float64).fill_null(0).to_numpy()

    return DurationSpread(
        _display_names(summary), col("p50Cycles"), col("p95Cycles"), col("maximumCycles")
    )


def headline(summary: Summary, matched: pl.DataFrame) -> tuple[Figure, ...]:
    """Span, samples, mean active tiles, device busy and device utilization."""
    span: int | None = None
    work = useful = 0.0
    stated = False  # whether a matched sample states its useful cycles
    if matched.height:
        totals = matched.select(
            span=(pl.col("offset") + pl.col("duration")).max() - pl.col("offset").min(),
            work=pl.col("duration").sum(),
            useful=pl.col("usefulCycles").sum(),
            stated=pl.col("usefulCycles").is_not_null().any(),
        ).row(0, named=True)
        span, work, useful = int(totals["span"]), float(totals["work"]), float(totals["useful"])
        stated = bool(totals["stated"])
    active = work / span if span else None
    busy = None if active is None else active / summary.tile_count
    # none stated: not known (a dump with no work estimate), as a group's figure is null then
    device = useful / (summary.tile_count * span) if span and stated else None
    ms = None if span is None else span * 1000 / summary.clock_hz
    profile_ms = summary.profile_span_ms
    return (
        Figure(
            "Matched span",
            span,
            "—" if span is None else f"{span:,} cycles · {ms:.6g} ms",
            "max(offset + duration) − min(offset) over the matched samples",
        ),
        Figure(
            "Profile span",
            summary.profile_span_cycles,
            "—"
            if summary.profile_span_cycles is None
            else f"{summary.profile_span_cycles:,} cycles · {profile_ms:.6g} ms",
            "profileSpanCycles: over all samples, unfiltered",
        ),
        Figure(
            "Samples matched / total",
            summary.matched_sample_count,
            f"{summary.matched_sample_count:,} / {summary.sample_count:,}",
            "matchedSampleCount / sampleCount",
        ),
        Figure(
            "Mean active tiles",
            active,
            format_number(active),
            "Σ duration of matched samples / matched span",
        ),
        Figure(
            "Device busy",
            busy,
            format_number(busy, percent=True),
            "mean active tiles / tileCount",
        ),
        Figure(
            "Device useful utilization",
            device,
            format_number(device, percent=True),
            "Σ usefulCycles of matched samples / (tileCount × matched span)",
        ),
    )


def tile_section(
    profile: Profile,
    filters: Filters | None = None,
    *,
    group_by: Sequence[str] = (),
    id: str = "tile-0",
    bins: int = TIME_BINS,
) -> TileSection:
    """The tile-device section of one profile (``render`` draws its charts)."""
    summary = profile.summary(filters, group_by=group_by, samples=0)
    matched = profile.filtered(filters)
    occupancy, active = tile_activity(matched, profile.tile_count, bins)
    return TileSection(
        id=id,
        target=profile.target,
        source=profile.source or "(in memory)",
        filters=tuple((filters or Filters()).describe()),
        summary=summary,
        headline=headline(summary, matched),
        groups=group_table(summary, f"{id}-groups"),
        occupancy=occupancy,
        active=active,
        phase=phase_split(summary, matched),
        spread=duration_spread(summary),
        balance=tile_balance(matched, profile.tile_count),
        supersteps=superstep_section(profile, filters, f"{id}-supersteps", table_from_frame),
    )


# ---------------------------------------------------------------- data quality


# ---------------------------------------------------------------- GPU runs

RUN_TABLE_COLUMNS: tuple[str, ...] = (
    "run",
    "time_us",
    "speedup",
    "target",
    "device",
    "device_spread",
    "slowest_device",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "calls",
    "mac",
    "energy_j",
    "energy_raw_j",
    "baseline_implementation",
    "baseline_time_us",
    "peak_fraction",
    "roofline_fraction",
    "bound",
)
"""The run table's columns: the run's name, its time and speedup first (docs/metrics.md)."""
RUN_DITTO_COLUMNS = (
    "target",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "baseline_implementation",
)
"""Run-table columns whose repeats down the table show as a ditto mark."""
TOP_KERNELS = 15
"""Kernels a kernel table shows before its "all" toggle (the rest by total time, on demand)."""
KERNEL_COLUMNS: tuple[str, ...] = (
    "kernel",
    "op_family",
    "dtype",
    "calls",
    "total_us",
    "time_us",
    "p50_us",
    "p95_us",
    "max_us",
    "launch_op",
)
LINK_COLUMNS: tuple[str, ...] = (
    "target",
    "target_kind",
    "workload",
    "implementation",
    "kernel",
    "shape",
    "work",
    "per",
    "time_us",
    "speedup",
    "tflops",
    "peak_fraction",
    "roofline_fraction",
    "bound",
    "energy_j",
    "j_per_gflop",
)
# What a linked set's rows add to the run table (tileprof.analyses.links.LINKED_SCHEMA).
LINK_EXTRA_COLUMNS: dict[str, pl.DataType] = {
    "work": pl.String(),
    "j_per_gflop": pl.Float64(),
    "compare": pl.String(),
}


def run_names() -> pl.Expr:
    """A run's name in the run table: "WORKLOAD · IMPLEMENTATION", the kernel (shortened)
    standing in for a missing implementation; "—" when the run has none of the three."""
    kernel = pl.col("kernel").map_elements(kernel_display_name, return_dtype=pl.String)
    return pl.concat_str(
        [pl.col("workload"), pl.coalesce(pl.col("implementation"), kernel)],
        separator=" · ",
        ignore_nulls=True,
    ).replace("", None)


def gpu_section(inputs: RunInputs) -> GpuSection | None:
    """The GPU section, or None when there are no GPU runs (``render`` draws its charts)."""
    runs = normalize_runs(inputs.runs)
    gpu = runs.filter(pl.col("target_kind") == "gpu")
    if gpu.height == 0:
        return None
    kernel_row = is_kernel_row()
    speedups = _speedup_table(gpu)
    calibrations = tuple(
        ChartedTable(
            f"Calibration: {title}",
            table_from_frame(
                f"gpu-calibration-{i}",
                frame,
                ("implementation", "time_us", "baseline_implementation", "speedup"),
                ditto=("baseline_implementation",),
            ),
            plot=Plot("calibration", f"gpu-calibration-{i}-chart", title, frame),
        )
        for i, (title, frame) in enumerate(calibration_sets(gpu))
    )
    gemm = _gemm_table(gpu)
    kernels = tuple(
        ChartedTable(
            f"Kernels of {name}",
            table_from_frame(
                f"gpu-kernels-{i}",
                frame,
                KERNEL_COLUMNS,
                kernels=("kernel",),
                top=TOP_KERNELS,
                ditto=("op_family", "dtype", "launch_op"),
            ),
        )
        for i, (name, frame) in enumerate(kernel_sets(gpu))
    )
    return GpuSection(
        runs=table_from_frame(
            "gpu-runs",
            gpu.filter(~kernel_row).with_columns(run=run_names()),
            RUN_TABLE_COLUMNS,
            percent=("peak_fraction", "roofline_fraction"),
            ditto=RUN_DITTO_COLUMNS,
            kernels=("kernel",),
        ),
        kernel_rows=gpu.filter(kernel_row).height,
        speedups=speedups,
        calibrations=calibrations,
        gemm=gemm,
        kernels=kernels,
        counters=counter_table(inputs.runs),
    )


COUNTER_DOCS: dict[str, str] = {
    "useful_utilization": "tile groups: deviceUsefulUtilization (docs/metrics.md)",
    "sol_compute": "Nsight Compute Speed Of Light: Compute (SM) Throughput, % of peak",
    "sol_memory": "Nsight Compute Speed Of Light: Memory Throughput, % of peak",
    "achieved_occupancy": "active warps per SM / the SM's maximum",
    "theoretical_occupancy": "the most active warps the launch configuration allows",
    "top_rule_speedup": "ncu's estimated speedup of its top rule",
}


def counter_table(runs: pl.DataFrame) -> Table | None:
    """Nsight Compute's per-kernel figures beside the tile groups of the same op family
    (``tileprof.analyses.kernel_metrics.utilization_beside``), or None without ncu input."""
    frame = utilization_beside(runs)
    if frame.height == 0:
        return None
    return table_from_frame(
        "gpu-counters",
        frame,
        tuple(frame.columns),
        percent=tuple(COUNTER_DOCS),
        docs=COUNTER_DOCS,
        kernels=("kernel",),
        ditto=("op_family",),
    )


def _speedup_table(gpu: pl.DataFrame) -> ChartedTable | None:
    """Speedup over baseline, where the runs name one."""
    speed = speedup_rows(gpu)
    if not speed.height:
        return None
    return ChartedTable(
        "Speedup over baseline",
        table_from_frame(
            "gpu-speedups",
            speed,
            (
                "target",
                "workload",
                "implementation",
                "baseline_implementation",
                "time_us",
                "baseline_time_us",
                "speedup",
            ),
            ditto=("target", "workload", "baseline_implementation"),
        ),
        plot=Plot("speedup", "gpu-speedups-chart", "Speedup over baseline", speed),
    )


def _gemm_table(gpu: pl.DataFrame) -> ChartedTable | None:
    """GEMM time and energy per precision, where there are GEMM runs."""
    gemm_frame = gemm_rows(gpu)
    if not gemm_frame.height:
        return None
    return ChartedTable(
        "GEMM time and energy per precision",
        table_from_frame(
            "gpu-gemm",
            gemm_frame,
            (
                "target",
                "workload",
                "implementation",
                "dtype",
                "shape",
                "time_us",
                "mac",
                "energy_j",
                "energy_raw_j",
                "peak_fraction",
            ),
            percent=("peak_fraction",),
            ditto=("target", "workload", "dtype"),
        ),
        plot=Plot("gemm", "gpu-gemm-chart", "GEMM", gemm_frame),
    )


def linked_section(linked_sets: Sequence[LinkedSet]) -> tuple[ChartedTable, ...]:
    """Each linked set side by side: one row per run, one chart per set (drawn by ``render``)."""
    out = []
    for i, linked in enumerate(linked_sets):
        extra = [
            pl.col(c).cast(t) if c in linked.runs.columns else pl.lit(None, t).alias(c)
            for c, t in LINK_EXTRA_COLUMNS.items()
        ]
        frame = (
            normalize_runs(linked.runs)
            .with_columns(linked.runs.with_columns(extra).select(list(LINK_EXTRA_COLUMNS)))
            .with_columns(target_kind=pl.col("target_kind").fill_null(""))
        )
        # time bars only where the runs do the same work; efficiency bars otherwise
        same_work = frame["compare"].drop_nulls().to_list()[:1] != ["efficiency"]
        out.append(
            ChartedTable(
                linked.key,
                table_from_frame(
                    f"linked-{i}",
                    frame,
                    LINK_COLUMNS,
                    percent=("peak_fraction", "roofline_fraction"),
                    kernels=("kernel",),
                    ditto=("target_kind", "workload", "shape", "work", "per"),
                ),
                plot=Plot(
                    "linked" if same_work else "linked_efficiency",
                    f"linked-{i}-chart",
                    linked.key,
                    frame,
                ),
            )
        )
    return tuple(out)


ROOFLINE_COLUMNS: tuple[str, ...] = (
    "target",
    "target_kind",
    "kernel",
    "dtype",
    "shape",
    "arithmetic_intensity",
    "tflops",
    "peak_tflops",
    "peak_fraction",
    "roofline_fraction",
    "bound",
    "time_us",
    "calls",
)
ROOFLINE_DOCS = {
    "arithmetic_intensity": "FLOPs / bytes moved per call (docs/runs.md, Roofline)",
    "roofline_fraction": "roofline_us / time_us: above 100% the spec is wrong",
}


DEVICE_COLUMNS: tuple[str, ...] = (
    "target",
    "file",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "devices",
    "device_min_us",
    "device_max_us",
    "device_spread",
    "slowest_device",
)
DEVICE_DOCS = {
    "devices": "devices of the target in this file that ran the run",
    "device_min_us": "the fastest device's time_us",
    "device_max_us": "the slowest device's time_us",
    "device_spread": "(device_max_us − device_min_us) / device_min_us",
    "slowest_device": "the device with device_max_us",
}


def device_spread_section(runs: pl.DataFrame) -> ChartedTable | None:
    """The runs several devices of one target ran (GPUs of one export, chips of one
    report): one row each with its spread over the devices; None when there are none."""
    rows = device_spread_rows(normalize_runs(runs))
    if rows.height == 0:
        return None
    return ChartedTable(
        "Devices of one target",
        table_from_frame(
            "device-spread",
            rows,
            DEVICE_COLUMNS,
            percent=("device_spread",),
            docs=DEVICE_DOCS,
            kernels=("kernel",),
            ditto=("target", "file"),
        ),
    )


TILE_OP_COLUMNS: tuple[str, ...] = (
    "kernel",
    "op_family",
    "shape",
    "calls",
    "total_us",
    "time_us",
    "p50_us",
    "p95_us",
    "max_us",
    "cores",
    "start_skew_us",
    "tflops",
    "peak_fraction",
    "bytes",
    "bound",
    "roofline_fraction",
    "math_fidelity",
    "op_to_op_us",
    "pm_ideal_us",
    "pm_fpu_util_percent",
    "dram_bw_util_percent",
    "noc_util_percent",
)
"""The op table of a chip: the run columns, then what its report states per op (metadata)."""
TILE_OP_METADATA: tuple[str, ...] = TILE_OP_COLUMNS[-6:]
TILE_OP_PERCENT: tuple[str, ...] = ("peak_fraction", "roofline_fraction")


def tile_op_tables(runs: pl.DataFrame) -> tuple[ChartedTable, ...]:
    """One table per chip of the per-op rows a tile-array accelerator's report gave (rows of
    ``target_kind`` tile that carry an ``op_type``: a Tenstorrent ops report), heaviest first;
    a single-chip report gets its op table here, linked or not; none when the run table has
    no metadata (its columns are the run table's, any of them may be absent)."""
    if not {"metadata", "target_kind", "target"} <= set(runs.columns):
        return ()
    meta = pl.col("metadata").cast(pl.String)
    ops = runs.filter(
        (pl.col("target_kind") == "tile") & meta.str.json_path_match("$.op_type").is_not_null()
    ).with_columns(
        meta.str.json_path_match(f"$.{key}")
        .cast(pl.String if key == "math_fidelity" else pl.Float64, strict=False)
        .alias(key)
        for key in TILE_OP_METADATA
    )
    if "device" not in ops.columns:
        ops = ops.with_columns(device=pl.lit(None, pl.String))
    tables = []
    keys = ops.select(pl.col("target", "device").cast(pl.String)).unique(maintain_order=True)
    for i, (target, device) in enumerate(keys.iter_rows()):
        frame = ops.filter(
            (pl.col("target") == target) & pl.col("device").cast(pl.String).eq_missing(device)
        ).sort("total_us", descending=True, nulls_last=True)
        table = table_from_frame(
            f"tile-ops-{i}",
            frame,
            TILE_OP_COLUMNS,
            percent=TILE_OP_PERCENT,
            kernels=("kernel",),
            top=TOP_KERNELS,
        )
        title = f"Ops of {target}" + ("" if device is None else f" · {device}")
        tables.append(ChartedTable(title, table))
    return tuple(tables)


def roofline_points(runs: pl.DataFrame) -> pl.DataFrame:
    """The runs a FLOP roofline can place: known arithmetic intensity and achieved TFLOP/s
    (GPU op rows and tile GEMM groups; memory-only ops and issue-slot tile groups have no FLOP
    count, so no point)."""
    needed = ("arithmetic_intensity", "tflops")
    if runs.height == 0 or any(c not in runs.columns for c in needed):
        return runs.clear()
    return runs.filter((pl.col("arithmetic_intensity") > 0) & (pl.col("tflops") > 0)).sort(
        ["target_kind", "target", "tflops"], descending=[True, False, True]
    )


def _roofs(points: pl.DataFrame) -> pl.DataFrame:
    """One roof per (target, dtype, matrix or vector) among ``points``: the spec's peak and
    memory bandwidth (``tileprof.core.specs``)."""
    from tileprof.core.specs import peak_key, spec_for

    rows = []
    keys = points.select("target", "dtype", "op_family").unique(maintain_order=True)
    for target, dtype, family in keys.iter_rows():
        spec, key = spec_for(target), peak_key(dtype, family)
        if spec is None or key is None:
            continue
        peak, bandwidth = spec.peak_tflops(key, target), spec.bandwidth_gbps(target)
        if peak and bandwidth:
            rows.append({"target": target, "roof": key, "peak": peak, "bandwidth": bandwidth})
    schema = {"target": pl.String, "roof": pl.String, "peak": pl.Float64, "bandwidth": pl.Float64}
    return pl.DataFrame(rows, schema=schema).unique(maintain_order=True)


def _linked_points(sets: Sequence[LinkedSet]) -> pl.DataFrame:
    """Each linked set's members that have a point: (set, target, intensity, TFLOP/s)."""
    rows: list[dict[str, Any]] = []
    for linked in sets:
        frame = linked.runs
        if "arithmetic_intensity" not in frame.columns:
            continue
        placed = frame.filter((pl.col("arithmetic_intensity") > 0) & (pl.col("tflops") > 0)).select(
            "target", "arithmetic_intensity", "tflops"
        )
        if placed.height >= 2:
            rows.extend({"set": linked.key, **r} for r in placed.iter_rows(named=True))
    schema = {
        "set": pl.String,
        "target": pl.String,
        "arithmetic_intensity": pl.Float64,
        "tflops": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema)


def roofline_section(runs: pl.DataFrame, sets: Sequence[LinkedSet]) -> ChartedTable | None:
    """Every target's ops and tile groups at (arithmetic intensity, achieved TFLOP/s), each
    target's roofs, the members of each linked set joined; None when nothing has a point."""
    points = roofline_points(normalize_runs(runs))
    if points.height == 0:
        return None
    return ChartedTable(
        "Roofline",
        table_from_frame(
            "roofline",
            points,
            ROOFLINE_COLUMNS,
            percent=("peak_fraction", "roofline_fraction"),
            docs=ROOFLINE_DOCS,
            kernels=("kernel",),
            ditto=("target", "target_kind"),
        ),
        plot=RooflinePlot(
            "roofline", "roofline-chart", "Roofline", points, _roofs(points), _linked_points(sets)
        ),
    )


# ---------------------------------------------------------------- the whole report


def build_report(
    profiles: Sequence[Profile],
    runs: RunInputs | None = None,
    *,
    inputs: Sequence[InputFile] = (),
    filters: Filters | None = None,
    group_by: Sequence[str] = (),
    tile_filters: Sequence[Filters] | None = None,
    version: str | None = None,
    environ: dict[str, str] | None = None,
    charts: bool = True,
    bins: int = TIME_BINS,
    findings: Sequence[Finding] | None = None,
    command: str | None = None,
    checks: pl.DataFrame | None = None,
) -> Report:
    """The report's view model for these tile profiles and GPU runs.

    ``charts=False`` makes ``render`` leave the charts out (the model itself never draws).
    ``findings`` (the rule table's outcomes over every input, ``ReportInputs.findings``) head
    the page; without them, the findings of the tile profiles alone are shown.
    ``command`` is the command line the header records. ``checks`` (the capture checks of
    every input) open the page; a tile section whose dump fails a check that undermines the
    headline shows its headline figures as abstained, with the reason.
    ``filters`` apply to every profile unless ``tile_filters`` gives one per profile (the
    example profile is filtered to epoch 1, as its reference summary was).
    """
    generated_at = generation_time(environ)  # first: a malformed value fails before any work
    if version is None:
        from tileprof._version import __version__

        version = __version__
    filters = filters or Filters()
    chosen = list(tile_filters) if tile_filters is not None else [filters] * len(profiles)
    if len(chosen) != len(profiles):
        raise ValueError("tile_filters needs one Filters per profile")
    tiles = tuple(
        tile_section(profile, own, group_by=group_by, id=f"tile-{i}", bins=bins)
        for i, (profile, own) in enumerate(zip(profiles, chosen, strict=True))
    )
    gpu = None if runs is None else gpu_section(runs)
    linked = () if runs is None else linked_section(runs.linked_sets)
    targets = _targets(profiles, runs)
    if findings is None:
        findings = profile_findings(profiles, chosen)
    frames = [tile_quality(p.samples, p.tile_count, p.source or "(in memory)") for p in profiles]
    cpu_only, notes = ((), ()) if runs is None else (runs.cpu_only_traces, runs.notes)
    notes = (*notes, *(note for p in profiles for note in p.notes))  # a dump reader's too
    frames.append(run_quality(cpu_only, notes))
    quality = [QualityCheck(*row) for frame in frames for row in frame.iter_rows()]
    header = Header(
        title="tileprof utilization report",
        targets=tuple(dict.fromkeys(targets)),
        inputs=tuple(inputs),
        filters=tuple(
            f"{tile.source}: {' '.join(tile.filters) if tile.filters else 'none'}" for tile in tiles
        ),
        group_by=tuple(group_by),
        version=version,
        generated_at=generated_at,
        command=command,
    )
    roofline = devices = None
    if runs is not None:
        roofline = roofline_section(runs.runs, runs.linked_sets)
        devices = device_spread_section(runs.runs)
    report = Report(
        header,
        tiles,
        gpu,
        linked,
        tuple(quality),
        draw_charts=charts,
        findings=tuple(findings),
        roofline=roofline,
        devices=devices,
        tile_ops=() if runs is None else tile_op_tables(runs.runs),
    )
    return with_checks(report, checks)


def with_checks(report: Report, checks: pl.DataFrame | None) -> Report:
    """The report opening with the capture checks of its inputs, each tile section's
    headline and supersteps abstained where a failed check of its dump undermines them, the
    GPU runs and the breakdown naming the failed checks that undermine their rows, and the
    inputs no check read named as unchecked (None: unchanged)."""
    from tileprof.analyses.integrity import reasons

    if checks is None:
        return report
    tiles = tuple(
        withheld_supersteps(abstained_headline(tile, checks), checks) for tile in report.tiles
    )
    breakdown = report.breakdown and withheld_breakdown(report.breakdown, checks)
    gpu = report.gpu and dataclasses.replace(
        report.gpu,
        withheld=tuple(dict.fromkeys([*reasons(checks, "ops"), *reasons(checks, "kernels")])),
    )
    rows = tuple(checks.to_dicts())
    checked = {row["input"] for row in rows}
    unchecked = tuple(
        (f.path, f.kind)
        for f in report.header.inputs
        if f.path not in checked and f.kind != LINKS_KIND
    )
    return dataclasses.replace(
        report, tiles=tiles, gpu=gpu, breakdown=breakdown, checks=rows, unchecked=unchecked
    )


HEADLINE_KEPT = ("Samples matched / total",)
"""Headline figures that no capture check undermines (counts, not rates over a span)."""


def withheld_breakdown(section: BreakdownSection, checks: pl.DataFrame) -> BreakdownSection:
    """``section`` naming each failed capture check that undermines the breakdown, with the
    trace it is of as the breakdown's tables name it (the path as given where two traces
    share a file name, else the file name: ``model.naming.display_names``; "" for a check
    across a job's ranks, whose input is no file)."""
    from pathlib import Path

    from tileprof.analyses.integrity import failed, reason_text
    from tileprof.model.integrity import JOB_INPUT
    from tileprof.views.html.leads import cell_text

    table = section.tables[0][1] if section.tables else None
    shown = {cell_text(table, r, "trace") for r in table.rows} if table else set()

    def trace_of(given: str) -> str:
        if given.startswith(JOB_INPUT):
            return ""
        return given if given in shown else Path(given).name

    bad = failed(checks).filter(pl.col("undermines").list.contains("breakdown"))
    withheld = tuple(
        (trace_of(row["input"]), reason_text(row)) for row in bad.iter_rows(named=True)
    )
    return dataclasses.replace(section, withheld=withheld) if withheld else section


def withheld_supersteps(tile: TileSection, checks: pl.DataFrame) -> TileSection:
    """``tile`` with its Supersteps part abstained when a failed capture check of its dump
    undermines the supersteps or the ranked edits (docs/metrics.md, "Abstention")."""
    from tileprof.analyses.integrity import reasons

    if tile.supersteps is None:
        return tile
    own = checks.filter(pl.col("input") == tile.source)
    why = tuple(dict.fromkeys([*reasons(own, "supersteps"), *reasons(own, "candidates")]))
    if not why:
        return tile
    supersteps = dataclasses.replace(tile.supersteps, withheld=why, candidates=None)
    return dataclasses.replace(tile, supersteps=supersteps)


def abstained_headline(tile: TileSection, checks: pl.DataFrame | None) -> TileSection:
    """``tile`` with its headline figures abstained when a failed capture check of its dump
    undermines them (``tileprof.analyses.integrity``; docs/metrics.md, "Capture checks")."""
    from tileprof.analyses.integrity import reasons

    own = None if checks is None else checks.filter(pl.col("input") == tile.source)
    why = reasons(own, "headline")
    if not why:
        return tile
    text = "abstained: " + "; ".join(why)
    figures = tuple(
        f if f.label in HEADLINE_KEPT else dataclasses.replace(f, value=None, text=text)
        for f in tile.headline
    )
    return dataclasses.replace(tile, headline=figures)


def _targets(profiles: Sequence[Profile], runs: RunInputs | None) -> list[str]:
    """The tile profiles' targets, then the GPU runs' in first-seen order."""
    targets: list[str] = [p.target for p in profiles]
    if runs is not None and runs.runs.height and "target" in runs.runs.columns:
        targets.extend(
            t
            for t in runs.runs["target"]
            .cast(pl.String)
            .unique(maintain_order=True)
            .drop_nulls()
            .to_list()
            if t not in targets
        )
    return targets


def profile_findings(profiles: Sequence[Profile], filters: Sequence[Filters]) -> list[Finding]:
    """The rule table over the tile profiles' frames (the GPU rules abstain: no GPU input)."""
    parts = [
        profile_frames(p, f, p.source or p.target) for p, f in zip(profiles, filters, strict=True)
    ]
    return evaluate(combined(parts))
