"""Parsers of GPU run sources, held to the figures their sources state."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tileprof.core.errors import InputError
from tileprof.core.run_schema import RUN_SCHEMA
from tileprof.inputs.sources import detect_kind, load_runs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
LATENCY = FIXTURES / "seeds" / "000_55f6fcd9cea2f10a.txt"
ENERGY = FIXTURES / "seeds" / "003_2d9153cb18ea7de3.txt"
RUNS = FIXTURES / "runs"


def test_latency_benchmarks_every_row_as_stated() -> None:
    parsed = load_runs(LATENCY)
    frame = parsed.frame
    assert parsed.kind == "latency benchmarks"
    assert frame.schema == RUN_SCHEMA
    assert frame.height == 8 * 2 + 8
    held = frame.filter(frame["source"].str.contains("held_out"))
    assert held.height == 16
    small_a100 = held.filter(
        (held["target"] == "A100 SXM4 80 GB") & (held["workload"] == "small")
    ).sort("implementation", descending=True)
    assert small_a100["implementation"].to_list() == ["trainkernel", "inductor"]
    assert small_a100["time_us"].to_list() == [66.04, 22.92]
    assert small_a100["shape"].to_list() == ["32x128x256x64"] * 2
    tk = small_a100.row(0, named=True)
    assert tk["baseline_implementation"] == "inductor"
    assert tk["baseline_time_us"] == 22.92
    assert tk["speedup"] == pytest.approx(22.92 / 66.04)
    assert json.loads(tk["metadata"])["ratio"] == 2.894
    assert set(frame["op_family"].to_list()) == {"train_step"}
    assert frame["per"].unique().to_list() == ["step"]
    calib = frame.filter(frame["source"].str.contains("h100_calibration"))
    assert calib["time_us"].to_list() == [
        56.53,
        93.59,
        92.87,
        104.85,
        190.88,
        344.73,
        355.29,
        389.76,
    ]
    assert set(calib["target"].to_list()) == {"H100 SXM 80 GB"}
    wg = calib.row(1, named=True)
    assert (wg["baseline_implementation"], wg["baseline_time_us"]) == ("selected WMMA", 56.53)
    assert calib.row(0, named=True)["baseline_implementation"] is None
    assert parsed.metadata["sources"]["h100"].startswith("https://github.com/arpjw/")


def test_energy_report_figures_as_stated() -> None:
    parsed = load_runs(ENERGY)
    frame = parsed.frame
    assert parsed.kind == "energy report"
    assert frame.height == 6
    assert set(frame["target"].to_list()) == {"NVIDIA A100-SXM4-40GB"}
    gemm = {r["implementation"]: r for r in frame.head(4).iter_rows(named=True)}
    fp16 = gemm["fp16_tensor_core"]
    assert fp16["time_us"] == pytest.approx(0.004362116411197246 * 1e6, rel=1e-15)
    assert fp16["energy_j"] == 1.4260743023888982
    assert fp16["energy_raw_j"] == 1.7315273040482346
    assert fp16["mac"] == 549755813888
    assert fp16["calls"] == 5805
    assert fp16["shape"] == "8192x8192x8192"
    assert (fp16["op_family"], fp16["dtype"]) == ("gemm", "f16")
    # derived: 2·MAC / s over the A100's dense FP16 peak of 312 TFLOP/s (the seed's own
    # "conventional_operations" is 2·MAC = 1,099,511,627,776), worked out by hand:
    # 1.099511627776e12 / 0.004362116411197246 s = 252.0592 TFLOP/s; / 312 = 0.807882
    assert fp16["tflops"] == pytest.approx(252.0592125770947, rel=1e-12)
    assert fp16["peak_fraction"] == pytest.approx(0.8078820915932523, rel=1e-12)
    assert fp16["j_per_mac"] == pytest.approx(1.4260743023888982 / 549755813888)
    assert json.loads(fp16["metadata"])["idle_adjusted_baseline_range_J"] == [
        1.4201229387177092,
        1.4320256660600867,
    ]
    assert [gemm[k]["dtype"] for k in gemm] == ["f32", "f16", "int8", "b1"]
    # FP32: 1.099511627776e12 / 0.05794544174942529 s = 18.97495 TFLOP/s; / 19.5 = 0.973074
    assert gemm["strict_fp32"]["tflops"] == pytest.approx(18.974945993692508, rel=1e-12)
    assert gemm["strict_fp32"]["peak_fraction"] == pytest.approx(0.9730741535226927, rel=1e-12)
    # INT8: 1.099511627776e12 / 0.002778655073881832 s = 395.6992 TOPS; / 624 = 0.634133
    assert gemm["int8_tensor_core"]["tflops"] == pytest.approx(395.69921366309137, rel=1e-12)
    assert gemm["int8_tensor_core"]["peak_fraction"] == pytest.approx(0.6341333552293131, rel=1e-12)
    assert gemm["b1_and_popcount_tensor_core"]["peak_fraction"] is None  # no cited b1 peak
    inf = frame.tail(2).to_dicts()
    assert [r["implementation"] for r in inf] == ["logical_batch16", "single_full_batch60000"]
    assert [r["time_us"] for r in inf] == pytest.approx([780364.251971429, 7773.678443865031])
    assert [r["energy_j"] for r in inf] == [12.106033543967767, 2.5694997995344617]
    assert [r["mac"] for r in inf] == [717900000000] * 2
    assert {(r["op_family"], r["dtype"], r["per"]) for r in inf} == {("inference", "int8", "epoch")}
    assert parsed.metadata["hardware"]["power_limit_W"] == 400.0
    assert "host-to-device transfer" in parsed.metadata["measurement"]["excluded"]


def test_energy_report_keeps_every_source_field_once() -> None:
    """Each field of the report is in a column or in metadata (the row's, or the source's for
    the top-level blocks), and in one place only."""
    source = json.loads(ENERGY.read_text())
    parsed = load_runs(ENERGY)
    rows = {r["implementation"]: r for r in parsed.frame.iter_rows(named=True)}
    assert parsed.metadata == {
        k: v for k, v in source.items() if k not in ("gemm_8192", "ciresan_mnist_int8_inference")
    }
    assert "excluded" not in parsed.metadata  # once: inside measurement
    columns = {
        "gemm_8192": {"stages", "shape", "MAC"},
        "ciresan_mnist_int8_inference": {"stages", "logical_dimensions", "logical_MAC_per_epoch"},
    }
    stage_columns = {
        "seconds_per_GEMM": "time_us",
        "seconds_per_epoch": "time_us",
        "raw_board_energy_J_per_GEMM": "energy_raw_j",
        "raw_board_energy_J_per_epoch": "energy_raw_j",
        "idle_adjusted_board_energy_J_per_GEMM": "energy_j",
        "idle_adjusted_board_energy_J_per_epoch": "energy_j",
        "aggregate_repetitions": "calls",
        "semantics": "kernel",
    }
    for section, held in columns.items():
        for stage_name, stage in source[section]["stages"].items():
            row = rows[stage_name]
            meta = json.loads(row["metadata"])
            for key, value in stage.items():
                if key in stage_columns:
                    assert key not in meta, key
                    got = row[stage_columns[key]]
                    assert got == (value * 1e6 if key.startswith("seconds") else value), key
                else:
                    assert meta[key] == value, key
            for key, value in source[section].items():
                if key in held:
                    assert key not in meta, key
                else:
                    assert meta[key] == value, key
    batch16 = json.loads(rows["logical_batch16"]["metadata"])
    assert batch16["calls_per_epoch"] == 3750
    assert rows["logical_batch16"]["calls"] == 35  # the repetitions time_us averages over
    assert batch16["physical_width_padded_dimensions"] == [784, 2512, 2000, 1504, 1008, 512, 16]
    assert batch16["examples"] == 60000
    assert batch16["excluded_additionally"][0].startswith("labels, loss")
    fp32 = json.loads(rows["strict_fp32"]["metadata"])
    assert fp32["conventional_operations"] == 1099511627776
    assert fp32["source_artifact_sha256"].startswith("fc5b2062")
    assert fp32["timestamp_utc"] == "2026-09-02T04:41:15Z"


def test_nsys_csv_with_progress_lines_and_quoted_names() -> None:
    parsed = load_runs(RUNS / "nsys_kern_sum.csv")
    frame = parsed.frame
    assert parsed.kind == "nsys kernel summary"
    assert frame.height == 3
    add = frame.row(1, named=True)
    assert add["kernel"].startswith("void at::native::vectorized_elementwise_kernel<4, at::")
    assert add["kernel"].endswith("std::array<char*, 3ul>)")
    assert (add["time_us"], add["calls"], add["total_us"], add["p50_us"], add["max_us"]) == (
        5.0,
        100,
        500.0,
        5.0,
        5.6,
    )
    assert (add["op_family"], add["dtype"]) == ("elementwise", "f32")
    assert frame["op_family"].to_list() == ["gemm", "elementwise", "softmax"]


def test_generic_csv_and_json() -> None:
    csv_runs = load_runs(RUNS / "generic_runs.csv").frame
    assert csv_runs.height == 2
    first = csv_runs.row(0, named=True)
    assert (first["time_us"], first["calls"], first["mac"], first["dtype"]) == (
        12.5,
        100,
        1000000000,
        "f16",
    )
    # an H100 named as nvidia-smi names the SXM part: 2e9 FLOP in 12.5 µs over 989.5 TFLOP/s
    assert first["peak_fraction"] == pytest.approx(2e9 / 12.5e-6 / 1e12 / 989.5)
    assert csv_runs.row(1, named=True)["peak_fraction"] is None  # unknown device: no guess
    json_runs = load_runs(RUNS / "generic_runs.json").frame
    assert json_runs.row(0, named=True)["target"] == "NVIDIA H200"
    assert json_runs.row(0, named=True)["op_family"] == "gemm"


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (LATENCY, "latency benchmarks"),
        (ENERGY, "energy report"),
        (RUNS / "nsys_kern_sum.csv", "nsys kernel summary"),
        (RUNS / "generic_runs.csv", "run table"),
        (RUNS / "generic_runs.json", "run table"),
        (FIXTURES / "traces" / "kineto_small.json", "PyTorch trace"),
    ],
)
def test_detection_by_content(path: Path, kind: str) -> None:
    assert detect_kind(path, path.read_bytes()) == kind


@pytest.mark.parametrize(
    ("name", "start"), [("generic_runs.csv", 0), ("nsys_kern_sum.csv", 3)], ids=["runs", "nsys"]
)
def test_a_column_named_twice_is_named(tmp_path: Path, name: str, start: int) -> None:
    """A repeated column (which of the two would be read?) is refused naming the header line,
    not read silently (issue 32)."""
    lines = (RUNS / name).read_text().splitlines()
    second = lines[start].split(",")[1]
    edited = [ln + "," + ln.split(",")[1] if i >= start else ln for i, ln in enumerate(lines)]
    path = tmp_path / name
    path.write_text("\n".join(edited) + "\n")
    with pytest.raises(InputError, match=f"line {start + 1}.*column '.*' is named twice"):
        load_runs(path)
    assert second in path.read_text().splitlines()[start].rsplit(",", 1)[1]
