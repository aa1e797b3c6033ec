"""Statistics alone, in memory: ``group_statistics`` on N samples already loaded (issue 6 target:
≤ 0.5 s per 1M samples). Loads the cache layout of a ``dumpgen`` dump, then times 5 runs."""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402

import tileprof  # noqa: E402
from tileprof.analyses.stats import group_statistics  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    json_path, _ = dumpgen.write_dumps(args.samples, args.folder)
    cached = args.folder / f"dump_{args.samples}.cache.parquet"
    if not cached.exists():
        tileprof.load(json_path).save(cached)
    profile = tileprof.load(cached)
    for group_by in ((), ("epoch",)):
        runs = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            group_statistics(
                profile.samples,
                tile_count=profile.tile_count,
                clock_hz=profile.clock_hz,
                group_by=group_by,
            )
            runs.append(time.perf_counter() - start)
        per_million = statistics.median(runs) / (args.samples / 1e6)
        print(
            f"group_statistics group_by={list(group_by)} samples={args.samples:,}: "
            f"median {statistics.median(runs):.3f} s, min {min(runs):.3f} s, "
            f"{per_million:.3f} s per 1M samples"
        )


if __name__ == "__main__":
    main()
