"""Op-level rows of a PyTorch profiler trace: the work each CPU op did and the time it took.

Kernel rows (``tileprof.inputs.gpu.kineto``) cannot carry work: one ``aten::mm`` may launch two
kernels, and giving each the op's FLOPs overstates both. Op rows can. One row per (target, op
name, input dims, input types):

- **Work is attributed to one level.** Ops nest by time on their thread (``aten::linear`` →
  ``aten::addmm``; ``aten::conv2d`` → ``convolution`` → ``_convolution`` →
  ``mkldnn_convolution``). A *counted* op is the outermost op on its stack that either carries
  a ``flops`` argument (recorded ``with_flops=True``) or has a dispatcher-level formula
  (``tileprof.analyses.flops.PRIMARY``: ``mm``, ``addmm``, ``bmm``, ``convolution``,
  ``convolution_backward``, the attention entry points…); a composite op (``linear``,
  ``matmul``, ``conv2d``, ``scaled_dot_product_attention``) is counted only when nothing inside
  it is. Nothing inside or around a counted op is counted again, so each FLOP counts once.
- **Time.** A counted op owns every GPU event launched from inside it (through the
  correlation / External id chain); a GPU event under no counted op belongs to the op that
  launched it. In a trace with GPU events every row is GPU time: a call that launched
  nothing adds 0 µs, is counted in ``calls_without_gpu`` and is left out of ``time_us``'s
  divisor; its CPU duration is never used, so no GPU row mixes in CPU time. Only a CPU-only
  trace times an op by its own duration, with target ``CPU`` and no peak.
- **Work goes to the kernels that do it.** A call of an op with FLOPs (a formula or a
  ``flops`` argument) that launched a kernel doing matrix work gives its FLOPs and bytes to
  those kernels only: the GPU events whose own name says they move, convert, fill or
  transform data elementwise (``AUX_FAMILIES``: cuDNN's ``nchwToNhwcKernel``, a memset, a
  bias add) are counted apart, in ``aux_kernels`` and ``aux_us``, and left out of
  ``total_us`` and ``time_us``. A call none of whose kernels does matrix work keeps them all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import polars as pl

from tileprof.analyses.bytes_moved import op_bytes
from tileprof.analyses.flops import COMPOSITE, INT64_MAX, PRIMARY, Work, op_work
from tileprof.core.classify import DTYPES, OP_FAMILIES, dtype_from_torch_types, op_family
from tileprof.core.kineto import Args, CpuOp, Event, KinetoEvents
from tileprof.core.numbers import duration_us
from tileprof.core.peaks import peak_tflops
from tileprof.core.roofline import with_roofline

CPU_TARGET = "CPU"

OP_SCHEMA: dict[str, pl.DataType] = {
    "target": pl.String(),
    "source": pl.String(),
    "op": pl.String(),
    "op_family": pl.String(),
    "dtype": pl.String(),
    "input_dims": pl.String(),
    "input_types": pl.String(),
    "gemm_mnk": pl.String(),
    "causal": pl.Boolean(),
    "calls": pl.Int64(),
    "kernels": pl.Int64(),
    "calls_without_gpu": pl.Int64(),
    "aux_kernels": pl.Int64(),
    "aux_us": pl.Float64(),
    "flops": pl.Int64(),
    "total_flops": pl.Int64(),
    "flops_source": pl.String(),
    "time_us": pl.Float64(),
    "total_us": pl.Float64(),
    "tflops": pl.Float64(),
    "peak_tflops": pl.Float64(),
    "peak_fraction": pl.Float64(),
    "bytes": pl.Int64(),
    "arithmetic_intensity": pl.Float64(),
    "roofline_us": pl.Float64(),
    "bound": pl.String(),
    "roofline_fraction": pl.Float64(),
    "time_lost_us": pl.Float64(),
    "problem": pl.String(),
}
"""The op table's columns, in order; ``docs/runs.md`` defines each."""


@dataclass
class ParsedOps:
    """A trace's op rows and what a reader should be told about them."""

    frame: pl.DataFrame
    notes: list[str] = field(default_factory=list)
    calls: pl.DataFrame | None = None
    """One row per op call: its row's key (``target``, ``op``, ``input_dims``,
    ``input_types``), ``us`` (its GPU time) and ``without_gpu``: the evidence behind each
    row's time per call (``diff --per-op``'s significance)."""


