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


# --- hand-written documents (issue 38): every field of every row, read off the text --------

ROW_KEYS = (
    "target",
    "target_kind",
    "source",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "per",
    "time_us",
    "calls",
    "mac",
    "energy_j",
    "energy_raw_j",
    "baseline_implementation",
    "baseline_time_us",
    "metadata",
)


def _parsed_rows(module: object, name: str, doc: object) -> tuple[list[dict[str, object]], object]:
    parsed = module.parse(f"some/dir/{name}", json.dumps(doc).encode())  # type: ignore[attr-defined]
    rows = [{k: r[k] for k in ROW_KEYS} for r in parsed.frame.iter_rows(named=True)]
    return rows, parsed


def test_an_energy_report_by_hand() -> None:
    from tileprof.inputs.gpu import energy_report

    doc = {
        "report_date": "2026-09-01",
        "hardware": {"gpu_name": "GPU X", "power_limit_W": 300.0},
        "measurement": {"excluded": ["copies"]},
        "gemm_8192": {
            "shape": [2, 3, 4],
            "MAC": 24,
            "note": "section",
            "artifact": "a.bin",
            "stages": {
                "fp16_tc": {
                    "seconds_per_GEMM": 0.5,
                    "raw_board_energy_J_per_GEMM": 3.0,
                    "idle_adjusted_board_energy_J_per_GEMM": 2.0,
                    "aggregate_repetitions": 7,
                    "semantics": "one GEMM",
                    "note": "stage",
                },
                "plain": {"seconds_per_GEMM": 0.25},
            },
        },
        "ciresan_mnist_int8_inference": {
            "logical_dimensions": [5, 6],
            "logical_MAC_per_epoch": 30,
            "examples": 9,
            "stages": {
                "batch1": {
                    "seconds_per_epoch": 2.0,
                    "raw_board_energy_J_per_epoch": 8.0,
                    "idle_adjusted_board_energy_J_per_epoch": 4.0,
                    "aggregate_repetitions": 3,
                    "calls_per_epoch": 11,
                    "examples": 1,
                }
            },
        },
    }
    rows, parsed = _parsed_rows(energy_report, "e.json", doc)
    assert parsed.kind == "energy report"  # type: ignore[attr-defined]
    assert parsed.metadata == {  # type: ignore[attr-defined]
        "report_date": "2026-09-01",
        "hardware": {"gpu_name": "GPU X", "power_limit_W": 300.0},
        "measurement": {"excluded": ["copies"]},
    }
    gemm = {"target": "GPU X", "target_kind": "gpu", "workload": "gemm_8192", "per": "GEMM"}
    assert rows[0] == gemm | {
        "source": "e.json: $.gemm_8192.stages.fp16_tc",
        "implementation": "fp16_tc",
        "kernel": "one GEMM",
        "op_family": "gemm",  # from the hint "gemm fp16_tc"
        "dtype": "f16",
        "shape": "2x3x4",
        "time_us": 500000.0,
        "calls": 7,
        "mac": 24,
        "energy_j": 2.0,
        "energy_raw_j": 3.0,
        "baseline_implementation": None,
        "baseline_time_us": None,
        # the stage's own note first; the section's, whose name the stage uses, prefixed
        "metadata": json.dumps({"note": "stage", "gemm_8192.note": "section", "artifact": "a.bin"}),
    }
    assert rows[1] == gemm | {
        "source": "e.json: $.gemm_8192.stages.plain",
        "implementation": "plain",
        "kernel": None,
        "op_family": "gemm",  # "gemm plain": the family from the hint, no number format
        "dtype": None,
        "shape": "2x3x4",
        "time_us": 250000.0,
        "calls": None,
        "mac": 24,
        "energy_j": None,
        "energy_raw_j": None,
        "baseline_implementation": None,
        "baseline_time_us": None,
        "metadata": json.dumps({"note": "section", "artifact": "a.bin"}),
    }
    assert rows[2] == {
        "target": "GPU X",
        "target_kind": "gpu",
        "source": "e.json: $.ciresan_mnist_int8_inference.stages.batch1",
        "workload": "ciresan_mnist_int8_inference",
        "implementation": "batch1",
        "kernel": None,
        "op_family": "inference",
        "dtype": "int8",
        "shape": "5x6",
        "per": "epoch",
        "time_us": 2000000.0,
        "calls": 3,
        "mac": 30,
        "energy_j": 4.0,
        "energy_raw_j": 8.0,
        "baseline_implementation": None,
        "baseline_time_us": None,
        "metadata": json.dumps(
            {
                "calls_per_epoch": 11,
                "examples": 1,
                "ciresan_mnist_int8_inference.examples": 9,
            }
        ),
    }
    assert len(rows) == 3


