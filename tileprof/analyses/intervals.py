"""Interval arithmetic over GPU events with numpy: unions, their lengths, and the gaps between.

Every breakdown figure (docs/metrics.md, "Time breakdown") is a length of a union of event
intervals, or a difference of two: |B minus A| = |A ∪ B| − |A|. No per-event Python loop.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

Floats = npt.NDArray[np.float64]
Times = npt.NDArray[Any]
"""Interval bounds: integer ns (the GPU event frame's) or float µs."""


def union(starts: Times, ends: Times) -> tuple[Times, Times]:
    """The union of intervals [start, end) as disjoint sorted intervals; touching ones merge.

    Intervals already in start order (the breakdown's windows are) are not sorted again: as
    each ends at or after its start, the order among equal starts changes nothing (none but
    the first can open a block, and a block's end is the largest of its ends)."""
    if starts.size == 0:
        return starts, ends
    if bool(np.all(starts[1:] >= starts[:-1])):
        s, e = starts, ends
    else:
        order = np.lexsort((ends, starts))
        s, e = starts[order], ends[order]
    reach = np.maximum.accumulate(e)
    opens = np.empty(s.size, dtype=bool)
    opens[0] = True
    opens[1:] = s[1:] > reach[:-1]
    first = np.flatnonzero(opens)
    return s[first], np.maximum.reduceat(e, first)


def union_length(starts: Times, ends: Times) -> float:
    """The length of the union of the intervals (in their unit)."""
    return length(*union(starts, ends))


def length(starts: Times, ends: Times) -> float:
    """The summed length of disjoint intervals (a union's blocks: ``union``), in their unit."""
    return float(np.sum(ends - starts))


def span(starts: Times, ends: Times) -> float:
    """Last end minus first start; 0 for no intervals."""
    return float(ends.max() - starts.min()) if starts.size else 0.0


def clip(
    starts: Times, ends: Times, low: float, high: float
) -> tuple[Times, Times, npt.NDArray[np.bool_]]:
    """The intervals cut to [low, high], and which of them keep a positive length (or, for
    zero-length events, lie inside the window)."""
    s = np.clip(starts, low, high)
    e = np.clip(ends, low, high)
    keep = (e > s) | ((starts >= low) & (starts < high))
    return s, e, keep
