"""``assert_aggregates_match``: what passes, what fails, and how the failure reads."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tileprof.testing import (
    Aggregates,
    AggregatesMismatch,
    GoldenFile,
    RegenLog,
    Threshold,
    aggregates_of,
    assert_aggregates_match,
    compare_aggregates,
    profile_from_spec,
    stable_json,
)
from tileprof.testing.spec import DumpSpec

SPEC: dict[str, Any] = {
    "seed": 1,
    "tileCount": 32,
    "groups": [
        {"kernel": "gemm_f16_a", "samples": 64, "tiles": 32, "duration": 1000, "useful": 0.7},
        {"kernel": "gemm_f16_b", "samples": 64, "tiles": 32, "duration": 800, "useful": 0.5},
        {"kind": "exchange", "samples": 32, "tiles": 32, "duration": 300},
    ],
}


def _aggregates(**changes: Any) -> Aggregates:
    groups = [dict(g) for g in SPEC["groups"]]
    for index, fields in changes.items():
        groups[int(index[1:])].update(fields)
    return aggregates_of(profile_from_spec(DumpSpec.from_mapping({**SPEC, "groups": groups})))


def test_identical_aggregates_match() -> None:
    reference = _aggregates()
    # What is compared is the spec's figures, worked out by hand: gemm_f16_a is 64 samples of
    # 1000 cycles, two per tile back to back on 32 tiles, 70% useful.
    a = reference.groups["gemm_f16_a"]
    assert (a["sampleCount"], a["workCycles"], a["phaseCycles"], a["usefulCycles"]) == (
        64,
        64_000,
        2_000,
        44_800.0,
    )
    assert a["usefulUtilization"] == pytest.approx(0.7, rel=1e-12)
    assert reference.groups["exchange"]["usefulUtilization"] is None
    assert compare_aggregates(_aggregates(), reference, rtol=0) == ([], [], [], [])
    assert_aggregates_match(_aggregates(), reference, rtol=0)
    # The same comparison is not blind: one cycle more in one cell fails it.
    nudged = _aggregates()
    nudged.groups["gemm_f16_b"]["p95Cycles"] = 801
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(nudged, reference, rtol=0)
    assert [(r.group, r.field) for r in info.value.rows] == [("gemm_f16_b", "p95Cycles")]


def test_diff_table_names_group_field_old_new_and_change() -> None:
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(_aggregates(g0={"useful": 0.6}), _aggregates())
    text = str(info.value)
    lines = text.splitlines()
    assert lines[1].split() == ["group", "field", "old", "new", "change", "limit"]
    row = next(line for line in lines if "usefulUtilization" in line)
    assert row.split()[:5] == ["gemm_f16_a", "usefulUtilization", "0.7", "0.6", "-14.29%"]
    assert {r.group for r in info.value.rows} == {"gemm_f16_a"}
    assert "appeared" not in text and "disappeared" not in text


def test_appeared_and_disappeared_groups_are_listed() -> None:
    reference = _aggregates()
    renamed = _aggregates(g2={"kind": "exchange", "kernel": "exchange_v2"})
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(renamed, reference)
    assert info.value.appeared == ["exchange_v2"]
    assert info.value.disappeared == ["exchange"]
    assert "appeared (1): exchange_v2" in str(info.value)


def test_fields_limit_what_is_compared() -> None:
    slower = _aggregates(g2={"duration": 400})
    assert_aggregates_match(slower, _aggregates(), fields=["sampleCount"], header=False)
    with pytest.raises(AggregatesMismatch):
        assert_aggregates_match(slower, _aggregates(), fields=["workCycles"])


def test_threshold_in_code_allows_small_drops_and_improvements() -> None:
    rule = "usefulUtilization of gemm_f16_* may not drop by more than 2%"
    fields = ["usefulUtilization"]
    reference = _aggregates()
    small = _aggregates(g0={"useful": 0.69})  # -1.4%
    better = _aggregates(g1={"useful": 0.9})
    assert_aggregates_match(small, reference, fields=fields, thresholds=[rule])
    assert_aggregates_match(better, reference, fields=fields, thresholds=[rule])
    with pytest.raises(AggregatesMismatch) as info:
        assert_aggregates_match(
            _aggregates(g1={"useful": 0.45}), reference, fields=fields, thresholds=[rule]
        )
    (row,) = info.value.rows
    assert (row.group, row.field, row.limit) == ("gemm_f16_b", "usefulUtilization", "drop ≤ 2%")


def test_threshold_in_golden_file_is_enforced(tmp_path: Path) -> None:
    golden = tmp_path / "aggregates.json"
    pinned = _aggregates()
    rule = Threshold.parse("usefulUtilization of gemm_f16_a may not drop by more than 2%")
    golden.write_text(Aggregates(pinned.groups, pinned.header, (rule,)).to_json())
    with pytest.raises(AggregatesMismatch, match="drop ≤ 2%"):
        assert_aggregates_match(
            _aggregates(g0={"useful": 0.6}), golden, fields=["usefulUtilization"]
        )


def test_threshold_matching_no_group_fails() -> None:
    with pytest.raises(AggregatesMismatch, match="matches no group"):
        assert_aggregates_match(
            _aggregates(),
            _aggregates(),
            thresholds=["phaseCycles of gemm_f32_* may not rise by more than 1%"],
        )


def test_golden_json_is_stable() -> None:
    text = _aggregates().to_json()
    assert text.endswith("}\n") and not text.endswith("\n\n")
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert list(data["groups"]) == sorted(data["groups"])
    assert Aggregates.from_json(text).to_json() == text
    assert stable_json({"b": 1.0, "a": [0.1, None, 3]}) == (
        '{\n  "a": [\n    0.1,\n    null,\n    3\n  ],\n  "b": 1.0\n}'
    )
    with pytest.raises(ValueError, match="finite"):
        stable_json({"x": float("nan")})


def test_regenerate_keeps_thresholds_and_skips_missing_dumps(tmp_path: Path) -> None:
    path = tmp_path / "k" / "aggregates.json"
    path.parent.mkdir()
    rule = Threshold.parse("usefulUtilization may not drop by more than 1%")
    path.write_text(Aggregates({}, {}, (rule,), dump="dump.json").to_json())
    before = path.read_bytes()
    log = RegenLog()
    assert not GoldenFile(path, log).regenerate(_aggregates())
    assert path.read_bytes() == before and log.skipped
    (tmp_path / "k" / "dump.json").write_text("{}")
    assert GoldenFile(path, log).regenerate(_aggregates())
    rewritten = Aggregates.load(path)
    assert rewritten.thresholds == (rule,) and rewritten.dump == "dump.json"
    assert rewritten.groups == _aggregates().groups
    assert not GoldenFile(path, log).regenerate(_aggregates())  # same bytes: not rewritten
    assert log.written == [path] and log.unchanged == [path]


def test_misspelt_fields_fail_loudly_and_name_the_valid_ones(tmp_path: Path) -> None:
    reference = _aggregates()
    with pytest.raises(ValueError, match=r"unknown field 'usefullUtilization' in fields=.*"):
        assert_aggregates_match(_aggregates(), reference, fields=["usefullUtilization"])
    with pytest.raises(ValueError, match=r"group fields are sampleCount, tileCount"):
        assert_aggregates_match(_aggregates(), reference, fields=["sampleCount", "p99Cycles"])
    typo = "usefullUtilization of gemm_f16_* may not drop by more than 2%"
    with pytest.raises(ValueError, match=r"unknown field 'usefullUtilization' in threshold"):
        assert_aggregates_match(_aggregates(), reference, thresholds=[typo])
    golden = tmp_path / "aggregates.json"  # a typo in the golden file's own thresholds
    golden.write_text(
        Aggregates(reference.groups, reference.header, (Threshold.parse(typo),)).to_json()
    )
    with pytest.raises(ValueError, match="usefullUtilization"):
        assert_aggregates_match(_aggregates(), golden)


def test_regen_log_tells_created_from_rewritten(tmp_path: Path) -> None:
    log = RegenLog()
    path = tmp_path / "new" / "aggregates.json"
    assert GoldenFile(path, log).regenerate(_aggregates())
    assert log.created == [path] and log.written == []
    assert GoldenFile(path, log).regenerate(_aggregates(g0={"useful": 0.6}))
    assert log.created == [path] and log.written == []  # created this session: said once
    other = tmp_path / "old" / "aggregates.json"
    other.parent.mkdir()
    other.write_text(Aggregates({}, {}).to_json())
    assert GoldenFile(other, log).regenerate(_aggregates())
    assert log.written == [other]
