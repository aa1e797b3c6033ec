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
import polars as pl
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


# --- a log written by hand (issue 38): every figure stated from the cells below -----------

HEADER = (
    '"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",'
    '"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value",'
    '"Rule Name","Rule Type","Rule Description","Estimated Speedup Type","Estimated Speedup"\n'
)


def ncu_line(
    launch: int, kernel: str, device: str, cc: str, metric: tuple[str, str, str], rule: tuple = ()
) -> str:
    """One metric row (``metric``: name, unit, value) or, with ``rule`` (name, type,
    description, speedup type, speedup), one rule row of launch ``launch``."""
    cells = [str(launch), "9", "app", "host", kernel, "1", "7", "(128, 1, 1)", "(4, 2, 1)"]
    cells += [device, cc, "Section", *metric, *(rule or ("", "", "", "", ""))]
    return ",".join(f'"{c}"' for c in cells) + "\n"


def hand_log() -> str:
    """k_a on device 0 in launches 1, 2 and 4, on device 1 (no CC) in 3; k_b in 5 and 6; k_c,
    with no duration, in 7."""
    a0 = lambda i, *m: ncu_line(i, "k_a", "0", "9.0", m)  # noqa: E731
    return "".join(
        [
            "program output\n",
            HEADER,
            a0(1, "Compute (SM) Throughput", "%", "40"),
            a0(1, "Memory Throughput", "%", "60"),
            a0(1, "Achieved Occupancy", "%", "30"),
            a0(1, "Theoretical Occupancy", "%", "50"),
            a0(1, "Duration", "usecond", "2.5"),
            a0(1, "Registers Per Thread", "register/thread", "all"),
            ncu_line(1, "k_a", "0", "9.0", ("", "", ""), ("R1", "OPT", "d1", "local", "10")),
            ncu_line(1, "k_a", "0", "9.0", ("", "", ""), ("R2", "INF", "d2", "", "")),
            "==WARNING== something\n",
            a0(2, "Compute (SM) [%]", "%", "20"),
            a0(2, "Memory [%]", "%", "80"),
            a0(2, "Achieved Occupancy", "%", "50"),
            a0(2, "Theoretical Occupancy", "%", "50"),
            a0(2, "Duration", "msecond", "0.0035"),
            a0(2, "gpu__time_duration.sum", "ns", "9999"),  # the first duration stands
            ncu_line(2, "k_a", "0", "9.0", ("", "", ""), ("R1", "OPT", "d1", "global", "25")),
            ncu_line(2, "k_a", "0", "9.0", ("", "", ""), ("R3", "OPT", "d3", "local", "5")),
            ncu_line(3, "k_a", "1", "", ("Duration", "nsecond", "1,000")),
            "\n",
            a0(4, "Compute (SM) Throughput", "%", "n/a"),
            a0(4, "Memory Throughput", "%", "nan"),
            a0(4, "Duration", "ns", "6000"),
            ncu_line(5, "k_b", "0", "9.0", ("Duration", "us", "1")),
            # a metric row may stop after Metric Value; a Duration without a unit is ns
            ncu_line(6, "k_b", "0", "9.0", ("Duration", "", "3000")).replace(',"","","","",""', ""),
            ncu_line(7, "k_c", "0", "9.0", ("Achieved Occupancy", "%", "10")),
        ]
    )


