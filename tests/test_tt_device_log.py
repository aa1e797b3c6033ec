"""tt-metal device profiler logs (``profile_log_device.csv``) read as tile dumps.

Every expected figure here is computed by a plain loop over the log's rows (the pairing of
ZONE_START/ZONE_END markers, tt-metal's device kernel duration per op and chip, the
nearest-rank percentiles of each op's zone durations), never by tileprof's own code.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import tileprof
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.inputs import detect, read_dump
from tileprof.inputs.tile.tt_device_log import op_kernel_cycles, read_zones

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "real"
SHARED_LOG = FIXTURES / "tt-device-log" / "profile_log_device.csv"

OLD_HEADER = (
    "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, "
    "run host ID,  zone name, type, source line, source file, meta data"
)
NEW_HEADER = (
    "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset], data, "
    "run host ID, trace id, trace id counter, zone name, type, source line, source file, meta data"
)
RISCS = ("BRISC", "NCRISC", "TRISC0", "TRISC1", "TRISC2")
CORES = ((1, 1), (2, 1), (1, 2))
BUFFER_FULL = (
    "Profiler DRAM buffers were full, markers were dropped! device 1, worker core 2, 1, "
    "Risc TRISC1,  bufferEndIndex = 12000"
)


def _row(layout: str, m: dict[str, Any]) -> list[Any]:
    head = [m["chip"], m["x"], m["y"], m["risc"], 100, m["time"], m.get("data", 0), m["op"]]
    tail = [m["zone"], m["type"], 7, "kernel.cc", ""]
    trace = [m.get("trace", ""), m.get("replay", "")] if layout == "new" else []
    return head + trace + tail


def _markers(layout: str, seed: int) -> list[dict[str, Any]]:
    """Two chips, three cores each, five RISCs, three op calls per chip (two replays of each
    in the new layout): each op's firmware zone, kernel zone and TS_DATA rows per RISC."""
    rng = random.Random(seed)
    replays = (1, 2) if layout == "new" else (None,)
    out: list[dict[str, Any]] = []
    clock = {0: 5_000_000, 1: 9_000_000}
    for replay in replays:
        for base in (1024, 2048, 3072):
            for chip in (0, 1):
                op = base + chip
                t0 = clock[chip]
                for x, y in CORES:
                    for risc in RISCS:
                        start = t0 + rng.randrange(0, 400)
                        end = start + rng.randrange(1, 5000)
                        common = {"chip": chip, "x": x, "y": y, "risc": risc, "op": op}
                        if replay is not None:
                            common |= {"trace": 3, "replay": replay}
                        fw = f"{risc}-FW" if risc != "NCRISC" else "NCRISC-FW"
                        out.append(common | {"time": start - 50, "zone": fw, "type": "ZONE_START"})
                        out.append(
                            common | {"time": start, "zone": f"{risc}-KERNEL", "type": "ZONE_START"}
                        )
                        out.append(
                            common | {"time": start + 1, "zone": "", "type": "TS_DATA", "data": 9}
                        )
                        out.append(
                            common | {"time": end, "zone": f"{risc}-KERNEL", "type": "ZONE_END"}
                        )
                        out.append(common | {"time": end + 20, "zone": fw, "type": "ZONE_END"})
                clock[chip] = t0 + 20_000
    rng.shuffle(out)  # the device writes per core and RISC, not in time order
    return out


