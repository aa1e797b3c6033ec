"""Nsight Compute ``ncu --csv`` output (the long format: one row per launch and metric).

The header is ``"ID","Process ID","Process Name","Host Name","Kernel Name",…,"Section Name",
"Metric Name","Metric Unit","Metric Value"`` and, in newer releases, ``"Rule Name","Rule
Type","Rule Description","Estimated Speedup Type","Estimated Speedup"``. Lines before the
header (the profiled program's own output, ``==PROF==`` messages) are skipped, and so are later
``==PROF==``/``==WARNING==``/``==ERROR==`` lines.

Units are normalised to base units whether or not ``--print-units base`` was given: times to
ns, frequencies to Hz, sizes to bytes (ncu's prefixes are decimal: 1 Kbyte = 1000 bytes) and
rates to per second; a value's thousands separators are dropped. Per launch (``ID``) the
figures read are the Speed Of Light compute and memory throughput (% of the GPU's peak),
achieved and theoretical occupancy (%), the duration, and every rule row (name, type,
description, estimated speedup and its type). Per kernel name they are averaged over the
profiled launches and become one run-table row each, with the figures in ``metadata``;
``tileprof.analyses.kernel_metrics`` joins them onto other sources' kernels of the same name.
"""

from __future__ import annotations

import io
import math
import re
from pathlib import Path
from typing import Any

from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns, runs_from_rows
from tileprof.inputs._csv_table import decode, records
from tileprof.inputs._format import Reader
from tileprof.inputs._sniff import NCU, NCU_REQUIRED, ncu_header_line

KIND = NCU
TOOL_LINE = re.compile(r"^==(PROF|WARNING|ERROR|WARN)==")
METRICS: dict[str, tuple[str, ...]] = {
    "sol_compute_percent": ("Compute (SM) Throughput", "Compute (SM) [%]", "SM [%]"),
    "sol_memory_percent": ("Memory Throughput", "Memory [%]"),
    "achieved_occupancy_percent": ("Achieved Occupancy",),
    "theoretical_occupancy_percent": ("Theoretical Occupancy",),
    "duration_ns": ("Duration", "gpu__time_duration.sum"),
}
"""Each per-kernel figure and the metric names (current first, then older releases) it is
read from."""
PREFIX: dict[str, float] = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}
TIME_NS: dict[str, float] = {
    "nsecond": 1.0,
    "ns": 1.0,
    "usecond": 1e3,
    "us": 1e3,
    "msecond": 1e6,
    "ms": 1e6,
    "second": 1e9,
    "s": 1e9,
}
FREQ_HZ: dict[str, float] = {"hz": 1.0, "khz": 1e3, "mhz": 1e6, "ghz": 1e9}


def base_unit(value: float, unit: str) -> tuple[float, str]:
    """``value`` in ``unit`` as (value, unit) in base units: ``(406.24, "usecond")`` →
    ``(406240.0, "ns")``, ``(1.24, "Ghz")`` → ``(1.24e9, "hz")``, ``(2.5, "Gbyte/second")`` →
    ``(2.5e9, "byte/second")``, ``(3, "cycle/nsecond")`` → ``(3e9, "hz")``. Units it does not
    know (%, cycle, register/thread, …) are returned unchanged."""
    text = unit.strip().lower()
    if text in TIME_NS:
        return value * TIME_NS[text], "ns"
    if text in FREQ_HZ:
        return value * FREQ_HZ[text], "hz"
    top, _, below = text.partition("/")
    factor = 1.0
    m = re.fullmatch(r"([kmgtp]?)(byte|inst|sector|request|warp)s?", top)
    if m:
        factor, top = PREFIX[m[1]], m[2]
    if below in TIME_NS:
        rate = factor * 1e9 / TIME_NS[below]
        return value * rate, ("hz" if top == "cycle" else f"{top}/second")
    return value * factor, (f"{top}/{below}" if below else top)


def _number(path: str | Path, line: int, raw: str) -> float | None:
    """A metric value (``1,234.5``, ``n/a`` → None); InputError when it is no number."""
    text = raw.strip().replace(",", "")
    if not text or text.lower() in ("n/a", "nan"):
        return None
    try:
        value = float(text)
    except ValueError:
        return None  # a text metric (Enabled TPC IDs: all, Cache Configuration): not a figure
    if not math.isfinite(value):
        raise InputError(path, f"line {line}", f"not a finite number: {raw!r}")
    return value


