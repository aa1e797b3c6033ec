"""The run-table analyses behind the report's GPU sections (``tileprof.analyses.run_analysis``,
issue 38): each function on a small run table built by hand, every row it must keep, drop or
order named."""

from __future__ import annotations

import polars as pl

from tileprof.analyses import run_analysis as ra
from tileprof.core.run_schema import OP_ROW_SOURCE


def test_normalize_runs_gives_every_column_with_its_type() -> None:
    runs = pl.DataFrame(
        {"target": ["H100"], "calls": [3], "time_us": [2], "extra": ["x"]},
        schema_overrides={"target": pl.Categorical, "calls": pl.Int32, "time_us": pl.Int64},
    )
    out = ra.normalize_runs(runs)
    assert out.columns == list(ra.OPTIONAL_RUN_COLUMNS)
    assert out.schema["target"] == pl.String and out["target"].to_list() == ["H100"]
    assert out.schema["calls"] == pl.Int64 and out["calls"].to_list() == [3]
    assert out.schema["time_us"] == pl.Float64 and out["time_us"].to_list() == [2.0]
    assert out.schema["kernel"] == pl.String and out["kernel"].to_list() == [None]
    assert out.schema["mac"] == pl.Int64 and out["speedup"].to_list() == [None]


def test_source_file_is_the_part_before_the_first_colon_and_space() -> None:
    assert ra.source_file(None) == "(unknown)"
    assert ra.source_file("runs.csv: row 3: of 9") == "runs.csv"
    assert ra.source_file("C:\\runs.csv") == "C:\\runs.csv"
    assert ra.source_file("plain.json") == "plain.json"


def _runs(**columns: list) -> pl.DataFrame:  # type: ignore[type-arg]
    return ra.normalize_runs(pl.DataFrame(columns, strict=False))


def test_speedup_rows_are_gpu_runs_with_a_speedup_outside_calibration() -> None:
    runs = _runs(
        kernel=["a", "b", "c", "d", "e"],
        target_kind=["gpu", "gpu", "tile", "gpu", "gpu"],
        speedup=[1.5, None, 2.0, 3.0, 4.0],
        source=["bench.md: Results", "bench.md", "tt.csv", "bench.md: Calibration runs", None],
    )
    assert ra.speedup_rows(runs)["kernel"].to_list() == ["a", "e"]


def test_calibration_sets_by_target_and_workload_in_order() -> None:
    runs = _runs(
        target=["H100", "A100", "H100", "H100", "H100"],
        workload=["gemm", "gemm", "gemm", "conv", "gemm"],
        source=[
            "b.md: CALIBRATION",
            "b.md: calibration",
            "b.md: results",
            "b.md: Calibration",
            None,
        ],
        implementation=["one", "two", "three", "four", "five"],
    )
    sets = ra.calibration_sets(runs)
    assert [(title, f["implementation"].to_list()) for title, f in sets] == [
        ("H100 · gemm", ["one"]),
        ("A100 · gemm", ["two"]),
        ("H100 · conv", ["four"]),
    ]


def test_many_calibration_sets_keep_the_order_of_their_first_row() -> None:
    targets = [f"GPU {i}" for i in range(40, 0, -1)]
    runs = _runs(target=targets * 2, workload=["gemm"] * 80, source=["b.md: calibration"] * 80)
    assert [title for title, _ in ra.calibration_sets(runs)] == [f"{t} · gemm" for t in targets]


def test_precision_rank_widest_first_unknown_last() -> None:
    assert ra.precision_rank("fp64") == 0
    assert ra.precision_rank(" FP32 ") == 1
    assert ra.precision_rank("bfloat16") == 4
    assert ra.precision_rank("int1") == 8
    assert ra.precision_rank("posit8") == len(ra.PRECISION_ORDER) == 9
    assert ra.precision_rank(None) == 9
    assert ra.precision_rank("") == 9


def test_gemm_rows_per_target_from_the_widest_precision_down() -> None:
    runs = _runs(
        kernel=["k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"],
        target=["H100", "H100", "A100", "H100", "H100", "H100", "H100", "H100", "H100"],
        target_kind=["gpu", "gpu", "gpu", "gpu", "tile", "gpu", "gpu", "gpu", "gpu"],
        op_family=["gemm", "gemm", "gemm", "gemm", "gemm", "conv", "gemm", "gemm", "gemm"],
        dtype=["int8", "bf16", "fp8", "fp32", "fp32", "fp32", "zz", "aa", None],
        energy_j=[1.0, None, 1.0, None, 1.0, 1.0, 1.0, 1.0, 1.0],
        mac=[None, 10, None, 10, 10, 10, None, None, None],
    )
    runs = pl.concat(
        [
            runs,
            _runs(
                kernel=["k0"],
                target=["H100"],
                target_kind=["gpu"],
                op_family=["gemm"],
                dtype=["fp16"],
            ),
        ],
        how="vertical_relaxed",
    )
    # k0: neither energy nor MACs; k5 a tile run; k6 no GEMM; unknown precisions by name
    assert ra.gemm_rows(runs)["kernel"].to_list() == ["k3", "k4", "k2", "k1", "k8", "k7", "k9"]


