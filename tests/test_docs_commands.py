"""Every shell and Python block in README.md and docs/*.md runs as pasted (issues 11 and 26).

Each fenced ``sh`` block is run command by command (a line, with the lines it continues with a
trailing backslash), in sequence, in ONE fresh temporary folder, as a reader pasting the block
runs it: a command sees what the commands before it wrote, so a second command writing the
file the first one wrote (``report.html already exists``) fails the block. The folder holds the
repository's ``fixtures/`` and whatever the block's marker comment creates first::

    <!-- doc-test: setup: tileprof convert --example -o dump.json -->

A setup runs once for every block that names the same one (a store of three runs takes half a
minute), and each block gets its own copy of what it made. Every fenced ``python`` block runs
the same way, pasted into a file and run as one script.

Other markers: ``<!-- doc-test: synopsis -->`` (a usage synopsis: its subcommand must exist and
every ``--option`` it shows must be in that subcommand's ``--help``) and
``<!-- doc-test: skip (why) -->`` (installs into the environment, runs this suite, or needs a
cluster or service the tests cannot start). Nothing else is left out.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hostile import ROOT, invoke

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(
    r"(?:<!-- doc-test: (?P<marker>[^\n]*?) -->\n)?```(?P<lang>sh|python)\n(?P<body>.*?)```", re.S
)


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    marker: str
    body: str


def blocks() -> list[Block]:
    found = []
    for doc in DOCS:
        text = doc.read_text()
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("body"))
            found.append(Block(doc.name, line, match["lang"], match["marker"] or "", match["body"]))
    return found


SHELL = [b for b in blocks() if b.lang == "sh" and not b.marker.startswith(("skip", "synopsis"))]
PYTHON = [b for b in blocks() if b.lang == "python" and not b.marker.startswith("skip")]
SYNOPSES = [b for b in blocks() if b.marker == "synopsis"]


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TILEPROF_CACHE_DIR"] = str(folder / ".cache")
    return subprocess.run(
        ["bash", "-c", command], cwd=folder, env=env, capture_output=True, text=True, timeout=300
    )


@dataclass
class Setups:
    """The folder each setup made, by its marker: made once per module, copied per command."""

    root: Path
    made: dict[str, Path]


@pytest.fixture(scope="module")
def setups(tmp_path_factory: pytest.TempPathFactory) -> Setups:
    return Setups(tmp_path_factory.mktemp("setups"), {})


def _folder(setups: Setups, tmp_path: Path, block: Block) -> Path:
    """A fresh folder for one block: fixtures, plus the block's setup (made once, copied)."""
    base = setups.made.get(block.marker)
    if base is None:
        base = setups.root / f"setup{len(setups.made)}"
        base.mkdir()
        (base / "fixtures").symlink_to(ROOT / "fixtures")
        if block.marker.startswith("setup:"):
            done = _run(block.marker.removeprefix("setup:").strip(), base)
            assert done.returncode == 0, f"{block.doc}:{block.line}: setup\n{done.stderr}"
        setups.made[block.marker] = base
    folder = tmp_path / "block"
    shutil.copytree(base, folder, symlinks=True)
    return folder


def commands(body: str) -> list[tuple[int, str]]:
    """The commands of a shell block with the line each starts on (0-based): a line ending in
    a backslash goes on into the next, as in the shell."""
    found: list[tuple[int, str]] = []
    pending: list[str] = []
    for number, line in enumerate(body.splitlines()):
        if not line.strip() and not pending:
            continue
        pending.append(line)
        if not line.endswith("\\"):
            found.append((number - len(pending) + 1, "\n".join(pending)))
            pending = []
    assert not pending, f"a block ends in a continued line: {pending[-1]}"
    return found


def test_continued_lines_are_one_command() -> None:
    body = "a \\\n  b\n\nc\n"
    assert commands(body) == [(0, "a \\\n  b"), (3, "c")]


def test_a_marker_is_the_line_just_above_its_block() -> None:
    text = "see `<!-- doc-test: setup: X -->` in prose\n<!-- doc-test: skip (y) -->\n```sh\nz\n```"
    (match,) = _BLOCK.finditer(text)
    assert match["marker"] == "skip (y)"


def test_the_docs_have_commands_to_run() -> None:
    assert len(SHELL) >= 4 and len(PYTHON) >= 3 and len(SYNOPSES) >= 2


def test_every_skipped_block_says_why() -> None:
    for block in blocks():
        if block.marker.startswith("skip"):
            assert re.fullmatch(r"skip \(.{10,}\)", block.marker), f"{block.doc}:{block.line}"


