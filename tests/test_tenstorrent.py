"""Tenstorrent ``ops_perf_results`` reports, held to a pandas re-aggregation of the same CSV.

Two real reports (``fixtures/real/README.md``): a Wormhole CLIP encoder (first 400 op rows,
with ``DEVICE ARCH`` and ``AVAILABLE WORKER CORE COUNT``) and an older ResNet-style run with
signposts and no arch column. A two-chip report is built from the first by renumbering rows.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.inputs.sources import detect_file_kind, load_runs

REAL = Path(__file__).resolve().parent.parent / "fixtures" / "real"
CLIP = REAL / "tt_wh_clip_encoder_400.csv"
RESNET = REAL / "ops_perf_results_2025_09_18_11_39_20.csv"


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def logical(cell: object) -> int:
    text = str(cell)
    return int(text.split("[")[1].rstrip("]")) if "[" in text else int(float(text))


@pytest.mark.parametrize("path", [CLIP, RESNET], ids=["clip", "resnet"])
def test_totals_per_op_match_pandas(path: Path) -> None:
    assert detect_file_kind(path)[0] == "Tenstorrent ops report"
    runs = load_runs(path).frame
    got = runs.group_by("kernel").agg(pl.col("calls").sum(), pl.col("total_us").sum())
    frame = pd.read_csv(path, low_memory=False)
    ops = frame[frame["OP TYPE"] != "signpost"]
    want = ops.groupby("OP CODE")["DEVICE KERNEL DURATION [ns]"].agg(["count", "sum"])
    assert sorted(got["kernel"].to_list()) == sorted(want.index)
    for kernel, calls, total_us in got.iter_rows():
        assert calls == want.loc[kernel, "count"]
        assert total_us == pytest.approx(want.loc[kernel, "sum"] / 1000, rel=1e-9)
    # cores and first-to-last start as the report states them
    cores = ops.groupby("OP CODE")["CORE COUNT"].max()
    for kernel, most in runs.group_by("kernel").agg(pl.col("cores").max()).iter_rows():
        assert most == cores[kernel]
    skew = ops["DEVICE KERNEL FIRST TO LAST START [ns]"].astype(float)
    weighted = (runs["start_skew_us"] * runs["calls"]).sum()
    assert weighted == pytest.approx(skew.sum() / 1000, rel=1e-9)


def test_matmul_work_from_the_shapes() -> None:
    runs = load_runs(CLIP).frame.filter(pl.col("op_family") == "gemm")
    frame = pd.read_csv(CLIP, low_memory=False)
    mm = frame[frame["OP CODE"].str.contains("Matmul")]
    dims = mm[
        [
            "INPUT_0_W_PAD[LOGICAL]",
            "INPUT_0_Z_PAD[LOGICAL]",
            "INPUT_0_Y_PAD[LOGICAL]",
            "INPUT_0_X_PAD[LOGICAL]",
            "INPUT_1_X_PAD[LOGICAL]",
        ]
    ].map(logical)
    mac = dims.prod(axis=1)  # batch·M·K·N
    assert (runs["mac"] * runs["calls"]).sum() == mac.sum()
    assert set(runs["dtype"].cast(pl.String).to_list()) == {"bf16"}
    row = runs.filter(pl.col("kernel") == "MinimalMatmulOp").row(0, named=True)
    assert row["target"] == "Tenstorrent wormhole_b0" and row["target_kind"] == "tile"
    assert row["device"] == "chip 0"
    m, n, k = (int(x) for x in row["shape"].split("x"))
    assert row["mac"] == m * n * k
    assert row["tflops"] == pytest.approx(2 * row["mac"] / row["time_us"] / 1e6)
    meta = json.loads(row["metadata"])
    assert meta["available_cores"] == 64 and meta["math_fidelity"] == "HiFi4"


def test_signposts_are_named_windows() -> None:
    parsed = load_runs(RESNET)
    frame = pd.read_csv(RESNET, low_memory=False)
    marks = frame[frame["OP TYPE"] == "signpost"]
    windows = parsed.metadata["signposts"]
    assert [w["name"] for w in windows] == marks.sort_values("HOST START TS")["OP CODE"].tolist()
    ops = frame[frame["OP TYPE"] != "signpost"]
    first = ops[ops["HOST START TS"] >= windows[0]["start_ns"]]
    assert sum(w["op_calls"] for w in windows) == len(first)
    for w in windows[:5]:  # each window by pandas: host start in [start, end)
        inside = ops[ops["HOST START TS"] >= w["start_ns"]]
        if w["end_ns"] is not None:
            inside = inside[inside["HOST START TS"] < w["end_ns"]]
        assert w["op_calls"] == len(inside)
        dur = inside["DEVICE KERNEL DURATION [ns]"].sum() / 1000
        assert w["device_us"] == pytest.approx(dur, rel=1e-9)
    assert parsed.frame["target"].unique().to_list() == ["Tenstorrent"]
    assert parsed.frame["device"].unique().to_list() == ["chip 0"]


def test_multi_chip_report_gives_one_target_with_a_device_per_chip(tmp_path: Path) -> None:
    frame = pd.read_csv(CLIP, low_memory=False)
    frame.loc[frame.index % 2 == 1, "DEVICE ID"] = 1
    path = tmp_path / "ops_perf_results_multi.csv"
    frame.to_csv(path, index=False)
    runs = load_runs(path).frame
    totals = runs.group_by("target", "device").agg(pl.col("calls").sum()).sort("device")
    assert totals.rows() == [
        ("Tenstorrent wormhole_b0", "chip 0", int((frame["DEVICE ID"] == 0).sum())),
        ("Tenstorrent wormhole_b0", "chip 1", int((frame["DEVICE ID"] == 1).sum())),
    ]


def test_truncated_and_garbled_reports_are_one_line(tmp_path: Path) -> None:
    data = CLIP.read_bytes()
    cut = tmp_path / "cut.csv"
    cut.write_bytes(data[: len(data) // 2])
    garbled = tmp_path / "garbled.csv"
    lines = data.decode().splitlines(keepends=True)
    fields = lines[3].split(",")
    fields[18] = "fast"  # DEVICE KERNEL DURATION [ns], the 19th column
    garbled.write_text("".join([*lines[:3], ",".join(fields), *lines[4:10]]))
    for path, words in ((cut, "fields, expected 98"), (garbled, "line 4, column")):
        code, _, err = run("runs", str(path))
        assert code == 2 and err.count("\n") == 1 and words in err, err
        assert err.startswith(f"tileprof: error: {path}")


def test_a_csv_that_is_no_dump_lists_the_kinds(tmp_path: Path) -> None:
    path = tmp_path / "other.csv"
    path.write_text("alpha,beta\n1,2\n")
    code, _, err = run("runs", str(path))
    assert code == 2 and err.count("\n") == 1, err
    assert "physicalTile" not in err and "Tenstorrent ops_perf_results CSV" in err, err


def test_host_side_ops_are_counted_not_rows(tmp_path: Path) -> None:
    frame = pd.read_csv(CLIP, low_memory=False).head(5)
    host = frame.head(1).copy()
    host["OP CODE"], host["OP TYPE"] = "ttnn::to_torch", "python_fallback"
    host["DEVICE ID"], host["DEVICE KERNEL DURATION [ns]"] = None, None
    path = tmp_path / "ops_perf_results_host.csv"
    pd.concat([frame, host]).to_csv(path, index=False)
    parsed = load_runs(path)
    assert "ttnn::to_torch" not in parsed.frame["kernel"].to_list()
    assert parsed.metadata["host_op_calls"] == 1 and parsed.frame["calls"].sum() == 5
    assert parsed.notes == [f"{path.name}: 1 host-side op calls (no device kernel time) left out"]


# --- hostile reports (issue 32): one line naming the place, or a correct read ------------

DURATION = "DEVICE KERNEL DURATION [ns]"
LONG = "ttnn::prim::Matmul<" + "tt::tt_metal::Tile<32, 32>, " * 7700 + "float>"
"""An op name of about 216,000 characters (Python's csv cell limit is 131,072)."""


def small_report(tmp_path: Path, edit: dict[str, dict[int, str]] | None = None) -> Path:
    """The header and first 12 op rows of the CLIP report, with cells set by ``edit``
    (column → row index → cell), written as CSV (quoted where needed)."""
    rows = list(csv.reader(io.StringIO(CLIP.read_text(), newline="")))[:13]
    for column, cells in (edit or {}).items():
        for i, value in cells.items():
            rows[i + 1][rows[0].index(column)] = value
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator="\n").writerows(rows)
    path = tmp_path / "ops_perf_results_small.csv"
    path.write_text(out.getvalue())
    return path


