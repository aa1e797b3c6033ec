"""The critical path through one GPU step's dependency graph, and what-if re-timing of it
(docs/metrics.md, "GPU critical path").

The graph is HTA's (``critical_path_analysis``): every event has a start and an end node, and
edges run along each CPU thread's op nesting (op start → first child start, child end → next
child start, last child end → op end), from one top-level op to the next (a host gap), from a
runtime call's start to each GPU event it launched (correlation; a CUDA graph launch reaches
every kernel of its graph), along each stream (one event's end → the next one's start), and
from a GPU event that ended inside a blocking call (cudaDeviceSynchronize,
cudaStreamSynchronize, cudaEventSynchronize, cudaMemcpy, ...) to that call's end. A timing
edge weighs the time between its nodes; a kernel waits either on its launch (the stream was
idle when the call began: launch overhead) or on the event before it on its stream
(kernel-to-kernel gap), HTA's queue rule, and the other edge weighs 0 so that re-timing keeps
the order. A blocking call's last segment weighs 0 when a GPU event ended inside it: the wait
is the GPU's, reached through the sync edge.

Every edge goes forward in time, so the nodes sorted by time (ends before starts at one
instant) are a topological order, and the longest path is one sweep over the edges sorted by
their end node. Edges against that order (a kernel that starts before its launch call on a
skewed clock, two overlapping events of one stream) are left out and counted.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tileprof.core.gpu_events import comm_kind

CLASSES: tuple[str, ...] = (
    "cpu",
    "host_gap",
    "launch",
    "gpu_compute",
    "gpu_comm",
    "kernel_gap",
    "sync",
)
"""What bounds a part of the path (docs/metrics.md): CPU op time, the gap between two
top-level ops of a thread, a kernel's launch overhead (call start → kernel start on an idle
stream), GPU compute (kernels, copies, fills), communication kernels, the gap between two
events of a stream, and a blocking call's return after the GPU event it waited for."""

_CPU, _HOST_GAP, _LAUNCH, _COMPUTE, _COMM, _KERNEL_GAP, _SYNC = range(len(CLASSES))

BLOCKING_CALLS: frozenset[str] = frozenset(
    {
        "cudaDeviceSynchronize",
        "cudaStreamSynchronize",
        "cudaEventQuery",
        "cudaEventSynchronize",
        "cudaMemcpy",
        "cudaMemcpyAsync",
        "hipDeviceSynchronize",
        "hipStreamSynchronize",
        "hipEventSynchronize",
        "hipMemcpy",
        "hipMemcpyAsync",
        "hipMemcpyWithStream",
    }
)
"""Runtime calls that may block the host until GPU work ends (HTA's list, and HIP's names)."""

GRAPH_LAUNCH = ("cudaGraphLaunch", "hipGraphLaunch")
"""Runtime calls that launch a CUDA graph: every kernel of the graph shares their correlation."""


@dataclass(frozen=True)
class Graph:
    """One step's dependency graph: node 2i is event i's start, 2i+1 its end."""

    events: pl.DataFrame
    """The step's events: ``side`` (cpu, gpu), ``name``, ``lane`` (thread or device/stream),
    ``kind`` (op, runtime, kernel, comm, memcpy, memset), ``start_ns``, ``end_ns``."""
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    """Each edge's weight in ns (Int64)."""
    klass: np.ndarray
    """Each edge's class (an index into CLASSES)."""
    event: np.ndarray
    """The event each edge is attributed to (-1: none)."""
    dropped: int
    """Edges left out because they run against time order."""


@dataclass(frozen=True)
class Path:
    """The longest path of a graph under some edge weights."""

    length_ns: int
    edges: np.ndarray
    """Indices of the path's edges, in path order."""
    weights: np.ndarray
    """The weight of every edge of the graph the path was found under."""


