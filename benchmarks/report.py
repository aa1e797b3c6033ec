"""Benchmark: ``tileprof report`` against ``tileprof summary`` on a generated 1,000,000-sample dump.

Run from the repository root: ``python benchmarks/report.py [--samples N] [--repeat R]``.
Each command runs as its own process (import time included, as a user sees it); the script
prints wall seconds (best and median of R runs) and each process's peak resident memory, and
the report/summary time ratio (issue 4's target: under 2×).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        assert process.stderr is not None
        raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--format", default="parquet", choices=["parquet", "json", "csv"])
    args = parser.parse_args()

    from tests.report_samples import generated_profile
    from tileprof.writers import dump_bytes

    with tempfile.TemporaryDirectory() as folder:
        dump = Path(folder) / f"dump.{args.format}"
        start = time.perf_counter()
        profile = generated_profile(samples=args.samples)
        dump.write_bytes(dump_bytes(profile, args.format))
        print(
            f"dump: {profile.samples.height:,} samples, {dump.stat().st_size / 2**20:.1f} MiB "
            f"{args.format}, generated in {time.perf_counter() - start:.1f} s"
        )
        tileprof = [sys.executable, "-m", "tileprof"]
        commands = {
            "summary": [*tileprof, "summary", str(dump)],
            "report": [
                *tileprof,
                "report",
                str(dump),
                "-o",
                str(Path(folder) / "r.html"),
                "--force",
            ],
        }
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
        for _ in range(args.repeat):
            for name, command in commands.items():
                results[name].append(timed(command))
        medians = {}
        for name, runs in results.items():
            seconds = [s for s, _ in runs]
            medians[name] = statistics.median(seconds)
            print(
                f"{name:8s} best {min(seconds):6.2f} s  median {medians[name]:6.2f} s  "
                f"peak memory {max(m for _, m in runs):7.1f} MiB"
            )
        size = (Path(folder) / "r.html").stat().st_size
        print(f"report page: {size / 2**20:.2f} MiB")
        print(f"report / summary (median): {medians['report'] / medians['summary']:.2f}×")


if __name__ == "__main__":
    main()
