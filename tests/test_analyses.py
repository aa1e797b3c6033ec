"""The tile analyses on the Python API: balance, occupancy, active tiles and quality as frames.

Expected values are worked out by hand from the samples below (docs/metrics.md, "HTML
report"): tile 0 runs gemm over [0, 100) and exchange over [100, 130), tile 1 gemm over
[50, 150), tile 2 copy over [400, 410) in epoch 2; tileCount is 4.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.samples import profile as load_samples
from tests.samples import sample
from tileprof.analyses.balance import tile_balance
from tileprof.analyses.filters import Filters
from tileprof.model.profile import Profile

SAMPLES = [
    sample(0, 0, 100, "gemm", useful=50, physical=60, phase=1),
    sample(1, 50, 100, "gemm", useful=40, physical=60, phase=1),
    sample(0, 100, 30, None, kind="exchange", phase=2),
    sample(2, 400, 10, "copy", phase=3, epoch=2),
]


@pytest.fixture()
def tiny(tmp_path: Path) -> Profile:
    return load_samples(tmp_path, SAMPLES, clockHz=1000, tileCount=4)


def test_tile_balance_counts_every_tile(tiny: Profile) -> None:
    frame = tiny.tile_balance()
    assert frame.columns == ["tile", "busyCycles"]
    assert frame.rows() == [(0, 130), (1, 100), (2, 10), (3, 0)]
    assert tiny.tile_balance(epoch=1)["busyCycles"].to_list() == [130, 100, 0, 0]
    assert tiny.tile_balance(Filters(epoch=2))["busyCycles"].to_list() == [0, 0, 10, 0]
    with pytest.raises(TypeError):
        tiny.tile_balance(Filters(), epoch=1)


def test_tile_balance_by_hand() -> None:
    # tile 0 busy 5 + 7, tile 2 busy 3, tiles 1 and 3 idle; tile 5 is past tileCount 4
    matched = pl.DataFrame({"tile": [0, 0, 2, 5], "duration": [5, 7, 3, 100]})
    balance = tile_balance(matched, 4)
    assert balance.busy.dtype == np.int64  # cycles, not floats
    assert balance.busy.tolist() == [12, 0, 3, 0]
    assert (balance.minimum, balance.mean, balance.maximum) == (0, 3.75, 12)
    # the first idle tile is the least busy one
    assert (balance.idle_tiles, balance.min_tile, balance.max_tile) == (2, 1, 0)


def test_occupancy_lists_busy_cells_with_their_group(tiny: Profile) -> None:
    # [0, 410) in 41 bins of 10 cycles.
    frame = tiny.occupancy(bins=41)
    assert frame.columns == ["tile", "bin", "start", "stop", "group"]
    assert frame.height == 10 + 3 + 10 + 1
    cells = {(t, b): g for t, b, _, _, g in frame.iter_rows()}
    assert cells[(0, 0)] == "gemm" and cells[(0, 9)] == "gemm"
    assert cells[(0, 10)] == cells[(0, 12)] == "exchange"
    assert (0, 13) not in cells  # idle
    assert [cells[(1, b)] for b in (5, 14)] == ["gemm", "gemm"]
    assert cells[(2, 40)] == "copy"
    row = frame.filter((pl.col("tile") == 0) & (pl.col("bin") == 10)).row(0)
    assert row[2:4] == (100, 110)


def test_active_tiles_per_bin_and_group(tiny: Profile) -> None:
    frame = tiny.active_tiles(bins=41)
    assert frame.columns == ["bin", "start", "stop", "group", "activeTiles"]
    assert frame.height == 3 * 41  # legend: gemm, exchange, copy (by Σ duration)
    assert frame["group"].unique(maintain_order=True).to_list() == ["gemm", "exchange", "copy"]

    def at(group: str, index: int) -> float:
        hit = frame.filter((pl.col("group") == group) & (pl.col("bin") == index))
        return float(hit["activeTiles"][0])

    assert at("gemm", 5) == pytest.approx(2.0)  # [50, 60): tiles 0 and 1
    assert at("gemm", 12) == pytest.approx(1.0)  # [120, 130): tile 1 only
    assert at("exchange", 12) == pytest.approx(1.0)
    assert at("copy", 40) == pytest.approx(1.0)
    # Σ over bins × 10 cycles = the group's cycles: gemm 200, exchange 30, copy 10.
    totals = frame.group_by("group").agg(pl.col("activeTiles").sum() * 10)
    assert dict(totals.iter_rows()) == pytest.approx({"gemm": 200, "exchange": 30, "copy": 10})


def test_empty_match_gives_empty_frames(tiny: Profile) -> None:
    assert tiny.occupancy(epoch=9).height == 0
    assert tiny.active_tiles(epoch=9).height == 0
    assert tiny.tile_balance(epoch=9)["busyCycles"].sum() == 0


def test_quality_checks(tmp_path: Path) -> None:
    overlapping = [sample(0, 0, 100), sample(0, 50, 10), sample(1, 0, 10), sample(1, 10, 5)]
    profile = load_samples(tmp_path, overlapping, tileCount=4)
    frame = profile.quality()
    assert frame.columns == ["check", "count", "status", "detail"]
    rows = {check: (count, status) for check, count, status, _ in frame.iter_rows()}
    assert rows == {
        "Samples overlapping on one tile": (
            1,
            "warn",
        ),  # (0, 50) inside (0, 0, 100); touching is fine
        "Tiles above tileCount": (0, "ok"),
        "Samples with no metadata": (4, "info"),
    }
    assert frame["detail"][0].endswith(
        "1 samples start before an earlier sample on the same tile ends (1 tiles)"
    )
