"""Benchmark: ``tileprof trace -o OUT.pftrace`` against ``tileprof summary`` on one dump.

Run from the repository root: ``python benchmarks/trace.py [--samples N] [--repeat R]
[--folder DIR]``. The JSON dump comes from ``dumpgen.py`` (the fixture builder), generated in a
child process and cached in ``--folder``. Each command runs as its own process (imports
included, as a user sees it), the two alternating; the script prints wall seconds (best and
median of R runs), each process's peak resident memory, the trace/summary ratios (issue 13's
targets: time ≤ 1×, memory ≤ 1.5×) and the trace's bytes per sample (target: < 40).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402
from report import timed  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    dump = args.folder / f"dump_{args.samples}.json"
    if not dump.exists():  # in a child process: a parent keeps its peak RSS across fork
        command = [sys.executable, dumpgen.__file__, "--samples", str(args.samples)]
        command += ["--format", "json", "--folder", str(args.folder)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    out = args.folder / "trace.pftrace"
    tileprof = [sys.executable, "-m", "tileprof"]
    commands = {
        "summary": [*tileprof, "summary", str(dump)],
        "trace": [*tileprof, "trace", str(dump), "-o", str(out), "--force"],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            results[name].append(timed(command))
    print(f"{dump.name}: {dump.stat().st_size / 2**20:.1f} MiB, {args.samples:,} samples")
    medians, peaks = {}, {}
    for name, runs in results.items():
        seconds = [s for s, _ in runs]
        medians[name] = statistics.median(seconds)
        peaks[name] = max(m for _, m in runs)
        print(
            f"  {name:8s} best {min(seconds):6.2f} s  median {medians[name]:6.2f} s  "
            f"peak memory {peaks[name]:7.1f} MiB"
        )
    size = out.stat().st_size
    print(f"  trace file: {size / 2**20:.1f} MiB, {size / args.samples:.1f} bytes a sample")
    print(f"  trace / summary time (median): {medians['trace'] / medians['summary']:.2f}×")
    print(f"  trace / summary peak memory: {peaks['trace'] / peaks['summary']:.2f}×")


if __name__ == "__main__":
    main()
