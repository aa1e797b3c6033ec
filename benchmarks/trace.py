"""Benchmark: ``tileprof trace -o OUT.pftrace`` against ``tileprof summary`` on one dump.

Run from the repository root: ``python benchmarks/trace.py [--samples N] [--repeat R]
[--folder DIR] [--overlap]``. The JSON dump comes from ``dumpgen.py`` (the fixture builder),
generated in a child process and cached in ``--folder``; ``--overlap`` measures a second dump in
the same run, whose tiles each run six worker threads side by side (nearly every sample overlaps
others of its tile, so the trace puts them on overlap tracks). Each command runs as its own
process (imports included, as a user sees it), the two alternating; the script prints wall
seconds (best and median of R runs), the CPU seconds each process used (user + system: steadier
than wall time on a shared machine), each process's peak resident memory, the trace/summary
ratios (issue 13's targets: time ≤ 1×, memory ≤ 1.5×; issue 22's: time ≤ 1× with and without
overlapping samples) and the trace's bytes per sample (target: < 40). Then, in one more child
process, the stages of ``trace`` apart (load, timeline, write), wall and CPU seconds.
The load average is printed before and after (the machine is shared).
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402
from processes import load_average, timed  # noqa: E402


def stages(dump: Path) -> None:
    """Load, timeline and .pftrace write of ``trace`` apart (written to memory)."""
    from tileprof.analyses.filters import Filters
    from tileprof.model.profile import load
    from tileprof.model.trace import Alignment, build_timeline
    from tileprof.views.trace.perfetto import write_pftrace

    marks = [(time.perf_counter(), time.process_time())]
    profile = load(dump)
    marks.append((time.perf_counter(), time.process_time()))
    timeline = build_timeline(profile, Filters(), [], Alignment())
    marks.append((time.perf_counter(), time.process_time()))
    write_pftrace(io.BytesIO(), timeline)
    marks.append((time.perf_counter(), time.process_time()))
    for name, (w0, c0), (w1, c1) in zip(
        ("load", "timeline", "write"), marks[:-1], marks[1:], strict=True
    ):
        print(f"  stage {name:8s} wall {w1 - w0:6.2f} s  CPU {c1 - c0:6.2f} s")


def measure(dump: Path, samples: int, repeat: int, out: Path) -> None:
    """``summary`` and ``trace`` of ``dump``, alternating, then the stages of ``trace``."""
    tileprof = [sys.executable, "-m", "tileprof"]
    commands = {
        "summary": [*tileprof, "summary", str(dump)],
        "trace": [*tileprof, "trace", str(dump), "-o", str(out), "--force"],
    }
    results: dict[str, list[tuple[float, float, float]]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            results[name].append(timed(command))
    print(f"{dump.name}: {dump.stat().st_size / 2**20:.1f} MiB, {samples:,} samples")
    medians, cpus, peaks = {}, {}, {}
    for name, runs in results.items():
        seconds = [s for s, _, _ in runs]
        medians[name] = statistics.median(seconds)
        cpus[name] = statistics.median(c for _, c, _ in runs)
        peaks[name] = max(m for _, _, m in runs) / 2**20
        print(
            f"  {name:8s} best {min(seconds):6.2f} s  median {medians[name]:6.2f} s  "
            f"CPU median {cpus[name]:6.2f} s  peak memory {peaks[name]:7.1f} MiB"
        )
    size = out.stat().st_size
    print(f"  trace file: {size / 2**20:.1f} MiB, {size / samples:.1f} bytes a sample")
    print(f"  trace / summary time (median): {medians['trace'] / medians['summary']:.2f}×")
    print(f"  trace / summary CPU time (median): {cpus['trace'] / cpus['summary']:.2f}×")
    print(f"  trace / summary peak memory: {peaks['trace'] / peaks['summary']:.2f}×")
    subprocess.run([sys.executable, __file__, "--stages-of", str(dump)], check=True)


def ensure_dump(folder: Path, samples: int, overlap: bool) -> Path:
    """The benchmark dump, generated in a child process (a parent keeps its peak RSS across
    fork) unless it is there."""
    dump = folder / dumpgen.dump_name(samples, "json", overlap)
    if not dump.exists():
        command = [sys.executable, dumpgen.__file__, "--samples", str(samples)]
        command += ["--format", "json", "--folder", str(folder)]
        command += ["--overlap"] if overlap else []
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return dump


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    parser.add_argument(
        "--overlap", action="store_true", help="also a dump whose samples overlap on their tiles"
    )
    parser.add_argument("--stages-of", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.stages_of:
        stages(args.stages_of)
        return
    args.folder.mkdir(parents=True, exist_ok=True)
    dumps = [ensure_dump(args.folder, args.samples, overlap=False)]
    if args.overlap:
        dumps.append(ensure_dump(args.folder, args.samples, overlap=True))
    print(load_average())
    for dump in dumps:
        measure(dump, args.samples, args.repeat, args.folder / "trace.pftrace")
    print(load_average())


if __name__ == "__main__":
    main()
