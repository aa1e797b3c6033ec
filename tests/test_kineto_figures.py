"""Per-kernel figures of PyTorch traces, stated independently of tileprof.

The hand-built trace is skewed on purpose (mean ≠ median, and ⌈p·n⌉ ≠ round(p·n)), so a
mean computed as a median, or a nearest rank that rounds, changes a figure. The real H200
trace's figures are recomputed here from the raw events with ``json``, ``gzip`` and
``statistics`` only, by the definition in docs/runs.md: nearest rank is the value at 1-based
rank ⌈p·n⌉ of the sorted durations.
"""

from __future__ import annotations

import gzip
import json
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from tileprof.inputs.sources import load_runs

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
H200 = TRACES / "h200_train_steps.json.gz"
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")

# Durations in µs, in launch order (not sorted, so sorting is needed).
SKEWED = {
    # n = 11, sorted 1..10, 50: mean 105/11, median 6; p50 rank ⌈5.5⌉ = 6 → 6;
    # p95 rank ⌈10.45⌉ = 11 → 50 (rounding would take rank 10 → 10).
    "skewed_11": [7.0, 1.0, 50.0, 3.0, 10.0, 2.0, 9.0, 4.0, 8.0, 5.0, 6.0],
    # n = 5, sorted 2 4 6 8 30: mean 10, median 6; p50 rank ⌈2.5⌉ = 3 → 6 (round-half-even
    # would take rank 2 → 4); p95 rank ⌈4.75⌉ = 5 → 30.
    "skewed_5": [30.0, 2.0, 8.0, 6.0, 4.0],
    # n = 18: p95 rank ⌈17.1⌉ = 18 → 40 (rounding would take rank 17 → 3).
    "skewed_18": [3.0] * 17 + [40.0],
}


def _trace(kernels: dict[str, list[float]]) -> dict[str, Any]:
    events = []
    ts = 0.0
    for name, durations in kernels.items():
        for dur in durations:
            args = {"device": 0, "stream": 7, "correlation": len(events)}
            events.append(
                {"ph": "X", "cat": "kernel", "name": name, "ts": ts, "dur": dur, "args": args}
            )
            ts += 100.0
    return {"traceEvents": events, "deviceProperties": [{"id": 0, "name": "NVIDIA H200"}]}


def _rows(path: Path) -> dict[str, dict[str, Any]]:
    return {r["kernel"]: r for r in load_runs(path).frame.iter_rows(named=True)}


def _figures(row: dict[str, Any]) -> tuple[Any, ...]:
    return (row["calls"], row["total_us"], row["time_us"], row["p50_us"], row["p95_us"])


def test_skewed_trace_by_hand(tmp_path: Path) -> None:
    path = tmp_path / "skewed.json"
    path.write_text(json.dumps(_trace(SKEWED)))
    rows = _rows(path)
    # (calls, total, mean, p50, p95) and max, written out from the comments above
    assert _figures(rows["skewed_11"]) == (11, 105.0, pytest.approx(105 / 11), 6.0, 50.0)
    assert _figures(rows["skewed_5"]) == (5, 50.0, 10.0, 6.0, 30.0)
    assert _figures(rows["skewed_18"]) == (18, 91.0, pytest.approx(91 / 18), 3.0, 40.0)
    assert [rows[k]["max_us"] for k in SKEWED] == [50.0, 30.0, 40.0]
    # ordered by total time, largest first
    assert list(rows) == ["skewed_11", "skewed_18", "skewed_5"]


