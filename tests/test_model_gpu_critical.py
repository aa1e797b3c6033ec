"""``critical``'s document on traces (``tileprof.model.gpu_critical``), whole and by hand
(issue 38: the mutants of the module that the commands' tests on real traces let through).

Each trace is built here: per step (``ProfilerStep#N``, 1,000 µs, the i-th of the trace's
steps from i × 1,000 µs) one thread of ops, each 2 µs apart, whose
launch call (1 µs, 1 µs into the op) queues its kernel on one stream; the kernels run back to
back from 100 µs into the step, and a cudaDeviceSynchronize waits from the last op's end to
1 µs past the last kernel. The path is then worked out by hand: the first op's 1 µs before
its launch (cpu), the first launch's 98 µs until its kernel starts (launch), every kernel
(gpu_compute) and the synchronize's 1 µs past the last kernel (sync).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from tests.samples import sample, write_dump
from tileprof.analyses.critical import Edit
from tileprof.inputs.sources import TRACE
from tileprof.model.gpu_critical import kernel_rooflines, read_trace, trace_critical

ROOT = Path(__file__).resolve().parent.parent
CLASSES = ("cpu", "host_gap", "launch", "gpu_compute", "gpu_comm", "kernel_gap", "sync")


def _trace(
    folder: Path,
    name: str,
    kernels: list[tuple[str, int]],
    steps: tuple[int, ...] = (1,),
    rank: int | None = None,
) -> Path:
    """A trace of ``steps``, each launching ``kernels`` (name, µs) as the module docstring
    says; with ``rank``, its ``distributedInfo``."""
    events: list[dict[str, Any]] = []
    for index, step in enumerate(steps):
        start = index * 1000
        events.append(
            {"ph": "X", "cat": "user_annotation", "name": f"ProfilerStep#{step}", "ts": start,
             "dur": 1000, "pid": 1, "tid": 1}
        )  # fmt: skip
        op, kernel = start + 1, start + 100
        for i, (kernel_name, duration) in enumerate(kernels):
            correlation = 100 * step + i
            events += [
                {"ph": "X", "cat": "cpu_op", "name": f"aten::op{i}", "ts": op, "dur": 2,
                 "pid": 1, "tid": 1},
                {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": op + 1,
                 "dur": 1, "pid": 1, "tid": 1, "args": {"correlation": correlation}},
                {"ph": "X", "cat": "kernel", "name": kernel_name, "ts": kernel, "dur": duration,
                 "pid": 0, "tid": 7,
                 "args": {"device": 0, "stream": 7, "correlation": correlation}},
            ]  # fmt: skip
            op, kernel = op + 2, kernel + duration
        events.append(
            {"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "ts": op,
             "dur": kernel + 1 - op, "pid": 1, "tid": 1}
        )  # fmt: skip
    document: dict[str, Any] = {"traceEvents": events}
    if rank is not None:
        document["distributedInfo"] = {"rank": rank, "world_size": 2, "backend": "nccl"}
    path = folder / name
    path.write_text(json.dumps(document))
    return path


def _classes(**ns: int) -> dict[str, int]:
    return {c: ns.get(c, 0) for c in CLASSES}


def _document(paths: list[Path], edits: list[Edit]) -> dict[str, Any]:
    reads = [read_trace(p) for p in paths]
    assert all(r is not None and r.kind == TRACE for r in reads)
    return trace_critical(reads, edits)  # type: ignore[arg-type]


def test_one_step_whole_with_a_what_if_and_the_ranked_candidates(tmp_path: Path) -> None:
    """Kernels z 30, y 30, x 10 and w 5 µs: a path of 1 + 98 + 75 + 1 = 175 µs. The
    candidates halve the first three kernels on the path (z, y, x: w is not tried), equal
    gains by name (scale:y before scale:z); no-launch leaves 1 + 75 + 1 = 77 µs. The what-if
    leaves out the on-time edit (a job's), but names it in the document's edits."""
    trace = _trace(tmp_path, "t.json", [("z", 30), ("y", 30), ("x", 10), ("w", 5)])
    edits = [Edit("no-launch"), Edit("on-time", match="1")]
    gpu = {"side": "gpu", "count": 1}
    expected_step = {
        "step": 1,
        "windowNs": 1_000_000,
        "pathNs": 175_000,
        "classesNs": _classes(cpu=1000, launch=98_000, gpu_compute=75_000, sync=1000),
        "droppedEdges": 0,
        "onPath": [
            {**gpu, "name": "z", "class": "launch", "pathNs": 98_000},
            {**gpu, "name": "y", "class": "gpu_compute", "pathNs": 30_000},
            {**gpu, "name": "z", "class": "gpu_compute", "pathNs": 30_000},
            {**gpu, "name": "x", "class": "gpu_compute", "pathNs": 10_000},
            {**gpu, "name": "w", "class": "gpu_compute", "pathNs": 5_000},
            {"side": "cpu", "name": "aten::op0", "class": "cpu", "pathNs": 1000, "count": 1},
        ],
        "whatIf": {
            "edits": ["no-launch"],
            "whatIfNs": 77_000,
            "gainNs": 98_000,
            "gainShare": 98 / 175,
            "classesNs": _classes(cpu=1000, gpu_compute=75_000, sync=1000),
            "notes": [],
        },
        "candidates": [
            {"edit": "no-launch", "whatIfNs": 77_000, "gainNs": 98_000},
            {"edit": "scale:y=0.5", "whatIfNs": 160_000, "gainNs": 15_000},
            {"edit": "scale:z=0.5", "whatIfNs": 160_000, "gainNs": 15_000},
            {"edit": "scale:x=0.5", "whatIfNs": 170_000, "gainNs": 5_000},
            {"edit": "no-host-gaps", "whatIfNs": 175_000, "gainNs": 0},
        ],
    }
    assert _document([trace], edits) == {
        "edits": ["no-launch", "on-time:1"],
        "traces": [
            {"trace": "t.json", "rank": None, "steps": [expected_step], "candidatesWithheld": []}
        ],
        "job": None,
    }
    # no edits: no what-if; an on-time edit alone: a what-if of no edit, gaining nothing
    plain = _document([trace], [])
    assert plain["edits"] == [] and plain["traces"][0]["steps"][0]["whatIf"] is None
    alone = _document([trace], [Edit("on-time", match="1")])["traces"][0]["steps"][0]
    assert alone["whatIf"] == {
        "edits": [],
        "whatIfNs": 175_000,
        "gainNs": 0,
        "gainShare": 0.0,
        "classesNs": expected_step["classesNs"],
        "notes": [],
    }


def test_the_path_lists_twenty_events(tmp_path: Path) -> None:
    """22 kernels of 300 down to 258 µs: 24 events on the path (with the first op's 1 µs and
    the first launch's 98 µs); the document lists the 20 longest, k00 to k19."""
    kernels = [(f"k{i:02d}", 300 - 2 * i) for i in range(22)]
    trace = _trace(tmp_path, "t.json", kernels)
    (step,) = _document([trace], [])["traces"][0]["steps"]
    assert step["pathNs"] == (1 + 98 + sum(d for _, d in kernels) + 1) * 1000
    assert [(e["name"], e["pathNs"]) for e in step["onPath"]] == [
        (f"k{i:02d}", (300 - 2 * i) * 1000) for i in range(20)
    ]


def test_two_ranks_share_the_steps_both_hold(tmp_path: Path) -> None:
    """Rank 0 holds steps 1 and 2 (kernels 50 + 40 µs: a path of 190 µs), rank 1 steps 2 and
    3 (70 + 60: 230 µs), no collective: the job has step 2 alone, whose path is rank 1's.
    no-launch takes rank 1's launch (230 - 98 = 132 µs); on-time:1 drops rank 1's arrivals,
    leaving rank 0's path without its launch (1 + 90 + 1 = 92 µs); on-time with no rank is
    rank 0's. Each trace's steps keep their windows (1,000 µs, the second from 1,000 µs)."""
    ranks = [
        _trace(tmp_path, "r0.json", [("a", 50), ("b", 40)], steps=(1, 2), rank=0),
        _trace(tmp_path, "r1.json", [("a", 70), ("b", 60)], steps=(2, 3), rank=1),
    ]
    document = _document(ranks, [Edit("no-launch"), Edit("on-time", match="1")])
    own = [
        (t["trace"], t["rank"], s["step"], s["windowNs"], s["pathNs"], s["whatIf"]["gainNs"])
        for t in document["traces"]
        for s in t["steps"]
    ]
    assert own == [
        ("r0.json", 0, 1, 1_000_000, 190_000, 98_000),
        ("r0.json", 0, 2, 1_000_000, 190_000, 98_000),
        ("r1.json", 1, 2, 1_000_000, 230_000, 98_000),
        ("r1.json", 1, 3, 1_000_000, 230_000, 98_000),
    ]
    measured = _classes(cpu=1000, launch=98_000, gpu_compute=130_000, sync=1000)
    job = {
        "step": 2,
        "pathNs": 230_000,
        "classesNs": measured,
        "ranksOnPath": [1],
        "collectives": 0,
        "droppedEdges": 0,
    }
    assert document["job"] == [
        {
            **job,
            "whatIf": {
                "whatIfNs": 92_000,
                "gainNs": 138_000,
                "classesNs": _classes(cpu=1000, gpu_compute=90_000, sync=1000),
                "notes": [],
            },
        }
    ]
    no_launch = _document(ranks, [Edit("no-launch")])["job"]
    rank_0_on_time = _document(ranks, [Edit("no-launch"), Edit("on-time")])["job"]
    expected = {
        "whatIfNs": 132_000,
        "gainNs": 98_000,
        "classesNs": _classes(cpu=1000, gpu_compute=130_000, sync=1000),
        "notes": [],
    }
    assert no_launch == rank_0_on_time == [{**job, "whatIf": expected}]
    assert _document(ranks, [])["job"] == [{**job, "whatIf": None}]
    # one rank alone is no job
    assert _document(ranks[:1], [Edit("no-launch")])["job"] is None


def test_read_trace_takes_traces_and_exports_only(tmp_path: Path) -> None:
    """A trace and an nsys export are read (the export whole), neither digested (no view of
    ``critical`` shows a sha256, and hashing costs a second pass over the bytes); a tile
    dump, a file of no known kind and a missing file are None."""
    trace = read_trace(_trace(tmp_path, "t.json", [("a", 1)]))
    assert trace is not None and trace.kind == TRACE
    export = read_trace(ROOT / "fixtures/real/h100_2gpu_1s.sqlite")
    assert export is not None and export.data is not None
    assert export.kind == "nsys SQLite export"
    assert trace.sha256 is None and export.sha256 is None
    assert read_trace(write_dump(tmp_path / "d.json", [sample(0, 0, 10, "a")])) is None
    (tmp_path / "x.txt").write_text("nothing known\n")
    assert read_trace(tmp_path / "x.txt") is None
    assert read_trace(tmp_path / "missing.json") is None


def test_kernel_rooflines_own_fraction_first_calls_default_to_one_and_no_zero_totals() -> None:
    """k3 has its own fraction 0.4 (launched by mm, it keeps its own); mm's row without a
    call count counts once: (1 × 1 + 2 × 3) / (6 + 10) = 0.4375 for k1; add: 3 × 2 / 12 =
    0.5 for k2; the op ``zero`` has no GPU time, so k4 has none. An empty run table, or one
    without roofline figures, gives none."""
    runs = pl.DataFrame(
        {
            "source": ["t: device 0"] * 4 + ["t: op rows"] * 4,
            "kernel": ["k1", "k2", "k3", "k4", "mm", "mm", "add", "zero"],
            "launch_op": ["mm", "add", "mm", "zero", None, None, None, None],
            "roofline_fraction": [None, None, 0.4, None, None, None, None, None],
            "roofline_us": [None] * 4 + [1.0, 2.0, 3.0, 1.0],
            "calls": [1, 1, 1, 1, None, 3, 2, 1],
            "total_us": [None] * 4 + [6.0, 10.0, 12.0, 0.0],
        },
        schema_overrides={"roofline_fraction": pl.Float64, "roofline_us": pl.Float64},
    )
    assert kernel_rooflines(runs) == {"k1": 0.4375, "k2": 0.5, "k3": 0.4}
    assert kernel_rooflines(runs.clear()) == {}
    assert kernel_rooflines(runs.drop("roofline_us")) == {}


def test_an_nsys_export_is_one_step_per_process_in_pid_order() -> None:
    """The real two-process export: per pid (111, then 112) one step of no number, no rank,
    whose window is that process's capture, from its first runtime call or GPU event to its
    last end (the reader's frames, filtered here by pid); the what-if's edits stated."""
    from tileprof.inputs.gpu.nsys_sqlite import host_calls, read_export

    export = ROOT / "fixtures/real/h100_2gpu_1s.sqlite"
    read = read_trace(export)
    assert read is not None
    document = trace_critical([read], [Edit("no-launch")])
    assert [(t["trace"], t["rank"]) for t in document["traces"]] == [
        ("h100_2gpu_1s.sqlite pid 111", None),
        ("h100_2gpu_1s.sqlite pid 112", None),
    ]
    assert document["edits"] == ["no-launch"] and document["job"] is None
    data = export.read_bytes()
    frames = [read_export(export, data).events, host_calls(export, data)]
    for trace in document["traces"]:
        pid = int(trace["trace"].rsplit(" ", 1)[1])
        spans = pl.concat(
            [f.filter(pl.col("pid") == pid).select("start_ns", "end_ns") for f in frames]
        )
        ((step,),) = [trace["steps"]]
        assert step["step"] is None
        assert step["windowNs"] == spans["end_ns"].max() - spans["start_ns"].min()  # type: ignore[operator]
        assert step["whatIf"]["edits"] == ["no-launch"]
        assert 0 < step["whatIf"]["gainNs"] == step["pathNs"] - step["whatIf"]["whatIfNs"]
