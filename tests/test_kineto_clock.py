"""``inputs/gpu/kineto_clock.py`` by hand: a trace's capture window in Unix ns (issue 38)."""

from __future__ import annotations

import polars as pl
import pytest

from tileprof.inputs.gpu.kineto_clock import PLAUSIBLE_NS, _ns, base_time_of, unix_window_ns

EPOCH_US = 1_700_000_000_000_000.0
"""14 November 2023 in µs since the Unix epoch, as an older trace writes ``ts``."""


def _events(ts: list[float | None], dur: list[float | None]) -> pl.DataFrame:
    return pl.DataFrame({"ts": ts, "dur": dur}, schema={"ts": pl.Float64, "dur": pl.Float64})


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(b"1700000000000000000", 1_700_000_000_000_000_000), (b"null", None), (b'"1"', None),
     (b"1.5", None), (b"", None), (b"{}", None)],
)  # fmt: skip
def test_the_base_time_is_an_integer_or_nothing(raw: bytes, expected: int | None) -> None:
    assert base_time_of(raw) == expected


def test_microseconds_to_nanoseconds_exactly() -> None:
    assert _ns(1.75) == 1750
    assert _ns(0.0) == 0
    assert _ns(EPOCH_US + 0.5) == 1_700_000_000_000_000_500  # past 2**53 as ns
    assert _ns(-1.25) == -1250


def test_the_window_runs_from_the_first_start_to_the_last_end() -> None:
    """The last end is not the last start's: an early long event ends last."""
    events = _events([EPOCH_US + 10, EPOCH_US, EPOCH_US + 20], [5, 40.25, 1])
    first = 1_700_000_000_000_000_000
    assert unix_window_ns(events, None) == (first, first + 40_250)
    relative = _events([10.0, 0.0], [5, 40.25])
    base = 1_699_995_000_000_000_000
    assert unix_window_ns(relative, base) == (base, base + 40_250)
    assert unix_window_ns(relative, None) is None  # µs from 1970: not of the Unix clock


def test_a_window_outside_2000_to_2100_or_without_events_tells_nothing() -> None:
    low, high = PLAUSIBLE_NS
    one = _events([0.0], [1.0])  # 1 µs, placed by the base
    assert unix_window_ns(one, low) == (low, low + 1000)
    assert unix_window_ns(one, low - 1) is None
    assert unix_window_ns(one, high - 1001) == (high - 1001, high - 1)
    assert unix_window_ns(one, high - 1000) is None
    assert unix_window_ns(_events([], []), None) is None
    assert unix_window_ns(_events([EPOCH_US], [None]), None) is None
    assert unix_window_ns(_events([float("inf")], [1]), None) is None
