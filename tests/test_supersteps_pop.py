"""POP's imbalance terms of the supersteps (docs/metrics.md, "Imbalance (POP)"), held to an
independent computation: each dump is built here superstep by superstep as plain intervals,
and the expected figures come from numpy over those intervals, never from the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.samples import frame, sample
from tileprof.model.profile import Profile

TILES = 8
Interval = tuple[int, int, int]
"""(tile, start, end) of one compute sample."""


def profile_of(samples: list[dict[str, Any]], tile_count: int = TILES) -> Profile:
    return Profile(frame(samples), (), 1_500_000_000, tile_count)


def samples_of(steps: list[list[Interval]]) -> list[dict[str, Any]]:
    """Every interval as a compute sample of epoch 1 (group ``g<tile>``)."""
    out: list[dict[str, Any]] = []
    for intervals in steps:
        out.extend(sample(t, s, e - s, f"g{t}") for t, s, e in intervals)
    return out


def busy_by_tile(intervals: list[Interval]) -> dict[int, int]:
    """Union length of each tile's intervals, by walking the cycles (an oracle)."""
    covered: dict[int, set[int]] = {}
    for tile, start, end in intervals:
        covered.setdefault(tile, set()).update(range(start, end))
    return {tile: len(cycles) for tile, cycles in covered.items()}


def expected_step(intervals: list[Interval]) -> dict[str, float]:
    busy = busy_by_tile(intervals)
    loads = np.array(list(busy.values()), dtype=np.float64)
    length = max(e for _, _, e in intervals) - min(s for _, s, _ in intervals)
    starts: dict[int, int] = {}
    for tile, start, _ in intervals:
        starts[tile] = min(start, starts.get(tile, start))
    lb = loads.mean() / loads.max()
    comm = loads.max() / length
    return {
        "loadBalanceEfficiency": lb,
        "communicationEfficiency": comm,
        "parallelEfficiency": lb * comm,
        "startSkewCycles": max(starts.values()) - min(starts.values()),
        "imbalanceCycles": float((loads.max() - loads).sum()),
        "_mean": loads.mean(),
        "_max": loads.max(),
    }


def check(steps: list[list[Interval]]) -> Any:
    result = profile_of(samples_of(steps)).supersteps()
    rows = result.supersteps.to_dicts()
    assert len(rows) == len(steps)
    expected = [expected_step(step) for step in steps]
    for row, want in zip(rows, expected, strict=True):
        for key in (
            "loadBalanceEfficiency",
            "communicationEfficiency",
            "parallelEfficiency",
            "startSkewCycles",
            "imbalanceCycles",
        ):
            assert row[key] == pytest.approx(want[key], rel=1e-12), key
    (epoch,) = result.epochs.to_dicts()
    every = [i for step in steps for i in step]
    span = max(e for _, _, e in every) - min(s for _, s, _ in every)
    means = sum(w["_mean"] for w in expected)
    maxima = sum(w["_max"] for w in expected)
    assert epoch["loadBalanceEfficiency"] == pytest.approx(means / maxima, rel=1e-12)
    assert epoch["communicationEfficiency"] == pytest.approx(maxima / span, rel=1e-12)
    assert epoch["parallelEfficiency"] == pytest.approx(means / span, rel=1e-12)
    assert epoch["imbalanceCycles"] == sum(w["imbalanceCycles"] for w in expected)
    assert epoch["maxStartSkewCycles"] == max(w["startSkewCycles"] for w in expected)
    return result


def test_equal_loads_give_exactly_one() -> None:
    # Two supersteps where every tile computes 100 cycles from the superstep's start.
    steps = [[(t, 0, 100) for t in range(TILES)], [(t, 300, 400) for t in range(TILES)]]
    result = check(steps)
    for row in result.supersteps.to_dicts():
        assert row["loadBalanceEfficiency"] == 1.0
        assert row["communicationEfficiency"] == 1.0
        assert row["parallelEfficiency"] == 1.0
        assert (row["startSkewCycles"], row["imbalanceCycles"]) == (0, 0)
    (epoch,) = result.epochs.to_dicts()
    assert epoch["loadBalanceEfficiency"] == 1.0
    assert epoch["communicationEfficiency"] == 200 / 400  # the sync window counts against it


