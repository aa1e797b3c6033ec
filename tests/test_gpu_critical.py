"""The critical path of GPU steps (issue 36): invariants on hypothesis-random steps, the
graph's edges on a hand-made step, and HTA's figures on the committed real traces."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
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
    step_graph,
    step_paths,
)
from tileprof.analyses.gpu_critical_ranks import job_graph, on_time
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