def test_an_energy_report_without_dimensions_or_sections() -> None:
    from tileprof.inputs.gpu import energy_report

    only_inference = {
        "hardware": {"gpu_name": "G"},
        "ciresan_mnist_int8_inference": {"stages": {"b": {"seconds_per_epoch": 1e-6}}},
    }
    (row,), parsed = _parsed_rows(energy_report, "e.json", only_inference)
    assert (row["shape"], row["mac"], row["time_us"], row["metadata"]) == (None, None, 1.0, None)
    assert parsed.metadata == {"hardware": {"gpu_name": "G"}}  # type: ignore[attr-defined]
    rows, parsed = _parsed_rows(energy_report, "e.json", {"hardware": {"gpu_name": "G"}})
    assert rows == []
    assert parsed.metadata == {"hardware": {"gpu_name": "G"}}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("stage", "message"),
    [
        ({"seconds_per_epoch": 0.0}, "seconds_per_epoch: expected `float` > 0.0"),
        (
            {"seconds_per_epoch": 1.0, "calls_per_epoch": -1},
            "calls_per_epoch: expected `int` >= 0",
        ),
        (
            {"seconds_per_epoch": 1.0, "aggregate_repetitions": 2**63},
            "aggregate_repetitions: expected `int` <= 9223372036854775807",
        ),
    ],
)
def test_an_energy_stage_is_checked_where_it_is(stage: dict[str, object], message: str) -> None:
    from tileprof.inputs.gpu import energy_report

    doc = {"hardware": {"gpu_name": "G"}, "ciresan_mnist_int8_inference": {"stages": {"b": stage}}}
    with pytest.raises(InputError) as caught:
        energy_report.parse("e.json", json.dumps(doc).encode())
    assert str(caught.value) == f"e.json: $.ciresan_mnist_int8_inference.stages.b.{message}"


