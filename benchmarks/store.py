"""Benchmark: the profile store. ``python benchmarks/store.py [--runs R] [--samples N]``.

Builds a store of R runs × N samples under ``--folder`` (default /tmp/tileprof-store-bench),
then measures, each as its own process (import time included, as a user sees it):

- ``store add`` of one more run from a Parquet dump of N samples (parse, stats, four commits);
- ``history`` over all R runs (reads the stats table only), and in process;
- three re-aggregation tasks in process: wall and CPU seconds each;
- ``summary --store --group-by run --format json``: a full re-aggregation of every sample, with
  ``--engine polars`` and with ``--engine dask`` on a LocalCluster of 1 and of 2 workers;

printing wall seconds, the peak resident memory summed over the process tree (the dask
workers included; sampled every 50 ms with psutil), and the dask/polars time ratio. The
dask and polars outputs are compared byte for byte.

The samples come from ``dumpgen.build`` (the realistic benchmark dump, 48 kernels + exchange,
1472 tiles). Building it costs seconds per million samples, so ``--seeds`` distinct dumps
(default 4) are built and stored under R run ids in turn: every run's samples are really
stored and really re-aggregated; only the values repeat. The first R runs are written by
``tileprof.model.store.writes.write_profile`` in one process (the same path ``store add`` takes
after parsing); the timed ``add`` is a real ``tileprof store add``. ``--keep`` keeps the store
(and reuses one already in ``--folder``).
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402


def tree_rss(process: psutil.Process) -> int:
    total = 0
    for member in [process, *process.children(recursive=True)]:
        with contextlib.suppress(psutil.Error):
            total += member.memory_info().rss
    return total


def measure(command: list[str]) -> tuple[float, float, bytes]:
    """Wall seconds, peak tree RSS (MiB) and stdout of one command."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    watched = psutil.Process(process.pid)
    peak = [0]

    def sample() -> None:
        while process.poll() is None:
            try:
                peak[0] = max(peak[0], tree_rss(watched))
            except psutil.Error:
                break
            time.sleep(0.05)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, err = process.communicate()
    elapsed = time.perf_counter() - start
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed: {err.decode()}")
    return elapsed, peak[0] / 2**20, out


def build_store(uri: str, runs: int, samples: int, seeds: int, progress: bool = False) -> None:
    """R runs written straight through ``write_profile`` (see the module docstring)."""
    from tileprof.model.profile import Profile
    from tileprof.model.store.tables import create_store
    from tileprof.model.store.writes import run_record, write_profile

    began = time.perf_counter()
    store = create_store(uri)
    profiles = []
    for seed in range(min(seeds, runs)):
        frame, metadata = dumpgen.build(samples, seed=seed).to_frame()
        profiles.append(
            Profile(frame, tuple(metadata), dumpgen.CLOCK_HZ, dumpgen.TILES, format="generated")
        )
    for index in range(runs):
        profile = profiles[index % len(profiles)]
        record = run_record(
            profile,
            f"run{index:04d}",
            {"commit": f"c{index:04d}", "seed": str(index % len(profiles))},
            f"generated-{samples}-seed{index % len(profiles)}",
            f"{index:064x}",
        )
        write_profile(store, record, profile)
        if progress:
            print(f"{record.run} written at {time.perf_counter() - began:.0f} s", flush=True)


