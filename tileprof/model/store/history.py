"""Trends across stored runs, read from the stored group statistics, and the regressions in them.

The regression rule (docs/store.md): a run's value of a field is judged against the
``BAND_RUNS`` runs before it that have a value (at least ``MIN_RUNS`` of them). Their median m
and median absolute deviation MAD give the noise band

    m ± max(SIGMAS × 1.4826 × MAD, FLOOR × |m|)

(1.4826 × MAD estimates the standard deviation of normal noise, robust to earlier outliers;
the floor keeps a perfectly flat history from flagging a change in the last bit). A value
outside the band is flagged ``drop`` (below) or ``rise`` (above).
"""

from __future__ import annotations

import dataclasses
import fnmatch
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.analyses.thresholds import Threshold
from tileprof.core.errors import OptionError
from tileprof.model.store.tables import STATS, RunRecord, Store

if TYPE_CHECKING:
    from tileprof.analyses.change_points import ChangePoint

DEFAULT_FIELDS: tuple[str, ...] = ("phaseCycles", "usefulUtilization", "deviceUsefulUtilization")
BAND_RUNS = 10
MIN_RUNS = 3
SIGMAS = 3.0
MAD_SCALE = 1.4826
FLOOR = 0.01


@dataclass(frozen=True)
class Point:
    """One run's value of one field of one group, and the band of the runs before it."""

    run: str
    value: float | None
    median: float | None = None
    low: float | None = None
    high: float | None = None
    flag: str | None = None


@dataclass(frozen=True)
class Change:
    """A change point of a trend (``tileprof.analyses.change_points``) at run ``run``, the
    first run of the new level."""

    run: str
    point: ChangePoint


@dataclass(frozen=True)
class Trend:
    """One field of one group across the runs, in run order."""

    group: str
    field: str
    points: tuple[Point, ...]
    changes: tuple[Change, ...] = ()
    """Its change points, when ``history --change-points`` asked for them."""


@dataclass(frozen=True)
class Failure:
    """A ``--fail-on`` threshold that the newest run breaks against its band's median."""

    threshold: str
    run: str
    group: str
    field: str
    baseline: float
    value: float | None
    change: str | None = None
    """None: the newest run is outside its band (baseline: the band's median). Else the run
    at which a significant change point started the level the newest run is on (baseline:
    the mean of the level before it)."""


@dataclass(frozen=True)
class History:
    """What ``tileprof history`` reports."""

    runs: tuple[RunRecord, ...]
    fields: tuple[str, ...]
    trends: tuple[Trend, ...]
    failures: tuple[Failure, ...] = ()
    order: str = "time"
    unchecked: tuple[str, ...] = ()
    """One sentence per ``--fail-on`` threshold that checked nothing (no band yet, or no
    stored group and field it covers): a gate that passes only because it judged nothing."""
    change_points: bool = False
    """Whether the trends' change points were computed (``--change-points``)."""

    def flags(self) -> list[tuple[Trend, Point]]:
        """Every flagged point, group by group, in run order."""
        return [(t, p) for t in self.trends for p in t.points if p.flag is not None]


def check_fields(fields: Sequence[str]) -> tuple[str, ...]:
    unknown = [f for f in fields if f not in GROUP_FIELDS]
    if unknown:
        raise OptionError(f"--field {unknown[0]!r}: not a group statistic (docs/metrics.md)")
    return tuple(dict.fromkeys(fields)) or DEFAULT_FIELDS


def order_runs(runs: Sequence[RunRecord], order: str) -> list[RunRecord]:
    """``time``: by the time added; otherwise by that label's value (runs without it last)."""
    by_time = sorted(runs, key=lambda r: (r.added_at, r.run))
    if order == "time":
        return by_time
    if runs and not any(order in r.labels for r in runs):
        known = sorted({key for r in runs for key in r.labels})
        raise OptionError(
            f"--order {order!r}: no run carries that label "
            f"(labels: {', '.join(known) or 'none'}; or --order time)"
        )
    return sorted(by_time, key=lambda r: (order not in r.labels, r.labels.get(order, "")))


def band(previous: Sequence[float]) -> tuple[float, float, float] | None:
    """(median, low, high) of the band that ``previous`` values give, or None if too few."""
    if len(previous) < MIN_RUNS:
        return None
    median = _median([float(v) for v in previous])
    mad = _median([abs(float(v) - median) for v in previous])
    half = max(SIGMAS * MAD_SCALE * mad, FLOOR * abs(median))
    return median, median - half, median + half


