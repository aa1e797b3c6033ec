"""The report's supersteps section picks its rows (``views.html.supersteps_data``): at most
``MAX_ROWS``, the longest kept in time order, and the longest shown one named (the earliest on
a tie); a tt-metal device log's table heads the time after an op call ``gapAfter``."""

from __future__ import annotations

from pathlib import Path

import polars as pl

import tileprof
from tileprof.model.examples import example_profile
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.supersteps_data import _capped, _longest, _split, superstep_section

ROOT = Path(__file__).resolve().parent.parent


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


def _tiles(rows: list[tuple[int | None, int, int]]) -> pl.DataFrame:
    """Per-tile rows (epoch, index, busy) with the other parts 0."""
    frame = pl.DataFrame(
        rows, schema={"epoch": pl.Int64, "index": pl.Int64, "busy": pl.Int64}, orient="row"
    )
    return frame.with_columns(lateStart=0, gaps=0, syncWait=0)


def test_the_split_labels_each_superstep_by_epoch_when_several_are_shown() -> None:
    """Supersteps of two epochs (one of them none) are labelled epoch:index, each with its
    parts averaged over its tiles; of one epoch, by index alone."""
    rows = pl.DataFrame(
        {"epoch": [2, 2, None], "index": [0, 1, 0], "cycles": [10, 20, 30]},
        schema={"epoch": pl.Int64, "index": pl.Int64, "cycles": pl.Int64},
    )
    tiles = _tiles([(2, 0, 4), (2, 0, 8), (2, 1, 20), (None, 0, 30)])
    split = _split(rows, tiles)
    assert split.get_column("label").to_list() == ["2:0", "2:1", "—:0"]
    assert split.get_column("busy").to_list() == [6.0, 20.0, 30.0]
    one = _split(rows.head(2), tiles)
    assert one.get_column("label").to_list() == ["0", "1"]
    assert split.get_column("cycles").to_list() == [10, 20, 30]


def test_a_device_logs_table_heads_the_time_between_op_calls_gap_after() -> None:
    log = tileprof.load(ROOT / "fixtures/real/tt-device-log/profile_log_device.csv")
    tile = example_profile()
    labels = {}
    for name, profile in (("log", log), ("tile", tile)):
        section = superstep_section(profile, None, "s", table_from_frame)
        assert section is not None
        columns = {c.key: c for c in section.table.columns}
        labels[name] = columns["syncAfter"].label, columns["syncAfter"].doc
        assert columns["us"].label == "µs" and columns["exchangeCycles"].label == "exchangeCycles"
    assert labels == {
        "log": ("gapAfter", "cycles from this op call's end to the next one's start"),
        "tile": ("syncAfter", ""),
    }
