"""Tenstorrent ``ops_perf_results`` reports, held to a pandas re-aggregation of the same CSV.

Two real reports (``fixtures/real/README.md``): a Wormhole CLIP encoder (first 400 op rows,
with ``DEVICE ARCH`` and ``AVAILABLE WORKER CORE COUNT``) and an older ResNet-style run with
signposts and no arch column. A two-chip report is built from the first by renumbering rows.
"""

from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import pandas as pd
import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.core.run_schema import ParsedRuns
from tileprof.inputs.sources import detect_file_kind, load_runs
from tileprof.inputs.tile.tenstorrent import matmul_work

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
    assert parsed.notes[0] == f"{path.name}: 1 host-side op calls (no device kernel time) left out"
    assert len(parsed.notes) == 2 and "not their board" in parsed.notes[1]  # the assumed board


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


def _nearest_rank(values: list[float], p: float) -> float:
    """The value at 1-based rank ⌈p·n⌉ of the values in ascending order (docs/metrics.md)."""
    ordered = sorted(values)
    return ordered[max(math.ceil(p * len(ordered)), 1) - 1]


def _plain_groups(path: Path) -> dict[int, list[dict[str, str]]]:
    """The report's device op rows grouped as the reader's rows are (chip, arch, op, op type,
    math fidelity, every tensor column, shapes by their logical size), keyed by each group's
    first row's index; a plain loop over ``csv.DictReader`` rows."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    tensor_columns = [c for c in rows[0] if c.startswith(("INPUT_", "OUTPUT_"))]
    groups: dict[tuple[str, ...], list[int]] = {}
    for i, r in enumerate(rows):
        if r["OP TYPE"] == "signpost" or (
            not r["DEVICE ID"].strip() and not r["DEVICE KERNEL DURATION [ns]"].strip()
        ):
            continue
        key = tuple(
            r.get(c, "").strip()
            for c in ("DEVICE ID", "DEVICE ARCH", "OP CODE", "OP TYPE", "MATH FIDELITY")
        )
        # a shape cell groups by its logical size (``32[19]`` and ``64[19]`` are one tensor)
        key += tuple(
            str(logical(r[c])) if c.endswith("_PAD[LOGICAL]") and r[c].strip() else r[c].strip()
            for c in tensor_columns
        )
        groups.setdefault(key, []).append(i)
    return {members[0]: [rows[i] for i in members] for members in groups.values()}


@pytest.mark.parametrize("path", [CLIP, RESNET], ids=["clip", "resnet"])
def test_group_percentiles_max_and_skew_match_a_plain_reaggregation(path: Path) -> None:
    """Issue 38: p50, p95 (nearest rank, ⌈p·n⌉), max and mean first-to-last start of every
    aggregated op row, against the report's own rows; the reports hold groups whose p50 or
    p95 a floor rank would change, so a ceiling-to-floor change fails here."""
    groups = _plain_groups(path)
    runs = load_runs(path).frame
    assert runs.height == len(groups)
    floor_differs = 0
    for row in runs.iter_rows(named=True):
        first = int(row["source"].rsplit("line ", 1)[1]) - 2
        members = groups[first]
        durations = [float(r["DEVICE KERNEL DURATION [ns]"]) / 1000 for r in members]
        assert row["calls"] == len(members)
        exact = {"rel": 1e-12}  # the same µs, up to the last bit of a float division
        assert row["p50_us"] == pytest.approx(_nearest_rank(durations, 0.5), **exact)
        assert row["p95_us"] == pytest.approx(_nearest_rank(durations, 0.95), **exact)
        assert row["max_us"] == pytest.approx(max(durations), **exact)
        skews = [float(r["DEVICE KERNEL FIRST TO LAST START [ns]"]) / 1000 for r in members]
        assert row["start_skew_us"] == pytest.approx(sum(skews) / len(skews), rel=1e-12)
        ordered = sorted(durations)
        for p in (0.5, 0.95):
            floor = ordered[max(math.floor(p * len(ordered)), 1) - 1]
            floor_differs += floor != _nearest_rank(durations, p)
    assert floor_differs > 0


BH8 = REAL / "bh_8xp150_deepseek_v3_d_p.csv"


def _dim(cell: str, padded: bool) -> int:
    text = cell.strip()
    if "[" not in text:
        return int(float(text))
    return int(text.split("[")[0] if padded else text.split("[")[1].rstrip("]"))


def _tt_perf_report_flops(r: dict[str, str], padded: bool = True) -> int:
    """tt-perf-report's matmul work (``analyze_matmul``): M·K·N·W·Z·2, M and K from A's Y and
    X, N from B's X, W and Z the larger of A's and B's; padded dims as it reads them (or the
    logical ones)."""

    def d(t: int, a: str) -> int:
        return _dim(r[f"INPUT_{t}_{a}_PAD[LOGICAL]"], padded)

    w, z = max(d(0, "W"), d(1, "W")), max(d(0, "Z"), d(1, "Z"))
    return d(0, "Y") * d(0, "X") * d(1, "X") * w * z * 2


def test_matmul_work_by_hand_when_b_has_no_batch_dims() -> None:
    """A report row without B's W and Z (issue 38: taking them as 2 passed every test): B is
    then one K×N matrix. A 1×3×32×64 by 64×16 is 3 matmuls of 32×64 by 64×16:
    3·32·16·64 = 98,304 MACs; K of 64 and 65 is no matmul."""
    row = {"a_w": 1, "a_z": 3, "a_y": 32, "a_x": 64, "b_y": 64, "b_x": 16}
    assert matmul_work(row) == ("3x32x16x64", 98_304)
    assert matmul_work({**row, "a_z": 1, "b_w": None, "b_z": 0}) == ("32x16x64", 32_768)
    assert matmul_work({**row, "b_y": 65}) == (None, None)
    assert matmul_work({**row, "b_z": 2}) == (None, None)  # 3 against 2 does not broadcast


def test_broadcast_batched_matmul_counts_both_operands_batch() -> None:
    """Issue 31: A 1×1×3200×512 by B 1×32×512×128 on each of 8 Blackhole chips is 32 matmuls
    (the batch was taken from A alone: 32× too few FLOPs)."""
    runs = load_runs(BH8).frame.filter(pl.col("op_family") == "gemm")
    broadcast = runs.filter(pl.col("shape") == "32x3200x128x512")
    assert broadcast.height == 8 and broadcast["device"].n_unique() == 8
    assert set(broadcast["mac"].to_list()) == {32 * 3200 * 512 * 128}


@pytest.mark.parametrize("path", [BH8, CLIP, RESNET], ids=["bh8", "clip", "resnet"])
def test_matmul_flops_equal_tt_perf_reports_where_both_count_the_same_dims(path: Path) -> None:
    """Every matmul's FLOPs and TFLOP/s equal tt-perf-report's wherever both count the same
    dims; where a dim is padded to 32-wide tiles (``32[19]``) tt-perf-report counts the
    padded size and tileprof the logical one (the documented difference)."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = load_runs(path).frame.filter(pl.col("kernel").str.contains("Matmul"))
    matmuls = [r for r in rows if "Matmul" in r["OP CODE"]]
    assert runs["calls"].sum() == len(matmuls) > 0
    padded_rows = sum(_tt_perf_report_flops(r) != _tt_perf_report_flops(r, False) for r in matmuls)
    padded = 0
    for row in runs.iter_rows(named=True):
        r = rows[int(row["source"].rsplit("line ", 1)[1]) - 2]
        assert "Matmul" in r["OP CODE"]
        assert 2 * row["mac"] == _tt_perf_report_flops(r, padded=False)
        theirs = _tt_perf_report_flops(r)
        if theirs == 2 * row["mac"]:
            if row["calls"] == 1:  # TFLOP/s of the one call, as tt-perf-report gives it
                seconds = float(r["DEVICE KERNEL DURATION [ns]"]) * 1e-9
                assert row["tflops"] == pytest.approx(theirs / seconds / 1e12, rel=1e-9)
        else:
            padded += row["calls"]
            assert theirs > 2 * row["mac"]  # padding only adds
    assert padded == padded_rows
    assert padded_rows > 0 or path != CLIP  # CLIP's 19-token rows are padded to 32


