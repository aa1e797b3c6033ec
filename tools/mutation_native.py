"""Mutation-test the PyO3 layer (``crates/tileprof-native``) against the Python tests.

    TMPDIR=/tmp/mutn nice -n 19 python tools/mutation_native.py --sample 200 --seed 38
    TMPDIR=/tmp/mutn nice -n 19 python tools/mutation_native.py --verify
    TMPDIR=/tmp/mutn nice -n 19 python tools/mutation_native.py --functions null_buffer,spans

The layer has no Rust tests (a Rust test binary of an extension module would have to link
libpython), so ``cargo mutants`` cannot judge its mutants: the Python tests are its tests.
``cargo mutants --list --json --diff`` names the mutants; each chosen one is applied to a
scratch copy of the sources (``$TMPDIR/tileprof-mutation/native``), the module is built there
with the ``mutants`` cargo profile (the release one without link-time optimization, so that a
build after a one-line change takes seconds), and the test files that
``[tool.tileprof.mutation_native]`` of pyproject.toml names for the mutated file run against
it (``pytest -x``). A mutant is *caught* (a test failed), *missed* (every test passed),
*unviable* (it does not build) or *timeout* (no result in ``--timeout`` seconds: a hang the
tests catch). ``--sample N`` runs ``random.Random(seed).sample`` of the sorted mutant names;
outcomes are kept in ``outcomes.json`` in the scratch copy, each under the mutant's name and
the digest of its file's text, so a stopped run resumes where it stopped and an outcome of a
file since changed is not reused. ``--verify`` runs the missed mutants again, against the
table's files as they are now (after tests were added). ``--functions`` keeps only the mutants
of the functions it names (those a change rewrote). See docs/testing.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
COPIED = ("crates", "tileprof", "tests", "fixtures", "docs")
COPIED_FILES = ("Cargo.toml", "Cargo.lock", "pyproject.toml", "README.md")
PACKAGE = "tileprof-native"
MODULE = Path("tileprof/core/_native.abi3.so")


def scratch_copy() -> Path:
    """A copy of the sources and tests, refreshed from the tree; its cargo target is kept."""
    scratch = Path(os.environ.get("TMPDIR", tempfile.gettempdir())) / "tileprof-mutation/native"
    scratch.mkdir(parents=True, exist_ok=True)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "target", "*.so")
    for name in COPIED:
        if (scratch / name).exists():
            shutil.rmtree(scratch / name)
        shutil.copytree(ROOT / name, scratch / name, ignore=ignore)
    for name in COPIED_FILES:
        shutil.copy2(ROOT / name, scratch / name)
    return scratch


def list_mutants() -> list[dict]:
    """Every mutant of the package, with its diff, sorted by name."""
    listing = subprocess.run(
        ["cargo", "mutants", "--list", "--json", "--diff", "-p", PACKAGE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return sorted(json.loads(listing), key=lambda mutant: mutant["name"])


def record_key(mutant: dict, digests: dict[str, str], sources: Path) -> str:
    """The name an outcome is kept under: the mutant's, and the digest of its file as
    ``sources`` (the scratch copy the mutants are applied to) holds it unmutated (a mutant of
    a file edited since is another mutant, even where its name is the same)."""
    file = mutant["file"]
    if file not in digests:
        digests[file] = hashlib.sha256((sources / file).read_bytes()).hexdigest()[:16]
    return f"{mutant['name']} @{digests[file]}"


def build(scratch: Path) -> str | None:
    """Build the module in ``scratch`` and put it in its package; the compiler's first error
    when it fails (kept, to check that the mutant is what failed)."""
    command = ["cargo", "build", "--profile", "mutants", "-p", PACKAGE]
    command += ["--features", "pyo3/extension-module", "--quiet"]
    done = subprocess.run(command, cwd=scratch, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if line.startswith("error")]
        return errors[0] if errors else f"cargo exited {done.returncode}"
    shutil.copy2(scratch / "target/mutants/lib_native.so", scratch / MODULE)
    return None


def run_tests(scratch: Path, tests: list[str], timeout: float) -> str:
    """``caught``, ``missed`` or ``timeout``: the tests against the built module."""
    command = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:randomly"]
    command += ["-p", "no:cacheprovider", *tests]
    env = {**os.environ, "PYTHONPATH": str(scratch)}
    try:
        code = subprocess.run(
            command, cwd=scratch, env=env, capture_output=True, timeout=timeout, check=False
        ).returncode
    except subprocess.TimeoutExpired:
        return "timeout"
    return "missed" if code == 0 else "caught" if code == 1 else f"exit {code}"


def try_mutant(scratch: Path, mutant: dict, tests: list[str], timeout: float) -> str:
    """Apply ``mutant`` to its file in ``scratch``, build, test, and put the file back."""
    path = scratch / mutant["file"]
    original = path.read_bytes()
    try:
        patch = ["patch", "--quiet", "-p0", "--no-backup-if-mismatch", str(path)]
        subprocess.run(patch, input=mutant["diff"].encode(), check=True, capture_output=True)
        failure = build(scratch)
        if failure is None:
            return run_tests(scratch, tests, timeout)
        with (scratch / "unviable.txt").open("a", encoding="utf-8") as log:
            log.write(f"{mutant['name']}: {failure}\n")
        return "unviable"
    finally:
        path.write_bytes(original)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sample", type=int, help="run this many mutants, drawn by --seed")
    parser.add_argument("--seed", type=int, default=38)
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds a mutant's tests")
    parser.add_argument("--verify", action="store_true", help="rerun the missed mutants")
    parser.add_argument("--functions", help="only the mutants of these functions (a,b,...)")
    args = parser.parse_args()
    table = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    selections: dict[str, list[str]] = table["tool"]["tileprof"]["mutation_native"]
    every_file = sorted({test for tests in selections.values() for test in tests})
    scratch = scratch_copy()
    record = scratch / "outcomes.json"
    outcomes = json.loads(record.read_text(encoding="utf-8")) if record.exists() else {}
    mutants = list_mutants()
    if args.functions:
        named = set(args.functions.split(","))
        mutants = [m for m in mutants if (m.get("function") or {}).get("function_name") in named]
    digests: dict[str, str] = {}
    if args.verify:
        chosen = [m for m in mutants if outcomes.get(record_key(m, digests, scratch)) == "missed"]
    elif args.sample:
        chosen = random.Random(args.seed).sample(mutants, min(args.sample, len(mutants)))
        chosen = sorted(chosen, key=lambda mutant: mutant["name"])
    else:
        chosen = mutants
    if build(scratch) is not None or run_tests(scratch, every_file, args.timeout) != "missed":
        print("the unmutated module does not build or its tests fail", file=sys.stderr)
        return 1
    for mutant in chosen:
        key = record_key(mutant, digests, scratch)
        if key in outcomes and not args.verify:
            continue
        tests = selections[Path(mutant["file"]).name]
        started = time.monotonic()
        outcomes[key] = try_mutant(scratch, mutant, tests, args.timeout)
        print(f"{outcomes[key]:9} {time.monotonic() - started:5.0f} s  {key}", flush=True)
        record.write_text(json.dumps(outcomes, indent=1, sort_keys=True), encoding="utf-8")
    counts = Counter(outcomes[record_key(mutant, digests, scratch)] for mutant in chosen)
    print(f"{PACKAGE}: {dict(sorted(counts.items()))} of {len(chosen)} chosen ({len(mutants)})")
    build(scratch)  # the unmutated module again
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
