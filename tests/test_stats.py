"""Each statistic of docs/metrics.md on small cases, plus property tests against a naive model."""

from __future__ import annotations

import math
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.samples import frame, sample
from tileprof.analyses.stats import GROUP_FIELDS, group_statistics, profile_span

TILES = 1472
CLOCK = 1_500_000_000


def stats(samples: list[dict[str, Any]], **options: Any) -> dict[str, dict[str, Any]]:
    table = group_statistics(frame(samples), tile_count=TILES, clock_hz=CLOCK, **options)
    return {row["name"]: row for row in table.iter_rows(named=True)}


def test_single_sample() -> None:
    row = stats([sample(3, 100, 40, useful=10, physical=20)])["k"]
    assert row["sampleCount"] == 1
    assert row["tileCount"] == 1
    assert row["phaseCount"] == 1
    assert row["phaseCycles"] == 40
    assert row["phaseMs"] == 40 * 1000 / CLOCK
    assert row["workCycles"] == 40
    assert row["averageActiveTiles"] == 1.0
    assert row["usefulCycles"] == 10.0
    assert row["estimatedWorkCycles"] == 40
    assert row["usefulUtilization"] == 0.25
    assert row["workLaneOccupancy"] == 0.5
    assert row["deviceUsefulUtilization"] == 10 / (TILES * 40)
    assert row["meanCycles"] == 40.0
    assert (row["p50Cycles"], row["p95Cycles"], row["maximumCycles"]) == (40, 40, 40)
    assert (row["firstOffset"], row["lastOffset"]) == (100, 140)


def test_zero_durations() -> None:
    row = stats([sample(0, 10, 0, useful=0), sample(1, 10, 0, useful=0)])["k"]
    assert row["phaseCycles"] == 0
    assert row["workCycles"] == 0
    assert row["averageActiveTiles"] is None
    assert row["estimatedWorkCycles"] == 0
    assert row["usefulUtilization"] is None
    assert row["deviceUsefulUtilization"] is None
    assert row["phaseMs"] == 0.0
    assert (row["firstOffset"], row["lastOffset"]) == (10, 10)


@pytest.mark.parametrize(
    ("intervals", "union"),
    [
        ([(0, 10), (10, 5)], 15),  # touching
        ([(0, 10), (5, 10)], 15),  # overlapping
        ([(0, 10), (20, 5)], 15),  # disjoint
        ([(0, 100), (10, 5), (50, 10)], 100),  # nested
        ([(30, 10), (0, 10), (5, 30)], 40),  # unsorted, chained
        ([(0, 10), (0, 10)], 10),  # identical
        ([(5, 0), (0, 10)], 10),  # zero-length inside
    ],
)
def test_phase_cycles_is_union_length(intervals: list[tuple[int, int]], union: int) -> None:
    rows = stats([sample(tile, o, d) for tile, (o, d) in enumerate(intervals)])
    assert rows["k"]["phaseCycles"] == union
    assert rows["k"]["workCycles"] == sum(d for _, d in intervals)


def test_group_without_metadata() -> None:
    row = stats([sample(0, 0, 10), sample(1, 0, 30)])["k"]
    assert row["usefulCycles"] == 0.0
    assert row["estimatedWorkCycles"] == 0
    assert row["usefulUtilization"] is None
    assert row["workLaneOccupancy"] is None
    assert row["deviceUsefulUtilization"] is None


def test_group_with_useful_cycles_only() -> None:
    row = stats([sample(0, 0, 10, useful=5), sample(1, 0, 30, useful=15)])["k"]
    assert row["usefulCycles"] == 20.0
    assert row["estimatedWorkCycles"] == 40
    assert row["usefulUtilization"] == 0.5
    assert row["workLaneOccupancy"] is None
    assert row["deviceUsefulUtilization"] == 20 / (TILES * 30)


def test_group_with_both_entries() -> None:
    row = stats([sample(0, 0, 10, useful=5, physical=8), sample(1, 0, 30, useful=15, physical=12)])
    assert row["k"]["workLaneOccupancy"] == 20 / 20


