"""tools/mutation_coverage.py (issue 38): which modules and crates have a mutation figure.

Held to a tiny project worked out by hand, and to the real table: every row of docs/testing.md's
"Where each module stands" must name a file or crate that exists.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.tool_scripts import load_tool

ROOT = Path(__file__).resolve().parent.parent
tool = load_tool("mutation_coverage")

TABLE = textwrap.dedent(
    """\
    # Testing

    ### Where each module stands (issue 38)

    | module | run | against the current tests | section |
    | --- | --- | --- | --- |
    | `a.py` | all 10 | 10 (100%) | `x` |
    | `kit`'s `lib.rs` | all 5 | 5 (100%) | `x` |

    | `b.py` | a later table's row is not the table's | | |
    """
)


def _project(root: Path, table: str = TABLE) -> Path:
    (root / "tileprof" / "sub").mkdir(parents=True)
    (root / "tileprof" / "a.py").write_text("def f():\n    return 1\n")
    (root / "tileprof" / "b.py").write_text("x = 1\n\n\nasync def g():\n    return x\n")
    (root / "tileprof" / "sub" / "consts.py").write_text('"""Only constants."""\nLIMIT = 3\n')
    for crate, lines in (("kit", 4), ("other", 2)):
        (root / "crates" / crate / "src").mkdir(parents=True)
        (root / "crates" / crate / "src" / "lib.rs").write_text("fn f() {}\n" * lines)
    (root / "docs").mkdir()
    (root / "docs" / "testing.md").write_text(table)
    return root


def test_the_rows_of_the_table_and_no_other(tmp_path: Path) -> None:
    assert tool.table_rows(TABLE) == [("a.py", None), ("kit", "lib.rs")]


def test_modules_without_a_figure_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    assert tool.main([], root=root) == 0
    # b.py (5 lines) and the crate `other` (2) lack a figure; consts.py defines no function
    assert capsys.readouterr().out.splitlines() == [
        "     5 b.py",
        "     2 other",
        "2 of 4 modules and crates have a figure (6 of 13 lines)",
    ]
    assert tool.main(["--covered"], root=root) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["     4 kit", "     2 a.py"]


@pytest.mark.parametrize(
    "row", ["| `gone.py` | all 1 | 1 | `x` |", "| `kit`'s `gone.rs` | all 1 | 1 | `x` |"]
)
def test_a_row_naming_no_file_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], row: str
) -> None:
    table = TABLE.replace("| `a.py` | all 10 | 10 (100%) | `x` |", row)
    assert tool.main([], root=_project(tmp_path, table)) == 2
    assert "names no file that exists" in capsys.readouterr().err


def test_every_row_of_the_real_table_names_a_module_that_exists() -> None:
    text = (ROOT / "docs" / "testing.md").read_text(encoding="utf-8")
    rows = tool.table_rows(text)
    assert len(rows) >= 30
    assert tool.covered(ROOT, rows) >= {"analyses/diff.py", "tileprof-groups"}
