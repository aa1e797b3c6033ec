"""A PyTorch profiler (Kineto) trace as the typed GPU timeline (``core.gpu_timeline``).

Read for ``tileprof breakdown``: every GPU event (``ph: "X"`` of category ``kernel``,
``gpu_memcpy`` or ``gpu_memset``) with its launching runtime call (the ``cuda_runtime`` or
``cuda_driver`` event of the same ``correlation``: ``cudaLaunchKernel``, ``hipLaunchKernel``,
``cudaMemcpyAsync``, ...), the GPU-side ``ProfilerStep#N`` annotations
(``gpu_user_annotation``, on the device their ``pid`` names) and ``distributedInfo``. A step
with no GPU-side annotation (older traces, HTA's) but a CPU-side ``ProfilerStep#N``
(``user_annotation``) gets, per device, the window from the first start to the last end of the
GPU events whose launch call began inside the CPU step.

A kernel whose name holds ``nccl`` or ``rccl`` (any case) is communication, as TraceLens
counts it. Its NCCL parameters (``Collective name``, ``In msg nelems``, ``Out msg nelems``,
``Group size``, ``dtype``, ``Process Group Name`` or ``pg_id``, ``Seq``) are read from the
kernel's own args, else from the ``record_param_comms`` CPU op that launched it (through the
runtime call's ``External id``, else the kernel's). The same structural checks as the run
reader (``kineto``) apply: a GPU event needs ``ts``, ``dur`` and ``name``, and ``dur`` ≥ 0.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.gpu_timeline import EVENT_SCHEMA, STEP_SCHEMA, GpuTimeline, RankInfo
from tileprof.inputs.gpu.kineto import (
    GPU_CATEGORIES,
    LAUNCH_CATEGORIES,
    DeviceProperties,
    Int64,
    _decode_part,
)

STEP_NAME = re.compile(r"ProfilerStep#(\d+)$")
COMM_NAME = re.compile(r"nccl|rccl", re.IGNORECASE)
_KIND_OF_CATEGORY = {"gpu_memcpy": "memcpy", "gpu_memset": "memset"}


class CommArgs(msgspec.Struct):
    """The ``args`` of GPU events, runtime calls and CPU ops that the timeline reads. The NCCL
    fields vary in type between PyTorch versions (a group name may be a number), so they are
    read as any JSON and kept only when they have the expected type."""

    device: Int64 | None = None
    stream: Any = None  # a runtime call may write it as text ("0x0"); GPU events are checked
    correlation: Int64 | None = None
    external_id: Int64 | None = msgspec.field(default=None, name="External id")
    collective: Any = msgspec.field(default=None, name="Collective name")
    in_nelems: Any = msgspec.field(default=None, name="In msg nelems")
    out_nelems: Any = msgspec.field(default=None, name="Out msg nelems")
    group_size: Any = msgspec.field(default=None, name="Group size")
    dtype: Any = None
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    pg_id: Any = None
    seq: Any = msgspec.field(default=None, name="Seq")


class TimelineEvent(msgspec.Struct):
    ph: str | None = None
    cat: str | None = None
    name: str | None = None
    ts: float | None = None
    dur: float | None = None
    pid: Any = None
    args: CommArgs | None = None


class DistributedInfo(msgspec.Struct):
    rank: Int64
    world_size: Int64
    backend: str | None = None


class TimelineTrace(msgspec.Struct):
    traceEvents: msgspec.Raw
    deviceProperties: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"[]"))
    distributedInfo: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))


_NO_ARGS = CommArgs()
_COMM_FIELDS = ("collective", "process_group", "seq", "in_nelems", "out_nelems", "group_size")


def read_timeline(path: str | Path, data: bytes) -> GpuTimeline:
    """The GPU timeline of one Kineto trace (``data`` read from ``path``)."""
    from tileprof.inputs._decode import decode_json

    trace = decode_json(path, data, TimelineTrace)
    events = _decode_part(path, trace.traceEvents, list[TimelineEvent], "$.traceEvents")
    props = _decode_part(path, trace.deviceProperties, list[DeviceProperties], "$.deviceProperties")
    optional_info: Any = DistributedInfo | None  # a union: msgspec decodes null as None
    info: DistributedInfo | None = _decode_part(
        path, trace.distributedInfo, optional_info, "$.distributedInfo"
    )
    gpu, launches, comm_ops, steps = _split_events(path, events)
    frame = _event_frame(gpu, launches, comm_ops)
    gpu_steps = [s for s in steps if s[4] == "gpu_annotation"]
    annotated = {s[1] for s in gpu_steps}
    cpu_steps = [s for s in steps if s[4] == "cpu_step" and s[1] not in annotated]
    derived = launched_windows(frame, cpu_steps)
    rank = None if info is None else RankInfo(info.rank, info.world_size, info.backend)
    return GpuTimeline(
        Path(path).name,
        frame,
        pl.concat([pl.DataFrame(gpu_steps, schema=STEP_SCHEMA, orient="row"), derived]),
        {d.id: d.name for d in props},
        rank,
    )


_Launch = tuple[str, float, float, int | None]
"""A runtime call: (name, start, duration, External id)."""
_Step = tuple[int | None, int, float, float, str]
"""A step annotation: (device, step, start, end, source)."""
_STEP_CATEGORIES = {"gpu_user_annotation": "gpu_annotation", "user_annotation": "cpu_step"}


def launched_windows(events: pl.DataFrame, cpu_steps: Sequence[_Step]) -> pl.DataFrame:
    """Per CPU-side step and device: first start to last end of the GPU events whose launch
    call began inside the step."""
    windows = []
    for _, step, start, end, _ in cpu_steps:  # one filter per step: steps are few
        launched = events.filter(pl.col("launch_start") >= start, pl.col("launch_start") < end)
        windows.append(
            launched.group_by("device", maintain_order=True).agg(
                pl.lit(step, pl.Int64).alias("step"),
                pl.col("start").min(),
                pl.col("end").max(),
                pl.lit("cpu_step").alias("source"),
            )
        )
    frame = pl.concat(windows) if windows else pl.DataFrame(schema=STEP_SCHEMA)
    return frame.select(list(STEP_SCHEMA)).cast(dict(STEP_SCHEMA.items()))


def _split_events(
    path: str | Path, events: list[TimelineEvent]
) -> tuple[
    list[tuple[int, TimelineEvent, CommArgs]],
    dict[int, _Launch],
    dict[int, CommArgs],
    list[_Step],
]:
    """The GPU events (checked), the runtime calls by correlation, the ``record_param_comms``
    ops by External id, and the GPU-side step windows."""
    gpu: list[tuple[int, TimelineEvent, CommArgs]] = []
    launches: dict[int, _Launch] = {}
    comm_ops: dict[int, CommArgs] = {}
    steps: list[_Step] = []
    for i, ev in enumerate(events):
        if ev.ph != "X":
            continue
        where = f"$.traceEvents[{i}]"
        if ev.dur is not None and (ev.dur < 0 or math.isnan(ev.dur)):
            raise InputError(path, f"{where}.dur", f"negative duration {ev.dur:g} µs")
        a = ev.args or _NO_ARGS
        if ev.cat in GPU_CATEGORIES:
            if ev.dur is None or ev.ts is None:
                missing = "dur" if ev.dur is None else "ts"
                raise InputError(path, f"{where}.{missing}", "GPU event without it")
            if ev.name is None:
                raise InputError(path, f"{where}.name", "GPU event without a name")
            if not math.isfinite(ev.ts + ev.dur):
                raise InputError(path, where, "ts + dur is beyond a 64-bit float")
            if a.stream is not None and _int(a.stream) is None:
                raise InputError(
                    path, f"{where}.args.stream", f"expected a 64-bit integer, got {a.stream!r}"
                )
            gpu.append((i, ev, a))
        elif ev.cat in LAUNCH_CATEGORIES:
            if a.correlation is not None and ev.ts is not None:
                launches[a.correlation] = (ev.name or "", ev.ts, ev.dur or 0.0, a.external_id)
        elif ev.cat == "cpu_op" and ev.name == "record_param_comms":
            if a.external_id is not None:
                comm_ops[a.external_id] = a
        elif ev.cat in _STEP_CATEGORIES and ev.ts is not None and ev.dur is not None:
            found = STEP_NAME.match(ev.name or "")
            if found:
                source = _STEP_CATEGORIES[ev.cat]
                device = _int(ev.pid) if source == "gpu_annotation" else None
                steps.append((device, int(found.group(1)), ev.ts, ev.ts + ev.dur, source))
    return gpu, launches, comm_ops, steps


def _event_frame(
    gpu: list[tuple[int, TimelineEvent, CommArgs]],
    launches: dict[int, _Launch],
    comm_ops: dict[int, CommArgs],
) -> pl.DataFrame:
    """One row per GPU event, in start order (file order among equal starts). The columns are
    gathered once and joined with the launch calls in polars; only the communication kernels
    (few) have their NCCL parameters looked up one by one."""
    events = pl.DataFrame(
        {
            "index": [i for i, _, _ in gpu],
            "device": [a.device if a.device is not None else _int(e.pid) for _, e, a in gpu],
            "stream": [a.stream for _, _, a in gpu],
            "cat": [e.cat for _, e, _ in gpu],
            "start": [e.ts for _, e, _ in gpu],
            "dur": [e.dur for _, e, _ in gpu],
            "name": [e.name for _, e, _ in gpu],
            "correlation": [a.correlation for _, _, a in gpu],
        },
        schema={"index": pl.Int64, "device": pl.Int64, "stream": pl.Int64, "cat": pl.String,
                "start": pl.Float64, "dur": pl.Float64, "name": pl.String,
                "correlation": pl.Int64},
    )  # fmt: skip
    calls = pl.DataFrame(
        [(c, *launch[:3]) for c, launch in launches.items()],
        schema={"correlation": pl.Int64, "launch_name": pl.String,
                "launch_start": pl.Float64, "launch_dur": pl.Float64},
        orient="row",
    )  # fmt: skip
    kind = (
        pl.when(pl.col("cat") == "gpu_memcpy").then(pl.lit("memcpy"))
        .when(pl.col("cat") == "gpu_memset").then(pl.lit("memset"))
        .when(pl.col("name").str.contains(COMM_NAME.pattern)).then(pl.lit("comm"))
        .otherwise(pl.lit("kernel"))
    )  # fmt: skip
    frame = (
        events.join(calls, on="correlation", how="left")
        .with_columns(kind.alias("kind"), (pl.col("start") + pl.col("dur")).alias("end"))
        .sort("start", "index")
    )
    return frame.join(_comm_frame(gpu, launches, comm_ops), on="index", how="left").select(
        [pl.col(c).cast(t) for c, t in EVENT_SCHEMA.items()]
    )


def _int(value: Any) -> int | None:
    """``value`` when it is an integer the frame's Int64 columns hold (a ``pid`` of any other
    kind names no device); else None."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _comm_frame(
    gpu: list[tuple[int, TimelineEvent, CommArgs]],
    launches: dict[int, _Launch],
    comm_ops: dict[int, CommArgs],
) -> pl.DataFrame:
    """The NCCL parameters of the communication kernels, by event index."""
    rows = []
    for i, ev, a in gpu:
        if ev.cat == "kernel" and ev.name is not None and COMM_NAME.search(ev.name):
            launch = launches.get(a.correlation) if a.correlation is not None else None
            rows.append({"index": i, **_comm_params(a, launch, comm_ops)})
    schema = {"index": pl.Int64(), **{k: EVENT_SCHEMA[k] for k in (*_COMM_FIELDS, "dtype")}}
    return pl.DataFrame(rows, schema=schema)


def _comm_params(
    a: CommArgs, launch: _Launch | None, comm_ops: dict[int, CommArgs]
) -> dict[str, Any]:
    """The NCCL parameters of a communication kernel: its own args when they name the
    collective, else those of the ``record_param_comms`` op that launched it."""
    source = a
    if not isinstance(a.collective, str):
        for ext in (None if launch is None else launch[3], a.external_id):
            if ext is not None and ext in comm_ops:
                source = comm_ops[ext]
                break
    group = source.pg_name if source.pg_name is not None else source.pg_id
    return {
        "collective": source.collective if isinstance(source.collective, str) else None,
        "process_group": None if group is None or isinstance(group, dict | list) else str(group),
        "seq": _whole(source.seq),
        "in_nelems": _whole(source.in_nelems),
        "out_nelems": _whole(source.out_nelems),
        "group_size": _whole(source.group_size),
        "dtype": source.dtype if isinstance(source.dtype, str) else None,
    }


def _whole(value: Any) -> int | None:
    """An integer field that may be written as a number or a numeric string; else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int) and -(2**63) <= value < 2**63:
        return value
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value)
    return None
