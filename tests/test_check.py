"""``tileprof check``: every capture check counts, exactly, the defects a hand-built file holds.

Each generator writes a small clean file of one kind; each test adds defects of one kind and
holds that check's count and places, and every other check of the file to zero, so a check
that counted the wrong thing (or everything) fails. The real files of ../shared/real-inputs are
clean but for the defects named in ``REAL_DEFECTS`` (the last test)."""

from __future__ import annotations

import gzip
import json
import re
import sqlite3
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tileprof.analyses.integrity import CHECK_SCHEMA, CheckRule, check_frame, load_checks
from tileprof.analyses.integrity_gpu import (
    RankCapture,
    collective_keys,
    export_checks,
    job_checks,
    rank_capture,
    trace_checks,
)
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.inputs.gpu.kineto_inventory import INVENTORY_SCHEMA
from tileprof.model.integrity import check_files
from tileprof.views import check_table

# ---------------------------------------------------------------- generators


def _x(cat: str, name: str, ts: float, dur: float | None, **args: Any) -> dict[str, Any]:
    event: dict[str, Any] = {"ph": "X", "cat": cat, "name": name, "ts": ts, "pid": 1, "tid": 1}
    if dur is not None:
        event["dur"] = dur
    if args:
        event["args"] = args
    return event


def clean_events(
    steps: int = 2, *, base: float = 0.0, comm_seqs: tuple[int, ...] = ()
) -> list[dict[str, Any]]:
    """``steps`` profiler steps of 1,000 µs: each a CPU annotation, two kernel launches, their
    two kernels on stream 7 and a GPU-side annotation covering them; then the profiler's stop.
    ``comm_seqs``: one NCCL kernel per seq in step 1 (process group "0")."""
    events = []
    for k in range(1, steps + 1):
        t = base + 1000.0 * k
        events.append(_x("user_annotation", f"ProfilerStep#{k}", t, 500))
        for j, offset in enumerate((100.0, 200.0)):
            corr = 10 * k + j
            events.append(
                _x("cuda_runtime", "cudaLaunchKernel", t + 10 + 10 * j, 5, correlation=corr)
            )
            events.append(
                _x("kernel", f"gemm_{j}", t + offset, 50, device=0, stream=7, correlation=corr)
            )
        events.append(_x("gpu_user_annotation", f"ProfilerStep#{k}", t + 100, 150))
    for i, seq in enumerate(comm_seqs):
        corr = 900 + i
        t = base + 1040.0 + 2 * i
        events.append(_x("cuda_runtime", "cudaLaunchKernel", t, 1, correlation=corr))
        params = {"Collective name": "allreduce", "Process Group Name": "0", "Seq": seq}
        kernel = _x("kernel", "ncclDevKernel_AllReduce", base + 1160.0 + 10 * i, 5, **params)
        kernel["args"] |= {"device": 0, "stream": 9, "correlation": corr}
        events.append(kernel)
    events.append(_x("python_function", "_disable_profiler", base + 1000.0 * (steps + 2), 1))
    return events


def write_trace(
    path: Path, events: list[dict[str, Any]], rank: int | None = None, world: int = 2
) -> Path:
    document: dict[str, Any] = {
        "traceEvents": events,
        "deviceProperties": [{"id": 0, "name": "GPU"}],
    }
    if rank is not None:
        document["distributedInfo"] = {"rank": rank, "world_size": world, "backend": "nccl"}
    path.write_bytes(gzip.compress(json.dumps(document).encode()))
    return path


def write_export(
    path: Path,
    *,
    outside: int = 0,
    missing_names: int = 0,
    unnamed: bool = False,
    nonpositive: int = 0,
) -> Path:
    """An nsys export: 4 kernels inside the capture range 1,000–9,000 ns on device 0 (named
    GPU 0), ``outside`` more outside it, ``missing_names`` kernels whose demangledName id
    StringIds lacks, with ``unnamed`` a kernel on device 1 that no row names, and
    ``nonpositive`` kernels that end before (then at) their start."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
            streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
            shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
            blockY INTEGER, blockZ INTEGER);
        CREATE TABLE ANALYSIS_DETAILS (globalVid INTEGER, duration INTEGER, startTime INTEGER,
            stopTime INTEGER);
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
        INSERT INTO StringIds VALUES (0, 'gemm');
        INSERT INTO ANALYSIS_DETAILS VALUES (1, 8000, 1000, 9000);
        INSERT INTO TARGET_INFO_GPU VALUES (0, 'NVIDIA H100');
        """
    )
    rows = [(2000 + 1000 * i, 2500 + 1000 * i, 0, 0) for i in range(4)]
    rows += [(9500 + 100 * i, 9600 + 100 * i, 0, 0) for i in range(outside)]
    rows += [(3000, 3100, 0, 77 + i) for i in range(missing_names)]
    rows += [(4000, 4100, 1, 0)] if unnamed else []
    rows += [(5000, 4990 + 10 * min(i, 1), 0, 0) for i in range(nonpositive)]
    for corr, (start, end, device, name) in enumerate(rows):
        conn.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,7,?,?,?,0,1,1,1,128,1,1)",
            (start, end, device, corr, 42 << 24, name),
        )
    conn.commit()
    conn.close()
    return path


TT_HEADER = (
    "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT,HOST START TS,"
    "DEVICE KERNEL DURATION [ns]"
)


def write_report(path: Path, rows: list[tuple[str, str, str, str]]) -> Path:
    """A Tenstorrent ops report of (op, type, device, duration ns) rows, one host µs apart."""
    lines = [TT_HEADER]
    for i, (op, kind, device, duration) in enumerate(rows):
        cores = "" if kind == "signpost" else "64"
        lines.append(f"{op},{kind},{i},{device},{cores},{1000 * (i + 1)},{duration}")
    path.write_text("\n".join(lines) + "\n")
    return path


def clean_report_rows() -> list[tuple[str, str, str, str]]:
    return [
        ("model started", "signpost", "", ""),
        ("Matmul", "tt_dnn_device", "0", "1500"),
        ("mark", "signpost", "", ""),
        ("Add", "tt_dnn_device", "0", "200"),
        ("model finished", "signpost", "", ""),
    ]


def clean_samples() -> list[dict[str, Any]]:
    """4 tiles, epochs 0 and 1, back to back: no overlap, no gap, every tile used."""
    samples = []
    for epoch in (0, 1):
        for tile in range(4):
            for k in range(3):
                offset = epoch * 1000 + k * 100
                samples.append(
                    {"physicalTile": tile, "offset": offset, "duration": 90, "epoch": epoch,
                     "kind": "compute", "metadata": [{"name": "usefulCycles", "value": "45"}]}
                )  # fmt: skip
    return samples


def write_dump(path: Path, samples: list[dict[str, Any]], tiles: int = 4) -> Path:
    path.write_text(json.dumps({"clockHz": 1_000_000_000, "tileCount": tiles, "samples": samples}))
    return path


def counts(frame: pl.DataFrame) -> dict[str, int]:
    return dict(zip(frame["check"].to_list(), frame["count"].to_list(), strict=True))


def only(frame: pl.DataFrame, check: str, count: int) -> dict[str, Any]:
    """The row of ``check``; every other check of the frame counts nothing."""
    found = counts(frame)
    assert found[check] == count, found
    assert {k: v for k, v in found.items() if k != check and v} == {}
    row: dict[str, Any] = frame.filter(pl.col("check") == check).row(0, named=True)
    return row


# ---------------------------------------------------------------- clean files: nothing found


def test_clean_files_pass_every_check(tmp_path: Path) -> None:
    paths = [
        write_trace(tmp_path / "t.json.gz", clean_events(comm_seqs=(1, 2))),
        write_export(tmp_path / "e.sqlite"),
        write_report(tmp_path / "r.csv", clean_report_rows()),
        write_dump(tmp_path / "d.json", clean_samples()),
    ]
    frame = check_files(paths).checks
    assert frame.height == 7 + 4 + 2 + 5
    assert frame.filter(pl.col("count") > 0).select("check", "detail", "places").to_dicts() == []
    assert set(frame["status"]) == {"ok"}


