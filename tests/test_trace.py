"""``tileprof trace``: .pftrace decoded with the perfetto package's protos, Chrome JSON checked
against the trace event format, expected values computed by hand or by brute force."""

from __future__ import annotations

import gzip
import io
import itertools
import json
import zlib
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from tests.samples import sample, write_dump
from tests.trace_decode import Decoded, decode, packets
from tileprof.commands.cli import cli
from tileprof.model.trace import assign_lanes, cycles_to_ns
from tileprof.views.trace.perfetto import SliceColumns, encode_slices

TRACES = Path(__file__).resolve().parent.parent / "fixtures" / "traces"
TARGET = "tile device (4 tiles @ 1.5 GHz)"

# Tile 0: two touching samples and a zero-length one; tile 1: [2,8) with [4,6) and [5,7)
# inside it (overlap lanes 1 and 2); tile 3: an exchange sample with no kernel.
SAMPLES = [
    sample(0, 3, 6, "gemm", useful=4, physical=5, phase=1, epoch=1, extra_meta=None),
    sample(0, 9, 3, "gemm", useful=3, phase=1, epoch=1),
    sample(0, 12, 0, "mark", phase=2, epoch=1),
    sample(1, 2, 6, "gemm", phase=1, epoch=1),
    sample(1, 4, 2, "copy", phase=1, epoch=2),
    sample(1, 5, 2, "copy", phase=None, epoch=2),
    sample(3, 8, 4, None, kind="exchange", phase=2, epoch=1),
]
SAMPLES[0]["metadata"].append({"name": "reason", "value": "OperatorKernel"})
for s in SAMPLES:
    s.pop("extra_meta", None)

# cycles → ns at 1.5 GHz is ⌊2c/3 + ½⌋: 2→1 3→2 4→3 5→3 6→4 7→5 8→5 9→6 12→8; the
# earliest sample starts at cycle 2 (1 ns), so --align start subtracts 1 ns.
NS = {2: 1, 3: 2, 4: 3, 5: 3, 6: 4, 7: 5, 8: 5, 9: 6, 12: 8}
EXPECTED = {  # (tile, lane, begin, end, name, category)
    (0, 0, NS[3] - 1, NS[9] - 1, "gemm", "compute"),
    (0, 0, NS[9] - 1, NS[12] - 1, "gemm", "compute"),
    (0, 0, NS[12] - 1, NS[12] - 1, "mark", "compute"),
    (1, 0, NS[2] - 1, NS[8] - 1, "gemm", "compute"),
    (1, 1, NS[4] - 1, NS[6] - 1, "copy", "compute"),
    (1, 2, NS[5] - 1, NS[7] - 1, "copy", "compute"),
    (3, 0, NS[8] - 1, NS[12] - 1, "exchange", "exchange"),
}


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", SAMPLES, tileCount=4)


def _tile_and_lane(decoded: Decoded, uuid: int) -> tuple[int, int]:
    d = decoded.descriptors[uuid]
    parent = decoded.descriptors[d.parent_uuid]
    if parent.HasField("process"):
        return int(d.name.removeprefix("tile ")), 0
    lane = 1 if d.name == "overlap" else int(d.name.removeprefix("overlap "))
    return int(parent.name.removeprefix("tile ")), lane


def test_cycles_to_ns_rounds_half_up_exactly() -> None:
    cycles = np.array([0, 1, 2, 3, 4, 9, 10**13], dtype=np.int64)
    # 1.5 GHz: 2c/3 → 0, 0.67, 1.33, 2, 2.67, 6, 6666666666666.67
    assert cycles_to_ns(cycles, 1.5e9).tolist() == [0, 1, 1, 2, 3, 6, 6666666666667]
    # 2 GHz: c/2, halves round up
    assert cycles_to_ns(cycles[:5], 2_000_000_000).tolist() == [0, 1, 1, 2, 2]
    # a non-integer clock takes the exact slow path: 1.25 Hz → c × 0.8e9
    assert cycles_to_ns(np.array([5, 1]), 1.25).tolist() == [4 * 10**9, 800_000_000]
    # 10 GHz: an integer clock whose remainder × 2·10⁹ would pass 2⁶³ in int64, so it takes
    # the exact path too: (10¹⁰ − 1) × 0.1 = 999999999.9 → 10⁹; (3·10¹⁰ + 5) × 0.1 → half up
    ten = cycles_to_ns(np.array([10**10 - 1, 3 * 10**10 + 5]), 10**10)
    assert ten.tolist() == [10**9, 3 * 10**9 + 1]
    # 8 GHz as well: the fast path holds only while the clock × 2·10⁹ stays under 2⁶² (2.3 GHz)
    assert cycles_to_ns(np.array([8 * 10**9 - 1]), 8e9).tolist() == [10**9]
    # past 2⁵³ ns the slow path (a clock of 10⁹ + ½ Hz) stays exact, in integers
    assert cycles_to_ns(np.array([10**17 + 3]), 1e9 + 0.5).tolist() == [99999999950000003]


def test_lanes_follow_the_report_overlap_definition() -> None:
    keys = np.array([0, 0, 0, 0, 1, 1, 0])
    starts = np.array([0, 1, 2, 10, 0, 5, 3])
    ends = np.array([5, 3, 4, 12, 5, 6, 3])
    # key 0: [0,5) lane 0; [1,3) inside it → 1; [2,4) overlaps [1,3) → 2; the zero-length
    # [3,3) lies inside [2,4), and lane 1 is free again at 3 → 1; [10,12) is free → 0. Key 1
    # touches only: all lane 0.
    assert assign_lanes(keys, starts, ends).tolist() == [0, 1, 2, 0, 0, 0, 1]


