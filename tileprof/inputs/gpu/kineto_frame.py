"""The GPU event frame (``core.gpu_events``) of a PyTorch profiler (Kineto) trace, from the
one Kineto event model (``core.kineto.KinetoEvents``) that ``kineto.read_events`` fills.

Every GPU event (category ``kernel``, ``gpu_memcpy`` or ``gpu_memset``) with its launching
runtime call (the ``cuda_runtime`` or ``cuda_driver`` event of the same ``correlation``). A
kernel whose name holds ``nccl`` or ``rccl`` (any case) is communication, as TraceLens counts
it. Its NCCL parameters (``Collective name``, ``In msg nelems``, ``Out msg nelems``, ``Group
size``, ``dtype``, ``Process Group Name`` or ``pg_id``, ``Seq``) are read from the kernel's own
args, else from the ``record_param_comms`` CPU op that launched it (through the runtime call's
``External id``, else the kernel's).
"""

from __future__ import annotations

from typing import Any

import polars as pl

from tileprof.core.gpu_events import COMM_NAME, as_gpu_events, ns_of_us
from tileprof.core.kineto import (
    GPU_CATEGORIES,
    Args,
    KinetoEvents,
    comm_ops,
    runtime_calls,
    texts_matching,
)

_COMM_COLUMNS: dict[str, pl.DataType] = {
    "collective": pl.String(),
    "process_group": pl.String(),
    "seq": pl.Int64(),
    "in_nelems": pl.Int64(),
    "out_nelems": pl.Int64(),
    "group_size": pl.Int64(),
    "dtype": pl.String(),
}


def event_frame(found: KinetoEvents) -> pl.DataFrame:
    """The GPU event frame of a trace, in start order (file order among equal starts), then
    ``index`` (the event's place in ``traceEvents``). Made from the Kineto event frame in
    polars, joined with the runtime calls; only the communication kernels (few) have their
    NCCL parameters looked up one by one. The GPU rows are sorted before the runtime calls'
    columns join them, and only the calls that launched them are copied: on a 4 GB trace the
    copies held at once took 800 MB. A read for a timeline keeps ``name`` as the decoder's
    dictionary: the kernel names are matched as communication once each, and made text only
    in the frame returned."""
    # lazy: only these columns of the GPU rows are copied, not every column of the frame
    start = ns_of_us(pl.col("ts"))
    events = found.frame.lazy().filter(pl.col("cat").is_in(GPU_CATEGORIES)).select(
        "index", pl.coalesce("device", "pid").alias("device"), "stream", "cat", "name",
        "correlation", start.alias("start_ns"), (start + ns_of_us(pl.col("dur"))).alias("end_ns"),
    ).collect().sort("start_ns", "index")  # fmt: skip
    comm_names = texts_matching(events.get_column("name"), COMM_NAME.pattern)
    kind = (
        pl.when(pl.col("cat") == "gpu_memcpy").then(pl.lit("memcpy"))
        .when(pl.col("cat") == "gpu_memset").then(pl.lit("memset"))
        .when(pl.col("name").is_in(comm_names.implode())).then(pl.lit("comm"))
        .otherwise(pl.lit("kernel"))
    )  # fmt: skip
    events = events.with_columns(kind.alias("kind"))
    calls = _calls(found.frame, events.get_column("correlation"))
    comm = events.filter(pl.col("kind") == "comm")  # ``comm_kernels``: a kernel named so
    comm = comm.join(calls.select("correlation", "launch_ext"), on="correlation", how="left",
                     maintain_order="left")  # fmt: skip
    frame = events.join(
        calls.drop("launch_ext"), on="correlation", how="left", maintain_order="left"
    ).join(_comm_frame(found, comm), on="index", how="left", maintain_order="left")
    return as_gpu_events(frame.drop("cat"))


def _calls(frame: pl.DataFrame, launched: pl.Series) -> pl.DataFrame:
    """The runtime calls by ``correlation`` (the last of one correlation) of the
    correlations ``launched`` (the GPU events'), placed on the ns clock: those without a
    placeable start and end are left out (``runtime_calls``). Most runtime calls launch
    nothing (syncs, allocations, event records): they are not copied."""
    return (
        runtime_calls(frame)
        .filter(pl.col("correlation").is_in(launched.drop_nulls().implode()))
        .filter(pl.col("correlation").is_last_distinct())  # unique(keep="last"), in order
        .select(
            "correlation",
            pl.col("name").alias("launch_name"),
            ns_of_us(pl.col("ts")).alias("launch_start_ns"),
            (ns_of_us(pl.col("ts")) + ns_of_us(pl.col("dur"))).alias("launch_end_ns"),
            pl.col("external_id").alias("launch_ext"),
        )
        .collect()
    )


def _comm_frame(found: KinetoEvents, comm: pl.DataFrame) -> pl.DataFrame:
    """The NCCL parameters of the communication kernels (``comm``: their index and launching
    call's External id), by event index."""
    rows = []
    if comm.height:
        indices = comm.get_column("index").to_list()
        ops = found.frame.filter(comm_ops())
        op_indices = ops.get_column("index").to_list()
        args = found.args_of(indices + op_indices)
        by_ext = dict(zip(ops.get_column("external_id").to_list(), args[len(indices):],
                          strict=True))  # fmt: skip
        launch_exts = comm.get_column("launch_ext").to_list()
        own = args[: len(indices)]
        for i, a, launch_ext in zip(indices, own, launch_exts, strict=True):
            rows.append({"index": i, **_comm_params(a, launch_ext, by_ext)})
    return pl.DataFrame(rows, schema={"index": pl.Int64(), **_COMM_COLUMNS})


def _comm_params(a: Args, launch_ext: int | None, comm_ops: dict[int, Args]) -> dict[str, Any]:
    """The NCCL parameters of a communication kernel: its own args when they name the
    collective, else those of the ``record_param_comms`` op that launched it."""
    source = a
    if not isinstance(a.collective, str):
        for ext in (launch_ext, a.external_id):
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
