"""Whether a group's time per call (per sample) changed: a bootstrap interval over its calls
(docs/metrics.md, "Significance").

A diff's figures are one number per group and side; the evidence behind them holds one
duration per kernel call (a GPU trace's event frame) or per sample (a tile dump). The change
in mean time per call, after/before − 1, gets a percentile-bootstrap interval: each side's
calls are resampled with replacement, RESAMPLES times, and the ratio of the resampled means
is taken at the interval's two quantiles. The mean, not the median, because the mean is the
figure the gate judges (``total_us`` at equal calls is calls × mean). A side with more than
CALLS_CAP calls is resampled CALLS_CAP at a time and its deviations of log mean scaled by
√(CALLS_CAP / calls) (the m-out-of-n bootstrap of a mean), and a diff of many groups lowers
that cap for all of them to stay within DRAWS_BUDGET, so the cost is bounded. Each
group draws from its own generator, seeded by SEED and its name, so a group's interval does
not depend on the other groups and the same inputs give the same bytes.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import numpy as np

RESAMPLES = 1000
"""Bootstrap resamples per group."""
CALLS_CAP = 250
"""The most calls one resample draws (m of the m-out-of-n bootstrap): the mean of 250 draws
is close to normal for kernel times, and a group then costs a few ms a side."""
DRAWS_BUDGET = 50_000_000
"""The most calls one diff draws in all (RESAMPLES × Σ m over groups and sides): above it,
every group's m is lowered alike, to no less than MIN_DRAWS."""
MIN_DRAWS = 50
"""The fewest calls a resample draws when the budget lowers m."""
MIN_CALLS = 10
"""The fewest calls (samples) on each side for a verdict; fewer: ``not enough calls``."""
SEED = 20261202
"""The generator's seed, combined with the group's name."""
CONFIDENCE = 0.95
"""The default confidence level of the interval (``--confidence``)."""
BLOCK = 250
"""Resamples drawn at once (bounds the memory to BLOCK × CALLS_CAP indices)."""

CHANGED, UNCHANGED, TOO_FEW = "changed", "unchanged", "not enough calls"
VERDICTS: tuple[str, ...] = (CHANGED, UNCHANGED, TOO_FEW)

SIGNIFICANCE_COLUMNS: dict[str, pl.DataType] = {
    "group": pl.String(),
    "perCall_change": pl.Float64(),
    "perCall_low": pl.Float64(),
    "perCall_high": pl.Float64(),
    "verdict": pl.String(),
}
"""What ``per_call_changes`` gives per group both sides hold."""


def _log_mean_deviations(
    values: np.ndarray, rng: np.random.Generator, cap: int = CALLS_CAP
) -> np.ndarray:
    """RESAMPLES bootstrap deviations of log(mean) from the sample's log(mean), scaled to
    the whole side's size when it is resampled ``cap`` calls at a time."""
    import numpy as np  # here: a diff without per-call data loads no numpy

    n = values.shape[0]
    m = min(n, cap)
    mean = float(values.mean())
    floor = mean * 1e-12
    means = np.empty(RESAMPLES)
    for start in range(0, RESAMPLES, BLOCK):
        stop = min(start + BLOCK, RESAMPLES)
        draws = rng.integers(0, n, size=(stop - start, m), dtype=np.int32)
        means[start:stop] = np.take(values, draws).mean(axis=1)
    return (np.log(np.maximum(means, floor)) - math.log(mean)) * math.sqrt(m / n)


def interval(
    before: np.ndarray,
    after: np.ndarray,
    name: str,
    confidence: float = CONFIDENCE,
    cap: int = CALLS_CAP,
) -> tuple[float, float, float] | None:
    """(change, low, high) of mean(after) / mean(before) − 1 at ``confidence``, each side
    resampled at most ``cap`` calls at a time; None when a side's mean is not positive (no
    ratio)."""
    import numpy as np

    mean_before, mean_after = float(before.mean()), float(after.mean())
    if mean_before <= 0 or mean_after <= 0:
        return None
    rng = np.random.default_rng([SEED, zlib.crc32(name.encode())])
    deviations = _log_mean_deviations(after, rng, cap) - _log_mean_deviations(before, rng, cap)
    log_ratio = math.log(mean_after / mean_before)
    tail = (1.0 - confidence) / 2.0
    low, high = np.quantile(deviations, [tail, 1.0 - tail])
    return (
        mean_after / mean_before - 1.0,
        math.expm1(log_ratio + float(low)),
        math.expm1(log_ratio + float(high)),
    )