def test_pftrace_holds_every_sample_once_on_its_tile(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    code, stdout, stderr = run("trace", str(dump), "-o", str(out))
    assert code == 0, stderr
    assert "7 samples on 4 tile tracks (2 overlapping" in stdout
    decoded = decode(out)
    got = Counter(
        (*_tile_and_lane(decoded, s.track), s.begin, s.end, s.name, s.categories[0])
        for s in decoded.slices
    )
    assert got == Counter(EXPECTED)
    first = next(s for s in decoded.slices if s.begin == NS[3] - 1)
    assert first.args == {
        "tile": 0,
        "phase": 1,
        "epoch": 1,
        "operation": "operation.1",
        "usefulCycles": 4.0,
        "physicalWorkCycles": 5.0,
        "metadata.usefulCycles": "4",
        "metadata.physicalWorkCycles": "5",
        "metadata.reason": "OperatorKernel",
    }
    no_phase = next(s for s in decoded.slices if s.name == "copy" and s.end == NS[7] - 1)
    assert "phase" not in no_phase.args and no_phase.args["epoch"] == 2
    exchange = next(s for s in decoded.slices if s.name == "exchange")
    assert "usefulCycles" not in exchange.args and exchange.args["tile"] == 3


def test_pftrace_tracks_are_well_formed(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    assert run("trace", str(dump), "-o", str(out))[0] == 0
    decoded = decode(out)
    assert decoded.uuid_repeats == 0
    for uuid, d in decoded.descriptors.items():
        if d.parent_uuid:
            assert d.parent_uuid in decoded.descriptors
            assert decoded.declared_at[d.parent_uuid] < decoded.declared_at[uuid]
    for uuid, index in decoded.first_use.items():
        assert uuid in decoded.descriptors and decoded.declared_at[uuid] < index
    processes = [d for d in decoded.descriptors.values() if d.HasField("process")]
    assert [p.process.process_name for p in processes] == [TARGET]
    device = processes[0]
    assert device.child_ordering == pb.TrackDescriptor.ChildTracksOrdering.EXPLICIT
    tiles = [
        d
        for d in decoded.descriptors.values()
        if d.parent_uuid == device.uuid and d.name.startswith("tile ")
    ]
    assert [(d.name, d.sibling_order_rank) for d in tiles] == [(f"tile {t}", t) for t in range(4)]
    # Slices on one track never overlap (touching is allowed).
    by_track: dict[int, list[tuple[int, int]]] = {}
    for s in decoded.slices:
        by_track.setdefault(s.track, []).append((s.begin, s.end))
    for spans in by_track.values():
        spans.sort()
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_counters_match_brute_force(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    assert run("trace", str(dump), "-o", str(out))[0] == 0
    decoded = decode(out)
    names = {decoded.track_name(u): v for u, v in decoded.counters.items()}
    # Span [2, 12) is 10 cycles: 10 bins of one cycle, values from cycle 2 … 11, then 0.
    active, useful = [], []
    for cycle in range(2, 12):
        running = [s for s in SAMPLES if s["offset"] <= cycle < s["offset"] + s["duration"]]
        active.append(float(len(running)))
        rate = sum(
            float(m["value"]) / s["duration"]
            for s in running
            for m in s.get("metadata", [])
            if m["name"] == "usefulCycles"
        )
        useful.append(rate / 4)
    times = [NS[2] - 1 + (round(2 * c / 3) - 1) - (NS[2] - 1) for c in range(2, 13)]
    assert [t for t, _ in names["active tiles"]] == times
    assert [v for _, v in names["active tiles"]] == [*active, 0.0]
    assert [v for _, v in names["device useful utilization"]] == pytest.approx([*useful, 0.0])


def test_batches_do_not_change_the_trace(dump: Path, tmp_path: Path) -> None:
    from tileprof.analyses.filters import Filters
    from tileprof.model.profile import load
    from tileprof.model.trace import Alignment, build_timeline
    from tileprof.views.trace.perfetto import write_pftrace

    timeline = build_timeline(load(dump), Filters(), [], Alignment())
    whole, small = io.BytesIO(), io.BytesIO()
    write_pftrace(whole, timeline)
    write_pftrace(small, timeline, batch=2)
    (tmp_path / "a.pftrace").write_bytes(whole.getvalue())
    (tmp_path / "b.pftrace").write_bytes(small.getvalue())
    threaded = io.BytesIO()
    write_pftrace(threaded, timeline, batch=2, workers=3)
    serial = _serial(timeline)  # threads change nothing in the file
    assert threaded.getvalue() == serial and small.getvalue() == serial
    compressed = [p for p in pb.Trace.FromString(small.getvalue()).packet if p.compressed_packets]
    # 7 samples in batches of 2, and tile 1's two overlap tracks in one batch
    assert len(compressed) == 4 + 1
    a, b = decode(tmp_path / "a.pftrace"), decode(tmp_path / "b.pftrace")
    assert [(s.track, s.begin, s.end, s.name, s.args) for s in a.slices] == [
        (s.track, s.begin, s.end, s.name, s.args) for s in b.slices
    ]


def test_jobs_reach_the_encoder_and_change_nothing_in_the_file(dump: Path, tmp_path: Path) -> None:
    from tileprof.analyses.filters import Filters
    from tileprof.inputs import threads
    from tileprof.model.profile import load
    from tileprof.model.trace import Alignment, build_timeline

    before = threads.setting()
    try:
        threads.configure(3)
        assert build_timeline(load(dump), Filters(), [], Alignment()).jobs == 3
    finally:
        threads.configure(before)
    files = []
    for jobs in ("1", "3"):
        out = tmp_path / f"t{jobs}.pftrace"
        assert run("trace", str(dump), "-o", str(out), "--jobs", jobs)[0] == 0
        files.append(out.read_bytes())
    assert files[0] == files[1]


def _serial(timeline: Any) -> bytes:
    from tileprof.views.trace.perfetto import write_pftrace

    out = io.BytesIO()
    write_pftrace(out, timeline, batch=2, workers=1)
    return out.getvalue()


def test_encoder_agrees_with_protos_built_packets() -> None:
    """The compiled column encoder against packets built one by one through the perfetto
    protos: every field, nulls and NaN as absent annotations, list entries in order."""
    rng = np.random.default_rng(7)
    n = 50
    track = rng.integers(1, 2**40, n)
    begin = rng.integers(0, 2**50, n)
    end = begin + rng.integers(0, 2**20, n)
    ints = rng.integers(-(2**62), 2**62, n)
    ints[:5] = [0, 1, 127, 128, -1]
    present = rng.random(n) < 0.7
    doubles = rng.random(n) * 1e6
    doubles[3] = np.nan  # NaN is no value
    names = rng.integers(1, 400, n)
    category = rng.integers(1, 3, n)
    with_category = rng.random(n) < 0.5
    strings = rng.integers(1, 2**33, n)
    lists = [[(9, 10), (11, 12)], [], [(13, 2**40)]]
    index = rng.integers(0, 3, n)
    with_list = rng.random(n) < 0.8
    frame = pl.DataFrame(
        {
            "track": track,
            "begin": begin,
            "end": end,
            "name": names,
            "category": pl.Series(np.where(with_category, category, 0)).replace(0, None),
            "a": pl.Series(ints).set(pl.Series(~present), None),  # type: ignore[arg-type]
            "b": ints // 7,
            "c": pl.Series(doubles).set(pl.Series(present), None),  # type: ignore[arg-type]
            "s": strings,
            "m": pl.Series(index).set(pl.Series(~with_list), None),  # type: ignore[arg-type]
        }
    )
    columns = SliceColumns(frame, [(5, "a"), (6, "b")], [(200, "c")], [(7, "s")], lists, "m")
    got = [p for chunk in encode_slices(columns, batch=16, workers=2) for p in _inflated(chunk)]
    assert len(got) == 2 * n
    for i in range(n):
        event = pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_BEGIN, track_uuid=int(track[i]))
        event.name_iid = int(names[i])
        if with_category[i]:
            event.category_iids.append(int(category[i]))
        if present[i]:
            event.debug_annotations.add(name_iid=5, int_value=int(ints[i]))
        event.debug_annotations.add(name_iid=6, int_value=int(ints[i] // 7))
        if not present[i] and i != 3:
            event.debug_annotations.add(name_iid=200, double_value=float(doubles[i]))
        event.debug_annotations.add(name_iid=7, string_value_iid=int(strings[i]))
        for name, value in lists[index[i]] if with_list[i] else []:
            event.debug_annotations.add(name_iid=name, string_value_iid=value)
        expected_begin = pb.TracePacket(
            timestamp=int(begin[i]),
            trusted_packet_sequence_id=1,
            sequence_flags=pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE,
            track_event=event,
        )
        expected_end = pb.TracePacket(
            timestamp=int(end[i]),
            trusted_packet_sequence_id=1,
            sequence_flags=pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE,
            track_event=pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_END, track_uuid=int(track[i])),
        )
        assert got[2 * i] == expected_begin
        assert got[2 * i + 1] == expected_end


def _inflated(chunk: bytes) -> list[pb.TracePacket]:
    """The packets of one compressed batch, by the protos and zlib."""
    (outer,) = pb.Trace.FromString(chunk).packet
    return list(pb.Trace.FromString(zlib.decompress(outer.compressed_packets)).packet)


def test_a_bad_column_or_a_panic_in_the_encoder_is_one_line(
    capfd: pytest.CaptureFixture[str],
) -> None:
    from tileprof.core import _native
    from tileprof.core.errors import OutputError

    frame = pl.DataFrame({"track": [1], "begin": [-1], "end": [2], "name": [1], "category": [1]})
    with pytest.raises(OutputError, match=r"encoder \(columns: begin is negative at row 0\)"):
        encode_slices(SliceColumns(frame, [], [], [], []))
    with pytest.raises(_native.EncodeError) as caught:
        _native._panic_in_encoder(2)
    assert caught.value.args == ("panic", "an encoding thread panicked on purpose")
    assert capfd.readouterr().err == ""  # the panic hook keeps Rust's message off stderr


def _lanes_plainly(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> list[int]:
    """The lane rule as assign_lanes' docstring states it, one interval at a time in plain
    Python (the reference): lane 0 unless the interval starts below its key's largest end so
    far, else the lowest overlap lane whose last interval has ended by its start."""
    lanes = [0] * keys.size
    order = sorted(range(keys.size), key=lambda i: (keys[i], starts[i], ends[i], i))
    until: dict[int, int] = {}
    lane_ends: dict[int, list[int]] = {}
    for i in order:
        key, start, end = int(keys[i]), int(starts[i]), int(ends[i])
        flagged = key in until and start < until[key]
        until[key] = max(until.get(key, end), end)
        if flagged:
            taken = lane_ends.setdefault(key, [])
            free = [lane for lane, last in enumerate(taken) if last <= start]
            slot = free[0] if free else len(taken)
            if slot == len(taken):
                taken.append(end)
            taken[slot] = end
            lanes[i] = slot + 1
    return lanes


def test_samples_that_all_overlap_keep_their_lanes_tracks_and_args(tmp_path: Path) -> None:
    """Six workers per tile, back to back: nearly every sample overlaps, the overlap lanes stay
    within the six workers' concurrency, and the lane tracks go through the compiled
    descriptor encoder in several batches."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.profile import load
    from tileprof.model.trace import Alignment, build_timeline
    from tileprof.views.trace.perfetto import write_pftrace

    rng = np.random.default_rng(11)
    samples = []
    for tile in (0, 2):
        for worker in range(6):
            offset = int(rng.integers(0, 5))
            for _ in range(8):
                duration = int(rng.integers(3, 40))
                samples.append(sample(tile, offset, duration, f"k{worker}", phase=worker))
                offset += duration + int(rng.integers(0, 3))
    for s in samples:
        s.pop("extra_meta", None)
    dump = write_dump(tmp_path / "d.json", samples, tileCount=4)
    timeline = build_timeline(load(dump), Filters(), [], Alignment())
    assert 2 < timeline.tile.lanes <= 7  # lane 0 and at most six overlap lanes
    out = io.BytesIO()
    write_pftrace(out, timeline, batch=7, workers=2)
    (tmp_path / "t.pftrace").write_bytes(out.getvalue())
    decoded = decode(tmp_path / "t.pftrace")
    got = sorted(
        (*_tile_and_lane(decoded, s.track), s.begin, s.end, s.name, s.args["phase"])
        for s in decoded.slices
    )
    frame = timeline.tile.slices
    expected = sorted(
        zip(
            *(
                frame[c].cast(pl.String if c == "group" else pl.Int64).to_list()
                for c in ("tile", "lane", "begin_ns", "end_ns", "group", "phase")
            ),
            strict=True,
        )
    )
    assert got == expected and len(got) == len(samples)
    for uuid, index in decoded.first_use.items():
        assert decoded.declared_at[uuid] < index
    lane_tracks = [d for d in decoded.descriptors.values() if d.name.startswith("overlap")]
    lanes = frame.filter(pl.col("lane") > 0).select("tile", "lane").unique().height
    assert len(lane_tracks) == lanes and decoded.uuid_repeats == 0
    assert all(d.sibling_order_rank == _tile_and_lane(decoded, d.uuid)[1] for d in lane_tracks)


@pytest.mark.parametrize("seed", range(6))
def test_lanes_equal_the_plainly_stated_rule(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = 3000
    keys = rng.integers(0, 1 + seed * 3, n)
    starts = rng.integers(0, 50_000, n) // (1 + 50 * (seed % 2))  # many ties when divided
    ends = starts + rng.integers(0, 4_000, n) * (seed % 3)  # seed 0 and 3: zero lengths
    lanes = assign_lanes(keys, starts, ends)
    assert lanes.tolist() == _lanes_plainly(keys, starts, ends)
    assert assign_lanes(keys[:0], starts[:0], ends[:0]).tolist() == []


# ---------------------------------------------------------------- Chrome JSON


def _chrome(path: Path) -> dict[str, Any]:
    data = path.read_bytes()
    if path.name.endswith(".gz"):
        data = gzip.decompress(data)
    document: dict[str, Any] = json.loads(data)
    return document


def _check_trace_event_format(document: dict[str, Any]) -> None:
    """The parts of the Trace Event Format this file uses, checked event by event."""
    assert document["displayTimeUnit"] in ("ms", "ns")
    events = document["traceEvents"]
    named_processes = {e["pid"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
    named_threads = {
        (e["pid"], e["tid"]) for e in events if e["ph"] == "M" and e["name"] == "thread_name"
    }
    for e in events:
        assert e["ph"] in ("X", "M", "C")
        if e["ph"] == "M":
            assert e["name"] in (
                "process_name",
                "process_sort_index",
                "thread_name",
                "thread_sort_index",
            )
            key = "sort_index" if e["name"].endswith("sort_index") else "name"
            assert set(e["args"]) == {key}
        elif e["ph"] == "X":
            assert isinstance(e["name"], str) and isinstance(e["cat"], str)
            assert isinstance(e["ts"], (int, float)) and isinstance(e["dur"], (int, float))
            assert e["dur"] >= 0 and isinstance(e["args"], dict)
            assert e["pid"] in named_processes and (e["pid"], e["tid"]) in named_threads
        else:
            assert isinstance(e["ts"], (int, float)) and e["pid"] in named_processes
            assert all(isinstance(v, (int, float)) for v in e["args"].values())


@pytest.mark.parametrize("suffix", [".json", ".json.gz"])
def test_chrome_json_follows_the_trace_event_format(
    dump: Path, tmp_path: Path, suffix: str
) -> None:
    out = tmp_path / f"t{suffix}"
    code, _, stderr = run("trace", str(dump), "-o", str(out))
    assert code == 0, stderr
    document = _chrome(out)
    _check_trace_event_format(document)
    events = document["traceEvents"]
    names = {(e["pid"], e["tid"]): e["args"]["name"] for e in events if e["name"] == "thread_name"}
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    assert processes == {1: TARGET}
    got = set()
    for e in events:
        if e["ph"] != "X":
            continue
        name = names[(e["pid"], e["tid"])]
        lane = 0 if "overlap" not in name else (int(name.split()[-1]) if name[-1] != "p" else 1)
        # µs with three decimals: exactly the ns / 1000 of the hand-computed values
        begin, end = round(e["ts"] * 1000), round((e["ts"] + e["dur"]) * 1000)
        got.add((e["args"]["tile"], lane, begin, end, e["name"], e["cat"]))
        assert name.startswith(f"tile {e['args']['tile']}")
    assert got == EXPECTED
    gemm = next(e for e in events if e["ph"] == "X" and e["ts"] == 0.001)
    assert gemm["args"]["metadata"] == {
        "usefulCycles": "4",
        "physicalWorkCycles": "5",
        "reason": "OperatorKernel",
    }
    counters = [e for e in events if e["ph"] == "C" and e["name"] == "active tiles"]
    assert [e["args"]["tiles"] for e in counters][:3] == [1.0, 2.0, 3.0]
    # each counter's value under its unit
    useful = [e for e in events if e["ph"] == "C" and e["name"] == "device useful utilization"]
    assert len(useful) == len(counters) and all(set(e["args"]) == {"fraction"} for e in useful)


# ---------------------------------------------------------------- GPU traces, alignment


def _gpu_slices(decoded: Decoded) -> dict[str, list[tuple[int, int, str, dict[str, Any]]]]:
    out: dict[str, list[tuple[int, int, str, dict[str, Any]]]] = {}
    for s in decoded.slices:
        process = decoded.process_of(s.track).process.process_name
        if process != TARGET:
            out.setdefault(process, []).append((s.begin, s.end, s.name, s.args))
    return out


def test_gpu_devices_are_processes_with_kernels_on_streams(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    code, stdout, stderr = run(
        "trace", str(dump), str(TRACES / "kineto_small.json"), "-o", str(out)
    )
    assert code == 0, stderr
    assert "8 GPU events on 2 devices" in stdout
    decoded = decode(out)
    gpus = _gpu_slices(decoded)
    a100 = "NVIDIA A100-SXM4-80GB (device 0, kineto_small.json)"
    assert set(gpus) == {a100, "GPU 1 (device 1, kineto_small.json)"}
    # device 0 starts at 1000 µs: aligned to 0; the 2nd GEMM at 1100 µs for 30 µs
    spans = sorted((b, e) for b, e, _, _ in gpus[a100])
    assert spans[:2] == [(0, 10_000), (100_000, 130_000)]
    gemm = next(a for b, _, _, a in gpus[a100] if b == 0)
    assert gemm["launching op"] == "aten::mm" and gemm["stream"] == 7
    assert (gemm["grid"], gemm["block"], gemm["correlation"]) == ("4x2x1", "256x1x1", 10)
    streams = {
        decoded.track_name(s.track)
        for s in decoded.slices
        if decoded.process_of(s.track).process.process_name == a100
    }
    assert streams == {"stream 7", "stream 13"}
    # device 1's only kernel starts at 1700 µs, aligned to 0 on its own
    assert gpus["GPU 1 (device 1, kineto_small.json)"][0][:2] == (0, 8000)


def test_align_none_and_offsets(dump: Path, tmp_path: Path) -> None:
    trace = str(TRACES / "kineto_small.json")
    out = tmp_path / "none.pftrace"
    assert run("trace", str(dump), trace, "--align", "none", "-o", str(out))[0] == 0
    decoded = decode(out)
    a100 = "NVIDIA A100-SXM4-80GB (device 0, kineto_small.json)"
    assert min(b for b, *_ in _gpu_slices(decoded)[a100]) == 1_000_000  # 1000 µs
    assert min(s.begin for s in decoded.slices) == 1  # cycle 2 at 1.5 GHz, unshifted
    out = tmp_path / "shift.pftrace"
    code, _, err = run(
        "trace", str(dump), trace, "--align", "kineto_small.json=2.5", "-o", str(out)
    )
    assert code == 0, err
    gpus = _gpu_slices(decode(out))
    assert min(b for b, *_ in gpus[a100]) == 2500
    out = tmp_path / "back.pftrace"
    code, _, err = run("trace", str(dump), trace, "--align", f"{TARGET}=-1", "-o", str(out))
    assert code == 0 and "every target moved 1 µs later so that none starts before 0" in err
    decoded = decode(out)
    assert min(b for b, *_ in _gpu_slices(decoded)[a100]) == 1000
    assert min(s.begin for s in decoded.slices) == 0
    # the dump alone moved 5 µs later: its first slice (1 ns) and its counters at 5 µs, and
    # nothing before 0 to move the whole trace for
    out = tmp_path / "later.json"
    code, _, err = run("trace", str(dump), "--align", f"{TARGET}=5", "-o", str(out))
    assert code == 0 and "later so that none starts" not in err, err
    events = _chrome(out)["traceEvents"]
    assert min(e["ts"] for e in events if e["ph"] == "X") == 5.0
    assert min(e["ts"] for e in events if e["ph"] == "C") == 5.0
    # a name that is no target: every target named, and each GPU trace's file, sorted
    code, _, err = run("trace", str(dump), trace, "--align", "H100=5", "-o", str(out), "--force")
    assert code == 2
    assert err == (
        "tileprof: error: --align H100=…: no target of that name (targets: GPU 1 (device 1, "
        f"kineto_small.json), {a100}, kineto_small.json, tile, {TARGET})\n"
    )
    # "tile" names the tile device as a GPU trace's file name names its devices
    out = tmp_path / "tile.json"
    code, _, err = run("trace", str(dump), "--align", "tile=5", "-o", str(out))
    assert code == 0, err
    assert min(e["ts"] for e in _chrome(out)["traceEvents"] if e["ph"] == "X") == 5.0


def test_chrome_gpu_part_reads_back_through_the_kineto_reader(dump: Path, tmp_path: Path) -> None:
    from tileprof.inputs.sources import load_runs

    out = tmp_path / "t.json"
    assert run("trace", str(dump), str(TRACES / "kineto_small.json"), "-o", str(out))[0] == 0
    back = load_runs(out).frame
    source = load_runs(TRACES / "kineto_small.json").frame
    key = ["kernel", "calls", "total_us", "p50_us", "max_us"]
    assert sorted(back.select(key).rows()) == sorted(source.select(key).rows())


# ---------------------------------------------------------------- limits and errors


def test_max_samples_writes_the_first_in_time_order_and_says_so(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    code, stdout, stderr = run("trace", str(dump), "--max-samples", "3", "-o", str(out))
    assert code == 0
    assert "7 samples match, more than --max-samples 3" in stderr and "--window" in stderr
    assert "offsets up to cycle 4)" in stderr
    # by offset: cycle 2 (tile 1), 3 (tile 0), 4 (tile 1)
    assert sorted(s.begin for s in decode(out).slices) == [0, 1, 2]
    assert "3 samples" in stdout


def test_filters_and_tile_range(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    assert run("trace", str(dump), "--tile-range", "1:2", "--epoch", "2", "-o", str(out))[0] == 0
    decoded = decode(out)
    assert sorted((s.name, s.args["tile"]) for s in decoded.slices) == [("copy", 1), ("copy", 1)]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-o", "{tmp}/t.txt"], "unknown trace extension"),
        (["--align", "H100=5", "-o", "{tmp}/t.pftrace"], "--align H100=…: no target"),
        (["--align", "soon", "-o", "{tmp}/t.pftrace"], "--align soon: expected"),
        (["{dump}", "-o", "{tmp}/t.pftrace"], "a second tile dump; one trace draws one"),
        (["{garbage}", "-o", "{tmp}/t.pftrace"], "garbage.json: line 1, column 1: "),
        (["{seed}", "-o", "{tmp}/t.pftrace"], "(latency benchmarks); `trace` draws tile dumps"),
        (["{tmp}/absent.json", "-o", "{tmp}/t.pftrace"], "no such file"),
        (["--tile-range", "5:2", "-o", "{tmp}/t.pftrace"], "--tile-range 5:2"),
    ],
)
def test_bad_input_is_one_line_exit_2(
    dump: Path, tmp_path: Path, args: list[str], message: str
) -> None:
    seed = Path(__file__).resolve().parent.parent / "tileprof" / "data" / "seeds"
    latency = next(seed.glob("000_*"), None) or dump
    garbage = tmp_path / "garbage.json"
    garbage.write_text("garbage")
    filled = [a.format(tmp=tmp_path, dump=dump, seed=latency, garbage=garbage) for a in args]
    code, _, stderr = run("trace", str(dump), *filled)
    assert code == 2
    assert stderr.startswith("tileprof: error: ") and message in stderr
    assert stderr.count("\n") == 1
    assert not (tmp_path / "t.pftrace").exists()


def test_output_is_not_overwritten_without_force(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.pftrace"
    out.write_bytes(b"keep")
    code, _, stderr = run("trace", str(dump), "-o", str(out))
    assert code == 2 and "--force" in stderr and out.read_bytes() == b"keep"
    assert run("trace", str(dump), "-o", str(out), "--force")[0] == 0
    assert len(packets(out)) > 7


def test_real_h200_trace_every_gpu_event_once(dump: Path, tmp_path: Path) -> None:
    from tileprof.inputs._common import read_bytes
    from tileprof.inputs.gpu.kineto import gpu_events

    source = TRACES / "h200_train_steps.json.gz"
    events = gpu_events(source, read_bytes(source)).events
    out = tmp_path / "t.pftrace"
    code, stdout, stderr = run("trace", str(dump), str(source), "-o", str(out))
    assert code == 0, stderr
    assert f"{events.height:,} GPU events on 1 device" in stdout
    decoded = decode(out)
    got = Counter(
        (s.name, s.end - s.begin)
        for s in decoded.slices
        if s.name not in ("gemm", "copy", "mark", "exchange")
    )
    # durations in ns as the docs define them: the trace's dur (µs, three decimals) in ns
    with gzip.open(source) as handle:
        written = json.load(handle)["traceEvents"]
    expected = Counter(
        (e["name"], round(e["dur"] * 1000))
        for e in written
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    assert sum(expected.values()) == events.height
    assert got == expected


def test_overlap_lanes_count_what_the_data_quality_check_counts() -> None:
    import polars as pl

    from tileprof.analyses.quality import overlapping_samples

    rng = np.random.default_rng(3)
    n = 5000
    tile = rng.integers(0, 20, n)
    offset = rng.integers(0, 100_000, n)
    duration = rng.integers(0, 3_000, n)
    lanes = assign_lanes(tile, offset, offset + duration)
    frame = pl.DataFrame({"tile": tile, "offset": offset, "duration": duration})
    assert int((lanes > 0).sum()) == overlapping_samples(frame)[0]
    # and no two intervals of one (tile, lane) overlap
    order = np.lexsort((offset, lanes, tile))
    same = (tile[order][1:] == tile[order][:-1]) & (lanes[order][1:] == lanes[order][:-1])
    ends = (offset + duration)[order]
    assert not np.any(same & (offset[order][1:] < ends[:-1]) & (duration[order][1:] > 0))


def test_cpu_only_trace_is_said_not_silent(dump: Path, tmp_path: Path) -> None:
    cpu = _one_cpu_op_trace(tmp_path, 2)
    code, stdout, stderr = run("trace", str(dump), str(cpu), "-o", str(tmp_path / "t.pftrace"))
    assert (
        code == 0 and "cpu.json: CPU-only trace" in stderr and "0 GPU events on 0 devices" in stdout
    )


def test_active_tiles_counter_is_the_reports_curve(tmp_path: Path) -> None:
    """On the reference profile (epoch 1), the counter equals the report's stacked curve
    summed over its legend groups (``Profile.active_tiles``), bin by bin."""
    import polars as pl

    from tileprof.model.examples import example_profile

    profile = example_profile()
    out = tmp_path / "t.pftrace"
    assert run("trace", "--example", "--epoch", "1", "-o", str(out))[0] == 0
    decoded = decode(out)
    counter = next(
        v for u, v in decoded.counters.items() if decoded.track_name(u) == "active tiles"
    )
    curve = (
        profile.active_tiles(epoch=1)
        .group_by("bin")
        .agg(pl.col("activeTiles").sum(), pl.col("start").first())
        .sort("bin")
    )
    assert [v for _, v in counter[:-1]] == pytest.approx(curve["activeTiles"].to_list())
    assert counter[-1][1] == 0.0
    first = int(curve["start"][0])
    expected = cycles_to_ns(curve["start"].to_numpy(), profile.clock_hz) - cycles_to_ns(
        np.array([first]), profile.clock_hz
    )
    assert [t for t, _ in counter[:-1]] == expected.tolist()


def test_gpu_kernel_flops_only_where_its_op_launched_it_alone(dump: Path, tmp_path: Path) -> None:
    """aten::mm [8,16]·[16,4] launches one kernel: it carries 2·8·4·16 = 1024 FLOPs. addmm
    launches a GEMM and a split-K reduce: neither carries addmm's FLOPs (how they share them
    is unknown). A memcpy launched by no op carries none."""

    def op(name: str, ts: float, dims: Any, ext: int) -> dict[str, Any]:
        args = {"Input Dims": dims, "Input type": ["float"] * len(dims), "External id": ext}
        return {"ph": "X", "cat": "cpu_op", "name": name, "ts": ts, "dur": 50, "pid": 1,
                "tid": 1, "args": args}  # fmt: skip

    def gpu(name: str, ts: float, corr: int, cat: str = "kernel") -> dict[str, Any]:
        args = {"device": 0, "stream": 7, "correlation": corr}
        return {"ph": "X", "cat": cat, "name": name, "ts": ts, "dur": 5, "args": args}

    def launch(ts: float, corr: int, ext: int) -> dict[str, Any]:
        args = {"correlation": corr, "External id": ext}
        return {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "ts": ts,
                "dur": 1, "args": args}  # fmt: skip

    events = [
        op("aten::mm", 0, [[8, 16], [16, 4]], 1),
        launch(1, 11, 1),
        op("aten::addmm", 100, [[3], [4, 8], [8, 3], [], []], 2),
        launch(101, 12, 2),
        launch(102, 13, 2),
        gpu("gemm_alone", 10, 11),
        gpu("gemm_split", 110, 12),
        gpu("splitK_reduce", 120, 13),
        gpu("Memcpy HtoD", 200, 99, cat="gpu_memcpy"),
    ]
    trace = tmp_path / "flops.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    out = tmp_path / "f.pftrace"
    code, _, err = run("trace", str(dump), str(trace), "-o", str(out))
    assert code == 0, err
    (slices,) = _gpu_slices(decode(out)).values()
    flops: dict[tuple[str | None, int], float | None] = {}
    for *_, args in slices:
        flops[(args.get("launching op"), args["correlation"])] = args.get("flops")
    assert flops == {
        ("aten::mm", 11): 2 * 8 * 4 * 16,
        ("aten::addmm", 12): None,
        ("aten::addmm", 13): None,
        (None, 99): None,
    }


# ---------------------------------------------------------------- the model's devices by hand


def test_event_frame_devices_by_hand() -> None:
    """Issue 38 (branch mutQ): a GPU-event frame split by device, every field stated. Device 0
    is named, device 1 is not ("GPU 1"), an event with no device goes to "GPU"; two events
    that overlap on stream 7 take lanes 0 and 1; kinds take Kineto's category names (an
    unknown kind is a kernel); the devices come sorted by name."""
    from tileprof.model.trace import event_frame_devices

    events = pl.DataFrame(
        {
            "start_ns": [10, 12, 5, 7, 3],
            "end_ns": [20, 15, 9, 8, 4],
            "stream": [7, 7, 3, None, 1],
            "device": [0, 0, 1, None, 0],
            "kind": ["kernel", "memcpy", "memset", "comm", "kernel"],
            "name": ["a", "b", "c", "d", "e"],
            "correlation": [1, 2, 3, 4, 5],
        }
    )
    devices = event_frame_devices(events, {0: "A100"}, "x.db")
    assert [(d.name, d.source, d.streams, d.lanes) for d in devices] == [
        ("A100 (device 0, x.db)", "x.db", (1, 7), 2),
        ("GPU", "x.db", (-1,), 1),
        ("GPU 1 (device 1, x.db)", "x.db", (3,), 1),
    ]
    columns = ["device", "stream", "lane", "begin_ns", "end_ns", "name", "cat", "correlation"]
    assert [d.slices.columns for d in devices] == [[*columns[:7], "op", "grid", "block",
                                                    "correlation", "flops"]] * 3  # fmt: skip
    assert [d.slices.select(columns).rows() for d in devices] == [
        [
            (0, 1, 0, 3, 4, "e", "kernel", 5),
            (0, 7, 0, 10, 20, "a", "kernel", 1),
            (0, 7, 1, 12, 15, "b", "gpu_memcpy", 2),
        ],
        [(-1, -1, 0, 7, 8, "d", "kernel", 4)],
        [(1, 3, 0, 5, 9, "c", "gpu_memset", 3)],
    ]
    for d in devices:
        extra = d.slices.select("op", "grid", "block", "flops")
        assert extra.dtypes == [pl.String, pl.String, pl.String, pl.Float64]
        assert extra.null_count().row(0) == (d.slices.height,) * 4
    gridded = event_frame_devices(
        events.with_columns(grid=pl.lit("2x1x1"), block=pl.lit("64x1x1")), {}, "x.db"
    )
    assert {(r["grid"], r["block"]) for d in gridded for r in d.slices.to_dicts()} == {
        ("2x1x1", "64x1x1")
    }


def test_nvtx_track_by_hand() -> None:
    """NVTX ranges as one track group: a track per thread (no thread: -1), nested ranges on
    lanes below, a range without a name named "(unnamed range)", sorted by begin then end."""
    from tileprof.model.trace import nvtx_track

    empty = pl.DataFrame({"name": [], "start_ns": [], "end_ns": [], "tid": []})
    assert nvtx_track(empty, "x") is None
    ranges = pl.DataFrame(
        {
            "name": ["outer", None, "inner", "other"],
            "start_ns": [0, 50, 10, 5],
            "end_ns": [100, 60, 20, 6],
            "tid": [4, 4, 4, None],
        }
    )
    track = nvtx_track(ranges, "x.db")
    assert track is not None
    assert (track.name, track.source, track.streams, track.lanes) == (
        "NVTX ranges (x.db)",
        "x.db",
        (-1, 4),
        2,
    )
    columns = ["device", "stream", "lane", "begin_ns", "end_ns", "name", "cat"]
    assert track.slices.select(columns).rows() == [
        (-1, 4, 0, 0, 100, "outer", "nvtx"),
        (-1, -1, 0, 5, 6, "other", "nvtx"),
        (-1, 4, 1, 10, 20, "inner", "nvtx"),
        (-1, 4, 1, 50, 60, "(unnamed range)", "nvtx"),
    ]
    extra = track.slices.select("op", "grid", "block", "correlation", "flops")
    assert extra.dtypes == [pl.String, pl.String, pl.String, pl.Int64, pl.Float64]
    assert extra.null_count().row(0) == (4,) * 5
    # a row is a thread, not a stream, and the device and stream columns hold no fact of it
    rows = [track.row_name(stream, lane) for stream, lane in ((4, 0), (4, 1), (4, 2), (-1, 0))]
    assert rows == ["thread 4", "thread 4 overlap", "thread 4 overlap 2", "thread ?"]
    assert track.placeholders == ("device", "stream")


ROCPROF_TRACE = (
    "Kind,Agent_Id,Queue_Id,Stream_Id,Kernel_Name,Correlation_Id,Start_Timestamp,End_Timestamp,"
    "LDS_Block_Size,Scratch_Size,Vgpr_Count,Accum_VGPR_Count,SGPR_Count,"
    "Workgroup_Size_X,Workgroup_Size_Y,Workgroup_Size_Z,Grid_Size_X,Grid_Size_Y,Grid_Size_Z\n"
    "KERNEL_DISPATCH,Agent 1,5,7,gemm,11,1000,3000,512,0,32,8,16,64,2,1,1024,4,1\n"
    "KERNEL_DISPATCH,Agent 3,5,7,ncclAllReduce,13,2000,2500,0,0,8,0,8,32,1,1,32,1,1\n"
    "KERNEL_DISPATCH,Agent 1,6,9,gemm,12,2500,9000,1024,16,24,4,40,128,1,1,2048,1,1\n"
)
"""A rocprofv3 kernel trace written by hand: two agents, gemm on streams 7 and 9 of agent 1."""


def test_a_rocprof_kernel_trace_is_drawn_by_hand(tmp_path: Path) -> None:
    """``trace`` of a rocprofv3 kernel trace alone: one process per agent, named by its
    target, device and file; each dispatch at its own ns (``--align none``), a kernel of any
    kind (an NCCL one is "comm" in the frame) with Kineto's category "kernel"."""
    path = tmp_path / "hand_kernel_trace.csv"
    path.write_text(ROCPROF_TRACE)
    out = tmp_path / "t.json"
    code, stdout, stderr = run("trace", str(path), "--align", "none", "-o", str(out))
    assert code == 0, stderr
    assert "3 GPU events on 2 devices" in stdout
    events = _chrome(out)["traceEvents"]
    _check_trace_event_format(_chrome(out))
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    got = sorted(
        (processes[e["pid"]], e["ts"], e["dur"], e["name"], e["cat"], e["args"]["stream"])
        for e in events
        if e["ph"] == "X"
    )
    agent1 = "AMD GPU (agent 1) (device 1, hand_kernel_trace.csv)"
    agent3 = "AMD GPU (agent 3) (device 3, hand_kernel_trace.csv)"
    assert got == [
        (agent1, 1.0, 2.0, "gemm", "kernel", 7),
        (agent1, 2.5, 6.5, "gemm", "kernel", 9),
        (agent3, 2.0, 0.5, "ncclAllReduce", "kernel", 7),
    ]
    gemm = next(e for e in events if e["ph"] == "X" and e["args"]["correlation"] == 12)
    assert (gemm["args"]["grid"], gemm["args"]["block"]) == ([2048, 1, 1], [128, 1, 1])


def test_a_tile_dump_given_as_a_gpu_trace_names_itself(dump: Path, tmp_path: Path) -> None:
    """``tileprof.trace`` with the dump among ``gpu_traces``: the error names that file and
    says where a dump goes."""
    import tileprof
    from tileprof.core.errors import InputError

    with pytest.raises(InputError) as caught:
        tileprof.trace(None, tmp_path / "t.json", gpu_traces=[dump])
    assert caught.value.path == str(dump)
    assert "give the one tile DUMP first" in caught.value.message


def _one_cpu_op_trace(tmp_path: Path, dur: int) -> Path:
    """``cpu.json``: a CPU-only trace of one ``aten::mm`` at 1 µs lasting ``dur`` µs."""
    cpu = tmp_path / "cpu.json"
    event = {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": dur}
    cpu.write_text(json.dumps({"traceEvents": [event]}))
    return cpu


def test_a_critical_path_that_takes_no_time_adds_no_track(tmp_path: Path) -> None:
    """``--critical-path`` on a trace whose one CPU op takes 0 µs: no path takes time, so no
    track, and the trace is still said to be CPU-only."""
    cpu = _one_cpu_op_trace(tmp_path, 0)
    out = tmp_path / "t.json"
    code, stdout, stderr = run("trace", str(cpu), "--critical-path", "-o", str(out))
    assert code == 0, stderr
    assert "cpu.json: CPU-only trace" in stderr and "0 GPU events on 0 devices" in stdout
    assert not [e for e in _chrome(out)["traceEvents"] if e["ph"] == "X"]


def test_the_critical_path_moves_with_its_traces_earliest_device() -> None:
    """kineto_small.json's devices start at 1000 µs (device 0) and 1700 µs (device 1), its
    critical path at 100 µs (a CPU op). ``--align start`` puts each device at 0 and moves the
    path with the earliest device (−1000 µs): the path would start at −900 µs, so every
    target moves 900 µs later, and says so."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.trace import build_timeline, parse_alignment

    path = TRACES / "kineto_small.json"
    starts = {}
    notes = {}
    for align in ("none", "start"):
        timeline = build_timeline(
            None, Filters(), [path], parse_alignment((align,)), critical_path=True
        )
        starts[align] = {g.name: int(g.slices["begin_ns"].min()) for g in timeline.gpus}
        notes[align] = timeline.notes
        # the path's track has the devices' columns, of their types (no all-null column)
        schemas = {tuple(g.slices.schema.items()) for g in timeline.gpus}
        assert len(schemas) == 1 and ("op", pl.String) in schemas.pop()
    a100 = "NVIDIA A100-SXM4-80GB (device 0, kineto_small.json)"
    gpu1 = "GPU 1 (device 1, kineto_small.json)"
    critical = "Critical path (kineto_small.json)"
    assert starts["none"] == {a100: 1_000_000, gpu1: 1_700_000, critical: 100_000}
    assert starts["start"] == {a100: 900_000, gpu1: 900_000, critical: 0}
    assert notes == {
        "none": (),
        "start": ("every target moved 900 µs later so that none starts before 0",),
    }


def test_a_critical_path_without_a_device_aligns_on_its_own(tmp_path: Path) -> None:
    """A CPU-only trace whose one op takes 2 µs: its critical path is drawn (one span,
    ``--align start`` puts it at 0), though no device of its trace is there to move with."""
    cpu = _one_cpu_op_trace(tmp_path, 2)
    out = tmp_path / "t.json"
    code, _, stderr = run("trace", str(cpu), "--critical-path", "-o", str(out))
    assert code == 0, stderr
    events = _chrome(out)["traceEvents"]
    processes = {e["pid"]: e["args"]["name"] for e in events if e["name"] == "process_name"}
    spans = [(processes[e["pid"]], e["ts"], e["dur"]) for e in events if e["ph"] == "X"]
    assert spans == [("Critical path (cpu.json)", 0.0, 2.0)]


def test_a_cpu_only_trace_with_a_path_says_so_and_counts_no_device(tmp_path: Path) -> None:
    """The critical-path track of a CPU-only trace is one span on a track group, not a
    device of one GPU event; the trace is still said to be CPU-only, with what is drawn."""
    cpu = _one_cpu_op_trace(tmp_path, 2)
    code, stdout, stderr = run("trace", str(cpu), "--critical-path", "-o", str(tmp_path / "t.json"))
    assert code == 0, stderr
    assert stdout.endswith(
        ": 0 GPU events on 0 devices, 1 critical-path span on 1 track group\n"
    ), stdout
    assert "cpu.json: CPU-only trace (no GPU kernel events): only its critical path drawn" in (
        stderr
    )


def test_the_track_groups_beside_the_devices_are_counted_apart(tmp_path: Path) -> None:
    """kineto_small.json: 8 GPU events on 2 devices, and 13 critical-path spans; an nsys
    export's NVTX ranges are a track group, not a third device."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.trace import build_timeline, nvtx_track, parse_alignment

    path = TRACES / "kineto_small.json"
    timeline = build_timeline(None, Filters(), [path], parse_alignment(()), critical_path=True)
    assert timeline.describe() == (
        "8 GPU events on 2 devices, 13 critical-path spans on 1 track group"
    )
    ranges = pl.DataFrame(
        {"name": ["a", "b"], "start_ns": [0, 5], "end_ns": [10, 6], "tid": [1, 2]}
    )
    nvtx = nvtx_track(ranges, "x.sqlite")
    assert nvtx is not None
    with_nvtx = replace(timeline, gpus=(*timeline.gpus, nvtx, nvtx))
    assert with_nvtx.describe() == (
        "8 GPU events on 2 devices, 13 critical-path spans on 1 track group, "
        "4 NVTX ranges on 2 track groups"
    )


def test_lanes_of_any_integer_type() -> None:
    """``assign_lanes`` takes keys, starts and ends of any integer type (int32 arrays, Python
    lists): the same lanes as int64, in int64."""
    keys, starts, ends = [0, 0, 0, 1], [0, 1, 6, 1], [5, 3, 7, 2]
    expected = [0, 1, 0, 0]
    small = [np.asarray(v, dtype=np.int32) for v in (keys, starts, ends)]
    for given in (small, [keys, starts, ends]):
        lanes = assign_lanes(*given)
        assert lanes.dtype == np.int64 and lanes.tolist() == expected


def test_alignment_values_by_hand() -> None:
    """``--align``: the last of start/none wins; TARGET=OFFSET splits at the last "=", so a
    target whose name holds "=" keeps it; offsets in the order given."""
    from tileprof.model.trace import Alignment, parse_alignment

    assert parse_alignment(()) == Alignment("start", ())
    assert parse_alignment(("none", "a=b=2.5", "start", "c=-1")) == Alignment(
        "start", (("a=b", 2.5), ("c", -1.0))
    )
    assert parse_alignment(("none",)) == Alignment("none", ())


def test_what_the_trace_holds_is_said_in_full(dump: Path, tmp_path: Path) -> None:
    """The line after the path: the dump's 7 samples on its 4 tiles, 2 of them on overlap
    tracks (tile 1's two copies); a tile range with no sample (tile 2) writes an empty device
    and says so; a second dump is named, with the first."""
    out = tmp_path / "t.json"
    code, stdout, stderr = run("trace", str(dump), "-o", str(out))
    assert code == 0, stderr
    assert stdout.splitlines()[-1] == (
        f"{out}: 7 samples on 4 tile tracks (2 overlapping, on overlap tracks), "
        "0 GPU events on 0 devices"
    )
    code, stdout, stderr = run("trace", str(dump), "--tile-range", "2:3", "-o", str(out), "--force")
    assert code == 0, stderr
    assert stdout.splitlines()[-1] == (
        f"{out}: 0 samples on 1 tile tracks (0 overlapping, on overlap tracks), "
        "0 GPU events on 0 devices"
    )
    second = write_dump(tmp_path / "second.json", SAMPLES, tileCount=4)
    code, _, stderr = run("trace", str(dump), str(second), "-o", str(out), "--force")
    assert code == 2
    assert stderr == (
        f"tileprof: error: {second}: a second tile dump; one trace draws one (the first: {dump})\n"
    )


def test_an_error_of_the_compiled_lanes_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiled sweep refusing its columns (a bug of tileprof's: the columns are built
    here) is an OutputError that says where, in one line."""
    from tileprof.core import _native
    from tileprof.core.errors import OutputError

    def refuse(frame: pl.DataFrame, jobs: int | None = None) -> None:
        raise _native.EncodeError("columns", "1 keys, 2 starts and 1 ends")

    monkeypatch.setattr(_native, "assign_lanes", refuse)
    with pytest.raises(OutputError) as caught:
        assign_lanes(np.array([0]), np.array([0]), np.array([1]))
    assert str(caught.value) == (
        "internal error in the overlap lanes (columns: 1 keys, 2 starts and 1 ends)"
    )


def test_a_dump_that_states_no_useful_cycles_has_no_utilization_counter(tmp_path: Path) -> None:
    """Samples without usefulCycles (a dump with no work estimate, as a tt-metal device log):
    the utilization is not known, so no counter at 0 says "nothing useful"; the active tiles
    counter stays."""
    plain = [{k: v for k, v in s.items() if k != "metadata"} for s in SAMPLES]
    dump = write_dump(tmp_path / "plain.json", plain)
    out = tmp_path / "t.pftrace"
    assert run("trace", str(dump), "-o", str(out))[0] == 0
    names = {decode(out).track_name(u) for u in decode(out).counters}
    assert names == {"active tiles"}


def test_a_timeline_draws_the_critical_path_only_when_asked() -> None:
    """``build_timeline`` of a PyTorch profiler trace adds its critical-path group only with
    ``critical_path`` (off by default, as ``trace`` has it)."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.trace import CRITICAL_SPAN, Alignment, build_timeline

    traces = [TRACES.parent / "tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"]
    plain = build_timeline(None, Filters(), traces, Alignment())
    asked = build_timeline(None, Filters(), traces, Alignment(), critical_path=True)
    assert [g.spans_of for g in plain.gpus].count(CRITICAL_SPAN) == 0
    assert [g.spans_of for g in asked.gpus].count(CRITICAL_SPAN) == 1


def test_every_tile_of_the_device_has_a_track(tmp_path: Path) -> None:
    """A device of 4 tiles whose samples are on tiles 2 and 3: a track for each of its tiles,
    tile 0 and 1 empty, and one overlap lane for tile 3's second sample; a tile range keeps
    its own tiles."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.profile import load
    from tileprof.model.trace import Alignment, build_timeline

    samples = [sample(2, 0, 10, "gemm"), sample(3, 5, 10, "gemm"), sample(3, 8, 4, "add")]
    dump = write_dump(tmp_path / "d.json", samples, tileCount=4)
    timeline = build_timeline(load(dump), Filters(), [], Alignment())
    assert timeline.tile is not None and timeline.tile.tiles == (0, 1, 2, 3)
    assert (timeline.tile.lanes, timeline.tile.overlapping) == (2, 1)  # tile 3's [8, 12)
    ranged = build_timeline(load(dump), Filters(), [], Alignment(), tile_range=(1, 3))
    assert ranged.tile is not None and ranged.tile.tiles == (1, 2)


def test_format_in_takes_a_file_of_no_known_kind_as_a_dump(tmp_path: Path) -> None:
    """A file ``trace`` cannot place is refused as no kind it draws; with ``--format-in`` it
    is read as that dump format, and the loader words what is wrong with it."""
    path = tmp_path / "g.txt"
    path.write_text("hello world\n")
    out = str(tmp_path / "t.json")
    code, _, err = run("trace", str(path), "-o", out)
    assert code == 2 and "not a tile dump, a PyTorch profiler (Kineto) trace" in err, err
    code, _, err = run("trace", str(path), "--format-in", "ndjson", "-o", out)
    assert (code, err) == (
        2,
        f"tileprof: error: {path}: line 1, column 1: malformed JSON: invalid character\n",
    )


def test_a_pytorch_trace_is_streamed_for_the_timeline_not_read_whole() -> None:
    """``trace`` reads a PyTorch profiler trace through the decoder's window (a trace of
    gigabytes is never held whole), as its other inputs are read once."""
    from tileprof.model.reading import DumpReading
    from tileprof.model.trace import trace_inputs

    profile, others = trace_inputs([TRACES / "kineto_small.json"], False, DumpReading())
    ((found,),) = [others]
    assert profile is None and found.streamed and found.data is None


def test_a_device_the_trace_does_not_name_is_named_by_its_number(tmp_path: Path) -> None:
    """Without ``deviceProperties`` a GPU is "GPU N", device 0 too."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.trace import Alignment, build_timeline

    kernels = [_kineto_kernel(0, 0), _kineto_kernel(1, 1)]
    path = tmp_path / "t.json"
    path.write_text(json.dumps({"traceEvents": kernels}))
    timeline = build_timeline(None, Filters(), [path], Alignment())
    assert [g.name for g in timeline.gpus] == [
        "GPU 0 (device 0, t.json)",
        "GPU 1 (device 1, t.json)",
    ]


def _kineto_kernel(correlation: int, device: int) -> dict[str, Any]:
    args = {"device": device, "stream": 7, "correlation": correlation}
    return {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 1, "dur": 2} | {
        "args": args
    }
