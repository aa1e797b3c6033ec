"""When a PyTorch trace was captured, in Unix time: what tells two ranks of one run from
the same ranks of two runs (``analyses.comparability``, ``diff``'s rank note).

A Kineto event's ``ts`` is in µs. A trace that states ``baseTimeNanoseconds`` counts ``ts``
from it: the Unix time is ``baseTimeNanoseconds`` + ``ts`` × 1,000 ns, as HTA converts it
(``hta.common.trace.trace_event_timestamp_to_unixtime_ns``). libkineto's base
(``ChromeTraceBaseTime``) is the Unix time floored to a 7,889,238 s interval, so the ranks of
one job share it and their ``ts`` compare as they are. An older trace without it writes
``ts`` as µs since the Unix epoch (HTA's ``sampled_rank-*`` traces: 28 April 2023). A window
that does not fall within 2000–2100 is of some other clock and tells nothing.
"""

from __future__ import annotations

import math

import msgspec
import polars as pl

PLAUSIBLE_NS: tuple[int, int] = (946_684_800 * 10**9, 4_102_444_800 * 10**9)
"""[2000-01-01, 2100-01-01) in Unix ns: a window outside it is not of the Unix clock."""


def base_time_of(raw: bytes) -> int | None:
    """The ``baseTimeNanoseconds`` whose raw text is ``raw`` (None: absent, ``null``, or not
    an integer: no figure rests on it, so it is not an input error)."""
    try:
        return msgspec.json.decode(raw, type=int | None)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None


def unix_window_ns(events: pl.DataFrame, base_ns: int | None) -> tuple[int, int] | None:
    """From the first event's start to the last event's end, in Unix ns (``events``: the
    Kineto event frame, ``ts`` and ``dur`` in µs); None when there is no event or the window
    is not of the Unix clock (``PLAUSIBLE_NS``)."""
    ends = events.select(
        pl.col("ts").min().alias("first"), (pl.col("ts") + pl.col("dur")).max().alias("last")
    ).row(0)
    if ends[0] is None or ends[1] is None or not all(map(math.isfinite, ends)):
        return None  # no event, or a time JSON wrote as 1e400
    start, end = (_ns(v) + (base_ns or 0) for v in ends)
    low, high = PLAUSIBLE_NS
    return (start, end) if low <= start and end < high else None


def _ns(us: float) -> int:
    """``us`` µs in ns, exact: µs since the epoch times 1,000 is past float64's 2**53, so the
    whole µs and the fraction are converted apart."""
    whole = math.floor(us)
    return whole * 1000 + round((us - whole) * 1000)
