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
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import msgspec
import polars as pl

from tileprof.analyses.bytes_moved import op_bytes
from tileprof.analyses.flops import COMPOSITE, INT64_MAX, PRIMARY, Work, op_work
from tileprof.core.classify import DTYPES, OP_FAMILIES, dtype_from_torch_types, op_family
from tileprof.core.kineto import (
    GPU_CATEGORIES,
    KinetoEvents,
    as_text,
    launch_external_ids,
    text_order,
)
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


AUX_FAMILIES: frozenset[str] = frozenset({"layout", "copy", "cast", "fill", "elementwise"})
"""Kernel families (from the kernel's own name, ``core.classify``) that do none of a FLOP op's
multiply-accumulates: beside a kernel of any other family, they are counted apart."""

_SIGNATURE = ["name", "input_dims", "input_type_raw", "concrete_inputs", "flops"]
"""The Kineto frame's columns that fix an op call's work, bytes and row key (``_signatures``)."""


@lru_cache(maxsize=4096)
def _kernel_family(name: str | None) -> str:
    """A kernel's family from its own name (a trace repeats few names many times)."""
    return op_family(name)


def op_rows(events: KinetoEvents) -> ParsedOps:
    """One row per (target, op, input dims, input types); see the module docstring."""
    ops = _ownership(events)
    launched, orphans = _launched(events, ops)
    per_call = _per_call(_calls(ops, launched), events)
    frame = _rows(per_call, events.name)
    notes = _notes(frame, events.name)
    if orphans:
        notes.append(
            f"{events.name}: {orphans} GPU events have no launching CPU op in the trace "
            "and are in no op row"
        )
    keys = ["target", "op", "input_dims", "input_types", "us", "without_gpu"]
    return ParsedOps(frame, notes, per_call.select(keys))


def _ownership(events: KinetoEvents) -> pl.DataFrame:
    """The CPU ops in stack order (by thread, start, longest first, place in the file), one
    row each: ``pos`` (the row), the op's ``index``, ``name``, ``dur``, ``external_id`` and
    signature (``_SIGNATURE``), ``parent``, which are ``counted`` and ``owner``, the op its GPU
    events belong to (the counted op it is inside, else itself). The nesting is one compiled
    walk (``tileprof_groups::nesting``); the threads are ordered as text without making text
    of each op's (``text_order``)."""
    import tileprof.core._native as compiled

    frame = events.frame
    ops = (
        frame.lazy()
        .filter(pl.col("cat") == "cpu_op")
        .select(
            "index",
            "name",  # Categorical, nulls kept: made text per call (``_per_call``)
            text_order(frame.get_column("thread")).alias("thread"),
            # + 0.0: a -0.0 sorts as Python's sort of the objects sorted it, equal to 0.0
            pl.col("ts").fill_null(0.0) + 0.0,
            pl.col("dur").fill_null(0.0) + 0.0,
            "external_id",
            *_SIGNATURE[1:],
        )
        .sort(["thread", "ts", "dur", "index"], descending=[False, False, True, False])
        .with_row_index("pos")
        .with_columns(pl.col("pos").cast(pl.Int64))
        .collect()
    )
    if ops.height == 0:
        return ops.drop("thread", "ts").with_columns(
            pl.lit(None, pl.Int64).alias("parent"),
            pl.lit(False).alias("counted"),
            pl.col("pos").alias("owner"),
        )
    walk = ops.select(
        pl.col("thread").rle_id().cast(pl.Int64).alias("thread"),
        "ts",
        "dur",
        (pl.col("flops").is_not_null() | pl.col("name").is_in(list(PRIMARY)).fill_null(False))
        .cast(pl.UInt8)
        .alias("candidate"),
        pl.col("name").is_in(list(COMPOSITE)).fill_null(False).cast(pl.UInt8).alias("composite"),
    ).rechunk()
    nesting = pl.DataFrame(compiled.op_nesting(walk))
    return ops.drop("thread", "ts").with_columns(nesting.get_columns())


