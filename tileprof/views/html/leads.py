"""The sentence that opens each section of an HTML page: its main figure, read from the view
model the section shows (so the sentence and the table below it never disagree).

Each function takes what its template has and returns one sentence; the templates call them
(``environment`` registers ``LEADS`` as globals). Figures are printed by the one number policy
(``tileprof.core.numbers``) from the cells' own values.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from tileprof.analyses.findings import Finding
from tileprof.core import numbers
from tileprof.views.html.view import (
    BreakdownSection,
    Cell,
    ChartedTable,
    CriticalSection,
    GpuSection,
    QualityCheck,
    SuperstepSection,
    Table,
    TileSection,
)


def _index(table: Table, key: str) -> int | None:
    keys = [c.key for c in table.columns]
    return keys.index(key) if key in keys else None


def _value(cell: Cell) -> float | None:
    return cell.sort if isinstance(cell.sort, float) else None


def top_row(table: Table, by: str) -> tuple[Cell, ...] | None:
    """The row with the largest number in column ``by`` (None: no such column or number)."""
    index = _index(table, by)
    if index is None:
        return None
    rows = [r for r in table.rows if _value(r[index]) is not None]
    return max(rows, key=lambda r: _value(r[index]) or 0.0) if rows else None


def cell_text(table: Table, row: Sequence[Cell], key: str) -> str:
    """The printed text of ``row``'s ``key`` cell ("—" without that column)."""
    index = _index(table, key)
    return numbers.MISSING if index is None else row[index].text


def checks_lead(checks: Sequence[dict[str, Any]], unchecked: Sequence[Any] = ()) -> str:
    """How many capture checks failed, and the first of them; "every input" only when every
    input was checked."""
    failed = [c for c in checks if c.get("status") == "warn"]
    rest = ""
    if unchecked:
        inputs = "1 input" if len(unchecked) == 1 else f"{len(unchecked)} inputs"
        rest = f"; {inputs} not checked (tileprof has no capture checks for their kind)"
    if not checks:
        return f"No input of a kind tileprof checks{rest}."
    if not failed:
        every = "every checked input" if unchecked else "every input"
        return f"All {len(checks)} capture checks passed: {every} supports its figures{rest}."
    first = failed[0]
    return (
        f"{len(failed)} of {len(checks)} capture checks failed, first {first['check']} on "
        f"{first['input']}: the findings they undermine leave those inputs out, and each "
        f"section whose figures they undermine says so{rest}."
    )


def findings_lead(findings: Sequence[Finding]) -> str:
    """How many rules fired, and the first finding."""
    fired = [f for f in findings if f.status == "fired"]
    if not fired:
        return f"No rule of {len(findings)} fired."
    return f"{len(fired)} of {len(findings)} rules fired; first: {fired[0].text}"


def tile_lead(tile: TileSection) -> str:
    """The device's useful utilization and the group that holds the most phase cycles."""
    if tile.empty:
        return f"No sample of {numbers.number(tile.summary.sample_count)} matched the filters."
    known = {f.label: f.text for f in tile.headline if f.value is not None}
    useful = known.get("Device useful utilization")
    if useful is None:
        useful = "not known (no sample states its useful cycles)"
    row = top_row(tile.groups, "phaseCycles")
    heaviest = (
        ""
        if row is None
        else f"; {row[0].text} holds the most phase cycles "
        f"({cell_text(tile.groups, row, 'phaseCycles')})"
    )
    count = numbers.number(len(tile.groups.rows))
    return f"Device useful utilization {useful} over {count} groups{heaviest}."


def supersteps_lead(section: SuperstepSection) -> str:
    """The supersteps of the first epoch shown and the share lost to sync wait; abstained,
    with why, when a failed capture check of the dump undermines them."""
    if section.withheld:
        return (
            f"Abstained: {'; '.join(section.withheld)}. The figures below rest on this "
            "capture, and the ranked edits are not given."
        )
    epochs = section.result.epochs
    if epochs.height == 0:
        return "No supersteps: no compute sample of positive length is chosen."
    first = epochs.row(0, named=True)
    epoch = "—" if first["epoch"] is None else first["epoch"]
    return (
        f"Epoch {epoch}: {numbers.number(first['supersteps'])} supersteps, "
        f"{numbers.percent(first['syncWaitShare'])} of tile-cycles lost to sync wait."
    )


