"""Supersteps: segmentation from compute timing, the per-tile split, windows and the command.

Expected values are worked out by hand in the comments, or come from a brute-force oracle
that walks every cycle (the hypothesis test), never from the code under test.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.samples import frame, sample, write_dump
from tileprof.analyses.supersteps import SUPERSTEP_FIELDS, TILE_FIELDS, Supersteps
from tileprof.commands.cli import cli
from tileprof.core.errors import OptionError
from tileprof.model.profile import Profile
from tileprof.testing import TileDumpFactory


def profile_of(samples: list[dict[str, Any]], tile_count: int = 4) -> Profile:
    return Profile(frame(samples), (), 1_500_000_000, tile_count)


def rows(result: Supersteps) -> list[dict[str, Any]]:
    return result.supersteps.to_dicts()


def tile_rows(result: Supersteps) -> dict[tuple[int, int], dict[str, Any]]:
    return {(r["index"], r["tile"]): r for r in result.tiles.to_dicts()}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


# Scenario A (epoch 1, 4 tiles), worked out by hand:
#   superstep 0 = [0, 220): tile 0 [0,100) [150,200); tile 1 [20,220) "b"; tile 2 [10,60) and
#     [40,220) (overlapping on one tile: union [10,220)); tile 3 idle.
#   window 0 = [220, 300); a zero-length compute sample at 250 changes nothing.
#   superstep 1 = [300, 400): tile 3 alone.
#   trailing window 1 = [400, 450).
#   exchange: tile 0 [200,260) → 20 in superstep 0, 40 in window 0 → window 0;
#             tile 3 [210,330) → 10 in s0, 80 in w0, 30 in s1 → window 0;
#             tile 1 [350,350) zero-length inside superstep 1 → window 1;
#             tile 2 [400,450) → window 1.
#   other: tile 0 "host" [260,280) → window 0; 20 cycles.
SCENARIO_A = [
    sample(0, 0, 100, "a"),
    sample(0, 150, 50, "a"),
    sample(1, 20, 200, "b"),
    sample(2, 10, 50, "a"),
    sample(2, 40, 180, "c"),
    sample(0, 250, 0, "a"),
    sample(3, 300, 100, "d"),
    sample(0, 200, 60, None, kind="exchange"),
    sample(3, 210, 120, None, kind="exchange"),
    sample(1, 350, 0, None, kind="exchange"),
    sample(2, 400, 50, None, kind="exchange"),
    sample(0, 260, 20, None, kind="host"),
]


def test_scenario_a_supersteps_by_hand() -> None:
    result = profile_of(SCENARIO_A).supersteps()
    first, second = rows(result)
    assert (first["start"], first["end"], first["cycles"], first["syncAfter"]) == (0, 220, 220, 80)
    assert (second["start"], second["end"], second["cycles"], second["syncAfter"]) == (
        300,
        400,
        100,
        None,
    )
    # Σ busy = 150 + 200 + 210 = 560, max busy 210, tileCount 4, 3 active tiles.
    assert first["activeTiles"] == 3 and first["idleTiles"] == 1
    assert first["tileBalance"] == 560 / 840
    assert first["activeTileBalance"] == 560 / 630
    assert first["efficiency"] == 560 / 880
    assert first["meanSyncWait"] == 20 / 3 and first["maxSyncWait"] == 20
    # Tiles 1 and 2 both end at 220: the lower index is critical, and the margin is 0.
    assert first["criticalTile"] == 1 and first["criticalGroup"] == "b"
    assert first["stragglerMargin"] == 0
    assert first["exchangeCycles"] == 60 + 120 and first["overlappedExchangeCycles"] == 20 + 10
    assert second["activeTiles"] == 1 and second["idleTiles"] == 3
    assert second["tileBalance"] == 0.25 and second["activeTileBalance"] == 1.0
    assert second["efficiency"] == 0.25
    assert second["criticalTile"] == 3 and second["criticalGroup"] == "d"
    assert second["stragglerMargin"] is None  # no other active tile
    assert second["exchangeCycles"] == 50 and second["overlappedExchangeCycles"] == 30


def test_scenario_a_tiles_by_hand() -> None:
    tiles = tile_rows(profile_of(SCENARIO_A).supersteps())
    split = {key: (r["lateStart"], r["busy"], r["gaps"], r["syncWait"]) for key, r in tiles.items()}
    assert split == {
        (0, 0): (0, 150, 50, 20),
        (0, 1): (20, 200, 0, 0),
        (0, 2): (10, 210, 0, 0),
        (1, 3): (0, 100, 0, 0),
    }
    assert (0, 3) not in tiles  # idle: no row


def test_scenario_a_epoch_row_by_hand() -> None:
    (epoch,) = profile_of(SCENARIO_A).supersteps().epochs.to_dicts()
    assert epoch == {
        "epoch": 1,
        "start": 0,
        "end": 450,
        "cycles": 450,
        "supersteps": 2,
        "syncWaitCycles": 20,
        "syncWaitShare": 20 / (4 * 450),
        "leadingExchangeCycles": 0,
        "otherCycles": 20,
        # Busy: superstep 0 tiles 0-2 150, 200, 210 (mean 560/3, max 210); superstep 1
        # tile 3 100. Σ mean / Σ max, Σ max / 450, 3 × 210 − 560, late starts 0, 20, 10.
        "loadBalanceEfficiency": (560 / 3 + 100) / 310,
        "communicationEfficiency": 310 / 450,
        "parallelEfficiency": (560 / 3 + 100) / 310 * (310 / 450),
        "imbalanceCycles": 70,
        "maxStartSkewCycles": 20,
    }


def test_an_epoch_that_starts_late_by_hand() -> None:
    # Epoch 3 spans [900, 1100) on 2 tiles: a leading exchange [900, 1000) on tile 0, then one
    # superstep [1000, 1100): tile 0 busy 100, tile 1 busy 60 and waiting 40.
    samples = [
        sample(0, 900, 100, None, kind="exchange", epoch=3),
        sample(0, 1000, 100, "a", epoch=3),
        sample(1, 1000, 60, "b", epoch=3),
    ]
    (epoch,) = profile_of(samples, tile_count=2).supersteps().epochs.to_dicts()
    assert epoch == {
        "epoch": 3,
        "start": 900,
        "end": 1100,
        "cycles": 200,
        "supersteps": 1,
        "syncWaitCycles": 40,
        "syncWaitShare": 40 / (2 * 200),
        "leadingExchangeCycles": 100,
        "otherCycles": 0,
        # mean busy 80, max 100; 100 of the 200 cycles; 2 × 100 − 160
        "loadBalanceEfficiency": 0.8,
        "communicationEfficiency": 0.5,
        "parallelEfficiency": 0.8 * 0.5,
        "imbalanceCycles": 40,
        "maxStartSkewCycles": 0,
    }


def test_epoch_without_compute_and_leading_exchange() -> None:
    samples = [
        # epoch 2: no compute at all; every non-compute sample is in the leading window.
        sample(0, 0, 100, None, kind="exchange", epoch=2),
        sample(1, 50, 20, None, kind="exchange", epoch=2),
        sample(2, 10, 5, None, kind=None, epoch=2),  # no kind: other
        sample(3, 0, 40, "k", epoch=2),  # compute of zero length only would be no superstep...
        # epoch 3: exchange before the first compute.
        sample(0, 1000, 50, None, kind="exchange", epoch=3),
        sample(1, 1050, 50, "k", epoch=3),
    ]
    samples[3]["duration"] = 0  # ...so it is one: it covers no cycle
    result = profile_of(samples).supersteps()
    assert [(r["epoch"], r["start"], r["end"]) for r in rows(result)] == [(3, 1050, 1100)]
    epochs = {r["epoch"]: r for r in result.epochs.to_dicts()}
    assert epochs[2]["supersteps"] == 0 and epochs[2]["leadingExchangeCycles"] == 120
    assert epochs[2]["otherCycles"] == 5 and epochs[2]["syncWaitCycles"] == 0
    assert (epochs[2]["start"], epochs[2]["end"]) == (0, 100)
    assert epochs[3]["leadingExchangeCycles"] == 50
    assert rows(result)[0]["exchangeCycles"] == 0


def test_exchange_tie_goes_to_the_earlier_window() -> None:
    samples = [
        sample(0, 0, 100, "k"),  # superstep 0 [0,100), window 0 [100,200)
        sample(0, 200, 10, "k"),  # superstep 1 [200,210), window 1 [210,310)
        sample(0, 310, 90, "k"),  # superstep 2 [310,400)
        sample(1, 150, 110, None, kind="exchange"),  # 50 in w0, 10 in s1, 50 in w1: tie → w0
        sample(2, 160, 110, None, kind="exchange"),  # 40 in w0, 60 in w1 → w1
    ]
    result = profile_of(samples).supersteps()
    assert [r["exchangeCycles"] for r in rows(result)] == [110, 110, 0]
    assert [r["overlappedExchangeCycles"] for r in rows(result)] == [0, 20, 0]


def test_overlapped_exchange_of_a_superstep_whose_window_holds_nothing() -> None:
    samples = [
        sample(0, 100, 100, "a"),  # superstep 0 [100,200), window 0 [200,300)
        sample(0, 300, 100, "b"),  # superstep 1 [300,400), window 1 [400,400): empty
        sample(1, 250, 100, None, kind="exchange"),  # 50 in w0, 50 in s1 → w0
    ]
    result = profile_of(samples).supersteps()
    assert [r["exchangeCycles"] for r in rows(result)] == [100, 0]
    assert [r["overlappedExchangeCycles"] for r in rows(result)] == [0, 50]


def test_a_sample_ending_at_the_last_cycle_stays_in_its_epoch() -> None:
    # The exchange's last cycle, 200, is the latest cycle of any epoch; epoch 2 opens with a
    # leading window at cycle 0. The exchange lies in epoch 1's superstep 0 and window 0.
    samples = [
        sample(0, 0, 100, "a", epoch=1),  # superstep 0 [0,100), window 0 [100,201)
        sample(1, 50, 151, None, kind="exchange", epoch=1),  # 50 in s0, 101 in w0
        sample(0, 0, 10, None, kind="exchange", epoch=2),  # leading window [0,10)
        sample(0, 10, 10, "a", epoch=2),  # superstep 0 [10,20)
    ]
    result = profile_of(samples, tile_count=2).supersteps()
    assert [
        (r["epoch"], r["exchangeCycles"], r["overlappedExchangeCycles"]) for r in rows(result)
    ] == [(1, 151, 50), (2, 0, 0)]
    assert [r["leadingExchangeCycles"] for r in result.epochs.to_dicts()] == [0, 10]


def test_touching_pieces_merge_and_min_sync_gap() -> None:
    samples = [
        sample(0, 0, 100, "k"),
        sample(0, 105, 95, "k"),  # gap of 5 after [0,100)
        sample(1, 0, 50, "k"),
        sample(0, 300, 100, "k"),  # gap of 100 after [105,200)
        sample(1, 400, 50, "k"),  # touches [300,400): one superstep [300,450)
    ]

    def pieces(gap: int) -> list[tuple[int, int]]:
        result = profile_of(samples).supersteps(min_sync_gap=gap)
        return [(r["start"], r["end"]) for r in rows(result)]

    assert pieces(0) == [(0, 100), (105, 200), (300, 450)]
    assert pieces(5) == [(0, 100), (105, 200), (300, 450)]  # 5 is not shorter than 5
    assert pieces(6) == [(0, 200), (300, 450)]
    assert pieces(101) == [(0, 450)]
    merged = tile_rows(profile_of(samples).supersteps(min_sync_gap=6))
    assert (merged[(0, 0)]["busy"], merged[(0, 0)]["gaps"]) == (195, 5)
    assert (merged[(0, 1)]["busy"], merged[(0, 1)]["syncWait"]) == (50, 150)


def test_a_gap_of_one_cycle_opens_a_superstep() -> None:
    samples = [sample(0, 0, 100, "k"), sample(1, 101, 9, "k")]  # [0,100), then [101,110)

    def pieces(gap: int) -> list[tuple[int, int]]:
        result = profile_of(samples).supersteps(min_sync_gap=gap)
        return [(r["start"], r["end"]) for r in rows(result)]

    assert pieces(0) == pieces(1) == [(0, 100), (101, 110)]
    assert pieces(2) == [(0, 110)]


def test_filters_choose_rows_and_never_resegment() -> None:
    profile = profile_of(SCENARIO_A)
    everything = rows(profile.supersteps())
    assert rows(profile.supersteps(window="250:310")) == everything[1:]
    assert rows(profile.supersteps(window=(0, 1))) == everything[:1]
    assert rows(profile.supersteps(kernels="d")) == everything[1:]
    chosen = profile.supersteps(kernels=["c"])
    assert rows(chosen) == everything[:1]
    assert chosen.tiles.get_column("tile").to_list() == [2]  # only the tile that ran "c"
    longest = profile.supersteps(top=1)
    assert rows(longest) == everything[:1]
    assert longest.epochs.to_dicts() == profile.supersteps().epochs.to_dicts()


def test_samples_without_epoch_form_their_own_epoch() -> None:
    samples = [sample(0, 0, 10, "k", epoch=None), sample(0, 50, 10, "k", epoch=1)]
    result = profile_of(samples).supersteps()
    # Samples without an epoch sort before every numbered epoch.
    assert [(r["epoch"], r["start"]) for r in rows(result)] == [(None, 0), (1, 50)]
    assert result.epochs.height == 2


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"epoch": 7}, "--epoch 7: no samples in that epoch (epochs: 1)"),
        ({"min_sync_gap": -1}, "--min-sync-gap -1: must be at least 0"),
        ({"top": 0}, "--top 0: must be at least 1"),
        ({"window": "9:3"}, "--window '9:3': need 0 ≤ START < END"),
        # not integers: a bool is refused too, though Python counts it as one
        ({"min_sync_gap": True}, "--min-sync-gap: expected an integer, not True"),
        ({"min_sync_gap": 2.5}, "--min-sync-gap: expected an integer, not 2.5"),
        ({"top": False}, "--top: expected an integer, not False"),
        ({"top": "3"}, "--top: expected an integer, not '3'"),
    ],
)
def test_bad_options_raise_option_error(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as caught:
        profile_of(SCENARIO_A).supersteps(**options)
    assert str(caught.value) == message


# ---------------------------------------------------------------- reference and fixtures


def test_example_epoch_0_has_six_even_supersteps() -> None:
    from tileprof.model.examples import example_profile

    result = example_profile().supersteps(epoch=0)
    steps = rows(result)
    # tileprof.inputs.synthetic.reference: step k computes on every tile over [32000k + s, 32000k +
    # s + 20000),
    # s = 6·(tile mod 7) ≤ 36, then exchanges for 8000 cycles.
    assert [r["start"] for r in steps] == [32_000 * k for k in range(6)]
    assert {r["cycles"] for r in steps} == {20_036}
    assert [r["syncAfter"] for r in steps] == [11_964] * 5 + [None]
    assert {r["activeTiles"] for r in steps} == {1472}
    # Tiles with tile mod 7 = 6 end last; tile 6 is the lowest, and tile 13 ties it.
    assert {(r["criticalTile"], r["stragglerMargin"]) for r in steps} == {(6, 0)}
    # Exchange on tile t starts at 20000 + s: 36 − s cycles inside the span. Per 7 tiles
    # 36+30+24+18+12+6+0 = 126; 1472 = 210·7 + 2 (s = 0, 6): 210·126 + 36 + 30.
    assert {r["overlappedExchangeCycles"] for r in steps} == {26_526}
    assert {r["exchangeCycles"] for r in steps} == {1472 * 8000}
    # Sync wait per step: 36 − s per tile, the same 26,526 tile-cycles; six steps.
    assert result.epochs.get_column("syncWaitCycles").to_list() == [6 * 26_526]


def test_tail_imbalance_fixture_names_tile_7(tile_dump: TileDumpFactory) -> None:
    # fixtures/tail-imbalance: gemm samples on tiles 7, 91 and 200 run 3.5× longer; tile 7's
    # second sample ends last.
    (step,) = rows(tile_dump("tail-imbalance").supersteps(epoch=1))
    assert step["criticalTile"] == 7
    assert step["criticalGroup"] == "gemm_f16_rows_k80"


# ---------------------------------------------------------------- the identity, against an oracle

SAMPLE = st.tuples(
    st.integers(0, 5),  # tile
    st.integers(0, 300),  # offset
    st.integers(0, 60),  # duration
    st.sampled_from(["compute", "compute", "exchange", None]),
    st.sampled_from([0, 1]),
)


def oracle(
    samples: list[tuple[int, int, int, str | None, int]], gap: int
) -> dict[int, list[tuple[int, int, dict[int, int]]]]:
    """Per epoch: supersteps (start, end, busy per tile), by walking every cycle."""
    result: dict[int, list[tuple[int, int, dict[int, int]]]] = {}
    for epoch in {s[4] for s in samples}:
        computes = [s for s in samples if s[4] == epoch and s[3] == "compute" and s[2] > 0]
        covered = sorted({c for s in computes for c in range(s[1], s[1] + s[2])})
        pieces: list[list[int]] = []
        for cycle in covered:
            if pieces and (cycle - pieces[-1][1] < max(gap, 1)):
                pieces[-1][1] = cycle + 1
            else:
                pieces.append([cycle, cycle + 1])
        steps = []
        for start, end in pieces:
            busy: dict[int, set[int]] = {}
            for s in computes:
                if start <= s[1] < end:
                    busy.setdefault(s[0], set()).update(range(s[1], s[1] + s[2]))
            steps.append((start, end, {t: len(c) for t, c in busy.items()}))
        result[epoch] = steps
    return result


def window_oracle(
    samples: list[tuple[int, int, int, str | None, int]],
    supersteps: dict[int, list[tuple[int, int, dict[int, int]]]],
) -> dict[int, dict[int, tuple[int, int]]]:
    """Per epoch and window (-1: leading): (exchange cycles held, overlapped cycles of the
    superstep with that index), by the definitions in docs/metrics.md, one sample at a time."""
    result: dict[int, dict[int, tuple[int, int]]] = {}
    for epoch, pieces in supersteps.items():
        mine = [s for s in samples if s[4] == epoch]
        first = min(s[1] for s in mine)
        last = max(s[1] + s[2] for s in mine)
        starts = [p[0] for p in pieces] + [last]
        windows = [(-1, first, starts[0])] + [
            (k, p[1], starts[k + 1]) for k, p in enumerate(pieces)
        ]
        held = {k: 0 for k, _, _ in windows}
        overlapped = {k: 0 for k in range(len(pieces))}
        for _, offset, duration, kind, _ in mine:
            if kind == "compute":
                continue
            end = offset + duration
            overlaps = [(min(end, b) - max(offset, a), k) for k, a, b in windows]
            best = max(o for o, _ in overlaps)
            if best > 0:
                chosen = min(k for o, k in overlaps if o == best)
            else:  # the window it starts in, or the one after the superstep it starts in
                chosen = next(
                    (k for k, a, b in windows if a <= offset < b),
                    next((k for k, (a, b, _) in enumerate(pieces) if a <= offset < b), -2),
                )
                if chosen == -2:  # at the epoch's very end: the last window
                    chosen = windows[-1][0]
            if kind == "exchange":
                held[chosen] += duration
                for k, (a, b, _) in enumerate(pieces):
                    overlapped[k] += max(0, min(end, b) - max(offset, a))
        result[epoch] = {k: (held[k], overlapped.get(k, 0)) for k in held}
    return result


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.lists(SAMPLE, max_size=25), st.integers(0, 40))
def test_identity_and_oracle_on_random_dumps(
    raw: list[tuple[int, int, int, str | None, int]], gap: int
) -> None:
    samples = [
        sample(t, o, d, "k" if kind == "compute" else None, kind=kind, epoch=e)
        for t, o, d, kind, e in raw
    ]
    if not samples:
        return
    result = profile_of(samples, tile_count=6).supersteps(min_sync_gap=gap)
    expected = oracle(raw, gap)
    steps = {(r["epoch"], r["index"]): r for r in rows(result)}
    assert len(steps) == sum(len(v) for v in expected.values())
    for epoch, pieces in expected.items():
        for index, (start, end, busy) in enumerate(pieces):
            row = steps[(epoch, index)]
            assert (row["start"], row["end"]) == (start, end)
            assert row["activeTiles"] == len(busy)
    windows = window_oracle(raw, expected)
    for (epoch, index), row in steps.items():
        exchange, overlapped = windows[epoch][index]
        assert (row["exchangeCycles"], row["overlappedExchangeCycles"]) == (exchange, overlapped)
    for row in result.epochs.to_dicts():
        assert row["leadingExchangeCycles"] == windows[row["epoch"]][-1][0]
        assert row["otherCycles"] == sum(
            d for _, o, d, kind, e in raw if e == row["epoch"] and kind is None
        )
    for tile in result.tiles.to_dicts():
        step = steps[(tile["epoch"], tile["index"])]
        parts = (tile["lateStart"], tile["busy"], tile["gaps"], tile["syncWait"])
        assert sum(parts) == step["cycles"]  # the exact-sum identity
        assert min(parts) >= 0
        assert tile["busy"] == expected[tile["epoch"]][tile["index"]][2][tile["tile"]]


# ---------------------------------------------------------------- the command


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", SCENARIO_A, tileCount=4)


def test_json_layout(dump: Path) -> None:
    code, out, _ = run("supersteps", str(dump), "--format", "json", "--per-tile")
    assert code == 0
    document = json.loads(out)
    assert list(document) == ["supersteps", "tiles", "epochs", "options"]
    assert [list(r) for r in document["supersteps"]] == [list(SUPERSTEP_FIELDS)] * 2
    assert list(SUPERSTEP_FIELDS) == [
        "epoch", "index", "start", "end", "cycles", "syncAfter", "exchangeCycles",
        "overlappedExchangeCycles", "activeTiles", "idleTiles", "tileBalance",
        "activeTileBalance", "efficiency", "meanSyncWait", "maxSyncWait", "criticalTile",
        "criticalGroup", "stragglerMargin", "loadBalanceEfficiency",
        "communicationEfficiency", "parallelEfficiency", "startSkewCycles", "imbalanceCycles",
    ]  # fmt: skip
    assert list(TILE_FIELDS) == [
        "epoch", "index", "tile", "busy", "lateStart", "gaps", "syncWait",
    ]  # fmt: skip
    assert [list(r) for r in document["tiles"]] == [list(TILE_FIELDS)] * 4
    assert document["supersteps"][0]["criticalTile"] == 1
    code, out, _ = run("supersteps", str(dump), "--format", "json")
    assert "tiles" not in json.loads(out)


def test_the_documents_options_and_microseconds_by_hand() -> None:
    result = profile_of(SCENARIO_A).supersteps(
        epoch=1, min_sync_gap=3, window="0:500", kernels="a*", top=2
    )
    document = result.to_document()
    assert list(document) == ["supersteps", "epochs", "options"]
    assert document["options"] == {
        "epoch": 1,
        "minSyncGap": 3,
        "window": [0, 500],
        "kernels": ["a*"],
        "top": 2,
        "tileCount": 4,
        "clockHz": 1_500_000_000,
    }
    assert result.cycles_to_us(1_500) == 1.0  # 1,500 cycles at 1.5 GHz


def test_csv_rows(dump: Path) -> None:
    code, out, _ = run("supersteps", str(dump), "--format", "csv")
    assert code == 0
    table = list(csv.DictReader(io.StringIO(out)))
    assert [r["end"] for r in table] == ["220", "400"] and table[1]["syncAfter"] == ""
    code, out, _ = run("supersteps", str(dump), "--format", "csv", "--per-tile")
    assert [r["tile"] for r in csv.DictReader(io.StringIO(out))] == ["0", "1", "2", "3"]


def test_table_rows_top_and_footer(dump: Path) -> None:
    code, out, _ = run("supersteps", str(dump), "--top", "1", "--per-tile")
    assert code == 0
    lines = out.splitlines()
    body = [line for line in lines if "│" in line]
    # one superstep row (the longest, 220 cycles = 0.1467 µs at 1.5 GHz), three tile rows
    assert len(body) == 4 and "220" in body[0] and " 0.1467 " in body[0]
    assert lines[-2] == (
        "epoch 1: 2 supersteps; 20 tile-cycles lost to sync wait, 1.11% of 4 tiles × 450 cycles"
    )
    assert lines[-1] == (
        "  load balance 92.47% × communication efficiency 68.89% = parallel efficiency 63.70%; "
        "70 tile-cycles lost to imbalance; start skew up to 20 cycles"
    )


def test_output_file_and_force(dump: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    assert run("supersteps", str(dump), "--format", "json", "-o", str(target))[0] == 0
    assert json.loads(target.read_text())["supersteps"][0]["start"] == 0
    code, _, err = run("supersteps", str(dump), "-o", str(target))
    assert code == 2 and "already exists" in err


def test_tile_count_override_and_example(dump: Path) -> None:
    code, out, _ = run("supersteps", str(dump), "--tile-count", "8", "--format", "json")
    assert json.loads(out)["supersteps"][0]["idleTiles"] == 5
    code, out, _ = run("supersteps", "--example", "--epoch", "0", "--format", "json")
    assert code == 0 and len(json.loads(out)["supersteps"]) == 6


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--epoch", "5"], "tileprof: error: --epoch 5: no samples in that epoch (epochs: 1)"),
        (["--min-sync-gap", "-2"], "tileprof: error: --min-sync-gap -2: must be at least 0"),
        (["--top", "0"], "tileprof: error: --top 0: must be at least 1"),
        (["--window", "x"], None),
    ],
)
def test_bad_options_are_one_line_exit_2(dump: Path, args: list[str], message: str | None) -> None:
    code, out, err = run("supersteps", str(dump), *args)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith("tileprof: error: ")
    if message is not None:
        assert err.strip() == message


def test_bad_input_file_is_one_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text('{"samples": [{"physicalTile": 0, "offset": -1, "duration": 5}]}')
    code, _, err = run("supersteps", str(broken))
    assert code == 2 and err.count("\n") == 1 and str(broken) in err


def test_overflow_fallbacks_give_the_same_frames(monkeypatch: pytest.MonkeyPatch) -> None:
    # Composite sort/search keys are used only where they fit in Int64; with the limit at 0,
    # every step takes its slower general path (multi-key sort, per-group maximum, as-of join).
    samples = [*SCENARIO_A, *(dict(s, epoch=2, offset=s["offset"] + 7) for s in SCENARIO_A)]
    fast = profile_of(samples).supersteps()
    monkeypatch.setattr("tileprof.analyses.supersteps._COMPOSITE_LIMIT", 0)
    slow = profile_of(samples).supersteps()
    assert slow.supersteps.equals(fast.supersteps)
    assert slow.tiles.equals(fast.tiles)
    assert slow.epochs.equals(fast.epochs)
    assert len(rows(fast)) == 4


# ---------------------------------------------------------------- the report's section


def test_report_section_numbers() -> None:
    from tileprof.analyses.filters import Filters
    from tileprof.views.html import build_report

    report = build_report([profile_of(SCENARIO_A)], filters=Filters(epoch=1), charts=False)
    section = report.tiles[0].supersteps
    assert section is not None
    # Mean over active tiles, superstep 0 (tiles 0, 1, 2 from the hand-worked split):
    # late (0+20+10)/3, busy (150+200+210)/3, gaps 50/3, wait 20/3; they add up to 220.
    first = section.split.row(0, named=True)
    assert (first["lateStart"], first["busy"], first["gaps"], first["syncWait"]) == (
        10.0,
        560 / 3,
        50 / 3,
        20 / 3,
    )
    assert section.split.get_column("label").to_list() == ["0", "1"]
    assert section.longest is not None and section.longest["index"] == 0
    # Ends of the longest: tile 0 at 200, tiles 1 and 2 at 220 (tile 1 critical).
    assert dict(section.ends.iter_rows()) == {0: 200, 1: 220, 2: 220}
    assert section.table.column("criticalTile")[0].text == "1"
    assert section.table.column("us")[0].sort == 220 * 1e6 / 1.5e9


def test_report_section_renders_its_charts_and_table() -> None:
    from tileprof.views.html import build_report, render

    html = render(build_report([profile_of(SCENARIO_A)]))
    start = html.index('<section id="tile-0-supersteps">')
    section = html[start : html.index("</section>", start)]
    assert 'id="tile-0-supersteps-split"' in section
    assert 'id="tile-0-supersteps-ends"' in section
    assert 'id="tile-0-supersteps-table"' in section
    assert "critical tile 1 (b), ending with another tile (a tie: no single straggler)." in section
    assert '<a href="#tile-0-supersteps">Supersteps</a>' in html


def test_report_section_skips_an_epoch_the_dump_lacks() -> None:
    from tileprof.analyses.filters import Filters
    from tileprof.views.html import build_report

    report = build_report([profile_of(SCENARIO_A)], filters=Filters(epoch=5), charts=False)
    assert report.tiles[0].supersteps is None


def test_a_superstep_with_every_tile_active_has_no_idle_tile() -> None:
    # Scenario A's first superstep on a 3-tile device: tiles 0, 1 and 2 all compute in it.
    first, second = rows(profile_of(SCENARIO_A, tile_count=3).supersteps())
    assert (first["activeTiles"], first["idleTiles"]) == (3, 0)
    assert (second["activeTiles"], second["idleTiles"]) == (1, 2)


def test_epochs_spanning_past_the_composite_keys_give_each_epochs_figures() -> None:
    # Epochs 2 and 3 repeat epoch 1 2^61 and nearly 2^62 cycles later (a dump's offsets stop
    # at 2^62): three epochs' composite keys (epoch rank x stride + cycle) would pass Int64,
    # so every step must take its slower general path; each epoch's figures are then epoch
    # 1's, shifted.
    shifts = {2: 2**61, 3: 2**62 - 500}
    late = [dict(s, epoch=e, offset=s["offset"] + d) for e, d in shifts.items() for s in SCENARIO_A]
    every = rows(profile_of([*SCENARIO_A, *late]).supersteps())
    alone = rows(profile_of(SCENARIO_A).supersteps())
    assert every[: len(alone)] == alone and len(every) == 3 * len(alone)
    for at, (epoch, shift) in enumerate(shifts.items(), start=1):
        for early, later in zip(alone, every[at * len(alone) : (at + 1) * len(alone)], strict=True):
            moved = {"epoch": epoch, "start": early["start"] + shift, "end": early["end"] + shift}
            assert later == {**early, **moved}