# ---------------------------------------------------------------- Kineto traces


def _trace_checks(tmp_path: Path, events: list[dict[str, Any]]) -> pl.DataFrame:
    return check_files([write_trace(tmp_path / "t.json.gz", events)]).checks


def test_kernels_without_a_launch_call(tmp_path: Path) -> None:
    events = clean_events()
    events += [
        _x("kernel", "orphan", 3000.0 + 60 * i, 10, device=0, stream=7, correlation=500 + i)
        for i in range(3)
    ]
    row = only(_trace_checks(tmp_path, events), "kernel-without-launch", 3)
    first = len(clean_events()) - 1 + 1  # the orphans follow the clean events
    assert row["places"] == [f"$.traceEvents[{first + i}]" for i in range(3)]
    assert row["status"] == "warn" and "breakdown" in row["undermines"]


def test_launches_without_a_kernel(tmp_path: Path) -> None:
    events = clean_events()
    events += [
        _x("cuda_runtime", "cudaLaunchKernel", 1400.0, 2, correlation=600 + i) for i in range(2)
    ]
    events.append(
        _x("cuda_runtime", "cudaStreamSynchronize", 1450.0, 2, correlation=700)
    )  # launches nothing
    row = only(_trace_checks(tmp_path, events), "launch-without-kernel", 2)
    assert "cudaLaunchKernel" in row["detail"]


def test_overlapping_kernels_on_one_stream(tmp_path: Path) -> None:
    events = clean_events()
    # inside step 1's first kernel (1100-1150) on the same stream: 1 overlap; on stream 8: none
    events.append(_x("cuda_runtime", "cudaLaunchKernel", 1030.0, 2, correlation=800))
    events.append(_x("kernel", "late", 1120.0, 10, device=0, stream=7, correlation=800))
    events.append(_x("cuda_runtime", "cudaLaunchKernel", 1031.0, 2, correlation=801))
    events.append(_x("kernel", "other stream", 1120.0, 10, device=0, stream=8, correlation=801))
    row = only(_trace_checks(tmp_path, events), "overlapping-kernels", 1)
    assert row["places"] == [f"$.traceEvents[{len(events) - 3}]"]


def test_events_with_zero_or_negative_duration(tmp_path: Path) -> None:
    events = clean_events()
    for i, dur in enumerate((0.0, -3.0)):
        events.append(_x("cuda_runtime", "cudaLaunchKernel", 1040.0 + i, 2, correlation=810 + i))
        events.append(
            _x("kernel", "flat", 1240.0 + 2 * i, dur, device=0, stream=20 + i, correlation=810 + i)
        )
    row = only(_trace_checks(tmp_path, events), "nonpositive-duration", 2)
    assert "1 negative" in row["detail"]


def test_missing_step_annotations(tmp_path: Path) -> None:
    events = clean_events(3)
    # step 2 gone entirely (a gap), step 3's GPU-side annotation gone
    events = [e for e in events if e["name"] != "ProfilerStep#2"]
    events = [
        e
        for e in events
        if not (e["name"] == "ProfilerStep#3" and e["cat"] == "gpu_user_annotation")
    ]
    row = only(_trace_checks(tmp_path, events), "step-missing", 2)
    assert row["places"] == ["ProfilerStep#2 (no annotation)", "ProfilerStep#3 (no GPU annotation)"]


def test_truncated_step_annotation(tmp_path: Path) -> None:
    events = clean_events()
    for e in events:  # step 1's GPU annotation covers its first kernel only
        if e["name"] == "ProfilerStep#1" and e["cat"] == "gpu_user_annotation":
            e["dur"] = 60
    row = only(_trace_checks(tmp_path, events), "step-truncated", 1)
    assert "covers 1 of the 2 GPU events" in row["detail"]


def test_trace_that_ends_inside_a_step(tmp_path: Path) -> None:
    events = clean_events()[:-1]  # no stop event; step 2's CPU annotation outlasts the rest
    for e in events:
        if e["name"] == "ProfilerStep#2" and e["cat"] == "user_annotation":
            e["dur"] = 5000
    row = only(_trace_checks(tmp_path, events), "trace-ends-in-step", 1)
    assert row["places"][0].startswith("ProfilerStep#2 at $.traceEvents[")
    # critical's edits of step 2 would be ranked over the part of it the capture holds
    assert row["undermines"] == ["breakdown", "candidates"]
    path = write_trace(tmp_path / "cut.json.gz", events)
    found = json.loads(CliRunner().invoke(cli, ["findings", str(path), "--format", "json"]).stdout)
    (gain,) = [f for f in found["findings"] if f["id"] == "critical-gain"]
    assert gain["status"] == "abstained"
    assert "check trace-ends-in-step failed" in gain["reason"]


def test_a_trace_with_a_text_stream_and_no_dur_is_checked_not_refused(tmp_path: Path) -> None:
    events = clean_events()
    events.append(_x("cuda_runtime", "hipLaunchKernel", 1050.0, 2, correlation=820, stream="0x0"))
    events.append(_x("kernel", "no dur", 1260.0, None, device=0, stream=30, correlation=820))
    row = only(_trace_checks(tmp_path, events), "nonpositive-duration", 1)
    assert "1 without dur" in row["detail"]


# ---------------------------------------------------------------- ranks of one job


def test_ranks_of_one_job(tmp_path: Path) -> None:
    zero = write_trace(tmp_path / "r0.json.gz", clean_events(2, comm_seqs=(1, 2, 3)), rank=0)
    # rank 1: one step fewer, seq 2 never seen, its clock 1 s later
    one = write_trace(tmp_path / "r1.json.gz", clean_events(1, base=1e6, comm_seqs=(1, 3)), rank=1)
    frame = check_files([zero, one]).checks
    job = frame.filter(pl.col("input").str.starts_with("job of 2 ranks"))
    assert counts(job) == {"rank-step-counts": 1, "rank-clock-ranges": 2, "partial-collectives": 1}
    rows = {r["check"]: r for r in job.iter_rows(named=True)}
    assert rows["rank-step-counts"]["places"] == [f"rank 1 ({one}): 1 steps"]
    assert rows["partial-collectives"]["places"] == ["group 0 seq 2 on ranks 0 only"]
    assert frame.filter(~pl.col("input").str.starts_with("job"))["count"].sum() == 0


def test_collectives_at_the_window_edges_are_not_partial(tmp_path: Path) -> None:
    zero = write_trace(tmp_path / "r0.json.gz", clean_events(comm_seqs=(1, 2, 3)), rank=0)
    one = write_trace(tmp_path / "r1.json.gz", clean_events(comm_seqs=(2, 3, 4)), rank=1)
    assert counts(check_files([zero, one]).checks)["partial-collectives"] == 0


# ---------------------------------------------------------------- nsys exports


@pytest.mark.parametrize(
    ("keywords", "check", "count"),
    [
        ({"outside": 3}, "kernel-outside-capture", 3),
        ({"missing_names": 2}, "missing-string-id", 2),
        ({"unnamed": True}, "unnamed-device", 1),
        ({"nonpositive": 3}, "nonpositive-duration", 3),
    ],
)
def test_nsys_export_defects(
    tmp_path: Path, keywords: dict[str, Any], check: str, count: int
) -> None:
    row = only(check_files([write_export(tmp_path / "e.sqlite", **keywords)]).checks, check, count)
    if check == "kernel-outside-capture":
        assert row["places"] == [f"CUPTI_ACTIVITY_KIND_KERNEL row {5 + i}" for i in range(3)]
    if check == "missing-string-id":
        assert row["places"][0] == "CUPTI_ACTIVITY_KIND_KERNEL row 5 demangledName = 77"
    if check == "unnamed-device":
        assert row["places"] == ["device 1"] and row["status"] == "info"
    if check == "nonpositive-duration":  # the readers refuse the export; check names each row
        assert row["places"] == [f"CUPTI_ACTIVITY_KIND_KERNEL row {5 + i}" for i in range(3)]
        assert row["detail"] == (
            "3 of 7 GPU events have a duration ≤ 0 or none (1 negative, 0 without start or end)"
        )
        assert row["undermines"] == ["breakdown", "ops", "kernels", "candidates"]


