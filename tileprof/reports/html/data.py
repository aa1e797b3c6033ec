"""The report's view model: plain, typed data that the templates render and tests check.

Everything the page shows is computed here, once, from a ``Profile`` (tile dumps) and a run
table (GPU runs); the Jinja2 templates only lay it out and ``charts`` draws it at render
time. Numbers are binned with numpy so a million samples cost a few array passes, never a
Python loop per sample. Definitions of every figure: docs/metrics.md, "Report".
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np
import polars as pl

from tileprof.errors import OptionError
from tileprof.filters import Filters, group_name
from tileprof.model import Profile
from tileprof.reports.html.view import (  # re-exported: callers import them from here
    IDLE,
    LEGEND_GROUPS,
    OTHER,
    TIME_BINS,
    ActiveTiles,
    Cell,
    ChartedTable,
    Column,
    DurationSpread,
    Figure,
    GpuSection,
    Header,
    InputFile,
    LinkedSet,
    OccupancyMap,
    PhaseSplit,
    Plot,
    QualityCheck,
    Report,
    RunInputs,
    Table,
    TileBalance,
    TileSection,
    TimeBins,
)
from tileprof.stats import GROUP_FIELDS
from tileprof.summary import Summary

# ---------------------------------------------------------------- formatting


def format_number(value: Any, *, percent: bool = False, digits: int = 4) -> str:
    """How the page prints a number (the exact value goes in the cell's hover title).

    Integers, and floats holding a whole number, in full with thousands separators (cycle
    counts are never in scientific notation); other floats to ``digits`` significant figures
    (1.426, 0.01234, 123.5), rounded to a whole number with separators from 1,000 up so no
    digit of the whole part is lost; below 1e-4, scientific notation. Null as "—".
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if percent:
        return f"{value * 100:.2f} %"
    if isinstance(value, (bool, np.bool_)):
        return str(value)
    if isinstance(value, (int, np.integer)):
        return f"{int(value):,}"
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    size = abs(value)
    if value.is_integer() or size >= 1000:
        return f"{value:,.0f}"
    if size < 1e-4:
        return f"{value:.{digits}g}"
    text = f"{value:#.{digits}g}"
    if "e" in text or abs(float(text)) >= 1000:  # rounded up to 1,000
        return f"{value:,.0f}"
    return text.rstrip(".")


def number_cell(value: Any, *, percent: bool = False) -> Cell:
    """A numeric cell whose title holds the exact value."""
    sort = None if value is None or (isinstance(value, float) and math.isnan(value)) else value
    return Cell(
        format_number(value, percent=percent),
        None if sort is None else float(sort),
        "" if sort is None else repr(value),
    )


def text_cell(value: Any) -> Cell:
    """A text cell (escaped by the template, as every cell is)."""
    text = "—" if value is None else str(value)
    return Cell(text, None if value is None else text.lower(), text if len(text) > 40 else "")


def table_from_frame(
    id: str,
    frame: pl.DataFrame,
    columns: Sequence[str],
    *,
    percent: Sequence[str] = (),
    docs: dict[str, str] | None = None,
) -> Table:
    """A table of ``frame``'s ``columns`` (absent ones show as null)."""
    docs = docs or {}
    present = [c for c in columns if c in frame.columns]
    cols = []
    for name in present:
        dtype = frame.schema[name]
        cols.append(Column(name, name, dtype.is_numeric(), docs.get(name, "")))
    rows = []
    for row in frame.select(present).iter_rows():
        cells = []
        for column, value in zip(cols, row, strict=False):
            if column.numeric:
                cells.append(number_cell(value, percent=column.key in percent))
            else:
                cells.append(text_cell(value))
        rows.append(tuple(cells))
    return Table(id, tuple(cols), tuple(rows))


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


def group_table(summary: Summary, id: str) -> Table:
    """Every group with every statistic of docs/metrics.md, in the summary's order."""
    columns = ["name", *summary.group_by, *GROUP_FIELDS]
    frame = summary.groups.with_columns(
        [pl.col(d).cast(pl.String) for d in summary.group_by if d in ("operation", "kind")]
    )
    return table_from_frame(id, frame, columns, percent=GROUP_PERCENT_FIELDS)


def time_bins(start: int, stop: int, count: int = TIME_BINS) -> TimeBins:
    """``count`` bins of whole cycles covering [start, stop) (one bin for an empty span)."""
    span = max(stop - start, 1)
    width = max(-(-span // count), 1)
    return TimeBins(start, max(stop, start + 1), width, -(-span // width))


def binned_cycles(
    starts: np.ndarray, ends: np.ndarray, keys: np.ndarray, key_count: int, bins: TimeBins
) -> np.ndarray:
    """Cycles of the intervals [start, end) falling in each (key, bin): shape (keys, bins).

    Each interval adds its partial first and last bins directly and its full middle bins
    through a difference array, so the cost is O(intervals + keys × bins) whatever the lengths.
    """
    nb, w = bins.count, bins.width
    rel_start = starts - bins.start
    rel_end = ends - bins.start
    b0 = np.clip(rel_start // w, 0, nb - 1)
    b1 = np.clip(np.maximum(rel_end - 1, rel_start) // w, 0, nb - 1)
    base = keys.astype(np.int64) * nb
    size = key_count * nb
    same = b0 == b1
    split = ~same
    s0, s1, sb = b0[split], b1[split], base[split]
    # Partial bins in one pass: whole samples in one bin, and the head and tail of the others.
    direct = np.bincount(
        np.concatenate((base[same] + b0[same], sb + s0, sb + s1)),
        weights=np.concatenate(
            (
                (rel_end - rel_start)[same],
                (s0 + 1) * w - rel_start[split],
                rel_end[split] - s1 * w,
            )
        ).astype(np.float64),
        minlength=size,
    )
    # Full middle bins: +w from the bin after the head, −w from the tail's bin, then cumsum.
    diff = np.bincount(
        np.concatenate((sb + s0 + 1, sb + s1)),
        weights=np.concatenate((np.full(s0.size, w), np.full(s0.size, -w))).astype(np.float64),
        minlength=size + 1,
    )
    full = np.cumsum(diff[:size].reshape(key_count, nb), axis=1)
    return direct[:size].reshape(key_count, nb) + full


def _combinations(samples: pl.DataFrame) -> pl.DataFrame:
    """Work per distinct (kernel, kind) pair, with its group name: a few rows, however many
    samples (grouping categoricals works on their codes, no string per sample)."""
    return (
        samples.group_by(["kernel", "kind"])
        .agg(w=pl.col("duration").sum())
        .with_columns(g=group_name().fill_null("(none)"))
    )


def _legend(combinations: pl.DataFrame, limit: int) -> tuple[str, ...]:
    if combinations.height == 0:
        return ()
    work = (
        combinations.group_by("g").agg(pl.col("w").sum()).sort(["w", "g"], descending=[True, False])
    )
    names = tuple(work["g"].to_list())
    return names if len(names) <= limit else (*names[:limit], OTHER)


def _codes(samples: pl.DataFrame, pairs: pl.DataFrame, values: list[int]) -> np.ndarray:
    """Per sample, the value of its (kernel, kind) pair in ``pairs`` (joined on codes)."""
    table = pairs.select("kernel", "kind").with_columns(_v=pl.Series(values, dtype=pl.Int64))
    joined = samples.select("kernel", "kind").join(
        table, on=["kernel", "kind"], how="left", nulls_equal=True, maintain_order="left"
    )
    return joined["_v"].to_numpy()


def tile_activity(
    matched: pl.DataFrame, tile_count: int, bins_count: int = TIME_BINS
) -> tuple[OccupancyMap | None, ActiveTiles | None]:
    """The occupancy map and the active-tiles curve of the matched samples (tiles in range)."""
    in_range = matched.filter(pl.col("tile") < tile_count)
    if in_range.height == 0:
        return None, None
    starts = in_range["offset"].to_numpy().astype(np.int64)
    ends = starts + in_range["duration"].to_numpy().astype(np.int64)
    bins = time_bins(int(starts.min()), int(ends.max()), bins_count)
    pairs = _combinations(in_range)
    legend = _legend(pairs, LEGEND_GROUPS)
    lookup = {name: i for i, name in enumerate(legend)}
    other = lookup.get(OTHER, len(legend) - 1)
    groups = _codes(in_range, pairs, [lookup.get(g, other) for g in pairs["g"].to_list()])
    tiles = in_range["tile"].to_numpy().astype(np.int64)
    g = len(legend)
    cycles = binned_cycles(starts, ends, tiles * g + groups, tile_count * g, bins)
    per_tile = cycles.reshape(tile_count, g, bins.count)
    dominant = per_tile.argmax(axis=1).astype(np.int16)
    dominant[per_tile.sum(axis=1) <= 0] = IDLE
    covered = bins.covered
    series = per_tile.sum(axis=0) / covered
    pair_kinds = pairs["kind"].cast(pl.String).fill_null("(none)").to_list()
    kind_names = sorted(set(pair_kinds))
    kind_keys = _codes(in_range, pairs, [kind_names.index(k) for k in pair_kinds])
    by_kind_cycles = binned_cycles(starts, ends, kind_keys, len(kind_names), bins)
    by_kind = {k: by_kind_cycles[i] / covered for i, k in enumerate(kind_names)}
    return OccupancyMap(bins, legend, dominant), ActiveTiles(bins, legend, series, by_kind)


def tile_balance(matched: pl.DataFrame, tile_count: int) -> TileBalance:
    """Busy cycles per tile, idle tiles included, so an idle or overloaded tile stands out."""
    in_range = matched.filter(pl.col("tile") < tile_count)
    busy = np.bincount(
        in_range["tile"].to_numpy().astype(np.int64),
        weights=in_range["duration"].to_numpy().astype(np.float64),
        minlength=tile_count,
    ).astype(np.int64)
    return TileBalance(
        busy=busy,
        minimum=int(busy.min()),
        mean=float(busy.mean()),
        maximum=int(busy.max()),
        idle_tiles=int((busy == 0).sum()),
        min_tile=int(busy.argmin()),
        max_tile=int(busy.argmax()),
    )


def _display_names(summary: Summary) -> tuple[str, ...]:
    names = []
    for row in summary.groups.iter_rows(named=True):
        dims = ", ".join(f"{d}={row[d]}" for d in summary.group_by)
        names.append(f"{row['name']} ({dims})" if dims else str(row["name"]))
    return tuple(names)


def phase_split(summary: Summary) -> PhaseSplit:
    """Each group's phaseCycles split by its usefulUtilization (no estimate: all "other")."""
    groups = summary.groups
    phase = groups["phaseCycles"].cast(pl.Float64).fill_null(0).to_numpy()
    share = groups["usefulUtilization"].fill_null(0.0).clip(0.0, 1.0).to_numpy()
    useful = phase * share
    return PhaseSplit(_display_names(summary), useful, phase - useful)


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
    if matched.height:
        totals = matched.select(
            span=(pl.col("offset") + pl.col("duration")).max() - pl.col("offset").min(),
            work=pl.col("duration").sum(),
            useful=pl.col("usefulCycles").sum(),
        ).row(0, named=True)
        span, work, useful = int(totals["span"]), float(totals["work"]), float(totals["useful"])
    active = work / span if span else None
    busy = None if active is None else active / summary.tile_count
    device = useful / (summary.tile_count * span) if span else None
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
    charts: bool = True,
) -> TileSection:
    """The tile-device section of one profile (``render`` draws its charts; ``charts`` is
    accepted for callers of the earlier signature and changes nothing)."""
    summary = profile.summary(filters, group_by=group_by, top=0)
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
        phase=phase_split(summary),
        spread=duration_spread(summary),
        balance=tile_balance(matched, profile.tile_count),
    )


# ---------------------------------------------------------------- data quality


def overlapping_samples(samples: pl.DataFrame) -> tuple[int, int]:
    """Samples that start before an earlier sample of the same tile ends; tiles affected.

    Sorted by (tile, offset, duration), so of two samples starting together the shorter comes
    first and is not flagged (a zero-length one never is, at another's start). Each tile's
    intervals are shifted by tile rank × (span + 1), so one running maximum of ends over the
    whole array restarts at every tile.
    """
    if samples.height == 0:
        return 0, 0
    ordered = samples.select("tile", "offset", "duration").sort(["tile", "offset", "duration"])
    tile = ordered["tile"].to_numpy()
    offset = ordered["offset"].to_numpy().astype(np.int64)
    end = offset + ordered["duration"].to_numpy().astype(np.int64)
    low = int(offset.min())
    width = int(end.max()) - low + 1
    rank = np.cumsum(np.r_[0, tile[1:] != tile[:-1]])
    if width * (int(rank[-1]) + 1) >= 2**62:  # would overflow: per-tile window instead
        flagged = (
            ordered.lazy()
            .with_columns(
                prev=(pl.col("offset") + pl.col("duration")).cum_max().shift(1).over("tile")
            )
            .filter(pl.col("offset") < pl.col("prev"))
            .select(n=pl.len(), tiles=pl.col("tile").n_unique())
            .collect()
        )
        return int(flagged["n"][0]), int(flagged["tiles"][0])
    shift = rank * width - low
    covered = np.maximum.accumulate(end + shift)
    hit = np.zeros(tile.size, dtype=bool)
    hit[1:] = (offset[1:] + shift[1:]) < covered[:-1]
    return int(hit.sum()), int(np.unique(tile[hit]).size)


def tile_quality(profile: Profile) -> list[QualityCheck]:
    """Checks on one dump's samples, all of them (filters do not hide problems)."""
    samples = profile.samples
    name = profile.source or "(in memory)"
    overlaps, overlap_tiles = overlapping_samples(samples)
    above = samples.filter(pl.col("tile") >= profile.tile_count)
    no_meta = samples["metadataId"].null_count()
    no_useful = samples["usefulCycles"].null_count()

    def status(count: int) -> str:
        return "ok" if count == 0 else "warn"

    return [
        QualityCheck(
            "Samples overlapping on one tile",
            overlaps,
            status(overlaps),
            f"{name}: {overlaps:,} samples start before an earlier sample on the same tile "
            f"ends ({overlap_tiles:,} tiles)",
        ),
        QualityCheck(
            "Tiles above tileCount",
            above.height,
            status(above.height),
            f"{name}: {above.height:,} samples on tiles ≥ {profile.tile_count:,} "
            f"({above['tile'].n_unique() if above.height else 0:,} tiles); left out of the maps",
        ),
        QualityCheck(
            "Samples with no metadata",
            no_meta,
            "info" if no_meta else "ok",
            f"{name}: {no_meta:,} of {samples.height:,} samples carry no metadata; "
            f"{no_useful:,} carry no usefulCycles",
        ),
    ]


def run_quality(inputs: RunInputs | None) -> list[QualityCheck]:
    """CPU-only traces and the parsers' notes."""
    cpu = () if inputs is None else inputs.cpu_only_traces
    notes = () if inputs is None else inputs.notes
    return [
        QualityCheck(
            "CPU-only traces",
            len(cpu),
            "info" if cpu else "ok",
            "; ".join(cpu) if cpu else "no trace without GPU events",
        ),
        QualityCheck(
            "Parser notes",
            len(notes),
            "info" if notes else "ok",
            "; ".join(notes) if notes else "nothing to note",
        ),
    ]


# ---------------------------------------------------------------- GPU runs

RUN_TABLE_COLUMNS: tuple[str, ...] = (
    "target",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "time_us",
    "calls",
    "mac",
    "energy_j",
    "energy_raw_j",
    "baseline_implementation",
    "baseline_time_us",
    "speedup",
    "peak_fraction",
)
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
    "per",
    "time_us",
    "peak_fraction",
    "energy_j",
)
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
    "launch_op": pl.String(),
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
    """
    return (
        (pl.col("target_kind") == "gpu")
        & (pl.col("per") == "call").fill_null(False)
        & pl.col("total_us").is_not_null()
    )


def kernel_sets(runs: pl.DataFrame) -> list[tuple[str, pl.DataFrame]]:
    """Per (file, target): its per-kernel rows, by total time; titled "FILE · TARGET"."""
    rows = runs.filter(is_kernel_row())
    rows = rows.with_columns(
        file=pl.col("source").map_elements(source_file, return_dtype=pl.String),
        target=pl.col("target").fill_null("(unknown target)"),
    )
    return [
        (f"{file} · {target}", frame.sort("total_us", descending=True, nulls_last=True))
        for (file, target), frame in rows.group_by(["file", "target"], maintain_order=True)
    ]


def gpu_section(inputs: RunInputs, *, charts: bool = True) -> GpuSection | None:
    """The GPU section, or None when there are no GPU runs (``charts``: as ``tile_section``)."""
    runs = normalize_runs(inputs.runs)
    gpu = runs.filter(pl.col("target_kind") == "gpu")
    if gpu.height == 0:
        return None

    speed = speedup_rows(gpu)
    speedups = None
    if speed.height:
        speedups = ChartedTable(
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
            ),
            plot=Plot("speedup", "gpu-speedups-chart", "Speedup over baseline", speed),
        )
    calibrations = tuple(
        ChartedTable(
            f"Calibration: {title}",
            table_from_frame(
                f"gpu-calibration-{i}",
                frame,
                ("implementation", "time_us", "baseline_implementation", "speedup"),
            ),
            plot=Plot("calibration", f"gpu-calibration-{i}-chart", title, frame),
        )
        for i, (title, frame) in enumerate(calibration_sets(gpu))
    )
    gemm_frame = gemm_rows(gpu)
    gemm = None
    if gemm_frame.height:
        gemm = ChartedTable(
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
            ),
            plot=Plot("gemm", "gpu-gemm-chart", "GEMM", gemm_frame),
        )
    kernels = tuple(
        ChartedTable(
            f"Kernels of {name}",
            table_from_frame(f"gpu-kernels-{i}", frame, KERNEL_COLUMNS),
        )
        for i, (name, frame) in enumerate(kernel_sets(gpu))
    )
    return GpuSection(
        runs=table_from_frame("gpu-runs", gpu, RUN_TABLE_COLUMNS, percent=("peak_fraction",)),
        kernel_rows=gpu.filter(is_kernel_row()).height,
        speedups=speedups,
        calibrations=calibrations,
        gemm=gemm,
        kernels=kernels,
    )


def linked_section(
    linked_sets: Sequence[LinkedSet], *, charts: bool = True
) -> tuple[ChartedTable, ...]:
    """Each linked set side by side: one row per run, one chart per set (drawn by ``render``)."""
    out = []
    for i, linked in enumerate(linked_sets):
        frame = normalize_runs(linked.runs).with_columns(
            target_kind=pl.col("target_kind").fill_null("")
        )
        out.append(
            ChartedTable(
                linked.key,
                table_from_frame(f"linked-{i}", frame, LINK_COLUMNS, percent=("peak_fraction",)),
                plot=Plot("linked", f"linked-{i}-chart", linked.key, frame),
            )
        )
    return tuple(out)


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
) -> Report:
    """The report's view model for these tile profiles and GPU runs.

    ``charts=False`` makes ``render`` leave the charts out (the model itself never draws).
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
    quality: list[QualityCheck] = []
    for profile in profiles:
        quality.extend(tile_quality(profile))
    quality.extend(run_quality(runs))
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
    )
    return Report(header, tiles, gpu, linked, tuple(quality), draw_charts=charts)
