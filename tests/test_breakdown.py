"""``tileprof breakdown``: held to TraceLens' gpu_timeline.csv, idle causes, launch figures and
collectives across ranks (docs/metrics.md, "Time breakdown")."""

from __future__ import annotations

import csv
import dataclasses
import gzip
import json
import math
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tileprof.analyses.collectives import bus_factor, collective_kind, jobs
from tileprof.analyses.gpu_breakdown import KERNEL_WAIT_US, breakdown, concat_breakdowns
from tileprof.commands.cli import cli
from tileprof.core.gpu_events import GpuTimeline
from tileprof.inputs.timelines import load_timeline

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
TRACELENS = sorted((FIXTURES / "tracelens").glob("*.json.gz"))
HTA = FIXTURES / "hta"
REFERENCE_KEYS = {
    "computation_us": "computation_time",
    "exposed_comm_us": "exposed_comm_time",
    "exposed_memcpy_us": "exposed_memcpy_time",
    "busy_us": "busy_time",
    "idle_us": "idle_time",
    "total_us": "total_time",
    "total_comm_us": "total_comm_time",
    "total_memcpy_us": "total_memcpy_time",
}


_NS = ("start_ns", "end_ns", "launch_start_ns")
"""The GPU event frame's start, end and launch start (integer ns)."""


def _reference(trace: Path) -> dict[str, float]:
    folder = trace.parent / (trace.name.removesuffix(".json.gz") + "_reference")
    with open(folder / "gpu_timeline.csv", newline="") as handle:
        return {r["type"]: float(r["time ms"]) * 1000 for r in csv.DictReader(handle)}


@pytest.mark.parametrize("trace", TRACELENS, ids=lambda p: p.name[:30])
def test_profiler_step_matches_tracelens_gpu_timeline(trace: Path) -> None:
    """The ProfilerStep row of each trace is TraceLens' gpu_timeline.csv within 0.1%."""
    assert len(TRACELENS) == 6
    rows = breakdown([load_timeline(trace)]).rows
    step = rows.filter(pl.col("step").is_not_null())
    assert step.height == 1
    row = step.row(0, named=True)
    ref = _reference(trace)
    for mine, theirs in REFERENCE_KEYS.items():
        assert row[mine] == pytest.approx(ref[theirs], rel=1e-3, abs=1e-6), mine


def _gap_classes(
    events: list[tuple[float, float, float | None]], wait: float
) -> tuple[float, float, float]:
    """An independent, plain-Python reading of HTA's classes over the device's busy periods:
    (host wait, kernel wait, other)."""
    events = sorted(events, key=lambda e: (e[0], float("inf") if e[2] is None else e[2]))
    host = kernel = other = 0.0
    reach = events[0][1]
    for start, end, launch in events[1:]:
        if start > reach:
            gap = start - reach
            if launch is not None and launch > reach:
                host += gap
            elif gap < wait:
                kernel += gap
            else:
                other += gap
        reach = max(reach, end)
    return host, kernel, other


@pytest.mark.parametrize(
    "trace", [*TRACELENS, HTA / "sampled_rank-0.json.gz"], ids=lambda p: p.name[:30]
)
def test_idle_causes_add_up_and_match_a_plain_reading(trace: Path) -> None:
    timeline = load_timeline(trace)
    result = breakdown([timeline])
    for row in result.rows.iter_rows(named=True):
        parts = row["idle_host_wait_us"] + row["idle_kernel_wait_us"] + row["idle_other_us"]
        assert parts == pytest.approx(row["idle_us"], rel=1e-12, abs=1e-9)
        assert min(row["idle_host_wait_us"], row["idle_kernel_wait_us"]) >= 0
        assert row["idle_other_us"] >= -1e-6
    whole = result.rows.filter(pl.col("step").is_null()).row(0, named=True)
    assert whole["window_us"] == whole["total_us"]  # the whole trace's window: its events' span
    events = list(timeline.events.select(*_NS).iter_rows())  # ns: exact on epoch clocks
    wait_ns = result.kernel_wait_us * 1000
    host, kernel, other = _gap_classes(events, wait_ns)
    assert whole["idle_host_wait_us"] == pytest.approx(host / 1000, abs=1e-6)
    assert whole["idle_kernel_wait_us"] == pytest.approx(kernel / 1000, abs=1e-6)
    assert whole["idle_other_us"] == pytest.approx(other / 1000, abs=1e-6)
    streams = result.streams.filter(pl.col("step").is_null())
    for s in streams.iter_rows(named=True):
        total = s["idle_host_wait_us"] + s["idle_kernel_wait_us"] + s["idle_other_us"]
        assert total == pytest.approx(s["idle_us"], rel=1e-12, abs=1e-9)
        # each stream's own gaps, read plainly (HTA's per-stream view)
        mine = timeline.events.filter(
            pl.col("device").eq_missing(s["device"]), pl.col("stream").eq_missing(s["stream"])
        )
        host, kernel, other = _gap_classes(list(mine.select(*_NS).iter_rows()), wait_ns)
        assert s["idle_us"] == pytest.approx((host + kernel + other) / 1000, abs=1e-6)
        assert s["idle_host_wait_us"] == pytest.approx(host / 1000, abs=1e-6)
        assert s["idle_kernel_wait_us"] == pytest.approx(kernel / 1000, abs=1e-6)


def _x(cat: str, name: str, ts: float, dur: float, pid: int = 0, **args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": 7, "ts": ts, "dur": dur,
            "args": args}  # fmt: skip


def _kernel(ts: float, dur: float, corr: int, name: str = "gemm", **args: Any) -> dict[str, Any]:
    return _x("kernel", name, ts, dur, device=0, stream=7, correlation=corr, **args)


def _launch(
    ts: float, dur: float, corr: int, name: str = "cudaLaunchKernel", **args: Any
) -> dict[str, Any]:
    return _x("cuda_runtime", name, ts, dur, pid=100, correlation=corr, **args)


HAND_BUILT = {
    "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3"}],
    "traceEvents": [
        _x("gpu_user_annotation", "ProfilerStep#3", 0.0, 100.0),
        _launch(0.0, 5.0, 1), _kernel(10.0, 20.0, 1),   # delay 10
        _launch(40.0, 4.0, 2), _kernel(50.0, 3.0, 2),   # host wait 20; shorter than its launch
        _launch(45.0, 6.0, 3), _kernel(53.02, 10.0, 3),  # kernel wait 0.02
        _launch(47.0, 2.0, 4), _kernel(70.0, 5.0, 4),   # other 6.98
        _launch(76.0, 3.0, 5, "cudaMemcpyAsync"),
        _x("gpu_memcpy", "Memcpy DtoH", 80.0, 2.0, device=0, stream=7, correlation=5),  # host 5
    ],
}  # fmt: skip