def test_an_export_whose_event_column_holds_text_is_one_line_not_a_traceback(
    tmp_path: Path,
) -> None:
    path = write_export(tmp_path / "e.sqlite")
    with sqlite3.connect(path) as db:
        db.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET start = 'soon' WHERE rowid = 3")
    result = CliRunner().invoke(cli, ["check", str(path)])
    assert result.exit_code == 2, result.output
    assert result.output == (
        f"tileprof: error: {path}: table CUPTI_ACTIVITY_KIND_KERNEL, row 3, column start: "
        "a value of type text, not integer\n"
    )


# ---------------------------------------------------------------- Tenstorrent reports


def test_ops_without_device_time(tmp_path: Path) -> None:
    rows = clean_report_rows()
    rows[3:3] = [("Add", "tt_dnn_device", "0", ""), ("Mul", "tt_dnn_device", "0", "")]
    row = only(
        check_files([write_report(tmp_path / "r.csv", rows)]).checks, "op-without-device-time", 2
    )
    assert row["places"] == ["line 5", "line 6"]


def test_signposts_without_ops(tmp_path: Path) -> None:
    rows = clean_report_rows()
    rows[4:4] = [("block started", "signpost", "", ""), ("block finished", "signpost", "", "")]
    rows.append(("trailer", "signpost", "", ""))
    row = only(
        check_files([write_report(tmp_path / "r.csv", rows)]).checks, "signpost-without-ops", 2
    )
    assert row["places"] == ["line 6 (block started)", "line 9 (trailer)"]


# ---------------------------------------------------------------- the checks over hand-built frames


def inventory(*events: dict[str, Any]) -> pl.DataFrame:
    """A Kineto inventory (``INVENTORY_SCHEMA``) of ``events``: each event's ``index`` is its
    position unless it gives one, and every column it does not give is null."""
    rows = [{**dict.fromkeys(INVENTORY_SCHEMA), "index": i, **e} for i, e in enumerate(events)]
    return pl.DataFrame(rows, schema=INVENTORY_SCHEMA)


def captured(*events: dict[str, Any]) -> RankCapture:
    """What the job checks keep of a rank whose inventory holds ``events``."""
    return rank_capture(inventory(*events))


def _call(
    ts: float, correlation: int, name: str = "cudaLaunchKernel", **more: Any
) -> dict[str, Any]:
    call = {"cat": "cuda_runtime", "name": name, "ts": ts, "dur": 1.0, "correlation": correlation}
    return call | more


def _kernel(
    name: str, ts: float, dur: float, correlation: int | None, **more: Any
) -> dict[str, Any]:
    kernel = {"cat": "kernel", "name": name, "ts": ts, "dur": dur, "device": 0, "stream": 7}
    return kernel | {"correlation": correlation} | more