def _damaged(markers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One kernel ZONE_END dropped (its ZONE_START is then unmatched) and one stray ZONE_END
    after a matched pair of another zone."""
    lost = next(
        m
        for m in markers
        if (m["chip"], m["x"], m["y"], m["risc"], m["op"], m["type"])
        == (1, 2, 1, "TRISC1", 2049, "ZONE_END")
        and m["zone"].endswith("-KERNEL")
    )
    kept = [m for m in markers if m is not lost]
    anchor = next(
        m
        for m in markers
        if (m["chip"], m["x"], m["y"], m["risc"], m["op"], m["type"])
        == (0, 1, 2, "NCRISC", 3072, "ZONE_END")
        and m["zone"].endswith("-KERNEL")
    )
    return [*kept, anchor | {"time": anchor["time"] + 7}]


def _write_log(path: Path, layout: str, markers: list[dict[str, Any]], full_at: int) -> None:
    out = io.StringIO()
    cores = ", Max Compute Cores: 64" if layout == "new" else ""
    out.write(f"ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000{cores}\n")
    out.write((NEW_HEADER if layout == "new" else OLD_HEADER) + "\n")
    writer = csv.writer(out, lineterminator="\n")
    for i, m in enumerate(markers):
        if i == full_at:
            out.write(BUFFER_FULL + "\n")
        writer.writerow(_row(layout, m))
    path.write_text(out.getvalue())


def _plain_pairs(markers: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
    """Kernel zones by a stack per (core, RISC, op call, zone): a ZONE_START opens (an open
    one before it is unmatched), a ZONE_END closes the open one or is unmatched."""
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for i, m in enumerate(markers):
        if m["zone"].endswith("-KERNEL"):
            key = (m["chip"], m["x"], m["y"], m["risc"], m["op"], m.get("replay"), m["zone"])
            by_key[key].append(m | {"_i": i})
    pairs, unmatched = [], 0
    for key, ms in by_key.items():
        ms.sort(key=lambda m: (m["time"], m["_i"]))
        open_: dict[str, Any] | None = None
        for m in ms:
            if m["type"] == "ZONE_START":
                unmatched += open_ is not None
                open_ = m
            elif open_ is None:
                unmatched += 1
            else:
                pairs.append({"key": key, "start": open_["time"], "end": m["time"]})
                open_ = None
        unmatched += open_ is not None
    return pairs, unmatched


def _rank(values: list[int], p: float) -> int:
    ordered = sorted(values)
    return ordered[max(math.ceil(p * len(ordered)), 1) - 1]


NAMES = {1024: "Matmul", 1025: "Matmul", 2048: "Softmax", 2049: "Softmax"}
"""The ops report beside the log names four of the six op calls; the rest keep their ids."""


def _write_report(folder: Path) -> None:
    lines = ["OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT"]
    lines += [f"{name},tt_dnn_device,{op},{op % 2},3" for op, name in NAMES.items()]
    (folder / "ops_perf_results_2026_01_01.csv").write_text("\n".join(lines) + "\n")


def _expected_groups(pairs: list[dict[str, Any]], named: bool) -> dict[str, dict[str, Any]]:
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for p in pairs:
        op = p["key"][4]
        groups[NAMES.get(op, f"op {op}") if named else f"op {op}"].append(p)
    out = {}
    for name, members in groups.items():
        durations = [p["end"] - p["start"] for p in members]
        out[name] = {
            "sampleCount": len(members),
            "tileCount": len({p["key"][:3] for p in members}),
            "workCycles": sum(durations),
            "p50Cycles": _rank(durations, 0.5),
            "p95Cycles": _rank(durations, 0.95),
            "maximumCycles": max(durations),
            "firstOffset": min(p["start"] for p in members),
        }
    return out


@pytest.mark.parametrize("layout", ["old", "new"])
@pytest.mark.parametrize("named", [False, True])
def test_hand_built_logs_give_the_plain_group_statistics(
    tmp_path: Path, layout: str, named: bool
) -> None:
    markers = _damaged(_markers(layout, seed=7 if layout == "old" else 11))
    path = tmp_path / "profile_log_device.csv"
    _write_log(path, layout, markers, full_at=40)
    if named:
        _write_report(tmp_path)
    pairs, unmatched = _plain_pairs(markers)
    assert unmatched == 2

    profile = tileprof.load(path)
    assert profile.format == "tt-device-log" and profile.clock_hz == 1_000_000_000
    assert profile.tile_count == 6  # two chips × three cores
    # the new layout's line 1 says 64 cores: a Wormhole chip of 64 cores is an n300's
    board = " n300" if layout == "new" else ""
    assert profile.target.startswith(f"Tenstorrent wormhole_b0{board} (6 tiles")
    assert sorted(profile.samples["kind"].cast(str).unique()) == sorted(RISCS)
    groups = {r["name"]: r for r in profile.summary().groups.iter_rows(named=True)}
    expected = _expected_groups(pairs, named)
    assert set(groups) == set(expected)
    for name, figures in expected.items():
        assert {k: groups[name][k] for k in figures} == figures, name

    unmatched_note = next(n for n in profile.notes if "unmatched" in n)
    assert "2 unmatched kernel zone markers" in unmatched_note
    assert "1 ZONE_START without its ZONE_END, 1 ZONE_END without its ZONE_START" in unmatched_note
    full = next(n for n in profile.notes if "buffer was full" in n)
    assert "1 'markers were dropped' lines, first at line 43" in full  # 2 header lines + 40 rows


@pytest.mark.parametrize("layout", ["old", "new"])
def test_kernel_duration_per_op_and_chip_is_tt_metals(tmp_path: Path, layout: str) -> None:
    """First kernel start to last kernel end over every core and RISC of the op call, per chip."""
    markers = _damaged(_markers(layout, seed=3))
    path = tmp_path / "profile_log_device.csv"
    _write_log(path, layout, markers, full_at=5)
    pairs, _ = _plain_pairs(markers)
    spans: dict[tuple[Any, ...], list[int]] = {}
    for p in pairs:
        chip, op, replay = p["key"][0], p["key"][4], p["key"][5]
        lo_hi = spans.setdefault((chip, replay, op), [p["start"], p["end"]])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], p["start"]), max(lo_hi[1], p["end"])
    _, zones, unmatched = read_zones(path, path.read_bytes())
    got = {
        (r["chip"], r["replay"], r["op_id"]): r["cycles"]
        for r in op_kernel_cycles(zones).iter_rows(named=True)
    }
    assert got == {k: hi - lo for k, (lo, hi) in spans.items()}
    assert unmatched.height == 2


def _shared_rows() -> list[dict[str, str]]:
    lines = SHARED_LOG.read_text().splitlines()[1:]
    reader = csv.reader(lines)
    header = [h.strip() for h in next(reader)]
    return [dict(zip(header, (c.strip() for c in row), strict=True)) for row in reader if row]


def test_the_shared_logs_five_ops() -> None:
    """The real Wormhole log: 5 op calls on one core's BRISC; the last one's kernel zone has
    its ZONE_START only (the log was cut), so 4 durations and 1 unmatched marker."""
    rows = _shared_rows()
    starts: dict[str, int] = {}
    ends: dict[str, int] = {}
    for r in rows:
        if r["zone name"] == "BRISC-KERNEL":
            op, t = r["run host ID"], int(r["time[cycles since reset]"])
            if r["type"] == "ZONE_START":
                starts[op] = min(starts.get(op, t), t)
            else:
                ends[op] = max(ends.get(op, t), t)
    assert sorted(starts) == ["1024", "2048", "3072", "4096", "5120"]
    expected = {int(op): ends[op] - starts[op] for op in starts if op in ends}
    _, zones, unmatched = read_zones(SHARED_LOG, SHARED_LOG.read_bytes())
    got = {r["op_id"]: r["cycles"] for r in op_kernel_cycles(zones).iter_rows(named=True)}
    assert got == expected and len(got) == 4
    assert unmatched["op_id"].to_list() == [5120]

    profile = tileprof.load(SHARED_LOG)
    assert profile.clock_hz == 1_000_000_000 and profile.tile_count == 1
    by_op = dict(zip(profile.samples["kernel"].cast(str), profile.samples["duration"], strict=True))
    assert by_op == {f"op {op}": cycles for op, cycles in expected.items()}
    assert profile.samples["phase"].to_list() == [0, 1, 2, 3]
    fw_rows = sum(r["zone name"] == "BRISC-FW" and r["type"] == "ZONE_START" for r in rows)
    # each TS_DATA row belongs to the kernel zone of its op call that holds its time; the
    # cut-off op's rows (its zone has no end) to none
    inside: dict[int, list[str]] = defaultdict(list)
    for r in rows:
        op, t = r["run host ID"], int(r["time[cycles since reset]"])
        if r["type"] == "TS_DATA" and op in ends and starts[op] <= t <= ends[op]:
            inside[int(op)].append(r["data"])
    loose = sum(r["type"] == "TS_DATA" for r in rows) - sum(map(len, inside.values()))
    assert loose == 90 and len(inside) == 4
    kept_apart = next(n for n in profile.notes if "kept apart" in n)
    assert f"{fw_rows} firmware (-FW) zones" in kept_apart
    assert f"{sum(map(len, inside.values()))} TS_DATA rows attached" in kept_apart
    assert f"{loose} TS_DATA rows in no kernel zone" in kept_apart
    for record in profile.records():
        op = int(next(e["value"] for e in record["metadata"] if e["name"] == "op id"))
        data = [e["value"] for e in record["metadata"] if e["name"] == "data timer 12345"]
        assert data == inside[op]


def test_gzip_detection_and_commands(tmp_path: Path) -> None:
    zipped = tmp_path / "log.csv.gz"
    zipped.write_bytes(gzip.compress(SHARED_LOG.read_bytes()))
    assert read_dump(zipped)[3] == "tt-device-log"
    assert detect(SHARED_LOG, SHARED_LOG.read_bytes()).name == "tt-device-log"
    runner = CliRunner()
    result = runner.invoke(cli, ["summary", str(zipped)])
    assert result.exit_code == 0, result.output
    assert "op 1024" in result.stdout and "1 unmatched kernel zone markers" in result.stderr
    result = runner.invoke(cli, ["supersteps", str(zipped), "--format", "json"])
    assert result.exit_code == 0 and result.stdout.count('"index"') >= 4


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("ARCH: wormhole_b0\n" + OLD_HEADER + "\n", "line 1"),
        (
            "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\n"
            + OLD_HEADER
            + "\n0,1,1,BRISC,1,12x,0,1024,BRISC-KERNEL,ZONE_START,1,f,\n",
            "line 3, column 'time[cycles since reset]'",
        ),
        (
            "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\nPCIe slot, core_x, core_y\n0,1,1\n",
            "line 2",
        ),
    ],
)
def test_bad_logs_are_named_errors(tmp_path: Path, text: str, place: str) -> None:
    path = tmp_path / "profile_log_device.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert place in str(caught.value)
    result = CliRunner().invoke(cli, ["summary", str(path), "--format-in", "tt-device-log"])
    assert result.exit_code == 2 and place in result.stderr and "Traceback" not in result.output


def test_the_device_name_survives_the_cache_layout(tmp_path: Path) -> None:
    profile = tileprof.load(SHARED_LOG)
    saved = tmp_path / "log.parquet"
    profile.save(saved)
    again = tileprof.load(saved)
    assert again.device == "Tenstorrent wormhole_b0" and again.target == profile.target
    assert again.samples.equals(profile.samples)


def test_the_ops_report_gains_the_logs_kernel_duration_beside_its_own(tmp_path: Path) -> None:
    """An ops report with the device log beside it: each op row's metadata carries the mean
    over its calls of tt-metal's kernel duration computed from the log (a plain loop here),
    beside the report's own ``DEVICE KERNEL DURATION [ns]``; the note counts the calls whose
    two figures agree (one is written 3 ns off on purpose)."""
    import json

    from tileprof.inputs.sources import load_runs

    markers = _damaged(_markers("old", seed=5))
    _write_log(tmp_path / "profile_log_device.csv", "old", markers, full_at=-1)
    pairs, _ = _plain_pairs(markers)
    spans: dict[tuple[int, int], list[int]] = {}
    for p in pairs:
        lo_hi = spans.setdefault((p["key"][0], p["key"][4]), [p["start"], p["end"]])
        lo_hi[0], lo_hi[1] = min(lo_hi[0], p["start"]), max(lo_hi[1], p["end"])
    cycles = {k: hi - lo for k, (lo, hi) in spans.items()}  # 1 GHz: cycles are ns
    lines = ["OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT,DEVICE KERNEL DURATION [ns]"]
    for i, ((chip, op), ns) in enumerate(sorted(cycles.items())):
        lines.append(
            f"Op{min(op // 1024, 2)},tt_dnn_device,{op},{chip},3,{ns + (3 if i == 0 else 0)}"
        )
    report = tmp_path / "ops_perf_results_2026.csv"
    report.write_text("\n".join(lines) + "\n")
    parsed = load_runs(report)
    assert any(
        f"of {len(cycles)} op calls" in n and f"{len(cycles) - 1} equal" in n for n in parsed.notes
    )
    for row in parsed.frame.iter_rows(named=True):
        chip = int(row["device"].removeprefix("chip "))
        ns = [
            v
            for (c, op), v in cycles.items()
            if c == chip and f"Op{min(op // 1024, 2)}" == row["kernel"]
        ]
        meta = json.loads(row["metadata"])
        assert meta["device_log_kernel_us"] == pytest.approx(sum(ns) / len(ns) / 1000, rel=1e-12)


def test_the_reports_data_quality_lists_the_logs_notes() -> None:
    from tileprof.views.html.data import build_report

    profile = tileprof.load(SHARED_LOG)
    report = build_report([profile], charts=False, environ={})
    checks = {q.check: q for q in report.quality}
    assert checks["Parser notes"].count == len(profile.notes) == 2
    assert "unmatched kernel zone markers" in checks["Parser notes"].detail


def test_blank_lines_are_skipped_and_places_stay_the_files_lines(tmp_path: Path) -> None:
    path = tmp_path / "profile_log_device.csv"
    path.write_text(
        "ARCH: blackhole, CHIP_FREQ[MHz]: 1350\n"
        + OLD_HEADER
        + "\n\n0,1,1,BRISC,1,10,0,5,BRISC-KERNEL,ZONE_START,1,f,\n\n"
        + "0,1,1,BRISC,1,50,0,5,BRISC-KERNEL,ZONE_END,1,f,\n"
        + "0,1,1,BRISC,1,x5,0,5,BRISC-KERNEL,ZONE_END,1,f,\n"
    )
    with pytest.raises(InputError, match="line 7, column 'time"):
        tileprof.load(path)
    path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n")
    profile = tileprof.load(path)
    assert profile.samples["duration"].to_list() == [40] and profile.clock_hz == 1_350_000_000


def _data_log(path: Path, seed: int) -> tuple[dict[tuple[Any, ...], list[tuple[str, str]]], int]:
    """A current-layout log (written raw, as tt-metal writes it: the meta data cell unquoted,
    its commas turned into ';') of two chips, three cores, five RISCs and two replays of two op
    calls, each kernel zone holding a named TS_DATA row, an unnamed one and a performance
    counter row; further TS_DATA rows after a kernel's end (inside its firmware zone only) and
    in a kernel zone whose ZONE_END the device dropped; a TS_EVENT row. Returns, per kernel
    zone (chip, core, RISC, op, replay), its data entries in time order by a plain loop, and
    the number of TS_DATA rows in no complete kernel zone."""
    rng = random.Random(seed)
    lines: list[tuple[int, str]] = []
    expected: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    loose = 0

    def row(c: int, x: int, y: int, risc: str, timer: int, t: int, data: int, op: int,
            replay: int, zone: str, kind: str, meta: str = "") -> None:  # fmt: skip
        text = f"{c},{x},{y},{risc},{timer},{t},{data},{op},7,{replay},{zone},{kind},9,k.cc,{meta}"
        lines.append((t, text))

    for replay in (1, 2):
        for op in (1024, 2048):
            for chip in (0, 1):
                for x, y in CORES:
                    for risc in RISCS:
                        at = (chip, x, y, risc, op, replay)
                        t0 = 1_000_000 * replay + 10_000 * (op // 1024) + rng.randrange(0, 500)
                        end = t0 + 100 + rng.randrange(0, 3000)
                        dropped = at == (1, 2, 1, "TRISC1", 2048, 2)
                        base = (chip, x, y, risc)
                        row(*base, 1, t0 - 40, 0, op, replay, f"{risc}-FW", "ZONE_START")
                        row(*base, 2, t0, 0, op, replay, f"{risc}-KERNEL", "ZONE_START")
                        iters, packed = rng.randrange(1, 99), rng.randrange(2**63, 2**64)
                        value, ref = rng.randrange(0, 5000), rng.randrange(5000, 9000)
                        meta = f'{{"counter type":"FPU_COUNTER";"ref cnt":{ref};"value":{value}}}'
                        row(*base, 3, t0 + 5, iters, op, replay, "ITERATIONS", "TS_DATA")
                        row(*base, 12345, t0 + 9, packed, op, replay, "", "TS_DATA")
                        row(*base, 9090, end - 1, 77, op, replay, "", "TS_DATA", meta)
                        if not dropped:
                            row(*base, 2, end, 0, op, replay, f"{risc}-KERNEL", "ZONE_END")
                            expected[at] = [
                                ("data ITERATIONS", str(iters)),
                                ("data timer 12345", str(packed)),
                                ("counter FPU_COUNTER", str(value)),
                                ("counter FPU_COUNTER ref cnt", str(ref)),
                            ]
                        else:
                            loose += 3
                        row(*base, 4, end + 3, 5, op, replay, "LATE", "TS_DATA")
                        row(*base, 5, end + 4, 0, op, replay, "", "TS_EVENT")
                        row(*base, 1, end + 10, 0, op, replay, f"{risc}-FW", "ZONE_END")
                        loose += 1
    body = [text for _, text in lines]
    rng.shuffle(body)  # the file is written per core and RISC, not in time order
    head = ["ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64", NEW_HEADER]
    path.write_text("\n".join(head + body) + "\n")
    return expected, loose


def test_data_rows_and_counters_are_the_metadata_of_the_zone_they_were_written_in(
    tmp_path: Path,
) -> None:
    path = tmp_path / "profile_log_device.csv"
    expected, loose = _data_log(path, seed=5)
    profile = tileprof.load(path)
    got = {}
    for record in profile.records():
        meta = {e["name"]: e["value"] for e in record["metadata"][:3]}
        chip, (x, y) = int(meta["chip"]), map(int, meta["core"].split(","))
        op, replay = int(meta["op id"]), 1 + (record["phase"] >= 2)
        at = (chip, x, y, str(record["kind"]), op, replay)
        got[at] = [(e["name"], e["value"]) for e in record["metadata"][3:]]
    assert got == expected
    note = next(n for n in profile.notes if "kept apart" in n)
    assert f"{3 * len(expected)} TS_DATA rows attached" in note
    assert f"{loose} TS_DATA rows in no kernel zone" in note
    assert f"{len(got) + 1} other data rows (TS_EVENT" in note


def test_one_log_gives_the_same_figures_on_every_run(tmp_path: Path) -> None:
    """Every figure is the same on every run of one log: the epoch's load balance (a sum of
    its supersteps' mean busy cycles) once differed in its last digit from run to run, as a
    polars ``sum`` in a lazy group_by added the same rows in different orders."""
    path = tmp_path / "profile_log_device.csv"
    _write_log(path, "new", _markers("new", seed=13), full_at=-1)
    runner = CliRunner()
    outputs = set()
    for _ in range(20):
        result = runner.invoke(cli, ["supersteps", str(path), "--format", "json"])
        assert result.exit_code == 0, result.output
        outputs.add(result.stdout)
    assert len(outputs) == 1


def test_current_risc_names_are_compute_as_the_older_ones(tmp_path: Path) -> None:
    """Current tt-metal names the TRISCs ``TRISC_0``…: the same log with either spelling
    gives the same supersteps (every RISC's kernel zone is compute)."""
    runner = CliRunner()
    outputs = []
    for spelling in ("TRISC0", "TRISC_0"):
        folder = tmp_path / spelling
        folder.mkdir()
        markers = _markers("new", seed=13)
        renamed = [
            m | {"risc": m["risc"].replace("TRISC", "TRISC_")} if spelling == "TRISC_0" else m
            for m in markers
        ]
        renamed = [m | {"zone": m["zone"].replace("TRISC_", "TRISC")} for m in renamed]
        path = folder / "profile_log_device.csv"
        _write_log(path, "new", renamed, full_at=-1)
        result = runner.invoke(cli, ["supersteps", str(path), "--format", "json"])
        assert result.exit_code == 0, result.output
        outputs.append(result.stdout.replace(spelling, "SPELLING"))
    assert outputs[0] == outputs[1] and outputs[0].count('"index"') >= 6


ARCH_1000 = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000\n"
START_5 = "0,1,1,BRISC,1,10,0,5,BRISC-KERNEL,ZONE_START,1,f,\n"
END_5 = "0,1,1,BRISC,1,50,0,5,BRISC-KERNEL,ZONE_END,1,f,\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "ARCH: wormhole_b0\n" + OLD_HEADER + "\n",
            "line 1: expected 'ARCH: <arch>, CHIP_FREQ[MHz]: <MHz>' (a tt-metal device log)",
        ),
        (
            "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 0\n" + OLD_HEADER + "\n",
            "line 1: CHIP_FREQ[MHz] must be positive, not 0",
        ),
        (ARCH_1000 + "\n\n", "line 2: no column line: expected 'PCIe slot, core_x, …'"),
        (
            # only the time column is missing
            ARCH_1000 + "PCIe slot, core_x, core_y, RISC processor type, run host ID, zone name, "
            "type\n0,1,1,BRISC,5,BRISC-KERNEL,ZONE_START\n",
            "line 2: column 'time[cycles since reset]' is missing",
        ),
        (
            ARCH_1000 + OLD_HEADER + "\n0,1,1,BRISC,1x,10,0,5,BRISC-KERNEL,ZONE_START,1,f,\n",
            "line 3, column 'timer_id': not an integer: '1x'",
        ),
        (
            ARCH_1000 + NEW_HEADER + "\n0,1,1,BRISC,1,10,0,5,7,2x,BRISC-KERNEL,ZONE_START,1,f,\n",
            "line 3, column 'trace id counter': not an integer: '2x'",
        ),
        # the last line cut after 4 of its 13 fields ("0,1,1,BRISC" is 11 characters: the
        # fault is at column 13, past its end and the comma that should follow)
        (
            ARCH_1000 + OLD_HEADER + "\n" + START_5 + END_5 + "0,1,1,BRISC\n",
            "line 5, column 13: 4 fields, expected 13 (truncated file?)",
        ),
        (
            ARCH_1000 + OLD_HEADER + "\n" + START_5 + END_5 + "X\n",
            "line 5, column 3: 1 fields, expected 13 (truncated file?)",
        ),
        # a kernel ZONE_END without a time: the zone (placed at its ZONE_START) has no duration
        (
            ARCH_1000
            + OLD_HEADER
            + "\n"
            + START_5
            + "0,1,1,BRISC,1,,0,5,BRISC-KERNEL,ZONE_END,1,f,\n",
            "line 3, column duration: value is missing",
        ),
        # a kernel zone whose markers name no core_x: it is on no tile
        (
            ARCH_1000
            + OLD_HEADER
            + "\n0,,1,BRISC,1,10,0,5,BRISC-KERNEL,ZONE_START,1,f,\n"
            + "0,,1,BRISC,1,50,0,5,BRISC-KERNEL,ZONE_END,1,f,\n",
            "line 3, column physicalTile: value is missing",
        ),
    ],
)
def test_bad_logs_name_the_file_the_place_and_the_fault(
    tmp_path: Path, text: str, message: str
) -> None:
    path = tmp_path / "profile_log_device.csv"
    path.write_text(text)
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert str(caught.value) == f"{path}: {message}"