def test_a_different_straggler_per_superstep() -> None:
    # Superstep k: tile k runs 300 cycles, the others 100, some starting late.
    steps = []
    for k in range(4):
        base = k * 1000
        intervals = [(t, base + (t % 3) * 10, base + (t % 3) * 10 + 100) for t in range(TILES)]
        intervals[k] = (k, base, base + 300)
        steps.append(intervals)
    result = check(steps)
    # Each superstep: mean (7 × 100 + 300) / 8 = 125 over max 300.
    for row in result.supersteps.to_dicts():
        assert row["loadBalanceEfficiency"] == 125 / 300
        assert row["imbalanceCycles"] == 7 * 200
        assert row["startSkewCycles"] == 20
    # Every tile's total over the epoch is the same (one 300 and three 100 for tiles 0-3):
    # the whole-run ratio POP uses would hide what Σ mean / Σ max shows.
    totals = np.array([sum(busy_by_tile(s).get(t, 0) for s in steps) for t in range(4)])
    assert totals.mean() / totals.max() == 1.0
    assert result.epochs.row(0, named=True)["loadBalanceEfficiency"] == pytest.approx(125 / 300)


def test_idle_tiles_are_left_out_and_unions_count_once() -> None:
    # Superstep 0: tiles 0-2 active (tile 2 with two overlapping samples, union 150), the
    # other five idle. Superstep 1: tiles 3 and 4 with internal gaps.
    steps = [
        [(0, 0, 100), (1, 0, 120), (2, 0, 100), (2, 50, 150)],
        [(3, 500, 540), (3, 560, 600), (4, 510, 600)],
    ]
    result = check(steps)
    first, second = result.supersteps.to_dicts()
    assert first["activeTiles"] == 3 and first["idleTiles"] == 5
    assert first["loadBalanceEfficiency"] == pytest.approx((100 + 120 + 150) / 3 / 150)
    assert first["loadBalanceEfficiency"] == first["activeTileBalance"]
    assert first["tileBalance"] < first["loadBalanceEfficiency"]  # counts the idle tiles
    assert second["communicationEfficiency"] == 90 / 100
    assert second["startSkewCycles"] == 10


def test_epoch_without_supersteps_has_null_efficiencies() -> None:
    result = profile_of([sample(0, 0, 50, None, kind="exchange")]).supersteps()
    (epoch,) = result.epochs.to_dicts()
    assert epoch["loadBalanceEfficiency"] is None
    assert epoch["communicationEfficiency"] is None
    assert epoch["parallelEfficiency"] is None
    assert epoch["imbalanceCycles"] == 0
    assert epoch["maxStartSkewCycles"] is None


def test_table_json_and_csv_carry_the_terms() -> None:
    from tileprof.views.supersteps_export import render_csv, render_json
    from tileprof.views.supersteps_table import render

    steps = [[(0, 0, 100), (1, 0, 50)]]
    result = profile_of(samples_of(steps)).supersteps()
    header = render_csv(result).splitlines()[0].split(",")
    assert header[-5:] == [
        "loadBalanceEfficiency",
        "communicationEfficiency",
        "parallelEfficiency",
        "startSkewCycles",
        "imbalanceCycles",
    ]
    assert '"loadBalanceEfficiency": 0.75' in render_json(result)
    text = render(result, "tile device")
    assert "load balance 75.00% × communication efficiency 100.00% = parallel efficiency" in text
    assert "50 tile-cycles lost to imbalance" in text


def test_heat_map_bins_tiles_and_counts_idle_as_zero() -> None:
    from tileprof.views.html.supersteps_data import busy_heat

    steps = [
        [(0, 0, 100), (1, 0, 50), (4, 0, 100), (7, 0, 25)],
        [(2, 200, 240), (6, 200, 280)],
    ]
    result = profile_of(samples_of(steps)).supersteps()
    size, heat = busy_heat(result.supersteps, result.tiles, TILES, max_rows=3)
    # Bins of ⌈8 / 3⌉ = 3 tiles: {0, 1, 2}, {3, 4, 5}, {6, 7}; lengths 100 and 80.
    share = np.zeros((TILES, 2))
    for column, intervals in enumerate(steps):
        length = max(e for _, _, e in intervals) - min(s for _, s, _ in intervals)
        for tile, busy in busy_by_tile(intervals).items():
            share[tile, column] = busy / length
    want = np.array([share[0:3].mean(0), share[3:6].mean(0), share[6:8].mean(0)])
    assert size == 3
    np.testing.assert_allclose(heat, want, rtol=1e-12)