def _rows(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {row["check"]: row for row in rows}


def test_trace_checks_of_a_hand_inventory() -> None:
    """Two launched kernels back to back (the second starts as the first ends: no overlap)
    and a third without a launch call inside the second: 1 of 3 unlaunched, 1 overlap."""
    events = inventory(
        _call(0.0, 1),
        _call(1.0, 2),
        _kernel("a", 10.0, 10.0, 1),  # 10-20
        _kernel("b", 20.0, 5.0, 2),  # 20-25
        _kernel("c", 22.0, 1.0, 99),  # inside b, and no call of correlation 99
    )
    rows = trace_checks(events, "hand.json", load_checks())
    assert [r["input"] for r in rows] == ["hand.json"] * 7
    found = _rows(rows)
    assert {k: (r["count"], r["places"]) for k, r in found.items() if r["count"]} == {
        "kernel-without-launch": (1, ["$.traceEvents[4]"]),
        "overlapping-kernels": (1, ["$.traceEvents[4]"]),
    }
    assert found["kernel-without-launch"]["detail"] == (
        "1 of 3 GPU events have no runtime call of their correlation"
    )
    assert found["overlapping-kernels"]["detail"] == (
        "1 GPU events start before the previous one on their stream ends "
        "(1 streams; tolerance 0 µs)"
    )
    assert found["launch-without-kernel"]["detail"] == (
        "0 of 2 launch calls (name ~ /Launch/) have no GPU event of their correlation"
    )


def test_kernels_that_start_together_are_taken_in_index_order() -> None:
    """Two kernels of one stream start at 10 µs, given in the frame last index first: the one
    of lower index (10-13) comes first, so the other (10-20) is the one that overlaps."""
    events = inventory(
        _kernel("long", 10.0, 10.0, None, index=5), _kernel("short", 10.0, 3.0, None, index=4)
    )
    row = _rows(trace_checks(events, "t", load_checks()))["overlapping-kernels"]
    assert (row["count"], row["places"]) == (1, ["$.traceEvents[5]"])


def test_kernels_may_overlap_by_the_tolerance(tmp_path: Path) -> None:
    """tolerance_us 5: a kernel that starts 3 µs before the previous one on its stream ends
    passes; one that starts 8 µs before fails."""
    path = tmp_path / "checks.toml"
    path.write_text("[overlapping-kernels]\ntolerance_us = 5.0\n")
    events = inventory(
        _kernel("a", 0.0, 10.0, None),  # 0-10
        _kernel("b", 7.0, 13.0, None),  # 3 µs inside a: 7-20
        _kernel("c", 12.0, 1.0, None),  # 8 µs inside b
    )
    row = _rows(trace_checks(events, "t", load_checks(path)))["overlapping-kernels"]
    assert (row["count"], row["places"]) == (1, ["$.traceEvents[2]"])
    assert row["detail"].endswith("(1 streams; tolerance 5 µs)")


def test_a_truncated_step_counts_each_kernel_its_cpu_step_launched_once() -> None:
    """CPU step 1 is 0-100 µs, its GPU-side annotation 50-70. Kernel 1 (50-60) has two runtime
    calls of its correlation (10 and 12 µs), kernel 3 (65-75) runs past the annotation, and
    kernel 2 (150-160) was launched at 100 µs, as the CPU step ended: step 2's, not step 1's.
    Step 1 covers 1 of the 2 GPU events it launched."""
    events = inventory(
        {"cat": "user_annotation", "name": "ProfilerStep#1", "ts": 0.0, "dur": 100.0},
        _call(10.0, 1),
        _call(12.0, 1, "cuLaunchKernel", cat="cuda_driver"),
        _call(20.0, 3),
        _call(100.0, 2),
        _kernel("k1", 50.0, 10.0, 1),
        _kernel("k3", 65.0, 10.0, 3),
        _kernel("k2", 150.0, 10.0, 2),
        {"cat": "gpu_user_annotation", "name": "ProfilerStep#1", "ts": 50.0, "dur": 20.0},
    )
    found = _rows(trace_checks(events, "t", load_checks()))
    assert {k: r["count"] for k, r in found.items() if r["count"]} == {"step-truncated": 1}
    assert found["step-truncated"]["places"] == ["ProfilerStep#1 at $.traceEvents[8]"]
    assert found["step-truncated"]["detail"] == (
        "step 1 covers 1 of the 2 GPU events its CPU step launched"
    )


def _truncated_by_rows(events: pl.DataFrame, tolerance: float) -> tuple[list[str], list[str]]:
    """``step-truncated``'s places and detail parts by its definition, one annotation and one
    event at a time over plain rows: each GPU-side annotation (by step) against the GPU
    events launched (a runtime call of their correlation began) inside the first CPU step of
    its number."""
    rows = events.rows(named=True)
    call_ts: dict[int, float] = {}
    for r in rows:
        if r["cat"] in ("cuda_runtime", "cuda_driver") and r["correlation"] is not None:
            call_ts.setdefault(r["correlation"], r["ts"])  # the test gives one ts a correlation
    launched = [
        (call_ts[r["correlation"]], r["ts"], r["dur"])
        for r in rows
        if r["cat"] == "kernel" and r["correlation"] in call_ts
    ]
    steps = [r for r in rows if r["name"] is not None and r["name"].startswith("ProfilerStep#")]
    places, parts = [], []
    gpu = sorted((r for r in steps if r["cat"] == "gpu_user_annotation"), key=lambda r: r["name"])
    for a in gpu:
        own = [r for r in steps if r["cat"] == "user_annotation" and r["name"] == a["name"]]
        if not own or a["ts"] is None or a["dur"] is None:
            continue
        low, high = own[0]["ts"], own[0]["ts"] + own[0]["dur"]
        inside = [e for e in launched if e[0] is not None and low <= e[0] < high]
        a_start, a_end = a["ts"], a["ts"] + a["dur"]
        out = [
            e
            for e in inside
            if e[1] < a_start - tolerance or (e[2] is not None and e[1] + e[2] > a_end + tolerance)
        ]
        if out:
            step = a["name"].removeprefix("ProfilerStep#")
            places.append(f"ProfilerStep#{step} at $.traceEvents[{a['index']}]")
            parts.append(
                f"step {step} covers {len(inside) - len(out):,} of the {len(inside):,} GPU "
                "events its CPU step launched"
            )
    return places, parts


_MOMENT = st.integers(0, 12).map(float)


@given(
    kernels=st.lists(st.tuples(_MOMENT, _MOMENT, st.none() | _MOMENT), max_size=12),
    cpu=st.lists(st.tuples(st.integers(0, 2), _MOMENT, _MOMENT), max_size=4),
    gpu=st.lists(st.tuples(st.integers(0, 2), _MOMENT, st.none() | _MOMENT), max_size=4),
    tolerance=st.sampled_from([0.0, 1.0]),
)
def test_a_truncated_step_by_its_definition_on_random_steps(
    kernels: list[tuple[float, float, float | None]],
    cpu: list[tuple[int, float, float]],
    gpu: list[tuple[int, float, float | None]],
    tolerance: float,
) -> None:
    """Random kernels (launch, start, duration or none) under overlapping CPU steps, steps
    given twice and annotations without a duration or a CPU step: the check's places and
    detail are those of its definition applied annotation by annotation."""
    events = inventory(
        *[_call(launch, c) for c, (launch, _, _) in enumerate(kernels)],
        *[_kernel(f"k{c}", ts, dur, c) for c, (_, ts, dur) in enumerate(kernels)],
        *[{"cat": "user_annotation", "name": f"ProfilerStep#{n}", "ts": t, "dur": d}
          for n, t, d in cpu],
        *[{"cat": "gpu_user_annotation", "name": f"ProfilerStep#{n}", "ts": t, "dur": d}
          for n, t, d in gpu],
    )  # fmt: skip
    rules = load_checks()
    rule = replace(rules["step-truncated"], params={"tolerance_us": tolerance})
    rules = replace(rules, rules={**rules.rules, "step-truncated": rule})
    row = _rows(trace_checks(events, "t", rules))["step-truncated"]
    places, parts = _truncated_by_rows(events, tolerance)
    assert row["places"] == places[: rules.places] and row["count"] == len(places)
    if parts:
        assert row["detail"] == "; ".join(parts)


def test_rank_clock_ranges_by_hand() -> None:
    """min_overlap 0.5. Ranks at 0-1,000 and 500-1,500 µs: the common 500 µs is exactly half of
    each, not under it. A rank whose one event is an instant at 5,000 µs has no clock range to
    cover; the common range is then empty (0 µs), under half of rank 0's."""
    rules = load_checks()
    span = {"cat": "kernel", "name": "k"}
    halves = {
        0: ("r0", captured(span | {"ts": 0.0, "dur": 400.0}, span | {"ts": 600.0, "dur": 400.0})),
        1: ("r1", captured(span | {"ts": 500.0, "dur": 1000.0})),
    }
    row = _rows(job_checks(halves, "job", rules))["rank-clock-ranges"]
    assert (row["count"], row["places"]) == (0, [])
    assert row["detail"] == (
        "0 of 2 ranks: the job's common clock range (500 µs) covers under 50% of their own"
    )
    instant = {0: halves[0], 1: ("r1", captured(span | {"ts": 5000.0, "dur": 0.0}))}
    row = _rows(job_checks(instant, "job", rules))["rank-clock-ranges"]
    assert (row["count"], row["places"]) == (1, ["rank 0 (r0): 0–1000 µs"])
    assert row["detail"] == (
        "1 of 2 ranks: the job's common clock range (0 µs) covers under 50% of their own"
    )


def test_ranks_that_share_a_tenth_of_their_clock_ranges_are_both_named() -> None:
    """Ranks at 0-1,000 and 900-1,900 µs share 100 µs, a tenth of each one's range: both are
    under half (the share scales each rank's own range)."""
    span = {"cat": "kernel", "name": "k"}
    ranks = {
        0: ("r0", captured(span | {"ts": 0.0, "dur": 1000.0})),
        1: ("r1", captured(span | {"ts": 900.0, "dur": 1000.0})),
    }
    row = _rows(job_checks(ranks, "job", load_checks()))["rank-clock-ranges"]
    assert (row["count"], row["places"]) == (
        2,
        ["rank 0 (r0): 0–1000 µs", "rank 1 (r1): 900–1900 µs"],
    )


def test_a_rank_capture_keeps_its_cpu_steps_clock_range_and_collectives() -> None:
    """Of a rank's inventory the job checks keep the distinct CPU-side steps (a GPU-side
    annotation and a repeated step count once), the range from the first start to the last
    end (an event without ``ts`` or ``dur`` places nothing) and ``collective_keys``."""
    events = inventory(
        {"cat": "user_annotation", "name": "ProfilerStep#3", "ts": 10.0, "dur": 5.0},
        {"cat": "user_annotation", "name": "ProfilerStep#3", "ts": 20.0, "dur": 5.0},
        {"cat": "user_annotation", "name": "ProfilerStep#4", "ts": 30.0, "dur": 5.0},
        {"cat": "gpu_user_annotation", "name": "ProfilerStep#9", "ts": 2.0, "dur": 100.0},
        {"cat": "kernel", "name": "ncclKernel_AllReduce", "ts": 40.0, "dur": 60.5},
        {"cat": "cpu_op", "name": "late", "ts": 500.0},
        {"cat": "cpu_op", "name": "untimed", "dur": 9.0},
    )
    capture = rank_capture(events)
    assert capture.steps == 2
    assert capture.span == (2.0, 102.0)
    assert capture.collectives.equals(collective_keys(events))
    assert capture.collectives.height == 1


def test_a_rank_without_a_timed_event_narrows_no_clock_range() -> None:
    """A rank whose events place nothing on the clock (no ``ts`` with a ``dur``) has no range
    of its own to cover and leaves the others' common range as it is."""
    span = {"cat": "kernel", "name": "k"}
    ranks = {
        0: ("r0", captured(span | {"ts": 0.0, "dur": 1000.0})),
        1: ("r1", captured(span | {"ts": 100.0, "dur": 1000.0})),
        2: ("r2", captured(span | {"ts": 50.0})),
    }
    assert ranks[2][1].span is None
    row = _rows(job_checks(ranks, "job", load_checks()))["rank-clock-ranges"]
    assert (row["count"], row["places"]) == (0, [])
    assert row["detail"] == (
        "0 of 3 ranks: the job's common clock range (900 µs) covers under 50% of their own"
    )
    alone = {2: ranks[2], 3: ("r3", captured(span | {"dur": 4.0}))}
    row = _rows(job_checks(alone, "job", load_checks()))["rank-clock-ranges"]
    assert (row["count"], row["detail"]) == (
        0,
        "0 of 2 ranks: the job's common clock range (0 µs) covers under 50% of their own",
    )


def test_collective_keys_from_the_record_param_comms_op_of_the_launch() -> None:
    """A kernel without args takes the process group, seq and collective of the
    ``record_param_comms`` op that its launch call's External id names; without a seq, the
    collective's name (else the kernel's) and its occurrence number in the group; a kernel
    whose group nothing names is of the group "" (the empty name)."""
    op = {"cat": "cpu_op", "name": "record_param_comms"}
    events = inventory(
        op | {"external_id": 7, "process_group": "pg", "seq": 5, "collective": "allreduce"},
        _call(1.0, 1, external_id=7),
        _kernel("ncclDevKernel_AllReduce", 10.0, 5.0, 1),
        op | {"external_id": 8, "process_group": "pg", "collective": "broadcast"},
        _call(2.0, 2, external_id=8),
        _kernel("ncclKernel_Broadcast", 20.0, 5.0, 2),
        _kernel("ncclKernel_SendRecv", 30.0, 5.0, None),
        _kernel("ncclDevKernel_AllReduce", 40.0, 5.0, None, process_group="pg", seq=6),
        _kernel("gemm", 50.0, 5.0, None),
        _kernel("ncclDevKernel_AllReduce", 60.0, 5.0, None, seq=9),  # no group named
    )
    keys = collective_keys(events).sort("index")
    assert keys.select("index", "key").rows() == [
        (2, "group pg seq 5"),
        (5, "broadcast #0"),
        (6, "ncclKernel_SendRecv #0"),
        (7, "group pg seq 6"),
        (9, "group  seq 9"),
    ]
    # two launch calls of one correlation (a merged trace): the kernel is still one key
    again = inventory(
        op | {"external_id": 7, "process_group": "pg", "seq": 5},
        op | {"external_id": 8, "process_group": "pg", "seq": 5},
        _call(1.0, 1, external_id=7),
        _call(1.5, 1, external_id=8),
        _kernel("ncclDevKernel_AllReduce", 10.0, 5.0, 1),
    )
    assert collective_keys(again).select("index", "key").rows() == [(4, "group pg seq 5")]


def test_an_export_without_a_capture_range_compares_nothing() -> None:
    events = pl.DataFrame(
        {"table": ["K"] * 2, "row": [1, 2], "device": [0, 3], "start_ns": [5, 9], "end_ns": [8, 99]}
    )
    missing = pl.DataFrame({"table": ["K"], "row": [2], "column": ["shortName"], "id": [41]})
    rows = export_checks(events, None, missing, [0], "e.sqlite", load_checks())
    assert [(r["input"], r["check"], r["count"], r["places"], r["detail"]) for r in rows] == [
        (
            "e.sqlite",
            "nonpositive-duration",
            0,
            [],
            "0 of 2 GPU events have a duration ≤ 0 or none (0 negative, 0 without start or end)",
        ),
        (
            "e.sqlite",
            "kernel-outside-capture",
            0,
            [],
            "no capture range in the export (ANALYSIS_DETAILS): nothing compared",
        ),
        (
            "e.sqlite",
            "missing-string-id",
            1,
            ["K row 2 shortName = 41"],
            "1 names point at ids StringIds does not hold",
        ),
        (
            "e.sqlite",
            "unnamed-device",
            1,
            ["device 3"],
            "1 of 2 devices have no name (no TARGET_INFO_GPU row); they are named GPU N",
        ),
    ]


# ---------------------------------------------------------------- tile dumps


def _dump_checks(tmp_path: Path, samples: list[dict[str, Any]], tiles: int = 4) -> pl.DataFrame:
    return check_files([write_dump(tmp_path / "d.json", samples, tiles)]).checks


def test_tiles_that_never_appear(tmp_path: Path) -> None:
    row = only(_dump_checks(tmp_path, clean_samples(), tiles=7), "tile-never-appears", 3)
    assert row["places"] == ["tile 4", "tile 5", "tile 6"]


def test_epochs_with_gaps(tmp_path: Path) -> None:
    samples = clean_samples()
    for s in samples:
        s["epoch"] = 3 * s["epoch"]  # epochs 0 and 3: 1 and 2 missing
    row = only(_dump_checks(tmp_path, samples), "epoch-gap", 2)
    assert row["places"] == ["epoch 1", "epoch 2"]


def test_samples_overlapping_on_a_tile(tmp_path: Path) -> None:
    samples = clean_samples()
    samples.append({**samples[0], "offset": 50, "duration": 20})  # tile 0, inside its first sample
    row = only(_dump_checks(tmp_path, samples), "overlapping-samples", 1)
    assert row["places"] == [f"sample {len(samples) - 1}"]


def test_samples_past_the_profile_span(tmp_path: Path) -> None:
    samples = clean_samples()
    samples += [{**samples[0], "offset": 50_000 + 100 * k, "epoch": 1} for k in range(2)]
    row = only(_dump_checks(tmp_path, samples), "sample-past-span", 2)
    assert row["places"] == [f"sample {len(samples) - 2}", f"sample {len(samples) - 1}"]


@pytest.mark.parametrize("form", ["json", "ndjson"])
def test_metadata_that_does_not_parse(tmp_path: Path, form: str) -> None:
    samples = clean_samples()
    samples[2]["metadata"] = [{"name": "usefulCycles", "value": "lots"}]
    samples[5]["metadata"] = "not a list"
    samples[7]["metadata"] = [{"name": "usefulCycles", "value": "-4"}]
    if form == "json":
        path = write_dump(tmp_path / "d.json", samples)
    else:
        path = tmp_path / "d.ndjson"
        header = json.dumps({"clockHz": 1_000_000_000, "tileCount": 4})
        path.write_text("\n".join([header, *(json.dumps(s) for s in samples)]) + "\n")
    row = only(check_files([path]).checks, "metadata-unparsed", 3)
    assert row["places"] == ["sample 2", "sample 5", "sample 7"]


def test_tile_checks_by_hand() -> None:
    """Issue 38 (the quality mutants): a 3-tile dump with samples on tiles 0, 1 and 3 (tile 3 is
    past tileCount, so tile 2 alone holds none), in epochs 3, 5 and 9 (4, 6, 7 and 8 missing),
    one sample starting at 5 inside tile 0's (0, 10); then the same without epochs."""
    from tests.samples import frame, sample
    from tileprof.analyses.quality import tile_integrity

    samples = frame(
        [
            sample(0, 0, 10, epoch=3),
            sample(1, 0, 10, epoch=5),
            sample(3, 0, 10, epoch=9),
            sample(0, 5, 2, epoch=9),
        ]
    )
    rows = tile_integrity(samples, 3, "d", load_checks())
    assert [(r["input"], r["check"], r["count"], r["places"], r["detail"]) for r in rows] == [
        ("d", "tile-never-appears", 1, ["tile 2"], "1 of 3 tiles hold no sample"),
        (
            "d",
            "epoch-gap",
            4,
            ["epoch 4", "epoch 6", "epoch 7", "epoch 8"],
            "4 epoch numbers missing between epoch 3 and 9",
        ),
        (
            "d",
            "overlapping-samples",
            1,
            ["sample 3"],
            "1 samples start before an earlier sample on the same tile ends",
        ),
        (
            "d",
            "sample-past-span",
            0,
            [],
            "no device-wide idle gap splits off a tail of the profile",
        ),
        (
            "d",
            "metadata-unparsed",
            0,
            [],
            "0 samples carry metadata that does not parse (read without it)",
        ),
    ]
    no_epochs = frame([sample(0, 0, 10, epoch=None), sample(1, 0, 10, epoch=None)])
    rows = tile_integrity(no_epochs, 2, "d", load_checks())
    gap = next(r for r in rows if r["check"] == "epoch-gap")
    assert (gap["count"], gap["places"], gap["detail"]) == (
        0,
        [],
        "0 epoch numbers missing between epoch — and —",
    )


def test_samples_past_span_by_hand() -> None:
    """The samples after the longest device-wide idle gap (offset − the furthest end before it),
    when it is longer than gap_share × the span before it (that furthest end − the first
    offset) and they are at most tail_share of the samples."""
    from tileprof.analyses.quality import samples_past_span

    def past(rows: list[tuple[int, int]], gap_share: float, tail_share: float) -> tuple:
        offset, duration = (list(c) for c in zip(*rows, strict=True))
        samples = pl.DataFrame({"offset": offset, "duration": duration})
        return samples_past_span(samples, gap_share, tail_share)

    assert past([(0, 10)], 1.0, 0.5) == ([], 0)
    # two samples: a gap of 1000 − 10 = 990 after a span of 10; 1 of 2 is half
    assert past([(0, 10), (1000, 10)], 1.0, 0.5) == ([1], 990)
    # the gap runs from the furthest end (100, not 15): 500 − 100 = 400 after a span of 100
    assert past([(0, 100), (10, 5), (500, 10)], 1.0, 0.5) == ([2], 400)
    # a gap of exactly gap_share × the span before it (200 = 2 × (100 − 0)) is not longer
    assert past([(0, 100), (50, 10), (300, 10)], 2.0, 0.5) == ([], 0)
    assert past([(0, 100), (50, 10), (301, 10)], 2.0, 0.5) == ([2], 201)
    # no gap at all (the second sample starts inside the first), whatever share is allowed
    assert past([(10, 100), (20, 5)], 1.0, 1.0) == ([], 0)


# ---------------------------------------------------------------- thresholds are data


def test_a_threshold_overridden_from_toml(tmp_path: Path) -> None:
    samples = clean_samples()
    samples.append({**samples[0], "offset": 50, "duration": 20})
    path = write_dump(tmp_path / "d.json", samples)
    rules = tmp_path / "checks.toml"
    rules.write_text("[overlapping-samples]\nallowed = 1\n[defaults]\nplaces = 0\n")
    row = only(check_files([path], load_checks(rules)).checks, "overlapping-samples", 1)
    assert row["status"] == "ok" and row["places"] == []


@pytest.mark.parametrize(
    ("text", "error"),
    [
        ("[no-such-check]\nallowed = 1\n", "no-such-check: unknown check"),
        ("[epoch-gap]\nlimit = 1\n", "epoch-gap.limit: unknown key"),
        ('[epoch-gap]\nseverity = "fatal"\n', "epoch-gap.severity: expected one of info, warn"),
        ("[epoch-gap]\nallowed = -1\n", "epoch-gap.allowed: expected"),
    ],
)
def test_a_bad_checks_file_is_one_line(tmp_path: Path, text: str, error: str) -> None:
    rules = tmp_path / "checks.toml"
    rules.write_text(text)
    dump = write_dump(tmp_path / "d.json", clean_samples())
    result = CliRunner().invoke(cli, ["check", str(dump), "--checks", str(rules)])
    assert result.exit_code == 2 and error in result.output


def test_a_checks_file_overrides_only_the_keys_it_names(tmp_path: Path) -> None:
    rules = tmp_path / "checks.toml"
    rules.write_text(
        '[epoch-gap]\nseverity = "info"\nundermines = ["ranks"]\nallowed = 2\n'
        "[overlapping-kernels]\ntolerance_us = 1.5\n[defaults]\nplaces = 2\n"
    )
    loaded = load_checks(rules)
    assert loaded.places == 2
    assert loaded["epoch-gap"] == CheckRule("epoch-gap", "info", 2, ("ranks",), {})
    assert loaded["overlapping-kernels"] == CheckRule(
        "overlapping-kernels", "warn", 0, ("breakdown", "candidates"), {"tolerance_us": 1.5}
    )


def test_a_bad_checks_file_names_the_file_the_key_and_what_was_expected(tmp_path: Path) -> None:
    """Each message in full; the checks listed are the tables of tileprof/data/checks.toml
    but ``defaults``, in the file's order."""
    packaged = Path(__file__).resolve().parent.parent / "tileprof" / "data" / "checks.toml"
    tables = re.findall(r"^\[([a-z-]+)\]$", packaged.read_text(), flags=re.MULTILINE)
    known = ", ".join(k for k in tables if k != "defaults")
    path = tmp_path / "checks.toml"
    cases = {
        "[no-such-check]\nallowed = 1\n": f"no-such-check: unknown check (checks: {known})",
        "epoch-gap = 3\n": "epoch-gap: expected a table of keys",
        "[epoch-gap]\nlimit = 1\n": (
            "epoch-gap.limit: unknown key (keys: severity, allowed, undermines)"
        ),
        "[epoch-gap]\nallowed = -1\n": "epoch-gap.allowed: expected a value like 0, not -1",
        '[epoch-gap]\nundermines = "ranks"\n': (
            "epoch-gap.undermines: expected a value like "
            "['epochs', 'supersteps', 'candidates'], not 'ranks'"
        ),
        '[epoch-gap]\nseverity = "fatal"\n': (
            "epoch-gap.severity: expected one of info, warn, not 'fatal'"
        ),
    }
    for text, message in cases.items():
        path.write_text(text)
        with pytest.raises(InputError) as caught:
            load_checks(path)
        assert str(caught.value) == f"{path}: {message}"


def test_a_checks_file_not_utf8_or_not_toml_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "checks.toml"
    path.write_bytes(b"[epoch-gap]\nallowed = 1 # \xff\n")
    with pytest.raises(InputError) as caught:
        load_checks(path)
    assert str(caught.value) == f"{path}: byte 26: not UTF-8 text"
    path.write_text("[epoch-gap\n")
    with pytest.raises(InputError) as caught:
        load_checks(path)
    assert str(caught.value).startswith(f"{path}: bad TOML: ")


def test_the_packaged_checks_read_as_utf8_whatever_the_locale(tmp_path: Path) -> None:
    """checks.toml's comments hold × and −: under the C locale, with Python's UTF-8 mode and
    locale coercion off, the locale's encoding is ASCII and would refuse them."""
    import os
    import subprocess
    import sys

    root = Path(__file__).resolve().parent.parent
    env = os.environ | {"LC_ALL": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    env["PYTHONPATH"] = os.pathsep.join([str(root), env.get("PYTHONPATH", "")])
    code = "from tileprof.analyses.integrity import load_checks; print(load_checks().places)"
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True
    )
    assert (done.returncode, done.stdout) == (0, "5\n"), done.stderr


def test_a_frame_of_no_checks_has_every_column() -> None:
    frame = check_frame([])
    assert frame.height == 0 and frame.schema == CHECK_SCHEMA


# ---------------------------------------------------------------- the command


def test_command_table_json_and_exit_code(tmp_path: Path) -> None:
    samples = clean_samples()
    samples.append({**samples[0], "offset": 50, "duration": 20})
    bad = write_dump(tmp_path / "bad.json", samples)
    good = write_dump(tmp_path / "good.json", clean_samples())
    runner = CliRunner()
    result = runner.invoke(cli, ["check", str(good)])
    assert result.exit_code == 0, result.output
    assert "all 5 checks passed" in result.output
    result = runner.invoke(cli, ["check", str(bad), "--format", "json"])
    assert result.exit_code == 1
    document = json.loads(result.output)
    assert document["failed"] == 1
    (row,) = [c for c in document["checks"] if c["count"]]
    assert row["check"] == "overlapping-samples" and row["places"] == [f"sample {len(samples) - 1}"]
    table = runner.invoke(cli, ["check", str(bad)])
    assert table.exit_code == 1 and "1 of 5 checks failed" in table.output
    assert "abstaining: supersteps, epochs, groups, headline" in " ".join(table.output.split())


def test_command_checks_the_example_and_names_facts_to_know(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["check", "--example"])
    assert result.exit_code == 0 and result.output.endswith("all 5 checks passed\n")
    unnamed = write_export(tmp_path / "e.sqlite", unnamed=True)
    result = CliRunner().invoke(cli, ["check", str(unnamed)])
    assert result.exit_code == 0  # an info check does not fail
    assert result.output.endswith("all 4 checks passed; 1 with facts to know\n")
    assert "to know:\n- unnamed-device (" in result.output


def test_command_names_the_inputs_no_check_looked_at(tmp_path: Path) -> None:
    """A kind with no capture checks (a rocprofv3 trace, a run table) is read, and named: "all
    checks passed" must not read as a verdict on it."""
    real = Path(__file__).resolve().parent.parent / "fixtures"
    rocprof, runs = real / "real" / "kernel_trace.csv", real / "runs" / "generic_runs.csv"
    good = write_dump(tmp_path / "good.json", clean_samples())
    summary = tmp_path / "summary.json"
    made = CliRunner().invoke(cli, ["summary", "--example", "--format", "json", "-o", str(summary)])
    assert made.exit_code == 0, made.output
    paths = [str(p) for p in (good, rocprof, runs, summary)]
    result = CliRunner().invoke(cli, ["check", *paths])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    at = lines.index("not checked (tileprof has no capture checks for their kind):")
    assert lines[at + 1 : at + 4] == [
        f"- {rocprof} (rocprofv3 kernel trace)",
        f"- {runs} (run table)",
        f"- {summary} (summary document)",
    ]
    assert lines[-1] == "all 5 checks passed; 3 inputs not checked"
    alone = CliRunner().invoke(cli, ["check", str(rocprof), "--format", "json"])
    assert alone.exit_code == 0, alone.output
    document = json.loads(alone.output)
    assert document["checks"] == [] and document["failed"] == 0
    assert document["unchecked"] == [{"input": str(rocprof), "kind": "rocprofv3 kernel trace"}]
    table = CliRunner().invoke(cli, ["check", str(rocprof)])
    assert table.output.splitlines()[:3] == [
        "no input with capture checks",
        "",
        "not checked (tileprof has no capture checks for their kind):",
    ]


def test_the_unchecked_inputs_in_words_by_hand() -> None:
    """One input is "1 input"; a name wraps under its dash at the table's width (never under
    40 columns: textwrap's, not rich's, so a narrower terminal does not wrap it again), and a
    name is text, not rich markup."""
    one = check_table.render(check_frame([]), 80, [("a.csv", "run table")])
    assert one.splitlines()[2:] == [
        "not checked (tileprof has no capture checks for their kind):",
        "- a.csv (run table)",
    ]
    row = {"input": "d.json", "check": "epoch-gap", "count": 0, "places": [], "detail": "",
           "undermines": [], "status": "ok"}  # fmt: skip
    with_rows = check_table.render(check_frame([row]), 80, [("a.csv", "run table")])
    assert with_rows.splitlines()[-1] == "all 1 checks passed; 1 input not checked"
    assert "epoch-gap" in with_rows and " — " in with_rows.splitlines()[2]  # no first place
    name = "runs/[bold]" + "x" * 22 + ".csv"  # "- " + name + " (run table)": 51 characters
    for width in (30, 40):
        lines = check_table.render(check_frame([]), width, [(name, "run table")]).splitlines()
        assert lines[-2:] == [f"- {name}", "  (run table)"]
    narrow = check_table.render(check_frame([]), 80, [("r/" + "y" * 27 + ".csv", "run table")])
    assert narrow.splitlines()[-1] == "- r/" + "y" * 27 + ".csv (run table)"  # 45: one line
    exact = "z" * 27  # "- " + exact + " (run table)": 41 characters, one over 40
    assert check_table.render(check_frame([]), 40, [(exact, "run table")]).splitlines()[-2:] == [
        f"- {exact} (run",
        "  table)",
    ]


CHECK_ROWS: list[dict[str, Any]] = [
    {"input": "d.json", "check": "epoch-gap", "count": 0, "places": [],
     "detail": "0 of 3 epochs absent", "undermines": ["epochs"], "status": "ok"},
    {"input": "t.json", "check": "overlapping-kernels", "count": 1234,
     "places": ["$.traceEvents[1]", "$.traceEvents[5]"],
     "detail": "1,234 of 9,000 GPU events overlap", "undermines": ["breakdown", "candidates"],
     "status": "warn"},
    {"input": "t.json", "check": "step-missing", "count": 1, "places": ["step 3"],
     "detail": "1 step number missing", "undermines": [], "status": "warn"},
    {"input": "e.sqlite", "check": "unnamed-device", "count": 1, "places": ["device 3"],
     "detail": "1 of 2 devices unnamed", "undermines": ["ops"], "status": "info"},
]  # fmt: skip
"""One row of each kind the words tell apart: passed (no place: "—"), failed with more than
its places (" …") and with what abstains, failed without either, a fact to know (which
abstains nothing, whatever it undermines)."""

CHECK_TABLE_WIDE = """\
status ┃ check               ┃ count ┃ first place      ┃ input
━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━━━━━━━━━━╇━━━━━━━━━
ok     │ epoch-gap           │     0 │ —                │ d.json
warn   │ overlapping-kernels │ 1,234 │ $.traceEvents[1] │ t.json
warn   │ step-missing        │     1 │ step 3           │ t.json
info   │ unnamed-device      │     1 │ device 3         │ e.sqlite

failed:
- overlapping-kernels (t.json): 1,234 of 9,000 GPU events overlap; at $.traceEvents[1], \
$.traceEvents[5] …; abstaining: breakdown, candidates
- step-missing (t.json): 1 step number missing; at step 3

to know:
- unnamed-device (e.sqlite): 1 of 2 devices unnamed; at device 3

not checked (tileprof has no capture checks for their kind):
- r.csv (run table)

2 of 4 checks failed; 1 with facts to know; 1 input not checked
"""

CHECK_TABLE_NARROW = """\
status ┃ check               ┃ count ┃ input
━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━╇━━━━━━━━━
ok     │ epoch-gap           │     0 │ d.json
warn   │ overlapping-kernels │ 1,234 │ t.json
warn   │ step-missing        │     1 │ t.json
info   │ unnamed-device      │     1 │ e.sqlite

failed:
- overlapping-kernels (t.json): 1,234 of 9,000 GPU events
  overlap; at $.traceEvents[1], $.traceEvents[5] …;
  abstaining: breakdown, candidates
- step-missing (t.json): 1 step number missing; at step 3

to know:
- unnamed-device (e.sqlite): 1 of 2 devices unnamed; at
  device 3

not checked (tileprof has no capture checks for their kind):
- r.csv (run table)

2 of 4 checks failed; 1 with facts to know; 1 input not
checked
"""


def test_the_check_table_whole_by_hand() -> None:
    """Every line of the table and its words, at the fixed width of files and at 60 columns
    (where the first place goes first and the words wrap under their dash)."""
    frame = check_frame(CHECK_ROWS)
    unchecked = [("r.csv", "run table")]
    assert check_table.render(frame, check_table.TABLE_WIDTH, unchecked) == CHECK_TABLE_WIDE
    assert check_table.render(frame, 60, unchecked) == CHECK_TABLE_NARROW
    document = json.loads(check_table.render_json(frame, unchecked))
    assert document == {
        "checks": CHECK_ROWS,
        "failed": 2,
        "unchecked": [{"input": "r.csv", "kind": "run table"}],
    }
    assert check_table.render_json(frame).endswith('"unchecked": []\n}\n')
    accented = check_table.render_json(check_frame([{**CHECK_ROWS[0], "input": "é.json"}]))
    assert accented.startswith('{\n  "checks": [\n    {\n      "input": "é.json",\n')


def test_names_and_places_are_text_and_the_words_break_only_at_spaces() -> None:
    """A rank file named ``trace[rank0].json`` and a place with brackets stay whole: rich
    read them as markup and dropped ``[rank0]`` from the table (fixed with this test). The
    words wrap at spaces only, textwrap's wrapping at no fewer than 40 columns, not rich's."""
    row = {"input": "trace[rank0].json", "check": "step-missing", "count": 1,
           "places": ["ProfilerStep#[x]"], "detail": "a twelve-part-hyphen-word-of-many-parts",
           "undermines": [], "status": "warn"}  # fmt: skip
    wide = check_table.render(check_frame([row]), 200).splitlines()
    assert wide[2] == "warn   │ step-missing │     1 │ ProfilerStep#[x] │ trace[rank0].json"
    words = [
        "- step-missing (trace[rank0].json): a",
        "  twelve-part-hyphen-word-of-many-parts;",
        "  at ProfilerStep#[x]",
    ]
    for width in (30, 40):
        lines = check_table.render(check_frame([row]), width).splitlines()
        at = lines.index("failed:")
        assert lines[at + 1 : at + 4] == words
    short = {**row, "input": "t.json", "places": []}
    lines = check_table.render(check_frame([short]), 40).splitlines()
    at = lines.index("failed:")
    assert lines[at + 1 : at + 3] == [
        "- step-missing (t.json): a",  # breaking at hyphens, "twelve-part-" would fit here
        "  twelve-part-hyphen-word-of-many-parts",
    ]
    exact = {**row, "input": "t" * 12, "detail": "d" * 9}  # its first line at 41: 41 columns
    lines = check_table.render(check_frame([exact]), 40).splitlines()
    at = lines.index("failed:")
    assert lines[at + 1 : at + 3] == [
        f"- step-missing ({'t' * 12}):",
        f"  {'d' * 9}; at ProfilerStep#[x]",
    ]


def test_command_refuses_a_broken_input_it_has_no_checks_for(tmp_path: Path) -> None:
    """Before, a file of a kind without checks was not read at all: a broken run table
    passed ``check`` with exit 0."""
    broken = tmp_path / "runs.csv"
    broken.write_text("target,workload,kernel,time_us\nH100,w,k,fast\n")
    result = CliRunner().invoke(cli, ["check", str(broken)])
    assert result.exit_code == 2
    assert result.output.startswith(f"tileprof: error: {broken}: ")
    assert "time_us" in result.output and len(result.output.splitlines()) == 1


def test_command_needs_inputs() -> None:
    result = CliRunner().invoke(cli, ["check"])
    assert result.exit_code == 2 and "give PATHS" in result.output


# ---------------------------------------------------------------- real files

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
REAL_FILES: tuple[str, ...] = (
    "hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    "hta/nccl_2xA100_rank0.json.gz",
    "hta/sampled_rank-0.json.gz",
    "hta/sampled_rank-1.json.gz",
    "real/h100_2gpu_1s.sqlite",
    "real/kernel_trace.csv",
    "real/ops_perf_results_2025_09_18_11_39_20.csv",
    "real/tt_wh_clip_encoder_400.csv",
    "torch/model_trace.json.gz",
    "traces/h200_train_steps.json.gz",
    *(
        f"tracelens/{gpu}_{model}.json.gz"
        for gpu in ("h100", "mi300")
        for model in (
            "Falconsai_nsfw_image_detection__1016002",
            "Qwen_Qwen1.5-0.5B-Chat__1016005",
            "gaunernst_bert-small-uncased__1016001",
        )
    ),
)
REAL_DEFECTS: dict[tuple[str, str], tuple[int, str]] = {
    # ROCm 6.2: the CPU ProfilerStep#2 has no GPU-side annotation, and step 1's GPU-side
    # annotation covers 8 of the 16 GPU events its CPU step launched (issue 31).
    ("hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "step-missing"): (
        1,
        "ProfilerStep#2 (no GPU annotation)",
    ),
    ("hta/mi250_minitoy_train_ROCm6_2_kineto.json.gz", "step-truncated"): (
        1,
        "ProfilerStep#1 at $.traceEvents[156]",
    ),
    # The export has no TARGET_INFO_GPU table: both H100s are "GPU 0" and "GPU 1" (info).
    ("real/h100_2gpu_1s.sqlite", "unnamed-device"): (2, "device 0"),
    # "Oft module" is followed by "OFT block started" with no op between them (info).
    ("real/ops_perf_results_2025_09_18_11_39_20.csv", "signpost-without-ops"): (
        1,
        "line 213 (Oft module)",
    ),
    # Kernels flushed into the trace whose launches came before the profiler's window:
    # correlations 675771-682741 (H100), all below the first runtime call's 682747.
    ("tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "kernel-without-launch"): (
        509,
        "$.traceEvents[10899]",
    ),
    ("tracelens/mi300_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz", "kernel-without-launch"): (
        463,
        "$.traceEvents[11638]",
    ),
}


def test_real_files_hold_only_their_known_defects() -> None:
    frame = check_files([FIXTURES / name for name in REAL_FILES]).checks
    found = {
        (str(Path(row["input"]).relative_to(FIXTURES)), row["check"]): (
            row["count"],
            row["places"][0],
        )
        for row in frame.filter(
            pl.col("count") > 0, ~pl.col("input").str.starts_with("job")
        ).iter_rows(named=True)
    }
    assert found == REAL_DEFECTS
    job = frame.filter(pl.col("input").str.starts_with("job of 128 ranks (ranks 0, 1 given)"))
    assert job.height == 3 and job["count"].sum() == 0  # the two sampled ranks agree


def test_partial_collectives_by_hand() -> None:
    """Two ranks. Process group "0": rank 0 holds seq 1-5, rank 1 seq 1 and 5 (the window
    both cover is 1-5, so 2-4 are missing on rank 1). Collectives without a seq are keyed by
    name and occurrence: group "a" has a second broadcast on rank 0 only, group "b" a second
    allreduce on rank 1 only. The places run by group, then key."""
    from tileprof.analyses.integrity_gpu import RankCapture

    def capture(rows: list[tuple[str, int | None, str]]) -> RankCapture:
        frame = pl.DataFrame(
            rows, schema={"group": pl.String, "seq": pl.Int64, "key": pl.String}, orient="row"
        )
        return RankCapture(steps=1, span=(0.0, 1.0), collectives=frame)

    def seq(group: str, n: int) -> tuple[str, int, str]:
        return (group, n, f"group {group} seq {n}")

    zero = [seq("0", n) for n in range(1, 6)]
    zero += [("b", None, "allreduce #0"), ("a", None, "broadcast #0"), ("a", None, "broadcast #1")]
    one = [seq("0", 5), ("b", None, "allreduce #0"), ("b", None, "allreduce #1"), seq("0", 1)]
    one += [("a", None, "broadcast #0")]
    ranks = {0: ("r0", capture(zero)), 1: ("r1", capture(one))}
    row = _rows(job_checks(ranks, "job", load_checks()))["partial-collectives"]
    assert row["count"] == 5
    assert row["places"] == [
        "group 0 seq 2 on ranks 0 only",
        "group 0 seq 3 on ranks 0 only",
        "group 0 seq 4 on ranks 0 only",
        "broadcast #1 on ranks 0 only",
        "allreduce #1 on ranks 1 only",
    ]
    assert row["detail"] == (
        "5 of 9 collectives are missing on some of the 2 ranks that show their process group"
    )
    both = {0: ranks[0], 1: ("r1", capture([*one, ("b", None, "allreduce #1")]))}
    shared = {**both, 2: ("r2", capture([seq("0", n) for n in range(1, 6)]))}
    row = _rows(job_checks(shared, "job", load_checks()))["partial-collectives"]
    assert row["places"][0] == "group 0 seq 2 on ranks 0, 2 only"


def test_rank_step_counts_name_the_ranks_off_the_most_common_count() -> None:
    """The usual count is the most common one (the larger of equally common ones), not the
    largest: three ranks of 5 steps and one of 6 name the one of 6."""
    from tileprof.analyses.integrity_gpu import RankCapture

    schema = {"group": pl.String, "seq": pl.Int64, "key": pl.String}

    def ranks(*steps: int) -> dict[int, tuple[str, RankCapture]]:
        none = pl.DataFrame(schema=schema)
        return {r: (f"r{r}", RankCapture(n, (0.0, 1.0), none)) for r, n in enumerate(steps)}

    row = _rows(job_checks(ranks(5, 5, 6, 5), "job", load_checks()))["rank-step-counts"]
    assert (row["count"], row["places"]) == (1, ["rank 2 (r2): 6 steps"])
    assert row["detail"] == "1 of 4 ranks hold another number of steps than 5"
    row = _rows(job_checks(ranks(4, 6), "job", load_checks()))["rank-step-counts"]
    assert row["places"] == ["rank 0 (r0): 4 steps"]