def test_a_log_that_is_no_csv_and_one_not_utf8_name_the_place(tmp_path: Path) -> None:
    path = tmp_path / "profile_log_device.csv"
    # a quote opened on line 4 that never closes
    path.write_text(ARCH_1000 + OLD_HEADER + "\n" + START_5 + '0,1,1,"BRISC,1,50\n' + END_5)
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert str(caught.value).startswith(f"{path}: line 4: malformed CSV: ")
    head = (ARCH_1000 + OLD_HEADER + "\n").encode()
    path.write_bytes(head + b"0,1,1,\xff")
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert str(caught.value) == f"{path}: byte {len(head) + 6}: not UTF-8 text"


def test_rows_written_with_a_space_after_each_comma_read_as_without(tmp_path: Path) -> None:
    """The column line has a space after each comma; rows written the same way (the last
    one too) give the same zone."""
    path = tmp_path / "profile_log_device.csv"
    path.write_text(
        ARCH_1000 + OLD_HEADER + "\n" + START_5.replace(",", ", ") + END_5.replace(",", ", ")
    )
    profile = tileprof.load(path, format="tt-device-log")
    assert profile.samples["offset"].to_list() == [10]
    assert profile.samples["duration"].to_list() == [40]


def test_a_log_of_the_required_columns_only(tmp_path: Path) -> None:
    """No timer_id, data, meta data or trace columns: the zone is read, its metadata the chip,
    core and op id; then the same log with one TS_DATA row in the zone (no timer id, no value:
    ``data timer -1`` = ""), and with two written at the zone's first and last cycles (a zone
    holds start ≤ time ≤ end)."""
    path = tmp_path / "profile_log_device.csv"
    head = (
        ARCH_1000
        + "PCIe slot, core_x, core_y, RISC processor type, time[cycles since reset], "
        + "run host ID, zone name, type\n"
        + "0,3,4,BRISC,10,5,BRISC-KERNEL,ZONE_START\n"
    )
    end = "0,3,4,BRISC,50,5,BRISC-KERNEL,ZONE_END\n"
    own = [("chip", "0"), ("core", "3,4"), ("op id", "5")]
    empty_entry = ("data timer -1", "")
    bounds = "0,3,4,BRISC,10,5,,TS_DATA\n0,3,4,BRISC,50,5,,TS_DATA\n"
    for data_rows, entries in (
        ("", []),
        ("0,3,4,BRISC,15,5,,TS_DATA\n", [empty_entry]),
        (bounds, [empty_entry, empty_entry]),
    ):
        path.write_text(head + data_rows + end)
        profile = tileprof.load(path, format="tt-device-log")
        assert profile.samples["duration"].to_list() == [40]
        [record] = profile.records()
        assert [(e["name"], e["value"]) for e in record["metadata"]] == own + entries
        attached = len(entries)
        note = next(n for n in profile.notes if "kept apart" in n)
        assert f"1 kernel zones read; {attached} TS_DATA rows attached" in note
        assert "0 TS_DATA rows in no kernel zone, 0 other data rows" in note