def gpu_lead(gpu: GpuSection) -> str:
    """How many runs, and the heaviest kernel (or the longest run without kernel tables)."""
    runs = f"{numbers.number(len(gpu.runs.rows) + gpu.kernel_rows)} GPU runs"
    heaviest = [
        (row, ct) for ct in gpu.kernels if (row := top_row(ct.table, "total_us")) is not None
    ]
    if heaviest:
        row, ct = max(
            heaviest, key=lambda p: _value(p[0][_index(p[1].table, "total_us") or 0]) or 0
        )
        name = cell_text(ct.table, row, "kernel")
        total = cell_text(ct.table, row, "total_us")
        return f"{runs}; the heaviest kernel is {name}, {total} in all ({ct.title[11:]})."
    row = top_row(gpu.runs, "time_us")
    if row is None:
        return f"{runs}, none with a time."
    name, time = cell_text(gpu.runs, row, "run"), cell_text(gpu.runs, row, "time_us")
    return f"{runs}; the longest is {name} at {time}."


def tile_ops_lead(tables: Sequence[ChartedTable]) -> str:
    """The heaviest op over every chip."""
    found = [(row, ct) for ct in tables if (row := top_row(ct.table, "total_us")) is not None]
    chips = f"{numbers.number(len(tables))} chip{'' if len(tables) == 1 else 's'}"
    if not found:
        return f"{chips}, no op with a time."
    row, ct = max(found, key=lambda p: _value(p[0][_index(p[1].table, "total_us") or 0]) or 0)
    name, total = cell_text(ct.table, row, "kernel"), cell_text(ct.table, row, "total_us")
    return f"{chips}; the heaviest op is {name}, {total} in all ({ct.title[7:]})."


def breakdown_lead(section: BreakdownSection) -> str:
    """The busy share of the longest window, and its exposed communication; of the windows
    whose trace no failed capture check undermines (abstained, with why, when none is left:
    ``BreakdownSection.withheld``)."""
    if not section.tables:
        return "No GPU window to break down."
    table = section.tables[0][1]
    busy_i, total_i = _index(table, "busy_us"), _index(table, "total_us")
    if top_row(table, "total_us") is None or busy_i is None or total_i is None:
        return "No GPU window with a span to break down."
    undermined = {name for name, _ in section.withheld}
    kept = [r for r in table.rows if not _undermined(cell_text(table, r, "trace"), undermined)]
    row = top_row(dataclasses.replace(table, rows=tuple(kept)), "total_us")
    if row is None:
        reasons = "; ".join(dict.fromkeys(why for _, why in section.withheld))
        return f"Abstained: {reasons}. The figures below rest on this capture."
    busy, total = _value(row[busy_i]), _value(row[total_i])
    share = None if busy is None or not total else busy / total
    where = " · ".join(_window_place(table, row))
    rest = "" if not undermined else "; the windows of captures that failed a check are left out"
    return (
        f"The device was busy {numbers.percent(share)} of the longest window ({where}, "
        f"{cell_text(table, row, 'total_us')}); exposed communication "
        f"{cell_text(table, row, 'exposed_comm_us')}{rest}."
    )


def _undermined(trace: str, names: set[str]) -> bool:
    """Whether a failed check undermines a breakdown row of ``trace``: one of its own, or one
    across a job's ranks (named ""); a table of one trace names none (``—``): any check is
    its own."""
    return bool(names) and ("" in names or trace in names or trace == numbers.MISSING)


def _window_place(table: Table, row: Sequence[Cell]) -> list[str]:
    """A breakdown window's trace, device (its name where the table has one) and step, each
    named: a bare "0" reads as either."""
    trace, name = cell_text(table, row, "trace"), cell_text(table, row, "device_name")
    device, step = cell_text(table, row, "device"), cell_text(table, row, "step")
    found = [trace] if trace != numbers.MISSING else []
    if name != numbers.MISSING:
        found.append(name)
    elif device != numbers.MISSING:
        found.append(f"device {device}")
    return found + ([f"step {step}"] if step != numbers.MISSING else [])


def linked_set_lead(ct: ChartedTable) -> str:
    """One linked set: the fastest target and how much longer the slowest takes, or (unlike
    work) the best fraction of peak."""
    table = ct.table
    times = _index(table, "time_us")
    rows = [r for r in table.rows if times is not None and (_value(r[times]) or 0) > 0]
    if times is not None and len(rows) >= 2 and ct.plot is not None and ct.plot.kind == "linked":
        fast = min(rows, key=lambda r: _value(r[times]) or 0.0)
        slow = max(rows, key=lambda r: _value(r[times]) or 0.0)
        ratio = (_value(slow[times]) or 0.0) / (_value(fast[times]) or 1.0)
        return (
            f"{cell_text(table, fast, 'target')} is fastest at {fast[times].text}; "
            f"{cell_text(table, slow, 'target')} takes {numbers.speedup(ratio)} as long."
        )
    best = top_row(table, "peak_fraction")
    if best is not None:
        return (
            f"{cell_text(table, best, 'target')} reaches the highest fraction of peak, "
            f"{cell_text(table, best, 'peak_fraction')}."
        )
    unlike = ct.plot is not None and ct.plot.kind == "linked_efficiency"
    if unlike or len(rows) >= 2:  # times of different work say nothing of which is faster
        return f"{len(table.rows)} runs of different work, none with a known peak: no comparison."
    return f"{len(table.rows)} runs, none with a time or a known peak to compare."