def history_in_process(uri: str) -> float:
    """Seconds of ``history`` without process start and imports: open, read runs and the
    stats table, build every trend and band, render JSON (first call in this process)."""
    code = (
        "import time, deltalake, polars\n"
        "from tileprof.model.store.tables import open_store, read_runs\n"
        "from tileprof.model.store.history import build_history\n"
        "from tileprof.views.history import render_json\n"
        "t = time.perf_counter()\n"
        f"s = open_store({uri!r})\n"
        "render_json(build_history(s, read_runs(s)))\n"
        "print(time.perf_counter() - t)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    return float(result.stdout.strip())


def task_in_process(uri: str, tasks: int = 3) -> list[tuple[int, float, float]]:
    """Samples, wall seconds and CPU seconds (all threads) of the first ``tasks`` tasks of a
    full re-aggregation, each run by ``run_task`` in a fresh process: the cost per task that
    docs/scale.md multiplies, CPU time being what a worker with a core of its own would spend."""
    code = (
        "import time\n"
        "from tileprof.model.store.aggregate import DEFAULT_TASK_SAMPLES, Query, plan, run_task\n"
        "from tileprof.model.store.tables import open_store, read_runs\n"
        f"s = open_store({uri!r})\n"
        f"for task in plan(s, read_runs(s), DEFAULT_TASK_SAMPLES)[:{tasks}]:\n"
        "    wall, cpu = time.perf_counter(), time.process_time()\n"
        "    part = run_task(s, task, Query())\n"
        "    n = int(part.groups.get_column('sampleCount').sum())\n"
        "    print(n, time.perf_counter() - wall, time.process_time() - cpu)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    rows = [line.split() for line in result.stdout.splitlines()]
    return [(int(n), float(wall), float(cpu)) for n, wall, cpu in rows]


def folder_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=40)
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tileprof-store-bench"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    folder: Path = args.folder
    folder.mkdir(parents=True, exist_ok=True)
    uri = str(folder / "store")
    tileprof = [sys.executable, "-m", "tileprof"]
    began = time.perf_counter()
    if not (args.keep and Path(uri).exists()):
        build_store(uri, args.runs, args.samples, args.seeds)
    built = time.perf_counter() - began
    size = folder_bytes(Path(uri))
    per_run = size / args.runs / 2**20
    print(f"store: {args.runs} runs x {args.samples:,} samples built in {built:.1f} s, "
          f"{size / 2**20:.1f} MiB on disk ({per_run:.1f} MiB per run)")  # fmt: skip
    dump = folder / f"add-{args.samples}.parquet"
    if not dump.exists():
        from tileprof.model.profile import Profile

        frame, metadata = dumpgen.build(args.samples, seed=99).to_frame()
        Profile(frame, tuple(metadata), dumpgen.CLOCK_HZ, dumpgen.TILES).save(dump)
    rows: list[tuple[str, float, float]] = []
    add = measure([*tileprof, "store", "add", str(dump), "--store", uri, "--run", "added"])
    rows.append(("store add (1 run)", add[0], add[1]))
    subprocess.run([*tileprof, "store", "rm", "--store", uri, "--run", "added"], check=True)
    history = measure([*tileprof, "history", "--store", uri, "--format", "json"])
    rows.append((f"history ({args.runs} runs)", history[0], history[1]))
    print(f"history in process, imports excluded: {history_in_process(uri):.3f} s")
    for samples, wall, cpu in task_in_process(uri):
        print(f"one task in process: {samples:,} samples, {wall:.2f} s wall, {cpu:.2f} s CPU")
    summary = [*tileprof, "summary", "--store", uri, "--group-by", "run", "--format", "json"]
    outputs = {}
    for name, extra in (
        ("polars", ["--engine", "polars"]),
        ("dask, 1 worker", ["--engine", "dask", "--workers", "1"]),
        ("dask, 2 workers", ["--engine", "dask", "--workers", "2"]),
    ):
        seconds, peak, out = measure([*summary, *extra])
        rows.append((f"summary --store, {name}", seconds, peak))
        outputs[name] = out
    print(f"{'command':<34} {'seconds':>8} {'peak MiB':>9} {'vs polars':>9}")
    polars_time = rows[2][1]
    for name, seconds, peak in rows:
        ratio = f"{seconds / polars_time:.2f}x" if name.startswith("summary") else ""
        print(f"{name:<34} {seconds:>8.2f} {peak:>9.0f} {ratio:>9}")
    same = len(set(outputs.values())) == 1
    print(f"dask and polars outputs identical byte for byte: {same}")
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