def test_other_zones_and_data_rows_are_counted_apart(tmp_path: Path) -> None:
    """One kernel zone, one firmware zone, one zone of the kernel's own (2 markers), two
    TS_DATA rows in the kernel zone (one with no timer id) and one TS_EVENT row."""
    path = tmp_path / "profile_log_device.csv"
    path.write_text(
        ARCH_1000
        + OLD_HEADER
        + "\n0,1,1,BRISC,1,5,0,5,BRISC-FW,ZONE_START,1,f,\n"
        + START_5
        + "0,1,1,BRISC,3,20,0,5,compute-loop,ZONE_START,1,f,\n"
        + "0,1,1,BRISC,,22,41,5,,TS_DATA,1,f,\n"
        + "0,1,1,BRISC,12,23,42,5,,TS_DATA,1,f,\n"
        + "0,1,1,BRISC,3,30,0,5,compute-loop,ZONE_END,1,f,\n"
        + END_5
        + "0,1,1,BRISC,4,55,0,5,,TS_EVENT,1,f,\n"
        + "0,1,1,BRISC,1,60,0,5,BRISC-FW,ZONE_END,1,f,\n"
    )
    profile = tileprof.load(path, format="tt-device-log")
    note = next(n for n in profile.notes if "kept apart" in n)
    assert note == (
        "profile_log_device.csv: 1 kernel zones read; 2 TS_DATA rows attached to the kernel "
        "zone open on their core and RISC (sample metadata); kept apart: 1 firmware (-FW) "
        "zones, 2 other zone markers, 0 TS_DATA rows in no kernel zone, 1 other data rows "
        "(TS_EVENT, ZONE_TOTAL, …)"
    )
    [record] = profile.records()
    assert [(e["name"], e["value"]) for e in record["metadata"][3:]] == [
        ("data timer -1", "41"),
        ("data timer 12", "42"),
    ]


