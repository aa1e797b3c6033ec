"""The devices of one capture or job are one target with a per-device spread (issue 31), never
targets compared with each other.

On the real files where it was found: the 2×H100 nsys export (its GPUs were compared as two
targets, "GPU 0" and "GPU 1", in six linked sets) and tt-perf-report's 8-chip Blackhole report
(its chips were eight targets: "1.014× the slowest" in eleven linked sets). Expected figures
come from SQL over the export and from the CSV read with the standard library.
"""

from __future__ import annotations

import csv
import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
NSYS = REAL / "h100_2gpu_1s.sqlite"
CHIPS = REAL / "bh_8xp150_deepseek_v3_d_p.csv"
CLIP = REAL / "tt_wh_clip_encoder_400.csv"
ENERGY = REAL.parent / "seeds" / "003_2d9153cb18ea7de3.txt"


def run(*args: str | Path) -> str:
    result = CliRunner().invoke(cli, [str(a) for a in args])
    assert result.exit_code == 0, result.output
    return result.stdout


def runs_json(*args: str | Path) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(run("runs", *args, "--format", "json"))
    return doc


def test_the_gpus_of_one_export_are_one_target_with_a_spread() -> None:
    doc = runs_json(NSYS)
    runs = doc["runs"]
    assert {r["target"] for r in runs} == {"GPU"}
    assert {r["device"] for r in runs} == {"GPU 0", "GPU 1"}
    assert doc["linkedSets"] == []  # two devices of one export: nothing to compare as targets
    with sqlite3.connect(f"file:{NSYS}?mode=ro", uri=True) as db:
        means = db.execute(
            "SELECT k.deviceId, avg(k.end - k.start) / 1000.0 FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName WHERE s.value LIKE "
            "'sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8_stage3_warpsize1x4x1_ffma%"
            "execute_kernel__5x_cublas' GROUP BY k.deviceId ORDER BY k.deviceId"
        ).fetchall()
    gemm = [
        r
        for r in runs
        if r["kernel"].startswith("sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize64x256x8")
        and r["kernel"].endswith("execute_kernel__5x_cublas")
    ]
    assert sorted(r["device"] for r in gemm) == ["GPU 0", "GPU 1"]
    low, high = min(m for _, m in means), max(m for _, m in means)
    slowest = f"GPU {max(means, key=lambda m: m[1])[0]}"
    for row in gemm:
        assert row["devices"] == 2
        assert row["device_min_us"] == pytest.approx(low, rel=1e-12)
        assert row["device_max_us"] == pytest.approx(high, rel=1e-12)
        assert row["device_spread"] == pytest.approx((high - low) / low, rel=1e-9)
        assert row["slowest_device"] == slowest
    assert "GPU 0" not in run("runs", NSYS, "--linked")


def _chip_times() -> dict[str, float]:
    """The 3200×1536×1792 matmul's device kernel time (µs) per chip, read with csv."""
    with CHIPS.open(newline="") as handle:
        rows = [
            r
            for r in csv.DictReader(handle)
            if r["OP CODE"] == "MatmulDeviceOperation"
            and r["INPUT_0_Y_PAD[LOGICAL]"].startswith("3200[")
            and r["INPUT_0_X_PAD[LOGICAL]"].startswith("1792[")
            and r["INPUT_1_X_PAD[LOGICAL]"].startswith("1536[")
        ]
    return {f"chip {r['DEVICE ID']}": int(r["DEVICE KERNEL DURATION [ns]"]) / 1000 for r in rows}


def test_the_chips_of_one_report_are_one_target_with_a_spread() -> None:
    times = _chip_times()
    assert len(times) == 8
    doc = runs_json(CHIPS)
    assert doc["linkedSets"] == []  # were eleven sets of "targets" chip 0 … chip 7
    assert {r["target"] for r in doc["runs"]} == {"Tenstorrent blackhole"}
    matmul = [r for r in doc["runs"] if r["shape"] == "3200x1536x1792"]
    assert {r["device"]: r["time_us"] for r in matmul} == pytest.approx(times)
    low, high = min(times.values()), max(times.values())
    for row in matmul:
        assert (row["devices"], row["slowest_device"]) == (8, max(times, key=times.__getitem__))
        assert (row["device_min_us"], row["device_max_us"]) == pytest.approx((low, high))
        assert row["device_spread"] == pytest.approx((high - low) / low)
    assert (low, high, max(times, key=times.__getitem__)) == (92.929, 94.25, "chip 2")
    table = run("runs", CHIPS)
    assert "device spread" in table.splitlines()[1]
    line = next(x for x in table.splitlines() if "│ chip 2 " in x and "94.25 µs" in x)
    assert "1.42% of 8, slowest chip 2" in line
    assert "the slowest" not in run("runs", CHIPS, "--linked")
    header = run("runs", CHIPS, "--format", "csv").splitlines()[0].split(",")
    assert {"device", "devices", "device_spread", "slowest_device"} <= set(header)


def test_the_report_shows_the_spread_and_no_set_of_devices(tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    run("report", CHIPS, NSYS, "-o", page)
    html = page.read_text()
    assert "<h3>Devices of one target</h3>" in html and 'id="device-spread"' in html
    assert "× the slowest" not in html and "linked-0" not in html
    assert "Kernels of h100_2gpu_1s.sqlite · GPU 0" in html
    assert "Kernels of h100_2gpu_1s.sqlite · GPU 1" in html


def test_a_linked_set_compares_targets_and_gives_each_ones_device_spread(
    tmp_path: Path,
) -> None:
    """Two chips of a Wormhole report run an 8192³ f32 matmul; the A100's GEMM of that shape
    links with the one Tenstorrent target, whose text gives its chips' spread."""
    frame = pd.read_csv(CLIP, low_memory=False)
    mm = frame[frame["OP CODE"] == "MinimalMatmulOp"].head(2).copy()
    for column in (
        "INPUT_0_Y_PAD[LOGICAL]",
        "INPUT_0_X_PAD[LOGICAL]",
        "INPUT_1_Y_PAD[LOGICAL]",
        "INPUT_1_X_PAD[LOGICAL]",
    ):
        mm[column] = "8192[8192]"
    mm["INPUT_0_DATATYPE"] = "FLOAT32"
    mm["DEVICE ID"] = [0, 1]
    path = tmp_path / "ops_perf_results_two_chips.csv"
    mm.to_csv(path, index=False)
    times = sorted(mm["DEVICE KERNEL DURATION [ns]"] / 1000)
    sets = runs_json(ENERGY, path)["linkedSets"]
    same = [s for s in sets if s["link_by"] == "shape" and "8192x8192x8192" in s["set"]]
    assert {s["target"] for s in same} == {"NVIDIA A100-SXM4-40GB", "Tenstorrent wormhole_b0"}
    tt = next(s for s in same if s["target"] == "Tenstorrent wormhole_b0")
    assert tt["runs"] == 2 and tt["devices"] == 2
    assert tt["time_us"] == pytest.approx(times[0])  # the target's fastest run
    assert (tt["device_min_us"], tt["device_max_us"]) == pytest.approx(tuple(times))
    assert f" on {tt['device']} (2 devices: " in tt["text"]
