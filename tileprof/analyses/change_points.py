"""Change points of a series of runs: E-Divisive means with a permutation test
(docs/metrics.md, "Change points").

Matteson and James' E-Divisive (J. Amer. Statist. Assoc. 109, 2014), the method MongoDB's and
Apache Otava's performance CI use, with α = 1 (means): a split of a segment into X and Y is
scored by the energy distance between them, scaled by their sizes,

    Q = m·n / (m + n) × (2·mean|x − y| − mean|x − x′| − mean|y − y′|),

the best split of the best segment is tested by permuting that segment's values (p = the
share of permutations, the observed order counted, whose best Q is at least the observed one),
and accepted splits divide the series until a test fails. Neither well-kept implementation
fits here: ``signal-processing-algorithms`` pins numpy below 2 and Python 3.11 alone, Apache
Otava pins numpy 2.2 and brings a BigQuery client; this is the same statistic in numpy,
vectorised over the splits, with a fixed seed so that the same series gives the same answer.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

ALPHA = 0.01
"""A split is a change point when its permutation p-value is at most this."""
PERMUTATIONS = 199
"""Permutations per test: the smallest attainable p-value is 1 / (PERMUTATIONS + 1)."""
MIN_SIZE = 3
"""The fewest runs on either side of a change point: one odd run is an outlier, not a change."""
SEED = 20261201
"""The permutations' seed: the same series gives the same change points on every run."""


@dataclass(frozen=True)
class ChangePoint:
    """A change at run ``index`` (the first run of the new level)."""

    index: int
    before: float
    """The mean of the segment that ends at ``index``."""
    after: float
    """The mean of the segment that starts at ``index``."""
    p_value: float

    @property
    def step(self) -> float | None:
        """(after − before) / |before|; None when before is 0."""
        return None if self.before == 0 else (self.after - self.before) / abs(self.before)

    @property
    def confidence(self) -> float:
        """1 − p_value."""
        return 1.0 - self.p_value


def _scores(batch: np.ndarray, min_size: int) -> tuple[np.ndarray, np.ndarray]:
    """Q of every split τ (min_size ≤ τ ≤ n − min_size) of every row of ``batch`` (rows ×
    n): the splits, and a rows × splits array of scores. Block sums of the distance matrix
    come from its 2-D prefix sums, so every split costs O(1) after an O(n²) pass."""
    n = batch.shape[1]
    taus = np.arange(min_size, n - min_size + 1)
    distances = _distance(batch[:, :, None], batch[:, None, :])
    sums = np.zeros((batch.shape[0], n + 1, n + 1))
    sums[:, 1:, 1:] = distances.cumsum(axis=1).cumsum(axis=2)
    left = sums[:, taus, taus]  # Σ over the left block (each pair twice)
    between = sums[:, taus, n] - left  # Σ d(x, y), x left, y right
    right = sums[:, n, n][:, None] - left - 2 * between
    m, k = taus.astype(float), (n - taus).astype(float)
    within_left = np.where(m > 1, left / np.maximum(m * (m - 1), 1), 0.0)
    within_right = np.where(k > 1, right / np.maximum(k * (k - 1), 1), 0.0)
    energy = 2 * between / (m * k) - within_left - within_right
    return taus, m * k / (m + k) * energy


def best_split(values: np.ndarray, min_size: int = MIN_SIZE) -> tuple[int, float] | None:
    """The split τ (left = values[:τ]) with the largest Q, and Q; None when the series is
    too short for two sides of ``min_size``."""
    if values.shape[0] < 2 * min_size:
        return None
    taus, scores = _scores(values[None, :], min_size)
    best = int(np.argmax(scores[0]))  # the earliest on a tie
    return int(taus[best]), float(scores[0, best])


def _p_value(values: np.ndarray, observed: float, rng: np.random.Generator, min_size: int) -> float:
    """The share of PERMUTATIONS shuffles of ``values`` (the observed order counted as one)
    whose best split scores at least ``observed``."""
    shuffled = rng.permuted(np.tile(values, (PERMUTATIONS, 1)), axis=1)
    _, scores = _scores(shuffled, min_size)
    at_least = 1 + int((scores.max(axis=1) >= observed).sum())
    return at_least / (PERMUTATIONS + 1)


def change_points(
    series: Sequence[float], *, alpha: float = ALPHA, min_size: int = MIN_SIZE
) -> list[ChangePoint]:
    """The change points of ``series`` (runs in order; finite values), in run order.

    Each round takes the segment whose best split scores highest, tests it, and stops at the
    first test that fails (p > alpha).
    """
    values = np.asarray(series, dtype=float)
    if not np.isfinite(values).all():
        raise ValueError("change points need finite values")
    rng = np.random.default_rng(SEED)
    cuts = [0, values.shape[0]]
    tested: dict[tuple[int, int], tuple[int, float] | None] = {}
    while True:
        candidates = []
        for a, b in itertools.pairwise(cuts):
            if (a, b) not in tested:
                tested[(a, b)] = best_split(values[a:b], min_size)
            split = tested[(a, b)]
            if split is not None:
                candidates.append((split[1], a, b, split[0]))
        if not candidates:
            break
        score, a, b, tau = max(candidates, key=lambda c: (c[0], -c[1]))
        if _p_value(values[a:b], score, rng, min_size) > alpha:
            break
        cuts = sorted([*cuts, a + tau])
        tested[(a, b)] = None
    return _points(values, cuts, rng, min_size)


def _points(
    values: np.ndarray, cuts: list[int], rng: np.random.Generator, min_size: int
) -> list[ChangePoint]:
    """One ChangePoint per inner cut, with the means of its two neighbouring segments and the
    p-value of the split between them re-tested on those two segments alone."""
    points = []
    for a, cut, b in zip(cuts, cuts[1:], cuts[2:], strict=False):
        pair = values[a:b]
        score = best_split_at(pair, cut - a)
        points.append(
            ChangePoint(
                index=cut,
                before=float(values[a:cut].mean()),
                after=float(values[cut:b].mean()),
                p_value=_p_value(pair, score, rng, min_size),
            )
        )
    return points


def best_split_at(values: np.ndarray, tau: int) -> float:
    """Q of the split of ``values`` at ``tau``."""
    left, right = values[:tau], values[tau:]
    m, k = float(left.size), float(right.size)
    between = np.abs(left[:, None] - right[None, :]).mean()
    within_left = np.abs(left[:, None] - left[None, :]).sum() / (m * (m - 1)) if m > 1 else 0.0
    within_right = np.abs(right[:, None] - right[None, :]).sum() / (k * (k - 1)) if k > 1 else 0.0
    return float(m * k / (m + k) * (2 * between - within_left - within_right))


EXPONENT = 1.0
"""α of the energy distance |x − y|^α."""


def _distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b) ** EXPONENT
