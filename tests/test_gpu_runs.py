"""``model/gpu_runs.py``: a PyTorch trace's run rows are its kernel rows, then the op rows
that carry work, with their notes; other GPU files are their reader's rows (issue 38)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from tileprof.inputs._common import read_bytes
from tileprof.inputs.gpu.kineto import KIND, parse_events, read_events
from tileprof.inputs.sources import detect_kind, parse_runs
from tileprof.model.gpu_runs import gpu_runs

ROOT = Path(__file__).resolve().parent.parent
H200 = ROOT / "fixtures" / "traces" / "h200_train_steps.json.gz"


def test_kernel_rows_then_the_op_rows_that_carry_work() -> None:
    """h200_train_steps: 65 kernel rows, then 76 op rows (named ``aten::…``), the op rows'
    count in the metadata and their two work notes after the kernel rows' (none)."""
    runs = gpu_runs(H200, KIND, read_bytes(H200))
    kernels = parse_events(read_events(H200, read_bytes(H200)))
    assert runs.kind == kernels.kind and runs.frame.height == 65 + 76
    assert runs.frame.head(65)["kernel"].to_list() == kernels.frame["kernel"].to_list()
    assert runs.frame.tail(76)["kernel"].str.starts_with("aten::").all()
    assert runs.metadata == kernels.metadata | {"op_rows": 76}
    assert kernels.notes == [] and len(runs.notes) == 2
    assert runs.notes[0].startswith("h200_train_steps.json.gz: 2 causal attention rows")
    assert runs.notes[1].startswith("h200_train_steps.json.gz: 5 GPU events of 3 FLOP op rows")


def test_a_trace_without_work_on_its_ops_is_its_kernel_rows() -> None:
    small = ROOT / "fixtures" / "traces" / "kineto_small.json"
    runs = gpu_runs(small, KIND, read_bytes(small))
    kernels = parse_events(read_events(small, read_bytes(small)))
    assert runs.frame.equals(kernels.frame) and "op_rows" not in runs.metadata
    assert runs.frame.height == 5


def test_a_trace_without_kernels_has_no_op_rows(tmp_path: Path) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        '{"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 5,'
        ' "pid": 1, "tid": 1, "args": {"Input Dims": [[2, 3], [3, 4]],'
        ' "Input type": ["float", "float"]}}]}'
    )
    runs = gpu_runs(path, KIND, path.read_bytes())
    assert runs.frame.height == 0 and "op_rows" not in runs.metadata


def test_another_gpu_file_is_its_readers_rows() -> None:
    table = ROOT / "fixtures" / "runs" / "nsys_kern_sum.csv"
    data = read_bytes(table)
    kind = detect_kind(table, data)
    runs = gpu_runs(table, kind, data)
    expected = parse_runs(table, kind, data)
    assert runs.kind == expected.kind != KIND
    assert runs.frame.equals(expected.frame) and runs.frame.height > 0
    assert isinstance(runs.frame, pl.DataFrame)


def test_a_trace_of_one_kernel_keeps_its_op_row(tmp_path: Path) -> None:
    """One ``aten::mm`` launching one kernel: one kernel row, then its op row."""
    events = [
        {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 0, "dur": 20, "pid": 1,
         "tid": 1, "args": {"Input Dims": [[4, 8], [8, 3]], "Input type": ["float", "float"],
                            "External id": 7}},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": 5, "dur": 1,
         "pid": 1, "tid": 1, "args": {"correlation": 11, "External id": 7}},
        {"ph": "X", "cat": "kernel", "name": "gemm_k", "ts": 30, "dur": 4, "pid": 0,
         "tid": 7, "args": {"device": 0, "stream": 7, "correlation": 11}},
    ]  # fmt: skip
    path = tmp_path / "one.json"
    path.write_text(json.dumps({"traceEvents": events}))
    runs = gpu_runs(path, KIND, path.read_bytes())
    assert runs.frame["kernel"].to_list() == ["gemm_k", "aten::mm"]
    assert runs.metadata["op_rows"] == 1
