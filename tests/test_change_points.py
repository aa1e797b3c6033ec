"""Change points of a run series (issue 37; docs/metrics.md, "Change points").

Synthetic series built here, with known truth: noise only, a 3% step at noise of 1% at a known
run, a slow drift, one outlier run. The expected counts are properties of the method at its
stated level, measured over 100 seeded series each, not tuned to one series.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tileprof.analyses.change_points import (
    ALPHA,
    ChangePoint,
    best_split,
    best_split_at,
    change_points,
)

RUNS = 30


def noise(rng: np.random.Generator) -> np.ndarray:
    return 100.0 * (1 + 0.01 * rng.standard_normal(RUNS))


def test_noise_only_series_rarely_raise_a_change_point() -> None:
    rng = np.random.default_rng(7)
    raised = sum(bool(change_points(noise(rng))) for _ in range(100))
    assert raised <= 5  # the bound; the level is ALPHA per test
    assert ALPHA <= 0.05


def test_a_three_percent_step_is_found_at_its_run() -> None:
    rng = np.random.default_rng(11)
    exact, near, found = 0, 0, 0
    for _ in range(100):
        series = noise(rng)
        step = int(rng.integers(5, RUNS - 4))
        series[step:] *= 1.03
        points = change_points(series)
        found += len(points) == 1
        if len(points) == 1:
            exact += points[0].index == step
            near += abs(points[0].index - step) <= 2
            assert points[0].step is not None and 0.015 < points[0].step < 0.045
    # A 3-sigma step leaves the runs next to it ambiguous in some series (a run after the
    # step that reads like one before): the estimate is then one or two runs off.
    assert found >= 95 and near >= 93 and exact >= 75


def test_an_outlier_run_is_not_a_change_point() -> None:
    rng = np.random.default_rng(13)
    raised = 0
    for _ in range(50):
        series = noise(rng)
        series[int(rng.integers(3, RUNS - 3))] *= 1.3
        raised += bool(change_points(series))
    assert raised <= 3


def test_a_slow_drift_is_at_most_one_level_change() -> None:
    rng = np.random.default_rng(17)
    for _ in range(20):
        series = noise(rng) + np.linspace(0, 5, RUNS)
        assert len(change_points(series)) <= 2


def test_two_steps_and_determinism() -> None:
    series = np.array([100.0] * 10 + [110.0] * 10 + [95.0] * 10)
    series += np.random.default_rng(3).standard_normal(30) * 0.5
    points = change_points(series)
    assert [p.index for p in points] == [10, 20]
    assert points == change_points(series)  # a fixed seed: the same answer every run
    assert points[0].before == pytest.approx(series[:10].mean())
    assert points[0].after == pytest.approx(series[10:20].mean())
    assert all(p.p_value <= ALPHA and p.confidence == 1 - p.p_value for p in points)


def test_split_score_equals_the_definition() -> None:
    values = np.array([1.0, 2.0, 1.5, 7.0, 8.0, 7.5, 6.0])
    tau, score = best_split(values, min_size=2) or (0, 0.0)
    scores = {t: best_split_at(values, t) for t in range(2, 6)}
    assert tau == max(scores, key=lambda t: scores[t]) == 3
    assert score == pytest.approx(scores[3])
    x, y = values[:3], values[3:]
    plain = 2 * np.mean([abs(a - b) for a in x for b in y])
    plain -= np.mean([abs(a - b) for i, a in enumerate(x) for j, b in enumerate(x) if i != j])
    plain -= np.mean([abs(a - b) for i, a in enumerate(y) for j, b in enumerate(y) if i != j])
    assert score == pytest.approx(3 * 4 / 7 * plain)


def test_short_and_bad_series() -> None:
    assert change_points([1.0, 2.0, 3.0]) == []
    assert change_points([]) == []
    with pytest.raises(ValueError, match=r"^change points need finite values$"):
        change_points([1.0, float("nan")] * 5)
    point = ChangePoint(index=3, before=0.0, after=1.0, p_value=0.01)
    assert point.step is None


def _history(values: list[float | None]) -> Any:
    from datetime import datetime, timezone

    from tileprof.model.store.history import History, Point, Trend, with_changes
    from tileprof.model.store.tables import RunRecord

    runs = [f"r{i:02d}" for i in range(len(values))]
    points = tuple(Point(run, value) for run, value in zip(runs, values, strict=True))
    trend = with_changes(Trend("gemm_a", "phaseCycles", points))
    added = datetime(2026, 12, 1, tzinfo=timezone.utc)
    records = tuple(
        RunRecord(r, {}, "dump.json", "0" * 64, "json", 1.5e9, 4, 10, 100, "0.1.0", added)
        for r in runs
    )
    return History(records, ("phaseCycles",), (trend,), change_points=True)


def test_history_names_the_run_a_change_starts_at() -> None:
    from tileprof.views.history import render_table, to_document

    rng = np.random.default_rng(5)
    values: list[float | None] = list(1000 * (1 + 0.005 * rng.standard_normal(20)))
    values[10:] = [v * 1.05 for v in values[10:] if v is not None]
    values.insert(4, None)  # a run without the group: skipped, the runs still named right
    history = _history(values)
    (change,) = history.trends[0].changes
    assert change.run == "r11"  # the eleventh value, one run after the gap
    document = to_document(history)["trends"][0]["changePoints"]
    assert document == [
        {
            "run": "r11",
            "before": change.point.before,
            "after": change.point.after,
            "step": change.point.step,
            "pValue": change.point.p_value,
        }
    ]
    assert 0.04 < document[0]["step"] < 0.06
    table = render_table(history)
    assert "changes  1 (E-Divisive means, p ≤ 0.01)" in table
    assert "gemm_a phaseCycles: from run r11" in table


def test_history_page_marks_the_change() -> None:
    from tileprof.views.history_html import render

    rng = np.random.default_rng(5)
    values: list[float | None] = list(1000 * (1 + 0.005 * rng.standard_normal(20)))
    values[10:] = [v * 1.05 for v in values[10:] if v is not None]
    page = render(_history(values), "2026-12-01T00:00:00Z")
    assert page.count('<line class="change"') == 1
    assert "change from run r10:" in page


def test_split_scores_by_hand() -> None:
    # 0 0 0 | 1 1 1: every cross pair differs by 1, no pair within a side does:
    # Q = 3·3/6 × (2·1 − 0 − 0) = 3. Six runs are the fewest with a split of MIN_SIZE = 3 a side.
    steps = np.array([0.0, 0.0, 0.0, 1.0, 1.0, 1.0])
    assert best_split(steps) == (3, 3.0)
    assert best_split(steps[:5]) is None
    # at min_size 2 the split at 2 reads x = 0 0, y = 0 1 1 1: mean |x − y| = 6/8, the 12
    # ordered pairs of y differ in 6: Q = 2·4/6 × (1.5 − 0 − 0.5) = 4/3; at 4 the same mirrored
    assert best_split(steps, min_size=2) == (3, 3.0)
    assert best_split_at(steps, 2) == pytest.approx(4 / 3)
    assert best_split_at(steps, 4) == pytest.approx(4 / 3)
    # 0 0 | 1 1 0 0 and 0 0 1 1 | 0 0 score the same, 2·4/6 × (1 − 2/3) = 4/9: the earliest
    # wins; 0 0 1 | 1 0 0 scores 3·3/6 × (2·4/9 − 2/3 − 2/3) = −2/3
    hill = np.array([0.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    tau, score = best_split(hill, min_size=2) or (0, 0.0)
    assert tau == 2 and score == pytest.approx(4 / 9)
    assert best_split_at(hill, 3) == pytest.approx(-2 / 3)


def test_a_side_of_one_run_has_no_within_distance() -> None:
    # 0 | 1 3: mean |x − y| = 2, y's two ordered pairs differ by 2: Q = 1·2/3 × (4 − 0 − 2) = 4/3;
    # 0 1 | 3: mean |x − y| = 2.5, x's differ by 1: Q = 2·1/3 × (5 − 1 − 0) = 8/3
    values = np.array([0.0, 1.0, 3.0])
    assert best_split_at(values, 1) == pytest.approx(4 / 3)
    assert best_split_at(values, 2) == pytest.approx(8 / 3)
    tau, score = best_split(values, min_size=1) or (0, 0.0)
    assert tau == 2 and score == pytest.approx(8 / 3)


STEP = [1.0] * 10 + [2.0] * 10
"""Q at the step is 10·10/20 × 2 = 10; an order's best Q depends only on how many 2s fall on
each side of a split, and only the two orders with the ten 1s together reach 10 (2 of the
184,756): none of the 199 shuffles does, so p = (1 + 0) / 200."""


def test_a_clean_step_has_the_smallest_p_value() -> None:
    assert change_points(STEP) == [ChangePoint(index=10, before=1.0, after=2.0, p_value=0.005)]
    (point,) = change_points(STEP, alpha=0.005)  # p at most alpha is a change
    assert point.step == 1.0 and point.confidence == 0.995
    assert change_points(STEP, alpha=0.004) == []
    # min_size is the fewest runs a side: ten a side is a split, eleven is none
    assert change_points(STEP, min_size=10) == [ChangePoint(10, 1.0, 2.0, 0.005)]
    assert change_points(STEP, min_size=11) == []


def test_three_clean_levels_give_two_change_points() -> None:
    # each cut is re-tested on its two neighbouring segments alone: 20 runs of two levels
    points = change_points([1.0] * 10 + [2.0] * 10 + [4.0] * 10)
    assert points == [ChangePoint(10, 1.0, 2.0, 0.005), ChangePoint(20, 2.0, 4.0, 0.005)]
    assert [p.step for p in points] == [1.0, 1.0]
    # a drop: the step is negative, relative to the level before
    (drop,) = change_points([4.0] * 10 + [3.0] * 10)
    assert (drop.index, drop.step) == (10, -0.25)
    # relative to the size of a negative level: −2 to −1 is a rise of half of it
    (rise,) = change_points([-2.0] * 10 + [-1.0] * 10)
    assert (rise.index, rise.step) == (10, 0.5)


def test_a_side_of_two_runs_counts_its_own_distance() -> None:
    # 0 1 | 1 1: mean |x − y| = 2/4, x's two ordered pairs differ by 1 (2/2), y's by 0:
    # Q = 2·2/4 × (1 − 1 − 0) = 0; the mirror 1 1 | 1 0 the same
    assert best_split(np.array([0.0, 1.0, 1.0, 1.0]), min_size=2) == (2, 0.0)
    assert best_split(np.array([1.0, 1.0, 1.0, 0.0]), min_size=2) == (2, 0.0)


def test_a_constant_series_at_alpha_one_splits_at_every_allowed_run() -> None:
    # Every split of every order scores 0, so every shuffle reaches the observed 0: p = 200/200.
    # At alpha = 1 each test passes, each split falls at the earliest run of a tie (MIN_SIZE
    # in), and every cut is re-tested on its two neighbours: p = 1 again.
    points = change_points([1.0] * 12, alpha=1.0)
    assert points == [ChangePoint(i, 1.0, 1.0, 1.0) for i in (3, 6, 9)]
    assert [p.step for p in points] == [0.0, 0.0, 0.0]
    assert points[0].confidence == 0.0


def test_p_values_between_the_extremes_repeat_exactly() -> None:
    series = [3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0, 5.0, 3.0, 5.0, 8.0]
    points = change_points(series, alpha=1.0)
    assert any(0.005 < p.p_value < 1.0 for p in points)  # values that depend on the shuffles
    assert points == change_points(series, alpha=1.0)  # the permutations' seed is fixed


def test_a_split_every_order_reaches_has_p_one() -> None:
    # 0 1 0 | 1 0 1, the one split of MIN_SIZE a side: mean |x − y| = 5/9, each side's six
    # ordered pairs differ in 4: Q = 3·3/6 × (10/9 − 2/3 − 2/3) = −1/3. Any order of three 0s
    # and three 1s puts two of a kind on one side (Q = −1/3) or all three (Q = 3): every shuffle
    # of these six values reaches −1/3, so p = 200/200 (a shuffle across the 199 copies, with
    # two 1s one a side, would score −2/3 and lower it).
    (point,) = change_points([0.0, 1.0, 0.0, 1.0, 0.0, 1.0], alpha=1.0)
    assert (point.index, point.p_value) == (3, 1.0)
    assert (point.before, point.after) == (pytest.approx(1 / 3), pytest.approx(2 / 3))
    assert change_points([0.0, 1.0, 0.0, 1.0, 0.0, 1.0]) == []


def test_integer_runs_past_two_to_the_62_are_read_as_floats() -> None:
    # −2⁶² and 2⁶² are exact in float64; their difference, 2⁶³, is past int64
    low, high = -(2**62), 2**62
    (point,) = change_points([low] * 10 + [high] * 10)
    assert point == ChangePoint(10, -(2.0**62), 2.0**62, 0.005)
    assert point.step == 2.0
