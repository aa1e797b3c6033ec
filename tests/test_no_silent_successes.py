"""No silent successes (issue 26): a command that writes a file names it; a name or a format
that would hide what was written is refused with one line and exit 2.

(`history --fail-on` without a band and `history --order` with a label no run carries are in
tests/test_store_history.py, beside their store.)
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.hostile import ROOT, assert_one_line_error, invoke
from tests.samples import sample, write_dump
from tileprof.model.profile import load

SAMPLES = [sample(0, 0, 100, "gemm", epoch=1), sample(1, 10, 100, "copy", epoch=1)]
TRACE = ROOT / "fixtures" / "traces" / "kineto_small.json"


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "d.json", SAMPLES)


@pytest.mark.parametrize("name", ["out.xyz", "out", "out.parquet.txt", "out.gz"])
def test_convert_refuses_a_name_that_says_no_layout(tmp_path: Path, dump: Path, name: str) -> None:
    """It wrote Parquet under any unknown name; now it names the layouts and writes nothing."""
    message = assert_one_line_error("convert", dump, "-o", tmp_path / name, contains="-o ")
    assert "the name says no layout" in message and "--to FORMAT" in message
    assert not (tmp_path / name).exists()
    # --to says it instead: the name is then the user's business
    code, out, err, _ = invoke("convert", dump, "-o", tmp_path / name, "--to", "json")
    assert code == 0, err
    assert out == f"{tmp_path / name}\n"
    assert load(tmp_path / name).samples.height == len(SAMPLES)


@pytest.mark.parametrize(
    ("args", "name"),
    [
        (("convert", "{dump}"), "c.parquet"),
        (("convert", "{dump}"), "c.ndjson.gz"),
        (("summary", "{dump}", "--format", "csv"), "s.csv"),
        (("summary", "{dump}", "--format", "json"), "s.json"),
        (("runs", "{dump}", "--format", "csv"), "r.csv"),
        (("runs", "{dump}", "--format", "parquet"), "r.parquet"),
        (("runs", "--ops", str(TRACE), "--format", "csv"), "ops.csv"),
        (("supersteps", "{dump}", "--format", "json"), "t.json"),
        (("diff", "{dump}", "{dump}", "--format", "html"), "d.html"),
    ],
    ids=lambda v: v if isinstance(v, str) else " ".join(v[:1]),
)
def test_a_command_that_writes_a_file_names_it(
    tmp_path: Path, dump: Path, args: tuple[str, ...], name: str
) -> None:
    target = tmp_path / name
    filled = [a.format(dump=dump) for a in args]
    code, out, err, exception = invoke(*filled, "-o", target)
    assert exception is None and code == 0, err
    assert target.stat().st_size > 0
    assert out == f"{target}\n"


def test_stdout_and_devices_are_not_named(dump: Path) -> None:
    code, out, _, _ = invoke("summary", dump, "--format", "csv", "-o", "-")
    assert code == 0 and out.startswith("name,") and str(dump) not in out
    code, out, _, _ = invoke("summary", dump, "--format", "csv", "-o", "/dev/null")
    assert code == 0 and out == ""


def test_diff_html_needs_a_file(tmp_path: Path, dump: Path) -> None:
    """HTML on a terminal is a screenful of markup: it needs -o FILE (or -o - on purpose)."""
    assert_one_line_error("diff", dump, dump, "--format", "html", contains="-o FILE")
    code, out, err, _ = invoke("diff", dump, dump, "--format", "html", "-o", "-")
    assert code == 0, err
    assert out.lstrip().lower().startswith("<!doctype html>")


def test_a_written_run_table_reads_back(tmp_path: Path, dump: Path) -> None:
    target = tmp_path / "r.parquet"
    code, out, err, _ = invoke("runs", dump, "--format", "parquet", "-o", target)
    assert code == 0 and out == f"{target}\n", err
    assert pl.read_parquet(target).height >= 1
