"""Realistic tile dumps for the benchmarks, built through the fixture builder
(``tileprof.inputs.synthetic.synth``).

Every per-sample value comes from numpy; the samples go into one ``DumpBuilder.add`` call per
chunk of ``CHUNK`` samples, with the distinct metadata lists (a few hundred, as in real dumps)
passed once as ``metadata_options`` and chosen per sample by ``metadata_index``. The builder's
writers encode each distinct string and metadata list once and write in chunks, so a 20M-sample
NDJSON dump is written in bounded memory.

Shape (as issue 6 asks): about 40% of samples carry the seed-004 full metadata list (11 entries),
the rest 0 to 3 entries, 15% are exchange samples; 1472 tiles at 1.5 GHz. Each tile runs its
samples one after another (no overlap on a tile, small gaps between them); the dump lists the
samples in time order, phases cut the timeline into 400 steps and epochs into two halves.

``overlap=True`` (``--overlap``) runs each tile's samples on ``WORKER_THREADS`` worker threads
instead, as an IPU tile does: each thread runs its samples back to back, the threads side by
side, so nearly every sample overlaps another of its tile (up to six at once).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np

from tileprof.inputs.synthetic.synth import DumpBuilder, SyntheticDump

TILES = 1472
CLOCK_HZ = 1_500_000_000
KERNELS = tuple(f"kernel_{k:02d}_gemm_f16_rows_interleaved_k80_c{16 * k}" for k in range(48))
VARIANTS = 8
PHASES = 400
WORKER_THREADS = 6
"""Worker threads per tile in an ``overlap`` dump (an IPU tile runs six)."""
CHUNK = 1_000_000
"""Samples per ``DumpBuilder.add`` call (bounds the temporary per-sample string lists)."""

Pairs = list[tuple[str, str]]


def _full_list(kernel_index: int, useful: int, physical: int) -> Pairs:
    """The seed-004 metadata layout (11 entries), varied per kernel."""
    return [
        ("reason", "OperatorKernel"),
        ("value", str(500 + kernel_index)),
        (
            "kernelSpec",
            f"AttentionSoftmax {{ head_dimension: {8 * kernel_index + 8}, "
            f"key_columns: 729, padded_key_columns: 768 }}",
        ),
        ("outputElements", str(13312 + kernel_index)),
        ("input0Elements", "11664"),
        ("usefulCycles", str(useful)),
        ("physicalWorkCycles", str(physical)),
        (
            "workEstimateBasis",
            "softmax: arithmetic/conversion issue slots, excluding loads and row addressing",
        ),
        ("invocations", "1"),
        ("uniformInvocations", "true"),
        ("arguments", f"[16, {kernel_index}, 0]"),
    ]


def _short_list(count: int, useful: int, physical: int) -> Pairs:
    entries = [
        ("reason", "OperatorKernel"),
        ("usefulCycles", str(useful)),
        ("physicalWorkCycles", str(physical)),
    ]
    return entries[:count]


def metadata_options() -> list[Pairs]:
    """Full lists first (kernel-major, ``VARIANTS`` each), then short ones (count-major)."""
    full = [
        _full_list(k, 20000 + 97 * k + 13 * v, 23040 + 11 * v)
        for k in range(len(KERNELS))
        for v in range(VARIANTS)
    ]
    short = [_short_list(c, 300 + 7 * v, 400 + 5 * v) for c in range(4) for v in range(VARIANTS)]
    return full + short


def timeline(
    tile: np.ndarray, duration: np.ndarray, gap: np.ndarray, start: int = 100_000
) -> np.ndarray:
    """Offsets such that each tile runs its samples back to back (``gap`` cycles before each)."""
    order = np.argsort(tile, kind="stable")
    step = (gap + duration)[order]
    before = np.cumsum(step) - step  # exclusive running sum over the tile-sorted samples
    tiles = tile[order]
    first = np.flatnonzero(np.r_[True, tiles[1:] != tiles[:-1]])
    counts = np.diff(np.r_[first, tiles.shape[0]])
    offset = np.empty_like(before)
    offset[order] = before - np.repeat(before[first], counts) + gap[order] + start
    return offset


def build(samples: int, seed: int = 4, overlap: bool = False) -> SyntheticDump:
    """The benchmark dump of ``samples`` samples (deterministic for a given seed); with
    ``overlap``, each tile's samples run on ``WORKER_THREADS`` threads side by side."""
    rng = np.random.default_rng(seed)
    is_exchange = rng.random(samples) < 0.15
    has_full = ~is_exchange & (rng.random(samples) < 0.40 / 0.85)
    kernel = rng.integers(0, len(KERNELS), samples)
    variant = rng.integers(0, VARIANTS, samples)
    short_count = rng.integers(0, 4, samples)
    short_count[is_exchange] %= 2  # exchange samples carry 0 or 1 entries
    tile = rng.integers(0, TILES, samples)
    duration = np.where(
        is_exchange, rng.integers(50, 5_000, samples), rng.integers(100, 50_000, samples)
    )
    gap = rng.integers(0, 600, samples)
    worker = rng.integers(0, WORKER_THREADS, samples) if overlap else np.zeros(samples, np.int64)
    offset = timeline(tile * WORKER_THREADS + worker, duration, gap)
    # the dump lists samples in time order, as the device writes them
    order = np.argsort(offset, kind="stable")
    span = int((offset + duration).max()) + 1 if samples else 1
    phase = offset * PHASES // span
    epoch = np.where(offset < span // 2, 1, 2)
    metadata_index = np.where(
        has_full,
        kernel * VARIANTS + variant,
        len(KERNELS) * VARIANTS + short_count * VARIANTS + variant,
    )
    kind_of = np.array(["compute", "exchange"], dtype=object)
    operation_of = np.array(
        [f"operation.{k}" for k in range(len(KERNELS))] + [f"exchange.{p}" for p in range(64)],
        dtype=object,
    )
    kernel_of = np.array([*KERNELS, None], dtype=object)
    operation_code = np.where(is_exchange, len(KERNELS) + phase % 64, kernel)
    kernel_code = np.where(is_exchange, len(KERNELS), kernel)
    options = metadata_options()
    builder = DumpBuilder(CLOCK_HZ, TILES)
    for start in range(0, samples, CHUNK):
        pick = order[start : start + CHUNK]
        builder.add(
            tile=tile[pick],
            offset=offset[pick],
            duration=duration[pick],
            phase=phase[pick],
            epoch=epoch[pick],
            kind=kind_of[is_exchange[pick].astype(np.int64)].tolist(),
            operation=operation_of[operation_code[pick]].tolist(),
            kernel=kernel_of[kernel_code[pick]].tolist(),
            metadata_options=options,
            metadata_index=metadata_index[pick],
        )
    return builder.build()


def dump_name(samples: int, fmt: str, overlap: bool = False) -> str:
    """The file name of a benchmark dump."""
    return f"dump_{samples}{'_overlap' if overlap else ''}.{fmt}"


def write_dump(samples: int, folder: Path, fmt: str, seed: int = 4, overlap: bool = False) -> Path:
    """The ``fmt`` (``json`` or ``ndjson``) dump of ``samples`` samples, reusing an existing one."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / dump_name(samples, fmt, overlap)
    if not path.exists():
        dump = build(samples, seed, overlap)
        tmp = path.with_name(path.name + ".tmp")
        (dump.write_json if fmt == "json" else dump.write_ndjson)(tmp)
        tmp.replace(path)
    return path


def write_dumps(samples: int, folder: Path) -> tuple[Path, Path]:
    """Write (JSON, NDJSON) dumps of ``samples`` samples into ``folder``, reusing existing ones."""
    folder.mkdir(parents=True, exist_ok=True)
    json_path = folder / f"dump_{samples}.json"
    ndjson_path = folder / f"dump_{samples}.ndjson"
    missing = [p for p in (json_path, ndjson_path) if not p.exists()]
    if missing:
        dump = build(samples)
        for path in missing:
            tmp = path.with_name(path.name + ".tmp")
            (dump.write_json if path.suffix == ".json" else dump.write_ndjson)(tmp)
            tmp.replace(path)
    return json_path, ndjson_path


def ensure_dumps(samples: int, folder: Path) -> tuple[Path, Path]:
    """``write_dumps`` in a child process, so the caller stays small.

    Linux keeps a process's peak RSS across fork and exec: a benchmark that built a dump in
    its own memory would see every timed child start at that peak.
    """
    json_path = folder / f"dump_{samples}.json"
    ndjson_path = folder / f"dump_{samples}.ndjson"
    if not (json_path.exists() and ndjson_path.exists()):
        command = [sys.executable, __file__, "--samples", str(samples), "--folder", str(folder)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return json_path, ndjson_path


if __name__ == "__main__":
    import argparse
    import time

    parser = argparse.ArgumentParser(description="write a benchmark dump")
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--format", choices=["json", "ndjson", "both"], default="both")
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tileprof-bench"))
    parser.add_argument("--overlap", action="store_true", help="six worker threads per tile")
    args = parser.parse_args()
    began = time.perf_counter()
    if args.overlap:
        formats = ("json", "ndjson") if args.format == "both" else (args.format,)
        paths: tuple[Path, ...] = tuple(
            write_dump(args.samples, args.folder, f, overlap=True) for f in formats
        )
    elif args.format == "both":
        paths = write_dumps(args.samples, args.folder)
    else:
        paths = (write_dump(args.samples, args.folder, args.format),)
    for p in paths:
        print(f"{p}: {p.stat().st_size / 1e6:.0f} MB")
    print(f"{time.perf_counter() - began:.1f} s")
