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

import sys
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from tileprof.classify import DTYPES, OP_FAMILIES
from tileprof.errors import InputError
from tileprof.parsers._common import read_bytes
from tileprof.parsers._decode import convert
from tileprof.runs import RUN_SCHEMA
from tileprof.text import shorten

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

MATCH_COLUMNS: tuple[str, ...] = (
    "target",
    "target_kind",
    "source",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "launch_op",
)
SETTABLE_COLUMNS: tuple[str, ...] = ("op_family", "dtype", "workload")
NAME_WIDTH = 48
NO_MATCH = "no run matches this link"
"""The ``text`` of the one row of a links-file set that matches no run."""
"""Longest kernel or implementation name a linked-set ``text`` shows in full."""


# Match and set values are typed Any here and checked by hand, so that a wrong value is reported
# at its key (``$.link[0].match[0].kernel``), which msgspec cannot name inside a dict.
class Link(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    match: list[dict[str, Any]]


class Override(msgspec.Struct, forbid_unknown_fields=True):
    match: dict[str, Any]
    set: dict[str, Any]


class LinksFile(msgspec.Struct, forbid_unknown_fields=True):
    link: list[Link] = msgspec.field(default_factory=list)
    override: list[Override] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class Links:
    """A parsed links file."""

    links: tuple[Link, ...] = ()
    overrides: tuple[Override, ...] = ()


def load_links(path: str | Path) -> Links:
    """Parse and check a TOML links file; errors name the line or the key path."""
    data = read_bytes(Path(path))
    try:
        raw: dict[str, Any] = tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        text = str(exc)
        where = None
        if "(at " in text:
            text, _, rest = text.partition(" (at ")
            where = rest.rstrip(")")
        raise InputError(path, where, f"bad TOML: {text}") from None
    doc = convert(path, raw, LinksFile, "$")
    for i, link in enumerate(doc.link):
        if not link.match:
            raise InputError(path, f"$.link[{i}].match", "empty list: the link would select no run")
        for j, m in enumerate(link.match):
            _check_match(path, m, f"$.link[{i}].match[{j}]")
    for i, ov in enumerate(doc.override):
        _check_match(path, ov.match, f"$.override[{i}].match")
        for key, value in ov.set.items():
            where = f"$.override[{i}].set.{key}"
            _check_string(path, value, where)
            if key not in SETTABLE_COLUMNS:
                raise InputError(
                    path, where, f"cannot set {key!r}; settable: " + ", ".join(SETTABLE_COLUMNS)
                )
            allowed = {"op_family": OP_FAMILIES, "dtype": DTYPES}.get(key)
            if allowed and value not in allowed:
                raise InputError(path, where, f"{value!r} is not one of {', '.join(allowed)}")
    return Links(tuple(doc.link), tuple(doc.override))


def _check_match(path: str | Path, match: dict[str, Any], where: str) -> None:
    if not match:
        raise InputError(path, where, "empty match: it would match every run")
    for key, value in match.items():
        if key not in MATCH_COLUMNS:
            raise InputError(
                path, f"{where}.{key}", f"unknown column; use one of {', '.join(MATCH_COLUMNS)}"
            )
        _check_string(path, value, f"{where}.{key}")


def _check_string(path: str | Path, value: Any, where: str) -> None:
    if not isinstance(value, str):
        raise InputError(path, where, f"expected a string, got {type(value).__name__} {value!r}")


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
    "per": pl.String(),
    "time_us": pl.Float64(),
    "tflops": pl.Float64(),
    "peak_fraction": pl.Float64(),
    "energy_j": pl.Float64(),
    "text": pl.String(),
}


