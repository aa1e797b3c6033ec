"""The one GPU event frame and the one Kineto event model, held on real traces.

- Every GPU source (Kineto, nsys SQLite, rocprofv3) gives the frame of ``core.gpu_events``.
- A real ROCm 6.2 trace (HTA's ``mi250_minitoy_train_ROCm6_2_kineto``) writes a runtime call's
  ``stream`` as ``"0x0"``: every command reads it, as ``breakdown`` does.
- Its GPU-side ``ProfilerStep#1`` covers 8 of the 16 GPU events the CPU-side step launched: the
  step's window comes from launch attribution, and every output says so.
- Kernel wait: the default reproduces what HTA outputs (its per-stream idle classes with
  ``consecutive_kernel_delay`` = 30 compared with µs gaps).
"""

from __future__ import annotations

import gzip
import json
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.analyses.gpu_breakdown import KERNEL_WAIT_US, breakdown
from tileprof.commands.cli import cli
from tileprof.core.gpu_events import GPU_EVENT_COLUMNS, GPU_EVENT_SCHEMA
from tileprof.inputs._common import read_bytes
from tileprof.inputs.timelines import load_timeline

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ROCM = FIXTURES / "hta" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz"
GPU_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
LAUNCHES = ("cuda_runtime", "cuda_driver")


def ns(us: float) -> int:
    """A time as the trace writes it (µs, three decimals) in integer ns, exactly: the decimal
    that Python's float repr gives back, times 1000."""
    return int(Decimal(repr(us)) * 1000)


def _raw(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path) as handle:
        events: list[dict[str, Any]] = json.load(handle)["traceEvents"]
    return events


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, list(args))


def test_every_gpu_source_gives_the_one_frame() -> None:
    from tileprof.inputs.gpu import nsys_sqlite, rocprof
    from tileprof.inputs.gpu.kineto import gpu_events

    nsys = FIXTURES / "real" / "h100_2gpu_1s.sqlite"
    csv = FIXTURES / "real" / "kernel_trace.csv"
    frames = {
        "kineto": gpu_events(ROCM, read_bytes(ROCM)).events,
        "nsys": nsys_sqlite.gpu_events(nsys, read_bytes(nsys)),
        "rocprof": rocprof.gpu_events(csv, read_bytes(csv)),
        "timeline": load_timeline(ROCM).events,
    }
    required = [c.name for c in GPU_EVENT_COLUMNS if not c.nullable]
    for source, frame in frames.items():
        assert frame.height > 0, source
        assert dict(list(frame.schema.items())[: len(GPU_EVENT_SCHEMA)]) == GPU_EVENT_SCHEMA
        assert frame.select(required).null_count().sum_horizontal().item() == 0, source
        assert (frame["end_ns"] >= frame["start_ns"]).all(), source
        assert frame["start_ns"].is_sorted(), source


def test_kineto_times_are_the_written_decimals_in_integer_ns() -> None:
    events = load_timeline(ROCM).events
    written = sorted(
        (ns(e["ts"]), ns(e["dur"]))
        for e in _raw(ROCM)
        if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES
    )
    got = sorted(zip(events["start_ns"], events["end_ns"] - events["start_ns"], strict=True))
    assert got == written
    # a step written as ts 4203669603454.206 µs is 4203669603454206 ns, not a float's neighbour
    assert events["start_ns"][0] == 4_203_669_603_454_206


def test_a_runtime_call_writing_its_stream_as_text_is_read_by_every_command(
    tmp_path: Path,
) -> None:
    calls = [e for e in _raw(ROCM) if e.get("cat") == "cuda_runtime"]
    assert any(e["args"].get("stream") == "0x0" for e in calls)  # what the file holds
    for command in ("runs", "findings"):
        result = _run(command, str(ROCM), "--format", "json")
        assert result.exit_code == 0, (command, result.output)
    runs = json.loads(_run("runs", str(ROCM), "--format", "json").output)
    kernels = [r for r in runs["runs"] if r["source"].endswith(": device 2")]
    calls_read = sum(r["calls"] for r in kernels)
    assert calls_read == sum(
        1 for e in _raw(ROCM) if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES
    )
    page = tmp_path / "report.html"
    assert _run("report", str(ROCM), "-o", str(page)).exit_code == 0
    assert 'id="breakdown"' in page.read_text()
    dump = write_dump(tmp_path / "dump.json", [sample(0, 0, 10, "gemm")], tileCount=1)
    out = tmp_path / "t.json"
    result = _run("trace", str(dump), str(ROCM), "-o", str(out))
    assert result.exit_code == 0, result.output
    slices = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("ph") == "X"]
    names = Counter(e["name"] for e in slices)
    for e in _raw(ROCM):
        if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES:
            assert names[e["name"]] > 0


def _launch_attribution(events: list[dict[str, Any]], step: int) -> tuple[int, int, int]:
    """HTA's launch attribution, read plainly: the GPU events whose runtime call began inside
    the CPU-side ``ProfilerStep#step``: how many, first start, last end (ns)."""
    name = f"ProfilerStep#{step}"
    (cpu,) = [e for e in events if e.get("cat") == "user_annotation" and e["name"] == name]
    low, high = cpu["ts"], cpu["ts"] + cpu["dur"]
    calls = {e["args"]["correlation"]: e["ts"] for e in events if e.get("cat") in LAUNCHES}
    mine = [
        e
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") in GPU_CATEGORIES
        and low <= calls.get(e["args"].get("correlation"), -1.0) < high
    ]
    return len(mine), min(ns(e["ts"]) for e in mine), max(ns(e["ts"]) + ns(e["dur"]) for e in mine)


