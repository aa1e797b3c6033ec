"""A fixed, time-bounded sample of mutants that CI runs on every submission (issue 38).

    nice -n 10 python tools/mutation_subset.py                 # every module of the subset
    nice -n 10 python tools/mutation_subset.py change_points   # one module
    nice -n 10 python tools/mutation_subset.py --every commands_check   # every site, no gate

The full mutation runs (tools/mutation.py, mutmut) take minutes to hours a module, so CI cannot
run them. This runs a few mutants a module instead, the same ones on every run: the sites a
module could be mutated at are listed in a fixed order (operators, comparisons, booleans and
numbers inside function bodies), and ``count`` of them are drawn with ``random.Random`` seeded
from ``seed`` and the module's name. Each mutant is written into a scratch copy of the tree and
the module's tests run against it (``pytest -x``); a failing test or a run past the time limit
kills it. The run fails when a module kills fewer than its ``min_killed``, recorded in
``[tool.tileprof.mutation_subset]`` of pyproject.toml from a run on the current tests: a test
that stops biting fails the submission that weakened it. Before its mutants, each module's
tests run once unmutated in the copy and must pass, so a broken copy cannot pass as killed
mutants. ``--every`` runs every site of modules of ``[tool.tileprof.mutation]`` instead (their
path and tests) and prints the count killed, gating nothing: the figure for code that mutmut
does not mutate, the bodies of decorated functions (click commands). See docs/testing.md.
"""

from __future__ import annotations

import argparse
import ast
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("tileprof", "tests", "fixtures", "docs", "README.md", "pyproject.toml")

COMPARE_SWAP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Lt: ast.LtE,
    ast.LtE: ast.Lt,
    ast.Gt: ast.GtE,
    ast.GtE: ast.Gt,
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
}
BINOP_SWAP: dict[type[ast.operator], type[ast.operator]] = {
    ast.Add: ast.Sub,
    ast.Sub: ast.Add,
    ast.Mult: ast.Div,
    ast.Div: ast.Mult,
    ast.FloorDiv: ast.Div,
    ast.Mod: ast.FloorDiv,
}
BOOL_SWAP: dict[type[ast.boolop], type[ast.boolop]] = {ast.And: ast.Or, ast.Or: ast.And}


@dataclass(frozen=True)
class Site:
    """One place a module can be mutated: the ``index``-th site in visiting order."""

    index: int
    function: str
    line: int
    change: str


def _symbol(op: ast.AST) -> str:
    return {
        "Lt": "<",
        "LtE": "<=",
        "Gt": ">",
        "GtE": ">=",
        "Eq": "==",
        "NotEq": "!=",
        "Is": "is",
        "IsNot": "is not",
        "In": "in",
        "NotIn": "not in",
        "Add": "+",
        "Sub": "-",
        "Mult": "*",
        "Div": "/",
        "FloorDiv": "//",
        "Mod": "%",
        "And": "and",
        "Or": "or",
    }[type(op).__name__]


def _changes(node: ast.AST) -> Iterator[tuple[str, Any]]:
    """The mutations of one node: a text saying what changes, and how to change it."""
    if isinstance(node, ast.Compare):
        for position, op in enumerate(node.ops):
            if type(op) in COMPARE_SWAP:
                new = COMPARE_SWAP[type(op)]()
                yield f"{_symbol(op)} -> {_symbol(new)}", ("ops", position, new)
    elif isinstance(node, (ast.BinOp, ast.AugAssign)) and type(node.op) in BINOP_SWAP:
        new = BINOP_SWAP[type(node.op)]()
        yield f"{_symbol(node.op)} -> {_symbol(new)}", ("op", None, new)
    elif isinstance(node, ast.BoolOp):
        new = BOOL_SWAP[type(node.op)]()
        yield f"{_symbol(node.op)} -> {_symbol(new)}", ("op", None, new)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        yield "not dropped", ("unwrap", None, None)
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"{node.value} -> {not node.value}", ("value", None, not node.value)
    elif isinstance(node, ast.Constant) and type(node.value) in (int, float):
        yield f"{node.value!r} -> {node.value + 1!r}", ("value", None, node.value + 1)


