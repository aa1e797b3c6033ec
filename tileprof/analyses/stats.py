"""Per-group statistics over a sample frame (definitions: docs/metrics.md).

Everything here is a polars expression evaluated per group; no Python loop touches samples.
Group keys stay categorical until the (small) result, so no per-sample strings are built.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import polars as pl

from tileprof.analyses.filters import group_name
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


def _rank_index(percent: int) -> pl.Expr:
    """The 0-based index of rank ⌈percent·n/100⌉ among n values (integer arithmetic)."""
    return (pl.len() * percent + 99) // 100 - 1


def nearest_rank(column: str, percent: int) -> pl.Expr:
    """The value at 1-based rank ⌈percent·n/100⌉ of the ascending values (integer arithmetic)."""
    return pl.col(column).sort().get(_rank_index(percent))


def nearest_ranks(column: str, percents: Sequence[int]) -> pl.Expr:
    """``nearest_rank`` of each of ``percents``, as one list per group in their order.

    A group aggregation sorts its values once for every percentile it picks (polars does not
    share the sort between two aggregations): picking them all from one sort halves the cost
    of p50 and p95, the dearest statistics of a group table."""
    ranks = [_rank_index(percent) for percent in percents]
    return pl.col(column).sort().gather(pl.concat_list(ranks).explode())


def union_length(offset: str = "offset", end: str = "_end", *, in_order: bool = False) -> pl.Expr:
    """Length of the union of a group's intervals [offset, end), as a group aggregation.

    The span from the first start to the last end, less its gaps: in offset order, an interval
    that starts after every earlier one has ended (the earlier ones all start no later, so
    together they cover up to their running maximum end) leaves a gap from that end to its
    start. How intervals that start together are ordered changes no gap. Sorting inside the
    aggregation sorts each group alone, in parallel. ``in_order``: the frame is in offset order
    already (as dumps usually are), so each group is too (a group keeps its rows' order) and
    nothing is sorted: the sorts were half of a group table's cost.
    """
    starts = pl.col(offset) if in_order else pl.col(offset).sort()
    ends = pl.col(end) if in_order else pl.col(end).sort_by(offset)
    covered_until = ends.cum_max().shift(1)
    gaps = (starts - covered_until).clip(lower_bound=0).sum()
    return pl.col(end).max() - pl.col(offset).min() - gaps


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
    carries_useful = pl.col("usefulCycles").is_not_null()
    in_offset_order = samples.get_column("offset").is_sorted()
    base = samples.lazy().with_columns(
        name=group_name(), _end=pl.col("offset") + pl.col("duration")
    )
    aggregated = base.group_by(keys).agg(
        sampleCount=pl.len().cast(pl.Int64),
        tileCount=pl.col("tile").n_unique().cast(pl.Int64),
        phaseCount=pl.col("phase").drop_nulls().n_unique().cast(pl.Int64),
        phaseCycles=union_length(in_order=in_offset_order).cast(pl.Int64),
        workCycles=pl.col("duration").sum().cast(pl.Int64),
        usefulCycles=pl.col("usefulCycles").sum().cast(pl.Float64),
        estimatedWorkCycles=pl.col("duration").filter(carries_useful).sum().cast(pl.Int64),
        _physicalWorkCycles=pl.col("physicalWorkCycles").sum().cast(pl.Float64),
        _percentileCycles=nearest_ranks("duration", PERCENTILES),
        maximumCycles=pl.col("duration").max().cast(pl.Int64),
        firstOffset=pl.col("offset").min().cast(pl.Int64),
        lastOffset=pl.col("_end").max().cast(pl.Int64),
    )
    phase = pl.col("phaseCycles")
    useful = pl.col("usefulCycles")
    derived = aggregated.with_columns(
        phaseMs=phase.map_batches(
            lambda cycles: _cycles_to_ms(cycles, clock_hz), return_dtype=pl.Float64
        ),
        averageActiveTiles=_ratio(pl.col("workCycles"), phase),
        usefulUtilization=_ratio(useful, pl.col("estimatedWorkCycles")),
        workLaneOccupancy=_ratio(useful, pl.col("_physicalWorkCycles")),
        deviceUsefulUtilization=pl.when(pl.col("estimatedWorkCycles") > 0)
        .then(_ratio(useful, phase.cast(pl.Float64) * tile_count))
        .otherwise(None),
        meanCycles=pl.col("workCycles") / pl.col("sampleCount"),
        **{
            f"p{p}Cycles": pl.col("_percentileCycles").list.get(index).cast(pl.Int64)
            for index, p in enumerate(PERCENTILES)
        },
    )
    selected = derived.select(pl.col("name").cast(pl.String), *dimensions, *GROUP_FIELDS)
    return order_groups(selected, dimensions).collect()


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