def _write(tmp_path: Path, name: str, document: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_launch_figures_and_idle_causes_of_a_hand_built_trace(tmp_path: Path) -> None:
    timeline = load_timeline(_write(tmp_path, "t.json", HAND_BUILT))
    default = breakdown([timeline]).rows.filter(pl.col("step") == 3).row(0, named=True)
    assert default["idle_kernel_wait_us"] == pytest.approx(7.0)  # 0.02 and 6.98 < 30 µs
    assert default["idle_other_us"] == pytest.approx(0.0, abs=1e-9)
    result = breakdown([timeline], kernel_wait_us=0.03)
    step = result.rows.filter(pl.col("step") == 3).row(0, named=True)
    assert step["busy_us"] == pytest.approx(40.0)
    assert step["total_us"] == pytest.approx(72.0)
    assert step["idle_us"] == pytest.approx(32.0)
    assert step["idle_host_wait_us"] == pytest.approx(25.0)
    assert step["idle_kernel_wait_us"] == pytest.approx(0.02)
    assert step["idle_other_us"] == pytest.approx(6.98)
    assert step["window_us"] == pytest.approx(100.0)
    assert step["computation_us"] == pytest.approx(38.0)
    assert step["exposed_memcpy_us"] == pytest.approx(2.0)
    launch = result.launches.filter(pl.col("step") == 3).row(0, named=True)
    assert (launch["kernels"], launch["launched"], launch["shorter_than_launch"]) == (4, 4, 1)
    assert launch["launch_us_mean"] == pytest.approx(4.25)
    assert (launch["launch_us_p50"], launch["launch_us_p95"]) == (4.0, 6.0)
    assert launch["launch_delay_us_p50"] == pytest.approx(10.0)
    assert launch["launch_delay_us_p95"] == pytest.approx(23.0)
    assert launch["launch_delay_us_max"] == pytest.approx(23.0)
    none = breakdown([load_timeline(tmp_path / "t.json")], kernel_wait_us=0.0).rows.row(
        0, named=True
    )
    assert none["idle_kernel_wait_us"] == 0.0
    assert none["idle_other_us"] == pytest.approx(7.0)


def test_kernels_that_start_before_a_step_count_cut_to_it(tmp_path: Path) -> None:
    """A step reads the kernels that start before it and run into it (cut to the step), the
    longest one too, and none that end before it or start at its end."""
    document = {
        "deviceProperties": HAND_BUILT["deviceProperties"],
        "traceEvents": [
            _x("gpu_user_annotation", "ProfilerStep#4", 100.0, 100.0),
            _kernel(0.0, 10.0, 1),  # ends before the step
            _kernel(95.0, 10.0, 2),  # 5 µs inside
            _kernel(1.0, 1000.0, 3, name="nccl_allreduce"),  # the whole step
            _kernel(150.0, 10.0, 4),
            _kernel(200.0, 10.0, 5),  # starts at the step's end
        ],
    }
    rows = breakdown([load_timeline(_write(tmp_path, "t.json", document))]).rows
    step = rows.filter(pl.col("step") == 4).row(0, named=True)
    assert step["events"] == 3
    assert step["computation_us"] == pytest.approx(15.0)
    assert step["total_comm_us"] == pytest.approx(100.0)
    assert step["busy_us"] == pytest.approx(100.0)


def _raw_comm_kernels(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path) as handle:
        events = json.load(handle)["traceEvents"]
    kernels = [e for e in events if e.get("cat") == "kernel" and "nccl" in e["name"]]
    return sorted(kernels, key=lambda e: e["ts"])


def test_collectives_of_the_hta_all_reduce_rank() -> None:
    path = HTA / "nccl_2xA100_rank0.json.gz"
    found = jobs([load_timeline(path)]).collectives
    raw = _raw_comm_kernels(path)
    assert found.height == len(raw) == 21
    for row, kernel in zip(found.iter_rows(named=True), raw, strict=True):
        a = kernel["args"]
        assert (
            row["collective"]
            == {"allreduce": "all_reduce", "broadcast": "broadcast"}[a["Collective name"]]
        )
        assert (
            row["message_bytes"]
            == max(a["In msg nelems"], a["Out msg nelems"]) * {"Float": 4, "Long": 8}[a["dtype"]]
        )
        # end − start at ts ≈ 4.5e12 µs resolves to ~0.5 ns: durations agree to 1e-3 µs
        assert row["time_us"] == pytest.approx(kernel["dur"], abs=1e-3)
        algbw = row["message_bytes"] / kernel["dur"] / 1e3
        assert row["algbw_gbps"] == pytest.approx(algbw, rel=1e-4)
        # 2 ranks: all_reduce 2(n-1)/n = 1, broadcast 1
        assert row["busbw_gbps"] == pytest.approx(algbw, rel=1e-4)
        assert (row["start_skew_us"], row["straggler_rank"], row["ranks"]) == (0.0, 0, 1)


def test_collectives_of_the_hta_sampled_ranks_match_by_order() -> None:
    paths = [HTA / "sampled_rank-0.json.gz", HTA / "sampled_rank-1.json.gz"]
    found = jobs([load_timeline(p) for p in paths])
    raw = [_raw_comm_kernels(p) for p in paths]
    assert found.collectives.height == 10
    for row, k0, k1 in zip(found.collectives.iter_rows(named=True), *raw, strict=True):
        assert row["start_skew_us"] == pytest.approx(abs(k0["ts"] - k1["ts"]))
        late, rank = (k1, 1) if k1["ts"] > k0["ts"] else (k0, 0)
        assert (row["straggler_rank"], row["time_us"]) == (rank, late["dur"])
        assert row["collective"] == "send_recv" and row["message_bytes"] is None
    overlap = found.ranks.row(0, named=True)
    assert overlap["overlapped_comm_us"] == pytest.approx(
        overlap["total_comm_us"] - overlap["exposed_comm_us"]
    )


def _rank_trace(rank: int, parts: list[tuple[int, str, float, float, int]]) -> dict[str, Any]:
    """A rank's trace: (seq, collective, start, duration, elements) per collective, its NCCL
    parameters on the record_param_comms op that launched the kernel."""
    events: list[dict[str, Any]] = []
    for i, (seq, collective, start, dur, nelems) in enumerate(parts):
        ext, corr = 1000 + i, 500 + i
        out = nelems * 2 if "allgather" in collective else nelems
        events.append(_x("cpu_op", "record_param_comms", start - 20, 5, pid=100, **{
            "External id": ext, "Collective name": collective, "In msg nelems": nelems,
            "Out msg nelems": out, "Group size": 2, "dtype": "Float",
            "Process Group Name": "0", "Seq": seq}))  # fmt: skip
        events.append(_launch(start - 18, 3, corr, **{"External id": ext}))
        events.append(_kernel(start, dur, corr, f"ncclDevKernel_{collective}"))
    return {"distributedInfo": {"backend": "nccl", "rank": rank, "world_size": 2},
            "traceEvents": events}  # fmt: skip


def test_a_hand_built_pair_of_ranks_with_a_known_skew(tmp_path: Path) -> None:
    r0 = _rank_trace(
        0, [(7, "allreduce", 100.0, 50.0, 1 << 20), (8, "_allgather_base", 300.0, 40.0, 1000)]
    )
    # rank 1's file lists seq 8 first: matching is by sequence number, not file order
    r1 = _rank_trace(
        1, [(8, "_allgather_base", 290.0, 45.0, 1000), (7, "allreduce", 130.0, 20.0, 1 << 20)]
    )
    paths = [_write(tmp_path, "r0.json", r0), _write(tmp_path, "r1.json", r1)]
    found = jobs([load_timeline(p) for p in paths]).collectives
    first, second = found.iter_rows(named=True)
    assert (first["seq"], first["collective"], first["ranks"]) == (7, "all_reduce", 2)
    assert first["start_skew_us"] == pytest.approx(30.0)
    assert (first["straggler_rank"], first["time_us"]) == (1, 20.0)
    assert first["message_bytes"] == 4 * (1 << 20)
    assert first["algbw_gbps"] == pytest.approx(4 * (1 << 20) / 20e3)
    assert first["busbw_gbps"] == pytest.approx(first["algbw_gbps"] * 2 * (2 - 1) / 2)
    assert (second["collective"], second["straggler_rank"]) == ("all_gather", 0)
    assert second["start_skew_us"] == pytest.approx(10.0)
    assert second["message_bytes"] == 8000
    assert second["busbw_gbps"] == pytest.approx(8000 / 40e3 * (2 - 1) / 2)


def _run(*args: str) -> Any:
    return CliRunner().invoke(cli, ["breakdown", *args])


def test_outputs_of_the_command(tmp_path: Path) -> None:
    trace = str(_write(tmp_path, "t.json", HAND_BUILT))
    table = _run(trace)
    assert table.exit_code == 0, table.output
    assert "Time breakdown" in table.output and "#3" in table.output
    document = json.loads(_run(trace, "--format", "json").output)
    assert {"breakdown", "launches", "streams", "collectives", "ranks"} <= set(document)
    assert document["breakdown"][1]["idle_host_wait_us"] == pytest.approx(25.0)
    rows = list(csv.DictReader(_run(trace, "--format", "csv").output.splitlines()))
    assert float(rows[1]["launch_delay_us_p50"]) == pytest.approx(10.0)
    page = _run(trace, "--format", "html", "-o", "-").output
    assert page.startswith("<!DOCTYPE html>") and "idle_host_wait_us" in page
    twelve = json.loads(_run(trace, "--kernel-wait-us", "12", "--format", "json").output)
    assert twelve["options"] == {"kernel_wait_us": 12.0}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"traceEvents": [_x("cpu_op", "aten::mm", 0, 1)], "schemaVersion": 1}, "no GPU events"),
        ({"traceEvents": [_x("kernel", "k", 0, -1.0)], "schemaVersion": 1}, "negative duration"),
        (
            {"traceEvents": [], "distributedInfo": {"rank": "x", "world_size": 2}},
            "distributedInfo.rank",
        ),
        ({"clockHz": 1.5e9, "tileCount": 4, "samples": []}, "holds no GPU timeline"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    tmp_path: Path, document: dict[str, Any], message: str
) -> None:
    result = _run(str(_write(tmp_path, "bad.json", document)))
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("tileprof: error: ") and message in lines[0]


