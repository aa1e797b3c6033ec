"""Nsight Compute ``ncu --csv`` output, held to a pandas read of the same long-format rows.

``fixtures/real/cublaslt_gemm_b200_ncu.log`` is one FP8 cuBLASLt GEMM on a B200 with the
program's own output and ``==PROF==`` lines before the header (see ``fixtures/real/README.md``).
The same rows with ncu's default (non-base) units are written here and must give equal figures.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from tests.test_nsys_sqlite import build_export
from tileprof.commands.cli import cli
from tileprof.inputs.gpu.ncu import base_unit
from tileprof.inputs.sources import detect_file_kind, load_runs

LOG = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "cublaslt_gemm_b200_ncu.log"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def metric_rows() -> pd.DataFrame:
    lines = LOG.read_text().splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    return pd.read_csv(io.StringIO("\n".join(lines[start:])), dtype=str)


def test_figures_match_the_rows() -> None:
    assert detect_file_kind(LOG)[0] == "Nsight Compute CSV"
    runs = load_runs(LOG).frame
    assert runs.height == 1
    row = runs.row(0, named=True)
    frame = metric_rows()
    value = dict(zip(frame["Metric Name"], frame["Metric Value"], strict=False))
    meta = json.loads(row["metadata"])
    assert meta["sol_compute_percent"] == float(value["Compute (SM) Throughput"])
    assert meta["sol_memory_percent"] == float(value["Memory Throughput"])
    assert meta["achieved_occupancy_percent"] == float(value["Achieved Occupancy"])
    assert meta["theoretical_occupancy_percent"] == float(value["Theoretical Occupancy"])
    assert row["time_us"] == float(value["Duration"]) / 1000  # ns in the file
    rules = frame[frame["Rule Name"].notna()]
    assert len(meta["rules"]) == len(rules.drop_duplicates(["Rule Name", "Rule Description"]))
    speedups = [r["estimated_speedup_percent"] or 0 for r in meta["rules"]]
    assert speedups == sorted(speedups, reverse=True)
    assert speedups[0] == rules["Estimated Speedup"].astype(float).max()
    assert row["op_family"] == "gemm" and row["dtype"] == "f8"


def test_units_normalised_without_print_units_base(tmp_path: Path) -> None:
    text = LOG.read_text()
    text = text.replace('"Duration","ns","406240"', '"Duration","usecond","406.24"')
    text = text.replace('"SM Frequency","hz","1239496049.13"', '"SM Frequency","Ghz","1.24"')
    path = tmp_path / "default_units.log"
    path.write_text(text)
    assert load_runs(path).frame["time_us"].to_list() == pytest.approx([406.24])
    assert base_unit(1.5, "Gbyte/second") == (1.5e9, "byte/second")
    assert base_unit(2.0, "Kbyte") == (2000.0, "byte")
    assert base_unit(3.0, "cycle/nsecond") == (3e9, "hz")
    assert base_unit(7.0, "msecond") == (7e6, "ns")


def test_joined_onto_nsys_kernels_by_name(tmp_path: Path) -> None:
    name = metric_rows()["Kernel Name"][0]
    export = build_export(tmp_path / "run.sqlite", [(name, 0, 0, 400_000), ("other", 0, 0, 9)])
    code, out, err = run("runs", str(export), str(LOG), "--format", "json")
    assert code == 0, err
    runs = json.loads(out)["runs"]
    nsys = next(r for r in runs if r["kernel"] == name and "Nsight Compute" not in r["target"])
    assert nsys["metadata"]["ncu"]["sol_compute_percent"] == 23.59
    assert nsys["metadata"]["ncu"]["top_rule"] == "TheoreticalOccupancy"
    other = next(r for r in runs if r["kernel"] == "other")
    assert "ncu" not in other["metadata"]
    with sqlite3.connect(export) as conn:  # the export itself is untouched
        assert conn.execute("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL").fetchone() == (2,)


def test_truncated_and_garbled_output_is_one_line(tmp_path: Path) -> None:
    lines = LOG.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.log"
    cut.write_text("".join(lines[:20]) + lines[20][:150])
    garbled = tmp_path / "garbled.log"
    garbled.write_text("".join(lines[:6]) + '"0","371693","cublaslt_gemm"\n' + "".join(lines[7:]))
    headless = tmp_path / "headless.log"
    headless.write_text("".join(lines[:3]) + lines[3][:40])
    cases = (
        (cut, "line 21: "),
        (garbled, "line 7: 3 fields"),
        (headless, "not a tile dump, latency benchmarks"),  # cut inside the header
    )
    for path, words in cases:
        code, _, err = run("runs", str(path))
        assert code == 2 and err.count("\n") == 1 and words in err, err
        assert err.startswith(f"tileprof: error: {path}")


def test_report_table_puts_ncu_figures_beside_tile_useful_utilization() -> None:
    from tileprof.analyses.kernel_metrics import utilization_beside
    from tileprof.core.run_schema import concat_runs, runs_from_rows

    tile = runs_from_rows(
        [
            {
                "target": "tile device",
                "target_kind": "tile",
                "kernel": "gemm_f16_a",
                "time_us": 5.0,
                "peak_fraction": 0.4,
            },
            {
                "target": "tile device",
                "target_kind": "tile",
                "kernel": "softmax_b",
                "time_us": 1.0,
                "peak_fraction": 0.1,
            },
        ]
    )
    frame = utilization_beside(concat_runs([tile, load_runs(LOG).frame]))
    assert frame["kernel"].to_list()[0] == "gemm_f16_a"  # tile first, softmax left out
    assert frame.height == 2
    gpu = frame.row(1, named=True)
    assert gpu["sol_compute"] == pytest.approx(0.2359)
    assert gpu["achieved_occupancy"] == pytest.approx(0.1553)
    assert gpu["top_rule"] == "TheoreticalOccupancy"
    assert frame.row(0, named=True)["useful_utilization"] == 0.4


def test_several_launches_and_kernels_aggregate_per_kernel(tmp_path: Path) -> None:
    lines = LOG.read_text().splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith('"ID"'))
    body = lines[start + 1 :]
    second = [
        ln.replace('"0","371693"', '"1","371693"', 1).replace('"406240"', '"1,000,000"')
        for ln in body
    ]
    name = metric_rows()["Kernel Name"][0]
    third = [
        ln.replace('"0","371693"', '"2","371693"', 1).replace(name, "other_kernel") for ln in body
    ]
    path = tmp_path / "three.log"
    path.write_text(
        "".join([*lines[: start + 1], *body, "==PROF== Disconnected\n", *second, *third])
    )
    runs = load_runs(path).frame.sort("kernel")
    assert runs["kernel"].to_list() == [name, "other_kernel"]
    gemm = runs.row(0, named=True)
    assert gemm["calls"] == 2
    assert gemm["time_us"] == pytest.approx((406.24 + 1000.0) / 2)  # "1,000,000" ns
    assert gemm["max_us"] == pytest.approx(1000.0)
    assert json.loads(gemm["metadata"])["profiled_launches"] == 2


# --- hostile output (issue 32) ------------------------------------------------------------

KERNEL = "cutlass3x_sm100_tensorop_s64x256x32gemm_f8_f8_f32_f16_f16_64x256x128_1x1x1_0_tnn_align4"


@pytest.mark.parametrize(
    "name", [KERNEL + "\nsecond line", KERNEL + "\u2028tail", KERNEL + "<" + "int, " * 40_000 + ">"]
)
def test_quoted_newline_u2028_or_a_long_name_in_the_kernel_name_is_read(
    tmp_path: Path, name: str
) -> None:
    """A quoted newline or U+2028 is part of the name, not a line end; a name past Python's
    csv cell limit (131,072) is read whole."""
    path = tmp_path / "ncu.log"
    path.write_text(LOG.read_text().replace(KERNEL + "_1sm_bias_f16_relu_aux_scalemax", name))
    runs = load_runs(path).frame
    assert runs["kernel"].to_list() == [name]
    assert runs.drop("kernel", "source").equals(load_runs(LOG).frame.drop("kernel", "source"))


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_bare_cr_and_crlf_line_ends(tmp_path: Path, end: str) -> None:
    path = tmp_path / LOG.name
    path.write_bytes(LOG.read_bytes().replace(b"\n", end.encode()))
    assert load_runs(path).frame.equals(load_runs(LOG).frame)


def test_header_repeated_or_a_column_named_twice_is_named(tmp_path: Path) -> None:
    lines = LOG.read_text().splitlines(keepends=True)
    again = tmp_path / "again.log"
    again.write_text("".join([*lines[:8], lines[3], *lines[8:]]))
    twice = tmp_path / "twice.log"
    twice.write_text("".join([*lines[:3], lines[3].replace('"Context"', '"Device"'), *lines[4:]]))
    for path, words in ((again, "line 9: the header again"), (twice, "'Device' is named twice")):
        code, _, err = run("runs", str(path))
        assert code == 2 and err.count("\n") == 1 and words in err, err
