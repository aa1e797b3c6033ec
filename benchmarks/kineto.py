"""GPU trace decode benchmark (issue 33): `breakdown` and `runs` of a large Kineto trace against
``orjson.loads`` of it, as ratios within one run, with peak RSS over the file's size, the
gzipped trace against ``gzip -dc``, and the floor.

    python benchmarks/kinetogen.py -o /tmp/kineto_608mb.json      # the 608 MB trace
    python benchmarks/kineto.py /tmp/kineto_608mb.json            # makes the .gz beside it
    python benchmarks/kineto.py /tmp/kineto_608mb.json --repeat 3 --no-gzip
    python benchmarks/kineto.py /tmp/kineto_608mb.json --floor --repeat 3   # the floor alone

Each stage is its own Python process (``ingest.measure``: wall time, peak RSS of the largest
process), the stages alternating within each round so that a noisy neighbour slows them alike;
the table shows medians. The floor is timed inside one process after its imports, on the same
bytes: reading the file, serde_json's validate-only pass (``IgnoredAny``: every byte checked,
nothing built; the JSON crate the decoder uses), the Kineto decoder alone
(``decode_kineto_bytes``, columns only, no frame) on one thread and on two, and the two readers
that the commands run on a file, each reading it through its window (``decode_kineto_file``
on two threads, the checks' ``decode_kineto_inventory_file``). The load average is printed
with it.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from ingest import measure  # noqa: E402

_FLOOR = """
import json, sys, time
from tileprof.core import _native
path = sys.argv[1]
began = time.perf_counter()
data = open(path, "rb").read()
read = time.perf_counter() - began
began = time.perf_counter()
_native._validate_json_file(path)
validate = time.perf_counter() - began
began = time.perf_counter()
found, why = _native.decode_kineto_bytes(data, 1)
one = time.perf_counter() - began
del found
began = time.perf_counter()
found, why = _native.decode_kineto_bytes(data, 2)
two = time.perf_counter() - began
del found, data
began = time.perf_counter()
found, streamed_why = _native.decode_kineto_file(path, 2)
streamed = time.perf_counter() - began
del found
began = time.perf_counter()
found, inventory_why = _native.decode_kineto_inventory_file(path)
inventory = time.perf_counter() - began
print(json.dumps({"read the file": read, "serde_json validate-only": validate,
                  "Kineto decoder, 1 thread": one, "Kineto decoder, 2 threads": two,
                  "Kineto decoder from the file, 2 threads": streamed,
                  "inventory from the file": inventory,
                  "declined": why or streamed_why or inventory_why}))