def test_a_rank_given_twice_is_refused(tmp_path: Path) -> None:
    r0 = _rank_trace(0, [(1, "allreduce", 100.0, 5.0, 10)])
    result = _run(str(_write(tmp_path, "a.json", r0)), str(_write(tmp_path, "b.json", r0)))
    assert result.exit_code == 2
    assert result.output == (
        "tileprof: error: b.json: $.distributedInfo.rank: "
        "rank 0 of the nccl×2 job is given twice (also a.json)\n"
    )


def test_the_command_default_is_the_analysis_default() -> None:
    from tileprof.analyses.gpu_breakdown import KERNEL_WAIT_US
    from tileprof.commands.breakdown import command

    option = next(p for p in command.params if p.name == "kernel_wait_us")
    assert option.default == KERNEL_WAIT_US


def test_every_column_is_defined_in_metrics_md(tmp_path: Path) -> None:
    text = (FIXTURES.parent / "docs" / "metrics.md").read_text()
    section = text[text.index("## Time breakdown") :]
    section = section[: section.index("\n## ", 4)]
    r0 = _rank_trace(0, [(1, "allreduce", 100.0, 5.0, 10)])
    timelines = [load_timeline(_write(tmp_path, "r.json", r0))]
    result, job = breakdown(timelines), jobs(timelines)
    from tileprof.analyses.breakdown_diff import compare_breakdowns

    comparison = compare_breakdowns(result, result)
    frames = [result.rows, result.launches, result.streams, job.collectives, job.ranks, comparison]
    missing = {c for f in frames for c in f.columns if f"`{c}`" not in section}
    assert missing == set()


def test_the_report_has_a_breakdown_section_for_its_traces(tmp_path: Path) -> None:
    trace = _write(tmp_path, "t.json", HAND_BUILT)
    page = tmp_path / "r.html"
    result = CliRunner().invoke(cli, ["report", str(trace), "-o", str(page)])
    assert result.exit_code == 0, result.output
    html = page.read_text()
    assert '<section id="breakdown">' in html and 'href="#breakdown"' in html
    assert "breakdown-launch" in html and "idle_host_wait_us" in html


def _slower(document: dict[str, Any], factor: float, step: int) -> dict[str, Any]:
    """The same trace with every GPU event ``factor`` times as long, in step ``step``."""
    events = []
    for e in document["traceEvents"]:
        e = dict(e)
        if e["cat"] in ("kernel", "gpu_memcpy"):
            e["dur"] *= factor
        if e["cat"] == "gpu_user_annotation":
            e["name"] = f"ProfilerStep#{step}"
        events.append(e)
    return {**document, "traceEvents": events}


def test_diff_breakdown_pairs_windows_by_position_and_gives_the_changes(tmp_path: Path) -> None:
    before = _write(tmp_path, "before.json", HAND_BUILT)
    after = _write(tmp_path, "after.json", _slower(HAND_BUILT, 1.5, 9))
    result = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(before), str(after), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["breakdown_diff"]
    busy = [r for r in rows if r["figure"] == "busy_us"]
    assert [(r["window"], r["step_before"], r["step_after"]) for r in busy] == [
        (0, None, None),
        (1, 3, 9),
    ]
    # the second kernel (50 + 4.5) now overlaps the third's start (53.02): recompute plainly
    spans = [(10, 40), (50, 54.5), (53.02, 68.02), (70, 77.5), (80, 83)]
    merged_busy = 30 + (68.02 - 50) + 7.5 + 3
    assert sum(b - a for a, b in spans) > merged_busy  # the overlap is there
    assert busy[1]["before"] == pytest.approx(40.0)
    assert busy[1]["after"] == pytest.approx(merged_busy)
    assert busy[1]["delta"] == pytest.approx(merged_busy - 40.0)
    assert busy[1]["change"] == pytest.approx((merged_busy - 40.0) / 40.0)
    wait = next(r for r in rows if r["figure"] == "idle_kernel_wait_us" and r["window"] == 1)
    # default 30 µs: before, the gaps of 0.02 and 6.98 µs; after, the gaps of 10 (its launch
    # at 40 came before the gap began), 1.98 and 2.5 µs
    assert (wait["before"], wait["after"]) == (pytest.approx(7.0), pytest.approx(14.48))
    assert wait["change"] == pytest.approx(14.48 / 7.0 - 1)
    table = CliRunner().invoke(cli, ["diff", "--breakdown", str(before), str(after)])
    assert "whole → whole" in table.output and "#3 → #9" in table.output
    target = tmp_path / "diff.html"
    page = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(before), str(after), "--format", "html", "-o", str(target)]
    )
    assert (page.exit_code, page.stdout, target.exists()) == (2, "", False)
    saved = tmp_path / "diff.json"
    written = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(before), str(after), "--format", "json", "-o", str(saved)]
    )
    assert (written.exit_code, written.stdout) == (0, f"{saved}\n")  # where it went
    assert json.loads(saved.read_text())["breakdown_diff"] == rows
    assert page.stderr == (
        "tileprof: error: --breakdown: --format html is not offered (table, json, csv)\n"
    )


def test_a_step_without_a_gpu_annotation_takes_the_events_its_cpu_step_launched(
    tmp_path: Path,
) -> None:
    events = [e for e in HAND_BUILT["traceEvents"] if e["cat"] != "gpu_user_annotation"]
    cpu_step = _x("user_annotation", "ProfilerStep#3", 0.0, 46.0, pid=100)
    document = {**HAND_BUILT, "traceEvents": [cpu_step, *events]}
    rows = breakdown([load_timeline(_write(tmp_path, "t.json", document))]).rows
    step = rows.filter(pl.col("step") == 3).row(0, named=True)
    # launches at 0, 40 and 45 are inside the CPU step; the one at 47 is not
    assert step["window_from"] == "cpu_step"
    assert step["window_us"] == pytest.approx(63.02 - 10.0)
    assert step["busy_us"] == pytest.approx(33.0)
    assert step["idle_host_wait_us"] == pytest.approx(20.0)
    assert step["idle_kernel_wait_us"] == pytest.approx(0.02)
    assert step["idle_other_us"] == pytest.approx(0.0, abs=1e-9)
    assert rows.filter(pl.col("step").is_null()).row(0, named=True)["window_from"] == "trace"


