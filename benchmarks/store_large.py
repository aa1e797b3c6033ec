"""Benchmark: a store larger than memory, re-aggregated by the polars engine in bounded memory.

``python benchmarks/store_large.py [--runs R] [--samples N] [--seeds K] [--limit-gib G]``

Builds a store of R runs × N samples under ``--folder`` (default /tmp/tileprof-store-large),
in a child process so that the timed commands start from a small parent: K runs from distinct
``dumpgen`` frames through ``write_profile`` (``store.build_store``: the path ``store add``
takes after parsing), then R − K copies of their stored rows through ``write_rows``, the same
writer (see ``extend_store``). It then prints what the store represents:

- its size on disk;
- bytes per sample of the two frames a sample decodes into, from ``estimated_size``: the typed
  sample frame of a dump (categorical strings) and the task frame the engines read back from
  the store (plain strings plus the dump index: ``read_task_samples``), each times R × N;

and runs ``summary --store URI --engine polars --format json``, once for all runs and once
with ``--group-by run``, each as its own process under ``prlimit --as`` of G GiB (a hard cap
on the address space: a process that needed more would fail, and the benchmark with it), while
the peak resident memory of its process tree is sampled every 50 ms with psutil. The defaults
(50 runs × 5M = 250M samples) decode to ~31 GB as task frames, more than the 23 GiB of RAM of
the machine it was written on. ``--keep`` keeps the store (and extends one already in ``--folder``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from store import build_store, folder_bytes, measure  # noqa: E402


def frame_bytes_per_sample(uri: str, seed_samples: int) -> tuple[float, float]:
    """Bytes per sample of a dump's typed frame and of the first stored run's task frame."""
    import dumpgen

    from tileprof.model.store.aggregate import plan, read_task_samples
    from tileprof.model.store.tables import open_store, read_runs

    frame, _ = dumpgen.build(seed_samples, seed=0).to_frame()
    typed = frame.estimated_size() / frame.height
    store = open_store(uri)
    first = read_runs(store)[:1]
    (task,) = plan(store, first, task_samples=first[0].sample_count)
    samples = read_task_samples(store, task)
    return typed, samples.estimated_size() / samples.height


def extend_store(uri: str, runs: int, samples: int, seeds: int) -> None:
    """Bring the store to ``runs`` runs: the first ``seeds`` from ``store.build_store`` (dumps
    generated, then ``write_profile``), the rest copies of those through ``write_rows``.

    A copy is the seed run's stored rows read back and written under a new run id by the
    store's own writer (zstd Parquet, the run's partition, one Delta commit per table, the
    record last), without computing its statistics again: under the load of a shared machine
    ``write_profile`` took 1–3 minutes per 5M-sample run, most of it recomputing what the seed
    run already stored. Runs already in the store are kept (a build can be resumed).
    """
    import dataclasses

    import polars as pl

    from tileprof.model.store.tables import METADATA, SAMPLES, STATS, now_utc, open_store, read_runs
    from tileprof.model.store.writes import StoredRows, write_rows

    began = time.perf_counter()
    if not Path(uri).exists() or len(read_runs(open_store(uri))) < seeds:
        build_store(uri, seeds, samples, seeds, progress=True)
    store = open_store(uri)
    existing = read_runs(store)
    sources: dict[str, StoredRows] = {}
    for index in range(len(existing), runs):
        source = existing[index % seeds]
        if source.run not in sources:
            scans = (store.scan(name, [source.run]) for name in (SAMPLES, METADATA, STATS))
            sources[source.run] = StoredRows(*(scan.collect() for scan in scans))
        run = f"run{index:04d}"
        rows = sources[source.run]
        rename = pl.lit(run).alias("run")
        frames = (rows.samples, rows.metadata, rows.stats)
        copy = StoredRows(*(frame.with_columns(rename) for frame in frames))
        labels = {"commit": f"c{index:04d}", "seed": source.labels["seed"]}
        record = dataclasses.replace(
            source, run=run, labels=labels, sha256=f"{index:064x}", added_at=now_utc()
        )
        write_rows(store, record, copy)
        seconds = time.perf_counter() - began
        print(f"{run} (a copy of {source.run}) written at {seconds:.0f} s", flush=True)


def build(uri: str, runs: int, samples: int, seeds: int) -> None:
    """Build the store in a child process (its memory is not the timed commands')."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(HERE)!r})\n"
        "from store_large import extend_store\n"
        f"extend_store({uri!r}, {runs}, {samples}, {seeds})\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--samples", type=int, default=5_000_000)
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--limit-gib", type=float, default=4.0)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tileprof-store-large"))
    parser.add_argument("--keep", action="store_true")
    args = parser.parse_args()
    folder: Path = args.folder
    folder.mkdir(parents=True, exist_ok=True)
    uri = str(folder / "store")
    total = args.runs * args.samples
    began = time.perf_counter()
    if not args.keep and Path(uri).exists():
        shutil.rmtree(uri)
    build(uri, args.runs, args.samples, args.seeds)
    built = time.perf_counter() - began
    size = folder_bytes(Path(uri))
    print(
        f"store: {args.runs} runs x {args.samples:,} = {total:,} samples, built in {built:.0f} s,"
        f" {size / 1e9:.2f} GB on disk ({size / total:.1f} B per sample)"
    )
    typed, task = frame_bytes_per_sample(uri, min(args.samples, 1_000_000))
    for name, per_sample in (("typed sample frame", typed), ("task frame (as read)", task)):
        gigabytes = per_sample * total / 1e9
        print(f"{name}: {per_sample:.1f} B per sample, {gigabytes:.1f} GB for the store")
    limit = int(args.limit_gib * 2**30)
    summary = [sys.executable, "-m", "tileprof", "summary", "--store", uri, "--format", "json"]
    header = f"command (prlimit --as {args.limit_gib} GiB)"
    print(f"{header:<44} {'seconds':>8} {'peak MiB':>9}")
    variants: list[tuple[str, list[str]]] = [
        ("summary --store, all runs", []),
        ("same, --group-by run", ["--group-by", "run"]),
    ]
    for name, extra in variants:
        seconds, peak, out = measure(["prlimit", f"--as={limit}", *summary, *extra])
        print(f"{name:<44} {seconds:>8.1f} {peak:>9.0f}   ({len(out):,} B of JSON)")
    if not args.keep:
        shutil.rmtree(folder)


if __name__ == "__main__":
    main()
