"""``critical`` in the terminal and as JSON/CSV: each epoch's critical path, its groups, the
what-if re-timing and the candidate edits ranked by their gain (docs/metrics.md, "Critical
path and what-if")."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tileprof.core.numbers import number
from tileprof.core.text import escape_control
from tileprof.views.fit import Fit, PlainColumn, dropped_line, fit_plain, wrap

if TYPE_CHECKING:
    from tileprof.analyses.critical import CriticalPath

TABLE_WIDTH = 200
"""The fixed width of files and pipes."""

PATH_TITLES = ("compute", "late start", "gaps", "exchange windows", "other windows")
GROUP_FIT = Fit(
    titles=("epoch", "group", "cycles on path", "share of epoch"),
    drop_first=("epoch",),
    full_width=TABLE_WIDTH,
    full_limit=80,
    keep=("group", "cycles on path"),
)
CANDIDATE_FIT = Fit(
    titles=("epoch", "edit", "what-if cycles", "gain cycles", "gain"),
    drop_first=("epoch", "what-if cycles"),
    full_width=TABLE_WIDTH,
    full_limit=80,
    keep=("edit", "gain cycles"),
)


def _epoch(value: object) -> str:
    return "—" if value is None else str(value)


def _cycles(value: Any, clock_hz: float) -> str:
    """``N cycles (µs)``: cycles / clockHz × 10⁶."""
    return f"{number(value)} cycles ({number(value / clock_hz * 1e6)} µs)"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.2f}%"


def path_lines(result: CriticalPath) -> list[str]:
    """Per epoch: its length and the parts of its critical path, each with its share."""
    from tileprof.analyses.critical import PATH_PARTS

    lines = []
    for row in result.epochs.iter_rows(named=True):
        cycles = row["cycles"]
        lines.append(
            f"epoch {_epoch(row['epoch'])}: {_cycles(cycles, result.clock_hz)}, "
            f"{row['supersteps']:,} supersteps"
        )
        for title, part in zip(PATH_TITLES, PATH_PARTS, strict=True):
            share = row[part] / cycles if cycles else None
            lines.append(f"  {title:<17}{number(row[part]):>12} cycles  {_percent(share):>7}")
    return lines


def what_if_lines(result: CriticalPath) -> list[str]:
    """The edits, then per epoch the re-timed length, the gain and the critical tiles moved."""
    if result.what_if is None:
        return []
    lines = ["what-if  " + ", ".join(e.describe() for e in result.edits)]
    lines += [f"  note: {escape_control(n)}" for n in result.notes]
    for row in result.what_if.iter_rows(named=True):
        lines.append(
            f"  epoch {_epoch(row['epoch'])}: {number(row['measuredCycles'])} → "
            f"{number(row['whatIfCycles'])} cycles, gain {number(row['gainCycles'])} "
            f"({_percent(row['gainShare'])}); critical tile changed in "
            f"{row['criticalTilesChanged']:,} supersteps"
        )
    return lines


def _plain_columns(
    fit: Fit, cells: Sequence[tuple[str, ...]], right: tuple[bool, ...]
) -> list[PlainColumn]:
    """The columns of ``fit``'s titles from the rows' cells (each empty where no row is)."""
    columns = list(zip(*cells, strict=True)) if cells else [()] * len(right)
    return [
        PlainColumn(t, list(c), right=r) for t, c, r in zip(fit.titles, columns, right, strict=True)
    ]


def _group_columns(result: CriticalPath) -> list[PlainColumn]:
    rows = result.groups.iter_rows(named=True)
    cells = [
        (_epoch(r["epoch"]), str(r["group"]), number(r["pathCycles"]), _percent(r["share"]))
        for r in rows
    ]
    return _plain_columns(GROUP_FIT, cells, (True, False, True, True))


def _candidate_columns(result: CriticalPath) -> list[PlainColumn]:
    rows = result.candidates.iter_rows(named=True)
    cells = [
        (
            _epoch(r["epoch"]),
            r["edit"],
            number(r["whatIfCycles"]),
            number(r["gainCycles"]),
            _percent(r["gainShare"]),
        )
        for r in rows
    ]
    return _plain_columns(CANDIDATE_FIT, cells, (True, False, True, True, True))


def _table(columns: list[PlainColumn], name: str, fit: Fit, width: int | None) -> list[str]:
    table, dropped = fit_plain(columns, name, fit, width)
    return table + (wrap(dropped_line(dropped), width or TABLE_WIDTH) if dropped else [])


def render_table(
    result: CriticalPath, device: str, width: int | None = None, withheld: Sequence[str] = ()
) -> str:
    """The device, each epoch's path, the what-if, the groups on the path and the
    candidates, largest gain first (``withheld``: why not, in their place)."""
    lines = [f"device   {device}", "", *path_lines(result)]
    if result.what_if is not None:
        lines += ["", *what_if_lines(result)]
    lines += ["", "groups on the critical path (Σ duration of the critical tiles' samples)"]
    lines += _table(_group_columns(result), "group", GROUP_FIT, width)
    if withheld:
        first, *rest = (escape_control(why) for why in withheld)
        lines += ["", f"what would it gain? not given: {first}", *(f"  also: {w}" for w in rest)]
    elif result.candidates.height:
        lines += ["", "what would it gain? single edits, largest gain first"]
        lines += _table(_candidate_columns(result), "edit", CANDIDATE_FIT, width)
    if width is not None:
        lines = [part for line in lines for part in _fold(line, width)]
    return "\n".join(lines) + "\n"


def _fold(line: str, width: int) -> Sequence[str]:
    return wrap(line, width, indent="    ") if len(line) > width else [line]


def render_json(result: CriticalPath, withheld: Sequence[str] = ()) -> str:
    """The document of ``CriticalPath.to_document``, with ``candidatesWithheld``: why the
    dump's failed capture checks undermine the candidates (empty: they hold)."""
    document = {**result.to_document(), "candidatesWithheld": list(withheld)}
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(result: CriticalPath) -> str:
    """One row per epoch: the measured path's parts, and with edits the re-timed figures."""
    frame = result.epochs
    if result.what_if is not None:
        what_if = result.what_if.select(
            "epoch", "whatIfCycles", "gainCycles", "gainShare", "criticalTilesChanged"
        )
        frame = frame.join(what_if, on="epoch", how="left", nulls_equal=True)
    return frame.write_csv(float_precision=None)


