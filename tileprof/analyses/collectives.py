"""Ranks of one job: collectives matched across ranks, their bandwidth, skew and straggler.

Traces that carry ``distributedInfo`` with the same world size and backend are ranks of one
job. A communication kernel is one rank's part of a collective; parts are matched across
ranks by (process group, sequence number): the trace's ``Seq`` when it records one, else the
kernel's place among that rank's communication kernels of the same process group. Definitions
(message size, algorithm and bus bandwidth with nccl-tests' factors, start skew, straggler,
compute/communication overlap): docs/metrics.md, "Time breakdown: ranks of one job".
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tileprof.analyses.intervals import union_length
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GpuTimeline, us_of_ns

DTYPE_BYTES: dict[str, int] = {
    "Double": 8, "Float": 4, "Half": 2, "BFloat16": 2, "Long": 8, "Int": 4, "Short": 2,
    "Char": 1, "Byte": 1, "Bool": 1, "Float8_e4m3fn": 1, "Float8_e5m2": 1,
    "Float8_e4m3fnuz": 1, "Float8_e5m2fnuz": 1, "ComplexFloat": 8, "ComplexDouble": 16,
    "UInt16": 2, "UInt32": 4, "UInt64": 8,
}  # fmt: skip
"""Bytes per element of the ``dtype`` names PyTorch writes in ``record_param_comms``."""

_COLLECTIVE_WORDS: tuple[tuple[str, str], ...] = (
    ("allreduce", "all_reduce"),
    ("allgather", "all_gather"),
    ("reducescatter", "reduce_scatter"),
    ("alltoall", "all_to_all"),
    ("broadcast", "broadcast"),
    ("sendrecv", "send_recv"),
    ("send", "send_recv"),
    ("recv", "send_recv"),
    ("reduce", "reduce"),
)
"""Collective names as the args or kernel names spell them (``allreduce``, ``_allgather_base``,
``ncclKernel_AllReduce_RING_LL_Sum_float``), lower-cased without underscores, to one name."""


def bus_factor(collective: str, n: int | None) -> float | None:
    """nccl-tests' bus-bandwidth factor of ``collective`` over ``n`` ranks (PERFORMANCE.md of
    NVIDIA/nccl-tests): all_reduce 2(n−1)/n; all_gather, reduce_scatter, all_to_all (n−1)/n;
    broadcast, reduce and send/recv 1. None when it depends on an unknown ``n``."""
    if collective in ("broadcast", "reduce", "send_recv"):
        return 1.0
    if (
        n is None
        or n < 1
        or collective not in ("all_reduce", "all_gather", "reduce_scatter", "all_to_all")
    ):
        return None
    return (2.0 if collective == "all_reduce" else 1.0) * (n - 1) / n


def collective_kind(name: str | None) -> str | None:
    """The collective an args name or kernel name stands for, or None."""
    if not name:
        return None
    flat = re.sub(r"[^a-z]", "", name.lower())
    return next((kind for word, kind in _COLLECTIVE_WORDS if word in flat), None)


COLLECTIVE_SCHEMA: dict[str, pl.DataType] = {
    "job": pl.String(),
    "process_group": pl.String(),
    "seq": pl.Int64(),
    "collective": pl.String(),
    "ranks": pl.Int64(),
    "group_size": pl.Int64(),
    "dtype": pl.String(),
    "message_bytes": pl.Int64(),
    "time_us": pl.Float64(),
    "algbw_gbps": pl.Float64(),
    "busbw_gbps": pl.Float64(),
    "start_skew_us": pl.Float64(),
    "straggler_rank": pl.Int64(),
}
RANK_SCHEMA: dict[str, pl.DataType] = {
    "job": pl.String(),
    "rank": pl.Int64(),
    "trace": pl.String(),
    "collectives": pl.Int64(),
    "computation_us": pl.Float64(),
    "total_comm_us": pl.Float64(),
    "exposed_comm_us": pl.Float64(),
    "overlapped_comm_us": pl.Float64(),
    "comm_overlap": pl.Float64(),
}


@dataclass(frozen=True)
class Job:
    """The collectives of the ranks of one or more jobs, and each rank's overlap."""

    collectives: pl.DataFrame
    ranks: pl.DataFrame

    def to_document(self) -> dict[str, Any]:
        return {"collectives": self.collectives.to_dicts(), "ranks": self.ranks.to_dicts()}


@dataclass(frozen=True)
class RankPart:
    """One rank's share of ``jobs``, computed from its timeline alone (so that each trace can
    be read where it lies, ``model.engines``): its job, its communication kernels keyed for
    matching, and its rank row."""

    job: str
    rank: int
    trace: str
    comm: pl.DataFrame
    row: dict[str, Any]


def rank_part(timeline: GpuTimeline) -> RankPart | None:
    """``timeline``'s share of ``jobs``; None for a trace that names no rank."""
    if timeline.rank is None:
        return None
    info = timeline.rank
    job = f"{info.backend or 'job'}×{info.world_size}"
    comm = timeline.events.filter(pl.col("kind") == "comm").sort("start_ns")
    return RankPart(
        job, info.rank, timeline.name, _keyed(comm, job, info.rank), _rank_row(job, timeline)
    )


def jobs(timelines: Sequence[GpuTimeline]) -> Job:
    """The ranks among ``timelines`` (those with ``distributedInfo``) grouped into jobs."""
    return jobs_of([rank_part(t) for t in timelines])


