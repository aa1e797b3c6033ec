"""The runtime calls of a Kineto event frame and the External ids that launched each
correlation (``core.kineto.runtime_calls``, ``launch_external_ids``, ``placeable``), on
hand-built frames: which calls have a place on the integer-ns clock, and which call of a
correlation names its launching op."""

from __future__ import annotations

from typing import Any

import polars as pl

from tileprof.core.kineto import (
    KINETO_SCHEMA,
    PLACEABLE_US,
    launch_external_ids,
    placeable,
    runtime_calls,
)


def _frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    filled = [{k: row.get(k) for k in KINETO_SCHEMA} for row in rows]
    return pl.DataFrame(filled, schema=KINETO_SCHEMA)


def test_a_time_is_placeable_when_finite_and_within_2_to_the_63_ns() -> None:
    times = [0.0, -1.5, PLACEABLE_US * 0.999, PLACEABLE_US, -PLACEABLE_US, 1e16]
    times += [float("inf"), float("nan")]
    got = pl.DataFrame({"us": times}).select(placeable(pl.col("us"))).to_series().to_list()
    assert got == [True, True, True, False, False, False, False, False]


def test_runtime_calls_keep_the_placeable_ones_in_file_order() -> None:
    rows = [
        {"index": 0, "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 10.0, "dur": 2.0},
        {"index": 1, "cat": "cpu_op", "name": "aten::mm", "ts": 11.0, "dur": 1.0},
        {"index": 2, "cat": "cuda_driver", "name": None, "ts": 12.0, "dur": None},
        {"index": 3, "cat": "cuda_runtime", "name": "no start", "ts": None, "dur": 1.0},
        {"index": 4, "cat": "cuda_runtime", "name": "far", "ts": 1e16, "dur": 1.0},
        {"index": 5, "cat": "cuda_runtime", "name": "ends far", "ts": 9.1e15, "dur": 2e14},
        {"index": 6, "cat": "cuda_runtime", "name": "last", "ts": 5.0, "dur": 1.0},
    ]
    calls = runtime_calls(_frame(rows)).select("index", "name", "ts", "dur").collect()
    assert calls.rows() == [
        (0, "cudaLaunchKernel", 10.0, 2.0),
        (2, "", 12.0, 0.0),  # a missing name as "", a missing dur as 0
        (6, "last", 5.0, 1.0),
    ]


def test_a_correlation_is_launched_by_its_last_call_with_a_known_external_id() -> None:
    rows = [
        {"cat": "cuda_runtime", "correlation": 1, "external_id": 10},
        {"cat": "cuda_runtime", "correlation": 1, "external_id": 11},  # the last call of 1
        {"cat": "cuda_runtime", "correlation": 2, "external_id": 20},
        {"cat": "cuda_runtime", "correlation": 2, "external_id": None},  # no id: not a launch
        {"cat": "cuda_driver", "correlation": 3, "external_id": 99},  # no such op
        {"cat": "cuda_runtime", "correlation": None, "external_id": 10},  # no correlation
        {"cat": "kernel", "correlation": 4, "external_id": 10},  # not a runtime call
    ]
    known = pl.DataFrame({"ext": [10, 11, 11, 20]})  # an op may be listed twice
    got = launch_external_ids(_frame(rows), known)
    assert got.columns == ["correlation", "launch_ext"]
    assert sorted(got.rows()) == [(1, 11), (2, 20)]