def step_graph(host: pl.DataFrame, gpu: pl.DataFrame, *, hta: bool = False) -> Graph:
    """The dependency graph of one step's host events (``inputs.gpu.kineto_host`` rows) and
    GPU events (GPU event frame rows with ``correlation``). Events of no duration are left
    out (HTA leaves out CPU ones). ``hta``: HTA 0.5.0's graph, for comparing with it: host
    gaps weigh 0, no GPU → host sync edges (it takes them from ``cuda_sync`` events only),
    every blocking call's last segment weighs 0, and CUDA-graph kernels are left out (HTA
    #290)."""
    host = host.filter(pl.col("end_ns") > pl.col("start_ns"))
    gpu = gpu.filter(pl.col("end_ns") > pl.col("start_ns"))
    if hta:
        graph_calls = host.filter(pl.col("name").is_in(GRAPH_LAUNCH)).get_column("correlation")
        gpu = gpu.filter(~pl.col("correlation").is_in(graph_calls.implode(), nulls_equal=False))
    events = _event_table(host, gpu)
    ts = _node_times(events)
    order = node_order(events)
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    parts = [
        _gpu_edges(events, hta=hta),
        _sync_edges(events, hta=hta),
    ]
    src = np.concatenate([p[0] for p in parts])
    dst = np.concatenate([p[1] for p in parts])
    klass = np.concatenate([p[3] for p in parts])
    weight = np.concatenate([p[2] for p in parts])
    event = np.concatenate([p[4] for p in parts])
    synced = np.unique(dst[klass == _SYNC] // 2)
    cpu = _cpu_edges(events, ts, order, synced, hta=hta)
    src, dst = np.concatenate([cpu[0], src]), np.concatenate([cpu[1], dst])
    weight, klass = np.concatenate([cpu[2], weight]), np.concatenate([cpu[3], klass])
    event = np.concatenate([cpu[4], event])
    forward = position[src] < position[dst]
    keep = np.lexsort((klass, position[dst]))
    keep = keep[forward[keep]]
    return Graph(
        events,
        src[keep],
        dst[keep],
        np.maximum(weight[keep], 0),
        klass[keep],
        event[keep],
        int((~forward).sum()),
    )


def _event_table(host: pl.DataFrame, gpu: pl.DataFrame) -> pl.DataFrame:
    cpu = host.select(
        side=pl.lit("cpu"),
        name="name",
        lane="thread",
        kind="cat",
        start_ns="start_ns",
        end_ns="end_ns",
        correlation="correlation",
        stream_key=pl.lit(None, pl.String),
        process_group=pl.lit(None, pl.String),
        seq=pl.lit(None, pl.Int64),
    )
    lane = pl.format("{}/{}", pl.col("device"), pl.col("stream"))
    device = gpu.select(
        side=pl.lit("gpu"),
        name="name",
        lane=lane,
        kind=comm_kind(pl.col("kind"), pl.col("name")),
        start_ns="start_ns",
        end_ns="end_ns",
        correlation="correlation",
        stream_key=lane,
        process_group=_column(gpu, "process_group", pl.String),
        seq=_column(gpu, "seq", pl.Int64),
    )
    return pl.concat([cpu, device]).with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))


def _column(frame: pl.DataFrame, name: str, dtype: Any) -> pl.Expr:
    return pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype)


def _node_times(events: pl.DataFrame) -> np.ndarray:
    ts = np.empty(2 * events.height, dtype=np.int64)
    ts[0::2] = events.get_column("start_ns").to_numpy()
    ts[1::2] = events.get_column("end_ns").to_numpy()
    return ts


def node_order(events: pl.DataFrame) -> np.ndarray:
    """Nodes in a topological order: by time, ends before starts at one instant; among starts
    the host before the GPU and the longer event first (a parent before its child), among ends
    the GPU before the host and the later-started first (a child before its parent)."""
    n = events.height
    start = events.get_column("start_ns").to_numpy()
    end = events.get_column("end_ns").to_numpy()
    gpu = (events.get_column("side") == "gpu").to_numpy().astype(np.int64)
    ts = np.empty(2 * n, dtype=np.int64)
    is_start = np.zeros(2 * n, dtype=np.int64)
    side = np.empty(2 * n, dtype=np.int64)
    tie = np.empty(2 * n, dtype=np.int64)
    ts[0::2], ts[1::2] = start, end
    is_start[0::2] = 1
    side[0::2], side[1::2] = gpu, 1 - gpu
    tie[0::2], tie[1::2] = -(end - start), -start
    return np.lexsort((np.arange(2 * n), tie, side, is_start, ts))


