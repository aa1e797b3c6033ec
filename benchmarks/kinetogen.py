"""A large PyTorch profiler (Kineto) trace for the GPU decode benchmark (issue 33).

Shifted replicas of the HTA NCCL rank (``fixtures/hta/nccl_2xA100_rank0.json.gz``, from
``../shared/real-inputs/hta/``,
a 2-rank A100 job, 9.8 MB and 40,573 events), written as PyTorch writes the file (its own
indented text, copied): the ``traceEvents`` of replica k have their ``ts`` shifted by k times the
trace's span (whole µs, so each keeps its three decimals as written), their ``correlation``
and ``External id`` by k × 10⁷ and their ``ProfilerStep#N`` by k × 1000, so the replicas follow
one another as one long capture. The size is a parameter: 608 MB by default (60 replicas, 2.4M
events), ``--size-mb 4096`` for the 4 GB trace::

    python benchmarks/kinetogen.py -o /tmp/kineto_608mb.json
    python benchmarks/kinetogen.py --size-mb 4096 -o /tmp/kineto_4gb.json
    python benchmarks/kinetogen.py -o /tmp/kineto_608mb.json.gz   # gzip -1
"""

from __future__ import annotations

import argparse
import gzip
import re
from collections.abc import Callable
from pathlib import Path
from typing import IO

SOURCE_TRACE = (
    Path(__file__).resolve().parents[1] / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"
)
"""The HTA NCCL rank as ``../shared/real-inputs/hta/`` holds it (copied unchanged)."""
OPEN = '"traceEvents": [\n'
CLOSE = "\n  ],\n"
TIME = re.compile(rb'("ts": )(\d+)')
IDS = re.compile(rb'("(?:correlation|External id)": )(\d+)')
STEP = re.compile(rb"(ProfilerStep#)(\d+)")


def _shifter(by: int) -> Callable[[re.Match[bytes]], bytes]:
    def shift(found: re.Match[bytes]) -> bytes:
        return found.group(1) + str(int(found.group(2)) + by).encode()

    return shift


def _span_us(events: bytes) -> int:
    """Whole µs from the first start to past the last end, plus a millisecond."""
    starts = [int(t) for t in re.findall(rb'"ts": (\d+)', events)]
    durs = [float(d) for d in re.findall(rb'"dur": ([\d.]+)', events)]
    return max(starts) - min(starts) + int(max(durs, default=0)) + 1000


def replica(events: bytes, k: int, span: int) -> bytes:
    """The events text of replica ``k``."""
    if k == 0:
        return events
    text = TIME.sub(_shifter(k * span), events)
    text = IDS.sub(_shifter(k * 10_000_000), text)
    return STEP.sub(_shifter(k * 1000), text)


def write(out: IO[bytes], size_bytes: int, source: Path = SOURCE_TRACE) -> int:
    """Write the trace to ``out``: replicas until it is at least ``size_bytes``; the count."""
    text = gzip.decompress(source.read_bytes())
    head_end = text.index(OPEN.encode()) + len(OPEN)
    tail_start = text.rindex(CLOSE.encode())
    head, events, tail = text[:head_end], text[head_end:tail_start], text[tail_start:]
    span = _span_us(events)
    count = max(1, -(-(size_bytes - len(head) - len(tail)) // (len(events) + 2)))
    out.write(head)
    for k in range(count):
        if k:
            out.write(b",\n")
        out.write(replica(events, k, span))
    out.write(tail)
    return count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size-mb", type=float, default=608.0, help="at least this size (MB)")
    parser.add_argument("-o", "--output", type=Path, required=True, help=".json or .json.gz")
    args = parser.parse_args()
    size = int(args.size_mb * 1e6)
    if args.output.suffix == ".gz":
        with gzip.open(args.output, "wb", compresslevel=1) as out:
            count = write(out, size)
    else:
        with args.output.open("wb") as out:
            count = write(out, size)
    print(f"{args.output}: {count} replicas, {args.output.stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
