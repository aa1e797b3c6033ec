"""Ingest benchmark (issues 6, 22): whole processes, timed in alternation, ratios to
``orjson.loads``, plus the compiled decoder against its floor.

    python benchmarks/ingest.py                 # 100k and 1M samples
    python benchmarks/ingest.py --samples 200000 --repeat 3
    python benchmarks/ingest.py --large         # adds 5M samples (about 2.2 GB of JSON)
    python benchmarks/ingest.py --samples 1000000 --repeat 3 --no-extras --jobs 1 --jobs 2

Dumps come from ``dumpgen.py`` (cached under the temp folder). Each stage runs as its own Python
process, so import time and peak RSS count as a user sees them: the largest single process
(``resource.getrusage(RUSAGE_CHILDREN)``) and the peak of the RSS summed over the command's whole
process tree (polled through psutil; since issue 22 decoding starts no process, so the two
agree). Two baselines, labelled apart: ``orjson.loads`` with the garbage collector disabled (the
strict one) and with it enabled. Stages alternate within each round so a noisy neighbour slows
all of them alike; the table shows medians.

The floor (issue 22) is timed inside one process, after its imports, on the same bytes:
reading the file, serde_json's validate-only pass (``IgnoredAny``: every byte checked, nothing
built; the JSON crate the decoder uses), and the decoder itself (``decode_json_file``, columns
only, no frame) on one thread and on ``--jobs`` threads; then the NDJSON decoder on the NDJSON
dump of the same samples (its MB/s are of the JSON file's size, which is the NDJSON's within a
few bytes). The load average is printed with it: wall times on a shared machine mean little
without it.
"""

from __future__ import annotations

import argparse
import compileall
import functools
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import dumpgen  # noqa: E402

# Runs one command as a child, then prints its wall time, its peak RSS (KiB, the largest single
# process, from getrusage), the peak of the RSS summed over its whole process tree (KiB, polled
# every 20 ms through psutil; null without psutil), its
# exit status and the end of its stderr as JSON. argv[1] is an address-space limit in bytes for
# the child (0: none), set with RLIMIT_AS before exec so a decoder that wants more fails with
# MemoryError instead of pushing the machine into the OOM killer.
_WRAPPER = """
import json, resource, subprocess, sys, time
try:
    import psutil
except ImportError:
    psutil = None
limit = int(sys.argv[1])
def bound():
    if limit:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
def tree_rss(root):
    total = 0
    for proc in [root, *root.children(recursive=True)]:
        try:
            total += proc.memory_info().rss
        except psutil.Error:
            pass
    return total
start = time.perf_counter()
child = subprocess.Popen(
    sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=bound
)
tree_peak = None
if psutil is not None:
    root = psutil.Process(child.pid)
    tree_peak = 0
    while child.poll() is None:
        try:
            tree_peak = max(tree_peak, tree_rss(root))
        except psutil.Error:
            pass
        time.sleep(0.02)
err = child.stderr.read().decode(errors="replace")[-2000:]
child.wait()
elapsed = time.perf_counter() - start
peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
tree = None if tree_peak is None else max(tree_peak // 1024, peak)
print(json.dumps({"rc": child.returncode, "seconds": elapsed, "peak_kib": peak,
                  "tree_peak_kib": tree, "stderr": err}))
"""

MEMORY_LIMIT_GB = 16
"""Address-space limit of the stages that may need many times the file (``orjson.loads``)."""
STRICT = "b) orjson.loads, gc disabled (strict baseline)"
LOOSE = "b2) orjson.loads, gc enabled"
BOUNDED = (STRICT, LOOSE)


def _tileprof() -> list[str]:
    return [sys.executable, "-m", "tileprof"]


def _orjson(path: Path, gc_enabled: bool) -> list[str]:
    pause = "" if gc_enabled else "gc.disable(); "
    code = f"import gc, orjson; {pause}orjson.loads(open({str(path)!r}, 'rb').read())"
    return [sys.executable, "-c", code]


