"""The report's supersteps section picks its rows (``views.html.supersteps_data``): at most
``MAX_ROWS``, the longest kept in time order, and the longest shown one named (the earliest on
a tie); a tt-metal device log's table heads the time after an op call ``gapAfter``."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import polars as pl
import pytest

import tileprof
from tests.samples import frame, sample
from tileprof.analyses.critical import CriticalPath
from tileprof.analyses.filters import Filters
from tileprof.model.examples import example_profile
from tileprof.model.profile import Profile
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.supersteps_data import (
    CANDIDATE_DOCS,
    _capped,
    _longest,
    _split,
    busy_heat,
    path_sentences,
    superstep_section,
)

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


def test_the_table_is_named_after_its_section_and_repeats_no_epoch() -> None:
    """The table's id is the section's with ``-table`` (the page links to it), and its epoch
    column shows a ditto mark where the row above has the same epoch."""
    samples = [
        sample(t, s, d, f"g{t}", epoch=e)
        for e, base in ((1, 0), (2, 1000))
        for t, s, d in ((0, base, 100), (1, base, 50), (0, base + 200, 40))
    ]
    profile = Profile(frame(samples), (), 1_500_000_000, 4)
    section = superstep_section(profile, None, "tile-0-supersteps", table_from_frame)
    assert section is not None
    table = section.table
    assert table.id == "tile-0-supersteps-table"
    epoch = table.column("epoch")
    assert [c.text for c in epoch] == ["1", "1", "2", "2"]
    assert [c.ditto for c in epoch] == [False, True, False, True]
    assert not any(c.ditto for c in table.column("index"))


def test_the_heat_map_counts_supersteps_of_no_epoch() -> None:
    """A dump without epochs has supersteps whose epoch is null: their tiles are still found
    (nulls join as equal), so the map is not blank."""
    rows = pl.DataFrame(
        {"epoch": [None, None], "index": [0, 1], "cycles": [10, 20]},
        schema={"epoch": pl.Int64, "index": pl.Int64, "cycles": pl.Int64},
    )
    tiles = _tiles([(None, 0, 5), (None, 1, 20), (None, 0, 10)]).with_columns(
        tile=pl.Series([0, 1, 1])
    )
    size, heat = busy_heat(rows, tiles, 2)
    assert size == 1
    assert heat.tolist() == [[0.5, 0.0], [1.0, 1.0]]


def _section_of(steps: list[list[tuple[int, int, int]]], epoch: int | None = 1) -> Any:
    samples = [sample(t, s, e - s, f"g{t}", epoch=epoch) for step in steps for t, s, e in step]
    section = superstep_section(
        Profile(frame(samples), (), 1_500_000_000, 8), None, "s", table_from_frame
    )
    assert section is not None
    return section


def test_the_section_says_each_epochs_critical_path_largest_part_first() -> None:
    """Superstep 0 runs 0-110 (its critical tile computes 10-110), superstep 1 200-280 (its
    critical tile computes throughout): 280 cycles, of which compute 100 + 80, the first
    tile's late start 10, and the window between the supersteps 90."""
    steps = [[(0, 0, 100), (1, 0, 50), (4, 10, 110)], [(2, 200, 240), (6, 200, 280)]]
    assert _section_of(steps).critical == (
        "Epoch 1: the critical path is 280 cycles: "
        "compute 64.3%, other windows 32.1%, late start 3.6%.",
    )
    assert (
        _section_of(steps, epoch=None)
        .critical[0]
        .startswith("Epoch —: the critical path is 280 cycles: compute 64.3%")
    )


