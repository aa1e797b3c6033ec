"""Nsight Systems ``nsys stats --report cuda_gpu_kern_sum --format csv``.

The header is exactly ``Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),
Max (ns),StdDev (ns),Name``; lines before it (nsys progress messages) are skipped, and names
with commas are quoted, as CSV quotes them. The report names no device, so every row's target
is ``GPU (nsys)`` unless the caller names one.
"""

from __future__ import annotations

import math
from pathlib import Path

from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.inputs._csv_table import decode, records
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import NSYS, nsys_header_line

KIND = NSYS
HEADER: tuple[str, ...] = (
    "Time (%)",
    "Total Time (ns)",
    "Instances",
    "Avg (ns)",
    "Med (ns)",
    "Min (ns)",
    "Max (ns)",
    "StdDev (ns)",
    "Name",
)
OLDER_NAMES: dict[str, str] = {
    "Time(%)": "Time (%)",
    "Average": "Avg (ns)",
    "Average (ns)": "Avg (ns)",
    "Median": "Med (ns)",
    "Median (ns)": "Med (ns)",
    "Minimum": "Min (ns)",
    "Minimum (ns)": "Min (ns)",
    "Maximum": "Max (ns)",
    "Maximum (ns)": "Max (ns)",
    "StdDev": "StdDev (ns)",
}
"""Column names of older ``gpukernsum`` layouts (nsys 2020-2021: ``Time(%)``, ``Average``, no
median) mapped to the current ones; their times are nanoseconds too."""
OPTIONAL = frozenset({"Med (ns)", "StdDev (ns)"})
"""Columns an older layout lacks: their figures are null (p50_us, stddev_ns)."""
DEFAULT_TARGET = "GPU (nsys)"
_INT_COLUMNS = frozenset({"Instances"})


def parse(path: str | Path, data: bytes, target: str = DEFAULT_TARGET) -> ParsedRuns:
    """The per-kernel runs of a ``cuda_gpu_kern_sum`` CSV report."""
    lines = decode(path, data).splitlines()
    start = nsys_header_line(lines)
    if start is None:
        raise InputError(path, "line 1", "no `Time (%),…` header of a cuda_gpu_kern_sum report")
    return _parse_report(path, lines, start, target)


def _parse_report(path: str | Path, lines: list[str], start: int, target: str) -> ParsedRuns:
    # the checked read of every CSV report: a record's own line (a quoted name may span
    # lines), bad quoting and a cell over the limit named at their line
    reader = records(path, "\n".join(lines[start:]), first=start + 1)
    header = [OLDER_NAMES.get(h.strip(), h.strip()) for h in next(reader)[1]]
    _check_header(path, header, start)
    column = {key: header.index(key) for key in HEADER if key in header}
    name = Path(path).name
    rows = []
    for offset, record in reader:
        if not record or all(not f.strip() for f in record):
            continue
        if len(record) != len(header):
            raise InputError(
                path, f"line {offset}", f"{len(record)} fields, expected {len(header)}"
            )
        values = {
            key: _number(path, offset, index, key, record[index])
            for key, index in column.items()
            if key != "Name"
        }
        rows.append(
            {
                "target": target,
                "target_kind": "gpu",
                "source": f"{name}: line {offset}",
                "kernel": record[column["Name"]],
                "per": "call",
                "time_us": _us(values["Avg (ns)"]),
                "calls": values["Instances"],
                "total_us": _us(values["Total Time (ns)"]),
                "p50_us": _us(values.get("Med (ns)")),
                "max_us": _us(values["Max (ns)"]),
                "metadata": {
                    "time_percent": values["Time (%)"],
                    "min_ns": values["Min (ns)"],
                    "stddev_ns": values.get("StdDev (ns)"),
                },
            }
        )
    return ParsedRuns(KIND, runs_from_rows(rows))


def _us(ns: float | int | None) -> float | None:
    return None if ns is None else ns / 1e3


def _check_header(path: str | Path, header: list[str], start: int) -> None:
    """Every column known (older names already mapped), every required one present."""
    twice = [h for i, h in enumerate(header) if h in header[:i]]
    if twice:
        raise InputError(path, f"line {start + 1}", f"column {twice[0]!r} is named twice")
    unknown = [h for h in header if h not in HEADER]
    missing = [h for h in HEADER if h not in header and h not in OPTIONAL]
    detail = []
    if unknown:
        col = header.index(unknown[0]) + 1
        detail.append(f"unknown column {unknown[0]!r} (column {col})")
    if missing:
        detail.append(f"missing {', '.join(repr(m) for m in missing)}")
    if detail:
        raise InputError(
            path, f"line {start + 1}", "; ".join(detail) + f"; expected {','.join(HEADER)}"
        )


def _number(path: str | Path, line: int, index: int, key: str, raw: str) -> float | int:
    """One numeric cell, checked: a number, finite (StdDev may be nan), 0 to 2^63 - 1."""
    where = f"line {line}, column {index + 1} ({key})"
    try:
        value = int(raw) if key in _INT_COLUMNS else float(raw)
    except ValueError:
        raise InputError(path, where, f"not a number: {raw!r}") from None
    if not math.isfinite(value) and key != "StdDev (ns)":
        raise InputError(path, where, f"not a finite number: {raw!r}")
    if value < 0 or value > 2**63 - 1:
        raise InputError(path, where, f"out of range: {raw}")
    return value


READER: Reader[ParsedRuns] = Reader(parse)
