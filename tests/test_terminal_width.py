"""``runs`` and ``supersteps`` tables follow the terminal's width (issue 11, "Terminal width").

At every width every line fits, no row wraps, names keep their distinguishing end, the columns
that go are the low-priority ones (in the order the tables declare), and every number left in
a narrow table is the wide table's, character for character.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys
from functools import cache
from pathlib import Path

import polars as pl
import pytest

from tests.hostile import ROOT
from tileprof.analyses.filters import Filters
from tileprof.analyses.supersteps import Supersteps
from tileprof.views import runs_table, supersteps_table

WIDTHS = (80, 100, 140, 220, 250)
GPU_INPUTS = [
    ROOT / "fixtures/traces/h200_train_steps.json.gz",
    ROOT / "fixtures/seeds/003_2d9153cb18ea7de3.txt",
    ROOT / "fixtures/runs/nsys_kern_sum.csv",
]
LONG = "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122"
"""A name whose distinguishing end (``_r121_r122``) must survive any width."""


@cache
def _runs() -> tuple[pl.DataFrame, pl.DataFrame]:
    from tileprof.model.examples import example_profile
    from tileprof.model.gather import gather_inputs, run_table

    epoch1 = Filters(epoch=1)
    sources = gather_inputs(GPU_INPUTS, epoch1, example=example_profile(), example_filters=epoch1)
    return run_table(sources, None)


@cache
def _supersteps(top: int | None = None) -> Supersteps:
    from tileprof.model.examples import example_profile

    return example_profile().supersteps(epoch=1, top=top)


def _table(text: str, first_title: str) -> list[dict[str, str]]:
    """The rows of the rich table whose header starts with ``first_title``, as dicts."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(first_title + " "))
    titles = [t.strip() for t in lines[start].split("┃")]
    rows = []
    for line in lines[start + 2 :]:
        if "│" not in line:
            break
        cells = [c.strip() for c in line.split("│")]
        assert len(cells) == len(titles), line  # one line per row: nothing wrapped
        rows.append(dict(zip(titles, cells, strict=True)))
    return rows


def _assert_fits(text: str, width: int) -> None:
    for line in text.splitlines():
        assert len(line) <= width, line
        assert line == line.rstrip(), repr(line)


def is_shortened(text: str, full: str) -> bool:
    """Whether ``text`` is ``full`` with its middle elided ("…"), the cut anywhere, and
    perhaps numbered ("~2") to stay apart from a name that shortens alike."""
    text, full = re.sub(r"~\d+$", "", text), re.sub(r"~\d+$", "", full)
    if "…" not in text:
        return False
    head, tail = text.split("…", 1)
    if "…" in full:  # the wide cell is itself shortened (a kernel name past NAME_WIDTH)
        full_head, full_tail = full.split("…", 1)
        return (full_head.startswith(head) or head.startswith(full_head)) and (
            full_tail.endswith(tail) or tail.endswith(full_tail)
        )
    return full.startswith(head) and full.endswith(tail) and len(text) < len(full)


def _assert_same_figures(
    narrow: list[dict[str, str]], wide: list[dict[str, str]], names: set[str]
) -> None:
    """Every cell of the narrow table is the wide one's; a name may lose its middle only."""
    assert len(narrow) == len(wide)
    for small, full in zip(narrow, wide, strict=True):
        for title, text in small.items():
            if title in names and text != full[title]:
                assert is_shortened(text, full[title]), (text, full)
            else:
                assert text == full[title], (title, text, full[title])


@pytest.mark.parametrize("width", WIDTHS)
def test_run_table_fits_and_drops_the_low_priority_columns(width: int) -> None:
    runs, sets = _runs()
    text = runs_table.render(runs, sets, width=width)
    _assert_fits(text, width)
    rows = _table(text, "target")
    shown = list(rows[0])
    dropped = [t for t in runs_table.RUN_FIT.titles if t not in shown]
    assert set(dropped) == set(runs_table.RUN_DROP_FIRST[: len(dropped)])  # lowest first
    for kept in ("target", "implementation / kernel", "time", "speedup"):
        assert kept in shown
    expected_dropped = {80: 8, 100: 8, 140: 8, 220: 3, 250: 0}[width]  # measured layouts
    assert len(dropped) == expected_dropped, shown
    # names keep their distinguishing end
    gemm = [
        r["implementation / kernel"] for r in rows if r["implementation / kernel"][:4] == "gemm"
    ]
    assert len(set(gemm)) == len(gemm) == 6  # names that shorten alike stay apart
    assert any(re.sub(r"~\d+$", "", g).endswith("_r122") for g in gemm)
    wide = _table(runs_table.render(runs, sets), "target")
    names = {"target", "workload", "implementation / kernel"}
    _assert_same_figures(rows, wide, names)


