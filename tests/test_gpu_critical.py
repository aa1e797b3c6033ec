"""The critical path of GPU steps (issue 36): invariants on hypothesis-random steps, the
graph's edges on a hand-made step, and HTA's figures on the committed real traces."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from tileprof.analyses.critical import Edit, load_edits, parse_edit
from tileprof.analyses.gpu_critical import (
    CLASSES,
    Graph,
    edited_weights,
    longest_path,
    path_classes,
    path_events,
    path_frame,
    step_graph,
    step_paths,
)
from tileprof.analyses.gpu_critical_ranks import JobGraph, job_graph, on_time
from tileprof.commands.cli import cli
from tileprof.inputs import read_bytes
from tileprof.inputs.gpu.kineto import read_events, step_rows
from tileprof.inputs.gpu.kineto_frame import event_frame
from tileprof.inputs.gpu.kineto_host import HOST_SCHEMA, cpu_step_windows, host_frame

ROOT = Path(__file__).resolve().parent.parent
HTA = json.loads((ROOT / "fixtures" / "hta" / "critical_path.json").read_text())


def _frames(steps: list[tuple[int, int, int, int, bool]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """A host thread of top-level ops, each (host gap, op time, GPU time, stream, sync): an
    op launches one kernel on its stream, or (sync) waits for every stream in a
    cudaDeviceSynchronize; kernels queue behind their stream's last one."""
    host: list[tuple[object, ...]] = []
    gpu: list[tuple[object, ...]] = []
    now, free = 0, {0: 0, 1: 0}
    for i, (gap, op, kernel, stream, sync) in enumerate(steps):
        start = now + gap
        if sync:
            end = max(start + op, *free.values()) + 1
            host.append((2 * i, "runtime", "cudaDeviceSynchronize", "1/1", start, end, None))
        else:
            end = start + op + 2
            host.append((2 * i, "op", f"aten::op{i % 3}", "1/1", start, end, None))
            host.append((2 * i + 1, "runtime", "cudaLaunchKernel", "1/1", start + 1, end - 1, i))
            k_start = max(start + 2, free[stream])
            free[stream] = k_start + kernel
            gpu.append((0, stream, "kernel", k_start, free[stream], f"k{i % 4}", i, start + 1))
        now = end
    host_frame_ = pl.DataFrame(host, schema=HOST_SCHEMA, orient="row")
    gpu_frame = pl.DataFrame(
        gpu,
        schema={"device": pl.Int64, "stream": pl.Int64, "kind": pl.String, "start_ns": pl.Int64,
                "end_ns": pl.Int64, "name": pl.String, "correlation": pl.Int64,
                "launch_start_ns": pl.Int64},
        orient="row",
    )  # fmt: skip
    return host_frame_, gpu_frame


def _busy(frame: pl.DataFrame, lane: list[str]) -> int:
    """The largest union of busy time of one lane (thread or stream)."""
    best = 0
    for _, part in frame.group_by(lane):
        spans = sorted(zip(part["start_ns"], part["end_ns"], strict=True))
        total, reach = 0, -(2**62)
        for a, b in spans:
            total += max(0, b - max(a, reach))
            reach = max(reach, b)
        best = max(best, total)
    return best


STEPS = st.lists(
    st.tuples(
        st.integers(0, 50),
        st.integers(1, 40),
        st.integers(1, 200),
        st.integers(0, 1),
        st.booleans(),
    ),
    min_size=1,
    max_size=30,
)


@given(STEPS)
@settings(max_examples=200, deadline=None)
def test_path_between_busiest_lane_and_step(steps: list[tuple[int, int, int, int, bool]]) -> None:
    host, gpu = _frames(steps)
    graph = step_graph(host, gpu)
    path = longest_path(graph)
    first = min(host["start_ns"].min(), *(gpu["start_ns"].to_list() or [10**18]))  # type: ignore[type-var]
    last = max(host["end_ns"].max(), *(gpu["end_ns"].to_list() or [0]))  # type: ignore[type-var]
    assert path.length_ns <= last - first
    assert path.length_ns >= _busy(host, ["thread"])
    if gpu.height:
        assert path.length_ns >= _busy(gpu, ["device", "stream"])
    assert sum(path_classes(graph, path).values()) == path.length_ns


@given(STEPS, st.floats(0, 0.99), st.integers(0, 3))
@settings(max_examples=200, deadline=None)
def test_scaling_off_the_path_gains_nothing(
    steps: list[tuple[int, int, int, int, bool]], factor: float, which: int
) -> None:
    host, gpu = _frames(steps)
    graph = step_graph(host, gpu)
    path = longest_path(graph)
    nothing, _ = edited_weights(graph, [Edit("scale", match="no-such-*", factor=factor)])
    assert longest_path(graph, nothing).length_ns == path.length_ns
    name = f"k{which}"
    names = graph.events["name"].to_numpy()
    on_path = {names[e] for e in graph.event[path.edges].tolist() if e >= 0}
    weights, _ = edited_weights(graph, [Edit("scale", match=name, factor=factor)])
    edited = longest_path(graph, weights).length_ns
    assert edited <= path.length_ns
    if name not in on_path:
        assert edited == path.length_ns


def test_edges_of_a_hand_made_step() -> None:
    """A launch on an idle stream is launch overhead; the next kernel, queued behind it, waits
    on the stream (kernel-to-kernel gap); the sync's wait is the GPU's."""
    host, gpu = _frames([(0, 10, 100, 0, False), (0, 10, 50, 0, False), (5, 1, 0, 0, True)])
    graph = step_graph(host, gpu)
    path = longest_path(graph)
    classes = path_classes(graph, path)
    assert classes["gpu_compute"] == 150
    assert classes["launch"] == 1  # the first kernel starts 1 ns after its launch call
    assert classes["sync"] == 1
    assert classes["host_gap"] == 0
    assert path.length_ns == gpu["end_ns"].max() + 1 - host["start_ns"].min()
    weights, _ = edited_weights(graph, [Edit("scale", match="k0", factor=0.5)])
    assert longest_path(graph, weights).length_ns == path.length_ns - 50