def test_gemm_rows_of_one_target_and_precision_keep_their_order() -> None:
    names = [f"k{i}" for i in range(60, 0, -1)]
    runs = _runs(
        kernel=names,
        target=["H100"] * 60,
        target_kind=["gpu"] * 60,
        op_family=["gemm"] * 60,
        dtype=["bf16"] * 60,
        mac=[1] * 60,
    )
    assert ra.gemm_rows(runs)["kernel"].to_list() == names


def test_kernel_rows_are_gpu_per_call_rows_with_a_total_not_op_rows() -> None:
    runs = _runs(
        kernel=["a", "b", "c", "d", "e", "f"],
        target_kind=["gpu", "gpu", "gpu", "tile", "gpu", "gpu"],
        per=["call", "run", "call", "call", None, "call"],
        total_us=[1.0, 1.0, None, 1.0, 1.0, 2.0],
        source=["t.json", "t.json", "t.json", "t.json", "t.json", f"t.json{OP_ROW_SOURCE}"],
    )
    kept = runs.filter(ra.is_kernel_row())["kernel"].to_list()
    assert kept == ["a"]
    nameless = _runs(kernel=["g"], target_kind=["gpu"], per=["call"], total_us=[1.0])
    assert nameless.filter(ra.is_kernel_row())["kernel"].to_list() == ["g"]


def test_kernel_sets_per_file_target_and_device_by_total_time() -> None:
    runs = _runs(
        kernel=["a", "b", "c", "d", "e", "f", "g", "h"],
        target=["H100", "H100", "H100", "H100", "GPU", None, "H100", "H100"],
        device=["0", "0", "1", "1", "GPU 1", None, None, None],
        target_kind=["gpu"] * 8,
        per=["call"] * 8,
        total_us=[5.0, 9.0, 1.0, None, 3.0, 4.0, 2.0, 7.0],
        source=[
            "x.json: step 1",
            "x.json: step 2",
            "x.json",
            "x.json",
            "y.json",
            "z.json",
            "w.json",
            "w.json",
        ],
    )
    sets = ra.kernel_sets(runs)
    assert [(title, f["kernel"].to_list()) for title, f in sets] == [
        ("x.json · H100 · 0", ["b", "a"]),
        ("x.json · H100 · 1", ["c"]),  # d: no total, no kernel row
        ("y.json · GPU 1", ["e"]),
        ("z.json · (unknown target)", ["f"]),
        ("w.json · H100", ["h", "g"]),
    ]
    assert "several" not in sets[0][1].columns and sets[0][1]["file"].to_list() == ["x.json"] * 2
    # a row without a source: its file is "(unknown)", not "None"
    sourceless = _runs(kernel=["a"], target=["H100"], target_kind=["gpu"], per=["call"])
    sourceless = sourceless.with_columns(total_us=pl.lit(1.0))
    assert [title for title, _ in ra.kernel_sets(sourceless)] == ["(unknown) · H100"]
    # two targets of one file, one device each: neither has several devices
    two = _runs(
        kernel=["a", "b"],
        target=["H100", "A100"],
        device=["0", "1"],
        target_kind=["gpu", "gpu"],
        per=["call", "call"],
        total_us=[1.0, 2.0],
        source=["v.json", "v.json"],
    )
    assert [title for title, _ in ra.kernel_sets(two)] == ["v.json · H100", "v.json · A100"]
    # one device of a target in its file: the title leaves the device out
    one = ra.kernel_sets(runs.filter(pl.col("kernel").is_in(["a", "b"])))
    assert [title for title, _ in one] == ["x.json · H100"]


def test_device_spread_rows_are_the_slowest_devices_by_spread() -> None:
    runs = _runs(
        kernel=["a", "a", "b", "c", "d", "e", "f"],
        target=["H100", "H100", "H100", "A100", "H100", "H100", "A100"],
        device=["0", "1", "0", "2", "0", "1", "0"],
        slowest_device=["1", "1", "0", "2", "0", "1", "0"],
        devices=[2, 2, 1, 3, 2, 2, 2],
        device_spread=[1.5, 1.5, 9.0, 2.0, None, 2.0, 2.0],
        source=["s.json: 1", "s.json: 2", "s.json", "t.json: x", "s.json", "s.json", None],
    )
    out = ra.device_spread_rows(runs)
    assert out["kernel"].to_list() == ["c", "f", "e", "a", "d"]  # ties: by target, kernel
    assert out["file"].to_list() == ["t.json", "(unknown)", "s.json", "s.json", "s.json"]