def _launched(events: KinetoEvents, ops: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """The GPU events that an op call owns, in file order: ``index``, ``name``, ``dur``,
    ``device`` and ``owner`` (the owning op's ``pos``); and how many GPU events have no
    launching op in the trace. The launching op is the runtime call's External id where an op
    has it, else the event's own (``core.kineto.launch_external_ids``); of two ops with one
    External id, the later in stack order."""
    frame = events.frame
    by_ext = (
        ops.filter(pl.col("external_id").is_not_null())
        .select(pl.col("external_id").alias("ext"), "owner")
        .filter(pl.col("ext").is_last_distinct())  # unique(keep="last"), in order, faster
    )
    launches = launch_external_ids(frame, by_ext)
    gpu = (
        frame.filter(pl.col("cat").is_in(GPU_CATEGORIES))
        .select("index", "name", pl.col("dur") + 0.0, "device", "correlation", "external_id")
        .join(launches, on="correlation", how="left", maintain_order="left")
        .with_columns(ext=pl.coalesce("launch_ext", "external_id"))
        .join(by_ext, on="ext", how="left", maintain_order="left")
    )
    orphans = gpu.get_column("owner").null_count()
    owned = gpu.filter(pl.col("owner").is_not_null()).select(
        "index", "name", "dur", "device", "owner"
    )
    return owned, orphans


def _signatures(calls: pl.DataFrame) -> pl.DataFrame:
    """Per distinct signature (``_SIGNATURE``) of ``calls``: its work (``_work``) and bytes,
    and its row key's texts; each argument's JSON text is decoded once."""
    distinct = calls.select(_SIGNATURE).unique(maintain_order=True)
    decoded: dict[str | None, Any] = {None: None}
    records = []
    for name, dims_raw, types_raw, concrete_raw, flops_raw in distinct.iter_rows():
        for raw in (dims_raw, types_raw, concrete_raw, flops_raw):
            if raw not in decoded:
                decoded[raw] = msgspec.json.decode(raw)
        dims, types = decoded[dims_raw], decoded[types_raw]
        concrete, flops = decoded[concrete_raw], decoded[flops_raw]
        work, source = _work(name or "", dims, concrete, flops)
        moved = op_bytes(name or "", _list(dims), _list(types), _list(concrete))
        records.append(
            {
                "input_dims_text": _json(dims),
                "input_types": _json(types),
                "has_work": work is not None,
                "work_flops": work.flops if work else None,
                "work_source": source if work and work.flops is not None else None,
                "gemm_mnk": "x".join(map(str, work.gemm)) if work and work.gemm else None,
                "causal": work.causal if work else None,
                "problem": work.problem if work else None,
                "bytes": moved.bytes if moved else None,
            }
        )
    schema = {
        "input_dims_text": pl.String, "input_types": pl.String, "has_work": pl.Boolean,
        "work_flops": pl.Int64, "work_source": pl.String, "gemm_mnk": pl.String,
        "causal": pl.Boolean, "problem": pl.String, "bytes": pl.Int64,
    }  # fmt: skip
    return pl.concat([distinct, pl.DataFrame(records, schema=schema)], how="horizontal")


def _calls(ops: pl.DataFrame, launched: pl.DataFrame) -> pl.DataFrame:
    """One row per op call that becomes part of a row (a counted op, or an op that owns GPU
    events), in stack order: its signature's work (a counted call's only), its GPU events'
    count, time and device (``split_work``: the events counted apart are ``aux_``)."""
    owners = launched.get_column("owner").unique()
    calls = ops.filter(pl.col("counted") | pl.col("pos").is_in(owners.implode()))
    calls = calls.join(
        _signatures(calls), on=_SIGNATURE, how="left", nulls_equal=True, maintain_order="left"
    )
    work_of_counted = ["has_work", "work_flops", "work_source", "gemm_mnk", "causal", "problem"]
    calls = calls.with_columns(
        pl.when(pl.col("counted")).then(pl.col(c)).otherwise(pl.lit(None)).alias(c)
        for c in work_of_counted
    ).with_columns(pl.col("has_work").fill_null(False))
    return calls.join(
        _split(launched, calls.select(pl.col("pos").alias("owner"), "has_work")),
        left_on="pos",
        right_on="owner",
        how="left",
        maintain_order="left",
    )


def _split(launched: pl.DataFrame, has_work: pl.DataFrame) -> pl.DataFrame:
    """Per owning call: ``kernels``, ``aux_kernels``, ``gpu_us`` and ``aux_us`` (added one by
    one in file order, as the objects' sum added them) and ``device`` (the first event's that
    names one). A call with work sets apart its ``AUX_FAMILIES`` events unless all are."""
    names = launched.get_column("name").unique().drop_nulls().to_list()
    apart = [n for n in names if _kernel_family(n) in AUX_FAMILIES]
    events = launched.join(has_work, on="owner", how="left").with_columns(
        apart=pl.col("name").is_in(apart) & pl.col("has_work")
    )
    events = events.with_columns(
        aux=pl.col("apart") & ~pl.col("apart").all().over("owner"),
        few=pl.len().over("owner") <= 2,
    ).with_columns(
        doing_dur=pl.when(~pl.col("aux")).then(pl.col("dur")).otherwise(0.0),
        aux_dur=pl.when(pl.col("aux")).then(pl.col("dur")).otherwise(0.0),
    )
    counts = (pl.len().alias("kernels"), pl.col("aux").sum().cast(pl.Int64).alias("aux_kernels"))
    firsts = (
        pl.col("device").drop_nulls().first().alias("device"),
        pl.col("index").filter(~pl.col("aux")).alias("doing"),
    )
    # A sum of one or two durations is the same whichever way it is added (the other's
    # zeros add nothing: ``dur`` holds no -0.0), so only calls of three or more events take
    # the running sum, which makes a Series per call (70 MB each on the 626 MB trace).
    few = (
        events.filter("few")
        .group_by("owner")
        .agg(
            *counts,
            pl.when((~pl.col("aux")).any()).then(pl.col("doing_dur").sum()).alias("gpu_us"),
            pl.when(pl.col("aux").any()).then(pl.col("aux_dur").sum()).alias("aux_us"),
            *firsts,
        )
    )
    many = (
        events.filter(~pl.col("few"))
        .group_by("owner")
        .agg(
            *counts,
            pl.col("doing_dur").filter(~pl.col("aux")).cum_sum().last().alias("gpu_us"),
            pl.col("aux_dur").filter(pl.col("aux")).cum_sum().last().alias("aux_us"),
            *firsts,
        )
    )
    return pl.concat([few, many])


def single_kernel_flops(events: KinetoEvents) -> dict[int, int]:
    """FLOPs of the GPU events that are the only one doing their op call's work (``split_work``:
    a layout transform or memset beside it does none), by the event's index in
    ``traceEvents``: the counted op's work per call (``op_rows``' own attribution). An op call
    whose work several events share gives none of them its FLOPs."""
    ops = _ownership(events)
    launched, _ = _launched(events, ops)
    calls = _calls(ops, launched).filter(
        pl.col("work_flops").is_not_null(), pl.col("doing").list.len() == 1
    )
    pairs = calls.select(pl.col("doing").list.first(), "work_flops").iter_rows()
    return dict(pairs)


def _work(name: str, dims: Any, concrete: Any, flops: Any) -> tuple[Work | None, str | None]:
    """An op's work per call, and its source: the trace's ``flops`` or tileprof's formula."""
    formula = op_work(name, _list(dims), _list(concrete))
    if flops is not None:
        ok = type(flops) is int and 0 <= flops <= INT64_MAX
        if not ok:
            return Work(None, f"flops argument {flops!r} is not a count"), "trace"
        if formula is not None:
            return Work(flops, None, formula.gemm, formula.batch, formula.causal), "trace"
        return Work(flops), "trace"
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
    gpu = events.frame.filter(pl.col("cat").is_in(GPU_CATEGORIES))
    devices = gpu.get_column("device").unique().to_list()
    return _gpu_target(events, devices[0]) if len(devices) == 1 else "GPU"


def _per_call(calls: pl.DataFrame, events: KinetoEvents) -> pl.DataFrame:
    """One record per op call, in the calls' order (``_rows`` groups them)."""
    gpu_trace = events.frame.get_column("cat").is_in(GPU_CATEGORIES).any()
    idle = _idle_target(events) if gpu_trace else CPU_TARGET
    devices = calls.get_column("device").unique().drop_nulls().to_list()
    targets = pl.DataFrame(
        {"device": devices, "device_target": [_gpu_target(events, d) for d in devices]},
        schema={"device": pl.Int64, "device_target": pl.String},
    )
    has_gpu = pl.col("kernels").fill_null(0) > 0
    frame = calls.join(targets, on="device", how="left", maintain_order="left").select(
        pl.when(has_gpu)
        .then(pl.col("device_target").fill_null("GPU"))
        .otherwise(pl.lit(idle))
        .alias("target"),
        as_text("name").fill_null("").alias("op"),
        pl.col("input_dims_text").alias("input_dims"),
        "input_types",
        "gemm_mnk",
        "causal",
        pl.col("kernels").fill_null(0),
        pl.col("aux_kernels").fill_null(0),
        pl.col("aux_us").fill_null(0.0),
        (~has_gpu if gpu_trace else pl.lit(None, pl.Boolean)).alias("without_gpu"),
        pl.col("work_flops").alias("flops"),
        pl.col("work_source").alias("flops_source"),
        "bytes",
        (pl.col("gpu_us").fill_null(0.0) if gpu_trace else pl.col("dur")).alias("us"),
        "problem",
        "has_work",
    )
    return frame.cast(
        {"kernels": pl.Int64, "aux_kernels": pl.Int64, "aux_us": pl.Float64, "us": pl.Float64}
    )


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
