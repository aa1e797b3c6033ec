"""Supersteps alone, in memory: ``superstep_analysis`` on N samples already loaded (issue 16
target: a 1M-sample dump well under a second after load). Times 5 runs on two dumps:

- ``dumpgen``: the benchmark dump of ``benchmarks/dumpgen.py`` (tiles run their samples back to
  back, unsynchronised, so each epoch is nearly one long superstep);
- ``bsp``: a bulk-synchronous dump of the same size built here: supersteps of compute on
  every tile (one to three samples per tile with a late start, internal gaps and a tail),
  each followed by an exchange on every tile, and a few exchanges overlapping compute. This is
  the shape with many (superstep, tile) groups, the expensive case.

Both are built in memory through ``tileprof.inputs.synthetic.synth.DumpBuilder``; no file is
written. As a yardstick
on a shared machine, each dump also times ``group_statistics`` (``benchmarks/stats.py``'s subject)
on the same frame, and prints the ratio.
"""

from __future__ import annotations

import argparse
import functools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402

from tileprof.analyses.stats import group_statistics  # noqa: E402
from tileprof.inputs.synthetic.synth import DumpBuilder, SyntheticDump  # noqa: E402
from tileprof.model.profile import Profile  # noqa: E402

TILES = 1472


def bsp_dump(samples: int, seed: int = 16) -> SyntheticDump:
    """About ``samples`` samples: 2 compute + 1 exchange per tile and superstep on average."""
    rng = np.random.default_rng(seed)
    steps = max(1, samples // (3 * TILES))
    per_tile = rng.integers(1, 4, (steps, TILES))  # compute samples per (step, tile)
    count = int(per_tile.sum())
    step_of = np.repeat(np.arange(steps), per_tile.sum(axis=1))
    tile_of = np.concatenate([np.repeat(np.arange(TILES), row) for row in per_tile])
    late = rng.integers(0, 400, (steps, TILES))[step_of, tile_of]
    duration = rng.integers(2_000, 9_000, count)
    gap = rng.integers(0, 300, count)
    # Offsets: within a (step, tile) the samples run one after another with gaps.
    first = np.r_[True, (step_of[1:] != step_of[:-1]) | (tile_of[1:] != tile_of[:-1])]
    advance = duration + gap
    running = np.cumsum(advance) - advance
    group_start = np.maximum.accumulate(np.where(first, running, 0))
    within = running - group_start
    step_length = 40_000
    window = 8_000
    base = np.arange(steps) * (step_length + window)
    offset = base[step_of] + late + within
    compute_end = np.zeros(steps, dtype=np.int64)
    np.maximum.at(compute_end, step_of, offset + duration)
    exchange_tile = np.tile(np.arange(TILES), steps)
    exchange_step = np.repeat(np.arange(steps), TILES)
    exchange_offset = compute_end[exchange_step] - rng.integers(0, 50, steps * TILES)
    builder = DumpBuilder(1_500_000_000, TILES)
    builder.add(
        tile=tile_of,
        offset=offset,
        duration=duration,
        phase=step_of,
        epoch=step_of * 2 // steps,
        kind="compute",
        kernel=[f"kernel_{s % 17}" for s in step_of.tolist()],
    )
    builder.add(
        tile=exchange_tile,
        offset=exchange_offset,
        duration=rng.integers(1_000, 6_000, steps * TILES),
        phase=exchange_step,
        epoch=exchange_step * 2 // steps,
        kind="exchange",
    )
    return builder.build()


def profile_of(dump: SyntheticDump) -> Profile:
    samples, metadata = dump.to_frame()
    return Profile(samples, tuple(metadata), dump.clock_hz, dump.tile_count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    for name, build in (("dumpgen", dumpgen.build), ("bsp", bsp_dump)):
        profile = profile_of(build(args.samples))
        baseline = _timed(
            functools.partial(
                group_statistics,
                profile.samples,
                tile_count=profile.tile_count,
                clock_hz=profile.clock_hz,
            ),
            args.repeat,
        )
        timed = _timed(profile.supersteps, args.repeat)
        result = profile.supersteps()
        print(
            f"supersteps {name}: {profile.samples.height:,} samples, "
            f"{result.supersteps.height:,} supersteps, {result.tiles.height:,} tile rows: "
            f"wall median {timed[0]:.3f} s, min {timed[1]:.3f} s; CPU (all threads) median "
            f"{timed[2]:.3f} s; group_statistics on the same frame: wall median "
            f"{baseline[0]:.3f} s (ratio {timed[0] / baseline[0]:.2f})"
        )


def _timed(run: Callable[[], object], repeat: int) -> tuple[float, float, float]:
    """Median wall, min wall and median CPU seconds (all threads) of ``repeat`` runs."""
    wall, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        run()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(wall), min(wall), statistics.median(cpu)


if __name__ == "__main__":
    main()
