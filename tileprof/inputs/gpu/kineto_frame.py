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
from tileprof.core.kineto import Args, KinetoEvents, Launch

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
    ``index`` (the event's place in ``traceEvents``). The columns are gathered once and joined
    with the runtime calls in polars; only the communication kernels (few) have their NCCL
    parameters looked up one by one."""
    gpu = found.gpu
    events = pl.DataFrame(
        {
            "index": [i for i, _, _ in gpu],
            "device": [a.device if a.device is not None else _pid(e.pid) for _, e, a in gpu],
            "stream": [a.stream for _, _, a in gpu],
            "cat": [e.cat for _, e, _ in gpu],
            "ts": [e.ts for _, e, _ in gpu],
            "dur": [e.dur for _, e, _ in gpu],
            "name": [e.name for _, e, _ in gpu],
            "correlation": [a.correlation for _, _, a in gpu],
        },
        schema={"index": pl.Int64, "device": pl.Int64, "stream": pl.Int64, "cat": pl.String,
                "ts": pl.Float64, "dur": pl.Float64, "name": pl.String,
                "correlation": pl.Int64},
    )  # fmt: skip
    calls = pl.DataFrame(
        [(c, *call[:3]) for c, call in found.calls.items()],
        schema={"correlation": pl.Int64, "launch_name": pl.String,
                "launch_ts": pl.Float64, "launch_dur": pl.Float64},
        orient="row",
    ).select(
        "correlation", "launch_name", ns_of_us(pl.col("launch_ts")).alias("launch_start_ns"),
        (ns_of_us(pl.col("launch_ts")) + ns_of_us(pl.col("launch_dur"))).alias("launch_end_ns"),
    )  # fmt: skip
    kind = (
        pl.when(pl.col("cat") == "gpu_memcpy").then(pl.lit("memcpy"))
        .when(pl.col("cat") == "gpu_memset").then(pl.lit("memset"))
        .when(pl.col("name").str.contains(COMM_NAME.pattern)).then(pl.lit("comm"))
        .otherwise(pl.lit("kernel"))
    )  # fmt: skip
    start = ns_of_us(pl.col("ts"))
    frame = events.with_columns(
        kind.alias("kind"),
        start.alias("start_ns"),
        (start + ns_of_us(pl.col("dur"))).alias("end_ns"),
    )
    comm = frame.select(pl.arg_where((pl.col("kind") == "comm") & (pl.col("cat") == "kernel")))
    frame = (
        frame.join(calls, on="correlation", how="left", maintain_order="left")
        .sort("start_ns", "index")
        .join(_comm_frame(found, comm.to_series().to_list()), on="index", how="left",
              maintain_order="left")
    )  # fmt: skip
    return as_gpu_events(frame.drop("cat", "ts", "dur"))


def _pid(value: Any) -> int | None:
    """A ``pid`` that names a device: an integer the Int64 column holds."""
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _comm_frame(found: KinetoEvents, positions: list[int]) -> pl.DataFrame:
    """The NCCL parameters of the communication kernels (at ``positions`` of ``found.gpu``),
    by event index."""
    rows = []
    for position in positions:
        i, _, a = found.gpu[position]
        launch = found.calls.get(a.correlation) if a.correlation is not None else None
        rows.append({"index": i, **_comm_params(a, launch, found.comm_ops)})
    return pl.DataFrame(rows, schema={"index": pl.Int64(), **_COMM_COLUMNS})


def _comm_params(a: Args, launch: Launch | None, comm_ops: dict[int, Args]) -> dict[str, Any]:
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
