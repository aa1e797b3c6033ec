"""Nsight Systems ``nsys stats --report cuda_gpu_kern_sum --format csv``.

The header is exactly ``Time (%),Total Time (ns),Instances,Avg (ns),Med (ns),Min (ns),
Max (ns),StdDev (ns),Name``; lines before it (nsys progress messages) are skipped, and names
with commas are quoted, as CSV quotes them. The report names no device, so every row's target
is ``GPU (nsys)`` unless the caller names one.
"""

from __future__ import annotations

import csv
import io
import math
from pathlib import Path

from tileprof.errors import InputError
from tileprof.parsers._format import RUN_SOURCE, Content, InputFormat
from tileprof.runs import ParsedRuns, runs_from_rows

KIND = "nsys kernel summary"
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
DEFAULT_TARGET = "GPU (nsys)"
_INT_COLUMNS = frozenset({"Instances"})


def header_line(lines: list[str]) -> int | None:
    """Index of the line that starts the report (begins with ``Time (%)``), if any."""
    for i, line in enumerate(lines):
        if line.lstrip("\ufeff").startswith("Time (%),"):
            return i
    return None


def parse(path: str | Path, data: bytes, target: str = DEFAULT_TARGET) -> ParsedRuns:
    """The per-kernel runs of a ``cuda_gpu_kern_sum`` CSV report."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    lines = text.splitlines()
    start = header_line(lines)
    if start is None:
        raise InputError(path, "line 1", "no `Time (%),…` header of a cuda_gpu_kern_sum report")
    try:
        return _parse_report(path, lines, start, target)
    except csv.Error as exc:
        raise InputError(path, "CSV", f"malformed CSV: {exc}") from None


def _parse_report(path: str | Path, lines: list[str], start: int, target: str) -> ParsedRuns:
    csv.field_size_limit(2**31 - 1)  # a long kernel name is a name, not a fault
    reader = csv.reader(io.StringIO("\n".join(lines[start:]), newline=""))
    header = next(reader)
    if tuple(header) != HEADER:
        unknown = [h for h in header if h not in HEADER]
        missing = [h for h in HEADER if h not in header]
        detail = []
        if unknown:
            col = header.index(unknown[0]) + 1
            detail.append(f"unknown column {unknown[0]!r} (column {col})")
        if missing:
            detail.append(f"missing {', '.join(repr(m) for m in missing)}")
        if not detail:
            detail.append("columns out of order")
        raise InputError(
            path, f"line {start + 1}", "; ".join(detail) + f"; expected {','.join(HEADER)}"
        )
    name = Path(path).name
    rows = []
    for offset, record in enumerate(reader, start=start + 2):
        if not record or all(not f.strip() for f in record):
            continue
        if len(record) != len(HEADER):
            raise InputError(
                path, f"line {offset}", f"{len(record)} fields, expected {len(HEADER)}"
            )
        values: dict[str, float | int] = {}
        for col, (key, raw) in enumerate(zip(HEADER[:-1], record[:-1], strict=True), start=1):
            try:
                values[key] = int(raw) if key in _INT_COLUMNS else float(raw)
            except ValueError:
                raise InputError(
                    path, f"line {offset}, column {col} ({key})", f"not a number: {raw!r}"
                ) from None
            if not math.isfinite(values[key]) and key != "StdDev (ns)":
                raise InputError(
                    path, f"line {offset}, column {col} ({key})", f"not a finite number: {raw!r}"
                )
            if values[key] < 0 or values[key] > 2**63 - 1:
                raise InputError(
                    path, f"line {offset}, column {col} ({key})", f"out of range: {raw}"
                )
        rows.append(
            {
                "target": target,
                "target_kind": "gpu",
                "source": f"{name}: line {offset}",
                "kernel": record[-1],
                "per": "call",
                "time_us": values["Avg (ns)"] / 1e3,
                "calls": values["Instances"],
                "total_us": values["Total Time (ns)"] / 1e3,
                "p50_us": values["Med (ns)"] / 1e3,
                "max_us": values["Max (ns)"] / 1e3,
                "metadata": {
                    "time_percent": values["Time (%)"],
                    "min_ns": values["Min (ns)"],
                    "stddev_ns": values["StdDev (ns)"],
                },
            }
        )
    return ParsedRuns(KIND, runs_from_rows(rows))


def sniff(content: Content) -> bool:
    """A ``cuda_gpu_kern_sum`` CSV: a line among the first 200 starts the report header."""
    return content.opening not in (b"{", b"[") and header_line(content.text_lines[:200]) is not None


INPUT: InputFormat[ParsedRuns] = InputFormat(KIND, RUN_SOURCE, sniff, parse)
