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