TT_PERF_REPORT_TFLOPS_PER_CORE = {
    "wormhole_b0": {"HiFi4": 74 / 72, "HiFi2": 148 / 72, "LoFi": 262 / 72},
    "blackhole": {
        "HiFi4": 4096 * 1.35 / 1000 / 4,
        "HiFi2": 4096 * 1.35 / 1000 / 2,
        "LoFi": 4096 * 1.35 / 1000,
    },
}
"""tt-perf-report's per-core FPU peaks (``ArchitectureSpec``), as its source states them."""


def _width(datatype: str) -> float:
    """tt-perf-report's bytes per value: the digits in the datatype's name ÷ 8, else 4."""
    digits = "".join(ch for ch in datatype if ch.isdigit())
    return int(digits) / 8 if digits else 4


def _tt_perf_report_dram_bytes(r: dict[str, str], padded: bool = True) -> float:
    """tt-perf-report's matmul bytes: inputs 0 and 1 and output 0, those in DRAM only."""
    total = 0.0
    for prefix in ("INPUT_0", "INPUT_1", "OUTPUT_0"):
        if "DRAM" in r[f"{prefix}_MEMORY"]:
            size = math.prod(_dim(r[f"{prefix}_{d}_PAD[LOGICAL]"], padded) for d in "WZYX")
            total += size * _width(r[f"{prefix}_DATATYPE"])
    return total


