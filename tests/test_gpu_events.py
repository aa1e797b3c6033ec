"""``core/gpu_events.py`` by hand: the frame's typing, communication kernels, the µs/ns
conversions and each rule of the step windows, at their boundaries (issue 38)."""

from __future__ import annotations

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tileprof.core.gpu_events import (
    GPU_EVENT_SCHEMA,
    STEP_SCHEMA,
    as_gpu_events,
    comm_kind,
    empty_gpu_events,
    empty_steps,
    ns_of_us,
    step_windows,
    us_of_ns,
)


def test_the_empty_frames_have_every_column() -> None:
    assert empty_gpu_events().schema == pl.Schema(GPU_EVENT_SCHEMA)
    assert empty_steps().schema == pl.Schema(STEP_SCHEMA)
    assert empty_gpu_events().height == empty_steps().height == 0


def test_a_communication_kernel_is_one_whose_name_says_nccl_or_rccl() -> None:
    frame = pl.DataFrame(
        {
            "kind": ["kernel", "kernel", "kernel", "memcpy", "kernel"],
            "name": ["ncclDevKernel_AllReduce", "RCCL_reduce", "gemm", "nccl copy", "sm90_x"],
        }
    )
    kinds = frame.select(comm_kind(pl.col("kind"), pl.col("name"))).to_series()
    assert kinds.to_list() == ["comm", "comm", "kernel", "memcpy", "kernel"]
    assert kinds.dtype == pl.String


def test_microseconds_and_nanoseconds_both_ways() -> None:
    """1.376 µs is 1376 ns and back (the float nearest 1376 / 1000); an epoch timestamp keeps
    its ns; a null stays null and the column keeps its name."""
    frame = pl.DataFrame({"us": [1.376, 1_700_000_000_000.125, None]})
    ns = frame.select(ns_of_us(pl.col("us"))).to_series()
    assert ns.to_list() == [1376, 1_700_000_000_000_125, None]
    back = pl.DataFrame({"t": [1376, 0, None]}).select(us_of_ns(pl.col("t"))).to_series()
    assert back.name == "t" and back.dtype == pl.Float64
    assert back.to_list() == [1.376, 0.0, None]


def test_as_gpu_events_types_and_orders_the_columns() -> None:
    frame = as_gpu_events(
        pl.DataFrame({"extra": [1], "name": ["k"], "kind": ["kernel"], "start_ns": [0],
                      "end_ns": [5]})
    )  # fmt: skip
    assert frame.columns == [*GPU_EVENT_SCHEMA, "extra"]
    assert frame.schema["device"] == pl.Int64 and frame["device"].to_list() == [None]


def _events(*rows: tuple[int | None, int, int, int | None]) -> pl.DataFrame:
    """(device, start, end, launch start) per event."""
    return as_gpu_events(
        pl.DataFrame(
            {
                "device": [r[0] for r in rows],
                "kind": ["kernel"] * len(rows),
                "name": [f"k{i}" for i in range(len(rows))],
                "start_ns": [r[1] for r in rows],
                "end_ns": [r[2] for r in rows],
                "launch_start_ns": [r[3] for r in rows],
            },
            schema_overrides={"device": pl.Int64},
        )
    )


def _steps(*rows: tuple[int | None, int, int, int, str]) -> pl.DataFrame:
    """(device, step, start, end, source) per step row."""
    return pl.DataFrame([dict(zip(STEP_SCHEMA, r, strict=True)) for r in rows], schema=STEP_SCHEMA)


def _windows(frame: pl.DataFrame) -> list[tuple[object, ...]]:
    assert frame.schema == pl.Schema(STEP_SCHEMA)
    return [tuple(r) for r in frame.iter_rows()]


def test_a_cpu_step_alone_takes_the_events_launched_inside_it_per_device() -> None:
    """Launched at the step's start: in; at its end: out. One window per device, in the order
    the devices first appear."""
    events = _events(
        (1, 150, 160, 100),  # launched at the start
        (0, 120, 130, 110),
        (1, 300, 400, 199),
        (0, 500, 600, 200),  # launched at the end: the next step's
    )
    steps = _steps((None, 7, 100, 200, "cpu_step"))
    assert _windows(step_windows(events, steps)) == [
        (1, 7, 150, 400, "cpu_step"),
        (0, 7, 120, 130, "cpu_step"),
    ]


def test_an_annotation_that_covers_every_launched_event_is_the_window() -> None:
    """An event that only touches the annotation (ends at its start, starts at its end)
    counts as covered."""
    events = _events((0, 90, 100, 10), (0, 300, 310, 20))
    steps = _steps(
        (0, 1, 100, 300, "gpu_annotation"),
        (None, 1, 0, 50, "cpu_step"),
    )
    assert _windows(step_windows(events, steps)) == [(0, 1, 100, 300, "gpu_annotation")]


def test_an_annotation_covering_fewer_events_gives_way_on_its_device_only() -> None:
    """Device 0's annotation misses an event its step launched: launch attribution there;
    device 1's covers its events and stays."""
    events = _events((0, 100, 110, 10), (0, 400, 410, 20), (1, 100, 150, 30))
    steps = _steps(
        (0, 1, 90, 200, "gpu_annotation"),
        (1, 1, 90, 200, "gpu_annotation"),
        (None, 1, 0, 50, "cpu_step"),
    )
    assert _windows(step_windows(events, steps)) == [
        (1, 1, 90, 200, "gpu_annotation"),
        (0, 1, 100, 410, "launch_attribution"),
    ]