@dataclass
class _Call:
    """One op call that becomes part of a row."""

    op: CpuOp
    work: Work | None
    source: str | None
    counted: bool
    gpu_us: float = 0.0
    kernels: int = 0
    aux_kernels: int = 0
    aux_us: float = 0.0
    device: int | None = None


AUX_FAMILIES: frozenset[str] = frozenset({"layout", "copy", "cast", "fill", "elementwise"})
"""Kernel families (from the kernel's own name, ``core.classify``) that do none of a FLOP op's
multiply-accumulates: beside a kernel of any other family, they are counted apart."""

Launched = list[tuple[int, Event, Args]]
"""The GPU events one op call owns: (index in ``traceEvents``, event, args), in file order."""


def _launched(
    events: KinetoEvents, ops: Sequence[CpuOp], owner: Sequence[int]
) -> tuple[dict[int, Launched], int]:
    """The GPU events each owning op call owns (by its index in ``ops``), and how many GPU
    events have no launching op in the trace."""
    by_ext = {op.external_id: i for i, op in enumerate(ops) if op.external_id is not None}
    launched: dict[int, Launched] = {}
    orphans = 0
    for index, ev, a in events.gpu:
        ext = events.launching_external_id(a, by_ext)
        if ext is None or ext not in by_ext:
            orphans += 1
            continue
        launched.setdefault(owner[by_ext[ext]], []).append((index, ev, a))
    return launched, orphans


def split_work(launched: Launched, has_flops: bool) -> tuple[Launched, Launched]:
    """(the events that do the call's work, the events counted apart): for a call of an op
    with FLOPs, the kernels of ``AUX_FAMILIES`` go apart when another kernel of the call does
    the matrix work; otherwise every event is work (module docstring)."""
    if not has_flops:
        return launched, []
    apart = [_kernel_family(ev.name) in AUX_FAMILIES for _, ev, _ in launched]
    if all(apart):
        return launched, []
    doing = [e for e, out in zip(launched, apart, strict=True) if not out]
    return doing, [e for e, out in zip(launched, apart, strict=True) if out]


@lru_cache(maxsize=4096)
def _kernel_family(name: str | None) -> str:
    """A kernel's family from its own name (a trace repeats few names many times)."""
    return op_family(name)


def op_rows(events: KinetoEvents) -> ParsedOps:
    """One row per (target, op, input dims, input types); see the module docstring."""
    ops, counted, owner = _ownership(events)
    calls: dict[int, _Call] = {}
    for i, op in enumerate(ops):
        if counted[i]:
            work, source = _work(op)
            calls[i] = _Call(op, work, source, True)
    launched, orphans = _launched(events, ops, owner)
    for o, owned in launched.items():
        call = calls.get(o)
        if call is None:
            call = calls[o] = _Call(ops[o], None, None, False)
        doing, aux = split_work(owned, call.work is not None)
        call.gpu_us = sum(ev.dur or 0.0 for _, ev, _ in doing)
        call.kernels = len(owned)
        call.aux_kernels = len(aux)
        call.aux_us = sum(ev.dur or 0.0 for _, ev, _ in aux)
        call.device = next((a.device for _, _, a in owned if a.device is not None), None)
    per_call = _per_call([c for _, c in sorted(calls.items())], events)
    frame = _rows(per_call, events.name)
    notes = _notes(frame, events.name)
    if orphans:
        notes.append(
            f"{events.name}: {orphans} GPU events have no launching CPU op in the trace "
            "and are in no op row"
        )
    keys = ["target", "op", "input_dims", "input_types", "us", "without_gpu"]
    return ParsedOps(frame, notes, per_call.select(keys))


def _ownership(events: KinetoEvents) -> tuple[list[CpuOp], list[bool], list[int]]:
    """The CPU ops in stack order, which are counted, and the op each one's GPU events
    belong to (the counted op it is inside, else itself)."""
    ops = sorted(events.cpu_ops, key=lambda o: (o.thread, o.ts, -o.dur, o.index))
    parent = _parents(ops)
    counted = _counted(ops, parent)
    owner = list(range(len(ops)))
    for i, p in enumerate(parent):
        if not counted[i] and p is not None and counted[owner[p]]:
            owner[i] = owner[p]
    return ops, counted, owner