@pytest.mark.parametrize("path", [BH8, CLIP], ids=["bh8", "clip"])
def test_matmul_peak_and_bytes_equal_tt_perf_reports(path: Path) -> None:
    """% of peak: the FPU's per-core peak at the op's math fidelity times its cores
    (tileprof/data/specs/tenstorrent_*.toml), equal to tt-perf-report's wherever both use the
    same cores; tt-perf-report counts 12 cores for a DRAM-sharded matmul, tileprof the report's
    CORE COUNT (a documented difference). DRAM bytes: equal wherever both count the same
    tensors at the same dims (tt-perf-report: inputs 0, 1 and output 0, padded; tileprof:
    every tensor in DRAM, logical)."""
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = load_runs(path).frame.filter(pl.col("kernel").str.contains("Matmul"))
    same_peak = same_bytes = 0
    for row in runs.iter_rows(named=True):
        r = rows[int(row["source"].rsplit("line ", 1)[1]) - 2]
        per_core = TT_PERF_REPORT_TFLOPS_PER_CORE[r["DEVICE ARCH"]][r["MATH FIDELITY"]]
        sharded = "DRAMShardedProgramConfig" in r["ATTRIBUTES"]
        theirs_cores = 12 if sharded else int(r["CORE COUNT"])
        meta = json.loads(row["metadata"])
        if theirs_cores == row["cores"] == meta["cores_min"]:
            same_peak += 1
            assert row["peak_tflops"] == pytest.approx(per_core * theirs_cores, rel=1e-6)
            if row["calls"] == 1:
                seconds = float(r["DEVICE KERNEL DURATION [ns]"]) * 1e-9
                percent = _tt_perf_report_flops(r) / seconds / (per_core * 1e12 * theirs_cores)
                assert row["peak_fraction"] == pytest.approx(percent, rel=1e-6)
        else:
            assert sharded or meta["cores_min"] != row["cores"]
        theirs = _tt_perf_report_dram_bytes(r)
        extra = [
            t
            for t in meta["tensors"].split("; ")
            if "DRAM" in t and not t.startswith(("INPUT_0 ", "INPUT_1 ", "OUTPUT_0 "))
        ]
        logical = _tt_perf_report_dram_bytes(r, padded=False)
        if extra:  # a bias or other DRAM tensor tt-perf-report leaves out
            assert row["bytes"] > logical
            continue
        assert row["bytes"] == logical == meta["dram_bytes"]  # its count at logical dims
        same_bytes += theirs == logical  # and its own count where nothing is padded
    assert same_peak > 0
    assert same_bytes > 0 if path == BH8 else same_bytes == 0  # CLIP pads 19 tokens to 32


def test_a_report_without_device_arch_has_no_peak() -> None:
    """The ResNet report names no DEVICE ARCH: tileprof matches no spec (null, never a guess)
    where tt-perf-report assumes a Wormhole."""
    runs = load_runs(RESNET).frame.filter(pl.col("kernel").str.contains("Matmul"))
    assert runs.height > 0 and runs["peak_tflops"].null_count() == runs.height
    assert runs["mac"].null_count() == 0


