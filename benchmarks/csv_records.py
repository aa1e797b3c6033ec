"""The checked CSV record reader of the tools' reports (``inputs._csv_table.records``: each
record with its line, faults named at their line, the cell limit held while it reads) against
Python's plain ``csv.reader`` over the same text. Prints medians of ``--repeat`` runs."""

from __future__ import annotations

import argparse
import csv
import gc
import io
import statistics
import time
from collections.abc import Callable, Iterable

from tileprof.inputs._csv_table import records


def _text(count: int) -> str:
    """A report of ``count`` rows as the nsys and ncu CSV reports write them: a number, a name,
    a decimal and a kernel name."""
    rows = (f'{i},"x{i}",3.5,kernel_name_{i % 100}\n' for i in range(count))
    return "id,name,value,kernel\n" + "".join(rows)


def _median_s(read: Callable[[], Iterable[object]], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in read():
            pass
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = _text(args.rows)
    gc.disable()  # decoder baselines run with the collector off
    plain = _median_s(lambda: csv.reader(io.StringIO(text, newline=""), strict=True), args.repeat)
    checked = _median_s(lambda: records("bench.csv", text), args.repeat)
    per_record_us = (checked - plain) / (args.rows + 1) * 1e6
    print(f"{args.rows:,} rows, {len(text) / 1e6:.1f} MB, medians of {args.repeat}, gc off")
    print(f"csv.reader            {plain:.3f} s")
    ratio = f"{checked / plain:.2f}x, +{per_record_us:.2f} µs a record"
    print(f"_csv_table.records    {checked:.3f} s  ({ratio})")


if __name__ == "__main__":
    main()
