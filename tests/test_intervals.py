"""``analyses/intervals.py`` against the textbook sweep, interval by interval (issue 38).

Every breakdown figure is a length of a union of event intervals or a difference of two, so
the union's bounds, not only its length, are held here: a union that merged two intervals
with a gap between them, or split two that touch, would move the idle and exposed figures.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tileprof.analyses.intervals import clip, span, union, union_length

_SPANS = st.lists(st.tuples(st.integers(0, 300), st.integers(0, 60)), max_size=30)


def plain_union(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The union as disjoint sorted intervals: sort by start, extend the last one while the
    next starts at or before its end (touching intervals merge)."""
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


def _arrays(spans: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray]:
    starts = np.array([s for s, _ in spans], dtype=np.int64)
    ends = np.array([s + d for s, d in spans], dtype=np.int64)
    return starts, ends


@given(_SPANS)
def test_the_union_is_the_sweeps_interval_for_interval(drawn: list[tuple[int, int]]) -> None:
    starts, ends = _arrays(drawn)
    s, e = union(starts, ends)
    expected = plain_union([(a, a + d) for a, d in drawn])
    assert list(zip(s.tolist(), e.tolist(), strict=True)) == expected
    assert union_length(starts, ends) == sum(b - a for a, b in expected)


@given(_SPANS)
def test_intervals_in_start_order_give_the_sweeps_union_whatever_the_order_of_ties(
    drawn: list[tuple[int, int]],
) -> None:
    """``union`` takes intervals already in start order as they are (ties in any order of
    their ends, as drawn): the union is still the sweep's."""
    in_start_order = sorted(drawn, key=lambda span: span[0])
    starts, ends = _arrays(in_start_order)
    s, e = union(starts, ends)
    expected = plain_union([(a, a + d) for a, d in drawn])
    assert list(zip(s.tolist(), e.tolist(), strict=True)) == expected


def test_touching_intervals_merge_and_a_gap_keeps_them_apart() -> None:
    starts, ends = np.array([10, 0, 25, 20]), np.array([20, 10, 30, 21])
    s, e = union(starts, ends)
    assert s.tolist() == [0, 25] and e.tolist() == [21, 30]
    assert union_length(starts, ends) == 26.0
    nested_s, nested_e = union(np.array([0, 2, 1]), np.array([10, 3, 12]))
    assert nested_s.tolist() == [0] and nested_e.tolist() == [12]
    # in start order, a tie's longer interval first: the block ends at the larger end
    tied_s, tied_e = union(np.array([0, 0, 5, 14]), np.array([12, 3, 6, 15]))
    assert tied_s.tolist() == [0, 14] and tied_e.tolist() == [12, 15]


def test_no_intervals() -> None:
    empty = np.array([], dtype=np.int64)
    s, e = union(empty, empty)
    assert s.size == 0 and e.size == 0
    assert union_length(empty, empty) == 0.0
    assert span(empty, empty) == 0.0


def test_span_is_last_end_minus_first_start() -> None:
    assert span(np.array([5, 1, 9]), np.array([6, 30, 12])) == 29.0
    assert span(np.array([7.5]), np.array([7.5])) == 0.0


def test_clip_cuts_to_the_window_and_keeps_what_lies_in_it() -> None:
    """Intervals cut to [10, 20]; kept: a positive length inside, or a zero-length event that
    starts inside (at the low bound included, at the high bound not)."""
    starts = np.array([0, 5, 12, 18, 25, 10, 20, 15, 3])
    ends = np.array([5, 15, 14, 30, 40, 10, 20, 15, 10])
    s, e, keep = clip(starts, ends, 10, 20)
    assert s.tolist() == [10, 10, 12, 18, 20, 10, 20, 15, 10]
    assert e.tolist() == [10, 15, 14, 20, 20, 10, 20, 15, 10]
    assert keep.tolist() == [False, True, True, True, False, True, False, True, False]


@pytest.mark.parametrize("unit", [np.int64, np.float64])
def test_the_bounds_keep_their_unit(unit: type) -> None:
    s, e = union(np.array([0, 3], dtype=unit), np.array([2, 5], dtype=unit))
    assert s.dtype == unit and e.dtype == unit