def test_conv_flops_equal_tt_perf_reports_where_both_count_the_same_dims() -> None:
    """A convolution runs as a matmul of the output pixels by the 1×1×K×N weight matrix:
    2·M·N·K with K = C_in·kh·kw, the weight's rows. tt-perf-report takes K = the input's
    channels × the window (``window_hw`` in ATTRIBUTES): the same wherever the input's channels
    are the weight's; the ResNet stem's 3 channels are padded to 8 in the input tensor, so
    there it counts 8·7·7 = 392 where the weight has 147 rows (the documented difference)."""
    with RESNET.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    runs = load_runs(RESNET).frame.filter(pl.col("kernel").str.contains("Conv"))
    assert runs.height > 0 and runs["mac"].null_count() == 0
    same = differ = 0
    for row in runs.iter_rows(named=True):
        r = rows[int(row["source"].rsplit("line ", 1)[1]) - 2]
        kh, kw = (int(x) for x in r["ATTRIBUTES"].split("window_hw=(")[1].split(")")[0].split(";"))
        m = _dim(r["OUTPUT_0_Y_PAD[LOGICAL]"], False)
        n = _dim(r["INPUT_1_X_PAD[LOGICAL]"], False)
        theirs_k = _dim(r["INPUT_0_X_PAD[LOGICAL]"], False) * kh * kw
        weight_k = _dim(r["INPUT_1_Y_PAD[LOGICAL]"], False)
        assert row["mac"] == m * n * weight_k and row["op_family"] == "gemm"
        if theirs_k == weight_k:
            same += 1
        else:
            differ += 1
            assert (kh, kw, theirs_k, weight_k) == (7, 7, 392, 147)
    assert same > 0 and differ == 1


def test_tenstorrent_ops_are_classed_by_what_they_do() -> None:
    runs = load_runs(RESNET).frame
    family = dict(zip(runs["kernel"], runs["op_family"].cast(pl.String), strict=False))
    assert family["InterleavedToShardedDeviceOperation"] == "copy"
    assert family["ShardedToInterleavedDeviceOperation"] == "copy"
    assert family["TypecastDeviceOperation"] == "cast"
    assert family["Pool2D"] == "reduce"
    assert family["AccumulationDeviceOperation"] == "reduce"  # a cumulative sum: a scan
    assert "other" not in set(family.values())


@pytest.mark.parametrize(
    ("op", "family"),
    [
        # ttnn files these under operations/reduction: the integral image, scans, arg/top-k
        ("IntImgDeviceOperation", "reduce"),
        ("CumprodDeviceOperation", "reduce"),
        ("ReduceDeviceOperation", "reduce"),  # "reduced" is not a reduction; "Reduce" is
        ("TopKDeviceOperation", "reduce"),
        ("LayerNormPreAllGatherDeviceOperation", "reduce"),  # a norm, not a collective
        ("ReduceScatterMinimalAsyncDeviceOperation", "exchange"),
        ("PointToPointDeviceOperation", "exchange"),
        ("ConvTranspose2dDeviceOperation", "gemm"),  # not a transpose
        ("ConvertToCHWDeviceOperation", "layout"),  # not a cast, not a convolution
        ("GatherDeviceOperation", "copy"),
        ("SortDeviceOperation", "layout"),
        ("ArangeOperation", "fill"),
        ("BcastDeviceOperation", "elementwise"),
        ("MorehNllLossStep1DeviceOperation", "reduce"),
    ],
)
def test_ops_are_classed_as_ttnn_files_them(op: str, family: str) -> None:
    from tileprof.core.classify import op_family as by_kernel_name
    from tileprof.inputs.tile.tenstorrent import op_family

    assert (op_family(op) or by_kernel_name(op)) == family


def test_convert_is_no_convolution(tmp_path: Path) -> None:
    """A layout op whose name starts with "Convert" gets no convolution work, though its
    operands would fit one."""
    head = (
        "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT,DEVICE KERNEL DURATION [ns],"
        + ",".join(f"{t}_{d}_PAD[LOGICAL]" for t in ("OUTPUT_0", "INPUT_1") for d in "WZYX")
    )
    row = "{},tt_dnn_device,1,0,8,1000,1,1,64,32,1,1,16,32"
    path = tmp_path / "ops_perf_results_conv.csv"
    path.write_text("\n".join([head, row.format("ConvertToCHW"), row.format("Conv2d")]) + "\n")
    runs = load_runs(path).frame
    mac = dict(zip(runs["kernel"], runs["mac"], strict=True))
    assert mac == {"ConvertToCHW": None, "Conv2d": 64 * 32 * 16}


