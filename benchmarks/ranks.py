"""Benchmark: a job's rank traces on threads and on a dask cluster (issue 33's last target).

``python benchmarks/ranks.py [--ranks 64] [--mb 50] [--workers 2]``

Writes ``--ranks`` Kineto traces of about ``--mb`` MB each under ``--folder`` (default
/tmp/tileprof-ranks-bench): the HTA sampled rank 0 (``fixtures/hta``) replicated in time until
the file reaches the size, renumbered as rank r of a ``--ranks``-rank NCCL job and shifted by
r µs, indented as PyTorch writes it. Then it times, each as its own process (import included,
as a user sees it):

- ``tileprof breakdown --format json`` of every rank with ``--engine threads`` (the default);
- the same with ``--engine dask`` on a local cluster of ``--workers`` processes (cluster start
  included: what a user waits for);

printing wall seconds, peak resident memory of the process tree (workers included), the
dask/threads ratio (target <= 1.2) and whether the two outputs are byte-identical (they must
be). ``--keep`` reuses traces already in the folder.
"""

from __future__ import annotations

import argparse
import gzip
import json
import shutil
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store import measure  # noqa: E402

SOURCE = HERE.parent / "fixtures" / "hta" / "sampled_rank-0.json.gz"


def replicated(document: dict[str, Any], target_bytes: int) -> list[dict[str, Any]]:
    """The trace's events repeated back to back in time until their JSON reaches the size;
    each replica's correlation ids and flow ids are offset so that none collide."""
    events = document["traceEvents"]
    timed = [e["ts"] for e in events if isinstance(e.get("ts"), (int, float))]
    span = max(timed) - min(timed) + 1000.0
    one = len(json.dumps(events, indent=1))
    copies = max(1, target_bytes // max(one, 1))
    out: list[dict[str, Any]] = []
    for copy in range(copies):
        for event in events:
            moved = dict(event)
            if isinstance(moved.get("ts"), (int, float)):
                moved["ts"] = moved["ts"] + copy * span
            args = moved.get("args")
            if isinstance(args, dict) and "correlation" in args:
                moved["args"] = dict(args, correlation=args["correlation"] + copy * 10_000_000)
            if "id" in moved and isinstance(moved["id"], int):
                moved["id"] = moved["id"] + copy * 10_000_000
            out.append(moved)
    return out


def write_ranks(folder: Path, ranks: int, megabytes: int) -> list[Path]:
    with gzip.open(SOURCE, "rt") as handle:
        document = json.load(handle)
    events = replicated(document, megabytes * 1_000_000)
    paths = []
    for rank in range(ranks):
        shifted = [dict(e, ts=e["ts"] + rank) if "ts" in e else e for e in events]
        info = dict(document.get("distributedInfo", {}), rank=rank, world_size=ranks)
        path = folder / f"rank{rank}.json"
        path.write_text(
            json.dumps(dict(document, traceEvents=shifted, distributedInfo=info), indent=1)
        )
        paths.append(path)
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, default=64)
    parser.add_argument("--mb", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tileprof-ranks-bench"))
    parser.add_argument("--keep", action="store_true")
    options = parser.parse_args()
    folder: Path = options.folder
    existing = sorted(folder.glob("rank*.json"), key=lambda p: int(p.stem[4:]))
    if options.keep and len(existing) == options.ranks:
        paths = existing
    else:
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        paths = write_ranks(folder, options.ranks, options.mb)
    size = sum(p.stat().st_size for p in paths) / 1e6
    print(f"{len(paths)} rank traces, {size:,.0f} MB in all")
    base = [sys.executable, "-m", "tileprof", "breakdown", "--format", "json", *map(str, paths)]
    threads = measure(base)
    dask = measure([*base, "--engine", "dask", "--workers", str(options.workers)])
    for name, (wall, rss, _) in (("threads", threads), ("dask", dask)):
        print(f"{name:8} {wall:8.2f} s  peak RSS {rss:8.0f} MiB (process tree)")
    print(f"dask / threads: {dask[0] / threads[0]:.2f} (target <= 1.2)")
    print(f"same answer: {dask[2] == threads[2]}")


if __name__ == "__main__":
    main()