def test_mixed_group_only_some_samples_carry_metadata() -> None:
    row = stats([sample(0, 0, 10, useful=4, physical=5), sample(1, 0, 30), sample(2, 5, 20)])["k"]
    assert row["workCycles"] == 60
    assert row["estimatedWorkCycles"] == 10
    assert row["usefulUtilization"] == 0.4
    assert row["workLaneOccupancy"] == 0.8
    assert row["deviceUsefulUtilization"] == 4 / (TILES * 30)


def test_zero_useful_cycles_with_estimate_is_zero_not_null() -> None:
    row = stats([sample(0, 0, 10, useful=0), sample(1, 0, 10)])["k"]
    assert row["usefulUtilization"] == 0.0
    assert row["deviceUsefulUtilization"] == 0.0


def test_repeated_tiles_and_phases() -> None:
    samples = [
        sample(0, 0, 10, phase=1),
        sample(0, 10, 10, phase=2),
        sample(1, 0, 10, phase=1),
        sample(1, 30, 10, phase=None),
    ]
    row = stats(samples)["k"]
    assert row["sampleCount"] == 4
    assert row["tileCount"] == 2
    assert row["phaseCount"] == 2
    assert row["phaseCycles"] == 30


def test_nearest_rank_percentiles() -> None:
    durations = list(range(1, 21))  # 20 values: p50 is rank 10, p95 is rank 19
    row = stats([sample(t, 0, d) for t, d in enumerate(reversed(durations))])["k"]
    assert (row["p50Cycles"], row["p95Cycles"], row["maximumCycles"]) == (10, 19, 20)
    assert row["meanCycles"] == 10.5  # (1 + … + 20) / 20 = 210 / 20
    row = stats([sample(t, 0, d) for t, d in enumerate([5, 1, 3])])["k"]
    assert (row["p50Cycles"], row["p95Cycles"]) == (3, 5)
    # 11 values 1..10, 50: p95 is rank ⌈10.45⌉ = 11 → 50 (a rounded rank, 10, gives 10)
    row = stats([sample(t, 0, d) for t, d in enumerate([50, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1])])["k"]
    assert (row["p50Cycles"], row["p95Cycles"]) == (6, 50)


def test_nearest_rank_on_two_hundred_values() -> None:
    # 1..200 listed backwards: p50 is rank ⌈100.0⌉ = 100, p95 rank ⌈190.0⌉ = 190
    row = stats([sample(t, 0, d) for t, d in enumerate(range(200, 0, -1))])["k"]
    assert (row["p50Cycles"], row["p95Cycles"], row["maximumCycles"]) == (100, 190, 200)


def test_ratios_over_a_denominator_of_one() -> None:
    # one 1-cycle sample: phase, work and estimated work are 1 cycle, physical work 1.0,
    # so the ratios are 1/1 and 0.5/1 (a ratio defined only over denominators > 1 gives none)
    row = stats([sample(0, 0, 1, useful=0.5, physical=1.0)])["k"]
    assert row["averageActiveTiles"] == 1.0
    assert row["usefulUtilization"] == 0.5
    assert row["workLaneOccupancy"] == 0.5
    assert row["deviceUsefulUtilization"] == 0.5 / 1472  # over 1 phase cycle × 1472 tiles


def test_null_dimension_sorts_last() -> None:
    # equal phaseCycles and name: epoch 1 before the samples without an epoch
    table = group_statistics(
        frame([sample(0, 0, 5, epoch=None), sample(1, 10, 5, epoch=1)]),
        tile_count=TILES,
        clock_hz=CLOCK,
        group_by=["epoch"],
    )
    assert table["epoch"].to_list() == [1, None]


def test_group_key_falls_back_to_kind() -> None:
    rows = stats(
        [
            sample(0, 0, 10, kernel=None, kind="exchange"),
            sample(1, 0, 10, kernel="", kind="exchange"),
            sample(2, 0, 10, kernel="gemm"),
        ]
    )
    assert rows["exchange"]["sampleCount"] == 2
    assert rows["gemm"]["sampleCount"] == 1


def test_order_is_phase_cycles_descending_then_name() -> None:
    table = group_statistics(
        frame(
            [sample(0, 0, 5, kernel="b"), sample(1, 0, 5, kernel="a"), sample(2, 0, 9, kernel="c")]
        ),
        tile_count=TILES,
        clock_hz=CLOCK,
    )
    assert table.get_column("name").to_list() == ["c", "a", "b"]
    assert table.columns == ["name", *GROUP_FIELDS]


