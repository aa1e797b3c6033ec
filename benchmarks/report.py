"""Benchmark: ``tileprof report`` against ``tileprof summary`` on a generated 1,000,000-sample dump.

Run from the repository root: ``python benchmarks/report.py [--samples N] [--repeat R]
[--format json|ndjson|parquet ...]`` (``--format`` repeatable; default ``json``; Parquet is the
JSON dump converted with ``tileprof.load(...).save(...)``, as ``tileprof convert`` does). The dump
comes from ``dumpgen.py`` (the fixture builder), cached under the temp folder. Each command
runs as its own process (import time included, as a user sees it); the script prints wall
seconds (best and median of R runs), each process's peak resident memory, and the
report/summary time ratio per format (issue 4's target: under 2×).
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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402


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


def bench(dump: Path, repeat: int, folder: Path) -> float:
    """Time summary and report on ``dump``; print them; return the report/summary ratio."""
    tileprof = [sys.executable, "-m", "tileprof"]
    page = folder / "r.html"
    commands = {
        "summary": [*tileprof, "summary", str(dump)],
        "report": [*tileprof, "report", str(dump), "-o", str(page), "--force"],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            results[name].append(timed(command))
    medians = {}
    print(f"{dump.name}: {dump.stat().st_size / 2**20:.1f} MiB")
    for name, runs in results.items():
        seconds = [s for s, _ in runs]
        medians[name] = statistics.median(seconds)
        print(
            f"  {name:8s} best {min(seconds):6.2f} s  median {medians[name]:6.2f} s  "
            f"peak memory {max(m for _, m in runs):7.1f} MiB"
        )
    print(f"  report page: {page.stat().st_size / 2**20:.2f} MiB")
    ratio = medians["report"] / medians["summary"]
    print(f"  report / summary (median): {ratio:.2f}×")
    return ratio


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--format",
        action="append",
        choices=["json", "ndjson", "parquet"],
        help="dump format; repeatable (default: json)",
    )
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    formats = args.format or ["json"]

    start = time.perf_counter()
    json_path, ndjson_path = dumpgen.ensure_dumps(args.samples, args.folder)
    dumps = {"json": json_path, "ndjson": ndjson_path}
    if "parquet" in formats:
        parquet = args.folder / f"dump_{args.samples}.report.parquet"
        if not parquet.exists():
            convert = [sys.executable, "-m", "tileprof", "convert", str(json_path), "-o"]
            subprocess.run([*convert, str(parquet)], check=True)
        dumps["parquet"] = parquet
    print(f"dumps of {args.samples:,} samples ready in {time.perf_counter() - start:.1f} s")
    ratios = {}
    with tempfile.TemporaryDirectory() as folder:
        for fmt in formats:
            ratios[fmt] = bench(dumps[fmt], args.repeat, Path(folder))
    print("report / summary: " + ", ".join(f"{f} {r:.2f}×" for f, r in ratios.items()))


if __name__ == "__main__":
    main()
