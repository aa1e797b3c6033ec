"""The host frame and the step windows of a Kineto trace, made from the Kineto event frame's
columns (``kineto_host.host_frame``, ``kineto.step_rows``, ``kineto_host.cpu_step_windows``),
against the events read one by one with the plain ``json`` module
(``tests/kineto_reference.py``): on hypothesis-random traces (times at the edge of the ns
clock, every kind of ``pid``, step names that almost match), read by the compiled decoder and
by msgspec, and on every real trace in ``fixtures/``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from tests import kineto_reference
from tileprof.core.errors import InputError
from tileprof.inputs._common import read_bytes
from tileprof.inputs.gpu.kineto import _read_with_msgspec, read_events, step_rows
from tileprof.inputs.gpu.kineto_host import HOST_SCHEMA, cpu_step_windows, host_frame

ROOT = Path(__file__).resolve().parent.parent
REAL = sorted(
    [*(ROOT / "fixtures").glob("*/*.json.gz"), *(ROOT / "fixtures").glob("*/*.json")],
    key=lambda p: str(p),
)
REAL = [p for p in REAL if b'"traceEvents"' in read_bytes(p)[:200_000]]


def assert_read_as_the_reference(data: bytes, read: Any) -> bool:
    """``read``'s host frame, steps and CPU step windows are the reference's; False when the
    trace is bad (both readers word the error: ``test_kineto_native``)."""
    try:
        events = read("t.json", data)
    except InputError:
        return False
    found = kineto_reference.read(data)
    host = host_frame(events)
    assert host.schema == HOST_SCHEMA
    assert host.equals(kineto_reference.host_rows(found)), (host, found)
    assert step_rows(events.frame) == found.steps
    windows = [(n, round(lo * 1000), round(hi * 1000)) for _, n, lo, hi, source in found.steps
               if source == "cpu_step"]  # fmt: skip
    assert cpu_step_windows(events) == windows
    return True


@pytest.mark.parametrize("path", REAL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_real_traces_host_frame_and_steps_are_the_references(path: Path) -> None:
    data = read_bytes(path)
    assert assert_read_as_the_reference(data, read_events)
    assert assert_read_as_the_reference(data, _read_with_msgspec)
    assert host_frame(read_events("t.json", data)).height > 0


def test_real_traces_are_there() -> None:
    names = {p.name for p in REAL}
    assert {"nccl_2xA100_rank0.json.gz", "h200_train_steps.json.gz"} <= names
    assert len(REAL) >= 10


_EDGE = [9.2e15, -9.2e15, 9.199999999e15, 9.1999999e15, -9.1999999e15, 1e16, -0.0, 1.0004999,
         2.0006, -1.0006]  # fmt: skip
"""Times at the edge of the ns clock (|µs| < 9.2e15), and some that round to whole ns."""
_time = st.one_of(
    st.none(),
    st.integers(-(10**6), 2 * 10**15),
    st.floats(-1e6, 2e15, allow_nan=False).map(lambda f: round(f, 3)),
    st.sampled_from(_EDGE),
    st.sampled_from(_EDGE),
)
_dur = st.one_of(
    st.none(),
    st.integers(0, 10**6),
    st.floats(0, 1e6).map(lambda f: round(f, 3)),
    st.sampled_from([0, 1e6, 1e9, 1e12]),
)
_step_name = st.sampled_from(
    ["ProfilerStep#3", "ProfilerStep#3", "ProfilerStep#12", "ProfilerStep#12", "ProfilerStep#",
     "ProfilerStep#3x", "ProfilerStep#3\n", "xProfilerStep#3", "ProfilerStep#\u0663",
     "ProfilerStep#007", "aten::mm", ""]
)  # fmt: skip
CATEGORIES = ["cpu_op", "cuda_runtime", "cuda_driver", "user_annotation", "gpu_user_annotation"]
CATEGORIES += ["python_function"]
_int64 = st.one_of(st.none(), st.integers(-5, 9))
_event = st.fixed_dictionaries(
    {
        "ph": st.sampled_from(["X", "X", "X", "X", "i"]),
        "cat": st.sampled_from(CATEGORIES),
        "name": st.one_of(st.none(), _step_name),
        "ts": _time,
        "dur": _dur,
        "args": st.fixed_dictionaries(
            {"correlation": _int64}, optional={"External id": _int64, "stream": _int64}
        ),
    },
    optional={
        "pid": st.one_of(st.integers(-5, 2**64), st.text(max_size=3), st.none(), st.booleans()),
        "tid": st.one_of(st.integers(-5, 9), st.text(max_size=3), st.none()),
    },
)
_kernel = st.fixed_dictionaries(
    {"ph": st.just("X"), "cat": st.just("kernel"), "name": st.just("k"), "ts": st.integers(0, 9),
     "dur": st.integers(0, 9), "args": st.fixed_dictionaries({"correlation": _int64})}
)  # fmt: skip
"""A GPU event the readers take (a bad one is an error: ``test_kineto_native``)."""


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(st.one_of(_event, _event, _event, _kernel), max_size=14))
def test_random_traces_host_frame_and_steps_are_the_references(events: list[Any]) -> None:
    data = json.dumps({"traceEvents": events}, indent=1).encode()
    fast = assert_read_as_the_reference(data, read_events)
    slow = assert_read_as_the_reference(data, _read_with_msgspec)
    assert fast == slow
    event(f"read: {fast}")


def _at(cat: str, ts: float, dur: float | None, name: str = "ProfilerStep#1") -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": dur, "pid": 0, "tid": 1,
            "args": {"correlation": 4}}  # fmt: skip


EDGES = [
    # a start on the clock and an end past it; an end at 9.2e15 exactly; both just inside
    *(_at(cat, 9.1999999e15, 1e9) for cat in ("cuda_runtime", "user_annotation")),
    *(_at(cat, 9.199999999e15, 1e6) for cat in ("cuda_driver", "gpu_user_annotation")),
    *(_at(cat, -9.1999999e15, 1e6) for cat in ("cuda_runtime", "user_annotation")),
    # no dur: a runtime call lasts 0, a step is left out
    *(_at(cat, 5.0, None) for cat in ("cuda_runtime", "user_annotation")),
    # whole ns rounded: 2000.6 -> 2001, -1000.6 -> -1001
    _at("user_annotation", 2.0006, 1.0, "ProfilerStep#2"),
    _at("user_annotation", -1.0006, 1.0, "ProfilerStep#3"),
]  # fmt: skip


@pytest.mark.parametrize("read", [read_events, _read_with_msgspec])
def test_times_at_the_edge_of_the_clock(read: Any) -> None:
    data = json.dumps({"traceEvents": EDGES}).encode()
    assert assert_read_as_the_reference(data, read)
    events = read("t.json", data)
    assert host_frame(events).select("index", "start_ns", "end_ns").rows() == [
        (4, -9199999900000000000, -9199999899000000000),
        (6, 5000, 5000),
    ]
    far = -9.1999999e15  # µs: ns beyond a float's 53 bits, rounded as Python rounds
    assert cpu_step_windows(events) == [
        (1, round(far * 1000), round((far + 1e6) * 1000)),
        (2, 2001, 3001),
        (3, -1001, -1),
    ]
    assert [step[0] for step in step_rows(events.frame)] == [None, None, None]


@pytest.mark.parametrize("ts", [1e300, 1e16, 9.2e15, -9.2e15])
def test_a_cpu_op_off_the_clock_is_left_out_of_the_graph(tmp_path: Path, ts: float) -> None:
    """A CPU op whose start or end has no place on the ns clock is left out of the host frame,
    as a runtime call is; ``critical`` reads the rest (it raised a polars error at 1e300 and
    wrapped round silently at 1e16)."""
    from click.testing import CliRunner

    from tileprof.commands.cli import cli

    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": ts, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 1, "dur": 5, "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cpu_op", "name": "late", "ts": 9.1999e15, "dur": 1e12, "pid": 1},
        {"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0, "dur": 100,
         "pid": 1, "tid": 1},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 2, "dur": 1,
         "pid": 1, "tid": 1, "args": {"correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "k", "ts": 10, "dur": 5, "pid": 0, "tid": 7,
         "args": {"device": 0, "stream": 7, "correlation": 5}},
    ]  # fmt: skip
    data = json.dumps({"traceEvents": events}).encode()
    for read in (read_events, _read_with_msgspec):
        assert assert_read_as_the_reference(data, read)
        host = host_frame(read("t.json", data))
        assert host.get_column("index").to_list() == [1, 4]
    trace = tmp_path / "t.json"
    trace.write_bytes(data)
    result = CliRunner().invoke(cli, ["critical", str(trace), "--format", "json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["traces"][0]["steps"]