def test_group_by_dimensions() -> None:
    samples = [sample(0, 0, 10, epoch=1), sample(1, 0, 10, epoch=2), sample(2, 0, 10, epoch=2)]
    table = group_statistics(frame(samples), tile_count=TILES, clock_hz=CLOCK, group_by=["epoch"])
    assert table.select("epoch", "sampleCount").rows() == [(1, 1), (2, 2)]


def test_empty_frame_gives_no_groups() -> None:
    empty = frame([sample(0, 0, 1)]).clear()
    assert group_statistics(empty, tile_count=TILES, clock_hz=CLOCK).height == 0
    assert profile_span(empty) is None


# --- property tests: the vectorised statistics against a naive per-group model -------------


def naive_union(intervals: list[tuple[int, int]]) -> int:
    covered: set[int] = set()
    for start, end in intervals:
        covered.update(range(start, end))
    return len(covered)


def in_row_order(values: list[float]) -> float:
    """Floats added one by one, first to last (Python's ``sum`` compensates since 3.12)."""
    total = 0.0
    for value in values:
        total += float(value)
    return total


def naive_group(samples: list[dict[str, Any]]) -> dict[str, Any]:
    durations = sorted(s["duration"] for s in samples)
    n = len(durations)
    useful_samples = [s for s in samples if s.get("_useful") is not None]
    physical = [s["_physical"] for s in samples if s.get("_physical") is not None]
    useful = in_row_order([s["_useful"] for s in useful_samples])
    estimated = sum(s["duration"] for s in useful_samples)
    union = naive_union([(s["offset"], s["offset"] + s["duration"]) for s in samples])
    work = sum(durations)
    return {
        "sampleCount": n,
        "tileCount": len({s["physicalTile"] for s in samples}),
        "phaseCount": len({s["phase"] for s in samples if s.get("phase") is not None}),
        "phaseCycles": union,
        "workCycles": work,
        "averageActiveTiles": work / union if union else None,
        "usefulCycles": useful,
        "estimatedWorkCycles": estimated,
        "usefulUtilization": useful / estimated if estimated else None,
        "workLaneOccupancy": (useful / in_row_order(physical) if in_row_order(physical) else None),
        "deviceUsefulUtilization": useful / (TILES * union) if estimated and union else None,
        "meanCycles": work / n,
        "p50Cycles": durations[math.ceil(0.50 * n) - 1],
        "p95Cycles": durations[math.ceil(0.95 * n) - 1],
        "maximumCycles": durations[-1],
        "firstOffset": min(s["offset"] for s in samples),
        "lastOffset": max(s["offset"] + s["duration"] for s in samples),
    }


sample_strategy = st.builds(
    lambda tile, offset, duration, kernel, phase, useful, physical: {
        **sample(
            tile,
            offset,
            duration,
            kernel,
            phase=phase,
            useful=useful,
            physical=physical,
        ),
        "_useful": useful,
        "_physical": physical,
    },
    tile=st.integers(0, 7),
    offset=st.integers(0, 300),
    duration=st.integers(0, 60),
    kernel=st.sampled_from(["a", "b", "c"]),
    phase=st.one_of(st.none(), st.integers(0, 4)),
    useful=st.one_of(st.none(), st.integers(0, 50), st.floats(0, 50, allow_subnormal=False)),
    physical=st.one_of(st.none(), st.integers(0, 50), st.floats(0, 50, allow_subnormal=False)),
)


@given(st.lists(sample_strategy, min_size=1, max_size=40))
def test_vectorised_statistics_match_naive_model(samples: list[dict[str, Any]]) -> None:
    check_against_naive_model(samples)


@given(st.lists(sample_strategy, min_size=1, max_size=40))
def test_samples_in_offset_order_match_naive_model(samples: list[dict[str, Any]]) -> None:
    """A frame in offset order (as dumps usually are) takes the path that sorts no group;
    samples that start together stay in their drawn order."""
    check_against_naive_model(sorted(samples, key=lambda s: s["offset"]))


