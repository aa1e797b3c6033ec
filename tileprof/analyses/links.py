"""Cross-links between runs of different targets, and the links file that adds or overrides them.

Runs link automatically by (``op_family``, ``dtype``) and by ``workload``; a set is kept when
it spans at least two targets. A TOML links file adds named sets and overrides the
classification of matching runs::

    [[link]]
    name = "layer 3 GEMM"
    match = [
      { target = "tile device*", kernel = "gemm_f16_*" },
      { target = "NVIDIA A100*", implementation = "fp16_tensor_core" },
    ]

    [[override]]
    match = { kernel = "my_fused_kernel*" }
    set = { op_family = "gemm", dtype = "f16" }

Patterns are shell globs (``fnmatch``, case-sensitive) over the run table's text columns.
"""

from __future__ import annotations

import json
from fnmatch import fnmatchcase
from typing import Any

import polars as pl

from tileprof.core.links import Links
from tileprof.core.numbers import duration_us, number, percent
from tileprof.core.numbers import speedup as speedup_text
from tileprof.core.roofline import is_issue_slot_roofline
from tileprof.core.run_schema import RUN_SCHEMA
from tileprof.core.text import shorten

NAME_WIDTH = 48
"""Longest kernel or implementation name a linked-set ``text`` shows in full."""
SPEC_WIDTH = 80
"""Longest tile kernelSpec a linked set's ``work`` shows in full."""
NO_MATCH = "no run matches this link"
"""The ``text`` of the one row of a links-file set that matches no run."""


def _matches(row: dict[str, Any], match: dict[str, str]) -> bool:
    return all(
        row.get(k) is not None and fnmatchcase(str(row[k]), pattern) for k, pattern in match.items()
    )


def apply_overrides(runs: pl.DataFrame, links: Links | None) -> pl.DataFrame:
    """``runs`` with each override's ``set`` applied to the runs its ``match`` selects.

    Later overrides win over earlier ones.
    """
    if links is None or not links.overrides:
        return runs
    rows = runs.to_dicts()
    for ov in links.overrides:
        for row in rows:
            if _matches(row, ov.match):
                row.update(ov.set)
    return pl.DataFrame(rows, schema=runs.schema)


LINKED_SCHEMA: dict[str, pl.DataType] = {
    "set_id": pl.Int64(),
    "set": pl.String(),
    "link_by": pl.String(),
    "target": pl.String(),
    "target_kind": RUN_SCHEMA["target_kind"],
    "runs": pl.Int64(),
    "kernel": pl.String(),
    "implementation": pl.String(),
    "workload": pl.String(),
    "op_family": RUN_SCHEMA["op_family"],
    "dtype": RUN_SCHEMA["dtype"],
    "compare": pl.String(),
    "shape": pl.String(),
    "work": pl.String(),
    "flops": pl.Float64(),
    "useful_cycles": pl.Float64(),
    "per": pl.String(),
    "time_us": pl.Float64(),
    "speedup": pl.Float64(),
    "tflops": pl.Float64(),
    "peak_fraction": pl.Float64(),
    "arithmetic_intensity": pl.Float64(),
    "bound": pl.String(),
    "roofline_fraction": pl.Float64(),
    "issue_slot": pl.Boolean(),
    "device_useful": pl.Float64(),
    "energy_j": pl.Float64(),
    "j_per_gflop": pl.Float64(),
    "device": pl.String(),
    "devices": pl.Int64(),
    "device_min_us": pl.Float64(),
    "device_max_us": pl.Float64(),
    "device_spread": pl.Float64(),
    "slowest_device": pl.String(),
    "text": pl.String(),
}
DEVICE_FIELDS: tuple[str, ...] = (
    "device",
    "devices",
    "device_min_us",
    "device_max_us",
    "device_spread",
    "slowest_device",
)
"""The representative run's device and its run's spread over the target's devices."""

