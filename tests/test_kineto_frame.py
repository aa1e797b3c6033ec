"""The GPU event frame of a PyTorch trace (``inputs.gpu.kineto_frame``): each event's
launching call and a communication kernel's NCCL parameters, read from its own args or from
the ``record_param_comms`` op that launched it, each kept only when it has its type."""

from __future__ import annotations

import json
from typing import Any

import polars as pl
import pytest

from tileprof.core.gpu_events import GPU_EVENT_SCHEMA
from tileprof.core.kineto import Args
from tileprof.inputs.gpu.kineto import read_events
from tileprof.inputs.gpu.kineto_frame import _comm_params, _whole, event_frame


def _trace(kernel_args: dict[str, Any], op_args: dict[str, Any] | None = None) -> bytes:
    """One NCCL kernel on stream 7, launched by ``cudaLaunchKernel`` (correlation 1, External
    id 9), and, with ``op_args``, the ``record_param_comms`` op of External id 9."""
    events: list[dict[str, Any]] = [
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 10, "dur": 4, "args": {"correlation": 1, "External id": 9}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce_Sum_f32", "pid": 0,
         "tid": 7, "ts": 20, "dur": 30,
         "args": {"device": 0, "stream": 7, "correlation": 1, **kernel_args}},
    ]  # fmt: skip
    if op_args is not None:
        events.append(
            {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
             "ts": 9, "dur": 6, "args": {"External id": 9, **op_args}}
        )  # fmt: skip
    return json.dumps({"traceEvents": events}).encode()


def _row(kernel_args: dict[str, Any], op_args: dict[str, Any] | None = None) -> dict[str, Any]:
    frame = event_frame(read_events("t.json", _trace(kernel_args, op_args)))
    assert frame.height == 1
    return frame.row(0, named=True)


def test_an_event_carries_its_launching_call() -> None:
    row = _row({})
    assert row["launch_name"] == "cudaLaunchKernel"
    assert (row["launch_start_ns"], row["launch_end_ns"]) == (10_000, 14_000)
    assert (row["start_ns"], row["end_ns"], row["kind"]) == (20_000, 50_000, "comm")
    assert list(row) == [*GPU_EVENT_SCHEMA, "index"]  # the trace's ts and dur not kept


NCCL = {
    "Collective name": "allreduce",
    "Process Group Name": "0",
    "pg_id": 3,
    "Seq": 12,
    "In msg nelems": 1024,
    "Out msg nelems": "2048",
    "Group size": 8,
    "dtype": "Float",
}


def test_a_kernels_own_nccl_parameters() -> None:
    row = _row(NCCL)
    assert {k: row[k] for k in ("collective", "process_group", "seq", "in_nelems")} == {
        "collective": "allreduce",
        "process_group": "0",
        "seq": 12,
        "in_nelems": 1024,
    }
    assert (row["out_nelems"], row["group_size"], row["dtype"]) == (2048, 8, "Float")


def test_a_kernel_without_them_reads_its_record_param_comms_op() -> None:
    op = {**NCCL, "Process Group Name": None, "Collective name": "allgather"}
    row = _row({}, op)
    assert (row["collective"], row["process_group"], row["in_nelems"]) == ("allgather", "3", 1024)


@pytest.mark.parametrize(
    ("given", "group"),
    [
        ({"Process Group Name": "dp", "pg_id": 3}, "dp"),
        ({"pg_id": 3}, "3"),
        ({"Process Group Name": 5}, "5"),
        ({"Process Group Name": ["a"], "pg_id": 3}, None),
        ({"Process Group Name": {"a": 1}}, None),
        ({}, None),
    ],
)
def test_the_process_group_is_its_name_else_its_id(given: dict[str, Any], group: str) -> None:
    assert _comm_params(Args(collective="allreduce", **_fields(given)), None, {}) == {
        **dict.fromkeys(("seq", "in_nelems", "out_nelems", "group_size", "dtype")),
        "collective": "allreduce",
        "process_group": group,
    }


def _fields(given: dict[str, Any]) -> dict[str, Any]:
    names = {"Process Group Name": "pg_name", "pg_id": "pg_id"}
    return {names[k]: v for k, v in given.items()}


def test_a_value_of_another_type_is_null() -> None:
    odd = Args(collective=5, in_nelems=1.5, out_nelems=True, group_size="x8", dtype=3)
    params = _comm_params(odd, None, {})
    assert set(params.values()) == {None}


@pytest.mark.parametrize(
    ("value", "whole"),
    [
        (12, 12),
        ("12", 12),
        (" 12 ", 12),
        ("-12", -12),
        ("12-", None),
        ("X12", None),
        ("1.5", None),
        (True, None),
        (None, None),
        (-(2**63), -(2**63)),
        (2**63 - 1, 2**63 - 1),
        (-(2**63) - 1, None),
        (2**63, None),
    ],
)
def test_whole_reads_an_int64_written_as_a_number_or_a_string(value: Any, whole: Any) -> None:
    assert _whole(value) == whole


def test_events_in_start_order_whatever_the_files_and_device_else_pid() -> None:
    """Kernels written out of time order come back by start, file order among equal starts;
    a kernel without ``args.device`` is on its ``pid``."""
    kernels = [(30, 0), (10, 1), (30, 2), (20, 3)]
    events = [
        {"ph": "X", "cat": "kernel", "name": f"k{i}", "pid": 5, "tid": 7, "ts": ts, "dur": 1,
         "args": {"stream": 7, **({"device": 0} if i % 2 else {})}}
        for ts, i in kernels
    ]  # fmt: skip
    data = json.dumps({"traceEvents": events}).encode()
    frame = event_frame(read_events("t.json", data))
    assert frame.get_column("name").to_list() == ["k1", "k3", "k0", "k2"]
    assert frame.get_column("device").to_list() == [0, 0, 5, 5]


def test_texts_matching_keeps_each_matching_text_once() -> None:
    """The distinct texts that match, each once: case as the pattern says, null matching
    nothing, a Categorical's unused dictionary texts not among them."""
    from tileprof.core.gpu_events import COMM_NAME
    from tileprof.core.kineto import texts_matching

    names = pl.Series(
        "name",
        ["ncclKernel_AllReduce", "gemm", None, "ncclKernel_AllReduce", "RCCL_send", "xnccl"],
        dtype=pl.Categorical(),
    )
    found = texts_matching(names, COMM_NAME.pattern)
    assert found.dtype == pl.String
    assert sorted(found.to_list()) == ["RCCL_send", "ncclKernel_AllReduce", "xnccl"]
    assert texts_matching(names.filter(names != "gemm"), "^gemm$").to_list() == []
    assert texts_matching(names, "^gemm$").to_list() == ["gemm"]
