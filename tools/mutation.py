"""Mutation-test one module with mutmut, running only that module's fast test files.

    nice -n 10 python tools/mutation.py filters [--max-children 2]
    nice -n 19 python tools/mutation.py tenstorrent --max-children 1 --sample 200 --seed 38

The module and its test files come from ``[tool.tileprof.mutation]`` in pyproject.toml. The
run happens in a scratch copy of the sources (``$TMPDIR/tileprof-mutation/<module>``), whose
``[tool.mutmut]`` names that module and those test files only, so each module keeps its own
mutmut state and a change of test files does not invalidate another module's results (mutmut
resets every result when its test selection changes). Prints the counts per status and writes
each survivor's diff to ``survivors.txt`` in the scratch copy. ``--sample N`` runs a stated random
sample instead of every mutant: ``random.Random(seed).sample`` of the sorted mutant names, N of
them (mutmut generates the mutants first, in a run that matches none). ``--direct`` runs the
chosen mutants one at a time as ``--verify`` does (``MUTANT_UNDER_TEST=<name> pytest -x``, 120 s
limit) instead of through mutmut's workers, which stalled on some modules under load (every
mutant a timeout), and writes the names not killed to ``survivors.txt``; with it,
``--functions a,b`` runs only the mutants of those functions (the ones a change rewrote);
``--sample-first`` draws the sample from every mutant before keeping those functions' (the
rest of a stated sample a stopped run left). See docs/testing.md.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("tileprof", "tests", "fixtures", "docs", "tools", "README.md")
"""What the run copies: the package, its tests and what they read (the tools some load)."""
MUTMUT = "import sys; from mutmut.__main__ import cli; sys.argv[0] = 'mutmut'; cli()"


def _toml_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(v) for v in values) + "]"


def copy_sources(names: tuple[str, ...], into: Path) -> None:
    """Today's ``names`` into ``into``: each folder but the package replaced whole (a file
    deleted here is gone there too), the package copied over (mutmut keeps its mutated copy
    under ``mutants/``, which this refreshes around)."""
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in names:
        source, target = ROOT / name, into / name
        if source.is_dir():
            if target.exists() and name != "tileprof":
                shutil.rmtree(target)
            shutil.copytree(source, target, ignore=ignore, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)


def scratch_copy(module: str, path: str, tests: list[str], deselect: list[str]) -> Path:
    """A copy of the sources whose pyproject mutates ``path`` with ``tests`` only."""
    scratch = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "tileprof-mutation" / module
    scratch.mkdir(parents=True, exist_ok=True)
    copy_sources(COPIED, scratch)
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    head, _, _ = text.partition("[tool.mutmut]")
    selection = tests + [f"--deselect={d}" for d in deselect]
    own = (
        "[tool.mutmut]\n"
        'source_paths = ["tileprof"]\n'
        'process_isolation = "forkserver"\n'
        f"only_mutate = {_toml_list([path])}\n"
        f"also_copy = {_toml_list([n for n in COPIED if n not in ('tileprof', 'tests')])}\n"
        'pytest_add_cli_args = ["-p", "no:randomly", "-p", "no:cacheprovider"]\n'
        f"pytest_add_cli_args_test_selection = {_toml_list(selection)}\n"
    )
    (scratch / "pyproject.toml").write_text(head + own, encoding="utf-8")
    return scratch


def refresh_unmutated(mutated: Path, path: str) -> None:
    """Copy today's package over the mutated tree, all but the module under test: a survivor
    rerun against tests written since the run meets the code they were written for (a test
    of a message another module now words would otherwise fail every mutant, not kill it)."""
    for source in (ROOT / "tileprof").rglob("*"):
        relative = source.relative_to(ROOT)
        if source.is_file() and "__pycache__" not in relative.parts and relative.as_posix() != path:
            target = mutated / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)


def verify(
    scratch: Path, names: list[str], tests: list[str], deselect: list[str], path: str
) -> dict[str, str]:
    """Run each mutant that was not killed again, directly, against the current tests.

    mutmut reports a mutant that makes a test loop forever as it finds it under its CPU
    limit; here a mutant is *killed* (a test failed), *hangs* (no result in 120 s: caught
    as a timeout) or *survives*.
    """
    mutated = scratch / "mutants"
    copy_sources(COPIED[1:], mutated)  # today's tests and what they read
    refresh_unmutated(mutated, path)
    args = [*tests, *(f"--deselect={d}" for d in deselect)]
    statuses = {}
    for name in names:
        env = {**os.environ, "MUTANT_UNDER_TEST": name}
        command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly", *args]
        try:
            code = subprocess.run(
                command, cwd=mutated, env=env, capture_output=True, timeout=120, check=False
            ).returncode
        except subprocess.TimeoutExpired:
            print(f"hangs    {name}", flush=True)
            statuses[name] = "hangs"
            continue
        status = "killed" if code == 1 else "survives" if code == 0 else f"exit {code}"
        print(f"{status}  {name}", flush=True)
        statuses[name] = status
    return statuses


def function_of(name: str) -> str:
    """The function a mutant changes, from mutmut's name for it: ``pkg.mod.x__split__mutmut_3``
    is ``_split``'s, ``pkg.mod.xǁTableǁcolumn__mutmut_1`` is ``Table.column``'s."""
    body = name.rpartition(".")[2].rpartition("__mutmut_")[0]
    if body.startswith("xǁ"):
        return ".".join(body[2:].split("ǁ"))
    return body.removeprefix("x_")


def sampled(
    scratch: Path,
    mutmut: list[str],
    path: str,
    dotted: str,
    n: int,
    seed: int,
    functions: frozenset[str] = frozenset(),
    drawn_first: bool = False,
) -> list[str]:
    """``n`` of the module's mutant names (of ``functions`` only, when given), drawn with
    ``random.Random(seed)`` from the sorted names; with ``drawn_first`` the sample is drawn
    from every name and then kept to ``functions`` (the rest of a stated sample that a run
    stopped before). A first run that matches no mutant makes mutmut generate them."""
    meta = scratch / "mutants" / f"{path}.meta"
    if not meta.exists():
        generate = [*mutmut, "run", f"{dotted}.x_no_such_function_*"]
        subprocess.run(generate, cwd=scratch, check=False, stdout=subprocess.DEVNULL)
    names = sorted(json.loads(meta.read_text(encoding="utf-8"))["exit_code_by_key"])
    if functions and not drawn_first:
        names = [name for name in names if function_of(name) in functions]
    chosen = sorted(random.Random(seed).sample(names, min(n, len(names))))
    return [name for name in chosen if not functions or function_of(name) in functions]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("module")
    parser.add_argument("--max-children", type=int, default=2)
    parser.add_argument(
        "--verify", action="store_true", help="rerun the mutants not killed last time, directly"
    )
    parser.add_argument("--sample", type=int, help="run this many mutants, drawn by --seed")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument(
        "--direct", action="store_true", help="run the chosen mutants directly, one at a time"
    )
    parser.add_argument(
        "--functions",
        default="",
        help="with --direct: only the mutants of these functions (comma-separated; a method "
        "as Class.method), as after a rewrite of some of a module's functions",
    )
    parser.add_argument(
        "--sample-first",
        action="store_true",
        help="with --sample and --functions: draw the sample from every mutant, then keep those "
        "of the functions (the part of a stated sample a stopped run left)",
    )
    args = parser.parse_args()
    functions = frozenset(filter(None, args.functions.split(",")))
    if functions and not args.direct:
        parser.error("--functions needs --direct")
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    modules = table["tool"]["tileprof"]["mutation"]
    if args.module not in modules:
        parser.error(f"unknown module {args.module!r} (one of {', '.join(modules)})")
    entry = modules[args.module]
    scratch = scratch_copy(args.module, entry["path"], entry["tests"], entry.get("deselect", []))
    dotted = entry["path"].removesuffix(".py").replace("/", ".")
    mutmut = [sys.executable, "-c", MUTMUT]
    if args.verify:
        text = (scratch / "survivors.txt").read_text(encoding="utf-8")
        names = [line[3:].partition(":")[0] for line in text.splitlines() if line.startswith("## ")]
        verify(scratch, names, entry["tests"], entry.get("deselect", []), entry["path"])
        return 0
    if args.direct:
        every = 2**31  # without --sample: every mutant
        names = sampled(
            scratch,
            mutmut,
            entry["path"],
            dotted,
            args.sample or every,
            args.seed,
            functions,
            drawn_first=args.sample_first,
        )
        statuses = verify(scratch, names, entry["tests"], entry.get("deselect", []), entry["path"])
        counts = Counter(statuses.values())
        print(f"{args.module}: {dict(sorted(counts.items()))}")
        print(f"{args.module}: killed {counts['killed']} of {len(names)}")
        # the names not killed, for --verify against later tests
        lines = [f"## {n}: {s}" for n, s in sorted(statuses.items()) if s != "killed"]
        (scratch / "survivors.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        return 0
    chosen = [f"{dotted}.*"]
    if args.sample:
        chosen = sampled(scratch, mutmut, entry["path"], dotted, args.sample, args.seed)
    run = [*mutmut, "run", "--max-children", str(args.max_children), *chosen]
    subprocess.run(run, cwd=scratch, check=False, stdout=subprocess.DEVNULL)
    listing = subprocess.run(
        [*mutmut, "results", "--all", "true"], cwd=scratch, capture_output=True, text=True
    ).stdout
    statuses = {}
    for line in listing.splitlines():
        name, _, status = line.strip().rpartition(": ")
        if name.startswith(dotted + ".x") and (not args.sample or name in chosen):
            statuses[name] = status
    counts = Counter(statuses.values())
    killed = counts["killed"]
    total = sum(counts.values())
    print(f"{args.module}: {dict(sorted(counts.items()))}")
    if total:
        print(f"{args.module}: killed {killed} of {total} ({100 * killed / total:.1f}%)")
    diffs = []
    for name, status in sorted(statuses.items()):
        if status != "killed":
            shown = subprocess.run(
                [*mutmut, "show", name], cwd=scratch, capture_output=True, text=True
            ).stdout
            diffs.append(f"## {name}: {status}\n{shown}")
    (scratch / "survivors.txt").write_text("\n".join(diffs), encoding="utf-8")
    print(f"{args.module}: diffs of the {len(diffs)} not killed in {scratch / 'survivors.txt'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