def one_line(path: Path, *words: str) -> str:
    code, _, err = run("runs", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith(f"tileprof: error: {path}"), err
    assert all(w in err for w in words), err
    return err


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_bare_cr_and_crlf_line_ends_read_as_lf(tmp_path: Path, end: str) -> None:
    path = small_report(tmp_path)
    want = load_runs(path).frame
    path.write_bytes(path.read_bytes().replace(b"\n", end.encode()))
    assert load_runs(path).frame.equals(want)


@pytest.mark.parametrize("value", ["-5", "-0.5", "inf", "-inf", "nan", "1e400"])
@pytest.mark.parametrize("column", [DURATION, "DEVICE KERNEL DURATION PER CORE MAX [ns]"])
def test_negative_or_non_finite_durations_are_errors(
    tmp_path: Path, column: str, value: str
) -> None:
    one_line(small_report(tmp_path, {column: {4: value}}), f"line 6, column '{column}'")


@pytest.mark.parametrize("value", ["nan", "inf", "1e300", "9" * 25, "1.5"])
@pytest.mark.parametrize("column", ["DEVICE ID", "CORE COUNT", "AVAILABLE WORKER CORE COUNT"])
def test_nan_inf_and_huge_ids_and_counts_name_the_line(
    tmp_path: Path, column: str, value: str
) -> None:
    one_line(small_report(tmp_path, {column: {2: value}}), f"line 4, column '{column}'")


def test_an_empty_duration_column_reads_as_ops_without_device_time(tmp_path: Path) -> None:
    path = small_report(tmp_path, {DURATION: dict.fromkeys(range(12), "")})
    runs = load_runs(path).frame
    assert runs["calls"].sum() == 12
    assert (
        runs["total_us"].null_count() == runs.height and runs["p50_us"].null_count() == runs.height
    )


def test_header_repeated_or_a_column_named_twice_is_named(tmp_path: Path) -> None:
    path = small_report(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    again = tmp_path / "again.csv"
    again.write_text("".join([*lines[:3], lines[0], *lines[3:]]))
    one_line(again, "line 4: the header again")
    twice = tmp_path / "twice.csv"
    twice.write_text(
        "".join(ln.rstrip("\n") + ",1\n" for ln in lines).replace(",1\n", ",CORE COUNT\n", 1)
    )
    one_line(twice, "line 1: column 'CORE COUNT' is named twice")


@pytest.mark.parametrize("row", [0, 5, 11])
def test_a_long_op_name_is_read(tmp_path: Path, row: int) -> None:
    runs = load_runs(small_report(tmp_path, {"OP CODE": {row: LONG}})).frame
    assert LONG in runs["kernel"].to_list()
    assert runs["calls"].sum() == 12


def test_a_quoted_newline_in_the_last_row_is_read(tmp_path: Path) -> None:
    edit = {"OP CODE": {11: "ttnn::op\nsecond line"}, "ATTRIBUTES": {11: "{'a':\r\n 1}"}}
    runs = load_runs(small_report(tmp_path, edit)).frame
    assert "ttnn::op\nsecond line" in runs["kernel"].to_list()
    assert runs["calls"].sum() == 12


def test_a_row_cut_short_in_the_middle_and_a_cut_header_are_named(tmp_path: Path) -> None:
    path = small_report(tmp_path)
    lines = path.read_text().splitlines(keepends=True)
    cut = tmp_path / "cut.csv"
    cut.write_text("".join([*lines[:5], lines[5][:40] + "\n", *lines[6:]]))
    one_line(cut, "line 6:", "a row cut short")
    header = tmp_path / "header.csv"
    header.write_text(lines[0][:-200])
    one_line(header, "line 1:", "ends inside its header")
