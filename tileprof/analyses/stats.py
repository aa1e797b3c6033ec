"""Per-group statistics over a sample frame (definitions: docs/metrics.md).

polars groups the samples (a list of row numbers per group); the compiled core
(crates/tileprof-groups) computes every statistic from them, reading the frame in place, and
polars derives the ratios from those. No Python loop touches samples. Group keys stay
categorical until the (small) result, so no per-sample strings are built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from tileprof.analyses.filters import group_name
from tileprof.core.cpus import usable_cores
from tileprof.core.errors import OptionError

GROUP_DIMENSIONS: tuple[str, ...] = ("epoch", "operation", "kind", "phase", "tile")
"""Columns ``--group-by`` may add to the group key."""

GROUP_FIELDS: tuple[str, ...] = (
    "sampleCount",
    "tileCount",
    "phaseCount",
    "phaseCycles",
    "phaseMs",
    "workCycles",
    "averageActiveTiles",
    "usefulCycles",
    "estimatedWorkCycles",
    "usefulUtilization",
    "workLaneOccupancy",
    "deviceUsefulUtilization",
    "meanCycles",
    "p50Cycles",
    "p95Cycles",
    "maximumCycles",
    "firstOffset",
    "lastOffset",
)
"""The statistics of a group, in the reference summary's order."""

PERCENTILES: tuple[int, ...] = (50, 95)


def check_dimensions(group_by: Sequence[str]) -> tuple[str, ...]:
    """Validate ``--group-by`` dimensions, keeping their order and dropping repeats.

    One dimension may be given as a plain string (``group_by="kind"``).
    """
    if isinstance(group_by, str):
        group_by = (group_by,)
    unknown = [d for d in group_by if d not in GROUP_DIMENSIONS]
    if unknown:
        raise OptionError(
            f"--group-by {unknown[0]!r}: unknown dimension (one of {', '.join(GROUP_DIMENSIONS)})"
        )
    return tuple(dict.fromkeys(group_by))


_ROW = "rows"
"""The row-index column whose list per group hands the groups to the compiled core (which
reads the column by this name)."""
_CORE_FIELDS: tuple[str, ...] = (
    "sampleCount",
    "tileCount",
    "phaseCount",
    "phaseCycles",
    "workCycles",
    "estimatedWorkCycles",
    "usefulCycles",
    "physicalWorkCycles",
    *(f"p{p}Cycles" for p in PERCENTILES),
    "maximumCycles",
    "firstOffset",
    "lastOffset",
)
"""The statistics the compiled core gives, in its order (an empty table's columns)."""
_FLOAT_FIELDS = ("usefulCycles", "physicalWorkCycles")
"""Those of them that are sums of floats (the others are Int64)."""
_SAMPLE_COLUMNS = ("offset", "duration", "tile", "phase", "usefulCycles", "physicalWorkCycles")
"""The sample columns it reads."""


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(None)


def group_statistics(
    samples: pl.DataFrame,
    *,
    tile_count: int,
    clock_hz: float,
    group_by: Sequence[str] = (),
) -> pl.DataFrame:
    """One row per group: ``name``, the ``group_by`` dimensions, then ``GROUP_FIELDS``.

    Ordered by phaseCycles descending, then name and dimensions ascending.
    """
    dimensions = check_dimensions(group_by)
    keys = ["name", *dimensions]
    grouped = (
        samples.lazy()
        .with_row_index(_ROW)
        .with_columns(name=group_name())
        .group_by(keys)
        .agg(pl.col(_ROW))
        .collect()
    )
    aggregated = pl.concat(
        [grouped.drop(_ROW), _core_statistics(samples, grouped.select(_ROW))], how="horizontal"
    )
    phase = pl.col("phaseCycles")
    useful = pl.col("usefulCycles")
    derived = aggregated.lazy().with_columns(
        phaseMs=phase.map_batches(
            lambda cycles: _cycles_to_ms(cycles, clock_hz), return_dtype=pl.Float64
        ),
        averageActiveTiles=_ratio(pl.col("workCycles"), phase),
        usefulUtilization=_ratio(useful, pl.col("estimatedWorkCycles")),
        workLaneOccupancy=_ratio(useful, pl.col("physicalWorkCycles")),
        deviceUsefulUtilization=pl.when(pl.col("estimatedWorkCycles") > 0)
        .then(_ratio(useful, phase.cast(pl.Float64) * tile_count))
        .otherwise(None),
        meanCycles=pl.col("workCycles") / pl.col("sampleCount"),
    )
    selected = derived.select(pl.col("name").cast(pl.String), *dimensions, *GROUP_FIELDS)
    return order_groups(selected, dimensions).collect()