def _cpu_edges(
    events: pl.DataFrame, ts: np.ndarray, order: np.ndarray, synced: np.ndarray, *, hta: bool
) -> tuple[np.ndarray, ...]:
    """Edges along each thread: consecutive nodes of its events in time order, each weighing
    the time between them; an end → start step at nesting depth 0 is a host gap."""
    side = events.get_column("side").to_numpy()
    cpu_nodes = order[side[order // 2] == "cpu"]
    lane = events.get_column("lane").to_numpy()[cpu_nodes // 2]
    by_lane = np.argsort(lane, kind="stable")
    nodes, lane = cpu_nodes[by_lane], lane[by_lane]
    opening = (nodes % 2 == 0).astype(np.int64)
    step = 2 * opening - 1
    same = lane[1:] == lane[:-1]
    starts = np.r_[0, np.flatnonzero(~same) + 1]
    depth = np.cumsum(step)
    depth -= np.repeat(np.r_[0, depth[starts[1:] - 1]], np.diff(np.r_[starts, nodes.size]))
    src, dst = nodes[:-1][same], nodes[1:][same]
    weight = ts[dst] - ts[src]
    gap = (src % 2 == 1) & (dst % 2 == 0) & (depth[:-1][same] == 0)
    klass = np.where(gap, _HOST_GAP, _CPU)
    names = events.get_column("name").to_numpy()
    blocking = np.isin(names[dst // 2], list(BLOCKING_CALLS)) & (dst % 2 == 1)
    zero = (blocking & np.isin(dst // 2, synced)) if not hta else blocking
    weight = np.where(zero | (gap & hta), 0, weight)
    attributed = _cpu_attribution(src, dst, nodes, depth, same)
    return src, dst, weight, klass, np.where(gap, -1, attributed)


def _cpu_attribution(
    src: np.ndarray, dst: np.ndarray, nodes: np.ndarray, depth: np.ndarray, same: np.ndarray
) -> np.ndarray:
    """The event an edge along a thread is attributed to (HTA's rule): a start → any edge to
    its source's event, an end → end edge to its target's, an end → start edge inside an op to
    the innermost op open there (the one opened last at that depth)."""
    if nodes.size == 0:
        return np.zeros(0, dtype=np.int64)
    position = np.arange(nodes.size)
    opens = nodes % 2 == 0
    level = np.where(opens, depth, -1)
    # the innermost op open after each node: the last op opened at the node's depth
    frame = pl.DataFrame({"pos": position, "level": level, "event": nodes // 2})
    opened = frame.filter(pl.col("level") >= 1)
    query = pl.DataFrame({"pos": position, "level": depth})
    lane_break = np.r_[0, np.cumsum(~same)]
    opened = opened.with_columns(lane=pl.Series(lane_break[opened.get_column("pos").to_numpy()]))
    query = query.with_columns(lane=pl.Series(lane_break))
    found = query.join_asof(
        opened, on="pos", by=["lane", "level"], strategy="backward", check_sortedness=False
    )
    inner = found.get_column("event").fill_null(-1).to_numpy()[:-1][same]
    return np.where(src % 2 == 0, src // 2, np.where(dst % 2 == 1, dst // 2, inner))


def _gpu_edges(events: pl.DataFrame, *, hta: bool) -> tuple[np.ndarray, ...]:
    """Each GPU event's own edge, its launch edge and its stream edge (HTA's queue rule); the
    edge the rule does not pick weighs 0, and with ``hta`` is left out (HTA 0.5.0 adds it
    only with an option)."""
    calls = events.filter(pl.col("side") == "cpu", pl.col("kind") == "runtime").select(
        "correlation", call="id", call_start="start_ns"
    )
    gpu = (
        events.filter(pl.col("side") == "gpu")
        .sort("stream_key", "start_ns", "id")
        .with_columns(
            prev=pl.col("id").shift(1).over("stream_key"),
            prev_end=pl.col("end_ns").shift(1).over("stream_key"),
        )
        .join(calls.unique("correlation", keep="first"), on="correlation", how="left")
    )
    own = gpu.get_column("id").to_numpy()
    kind = gpu.get_column("kind").to_numpy()
    start, end = gpu.get_column("start_ns").to_numpy(), gpu.get_column("end_ns").to_numpy()
    prev = gpu.get_column("prev").fill_null(-1).to_numpy()
    prev_end = gpu.get_column("prev_end").fill_null(np.iinfo(np.int64).min).to_numpy()
    call = gpu.get_column("call").fill_null(-1).to_numpy()
    call_start = gpu.get_column("call_start").fill_null(np.iinfo(np.int64).max).to_numpy()
    launched = (call >= 0) & ((prev < 0) | (prev_end < call_start))
    has_call, has_prev = call >= 0, prev >= 0
    if hta:
        has_call, has_prev = has_call & launched, has_prev & ~launched
    src = np.concatenate([2 * own, 2 * call[has_call], 2 * prev[has_prev] + 1])
    dst = np.concatenate([2 * own + 1, 2 * own[has_call], 2 * own[has_prev]])
    launch_w = np.where(launched, start - call_start, 0)[has_call]
    gap_w = np.where(launched, 0, start - prev_end)[has_prev]
    weight = np.concatenate([end - start, launch_w, gap_w])
    klass = np.concatenate(
        [
            np.where(kind == "comm", _COMM, _COMPUTE),
            np.full(int(has_call.sum()), _LAUNCH),
            np.full(int(has_prev.sum()), _KERNEL_GAP),
        ]
    )
    event = np.concatenate([own, own[has_call], prev[has_prev]])
    return src, dst, weight.astype(np.int64), klass.astype(np.int64), event


def _sync_edges(events: pl.DataFrame, *, hta: bool) -> tuple[np.ndarray, ...]:
    """From the last GPU event of each stream that was launched before a blocking call began
    (or whose launch the trace does not hold) and ended inside it, to the call's end, weighing
    the call's return after it."""
    empty = np.zeros(0, dtype=np.int64)
    if hta:
        return empty, empty, empty, empty, empty
    blocking = events.filter(
        pl.col("side") == "cpu", pl.col("name").is_in(list(BLOCKING_CALLS))
    ).select(call="id", call_start="start_ns", call_end="end_ns")
    gpu = events.filter(pl.col("side") == "gpu").select("id", "stream_key", "start_ns", "end_ns")
    launches = events.filter(pl.col("side") == "cpu", pl.col("kind") == "runtime").select(
        "correlation", launch_start="start_ns"
    )
    gpu = gpu.join(
        events.filter(pl.col("side") == "gpu").select("id", "correlation"), on="id"
    ).join(launches.unique("correlation", keep="first"), on="correlation", how="left")
    pairs = blocking.join_where(
        gpu, pl.col("end_ns") >= pl.col("call_start"), pl.col("end_ns") <= pl.col("call_end")
    ).filter(pl.col("launch_start").is_null() | (pl.col("launch_start") <= pl.col("call_start")))
    last = pairs.sort("end_ns").group_by("call", "stream_key").last()
    src = 2 * last.get_column("id").to_numpy() + 1
    dst = 2 * last.get_column("call").to_numpy() + 1
    weight = (last.get_column("call_end") - last.get_column("end_ns")).to_numpy()
    n = last.height
    return src, dst, weight, np.full(n, _SYNC, dtype=np.int64), np.full(n, -1, dtype=np.int64)


def longest_path(
    graph: Graph, weights: np.ndarray | None = None, ends: np.ndarray | None = None
) -> Path:
    """The longest path under ``weights`` (the measured ones by default): one sweep over the
    edges sorted by their target (a topological order); of equal ways into a node the first
    edge in that order (the lower class) is kept. ``ends``: the nodes a path may end at (every
    node by default)."""
    w = graph.weight if weights is None else weights
    nodes = 2 * graph.events.height
    if nodes == 0 or graph.src.size == 0:
        return Path(0, np.zeros(0, dtype=np.int64), w)
    dist = [0] * nodes
    pred = [-1] * nodes
    # One pass in topological order; per-step graphs hold thousands of edges.
    edges = zip(graph.src.tolist(), graph.dst.tolist(), w.tolist(), strict=True)
    for e, (u, v, weight) in enumerate(edges):
        d = dist[u] + weight
        if d > dist[v]:
            dist[v] = d
            pred[v] = e
    reach = np.array(dist, dtype=np.int64)
    if ends is not None:
        reach = np.where(ends, reach, np.iinfo(np.int64).min)
    node = last = int(np.argmax(reach))
    path: list[int] = []
    while pred[node] >= 0:
        path.append(pred[node])
        node = int(graph.src[pred[node]])
    return Path(int(reach[last]), np.array(path[::-1], dtype=np.int64), w)


def path_classes(graph: Graph, path: Path) -> dict[str, int]:
    """ns of the path in each class (CLASSES order); they add up to its length."""
    on = path.edges
    sums = np.bincount(graph.klass[on], weights=path.weights[on], minlength=len(CLASSES))
    return {name: int(np.rint(total)) for name, total in zip(CLASSES, sums, strict=True)}


def path_events(graph: Graph, path: Path) -> pl.DataFrame:
    """Per op or kernel name and class: ns on the path, largest first."""
    on = path.edges
    frame = pl.DataFrame(
        {
            "event": graph.event[on],
            "klass": graph.klass[on],
            "ns": path.weights[on],
        }
    ).filter(pl.col("event") >= 0)
    names = graph.events.select(event="id", name="name", side="side")
    return (
        frame.join(names, on="event", how="left")
        .with_columns(pl.col("klass").replace_strict(dict(enumerate(CLASSES))).alias("class"))
        .group_by("side", "name", "class")
        .agg(pathNs=pl.col("ns").sum().cast(pl.Int64), count=pl.col("event").n_unique())
        .filter(pl.col("pathNs") > 0)
        .sort(["pathNs", "name"], descending=[True, False])
    )


def path_frame(graph: Graph, path: Path) -> pl.DataFrame:
    """The path as spans: each edge's from and to time, class, weight and event name (for a
    critical-path track)."""
    on = path.edges
    ts = _node_times(graph.events)
    names = graph.events.get_column("name").to_numpy()
    event = graph.event[on]
    return pl.DataFrame(
        {
            "from_ns": ts[graph.src[on]],
            "to_ns": ts[graph.dst[on]],
            "class": [CLASSES[k] for k in graph.klass[on].tolist()],
            "ns": path.weights[on],
            "name": [names[e] if e >= 0 else None for e in event.tolist()],
        },
        schema={"from_ns": pl.Int64, "to_ns": pl.Int64, "class": pl.String, "ns": pl.Int64,
                "name": pl.String},
    )  # fmt: skip


def edited_weights(
    graph: Graph, edits: Sequence[Any], roofline: dict[str, float] | None = None
) -> tuple[np.ndarray, list[str]]:
    """The edge weights under ``edits`` (``analyses.critical.Edit``): ``scale`` multiplies the
    duration edges (CPU op time, GPU compute, communication) of the events whose name matches
    by the factor; ``roofline`` the matching GPU kernels' by their roofline fraction (at most
    1, ``_at_roofline``); ``no-launch``
    zeroes launch overhead; ``no-host-gaps`` zeroes host gaps. Notes name what matched
    nothing or does not apply to a GPU step."""
    weight = graph.weight.astype(np.float64)
    names = graph.events.get_column("name").to_numpy()
    edge_names = np.where(graph.event >= 0, names[np.maximum(graph.event, 0)], "")
    timed = np.isin(graph.klass, [_CPU, _COMPUTE, _COMM]) & (graph.event >= 0)
    notes: list[str] = []
    for edit in edits:
        if edit.kind == "no-launch":
            weight[graph.klass == _LAUNCH] = 0
        elif edit.kind == "no-host-gaps":
            weight[graph.klass == _HOST_GAP] = 0
        elif edit.kind == "roofline":
            notes += _at_roofline(graph, edit, roofline or {}, weight, edge_names)
        elif edit.kind == "scale":
            unique = sorted({str(n) for n in names})
            matched = [n for n in unique if fnmatch.fnmatchcase(n, edit.match)]
            if not matched:
                notes.append(f"{edit.describe()}: no op or kernel matches {edit.match!r}")
                continue
            chosen = timed & np.isin(edge_names, matched)
            weight[chosen] *= edit.factor
        elif edit.kind != "on-time":
            notes.append(f"{edit.describe()}: applies to tile dumps, not to a GPU step")
    return np.ceil(weight).astype(np.int64), notes


def _at_roofline(
    graph: Graph,
    edit: Any,
    roofline: dict[str, float],
    weight: np.ndarray,
    edge_names: np.ndarray,
) -> list[str]:
    """``roofline:GLOB`` in place on ``weight``: each GPU kernel whose name matches, at
    min(roofline fraction, 1) of its time where ``roofline`` knows it; the notes say what
    matched nothing and how many matching kernels have no roofline (left as they are)."""
    kernels = graph.events.filter(pl.col("side") == "gpu").get_column("name").unique().sort()
    matched = [n for n in kernels.to_list() if fnmatch.fnmatchcase(n, edit.match)]
    if not matched:
        return [f"{edit.describe()}: no kernel matches {edit.match!r}"]
    gpu = np.isin(graph.klass, [_COMPUTE, _COMM]) & (graph.event >= 0)
    unknown = [n for n in matched if n not in roofline]
    for name in (n for n in matched if n in roofline):
        weight[gpu & (edge_names == name)] *= min(float(roofline[name]), 1.0)
    if not unknown:
        return []
    shown = ", ".join(unknown[:3]) + (", …" if len(unknown) > 3 else "")
    return [
        f"{edit.describe()}: {len(unknown)} of {len(matched)} matching kernels have no "
        f"roofline, left as they are ({shown})"
    ]


@dataclass(frozen=True)
class StepPath:
    """One step's graph and its measured longest path."""

    step: int | None
    window: tuple[int, int]
    graph: Graph
    path: Path


def step_paths(
    host: pl.DataFrame,
    gpu: pl.DataFrame,
    windows: Sequence[tuple[int | None, int, int]],
    *,
    hta: bool = False,
) -> list[StepPath]:
    """The graph and longest path of each step window ``(step, start_ns, end_ns)`` (the
    CPU-side ``ProfilerStep#N``; the whole trace as one step when there is none): the host
    events that start in it and the GPU events whose launch call starts in it (HTA's
    clipping), and, but with ``hta``, the GPU events launched before the window that still
    run in it, from the window's start: the step waits for them too."""
    if not windows:
        first = min(_edge_of(host, "start_ns", min), _edge_of(gpu, "start_ns", min))
        last = max(_edge_of(host, "end_ns", max), _edge_of(gpu, "end_ns", max))
        windows = [(None, first, last)]
    found = []
    for step, lo, hi in windows:  # steps are few
        mine = host.filter(pl.col("start_ns").is_between(lo, hi))
        graph = step_graph(mine, _step_gpu(gpu, lo, hi, hta=hta), hta=hta)
        found.append(StepPath(step, (lo, hi), graph, longest_path(graph)))
    return found


def _step_gpu(gpu: pl.DataFrame, lo: int, hi: int, *, hta: bool) -> pl.DataFrame:
    launch = pl.coalesce("launch_start_ns", "start_ns")
    launched = gpu.filter(launch.is_between(lo, hi))
    if hta:
        return launched
    carried = gpu.filter(launch < lo, pl.col("end_ns") > lo).with_columns(
        start_ns=pl.max_horizontal("start_ns", pl.lit(lo, pl.Int64))
    )
    return pl.concat([carried, launched])


def _edge_of(frame: pl.DataFrame, column: str, pick: Any) -> int:
    values = frame.get_column(column).drop_nulls()
    return int(pick(values.to_list())) if values.len() else 0