@cache
def _ops() -> pl.DataFrame:
    from tileprof.model.ops import load_ops

    return load_ops(GPU_INPUTS[0]).frame


@pytest.mark.parametrize("width", WIDTHS)
def test_op_table_fits_and_drops_the_low_priority_columns(width: int) -> None:
    ops = _ops()
    text = runs_table.render_ops(ops, width=width)
    _assert_fits(text, width)
    rows = _table(text, "target")
    assert len(rows) == ops.height
    shown = list(rows[0])
    dropped = [t for t in runs_table.OP_FIT.titles if t not in shown]
    assert set(dropped) == set(runs_table.OP_DROP_FIRST[: len(dropped)])  # lowest first
    for kept in ("target", "op", "input dims", "total", "TFLOP/s"):
        assert kept in shown
    # only the file width (runs_table.OP_TABLE_WIDTH) shows every column
    assert (width >= runs_table.OP_TABLE_WIDTH) == (not dropped)
    wide = _table(runs_table.render_ops(ops), "target")
    assert list(wide[0]) == list(runs_table.OP_FIT.titles)
    _assert_same_figures(rows, wide, {"target", "op", "input dims"})


def test_the_default_run_table_is_todays_and_keeps_every_column() -> None:
    runs, sets = _runs()
    text = runs_table.render(runs, sets)
    assert text == runs_table.render(runs, sets, width=runs_table.TABLE_WIDTH)
    rows = _table(text, "target")
    assert list(rows[0]) == list(runs_table.RUN_FIT.titles)
    assert any(r["implementation / kernel"] == LONG for r in rows)  # whole at full width


@pytest.mark.parametrize(
    ("width", "tiles"), [*((w, False) for w in WIDTHS), (80, True)]
)  # the per-tile table is narrow at any width; rich takes seconds per thousand tile rows
def test_superstep_table_fits_and_drops_the_low_priority_columns(width: int, tiles: bool) -> None:
    result = _supersteps(1 if tiles else None)
    text = supersteps_table.render(result, "tile device", tiles=tiles, width=width)
    _assert_fits(text, width)
    rows = _table(text, "epoch")
    shown = list(rows[0])
    dropped = [t for t in supersteps_table.SUPERSTEP_FIT.titles if t not in shown]
    assert set(dropped) == set(supersteps_table.SUPERSTEP_DROP_FIRST[: len(dropped)])
    for kept in ("epoch", "#", "µs", "efficiency", "critical", "group"):
        assert kept in shown
    assert (width >= 220) == (not dropped)
    assert any(re.sub(r"~\d+$", "", r["group"]).endswith("_r121_r122") for r in rows)
    wide = _table(supersteps_table.render(result, "tile device", tiles=tiles), "epoch")
    _assert_same_figures(rows, wide, {"group"})


def test_fit_refuses_a_priority_naming_no_column() -> None:
    from tileprof.views.fit import Fit

    with pytest.raises(ValueError, match="lacks"):
        Fit(titles=("a", "b"), drop_first=("c",), full_width=100, full_limit=10)


def _on_a_terminal(columns: int, *args: str) -> str:
    """``tileprof ARGS`` with its stdout on a pseudo-terminal of ``columns`` columns."""
    leader, follower = os.openpty()
    env = dict(os.environ, COLUMNS=str(columns), LINES="50")
    process = subprocess.Popen(
        [sys.executable, "-m", "tileprof", *args],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 120)
        if not ready:
            process.kill()
            break
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=120) == 0
    return b"".join(chunks).decode().replace("\r\n", "\n")


@pytest.mark.parametrize("command", [["runs", "--example"], ["supersteps", "--example"]])
def test_the_commands_follow_the_terminal_but_not_a_pipe(command: list[str]) -> None:
    on_terminal = _on_a_terminal(80, *command)
    _assert_fits(on_terminal, 80)
    piped = subprocess.run(
        [sys.executable, "-m", "tileprof", *command],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        cwd=ROOT,
        check=True,
    ).stdout
    assert max(len(line) for line in piped.splitlines()) > 100  # a pipe keeps the file width


def test_an_output_file_keeps_the_fixed_width(tmp_path: Path) -> None:
    from tileprof.core.outputs import terminal_width

    assert terminal_width(tmp_path / "t.txt") is None


def test_on_a_terminal_only_standard_output_takes_its_width(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With stdout a terminal of 77 columns, ``-`` and no output take its width; a file does
    not."""
    import shutil

    from tileprof.core.outputs import terminal_width

    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setattr(shutil, "get_terminal_size", lambda *a, **k: os.terminal_size((77, 24)))
    assert terminal_width(Path("-")) == 77
    assert terminal_width(None) == 77
    assert terminal_width(tmp_path / "t.txt") is None
