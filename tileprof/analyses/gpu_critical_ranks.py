"""The critical path of one step across the ranks of a job (docs/metrics.md, "GPU critical
path: ranks of one job").

Each rank's step graph (``analyses.gpu_critical``) is joined to the others' at every
collective: the communication kernels of the ranks are matched as ``breakdown`` matches them
(process group, and the trace's ``Seq`` or else the kernel's place among the rank's
communication kernels of that group in the step). A collective ends on a rank no earlier
than every rank has arrived: an edge runs from each rank's part start to every other rank's
part end, weighing that part's time after the last arrival (its transfer); a part's own edge
weighs the same, so a rank that waited at the collective reaches its end through the
straggler's arrival, and the straggler's compute is on its path. Clocks are taken as
synchronised; an edge against time order is left out and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import polars as pl

from tileprof.analyses.gpu_critical import Graph, node_order

_COMM = 4
"""``gpu_critical.CLASSES.index("gpu_comm")``."""
_NEVER = -(2**60)
"""A weight no longest path takes: an edge an edit removes."""


@dataclass(frozen=True)
class JobGraph:
    """The ranks' step graphs as one graph, with each node's rank and the collective edges."""

    graph: Graph
    rank_of_node: np.ndarray
    cross_source_rank: np.ndarray
    """Per edge: the rank whose arrival the edge carries (-1: not a collective edge)."""
    collectives: int
    """Collectives matched across every rank."""


def job_graph(graphs: Sequence[Graph], ranks: Sequence[int]) -> JobGraph:
    """The step graphs of ``ranks`` joined at their matched collectives."""
    offsets = np.cumsum([0, *(g.events.height for g in graphs)])
    events = pl.concat(
        [
            g.events.with_columns(rank=pl.lit(r, pl.Int64), id=pl.col("id") + int(o))
            for g, r, o in zip(graphs, ranks, offsets[:-1], strict=True)
        ]
    )
    src = np.concatenate([g.src + 2 * o for g, o in zip(graphs, offsets[:-1], strict=True)])
    dst = np.concatenate([g.dst + 2 * o for g, o in zip(graphs, offsets[:-1], strict=True)])
    weight = np.concatenate([g.weight for g in graphs])
    klass = np.concatenate([g.klass for g in graphs])
    event = np.concatenate(
        [np.where(g.event >= 0, g.event + o, -1) for g, o in zip(graphs, offsets[:-1], strict=True)]
    )
    parts = _parts(events, len(ranks))
    own = np.isin(src, 2 * parts["id"].to_numpy()) & (dst == src + 1) & (klass == _COMM)
    transfer = dict(zip(parts["id"].to_list(), parts["transfer"].to_list(), strict=True))
    weight = weight.copy()
    weight[own] = [transfer[int(e)] for e in (src[own] // 2).tolist()]
    cross = _cross_edges(parts)
    ts = np.empty(2 * events.height, dtype=np.int64)
    ts[0::2], ts[1::2] = events["start_ns"].to_numpy(), events["end_ns"].to_numpy()
    forward = ts[cross[0]] <= ts[cross[1]]
    src = np.concatenate([src, cross[0][forward]])
    dst = np.concatenate([dst, cross[1][forward]])
    weight = np.concatenate([weight, cross[2][forward]])
    klass = np.concatenate([klass, np.full(int(forward.sum()), _COMM)])
    event = np.concatenate([event, cross[0][forward] // 2])
    source_rank = np.concatenate([np.full(src.size - int(forward.sum()), -1), cross[3][forward]])
    order = _order(events, src, dst, klass)
    rank_of_node = np.repeat(events["rank"].to_numpy(), 2)
    dropped = sum(g.dropped for g in graphs) + int((~forward).sum())
    graph = Graph(
        events, src[order], dst[order], weight[order], klass[order], event[order], dropped
    )
    matched = parts.select("process_group", "seq").n_unique() if parts.height else 0
    return JobGraph(graph, rank_of_node, source_rank[order], matched)


def _parts(events: pl.DataFrame, ranks: int) -> pl.DataFrame:
    """Every rank's communication kernels matched into collectives held by every rank, with
    each part's transfer: its end after the last arrival."""
    comm = events.filter(pl.col("kind") == "comm").sort("rank", "start_ns")
    group = pl.col("process_group").fill_null("")
    ordinal = pl.int_range(pl.len()).over("rank", group).cast(pl.Int64)
    keyed = comm.with_columns(process_group=group, seq=pl.coalesce("seq", ordinal))
    key = ["process_group", "seq"]
    return keyed.filter(pl.col("rank").n_unique().over(key) == ranks).with_columns(
        transfer=(pl.col("end_ns") - pl.col("start_ns").max().over(key)).clip(0)
    )


def _cross_edges(parts: pl.DataFrame) -> tuple[np.ndarray, ...]:
    """From each part's start to every other rank's part end of the same collective."""
    left = parts.select("process_group", "seq", "id", "rank")
    right = parts.select("process_group", "seq", to="id", to_rank="rank", transfer="transfer")
    pairs = left.join(right, on=["process_group", "seq"]).filter(
        pl.col("rank") != pl.col("to_rank")
    )
    return (
        2 * pairs["id"].to_numpy(),
        2 * pairs["to"].to_numpy() + 1,
        pairs["transfer"].to_numpy(),
        pairs["rank"].to_numpy(),
    )


def _order(events: pl.DataFrame, src: np.ndarray, dst: np.ndarray, klass: np.ndarray) -> np.ndarray:
    """The edges sorted by their target's place in ``node_order``, then class (the order
    ``longest_path`` sweeps), without those against it."""
    order = node_order(events)
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    keep = np.lexsort((klass, position[dst]))
    return keep[position[src[keep]] < position[dst[keep]]]


def on_time(job: JobGraph, weights: np.ndarray, rank: int) -> tuple[np.ndarray, np.ndarray]:
    """``weights`` with ``rank``'s arrivals at the collectives no longer holding the others
    up, and the nodes the job's path may then end at (every other rank's)."""
    edited = np.where(job.cross_source_rank == rank, _NEVER, weights)
    return edited, job.rank_of_node != rank