def check_against_naive_model(samples: list[dict[str, Any]]) -> None:
    clean = [{k: v for k, v in s.items() if not k.startswith("_")} for s in samples]
    actual = stats(clean)
    by_kernel: dict[str, list[dict[str, Any]]] = {}
    for s in samples:
        by_kernel.setdefault(s["kernel"], []).append(s)
    assert set(actual) == set(by_kernel)
    for name, members in by_kernel.items():
        expected = naive_group(members)
        for field, value in expected.items():
            got = actual[name][field]
            if field == "usefulCycles":  # added in row order, as here: exactly equal
                assert got == value, field
            elif isinstance(value, float):
                assert got == pytest.approx(value, rel=1e-12), field
            else:
                assert got == value, field


@given(st.lists(st.tuples(st.integers(0, 1000), st.integers(0, 100)), min_size=1, max_size=60))
def test_union_length_matches_naive(intervals: list[tuple[int, int]]) -> None:
    samples = [sample(i % 1472, o, d) for i, (o, d) in enumerate(intervals)]
    assert stats(samples)["k"]["phaseCycles"] == naive_union([(o, o + d) for o, d in intervals])
    in_order = sorted(samples, key=lambda s: s["offset"])  # no group sorted: the same union
    assert stats(in_order)["k"]["phaseCycles"] == naive_union([(o, o + d) for o, d in intervals])


def test_statistics_keep_integer_types() -> None:
    table = group_statistics(frame([sample(0, 0, 10)]), tile_count=TILES, clock_hz=CLOCK)
    empty = group_statistics(frame([]), tile_count=TILES, clock_hz=CLOCK)
    assert (empty.height, empty.schema) == (0, table.schema)
    integer_fields = [f for f in GROUP_FIELDS if f.endswith(("Count", "Cycles", "Offset"))]
    integer_fields.remove("usefulCycles")
    integer_fields.remove("meanCycles")
    for field in integer_fields:
        assert table.schema[field] == pl.Int64, field


# --- kernel globs: the regex polars evaluates agrees with fnmatch ---------------------------

GLOB_ALPHABET = "ab-.*?[]!^$\\ #&~"


@given(
    st.text(alphabet=GLOB_ALPHABET, max_size=8),
    st.lists(st.text(alphabet="ab-.[]!^$\\ #&~", max_size=6), min_size=1, max_size=8),
)
def test_kernel_glob_matches_like_fnmatch(glob: str, names: list[str]) -> None:
    import fnmatch

    from tileprof.analyses.filters import glob_to_regex
    from tileprof.core.errors import OptionError

    try:
        got = pl.Series(names, dtype=pl.String).str.contains(glob_to_regex(glob)).to_list()
    except pl.exceptions.ComputeError:
        # A bracket range that is no range (``[b-a]``): refused as an OptionError by filters.
        with pytest.raises(OptionError):
            from tileprof.analyses.filters import Filters, apply_filters

            apply_filters(frame([sample(0, 0, 1, kernel="a")]), Filters(kernels=(glob,)))
        return
    assert got == [fnmatch.fnmatchcase(name, glob) for name in names]


def test_kernel_glob_with_several_stars(tmp_path: Any) -> None:
    from tileprof.analyses.filters import Filters, apply_filters

    samples = frame([sample(0, 0, 1, kernel="gemm_f16_init_rows"), sample(1, 0, 1, kernel="gemm")])
    matched = apply_filters(samples, Filters(kernels="gemm*init*rows"))
    assert matched["kernel"].cast(pl.String).to_list() == ["gemm_f16_init_rows"]


def test_group_by_is_checked_deduplicated_and_may_be_one_string() -> None:
    from tileprof.analyses.stats import check_dimensions
    from tileprof.core.errors import OptionError

    assert check_dimensions("kind") == ("kind",)
    assert check_dimensions(["tile", "epoch", "tile"]) == ("tile", "epoch")
    assert check_dimensions(()) == ()
    with pytest.raises(OptionError) as info:
        check_dimensions(["epoch", "colour", "size"])
    assert str(info.value) == (
        "--group-by 'colour': unknown dimension (one of epoch, operation, kind, phase, tile)"
    )
    samples = [sample(0, 0, 10, phase=1), sample(1, 0, 30, phase=2), sample(2, 40, 5, phase=1)]
    rows = group_statistics(frame(samples), tile_count=TILES, clock_hz=CLOCK, group_by="phase")
    assert rows.columns[:2] == ["name", "phase"]
    # ordered by phaseCycles descending: phase 2 (30 cycles), then phase 1 (10 + 5)
    assert rows.select("phase", "sampleCount", "phaseCycles").rows() == [(2, 1, 30), (1, 2, 15)]