def _median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return (ordered[(len(ordered) - 1) // 2] + ordered[middle]) / 2


def band_frame(values: pl.DataFrame) -> pl.DataFrame:
    """``band`` at every position of every trend at once.

    ``values``: one row per trend and run, ``trend`` (an id) and ``value`` (null: none), in
    run order within each trend. Returns the rows in that order with ``median``, ``low`` and
    ``high`` of the last ``BAND_RUNS`` values before each row (null where fewer than
    ``MIN_RUNS``). Each row's window is gathered by exploding the ranks of the values before
    it (at most ``BAND_RUNS`` rows each), so the whole history is a few polars operations,
    whatever the number of runs and groups.
    """
    has = pl.col("value").is_not_null().cast(pl.Int64)
    rows = values.with_columns(
        _row=pl.int_range(pl.len(), dtype=pl.Int64),
        _seen=(has.cum_sum() - has).over("trend"),
    )
    present = rows.filter(pl.col("value").is_not_null()).select(
        "trend", "value", _rank=pl.int_range(pl.len(), dtype=pl.Int64).over("trend")
    )
    start = pl.max_horizontal(pl.col("_seen") - BAND_RUNS, pl.lit(0, pl.Int64))
    windows = (
        rows.select("_row", "trend", _rank=pl.int_ranges(start, pl.col("_seen"), dtype=pl.Int64))
        .explode("_rank")
        .join(present, on=["trend", "_rank"], how="left")
    )
    median = windows.group_by("_row").agg(
        median=pl.col("value").median(), _count=pl.col("value").count()
    )
    spread = (
        windows.join(median, on="_row")
        .group_by("_row")
        .agg(mad=(pl.col("value") - pl.col("median")).abs().median())
        .join(median, on="_row")
    )
    half = pl.max_horizontal(SIGMAS * MAD_SCALE * pl.col("mad"), FLOOR * pl.col("median").abs())
    enough = pl.col("_count") >= MIN_RUNS
    judged = spread.select(
        "_row",
        median=pl.when(enough).then(pl.col("median")),
        low=pl.when(enough).then(pl.col("median") - half),
        high=pl.when(enough).then(pl.col("median") + half),
    )
    return rows.join(judged, on="_row", how="left").sort("_row").drop("_row", "_seen")


def bands(
    values: Sequence[float | None],
) -> tuple[list[float | None], list[float | None], list[float | None]]:
    """``band`` for every position of one trend (NaN or None = no value): median, low, high
    lists, None where fewer than ``MIN_RUNS`` values came before."""
    clean = [None if v is None or v != v else float(v) for v in values]  # v != v: NaN
    frame = band_frame(
        pl.DataFrame(
            {"trend": [0] * len(clean), "value": clean},
            schema={"trend": pl.Int64, "value": pl.Float64},
        )
    )
    return (
        frame.get_column("median").to_list(),
        frame.get_column("low").to_list(),
        frame.get_column("high").to_list(),
    )


def _flag(value: float | None, low: float | None, high: float | None) -> str | None:
    if value is None or low is None or high is None:
        return None
    return "drop" if value < low else "rise" if value > high else None


def trend_points(runs: Sequence[str], values: Sequence[float | None]) -> tuple[Point, ...]:
    """Each run's value with its band and flag."""
    medians, lows, highs = bands(values)
    return _points(runs, values, medians, lows, highs)


def _points(
    runs: Sequence[str],
    values: Sequence[float | None],
    medians: Sequence[float | None],
    lows: Sequence[float | None],
    highs: Sequence[float | None],
) -> tuple[Point, ...]:
    return tuple(
        Point(run, value, median, low, high, _flag(value, low, high))
        for run, value, median, low, high in zip(runs, values, medians, lows, highs, strict=True)
    )


def read_stats(store: Store, runs: Sequence[str], fields: Sequence[str]) -> pl.DataFrame:
    """The stored statistics (default filters) of ``runs``: run, name, ``fields``."""
    return (
        store.scan(STATS, runs)
        .filter(pl.col("name").is_not_null())
        .select("run", "name", *fields)
        .collect()
    )


def build_history(
    store: Store,
    runs: Sequence[RunRecord],
    *,
    fields: Sequence[str] = (),
    kernels: Sequence[str] = (),
    order: str = "time",
    thresholds: Sequence[Threshold] = (),
    change_points: bool = False,
) -> History:
    """The trends of ``fields`` for the groups matching ``kernels`` over ``runs``, with their
    change points when ``change_points``."""
    chosen = check_fields(fields)
    wanted = check_fields([*chosen, *(t.field for t in thresholds)])
    ordered = order_runs(runs, order)
    ids = [r.run for r in ordered]
    stats = read_stats(store, ids, wanted)
    names = sorted(set(stats.get_column("name").to_list()))
    if kernels:
        names = [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in kernels)]
    trends = _trends(stats, ids, names, wanted)
    if thresholds:  # the gate reads the change points of every trend a threshold covers
        trends = [
            with_changes(t) if any(h.matches(t.group, t.field) for h in thresholds) else t
            for t in trends
        ]
    failures = check_thresholds(trends, thresholds) + check_changes(trends, thresholds)
    shown = tuple(t for t in trends if t.field in chosen)
    if change_points:
        shown = tuple(t if t.changes else with_changes(t) for t in shown)
    else:
        shown = tuple(dataclasses.replace(t, changes=()) for t in shown)
    unchecked = unchecked_thresholds(trends, thresholds)
    return History(tuple(ordered), chosen, shown, failures, order, unchecked, change_points)


def with_changes(trend: Trend) -> Trend:
    """``trend`` with the change points of its values, over the runs that hold one (numpy is
    imported here: a plain ``history`` does not load it)."""
    from tileprof.analyses.change_points import change_points

    present = [p for p in trend.points if p.value is not None and math.isfinite(p.value)]
    found = change_points([p.value for p in present if p.value is not None])
    changes = tuple(Change(present[c.index].run, c) for c in found)
    return dataclasses.replace(trend, changes=changes)


def _trends(
    stats: pl.DataFrame, ids: Sequence[str], names: Sequence[str], fields: Sequence[str]
) -> list[Trend]:
    """One trend per group in ``names`` and field, every run of ``ids`` in order (a run
    without the group has no value), with the bands of all of them computed at once."""
    keys = pl.DataFrame(
        {"name": [n for n in names for _ in fields], "field": [f for _ in names for f in fields]},
        schema={"name": pl.String, "field": pl.String},
    ).with_row_index("trend")
    runs = pl.DataFrame({"run": list(ids)}, schema={"run": pl.String}).with_row_index("position")
    long = stats.unpivot(index=["run", "name"], on=list(fields), variable_name="field")
    values = (
        keys.join(runs, how="cross")
        .join(long, on=["name", "field", "run"], how="left")
        .sort("trend", "position")
        .select("trend", value=pl.col("value").cast(pl.Float64))
    )
    banded = band_frame(values)
    stored = {(row[0], row[1]): row for row in stats.select("name", "run", *fields).iter_rows()}
    column = {f: i for i, f in enumerate(fields, start=2)}
    trends = []
    for (name, field), part in zip(
        keys.select("name", "field").iter_rows(), banded.partition_by("trend"), strict=True
    ):
        rows = [stored.get((name, run)) for run in ids]
        shown = [None if row is None else row[column[field]] for row in rows]  # as stored
        bounds = [part.get_column(c).to_list() for c in ("median", "low", "high")]
        trends.append(Trend(name, field, _points(ids, shown, *bounds)))
    return trends


def check_thresholds(
    trends: Sequence[Trend], thresholds: Sequence[Threshold]
) -> tuple[Failure, ...]:
    """The newest run of each trend against its band's median, for each threshold covering it."""
    failures: list[Failure] = []
    for threshold in thresholds:
        for trend in trends:
            if not trend.points or not threshold.matches(trend.group, trend.field):
                continue
            newest = trend.points[-1]
            if newest.median is None or threshold.allows(newest.median, newest.value):
                continue
            failures.append(
                Failure(
                    str(threshold),
                    newest.run,
                    trend.group,
                    trend.field,
                    newest.median,
                    newest.value,
                )
            )
    return tuple(failures)


RECENT_RUNS = BAND_RUNS
"""A change point counts for the gate when it starts within the newest this many runs (a
step needs at least ``change_points.MIN_SIZE`` runs on its new level to be found)."""


def check_changes(trends: Sequence[Trend], thresholds: Sequence[Threshold]) -> tuple[Failure, ...]:
    """The trends whose newest run is on a level that a recent, significant change point
    started (its p-value at most ``change_points.ALPHA``, within ``RECENT_RUNS`` runs) and
    that the threshold forbids: both the step (mean before → mean after) and the newest
    run's value against the mean before break it."""
    if not any(t.changes for t in trends):
        return ()  # nothing to judge, and no numpy to load
    from tileprof.analyses.change_points import ALPHA

    failures: list[Failure] = []
    for threshold in thresholds:
        for trend in trends:
            if not trend.changes or not threshold.matches(trend.group, trend.field):
                continue
            last, newest = trend.changes[-1], trend.points[-1]
            runs = [p.run for p in trend.points]
            recent = runs.index(last.run) >= len(runs) - RECENT_RUNS
            point = last.point
            if (
                not recent
                or point.p_value > ALPHA
                or threshold.allows(point.before, point.after)
                or threshold.allows(point.before, newest.value)
            ):
                continue
            failures.append(
                Failure(
                    str(threshold),
                    newest.run,
                    trend.group,
                    trend.field,
                    point.before,
                    newest.value,
                    last.run,
                )
            )
    return tuple(failures)


def unchecked_thresholds(
    trends: Sequence[Trend], thresholds: Sequence[Threshold]
) -> tuple[str, ...]:
    """A sentence for each threshold that judges nothing for want of runs: none of the trends
    it covers has a band at the newest run (fewer than ``MIN_RUNS`` earlier values), or there
    are no runs at all. A threshold that covers no stored group and field while there are
    some is a mistake (a misspelt glob), refused like ``diff --fail-on`` refuses it."""
    found = []
    for threshold in thresholds:
        covered = [t for t in trends if t.points and threshold.matches(t.group, t.field)]
        if not covered and trends:
            raise OptionError(f"--fail-on '{threshold}': matches no stored group")
        if all(t.points[-1].median is None for t in covered):
            earlier = max(
                (sum(p.value is not None for p in t.points[:-1]) for t in covered), default=0
            )
            found.append(
                f"--fail-on '{threshold}': no band yet (needs {MIN_RUNS} earlier runs with a "
                f"value, has {earlier}); nothing was checked"
            )
    return tuple(found)