@pytest.mark.parametrize("path", [BH8, CLIP], ids=["bh8", "clip"])
def test_breakdown_gives_device_busy_against_op_to_op_time_per_chip(path: Path) -> None:
    """``breakdown`` of an ops report: per chip, busy = Σ DEVICE KERNEL DURATION, idle = Σ OP TO
    OP LATENCY after the chip's first op (the window opens at its first op), a plain loop over
    the rows; collectives (all-gather, reduce-scatter) are the communication."""
    from tileprof.model.breakdown import trace_breakdown

    with path.open(newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["OP TYPE"] != "signpost"]
    busy: dict[int, float] = {}
    comm: dict[int, float] = {}
    gaps: dict[int, list[tuple[int, float]]] = {}
    for r in rows:
        if not r["DEVICE ID"].strip() or not r["DEVICE KERNEL DURATION [ns]"].strip():
            continue
        chip, us = int(r["DEVICE ID"]), float(r["DEVICE KERNEL DURATION [ns]"]) / 1000
        busy[chip] = busy.get(chip, 0.0) + us
        if "Gather" in r["OP CODE"] or "Scatter" in r["OP CODE"]:
            comm[chip] = comm.get(chip, 0.0) + us
        gap = float(r["OP TO OP LATENCY [ns]"] or 0) / 1000
        gaps.setdefault(chip, []).append((int(r["GLOBAL CALL COUNT"]), gap))
    rows_ = trace_breakdown([path]).breakdown.rows
    found = rows_.filter(pl.col("device").is_not_null())  # the other row is every chip at once
    assert sorted(found["device"].to_list()) == sorted(busy)
    for row in found.iter_rows(named=True):
        chip = row["device"]
        idle = sum(g for _, g in sorted(gaps[chip])[1:])
        assert row["busy_us"] == pytest.approx(busy[chip], rel=1e-9)
        assert row["idle_us"] == pytest.approx(idle, rel=1e-9, abs=1e-6)
        assert row["total_comm_us"] == pytest.approx(comm.get(chip, 0.0), rel=1e-9, abs=1e-9)
        assert row["total_us"] == pytest.approx(busy[chip] + idle, rel=1e-9)
        assert row["device_name"].startswith("Tenstorrent ")
    assert any(comm.values()) or path == CLIP


def test_timeline_follows_the_call_count_not_the_row_order(tmp_path: Path) -> None:
    """Each chip's ops are laid end to end in GLOBAL CALL COUNT order (issue 38: ordering by
    the row alone passed every test, the real reports being written in call order): the same
    report with its rows reversed gives the same timeline."""
    from tileprof.inputs.tile.tenstorrent import read_timeline

    header, *rows = CLIP.read_bytes().splitlines(keepends=True)
    assert len(rows) > 100 and all(r.endswith(b"\n") for r in rows)
    reversed_report = tmp_path / "reversed.csv"
    reversed_report.write_bytes(header + b"".join(reversed(rows)))
    forward = read_timeline(CLIP, CLIP.read_bytes()).events
    backward = read_timeline(reversed_report, reversed_report.read_bytes()).events
    assert forward["start_ns"].is_sorted() and forward.height > 100
    assert backward.equals(forward)
    # each event is its row's op and call count (dropping either passed every test too)
    with CLIP.open(newline="", encoding="utf-8") as handle:
        rows_ = [
            r
            for r in csv.DictReader(handle)
            if r["OP TYPE"] != "signpost" and r["DEVICE KERNEL DURATION [ns]"].strip()
        ]
    rows_.sort(key=lambda r: int(r["GLOBAL CALL COUNT"]))
    assert forward["name"].to_list() == [r["OP CODE"] for r in rows_]
    assert forward["correlation"].to_list() == [int(r["GLOBAL CALL COUNT"]) for r in rows_]


def test_op_to_op_latency_is_the_gap_before_each_call() -> None:
    runs = load_runs(CLIP).frame
    frame = pd.read_csv(CLIP, low_memory=False)
    pairs = zip(runs["metadata"], runs["calls"], strict=True)
    gaps = [json.loads(m)["op_to_op_us"] * c for m, c in pairs]
    assert sum(gaps) == pytest.approx(frame["OP TO OP LATENCY [ns]"].sum() / 1000, rel=1e-9)


def test_a_single_chip_reports_html_page_has_its_op_table() -> None:
    """The report page of one chip's ops report (nothing to link across targets) carries the
    chip's op table, heaviest op first, with its cores, % of peak and the report's columns."""
    from tileprof.model.gather import RunInputs
    from tileprof.views.html import render
    from tileprof.views.html.data import build_report

    runs = load_runs(CLIP).frame
    report = build_report((), RunInputs(runs), charts=False, environ={})
    assert [t.title for t in report.tile_ops] == ["Ops of Tenstorrent wormhole_b0 · chip 0"]
    table = report.tile_ops[0].table
    keys = [c.key for c in table.columns]
    assert {"cores", "peak_fraction", "math_fidelity", "op_to_op_us", "bound"} <= set(keys)
    assert len(table.rows) == runs.height
    heaviest = runs.sort("total_us", descending=True)["kernel"][0]
    assert heaviest in table.rows[0][keys.index("kernel")].text
    page = render(report)
    assert 'id="tile-ops"' in page and "Ops of Tenstorrent wormhole_b0 · chip 0" in page


