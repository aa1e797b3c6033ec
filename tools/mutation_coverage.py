"""Which modules of ``tileprof/`` and which crates have a mutation figure yet (issue 38).

    python tools/mutation_coverage.py            # the modules without a figure, largest first
    python tools/mutation_coverage.py --covered  # those with one

docs/testing.md's table "Where each module stands" holds the latest figure of every module
run; its first column names a module by its path under ``tileprof/`` (``analyses/diff.py``),
a crate by its name (``tileprof-groups``), or a crate's file (``tileprof-decode``'s
``kineto.rs``; the crate then counts as having a figure). This lists every Python file of the
package that defines a function (mutmut mutates function bodies only) and every crate against
that column, and prints how many of them, and of their lines, have a row: what "a kill rate
for every module" still lacks, counted rather than guessed. A row naming no file that exists
is an error (a module renamed or removed under its figure).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TABLE_HEADING = "### Where each module stands"
ROW = re.compile(r"^\| `([^`]+)`(?:'s `([^`]+)`)?")


@dataclass(frozen=True)
class Module:
    """A file of the package (``analyses/diff.py``) or a crate (``tileprof-groups``)."""

    name: str
    lines: int


def table_rows(testing_md: str) -> list[tuple[str, str | None]]:
    """(module or crate, crate file or None) of each row of the table."""
    start = testing_md.index(TABLE_HEADING)
    rows: list[tuple[str, str | None]] = []
    in_table = False
    for line in testing_md[start:].splitlines()[1:]:
        if line.startswith("| --- "):
            in_table = True
        elif in_table and not line.startswith("|"):
            break
        elif in_table and (found := ROW.match(line)):
            rows.append((found[1], found[2]))
    return rows


def has_functions(source: str) -> bool:
    """Whether the file defines a function: mutmut mutates function bodies only, so a file of
    constants, imports and re-exports has no mutant and needs no figure."""
    tree = ast.parse(source)
    return any(isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) for n in ast.walk(tree))


def modules(root: Path) -> list[Module]:
    """Every Python file of the package that defines a function, and every crate (its
    ``src/*.rs`` lines)."""
    package = root / "tileprof"
    found = []
    for path in sorted(package.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if has_functions(source):
            found.append(Module(str(path.relative_to(package)), len(source.splitlines())))
    for crate in sorted((root / "crates").iterdir()):
        sources = sorted((crate / "src").glob("*.rs"))
        lines = sum(len(p.read_text(encoding="utf-8").splitlines()) for p in sources)
        found.append(Module(crate.name, lines))
    return found


def covered(root: Path, rows: list[tuple[str, str | None]]) -> set[str]:
    """The modules and crates the rows name (a crate counts when any row names it); a
    ValueError for a row that names nothing that exists."""
    names: set[str] = set()
    for name, crate_file in rows:
        path = root / "crates" / name / "src" / crate_file if crate_file else None
        exists = (root / "crates" / name).is_dir() or (root / "tileprof" / name).is_file()
        if not exists or (path is not None and not path.is_file()):
            raise ValueError(f"docs/testing.md: the row of {name!r} names no file that exists")
        names.add(name)
    return names


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--covered", action="store_true", help="list those with a figure")
    args = parser.parse_args(argv)
    text = (root / "docs" / "testing.md").read_text(encoding="utf-8")
    try:
        names = covered(root, table_rows(text))
    except ValueError as error:
        print(error, file=sys.stderr)
        return 2
    every = modules(root)
    listed = [m for m in every if (m.name in names) == args.covered]
    for module in sorted(listed, key=lambda m: (-m.lines, m.name)):
        print(f"{module.lines:6} {module.name}")
    with_figure = [m for m in every if m.name in names]
    lines = sum(m.lines for m in every)
    print(
        f"{len(with_figure)} of {len(every)} modules and crates have a figure "
        f"({sum(m.lines for m in with_figure)} of {lines} lines)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
