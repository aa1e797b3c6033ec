"""``compare_aggregates`` and ``AggregatesMismatch`` on hand-made aggregates: which cells each
rule compares, the limit each row names, and the failure message exactly as a reader sees it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tileprof.testing import (
    Aggregates,
    AggregatesMismatch,
    GoldenFile,
    RegenLog,
    Threshold,
    assert_aggregates_match,
    compare_aggregates,
)
from tileprof.testing.compare import HEADER_GROUP

HEADER = {"clockHz": 1_500_000_000, "tileCount": 4, "sampleCount": 12}


def _groups(**changes: dict[str, Any]) -> dict[str, dict[str, Any]]:
    groups: dict[str, dict[str, Any]] = {
        "gemm": {"sampleCount": 8, "phaseCycles": 1_000, "usefulUtilization": 0.5},
        "exchange": {"sampleCount": 4, "phaseCycles": 200, "usefulUtilization": None},
    }
    for name, fields in changes.items():
        groups[name] = {**groups.get(name, {}), **fields}
    return groups


def _pinned(**changes: dict[str, Any]) -> Aggregates:
    return Aggregates(groups=_groups(**changes), header=dict(HEADER))


def _rows(actual: Aggregates, reference: Aggregates, **options: Any) -> list[tuple[Any, ...]]:
    rows, _, _, _ = compare_aggregates(actual, reference, **options)
    return [(r.group, r.field, r.old, r.new, r.limit) for r in rows]


def test_each_row_names_its_tolerance() -> None:
    moved = _pinned(gemm={"phaseCycles": 1_010})
    assert _rows(moved, _pinned(), rtol=0) == [("gemm", "phaseCycles", 1_000, 1_010, "exact")]
    assert _rows(moved, _pinned()) == [("gemm", "phaseCycles", 1_000, 1_010, "rtol 1e-09")]
    assert _rows(moved, _pinned(), rtol=0, atol=5) == [
        ("gemm", "phaseCycles", 1_000, 1_010, "atol 5")
    ]
    assert _rows(moved, _pinned(), rtol=0.001, atol=2) == [
        ("gemm", "phaseCycles", 1_000, 1_010, "rtol 0.001, atol 2")
    ]
    # one cycle is a change when no atol is given
    assert _rows(_pinned(gemm={"phaseCycles": 1_001}), _pinned(), rtol=0)[0][3] == 1_001


def test_rtol_and_atol_each_admit_a_change_alone() -> None:
    moved = _pinned(gemm={"phaseCycles": 1_010})  # +1%, +10 cycles
    assert _rows(moved, _pinned(), rtol=0.02, atol=0) == []
    assert _rows(moved, _pinned(), rtol=0, atol=10) == []
    assert_aggregates_match(moved, _pinned(), rtol=0.02)
    assert_aggregates_match(moved, _pinned(), rtol=0, atol=10)
    # and the header fields obey the same two
    longer = Aggregates(_groups(), {**HEADER, "sampleCount": 13})
    assert _rows(longer, _pinned(), rtol=0.1, atol=0) == []
    assert _rows(longer, _pinned(), rtol=0, atol=1) == []
    assert _rows(longer, _pinned(), rtol=0.01, atol=0.5) == [
        (HEADER_GROUP, "sampleCount", 12, 13, "rtol 0.01, atol 0.5")
    ]


def test_header_is_compared_unless_turned_off_and_only_where_pinned() -> None:
    longer = Aggregates(_groups(), {**HEADER, "sampleCount": 13})
    assert _rows(longer, _pinned(), rtol=0) == [(HEADER_GROUP, "sampleCount", 12, 13, "exact")]
    assert _rows(longer, _pinned(), rtol=0, header=False) == []
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(longer, _pinned(), rtol=0)
    assert [(r.group, r.field) for r in info.value.rows] == [(HEADER_GROUP, "sampleCount")]
    assert_aggregates_match(longer, _pinned(), rtol=0, header=False)
    # a reference that pins no sampleCount compares none
    unpinned = Aggregates(_groups(), {"clockHz": 1_500_000_000})
    assert _rows(longer, unpinned, rtol=0) == []


def test_a_field_the_golden_lacks_pins_nothing_and_later_fields_still_count() -> None:
    old = _pinned()
    del old.groups["gemm"]["sampleCount"]  # the first field compared
    moved = _pinned(gemm={"sampleCount": 9, "phaseCycles": 1_001})
    assert _rows(moved, old, rtol=0) == [("gemm", "phaseCycles", 1_000, 1_001, "exact")]


def test_threshold_rows_keep_both_values_and_every_broken_limit() -> None:
    drop = Threshold.parse("usefulUtilization of gemm may not drop by more than 2%")
    change = Threshold.parse("usefulUtilization may not change by more than 5%")
    worse = _pinned(gemm={"usefulUtilization": 0.4})
    assert _rows(worse, _pinned(), thresholds=[drop, change]) == [
        ("gemm", "usefulUtilization", 0.5, 0.4, "drop ≤ 2%; drop ≤ 5%, rise ≤ 5%")
    ]


def test_a_threshold_on_a_field_the_golden_lacks_still_matches_its_group() -> None:
    old = _pinned()
    del old.groups["gemm"]["phaseCycles"]
    rule = "phaseCycles of gemm may not rise by more than 1%"
    rows, appeared, disappeared, unmatched = compare_aggregates(_pinned(), old, thresholds=[rule])
    assert (rows, appeared, disappeared, unmatched) == ([], [], [], [])
    stray = Threshold.parse("phaseCycles of gemv may not rise by more than 1%")
    assert compare_aggregates(_pinned(), old, thresholds=[stray])[3] == [stray]


def test_compare_names_the_bad_field_and_where_it_came_from() -> None:
    with pytest.raises(ValueError, match=r"^unknown field 'bogus' in fields=; the group fields"):
        compare_aggregates(_pinned(), _pinned(), fields=["bogus"])
    typo = "bogus of gemm may not drop by more than 2%"
    with pytest.raises(ValueError, match=f"^unknown field 'bogus' in threshold '{typo}'; "):
        compare_aggregates(_pinned(), _pinned(), thresholds=[typo])
    with pytest.raises(ValueError, match=f"^unknown field 'bogus' in threshold '{typo}'; "):
        assert_aggregates_match(_pinned(), _pinned(), thresholds=[typo])


def test_a_group_that_only_appeared_fails() -> None:
    grown = _pinned(gemv={"sampleCount": 1, "phaseCycles": 10, "usefulUtilization": 0.1})
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(grown, _pinned())
    assert (info.value.appeared, info.value.disappeared) == (["gemv"], [])


def test_the_failure_message_as_a_reader_sees_it() -> None:
    actual = Aggregates(
        {
            "gemm": {"sampleCount": 8, "phaseCycles": 12_345, "usefulUtilization": 0.5},
            "a2": {"sampleCount": 1},
            "a1": {"sampleCount": 1},
        },
        {**HEADER, "sampleCount": 13},
    )
    reference = Aggregates(
        {
            "gemm": {"sampleCount": 8, "phaseCycles": 1_000, "usefulUtilization": 0.5},
            "d1": {"sampleCount": 1},
            "d2": {"sampleCount": 1},
        },
        dict(HEADER),
    )
    stray = "phaseCycles of gemv may not rise by more than 1%"
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(actual, reference, rtol=0, thresholds=[stray])
    mismatch = info.value
    assert mismatch.reference == "the reference aggregates"
    expected = "\n".join(
        [
            "aggregates differ from the reference aggregates:",
            "  group      field          old     new     change  limit",
            "  gemm       phaseCycles  1,000  12,345  +1134.50%  exact",
            "  (profile)  sampleCount     12      13     +8.33%  exact",
            "  appeared (2): a1, a2",
            "  disappeared (2): d1, d2",
            "  threshold matches no group: phaseCycles of gemv may not rise by more than 1%",
        ]
    )
    assert str(mismatch) == mismatch.render() == expected
    assert mismatch.render("see the docs").endswith("\nsee the docs")


def test_limit_cells_of_unequal_width_leave_no_trailing_space() -> None:
    rule = "usefulUtilization of gemm may not drop by more than 2%"
    actual = _pinned(gemm={"phaseCycles": 1_001, "usefulUtilization": 0.4})
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(actual, _pinned(), rtol=0, thresholds=[rule])
    lines = str(info.value).splitlines()
    assert lines[2:] == [
        "  gemm   phaseCycles        1,000  1,001   +0.10%  exact",
        "  gemm   usefulUtilization    0.5    0.4  -20.00%  drop ≤ 2%",
    ]


def test_a_summary_document_serves_as_the_reference() -> None:
    document = {
        **HEADER,
        "groups": [
            {"name": "gemm", "sampleCount": 8, "phaseCycles": 1_000, "usefulUtilization": 0.5},
            {"name": "exchange", "sampleCount": 4, "phaseCycles": 200, "usefulUtilization": None},
        ],
    }
    assert_aggregates_match(_pinned(), document, rtol=0)
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(_pinned(gemm={"phaseCycles": 1_001}), document, rtol=0)
    assert str(info.value).startswith("aggregates differ from the reference summary:\n")
    assert info.value.reference == "the reference summary"


def test_only_a_golden_file_hints_at_regeneration(tmp_path: Path) -> None:
    golden = tmp_path / "aggregates.json"
    golden.write_text(_pinned().to_json(), encoding="utf-8")
    moved = _pinned(gemm={"phaseCycles": 1_001})
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(moved, GoldenFile(golden), rtol=0)
    assert str(info.value).splitlines()[-1] == (
        "If the change is intended, run `pytest --tileprof-regen` and review the golden diff."
    )
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(moved, _pinned(), rtol=0)
    assert str(info.value).splitlines()[-1].startswith("  gemm ")


def test_a_missing_golden_says_how_to_make_it(tmp_path: Path) -> None:
    golden = tmp_path / "k" / "aggregates.json"
    with pytest.raises(AssertionError) as info:
        assert_aggregates_match(_pinned(), GoldenFile(golden))
    assert str(info.value) == (
        f"no golden aggregates at {golden}; "
        "run `pytest --tileprof-regen` to create it from the current dump"
    )


def test_under_regen_the_golden_is_written_from_the_actual(tmp_path: Path) -> None:
    golden = tmp_path / "k" / "aggregates.json"
    golden.parent.mkdir()
    golden.write_text(_pinned().to_json(), encoding="utf-8")
    moved = _pinned(gemm={"phaseCycles": 1_001})
    log = RegenLog()
    assert_aggregates_match(moved, GoldenFile(golden, log), rtol=0)  # rewritten, not compared
    assert Aggregates.load(golden).groups == moved.groups and log.written == [golden]
    with pytest.raises(AggregatesMismatch):  # not under regen: compared, not rewritten
        assert_aggregates_match(_pinned(), GoldenFile(golden), rtol=0)
    assert Aggregates.load(golden).groups == moved.groups


def test_pytest_hides_the_assertion_body_from_the_traceback() -> None:
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(_pinned(gemm={"phaseCycles": 1_001}), _pinned(), rtol=0)
    hidden = [entry for entry in info.traceback if entry.ishidden(info)]
    assert hidden, "no frame of the traceback is hidden"
    assert all(entry.frame.f_locals.get("__tracebackhide__") is True for entry in hidden)
