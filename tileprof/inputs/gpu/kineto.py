"""PyTorch profiler (Kineto) Chrome traces, ``.json`` or ``.json.gz``.

GPU events are the complete events (``ph: "X"``) of category ``kernel``, ``gpu_memcpy`` or
``gpu_memset``; ``ts``/``dur`` are µs and ``args`` carries ``device``, ``stream``, ``grid``,
``block`` and ``correlation``. A kernel's launching CPU op is found through ``correlation``
(the ``cuda_runtime``/``cuda_driver`` launch with the same correlation, whose ``External id``
names a ``cpu_op``), falling back to the kernel's own ``External id``. Device names come from
``deviceProperties``. Kernels are aggregated per (device, name): count, total, mean,
nearest-rank p50 and p95, and max. A trace with no GPU events is valid: it gives no rows and
a note saying it is CPU-only.

``read_events`` is the one reading of a trace that every command uses (runs, ops, findings,
report, trace, breakdown): a GPU event's ``stream`` must be an integer, while a runtime call
may write it as text (ROCm 6.2 writes ``"0x0"``), which nothing reads.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import msgspec
import polars as pl

from tileprof.core.classify import classify, dtype_from_torch_types
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import us_of_ns
from tileprof.core.kineto import (
    GPU_CATEGORIES,
    LAUNCH_CATEGORIES,
    PLACEABLE_US,
    TIMELINE_COLUMNS,
    Args,
    Event,
    GpuEvents,
    Int64,
    KinetoEvents,
    Step,
    as_text,
    launch_external_ids,
)
from tileprof.core.run_schema import ParsedRuns, call_statistics, runs_from_rows
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import TRACE

T = TypeVar("T")
KIND = TRACE
NO_DTYPE_FAMILIES = frozenset({"copy", "fill", "cast", "layout", "exchange", "other"})


class DeviceProperties(msgspec.Struct):
    id: Int64
    name: str


class DistributedInfo(msgspec.Struct):
    rank: Int64
    world_size: Int64
    backend: str | None = None


class Trace(msgspec.Struct):
    """The top level, each part left undecoded so that a missing ``traceEvents`` is reported
    before any fault inside ``deviceProperties`` (msgspec checks fields in document order)."""

    traceEvents: msgspec.Raw
    deviceProperties: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"[]"))
    distributedInfo: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))
    baseTimeNanoseconds: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))


_NO_ARGS = Args()
STEP_NAME = re.compile(r"ProfilerStep#(\d+)$")
_STEP_CATEGORIES = {"gpu_user_annotation": "gpu_annotation", "user_annotation": "cpu_step"}


def read_events(path: str | Path, data: bytes) -> KinetoEvents:
    """Decode a trace and check its GPU events: the one event model of every command (the CPU
    ops, GPU events, runtime calls, ``record_param_comms`` ops, step annotations and rank).

    The compiled decoder (``tileprof_decode::kineto``) reads the events into the Kineto event
    frame; a document it declines (anything it cannot hold to msgspec's reading exactly: an
    error, a value of another type, a key given twice) is read by msgspec as before, which
    words the error or reads the odd document."""
    return decode_events(path, data).events()


class PendingEvents:
    """A trace read from its bytes, whose event model (``events``) is made when first asked
    for: everything that needs the bytes is done, so the caller can let them go first;
    ``deviceProperties`` and ``distributedInfo`` are decoded afterwards, their errors named as
    before."""

    def __init__(self, finish: Callable[[], KinetoEvents]) -> None:
        self._finish: Callable[[], KinetoEvents] | None = finish
        self._events: KinetoEvents | None = None

    def events(self) -> KinetoEvents:
        """The event model, made once; what it was made from is let go."""
        if self._events is None:
            assert self._finish is not None
            self._events, self._finish = self._finish(), None
        return self._events


def decode_events(path: str | Path, data: bytes, *, timeline: bool = False) -> PendingEvents:
    """``read_events`` in two halves: the first reads ``data`` now (its errors raised now), the
    second (``PendingEvents.events``) needs only what was copied out of it. With ``timeline``,
    the compiled decoder files only the rows a GPU timeline reads (``timeline_rows``; a
    document it declines is read whole by msgspec, every row kept)."""
    from tileprof.inputs.gpu.kineto_native import decoded_events

    found = decoded_events(path, data, timeline=timeline)
    if found is None:
        ready = _read_with_msgspec(path, data)
        return PendingEvents(lambda: ready)
    frame, props_raw, info_raw, base_raw = found
    return _pending(path, frame, (props_raw, info_raw, base_raw), data, timeline)


def decode_file(
    path: str | Path,
    *,
    window_bytes: int | None = None,
    part_bytes: int | None = None,
    timeline: bool = False,
) -> tuple[PendingEvents, set[str]] | None:
    """``decode_events`` of the trace in the file at ``path`` (plain or gzip) read by the
    compiled decoder through a bounded window, its text never held whole, and the document's
    top-level keys (the caller tells the file's kind from them, as ``detect`` does); None when
    the decoder declines the file: the caller reads it whole (``decode_events``), which words
    the error or reads the odd document. ``window_bytes`` and ``part_bytes``: the decoder's
    defaults unless given (tests make them tiny). With ``timeline``, only the rows a GPU
    timeline reads (``timeline_rows``)."""
    from tileprof.inputs.gpu.kineto_native import streamed_events

    found = streamed_events(
        path, window_bytes=window_bytes, part_bytes=part_bytes, timeline=timeline
    )
    if found is None:
        return None
    frame, props_raw, info_raw, kept, keys, base_raw = found
    return _pending(path, frame, (props_raw, info_raw, base_raw), kept, timeline), set(keys)


TopValues = tuple[bytes, bytes, bytes]
"""The raw text of a trace's ``deviceProperties``, ``distributedInfo`` and
``baseTimeNanoseconds`` (``[]``, ``null`` and ``null`` when absent)."""


def _pending(
    path: str | Path, frame: pl.DataFrame, top: TopValues, spans: bytes, timeline: bool
) -> PendingEvents:
    """The event model of the decoder's ``frame`` to be made (``PendingEvents``), the NCCL
    events' bytes copied out of ``spans`` (what the frame's spans point into) now, and the
    spans let go (``kineto_native.event_frame``); of a read for a timeline, the columns it
    reads (``TIMELINE_COLUMNS``), the others let go now."""
    from tileprof.inputs.gpu.kineto_native import comm_args, event_frame

    args_of = comm_args(frame, spans)
    frame = event_frame(frame.select(TIMELINE_COLUMNS) if timeline else frame)
    return PendingEvents(lambda: _events(path, frame, top, args_of))


def _events(
    path: str | Path,
    frame: pl.DataFrame,
    top: TopValues,
    args_of: Callable[[Sequence[int]], list[Args]],
) -> KinetoEvents:
    """The event model of a trace whose events are in ``frame`` (``args_of``: the ``args`` of
    events by index), with its ``deviceProperties`` and ``distributedInfo`` decoded (their
    errors named as before) and its ``baseTimeNanoseconds`` (``kineto_clock``)."""
    from tileprof.inputs.gpu.kineto_clock import base_time_of

    props_raw, info_raw, base_raw = top
    props = _decode_part(path, msgspec.Raw(props_raw), list[DeviceProperties], "$.deviceProperties")
    optional_info: Any = DistributedInfo | None  # a union: msgspec decodes null as None
    info: DistributedInfo | None = _decode_part(
        path, msgspec.Raw(info_raw), optional_info, "$.distributedInfo"
    )
    listed = {d.id: d.name for d in props}
    rank = None if info is None else (info.rank, info.world_size, info.backend)
    events = KinetoEvents(Path(path).name, listed, frame, args_of, rank, base_time_of(base_raw))
    gpu = frame.lazy().filter(pl.col("cat").is_in(GPU_CATEGORIES)).select("device").collect()
    events.devices = _device_names(events.devices, set(gpu.get_column("device").to_list()))
    return events


def _read_with_msgspec(path: str | Path, data: bytes) -> KinetoEvents:
    """``read_events`` by msgspec, one event at a time (the documents the compiled decoder
    declines): the same Kineto event frame, without spans, and the ``args`` kept by index."""
    from tileprof.inputs._decode import decode_json
    from tileprof.inputs.gpu.kineto_native import frame_of_events

    trace = decode_json(path, data, Trace)
    trace_events = _decode_part(path, trace.traceEvents, list[Event], "$.traceEvents")
    kept: list[tuple[int, Event]] = []
    for i, ev in enumerate(trace_events):
        if ev.ph == "X":
            _check_event(path, i, ev)
            if ev.cat in KEPT_CATEGORIES:
                kept.append((i, ev))
    by_index = {i: ev.args or _NO_ARGS for i, ev in kept}
    top = (bytes(trace.deviceProperties), bytes(trace.distributedInfo),
           bytes(trace.baseTimeNanoseconds))  # fmt: skip
    return _events(path, frame_of_events(kept), top, lambda indices: [by_index[i] for i in indices])


def _check_event(path: str | Path, i: int, ev: Event) -> None:
    """The checks of one complete event (``ph: "X"``): a duration is not negative; a GPU event
    has what the frame needs."""
    where = f"$.traceEvents[{i}]"
    if ev.dur is not None and (ev.dur < 0 or math.isnan(ev.dur)):
        raise InputError(path, f"{where}.dur", f"negative duration {ev.dur:g} µs")
    if ev.cat in GPU_CATEGORIES:
        _check_gpu_event(path, where, ev, ev.args or _NO_ARGS)


KEPT_CATEGORIES = (
    GPU_CATEGORIES | LAUNCH_CATEGORIES | {"cpu_op", *("gpu_user_annotation", "user_annotation")}
)
"""The categories of the complete events tileprof reads (the Kineto event frame's rows)."""


def step_rows(frame: pl.DataFrame) -> list[Step]:
    """The ``ProfilerStep#N`` annotations of the Kineto event frame (few rows: the loop is
    over the annotations whose name starts so): each with a ``ts`` and a ``dur`` that place
    its start and end on the ns clock, its device the ``pid`` of a GPU-side one."""
    candidates = frame.filter(
        pl.col("cat").is_in(list(_STEP_CATEGORIES)),
        pl.col("ts").is_not_null(),
        pl.col("dur").is_not_null(),
    ).filter(pl.col("name").cast(pl.String).str.starts_with("ProfilerStep#"))
    steps: list[Step] = []
    for row in candidates.select("cat", "name", "ts", "dur", "pid").iter_rows():
        cat, name, ts, dur, pid = row
        if not (_placeable(ts) and _placeable(ts + dur)):
            continue
        found = STEP_NAME.match(name)
        if found:
            source = _STEP_CATEGORIES[cat]
            device = pid if source == "gpu_annotation" else None
            steps.append((device, int(found.group(1)), ts, ts + dur, source))
    return steps


def _check_gpu_event(path: str | Path, where: str, ev: Event, a: Args) -> None:
    """A GPU event needs ``ts``, ``dur`` and ``name``, a finite end, and an integer stream."""
    if ev.dur is None or ev.ts is None:
        missing = "dur" if ev.dur is None else "ts"
        raise InputError(path, f"{where}.{missing}", "GPU event without it")
    if ev.name is None:
        raise InputError(path, f"{where}.name", "GPU event without a name")
    if not (_placeable(ev.ts) and _placeable(ev.ts + ev.dur)):
        raise InputError(path, where, "ts + dur is beyond 64-bit integer ns (±292 years)")
    if a.stream is not None and _int(a.stream) is None:
        raise InputError(
            path, f"{where}.args.stream", f"expected a 64-bit integer, got {a.stream!r}"
        )


def _placeable(us: float) -> bool:
    """Whether a time in µs has a place on the GPU event frame's integer-ns clock. A runtime
    call or step annotation without one is left out; a GPU event without one is an error."""
    return math.isfinite(us) and abs(us) < PLACEABLE_US


def _int(value: Any) -> int | None:
    """``value`` when it is an integer the frame's Int64 columns hold (a ``pid`` of any other
    kind names no device); else None."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _device_names(listed: dict[int, str], used: set[int | None]) -> dict[int, str]:
    """``deviceProperties``' names by id, and the one listed device's name under the one id
    the GPU events use when they differ: ROCm traces of a process that sees one GPU list it as
    id 0 while the kernels run on its system id (MI300X traces: ``deviceProperties`` id 0,
    kernels on ``"device": 2``). Several devices, or several ids, keep the ids as written."""
    ids = {d for d in used if d is not None}
    if len(listed) == 1 and len(ids) == 1 and not ids & set(listed):
        return listed | {ids.pop(): next(iter(listed.values()))}
    return listed


def gpu_events(path: str | Path, data: bytes) -> GpuEvents:
    """The GPU events of a Kineto trace in the GPU event frame (``core.gpu_events``) with the
    Kineto columns (``core.kineto.GpuEvents``); ``op`` is the launching CPU op found through
    ``correlation`` (module docstring); the frame is empty for a CPU-only trace."""
    return gpu_events_of(read_events(path, data))


def gpu_events_of(found: KinetoEvents) -> GpuEvents:
    """``gpu_events`` of an already-read trace. The launching op is found by joins: the runtime
    call's External id where a cpu_op has it, else the event's own (``launch_external_ids``;
    of two cpu_ops with one External id, the later in the file)."""
    from tileprof.inputs.gpu.kineto_frame import event_frame

    frame = found.frame
    # lazy: only the selected columns of these rows are copied, not all eighteen
    kineto = frame.lazy().filter(pl.col("cat").is_in(GPU_CATEGORIES)).select(
        "index", "cat", as_text("grid"), as_text("block"),
        pl.col("external_id").alias("own_ext"), "correlation",
    ).collect()  # fmt: skip
    ops = (
        frame.lazy()
        .filter(pl.col("cat") == "cpu_op", pl.col("external_id").is_not_null())
        .select(pl.col("external_id").alias("ext"), "name", "input_type")
        .filter(pl.col("ext").is_last_distinct())  # unique(keep="last"), in order, faster
        .with_columns(pl.lit(True).alias("launching"))
        .collect()
    )
    launches = launch_external_ids(frame, ops)
    # the ops' text is made of the GPU events' rows alone: an op without a name is "",
    # an event without an op null
    op_text = as_text("name").fill_null("")
    attributed = (
        kineto.join(launches, on="correlation", how="left", maintain_order="left")
        .with_columns(ext=pl.coalesce("launch_ext", "own_ext"))
        .join(ops, on="ext", how="left", maintain_order="left")
        .select(
            "index", "cat", "grid", "block", pl.when("launching").then(op_text).alias("op"),
            as_text("input_type").alias("op_types"),
        )
    )  # fmt: skip
    events = event_frame(found).join(attributed, on="index", how="left", maintain_order="left")
    cpu_ops = frame.select((pl.col("cat") == "cpu_op").sum()).item()
    return GpuEvents(events, found.devices, cpu_ops)


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """The per-kernel runs of a Kineto trace."""
    return parse_events(read_events(path, data))


def parse_events(read: KinetoEvents) -> ParsedRuns:
    """The per-kernel runs of an already-read trace (the gatherer reads a trace once for its
    kernel rows and its op rows)."""
    found = gpu_events_of(read)
    name = read.name
    devices, cpu_count = found.devices, found.cpu_ops
    notes: list[str] = []
    if found.events.height == 0:
        notes.append(f"{name}: CPU-only trace ({cpu_count} CPU ops, no GPU kernel events)")
        return ParsedRuns(KIND, runs_from_rows([]), notes=notes, metadata={"cpu_ops": cpu_count})
    agg = aggregate(found.events)
    rows = []
    for r in agg.iter_rows(named=True):
        device = r["device"]
        target = (devices.get(device) if device is not None else None) or "GPU"
        launches = Counter(zip(r["ops"], r["ops_types"], strict=True))
        family, dt = classify(r["name"])
        if family == "other" and r["op"]:
            family = classify(r["op"])[0]
        if family == "copy" and _all_casts(launches):
            family = "cast"
        # Only compute kernels take the launching op's input type; a memcpy or memset
        # launched by aten::copy_ of floats moves bytes, not floats.
        if dt is None and r["op_types"] and family not in NO_DTYPE_FAMILIES:
            dt = dtype_from_torch_types(json.loads(r["op_types"]))
        per_op = Counter[str]()
        for (op, _), n in launches.items():
            if op is not None:
                per_op[op] += n
        rows.append(
            {
                "target": target,
                "target_kind": "gpu",
                "device": None if device is None else f"GPU {device}",
                "source": f"{name}: device {device}" if device is not None else name,
                "kernel": r["name"],
                "op_family": family,
                "dtype": dt,
                "per": "call",
                "time_us": r["mean_us"],
                "calls": r["count"],
                "total_us": r["total_us"],
                "p50_us": r["p50_us"],
                "p95_us": r["p95_us"],
                "max_us": r["max_us"],
                "launch_op": _launch_ops(per_op),
                "metadata": {
                    "category": r["cat"],
                    "streams": r["streams"],
                    "grid": r["grid"],
                    "block": r["block"],
                }
                | ({"launch_ops": dict(per_op.most_common())} if len(per_op) > 1 else {}),
            }
        )
    meta = {"devices": devices, "gpu_events": found.events.height, "cpu_ops": cpu_count}
    return ParsedRuns(KIND, runs_from_rows(rows), notes=notes, metadata=meta)


def aggregate(events: pl.DataFrame) -> pl.DataFrame:
    """Per (device, name): count, total, mean, nearest-rank p50/p95 and max of the duration
    (µs).

    ``events`` is in start order; grid, block, category and launching op are the first
    call's, streams all distinct ones. Rows are ordered by total time, largest first.
    """

    return (
        events.group_by("device", "name", maintain_order=True)
        .agg(
            *call_statistics(us_of_ns(pl.col("end_ns") - pl.col("start_ns"))),
            pl.col("cat").first().cast(pl.String).alias("cat"),
            pl.col("grid").first(),
            pl.col("block").first(),
            pl.col("op").drop_nulls().first().alias("op"),
            pl.col("op_types").drop_nulls().first().alias("op_types"),
            pl.col("op").alias("ops"),
            pl.col("op_types").alias("ops_types"),
            pl.col("stream").unique().sort().cast(pl.String).str.join(",").alias("streams"),
        )
        .with_columns(pl.col("name").cast(pl.String))
        .sort(["total_us", "name"], descending=[True, False])
    )


COPY_OPS = frozenset({"aten::copy_", "aten::_to_copy", "aten::to"})


def _all_casts(launches: Counter[tuple[str | None, str | None]]) -> bool:
    """Whether every launch is a copy op whose destination and source types differ (a copy_
    from bf16 into a float tensor is a cast, whatever its kernel is named)."""
    if not launches:
        return False
    for op, types in launches:
        if op not in COPY_OPS or not types:
            return False
        tensors = [t for t in json.loads(types) if t and t != "Scalar"][:2]
        if len(tensors) < 2 or dtype_from_torch_types(tensors[:1]) is None:
            return False
        if dtype_from_torch_types(tensors[:1]) == dtype_from_torch_types(tensors[1:]):
            return False
    return True


def _launch_ops(per_op: Counter[str]) -> str | None:
    """The launching op, or every one with its calls (``aten::mm ×2; aten::mean ×3``)."""
    if len(per_op) <= 1:
        return next(iter(per_op), None)
    return "; ".join(
        f"{op} ×{n}" for op, n in sorted(per_op.items(), key=lambda kv: (-kv[1], kv[0]))
    )


def _decode_part(path: str | Path, raw: msgspec.Raw, type_: type[T], where: str) -> T:
    """Decode one part of an already-parsed document; a failure names its JSON path."""
    from tileprof.inputs._decode import validation_error

    try:
        return msgspec.json.decode(raw, type=type_)
    except msgspec.ValidationError as exc:
        raise validation_error(path, exc, prefix=where) from None


READER: Reader[ParsedRuns] = Reader(parse)
