"""The time bins behind the occupancy map and the active-tiles curve, by hand
(tileprof/analyses/timeline.py; issue 38, branch mutR).

Each test writes its samples out and states the bins, legend, cells and means they give.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from tests.samples import frame, sample
from tileprof.analyses.timeline import (
    IDLE,
    active_tiles_frame,
    occupancy_frame,
    tile_activity,
    time_bins,
)


def test_time_bins_by_hand() -> None:
    # 10 cycles in 3 bins: width ⌈10 / 3⌉ = 4, so 3 bins, the last covering 2 cycles of 4
    bins = time_bins(0, 10, 3)
    assert (bins.start, bins.stop, bins.width, bins.count) == (0, 10, 4, 3)
    assert bins.edges.tolist() == [0, 4, 8, 12]
    assert bins.covered.tolist() == [4.0, 4.0, 2.0]
    # 1,000 cycles in 320 bins: width 4, so only 250 bins are needed
    bins = time_bins(100, 1100)
    assert (bins.width, bins.count) == (4, 250)
    # an empty span is one bin of one cycle
    bins = time_bins(5, 5, 3)
    assert (bins.start, bins.stop, bins.width, bins.count) == (5, 6, 1, 1)
    assert bins.covered.tolist() == [1.0]


def test_one_group_alone_has_a_legend_of_one() -> None:
    # tile 0 runs [0, 10), tile 1 runs [5, 15): three bins of 5 cycles
    samples = frame([sample(0, 0, 10, "gemm"), sample(1, 5, 10, "gemm")])
    occupancy, active = tile_activity(samples, 2, 3)
    assert occupancy is not None and active is not None
    assert occupancy.legend == active.legend == ("gemm",)
    assert occupancy.cells.tolist() == [[0, 0, IDLE], [IDLE, 0, 0]]
    assert occupancy.tiles_per_row == 1
    assert active.series.tolist() == [[1.0, 2.0, 1.0]]
    assert list(active.by_kind) == ["compute"]
    assert active.by_kind["compute"].tolist() == [1.0, 2.0, 1.0]


def test_more_groups_than_the_legend_share_other() -> None:
    # twelve kernels a..l, one per tile from offset 0; b and c tie at 10 cycles (by name, b
    # first; c is written first), k (2 cycles) and l (1) are the two past the ten named groups
    works = {"a": 12, "c": 10, "b": 10, "d": 9, "e": 8, "f": 7}
    works |= {"g": 6, "h": 5, "i": 4, "j": 3, "k": 2, "l": 1}
    samples = frame([sample(t, 0, w, name) for t, (name, w) in enumerate(works.items())])
    occupancy, active = tile_activity(samples, 12, 12)  # [0, 12) in bins of one cycle
    assert occupancy is not None and active is not None
    assert occupancy.legend == (*"abcdefghij", "other (2 groups)")
    assert occupancy.other == active.other == "other (2 groups)"
    # tile 10 (k) and tile 11 (l) are drawn as "other", legend index 10
    assert occupancy.cells[10].tolist() == [10, 10] + [IDLE] * 10
    assert occupancy.cells[11].tolist() == [10] + [IDLE] * 11
    assert occupancy.cells[1].tolist() == [2] * 10 + [IDLE] * 2  # c, 10 cycles
    assert active.series[10].tolist() == [2.0, 1.0] + [0.0] * 10
    assert active.series[0].tolist() == [1.0] * 12  # a
    cells = occupancy_frame(samples, 12, 12)
    assert cells.filter(cells["tile"] == 11)["group"].to_list() == ["other (2 groups)"]
    curve = active_tiles_frame(samples, 12, 12)
    other = curve.filter(curve["group"] == "other (2 groups)")
    assert other["activeTiles"].to_list() == [2.0, 1.0] + [0.0] * 10


def test_a_kernel_called_other_keeps_its_own_legend_entry() -> None:
    """Twelve kernels, the biggest called ``other``: it is the first entry, with its own
    colour and its own cells; the two smallest share the grey ``other (2 groups)``."""
    from tileprof.views.html.charts import OTHER_COLOUR, colours

    works = {"other": 12, "b": 10, "c": 10, "d": 9, "e": 8, "f": 7}
    works |= {"g": 6, "h": 5, "i": 4, "j": 3, "k": 2, "l": 1}
    samples = frame([sample(t, 0, w, name) for t, (name, w) in enumerate(works.items())])
    occupancy, active = tile_activity(samples, 12, 12)
    assert occupancy is not None and active is not None
    assert occupancy.legend == ("other", *"bcdefghij", "other (2 groups)")
    assert occupancy.cells[0].tolist() == [0] * 12  # the kernel "other"
    assert occupancy.cells[10].tolist() == [10, 10] + [IDLE] * 10  # k, shared
    assert active.series[0].tolist() == [1.0] * 12
    palette = colours(occupancy.legend, occupancy.other)
    assert palette[0] != OTHER_COLOUR and palette[-1] == OTHER_COLOUR
    assert palette.count(OTHER_COLOUR) == 1
    curve = active_tiles_frame(samples, 12, 12)
    assert curve.filter(curve["group"] == "other")["activeTiles"].to_list() == [1.0] * 12


def test_the_shared_entry_is_named_apart_from_every_kept_group() -> None:
    """A kernel already called ``other (2 groups)``: the shared entry takes parentheses."""
    works = {"other (2 groups)": 12, "b": 10, "c": 10, "d": 9, "e": 8, "f": 7}
    works |= {"g": 6, "h": 5, "i": 4, "j": 3, "k": 2, "l": 1}
    samples = frame([sample(t, 0, w, name) for t, (name, w) in enumerate(works.items())])
    occupancy, _ = tile_activity(samples, 12, 12)
    assert occupancy is not None
    assert occupancy.legend[0] == "other (2 groups)"
    assert occupancy.legend[-1] == occupancy.other == "(other (2 groups))"


def test_samples_with_neither_kernel_nor_kind_are_named_none() -> None:
    # tile 0: no kernel, no kind, [0, 4); tile 1: gemm [0, 2); two bins of 2 cycles
    samples = frame([sample(0, 0, 4, None, kind=None), sample(1, 0, 2, "gemm")])  # type: ignore[arg-type]
    occupancy, active = tile_activity(samples, 2, 2)
    assert occupancy is not None and active is not None
    assert occupancy.legend == ("(none)", "gemm")
    assert occupancy.cells.tolist() == [[0, 0], [1, IDLE]]
    assert sorted(active.by_kind) == ["(none)", "compute"]
    assert active.by_kind["(none)"].tolist() == [1.0, 1.0]
    assert active.by_kind["compute"].tolist() == [1.0, 0.0]


def test_a_device_past_the_row_limit_gets_rows_of_two_tiles() -> None:
    # 4,097 tiles: rows of ⌈4097 / 4096⌉ = 2 tiles, 2,049 rows; tile 1 is in row 0, tile 4096
    # in row 2048, which the frame names by its first tile
    samples = frame([sample(1, 0, 10, "a"), sample(4096, 0, 10, "b")])
    occupancy, _ = tile_activity(samples, 4097, 1)
    assert occupancy is not None
    assert occupancy.tiles_per_row == 2
    assert occupancy.cells.shape == (2049, 1)
    assert occupancy.cells[0, 0] == 0 and occupancy.cells[2048, 0] == 1
    assert occupancy.cells[1:2048].tolist() == [[IDLE]] * 2047
    cells = occupancy_frame(samples, 4097, 1)
    assert cells.rows() == [(0, 0, 0, 10, "a"), (4096, 0, 0, 10, "b")]


def test_tiles_past_the_tile_count_are_left_out() -> None:
    samples = frame([sample(0, 0, 10, "a"), sample(2, 0, 100, "b")])
    occupancy, active = tile_activity(samples, 2, 2)
    assert occupancy is not None and active is not None
    assert occupancy.legend == ("a",)
    assert (occupancy.bins.start, occupancy.bins.stop) == (0, 10)
    assert tile_activity(frame([sample(2, 0, 10, "b")]), 2) == (None, None)
    assert occupancy_frame(frame([sample(2, 0, 10, "b")]), 2).height == 0


@pytest.mark.parametrize("bins", [1, 7])
def test_the_curve_adds_up_to_the_busy_cycles(bins: int) -> None:
    samples = frame([sample(0, 3, 17, "a"), sample(1, 0, 5, "b"), sample(1, 9, 2, "a")])
    _, active = tile_activity(samples, 2, bins)
    assert active is not None
    per_group = (active.series * active.bins.covered).sum(axis=1)
    np.testing.assert_allclose(per_group, [19.0, 5.0])


def test_a_sample_of_no_cycles_at_the_end_of_the_span_adds_nothing() -> None:
    # tile 1 runs [0, 10) in two bins of 5; tile 0's sample of no cycles starts at 10, the
    # span's end, past the last bin's first cycle: it is clipped into the last bin, with 0 cycles
    samples = frame([sample(0, 10, 0, "a"), sample(1, 0, 10, "a")])
    occupancy, active = tile_activity(samples, 2, 2)
    assert occupancy is not None and active is not None
    assert (occupancy.bins.width, occupancy.bins.count) == (5, 2)
    assert occupancy.cells.tolist() == [[IDLE, IDLE], [0, 0]]
    assert active.series.tolist() == [[1.0, 1.0]]


OCCUPANCY_SCHEMA = {"tile": pl.Int64, "bin": pl.Int64, "start": pl.Int64, "stop": pl.Int64}
ACTIVE_SCHEMA = {"bin": pl.Int64, "start": pl.Int64, "stop": pl.Int64, "group": pl.String}


def test_frames_without_rows_keep_their_columns() -> None:
    # nothing in range: no map at all
    outside = frame([sample(2, 0, 10, "b")])
    assert occupancy_frame(outside, 2).schema == {**OCCUPANCY_SCHEMA, "group": pl.String}
    assert active_tiles_frame(outside, 2).schema == {**ACTIVE_SCHEMA, "activeTiles": pl.Float64}
    # samples of no cycles only: a map whose every cell is idle, so no row either
    instants = frame([sample(0, 5, 0, "a"), sample(1, 5, 0, "a")])
    occupancy, _ = tile_activity(instants, 2, 4)
    assert occupancy is not None and (occupancy.cells == IDLE).all()
    cells = occupancy_frame(instants, 2, 4)
    assert cells.height == 0
    assert cells.schema == {**OCCUPANCY_SCHEMA, "group": pl.String}
    curve = active_tiles_frame(instants, 2, 4)
    assert curve.rows() == [(0, 5, 6, "a", 0.0)]  # one bin of one cycle, no tile active
    assert curve.schema == {**ACTIVE_SCHEMA, "activeTiles": pl.Float64}