def test_a_gpu_annotation_covering_fewer_events_than_its_step_launched_gives_way(
    tmp_path: Path,
) -> None:
    raw = _raw(ROCM)
    (annotation,) = [e for e in raw if e.get("cat") == "gpu_user_annotation"
                     and e["name"] == "ProfilerStep#1"]  # fmt: skip
    launched, first, last = _launch_attribution(raw, 1)
    length = (last - first) / 1000
    a_low, a_high = annotation["ts"], annotation["ts"] + annotation["dur"]
    gpu = [e for e in raw if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES]
    covered = [e for e in gpu if e["ts"] <= a_high and e["ts"] + e["dur"] >= a_low]
    assert (len(covered), launched) == (8, 16)  # the file's own numbers
    rows = breakdown([load_timeline(ROCM)]).rows
    step = rows.filter(pl.col("step") == 1).row(0, named=True)
    assert step["window_from"] == "launch_attribution"
    assert step["events"] == launched
    assert step["total_us"] == step["window_us"] == length  # 8,912 µs, not 1,031
    # every output names the rule
    table = _run("breakdown", str(ROCM)).output
    assert "#1 (launches)" in table
    csv = pl.read_csv(_run("breakdown", str(ROCM), "--format", "csv").output.encode())
    assert "launch_attribution" in csv["window_from"].to_list()
    document = json.loads(_run("breakdown", str(ROCM), "--format", "json").output)
    assert [r["window_from"] for r in document["breakdown"]] == ["trace", "launch_attribution"]
    page = _run("breakdown", str(ROCM), "--format", "html", "-o", "-").output
    assert "window_from" in page and "launch_attribution" in page


def test_a_gpu_annotation_covering_every_launched_event_stays_the_window() -> None:
    """The TraceLens traces' GPU-side ProfilerStep covers every event its step launched."""
    path = FIXTURES / "tracelens" / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    steps = load_timeline(path).steps
    assert steps["source"].cast(pl.String).to_list() == ["gpu_annotation"]


def _hta_idle(events: list[dict[str, Any]], delay: float) -> dict[int, dict[str, float]]:
    """HTA's ``get_idle_time_breakdown`` per stream, read plainly from its source
    (hta/analyzers/breakdown_analysis.py): each stream's events by ts; an event's idle interval
    is its ts minus the previous end; host wait when its runtime call began after that end,
    else kernel wait when the interval is under ``consecutive_kernel_delay`` (compared with the
    trace's µs), else other. Overlapping events on a stream (HTA adds their negative intervals
    to a class) leave no gap here: the previous end is the furthest end so far."""
    calls = {e["args"]["correlation"]: ns(e["ts"]) for e in events if e.get("cat") in LAUNCHES}
    by_stream: dict[int, list[tuple[int, int, int | None]]] = {}
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in GPU_CATEGORIES:
            start, runtime = ns(e["ts"]), calls.get(e["args"].get("correlation"))
            by_stream.setdefault(e["args"]["stream"], []).append(
                (start, start + ns(e["dur"]), runtime)
            )
    out = {}
    for stream, mine in by_stream.items():
        mine.sort(key=lambda e: e[0])
        classes = {"host_wait": 0, "kernel_wait": 0, "other": 0}
        reach = mine[0][1]
        for start, end, runtime in mine[1:]:
            gap = start - reach
            if gap > 0 and runtime is not None and runtime > reach:
                classes["host_wait"] += gap
            elif gap > 0 and gap < delay * 1000:
                classes["kernel_wait"] += gap
            elif gap > 0:
                classes["other"] += gap
            reach = max(reach, end)
        out[stream] = {k: v / 1000 for k, v in classes.items()}
    return out


@pytest.mark.parametrize(
    "path",
    [FIXTURES / "hta" / "nccl_2xA100_rank0.json.gz",  # HTA's own test trace
     FIXTURES / "tracelens" / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"],
    ids=lambda p: p.name[:20],
)  # fmt: skip
def test_the_default_kernel_wait_is_what_hta_outputs(path: Path) -> None:
    raw = _raw(path)
    hta = _hta_idle(raw, 30)  # HTA's default consecutive_kernel_delay, as HTA applies it
    documented = _hta_idle(raw, 0.03)  # what its documentation says: 30 ns
    streams = breakdown([load_timeline(path)]).streams.filter(pl.col("step").is_null())
    compared = 0
    for row in streams.iter_rows(named=True):
        mine = hta[row["stream"]]
        assert row["idle_host_wait_us"] == pytest.approx(mine["host_wait"], abs=1e-6)
        assert row["idle_kernel_wait_us"] == pytest.approx(mine["kernel_wait"], abs=1e-6)
        assert row["idle_other_us"] == pytest.approx(mine["other"], abs=1e-6)
        compared += 1
    assert compared and KERNEL_WAIT_US == 30.0
    # the documented 30 ns would split the same gaps otherwise: this trace tells them apart
    assert sum(s["kernel_wait"] for s in hta.values()) > 100 * sum(
        s["kernel_wait"] for s in documented.values()
    )


def test_a_communication_kernel_is_named_in_any_case(tmp_path: Path) -> None:
    """docs/metrics.md: a kernel whose name holds nccl or rccl in any case is communication,
    with its NCCL parameters; polars' pattern keeps the case flag."""
    args = {"device": 0, "stream": 7, "correlation": 1, "Collective name": "allreduce"}
    events = [
        {"ph": "X", "cat": "kernel", "name": "NCCLKernel_AllReduce", "pid": 0, "tid": 7,
         "ts": 1.0, "dur": 2.0, "args": args},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 4.0, "dur": 1.0,
         "args": {"device": 0, "stream": 7}},
    ]  # fmt: skip
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": events}))
    frame = load_timeline(path).events
    assert frame.select(pl.col("kind").cast(pl.String), "collective").rows() == [
        ("comm", "allreduce"),
        ("kernel", None),
    ]
