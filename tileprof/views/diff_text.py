"""``diff`` as text: the terminal table, the JSON document and CSV rows.

Every figure is one of ``tileprof.analyses.diff.Diff`` (defined in docs/metrics.md, "Diff"); these
functions only format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

from tileprof.analyses.diff import STATUSES, Diff
from tileprof.core import numbers


def _number(value: Any) -> str:
    return numbers.number(value)


def _signed(value: Any) -> str:
    if value is None:
        return "—"
    return ("+" if value > 0 else "") + _number(value)


def _percent(value: float | None) -> str:
    return numbers.percent(value, signed=True)


def _share(value: float | None) -> str:
    return numbers.percent(value)


def _points(change: float) -> str:
    """A change of a fraction, in percentage points."""
    return f"{change * 100:+.{numbers.PERCENT_DECIMALS}f} pp"


def _figure_line(title: str, figure: dict[str, Any], fmt: Callable[[Any], str] = _number) -> str:
    change = figure["change"]
    if change is None:
        signed = "—"
    elif fmt is _share:
        signed = _points(change)
    else:
        signed = _signed(change)
    return (
        f"{title:<16}{fmt(figure['before'])} → {fmt(figure['after'])}  "
        f"({signed}, {_percent(figure['relative'])})"
    )


def header_lines(diff: Diff, breaches: Sequence[str] = ()) -> list[str]:
    """Both inputs, the header figures and the status counts."""
    h = diff.header
    lines = [f"before          {diff.before.label} ({diff.before.kind})"]
    lines.append(f"after           {diff.after.label} ({diff.after.kind})")
    if diff.impact == "phaseCycles":
        lines.append(_figure_line("span cycles", h["profileSpanCycles"]))
        lines.append(_figure_line("matched samples", h["matchedSampleCount"]))
        lines.append(_figure_line("device busy", h["deviceBusy"], _share))
    else:
        lines.append(_figure_line("total µs", h["totalUs"]))
    lines.append(
        f"{diff.impact} change  net {_signed(h[f'{diff.impact}NetChange'])}, gross "
        f"{_number(h[f'{diff.impact}GrossChange'])}; top {h['topGroups']} groups explain "
        f"{_share(h['topShare'])} of the gross"
    )
    lines.append("groups          " + ", ".join(f"{h['groups'][s]} {s}" for s in STATUSES))
    return [*breaches, *lines]


_TILE_COLUMNS = (
    ("phase cycles", "phaseCycles", False),
    ("useful", "usefulUtilization", True),
    ("samples", "sampleCount", False),
    ("p95", "p95Cycles", False),
)
_GPU_COLUMNS = (
    ("total µs", "total_us", False),
    ("calls", "calls", False),
    ("µs/call", "time_us", False),
)


def _cells(row: dict[str, Any], key: str, fraction: bool) -> list[str]:
    """Before, after, Δ and Δ% of one statistic; fractions as percentages, Δ in points."""
    before, after, change = row[f"{key}_before"], row[f"{key}_after"], row[f"{key}_change"]
    if fraction:
        shown = [_share(v) for v in (before, after)]
        delta = "—" if change is None else _points(change)
        return [*shown, delta, _percent(row[f"{key}_relative"])]
    return [_number(before), _number(after), _signed(change), _percent(row[f"{key}_relative"])]


def render_table(diff: Diff, breaches: Sequence[str] = ()) -> str:
    """Broken thresholds, the header, then one line per group: status, the main statistics
    before, after, Δ and Δ%, and the group last (plain aligned columns: one line per group
    whatever the name's length, cheap to render for thousands of groups)."""
    columns = _TILE_COLUMNS if diff.impact == "phaseCycles" else _GPU_COLUMNS
    titles = ["status"]
    for title, _, _ in columns:
        titles += [f"{title} before", "after", "Δ", "Δ%"]
    table = [[*titles, "group"]]
    for row in diff.rows.iter_rows(named=True):
        cells = [row["status"]]
        for _, key, fraction in columns:
            cells += _cells(row, key, fraction)
        table.append([*cells, row["group"]])
    lines = [*header_lines(diff, breaches), ""]
    if diff.rows.height == 0:
        return "\n".join([*lines, "no groups on either side"]) + "\n"
    widths = [max(len(r[i]) for r in table) for i in range(len(titles))]
    for index, cells in enumerate(table):
        aligned = [cells[0].ljust(widths[0])]
        aligned += [c.rjust(w) for c, w in zip(cells[1:-1], widths[1:], strict=True)]
        lines.append("  ".join([*aligned, cells[-1]]))
        if index == 0:
            lines.append("  ".join("─" * w for w in [*widths, 5]))
    return "\n".join(lines) + "\n"


def to_document(diff: Diff, breaches: Sequence[str] = ()) -> dict[str, Any]:
    """The diff as one JSON object: inputs, header, broken thresholds and every row."""
    return {
        "before": _side(diff, "before"),
        "after": _side(diff, "after"),
        "impact": diff.impact,
        "header": diff.header,
        "broken": list(breaches),
        "groups": [_finite(row) for row in diff.rows.iter_rows(named=True)],
    }


def _side(diff: Diff, which: str) -> dict[str, Any]:
    side = diff.before if which == "before" else diff.after
    return {"path": side.label, "kind": side.kind, "sha256": side.sha256}


def _finite(row: dict[str, Any]) -> dict[str, Any]:
    """Infinite relative changes as the strings ``"+inf"``/``"-inf"`` (JSON has no infinity)."""
    return {
        k: ("+inf" if v > 0 else "-inf") if isinstance(v, float) and math.isinf(v) else v
        for k, v in row.items()
    }


def render_json(diff: Diff, breaches: Sequence[str] = ()) -> str:
    """``diff --format json``."""
    document = to_document(diff, breaches)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(diff: Diff) -> str:
    """``diff --format csv``: the rows with their column names; nulls are empty cells."""
    return diff.rows.write_csv(float_precision=None)