# --- the board of a report's chips: named where a file says it, a note where assumed --------


def _board_case(tmp_path: Path, arch: str, log_line: str | None, chips: int = 1) -> ParsedRuns:
    """A two-row matmul report of ``arch`` on ``chips`` chips, with a device log whose line 1
    is ``log_line`` beside it (none when None)."""
    from tileprof.inputs.sources import load_runs

    tmp_path.mkdir(exist_ok=True)
    lines = [
        "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,DEVICE ARCH,CORE COUNT,MATH FIDELITY,"
        "DEVICE KERNEL DURATION [ns],INPUT_0_W_PAD[LOGICAL],INPUT_0_Z_PAD[LOGICAL],"
        "INPUT_0_Y_PAD[LOGICAL],INPUT_0_X_PAD[LOGICAL],INPUT_1_Y_PAD[LOGICAL],"
        "INPUT_1_X_PAD[LOGICAL]"
    ]
    for chip in range(chips):
        lines.append(
            f"Matmul,tt_dnn_device,{1024 + chip},{chip},{arch},64,HiFi2,2000,1,1,64,64,64,64"
        )
        if chips > 1:
            lines.append(
                f"AllGatherAsync,tt_dnn_device,{2048 + chip},{chip},{arch},8,,900,1,1,8,8,,"
            )
    (tmp_path / "ops_perf_results_board.csv").write_text("\n".join(lines) + "\n")
    if log_line is not None:
        header = (
            "PCIe slot, core_x, core_y, RISC processor type, timer_id, time[cycles since reset]"
        )
        (tmp_path / "profile_log_device.csv").write_text(
            f"{log_line}\n{header}, data, run host ID, zone name, type\n"
        )
    return load_runs(tmp_path / "ops_perf_results_board.csv")


@pytest.mark.parametrize(
    ("arch", "log_line", "target", "spec"),
    [
        # line 1's core count names the board where only one board's chips have that many
        ("wormhole_b0", "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64",
         "Tenstorrent wormhole_b0 n300", "Tenstorrent Wormhole n300"),
        ("wormhole_b0", "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 72",
         "Tenstorrent wormhole_b0 n150", "Tenstorrent Wormhole n150"),
        ("blackhole", "ARCH: blackhole, CHIP_FREQ[MHz]: 1350, Max Compute Cores: 140",
         "Tenstorrent blackhole p150", "Tenstorrent Blackhole p150"),
        # 120 Blackhole cores: a p100's, or a p150 on fewer cores; an older log: no count; a
        # log of another architecture: not this report's
        ("blackhole", "ARCH: blackhole, CHIP_FREQ[MHz]: 1350, Max Compute Cores: 120",
         "Tenstorrent blackhole", None),
        ("wormhole_b0", "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000", "Tenstorrent wormhole_b0", None),
        ("wormhole_b0", "ARCH: blackhole, CHIP_FREQ[MHz]: 1350, Max Compute Cores: 140",
         "Tenstorrent wormhole_b0", None),
        ("blackhole", None, "Tenstorrent blackhole", None),
    ],
)  # fmt: skip
def test_the_board_is_the_one_the_files_name_else_a_note_names_the_assumed_one(
    tmp_path: Path, arch: str, log_line: str | None, target: str, spec: str | None
) -> None:
    from tileprof.core.specs import spec_for

    parsed = _board_case(tmp_path, arch, log_line)
    assert set(parsed.frame["target"].to_list()) == {target}
    assumed = [n for n in parsed.notes if "not their board" in n]
    if spec is not None:
        assert spec_for(target).name == spec and assumed == []
    else:
        default = {
            "wormhole_b0": "Tenstorrent Wormhole n150",
            "blackhole": "Tenstorrent Blackhole p150",
        }
        assert len(assumed) == 1 and f"the {default[arch]}'s" in assumed[0]
        assert spec_for(target).name == default[arch]