def nearest_rank(durations: list[float], percent: int) -> float:
    """The value at 1-based rank ⌈percent·n/100⌉ of the sorted values (integer arithmetic)."""
    ordered = sorted(durations)
    rank = -(-percent * len(ordered) // 100)
    return ordered[rank - 1]


def _h200_durations() -> dict[str, list[float]]:
    with gzip.open(H200, "rt", encoding="utf-8") as fh:
        events = json.load(fh)["traceEvents"]
    durations: dict[str, list[float]] = defaultdict(list)
    for event in events:
        if event.get("ph") == "X" and event.get("cat") in GPU_CATEGORIES:
            assert event["args"]["device"] == 0  # one GPU: the kernel name is the key
            durations[event["name"]].append(event["dur"])
    return durations


def test_real_h200_trace_per_kernel_figures() -> None:
    durations = _h200_durations()
    rows = _rows(H200)
    assert set(rows) == set(durations)
    checked = 0
    for name, values in durations.items():
        row = rows[name]
        assert row["target"] == "NVIDIA H200"
        assert row["calls"] == len(values), name
        assert row["total_us"] == pytest.approx(sum(values), rel=1e-12, abs=1e-12), name
        assert row["time_us"] == pytest.approx(statistics.mean(values), rel=1e-12), name
        assert row["p50_us"] == nearest_rank(values, 50), name
        assert row["p95_us"] == nearest_rank(values, 95), name
        assert row["max_us"] == max(values), name
        checked += 1
    assert checked == len(durations) == 65
    # The trace can tell the definitions apart: for many kernels the mean is not the median,
    # and for at least one kernel ⌈0.95·n⌉ and round(0.95·n) pick different values.
    skewed = [n for n, v in durations.items() if statistics.mean(v) != statistics.median(v)]
    assert len(skewed) >= 10
    rounded = [n for n, v in durations.items() if sorted(v)[round(0.95 * len(v)) - 1] != max(v)]
    assert any(nearest_rank(durations[n], 95) == max(durations[n]) for n in rounded)


def test_real_h200_trace_pinned_figures() -> None:
    """Three kernels' figures written out, so a changed fixture or parser shows by name."""
    rows = _rows(H200)
    gemm = rows[
        "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma"
        "_aligna4_alignc4_execute_kernel__5x_cublas"
    ]
    # durations 16.256, 27.007, 15.296, 27.008: sorted 15.296 16.256 27.007 27.008, total
    # 85.567, mean 21.39175 (the median would be 21.6315), p50 rank 2, p95 rank ⌈3.8⌉ = 4
    assert (gemm["calls"], gemm["p50_us"], gemm["p95_us"], gemm["max_us"]) == (
        4,
        16.256,
        27.008,
        27.008,
    )
    assert gemm["total_us"] == pytest.approx(85.567, abs=1e-9)
    assert gemm["time_us"] == pytest.approx(21.39175, abs=1e-9)
    # 0.864 0.8 0.832 0.768 0.864 0.8 0.8 0.896: sorted .768 .8 .8 .8 .832 .864 .864 .896,
    # total 6.624, mean 0.828, p50 rank 4, p95 rank ⌈7.6⌉ = 8
    memset = rows["Memset (Device)"]
    assert (memset["calls"], memset["p50_us"], memset["p95_us"], memset["max_us"]) == (
        8,
        0.8,
        0.896,
        0.896,
    )
    assert memset["time_us"] == pytest.approx(0.828, abs=1e-9)


def _event(cat: str, name: str | None, ts: float | None, dur: float | None, **args: Any) -> Any:
    event: dict[str, Any] = {"ph": "X", "cat": cat, "ts": ts, "dur": dur, "args": args}
    if name is not None:
        event["name"] = name
    return {k: v for k, v in event.items() if v is not None}


def _load(tmp_path: Path, events: list[Any], devices: list[Any] | None = None) -> Any:
    document: dict[str, Any] = {"traceEvents": events}
    if devices is not None:
        document["deviceProperties"] = devices
    path = tmp_path / "t.json"
    path.write_text(json.dumps(document))
    return load_runs(path)


def test_launch_op_by_correlation_then_external_id(tmp_path: Path) -> None:
    ops = [
        _event("cpu_op", "aten::mm", 0, 5, **{"External id": 1, "Input type": ["c10::BFloat16"]}),
        _event("cpu_op", "aten::relu", 10, 5, **{"External id": 2, "Input type": ["float"]}),
        _event("cpu_op", "aten::copy_", 20, 5, **{"External id": 3, "Input type": ["float"]}),
        _event("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=70, **{"External id": 1}),
        _event("cuda_driver", "cuLaunchKernel", 11, 1, correlation=71, **{"External id": 2}),
    ]
    kernels = [
        # linked through its launch (correlation 70 → External id 1), not its own External id
        _event(
            "kernel",
            "my_custom_kernel",
            2,
            4,
            device=0,
            stream=7,
            correlation=70,
            grid=[2, 1, 1],
            block=[128, 1, 1],
            **{"External id": 9},
        ),
        # no launch with its correlation: its own External id names the op
        _event(
            "kernel",
            "other_kernel",
            12,
            2,
            device=0,
            stream=9,
            correlation=99,
            **{"External id": 2},
        ),
        _event(
            "gpu_memcpy",
            "Memcpy DtoD (Device -> Device)",
            21,
            1,
            device=0,
            stream=7,
            **{"External id": 3},
        ),
        _event("gpu_memset", "Memset (Device)", 30, 1, device=1, stream=7),
        _event("kernel", "no_device_kernel", 40, 1),
    ]
    parsed = _load(tmp_path, ops + kernels, [{"id": 0, "name": "NVIDIA H200"}])
    rows = {r["kernel"]: r for r in parsed.frame.iter_rows(named=True)}
    custom = rows["my_custom_kernel"]
    assert (custom["launch_op"], custom["op_family"], custom["dtype"]) == (
        "aten::mm",
        "gemm",
        "bf16",
    )
    assert (custom["target"], custom["source"]) == ("NVIDIA H200", "t.json: device 0")
    assert json.loads(custom["metadata"]) == {
        "category": "kernel",
        "streams": "7",
        "grid": "2x1x1",
        "block": "128x1x1",
    }
    other = rows["other_kernel"]
    assert (other["launch_op"], other["dtype"]) == ("aten::relu", "f32")
    copy = rows["Memcpy DtoD (Device -> Device)"]
    # a copy launched by aten::copy_ of floats moves bytes: no dtype
    assert (copy["launch_op"], copy["op_family"], copy["dtype"]) == ("aten::copy_", "copy", None)
    assert json.loads(copy["metadata"])["category"] == "gpu_memcpy"
    memset = rows["Memset (Device)"]
    # an unnamed device: target GPU (no model guessed), the device says which
    assert (memset["target"], memset["device"], memset["source"], memset["launch_op"]) == (
        "GPU",
        "GPU 1",
        "t.json: device 1",
        None,
    )
    nodev = rows["no_device_kernel"]
    assert (nodev["target"], nodev["device"], nodev["source"]) == ("GPU", None, "t.json")
    assert json.loads(nodev["metadata"]) == {
        "category": "kernel",
        "streams": "",  # no stream recorded
        "grid": None,
        "block": None,
    }
    assert parsed.metadata == {"devices": {0: "NVIDIA H200"}, "gpu_events": 5, "cpu_ops": 3}
    assert parsed.notes == []
    assert parsed.kind == "PyTorch trace"
    assert set(parsed.frame["per"]) == {"call"}  # figures per call


def test_cpu_only_trace_note(tmp_path: Path) -> None:
    ops = [_event("cpu_op", f"aten::op{i}", i, 1, **{"External id": i}) for i in range(3)]
    parsed = _load(tmp_path, [*ops, {"ph": "i", "cat": "kernel", "name": "instant"}])
    assert parsed.frame.height == 0
    assert parsed.notes == ["t.json: CPU-only trace (3 CPU ops, no GPU kernel events)"]
    assert parsed.metadata == {"cpu_ops": 3}
    assert parsed.kind == "PyTorch trace"


@pytest.mark.parametrize(
    ("event", "where", "message"),
    [
        (_event("kernel", "k", 0, -1.5), "$.traceEvents[1].dur", "negative duration -1.5 µs"),
        (_event("cpu_op", "op", 0, -2), "$.traceEvents[1].dur", "negative duration -2 µs"),
        (_event("kernel", "k", None, 3), "$.traceEvents[1].ts", "GPU event without it"),
        (_event("gpu_memset", "k", 4, None), "$.traceEvents[1].dur", "GPU event without it"),
        (_event("gpu_memcpy", None, 4, 1), "$.traceEvents[1].name", "GPU event without a name"),
        # ts placeable (9.1e15 < 9.2e15 µs), its end 9.3e15 not; ts - dur would be
        (
            _event("kernel", "k", 9.1e15, 2e14),
            "$.traceEvents[1]",
            "ts + dur is beyond 64-bit integer ns (±292 years)",
        ),
        (
            _event("kernel", "k", 4, 1, stream="7"),
            "$.traceEvents[1].args.stream",
            "expected a 64-bit integer, got '7'",
        ),
        (
            _event("kernel", "k", 4, 1, stream=2**63),  # one past Int64's largest
            "$.traceEvents[1].args.stream",
            "expected a 64-bit integer, got 9223372036854775808",
        ),
        (
            _event("kernel", "k", 4, 1, stream=-(2**63) - 1),  # one below Int64's smallest
            "$.traceEvents[1].args.stream",
            "expected a 64-bit integer, got -9223372036854775809",
        ),
    ],
)
def test_bad_events_are_named(tmp_path: Path, event: Any, where: str, message: str) -> None:
    from tileprof.core.errors import InputError

    with pytest.raises(InputError) as info:
        _load(tmp_path, [_event("kernel", "fine", 0, 1), event])
    assert (info.value.path, info.value.where, info.value.message) == (
        str(tmp_path / "t.json"),
        where,
        message,
    )


def test_nan_duration_is_refused(tmp_path: Path) -> None:
    from tileprof.core.errors import InputError

    path = tmp_path / "t.json"
    path.write_text(
        '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 0, "dur": NaN}]}'
    )
    # NaN is not JSON: the decoder refuses it where it stands
    with pytest.raises(InputError) as info:
        load_runs(path)
    assert (info.value.path, info.value.where) == (str(path), "line 1, column 76")


def test_streams_and_ties(tmp_path: Path) -> None:
    events = [
        _event("kernel", "b_kernel", 0, 3, device=0, stream=9),
        _event("kernel", "b_kernel", 5, 3, device=0, stream=7),
        _event("kernel", "b_kernel", 9, 2, device=0, stream=9),
        _event("kernel", "a_kernel", 20, 8, device=0, stream=7),
        _event("kernel", "c_kernel", 30, 9, device=0, stream=7),
    ]
    frame = _load(tmp_path, events).frame
    # total 9 first; then a tie at 8 µs broken by name, ascending
    assert frame["kernel"].to_list() == ["c_kernel", "a_kernel", "b_kernel"]
    b = frame.row(2, named=True)
    assert json.loads(b["metadata"])["streams"] == "7,9"  # every stream, sorted
    assert (b["calls"], b["total_us"], b["p50_us"], b["max_us"]) == (3, 8.0, 3.0, 3.0)


@pytest.mark.parametrize(
    ("document", "where"),
    [
        ('{"traceEvents": [{"ph": "X", "cat": "kernel", "dur": "5"}]}', "$.traceEvents[0].dur"),
        ('{"traceEvents": [{"args": {"device": "0"}}]}', "$.traceEvents[0].args.device"),
        (
            '{"traceEvents": [], "deviceProperties": [{"id": "0", "name": "x"}]}',
            "$.deviceProperties[0].id",
        ),
        ('{"traceEvents": {}}', "$.traceEvents"),
        (
            '{"traceEvents": [], "distributedInfo": {"rank": "x", "world_size": 2}}',
            "$.distributedInfo.rank",
        ),
        (
            '{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1}],'
            ' "distributedInfo": {"rank": 0, "world_size": "2"}}',
            "$.distributedInfo.world_size",
        ),
    ],
)
def test_wrong_types_name_file_and_path(tmp_path: Path, document: str, where: str) -> None:
    from tileprof.core.errors import InputError

    path = tmp_path / "t.json"
    path.write_text(document)
    with pytest.raises(InputError) as info:
        load_runs(path)
    assert (info.value.path, info.value.where) == (str(path), where)


def test_zero_duration_kernel_is_valid_and_errors_name_the_file(tmp_path: Path) -> None:
    from tileprof.core.errors import InputError

    frame = _load(tmp_path, [_event("kernel", "instant", 0, 0, device=0)]).frame
    assert (frame["calls"].item(), frame["total_us"].item()) == (1, 0.0)
    with pytest.raises(InputError) as info:
        _load(tmp_path, [_event("kernel", "k", 0, -1)])
    assert info.value.path == str(tmp_path / "t.json")


def test_launch_ops_by_calls_then_name() -> None:
    from collections import Counter

    from tileprof.inputs.gpu.kineto import _launch_ops

    # one op: its name; several: each with its calls, most calls first, ties by name
    assert _launch_ops(Counter()) is None
    assert _launch_ops(Counter({"aten::mm": 4})) == "aten::mm"
    assert _launch_ops(Counter({"aten::mm": 2, "aten::mean": 3})) == "aten::mean ×3; aten::mm ×2"
    three = Counter({"aten::add": 1, "aten::mm": 3, "aten::bmm": 3})
    assert _launch_ops(three) == "aten::bmm ×3; aten::mm ×3; aten::add ×1"


def test_launch_through_correlation_then_own_external_id(tmp_path: Path) -> None:
    import polars as pl

    from tileprof.core.kineto import launch_external_ids
    from tileprof.inputs.gpu.kineto import gpu_events_of, read_events

    # correlation 7's launch names External id 5 (a cpu_op) or 99 (none): 99 falls back to the
    # kernel's own External id 2; no correlation: the kernel's own id
    events = [
        _event("cpu_op", "aten::mm", 0, 9, **{"External id": 5}),
        _event("cpu_op", "aten::add", 0, 9, **{"External id": 2}),
        _event("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=7, **{"External id": 5}),
        _event("cuda_runtime", "cudaLaunchKernel", 2, 1, correlation=8, **{"External id": 99}),
        _event("kernel", "k7", 3, 1, correlation=7, **{"External id": 2}),
        _event("kernel", "k8", 4, 1, correlation=8, **{"External id": 2}),
        _event("kernel", "k_own", 5, 1, **{"External id": 2}),
    ]
    found = read_events(tmp_path / "t.json", json.dumps({"traceEvents": events}).encode())
    known = pl.DataFrame({"ext": [2, 5]})
    assert launch_external_ids(found.frame, known).rows() == [(7, 5)]
    gpu = gpu_events_of(found).events
    assert gpu.select(pl.col("name").cast(pl.String), "op").rows() == [
        ("k7", "aten::mm"),
        ("k8", "aten::add"),
        ("k_own", "aten::add"),
    ]


def test_events_read_and_put_in_launch_order(tmp_path: Path) -> None:
    """``read_events`` keeps each cpu_op's fields as written (missing name, ts, dur: "", 0, 0)
    and only launches with both ids; ``gpu_events_of`` orders GPU events by ts, ties by their
    place in the file, each with its launching op, in the stated column types."""
    import polars as pl

    from tileprof.core.gpu_events import GPU_EVENT_SCHEMA
    from tileprof.core.kineto import launch_external_ids
    from tileprof.inputs.gpu.kineto import gpu_events_of, read_events
    from tileprof.inputs.gpu.kineto_host import host_frame

    mm_args = {
        "External id": 1,
        "Input type": ["float", "float"],
        "Input Dims": [[2, 3], [3, 4]],
        "Concrete Inputs": ["", ""],
        "flops": 48,
    }
    events = [
        {**_event("cpu_op", "aten::mm", 1.5, 4, **mm_args), "pid": 3, "tid": 8},
        {"ph": "X", "cat": "cpu_op", "pid": "p", "tid": 2},
        _event("cuda_runtime", "cudaLaunchKernel", 1, 1, correlation=70, **{"External id": 1}),
        _event("cuda_runtime", "cudaLaunchKernel", 2, 1, correlation=72),
        _event(
            "kernel",
            "k_late",
            5.0,
            2,
            device=0,
            stream=7,
            correlation=70,
            grid=[1, 2, 3],
            block=[4],
        ),
        _event("kernel", "k_zero", 0.0, 1, device=0, correlation=71),
        _event("kernel", "k_tie", 5.0, 3, device=1),
        _event("kernel", "k_half", 0.5, 1),
    ]
    data = json.dumps({"traceEvents": events}).encode()
    found = read_events(tmp_path / "t.json", data)
    assert found.name == "t.json"
    ops = found.frame.filter(pl.col("cat") == "cpu_op").select(
        "index", "name", "thread", "ts", "dur", "external_id", "input_type", "flops"
    )
    assert ops.rows() == [
        (0, "aten::mm", "3/8", 1.5, 4.0, 1, '["float", "float"]', "48"),
        (1, None, "p/2", None, None, None, None, None),
    ]
    # the host frame: a missing name, ts or dur as "", 0, 0; runtime calls in file order
    assert host_frame(found).rows() == [
        (0, "op", "aten::mm", "3/8", 1500, 5500, None),
        (1, "op", "", "p/2", 0, 0, None),
        (2, "runtime", "cudaLaunchKernel", "None/None", 1000, 2000, 70),
        (3, "runtime", "cudaLaunchKernel", "None/None", 2000, 3000, 72),
    ]
    known = pl.DataFrame({"ext": [1]})
    # correlation 72's launch names no op
    assert launch_external_ids(found.frame, known).rows() == [(70, 1)]
    gpu = gpu_events_of(found)
    assert (gpu.devices, gpu.cpu_ops) == ({}, 2)
    columns = ["device", "name", "cat", "start_ns", "end_ns", "stream", "grid", "block", "op",
               "op_types", "correlation"]  # fmt: skip
    assert gpu.events.select(columns).rows() == [
        (0, "k_zero", "kernel", 0, 1000, None, None, None, None, None, 71),
        (None, "k_half", "kernel", 500, 1500, None, None, None, None, None, None),
        (0, "k_late", "kernel", 5000, 7000, 7, "1x2x3", "4", "aten::mm", '["float", "float"]', 70),
        (1, "k_tie", "kernel", 5000, 8000, None, None, None, None, None, None),
    ]
    # the GPU event frame's columns (core.gpu_events), then the Kineto ones
    kineto = ["index", "cat", "grid", "block", "op", "op_types"]
    assert gpu.events.columns == [*GPU_EVENT_SCHEMA, *kineto]
    types = [pl.Int64, pl.Categorical, *[pl.String] * 4]
    assert gpu.events.dtypes == [*GPU_EVENT_SCHEMA.values(), *types]


def test_two_launching_ops_are_listed_in_metadata(tmp_path: Path) -> None:
    ops = [
        _event("cpu_op", "aten::mm", 0, 5, **{"External id": 1}),
        _event("cpu_op", "aten::bmm", 10, 5, **{"External id": 2}),
    ]
    kernels = [
        _event("kernel", "gemm_kernel", 1, 2, device=0, **{"External id": 1}),
        _event("kernel", "gemm_kernel", 2, 2, device=0, **{"External id": 2}),
        _event("kernel", "gemm_kernel", 3, 2, device=0, **{"External id": 2}),
    ]
    row = _load(tmp_path, ops + kernels).frame.row(0, named=True)
    assert row["launch_op"] == "aten::bmm ×2; aten::mm ×1"
    assert json.loads(row["metadata"])["launch_ops"] == {"aten::bmm": 2, "aten::mm": 1}


def test_all_casts_by_hand() -> None:
    """A copy is a cast when every launch is a copy op whose first two tensor types (empty
    entries and "Scalar" skipped) are known and differ."""
    from collections import Counter

    from tileprof.inputs.gpu.kineto import _all_casts

    def casts(op: str, types: list[str]) -> bool:
        return _all_casts(Counter({(op, json.dumps(types)): 1}))

    assert not _all_casts(Counter())  # nothing launched it
    assert casts("aten::copy_", ["float", "c10::BFloat16", "Scalar"])
    assert not casts("aten::copy_", ["float", "float"])
    assert not casts("aten::mm", ["c10::BFloat16", "float"])  # not a copy op
    assert casts("aten::copy_", ["", "c10::BFloat16", "float"])  # empty entry skipped
    assert casts("aten::copy_", ["Scalar", "c10::BFloat16", "float"])  # Scalar skipped
    assert not casts("aten::copy_", ["weird", "float"])  # destination type unknown
    # only the first two tensors count: float into an unknown type is a cast
    assert casts("aten::copy_", ["float", "weird", "float"])
    mixed = Counter({("aten::copy_", '["float", "c10::Half"]'): 2, (None, None): 1})
    assert not _all_casts(mixed)  # one launch without an op


def test_read_events_names_the_file_of_a_malformed_trace(tmp_path: Path) -> None:
    from tileprof.core.errors import InputError
    from tileprof.inputs.gpu.kineto import read_events

    path = tmp_path / "t.json"
    with pytest.raises(InputError) as info:
        read_events(path, b'{"traceEvents": [1')
    assert info.value.path == str(path)
    with pytest.raises(InputError) as info:
        read_events(path, b'{"deviceProperties": []}')  # no traceEvents
    assert info.value.path == str(path)


def test_text_order_ranks_each_row_by_its_text_in_code_point_order() -> None:
    """``text_order``: a sort key of a Categorical column without making text of its rows,
    each row's place among the distinct texts in code-point order ("B" < "a" < "b" < "é"),
    whatever order the dictionary met them in; null stays null."""
    import polars as pl

    from tileprof.core.kineto import text_order

    thread = pl.Series("thread", ["b", "a", None, "é", "B", "a"], dtype=pl.Categorical)
    frame = pl.DataFrame([thread, pl.Series("n", range(6))])
    key = frame.select(text_order(frame["thread"])).to_series()
    assert key.name == "thread" and key.dtype == pl.UInt32
    assert key.to_list() == [2, 1, None, 3, 0, 1]
    ordered = frame.sort(text_order(frame["thread"]), nulls_last=True)["n"].to_list()
    assert ordered == [4, 1, 5, 0, 3, 2]
