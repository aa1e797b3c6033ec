"""Every command's terminal output fits the terminal (issue 26, "Tables fit the terminal").

Each command runs with its stdout on a pseudo-terminal of 80 and of 120 columns (``COLUMNS``):
no line may be wider; the sort key and the column that tells rows apart survive; a table that
left columns out ends with one line naming them and how to see them. The same command into a
pipe keeps the full width of files.
"""

from __future__ import annotations

import os
import re
import select
import subprocess
import sys

import pytest
from click.testing import CliRunner

from tests.hostile import ROOT
from tests.samples import sample, write_dump
from tileprof.commands.cli import cli

LONG = "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122"
NAMES = (LONG, LONG.replace("large", "small"), LONG.replace("c112", "c96"))
"""Names that shorten alike at narrow widths: they must stay apart."""
TRACE = ROOT / "fixtures/traces/h200_train_steps.json.gz"
NSYS = ROOT / "fixtures/runs/nsys_kern_sum.csv"
DROPPED = re.compile(r"^not shown: .+ \(a wider terminal or --format (csv|json) shows them\)$")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Two small dumps of long names, and a store of three runs of them."""
    folder = tmp_path_factory.mktemp("fit")
    paths = {}
    for index, useful in enumerate((50, 51, 40), start=1):
        samples = [
            sample(t, 1000 + index + 10 * k, 100 + k, name, useful=useful)
            for k, name in enumerate(NAMES)
            for t in range(4)
        ]
        samples.append(sample(0, 3000, 20 * index, "exchange", kind="exchange"))
        paths[f"run{index}"] = str(write_dump(folder / f"run{index}.json", samples))
    store = str(folder / "store")
    for index in (1, 2, 3):
        args = ["store", "add", paths[f"run{index}"], "--store", store]
        args += ["--run", f"nightly-run-{index}-of-the-long-benchmark", "--label", f"n={index}"]
        assert CliRunner().invoke(cli, args).exit_code == 0
    return {"before": paths["run1"], "after": paths["run3"], "store": store}


COMMANDS: dict[str, tuple[list[str], tuple[str, ...]]] = {
    "summary": (["summary", "{before}"], ("group", "phase cycles")),
    "summary --store": (["summary", "--store", "{store}", "--run", "*-1-*"], ("phase cycles",)),
    "runs": (["runs", "{before}", str(NSYS)], ("workload", "implementation / kernel")),
    "runs --ops": (["runs", "--ops", str(TRACE)], ("op", "dtype")),
    "supersteps": (["supersteps", "{before}"], ("epoch", "#", "group")),
    "diff": (["diff", "{before}", "{after}"], ("phase cycles", "Δ", "group")),
    "store list": (["store", "list", "--store", "{store}"], ("run",)),
    "history": (["history", "--store", "{store}"], ("group", "field", "newest")),
}
"""Each command, and the titles its table must keep at any width (the sort key and the
columns that tell rows apart)."""


def _argv(command: str, inputs: dict[str, str]) -> list[str]:
    return [a.format(**inputs) for a in COMMANDS[command][0]]


def on_a_terminal(columns: int, argv: list[str]) -> str:
    """``tileprof ARGV``'s stdout on a pseudo-terminal of ``columns`` columns."""
    leader, follower = os.openpty()
    env = dict(os.environ, COLUMNS=str(columns), LINES="50")
    process = subprocess.Popen(
        [sys.executable, "-m", "tileprof", *argv],
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=ROOT,
    )
    os.close(follower)
    chunks = []
    while select.select([leader], [], [], 60)[0]:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert process.wait(timeout=60) == 0, argv
    return b"".join(chunks).decode().replace("\r\n", "\n")


def _header(text: str, title: str) -> str:
    """The first header line of a table holding ``title``."""
    pattern = re.compile(rf"(^|[ ┃]){re.escape(title)}( |┃|$)")
    return next(line for line in text.splitlines() if pattern.search(line))


@pytest.mark.parametrize("columns", [80, 120])
@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_command_fits_the_terminal(
    command: str, columns: int, inputs: dict[str, str]
) -> None:
    text = on_a_terminal(columns, _argv(command, inputs))
    lines = text.splitlines()
    assert lines, command
    too_wide = [line for line in lines if len(line) > columns]
    assert not too_wide, (command, too_wide)
    for title in COMMANDS[command][1]:
        assert _header(text, title)  # the sort key and the distinguishing columns stay
    said = [line for line in lines if line.startswith("not shown: ")]
    for line in said:  # one line each, unless a narrow terminal broke it at a space
        following = lines[lines.index(line) + 1] if lines.index(line) + 1 < len(lines) else ""
        assert DROPPED.match(line) or DROPPED.match(f"{line} {following.strip()}"), line
    if command in ("summary", "runs", "diff"):
        assert said, command  # these lose columns at 120 already
    shortened = [line for line in lines if "gemm_f16" in line]
    names = {re.search(r"gemm_f16\S*", line).group() for line in shortened}  # type: ignore[union-attr]
    if command in ("summary", "diff", "supersteps"):
        assert len(names) >= min(3, len(shortened)), (command, names)  # alike names stay apart


@pytest.mark.parametrize("command", ["summary", "diff", "store list", "history"])
def test_a_pipe_keeps_the_full_width(command: str, inputs: dict[str, str]) -> None:
    piped = subprocess.run(
        [sys.executable, "-m", "tileprof", *_argv(command, inputs)],
        capture_output=True,
        text=True,
        env=dict(os.environ, COLUMNS="80"),
        cwd=ROOT,
        check=True,
    ).stdout
    assert LONG in piped or command == "store list"
    assert not any(line.startswith("not shown: ") for line in piped.splitlines())
    assert max(len(line) for line in piped.splitlines()) > 80


def test_a_fit_may_not_drop_what_it_keeps() -> None:
    from tileprof.views.fit import Fit

    with pytest.raises(ValueError, match="both kept and dropped"):
        Fit(titles=("a", "b"), drop_first=("a",), full_width=100, full_limit=10, keep=("a",))


def test_names_that_shorten_alike_stay_apart() -> None:
    from tileprof.core.text import distinct_shortened, shorten

    rearrange = "rearrange_row_major_to_amp_f16_o2_r{}_p64_c32_p32_b64x16"
    names = [*NAMES, LONG.replace("large", "small").replace("c112", "c96"), None, "x", "x"]
    names += [rearrange.format(64), rearrange.format(0)]
    for limit in (10, 16, 24, 31, 40):
        short = distinct_shortened(names, limit)
        assert short[4:7] == [None, "x", "x"]  # equal names stay equal, None stays None
        given = [s for s in short if s is not None]
        assert len(set(given[:4] + given[6:])) == 6, (limit, short)
        assert all(len(s) <= limit for s in given)
    assert shorten(rearrange.format(64), 31) == shorten(rearrange.format(0), 31)  # the clash
    assert distinct_shortened([rearrange.format(64), rearrange.format(0)], 31) == [
        "rearrange_…4_p64_c32_p32_b64x16",
        "rearrange_…0_p64_c32_p32_b64x16",
    ]  # the cut moved left until the tail held the difference
