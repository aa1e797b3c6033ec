"""The report's supersteps section picks its rows (``views.html.supersteps_data``): at most
``MAX_ROWS``, the longest kept in time order, and the longest shown one named (the earliest on
a tie)."""

from __future__ import annotations

import polars as pl

from tileprof.views.html.supersteps_data import _capped, _longest


def _steps(cycles: list[int]) -> pl.DataFrame:
    return pl.DataFrame({"index": list(range(len(cycles))), "cycles": cycles})


def test_the_longest_supersteps_are_kept_in_time_order() -> None:
    steps = _steps([5, 9, 1, 9, 7, 2])
    kept, note = _capped(steps, limit=3)
    assert kept.columns == ["index", "cycles"]
    assert kept.get_column("index").to_list() == [1, 3, 4]
    assert note == "The 3 longest of 6 supersteps, in time order."
    ties, _ = _capped(_steps([4, 4, 4, 4]), limit=2)
    assert ties.get_column("index").to_list() == [0, 1]  # the earliest among equal lengths


def test_a_table_within_the_limit_is_shown_whole_without_a_note() -> None:
    steps = _steps([5, 9, 1])
    kept, note = _capped(steps, limit=3)
    assert kept.equals(steps) and note == ""


def test_the_longest_shown_superstep_is_the_earliest_on_a_tie() -> None:
    longest = _longest(_steps([3, 8, 2, 8]))
    assert longest is not None and (longest["index"], longest["cycles"]) == (1, 8)
    assert _longest(_steps([])) is None