def single_kernel_flops(events: KinetoEvents) -> dict[int, int]:
    """FLOPs of the GPU events that are the only one doing their op call's work (``split_work``:
    a layout transform or memset beside it does none), by the event's index in
    ``traceEvents``: the counted op's work per call (``op_rows``' own attribution). An op call
    whose work several events share gives none of them its FLOPs."""
    ops, counted, owner = _ownership(events)
    launched, _ = _launched(events, ops, owner)
    out = {}
    for o, owned in launched.items():
        work = _work(ops[o])[0] if counted[o] else None
        if work is None or work.flops is None:
            continue
        doing, _ = split_work(owned, True)
        if len(doing) == 1:
            out[doing[0][0]] = work.flops
    return out


def _parents(ops: Sequence[CpuOp]) -> list[int | None]:
    """Each op's innermost enclosing op on its thread (ops sorted by thread, start, -dur)."""
    parent: list[int | None] = [None] * len(ops)
    stack: list[int] = []
    for i, op in enumerate(ops):
        while stack and (
            ops[stack[-1]].thread != op.thread or op.ts >= ops[stack[-1]].ts + ops[stack[-1]].dur
        ):
            stack.pop()
        parent[i] = stack[-1] if stack else None
        stack.append(i)
    return parent


def _counted(ops: Sequence[CpuOp], parent: Sequence[int | None]) -> list[bool]:
    """Which ops carry work: the outermost candidate on each stack (module docstring)."""
    n = len(ops)
    candidate = [op.flops is not None or op.name in PRIMARY for op in ops]
    below = [False] * n  # a candidate somewhere inside
    for i in range(n - 1, -1, -1):
        p = parent[i]
        if p is not None and (candidate[i] or below[i]):
            below[p] = True
    counted = [False] * n
    covered = [False] * n  # inside a counted op
    for i, op in enumerate(ops):
        p = parent[i]
        covered[i] = p is not None and (covered[p] or counted[p])
        if not covered[i]:
            counted[i] = candidate[i] or (op.name in COMPOSITE and not below[i])
    return counted


def _work(op: CpuOp) -> tuple[Work | None, str | None]:
    """The op's work per call, and its source: the trace's ``flops`` or tileprof's formula."""
    formula = op_work(op.name, _list(op.input_dims), _list(op.concrete_inputs))
    if op.flops is not None:
        ok = type(op.flops) is int and 0 <= op.flops <= INT64_MAX
        if not ok:
            return Work(None, f"flops argument {op.flops!r} is not a count"), "trace"
        if formula is not None:
            return Work(op.flops, None, formula.gemm, formula.batch, formula.causal), "trace"
        return Work(op.flops), "trace"
    return formula, "formula"


def _list(value: Any) -> list[Any] | None:
    return value if isinstance(value, list) else None


def _gpu_target(events: KinetoEvents, device: int | None) -> str:
    """The target name of a GPU device: its ``deviceProperties`` name, else ``GPU n``."""
    if device is None:
        return "GPU"
    return events.devices.get(device, f"GPU {device}")


def _idle_target(events: KinetoEvents) -> str:
    """The target of a call that launched nothing in a GPU trace: the trace's one GPU device,
    or ``GPU`` when its events name several (such a call has no device of its own)."""
    devices = {a.device for _, _, a in events.gpu}
    return _gpu_target(events, devices.pop()) if len(devices) == 1 else "GPU"