def test_a_hand_written_log_gives_each_kernel_row_by_hand(tmp_path: Path) -> None:
    from tileprof.inputs.gpu.ncu import parse

    path = tmp_path / "hand.ncu.log"
    parsed = parse(path, hand_log().encode())
    assert parsed.kind == "Nsight Compute CSV" and parsed.metadata == {"launches": 7}
    shown = ["target", "device", "source", "kernel", "calls", "time_us", "total_us", "max_us"]
    rows = parsed.frame.select(shown).rows()
    assert [r[:5] for r in rows] == [
        ("GPU (Nsight Compute, CC 9.0)", "GPU 0", "hand.ncu.log: IDs 1, 2, … 4 (3)", "k_a", 3),
        ("GPU (Nsight Compute)", "GPU 1", "hand.ncu.log: ID 3", "k_a", 1),
        ("GPU (Nsight Compute, CC 9.0)", "GPU 0", "hand.ncu.log: IDs 5, 6 (2)", "k_b", 2),
        ("GPU (Nsight Compute, CC 9.0)", "GPU 0", "hand.ncu.log: ID 7", "k_c", 1),
    ]
    # 2.5 µs, 0.0035 ms and 6000 ns; 1,000 ns; 1 µs and 3000 ns
    times = [x for r in rows[:3] for x in r[5:]]
    assert times == pytest.approx([4.0, 12.0, 6.0, 1.0, 1.0, 1.0, 2.0, 4.0, 3.0])
    assert rows[3][5:] == (None, None, None)  # k_c has no duration
    a0, a1, b0, c0 = (json.loads(m) for m in parsed.frame["metadata"])
    assert a0 == {
        "profiled_launches": 3,
        "sol_compute_percent": 30.0,  # 40 and 20; launch 4's n/a is no figure
        "sol_memory_percent": 70.0,  # 60 and 80; nan is no figure
        "achieved_occupancy_percent": 40.0,
        "theoretical_occupancy_percent": 50.0,
        "grid": "(4, 2, 1)",
        "block": "(128, 1, 1)",
        "cc": "9.0",
        "rules": [  # R1 at its best speedup (launch 2's), then by speedup, none as 0
            {
                "rule": "R1",
                "type": "OPT",
                "speedup_type": "global",
                "estimated_speedup_percent": 25.0,
                "description": "d1",
            },
            {
                "rule": "R3",
                "type": "OPT",
                "speedup_type": "local",
                "estimated_speedup_percent": 5.0,
                "description": "d3",
            },
            {
                "rule": "R2",
                "type": "INF",
                "speedup_type": None,
                "estimated_speedup_percent": None,
                "description": "d2",
            },
        ],
    }
    assert a1 == {"profiled_launches": 1, "grid": "(4, 2, 1)", "block": "(128, 1, 1)"} | {
        "cc": "",
        "rules": [],
    }
    assert b0["profiled_launches"] == 2 and b0["rules"] == []
    assert "sol_compute_percent" not in b0
    assert c0["achieved_occupancy_percent"] == 10.0


def test_base_units_by_hand() -> None:
    assert base_unit(3.0, "Kbyte/usecond") == (3e9, "byte/second")
    assert base_unit(2.0, "cycle/usecond") == (2e6, "hz")
    assert base_unit(1.0, "Tbytes") == (1e12, "byte")
    assert base_unit(1.0, "Pbyte") == (1e15, "byte")
    assert base_unit(4.0, "Msector") == (4e6, "sector")
    assert base_unit(2.0, " MHz ") == (2e6, "hz")
    assert base_unit(5.0, "inst/cycle") == (5.0, "inst/cycle")
    assert base_unit(4.0, "%") == (4.0, "%")
    assert base_unit(3.0, "second") == (3e9, "ns")
    assert base_unit(3.0, "s") == (3e9, "ns")


@pytest.mark.parametrize(
    ("metric", "words"),
    [
        (("Duration", "cycle", "5"), "line 3: Duration in 'cycle'"),
        (("Memory Throughput", "%", "inf"), "line 3: not a finite number: 'inf'"),
        (("Duration", "ns", "-inf"), "line 3: not a finite number: '-inf'"),
        (("", "", "", "R", "OPT", "d", "local", "inf"), "line 3: not a finite number: 'inf'"),
    ],
)
def test_a_duration_not_in_time_or_a_non_finite_value_is_named(
    tmp_path: Path, metric: tuple[str, ...], words: str
) -> None:
    path = tmp_path / "bad.ncu.log"
    path.write_text(
        HEADER
        + ncu_line(1, "k", "0", "9.0", ("Achieved Occupancy", "%", "10"))
        + ncu_line(1, "k", "0", "9.0", metric[:3], metric[3:])
    )
    code, _, err = run("runs", str(path))
    assert code == 2 and err == f"tileprof: error: {path}: {words}\n", err