def first_failure(block: Block, folder: Path) -> str | None:
    """Run a shell block's commands in sequence in ``folder``; the first that fails, with
    its line and stderr, or None when all succeed."""
    for number, command in commands(block.body):
        done = _run(command, folder)
        if done.returncode != 0:
            return f"{block.doc}:{block.line + number + 1}: {command}\n{done.stderr}"
    return None


def test_a_block_runs_in_sequence_in_one_folder(tmp_path: Path) -> None:
    """What a command writes is there for the next one, as in a terminal: writing a file
    twice without --force fails the block, as it does for a reader pasting it."""
    (tmp_path / "fixtures").mkdir()
    sees = Block("x.md", 0, "sh", "", "echo hi > made.txt\ntest -e made.txt\n")
    assert first_failure(sees, tmp_path) is None
    twice = Block("x.md", 0, "sh", "", "tileprof convert --example -o e.json\n" * 2)
    failure = first_failure(twice, tmp_path)
    assert failure is not None and failure.startswith("x.md:2: tileprof convert")
    assert "e.json already exists" in failure


@pytest.mark.parametrize("block", SHELL, ids=lambda b: f"{b.doc}:{b.line}")
def test_shell_block_runs_as_pasted(setups: Setups, tmp_path: Path, block: Block) -> None:
    failure = first_failure(block, _folder(setups, tmp_path, block))
    assert failure is None, failure


@pytest.mark.parametrize("block", PYTHON, ids=lambda b: f"{b.doc}:{b.line}")
def test_python_block_runs(setups: Setups, tmp_path: Path, block: Block) -> None:
    folder = _folder(setups, tmp_path, block)
    (folder / "doc_block.py").write_text(block.body)  # a file, as pasted: __file__ is set
    done = _run(f"{sys.executable} doc_block.py", folder)
    assert done.returncode == 0, f"{block.doc}:{block.line}\n{done.stderr}"


@pytest.mark.parametrize("block", SYNOPSES, ids=lambda b: f"{b.doc}:{b.line}")
def test_synopsis_matches_help(block: Block) -> None:
    words = block.body.split()
    assert words[0] == "tileprof"
    code, help_text, err, _ = invoke(words[1], "--help")
    assert code == 0, err
    for option in sorted(set(re.findall(r"--[a-z][a-z-]*", block.body))):
        assert option in help_text, f"{block.doc}:{block.line}: {option} not in {words[1]} --help"


def test_help_lists_each_command_on_one_line_without_ellipsis() -> None:
    from click.testing import CliRunner

    from tileprof.commands.cli import cli

    result = CliRunner().invoke(cli, ["--help"], terminal_width=80)
    commands = result.stdout.split("Commands:\n", 1)[1].splitlines()
    names = [line.split()[0] for line in commands]
    assert {"convert", "report", "runs", "summary"} <= set(names)
    for line in commands:
        assert len(line) <= 80 and "…" not in line and "..." not in line, line


@pytest.mark.parametrize("command", ["runs", "report"])
def test_example_says_which_epoch_it_shows(tmp_path: Path, command: str) -> None:
    args = [command, "--example"] + (
        ["-o", str(tmp_path / "r.html")] if command == "report" else []
    )
    code, _, err, _ = invoke(*args)
    assert code == 0, err
    assert "--example: epoch 1 of the reference profile" in err
    code, _, err, _ = invoke(*args, "--epoch", "2", *(["--force"] if command == "report" else []))
    assert code == 0 and "--example: epoch" not in err, err


def test_a_run_without_chromium_says_so_in_its_summary(pytester: pytest.Pytester) -> None:
    """The browser tests skip without Chromium; the end of the run says so (a line in the
    terminal summary), not only a skip reason that plain ``pytest`` does not print."""
    pytester.makeconftest((ROOT / "tests" / "conftest.py").read_text())
    pytester.makepyfile(
        test_pages="""
        import pytest

        pytestmark = pytest.mark.skipif(True, reason="no Chromium found on PATH (apt-get x)")

        def test_report_page(): pass
        def test_diff_page(): pass
        """,
        test_other="def test_fine(): pass\n",
    )
    result = pytester.runpytest("-p", "no:randomly", "-p", "no:cacheprovider")
    result.assert_outcomes(passed=1, skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*browser tests skipped*",
            "2 browser tests skipped: no Chromium found on PATH (apt-get x); the report, diff "
            "and history pages were not checked in Chromium",
        ]
    )
    assert "browser tests skipped" not in pytester.runpytest("test_other.py").stdout.str()