def verdict(counts: tuple[int, int], found: tuple[float, float, float] | None) -> str:
    """changed when the interval excludes 0, unchanged when it holds it, not enough calls
    below MIN_CALLS on a side (or without a ratio)."""
    if min(counts) < MIN_CALLS or found is None:
        return TOO_FEW
    _, low, high = found
    return CHANGED if low > 0 or high < 0 else UNCHANGED


def _side_values(
    keys: pl.DataFrame, durations: pl.DataFrame, name: str, dimensions: Sequence[str]
) -> dict[str, np.ndarray]:
    """Each paired group's durations on one side (``name``: its name column in ``keys``),
    in their order in ``durations``, as numpy arrays cut from one column (a stable sort by
    the group's position, not by its name)."""
    import numpy as np

    keyed = keys.select("group", name, *dimensions).with_row_index("_group")
    frame = keyed.join(
        durations.rename({"name": name}),
        on=[name, *dimensions],
        how="inner",
        nulls_equal=True,
        maintain_order="right",
    )
    index = frame.get_column("_group").to_numpy()
    order = np.argsort(index, kind="stable")
    values = frame.get_column("value").cast(pl.Float64).to_numpy()[order]
    counts = np.bincount(index, minlength=keyed.height)
    ends = np.cumsum(counts)
    groups = keyed.get_column("group").to_list()
    return {
        g: values[end - n : end]
        for g, n, end in zip(groups, counts.tolist(), ends.tolist(), strict=True)
        if n
    }


def resample_cap(counts: Sequence[tuple[int, int]]) -> int:
    """The calls one resample draws at most: CALLS_CAP, lowered alike for every group (to
    no less than MIN_DRAWS) when the groups with a verdict would draw more than
    DRAWS_BUDGET calls in all."""
    judged = [c for pair in counts if min(pair) >= MIN_CALLS for c in pair]
    total = RESAMPLES * sum(min(c, CALLS_CAP) for c in judged)
    if total <= DRAWS_BUDGET:
        return CALLS_CAP
    return max(MIN_DRAWS, int(CALLS_CAP * DRAWS_BUDGET / total))


def _mean_change(before: np.ndarray, after: np.ndarray) -> float | None:
    """mean(after) / mean(before) − 1; None without calls or a positive mean before."""
    if before.shape[0] == 0 or after.shape[0] == 0 or before.mean() <= 0:
        return None
    return float(after.mean() / before.mean()) - 1.0


def per_call_changes(
    rows: pl.DataFrame,
    before: pl.DataFrame,
    after: pl.DataFrame,
    *,
    dimensions: Sequence[str] = (),
    confidence: float = CONFIDENCE,
) -> pl.DataFrame:
    """One row per group both sides hold (``SIGNIFICANCE_COLUMNS``): the change in mean
    time per call, its interval at ``confidence`` and the verdict. ``before``/``after``:
    one row per call (or sample) with ``name``, the ``dimensions`` and ``value``."""
    import numpy as np

    keys = rows.filter(pl.col("beforeName").is_not_null() & pl.col("afterName").is_not_null())
    old = _side_values(keys, before, "beforeName", dimensions)
    new = _side_values(keys, after, "afterName", dimensions)
    groups = keys.get_column("group").to_list()
    sides = [(old.get(g, np.empty(0)), new.get(g, np.empty(0))) for g in groups]
    cap = resample_cap([(b.shape[0], a.shape[0]) for b, a in sides])
    records = []
    for group, (b, a) in zip(groups, sides, strict=True):
        counts = (b.shape[0], a.shape[0])
        found = None if min(counts) < MIN_CALLS else interval(b, a, group, confidence, cap)
        _, low, high = found if found is not None else (None, None, None)
        records.append((group, _mean_change(b, a), low, high, verdict(counts, found)))
    return pl.DataFrame(records, schema=SIGNIFICANCE_COLUMNS, orient="row")