def test_op_names_skip_a_row_without_an_op_code_and_name_a_bad_device_id(tmp_path: Path) -> None:
    path = tmp_path / "profile_log_device.csv"
    path.write_text(
        ARCH_1000
        + OLD_HEADER
        + "\n"
        + START_5.replace(",5,", ",1024,")
        + END_5.replace(",5,", ",1024,")
        + START_5.replace(",5,", ",2048,").replace(",10,", ",60,")
        + END_5.replace(",5,", ",2048,").replace(",50,", ",90,")
    )
    report = tmp_path / "ops_perf_results_2026.csv"
    report.write_text("OP CODE,GLOBAL CALL COUNT,DEVICE ID\nMatmul,1024,0\n,2048,0\n")
    profile = tileprof.load(path, format="tt-device-log")
    assert profile.samples["kernel"].cast(str).to_list() == ["Matmul", "op 2048"]
    report.write_text("OP CODE,GLOBAL CALL COUNT,DEVICE ID\nMatmul,1024,chip0\n")
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert str(caught.value) == f"{report}: line 2, column 'DEVICE ID': not a number: 'chip0'"


def test_op_kernel_cycles_put_the_ops_outside_a_trace_first(tmp_path: Path) -> None:
    """A current log whose op 1024 ran outside a trace (no trace id counter) and op 2048 in
    two replays: per chip, the untraced op first, then the replays in order."""
    path = tmp_path / "profile_log_device.csv"
    rows = [
        "0,1,1,BRISC,1,10,0,1024,,,BRISC-KERNEL,ZONE_START,1,f,",
        "0,1,1,BRISC,1,50,0,1024,,,BRISC-KERNEL,ZONE_END,1,f,",
        "0,1,1,BRISC,1,60,0,2048,7,1,BRISC-KERNEL,ZONE_START,1,f,",
        "0,1,1,BRISC,1,65,0,2048,7,1,BRISC-KERNEL,ZONE_END,1,f,",
        "0,1,1,BRISC,1,70,0,2048,7,2,BRISC-KERNEL,ZONE_START,1,f,",
        "0,1,1,BRISC,1,77,0,2048,7,2,BRISC-KERNEL,ZONE_END,1,f,",
    ]
    path.write_text(ARCH_1000 + NEW_HEADER + "\n" + "\n".join(reversed(rows)) + "\n")
    _, zones, _ = read_zones(path, path.read_bytes())
    got = [
        (r["chip"], r["replay"], r["op_id"], r["cycles"])
        for r in op_kernel_cycles(zones).iter_rows(named=True)
    ]
    assert got == [(0, None, 1024, 40), (0, 1, 2048, 5), (0, 2, 2048, 7)]


