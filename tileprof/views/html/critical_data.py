"""``critical``'s part of the HTML pages: ``critical --format html`` and the report's
"Critical path" section. Per tile epoch or GPU step: the path's length, its breakdown by class
(a bar and a table), the groups, ops or kernels on it, the what-if re-timing and the single
edits ranked by gain (definitions: docs/metrics.md, "Critical path and what-if" and "GPU
critical path")."""

from __future__ import annotations

import html
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import polars as pl

from tileprof.core import numbers
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.view import CriticalScope, CriticalSection

if TYPE_CHECKING:
    from tileprof.analyses.critical import CriticalPath

BAR_COLOURS: tuple[str, ...] = (
    "#4c78a8",
    "#f58518",
    "#e45756",
    "#72b7b2",
    "#54a24b",
    "#eeca3b",
    "#b279a2",
    "#9d755d",
)
"""One colour per class, in the order of the breakdown (Vega's category palette)."""

TILE_PARTS: tuple[tuple[str, str], ...] = (
    ("computeCycles", "compute"),
    ("lateStartCycles", "late start"),
    ("gapCycles", "gaps"),
    ("exchangeWindowCycles", "exchange windows"),
    ("otherWindowCycles", "other windows"),
)
"""A tile epoch's path parts (``analyses.critical.PATH_PARTS``) and their printed names."""

DOCS = {
    "share": "part of the path's length",
    "gain_share": "gain ÷ the measured path's length",
    "what_if_us": "the step re-timed with this edit alone",
    "gain_us": "measured path − re-timed path",
}


def class_bar(parts: Sequence[tuple[str, float]], total: float) -> str:
    """The path's breakdown as one horizontal bar of inline SVG (names escaped, a ``title`` per
    part for its exact share); empty parts are left out."""
    width, height, x = 600.0, 22.0, 0.0
    rects = []
    for index, (name, amount) in enumerate(parts):
        if amount <= 0 or total <= 0:
            continue
        share = amount / total
        w = width * share
        label = html.escape(f"{name}: {numbers.percent(share)}")
        colour = BAR_COLOURS[index % len(BAR_COLOURS)]
        rects.append(
            f'<rect x="{x:.2f}" y="0" width="{w:.2f}" height="{height:.0f}" fill="{colour}">'
            f"<title>{label}</title></rect>"
        )
        if w > 90:
            rects.append(f'<text x="{x + 4:.2f}" y="15" font-size="11" fill="#fff">{label}</text>')
        x += w
    return (
        f'<svg class="critical-bar" role="img" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'width="{width:.0f}" height="{height:.0f}" aria-label="path by class">'
        + "".join(rects)
        + "</svg>"
    )


def _parts_table(id: str, parts: Sequence[tuple[str, float]], total: float, cycles: bool) -> Any:
    rows = [
        {
            "class": name,
            **({"cycles": int(amount)} if cycles else {"path_us": amount}),
            "share": amount / total if total else None,
        }
        for name, amount in parts
    ]
    columns = ["class", "cycles" if cycles else "path_us", "share"]
    frame = pl.DataFrame(
        rows, schema={"class": pl.String, columns[1]: pl.Float64, "share": pl.Float64}
    )
    return table_from_frame(id, frame, columns, percent=("share",), docs=DOCS)


def tile_section(
    result: CriticalPath, id: str = "critical", withheld: tuple[str, ...] = ()
) -> CriticalSection:
    """The view model of a tile dump's critical path: one scope per epoch (``withheld``: why
    its candidates are not shown)."""
    scopes = []
    for row in result.epochs.iter_rows(named=True):
        epoch, cycles = row["epoch"], row["cycles"]
        key = f"{id}-epoch-{'all' if epoch is None else epoch}"
        us = cycles / result.clock_hz * 1e6
        parts = [(name, float(row[part])) for part, name in TILE_PARTS]
        groups = result.groups.filter(pl.col("epoch").eq_missing(epoch))
        candidates = result.candidates.filter(pl.col("epoch").eq_missing(epoch))
        scopes.append(
            CriticalScope(
                id=key,
                title="the whole dump" if epoch is None else f"epoch {epoch}",
                length=f"{numbers.number(cycles)} cycles ({numbers.duration_us(us)})",
                length_us=us,
                bar=class_bar(parts, cycles),
                parts=_parts_table(f"{key}-parts", parts, cycles, cycles=True),
                on_path=table_from_frame(
                    f"{key}-groups",
                    groups.rename({"pathCycles": "cycles"}),
                    ["group", "cycles", "share"],
                    percent=("share",),
                    docs=DOCS,
                ),
                what_if=_tile_what_if(result, epoch),
                candidates=table_from_frame(
                    f"{key}-candidates",
                    candidates.rename(
                        {
                            "whatIfCycles": "what_if_cycles",
                            "gainCycles": "gain_cycles",
                            "gainShare": "gain_share",
                        }
                    ),
                    ["edit", "what_if_cycles", "gain_cycles", "gain_share"],
                    percent=("gain_share",),
                    docs=DOCS,
                ),
                withheld=withheld,
            )
        )
    edits = tuple(e.describe() for e in result.edits)
    return CriticalSection(id, tuple(scopes), edits, result.notes)


