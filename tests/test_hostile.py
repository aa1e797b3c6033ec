"""Hostile inputs, class by class (issue 11; catalogue in docs/reliability.md).

Every bad input gets one ``tileprof: error:`` line naming the file and the place, exit 2, no
traceback; every JSON output is strict (no NaN, no Infinity).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tests.hostile import (
    ROOT,
    assert_one_line_error,
    finite_everywhere,
    invoke,
    strict_json,
    with_negative_chunk_size,
)
from tests.samples import document, sample, write_dump
from tileprof.model.profile import load

KINETO = ROOT / "fixtures" / "traces" / "kineto_small.json"
ENERGY = ROOT / "fixtures" / "seeds" / "003_2d9153cb18ea7de3.txt"
LATENCY = ROOT / "fixtures" / "seeds" / "000_55f6fcd9cea2f10a.txt"
NSYS = ROOT / "fixtures" / "runs" / "nsys_kern_sum.csv"
RUNS_CSV = ROOT / "fixtures" / "runs" / "generic_runs.csv"

SAMPLES = [
    sample(0, 0, 100, "gemm", useful=50, physical=60, phase=1, epoch=1),
    sample(1, 10, 100, "gemm", useful=40, physical=60, phase=1, epoch=1),
]


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", SAMPLES)


# --- overflow and non-finite values -------------------------------------------------------


def test_offset_plus_duration_beyond_int64_is_refused(tmp_path: Path) -> None:
    big = 2**62
    path = write_dump(tmp_path / "d.json", [sample(0, big, big, "k")])
    assert_one_line_error("summary", path, contains="sample 0")


def test_durations_whose_sum_overflows_are_refused(tmp_path: Path) -> None:
    big = 2**62 - 1
    path = write_dump(tmp_path / "d.json", [sample(t, 0, big, "k") for t in range(3)])
    assert_one_line_error("summary", path, contains="2^63")


@pytest.mark.parametrize("where", ["dump", "option"])
def test_denormal_clock_hz(tmp_path: Path, where: str) -> None:
    if where == "dump":
        path = write_dump(tmp_path / "d.json", SAMPLES, clockHz=5e-324)
        assert_one_line_error("summary", path, contains="clockHz")
    else:
        path = write_dump(tmp_path / "d.json", SAMPLES)
        assert_one_line_error("summary", path, "--clock-hz", "5e-324", contains="clock")


def test_useful_cycles_sum_overflowing_to_inf(tmp_path: Path) -> None:
    samples = [sample(t, 0, 10, "k", useful=1e308) for t in range(4)]
    path = write_dump(tmp_path / "d.json", samples)
    code, out, _err, exc = invoke("summary", path, "--format", "json")
    assert exc is None
    if code == 0:
        doc = strict_json(out)
        assert finite_everywhere(doc)
    else:
        assert_one_line_error("summary", path, "--format", "json")


def test_summary_json_is_strict_for_every_profile(dump: Path) -> None:
    code, out, _, _ = invoke("summary", dump, "--format", "json")
    assert code == 0
    strict_json(out)


def test_kineto_device_beyond_int64(tmp_path: Path) -> None:
    trace = json.loads(KINETO.read_text())
    for event in trace["traceEvents"]:
        if event.get("cat") == "kernel":
            event["args"]["device"] = 2**70
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    assert_one_line_error("runs", path, contains="device")


def test_energy_mac_beyond_int64(tmp_path: Path) -> None:
    doc = json.loads(ENERGY.read_text())
    doc["gemm_8192"]["MAC"] = 2**63
    path = tmp_path / "energy.json"
    path.write_text(json.dumps(doc))
    assert_one_line_error("runs", path, contains="MAC")


def test_kineto_huge_duration_gives_strict_json(tmp_path: Path) -> None:
    trace = json.loads(KINETO.read_text())
    for event in trace["traceEvents"]:
        if event.get("cat") == "kernel":
            event["dur"] = 1e308
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(trace))
    code, out, _err, exc = invoke("runs", path, "--format", "json")
    assert exc is None, exc
    if code == 0:
        strict_json(out)
    else:
        assert_one_line_error("runs", path, "--format", "json")


def test_nsys_nan_cell_gives_strict_json(tmp_path: Path) -> None:
    text = NSYS.read_text().replace("62.5,1250000,50,25000.0", "62.5,1250000,50,nan", 1)
    path = tmp_path / "nsys.csv"
    path.write_text(text)
    code, out, _err, exc = invoke("runs", path, "--format", "json")
    assert exc is None, exc
    if code == 0:
        strict_json(out)
    else:
        assert_one_line_error("runs", path, "--format", "json")


def test_run_table_zero_time_with_baseline_gives_strict_json(tmp_path: Path) -> None:
    """time_us 0 with a baseline: speedup 5/0 and TFLOP/s 2·100/0 are infinite, so null + notes."""
    path = tmp_path / "runs.csv"
    path.write_text("target,workload,kernel,time_us,baseline_time_us,mac\nA,w,k,0,5,100\n")
    code, out, err, exc = invoke("runs", path, "--format", "json")
    assert exc is None, exc
    assert code == 0, err
    doc = strict_json(out)
    assert finite_everywhere(doc)
    (run,) = doc["runs"]
    assert (run["speedup"], run["tflops"]) == (None, None)
    assert doc["notes"] == [
        "$.runs[0].speedup is inf (not finite); written as null",
        "$.runs[0].tflops is inf (not finite); written as null",
    ]


# --- absurd sizes ------------------------------------------------------------------------


def test_absurd_tile_count_is_bounded(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "d.json", SAMPLES, tileCount=10**12)
    assert_one_line_error("report", path, "-o", tmp_path / "r.html", contains="tileCount")


def test_absurd_clock_is_bounded(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "d.json", SAMPLES, clockHz=1e300)
    assert_one_line_error("summary", path, contains="clockHz")


# --- cache layout Parquet that lies ------------------------------------------------------


def _cache(tmp_path: Path, dump: Path) -> tuple[pl.DataFrame, dict[str, str]]:
    out = tmp_path / "c.parquet"
    code, _, err, _ = invoke("convert", dump, "-o", out)
    assert code == 0, err
    return pl.read_parquet(out), pl.read_parquet_metadata(out)


def _write_cache(path: Path, frame: pl.DataFrame, kv: dict[str, str]) -> Path:
    frame.write_parquet(path, metadata=kv)
    return path


@pytest.mark.parametrize(
    "change",
    [
        pl.col("metadataId").cast(pl.UInt32) + 7,
        pl.when(pl.int_range(pl.len()) == 1).then(None).otherwise(pl.col("offset")).alias("offset"),
        pl.col("tile").cast(pl.String),
        pl.col("operation").cast(pl.String).str.len_bytes().cast(pl.Int64).alias("operation"),
        pl.lit(-5, pl.Int64).alias("duration"),
    ],
    ids=["metadataId-range", "null-offset", "tile-text", "operation-int", "negative"],
)
def test_cache_layout_is_validated(tmp_path: Path, dump: Path, change: pl.Expr) -> None:
    frame, kv = _cache(tmp_path, dump)
    path = _write_cache(tmp_path / "bad.parquet", frame.with_columns(change), kv)
    message = assert_one_line_error("summary", path)
    assert "bad.parquet" in message


def test_corrupt_parquet_names_the_file(tmp_path: Path, dump: Path) -> None:
    out = tmp_path / "c.parquet"
    invoke("convert", dump, "-o", out)
    data = bytearray(out.read_bytes())
    for i in range(8, len(data) - 12, 3):
        data[i] ^= 0x55
    bad = tmp_path / "corrupt.parquet"
    bad.write_bytes(bytes(data))
    assert_one_line_error("summary", bad, contains="corrupt.parquet")


@pytest.mark.parametrize("backtrace", ["1", None], ids=["RUST_BACKTRACE=1", "unset"])
def test_a_footer_that_panics_polars_gives_one_line(
    tmp_path: Path, dump: Path, backtrace: str | None
) -> None:
    """A negative chunk size in the footer made polars' reader panic, and the panic hook
    printed its lines (a backtrace under RUST_BACKTRACE=1) on descriptor 2, which only a
    real process shows: they are held back, and pyarrow's read of the footer names the place."""
    out = tmp_path / "c.parquet"
    assert invoke("convert", dump, "-o", out)[0] == 0
    bad = tmp_path / "footer.parquet"
    bad.write_bytes(with_negative_chunk_size(out.read_bytes()))
    env = {k: v for k, v in os.environ.items() if k != "RUST_BACKTRACE"}
    if backtrace is not None:
        env["RUST_BACKTRACE"] = backtrace
    done = subprocess.run(
        [sys.executable, "-m", "tileprof", "summary", str(bad)],
        capture_output=True, text=True, env=env, timeout=120,
    )  # fmt: skip
    assert done.returncode == 2 and done.stdout == "", done
    assert done.stderr.count("\n") == 1, done.stderr
    assert done.stderr.startswith("tileprof: error: "), done.stderr
    assert "footer.parquet: parquet footer, row group 0, column 10: negative" in done.stderr


