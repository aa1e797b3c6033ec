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

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from tileprof.errors import OptionError
from tileprof.stats import GROUP_FIELDS
from tileprof.store.tables import STATS, RunRecord, Store
from tileprof.thresholds import Threshold

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
class Trend:
    """One field of one group across the runs, in run order."""

    group: str
    field: str
    points: tuple[Point, ...]


@dataclass(frozen=True)
class Failure:
    """A ``--fail-on`` threshold that the newest run breaks against its band's median."""

    threshold: str
    run: str
    group: str
    field: str
    baseline: float
    value: float | None


@dataclass(frozen=True)
class History:
    """What ``tileprof history`` reports."""

    runs: tuple[RunRecord, ...]
    fields: tuple[str, ...]
    trends: tuple[Trend, ...]
    failures: tuple[Failure, ...] = ()
    order: str = "time"

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
    return sorted(by_time, key=lambda r: (order not in r.labels, r.labels.get(order, "")))


def band(previous: np.ndarray) -> tuple[float, float, float] | None:
    """(median, low, high) of the band that ``previous`` values give, or None if too few."""
    if previous.size < MIN_RUNS:
        return None
    median = float(np.median(previous))
    mad = float(np.median(np.abs(previous - median)))
    half = max(SIGMAS * MAD_SCALE * mad, FLOOR * abs(median))
    return median, median - half, median + half


def bands(values: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``band`` for every position of ``values`` (NaN = no value) at once: median, low, high
    of the last ``BAND_RUNS`` values before each position, NaN where fewer than ``MIN_RUNS``.

    Row j of the window matrix holds the values seen before the j-th value (NaN-padded), so
    one sort per trend replaces a median per run.
    """
    present = ~np.isnan(values)
    padded = np.concatenate([np.full(BAND_RUNS, np.nan), values[present]])
    windows = np.lib.stride_tricks.sliding_window_view(padded, BAND_RUNS)
    seen_before = np.cumsum(present) - present
    rows = windows[seen_before]
    counts = np.minimum(seen_before, BAND_RUNS)
    median = _row_medians(rows, counts)
    mad = _row_medians(np.abs(rows - median[:, None]), counts)
    half = np.maximum(SIGMAS * MAD_SCALE * mad, FLOOR * np.abs(median))
    enough = counts >= MIN_RUNS
    nan = np.full(values.shape, np.nan)
    return (
        np.where(enough, median, nan),
        np.where(enough, median - half, nan),
        np.where(enough, median + half, nan),
    )


def _row_medians(rows: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Median of the ``counts[i]`` defined values of each row (NaN sorts last); NaN if none."""
    ordered = np.sort(rows, axis=1)
    safe = np.maximum(counts, 1)
    index = np.arange(rows.shape[0])
    low = ordered[index, (safe - 1) // 2]
    high = ordered[index, safe // 2]
    return np.where(counts > 0, (low + high) / 2, np.nan)


def _numbers(values: np.ndarray) -> list[float | None]:
    return [None if v != v else v for v in values.tolist()]  # v != v: NaN


def trend_points(runs: Sequence[str], values: Sequence[float | None]) -> tuple[Point, ...]:
    """Each run's value with its band and flag."""
    array = np.array([np.nan if v is None else v for v in values], dtype=np.float64)
    medians, lows, highs = bands(array)
    judged = ~np.isnan(array) & ~np.isnan(medians)
    flags = np.where(
        judged & (array < lows), "drop", np.where(judged & (array > highs), "rise", "")
    )
    return tuple(
        Point(run, value, median, low, high, flag or None)
        for run, value, median, low, high, flag in zip(
            runs, values, _numbers(medians), _numbers(lows), _numbers(highs), flags.tolist(),
            strict=True,
        )
    )  # fmt: skip


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
) -> History:
    """The trends of ``fields`` for the groups matching ``kernels`` over ``runs``."""
    chosen = check_fields(fields)
    wanted = check_fields([*chosen, *(t.field for t in thresholds)])
    ordered = order_runs(runs, order)
    ids = [r.run for r in ordered]
    stats = read_stats(store, ids, wanted)
    names = sorted(set(stats.get_column("name").to_list()))
    if kernels:
        names = [n for n in names if any(fnmatch.fnmatchcase(n, g) for g in kernels)]
    trends: list[Trend] = []
    position = {run: i for i, run in enumerate(ids)}
    parts = stats.partition_by("name", as_dict=True)
    for name in names:
        part = parts[(name,)]
        where = [position[run] for run in part.get_column("run").to_list()]
        for field in wanted:
            values: list[float | None] = [None] * len(ids)
            for at, value in zip(where, part.get_column(field).to_list(), strict=True):
                values[at] = value
            trends.append(Trend(name, field, trend_points(ids, values)))
    failures = check_thresholds(trends, thresholds)
    shown = tuple(t for t in trends if t.field in chosen)
    return History(tuple(ordered), chosen, shown, failures, order)


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