def test_path_sentences_rank_the_parts_and_leave_out_empty_ones() -> None:
    epochs = pl.DataFrame(
        {
            "epoch": [3, None],
            "cycles": [200, 0],
            "computeCycles": [120, 0],
            "lateStartCycles": [0, 0],
            "gapCycles": [50, 0],
            "exchangeWindowCycles": [30, 0],
            "otherWindowCycles": [0, 0],
        },
        schema_overrides={"epoch": pl.Int64},
    )
    found = path_sentences(cast(CriticalPath, SimpleNamespace(epochs=epochs)))
    assert found == (
        "Epoch 3: the critical path is 200 cycles: compute 60.0%, gaps 25.0%, "
        "exchange windows 15.0%.",
        "Epoch —: the critical path is 0 cycles: .",
    )


def test_the_section_ranks_the_single_edits_in_a_table_of_its_own() -> None:
    steps = [[(0, 0, 100), (1, 0, 50), (4, 10, 110)], [(2, 200, 240), (6, 200, 280)]]
    table = _section_of(steps).candidates
    assert table is not None and table.id == "s-candidates"
    columns = {c.key: c for c in table.columns}
    assert list(columns) == ["epoch", "edit", "whatIfCycles", "gainCycles", "gainShare"]
    assert {k: c.doc for k, c in columns.items() if c.doc} == CANDIDATE_DOCS
    assert [c.ditto for c in table.column("epoch")][1:] == [True] * (len(table.rows) - 1)
    gains = [c.sort for c in table.column("gainCycles")]
    assert gains == sorted(gains, reverse=True)  # largest first
    assert all(c.text.endswith("%") for c in table.column("gainShare"))


def test_the_section_of_one_epoch_shows_that_epoch_alone() -> None:
    samples = [sample(0, 0, 10, epoch=1), sample(0, 100, 10, epoch=2), sample(1, 100, 30, epoch=2)]
    profile = Profile(frame(samples), (), 1_500_000_000, 2)
    section = superstep_section(profile, Filters(epoch=2), "s", table_from_frame)
    assert section is not None
    assert [c.text for c in section.table.column("epoch")] == ["2"]
    assert [c.text for c in section.table.column("cycles")] == ["30"]
    assert section.critical == ("Epoch 2: the critical path is 30 cycles: compute 100.0%.",)
    assert superstep_section(profile, Filters(epoch=3), "s", table_from_frame) is None


def test_a_section_without_samples_ranks_no_edits() -> None:
    empty = Profile(frame([sample(0, 0, 10)]).clear(), (), 1_500_000_000, 2)
    section = superstep_section(empty, None, "s", table_from_frame)
    assert section is not None and section.candidates is None and section.critical == ()
    assert section.longest is None and section.ends.columns == ["tile", "end"]


def test_kernels_and_window_choose_supersteps_shown_whole() -> None:
    """``--kernel`` and ``--window`` choose which supersteps are shown; each shown one keeps
    every tile's figures, not only those of the chosen kernels (segmentation runs on whole
    epochs). Superstep 0: tile 0 runs ``a`` 0-100, tile 1 ``b`` 0-50; superstep 1 (200-260):
    ``b`` on both."""
    samples = [
        sample(0, 0, 100, "a"),
        sample(1, 0, 50, "b"),
        sample(0, 200, 30, "b"),
        sample(1, 200, 60, "b"),
    ]
    profile = Profile(frame(samples), (), 1_500_000_000, 2)
    by_kernel = superstep_section(profile, Filters(kernels=("a",)), "s", table_from_frame)
    assert by_kernel is not None
    assert by_kernel.split.select("index", "busy", "syncWait").rows() == [(0, 75.0, 25.0)]
    assert by_kernel.heat.tolist() == [[1.0], [0.5]]
    assert by_kernel.ends.rows() == [(0, 100), (1, 50)]
    by_window = superstep_section(profile, Filters(window=(150, 400)), "s", table_from_frame)
    assert by_window is not None
    assert [c.text for c in by_window.table.column("index")] == ["1"]
    assert by_window.split.select("index", "busy").rows() == [(1, 45.0)]
    (us,) = by_window.table.column("us")
    assert us.sort == pytest.approx(60 * 1e6 / 1.5e9)  # cycles / clockHz × 10⁶