def _tile_what_if(result: CriticalPath, epoch: int | None) -> tuple[str, ...]:
    if result.what_if is None:
        return ()
    rows = result.what_if.filter(pl.col("epoch").eq_missing(epoch)).iter_rows(named=True)
    return tuple(
        f"{numbers.number(r['measuredCycles'])} → {numbers.number(r['whatIfCycles'])} cycles, "
        f"gain {numbers.number(r['gainCycles'])} cycles ({numbers.percent(r['gainShare'])}); "
        f"critical tile changed in {r['criticalTilesChanged']:,} supersteps"
        for r in rows
    )


def gpu_section(document: dict[str, Any], id: str = "critical") -> CriticalSection:
    """The view model of ``critical`` on traces (``model.gpu_critical.trace_critical``'s
    document): one scope per trace and step, then per step of the ranks' job."""
    scopes = []
    for t_index, trace in enumerate(document["traces"]):
        for s_index, step in enumerate(trace["steps"]):
            name = "the whole trace" if step["step"] is None else f"step {step['step']}"
            key = f"{id}-t{t_index}-s{s_index}"
            withheld = tuple(trace.get("candidatesWithheld") or ())
            scopes.append(_gpu_scope(key, f"{trace['trace']} · {name}", step, withheld))
    for step in document.get("job") or []:
        ranks = ", ".join(str(r) for r in step["ranksOnPath"])
        title = f"job step {step['step']} (ranks on the path: {ranks})"
        scopes.append(_gpu_scope(f"{id}-job-{step['step']}", title, step))
    return CriticalSection(id, tuple(scopes), tuple(document.get("edits") or ()))


def _gpu_scope(
    key: str, title: str, step: dict[str, Any], withheld: tuple[str, ...] = ()
) -> CriticalScope:
    length = step["pathNs"]
    parts = [(name, float(ns) / 1e3) for name, ns in step["classesNs"].items()]
    on_path = pl.DataFrame(
        step.get("onPath") or [],
        schema={
            "side": pl.String,
            "name": pl.String,
            "class": pl.String,
            "pathNs": pl.Int64,
            "count": pl.Int64,
        },
    ).with_columns(path_us=pl.col("pathNs") / 1e3, share=pl.col("pathNs") / (length or 1))
    candidates = pl.DataFrame(
        step.get("candidates") or [],
        schema={"edit": pl.String, "whatIfNs": pl.Int64, "gainNs": pl.Int64},
    ).with_columns(
        what_if_us=pl.col("whatIfNs") / 1e3,
        gain_us=pl.col("gainNs") / 1e3,
        gain_share=pl.col("gainNs") / (length or 1),
    )
    return CriticalScope(
        id=key,
        title=title,
        length=numbers.duration_us(length / 1e3),
        length_us=length / 1e3,
        bar=class_bar(parts, length / 1e3),
        parts=_parts_table(f"{key}-parts", parts, length / 1e3, cycles=False),
        on_path=table_from_frame(
            f"{key}-path",
            on_path,
            ["side", "name", "class", "path_us", "share", "count"],
            percent=("share",),
            docs=DOCS,
            kernels=("name",),
        ),
        what_if=_gpu_what_if(step),
        candidates=table_from_frame(
            f"{key}-candidates",
            candidates,
            ["edit", "what_if_us", "gain_us", "gain_share"],
            percent=("gain_share",),
            docs=DOCS,
        ),
        withheld=withheld,
    )


def _gpu_what_if(step: dict[str, Any]) -> tuple[str, ...]:
    what_if = step.get("whatIf")
    if what_if is None:
        return ()
    line = (
        f"{numbers.duration_us(step['pathNs'] / 1e3)} → "
        f"{numbers.duration_us(what_if['whatIfNs'] / 1e3)}, gain "
        f"{numbers.duration_us(what_if['gainNs'] / 1e3)} "
        f"({numbers.percent(what_if['gainNs'] / step['pathNs'] if step['pathNs'] else None)})"
    )
    return (line, *(f"note: {n}" for n in what_if.get("notes") or ()))
