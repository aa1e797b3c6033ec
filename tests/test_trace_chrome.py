"""``trace -o FILE.json`` (``views.trace.chrome``) on the parts the format checks of
``test_trace.py`` leave open: a GPU kernel's arguments as Kineto writes them, its stream and
overlap lane as the thread id, every named thread given its sort index, and samples whose
operation or group is missing kept as events, exact µs past the first, a NaN as null, the
document's ``otherData`` and batches that change nothing."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.analyses.filters import Filters
from tileprof.commands.cli import cli
from tileprof.model.profile import load
from tileprof.model.trace import Alignment, build_timeline
from tileprof.views.trace.chrome import write_chrome

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"


def _trace(tmp_path: Path, *inputs: Path) -> list[dict[str, Any]]:
    out = tmp_path / "t.json"
    result = CliRunner().invoke(cli, ["trace", *map(str, inputs), "-o", str(out)])
    assert result.exit_code == 0, result.output
    events: list[dict[str, Any]] = json.loads(out.read_text())["traceEvents"]
    return events


def _threads(events: list[dict[str, Any]], name: str) -> dict[tuple[int, int], Any]:
    return {(e["pid"], e["tid"]): e["args"] for e in events if e["name"] == name}


def _events_named(document: dict[str, Any], name: str) -> list[dict[str, Any]]:
    return [e for e in document["traceEvents"] if e["name"] == name]


def _kernel(ts: int, dur: int, stream: int, correlation: int) -> dict[str, Any]:
    args = {"device": 0, "stream": stream, "correlation": correlation}
    name = f"k{correlation}"
    return {"ph": "X", "cat": "kernel", "name": name, "pid": 0, "tid": stream, "ts": ts} | {
        "dur": dur,
        "args": args,
    }


def test_overlapping_kernels_of_a_stream_are_lanes_of_its_thread(tmp_path: Path) -> None:
    """Stream 7 holds [0, 100) with [10, 20) and [15, 30) inside it (lanes 1 and 2); stream 13
    one kernel: each (stream, lane) is tid 64 × the stream's place + lane."""
    kernels = [_kernel(0, 100, 7, 1), _kernel(10, 10, 7, 2), _kernel(15, 15, 7, 3)]
    kernels.append(_kernel(40, 5, 13, 4))
    path = tmp_path / "lanes.json"
    path.write_text(json.dumps({"traceEvents": kernels}))
    events = _trace(tmp_path, path)
    names = {tid: args["name"] for (pid, tid), args in _threads(events, "thread_name").items()}
    assert names == {
        0: "stream 7",
        1: "stream 7 overlap",
        2: "stream 7 overlap 2",
        64: "stream 13",
    }
    tids = {e["name"]: e["tid"] for e in events if e["ph"] == "X"}
    assert tids == {"k1": 0, "k2": 1, "k3": 2, "k4": 64}
    sorted_by = _threads(events, "thread_sort_index")
    sort = {tid: args["sort_index"] for (_, tid), args in sorted_by.items()}
    assert sort == {0: 0, 1: 1, 2: 2, 64: 64}


def test_a_kernels_arguments_are_kinetos_with_its_launching_op(tmp_path: Path) -> None:
    events = _trace(tmp_path, TRACES / "kineto_small.json")
    gemm = next(e for e in events if e["ph"] == "X" and e["args"].get("correlation") == 10)
    assert gemm["args"] == {
        "device": 0,
        "stream": 7,
        "launching op": "aten::mm",
        "grid": [4, 2, 1],
        "block": [256, 1, 1],
        "correlation": 10,
    } | ({"flops": gemm["args"]["flops"]} if "flops" in gemm["args"] else {})
    assert all("op" not in e["args"] for e in events if e["ph"] == "X")


