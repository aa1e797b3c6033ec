"""The two numeric rules a golden comparison rests on, kept tiny so they can be proven.

Both treat ``None`` (an undefined statistic, ``null`` in a summary) as a value of its own:
null equals null and differs from every number, because a utilization that becomes
undefined is a change a kernel author must see.
"""

from __future__ import annotations

from tileprof.analyses.thresholds import Number, relative_change
from tileprof.core import numbers

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
    """A relative change as a signed percentage for diff tables (``-2.31%``, ``+∞%``, ``—``):
    the one policy of ``tileprof.core.numbers`` (a tiny change never reads as ``+0.00%``)."""
    return numbers.percent(change, signed=True)
