"""The shared threshold-sentence evaluator (tileprof.analyses.thresholds), outside pytest's
plugin."""

from __future__ import annotations

import math

import pytest

import tileprof.testing as testing
from tileprof.analyses.thresholds import (
    Breach,
    Threshold,
    ThresholdError,
    check_fields,
    evaluate,
    relative_change,
)

BEFORE = {
    "gemm_f16_a": {"usefulUtilization": 0.50, "phaseCycles": 1000},
    "gemm_f16_b": {"usefulUtilization": 0.40, "phaseCycles": 200},
    "softmax": {"usefulUtilization": None, "phaseCycles": 300},
    "gone": {"usefulUtilization": 0.1, "phaseCycles": 50},
}
AFTER = {
    "gemm_f16_a": {"usefulUtilization": 0.489, "phaseCycles": 1051},  # -2.2%, +5.1%
    "gemm_f16_b": {"usefulUtilization": 0.395, "phaseCycles": 210},  # -1.25%, +5%
    "softmax": {"usefulUtilization": None, "phaseCycles": 300},
    "new_kernel": {"usefulUtilization": 0.9, "phaseCycles": 9000},
}


def test_testing_names_are_the_shared_ones() -> None:
    assert testing.Threshold is Threshold
    assert testing.relative_change is relative_change


def test_evaluate_lists_breaches_in_sentence_then_group_order() -> None:
    breaches = evaluate(
        [
            "usefulUtilization of gemm_f16_* may not drop by more than 2%",
            "phaseCycles may not rise by more than 5%",
        ],
        BEFORE,
        AFTER,
    )
    assert [(b.field, b.group) for b in breaches] == [
        ("usefulUtilization", "gemm_f16_a"),
        ("phaseCycles", "gemm_f16_a"),
    ]
    assert breaches[0].old == 0.50 and breaches[0].new == 0.489
    assert breaches[0].change == pytest.approx(-0.022)
    assert str(breaches[1]) == (
        "phaseCycles of gemm_f16_a: 1,000 → 1,051 (+5.10%) breaks "
        "'phaseCycles may not rise by more than 5%'"
    )


def test_exactly_at_the_bound_passes_and_improvements_pass() -> None:
    assert evaluate(["phaseCycles of gemm_f16_b may not rise by more than 5%"], BEFORE, AFTER) == []
    assert evaluate(["phaseCycles of gemm_f16_* may not drop by more than 0%"], BEFORE, AFTER) == []


def test_glob_matching_only_one_side_is_not_an_error() -> None:
    assert evaluate(["phaseCycles of new_* may not rise by more than 1%"], BEFORE, AFTER) == []
    assert evaluate(["phaseCycles of gone may not rise by more than 1%"], BEFORE, AFTER) == []


def test_unknown_field_and_unmatched_glob_are_errors() -> None:
    with pytest.raises(ThresholdError, match="unknown field 'usefulness'"):
        evaluate(["usefulness may not drop by more than 2%"], BEFORE, AFTER)
    with pytest.raises(ThresholdError, match="matches no group on either side"):
        evaluate(["phaseCycles of conv_* may not rise by more than 2%"], BEFORE, AFTER)
    with pytest.raises(ThresholdError, match="cannot read threshold"):
        evaluate(["phaseCycles must be small"], BEFORE, AFTER)


def test_value_becoming_null_breaks_and_zero_baseline_is_infinite() -> None:
    breach = evaluate(
        ["usefulUtilization of x may not change by more than 50%"],
        {"x": {"usefulUtilization": 0.5}},
        {"x": {"usefulUtilization": None}},
    )
    assert breach == [
        Breach(Threshold("usefulUtilization", "x", 0.5, 0.5), "x", "usefulUtilization", 0.5, None)
    ]
    assert "became null" in str(breach[0])
    assert relative_change(0, 3) == math.inf


def test_unknown_fields_are_named_once_each_beside_the_valid_ones() -> None:
    with pytest.raises(ThresholdError) as raised:
        check_fields(["a", "b", "a"], " in x", fields=("p", "q"))
    assert str(raised.value) == "unknown fields 'a', 'b' in x; the fields are p, q"
    with pytest.raises(ThresholdError) as raised:
        check_fields(["usefulness"])
    assert str(raised.value).startswith(
        "unknown field 'usefulness'; the group fields are sampleCount, tileCount, "
    )
    check_fields(["p"], fields=("p",))  # a known field passes


def test_bounds_must_be_finite_fractions_of_zero_or_more() -> None:
    with pytest.raises(ThresholdError, match=r"^threshold on x bounds nothing$"):
        Threshold("x")
    for bound, shown in ((-0.1, "-0.1"), (math.inf, "inf"), (math.nan, "nan")):
        with pytest.raises(ThresholdError) as raised:
            Threshold("x", max_drop=0.1, max_rise=bound)
        assert str(raised.value) == f"threshold bounds are fractions ≥ 0, got {shown}"
    assert Threshold("x", max_drop=0.0).max_drop == 0.0