def test_profile_span() -> None:
    assert profile_span(frame([])) is None
    assert profile_span(frame([sample(0, 7, 0)])) == 0
    assert profile_span(frame([sample(0, 10, 5), sample(1, 3, 2), sample(2, 12, 1)])) == 12


def test_phase_ms_is_true_division_where_the_reciprocal_differs() -> None:
    """phaseMs = cycles × 1000 / clockHz divided exactly, not multiplied by 1 / clockHz (which
    differs in the last bit for these cycle counts at 1.5 GHz), for one group and for many."""
    spans = [15, 17, 23, 30]
    assert all(s * 1000 / CLOCK != s * 1000 * (1 / CLOCK) for s in spans)
    for count in (1, len(spans)):
        rows = stats([sample(0, 0, span, f"k{span}") for span in spans[:count]])
        assert [rows[f"k{s}"]["phaseMs"] for s in spans[:count]] == [
            s * 1000 / CLOCK for s in spans[:count]
        ]


# --- the compiled core's group table (crates/tileprof-groups) --------------------------------


@given(st.lists(sample_strategy, min_size=1, max_size=60))
def test_groups_by_tile_and_phase_match_naive_model(samples: list[dict[str, Any]]) -> None:
    """Many small groups (a group per kernel, tile and phase): the row pass's pair bitmaps
    count each group's distinct values, as the naive model does."""
    clean = [{k: v for k, v in s.items() if not k.startswith("_")} for s in samples]
    table = group_statistics(
        frame(clean), tile_count=TILES, clock_hz=CLOCK, group_by=("tile", "phase")
    )
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for s in samples:
        by_key.setdefault((s["kernel"], s["physicalTile"], s.get("phase")), []).append(s)
    assert table.height == len(by_key)
    for row in table.iter_rows(named=True):
        expected = naive_group(by_key[(row["name"], row["tile"], row["phase"])])
        for field in ("sampleCount", "phaseCycles", "p50Cycles", "p95Cycles", "lastOffset"):
            assert row[field] == expected[field], field


def test_tiles_spread_too_wide_for_a_bitmap_are_counted_group_by_group() -> None:
    # tile numbers 2^30 apart: no (group, tile) bitmap fits, so each group counts its own
    tiles = (0, 2**30, 2**31 - 1)
    wide = [sample(tile, t, 1, kernel) for t, tile in enumerate(tiles) for kernel in ("a", "b")]
    wide.append(sample(0, 9, 1, "a"))
    rows = {
        row["name"]: row
        for row in group_statistics(frame(wide), tile_count=2, clock_hz=1.0).iter_rows(named=True)
    }
    assert (rows["a"]["tileCount"], rows["b"]["tileCount"]) == (3, 3)
    assert (rows["a"]["sampleCount"], rows["b"]["sampleCount"]) == (4, 3)


def test_a_panic_in_the_group_table_is_caught(capfd: pytest.CaptureFixture[str]) -> None:
    from tileprof.core import _native

    with pytest.raises(_native.GroupsError) as caught:
        _native._panic_in_groups(2)
    assert caught.value.args == ("panic", "a group thread panicked on purpose")
    assert capfd.readouterr().err == ""  # the panic hook keeps Rust's message off stderr
    bad = pl.DataFrame({"rows": [[0, 5]]}, schema={"rows": pl.List(pl.UInt32)})
    columns = frame([sample(0, 0, 1)]).select(
        "offset", "duration", "tile", "phase", "usefulCycles", "physicalWorkCycles"
    )
    with pytest.raises(_native.GroupsError, match="row 5 is not in the frame of 1 rows"):
        _native.group_statistics(columns, bad, percents=[50], jobs=1)


def test_a_failure_of_the_compiled_group_table_is_an_internal_error_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from tileprof.core import _native

    def failing(*_: object, **__: object) -> None:
        raise _native.GroupsError("columns", "rows holds Int64, not UInt32")

    monkeypatch.setattr(_native, "group_statistics", failing)
    with pytest.raises(RuntimeError, match=r"^internal error in the group table \(columns: rows"):
        group_statistics(frame([sample(0, 0, 1)]), tile_count=TILES, clock_hz=CLOCK)
