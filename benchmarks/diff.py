"""Benchmark: ``tileprof diff`` of two generated JSON dumps against one ``tileprof summary``.

Run from the repository root: ``python benchmarks/diff.py [--samples N] [--repeat R]
[--folder DIR]``. Two JSON dumps of N samples (default 1,000,000) come from ``dumpgen.py``
with seeds 4 and 5 (same shape, different draws), written by a child process into
DIR/before and DIR/after and reused when present. Each command runs as its own process
(import time included, as a user sees it), in alternation, R times; the script prints wall
seconds (best and median) and peak resident memory per command, then:

- ``diff / summary``: median ``diff BEFORE AFTER`` over median ``summary BEFORE`` (issue 12's
  target: ≤ 2.2×);
- ``diff --cache`` warm: a repeat diff once both caches exist (target: well under a second),
  the cache in a fresh temporary folder (``TILEPROF_CACHE_DIR``), filled by one cold run first.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from report import timed  # noqa: E402


def ensure_dump(samples: int, folder: Path, seed: int) -> Path:
    """The JSON dump of ``samples`` samples and ``seed`` in ``folder``, built in a child."""
    path = folder / f"dump_{samples}.json"
    if not path.exists():
        code = (
            f"import sys; sys.path.insert(0, {str(HERE)!r}); import dumpgen; "
            f"dumpgen.write_dump({samples}, __import__('pathlib').Path({str(folder)!r}), "
            f"'json', seed={seed})"
        )
        subprocess.run([sys.executable, "-c", code], check=True)
    return path


def report(name: str, runs: list[tuple[float, float]]) -> float:
    """Print one command's figures; return its median seconds."""
    seconds = [s for s, _ in runs]
    median = statistics.median(seconds)
    print(
        f"  {name:18s} best {min(seconds):6.2f} s  median {median:6.2f} s  "
        f"peak memory {max(m for _, m in runs):7.1f} MiB"
    )
    return median


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench-diff"
    )
    args = parser.parse_args()
    before = ensure_dump(args.samples, args.folder / "before", seed=4)
    after = ensure_dump(args.samples, args.folder / "after", seed=5)
    tileprof = [sys.executable, "-m", "tileprof"]
    commands = {
        "summary": [*tileprof, "summary", str(before)],
        "diff": [*tileprof, "diff", str(before), str(after)],
    }
    results: dict[str, list[tuple[float, float]]] = {name: [] for name in commands}
    for _ in range(args.repeat):
        for name, command in commands.items():
            results[name].append(timed(command))
    print(f"{args.samples:,} samples, {before.stat().st_size / 2**20:.1f} MiB per dump")
    medians = {name: report(name, runs) for name, runs in results.items()}
    print(f"  diff / summary (median): {medians['diff'] / medians['summary']:.2f}×")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["TILEPROF_CACHE_DIR"] = cache
        cached = [*commands["diff"], "--cache"]
        report("diff --cache cold", [timed(cached)])
        report("diff --cache warm", [timed(cached) for _ in range(args.repeat)])


if __name__ == "__main__":
    main()