def linked_lead(report: Any) -> str:
    """How many linked sets and the first one's comparison; without sets, the widest spread
    over the devices of one target, else how many points the roofline places."""
    linked: Sequence[ChartedTable] = report.linked
    if linked:
        first = linked[0]
        return f"{len(linked)} linked sets; first, {first.title}: {linked_set_lead(first)}"
    devices: ChartedTable | None = report.devices
    row = None if devices is None else top_row(devices.table, "device_spread")
    if devices is not None and row is not None:
        return (
            f"No linked set; {len(devices.table.rows)} runs ran on several devices of one "
            f"target, the widest spread {cell_text(devices.table, row, 'device_spread')} "
            f"({cell_text(devices.table, row, 'kernel')})."
        )
    points = 0 if report.roofline is None else len(report.roofline.table.rows)
    return f"No linked set; {points} ops and tile groups placed on the roofline."


def quality_lead(quality: Sequence[QualityCheck]) -> str:
    """How many data-quality checks warn, and the first."""
    warned = [q for q in quality if q.status == "warn"]
    if not warned:
        return f"All {len(quality)} data-quality checks passed."
    first = warned[0]
    return (
        f"{len(warned)} of {len(quality)} data-quality checks warn; first {first.check} "
        f"({numbers.number(first.count)})."
    )


def diff_lead(section: Any) -> str:
    """A diff section: its net change and the group that changed most (the first row)."""
    figures = {f.label: f.text for f in section.figures}
    net = next(((k, v) for k, v in figures.items() if k.startswith("Net change")), None)
    opening = "No net change to report" if net is None else f"{net[0]}: {net[1]}"
    if not section.rows:
        return f"{opening}; no group on either side."
    first = section.rows[0]
    change = next(
        (c.text for col, c in zip(section.columns, first.cells, strict=True) if "Δ" in col.label),
        "—",
    )
    return f"{opening}; the largest change is {first.cells[0].text[2:]} ({change})."


LINKED_OPEN = 3
"""Linked sets shown open in "Across targets"; the others fold to their title and lead line
(a report of two traces can link thirty sets)."""


def critical_lead(section: CriticalSection) -> str:
    """The longest path, the class that holds most of it, and the largest single-edit gain."""
    if not section.scopes:
        return "No epoch or step to follow: no critical path."
    scope = max(section.scopes, key=lambda s: s.length_us)
    text = f"The longest critical path is {scope.length} ({scope.title})"
    part = top_row(scope.parts, "share")
    if part is not None:
        share, name = (cell_text(scope.parts, part, k) for k in ("share", "class"))
        text += f", {share} of it {name}"
    # the class can hide what the time is (copies count as gpu_compute): name the largest part
    on = top_row(scope.on_path, "share")
    key = "name" if _index(scope.on_path, "name") is not None else "group"
    if on is not None and _index(scope.on_path, key) is not None:
        kind = cell_text(scope.on_path, on, "class")  # a GPU step's part is of one class
        named = cell_text(scope.on_path, on, key) + (
            "" if kind == numbers.MISSING else f" ({kind})"
        )
        text += f"; {named} alone is {cell_text(scope.on_path, on, 'share')} of it"
    if scope.withheld:
        return f"{text}; its single-edit gains are not given: a capture check of its input failed."
    gain_key = "gain_cycles" if _index(scope.candidates, "gain_cycles") is not None else "gain_us"
    best = top_row(scope.candidates, gain_key)
    if best is not None and (_value(best[_index(scope.candidates, gain_key) or 0]) or 0) > 0:
        edit = cell_text(scope.candidates, best, "edit")
        gain = cell_text(scope.candidates, best, "gain_share")
        return f"{text}; the largest single-edit gain is {edit}, {gain} of it."
    return f"{text}; no single edit tried would shorten it."


LEADS: dict[str, Any] = {
    "LINKED_OPEN": LINKED_OPEN,
    "checks_lead": checks_lead,
    "findings_lead": findings_lead,
    "tile_lead": tile_lead,
    "supersteps_lead": supersteps_lead,
    "gpu_lead": gpu_lead,
    "tile_ops_lead": tile_ops_lead,
    "breakdown_lead": breakdown_lead,
    "critical_lead": critical_lead,
    "linked_lead": linked_lead,
    "linked_set_lead": linked_set_lead,
    "quality_lead": quality_lead,
    "diff_lead": diff_lead,
}
"""The lead of each section, by the name its template calls it (and ``LINKED_OPEN``)."""
