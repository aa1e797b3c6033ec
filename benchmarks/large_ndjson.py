"""Benchmark: ``tileprof summary`` of a large NDJSON dump (issue 22: 20M samples in ≤ 15 s and
≤ 2.5 GB peak RSS).

Run from the repository root: ``python benchmarks/large_ndjson.py [--samples N] [--repeat R]
[--folder DIR]``. The dump comes from ``dumpgen.py`` (20M samples: 9.1 GB), written in a child
process and kept in ``--folder``; the first run after writing it reads it from the page cache
only if the machine has the memory (24 GB here), so the script reads the file once before
timing. Each ``summary`` runs as its own process (imports included, as a user sees it): wall
seconds, CPU seconds (user + system) and the process's peak RSS (``ru_maxrss``). Then one more
child process times the stages apart (imports, load, group statistics, the rest of the summary
and its rendering), sampling its resident memory every 10 ms for each stage's peak. The load
average is printed before and after (the machine is shared).
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
from processes import load_average, timed  # noqa: E402

TARGET_SECONDS = 15.0
TARGET_RSS_GB = 2.5

STAGES = r"""
import sys, threading, time
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096
peak = [0]
def sample():
    while True:
        peak[0] = max(peak[0], resident())
        time.sleep(0.01)
threading.Thread(target=sample, daemon=True).start()
marks = [("start", time.perf_counter(), 0)]
def mark(name):
    peak[0] = max(peak[0], resident())
    marks.append((name, time.perf_counter(), peak[0]))
    peak[0] = resident()
from tileprof.analyses.stats import group_statistics
from tileprof.analyses.summary import summarize
from tileprof.model.profile import load
from tileprof.views import summary_table
mark("imports")
profile = load(sys.argv[1])
mark("load")
group_statistics(profile.samples, tile_count=profile.tile_count, clock_hz=profile.clock_hz)
mark("group statistics")
summary = summarize(profile.samples, profile.metadata, clock_hz=profile.clock_hz,
                    tile_count=profile.tile_count)
summary_table.render(summary, profile.target)
mark("summary and table")
for (_, before, _), (name, at, high) in zip(marks, marks[1:]):
    print(f"  stage {name:18s} {at - before:6.2f} s  peak RSS {high / 1e9:5.2f} GB")
"""


def read_once(path: Path) -> None:
    """Read the file through, so that every timed run finds it in the page cache."""
    with path.open("rb") as stream:
        while stream.read(1 << 24):
            pass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    path = args.folder / dumpgen.dump_name(args.samples, "ndjson")
    if not path.exists():
        command = [sys.executable, str(HERE / "dumpgen.py"), "--samples", str(args.samples)]
        command += ["--format", "ndjson", "--folder", str(args.folder)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    print(load_average())
    print(f"{path.name}: {path.stat().st_size / 1e6:,.0f} MB, {args.samples:,} samples")
    read_once(path)
    tileprof = str(Path(sys.executable).with_name("tileprof"))
    runs = [timed([tileprof, "summary", str(path)]) for _ in range(args.repeat)]
    walls, cpus, peaks = zip(*runs, strict=True)
    print(
        f"  summary  wall {' '.join(f'{w:.2f}' for w in walls)} s (median "
        f"{statistics.median(walls):.2f})  CPU median {statistics.median(cpus):.2f} s  "
        f"peak RSS {max(peaks) / 1e9:.2f} GB (issue 22, at 20M samples: ≤ {TARGET_SECONDS:g} s, "
        f"≤ {TARGET_RSS_GB:g} GB)"
    )
    subprocess.run([sys.executable, "-c", STAGES, str(path)], check=True)
    print(load_average())


if __name__ == "__main__":
    main()
