"""How every view prints a number: the terminal tables, the HTML report and the charts.

One policy (docs/metrics.md, "How numbers are shown"), so the same value reads the same
everywhere:

- integers, and floats holding a whole number, in full with thousands separators
  (``1,500,000``; cycle counts are never in scientific notation);
- other numbers to ``DIGITS`` significant figures (``1.426``, ``0.01235``, ``123.5``), rounded
  to a whole number with separators from 1,000 up (``12,346``); below 1e-4, scientific;
- ratios as percentages with ``PERCENT_DECIMALS`` decimals and no space (``12.34%``); a
  change too small for them to 2 significant figures (``+0.0012%``), never ``+0.00%``;
- times with their unit: µs, ms or s, the largest that keeps the value at 1 or more
  (``15.50 µs``), ``MICRO`` (U+00B5 MICRO SIGN) being the one spelling of µ;
- speedups with ``×`` (``2.500×``);
- an exact value (a verdict's before and after) to 10 significant figures, separators;
- a missing value as ``MISSING``;
- chart axes with the same separators (``1,000``), and an axis in cycles also in µs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from numbers import Integral
from typing import Any

DIGITS = 4
"""Significant figures of a number that is not whole."""
PERCENT_DECIMALS = 2
"""Decimals of a percentage."""
MISSING = "—"
"""A null or NaN value."""
MICRO = "\u00b5"
"""µ as every view spells it (MICRO SIGN, not GREEK SMALL LETTER MU U+03BC)."""
EXACT_DIGITS = 10
"""Significant figures of an exact value: enough to see a last-place change."""


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def number(value: Any, digits: int = DIGITS) -> str:
    """``value`` as the policy prints it: whole numbers in full with separators, others to
    ``digits`` significant figures (whole from 1,000 up, scientific below 1e-4)."""
    if _missing(value):
        return MISSING
    if isinstance(value, bool) or type(value).__name__ in ("bool_", "bool"):
        return str(value)
    if isinstance(value, Integral):  # numpy integers too
        return f"{int(value):,}"
    value = float(value)
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    size = abs(value)
    if value.is_integer() or size >= 1000:
        return f"{value:,.0f}"
    if size < 1e-4:
        return f"{value:.{digits}g}"
    text = f"{value:#.{digits}g}"
    if "e" in text or abs(float(text)) >= 1000:  # rounded up to 1,000
        return f"{value:,.0f}"
    return text.rstrip(".")


def percent(value: float | None, *, signed: bool = False) -> str:
    """A ratio as a percentage, ``PERCENT_DECIMALS`` decimals, no space: ``12.34%``.
    ``signed`` adds "+" to a rise (relative changes)."""
    if value is None or math.isnan(value):
        return MISSING
    if math.isinf(value):
        return ("+∞%" if signed else "∞%") if value > 0 else "−∞%"
    sign = "+" if signed else ""
    hundredths = 10.0**-PERCENT_DECIMALS
    if signed and value != 0 and abs(value * 100) < hundredths / 2:
        return f"{value * 100:+.2g}%"  # a tiny change must not read as "+0.00%"
    return f"{value * 100:{sign}.{PERCENT_DECIMALS}f}%"


def points(change: float | None) -> str:
    """A change of a ratio in signed percentage points, ``PERCENT_DECIMALS`` decimals:
    ``-6.07 pp`` (docs/metrics.md, "How numbers are shown")."""
    if change is None or math.isnan(change):
        return MISSING
    return f"{change * 100:+.{PERCENT_DECIMALS}f} pp"


def duration_us(us: float | None) -> str:
    """A time given in µs, with its unit: ``15.50 µs``, ``4.360 ms``, ``780 s`` (``number``'s
    figures in the largest unit that keeps the value at 1 or more)."""
    if _missing(us):
        return MISSING
    assert us is not None
    if abs(us) >= 1e6:
        return f"{number(us / 1e6)} s"
    if abs(us) >= 1e3:
        return f"{number(us / 1e3)} ms"
    return f"{number(us)} {MICRO}s"


def speedup(value: float | None) -> str:
    """A speedup (a ratio of times) with ``×``: ``2.500×``."""
    return MISSING if _missing(value) else f"{number(value)}×"


def exact(value: Any) -> str:
    """A value as a verdict line or a golden comparison shows it: integers in full, floats to
    ``EXACT_DIGITS`` significant figures, both with separators; null as ``null``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, Integral):
        return f"{int(value):,}"
    if isinstance(value, float):
        return f"{value:,.{EXACT_DIGITS}g}"
    return str(value)


def tick(value: float, _position: object = None) -> str:
    """An axis tick label: a plain number with thousands separators ("1,000", "13.4",
    "0.01"), never "1.3×10¹"; six significant figures so close ticks stay distinct."""
    if value == 0:
        return "0"
    if abs(value) >= 1000:
        return f"{value:,.0f}"
    return f"{value:.6g}"


def cycles_to_us(cycles: float, clock_hz: float) -> float:
    """Cycles as microseconds at ``clock_hz``."""
    return cycles * 1e6 / clock_hz


def cycle_tick(clock_hz: float) -> Callable[[float, object], str]:
    """Tick labels for an axis in cycles: the cycle count, then its µs below it
    ("1,500,000\\n(1,000 µs)" at 1.5 GHz)."""

    def label(value: float, _position: object = None) -> str:
        return f"{tick(value)}\n({tick(number_value(cycles_to_us(value, clock_hz)))} µs)"

    return label


def number_value(value: float, digits: int = DIGITS) -> float:
    """``value`` rounded to ``digits`` significant figures (whole from 1,000 up), as ``number``
    rounds it, for a tick that must not show more digits than the policy."""
    if value == 0 or not math.isfinite(value):
        return value
    if abs(value) >= 1000:
        return float(round(value))
    return float(f"{value:.{digits}g}")