def linked_sets(runs: pl.DataFrame, links: Links | None = None) -> pl.DataFrame:
    """The linked sets of ``runs``: one row per (set, target), with one representative run.

    Sets come from the links file (every named link, even one that matches no run: that set is
    one row with ``runs`` 0, no target and the text ``no run matches this link``), then from
    (op_family, dtype) (families other than ``other``, dtype known) and from ``workload``,
    each of these kept when it spans two or more targets. In an (op_family, dtype) or
    links-file set the representative is the target's run with the most total time
    (``total_us``, else ``time_us × calls``, else ``time_us``): the kernel that matters most
    there. In a workload set it is the fastest ``time_us``: the best way that target ran the
    workload.
    """
    runs = apply_overrides(runs, links)
    rows = runs.to_dicts()
    sets: list[tuple[str, str, list[int], str]] = []
    for link in links.links if links else ():
        idx = [i for i, r in enumerate(rows) if any(_matches(r, m) for m in link.match)]
        sets.append((link.name, "links file", idx, "total"))
    by_family: dict[tuple[str, str], list[int]] = {}
    by_workload: dict[str, list[int]] = {}
    for i, r in enumerate(rows):
        if r["op_family"] not in (None, "other") and r["dtype"] is not None:
            by_family.setdefault((r["op_family"], r["dtype"]), []).append(i)
        if r["workload"]:
            by_workload.setdefault(r["workload"], []).append(i)
    for (family, dt), idx in sorted(by_family.items()):
        sets.append((f"{family} · {dt}", "op_family·dtype", idx, "total"))
    for workload, idx in sorted(by_workload.items()):
        sets.append((f"workload {workload}", "workload", idx, "fastest"))

    out: list[dict[str, Any]] = []
    set_id = 0
    for label, link_by, idx, pick in sets:
        targets: dict[str, list[dict[str, Any]]] = {}
        for i in idx:
            targets.setdefault(rows[i]["target"], []).append(rows[i])
        if link_by != "links file" and len(targets) < 2:
            continue
        set_id += 1
        if not targets:
            # a links-file set whose tables match no run is kept, empty, and says so
            out.append(
                {"set_id": set_id, "set": label, "link_by": link_by, "runs": 0, "text": NO_MATCH}
            )
            continue
        ordered = sorted(targets.items(), key=lambda kv: (kv[1][0]["target_kind"] != "tile", kv[0]))
        for target, members in ordered:
            rep = (
                max(members, key=_total_time)
                if pick == "total"
                else min(
                    members,
                    key=lambda r: r["time_us"] if r["time_us"] is not None else float("inf"),
                )
            )
            out.append(
                {
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
                    "per": rep["per"],
                    "time_us": rep["time_us"],
                    "tflops": rep["tflops"],
                    "peak_fraction": rep["peak_fraction"],
                    "energy_j": rep["energy_j"],
                    "text": describe(rep),
                }
            )
    return pl.DataFrame(out, schema=LINKED_SCHEMA)


def _total_time(row: dict[str, Any]) -> float:
    if row["total_us"] is not None:
        return float(row["total_us"])
    if row["time_us"] is None:
        return float("-inf")
    return float(row["time_us"]) * (row["calls"] or 1)


def format_us(us: float | None) -> str:
    """``15.5 µs``, ``4.36 ms``, ``780 ms``: three significant digits."""
    if us is None:
        return "?"
    if us >= 1e6:
        return f"{us / 1e6:.3g} s"
    if us >= 1e3:
        return f"{us / 1e3:.3g} ms"
    return f"{us:.3g} µs"


def describe(row: dict[str, Any]) -> str:
    """One target's part of a linked set: target, implementation (else kernel), time, peak, J.

    E.g. ``NVIDIA A100-SXM4-40GB fp16_tensor_core 4.36 ms per GEMM at 81% of peak, 1.43 J``.
    """
    name = row.get("implementation") or row.get("kernel")
    if name:
        name = shorten(name, NAME_WIDTH)
    impl = f" {name}" if name else ""
    text = f"{shorten(row['target'], NAME_WIDTH)}{impl} {format_us(row['time_us'])}"
    if row.get("per"):
        text += f" per {row['per']}"
    if row.get("peak_fraction") is not None:
        text += f" at {row['peak_fraction']:.0%} of peak"
    if row.get("energy_j") is not None:
        text += f", {row['energy_j']:.3g} J"
    return text