def test_latency_benchmarks_by_hand() -> None:
    from tileprof.inputs.gpu import latency_bench

    doc = {
        "units": "us per step",
        "held_out": [
            {
                "gpu": "NVIDIA H100 SXM",
                "workload": "small",
                "shape": [1, 2, 3, 4],
                "trainkernel_us": 2.0,
                "inductor_us": 3.0,
                "ratio": 1.5,
            },
            {
                "gpu": "A100",
                "workload": "big",
                "shape": [5],
                "trainkernel_us": 4.0,
                "inductor_us": 1.0,
            },
        ],
        "h100_calibration": [
            {"workload": "small", "schedule": "s1", "latency_us": 10.0},
            {"workload": "big", "schedule": "t1", "latency_us": 20.0},
            {"workload": "small", "schedule": "s2", "latency_us": 12.0},
        ],
        "sources": {"h100": "https://example.org/h100"},
    }
    rows, parsed = _parsed_rows(latency_bench, "l.json", doc)
    assert parsed.kind == "latency benchmarks"  # type: ignore[attr-defined]
    assert parsed.metadata == {  # type: ignore[attr-defined]
        "units": "us per step",
        "sources": {"h100": "https://example.org/h100"},
    }
    step = {
        "target_kind": "gpu",
        "kernel": "train step (forward+loss+backward+SGD)",
        "op_family": "train_step",
        "dtype": None,
        "per": "step",
        "calls": None,
        "mac": None,
        "energy_j": None,
        "energy_raw_j": None,
    }
    h100 = json.dumps({"shape_dims": "batch,in,hidden,out", "ratio": 1.5})
    a100 = json.dumps({"shape_dims": "batch,in,hidden,out", "ratio": None})
    assert rows == [
        step
        | {
            "target": "NVIDIA H100 SXM",
            "source": "l.json: $.held_out[0]",
            "workload": "small",
            "implementation": "trainkernel",
            "shape": "1x2x3x4",
            "time_us": 2.0,
            "baseline_implementation": "inductor",
            "baseline_time_us": 3.0,
            "metadata": h100,
        },
        step
        | {
            "target": "NVIDIA H100 SXM",
            "source": "l.json: $.held_out[0]",
            "workload": "small",
            "implementation": "inductor",
            "shape": "1x2x3x4",
            "time_us": 3.0,
            "baseline_implementation": None,
            "baseline_time_us": None,
            "metadata": h100,
        },
        step
        | {
            "target": "A100",
            "source": "l.json: $.held_out[1]",
            "workload": "big",
            "implementation": "trainkernel",
            "shape": "5",
            "time_us": 4.0,
            "baseline_implementation": "inductor",
            "baseline_time_us": 1.0,
            "metadata": a100,
        },
        step
        | {
            "target": "A100",
            "source": "l.json: $.held_out[1]",
            "workload": "big",
            "implementation": "inductor",
            "shape": "5",
            "time_us": 1.0,
            "baseline_implementation": None,
            "baseline_time_us": None,
            "metadata": a100,
        },
        # the calibration's GPU is held_out's one H100; each workload's first schedule is the
        # baseline of its others
        step
        | {
            "target": "NVIDIA H100 SXM",
            "source": "l.json: $.h100_calibration[0]",
            "workload": "small",
            "implementation": "s1",
            "shape": None,
            "time_us": 10.0,
            "baseline_implementation": None,
            "baseline_time_us": None,
            "metadata": None,
        },
        step
        | {
            "target": "NVIDIA H100 SXM",
            "source": "l.json: $.h100_calibration[1]",
            "workload": "big",
            "implementation": "t1",
            "shape": None,
            "time_us": 20.0,
            "baseline_implementation": None,
            "baseline_time_us": None,
            "metadata": None,
        },
        step
        | {
            "target": "NVIDIA H100 SXM",
            "source": "l.json: $.h100_calibration[2]",
            "workload": "small",
            "implementation": "s2",
            "shape": None,
            "time_us": 12.0,
            "baseline_implementation": "s1",
            "baseline_time_us": 10.0,
            "metadata": None,
        },
    ]


@pytest.mark.parametrize(
    ("gpus", "target"),
    [
        (["A100", "h100 pcie", "A100"], "h100 pcie"),  # the one H100, in any case
        (["H100 SXM", "H100 SXM"], "H100 SXM"),  # one name twice is one H100
        (["H100 SXM", "H100 PCIe"], "H100"),  # two: which one is not known
        (["A100"], "H100"),
        ([], "H100"),
    ],
)
def test_the_calibration_target(gpus: list[str], target: str) -> None:
    from tileprof.inputs.gpu import latency_bench

    held = [
        {"gpu": g, "workload": "w", "shape": [1], "trainkernel_us": 1.0, "inductor_us": 1.0}
        for g in gpus
    ]
    calibration = [{"workload": "w", "schedule": "s", "latency_us": 1.0}]
    doc = {"held_out": held, "h100_calibration": calibration}
    rows, parsed = _parsed_rows(latency_bench, "l.json", doc)
    assert rows[-1]["target"] == target
    assert rows[-1]["source"] == "l.json: $.h100_calibration[0]"
    assert parsed.metadata == {"units": None, "sources": {}}  # type: ignore[attr-defined]


def test_an_energy_field_no_column_reads_is_still_checked_and_named() -> None:
    """A block the typed decoding skips (an unknown top-level one, a section's extra field) is
    read for the metadata: a number too large for a float in it is an error naming the file."""
    from tileprof.inputs.gpu import energy_report

    for extra, where in (
        ('"notes": {"x": 1e400}', "$.notes.x"),
        ('"gemm_8192": {"shape": [1], "MAC": 1, "stages": {}, "note": 1e400}', "$.gemm_8192.note"),
    ):
        data = f'{{"hardware": {{"gpu_name": "G"}}, {extra}}}'.encode()
        with pytest.raises(InputError) as caught:
            energy_report.parse("some/dir/e.json", data)
        assert str(caught.value) == f"some/dir/e.json: {where}: number out of range"