def test_linked_blackhole_chips_are_said_to_be_no_p100(tmp_path: Path) -> None:
    """Several Blackhole chips running a collective exchange data over card-to-card ports,
    which a p100a lacks: the assumed p150 is said to be the only bundled board they can be."""
    parsed = _board_case(tmp_path, "blackhole", None, chips=2)
    (note,) = [n for n in parsed.notes if "not their board" in n]
    assert "its 2 chips exchange data, so they are no p100a" in note
    one = _board_case(tmp_path / "one", "blackhole", None)
    assert not any("exchange data" in n for n in one.notes)


def test_a_user_spec_is_no_assumption(tmp_path: Path) -> None:
    from tileprof.core import specs

    own = tmp_path / "mine.toml"
    own.write_text(
        'name = "My Blackhole"\nkind = "chip"\nmatch = ["blackhole"]\n'
        '[sources]\nme = "measured"\n[memory]\n'
        'bandwidth = { value = 400, unit = "GB/s", source = "me" }\n'
    )
    specs.use_specs([own])
    try:
        parsed = _board_case(tmp_path, "blackhole", None)
    finally:
        specs.use_specs([])
    assert not any("not their board" in n for n in parsed.notes)


def test_an_embedding_counts_the_table_rows_it_reads_not_the_table() -> None:
    """CLIP's token embedding reads 19 rows of a 49408×1280 table: its DRAM bytes are the
    indices, the rows read and the rows written (the whole table put its roofline 42× above
    its measured time)."""
    with CLIP.open(newline="", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["OP CODE"].startswith("Embeddings")]
    assert rows
    runs = load_runs(CLIP).frame.filter(pl.col("kernel").str.starts_with("Embeddings"))
    for row in runs.iter_rows(named=True):
        r = rows[0]
        values = {
            p: math.prod(_dim(r[f"{p}_{d}_PAD[LOGICAL]"], False) for d in "WZYX")
            for p in ("INPUT_0", "INPUT_1", "OUTPUT_0")
        }
        width = {p: WIDTH_OF[r[f"{p}_DATATYPE"]] for p in values}
        expected = (
            values["INPUT_0"] * width["INPUT_0"]
            + values["OUTPUT_0"] * width["INPUT_1"]  # one table row read per row written
            + values["OUTPUT_0"] * width["OUTPUT_0"]
        )
        assert row["bytes"] == expected < values["INPUT_1"] * width["INPUT_1"]
        assert row["roofline_fraction"] < 1


WIDTH_OF = {"UINT32": 4, "BFLOAT16": 2}


# ---------------------------------------------------------------- issue 38: mutation survivors

HEAD = (
    "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,DEVICE ARCH,CORE COUNT,MATH FIDELITY,"
    "DEVICE KERNEL DURATION [ns]"
)


def _report(tmp_path: Path, header: str, *rows: str) -> Path:
    path = tmp_path / "ops_perf_results_t.csv"
    path.write_text("\n".join((header, *rows)) + "\n")
    return path


def test_partial_tensor_columns_by_hand(tmp_path: Path) -> None:
    """INPUT_0 has a Y dim and a memory but no datatype or layout: no bytes, but its text;
    INPUT_1 has a W dim that is no number (1) and a Y dim of 3 but no X: 3 BFLOAT16 values,
    6 bytes in L1. PM figures: ideal 500 ns of a 2,000 ns call (0.25), FPU 40.5%."""
    path = _report(
        tmp_path,
        HEAD + ",PM IDEAL [ns],PM FPU UTIL (%),INPUT_0_Y_PAD[LOGICAL],INPUT_0_MEMORY,"
        "INPUT_1_W_PAD[LOGICAL],INPUT_1_Y_PAD[LOGICAL],INPUT_1_MEMORY,INPUT_1_DATATYPE",
        "Add,tt_dnn_device,1,0,wormhole_b0,64,HiFi2,2000,500,40.5,32[7],DEV_0_DRAM_INTERLEAVED,"
        "x,3,DEV_0_L1,BFLOAT16",
    )
    parsed = load_runs(path)
    (row,) = parsed.frame.iter_rows(named=True)
    meta = json.loads(row["metadata"])
    assert meta["tensors"] == "INPUT_0 7   DEV_0_DRAM_INTERLEAVED; INPUT_1 xx3  BFLOAT16 DEV_0_L1"
    assert (meta["dram_bytes"], meta["l1_bytes"]) == (0, 6)
    assert (meta["pm_fpu_util_percent"], meta["pm_ideal_fraction"]) == (40.5, 0.25)
    assert row["source"] == "ops_perf_results_t.csv: line 2"
    assert parsed.metadata["op_calls"] == 1