def read_launches(path: str | Path, data: bytes) -> dict[str, dict[str, Any]]:
    """Per launch ID: kernel name, device, grid, block, each figure of ``METRICS`` in base
    units, and the rules."""
    text = decode(path, data)
    lines = io.StringIO(text, newline="").readlines()  # LF, CRLF or CR: not U+2028
    start = ncu_header_line([ln.rstrip("\r\n") for ln in lines])
    if start is None:
        raise InputError(path, "line 1", 'no `"ID",…,"Metric Value"` header of ncu --csv output')
    skip = TOOL_LINE.match
    rows = records(path, "".join(lines[start:]), skip=lambda ln: bool(skip(ln)), first=start + 1)
    header = [h.strip() for h in next(rows)[1]]
    column = {h: i for i, h in enumerate(header)}
    if len(column) < len(header):
        twice = next(h for h in header if header.count(h) > 1)
        raise InputError(path, f"line {start + 1}", f"column {twice!r} is named twice")
    least = max(column[c] for c in NCU_REQUIRED) + 1
    launches: dict[str, dict[str, Any]] = {}
    for line, record in rows:
        if not any(f.strip() for f in record):
            continue
        if [f.strip() for f in record] == header:
            raise InputError(path, f"line {line}", "the header again (two files joined?)")
        # metric rows may stop after "Metric Value": the rule columns are left off
        if not least <= len(record) <= len(header):
            raise InputError(
                path, f"line {line}", f"{len(record)} fields, expected {least} to {len(header)}"
            )
        _add_row(path, line, launches, {h: record[i] for h, i in column.items() if i < len(record)})
    if not launches:
        raise InputError(path, f"line {start + 1}", "no metric rows after the header")
    return launches


_FIGURE_OF = {name: figure for figure, names in METRICS.items() for name in names}


def _add_row(
    path: str | Path, line: int, launches: dict[str, dict[str, Any]], row: dict[str, str]
) -> None:
    """One metric or rule row into its launch's record."""
    launch = launches.setdefault(
        row["ID"],
        {
            "id": row["ID"],
            "kernel": row["Kernel Name"],
            "device": row.get("Device"),
            "cc": row.get("CC"),
            "grid": row.get("Grid Size"),
            "block": row.get("Block Size"),
            "rules": [],
        },
    )
    rule = (row.get("Rule Name") or "").strip()
    if not row.get("Metric Name", "").strip() and not rule:
        return
    if rule:
        speedup = _number(path, line, row.get("Estimated Speedup") or "")
        launch["rules"].append(
            {
                "rule": rule,
                "type": (row.get("Rule Type") or "").strip() or None,
                "speedup_type": (row.get("Estimated Speedup Type") or "").strip() or None,
                "estimated_speedup_percent": speedup,
                "description": (row.get("Rule Description") or "").strip(),
            }
        )
        return
    figure = _FIGURE_OF.get(row["Metric Name"].strip())
    if figure is None or figure in launch:
        return
    value = _number(path, line, row["Metric Value"])
    if value is None:
        return
    value, unit = base_unit(value, row.get("Metric Unit") or "")
    if figure == "duration_ns" and unit not in ("ns", ""):
        raise InputError(path, f"line {line}", f"Duration in {row.get('Metric Unit')!r}")
    launch[figure] = value


def parse(path: str | Path, data: bytes) -> ParsedRuns:
    """One run-table row per profiled kernel name, its figures averaged over its launches."""
    launches = read_launches(path, data)
    by_kernel: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for launch in launches.values():
        by_kernel.setdefault((launch["kernel"], launch["device"]), []).append(launch)
    name = Path(path).name
    rows = [_row(name, kernel, device, group) for (kernel, device), group in by_kernel.items()]
    return ParsedRuns(KIND, runs_from_rows(rows), metadata={"launches": len(launches)})


def _mean(group: list[dict[str, Any]], key: str) -> float | None:
    values = [g[key] for g in group if g.get(key) is not None]
    return sum(values) / len(values) if values else None


def _row(name: str, kernel: str, device: str | None, group: list[dict[str, Any]]) -> dict[str, Any]:
    """The run-table row of one kernel's profiled launches."""
    first = group[0]
    durations = [g["duration_ns"] / 1e3 for g in group if g.get("duration_ns") is not None]
    rules: dict[tuple[str, str], dict[str, Any]] = {}
    for g in group:
        for r in g["rules"]:
            key = (r["rule"], r["description"])
            best = rules.get(key)
            if best is None or (r["estimated_speedup_percent"] or 0) > (
                best["estimated_speedup_percent"] or 0
            ):
                rules[key] = r
    meta: dict[str, Any] = {"profiled_launches": len(group)}
    for figure in METRICS:
        if figure != "duration_ns":
            meta[figure] = _mean(group, figure)
    meta |= {"grid": first["grid"], "block": first["block"], "cc": first["cc"]}
    meta["rules"] = sorted(rules.values(), key=lambda r: -(r["estimated_speedup_percent"] or 0.0))
    cc = f", CC {first['cc']}" if first["cc"] else ""
    return {
        "target": f"GPU (Nsight Compute{cc})",
        "target_kind": "gpu",
        "device": None if device is None else f"GPU {device}",
        "source": f"{name}: {_ids(group)}",
        "kernel": kernel,
        "per": "call",
        "time_us": sum(durations) / len(durations) if durations else None,
        "calls": len(group),
        "total_us": sum(durations) if durations else None,
        "max_us": max(durations) if durations else None,
        "metadata": {k: v for k, v in meta.items() if v is not None},
    }


def _ids(group: list[dict[str, Any]]) -> str:
    """The launches' IDs as the source names them: ``ID 4`` or ``IDs 4, 9, … 31 (12)``."""
    ids = [str(g["id"]) for g in group]
    if len(ids) == 1:
        return f"ID {ids[0]}"
    shown = ", ".join(ids[:2]) + (f", … {ids[-1]}" if len(ids) > 2 else "")
    return f"IDs {shown} ({len(ids)})"


READER: Reader[ParsedRuns] = Reader(parse)