def stages(
    json_path: Path, ndjson_path: Path, has_report: bool, jobs: list[int], extras: bool
) -> dict[str, list[str]]:
    """The commands to time, by stage name."""
    py = sys.executable
    table = {
        "a) f.read()": [py, "-c", f"open({str(json_path)!r}, 'rb').read()"],
        STRICT: _orjson(json_path, gc_enabled=False),
        LOOSE: _orjson(json_path, gc_enabled=True),
    }
    summary = [*_tileprof(), "summary"]
    for n in jobs:
        table[f"c) summary JSON --jobs {n}"] = [
            *summary,
            str(json_path),
            "--format",
            "json",
            "-q",
            "--jobs",
            str(n),
        ]
    for n in jobs:
        table[f"d) summary NDJSON --jobs {n}"] = [
            *summary,
            str(ndjson_path),
            "--format",
            "json",
            "-q",
            "--jobs",
            str(n),
        ]
    if extras:
        table["e) summary --cache (warm)"] = [
            *summary,
            str(json_path),
            "--cache",
            "--format",
            "json",
            "-q",
        ]
    if has_report and extras:
        page = json_path.with_name(json_path.stem + ".report.html")
        table["f) report"] = [*_tileprof(), "report", str(json_path), "-o", str(page), "--force"]
    return table


# Times, inside one process after its imports, the floor and the decoder on the same file, then
# the NDJSON decoder on the same samples (argv: JSON path, NDJSON path, decoding threads,
# repeats); prints the median seconds of each as JSON.
_FLOOR = """
import json, statistics, sys, time
from tileprof.core import _native
path, ndjson, jobs, repeat = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
steps = {
    "read the file": lambda: open(path, "rb").read(),
    "serde_json validate-only, 1 thread": lambda: _native._validate_json_file(path),
    "decoder, 1 thread": lambda: _native.decode_json_file(path, 1),
    f"decoder, {jobs} threads": lambda: _native.decode_json_file(path, jobs),
    "NDJSON decoder, 1 thread": lambda: _native.decode_ndjson_file(ndjson, 1),
    f"NDJSON decoder, {jobs} threads": lambda: _native.decode_ndjson_file(ndjson, jobs),
}
times = {name: [] for name in steps}
for _ in range(repeat):
    for name, step in steps.items():
        began = time.perf_counter()
        step()
        times[name].append(time.perf_counter() - began)
print(json.dumps({name: statistics.median(values) for name, values in times.items()}))
"""


def floor(json_path: Path, ndjson_path: Path, jobs: int, repeat: int) -> dict[str, float]:
    """Median seconds of the floor's steps and of the decoders (see ``_FLOOR``)."""
    command = [
        sys.executable,
        "-c",
        _FLOOR,
        str(json_path),
        str(ndjson_path),
        str(jobs),
        str(repeat),
    ]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    found: dict[str, float] = json.loads(done.stdout)
    return found


def print_floor(samples: int, size: int, times: dict[str, float]) -> None:
    """The floor table: seconds, MB/s and each step over the validate-only pass."""
    validate = times["serde_json validate-only, 1 thread"]
    load = (
        " ".join(Path("/proc/loadavg").read_text().split()[:3])
        if Path("/proc/loadavg").exists()
        else "?"
    )
    print(f"\n{samples:,} samples, {size / 1e6:.0f} MB, in one process after its imports")
    print(f"(load average after the run: {load}):\n")
    print("| step | s | MB/s | × validate-only |")
    print("| --- | ---: | ---: | ---: |")
    for name, seconds in times.items():
        print(f"| {name} | {seconds:.3f} | {size / 1e6 / seconds:.0f} | {seconds / validate:.2f} |")


def has_report_command() -> bool:
    """Whether ``tileprof report`` exists in this checkout (another issue adds it)."""
    done = subprocess.run([*_tileprof(), "report", "--help"], capture_output=True)
    return done.returncode == 0


class StageFailed(Exception):
    """A stage's process failed; the message says how (e.g. out of memory)."""


