"""A PyTorch profiler (Kineto) trace read one event at a time with the plain ``json`` module,
for the tests: the per-event objects that the frame-based readers must agree with, written
as the rules read the events (the module docstrings of ``inputs/gpu/kineto.py`` and
``kineto_host.py``, docs/metrics.md "GPU critical path"), with nothing from tileprof's readers.

Only complete events (``ph: "X"``) count. A CPU op's missing name, ``ts`` or ``dur`` reads as
``""``, 0 and 0; a runtime call or a ``ProfilerStep#N`` annotation is kept only when its start
and end have a place on the integer-ns clock (finite, |µs| < 9.2e15); a GPU-side step's device
is its ``pid`` when that is a 64-bit integer.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from tileprof.core.gpu_events import ns_of_us

GPU = {"kernel", "gpu_memcpy", "gpu_memset"}
RUNTIME = {"cuda_runtime", "cuda_driver"}
STEPS = {"gpu_user_annotation": "gpu_annotation", "user_annotation": "cpu_step"}
STEP = re.compile(r"ProfilerStep#(\d+)$")


@dataclass(frozen=True)
class CpuOp:
    index: int
    name: str
    thread: str
    ts: float
    dur: float
    external_id: int | None
    input_type: Any
    input_dims: Any
    concrete_inputs: Any
    flops: Any


@dataclass(frozen=True)
class GpuEvent:
    index: int
    name: str
    dur: float
    correlation: int | None
    external_id: int | None


@dataclass
class Reading:
    cpu_ops: list[CpuOp] = field(default_factory=list)
    gpu: list[GpuEvent] = field(default_factory=list)
    launches: dict[int, int] = field(default_factory=dict)
    """correlation -> External id of the last runtime call that has both."""
    runtime: list[tuple[int, str, str, float, float, int | None]] = field(default_factory=list)
    """(index, name, thread, ts, dur, correlation) of each placed runtime call."""
    steps: list[tuple[int | None, int, float, float, str]] = field(default_factory=list)
    """(device, N, start µs, end µs, source) of each placed ``ProfilerStep#N``."""


def _placed(us: float) -> bool:
    return math.isfinite(us) and abs(us) < 9.2e15


def _int64(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def read(data: bytes) -> Reading:
    """The events of a Kineto trace, filed one by one."""
    found = Reading()
    for index, ev in enumerate(json.loads(data)["traceEvents"]):
        if ev.get("ph") != "X":
            continue
        _file(found, index, ev)
    return found


def _file(found: Reading, index: int, ev: dict[str, Any]) -> None:
    cat, args = ev.get("cat"), ev.get("args") or {}
    name, ts, dur = ev.get("name"), _float(ev.get("ts")), _float(ev.get("dur"))
    thread = f"{ev.get('pid')}/{ev.get('tid')}"
    if cat in GPU:
        found.gpu.append(
            GpuEvent(index, name, dur or 0.0, args.get("correlation"), args.get("External id"))
        )
    elif cat == "cpu_op":
        found.cpu_ops.append(
            CpuOp(index, name or "", thread, ts or 0.0, dur or 0.0, args.get("External id"),
                  args.get("Input type"), args.get("Input Dims"), args.get("Concrete Inputs"),
                  args.get("flops"))
        )  # fmt: skip
    elif cat in RUNTIME:
        correlation, ext = args.get("correlation"), args.get("External id")
        if correlation is not None and ext is not None:
            found.launches[correlation] = ext
        if ts is not None and _placed(ts) and _placed(ts + (dur or 0.0)):
            found.runtime.append((index, name or "", thread, ts, dur or 0.0, correlation))
    elif cat in STEPS and ts is not None and dur is not None:
        matched = STEP.match(name or "")
        if matched and _placed(ts) and _placed(ts + dur):
            source = STEPS[cat]
            device = _int64(ev.get("pid")) if source == "gpu_annotation" else None
            found.steps.append((device, int(matched.group(1)), ts, ts + dur, source))


def launching_external_id(found: Reading, ev: GpuEvent, known: set[int]) -> int | None:
    """The External id of the CPU op that launched ``ev``: its runtime call's, where an op in
    ``known`` has it, else the event's own."""
    ext = found.launches.get(ev.correlation) if ev.correlation is not None else None
    if ext is None or ext not in known:
        ext = ev.external_id
    return ext


def host_rows(found: Reading) -> pl.DataFrame:
    """The host frame (``kineto_host.HOST_SCHEMA``) of the reading: every placed CPU op and
    runtime call in file order, times made integer ns as the frames make them (``ns_of_us``)."""
    rows = [(op.index, "op", op.name, op.thread, op.ts, op.dur, None) for op in found.cpu_ops
            if _placed(op.ts) and _placed(op.ts + op.dur)]  # fmt: skip
    rows += [(i, "runtime", n, t, ts, d, c) for i, n, t, ts, d, c in found.runtime]
    rows.sort(key=lambda row: row[0])
    schema = {"index": pl.Int64, "cat": pl.String, "name": pl.String, "thread": pl.String,
              "ts": pl.Float64, "dur": pl.Float64, "correlation": pl.Int64}  # fmt: skip
    start = ns_of_us(pl.col("ts"))
    return pl.DataFrame(rows, schema=schema, orient="row").select(
        "index",
        "cat",
        "name",
        "thread",
        start.alias("start_ns"),
        (start + ns_of_us(pl.col("dur"))).alias("end_ns"),
        "correlation",
    )