def test_each_named_tile_thread_has_its_sort_index_overlap_lanes_after_their_tile(
    tmp_path: Path,
) -> None:
    """Tile 1 holds [2, 8) with [4, 6) and [5, 7) inside it: lanes 1 and 2 are tids
    1 + lane × stride, sorted at 64 × tile + lane."""
    samples = [sample(0, 0, 4), sample(1, 2, 6), sample(1, 4, 2), sample(1, 5, 2)]
    events = _trace(tmp_path, write_dump(tmp_path / "d.json", samples, tileCount=2))
    names = _threads(events, "thread_name")
    sort = _threads(events, "thread_sort_index")
    assert set(sort) == set(names)
    by_name = {args["name"]: tid for (_, tid), args in names.items()}
    stride = by_name["tile 1 overlap"] - 1
    assert stride >= 2 and by_name["tile 1 overlap 2"] == 1 + 2 * stride
    assert {names[key]["name"]: value["sort_index"] for key, value in sort.items()} == {
        "tile 0": 0,
        "tile 1": 64,
        "tile 1 overlap": 65,
        "tile 1 overlap 2": 66,
    }


def test_a_sample_without_operation_or_group_is_still_an_event(tmp_path: Path) -> None:
    plain = sample(0, 0, 4)
    no_operation = sample(0, 4, 4) | {"operation": None}
    no_group = sample(1, 0, 4, None) | {"kind": None}
    dump = write_dump(tmp_path / "d.json", [plain, no_operation, no_group], tileCount=2)
    slices = [e for e in _trace(tmp_path, dump) if e["ph"] == "X"]
    got = sorted((e["args"]["tile"], e["ts"], e["name"], e["args"]["operation"]) for e in slices)
    assert [g[2:] for g in got] == [("k", "operation.1"), ("k", None), ("(none)", "operation.1")]


def test_times_past_a_microsecond_and_a_nan_work_figure(tmp_path: Path) -> None:
    """At 1.5 GHz cycle c is ⌊2c/3 + ½⌋ ns: 3,001 → 2,001 ns, its end 7,502 → 5,001 ns. The
    readers refuse a NaN work figure, but a profile built in Python may hold one: it is written
    as null (JSON has no NaN)."""
    samples = [sample(0, 3_001, 4_501, useful=2.5, physical=7.5)]
    profile = load(write_dump(tmp_path / "d.json", samples, tileCount=1))
    nans = profile.samples.with_columns(usefulCycles=float("nan"), physicalWorkCycles=float("nan"))
    nan = replace(profile, samples=nans)
    written = io.BytesIO()
    write_chrome(written, build_timeline(nan, Filters(), [], Alignment(mode="none")))
    assert b'"ts":2.001,"dur":3.000,' in written.getvalue()
    [event] = [e for e in json.loads(written.getvalue())["traceEvents"] if e["ph"] == "X"]
    assert (event["args"]["usefulCycles"], event["args"]["physicalWorkCycles"]) == (None, None)


def test_the_document_names_its_generator_and_targets_and_batches_change_nothing(
    tmp_path: Path,
) -> None:
    samples = [sample(t % 2, 10 * t, 5 + t) for t in range(7)] + [sample(1, 12, 30)]
    dump = write_dump(tmp_path / "d.json", samples, tileCount=2)
    kineto = TRACES / "kineto_small.json"
    out = tmp_path / "t.json"
    result = CliRunner().invoke(cli, ["trace", str(dump), str(kineto), "-o", str(out)])
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    processes = {e["pid"]: e["args"]["name"] for e in _events_named(document, "process_name")}
    assert len(processes) == 3 and processes[1] == "tile device (2 tiles @ 1.5 GHz)"
    assert document["otherData"] == {
        "generator": "tileprof trace",
        "targets": [processes[pid] for pid in sorted(processes)],  # the processes in pid order
    }
    timeline = build_timeline(load(dump), Filters(), [], Alignment())
    whole, small = io.BytesIO(), io.BytesIO()
    write_chrome(whole, timeline)
    write_chrome(small, timeline, batch=3)
    assert small.getvalue() == whole.getvalue()
    events = json.loads(whole.getvalue())["traceEvents"]
    assert len([e for e in events if e["ph"] == "X"]) == len(samples)