def _walk(
    node: ast.AST, name: str = "", in_function: bool = False
) -> Iterator[tuple[ast.AST, ast.AST, str, str]]:
    """Each node inside a function body, with its parent, field and function, in a fixed order.

    Annotations, decorators, argument defaults and docstrings are left alone (changing them
    changes a signature or a text, not a computation); so is code that runs at import.
    """
    for field, value in ast.iter_fields(node):
        if field in ("annotation", "returns", "decorator_list", "type_comment"):
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and field == "args":
            continue
        for child in value if isinstance(value, list) else [value]:
            if not isinstance(child, ast.AST) or _is_docstring(node, child):
                continue
            inner, inside = name, in_function
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                inner = f"{name}.{child.name}" if name else child.name
                inside = in_function or not isinstance(child, ast.ClassDef)
            if in_function:
                yield child, node, field, name
            yield from _walk(child, inner, inside)


def _is_docstring(parent: ast.AST, child: ast.AST) -> bool:
    body = getattr(parent, "body", None)
    return (
        isinstance(body, list)
        and bool(body)
        and body[0] is child
        and isinstance(child, ast.Expr)
        and isinstance(child.value, ast.Constant)
        and isinstance(child.value.value, str)
    )


def sites(source: str) -> list[Site]:
    """Every mutation site of a module's source, in visiting order (the same on every run)."""
    found: list[Site] = []
    for node, _parent, _field, function in _walk(ast.parse(source)):
        for change, _how in _changes(node):
            found.append(Site(len(found), function, getattr(node, "lineno", 0), change))
    return found


def mutate(source: str, index: int) -> str:
    """The module's source with its ``index``-th site changed (formatted by ``ast.unparse``)."""
    tree = ast.parse(source)
    count = 0
    for node, parent, field, _function in _walk(tree):
        for _change, (attribute, position, new) in _changes(node):
            if count == index:
                _apply(node, parent, field, attribute, position, new)
                return ast.unparse(ast.fix_missing_locations(tree))
            count += 1
    raise IndexError(f"no mutation site {index}")


def _apply(
    node: ast.AST, parent: ast.AST | None, field: str, attribute: str, position: Any, new: Any
) -> None:
    if attribute == "ops":
        assert isinstance(node, ast.Compare)
        node.ops[position] = new
    elif attribute == "unwrap":
        assert isinstance(node, ast.UnaryOp) and parent is not None
        value = getattr(parent, field)
        if isinstance(value, list):
            value[value.index(node)] = node.operand
        else:
            setattr(parent, field, node.operand)
    else:
        setattr(node, attribute, new)


def sample(source: str, module: str, seed: int, count: int) -> list[Site]:
    """``count`` sites drawn with a generator seeded from ``seed`` and the module's name."""
    every = sites(source)
    chosen = random.Random(f"{seed}:{module}").sample(every, min(count, len(every)))
    return sorted(chosen, key=lambda site: site.index)


def scratch_copy(root: Path, into: Path, names: tuple[str, ...] = COPIED) -> Path:
    """A copy of the tree to mutate; the working tree is never written."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache")
    for name in names:
        source = root / name
        if source.is_dir():
            shutil.copytree(source, into / name, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, into / name)
    return into


def run_tests(copy_root: Path, tests: list[str], limit: float) -> tuple[str, str]:
    """``passed``, ``failed`` or ``timeout`` for the tests against the copy as it is now,
    with the end of their output."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider"]
    command += ["-p", "no:randomly", *tests]
    env = {**os.environ, "PYTHONPATH": str(copy_root), "PYTHONDONTWRITEBYTECODE": "1"}
    try:
        done = subprocess.run(
            command, cwd=copy_root, env=env, capture_output=True, timeout=limit, check=False
        )
    except subprocess.TimeoutExpired:
        return "timeout", ""
    tail = (done.stdout + done.stderr).decode(errors="replace").strip().splitlines()[-5:]
    return "passed" if done.returncode == 0 else "failed", "\n".join(tail)


