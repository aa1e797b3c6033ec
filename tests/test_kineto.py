"""PyTorch profiler traces: a hand-built trace with hand-computed aggregates, a real CUDA trace
recorded on an H200, and a real CPU trace recorded here."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tileprof.inputs.gpu.kineto import _read_with_msgspec, aggregate, read_events
from tileprof.inputs.sources import load_runs

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
GEMM = "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_stages_32x3_nn"


def test_small_trace_aggregates_by_hand() -> None:
    parsed = load_runs(TRACES / "kineto_small.json")
    rows = {(r["target"], r["kernel"]): r for r in parsed.frame.iter_rows(named=True)}
    assert parsed.frame.height == 5
    g = rows[("NVIDIA A100-SXM4-80GB", GEMM)]
    # durations 10, 30, 20, 40 µs: sorted 10 20 30 40; p50 = rank ⌈0.5·4⌉ = 2 → 20,
    # p95 = rank ⌈0.95·4⌉ = 4 → 40
    assert (g["calls"], g["total_us"], g["time_us"], g["p50_us"], g["p95_us"], g["max_us"]) == (
        4,
        100.0,
        25.0,
        20.0,
        40.0,
        40.0,
    )
    assert g["launch_op"] == "aten::mm"
    assert (g["op_family"], g["dtype"]) == ("gemm", "f16")
    meta = json.loads(g["metadata"])
    assert (meta["grid"], meta["block"], meta["streams"]) == ("4x2x1", "256x1x1", "7")
    # device 1 is not in deviceProperties: no model is guessed (target GPU), the device says
    # which it is
    assert rows[("GPU", GEMM)]["total_us"] == 8.0 and rows[("GPU", GEMM)]["device"] == "GPU 1"
    soft = next(r for (t, k), r in rows.items() if "SoftMax" in k)
    assert (soft["calls"], soft["time_us"], soft["launch_op"]) == (1, 5.0, "aten::_softmax")
    assert (soft["op_family"], soft["dtype"]) == ("softmax", "f32")
    memcpy = rows[("NVIDIA A100-SXM4-80GB", "Memcpy HtoD (Pageable -> Device)")]
    assert (memcpy["op_family"], memcpy["dtype"], memcpy["launch_op"]) == (
        "copy",
        None,
        "aten::copy_",
    )
    memset = rows[("NVIDIA A100-SXM4-80GB", "Memset (Device)")]
    assert (memset["op_family"], memset["launch_op"]) == ("fill", None)
    assert parsed.frame["total_us"].to_list() == [100.0, 8.0, 5.0, 2.5, 1.0]
    assert parsed.notes == []


def test_aggregate_nearest_rank_percentiles() -> None:
    durs = [float(d) for d in range(1, 21)]  # 1..20: p50 rank 10 → 10, p95 rank 19 → 19
    events = pl.DataFrame(
        {
            "device": [0] * 20,
            "name": ["k"] * 20,
            "cat": ["kernel"] * 20,
            "start_ns": [int(d) * 1000 for d in durs],
            "end_ns": [int(a + b) * 1000 for a, b in zip(durs, durs[::-1], strict=True)],
            "stream": [7] * 20,
            "grid": [None] * 20,
            "block": [None] * 20,
            "op": [None] * 20,
            "op_types": [None] * 20,
        },
        schema_overrides={
            "name": pl.Categorical,
            "cat": pl.Categorical,
            "grid": pl.String,
            "block": pl.String,
            "op": pl.String,
            "op_types": pl.String,
        },
    )
    row = aggregate(events).row(0, named=True)
    assert (row["p50_us"], row["p95_us"], row["max_us"], row["mean_us"]) == (10.0, 19.0, 20.0, 10.5)


def test_real_h200_training_trace() -> None:
    parsed = load_runs(TRACES / "h200_train_steps.json.gz")
    frame = parsed.frame
    assert parsed.metadata["devices"] == {0: "NVIDIA H200"}
    assert set(frame["target"].to_list()) == {"NVIDIA H200"}
    # 205 GPU events (kernels, memcpys and memsets) in 65 (device, name) rows: the counts of
    # h200_train_steps.kernels.txt, written on the device from the same events, add up to 205
    assert frame["calls"].sum() == parsed.metadata["gpu_events"] == 205
    assert frame.height == 65
    # every GPU event of the trace is counted once
    with gzip.open(TRACES / "h200_train_steps.json.gz", "rt") as fh:
        events = json.load(fh)["traceEvents"]
    gpu = [
        e
        for e in events
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    ]
    assert frame["calls"].sum() == len(gpu)
    assert frame["total_us"].sum() == pytest.approx(sum(e["dur"] for e in gpu))
    families = set(frame["op_family"].to_list())
    assert {"gemm", "softmax", "attention", "reduce", "elementwise"} <= families
    gemm_dtypes = set(frame.filter(pl.col("op_family") == "gemm")["dtype"].to_list())
    assert {"f32", "f16", "bf16"} <= gemm_dtypes
    gemm_ops = set(frame.filter(pl.col("op_family") == "gemm")["launch_op"].to_list())
    assert gemm_ops == {"aten::addmm", "aten::mm"}  # every GEMM kernel traced to its op
    # the kernel list next to the trace was written on the device from the same events
    lines = (TRACES / "h200_train_steps.kernels.txt").read_text().splitlines()
    listed = {line.split("\t", 1)[1]: int(line.split("\t", 1)[0]) for line in lines}
    assert dict(zip(frame["kernel"], frame["calls"], strict=True)) == listed
    assert sum(listed.values()) == 205


def _assert_cpu_only_trace(path: Path) -> None:
    parsed = load_runs(path)
    assert parsed.kind == "PyTorch trace"
    assert parsed.frame.height == 0
    assert parsed.metadata["cpu_ops"] > 0
    assert len(parsed.notes) == 1 and "CPU-only trace" in parsed.notes[0]


def test_recorded_cpu_trace_from_torch_profiler() -> None:
    """A real torch.profiler CPU trace (fixtures/torch, tools/record_torch_references.py)."""
    _assert_cpu_only_trace(TRACES.parent / "torch" / "cpu_trace.json.gz")


def test_real_cpu_trace_from_torch_profiler(tmp_path: Path) -> None:
    torch = pytest.importorskip("torch")
    from tests.torch_model import record_cpu_softmax

    _assert_cpu_only_trace(record_cpu_softmax(tmp_path, torch))


def _h200_rows() -> dict[str, dict[str, object]]:
    frame = load_runs(TRACES / "h200_train_steps.json.gz").frame
    return {str(r["kernel"]): r for r in frame.iter_rows(named=True)}


def test_h200_copy_with_cast_from_bf16_or_f16_into_float_is_a_cast() -> None:
    """direct_copy_kernel_cuda with LoadWithCast/StoreWithCast is launched only by aten::copy_
    of a bf16 or f16 tensor into a float one (input types float ← c10::BFloat16 / c10::Half):
    a cast, decided from those types, although the name alone reads as a copy."""
    rows = _h200_rows()
    direct = [r for k, r in rows.items() if "direct_copy_kernel_cuda" in k and "WithCast" in k]
    assert len(direct) == 1
    assert (direct[0]["op_family"], direct[0]["launch_op"], direct[0]["calls"]) == (
        "cast",
        "aten::copy_",
        26,
    )


def test_h200_splitk_reduce_is_a_reduce() -> None:
    split = [r for k, r in _h200_rows().items() if "splitKreduce" in k]
    assert len(split) == 3
    assert {r["op_family"] for r in split} == {"reduce"}


def test_h200_kernel_launched_by_several_ops_lists_each_with_calls() -> None:
    memset = _h200_rows()["Memset (Device)"]
    # 3 by aten::_cudnn_attention_forward (2 bf16 + 1 f16 steps), 3 by aten::mean, 2 by aten::mm
    assert memset["launch_op"] == "aten::_cudnn_attention_forward ×3; aten::mean ×3; aten::mm ×2"
    meta = json.loads(str(memset["metadata"]))
    assert meta["launch_ops"] == {
        "aten::_cudnn_attention_forward": 3,
        "aten::mean": 3,
        "aten::mm": 2,
    }


@pytest.mark.parametrize("reader", [read_events, _read_with_msgspec])  # compiled, msgspec
def test_a_traces_rank_and_base_time_are_its_events_own(reader: Any) -> None:
    kernel = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2}
    kernel["args"] = {"device": 0, "stream": 7}
    info = {"rank": 1, "world_size": 2, "backend": "nccl"}
    ranked = {"distributedInfo": info, "baseTimeNanoseconds": 1_700_000_000_123_456_789}
    for extra, rank, base in (
        (ranked, (1, 2, "nccl"), 1_700_000_000_123_456_789),
        ({}, None, None),
    ):
        data = json.dumps({**extra, "traceEvents": [kernel]}, indent=1).encode()
        events = reader("t.json", data)
        assert (events.rank, events.base_time_ns) == (rank, base)