def test_a_fault_after_left_out_lines_is_named_at_its_line_in_the_file(tmp_path: Path) -> None:
    """A buffer-full warning (line 3) and a blank line (line 4) are left out of the table; the
    cut last line is still line 7 of the file, and an unclosed quote line 6."""
    path = tmp_path / "profile_log_device.csv"
    head = ARCH_1000 + OLD_HEADER + "\n" + BUFFER_FULL + "\n\n" + START_5
    path.write_text(head + END_5 + "0,1,1,BRISC\n")
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert (
        str(caught.value) == f"{path}: line 7, column 13: 4 fields, expected 13 (truncated file?)"
    )
    path.write_text(head + '0,1,1,"BRISC,1,50\n' + END_5)
    with pytest.raises(InputError) as caught:
        tileprof.load(path, format="tt-device-log")
    assert str(caught.value).startswith(f"{path}: line 6: malformed CSV: ")


def test_a_last_line_with_a_cell_over_128_kib_reads_in_a_fresh_process(tmp_path: Path) -> None:
    """Python's csv refuses a field over 128 KiB until its limit is raised; the log must read
    the same whether or not an earlier fault in the process raised it (a fresh interpreter)."""
    import subprocess
    import sys

    path = tmp_path / "profile_log_device.csv"
    path.write_text(ARCH_1000 + OLD_HEADER + "\n" + START_5 + END_5.rstrip("\n") + "m" * 200_000)
    code = (
        "import sys, tileprof; "
        "print(tileprof.load(sys.argv[1], format='tt-device-log').samples['duration'].to_list())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(path)], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[40]"


def test_a_data_row_without_its_value_is_an_empty_entry_not_a_refused_log(tmp_path: Path) -> None:
    """A TS_DATA row whose data cell is empty, and a counter row whose meta data has no
    ``value``: each is an entry with the value "" (the log was refused before)."""
    path = tmp_path / "profile_log_device.csv"
    path.write_text(
        ARCH_1000
        + OLD_HEADER
        + "\n"
        + START_5
        + "0,1,1,BRISC,7,20,,5,,TS_DATA,1,f,\n"
        + '0,1,1,BRISC,9090,30,77,5,,TS_DATA,1,f,{"counter type":"FPU";"ref cnt":3}\n'
        + END_5
    )
    [record] = tileprof.load(path, format="tt-device-log").records()
    assert [(e["name"], e["value"]) for e in record["metadata"][3:]] == [
        ("data timer 7", ""),
        ("counter FPU", ""),
        ("counter FPU ref cnt", "3"),
    ]