def _core_statistics(samples: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame:
    """``_CORE_FIELDS`` of each group (its rows: ``rows``' list per group), computed by the
    compiled core (crates/tileprof-groups): one pass over the frame in row order, then one
    over each group's durations for the percentiles.

    polars computed the union, the percentiles and the distinct counts by gathering every
    group's columns, all groups at once: 1.8 GB on top of a 20M-sample frame of 1.38 GB, and
    most of a group table's time; its float sums gathered each float column again (another
    0.28 GB at 20M samples) and added in an order of its own. The core reads the frame in
    place through the row lists and adds the floats in row order (docs/metrics.md), the
    order a plain re-aggregation adds them in. Nothing depends on the number of threads.
    """
    if rows.height == 0:
        schema = {f: pl.Float64 if f in _FLOAT_FIELDS else pl.Int64 for f in _CORE_FIELDS}
        return pl.DataFrame(schema=schema)
    import tileprof.core._native as compiled

    columns = samples.select(_SAMPLE_COLUMNS).rechunk()
    try:
        table = compiled.group_statistics(
            columns, rows.rechunk(), percents=list(PERCENTILES), jobs=usable_cores()
        )
    except compiled.GroupsError as error:  # a bug of tileprof's, said in one line
        kind, message = error.args
        raise RuntimeError(f"internal error in the group table ({kind}: {message})") from error
    return pl.DataFrame(table)


FrameT = TypeVar("FrameT", pl.DataFrame, pl.LazyFrame)


def order_groups(groups: FrameT, dimensions: Sequence[str] = ()) -> FrameT:
    """Groups in table order: phaseCycles descending, then name and dimensions ascending.

    Also orders group rows computed in parts (the store's group buckets) when put together.
    """
    order: list[str] = ["name", *dimensions]
    return groups.sort(
        ["phaseCycles", *order], descending=[True] + [False] * len(order), nulls_last=True
    )


def _cycles_to_ms(cycles: pl.Series, clock_hz: float) -> pl.Series:
    """cycles × 1000 / clockHz by true division, identical from run to run.

    Polars' division by a literal multiplies by the reciprocal on some chunk layouts and
    divides on others, so the last bit of phaseMs changed with thread scheduling: golden
    aggregates flapped, and two of seed 004's phaseMs values differ in the last bit from
    the reciprocal form. Dividing by a column of clockHz (as long as ``cycles``) divides
    element by element, as the reference tool did (and as numpy did here before: the same bits,
    int64 products wrapping alike, without importing numpy for a summary).
    """
    milli = (cycles.cast(pl.Int64) * 1000).cast(pl.Float64)
    clock = pl.repeat(float(clock_hz), cycles.len(), dtype=pl.Float64, eager=True)
    return (milli / clock).alias(cycles.name)


def profile_span(samples: pl.DataFrame) -> int | None:
    """max(offset + duration) − min(offset) over the samples; None when there are none."""
    if samples.height == 0:
        return None
    span = samples.select((pl.col("offset") + pl.col("duration")).max() - pl.col("offset").min())
    return int(span.item())