GPU_SCHEMA = {"device": pl.Int64, "stream": pl.Int64, "kind": pl.String, "start_ns": pl.Int64,
              "end_ns": pl.Int64, "name": pl.String, "correlation": pl.Int64,
              "launch_start_ns": pl.Int64}  # fmt: skip


def _host(rows: list[tuple[object, ...]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=HOST_SCHEMA, orient="row")


def _gpu(rows: list[tuple[object, ...]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=GPU_SCHEMA, orient="row")


HAND_STEP = [(0, 10, 100, 0, False), (0, 10, 50, 0, False), (5, 1, 0, 0, True)]
"""``_frames`` of it, by hand: aten::op0 [0, 12] with its launch call [1, 11] of k0 [2, 102];
aten::op1 [12, 24] with its call [13, 23] of k1, queued behind k0 on stream 0 at [102, 152];
cudaDeviceSynchronize [29, 153]. Its path: op0's start → call's start (1 ns, aten::op0) →
k0's start (launch, 1) → k0 (100) → k1's start (stream, 0) → k1 (50) → the sync's end (1)."""


def test_path_events_and_spans_of_the_hand_made_step() -> None:
    """The ops and kernels on the path per class, largest first (ties by name), the unattributed
    sync left out and the zero-weight stream edge dropped; the spans in path order."""
    host, gpu = _frames(HAND_STEP)
    graph = step_graph(host, gpu)
    path = longest_path(graph)
    assert path.length_ns == 153
    assert path_events(graph, path).to_dicts() == [
        {"side": "gpu", "name": "k0", "class": "gpu_compute", "pathNs": 100, "count": 1},
        {"side": "gpu", "name": "k1", "class": "gpu_compute", "pathNs": 50, "count": 1},
        {"side": "cpu", "name": "aten::op0", "class": "cpu", "pathNs": 1, "count": 1},
        {"side": "gpu", "name": "k0", "class": "launch", "pathNs": 1, "count": 1},
    ]
    spans = path_frame(graph, path)
    assert spans.rows() == [
        (0, 1, "cpu", 1, "aten::op0"),
        (1, 2, "launch", 1, "k0"),
        (2, 102, "gpu_compute", 100, "k0"),
        (102, 102, "kernel_gap", 0, "k0"),
        (102, 152, "gpu_compute", 50, "k1"),
        (152, 153, "sync", 1, None),
    ]
    schema = {"from_ns": pl.Int64, "to_ns": pl.Int64, "class": pl.String, "ns": pl.Int64,
              "name": pl.String}  # fmt: skip
    assert spans.schema == schema
    # a path of no edges keeps the columns' types (the trace's critical-path track is empty)
    empty = path_frame(graph, replace(path, edges=path.edges[:0]))
    assert empty.height == 0 and empty.schema == schema


def test_gpu_edits_by_hand_and_notes_for_what_does_not_apply() -> None:
    """no-launch takes the 1 ns launch off the hand-made step's path; no-host-gaps takes the
    5 ns gap before the sync off its CPU chain, not off the path; on-time (a job's edit) is no
    note on one step; the tile dumps' edits are."""
    host, gpu = _frames(HAND_STEP)
    graph = step_graph(host, gpu)
    weights, notes = edited_weights(graph, [Edit("no-launch")])
    edited = longest_path(graph, weights)
    assert notes == []
    assert edited.length_ns == 152
    assert path_classes(graph, edited)["launch"] == 0
    weights, notes = edited_weights(graph, [Edit("no-host-gaps"), Edit("on-time", match="1")])
    assert notes == []
    assert longest_path(graph, weights).length_ns == 153
    assert int(weights[graph.klass == CLASSES.index("host_gap")].sum()) == 0
    _, notes = edited_weights(graph, [Edit("balance"), Edit("no-exchange")])
    assert notes == [
        "balance: applies to tile dumps, not to a GPU step",
        "no-exchange: applies to tile dumps, not to a GPU step",
    ]


def test_roofline_notes_name_up_to_three_kernels_without_one() -> None:
    """Four kernels k0..k3 (``_frames``): three without a roofline are named in full, a fourth
    is elided; the ones with a roofline are taken at it and not named."""
    host, gpu = _frames([(0, 1, 10, 0, False)] * 4)
    graph = step_graph(host, gpu)
    _, notes = edited_weights(graph, [Edit("roofline", match="k[012]")], {})
    assert notes == [
        "roofline:k[012]: 3 of 3 matching kernels have no roofline, left as they are (k0, k1, k2)"
    ]
    _, notes = edited_weights(graph, [Edit("roofline", match="k*")], {})
    assert notes == [
        "roofline:k*: 4 of 4 matching kernels have no roofline, left as they are (k0, k1, k2, …)"
    ]
    weights, notes = edited_weights(graph, [Edit("roofline", match="k*")], {"k1": 0.25, "k3": 2})
    assert notes == [
        "roofline:k*: 2 of 4 matching kernels have no roofline, left as they are (k0, k2)"
    ]
    k1 = graph.events.filter(pl.col("name") == "k1")["id"].item()
    compute = graph.klass == CLASSES.index("gpu_compute")
    assert weights[compute & (graph.event == k1)].tolist() == [3]  # ceil(10 × 0.25)
    k3 = graph.events.filter(pl.col("name") == "k3")["id"].item()
    assert weights[compute & (graph.event == k3)].tolist() == [10]  # at most 1: as it is


def test_ties_between_host_and_gpu_nodes_keep_launch_and_sync_edges() -> None:
    """A kernel that starts at its launch call's start and a sync that returns when the kernel
    ends: the host start comes before the GPU's, the GPU end before the host's, so neither
    the launch edge nor the sync edge is dropped and the path runs through both."""
    host = _host(
        [
            (0, "runtime", "cudaLaunchKernel", "1/1", 0, 5, 1),
            (1, "runtime", "cudaDeviceSynchronize", "1/1", 6, 20, None),
        ]
    )
    graph = step_graph(host, _gpu([(0, 0, "kernel", 0, 20, "k", 1, 0)]))
    assert graph.dropped == 0
    # nodes: 2i is event i's start, 2i + 1 its end (the calls 0 and 1, the kernel 2)
    launch = graph.klass == CLASSES.index("launch")
    sync = graph.klass == CLASSES.index("sync")
    assert list(zip(graph.src[launch].tolist(), graph.dst[launch].tolist(), strict=True)) == [
        (0, 4)
    ]
    assert list(zip(graph.src[sync].tolist(), graph.dst[sync].tolist(), strict=True)) == [(5, 3)]
    path = longest_path(graph)
    assert path.length_ns == 20
    assert [CLASSES[k] for k in graph.klass[path.edges].tolist()] == ["gpu_compute", "sync"]


def test_blocking_calls_wait_for_their_own_streams_kernels() -> None:
    """cudaStreamSynchronize [6, 20] and [25, 40] on a thread; on stream 0 k0 [0, 20] ends
    inside the first and k2 [26, 35] (launched at 22) inside the second; on stream 1 k1
    [4, 50], launched before both, ends after both: each call waits for its own stream-0
    kernel, and k1 is no call's wait."""
    host = _host(
        [
            (0, "runtime", "cudaLaunchKernel", "1/1", 0, 1, 1),
            (1, "runtime", "cudaLaunchKernel", "1/1", 2, 3, 2),
            (2, "runtime", "cudaStreamSynchronize", "1/1", 6, 20, None),
            (3, "runtime", "cudaLaunchKernel", "1/1", 22, 23, 3),
            (4, "runtime", "cudaStreamSynchronize", "1/1", 25, 40, None),
        ]
    )
    gpu = _gpu(
        [
            (0, 0, "kernel", 0, 20, "k0", 1, 0),
            (0, 1, "kernel", 4, 50, "k1", 2, 2),
            (0, 0, "kernel", 26, 35, "k2", 3, 22),
        ]
    )
    graph = step_graph(host, gpu)
    assert graph.dropped == 0
    sync = graph.klass == CLASSES.index("sync")
    # nodes 2i + 1: the ends of k0 (event 5), the first call (2), k2 (7), the second call (4)
    edges = zip(graph.src[sync], graph.dst[sync], graph.weight[sync], strict=True)
    assert sorted((int(s), int(d), int(w)) for s, d, w in edges) == [(11, 5, 0), (15, 9, 5)]


def test_a_kernel_on_an_idle_stream_waits_on_its_launch_not_on_the_stream() -> None:
    """Thread 1/1: X [0, 5], whose call [1, 2] launches k1 [3, 40]; thread 1/2: Y [50, 80],
    whose call [60, 61] launches k2 [70, 100] on the same stream, idle since 40. k2's launch
    edge weighs 10 and its stream edge 0: the path is X's 1 ns, k1's 2 ns launch and 37 ns,
    then k2 from k1's end, 70 ns in all (the stream edge at 30 ns would make it 100)."""
    host = _host(
        [
            (0, "op", "X", "1/1", 0, 5, None),
            (1, "runtime", "cudaLaunchKernel", "1/1", 1, 2, 1),
            (2, "op", "Y", "1/2", 50, 80, None),
            (3, "runtime", "cudaLaunchKernel", "1/2", 60, 61, 2),
        ]
    )
    gpu = _gpu([(0, 0, "kernel", 3, 40, "k1", 1, 1), (0, 0, "kernel", 70, 100, "k2", 2, 60)])
    graph = step_graph(host, gpu)
    path = longest_path(graph)
    assert path.length_ns == 70
    classes = path_classes(graph, path)
    assert (classes["cpu"], classes["launch"], classes["gpu_compute"]) == (1, 2, 67)
    assert classes["kernel_gap"] == 0


def test_a_kernel_launched_before_the_step_counts_from_its_start() -> None:
    """k0, launched at 1 and running [3, 50], reaches into the step [20, 60]: the step waits
    for it from 20 (30 ns), then for k1 queued behind it (10 ns); HTA's clipping leaves k0
    out, and k1 then waits on its launch at 21 (29 ns)."""
    host = _host(
        [
            (0, "op", "aten::a", "1/1", 0, 10, None),
            (1, "runtime", "cudaLaunchKernel", "1/1", 1, 2, 1),
            (2, "op", "aten::b", "1/1", 20, 30, None),
            (3, "runtime", "cudaLaunchKernel", "1/1", 21, 22, 2),
        ]
    )
    gpu = _gpu([(0, 0, "kernel", 3, 50, "k0", 1, 1), (0, 0, "kernel", 50, 60, "k1", 2, 21)])
    (ours,) = step_paths(host, gpu, [(1, 20, 60)])
    assert ours.path.length_ns == 40
    assert path_classes(ours.graph, ours.path)["gpu_compute"] == 40
    (theirs,) = step_paths(host, gpu, [(1, 20, 60)], hta=True)
    assert theirs.path.length_ns == 40
    assert path_classes(theirs.graph, theirs.path)["launch"] == 29


def test_thread_edges_go_to_the_innermost_open_op() -> None:
    """Two top-level ops, each with two children: A [0, 100] (B [10, 50], C [60, 90]) and
    F [110, 200] (G [120, 150], H [160, 190]). By HTA's rule a start → edge is its source's, an
    end → end edge its target's, an end → start edge inside an op the innermost op open there:
    A holds 10 + 10 + 10 ns, B 40, C 30; F 10 + 10 + 10, G 30, H 30; the 10 ns between A and F
    is a host gap, no op's. On a thread of overlapping ops, P [0, 50] and Q [10, 100], the
    edge from P's end to Q's end is Q's."""
    names = ["A", "B", "C", "F", "G", "H"]
    spans = [(0, 100), (10, 50), (60, 90), (110, 200), (120, 150), (160, 190)]
    host = _host(
        [
            (i, "op", n, "1/1", a, b, None)
            for i, (n, (a, b)) in enumerate(zip(names, spans, strict=True))
        ]
    )
    graph = step_graph(host, _gpu([]))
    path = longest_path(graph)
    assert path.length_ns == 200
    on_path = {r["name"]: r["pathNs"] for r in path_events(graph, path).to_dicts()}
    assert on_path == {"A": 30, "B": 40, "C": 30, "F": 30, "G": 30, "H": 30}
    assert path_classes(graph, path)["host_gap"] == 10
    overlapping = _host([(0, "op", "P", "1/1", 0, 50, None), (1, "op", "Q", "1/1", 10, 100, None)])
    graph = step_graph(overlapping, _gpu([]))
    path = longest_path(graph)
    on_path = {r["name"]: r["pathNs"] for r in path_events(graph, path).to_dicts()}
    assert on_path == {"P": 10, "Q": 90}


def test_a_step_of_gpu_events_alone() -> None:
    """No host events (the step's calls outside the window): the path is the stream's kernels,
    k0 [2, 102] then k1 [102, 152] (``HAND_STEP``)."""
    host, gpu = _frames(HAND_STEP)
    graph = step_graph(host.clear(), gpu)
    path = longest_path(graph)
    assert path.length_ns == 150
    assert path_classes(graph, path)["gpu_compute"] == 150


def test_two_calls_of_one_correlation_launch_from_the_first() -> None:
    """Two runtime calls that carry one correlation: the kernel's launch edge is the first
    call's (1 ns before it starts), none from the second, which starts after it."""
    host = _host(
        [
            (0, "runtime", "cudaLaunchKernel", "1/1", 1, 2, 7),
            (1, "runtime", "cudaLaunchKernel", "1/1", 5, 6, 7),
        ]
    )
    graph = step_graph(host, _gpu([(0, 0, "kernel", 3, 10, "k", 7, 1)]))
    assert graph.dropped == 0
    launch = graph.klass == CLASSES.index("launch")
    assert list(zip(graph.src[launch].tolist(), graph.dst[launch].tolist(), strict=True)) == [
        (0, 4)
    ]
    assert longest_path(graph).length_ns == 9  # 2 ns launch + 7 ns kernel


def test_htas_graph_keeps_only_the_edge_the_queue_rule_picks() -> None:
    """Thread 1/1: B1 [0, 5], then B2 [60, 70], whose call [61, 62] launches kB [63, 95] on an
    idle stream. Thread 1/2: A [0, 100], whose call [90, 91] launches kA, queued behind kB at
    [95, 200]. HTA's graph weighs the host gap 0 and links kA to kB alone (its call began
    before kB ended): 5 + 0 + 1 + 2 (launch) + 32 + 0 + 105 = 145 ns. tileprof's weighs the gap
    (55 ns) and keeps kA's launch edge at 0: the path runs from 0 to kA's end, 200 ns."""
    host = _host(
        [
            (0, "op", "B1", "1/1", 0, 5, None),
            (1, "op", "B2", "1/1", 60, 70, None),
            (2, "runtime", "cudaLaunchKernel", "1/1", 61, 62, 1),
            (3, "op", "A", "1/2", 0, 100, None),
            (4, "runtime", "cudaLaunchKernel", "1/2", 90, 91, 2),
        ]
    )
    gpu = _gpu([(0, 0, "kernel", 63, 95, "kB", 1, 61), (0, 0, "kernel", 95, 200, "kA", 2, 90)])
    hta = step_graph(host, gpu, hta=True)
    path = longest_path(hta)
    assert path.length_ns == 145
    classes = path_classes(hta, path)
    assert (classes["launch"], classes["gpu_compute"], classes["host_gap"]) == (2, 137, 0)
    ours = step_graph(host, gpu)
    assert longest_path(ours).length_ns == 200


def _keyed_rank(kernels: list[tuple[int, int, str, str, int | None]]) -> Graph:
    """One rank's step: an op [0, 1000] whose launch calls (1 ns each from 1) launch the
    communication ``kernels`` (start, end, name, process group, seq) on one stream."""
    host = [(0, "op", "aten::step", "1/1", 0, 1000, None)]
    host += [
        (i + 1, "runtime", "cudaLaunchKernel", "1/1", 1 + i, 2 + i, i) for i in range(len(kernels))
    ]
    gpu = [
        {"device": 0, "stream": 0, "kind": "comm", "start_ns": a, "end_ns": b, "name": name,
         "correlation": i, "launch_start_ns": 1 + i, "process_group": group, "seq": seq}
        for i, (a, b, name, group, seq) in enumerate(kernels)
    ]  # fmt: skip
    schema = {**GPU_SCHEMA, "process_group": pl.String, "seq": pl.Int64}
    return step_graph(_host(host), pl.DataFrame(gpu, schema=schema))


def _matched(kernels: list[list[tuple[int, int, str, str, int | None]]]) -> set[tuple[str, ...]]:
    """The (rank, kernel) → (rank, kernel) pairs the job's collective edges join."""
    job = job_graph([_keyed_rank(k) for k in kernels], list(range(len(kernels))))
    names = job.graph.events["name"].to_numpy()
    cross = job.cross_source_rank >= 0
    return {
        (str(job.rank_of_node[s]), names[s // 2], str(job.rank_of_node[d]), names[d // 2])
        for s, d in zip(job.graph.src[cross].tolist(), job.graph.dst[cross].tolist(), strict=True)
    }


def test_ranks_match_collectives_by_process_group_and_seq() -> None:
    """Rank 0 runs ncclX (seq 7) then ncclY (seq 8) of one group, rank 1 only ncclY (seq 8):
    the trace's seq matches the two ncclY, not rank 0's first with rank 1's first. Rank 0 runs
    ncclA in group a then ncclB in group b, rank 1 only ncclB: the groups match the ncclB."""
    by_seq = _matched(
        [
            [(2, 10, "ncclX", "g", 7), (10, 20, "ncclY", "g", 8)],
            [(2, 30, "ncclY", "g", 8)],
        ]
    )
    assert by_seq == {("0", "ncclY", "1", "ncclY"), ("1", "ncclY", "0", "ncclY")}
    by_group = _matched(
        [
            [(2, 10, "ncclA", "a", None), (10, 20, "ncclB", "b", None)],
            [(2, 30, "ncclB", "b", None)],
        ]
    )
    assert by_group == {("0", "ncclB", "1", "ncclB"), ("1", "ncclB", "0", "ncclB")}


def test_ranks_match_collectives_without_group_or_seq_by_their_order_in_time() -> None:
    """No process group, no seq: the n-th collective in time on one rank is the n-th on the
    other, whatever order the kernels are listed in."""
    matched = _matched(
        [
            [(500, 600, "ncclB", None, None), (100, 200, "ncclA", None, None)],
            [(100, 250, "ncclA", None, None), (500, 650, "ncclB", None, None)],
        ]
    )
    assert matched == {
        ("0", "ncclA", "1", "ncclA"),
        ("1", "ncclA", "0", "ncclA"),
        ("0", "ncclB", "1", "ncclB"),
        ("1", "ncclB", "0", "ncclB"),
    }


def _cross(job: JobGraph) -> set[tuple[int, int, int, int, int]]:
    """Each collective edge: (its rank, from event, to event, weight, attributed event)."""
    cross = job.cross_source_rank >= 0
    g = job.graph
    return {
        (int(r), int(s) // 2, int(d) // 2, int(w), int(e))
        for r, s, d, w, e in zip(
            job.cross_source_rank[cross], g.src[cross], g.dst[cross], g.weight[cross],
            g.event[cross], strict=True,
        )
    }  # fmt: skip


def test_a_collective_edge_weighs_the_transfer_of_the_part_it_ends() -> None:
    """Rank 0's all-reduce runs [100, 400], rank 1's [300, 450]: the last arrival is 300, so
    rank 0's part transfers 100 ns and rank 1's 150. The edge from rank 0's start to rank 1's
    end weighs 150 and is rank 0's, attributed to rank 0's kernel; every other edge has
    no source rank (-1)."""
    job = job_graph(
        [_keyed_rank([(100, 400, "ncclA", "g", 1)]), _keyed_rank([(300, 450, "ncclA", "g", 1)])],
        [0, 1],
    )
    names = job.graph.events["name"].to_list()
    a0, a1 = [i for i, n in enumerate(names) if n == "ncclA"]
    assert _cross(job) == {(0, a0, a1, 150, a0), (1, a1, a0, 100, a1)}
    assert set(job.cross_source_rank[job.cross_source_rank < 0].tolist()) == {-1}
    g = job.graph
    own = (g.src // 2 == g.dst // 2) & (g.klass == 4)
    by_event = dict(zip((g.src[own] // 2).tolist(), g.weight[own].tolist(), strict=True))
    assert (by_event[a0], by_event[a1]) == (100, 150)
    assert job.collectives == 1 and job.graph.dropped == 0
    # each rank's first event (its step op, event 0 of its own graph) keeps its edges
    steps = {i for i, n in enumerate(names) if n == "aten::step"}
    assert len(steps) == 2 and steps <= set(g.event.tolist())


def test_an_edge_against_time_order_is_left_out_and_counted() -> None:
    """Rank 0's part [100, 200] ends before rank 1's [300, 400] starts (clocks apart): rank 1's
    edge to rank 0's end runs back in time and is dropped (counted); rank 0's part transfers
    nothing (not -100 ns). An edge from a start to an end at the same instant is not against
    time: it is not counted (the node order, ends before starts at one instant, leaves it out
    of the sweep; its weight, that part's transfer, is 0)."""
    apart = job_graph(
        [_keyed_rank([(100, 200, "ncclA", "g", 1)]), _keyed_rank([(300, 400, "ncclA", "g", 1)])],
        [0, 1],
    )
    assert apart.graph.dropped == 1
    assert {(r, w) for r, _, _, w, _ in _cross(apart)} == {(0, 100)}
    own = (apart.graph.src // 2 == apart.graph.dst // 2) & (apart.graph.klass == 4)
    assert sorted(apart.graph.weight[own].tolist()) == [0, 100]
    touching = job_graph(
        [_keyed_rank([(100, 300, "ncclA", "g", 1)]), _keyed_rank([(300, 400, "ncclA", "g", 1)])],
        [0, 1],
    )
    assert touching.graph.dropped == 0


def test_edges_against_time_order_are_found_in_integer_ns_at_epoch_times() -> None:
    """Traces stamped from the Unix epoch: at 2⁶⁰ ns a float64 cannot tell 1 ns apart, the
    int64 node times do (rank 1 starts 1 ns after rank 0's part ends)."""
    t = 2**60
    job = job_graph(
        [
            _keyed_rank([(t + 100, t + 200, "ncclA", "g", 1)]),
            _keyed_rank([(t + 201, t + 300, "ncclA", "g", 1)]),
        ],
        [0, 1],
    )
    assert job.graph.dropped == 1


def test_collectives_count_each_group_and_seq_once() -> None:
    """Two groups each with its seq 1, on both ranks: two collectives matched."""
    kernels = [(2, 10, "ncclA", "a", 1), (10, 20, "ncclB", "b", 1)]
    job = job_graph([_keyed_rank(kernels), _keyed_rank(kernels)], [0, 1])
    assert job.collectives == 2


def _trace_frames(trace: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    found = read_events(trace, read_bytes(ROOT / trace))
    return host_frame(found), event_frame(found)


def _window(trace: str, step: dict[str, object]) -> tuple[int, int, int]:
    """The window of the step HTA took: its CPU-side ``ProfilerStep#N`` (HTA shifts times, so
    the recording names the annotation and checks its duration)."""
    assert step["category"] == "user_annotation"
    found = read_events(trace, read_bytes(ROOT / trace))
    number = int(str(step["annotation"]).split("#")[1])
    steps = step_rows(found.frame)
    ((lo, hi),) = [(a, b) for _, n, a, b, src in steps if n == number and src == "cpu_step"]
    assert abs((hi - lo) - float(step["duration_us"])) < 1e-3  # type: ignore[arg-type]
    return number, round(lo * 1000), round(hi * 1000)


def test_length_and_shares_equal_htas() -> None:
    """HTA's graph (``hta=True``) on HTA's own windows: the length within 1%, each share
    within 2 points (HTA 0.5.0, HTA_DISABLE_NS_ROUNDING=1, tools/record_hta_critical_path.py)."""
    to_hta = {
        "cpu": "cpu_bound",
        "gpu_compute": "gpu_compute_bound",
        "gpu_comm": "gpu_communication_bound",
        "kernel_gap": "gpu_kernel_kernel_overhead",
        "launch": "gpu_kernel_launch_overhead",
    }
    compared = 0
    for trace, steps in HTA["traces"].items():
        host, gpu = _trace_frames(trace)
        for step in steps:
            (found,) = step_paths(host, gpu, [_window(trace, step)], hta=True)
            length = found.path.length_ns
            assert abs(length - step["length_us"] * 1000) <= 0.01 * step["length_us"] * 1000
            classes = path_classes(found.graph, found.path)
            for ours, theirs in to_hta.items():
                share = 100 * classes[ours] / length if length else 0.0
                assert abs(share - step["share_percent"].get(theirs, 0.0)) <= 2.0, (trace, ours)
            compared += 1
    assert compared >= 6
    assert set(CLASSES) >= set(to_hta)


def test_default_graph_counts_host_gaps_and_syncs() -> None:
    """The documented difference from HTA: tileprof's own graph weighs the host gaps between
    top-level ops (HTA weighs them 0) and links a blocking call to the GPU events that ended
    inside it (HTA only through Kineto's cuda_sync events, which these traces lack), and keeps
    the edge HTA's queue rule does not pick at weight 0 (so that re-timing keeps stream order
    and launch causality; HTA adds it only with an option); so its path is at least HTA's.
    On the NCCL trace HTA's path is the CPU chain alone, while tileprof's continues on the
    GPU through the zero-weight stream edges."""
    host, gpu = _trace_frames(
        "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"
    )
    found = read_events(
        "bert",
        read_bytes(ROOT / "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"),
    )
    windows = cpu_step_windows(found)
    (ours,) = step_paths(host, gpu, windows)
    (hta,) = step_paths(host, gpu, windows, hta=True)
    assert ours.path.length_ns >= hta.path.length_ns
    classes = path_classes(ours.graph, ours.path)
    assert classes["host_gap"] > 0
    assert np.all(ours.graph.weight >= 0)
    nccl = "fixtures/hta/nccl_2xA100_rank0.json.gz"
    host, gpu = _trace_frames(nccl)
    step = HTA["traces"][nccl][0]
    (ours,) = step_paths(host, gpu, [_window(nccl, step)])
    (theirs,) = step_paths(host, gpu, [_window(nccl, step)], hta=True)
    assert path_classes(theirs.graph, theirs.path)["gpu_compute"] == 0
    assert ours.path.length_ns > theirs.path.length_ns


BERT = "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"


def test_command_on_a_trace(tmp_path: Path) -> None:
    """``critical TRACE``: per step the path's ns per class adding up to it, a what-if that
    removes host gaps gains at most the host gaps on the measured path, and the candidates
    come largest gain first."""
    runner = CliRunner()
    args = ["critical", str(ROOT / BERT), "--format", "json", "--what-if", "no-host-gaps"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    ((step,),) = [t["steps"] for t in json.loads(result.stdout)["traces"]]
    assert step["step"] == 6
    assert sum(step["classesNs"].values()) == step["pathNs"]
    gain = step["whatIf"]["gainNs"]
    assert 0 < gain <= step["classesNs"]["host_gap"]
    gains = [c["gainNs"] for c in step["candidates"]]
    assert gains == sorted(gains, reverse=True)
    edits = tmp_path / "edits.toml"
    edits.write_text(
        '[[edit]]\nkind = "no-launch"\n[[edit]]\nkind = "scale"\nmatch = "*gemm*"\nfactor = 0\n'
    )
    text = runner.invoke(cli, ["critical", str(ROOT / BERT), "--edits", str(edits)])
    assert text.exit_code == 0, text.output
    assert "what-if no-launch + scale:*gemm*=0:" in text.output
    assert "largest gain first:" in text.output


def test_gpu_edits_parse_and_are_noted_on_tile_dumps() -> None:
    assert parse_edit("no-launch") == Edit("no-launch")
    assert parse_edit("no-host-gaps") == Edit("no-host-gaps")
    result = CliRunner().invoke(
        cli, ["critical", "--example", "--format", "json", "--what-if", "no-launch"]
    )
    assert result.exit_code == 0, result.output
    notes = json.loads(result.stdout)["notes"]
    assert any(n.startswith("no-launch: applies to GPU steps") for n in notes)


def _rank(kernels: list[tuple[int, int, str, str]]) -> Graph:
    """One rank's step: an op [0, 10] whose launch calls (1 ns each from 1) launch
    ``kernels`` (start, end, name, kind) on one stream."""
    host = [(0, "op", "aten::step", "1/1", 0, 10, None)]
    host += [
        (i + 1, "runtime", "cudaLaunchKernel", "1/1", 1 + i, 2 + i, i) for i in range(len(kernels))
    ]
    gpu = [(0, 0, kind, a, b, name, i, 1 + i) for i, (a, b, name, kind) in enumerate(kernels)]
    return step_graph(
        pl.DataFrame(host, schema=HOST_SCHEMA, orient="row"),
        pl.DataFrame(
            gpu,
            schema={"device": pl.Int64, "stream": pl.Int64, "kind": pl.String, "start_ns": pl.Int64,
                    "end_ns": pl.Int64, "name": pl.String, "correlation": pl.Int64,
                    "launch_start_ns": pl.Int64},
            orient="row",
        ),
    )  # fmt: skip


def test_a_stragglers_compute_is_on_the_jobs_path() -> None:
    """Rank 0 waits at an all-reduce for rank 1, whose 898 ns kernel comes first: the job's
    path runs through that kernel; on-time:1 leaves rank 0 its own 2 ns + 100 ns transfer;
    halving the straggler's kernel gains half of it."""
    waiting = _rank([(2, 1000, "ncclAllReduce", "comm")])
    straggler = _rank([(2, 900, "gemm", "kernel"), (900, 1000, "ncclAllReduce", "comm")])
    job = job_graph([waiting, straggler], [0, 1])
    assert job.collectives == 1
    measured = longest_path(job.graph)
    assert measured.length_ns == 1000
    names = job.graph.events["name"].to_numpy()
    assert "gemm" in {names[e] for e in job.graph.event[measured.edges].tolist() if e >= 0}
    weights, ends = on_time(job, job.graph.weight, 1)
    assert longest_path(job.graph, weights, ends).length_ns == 102
    halved, _ = edited_weights(job.graph, [Edit("scale", match="gemm", factor=0.5)])
    assert longest_path(job.graph, halved).length_ns == 1000 - 449


def test_trace_draws_the_critical_path_with_its_kernels(tmp_path: Path) -> None:
    """``trace --critical-path``: a track of the path's spans, its GPU spans at the times of
    the kernels they are (moved with the trace when targets are aligned)."""
    out = tmp_path / "t.json"
    args = ["trace", str(ROOT / BERT), "--critical-path", "-o", str(out)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    events = json.loads(out.read_text())["traceEvents"]
    path = [e for e in events if str(e.get("cat", "")).startswith("critical_")]
    gpu = ("kernel", "gpu_memcpy", "gpu_memset")
    kernels = {(e["ts"], e["dur"]) for e in events if e.get("cat") in gpu}
    compute = [e for e in path if e["cat"] == "critical_gpu_compute"]
    assert compute and all(
        (e["ts"], e["dur"]) in kernels for e in compute if e["name"].count("cutlass")
    )
    assert {e["cat"] for e in path} >= {"critical_cpu", "critical_host_gap", "critical_gpu_compute"}
    # one row, named for what it is (not "stream 0"), its slices without a device or stream
    ((pid, tid),) = {(e["pid"], e["tid"]) for e in path}
    rows = [e for e in events if e.get("ph") == "M" and e["name"] == "thread_name"]
    assert [e["args"]["name"] for e in rows if (e["pid"], e["tid"]) == (pid, tid)] == ["path"]
    assert not any({"device", "stream"} & set(e["args"]) for e in path)
    # a span of no event (a host gap, a sync) is named by its class, the others "class: event"
    assert {e["name"] for e in path if e["cat"] == "critical_host_gap"} == {"host_gap"}
    assert all(e["name"].startswith("gpu_compute: ") for e in compute)


def test_command_on_an_nsys_export() -> None:
    """An nsys SQLite export: per process (correlation ids are per process) the whole capture
    as one step, from its runtime calls (no CPU ops); the path at least the busiest stream."""
    export = ROOT / "fixtures/real/h100_2gpu_1s.sqlite"
    result = CliRunner().invoke(cli, ["critical", str(export), "--format", "json"])
    assert result.exit_code == 0, result.output
    traces = json.loads(result.stdout)["traces"]
    assert len(traces) == 2
    from tileprof.inputs.gpu.nsys_sqlite import host_calls, read_export

    events = read_export(export, export.read_bytes()).events
    calls = host_calls(export, export.read_bytes())
    for trace in traces:
        ((step,),) = [trace["steps"]]
        pid = int(trace["trace"].rsplit(" ", 1)[1])
        mine = events.filter(pl.col("pid") == pid, pl.col("end_ns") > pl.col("start_ns"))
        assert sum(step["classesNs"].values()) == step["pathNs"]
        assert _busy(mine, ["device", "stream"]) <= step["pathNs"]
        both = pl.concat(
            [
                mine.select("start_ns", "end_ns"),
                calls.filter(pl.col("pid") == pid).select("start_ns", "end_ns"),
            ]
        )
        assert step["pathNs"] <= both["end_ns"].max() - both["start_ns"].min()  # type: ignore[operator]


def test_ranks_of_one_job_on_the_command_line(tmp_path: Path) -> None:
    """Two ranks' traces: a job section per step both hold, with the collectives matched; on
    CPU-bound steps the job's path is the longer rank's; on-time reads from TOML too."""
    edits = tmp_path / "edits.toml"
    edits.write_text('[[edit]]\nkind = "on-time"\nrank = 1\n')
    assert load_edits(edits) == [Edit("on-time", match="1")]
    assert parse_edit("on-time:1") == Edit("on-time", match="1")
    ranks = [str(ROOT / f"fixtures/hta/sampled_rank-{r}.json.gz") for r in (0, 1)]
    result = CliRunner().invoke(
        cli, ["critical", *ranks, "--format", "json", "--edits", str(edits)]
    )
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    job = document["job"]
    assert [s["step"] for s in job] == [551, 552]
    for step in job:
        own = [
            s["pathNs"] for t in document["traces"] for s in t["steps"] if s["step"] == step["step"]
        ]
        assert step["collectives"] > 0
        # these steps are CPU-bound (no communication on either rank's path), so joining the
        # ranks at their collectives leaves the job's path the longer rank's
        assert step["classesNs"]["gpu_comm"] == 0
        assert step["pathNs"] == max(own)
        assert step["whatIf"]["gainNs"] >= 0


QWEN = "fixtures/tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
"""509 of its 1,707 GPU events have no launch in the trace: check kernel-without-launch fails,
and it undermines the ranking of edits (their gains depend on the launch edges)."""


def test_a_failed_capture_check_withholds_the_ranked_edits(tmp_path: Path) -> None:
    """The path and its parts are printed; the ranked edits are not, and each format says
    why. A passing trace beside it keeps its own; a --checks file that raises the rule's
    threshold to 600 events gives them back."""
    runner = CliRunner()
    trace = str(ROOT / QWEN)
    text = runner.invoke(cli, ["critical", trace, str(ROOT / BERT)])
    assert text.exit_code == 0, text.output
    why = (
        f"{trace}: check kernel-without-launch failed (509; first at $.traceEvents[10899]): "
        "509 of 1,707 GPU events have no runtime call of their correlation"
    )
    qwen, bert = text.stdout.split("Critical path of h100_gaunernst")
    assert f"  largest gain first: not given: {why}" in qwen.splitlines()
    assert "  largest gain first:" in bert.splitlines()
    assert "scale:" not in qwen and "scale:" in bert
    document = json.loads(runner.invoke(cli, ["critical", trace, "--format", "json"]).stdout)
    ((found,),) = [[t["candidatesWithheld"] for t in document["traces"]]]
    assert found == [why]
    assert document["traces"][0]["steps"][0]["candidates"]  # kept as data, with the reason
    page = tmp_path / "critical.html"
    assert (
        runner.invoke(cli, ["critical", trace, "--format", "html", "-o", str(page)]).exit_code == 0
    )
    html = page.read_text()
    assert "its single-edit gains are not given: a capture check of its input failed." in html
    assert "What would it gain? Not given, a capture check of this input failed:" in html
    assert "Single edits, largest gain first</caption>" not in html
    lenient = tmp_path / "checks.toml"
    lenient.write_text("[kernel-without-launch]\nallowed = 600\n")
    kept = runner.invoke(cli, ["critical", trace, "--checks", str(lenient)])
    assert "  largest gain first:" in kept.stdout.splitlines()


def test_a_trace_its_checks_cannot_read_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``critical`` reads a trace's capture checks from a second read of the file; a file
    that read fails on (changed or cut between the two reads) is the one-line error, exit 2,
    not a traceback and not a path shown without its checks."""
    from tileprof.core.errors import InputError
    from tileprof.model import integrity

    trace = Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "kineto_small.json"

    def cut(paths: object, checks: object) -> object:
        raise InputError(trace, "$.traceEvents[3]", "truncated: the file ends inside an event")

    monkeypatch.setattr(integrity, "check_files", cut)
    result = CliRunner().invoke(cli, ["critical", str(trace)])
    assert result.exit_code == 2
    assert result.output == (
        f"tileprof: error: {trace}: $.traceEvents[3]: truncated: the file ends inside an event\n"
    )


def test_the_drawn_critical_path_is_each_steps_path(tmp_path: Path) -> None:
    """``trace --critical-path`` of a trace of three steps draws each step's path: its spans
    take as long as the three paths ``critical`` reports (not one path over the capture)."""
    source = str(ROOT / "fixtures/hta/nccl_2xA100_rank0.json.gz")
    result = CliRunner().invoke(cli, ["critical", source, "--format", "json"])
    assert result.exit_code == 0, result.output
    ((trace,),) = [json.loads(result.stdout)["traces"]]
    assert len(trace["steps"]) == 3
    out = tmp_path / "t.json"
    result = CliRunner().invoke(cli, ["trace", source, "--critical-path", "-o", str(out)])
    assert result.exit_code == 0, result.output
    events = json.loads(out.read_text())["traceEvents"]
    spans = [e for e in events if str(e.get("cat", "")).startswith("critical_")]
    assert sum(round(e["dur"] * 1000) for e in spans) == sum(s["pathNs"] for s in trace["steps"])
    assert min(e["dur"] for e in spans) > 0  # the path's edges that take no time are not drawn


def test_a_path_edge_of_one_ns_is_drawn_and_one_of_none_is_not(tmp_path: Path) -> None:
    """Two kernels back to back on one stream, of 1 and 2 ns: the path is the first, the gap
    of 0 ns between them and the second; the two that take time are drawn, the gap is not."""

    def kernel(correlation: int, ts: float, dur: float) -> dict[str, object]:
        args = {"device": 0, "stream": 7, "correlation": correlation}
        return {"ph": "X", "cat": "kernel", "name": f"k{correlation}", "pid": 0, "tid": 7} | {
            "ts": ts,
            "dur": dur,
            "args": args,
        }

    source = tmp_path / "two.json"
    source.write_text(json.dumps({"traceEvents": [kernel(1, 10, 0.001), kernel(2, 10.001, 0.002)]}))
    out = tmp_path / "t.json"
    result = CliRunner().invoke(cli, ["trace", str(source), "--critical-path", "-o", str(out)])
    assert result.exit_code == 0, result.output
    events = json.loads(out.read_text())["traceEvents"]
    spans = [e for e in events if str(e.get("cat", "")).startswith("critical_")]
    drawn = [(e["name"], e["ts"], e["dur"]) for e in spans]
    assert drawn == [("gpu_compute: k1", 0.0, 0.001), ("gpu_compute: k2", 0.001, 0.002)]