def gpu_critical_text(document: dict[str, Any]) -> str:
    """``critical`` on traces as text: per trace and step the path length, its ns per class,
    the what-if re-timing and the candidates ranked by gain; per step of a job the path
    through the ranks (docs/metrics.md, "GPU critical path"). The trace's name, the notes and
    the candidates (kernel names) come from the input: their control characters are escaped."""
    lines: list[str] = []
    for trace in document["traces"]:
        lines.append(f"Critical path of {escape_control(trace['trace'])}")
        for step in trace["steps"]:
            name = "the whole trace" if step["step"] is None else f"step {step['step']}"
            lines.extend(_step_lines(name, step, document["edits"]))
            withheld = trace.get("candidatesWithheld") or []
            if withheld:
                lines.append(f"  largest gain first: not given: {escape_control(withheld[0])}")
                lines.extend(f"    also: {escape_control(why)}" for why in withheld[1:])
                continue
            lines.append("  largest gain first:")
            for row in step["candidates"]:
                edit = escape_control(row["edit"][:90])  # a kernel's name from the trace
                lines.append(f"    {row['gainNs'] / 1e3:>10,.1f} µs  {edit}")
    for step in document["job"] or []:
        ranks = ", ".join(str(r) for r in step["ranksOnPath"])
        title = (
            f"job step {step['step']} ({step['collectives']} collectives; ranks on path: {ranks})"
        )
        lines.extend(_step_lines(title, step, document["edits"]))
    return "\n".join(lines) + "\n"


def _step_lines(title: str, step: dict[str, Any], edits: list[str]) -> list[str]:
    length = step["pathNs"]
    lines = [f"{title}: path {length / 1e3:,.1f} µs"]
    for name, ns in step["classesNs"].items():
        share = 100 * ns / length if length else 0.0
        lines.append(f"  {name:<12} {ns / 1e3:>12,.1f} µs {share:5.1f}%")
    what_if = step["whatIf"]
    if what_if is not None:
        new, gain = what_if["whatIfNs"] / 1e3, what_if["gainNs"] / 1e3
        lines.append(f"  what-if {' + '.join(edits)}: {new:,.1f} µs, gain {gain:,.1f} µs")
        lines.extend(f"  note: {escape_control(note)}" for note in what_if["notes"])
    return lines


def gpu_critical_csv(document: dict[str, Any]) -> str:
    """``critical --format csv`` on traces: one row per trace and step (and per job step,
    trace ``job``): the path's ns, its ns per class, and the what-if's ns and gain."""
    import polars as pl

    rows = []
    scopes = [(t["trace"], t["rank"], t["steps"]) for t in document["traces"]]
    scopes.append(("job", None, document["job"] or []))
    for trace, rank, steps in scopes:
        for step in steps:
            what_if = step["whatIf"] or {}
            rows.append(
                {
                    "trace": trace,
                    "rank": rank,
                    "step": step["step"],
                    "pathNs": step["pathNs"],
                    **{f"{name}Ns": ns for name, ns in step["classesNs"].items()},
                    "whatIfNs": what_if.get("whatIfNs"),
                    "gainNs": what_if.get("gainNs"),
                }
            )
    return pl.DataFrame(rows, infer_schema_length=None).write_csv()