"""


FLOOR_STEPS = (
    "read the file",
    "serde_json validate-only",
    "Kineto decoder, 1 thread",
    "Kineto decoder, 2 threads",
    "Kineto decoder from the file, 2 threads",
    "inventory from the file",
)


def stages(path: Path, gz: Path | None) -> dict[str, list[str]]:
    """The commands to time, by stage name."""
    py = sys.executable
    code = f"import gc, orjson; gc.disable(); orjson.loads(open({str(path)!r}, 'rb').read())"
    tileprof = [py, "-m", "tileprof"]
    table = {
        "orjson.loads, gc off": [py, "-c", code],
        "breakdown": [*tileprof, "breakdown", str(path), "--format", "json"],
        "breakdown, its table": [*tileprof, "breakdown", str(path)],
        "runs": [*tileprof, "runs", str(path), "--format", "json"],
    }
    if gz is not None:
        table["gzip -dc"] = ["sh", "-c", f"gzip -dc {gz} > /dev/null"]
        table["breakdown of the gzip -1 file"] = [
            *tileprof,
            "breakdown",
            str(gz),
            "--format",
            "json",
        ]
    return table


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trace", type=Path, help="a plain .json Kineto trace (kinetogen.py)")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--no-gzip", action="store_true", help="skip the gzip stages")
    parser.add_argument(
        "--large",
        action="store_true",
        help="the 4 GB target: `breakdown` alone, its time and peak RSS (no orjson baseline, "
        "which would need seven times the file in memory, no gzip, no floor)",
    )
    parser.add_argument(
        "--floor",
        action="store_true",
        help="the floor alone (one process: reading, validate-only, the decoders), in seconds",
    )
    args = parser.parse_args()
    path: Path = args.trace
    if args.floor:
        for _ in range(args.repeat):
            _floor(path)
        return
    if args.large:
        _large(path, args.repeat)
        return
    gz = None if args.no_gzip else path.with_name(path.name + ".gz")
    if gz is not None and not gz.exists():
        with path.open("rb") as src, gzip.open(gz, "wb", compresslevel=1) as out:
            shutil.copyfileobj(src, out, 1 << 20)
    env = dict(os.environ)
    table = stages(path, gz)
    times: dict[str, list[float]] = {name: [] for name in table}
    peaks: dict[str, list[int]] = {name: [] for name in table}
    for _ in range(args.repeat):
        for name, command in table.items():
            result = measure(command, env)
            times[name].append(result["seconds"])
            peaks[name].append(int(result["peak_kib"]))
    size = path.stat().st_size
    base = statistics.median(times["orjson.loads, gc off"])
    print(f"{path}: {size / 1e6:.0f} MB; load average {_load()}")
    print(f"{'stage':<32} {'seconds':>8} {'/ orjson':>9} {'peak RSS MB':>12} {'RSS / file':>11}")
    for name in table:
        seconds = statistics.median(times[name])
        peak = max(peaks[name]) * 1024
        print(
            f"{name:<32} {seconds:8.2f} {seconds / base:9.2f} {peak / 1e6:12.0f} "
            f"{peak / size:11.2f}"
        )
    if gz is not None:
        gzip_s = statistics.median(times["gzip -dc"])
        gz_breakdown = statistics.median(times["breakdown of the gzip -1 file"])
        print(f"breakdown of the gzip -1 file / gzip -dc: {gz_breakdown / gzip_s:.2f}")
    validate = _floor(path)
    for name in ("breakdown", "runs"):
        print(f"{name} / validate-only: {statistics.median(times[name]) / validate:.2f}")


def _floor(path: Path) -> float:
    """Print the floor, timed in one process after its imports; return its validate-only
    seconds (the decoder's figures are read against it, within the same process)."""
    done = subprocess.run(
        [sys.executable, "-c", _FLOOR, str(path)], capture_output=True, text=True, check=True
    )
    floor = json.loads(done.stdout)
    validate: float = floor["serde_json validate-only"]
    size = path.stat().st_size
    print(f"floor (one process, after its imports; load average {_load()}):")
    for name in FLOOR_STEPS:
        seconds = floor[name]
        print(f"  {name:<30} {seconds:8.2f} s {size / seconds / 1e6:8.0f} MB/s "
              f"{seconds / validate:6.2f} × validate")  # fmt: skip
    if floor["declined"]:
        print(f"  the decoder declined the trace: {floor['declined']}")
    return validate


def _large(path: Path, repeat: int) -> None:
    """``breakdown`` of a trace too large for the baseline: seconds and peak RSS."""
    command = stages(path, None)["breakdown"]
    results = [measure(command, dict(os.environ)) for _ in range(repeat)]
    seconds = statistics.median(r["seconds"] for r in results)
    peak = max(int(r["peak_kib"]) for r in results) * 1024
    size = path.stat().st_size
    print(f"{path}: {size / 1e6:.0f} MB; load average {_load()}")
    print(
        f"breakdown: {seconds:.2f} s, peak RSS {peak / 1e6:.0f} MB ({peak / size:.2f} × the file)"
    )


def _load() -> str:
    loadavg = Path("/proc/loadavg")
    return " ".join(loadavg.read_text().split()[:3]) if loadavg.exists() else "?"


if __name__ == "__main__":
    main()