SAME_WORK = "time"
"""``compare`` of a set whose runs do the same work: time and speedup are compared."""
SAME_KIND = "efficiency"
"""``compare`` of a set of one kind of work in different sizes: only efficiency is."""
KIND_NOTE = "different sizes: compare efficiency, not time"


def linked_sets(runs: pl.DataFrame, links: Links | None = None) -> pl.DataFrame:
    """The linked sets of ``runs``: one row per (set, target), with one representative run.

    Sets come first from the links file (every named link, even one that matches no run: that
    set is one row with ``runs`` 0, no target and the text ``no run matches this link``), then
    the **same work** sets: one ``workload``, or one (``op_family``, ``dtype``, ``shape``);
    then the **same kind of work** sets: one (``op_family``, ``dtype``), families other than
    ``other``, dtype known, unless every run of it is already one same-shape set. Automatic
    sets are kept when they span two or more targets.

    Same-work sets (``compare`` = ``time``) show each target's fastest run, its time and its
    speedup over the set's slowest target. Same-kind sets (``compare`` = ``efficiency``) show
    each target's run with the most total time, and no time or speedup: only work, fraction of
    peak, TFLOP/s and J per GFLOP, which compare across sizes.
    """
    runs = apply_overrides(runs, links)
    rows = runs.to_dicts()
    sets: list[tuple[str, str, list[int], str]] = []
    for link in links.links if links else ():
        idx = [i for i, r in enumerate(rows) if any(_matches(r, m) for m in link.match)]
        sets.append((link.name, "links file", idx, SAME_WORK if link.same_work else SAME_KIND))
    by_workload: dict[str, list[int]] = {}
    by_shape: dict[tuple[str, str, str], list[int]] = {}
    by_family: dict[tuple[str, str], list[int]] = {}
    for i, r in enumerate(rows):
        if r["workload"]:
            by_workload.setdefault(r["workload"], []).append(i)
        if r["op_family"] not in (None, "other") and r["dtype"] is not None:
            by_family.setdefault((r["op_family"], r["dtype"]), []).append(i)
            if r["shape"]:
                by_shape.setdefault((r["op_family"], r["dtype"], r["shape"]), []).append(i)
    for workload, idx in sorted(by_workload.items()):
        sets.append((f"workload {workload}", "workload", idx, SAME_WORK))
    for (family, dt, shape), idx in sorted(by_shape.items()):
        sets.append((f"{family} · {dt} · {shape}", "shape", idx, SAME_WORK))
    for (family, dt), idx in sorted(by_family.items()):
        if (family, dt, rows[idx[0]]["shape"]) in by_shape and len(
            by_shape[(family, dt, rows[idx[0]]["shape"])]
        ) == len(idx):
            continue  # all one shape: already a same-work set
        sets.append((f"{family} · {dt} ({KIND_NOTE})", "op_family·dtype", idx, SAME_KIND))

    out: list[dict[str, Any]] = []
    set_id = 0
    for label, link_by, idx, compare in sets:
        targets: dict[str, list[dict[str, Any]]] = {}
        for i in idx:
            targets.setdefault(rows[i]["target"], []).append(rows[i])
        if link_by != "links file" and len(targets) < 2:
            continue
        set_id += 1
        if not targets:
            # a links-file set whose tables match no run is kept, empty, and says so
            out.append(
                {
                    "set_id": set_id,
                    "set": label,
                    "link_by": link_by,
                    "compare": compare,
                    "runs": 0,
                    "text": NO_MATCH,
                }
            )
            continue
        out.extend(_set_rows(set_id, label, link_by, compare, targets))
    return pl.DataFrame(out, schema=LINKED_SCHEMA)


