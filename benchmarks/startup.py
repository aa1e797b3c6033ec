"""Benchmark: whole-process start-up of the quick commands (issues 12 and 14).

Run from the repository root: ``python benchmarks/startup.py [--samples N] [--runs R]
[--repeat K] [--folder DIR]``. Each command runs as its own process, as a user starts it,
K times (default 5); the script prints, per command, wall seconds and the child's CPU seconds
(user + sys, from ``wait4``: less sensitive to other work on a shared machine than wall time),
best and median, then one ``python -X importtime`` run of each command: the total of its
top-level imports and the cumulative time of the libraries that matter. The load average is
printed before and after.

Commands:

- ``tileprof --version`` and ``tileprof --help``;
- ``diff A B --cache`` warm: two JSON dumps of N samples (default 1,000,000; ``dumpgen.py``
  seeds 4 and 5, written by ``benchmarks/diff.py``'s ``ensure_dump`` and reused from
  DIR/before and DIR/after), once cold to fill a fresh cache folder, then timed warm (it reads
  the two cached summary documents);
- ``history --store S`` (table and ``--format json``) on a store of R runs (default 40) built
  with ``benchmarks/store.py``'s ``build_store`` from dumps of ``--store-samples`` samples
  (default 20,000). ``history`` reads only the ``runs`` and ``stats`` tables (R × groups rows),
  so the samples per run do not change its cost; the store is kept in DIR/store and reused.

``--source TREE`` runs tileprof from a source tree instead of the installed package, for a
baseline in the same minutes: ``git archive main tileprof | tar -x -C TREE`` gives main's.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

LIBRARIES = (
    "click",
    "importlib.metadata",
    "polars",
    "numpy",
    "msgspec",
    "deltalake",
    "rich",
    "jinja2",
)
"""Libraries whose cumulative import time is reported (blank when a command does not load it)."""
_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| (\s*)(\S+)$")


def timed(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU (user + sys) seconds of one run of ``command``; it must succeed."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, env=env)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        if os.waitstatus_to_exitcode(status) != 0:
            errors.seek(0)
            raise SystemExit(f"{' '.join(command)} failed: {errors.read().decode()}")
    return wall, usage.ru_utime + usage.ru_stime


def import_times(command: list[str], env: dict[str, str]) -> dict[str, float]:
    """Seconds of imports in one ``-X importtime`` run: ``total`` (every top-level import)
    and each of ``LIBRARIES`` (cumulative, where it is first imported)."""
    result = subprocess.run(
        [command[0], "-X", "importtime", *command[1:]],
        capture_output=True,
        text=True,
        env=env,
    )
    found: dict[str, float] = {"total": 0.0}
    for line in result.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        cumulative, indent, name = int(match[2]) / 1e6, match[3], match[4]
        if not indent:
            found["total"] += cumulative
        if name in LIBRARIES and name not in found:
            found[name] = cumulative
    return found


def launcher(source: Path | None) -> list[str]:
    """The command that starts tileprof: the installed package, or the one in ``source``
    (the editable install's finder is dropped so that the tree's modules are the ones read)."""
    if source is None:
        return [sys.executable, "-m", "tileprof"]
    code = (
        "import sys, runpy; "
        "sys.meta_path[:] = [f for f in sys.meta_path if 'editable' not in repr(f)]; "
        f"sys.path.insert(0, {str(source)!r}); "
        "sys.argv[0] = 'tileprof'; runpy.run_module('tileprof', run_name='__main__')"
    )
    return [sys.executable, "-c", code]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def ensure_store(folder: Path, runs: int, samples: int) -> str:
    """A store of ``runs`` runs in ``folder`` (built once, then reused)."""
    uri = folder / "store"
    if not (uri / "runs").exists():
        import store

        store.build_store(str(uri), runs, samples, seeds=4)
    return str(uri)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--store-samples", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench-startup"
    )
    parser.add_argument("--source", type=Path, default=None)
    args = parser.parse_args()
    from diff import ensure_dump

    print(f"start: {load()}")
    before = ensure_dump(args.samples, args.folder / "before", seed=4)
    after = ensure_dump(args.samples, args.folder / "after", seed=5)
    uri = ensure_store(args.folder, args.runs, args.store_samples)
    tileprof = launcher(args.source)
    with tempfile.TemporaryDirectory() as cache:
        env = {**os.environ, "TILEPROF_CACHE_DIR": cache}
        diff = [*tileprof, "diff", str(before), str(after), "--cache"]
        cold = timed(diff, env)
        print(f"diff --cache cold ({args.samples:,} samples per side): {cold[0]:.2f} s wall")
        commands = {
            "--version": [*tileprof, "--version"],
            "--help": [*tileprof, "--help"],
            "diff --cache (warm)": diff,
            f"history ({args.runs} runs)": [*tileprof, "history", "--store", uri],
            "history --format json": [*tileprof, "history", "--store", uri, "--format", "json"],
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                results[name].append(timed(command, env))
        print(f"{'command':<24} {'wall best':>9} {'median':>7} {'CPU best':>9} {'median':>7}")
        for name, runs in results.items():
            walls, cpus = [w for w, _ in runs], [c for _, c in runs]
            print(
                f"{name:<24} {min(walls):>9.3f} {statistics.median(walls):>7.3f} "
                f"{min(cpus):>9.3f} {statistics.median(cpus):>7.3f}"
            )
        print(f"imports (-X importtime, one run each, seconds): {', '.join(LIBRARIES)}")
        for name, command in commands.items():
            found = import_times(command, env)
            parts = " ".join(
                f"{lib}={found[lib]:.3f}" if lib in found else f"{lib}=–" for lib in LIBRARIES
            )
            print(f"  {name:<24} total {found['total']:.3f}  {parts}")
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