def test_the_hta_rank_gets_its_three_profiler_steps_from_the_cpu_side() -> None:
    path = HTA / "nccl_2xA100_rank0.json.gz"
    with gzip.open(path) as handle:
        raw = json.load(handle)["traceEvents"]
    marks = [e for e in raw if e.get("cat") == "user_annotation"]
    cpu = {int(e["name"].split("#")[1]): (e["ts"], e["ts"] + e["dur"]) for e in marks
           if e["name"].startswith("ProfilerStep#")}  # fmt: skip
    launch = {e["args"]["correlation"]: e["ts"] for e in raw if e.get("cat") == "cuda_runtime"}
    gpu = [e for e in raw if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    steps = load_timeline(path).steps
    assert sorted(steps["step"]) == sorted(cpu) == [4, 5, 6]
    for row in steps.iter_rows(named=True):
        low, high = cpu[row["step"]]
        mine = [e for e in gpu if low <= launch.get(e["args"]["correlation"], -1) < high]
        assert row["start_ns"] / 1000 == pytest.approx(min(e["ts"] for e in mine))
        assert row["end_ns"] / 1000 == pytest.approx(max(e["ts"] + e["dur"] for e in mine))


def test_events_naming_no_device_are_one_device_not_all_devices(tmp_path: Path) -> None:
    nameless = _x("kernel", "k", 0.0, 10.0, pid="GPU", stream=1)
    named = _x("kernel", "k", 5.0, 10.0, device=3, stream=1)
    document = {"traceEvents": [nameless, named], "schemaVersion": 1}
    rows = breakdown([load_timeline(_write(tmp_path, "t.json", document))]).rows
    busy = {(r["device"], r["device_name"]): r["busy_us"] for r in rows.iter_rows(named=True)}
    assert busy == {(3, "GPU 3"): 10.0, (None, "GPU"): 10.0, (None, None): 15.0}


def test_huge_durations_give_strict_json_or_a_one_line_error(tmp_path: Path) -> None:
    """Times are integer ns: a GPU event past 2⁶³ ns is refused, naming it; a runtime call
    past it is left out (its kernel has no launch)."""
    calls = [_launch(0.0, 1e308, 1), _launch(0.5, 1e308, 2)]
    huge = {"traceEvents": [*calls, _kernel(1.0, 1e308, 1), _kernel(2.0, 1e308, 2)]}
    result = _run(str(_write(tmp_path, "huge.json", huge)), "--format", "json")
    assert result.exit_code == 2
    assert "$.traceEvents[2]: ts + dur is beyond 64-bit integer ns" in result.output
    assert len(result.output.strip().splitlines()) == 1
    long_calls = {"traceEvents": [*calls, _kernel(1.0, 9e15, 1), _kernel(2.0, 3.0, 2)]}
    result = _run(str(_write(tmp_path, "calls.json", long_calls)), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)  # strict: no Infinity
    assert document["breakdown"][0]["busy_us"] == pytest.approx(9e15)
    assert document["launches"][0]["launched"] == 0
    beyond = {"traceEvents": [_kernel(1e308, 1e308, 1)], "schemaVersion": 1}
    result = _run(str(_write(tmp_path, "beyond.json", beyond)))
    assert result.exit_code == 2 and "beyond 64-bit integer ns" in result.output


def _plain_union(spans: list[tuple[float, float]]) -> float:
    """Length of a union of intervals, the textbook way (sort, sweep)."""
    total, reach_start, reach_end = 0.0, None, None
    for start, end in sorted(spans):
        if reach_end is None or start > reach_end:
            if reach_end is not None and reach_start is not None:
                total += reach_end - reach_start
            reach_start, reach_end = start, end
        else:
            reach_end = max(reach_end, end)
    if reach_end is not None and reach_start is not None:
        total += reach_end - reach_start
    return total


_EVENT = st.tuples(
    st.sampled_from(["kernel", "comm", "memcpy", "memset"]),
    st.integers(0, 400),  # start, in quarter µs (exact in binary)
    st.integers(0, 80),  # duration
    st.one_of(st.none(), st.integers(-100, 400)),  # launch start
    st.integers(0, 2),  # stream
)


@given(st.lists(_EVENT, min_size=1, max_size=40))
def test_breakdown_figures_hold_for_any_events(
    drawn: list[tuple[str, int, int, int | None, int]],
) -> None:
    """TraceLens' identities and a plain-Python union hold for any events on one device."""
    from tileprof.core.gpu_events import GpuTimeline, as_gpu_events, empty_steps

    rows = [
        {"device": 0, "stream": s, "kind": k, "start": a / 4, "end": (a + d) / 4, "name": k,
         "launch_start": None if la is None else la / 4}
        for k, a, d, la, s in drawn
    ]  # fmt: skip
    events = as_gpu_events(
        pl.DataFrame(rows).select(
            "device", "stream", "kind", "name",
            (pl.col("start") * 1000).alias("start_ns"), (pl.col("end") * 1000).alias("end_ns"),
            (pl.col("launch_start") * 1000).alias("launch_start_ns"),
        )
    )  # fmt: skip
    result = breakdown([GpuTimeline("t", events, empty_steps())])
    row = result.rows.row(0, named=True)

    def spans(*kinds: str) -> list[tuple[float, float]]:
        return [(r["start"], r["end"]) for r in rows if r["kind"] in kinds]

    assert row["computation_us"] == _plain_union(spans("kernel", "memset"))
    assert row["total_comm_us"] == _plain_union(spans("comm"))
    assert row["total_memcpy_us"] == _plain_union(spans("memcpy"))
    assert row["busy_us"] == _plain_union(spans("kernel", "memset", "comm", "memcpy"))
    parts = row["computation_us"] + row["exposed_comm_us"] + row["exposed_memcpy_us"]
    assert parts + row["idle_us"] == pytest.approx(row["total_us"])
    assert 0 <= row["exposed_comm_us"] <= row["total_comm_us"]
    assert 0 <= row["exposed_memcpy_us"] <= row["total_memcpy_us"]
    causes = [row[c] for c in ("idle_host_wait_us", "idle_kernel_wait_us", "idle_other_us")]
    assert sum(causes) == pytest.approx(row["idle_us"]) and min(causes) >= -1e-9
    launches = [(r["start"], r["end"], r["launch_start"]) for r in rows]
    host, kernel, other = _gap_classes(launches, KERNEL_WAIT_US)
    assert causes == pytest.approx([host, kernel, other], abs=1e-9)
    # the launch delays' nearest-rank percentiles, by a plain sort
    delays = sorted(
        r["start"] - r["launch_start"]
        for r in rows
        if r["kind"] in ("kernel", "comm") and r["launch_start"] is not None
    )
    ranked = [delays[max(math.ceil(len(delays) * p) - 1, 0)] if delays else None
              for p in (0.5, 0.95, 0.99)]  # fmt: skip
    launch = result.launches.row(0, named=True)
    got = [launch[f"launch_delay_us_p{n}"] for n in (50, 95, 99)]
    assert got == pytest.approx(ranked) if delays else got == ranked


def test_a_kernel_as_long_as_its_launch_call_is_not_shorter_than_it() -> None:
    """``shorter_than_launch`` counts kernels that ran for less time than their own launch
    call took (docs/metrics.md): one as long as its call is not among them."""
    from tileprof.core.gpu_events import GpuTimeline, as_gpu_events, empty_steps

    # (start, length) of each kernel; every launch call starts 100 ns before its kernel and
    # takes 50 ns
    kernels = [(1_000, 40), (2_000, 50), (3_000, 60)]
    events = as_gpu_events(
        pl.DataFrame({
            "device": [0] * 3, "stream": [7] * 3, "kind": ["kernel"] * 3, "name": ["k"] * 3,
            "start_ns": [a for a, _ in kernels], "end_ns": [a + n for a, n in kernels],
            "launch_start_ns": [a - 100 for a, _ in kernels],
            "launch_end_ns": [a - 50 for a, _ in kernels],
        })
    )  # fmt: skip
    launch = breakdown([GpuTimeline("t", events, empty_steps())]).launches.row(0, named=True)
    assert (launch["launched"], launch["shorter_than_launch"]) == (3, 1)


def test_a_step_annotation_naming_no_device_applies_to_every_device(tmp_path: Path) -> None:
    events = [dict(e) for e in HAND_BUILT["traceEvents"]]
    events[0]["pid"] = "GPU stream"  # the ProfilerStep#3 annotation
    rows = breakdown([load_timeline(_write(tmp_path, "t.json", {"traceEvents": events}))]).rows
    step = rows.filter(pl.col("step") == 3).row(0, named=True)
    assert (step["device"], step["busy_us"], step["window_from"]) == (0, 40.0, "gpu_annotation")


def test_the_table_fits_a_narrow_terminal_keeping_idle(tmp_path: Path) -> None:
    from tileprof.views.breakdown_export import render_table

    timelines = [load_timeline(_write(tmp_path, "t.json", HAND_BUILT))]
    result, job = breakdown(timelines), jobs(timelines)
    narrow = render_table(result, job, 80)
    assert max(len(line) for line in narrow.splitlines()) <= 80
    assert "idle µs" in narrow and "host_wait µs" in narrow and "kernel_wait µs" not in narrow
    assert "kernel_wait µs" in render_table(result, job)  # files: every column


def test_the_page_and_json_of_two_ranks_carry_their_collectives(tmp_path: Path) -> None:
    r0 = _rank_trace(0, [(1, "allreduce", 100.0, 50.0, 256)])
    r1 = _rank_trace(1, [(1, "allreduce", 120.0, 30.0, 256)])
    paths = [str(_write(tmp_path, "r0.json", r0)), str(_write(tmp_path, "r1.json", r1))]
    page = _run(*paths, "--format", "html", "-o", "-").output
    assert 'id="breakdown-collectives"' in page and 'id="breakdown-ranks"' in page
    document = json.loads(_run(*paths, "--format", "json").output)
    (collective,) = document["collectives"]
    assert (collective["straggler_rank"], collective["start_skew_us"]) == (1, 20.0)
    assert [r["rank"] for r in document["ranks"]] == [0, 1]
    table = _run(*paths).output
    assert "Collectives across ranks" in table and "nccl×2" in table


@pytest.mark.parametrize(
    ("name", "before"),
    [("h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 509),
     ("mi300_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", 463)],
)  # fmt: skip
def test_the_qwen_whole_trace_rows_also_count_the_events_before_the_step(
    name: str, before: int
) -> None:
    """docs/metrics.md: why the whole-trace row of the Qwen traces differs from TraceLens."""
    timeline = load_timeline(FIXTURES / "tracelens" / name)
    step = timeline.steps.row(0, named=True)
    early = timeline.events.filter(pl.col("start_ns") < step["start_ns"])
    assert early.height == before and early["launch_start_ns"].null_count() == before
    rows = breakdown([timeline]).rows
    whole, in_step = rows.row(0, named=True), rows.row(1, named=True)
    assert whole["events"] == in_step["events"] + before


def test_diff_breakdown_reads_a_breakdown_document_as_one_side(tmp_path: Path) -> None:
    trace = _write(tmp_path, "t.json", HAND_BUILT)
    saved = tmp_path / "saved.json"
    assert _run(str(trace), "--format", "json", "-o", str(saved)).exit_code == 0
    result = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(saved), str(trace), "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.output)["breakdown_diff"]
    assert rows and all(r["delta"] in (0.0, None) for r in rows)
    assert any(r["figure"] == "idle_host_wait_us" and r["before"] == 25.0 for r in rows)
    broken = _write(tmp_path, "broken.json", {"breakdown": [{"busy_us": "x"}], "launches": []})
    result = CliRunner().invoke(cli, ["diff", "--breakdown", str(broken), str(trace)])
    assert result.exit_code == 2 and "not a breakdown document" in result.output


def _diff_breakdown(*sides: Path) -> Any:
    return CliRunner().invoke(cli, ["diff", "--breakdown", *map(str, sides), "--format", "json"])


def test_diff_breakdown_splits_a_trace_at_its_other_side_s_kernel_wait(tmp_path: Path) -> None:
    """A document made at ``--kernel-wait-us 3`` against its own trace: the trace is broken
    down at 3 µs too, so nothing differs (at the default 30 µs its 6.98 µs of other gaps would
    read as kernel wait); two documents made at different thresholds are refused."""
    trace = _write(tmp_path, "t.json", HAND_BUILT)
    three, default = tmp_path / "three.json", tmp_path / "default.json"
    assert (
        _run(str(trace), "--kernel-wait-us", "3", "--format", "json", "-o", str(three)).exit_code
        == 0
    )
    assert _run(str(trace), "--format", "json", "-o", str(default)).exit_code == 0
    for sides in ((three, trace), (trace, three), (default, trace)):
        result = _diff_breakdown(*sides)
        assert result.exit_code == 0, result.output
        rows = json.loads(result.output)["breakdown_diff"]
        assert rows and all(r["delta"] in (0.0, None) for r in rows), sides
    rows = json.loads(_diff_breakdown(three, trace).output)["breakdown_diff"]
    other = [r["before"] for r in rows if r["figure"] == "idle_other_us"]
    assert other == [pytest.approx(6.98), pytest.approx(6.98)]
    result = _diff_breakdown(default, three)
    assert result.exit_code == 2
    assert result.output == (
        f"tileprof: error: {three}: options.kernel_wait_us: made at a kernel-wait threshold "
        f"of 3 µs, {default} at 30 µs: their idle causes do not compare (write both with one "
        "--kernel-wait-us)\n"
    )


@pytest.mark.parametrize(
    ("row", "where", "expected"),
    [
        ({"rank": 2.5}, "$.breakdown[0].rank", "`int | null`, got `float`"),
        ({"rank": True}, "$.breakdown[0].rank", "`int | null`, got `bool`"),
        ({"rank": 2**70}, "$.breakdown[0].rank", "`int` <= 9223372036854775807"),
        ({"trace": 3}, "$.breakdown[0].trace", "`str | null`, got `int`"),
        ({"busy_us": "x"}, "$.breakdown[0].busy_us", "`float | null`, got `str`"),
    ],
)
def test_a_breakdown_document_s_wrong_value_is_named_not_cast(
    tmp_path: Path, row: dict[str, Any], where: str, expected: str
) -> None:
    """polars would read a rank of 2.5 as 2 and a trace named 3 as "3": each is refused."""
    trace = _write(tmp_path, "t.json", HAND_BUILT)
    broken = _write(tmp_path, "broken.json", {"breakdown": [row], "launches": [], "streams": []})
    result = _diff_breakdown(broken, trace)
    assert result.exit_code == 2
    assert result.output == (
        f"tileprof: error: {broken}: {where}: not a breakdown document (expected {expected})\n"
    )


def test_a_breakdown_document_without_options_is_at_the_default_threshold(tmp_path: Path) -> None:
    """The threshold a document states is the one its side is at; one that states none (an
    older or hand-written document) is at the default, as ``breakdown`` is."""
    from tileprof.model.breakdown import compared_breakdowns

    trace = _write(tmp_path, "t.json", HAND_BUILT)
    three, default = tmp_path / "three.json", tmp_path / "default.json"
    made = _run(str(trace), "--kernel-wait-us", "3", "--format", "json", "-o", str(three))
    assert made.exit_code == 0
    assert compared_breakdowns(three, three)[0].kernel_wait_us == 3.0
    assert _run(str(trace), "--format", "json", "-o", str(default)).exit_code == 0
    document = json.loads(default.read_text())
    del document["options"]
    default.write_text(json.dumps(document))
    found, traced = compared_breakdowns(default, trace)
    assert found.kernel_wait_us == traced.kernel_wait_us == KERNEL_WAIT_US == 30.0
    for table in ("rows", "launches", "streams"):  # each read back whole
        read, made = getattr(found, table), getattr(traced, table)
        assert read.height and read.equals(made), table


def test_traces_of_one_file_name_are_named_by_their_paths(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    paths = [_write(tmp_path / d, "trace.json", HAND_BUILT) for d in ("a", "b")]
    rows = list(csv.DictReader(_run(*map(str, paths), "--format", "csv").output.splitlines()))
    assert len(rows) == 4  # whole and step 3 of each; no row joined twice
    assert {r["trace"] for r in rows} == {str(p) for p in paths}


def test_device_names_rank_streams_and_a_kernel_from_before_zero_by_hand(tmp_path: Path) -> None:
    """Each device's row carries its own name and the trace's rank; a stream row per stream id
    (none for an event without one), two ids one apart above 2^53 kept apart; a kernel that
    starts 1 ms before time zero and runs through step 2 counts in it; one launch's mean is
    its own length."""
    top = 2**53
    document = {
        "deviceProperties": [{"id": 0, "name": "Alpha"}, {"id": 1, "name": "Beta"}],
        "distributedInfo": {"rank": 3, "world_size": 4},
        "traceEvents": [
            _x("gpu_user_annotation", "ProfilerStep#2", 100.0, 100.0),
            _x("kernel", "a", -1000.0, 1250.0, device=0, stream=7, correlation=1),
            _launch(140.0, 4.0, 2),
            _x("kernel", "b", 150.0, 10.0, device=0, stream=top + 1, correlation=2),
            _x("kernel", "c", 170.0, 10.0, device=0, stream=top, correlation=3),
            _x("kernel", "d", 175.0, 10.0, device=0, correlation=4),
            _x("kernel", "e", 5.0, 10.0, device=1, stream=9, correlation=5),
        ],
    }
    result = breakdown([load_timeline(_write(tmp_path, "t.json", document))])
    names = {(r["device"], r["step"]): r["device_name"] for r in result.rows.iter_rows(named=True)}
    assert names == {(0, None): "Alpha", (0, 2): "Alpha", (1, None): "Beta", (None, None): None}
    assert result.rows.get_column("rank").to_list() == [3, 3, 3, 3]
    step = result.rows.filter(pl.col("step") == 2).row(0, named=True)
    assert (step["events"], step["busy_us"]) == (4, 100.0)  # a, cut to 100..200, b, c, d
    streams = result.streams.filter(pl.col("device") == 0, pl.col("step").is_null())
    busy = {r["stream"]: (r["events"], r["busy_us"]) for r in streams.iter_rows(named=True)}
    assert busy == {None: (1, 10.0), 7: (1, 1250.0), top: (1, 10.0), top + 1: (1, 10.0)}
    launch = result.launches.filter(pl.col("step") == 2).row(0, named=True)
    assert (launch["kernels"], launch["launched"], launch["launch_us_mean"]) == (3, 1, 4.0)


def test_a_device_the_properties_do_not_list_takes_the_one_name_listed(tmp_path: Path) -> None:
    """An MI300X VF lists its properties under id 0 while its kernels say device 2: the Kineto
    reader names device 2 itself, so the timeline is given the properties' names alone, as a
    reader that does not would give them; with two names listed, device 2 is "GPU 2"."""
    document = {"traceEvents": [_x("kernel", "k", 5.0, 10.0, device=2, stream=9, correlation=1)]}
    timeline = load_timeline(_write(tmp_path, "t.json", document))
    one = dataclasses.replace(timeline, devices={0: "AMD Instinct MI300X VF"})
    rows = breakdown([one]).rows
    assert rows.select("device", "device_name").rows() == [(2, "AMD Instinct MI300X VF")]
    two = dataclasses.replace(timeline, devices={0: "A", 1: "B"})
    assert breakdown([two]).rows.get_column("device_name").to_list() == ["GPU 2"]


def test_no_breakdowns_put_together_are_the_breakdown_of_no_traces() -> None:
    """Empty frames with every column, and the threshold given."""
    nothing, expected = concat_breakdowns([], 12.0), breakdown([], 12.0)
    assert nothing.rows.equals(expected.rows) and nothing.rows.height == 0
    assert nothing.launches.equals(expected.launches) and "launch_us_p95" in nothing.launches
    assert nothing.streams.equals(expected.streams) and "stream" in nothing.streams
    assert nothing.kernel_wait_us == 12.0


def test_rank_rows_by_hand(tmp_path: Path) -> None:
    """Three ranks of a job whose trace names no backend (``job×3``). Rank 0, at epoch-like
    times (1.7e18 ns, where a float64 keeps only every 256th ns): a kernel 0–100 µs, a memset
    100–120 and a communication kernel 90–150: computation 120, communication 60, 30 of it
    exposed (120–150), 30 hidden, overlap 0.5. Rank 1: a kernel 0–10 and a communication
    kernel 9.6–10.1: 0.5 µs of communication, 0.1 exposed, overlap 0.8. Rank 2: no
    communication, so no overlap."""
    epoch = 1_700_000_000_000_000  # µs

    def rank(number: int, events: list[dict[str, Any]]) -> GpuTimeline:
        document = {"distributedInfo": {"rank": number, "world_size": 3}, "traceEvents": events}
        return load_timeline(_write(tmp_path, f"r{number}.json", document))

    def gpu(cat: str, name: str, ts: float, dur: float) -> dict[str, Any]:
        return _x(cat, name, ts, dur, device=0, stream=7, correlation=1)

    timelines = [
        rank(0, [gpu("kernel", "gemm", epoch, 100), gpu("gpu_memset", "Memset", epoch + 100, 20),
                 gpu("kernel", "ncclDevKernel_Generic", epoch + 90, 60)]),
        rank(1, [gpu("kernel", "gemm", 0.0, 10.0), gpu("kernel", "ncclKernel", 9.6, 0.5)]),
        rank(2, [gpu("kernel", "gemm", 0.0, 10.0)]),
    ]  # fmt: skip
    rows = jobs(timelines).ranks.to_dicts()
    assert [(r["job"], r["rank"], r["trace"], r["collectives"]) for r in rows] == [
        ("job×3", 0, "r0.json", 1),
        ("job×3", 1, "r1.json", 1),
        ("job×3", 2, "r2.json", 0),
    ]
    figures = ("computation_us", "total_comm_us", "exposed_comm_us", "overlapped_comm_us")
    assert [tuple(r[c] for c in figures) for r in rows] == [
        (120.0, 60.0, 30.0, 30.0),
        (10.0, pytest.approx(0.5), pytest.approx(0.1), pytest.approx(0.4)),
        (10.0, 0.0, 0.0, 0.0),
    ]
    assert [r["comm_overlap"] for r in rows] == [0.5, pytest.approx(0.8), None]


def test_collectives_in_sequence_order_named_by_their_parameters(tmp_path: Path) -> None:
    """Rank 0 runs sequence number 8 before 7; the rows still go 7, 8. The kernel's name
    (``ncclDevKernel_Generic``) names no collective: the recorded parameters do."""

    def generic(document: dict[str, Any]) -> dict[str, Any]:
        for event in document["traceEvents"]:
            if event["cat"] == "kernel":
                event["name"] = "ncclDevKernel_Generic"
        return document

    r0 = generic(
        _rank_trace(0, [(8, "allreduce", 100.0, 10.0, 4), (7, "allreduce", 300.0, 10.0, 4)])
    )
    r1 = generic(
        _rank_trace(1, [(8, "allreduce", 105.0, 10.0, 4), (7, "allreduce", 310.0, 10.0, 4)])
    )
    paths = [_write(tmp_path, "r0.json", r0), _write(tmp_path, "r1.json", r1)]
    found = jobs([load_timeline(p) for p in paths]).collectives
    assert found.select("seq", "collective", "start_skew_us").rows() == [
        (7, "all_reduce", 10.0),
        (8, "all_reduce", 5.0),
    ]


def test_bus_factors_of_nccl_tests() -> None:
    """nccl-tests' PERFORMANCE.md: all_reduce 2(n−1)/n; all_gather, reduce_scatter and
    all_to_all (n−1)/n; broadcast, reduce and send/recv 1; None where n is unknown."""
    assert bus_factor("all_reduce", 8) == 1.75
    assert bus_factor("all_reduce", 1) == 0.0
    assert [bus_factor(c, 4) for c in ("all_gather", "reduce_scatter", "all_to_all")] == [0.75] * 3
    assert [bus_factor(c, None) for c in ("broadcast", "reduce", "send_recv")] == [1.0] * 3
    assert [bus_factor("all_reduce", n) for n in (None, 0)] == [None, None]
    assert bus_factor("barrier", 4) is None


def test_collective_kind_of_args_and_kernel_names() -> None:
    names = {
        "allreduce": "all_reduce",
        "_allgather_base": "all_gather",
        "ncclKernel_AllReduce_RING_LL_Sum_float": "all_reduce",
        "ncclDevKernel_ReduceScatter_Sum_f32": "reduce_scatter",
        "all_to_all": "all_to_all",
        "ncclDevKernel_SendRecv": "send_recv",
        "ncclDevKernel_Reduce_Sum": "reduce",
        "ncclDevKernel_Generic": None,
        "": None,
        None: None,
    }
    assert {name: collective_kind(name) for name in names} == names


@pytest.mark.parametrize("trace", [HTA / "nccl_2xA100_rank0.json.gz", TRACELENS[0]], ids=str)
def test_a_trace_file_is_streamed_not_read_whole(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`breakdown` of a trace file, plain or gzip, decodes it through the compiled decoder's
    window (``kineto_stream``): the file is never read whole into memory (``read_bytes`` is
    not called), and its timeline is the one read from its whole text."""
    from tileprof.inputs import timelines
    from tileprof.inputs._common import read_bytes

    plain = tmp_path / "t.json"
    plain.write_bytes(read_bytes(trace))
    whole = {path: load_timeline(path) for path in (trace, plain)}

    def unread(path: Path) -> bytes:
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(timelines, "read_bytes", unread)
    for path, expected in whole.items():
        streamed = load_timeline(path)
        assert streamed.events.equals(expected.events)
        assert streamed.steps.equals(expected.steps)
        assert streamed.events.get_column("collective").drop_nulls().len() > 0 or (
            "nccl" not in trace.name
        )


ODD_TRACES = [
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -2}]},
    {"traceEvents": [], "tileCount": 4},
    {"traceEvents": [], "held_out": []},
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}], "samples": 1},
    {"deviceProperties": [{"id": "0"}], "traceEvents": []},
    {"traceEvents": {}},
    {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2}],
     "matchedSampleCount": 1, "groups": []},
]  # fmt: skip
"""Documents the streaming decoder declines, or whose keys show another kind, or which fail
after it: each read, or refused with its one line, as the whole-text reader does."""


@pytest.mark.parametrize("document", ODD_TRACES, ids=str)
@pytest.mark.parametrize("bom", [b"", b"\xef\xbb\xbf"])
def test_odd_trace_files_keep_the_whole_readers_error(
    document: dict[str, Any], bom: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tileprof.core.errors import InputError
    from tileprof.inputs import timelines

    path = tmp_path / "odd.json"
    path.write_bytes(bom + json.dumps(document).encode())

    def reading() -> str | tuple[Any, ...]:
        try:
            timeline = load_timeline(path)
        except InputError as refused:
            return str(refused)
        return timeline.events.rows(), timeline.steps.rows()

    streamed = reading()
    monkeypatch.setattr(timelines, "_streamed_trace", lambda path: None)
    assert streamed == reading()


def test_long_gaps_split_the_idle_time_gap_by_gap() -> None:
    """Device 0: two overlapping events, a 1 µs gap, then a 2 ms gap; device 1: a 5 ms gap.
    The gaps of at least 1 ms are 2,000 and 5,000 µs, one each; with any length counted,
    device 0's gaps add up to the breakdown's whole-trace idle_us (2,001 µs)."""
    from tileprof.analyses.gpu_breakdown import breakdown, long_gaps
    from tileprof.core.gpu_events import GpuTimeline, as_gpu_events, empty_steps

    spans = [(0, 0, 100), (0, 50, 150), (0, 1_150, 1_200), (0, 2_001_200, 2_001_300)]
    spans += [(1, 0, 10), (1, 5_000_010, 5_000_020)]
    events = as_gpu_events(
        pl.DataFrame(
            {
                "device": [d for d, _, _ in spans],
                "stream": [7] * len(spans),
                "kind": ["kernel"] * len(spans),
                "name": ["k"] * len(spans),
                "start_ns": [s for _, s, _ in spans],
                "end_ns": [e for _, _, e in spans],
            }
        )
    )
    timeline = GpuTimeline("t.json", events, empty_steps(), {0: "A", 1: "B"})
    found = long_gaps([timeline]).sort("device")
    assert found.to_dicts() == [
        {"trace": "t.json", "device": 0, "long_gap_us": 2000.0, "long_gaps": 1},
        {"trace": "t.json", "device": 1, "long_gap_us": 5000.0, "long_gaps": 1},
    ]
    every = long_gaps([timeline], at_least_us=0.001).sort("device")
    rows = breakdown([timeline]).rows.filter(pl.col("device") == 0, pl.col("step").is_null())
    assert every.get_column("long_gap_us").to_list() == [2001.0, 5000.0]
    assert every.get_column("long_gaps").to_list() == [2, 1]
    assert rows.get_column("idle_us").to_list() == [2001.0]
    assert long_gaps([]).is_empty()


def test_diff_breakdown_of_two_ranks_says_nothing_is_compared(tmp_path: Path) -> None:
    r0 = _write(tmp_path, "r0.json", _rank_trace(0, [(1, "allreduce", 100.0, 5.0, 10)]))
    r1 = _write(tmp_path, "r1.json", _rank_trace(1, [(1, "allreduce", 100.0, 5.0, 10)]))
    table = CliRunner().invoke(cli, ["diff", "--breakdown", str(r0), str(r1)])
    assert table.exit_code == 0, table.output
    first = table.output.splitlines()[0]
    assert first.startswith(
        "nothing is compared: before is rank 0 and after rank 1, and windows pair only "
        "within one rank"
    )
    assert "kernels differ" not in table.output  # a window on one side only is no pair
    assert "whole → —" in table.output and "— → whole" in table.output
    assert "r0.json" not in table.output  # one trace a side: its devices need no trace name
    result = CliRunner().invoke(cli, ["diff", "--breakdown", str(r0), str(r1), "--format", "json"])
    document = json.loads(result.output)
    assert document["kernels_differ"] == []
    unpaired = {(w["rank"], w["device_before"] is None) for w in document["unpaired"]}
    assert unpaired == {(0, False), (1, True)}
    assert all(r["change"] is None for r in document["breakdown_diff"])


def test_diff_breakdown_names_the_windows_on_one_side_only(tmp_path: Path) -> None:
    steps_gone = [e for e in HAND_BUILT["traceEvents"] if e["cat"] != "gpu_user_annotation"]
    before = _write(tmp_path, "before.json", {**HAND_BUILT, "traceEvents": steps_gone})
    after = _write(tmp_path, "after.json", _slower(HAND_BUILT, 1.5, 9))
    table = CliRunner().invoke(cli, ["diff", "--breakdown", str(before), str(after)])
    assert table.exit_code == 0, table.output
    lines = table.output.splitlines()
    assert lines[0] == (
        "1 of 2 windows are on one side only (the first: — → 0 NVIDIA H100 80GB HBM3 — → #9): "
        "their figures are shown, not compared"
    )
    assert not any(line.startswith("kernels differ") for line in lines)
    result = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(before), str(after), "--format", "json"]
    )
    document = json.loads(result.output)
    assert [(w["window"], w["step_after"]) for w in document["unpaired"]] == [(1, 9)]


def test_diff_breakdown_pairs_the_traces_of_a_document_in_order(tmp_path: Path) -> None:
    """A breakdown document of two traces without a rank, against itself: each trace meets
    itself (by rank, device and window alone, each met both, and A100 met H200)."""
    small = FIXTURES / "traces" / "kineto_small.json"
    h200 = _write(
        tmp_path,
        "h200.json",
        json.loads(
            gzip.decompress((FIXTURES / "traces" / "h200_train_steps.json.gz").read_bytes())
        ),
    )
    document = tmp_path / "two.json"
    made = CliRunner().invoke(cli, ["breakdown", str(small), str(h200), "--format", "json"])
    document.write_text(made.output)
    table = CliRunner().invoke(cli, ["diff", "--breakdown", str(document), str(document)])
    assert table.exit_code == 0, table.output
    assert table.output.startswith("Breakdown comparison")  # no kernels or pairing line
    assert "kineto_small.json 0 NVIDIA A100-SXM4-80GB → kineto_small.json 0 NVIDIA" in table.output
    result = CliRunner().invoke(
        cli, ["diff", "--breakdown", str(document), str(document), "--format", "json"]
    )
    rows = json.loads(result.output)["breakdown_diff"]
    from tileprof.analyses.breakdown_diff import COMPARED

    assert len(rows) == 4 * len(COMPARED)  # A100: device 0, 1 and all; H200: device 0
    assert all(r["trace_before"] == r["trace_after"] for r in rows)
    assert {r["trace_at"] for r in rows} == {0, 1}
    assert {r["window"] for r in rows} == {0}  # each device's first window: the whole trace
    assert all(r["delta"] == 0 for r in rows if r["before"] is not None)
    # one window after another, each with its figures in COMPARED's order
    keys = [(r["trace_at"], -1 if r["gpu"] is None else r["gpu"]) for r in rows]
    assert [r["figure"] for r in rows[: len(COMPARED)]] == list(COMPARED)
    n = len(COMPARED)
    assert all(keys[i] == keys[i - i % n] for i in range(len(rows)))
    assert [keys[i] for i in range(0, len(rows), len(COMPARED))] == [
        (0, 0),
        (0, 1),
        (0, -1),
        (1, 0),
    ]
    assert {r["device_before"] for r in rows if r["gpu"] is None} == {"all"}
    # device 1 runs one kernel: a change per kernel is still a change (0), not unknown
    per_kernel = [r for r in rows if r["figure"] == "busy_us"]
    assert [r["kernels_before"] for r in per_kernel] == [5, 1, 6, 192]
    assert [r["per_kernel_change"] for r in per_kernel] == [0.0] * 4


def test_diff_breakdown_numbers_windows_per_trace_and_device(tmp_path: Path) -> None:
    """Two documents of two traces each, the first trace with a step in one and without in
    the other: the H200 trace's windows still meet, and the step is the one window on one
    side only (numbered across traces, the H200's whole trace would have met nothing)."""
    h200 = _write(
        tmp_path,
        "h200.json",
        json.loads(
            gzip.decompress((FIXTURES / "traces" / "h200_train_steps.json.gz").read_bytes())
        ),
    )
    steps_gone = [e for e in HAND_BUILT["traceEvents"] if e["cat"] != "gpu_user_annotation"]
    plain = _write(tmp_path, "plain.json", {**HAND_BUILT, "traceEvents": steps_gone})
    stepped = _write(tmp_path, "stepped.json", HAND_BUILT)
    documents = []
    for name, first in (("a.json", plain), ("b.json", stepped)):
        made = CliRunner().invoke(cli, ["breakdown", str(first), str(h200), "--format", "json"])
        (tmp_path / name).write_text(made.output)
        documents.append(str(tmp_path / name))
    result = CliRunner().invoke(cli, ["diff", "--breakdown", *documents, "--format", "json"])
    document = json.loads(result.output)
    assert [(w["trace_after"], w["window"], w["step_after"]) for w in document["unpaired"]] == [
        ("stepped.json", 1, 3)
    ]
    h200_rows = [r for r in document["breakdown_diff"] if r["trace_at"] == 1]
    assert h200_rows and all(r["delta"] == 0 for r in h200_rows)


def test_diff_breakdown_numbers_devices_per_trace(tmp_path: Path) -> None:
    """The H200 trace on device 2 beside the A100 trace's devices 0 and 1 is still its
    trace's first device: it meets the H200 trace on device 0 of the other document."""
    raw = json.loads(
        gzip.decompress((FIXTURES / "traces" / "h200_train_steps.json.gz").read_bytes())
    )
    moved = json.loads(json.dumps(raw))
    for event in moved["traceEvents"]:
        if isinstance(event.get("args"), dict) and event["args"].get("device") == 0:
            event["args"]["device"] = 2
    for device in moved.get("deviceProperties", []):
        device["id"] = 2 if device["id"] == 0 else device["id"]
    small = FIXTURES / "traces" / "kineto_small.json"
    documents = []
    for name, h200 in (("a.json", raw), ("b.json", moved)):
        trace = _write(tmp_path, f"h200_{name}", h200)
        made = CliRunner().invoke(cli, ["breakdown", str(small), str(trace), "--format", "json"])
        (tmp_path / name).write_text(made.output)
        documents.append(str(tmp_path / name))
    result = CliRunner().invoke(cli, ["diff", "--breakdown", *documents, "--format", "json"])
    document = json.loads(result.output)
    assert document["unpaired"] == []
    h200_rows = [r for r in document["breakdown_diff"] if r["trace_at"] == 1]
    assert {(r["device_before"], r["device_after"]) for r in h200_rows} == {
        ("0 NVIDIA H200", "2 NVIDIA H200")
    }


def test_kernels_without_their_launch_are_said_under_the_tables(tmp_path: Path) -> None:
    """The hand-built trace without the launch calls of kernels 2 and 3: the gap kernel 2
    ends (20 µs, a host wait) is no longer one, so host_wait falls from 25 to 5 µs; the table
    and the HTML page say that 2 of 4 kernels have no launch and what that does to the causes.
    The trace with every launch, the H200 trace and the report (whose capture checks say it)
    say nothing."""
    events = [e for e in HAND_BUILT["traceEvents"] if e["args"].get("correlation") not in (2, 3)
              or e["cat"] != "cuda_runtime"]  # fmt: skip
    trace = _write(tmp_path, "t.json", {**HAND_BUILT, "traceEvents": events})
    step = breakdown([load_timeline(trace)]).rows.filter(pl.col("step") == 3).row(0, named=True)
    assert step["idle_host_wait_us"] == pytest.approx(5.0)
    note = (
        "note: 2 of 4 kernels in the whole trace on GPU 0 (NVIDIA H100 80GB HBM3) have no "
        "launch call in the trace (1 other window has some too); a gap such a kernel ends is "
        "never counted as host wait, so there host_wait µs is a floor and kernel_wait µs and "
        "other µs may hold host waits (tileprof check: kernel-without-launch)"
    )
    result = CliRunner().invoke(cli, ["breakdown", str(trace)])
    assert result.exit_code == 0 and result.stdout.splitlines()[-1] == note
    page = tmp_path / "b.html"
    CliRunner().invoke(cli, ["breakdown", str(trace), "--format", "html", "-o", str(page)])
    assert '<p class="hint">2 of 4 kernels in the whole trace' in page.read_text()
    whole = _write(tmp_path, "whole.json", HAND_BUILT)
    for clean in (whole, FIXTURES / "traces" / "h200_train_steps.json.gz"):
        assert "note:" not in CliRunner().invoke(cli, ["breakdown", str(clean)]).stdout
    report = tmp_path / "r.html"
    assert CliRunner().invoke(cli, ["report", str(trace), "-o", str(report)]).exit_code == 0
    assert "have no launch call in the trace" not in report.read_text()


def test_diff_breakdown_of_two_gpu_models_says_so_first(tmp_path: Path) -> None:
    """kineto_small.json (A100) against the H200 trace: its GPU 0 pairs with the H200's, so
    the comparison opens by naming the two models; the H200 against itself does not, and a GPU
    that a trace names only by its number ("GPU 1": no model) is never said to differ."""
    from tileprof.views.breakdown_export import device_lines

    small, h200 = (
        FIXTURES / "traces" / "kineto_small.json",
        FIXTURES / "traces" / "h200_train_steps.json.gz",
    )
    out = CliRunner().invoke(cli, ["diff", "--breakdown", str(small), str(h200)]).stdout
    assert (
        "\nnot the same device: 1 of 1 paired windows ran on two GPU models (the first: NVIDIA "
        "A100-SXM4-80GB → NVIDIA H200); every change below is the device's as much as the "
        "code's\n"
    ) in out
    same = CliRunner().invoke(cli, ["diff", "--breakdown", str(h200), str(h200)]).stdout
    assert "not the same device" not in same
    row = {"rank": None, "trace_at": 0, "gpu": 0, "window": 0}
    unnamed = pl.DataFrame(
        [{**row, "device_before": "0 GPU 0", "device_after": "1 GPU 1"},
         {**row, "gpu": 1, "device_before": "1 NVIDIA H100", "device_after": None},
         {**row, "gpu": 2, "device_before": "all", "device_after": "all"}]
    )  # fmt: skip
    assert device_lines(unnamed) == []
    named = unnamed.with_columns(pl.lit("3 NVIDIA H200").alias("device_after"))
    # the unnamed GPU 0 and the all-devices row are not compared; H100 → H200 is
    assert device_lines(named)[0].startswith(
        "not the same device: 1 of 3 paired windows ran on two GPU models (the first: "
        "NVIDIA H100 → NVIDIA H200)"
    )


def test_five_steps_are_five_rows_and_read_timeline_reads_the_file(tmp_path: Path) -> None:
    """As many step rows as the step frame has columns (five) are still rows: the frame is
    built row-oriented, not guessed. ``read_timeline`` is ``timeline_of`` the file's events,
    named by the file."""
    from tileprof.inputs.gpu import kineto_timeline
    from tileprof.inputs.gpu.kineto import read_events

    marks = [_x("gpu_user_annotation", f"ProfilerStep#{n}", 20.0 * n, 20.0) for n in range(5)]
    kernels = [k for n in range(5) for k in (_launch(20.0 * n, 1.0, n + 1),
               _kernel(20.0 * n + 2, 5.0, n + 1))]  # fmt: skip
    path = _write(tmp_path, "five.json", {**HAND_BUILT, "traceEvents": [*marks, *kernels]})
    data = path.read_bytes()
    timeline = kineto_timeline.read_timeline(path, data)
    assert timeline.name == "five.json"
    assert sorted(timeline.steps["step"].to_list()) == [0, 1, 2, 3, 4]
    direct = kineto_timeline.timeline_of(read_events(path, data))
    assert timeline.events.equals(direct.events) and timeline.steps.equals(direct.steps)


def test_a_side_is_a_document_by_its_keys_not_by_a_word_in_a_trace(tmp_path: Path) -> None:
    """A saved document is one even with leading white space (pretty-printed by hand); a trace
    whose first bytes hold ``"launches"`` (a user annotation so named) stays a trace."""
    from tileprof.model.breakdown import _is_document

    trace = _write(tmp_path, "t.json", HAND_BUILT)
    saved = tmp_path / "saved.json"
    assert _run(str(trace), "--format", "json", "-o", str(saved)).exit_code == 0
    spaced = tmp_path / "spaced.json"
    spaced.write_text("\n  " + saved.read_text())
    named = _write(
        tmp_path,
        "named.json",
        {"traceEvents": [_x("user_annotation", "launches", 0.0, 1.0), *HAND_BUILT["traceEvents"]]},
    )
    assert [_is_document(p) for p in (saved, spaced, trace, named)] == [True, True, False, False]
    for before, after in ((spaced, trace), (named, trace)):
        result = _diff_breakdown(before, after)
        assert result.exit_code == 0, result.output


def test_a_cpu_only_trace_is_one_exact_line(tmp_path: Path) -> None:
    trace = _write(
        tmp_path, "cpu.json", {"traceEvents": [_x("cpu_op", "aten::mm", 0, 1)], "schemaVersion": 1}
    )
    result = _run(str(trace))
    assert result.exit_code == 2
    assert result.output == (
        f"tileprof: error: {trace}: $.traceEvents: no GPU events (a CPU-only trace)\n"
    )


def test_the_report_s_breakdown_takes_its_kernel_wait_threshold(tmp_path: Path) -> None:
    """``report_breakdown`` splits idle time at the threshold it is given, as ``breakdown``
    does; a report of CPU-only traces has none."""
    from tileprof.model.breakdown import report_breakdown

    timeline = load_timeline(_write(tmp_path, "t.json", HAND_BUILT))
    found = report_breakdown([timeline], 3.0)
    assert found is not None and found.breakdown.kernel_wait_us == 3.0
    other = found.breakdown.rows.get_column("idle_other_us").to_list()
    assert other == [pytest.approx(6.98), pytest.approx(6.98)]
    cpu_only = dataclasses.replace(timeline, events=timeline.events.clear())
    assert report_breakdown([cpu_only]) is None