def jobs_of(parts: Sequence[RankPart | None]) -> Job:
    """The jobs that the ranks' parts form, in the order of the parts (``None``: a trace that
    names no rank); a rank given twice in one job is an input error."""
    groups: dict[str, list[RankPart]] = {}
    for part in parts:
        if part is not None:
            groups.setdefault(part.job, []).append(part)
    frames = [_rank_parts(job, members) for job, members in groups.items()]
    ranks = [member.row for members in groups.values() for member in members]
    frame = pl.concat(frames) if frames else pl.DataFrame(schema=_PART_SCHEMA)
    return Job(_collectives(frame), pl.DataFrame(ranks, schema=RANK_SCHEMA))


_PART_SCHEMA: dict[str, pl.DataType] = {
    "job": pl.String(),
    "rank": pl.Int64(),
    "process_group": pl.String(),
    "seq": pl.Int64(),
    "collective": pl.String(),
    "group_size": pl.Int64(),
    "dtype": pl.String(),
    "message_bytes": pl.Int64(),
    "start_ns": pl.Int64(),
    "duration_us": pl.Float64(),
}


def _rank_parts(job: str, members: list[RankPart]) -> pl.DataFrame:
    """Every rank's communication kernels, keyed for matching: one row each."""
    seen: dict[int, str] = {}
    for member in members:
        if member.rank in seen:
            raise InputError(
                member.trace, "$.distributedInfo.rank",
                f"rank {member.rank} of the {job} job is given twice (also {seen[member.rank]})",
            )  # fmt: skip
        seen[member.rank] = member.trace
    return pl.concat([member.comm for member in members])


def _keyed(comm: pl.DataFrame, job: str, rank: int) -> pl.DataFrame:
    group = pl.col("process_group").fill_null("")
    ordinal = pl.int_range(pl.len()).over(group).cast(pl.Int64)
    label = _kind_expr(pl.coalesce("collective", "name"))
    size = pl.col("dtype").replace_strict(DTYPE_BYTES, default=None, return_dtype=pl.Int64)
    return comm.select(
        pl.lit(job).alias("job"),
        pl.lit(rank, pl.Int64).alias("rank"),
        group.alias("process_group"),
        pl.coalesce("seq", ordinal).alias("seq"),
        label.alias("collective"),
        "group_size",
        "dtype",
        (pl.max_horizontal("in_nelems", "out_nelems") * size).alias("message_bytes"),
        "start_ns",
        us_of_ns(pl.col("end_ns") - pl.col("start_ns")).alias("duration_us"),
    )


def _kind_expr(name: pl.Expr) -> pl.Expr:
    """``collective_kind`` as one polars expression (no per-row Python call)."""
    flat = name.str.to_lowercase().str.replace_all("[^a-z]", "")
    expr: pl.Expr = pl.lit(None, pl.String)
    for word, kind in reversed(_COLLECTIVE_WORDS):
        expr = pl.when(flat.str.contains(word, literal=True)).then(pl.lit(kind)).otherwise(expr)
    return expr


def _collectives(parts: pl.DataFrame) -> pl.DataFrame:
    """One row per matched collective: size, time, bandwidths, skew and straggler."""
    late = pl.col("start_ns").arg_max()
    grouped = (
        parts.group_by("job", "process_group", "seq", maintain_order=True)
        .agg(
            pl.col("collective").drop_nulls().first(),
            pl.len().cast(pl.Int64).alias("ranks"),
            pl.col("group_size").drop_nulls().first(),
            pl.col("dtype").drop_nulls().first(),
            pl.col("message_bytes").drop_nulls().first(),
            pl.col("duration_us").gather(late).first().alias("time_us"),
            us_of_ns(pl.col("start_ns").max() - pl.col("start_ns").min()).alias("start_skew_us"),
            pl.col("rank").gather(late).first().alias("straggler_rank"),
        )
        .sort("job", "process_group", "seq")
    )
    algbw = pl.col("message_bytes") / (pl.col("time_us") * 1e3)
    factors = [
        bus_factor(c, n) for c, n in zip(grouped["collective"], grouped["group_size"], strict=True)
    ]
    return (
        grouped.with_columns(
            pl.when(pl.col("time_us") > 0).then(algbw).alias("algbw_gbps"),
            pl.Series("factor", factors, dtype=pl.Float64),
        )
        .select(
            *[
                (pl.col("algbw_gbps") * pl.col("factor")).alias(c)
                if c == "busbw_gbps"
                else pl.col(c)
                for c in COLLECTIVE_SCHEMA
            ]
        )
        .cast(dict(COLLECTIVE_SCHEMA.items()))
    )


def _rank_row(job: str, timeline: GpuTimeline) -> dict[str, Any]:
    """One rank's computation, communication and how much of it computation hides."""
    events = timeline.events
    start = events.get_column("start_ns").to_numpy().astype(np.int64)
    end = events.get_column("end_ns").to_numpy().astype(np.int64)
    kind = events.get_column("kind").cast(pl.String).to_numpy().astype(str)
    compute = (kind == "kernel") | (kind == "memset")
    comm = kind == "comm"
    computation_ns = union_length(start[compute], end[compute])
    with_comm_ns = union_length(start[compute | comm], end[compute | comm])
    computation = computation_ns / 1000.0
    total_comm = union_length(start[comm], end[comm]) / 1000.0
    exposed = (with_comm_ns - computation_ns) / 1000.0
    assert timeline.rank is not None
    return {
        "job": job,
        "rank": timeline.rank.rank,
        "trace": timeline.name,
        "collectives": int(comm.sum()),
        "computation_us": computation,
        "total_comm_us": total_comm,
        "exposed_comm_us": exposed,
        "overlapped_comm_us": total_comm - exposed,
        "comm_overlap": (total_comm - exposed) / total_comm if total_comm > 0 else None,
    }