def _per_call(calls: Sequence[_Call], events: KinetoEvents) -> pl.DataFrame:
    """One record per op call, in the calls' order (``_rows`` groups them)."""
    records: list[dict[str, Any]] = []
    gpu_trace = bool(events.gpu)
    idle = _idle_target(events) if gpu_trace else CPU_TARGET
    for c in calls:
        has_gpu = c.kernels > 0
        target = _gpu_target(events, c.device) if has_gpu else idle
        w = c.work
        moved = op_bytes(
            c.op.name, _list(c.op.input_dims), _list(c.op.input_type), _list(c.op.concrete_inputs)
        )
        records.append(
            {
                "target": target,
                "op": c.op.name,
                "input_dims": _json(c.op.input_dims),
                "input_types": _json(c.op.input_type),
                "gemm_mnk": "x".join(map(str, w.gemm)) if w and w.gemm else None,
                "causal": w.causal if w else None,
                "kernels": c.kernels,
                "aux_kernels": c.aux_kernels,
                "aux_us": c.aux_us,
                "without_gpu": (not has_gpu) if gpu_trace else None,
                "flops": w.flops if w else None,
                "flops_source": c.source if w and w.flops is not None else None,
                "bytes": moved.bytes if moved else None,
                "us": c.gpu_us if gpu_trace else c.op.dur,
                "problem": w.problem if w else None,
                "has_work": w is not None,
            }
        )
    frame = pl.DataFrame(
        records,
        schema={
            "target": pl.String,
            "op": pl.String,
            "input_dims": pl.String,
            "input_types": pl.String,
            "gemm_mnk": pl.String,
            "causal": pl.Boolean,
            "kernels": pl.Int64,
            "aux_kernels": pl.Int64,
            "aux_us": pl.Float64,
            "without_gpu": pl.Boolean,
            "flops": pl.Int64,
            "flops_source": pl.String,
            "bytes": pl.Int64,
            "us": pl.Float64,
            "problem": pl.String,
            "has_work": pl.Boolean,
        },
    )
    return frame


def _rows(frame: pl.DataFrame, name: str) -> pl.DataFrame:
    keys = ["target", "op", "input_dims", "input_types"]
    grouped = frame.group_by(keys, maintain_order=True).agg(
        pl.len().alias("calls"),
        pl.col("kernels").sum(),
        pl.col("aux_kernels").sum(),
        pl.col("aux_us").sum(),
        # null on a CPU-only trace, where no call is expected to launch GPU work
        pl.when(pl.col("without_gpu").is_not_null().all())
        .then(pl.col("without_gpu").cast(pl.Int64).sum())
        .alias("calls_without_gpu"),
        pl.col("flops").first(),
        pl.col("flops").null_count().alias("null_flops"),
        pl.col("flops_source").first(),
        pl.col("bytes").first(),
        pl.col("bytes").null_count().alias("null_bytes"),
        pl.col("gemm_mnk").first(),
        pl.col("causal").first(),
        pl.col("us").sum().alias("total_us"),
        pl.col("problem").drop_nulls().first(),
        pl.col("has_work").any(),
    )
    # Same op, dims and types give the same count; a row keeps a count only if every call has it.
    flops = pl.when(pl.col("null_flops") == 0).then(pl.col("flops"))
    total = flops.cast(pl.Float64) * pl.col("calls").cast(pl.Float64)
    # time per call that ran: calls that launched no GPU work have no GPU time to average
    calls_timed = pl.col("calls") - pl.col("calls_without_gpu").fill_null(0)
    timed = pl.when(calls_timed > 0).then(calls_timed)
    out = grouped.with_columns(
        flops.alias("flops"),
        pl.when(total <= INT64_MAX).then(flops * pl.col("calls")).alias("total_flops"),
        (pl.col("total_us") / timed).alias("time_us"),
        pl.lit(name).alias("source"),
    )
    types = [json.loads(t) if t else None for t in out["input_types"].to_list()]
    dtypes = [dtype_from_torch_types(t) for t in types]
    peaks = [
        peak_tflops(tg, dt) if tg != CPU_TARGET else None
        for tg, dt in zip(out["target"].to_list(), dtypes, strict=True)
    ]
    out = out.with_columns(
        pl.Series("dtype", dtypes, dtype=pl.String),
        pl.Series("op_family", [op_family(o) for o in out["op"].to_list()], dtype=pl.String),
        pl.Series("peak_tflops", peaks, dtype=pl.Float64),
        pl.when(pl.col("time_us") > 0)
        .then(pl.col("flops").cast(pl.Float64) / pl.col("time_us") / 1e6)
        .alias("tflops"),
    ).with_columns((pl.col("tflops") / pl.col("peak_tflops")).alias("peak_fraction"))
    out = out.with_columns(
        pl.when(pl.col("has_work") & pl.col("flops").is_null())
        .then(pl.col("problem"))
        .alias("problem")
    )
    out = with_roofline(out, flops=pl.col("flops"))
    out = out.sort(["total_us", "op"], descending=[True, False], maintain_order=True)
    return out.select([pl.col(c).cast(t) for c, t in OP_SCHEMA.items()])


