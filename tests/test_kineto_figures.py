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

from tileprof.sources import load_runs

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