@functools.cache
def compiled_bytecode() -> None:
    """Compile tileprof's modules to bytecode once, as an installed package has them (pip
    compiles at install; an editable checkout writes them on its first run). Where
    ``PYTHONDONTWRITEBYTECODE`` is set, as on the machines these figures were taken on, every
    command would otherwise compile its modules from source: 0.07 s of each ``breakdown``."""
    import tileprof

    compileall.compile_dir(Path(tileprof.__file__).parent, quiet=1)


def measure(command: list[str], env: dict[str, str], limit_gb: int = 0) -> dict[str, float]:
    """One timed run of ``command`` in a fresh process (address space bounded if ``limit_gb``),
    tileprof's modules compiled first (``compiled_bytecode``)."""
    compiled_bytecode()
    done = subprocess.run(
        [sys.executable, "-c", _WRAPPER, str(limit_gb * 2**30), *command],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    result = json.loads(done.stdout)
    if result["rc"] != 0:
        err = result["stderr"]
        if limit_gb and ("MemoryError" in err or "memory" in err.lower() or result["rc"] < 0):
            raise StageFailed(f"failed: out of memory (limit {limit_gb} GB)")
        last = err.strip().splitlines()[-1:] or [f"exit status {result['rc']}"]
        raise StageFailed(f"failed ({result['rc']}): {last[0]}")
    return result


def run(
    samples: int, repeat: int, folder: Path, has_report: bool, jobs: list[int], extras: bool
) -> list[dict[str, object]]:
    """Time every stage ``repeat`` times in alternation; one row per stage (medians)."""
    json_path, ndjson_path = dumpgen.ensure_dumps(samples, folder)
    size = json_path.stat().st_size
    cache = folder / f"cache_{samples}"
    shutil.rmtree(cache, ignore_errors=True)
    env = {**os.environ, "TILEPROF_CACHE_DIR": str(cache)}
    table = stages(json_path, ndjson_path, has_report, jobs, extras)
    # A first run through the cache writes it; it is timed apart as the "cold" cache run.
    cold = [measure(table["e) summary --cache (warm)"], env)] if extras else []
    times: dict[str, list[dict[str, float]]] = {name: [] for name in table}
    failed: dict[str, str] = {}
    for _ in range(repeat):
        for name, command in table.items():
            if name in failed:
                continue
            limit = MEMORY_LIMIT_GB if name in BOUNDED else 0
            try:
                times[name].append(measure(command, env, limit))
            except StageFailed as exc:
                failed[name] = str(exc)
    rows: list[dict[str, object]] = []
    results = {"e0) summary --cache (cold)": cold, **times} if cold else times

    def median(name: str) -> float:
        runs = times.get(name) or []
        return statistics.median(r["seconds"] for r in runs) if runs else float("nan")

    strict, loose = median(STRICT), median(LOOSE)
    for name, runs in results.items():
        if name in failed:
            rows.append({"samples": samples, "stage": name, "failed": failed[name]})
            continue
        seconds = statistics.median(r["seconds"] for r in runs)
        peak = max(r["peak_kib"] for r in runs) / 1024
        trees = [r["tree_peak_kib"] for r in runs if r.get("tree_peak_kib") is not None]
        tree = max(trees) / 1024 if trees else peak
        rows.append(
            {
                "samples": samples,
                "stage": name,
                "seconds": seconds,
                "samples_per_s": samples / seconds,
                "mb_per_s": size / 1e6 / seconds,
                "peak_rss_mb": peak,
                "tree_rss_mb": tree,
                "rss_over_file": tree * 1024 * 1024 / size,
                "ratio_strict": seconds / strict,
                "ratio_loose": seconds / loose,
                "file_mb": size / 1e6,
            }
        )
    return rows


def print_rows(rows: list[dict[str, object]]) -> None:
    """A Markdown table, ready for docs/performance.md."""
    print(
        "| samples | file MB | stage | s | samples/s | MB/s | peak RSS MB (one process) "
        "| peak RSS MB (process tree) | tree RSS/file | × orjson, gc disabled (strict) "
        "| × orjson, gc enabled |"
    )
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        if "failed" in row:
            print(f"| {row['samples']:,} | | {row['stage']} | {row['failed']} | | | | | | | |")
            continue
        print(
            f"| {row['samples']:,} | {row['file_mb']:.0f} | {row['stage']} | {row['seconds']:.2f} "
            f"| {row['samples_per_s']:,.0f} | {row['mb_per_s']:.0f} | {row['peak_rss_mb']:.0f} "
            f"| {row['tree_rss_mb']:.0f} | {row['rss_over_file']:.2f} "
            f"| {row['ratio_strict']:.2f} | {row['ratio_loose']:.2f} |"
        )


def print_ratios(rows: list[dict[str, object]]) -> None:
    """The ratios issues 6, 15 and 22 set targets on, for one dump size."""
    seconds = {str(r["stage"]): float(r["seconds"]) for r in rows if "seconds" in r}  # type: ignore[arg-type]
    rss = {str(r["stage"]): float(r["rss_over_file"]) for r in rows if "seconds" in r}  # type: ignore[arg-type]
    samples = rows[0]["samples"]
    pairs = [
        (f"{stage} / orjson.loads, gc disabled (strict; issue 22: ≤ 0.2)", stage, STRICT)
        for stage in seconds
        if stage.startswith("c) ")
    ]
    pairs += [
        (f"{stage} / orjson.loads, gc enabled (issue 6: ≤ 0.75)", stage, LOOSE)
        for stage in seconds
        if stage.startswith("c) ")
    ]
    for stage, ratio in rss.items():
        if stage.startswith(("c) ", "d) ")):
            print(f"{samples:,} samples: {stage}: peak RSS / file {ratio:.2f} (issue 22: ≤ 1.2)")
    pairs += [
        ("cache cold / warm (≥ 5)", "e0) summary --cache (cold)", "e) summary --cache (warm)"),
    ]
    for label, top, bottom in pairs:
        if top in seconds and bottom in seconds:
            print(f"{samples:,} samples: {label}: {seconds[top] / seconds[bottom]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, action="append", help="repeatable")
    parser.add_argument("--large", action="store_true", help="also 5M samples")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument(
        "--jobs", type=int, action="append", help="decoding threads to time (default: 1, 2)"
    )
    parser.add_argument("--no-extras", action="store_true", help="skip the cache and report stages")
    parser.add_argument(
        "--folder", type=Path, default=Path(tempfile.gettempdir()) / "tileprof-bench"
    )
    args = parser.parse_args()
    sizes = args.samples or [100_000, 1_000_000]
    if args.large:
        sizes.append(5_000_000)
    has_report = has_report_command()
    if not has_report:
        print("note: `tileprof report` does not exist in this checkout; stage f) skipped")
    rows: list[dict[str, object]] = []
    for samples in sizes:
        new = run(
            samples, args.repeat, args.folder, has_report, args.jobs or [1, 2], not args.no_extras
        )
        rows.extend(new)
        print_rows(rows)
        print_ratios(new)
        json_path, ndjson_path = dumpgen.ensure_dumps(samples, args.folder)
        jobs = max(args.jobs or [1, 2])
        times = floor(json_path, ndjson_path, jobs, args.repeat)
        print_floor(samples, json_path.stat().st_size, times)
        sys.stdout.flush()
    by_size = {
        (int(r["samples"]), str(r["stage"])): float(r["seconds"])  # type: ignore[call-overload]
        for r in rows
        if "seconds" in r
    }
    for (samples, stage), seconds in by_size.items():
        base = by_size.get((1_000_000, stage))
        if samples == 5_000_000 and base and stage.startswith(("c) ", "d) ")):
            print(f"{stage}: 5M / 1M samples {seconds / base:.2f}× (issue 22: ≤ 5.5×)")


if __name__ == "__main__":
    main()