def _json(value: Any) -> str | None:
    return None if value is None else json.dumps(value, separators=(",", ":"))


def work_notes(frame: pl.DataFrame, name: str) -> list[str]:
    """What an op row's work means where it is not the obvious: causal attention rows count
    the unmasked pairs only; kernels beside a FLOP op's work are counted apart. Said with the
    op table and with the run table its op rows join (``model.gather``)."""
    notes = []
    causal = frame.filter(pl.col("causal") & pl.col("flops").is_not_null())
    if causal.height:
        notes.append(
            f"{name}: {causal.height} causal attention rows count their products over the "
            "unmasked pairs only (half of them when Sq = Sk; torch's FlopCounterMode counts "
            "them in full): see their causal column"
        )
    apart = frame.filter(pl.col("aux_kernels") > 0)
    if apart.height:
        notes.append(
            f"{name}: {int(apart['aux_kernels'].sum())} GPU events of {apart.height} FLOP op "
            f"rows (layout transforms, copies, fills, elementwise) do none of their work: "
            f"{duration_us(float(apart['aux_us'].sum()))} counted apart (aux_us), not in their "
            "time or TFLOP/s"
        )
    return notes


def _notes(frame: pl.DataFrame, name: str) -> list[str]:
    notes = []
    bad = frame.filter(pl.col("problem").is_not_null())
    if bad.height:
        first = bad.row(0, named=True)
        notes.append(
            f"{name}: {int(bad['calls'].sum())} op calls ({bad.height} rows) have no work: "
            f"{first['op']}: {first['problem']}"
        )
    notes.extend(work_notes(frame, name))
    idle = frame.filter(pl.col("calls_without_gpu") > 0)
    if idle.height:
        notes.append(
            f"{name}: {int(idle['calls_without_gpu'].sum())} op calls ({idle.height} rows) "
            "launched no GPU work: they add 0 µs and are left out of time_us "
            "(calls_without_gpu)"
        )
    if frame.height == 0:
        notes.append(f"{name}: no op with known work or GPU time")
    return notes


def op_runs(frame: pl.DataFrame) -> pl.DataFrame:
    """The op rows that carry work (FLOPs or bytes) and GPU time, as rows of the run table
    (``per`` = call, ``mac`` = FLOPs / 2, ``shape`` = the GEMM's M×N×K or the input dims, with
    `` causal`` after a causal attention's), so that they can be linked with other targets'
    runs; the kernel rows keep their place."""
    from tileprof.core.run_schema import OP_ROW_SOURCE, runs_from_rows

    rows = []
    worked = frame.filter(
        (pl.col("flops").is_not_null() | pl.col("bytes").is_not_null())
        & (pl.col("time_us") > 0)
        & (pl.col("target") != CPU_TARGET)
    )
    for r in worked.iter_rows(named=True):
        flops = r["flops"]
        rows.append(
            {
                "target": r["target"],
                "target_kind": "gpu",
                "source": f"{r['source']}{OP_ROW_SOURCE}",
                "kernel": r["op"],
                "op_family": r["op_family"] if r["op_family"] in OP_FAMILIES else None,
                "dtype": r["dtype"] if r["dtype"] in DTYPES else None,
                # a causal attention row's FLOPs count the unmasked half: not the same work
                # as the same shape without the mask, and marked wherever the row is shown
                "shape": (r["gemm_mnk"] or r["input_dims"]) + (" causal" if r["causal"] else ""),
                "per": "call",
                "time_us": r["time_us"],
                "calls": r["calls"],
                "total_us": r["total_us"],
                "mac": flops // 2 if flops is not None and flops % 2 == 0 else None,
                "bytes": r["bytes"],
                "classify_hint": r["op"],
                "metadata": {
                    "row": "op",
                    "input_dims": r["input_dims"],
                    "input_types": r["input_types"],
                    "kernels": r["kernels"],
                    "flops_source": r["flops_source"],
                    **({"causal": r["causal"]} if r["causal"] is not None else {}),
                    **({"aux_us": r["aux_us"]} if r["aux_kernels"] else {}),
                },
            }
        )
    return runs_from_rows(rows)
