"""The GPU critical path alone, in memory: the step graphs of a trace built and their longest
paths found (issue 36), on the committed NCCL trace (3 steps, ~9,000 events and ~19,000 edges
each) and on N copies of its first step's events side by side on distinct threads and
streams (``--scale``), so that the sweep's cost per edge shows. Prints the median of 5 runs.

The graph is built with numpy and polars; the longest path is one sweep over the edges in a
Python loop (per-step graphs hold thousands of edges): the figure to watch is ns per edge.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import polars as pl

from tileprof.analyses.gpu_critical import longest_path, step_graph, step_paths
from tileprof.inputs import read_bytes
from tileprof.inputs.gpu.kineto import read_events
from tileprof.inputs.gpu.kineto_frame import event_frame
from tileprof.inputs.gpu.kineto_host import cpu_step_windows, host_frame

TRACE = Path(__file__).resolve().parent.parent / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"


def _median(run: object, times: int = 5) -> float:
    spent = []
    for _ in range(times):
        start = time.perf_counter()
        run()  # type: ignore[operator]
        spent.append(time.perf_counter() - start)
    return statistics.median(spent)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--scale", type=int, default=10, help="copies of one step's events")
    args = parser.parse_args()
    found = read_events(TRACE, read_bytes(TRACE))
    host, gpu = host_frame(found), event_frame(found)
    windows = cpu_step_windows(found)
    seconds = _median(lambda: step_paths(host, gpu, windows))
    print(f"trace steps: {len(windows)} steps in {seconds * 1e3:.0f} ms")
    _, lo, hi = windows[0]
    one_host = host.filter(pl.col("start_ns").is_between(lo, hi))
    one_gpu = gpu.filter(pl.col("launch_start_ns").is_between(lo, hi))
    copies_host = pl.concat(
        [one_host.with_columns(thread=pl.col("thread") + f"#{i}") for i in range(args.scale)]
    )
    copies_gpu = pl.concat(
        [
            one_gpu.with_columns(
                stream=pl.col("stream") + 1000 * i, correlation=pl.col("correlation") + 10**9 * i
            )
            for i in range(args.scale)
        ]
    )
    copies_host = copies_host.with_columns(
        correlation=pl.col("correlation")
        + 10**9 * pl.col("thread").str.extract(r"#(\d+)$").cast(pl.Int64)
    )
    build = _median(lambda: step_graph(copies_host, copies_gpu), times=3)
    graph = step_graph(copies_host, copies_gpu)
    sweep = _median(lambda: longest_path(graph), times=3)
    edges = graph.src.size
    print(f"x{args.scale}: {edges:,} edges: graph {build * 1e3:.0f} ms, path {sweep * 1e3:.0f} ms")
    print(f"path sweep: {sweep / edges * 1e9:.0f} ns per edge")


if __name__ == "__main__":
    main()