def test_no_header_no_rows_or_a_column_named_twice_is_named_in_full(tmp_path: Path) -> None:
    from tileprof.core.errors import InputError
    from tileprof.inputs.gpu.ncu import parse

    path = tmp_path / "x.ncu.log"
    twice = HEADER.replace('"Context"', '"Device"')
    row = ncu_line(1, "k", "0", "9.0", ("Duration", "ns", "7"))
    cases = [
        ("program output\n", 'line 1: no `"ID",…,"Metric Value"` header of ncu --csv output'),
        (
            "program output\n" + HEADER + "==PROF== Disconnected\n",
            "line 2: no metric rows after the header",
        ),
        ("==PROF== x\n" + twice + row, "line 2: column 'Device' is named twice"),
    ]
    for text, words in cases:
        with pytest.raises(InputError) as caught:
            parse(path, text.encode())
        assert str(caught.value) == f"{path}: {words}"


# --- kernel_metrics by hand (issue 38) ----------------------------------------------------

NCU_K = {
    "sol_compute_percent": 30.0,
    "sol_memory_percent": 60.0,
    "achieved_occupancy_percent": 40.0,
    "theoretical_occupancy_percent": 50.0,
    "rules": [
        {"rule": "R1", "estimated_speedup_percent": 25.0},
        {"rule": "R3", "estimated_speedup_percent": 5.0},
    ],
}


def gpu_row(target: str, kernel: str, meta: dict | None, **more: object) -> dict:
    return {"target": target, "target_kind": "gpu", "kernel": kernel, "metadata": meta} | more


def test_ncu_figures_join_onto_kernels_of_the_same_name_by_hand() -> None:
    from tileprof.analyses.kernel_metrics import attach_kernel_metrics
    from tileprof.core.run_schema import runs_from_rows

    runs = runs_from_rows(
        [
            gpu_row("GPU", "k", None),  # a Kineto kernel: no metadata
            gpu_row("GPU (Nsight Compute, CC 9.0)", "k", NCU_K),
            gpu_row("GPU (Nsight Compute, CC 8.0)", "k", {"sol_compute_percent": 99.0}),
            gpu_row("H100", "void k<int>(float*)", {"short_name": "k", "streams": "7"}),
            {"target": "tile device", "target_kind": "tile", "kernel": "k", "time_us": 5.0},
            gpu_row("H100", "other", {"streams": "1"}),
            gpu_row("GPU (Nsight Compute)", "m", {"sol_compute_percent": 10.0, "rules": []}),
            gpu_row("H100", "m", {"streams": "2"}),
        ]
    )
    joined = attach_kernel_metrics(runs)
    k = {
        "target": "GPU (Nsight Compute, CC 9.0)",  # the first ncu row of the name
        "sol_compute_percent": 30.0,
        "sol_memory_percent": 60.0,
        "achieved_occupancy_percent": 40.0,
        "theoretical_occupancy_percent": 50.0,
        "top_rule": "R1",
        "top_rule_speedup_percent": 25.0,
    }
    m = {
        "target": "GPU (Nsight Compute)",
        "sol_compute_percent": 10.0,
        "sol_memory_percent": None,
        "achieved_occupancy_percent": None,
        "theoretical_occupancy_percent": None,
    }
    metas = [None if s is None else json.loads(s) for s in joined["metadata"]]
    assert metas == [
        {"ncu": k},
        NCU_K,
        {"sol_compute_percent": 99.0},
        {"short_name": "k", "streams": "7", "ncu": k},  # nsys: by its short name
        None,  # a tile row is no GPU kernel
        {"streams": "1"},
        {"sol_compute_percent": 10.0, "rules": []},
        {"streams": "2", "ncu": m},
    ]
    # the row's own keys first, in its order, then ncu
    assert list(json.loads(joined["metadata"][3])) == ["short_name", "streams", "ncu"]
    # joined again, nothing changes (a row's own joined figures are not an ncu row)
    assert attach_kernel_metrics(joined)["metadata"].to_list() == joined["metadata"].to_list()
    # without ncu rows, or empty, the table itself comes back
    plain = runs.filter(pl.col("target").str.contains("Nsight").not_())
    assert attach_kernel_metrics(plain) is plain
    assert attach_kernel_metrics(runs.head(0)).height == 0
    no_meta = runs.drop("metadata")
    assert attach_kernel_metrics(no_meta) is no_meta


