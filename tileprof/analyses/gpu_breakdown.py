"""Where a GPU's time goes: TraceLens' timeline breakdown, HTA's idle causes, launch figures.

One row per (trace, device, step window): the window is a step's (``core.gpu_events``'
``step_windows``), or the whole trace (``step`` null); with more than one device a trace also
gets an all-devices row (``device`` null), the figure TraceLens' ``gpu_timeline.csv`` gives.
Every column is defined in docs/metrics.md, "Time breakdown". The analysis reads the GPU event
frame of ``core.gpu_events`` (integer ns; lengths are summed exactly, then given in µs) and
nothing else, so any reader that fills it (Kineto, nsys) gets the same figures.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, fields
from typing import Any

import numpy as np
import polars as pl

from tileprof.analyses.intervals import Times, clip, length, span, union, union_length
from tileprof.core.gpu_events import GPU_EVENT_KINDS, GpuTimeline

KERNEL_WAIT_US = 30.0
"""A gap shorter than this between two events is the device's own launch overhead ("kernel
wait"), not the host's fault. HTA's ``consecutive_kernel_delay`` defaults to 30 and its
documentation calls that 30 ns, but HTA compares it with gaps in µs (its traces' unit), so
what HTA outputs is a 30 µs threshold; this default reproduces HTA's output."""
_WHOLE = (int(np.iinfo(np.int64).min), int(np.iinfo(np.int64).max))
"""The bounds of a whole-trace window, in ns."""

TIME_COLUMNS: tuple[str, ...] = (
    "computation_us",
    "total_comm_us",
    "exposed_comm_us",
    "total_memcpy_us",
    "exposed_memcpy_us",
    "busy_us",
    "idle_us",
    "total_us",
)
IDLE_COLUMNS: tuple[str, ...] = ("idle_host_wait_us", "idle_kernel_wait_us", "idle_other_us")
LAUNCH_COLUMNS: tuple[str, ...] = (
    "kernels",
    "launched",
    "launch_us_mean",
    "launch_us_p50",
    "launch_us_p95",
    "launch_delay_us_p50",
    "launch_delay_us_p95",
    "launch_delay_us_p99",
    "launch_delay_us_max",
    "shorter_than_launch",
)
_KEY_SCHEMA: dict[str, pl.DataType] = {
    "trace": pl.String(),
    "rank": pl.Int64(),
    "device": pl.Int64(),
    "device_name": pl.String(),
    "step": pl.Int64(),
}
ROW_SCHEMA: dict[str, pl.DataType] = {
    **_KEY_SCHEMA,
    "window_from": pl.String(),
    "window_us": pl.Float64(),
    "events": pl.Int64(),
    **{c: pl.Float64() for c in (*TIME_COLUMNS, *IDLE_COLUMNS)},
}
LAUNCH_SCHEMA: dict[str, pl.DataType] = {
    **_KEY_SCHEMA,
    **{
        c: pl.Int64() if c in ("kernels", "launched", "shorter_than_launch") else pl.Float64()
        for c in LAUNCH_COLUMNS
    },
}
STREAM_SCHEMA: dict[str, pl.DataType] = {
    **_KEY_SCHEMA,
    "stream": pl.Int64(),
    "events": pl.Int64(),
    "busy_us": pl.Float64(),
    "idle_us": pl.Float64(),
    **{c: pl.Float64() for c in IDLE_COLUMNS},
}


@dataclass(frozen=True)
class Breakdown:
    """The breakdown of some traces: time rows, launch figures and per-stream idle causes,
    all keyed by (trace, rank, device, step)."""

    rows: pl.DataFrame
    launches: pl.DataFrame
    streams: pl.DataFrame
    kernel_wait_us: float = KERNEL_WAIT_US

    def to_document(self) -> dict[str, Any]:
        """The JSON document of ``breakdown --format json``."""
        return {
            "breakdown": self.rows.to_dicts(),
            "launches": self.launches.to_dicts(),
            "streams": self.streams.to_dicts(),
            "options": {"kernel_wait_us": self.kernel_wait_us},
        }


@dataclass(frozen=True)
class _Window:
    device: int | None
    step: int | None
    low: int
    high: int
    source: str = "trace"
    every_device: bool = False
    """The all-devices row (``device`` is null then; a device the trace does not name is null
    too, but is one device)."""


Kinds = np.ndarray[Any, np.dtype[np.unsignedinteger[Any]]]
"""GPU event kinds as their codes (``_CODE``)."""


@dataclass(frozen=True)
class _Events:
    """One window's events as numpy arrays (times in integer ns), sorted by (start, launch
    start; events without a launch last)."""

    start: Times
    end: Times
    launch: Times
    launched: np.ndarray[Any, np.dtype[np.bool_]]
    kind: Kinds
    stream: np.ndarray[Any, np.dtype[np.int64]]


def breakdown(
    timelines: Sequence[GpuTimeline], kernel_wait_us: float = KERNEL_WAIT_US
) -> Breakdown:
    """The breakdown of every timeline, one after another in the order given."""
    rows: list[dict[str, Any]] = []
    launches: list[dict[str, Any]] = []
    streams: list[dict[str, Any]] = []
    for timeline in timelines:
        prepared: dict[tuple[int | None, bool], _DeviceEvents] = {}
        for window in _windows(timeline):
            key = _key(timeline, window)
            place = (window.device, window.every_device)
            if place not in prepared:
                prepared[place] = _device_events(timeline.events, window)
            events = _window_events(prepared[place], window)
            rows.append(key | _time_row(events, window, kernel_wait_us))
            launches.append(key | _launch_row(prepared[place], window))
            if window.every_device:
                continue  # streams are per device: the same id on two devices is two streams
            for stream in np.unique(events.stream):
                mask = events.stream == stream
                streams.append(key | _stream_row(events, mask, int(stream), kernel_wait_us))
    return Breakdown(
        pl.DataFrame(rows, schema=ROW_SCHEMA),
        pl.DataFrame(launches, schema=LAUNCH_SCHEMA),
        pl.DataFrame(streams, schema=STREAM_SCHEMA),
        kernel_wait_us,
    )


LONG_GAP_US = 1000.0
"""A gap between two ops at least this long is more than a host takes to dispatch one op
(microseconds to tens of microseconds on tt-metal's dispatch path): the host was doing other
work (compiling an op's program on a first run, Python, I/O). ``long_gaps`` splits a chip's
idle time there (docs/metrics.md, "Findings": ``dispatch-bound`` and ``host-gaps``)."""


def long_gaps(timelines: Sequence[GpuTimeline], at_least_us: float = LONG_GAP_US) -> pl.DataFrame:
    """Per trace and device: the idle time (the breakdown's whole-trace ``idle_us``, gap by
    gap between its busy periods) in gaps of at least ``at_least_us`` each
    (``long_gap_us``), and how many such gaps there are (``long_gaps``)."""
    frames = []
    for timeline in timelines:
        events = timeline.events.select("device", "start_ns", "end_ns").sort("device", "start_ns")
        before = pl.col("end_ns").cum_max().shift(1).over("device")
        gaps = events.with_columns(gap_ns=pl.col("start_ns") - before)
        long = pl.col("gap_ns") >= at_least_us * 1000.0
        frames.append(
            gaps.group_by("device", maintain_order=True).agg(
                trace=pl.lit(timeline.name),
                long_gap_us=pl.col("gap_ns").filter(long).sum().cast(pl.Float64) / 1000.0,
                long_gaps=long.sum().cast(pl.Int64),
            )
        )
    typed = [pl.col(name).cast(dtype) for name, dtype in GAP_SCHEMA.items()]
    return pl.concat([pl.DataFrame(schema=GAP_SCHEMA), *(f.select(typed) for f in frames)])


GAP_SCHEMA: dict[str, pl.DataType] = {
    "trace": pl.String(),
    "device": pl.Int64(),
    "long_gap_us": pl.Float64(),
    "long_gaps": pl.Int64(),
}


def concat_breakdowns(parts: Sequence[Breakdown], kernel_wait_us: float) -> Breakdown:
    """The breakdown of several timelines from each one's own, in the order given: what
    ``breakdown`` of all of them gives (each row belongs to one timeline)."""
    return Breakdown(
        pl.concat([p.rows for p in parts]) if parts else pl.DataFrame(schema=ROW_SCHEMA),
        pl.concat([p.launches for p in parts]) if parts else pl.DataFrame(schema=LAUNCH_SCHEMA),
        pl.concat([p.streams for p in parts]) if parts else pl.DataFrame(schema=STREAM_SCHEMA),
        kernel_wait_us,
    )


def _windows(timeline: GpuTimeline) -> list[_Window]:
    """Per device: the whole trace, then each step in order; then all devices when several."""
    devices = timeline.events.get_column("device").unique().sort(nulls_last=True).to_list()
    windows: list[_Window] = []
    steps = timeline.steps.sort("step", "start_ns")
    for device in devices:
        windows.append(_Window(device, None, *_WHOLE))
        # a GPU-side annotation whose pid names no device applies to every device
        mine = steps.filter(pl.col("device").eq_missing(device) | pl.col("device").is_null())
        for step in mine.iter_rows(named=True):
            low, high, source = step["start_ns"], step["end_ns"], str(step["source"])
            windows.append(_Window(device, step["step"], low, high, source))
    if len(devices) > 1:
        windows.append(_Window(None, None, *_WHOLE, every_device=True))
    return windows


def _key(timeline: GpuTimeline, window: _Window) -> dict[str, Any]:
    names = timeline.devices
    name = None
    if window.device is None and not window.every_device:
        name = "GPU"  # events that name no device: one device all the same
    if window.device is not None:
        name = names.get(window.device)
        if name is None and len(names) == 1:
            name = next(iter(names.values()))  # MI300X VF: properties list id 0, kernels say 2
        if name is None:
            name = f"GPU {window.device}"
    rank = None if timeline.rank is None else timeline.rank.rank
    return {
        "trace": timeline.name,
        "rank": rank,
        "device": window.device,
        "device_name": name,
        "step": window.step,
    }


@dataclass(frozen=True)
class _DeviceEvents:
    """A device's events (every device's for the all-devices row) as arrays in frame order,
    made once per timeline, and their order by start: a step window reads only the events
    that can reach it, so a trace of many steps is not read whole once per step."""

    start: Times
    end: Times
    launch: Times
    launch_end: Times
    """The launching call's end (0 where ``launched`` is false)."""
    launched: np.ndarray[Any, np.dtype[np.bool_]]
    kind: Kinds
    stream: np.ndarray[Any, np.dtype[np.int64]]
    by_start: np.ndarray[Any, np.dtype[np.intp]]
    """Row numbers in order of start (frame order among equal starts)."""
    sorted_start: Times
    """``start[by_start]``."""
    longest: int
    """The longest event's length in ns: an event starting before ``low - longest`` ends
    before ``low``."""


_LAUNCH_COLUMNS = ("kind", "stream", "start_ns", "end_ns", "launch_start_ns", "launch_end_ns")
"""The GPU event frame's columns that a window's time and launch figures read."""
_KIND = pl.Enum(list(GPU_EVENT_KINDS))
_CODE = {kind: code for code, kind in enumerate(GPU_EVENT_KINDS)}
"""Each kind's code in ``_KIND`` (an Enum's physical value is its place in the list): a
window's arrays hold a kind as its code, a byte or four a row, not as text."""
_KERNEL_CODES = [_CODE["kernel"], _CODE["comm"]]
"""The kinds whose launches ``_launch_row`` counts (compute and communication kernels)."""


def _device_events(events: pl.DataFrame, window: _Window) -> _DeviceEvents:
    """The events of ``window``'s device (or of every device) as arrays, once (only the
    columns the figures read are copied: names are most of a timeline's bytes)."""
    device = pl.lit(True) if window.every_device else pl.col("device").eq_missing(window.device)
    events = events.lazy().filter(device).select(_LAUNCH_COLUMNS).collect()
    start = events.get_column("start_ns").to_numpy().astype(np.int64)
    end = events.get_column("end_ns").to_numpy().astype(np.int64)
    column = events.get_column("launch_start_ns")
    by_start = np.argsort(start, kind="stable")
    return _DeviceEvents(
        start=start,
        end=end,
        launch=column.fill_null(_WHOLE[1]).to_numpy().astype(np.int64),
        launch_end=events.get_column("launch_end_ns").fill_null(0).to_numpy().astype(np.int64),
        launched=column.is_not_null().to_numpy(),
        kind=events.get_column("kind").cast(_KIND).to_physical().to_numpy(),
        stream=events.get_column("stream").fill_null(-1).to_numpy().astype(np.int64),
        by_start=by_start,
        sorted_start=start[by_start],
        longest=int((end - start).max()) if start.size else 0,
    )


def _rows_starting(
    events: _DeviceEvents, low: int, high: int
) -> np.ndarray[Any, np.dtype[np.intp]]:
    """The row numbers, in frame order, of the events that start in [low, high)."""
    first = np.searchsorted(events.sorted_start, max(low, _WHOLE[0]), side="left")
    last = np.searchsorted(events.sorted_start, high, side="left")
    return np.sort(events.by_start[first:last])


def _window_events(events: _DeviceEvents, window: _Window) -> _Events:
    """The window's events, cut to it, sorted by start then launch start (none last)."""
    rows = _rows_starting(events, window.low - events.longest, window.high)
    s, e, keep = clip(events.start[rows], events.end[rows], window.low, window.high)
    kept = rows[keep]
    s, e, launch, launched = s[keep], e[keep], events.launch[kept], events.launched[kept]
    kind, stream = events.kind[kept], events.stream[kept]
    order = np.lexsort((launch, s))
    return _Events(s[order], e[order], launch[order], launched[order], kind[order], stream[order])


def _time_row(events: _Events, window: _Window, kernel_wait_us: float) -> dict[str, Any]:
    """TraceLens' time columns and the idle causes of one window."""
    s, e, kind = events.start, events.end, events.kind
    compute = (kind == _CODE["kernel"]) | (kind == _CODE["memset"])
    comm = kind == _CODE["comm"]
    memcpy = kind == _CODE["memcpy"]
    computation = union_length(s[compute], e[compute])
    with_comm = union_length(s[compute | comm], e[compute | comm])
    blocks = union(s, e)
    busy = length(*blocks)
    total = span(s, e)
    idle = total - busy
    host, kernel = _idle_causes(events, blocks, kernel_wait_us)
    whole = (window.low, window.high) == _WHOLE
    return {
        "window_from": window.source,
        "window_us": _us(total if whole else window.high - window.low),
        "events": int(s.size),
        "computation_us": _us(computation),
        "total_comm_us": _us(union_length(s[comm], e[comm])),
        "exposed_comm_us": _us(with_comm - computation),
        "total_memcpy_us": _us(union_length(s[memcpy], e[memcpy])),
        "exposed_memcpy_us": _us(busy - with_comm),
        "busy_us": _us(busy),
        "idle_us": _us(idle),
        "total_us": _us(total),
        "idle_host_wait_us": _us(host),
        "idle_kernel_wait_us": _us(kernel),
        "idle_other_us": _us(idle - host - kernel),
    }


def _us(ns: float) -> float:
    """A length in ns (summed exactly as integers) in µs."""
    return ns / 1000.0


def _idle_causes(
    events: _Events, blocks: tuple[Times, Times], kernel_wait_us: float
) -> tuple[float, float]:
    """Host-wait and kernel-wait idle of ``events`` (HTA's classes), whose union is
    ``blocks`` (``intervals.union``, made once by the caller for its busy time too).

    Each gap between busy periods is classed by the event that ends it (the first, by launch,
    to start the next busy period): host wait when its launch call started after the gap
    began, else kernel wait when the gap is shorter than ``kernel_wait_us``, else other.
    Lengths in ns.
    """
    blocks_start, blocks_end = blocks
    if blocks_start.size < 2:
        return 0.0, 0.0
    gap_from, gap_to = blocks_end[:-1], blocks_start[1:]
    gap = gap_to - gap_from
    # the events are in start order: the first to start at a block's start opens it
    closer = np.searchsorted(events.start, gap_to, side="left")
    host = events.launched[closer] & (events.launch[closer] > gap_from)  # no launch: no host wait
    kernel = ~host & (gap < kernel_wait_us * 1000.0)
    return float(gap[host].sum()), float(gap[kernel].sum())


def _stream_row(
    events: _Events, mask: np.ndarray[Any, np.dtype[np.bool_]], stream: int, kernel_wait_us: float
) -> dict[str, Any]:
    """One stream's busy time and idle causes in the window (HTA's per-stream view)."""
    mine = _Events(*(getattr(events, f.name)[mask] for f in fields(_Events)))
    blocks = union(mine.start, mine.end)
    busy = length(*blocks)
    idle = span(mine.start, mine.end) - busy
    host, kernel = _idle_causes(mine, blocks, kernel_wait_us)
    return {
        "stream": None if stream == -1 else stream,
        "events": int(mine.start.size),
        "busy_us": _us(busy),
        "idle_us": _us(idle),
        "idle_host_wait_us": _us(host),
        "idle_kernel_wait_us": _us(kernel),
        "idle_other_us": _us(idle - host - kernel),
    }


def _launch_row(events: _DeviceEvents, window: _Window) -> dict[str, Any]:
    """Launch figures of the kernels (compute and communication) that start in the window."""
    starting = _rows_starting(events, window.low, window.high)
    kernels = starting[np.isin(events.kind[starting], _KERNEL_CODES)]
    launched = kernels[events.launched[kernels]]
    launch = events.launch[launched]
    call = events.launch_end[launched] - launch
    delay = events.start[launched] - launch
    length = events.end[launched] - events.start[launched]
    call_p50, call_p95 = _ranks(call, 0.5, 0.95)
    delay_p50, delay_p95, delay_p99 = _ranks(delay, 0.5, 0.95, 0.99)
    return {
        "kernels": kernels.size,
        "launched": launched.size,
        "launch_us_mean": _mean(call),
        "launch_us_p50": call_p50,
        "launch_us_p95": call_p95,
        "launch_delay_us_p50": delay_p50,
        "launch_delay_us_p95": delay_p95,
        "launch_delay_us_p99": delay_p99,
        "launch_delay_us_max": _us(float(delay.max())) if delay.size else None,
        "shorter_than_launch": int(np.count_nonzero(length < call)),
    }


def _mean(values: Times) -> float | None:
    """The mean of ns lengths in µs; None when empty."""
    if values.size == 0:
        return None
    return _us(float(values.astype(np.float64).mean()))


def _ranks(values: Times, *ps: float) -> list[float | None]:
    """The nearest-rank percentiles ``ps`` of ns lengths in µs (as the run table's p50/p95);
    None each when empty. One partition places every rank asked for (a sort per percentile
    was most of the launch figures' time)."""
    if values.size == 0:
        return [None] * len(ps)
    kth = [max(math.ceil(values.size * p) - 1, 0) for p in ps]
    placed = np.partition(values, kth)
    return [_us(float(placed[k])) for k in kth]