def test_sentences_read_by_hand() -> None:
    assert Threshold.parse("phaseCycles may not change by more than 2.5%") == Threshold(
        "phaseCycles", "*", 0.025, 0.025
    )
    assert Threshold.parse("  p95Cycles of g_* may not rise by more than 1e1 %  ") == Threshold(
        "p95Cycles", "g_*", None, 0.1
    )
    assert Threshold.parse("x may not drop by more than .5%") == Threshold("x", "*", 0.005, None)
    with pytest.raises(ThresholdError) as raised:
        Threshold.parse("x may not fall by more than 5%")
    assert str(raised.value) == (
        "cannot read threshold 'x may not fall by more than 5%'; write e.g. "
        "'usefulUtilization of gemm_f16_* may not drop by more than 2%'"
    )


def test_a_threshold_from_itself_a_sentence_or_a_mapping() -> None:
    rule = Threshold("x", "g", 0.1, None)
    assert Threshold.coerce(rule) is rule
    assert Threshold.coerce("x of g may not drop by more than 10%") == rule
    assert Threshold.coerce({"field": "x", "groups": "g", "max_drop": 0.1}) == rule
    with pytest.raises(ThresholdError, match=r"^cannot read threshold 42$"):
        Threshold.coerce(42)  # type: ignore[arg-type]


def test_a_threshold_covers_its_own_field_of_groups_matching_case() -> None:
    rule = Threshold("x", "G*", 0.1)
    assert rule.matches("G1", "x")
    assert not rule.matches("g1", "x") and not rule.matches("G1", "y")


def test_allows_by_hand() -> None:
    both = Threshold("x", max_drop=0.1, max_rise=0.2)
    assert both.allows(None, 5) and not both.allows(5, None)
    assert both.allows(100, 90) and not both.allows(100, 89)  # -10% passes, -11% not
    assert both.allows(100, 120) and not both.allows(100, 121)  # +20% passes, +21% not
    rise = Threshold("x", max_rise=0.0)
    assert rise.allows(100, 1) and not rise.allows(100, 101)  # a drop is not bounded
    drop = Threshold("x", max_drop=0.0)
    assert drop.allows(100, 1000) and not drop.allows(100, 99)
    assert not drop.allows(0, -1) and drop.allows(0, 1)  # from 0: ±inf


def test_each_threshold_written_back() -> None:
    mixed = Threshold("x", "*", 0.02, 0.05)
    assert mixed.describe_limit() == "drop ≤ 2%, rise ≤ 5%"
    assert str(mixed) == "x: drop ≤ 2%, rise ≤ 5%"
    assert mixed.to_json() == {"field": "x", "groups": "*", "max_drop": 0.02, "max_rise": 0.05}
    change = Threshold("x", "g", 0.025, 0.025)
    assert str(change) == change.to_json() == "x of g may not change by more than 2.5%"
    assert change.describe_limit() == "drop ≤ 2.5%, rise ≤ 2.5%"
    assert str(Threshold("x", max_rise=0.05)) == "x may not rise by more than 5%"
    assert Threshold("x", max_rise=0.05).describe_limit() == "rise ≤ 5%"
    assert str(Threshold("x", "a?", max_drop=0.5)) == "x of a? may not drop by more than 50%"
    assert Threshold("x", max_drop=0.5).describe_limit() == "drop ≤ 50%"


def test_breach_lines_by_hand() -> None:
    rule = Threshold("x", max_rise=0.05)
    breach = Breach(rule, "g", "x", 2, 3.5)
    assert breach.change == 0.75
    assert str(breach) == "x of g: 2 → 3.5 (+75.00%) breaks 'x may not rise by more than 5%'"
    assert str(Breach(rule, "g", "x", 2, None)) == (
        "x of g: 2 → null (became null) breaks 'x may not rise by more than 5%'"
    )


def test_only_groups_on_both_sides_are_judged_in_group_order() -> None:
    """a_gone (before only) sorts between a and b, and new (after only) last: both skipped."""
    before = {"b": {"x": 1}, "a": {"x": 1}, "a_gone": {"x": 1}}
    after = {"a": {"x": 2}, "b": {"x": 2}, "new": {"x": 9}}
    breaches = evaluate(["x may not rise by more than 10%"], before, after, fields=("x",))
    assert [(b.group, b.old, b.new) for b in breaches] == [("a", 1, 2), ("b", 1, 2)]
    with pytest.raises(ThresholdError) as raised:
        evaluate(["x of c* may not rise by more than 10%"], before, after, fields=("x",))
    assert str(raised.value) == (
        "threshold 'x of c* may not rise by more than 10%' matches no group on either side"
    )
    with pytest.raises(ThresholdError, match=r"^unknown field 'y' in threshold 'y may not "):
        evaluate(["y may not rise by more than 10%"], before, after, fields=("x",))