def test_a_two_chip_timeline_with_its_board_by_hand(tmp_path: Path) -> None:
    """The n300 report of two chips: chips named with the board the device log names, every
    event on stream 0, the all-gathers communication, the matmuls kernels."""
    from tileprof.core.gpu_timeline import EVENT_SCHEMA
    from tileprof.inputs.tile.tenstorrent import read_timeline

    line = "ARCH: wormhole_b0, CHIP_FREQ[MHz]: 1000, Max Compute Cores: 64"
    parsed = _board_case(tmp_path, "wormhole_b0", line, chips=2)
    assert any("profile_log_device.csv beside it" in n for n in parsed.notes)
    path = tmp_path / "ops_perf_results_board.csv"
    timeline = read_timeline(path, path.read_bytes())
    assert timeline.devices == {
        0: "Tenstorrent wormhole_b0 n300 (chip 0)",
        1: "Tenstorrent wormhole_b0 n300 (chip 1)",
    }
    events = timeline.events
    assert events.schema["kind"] == EVENT_SCHEMA["kind"]
    assert events.get_column("stream").to_list() == [0, 0, 0, 0]
    kinds = {(n, str(k)) for n, k in events.select("name", "kind").iter_rows()}
    assert kinds == {("Matmul", "kernel"), ("AllGatherAsync", "comm")}


def test_families_of_the_timeline_from_the_op_rules_then_the_kernel_classifier(
    tmp_path: Path,
) -> None:
    """PointToPoint is a collective by the op rules (the kernel classifier reads it as
    other); ncclKernel_AllReduce matches no op rule and is one by the classifier."""
    from tileprof.inputs.tile.tenstorrent import read_timeline

    path = _report(
        tmp_path,
        HEAD,
        "PointToPoint,tt_dnn_device,1,0,wormhole_b0,8,,900",
        "ncclKernel_AllReduce,tt_dnn_device,2,0,wormhole_b0,8,,900",
        "Matmul,tt_dnn_device,3,0,wormhole_b0,8,,900",
    )
    events = read_timeline(path, path.read_bytes()).events
    assert [str(k) for k in events.get_column("kind")] == ["comm", "comm", "kernel"]


def test_a_report_without_arch_or_input_datatype(tmp_path: Path) -> None:
    from tileprof.inputs.tile.tenstorrent import op_table, read_timeline

    header = "OP CODE,OP TYPE,GLOBAL CALL COUNT,DEVICE ID,CORE COUNT,DEVICE KERNEL DURATION [ns]"
    path = _report(tmp_path, header, "Matmul,tt_dnn_device,1,0,64,2000")
    assert read_timeline(path, path.read_bytes()).devices == {0: "Tenstorrent (chip 0)"}
    table = op_table(path, path.read_bytes())
    assert (table.schema["arch"], table.schema["input_dtype"]) == (pl.String, pl.String)


def test_conv_work_by_hand() -> None:
    """Output 1×1×4×8 by a 1×1×3×8 weight: M = 4, N = 8, K = 3, 96 MACs; a weight with a
    batch (W = 2) is no weight matrix, even with N the output's."""
    from tileprof.inputs.tile.tenstorrent import conv_work

    dims = {"o_w": 1, "o_z": 1, "o_y": 4, "o_x": 8, "b_w": 1, "b_z": 1, "b_y": 3, "b_x": 8}
    assert conv_work(dims) == ("4x8x3", 96)
    assert conv_work(dims | {"b_w": 2}) == (None, None)


def test_a_report_of_two_architectures_notes_the_one_with_a_bundled_spec(tmp_path: Path) -> None:
    """An architecture with no spec (sorted first) gives no note and does not stop the next."""
    from tileprof.core.specs import spec_for

    path = _report(
        tmp_path,
        HEAD,
        "Matmul,tt_dnn_device,1,0,aaa,64,HiFi2,2000",
        "Matmul,tt_dnn_device,2,1,wormhole_b0,64,HiFi2,2000",
    )
    notes = [n for n in load_runs(path).notes if "not their board" in n]
    spec = spec_for("Tenstorrent wormhole_b0")
    assert spec is not None and len(notes) == 1
    assert "architecture (wormhole_b0)" in notes[0] and f"({spec.path})" in notes[0]