def test_a_panic_deeper_in_the_file_prints_nothing_of_its_own(
    capfd: pytest.CaptureFixture[str],
) -> None:
    """What the footer check cannot see (a page, the polars schema in the key-value metadata)
    may still panic the reader: its hook's lines on descriptor 2 are dropped, and anything
    else written there while reading is kept."""
    from polars.exceptions import PanicException

    from tileprof.inputs.tile.parquet_dump import panic_output_held

    with pytest.raises(PanicException), panic_output_held():
        os.write(2, b"thread panicked at src/lib.rs:1:1\n")
        raise PanicException("boom")
    with panic_output_held():
        os.write(2, b"a warning\n")
    assert capfd.readouterr().err == "a warning\n"


# --- encoding ----------------------------------------------------------------------------


def test_invalid_utf8_in_kineto(tmp_path: Path) -> None:
    data = KINETO.read_bytes().replace(b"aten::mm", b"aten::\xff\xfe", 1)
    path = tmp_path / "trace.json"
    path.write_bytes(data)
    assert_one_line_error("runs", path, contains="UTF-8")


def test_invalid_utf8_in_energy(tmp_path: Path) -> None:
    data = ENERGY.read_bytes().replace(b"2026-09-01", b"2026-\xc3\x28-01", 1)
    path = tmp_path / "energy.json"
    path.write_bytes(data)
    assert_one_line_error("runs", path, contains="UTF-8")