def _set_rows(
    set_id: int, label: str, link_by: str, compare: str, targets: dict[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """One row per target of one set, tile targets first, then by name."""
    ordered = sorted(targets.items(), key=lambda kv: (kv[1][0]["target_kind"] != "tile", kv[0]))
    reps = [
        (
            target,
            members,
            min(members, key=_time_or_inf)
            if compare == SAME_WORK
            else max(_with_work(members), key=_total_time),
        )
        for target, members in ordered
    ]
    times = [r["time_us"] for _, _, r in reps if r["time_us"]]
    units = {r["per"] for _, _, r in reps if r["time_us"] and r["per"]}
    # times per different units (µs per call vs per tile phase) do not compare: no speedup
    slowest = max(times) if compare == SAME_WORK and times and len(units) == 1 else None
    out = []
    for target, members, rep in reps:
        work = work_of(rep)
        row = {
            "set_id": set_id,
            "set": label,
            "link_by": link_by,
            "target": target,
            "target_kind": rep["target_kind"],
            "runs": len(members),
            "kernel": rep["kernel"],
            "implementation": rep["implementation"],
            "workload": rep["workload"],
            "op_family": rep["op_family"],
            "dtype": rep["dtype"],
            "compare": compare,
            "shape": rep["shape"],
            **work,
            "per": rep["per"],
            "time_us": rep["time_us"] if compare == SAME_WORK else None,
            "speedup": slowest / rep["time_us"] if slowest and rep["time_us"] else None,
            "tflops": rep["tflops"],
            "peak_fraction": rep["peak_fraction"],
            "arithmetic_intensity": rep.get("arithmetic_intensity"),
            "bound": rep.get("bound"),
            "roofline_fraction": rep.get("roofline_fraction"),
            "issue_slot": is_issue_slot_roofline(rep),
            "device_useful": _device_useful(rep),
            "energy_j": rep["energy_j"],
            "j_per_gflop": (
                rep["energy_j"] / (work["flops"] / 1e9)
                if rep["energy_j"] is not None and work["flops"]
                else None
            ),
            **{k: rep.get(k) for k in DEVICE_FIELDS},
        }
        row["text"] = describe(row)
        if compare == SAME_WORK and len(units) > 1:
            row["text"] += f" · not compared: timed per {' and per '.join(sorted(units))}"
        out.append(row)
    return out


def work_of(row: dict[str, Any]) -> dict[str, Any]:
    """A run's work: FLOPs (2 × mac), useful cycles of a tile group, and a ``work`` text
    (shape; a tile group's kernelSpec and Σ outputElements; GFLOP, or for a tile group why its
    FLOPs are unknown; useful cycles; ``work unknown`` when the source states none)."""
    flops = 2.0 * row["mac"] if row.get("mac") else None
    meta: dict[str, Any] = {}
    if row.get("target_kind") == "tile" and row.get("metadata"):
        meta = json.loads(row["metadata"])
    useful = meta.get("usefulCycles") or None
    parts = [row["shape"]] if row.get("shape") else []
    if meta.get("kernelSpec"):
        parts.append(shorten(meta["kernelSpec"], SPEC_WIDTH))
    if meta.get("outputElements"):
        parts.append(f"{meta['outputElements']:,} output elements")
    if flops:
        parts.append(f"{flops / 1e9:.4g} GFLOP")
    elif meta.get("workUnknown"):
        parts.append(f"FLOPs unknown: {meta['workUnknown']}")
    if useful:
        parts.append(f"{useful:,.0f} useful cycles")
    return {"work": ", ".join(parts) or "work unknown", "flops": flops, "useful_cycles": useful}


def _device_useful(row: dict[str, Any]) -> float | None:
    """A tile group's deviceUsefulUtilization (a tile-only measure, never a fraction of peak)."""
    if row.get("target_kind") != "tile" or not row.get("metadata"):
        return None
    value = json.loads(row["metadata"]).get("deviceUsefulUtilization")
    return float(value) if value is not None else None


def _with_work(members: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A same-kind set's candidates for a target's representative: its runs with a FLOP
    count (so the set compares TFLOP/s and roofline), else all of them."""
    worked = [m for m in members if m.get("tflops") is not None]
    return worked or members


def _time_or_inf(row: dict[str, Any]) -> float:
    return float(row["time_us"]) if row["time_us"] is not None else float("inf")


def _total_time(row: dict[str, Any]) -> float:
    if row["total_us"] is not None:
        return float(row["total_us"])
    if row["time_us"] is None:
        return float("-inf")
    return float(row["time_us"]) * (row["calls"] or 1)


def format_us(us: float | None) -> str:
    """``15.50 µs``, ``4.360 ms``, ``780 ms``: the number policy's significant figures
    (``tileprof.core.numbers``) in the largest unit that keeps the value at 1 or more; a
    missing time is "—", as every missing figure is."""
    return duration_us(us)


def device_spread_text(row: dict[str, Any], *, compact: bool = False) -> str:
    """The spread of a run over the devices of its target that ran it: ``8 devices: 92.93 µs
    to 94.25 µs, spread 1.42%, slowest chip 2`` (compact: ``1.42% of 8, slowest chip 2``);
    empty for a run on one device (docs/runs.md, "Devices of one target")."""
    devices = row.get("devices")
    if not devices or devices < 2:
        return ""
    spread, slowest = percent(row.get("device_spread")), row.get("slowest_device")
    if compact:
        return f"{spread} of {devices}, slowest {slowest}"
    low, high = format_us(row.get("device_min_us")), format_us(row.get("device_max_us"))
    return f"{devices} devices: {low} to {high}, spread {spread}, slowest {slowest}"


def describe(row: dict[str, Any]) -> str:
    """One target's part of a linked set.

    Same work: target, implementation (else kernel), work, time, peak, TFLOP/s, J, speedup —
    ``NVIDIA A100-SXM4-40GB fp16_tensor_core · 8192x8192x8192, 1100 GFLOP · 4.360 ms per GEMM
    at 80.81% of peak, 252.1 TFLOP/s, 1.430 J (1.300 mJ/GFLOP)`` (numbers as
    ``tileprof.core.numbers`` prints them). Same kind: the same without time or
    speedup, which do not compare across sizes.
    """
    name = row.get("implementation") or row.get("kernel")
    if name:
        name = shorten(name, NAME_WIDTH)
    impl = f" {name}" if name else ""
    text = f"{shorten(row['target'], NAME_WIDTH)}{impl} · {row.get('work') or 'work unknown'}"
    rest = ""
    if row.get("compare") in (SAME_WORK, None):
        rest = format_us(row["time_us"]) + (f" per {row['per']}" if row.get("per") else "")
        spread = device_spread_text(row)
        rest += f" on {row['device']} ({spread})" if spread else ""
    figures = []
    if row.get("peak_fraction") is not None:
        figures.append(f"{percent(row['peak_fraction'])} of peak")
    elif row.get("device_useful") is not None:
        figures.append(f"{percent(row['device_useful'])} device useful utilization")
    if row.get("tflops") is not None:
        figures.append(f"{number(row['tflops'])} TFLOP/s")
    if row.get("roofline_fraction") is not None:
        kind = "issue-slot roofline" if row.get("issue_slot") else "roofline"
        roof = f"{percent(row['roofline_fraction'])} of {kind} ({row['bound']} bound)"
        if row["roofline_fraction"] > 1:
            roof += ": faster than the roofline, the spec is wrong"
        figures.append(roof)
    if figures:
        rest += (" at " if rest else "") + ", ".join(figures)
    if row.get("energy_j") is not None:
        rest += (", " if rest else "") + f"{number(row['energy_j'])} J"
    if row.get("j_per_gflop") is not None:
        rest += f" ({number(row['j_per_gflop'] * 1e3)} mJ/GFLOP)"
    if row.get("speedup") is not None:
        speedup = row["speedup"]
        rest += f", {speedup_text(speedup)} the slowest" if speedup != 1 else ", the slowest"
    if rest:
        text += " · " + rest
    return text