def test_an_annotation_without_a_device_reads_every_device_even_an_unnamed_one() -> None:
    events = _events((None, 100, 110, 10), (2, 400, 410, 20))
    steps = _steps((None, 3, 90, 200, "gpu_annotation"), (None, 3, 0, 50, "cpu_step"))
    assert _windows(step_windows(events, steps)) == [
        (None, 3, 100, 110, "launch_attribution"),
        (2, 3, 400, 410, "launch_attribution"),
    ]


@pytest.mark.parametrize("step", [1, 2])
def test_an_annotation_of_another_step_is_not_this_ones(step: int) -> None:
    events = _events((0, 100, 110, 10), (0, 400, 410, 20))
    steps = _steps((0, step, 90, 200, "gpu_annotation"), (None, 1, 0, 50, "cpu_step"))
    found = _windows(step_windows(events, steps))
    if step == 1:
        assert found == [(0, 1, 100, 410, "launch_attribution")]
    else:
        assert found == [(0, 2, 90, 200, "gpu_annotation"), (0, 1, 100, 410, "cpu_step")]


def test_every_cpu_step_gets_its_windows_and_an_event_before_the_annotation_is_missed() -> None:
    """Step 1 has no annotation (its CPU step's launches); step 2's annotation begins after
    an event its step launched has ended, so it does not cover it and gives way."""
    events = _events((0, 100, 110, 10), (0, 200, 210, 60), (0, 300, 310, 70))
    steps = _steps(
        (0, 2, 250, 400, "gpu_annotation"),
        (None, 1, 0, 50, "cpu_step"),
        (None, 2, 50, 100, "cpu_step"),
    )
    assert _windows(step_windows(events, steps)) == [
        (0, 1, 100, 110, "cpu_step"),
        (0, 2, 200, 310, "launch_attribution"),
    ]


def test_two_annotations_of_one_step_that_give_way_keep_their_order() -> None:
    """Step 1's annotations name device 1, then device 0; the step's events appear on device
    0 first. Both miss an event, so each gives way to its device's launch window, in the
    annotations' order (device 1's, then device 0's), not the devices' first events'."""
    events = _events((0, 100, 110, 10), (1, 120, 130, 11), (0, 400, 410, 12), (1, 500, 510, 13))
    steps = _steps(
        (1, 1, 90, 200, "gpu_annotation"),
        (0, 1, 90, 200, "gpu_annotation"),
        (None, 1, 0, 50, "cpu_step"),
    )
    assert _windows(step_windows(events, steps)) == [
        (1, 1, 120, 510, "launch_attribution"),
        (0, 1, 100, 410, "launch_attribution"),
    ]


def _reference_windows(events: pl.DataFrame, steps: pl.DataFrame) -> list[tuple[object, ...]]:
    """The step windows by the rule as the docstring states it, step by step over plain rows:
    each CPU step's events by their launch, each of its annotations tested against them."""
    rows = events.select("device", "start_ns", "end_ns", "launch_start_ns").rows()
    annotations = [r for r in steps.rows(named=True) if r["source"] == "gpu_annotation"]
    dropped: set[int] = set()
    derived: list[tuple[object, ...]] = []
    for cpu in (r for r in steps.rows(named=True) if r["source"] == "cpu_step"):
        mine = [r for r in rows if r[3] is not None and cpu["start_ns"] <= r[3] < cpu["end_ns"]]
        windows: dict[object, tuple[int, int]] = {}  # insertion order: first appearance
        for device, start, end, _ in mine:
            low, high = windows.get(device, (start, end))
            windows[device] = (min(low, start), max(high, end))
        own = [i for i, a in enumerate(annotations) if a["step"] == cpu["step"]]
        if not own:
            derived += [(d, cpu["step"], s, e, "cpu_step") for d, (s, e) in windows.items()]
        for i in own:
            a = annotations[i]
            on = [r for r in mine if a["device"] is None or r[0] == a["device"]]
            covered = [r for r in on if r[1] <= a["end_ns"] and r[2] >= a["start_ns"]]
            if len(covered) < len(on):
                dropped.add(i)
                devices = {r[0] for r in on}
                derived += [
                    (d, cpu["step"], s, e, "launch_attribution")
                    for d, (s, e) in windows.items()
                    if d in devices
                ]
    kept = [
        (a["device"], a["step"], a["start_ns"], a["end_ns"], a["source"])
        for i, a in enumerate(annotations)
        if i not in dropped
    ]
    return kept + derived


_SMALL = st.integers(0, 8)
"""Small: launches and ends often fall on a boundary."""


@given(
    events=st.lists(
        st.tuples(st.sampled_from([None, 0, 1, 2]), _SMALL, _SMALL, st.none() | _SMALL),
        max_size=25,
    ),
    steps=st.lists(
        st.tuples(
            st.sampled_from([None, 0, 1]),
            st.integers(0, 1),
            _SMALL,
            _SMALL,
            st.sampled_from(["cpu_step", "gpu_annotation"]),
        ),
        max_size=8,
    ),
)
def test_the_windows_follow_the_rule_step_by_step(
    events: list[tuple[int | None, int, int, int | None]],
    steps: list[tuple[int | None, int, int, int, str]],
) -> None:
    """Random events and steps (overlapping steps, null devices and launches, several
    annotations of one step, events launched in no step) against the rule applied one step
    and one event at a time."""
    frame = _events(*[(d, s, s + e, launch) for d, s, e, launch in events])
    table = _steps(*[(d, n, s, s + length, src) for d, n, s, length, src in steps])
    assert _windows(step_windows(frame, table)) == _reference_windows(frame, table)