def test_utf8_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(b"\xef\xbb\xbf" + document(SAMPLES))
    code, out, err, exc = invoke("summary", path, "--format", "json")
    assert exc is None and code == 0, err
    assert strict_json(out)["sampleCount"] == 2


@pytest.mark.parametrize("bom", [b"\xff\xfe", b"\xfe\xff"])
@pytest.mark.parametrize("command", ["summary", "runs"])
def test_utf16_is_named(tmp_path: Path, bom: bytes, command: str) -> None:
    encoding = "utf-16-le" if bom == b"\xff\xfe" else "utf-16-be"
    path = tmp_path / "d.csv"
    path.write_bytes(bom + "physicalTile,offset,duration\n0,0,1\n".encode(encoding))
    assert_one_line_error(command, path, contains="UTF-16 is not supported; save as UTF-8")


# --- CSV ---------------------------------------------------------------------------------


def test_csv_bare_cr(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_bytes(b'target,workload,kernel,time_us\rA,w,k,1\rB,w,"k\rx",2\n')
    code, _, err, exc = invoke("runs", path)
    assert exc is None, exc
    assert code in (0, 2), err


def test_csv_bare_cr_in_nsys(tmp_path: Path) -> None:
    path = tmp_path / "nsys.csv"
    path.write_bytes(NSYS.read_bytes().replace(b"\n", b"\r").replace(b"Name\r", b'Na"me\r', 1))
    _code, _, _err, exc = invoke("runs", path)
    assert exc is None, exc


def test_tile_csv_extra_field_names_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text("physicalTile,offset,duration\n0,0,1\n1,2,3,4\n")
    assert_one_line_error("summary", path, contains="line 3")


def test_tile_csv_unclosed_quote_names_line(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text('physicalTile,offset,duration,kernel\n0,0,1,"abc\n1,2,3,x\n')
    assert_one_line_error("summary", path, contains="line 2")


def test_forced_csv_names_line(tmp_path: Path, dump: Path) -> None:
    assert_one_line_error("summary", dump, "--format-in", "csv", contains="line")


def test_older_nsys_layout(tmp_path: Path) -> None:
    path = tmp_path / "kern.csv"
    path.write_text(
        "Time(%),Total Time (ns),Instances,Average,Minimum,Maximum,Name\n"
        "62.5,1250000,50,25000.0,24000,30000,ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_nn\n"
    )
    message = assert_one_line_error("summary", path, contains="this is an nsys kernel summary CSV")
    assert "kern.csv" in message and "tileprof runs" in message
    code, out, err, exc = invoke("runs", path, "--format", "json")
    assert exc is None and code == 0, err
    (run,) = strict_json(out)["runs"]
    assert run["kernel"] == "ampere_fp16_s16816gemm_fp16_256x128_ldg8_f2f_nn"
    assert (run["time_us"], run["calls"], run["max_us"], run["p50_us"]) == (25.0, 50, 30.0, None)


# --- links and run tables ----------------------------------------------------------------


def test_links_empty_target_cell(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    path.write_text("target,workload,kernel,time_us\n,w,k,1\nB,w,k,2\n")
    code, _out, _err, exc = invoke("runs", path, "--linked", "--format", "json")
    assert exc is None, exc
    if code != 0:
        assert_one_line_error("runs", path, "--linked", contains="target")


# --- places in messages ------------------------------------------------------------------


def test_energy_error_names_the_real_key(tmp_path: Path) -> None:
    text = ENERGY.read_text()
    doc = json.loads(text)
    stage = next(iter(doc["gemm_8192"]["stages"]))
    doc["gemm_8192"]["stages"][stage]["seconds_per_GEMM"] = "x"
    path = tmp_path / "energy.json"
    path.write_text(json.dumps(doc).replace('"x"', "1e400"))
    message = assert_one_line_error("runs", path)
    assert f"$.gemm_8192.stages.{stage}.seconds_per_GEMM" in message, message


# --- unreadable and non-regular files ----------------------------------------------------


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads mode 000 files")
@pytest.mark.parametrize("command", ["summary", "runs", "report", "convert"])
def test_unreadable_file(tmp_path: Path, dump: Path, command: str) -> None:
    dump.chmod(0)
    try:
        args = [command, dump]
        if command in ("convert", "report"):
            args += ["-o", tmp_path / "out.parquet"]
        assert_one_line_error(*args, contains="dump.json")
    finally:
        dump.chmod(0o644)


def test_device_is_refused() -> None:
    assert_one_line_error("summary", "/dev/zero", contains="/dev/zero")
    assert_one_line_error("runs", "/dev/zero", contains="/dev/zero")


def _cli(
    *args: str | Path, stdin: bytes | None = None, timeout: float = 60
) -> tuple[int, str, str]:
    proc = __import__("subprocess").run(
        [sys.executable, "-m", "tileprof", *map(str, args)],
        input=stdin,
        capture_output=True,
        timeout=timeout,
    )
    return proc.returncode, proc.stdout.decode(), proc.stderr.decode()


@pytest.mark.parametrize("suffix", ["json", "ndjson", "csv"])
def test_pipe_input_is_read(tmp_path: Path, dump: Path, suffix: str) -> None:
    source = tmp_path / f"d.{suffix}"
    invoke("convert", dump, "-o", source)
    code, out, err = _cli("summary", "/dev/stdin", "--format", "json", stdin=source.read_bytes())
    assert code == 0, err
    assert strict_json(out)["sampleCount"] == 2


def test_pipe_input_gzip_and_runs(tmp_path: Path, dump: Path) -> None:
    code, _, err = _cli(
        "summary", "/dev/stdin", "--format", "json", stdin=gzip.compress(dump.read_bytes())
    )
    assert code == 0, err
    code, _, err = _cli("runs", "/dev/stdin", "--format", "json", stdin=KINETO.read_bytes())
    assert code == 0, err


def test_fifo_without_writer_does_not_hang(tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, _, err = _cli("summary", fifo, timeout=60)
    assert code == 2
    assert err.startswith("tileprof: error:") and err.count("\n") == 1, err


@pytest.mark.parametrize("command", ["summary", "runs", "report"])
def test_permission_denied_is_one_line(
    tmp_path: Path, dump: Path, command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """As root a mode-000 file is readable, so EACCES is simulated where inputs are opened."""
    from tileprof.inputs import _common

    def denied(path: object, *_: object, **__: object) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(_common, "open", denied, raising=False)
    args = [command, dump] + (["-o", tmp_path / "r.html"] if command == "report" else [])
    assert_one_line_error(*args, contains="dump.json: cannot read: Permission denied")


# --- huge strings and control characters -------------------------------------------------


def test_huge_name_with_control_characters_renders_short_and_escaped(tmp_path: Path) -> None:
    name = "gemm_\x1b[31m_\x07_\x00" + "x" * 2_000_000 + "_tail_r122"
    path = write_dump(tmp_path / "d.json", [sample(0, 0, 10, name), sample(1, 0, 10, "[bold]k")])
    code, out, err, exc = invoke("summary", path)
    assert exc is None and code == 0, err
    assert "\x1b" not in out and "\x07" not in out and "\x00" not in out
    assert "gemm_\\x1b[31m_\\x07_\\x00" in out  # escaped, start kept
    assert "_tail_r122" in out  # the distinguishing end kept
    assert "[bold]k" in out  # not taken as markup
    assert max(len(line) for line in out.splitlines()) <= 220


def test_huge_names_in_runs_render_short(tmp_path: Path) -> None:
    path = tmp_path / "runs.csv"
    kernel = "k\x1b" + "y" * 1_000_000 + "_end"
    path.write_text(f"target,workload,kernel,time_us\nA\x07,w,{kernel},1\nB,w,{kernel},2\n")
    code, out, err, exc = invoke("runs", path)
    assert exc is None and code == 0, err
    assert "\x1b" not in out and "\x07" not in out
    assert "_end" in out
    assert max(len(line) for line in out.splitlines()) <= 220


# --- convert streams its output ------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["json", "ndjson", "csv", "parquet"])
def test_batched_writer_gives_the_same_dump(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fmt: str
) -> None:
    """Seven samples written three at a time read back as the same samples (and, for the text
    formats, as the same bytes as in one batch)."""
    from tileprof.views import writers

    samples = [sample(t % 3, 10 * t, 5 + t, f"k{t % 2}", useful=t) for t in range(7)]
    profile = load(write_dump(tmp_path / "d.json", samples))
    whole = writers.dump_bytes(profile, fmt)
    monkeypatch.setattr(writers, "WRITE_BATCH_ROWS", 3)
    out = tmp_path / f"out.{fmt}.gz"
    writers.write_dump(profile, out, fmt)
    data = gzip.decompress(out.read_bytes())
    if fmt != "parquet":
        assert data == whole
    back = load(out, format=fmt)
    assert back.samples.equals(profile.samples)
    assert back.metadata == profile.metadata


# --- detection: deep nesting, wrong kind of file --------------------------------------------


@pytest.mark.parametrize("opening", ["[", '{"a":'])
@pytest.mark.parametrize("command", ["summary", "runs"])
def test_deep_nesting(tmp_path: Path, opening: str, command: str) -> None:
    path = tmp_path / "deep.json"
    path.write_text(opening * 100_000)
    assert_one_line_error(command, path, contains="deep.json")


@pytest.mark.parametrize(
    ("source", "words"),
    [
        (KINETO, "this is a PyTorch profiler trace"),
        (ENERGY, "this is an energy report"),
        (LATENCY, "this is a latency benchmark file"),
        (NSYS, "this is an nsys kernel summary CSV"),
        (RUNS_CSV, "this is a run table"),
    ],
)
def test_run_source_given_to_summary_says_what_it_is(source: Path, words: str) -> None:
    message = assert_one_line_error("summary", source, contains=words)
    assert "use `tileprof runs`" in message