def test_utilization_beside_by_hand() -> None:
    from tileprof.analyses.kernel_metrics import attach_kernel_metrics, utilization_beside
    from tileprof.core.run_schema import runs_from_rows

    tile = {"target": "tile device", "target_kind": "tile", "op_family": "gemm"}
    runs = runs_from_rows(
        [
            gpu_row("GPU (Nsight Compute)", "k", NCU_K, op_family="gemm", time_us=4.0),
            gpu_row("H100", "void k", {"short_name": "k"}, op_family="gemm", time_us=10.0),
            gpu_row("H100", "plain", {"streams": "1"}, op_family="gemm", time_us=50.0),
            tile | {"kernel": "t1", "time_us": 5.0, "peak_fraction": 0.4},
            tile | {"kernel": "t2", "time_us": 7.0, "peak_fraction": 0.2},
            tile | {"kernel": "t3", "time_us": 9.0, "op_family": "softmax", "peak_fraction": 0.9},
            tile | {"kernel": "t0", "time_us": None, "peak_fraction": 0.1},
            # an ncu row with a compute figure only is kept
            gpu_row("GPU (Nsight Compute)", "s", {"sol_compute_percent": 50.0}, op_family="softmax")
            | {"time_us": 2.0},
        ]
    )
    frame = utilization_beside(attach_kernel_metrics(runs))
    shown = ["kernel", "op_family", "time_us", "useful_utilization", "sol_compute", "sol_memory"]
    shown += ["achieved_occupancy", "theoretical_occupancy", "top_rule", "top_rule_speedup"]
    # by family; tile rows first, then the GPU kernels, each longest first (no time last);
    # plain, with no ncu figures, left out
    assert frame.select(shown).rows() == [
        ("t2", "gemm", 7.0, 0.2, None, None, None, None, None, None),
        ("t1", "gemm", 5.0, 0.4, None, None, None, None, None, None),
        ("t0", "gemm", None, 0.1, None, None, None, None, None, None),
        ("void k", "gemm", 10.0, None, 0.3, 0.6, 0.4, 0.5, "R1", 0.25),
        ("k", "gemm", 4.0, None, 0.3, 0.6, 0.4, 0.5, "R1", 0.25),
        ("t3", "softmax", 9.0, 0.9, None, None, None, None, None, None),
        ("s", "softmax", 2.0, None, 0.5, None, None, None, None, None),
    ]
    assert frame["target_kind"].to_list() == ["tile"] * 3 + ["gpu"] * 2 + ["tile", "gpu"]
    assert frame.columns == list(COUNTER)
    none = utilization_beside(runs.filter(~pl.col("kernel").is_in(["k", "s"])))
    assert none.height == 0 and none.columns == list(COUNTER)
    assert utilization_beside(runs.head(0)).columns == list(COUNTER)


COUNTER = (
    "target",
    "target_kind",
    "kernel",
    "op_family",
    "dtype",
    "time_us",
    "useful_utilization",
    "sol_compute",
    "sol_memory",
    "achieved_occupancy",
    "theoretical_occupancy",
    "top_rule",
    "top_rule_speedup",
)
