"""The two numeric rules a golden comparison rests on, kept tiny so they can be proven.

Both treat ``None`` (an undefined statistic, ``null`` in a summary) as a value of its own:
null equals null and differs from every number, because a utilization that becomes
undefined is a change a kernel author must see.
"""

from __future__ import annotations

import math

from tileprof.analyses.thresholds import Number, relative_change

__all__ = ["Number", "format_change", "relative_change", "within_tolerance"]


def within_tolerance(
    old: Number | None, new: Number | None, rtol: float = 0.0, atol: float = 0.0
) -> bool:
    """``|new - old| ≤ atol + rtol·|old|``, the golden value as reference; null matches null."""
    if old is None or new is None:
        return old is None and new is None
    if old == new:
        return True
    return abs(new - old) <= atol + rtol * abs(old)


def format_change(change: float | None) -> str:
    """A relative change as a signed percentage for diff tables (``-2.31%``, ``+inf%``, ``n/a``)."""
    if change is None:
        return "n/a"
    if math.isinf(change):
        return "+inf%" if change > 0 else "-inf%"
    percent = change * 100
    if percent != 0 and abs(percent) < 0.01:
        return f"{percent:+.2g}%"  # a tiny change must not read as "+0.00%"
    return f"{percent:+.2f}%"
