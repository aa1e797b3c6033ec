"""Every shell and Python block in README.md and docs/*.md runs as a reader pastes it
(issues 11, 26 and 34).

Each document's blocks run in order, in ONE empty folder (no ``fixtures/``, nothing made
beforehand: the commands that make a block's inputs are in the text before it, e.g.
``tileprof convert --example -o dump.json.gz`` or ``tileprof convert --example-file trace``),
as a reader pasting them one after another in a fresh terminal after the README's setup. A
fenced ``sh`` block runs command by command (a line, with the lines it continues with a
trailing backslash), so a command sees what the ones before it wrote, and a second command
writing a file the first one wrote (``report.html already exists``) fails. A fenced ``python``
block is saved as a script (outside the folder) and run in the folder.

A fenced ``text`` block right after a ``sh`` block (nothing but blank lines between) quotes what
the block's last command prints on stdout: each of its lines must be a line of that output, in
the same order (lines may be left out, an abridged quote); a quoted line ending in ``…`` stands
for the output line it begins.

The only markers: ``<!-- doc-test: synopsis -->`` (a usage synopsis: its subcommand must exist
and every ``--option`` it shows must be in that subcommand's ``--help``) and ``<!-- doc-test:
skip (why) -->`` (installs into the environment, runs this suite, or needs a cluster or service
the tests cannot start). There is no hidden setup.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.hostile import ROOT, invoke

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(
    r"(?:<!-- doc-test: (?P<marker>[^\n]*?) -->\n)?```(?P<lang>[a-z]*)\n(?P<body>.*?)```", re.S
)
_SKIPS = ("installs", "runs this very suite", "runs the suite", "needs ")
"""What a skipped block may say it does: nothing else is left out."""


@dataclass(frozen=True)
class Block:
    doc: str
    line: int
    lang: str
    marker: str
    body: str
    output: str | None = None  # the ``text`` block quoting what the last command prints


def blocks(docs: list[Path] = DOCS) -> list[Block]:
    """Every fenced block of ``docs`` (``text`` blocks that quote output folded into the
    ``sh`` block before them)."""
    found: list[Block] = []
    for doc in docs:
        text = doc.read_text()
        previous_end = -1
        for match in _BLOCK.finditer(text):
            line = text.count("\n", 0, match.start("body"))
            between = text[previous_end : match.start()] if previous_end >= 0 else "x"
            quoting = found and found[-1].doc == doc.name and found[-1].lang == "sh"
            if match["lang"] == "text" and quoting and not between.strip() and not match["marker"]:
                last = found.pop()
                found.append(
                    Block(last.doc, last.line, last.lang, last.marker, last.body, match["body"])
                )
            else:
                found.append(
                    Block(doc.name, line, match["lang"], match["marker"] or "", match["body"])
                )
            previous_end = match.end()
    return found


def runnable(block: Block) -> bool:
    return block.lang in ("sh", "python") and not block.marker.startswith(("skip", "synopsis"))


SHELL = [b for b in blocks() if b.lang == "sh" and runnable(b)]
PYTHON = [b for b in blocks() if b.lang == "python" and runnable(b)]
SYNOPSES = [b for b in blocks() if b.marker == "synopsis"]
RUN_DOCS = sorted({b.doc for b in blocks() if runnable(b)})


def _run(command: str, folder: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TILEPROF_CACHE_DIR"] = str(folder.parent / f"{folder.name}-cache")
    return subprocess.run(
        ["bash", "-c", command],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


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


def unquoted(quoted: str, printed: str) -> str | None:
    """The first quoted line that is not a line of ``printed`` in order, or None."""
    lines = iter(line.rstrip() for line in printed.splitlines())
    for want in (line.rstrip() for line in quoted.splitlines()):
        if not want or want == "…":
            continue
        prefix = want[:-1] if want.endswith("…") else None
        if not any(got == want or (prefix and got.startswith(prefix)) for got in lines):
            return want
    return None


def test_continued_lines_are_one_command() -> None:
    body = "a \\\n  b\n\nc\n"
    assert commands(body) == [(0, "a \\\n  b"), (3, "c")]


def test_a_marker_is_the_line_just_above_its_block() -> None:
    text = "see `<!-- doc-test: skip (x) -->` in prose\n<!-- doc-test: skip (y) -->\n```sh\nz\n```"
    (match,) = _BLOCK.finditer(text)
    assert match["marker"] == "skip (y)"


def test_the_docs_have_commands_to_run() -> None:
    assert len(SHELL) >= 4 and len(PYTHON) >= 3 and len(SYNOPSES) >= 2
    assert {"README.md", "store.md", "scale.md", "runs.md"} <= set(RUN_DOCS)


def test_no_block_has_a_hidden_setup() -> None:
    """The docs show every command a block needs: the only markers are synopsis and skip,
    and a skip only for what cannot run here (an install, this suite, a cluster)."""
    for block in blocks():
        where = f"{block.doc}:{block.line}"
        assert block.marker in ("", "synopsis") or block.marker.startswith("skip"), where
        if block.marker.startswith("skip"):
            why = re.fullmatch(r"skip \((.{10,})\)", block.marker)
            assert why is not None and why[1].startswith(_SKIPS), where


def test_the_readme_setup_is_the_only_install() -> None:
    """The two setup commands install from the repository; so does the CI recipe (no index
    serves tileprof: ``pip install tileprof`` fails)."""
    readme = (ROOT / "README.md").read_text()
    installs = re.findall(r"pip install[^\n]*", readme)
    assert installs and not [i for i in installs if re.search(r"install +['\"]?tileprof\b", i)]
    recipe = readme.split("### CI recipe", 1)[1].split("```yaml", 1)[1].split("```", 1)[0]
    assert "pip install ./" in recipe, recipe


def test_quoted_output_is_matched_line_by_line_in_order() -> None:
    printed = "a  \nbb\nccc\n"
    assert unquoted("a\n…\nccc\n", printed) is None
    assert unquoted("c…\n", printed) is None
    assert unquoted("ccc\nbb\n", printed) == "bb"  # out of order
    assert unquoted("b\n", printed) == "b"  # a whole line, unless it ends in …
    text = "```sh\nx\n```\n\n```text\nout\n```\nprose\n\n```text\nnot quoted\n```\n"
    doc = ROOT / "tests" / "doc_quote_probe.md"
    try:
        doc.write_text(text)
        sh, other = blocks([doc])
    finally:
        doc.unlink()
    assert sh.output == "out\n" and other.lang == "text" and other.output is None


def test_every_skipped_block_says_why() -> None:
    for block in blocks():
        if block.marker.startswith("skip"):
            assert re.fullmatch(r"skip \(.{10,}\)", block.marker), f"{block.doc}:{block.line}"


def first_failure(block: Block, folder: Path) -> str | None:
    """Run a block in ``folder`` (a shell block command by command); the first command that
    fails, or quoted output the last one did not print, with its line; None when all is well."""
    if block.lang == "python":  # saved as a file, as a reader saves it (``__file__`` is set)
        script = folder.parent / f"{folder.name}-{block.doc}-{block.line}.py"
        script.write_text(block.body)
        done = _run(f"{sys.executable} {script}", folder)
        if done.returncode != 0:
            return f"{block.doc}:{block.line}: python block\n{done.stderr}"
        return None
    done = None
    for number, command in commands(block.body):
        done = _run(command, folder)
        if done.returncode != 0:
            return f"{block.doc}:{block.line + number + 1}: {command}\n{done.stderr}"
    if block.output is not None and done is not None:
        missing = unquoted(block.output, done.stdout)
        if missing is not None:
            return f"{block.doc}:{block.line}: quoted, not printed: {missing!r}\n{done.stdout}"
    return None


def test_a_block_runs_in_sequence_in_one_folder(tmp_path: Path) -> None:
    """What a command writes is there for the next one, as in a terminal: writing a file
    twice without --force fails the block, as it does for a reader pasting it."""
    sees = Block("x.md", 0, "sh", "", "echo hi > made.txt\ntest -e made.txt\n")
    assert first_failure(sees, tmp_path) is None
    twice = Block("x.md", 0, "sh", "", "tileprof convert --example -o e.json\n" * 2)
    failure = first_failure(twice, tmp_path)
    assert failure is not None and failure.startswith("x.md:2: tileprof convert")
    assert "e.json already exists" in failure
    quoted = Block("x.md", 0, "sh", "", "echo one; echo two\n", output="two\nthree\n")
    assert "quoted, not printed: 'three'" in (first_failure(quoted, tmp_path) or "")


@pytest.mark.parametrize("doc", RUN_DOCS)
def test_doc_runs_in_order_in_an_empty_folder(tmp_path: Path, doc: str) -> None:
    """Every block of ``doc``, in order, in one empty folder: a reader's paste, nothing more."""
    folder = tmp_path / "reader"
    folder.mkdir()
    for block in (b for b in blocks() if b.doc == doc and runnable(b)):
        failure = first_failure(block, folder)
        assert failure is None, failure


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
