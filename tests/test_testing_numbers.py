"""Property tests for the numeric rules behind golden comparisons and thresholds."""

from __future__ import annotations

import math

from hypothesis import given
from hypothesis import strategies as st

from tileprof.testing import Threshold, format_change, relative_change, within_tolerance

finite = st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False)
nonzero = finite.filter(lambda x: abs(x) > 1e-6)
fraction = st.floats(min_value=0, max_value=10, allow_nan=False)


@given(finite)
def test_no_change_is_zero(value: float) -> None:
    assert relative_change(value, value) == 0.0


@given(nonzero, st.floats(min_value=-0.99, max_value=10, allow_nan=False))
def test_relative_change_inverts_scaling(old: float, factor: float) -> None:
    """A move of ``factor`` times the old magnitude reads back as ``factor`` (sign = direction)."""
    new = old + abs(old) * factor
    change = relative_change(old, new)
    assert change is not None
    assert math.isclose(change, factor, rel_tol=1e-9, abs_tol=1e-9)


@given(nonzero, finite)
def test_relative_change_sign_follows_direction(old: float, new: float) -> None:
    change = relative_change(old, new)
    assert change is not None
    assert (change > 0) == (new > old)
    assert (change < 0) == (new < old)


@given(finite)
def test_change_from_zero_is_infinite_with_the_right_sign(new: float) -> None:
    change = relative_change(0, new)
    if new == 0:
        assert change == 0.0
    else:
        assert change == math.copysign(math.inf, new)


@given(st.one_of(st.none(), finite))
def test_null_has_no_relative_change(value: float | None) -> None:
    assert relative_change(None, value) is None
    assert relative_change(value, None) is None


@given(finite, finite, fraction, fraction)
def test_tolerance_is_monotonic(old: float, new: float, rtol: float, extra: float) -> None:
    if within_tolerance(old, new, rtol):
        assert within_tolerance(old, new, rtol + extra)
        assert within_tolerance(old, new, rtol, atol=extra)


@given(finite, finite)
def test_zero_tolerance_is_equality(old: float, new: float) -> None:
    assert within_tolerance(old, new) == (old == new)


@given(nonzero, finite, st.floats(min_value=0, max_value=1, allow_nan=False))
def test_rtol_agrees_with_relative_change(old: float, new: float, rtol: float) -> None:
    change = relative_change(old, new)
    assert change is not None
    # Away from the boundary the two formulations must agree.
    if abs(abs(change) - rtol) > 1e-9:
        assert within_tolerance(old, new, rtol) == (abs(change) <= rtol)


@given(st.one_of(st.none(), finite))
def test_null_only_matches_null(value: float | None) -> None:
    assert within_tolerance(None, value, 1.0, 1.0) == (value is None)


@given(nonzero, finite, st.floats(min_value=0, max_value=5, allow_nan=False))
def test_drop_threshold_matches_relative_change(old: float, new: float, bound: float) -> None:
    threshold = Threshold("usefulUtilization", max_drop=bound)
    change = relative_change(old, new)
    assert change is not None
    assert threshold.allows(old, new) == (change >= -bound)
    assert Threshold("x", max_rise=bound).allows(old, new) == (change <= bound)


@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["drop", "rise", "change"]))
def test_threshold_sentence_round_trips(hundredths: int, verb: str) -> None:
    text = f"usefulUtilization of gemm_f16_* may not {verb} by more than {hundredths / 100:g}%"
    threshold = Threshold.parse(text)
    assert str(threshold) == text
    assert Threshold.parse(str(threshold)) == threshold


@given(finite)
def test_format_change_is_a_signed_percentage(change: float) -> None:
    text = format_change(change)
    assert text.endswith("%")
    assert text[0] in "+-"


def test_format_change_edges() -> None:
    assert format_change(None) == "—"  # as every view prints a missing value (issue 26)
    assert format_change(math.inf) == "+∞%"
    assert format_change(-0.0231) == "-2.31%"
    assert format_change(0.0) == "+0.00%"
    assert format_change(-3e-7) == "-3e-05%"


def test_a_change_of_exactly_the_tolerance_is_within_it() -> None:
    """The bound is inclusive (``≤``): 1 → 3 with atol 2, and 4 → 6 with rtol ½."""
    assert within_tolerance(1, 3, atol=2) and within_tolerance(4, 6, rtol=0.5)
    assert not within_tolerance(1, 3.5, atol=2) and not within_tolerance(4, 6.5, rtol=0.5)