def run_module(copy_root: Path, name: str, entry: dict[str, Any], seed: int) -> tuple[int, int]:
    """Run one module's sample; print a line a mutant; return (killed, run)."""
    target = copy_root / entry["path"]
    original = target.read_text(encoding="utf-8")
    tests = [*entry.get("pytest_args", []), *entry["tests"]]
    started = time.monotonic()
    outcome, tail = run_tests(copy_root, tests, limit=float(entry.get("timeout", 600)))
    if outcome != "passed":
        print(f"{name}: the tests fail on the unmutated copy; no mutant can be judged\n{tail}")
        return 0, -1
    limit = max(60.0, 5 * (time.monotonic() - started))
    killed = 0
    chosen = sample(original, name, seed, int(entry["count"]))
    try:
        for site in chosen:
            target.write_text(mutate(original, site.index), encoding="utf-8")
            outcome, _tail = run_tests(copy_root, tests, limit)
            killed += outcome != "passed"
            verdict = "killed" if outcome == "failed" else outcome
            verdict = "SURVIVED" if outcome == "passed" else verdict
            print(f"{name}: {verdict:8} #{site.index} {site.function}:{site.line} {site.change}")
    finally:
        target.write_text(original, encoding="utf-8")
    return killed, len(chosen)


def main(argv: list[str] | None = None, root: Path = ROOT) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("modules", nargs="*", help="modules to run (default: all of the subset)")
    parser.add_argument("--list", action="store_true", help="print the sample, run nothing")
    parser.add_argument(
        "--every",
        action="store_true",
        help="every site of these modules of [tool.tileprof.mutation]: counts, no gate",
    )
    args = parser.parse_args(argv)
    config = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    subset = config["tool"]["tileprof"]["mutation_subset"]
    if args.every and args.list:
        parser.error("--list prints the subset's sample; --every runs every site (not both)")
    if args.every:
        return every_site(root, config["tool"]["tileprof"]["mutation"], args.modules, subset)
    seed = int(subset["seed"])
    modules = {key: value for key, value in subset.items() if isinstance(value, dict)}
    unknown = sorted(set(args.modules) - set(modules))
    if unknown:
        parser.error(f"unknown module {unknown[0]!r} (one of {', '.join(modules)})")
    chosen = args.modules or list(modules)
    if args.list:
        for name in chosen:
            source = (root / modules[name]["path"]).read_text(encoding="utf-8")
            for site in sample(source, name, seed, int(modules[name]["count"])):
                print(f"{name}: #{site.index} {site.function}:{site.line} {site.change}")
        return 0
    failures = []
    with tempfile.TemporaryDirectory(prefix="tileprof-mutation-subset-") as scratch:
        names = tuple(subset.get("copy", COPIED))
        copy_root = scratch_copy(root, Path(scratch), names)
        for name in chosen:
            killed, run = run_module(copy_root, name, modules[name], seed)
            floor = int(modules[name]["min_killed"])
            print(f"{name}: killed {killed} of {run} (at least {floor} recorded)")
            if run < 0 or killed < floor:
                failures.append(name)
    if failures:
        print(f"mutation subset: the tests bite less than recorded in {', '.join(failures)}")
        return 1
    print("mutation subset: every module kills at least its recorded number of mutants")
    return 0


def every_site(
    root: Path, entries: dict[str, Any], names: list[str], subset: dict[str, Any]
) -> int:
    """Every site of each named module of ``[tool.tileprof.mutation]`` against its tests; the
    counts killed, printed. Exit 1 only when a module's tests fail unmutated."""
    unknown = sorted(set(names) - set(entries))
    if not names or unknown:
        named = f"unknown module {unknown[0]!r}" if unknown else "name modules"
        print(f"--every: {named} of [tool.tileprof.mutation]")
        return 2
    broken = []
    with tempfile.TemporaryDirectory(prefix="tileprof-mutation-every-") as scratch:
        # tools/ too: tests of [tool.tileprof.mutation] may load them (cli_reference)
        names_copied = (*subset.get("copy", COPIED), "tools")
        copy_root = scratch_copy(root, Path(scratch), names_copied)
        for name in names:
            entry = {**entries[name], "count": 2**31}
            killed, run = run_module(copy_root, name, entry, int(subset["seed"]))
            print(f"{name}: killed {killed} of {run} (every site)")
            broken += [name] if run < 0 else []
    return 1 if broken else 0


if __name__ == "__main__":
    raise SystemExit(main())