def test_report_shows_the_heat_map_and_epoch_terms() -> None:
    from tileprof.views.html import build_report, render

    html = render(build_report([profile_of(samples_of([[(0, 0, 100), (1, 0, 50)]]))]))
    assert 'id="tile-0-supersteps-heat"' in html
    assert "one row per tile, 8 tiles." in html
    assert "75.00% × 100.00% = 75.00%" in html


def test_epochs_option_in_csv_and_table(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tests.samples import write_dump
    from tileprof.analyses.supersteps import EPOCH_FIELDS
    from tileprof.commands.cli import cli

    steps = [[(0, 0, 100), (1, 0, 50)]]
    dump = write_dump(tmp_path / "d.json", samples_of(steps), clockHz=1.5e9, tileCount=TILES)
    runner = CliRunner()
    csv_out = runner.invoke(cli, ["supersteps", str(dump), "--per-epoch", "--format", "csv"])
    header, row = csv_out.stdout.splitlines()
    assert header.split(",") == list(EPOCH_FIELDS)
    assert row.split(",")[-5:] == ["0.75", "1.0", "0.75", "50", "0"]
    table = runner.invoke(cli, ["supersteps", str(dump), "--per-epoch"]).stdout
    # The epoch table: epoch 1, 1 superstep of 100 cycles, sync wait 25 of 4 × 100, then POP's.
    assert (
        "    1 │          1 │    100 │     6.25% │ 75.00% │ 100.00% │ 75.00% │   50 │        0"
        in (table.splitlines())
    )
    both = runner.invoke(
        cli, ["supersteps", str(dump), "--per-epoch", "--per-tile", "--format", "csv"]
    )
    assert both.exit_code == 2 and "give --per-tile or --per-epoch" in both.stderr


def test_full_device_with_random_loads_matches_numpy() -> None:
    from tileprof.inputs.synthetic.synth import DumpBuilder

    tiles, steps, spacing = 1472, 5, 20_000
    rng = np.random.default_rng(24)
    active = rng.random((steps, tiles)) < 0.9  # about a tenth of the tiles idle per superstep
    active[:, 0] = True  # tile 0 always starts at the superstep's start
    late = np.where(np.arange(tiles) == 0, 0, rng.integers(0, 300, (steps, tiles)))
    busy = rng.integers(1_000, 5_000, (steps, tiles))
    busy[np.arange(steps), rng.integers(0, tiles, steps)] = 12_000  # a straggler per superstep
    step_of, tile_of = np.nonzero(active & (busy > 0))
    builder = DumpBuilder(1_500_000_000, tiles)
    builder.add(
        tile=tile_of,
        offset=step_of * spacing + late[step_of, tile_of],
        duration=busy[step_of, tile_of],
        epoch=0,
        kind="compute",
        kernel="k",
    )
    samples, metadata = builder.build().to_frame()
    result = Profile(samples, tuple(metadata), 1_500_000_000, tiles).supersteps()
    rows = result.supersteps.sort("index").to_dicts()
    means, maxima, lost = [], [], 0
    for k, row in enumerate(rows):
        loads = busy[k][active[k]].astype(np.float64)
        length = (late[k] + busy[k])[active[k]].max()
        means.append(loads.mean())
        maxima.append(loads.max())
        lost += int((loads.max() - loads).sum())
        assert row["loadBalanceEfficiency"] == pytest.approx(loads.mean() / loads.max(), rel=1e-12)
        assert row["communicationEfficiency"] == pytest.approx(loads.max() / length, rel=1e-12)
        assert row["startSkewCycles"] == late[k][active[k]].max()
        assert row["imbalanceCycles"] == int((loads.max() - loads).sum())
    (epoch,) = result.epochs.to_dicts()
    span = (steps - 1) * spacing + (late[-1] + busy[-1])[active[-1]].max()
    assert epoch["loadBalanceEfficiency"] == pytest.approx(sum(means) / sum(maxima), rel=1e-12)
    assert epoch["communicationEfficiency"] == pytest.approx(sum(maxima) / span, rel=1e-12)
    assert epoch["imbalanceCycles"] == lost
