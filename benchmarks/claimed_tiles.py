"""``report`` on a dump that claims more than it holds (issue 32): two samples, on the first
and the last of tileCount tiles, for tileCount 2 (the floor) and 2²⁰ (the documented maximum).
Memory and time should follow the two samples, not the claim; prints each report's wall time
and peak RSS (a child process each) and the ratio of the two.

Before issue 32's fixes the 2²⁰ report took about 48 s and passed 6 GB (a tileCount × groups ×
bins occupancy map, 2²⁰ balance-chart points, and the capture checks listing every absent tile).

    python benchmarks/claimed_tiles.py [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def write_dump(folder: Path, tiles: int) -> Path:
    """Two samples, on tiles 0 and ``tiles`` - 1."""
    samples = [
        {"physicalTile": 0, "offset": 0, "duration": 100, "kernel": "a"},
        {"physicalTile": tiles - 1, "offset": 50, "duration": 100, "kernel": "b"},
    ]
    path = folder / f"claims_{tiles}.json"
    path.write_text(json.dumps({"clockHz": 1e9, "tileCount": tiles, "samples": samples}))
    return path


def report_once(dump: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS in MiB) of ``tileprof report`` on ``dump`` in a child process."""
    out = dump.with_suffix(".html")
    began = time.perf_counter()
    command = [sys.executable, "-m", "tileprof", "report", str(dump), "-o", str(out), "--force"]
    subprocess.run(command, check=True, capture_output=True)
    wall = time.perf_counter() - began
    return wall, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        walls = {}
        for tiles in (2, 2**20):
            dump = write_dump(Path(folder), tiles)
            runs = [report_once(dump) for _ in range(args.repeat)]
            walls[tiles] = min(wall for wall, _ in runs)
            rss = max(peak for _, peak in runs)
            print(f"tileCount {tiles:>8,}: report {walls[tiles]:6.2f} s (best of {args.repeat})")
            print(f"{'':20}peak RSS of any child so far {rss:,.0f} MiB")
        print(f"2^20 / 2: {walls[2**20] / walls[2]:.2f}x the time")


if __name__ == "__main__":
    main()
