"""``summary`` in the terminal: a header and the group table (rich)."""

from __future__ import annotations

import io
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

from tileprof.summary import Summary
from tileprof.text import cell, escape_control

TABLE_WIDTH = 200


def _integer(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:.2f}%"


def _decimal(value: float | None, digits: int = 1) -> str:
    return "—" if value is None else f"{value:,.{digits}f}"


def header_lines(summary: Summary, device: str) -> list[str]:
    """Device, span, sample counts and the filters applied."""
    span = summary.profile_span_cycles
    span_text = "—" if span is None else f"{span:,} cycles ({summary.profile_span_ms:.6g} ms)"
    filters = " ".join(summary.filters.describe()) or "none"
    lines = [
        f"device   {device}",
        f"span     {span_text}",
        *_matched_span(summary),
        f"samples  {summary.matched_sample_count:,} matched of {summary.sample_count:,}",
        f"filters  {filters}",
    ]
    if summary.group_by:
        lines.append(f"group by {', '.join(summary.group_by)}")
    return lines


def _matched_span(summary: Summary) -> list[str]:
    """With a filter, the span of what matched (first matched start to last matched end)."""
    groups = summary.groups
    if not summary.filters.describe() or groups.height == 0:
        return []
    first, last = groups["firstOffset"].min(), groups["lastOffset"].max()
    if not isinstance(first, int) or not isinstance(last, int):
        return []
    ms = (last - first) * 1000 / summary.clock_hz
    return [f"matched  {last - first:,} cycles ({ms:.6g} ms), cycles {first:,} to {last:,}"]


def render(
    summary: Summary, device: str, width: int = TABLE_WIDTH, present: Sequence[str] = ()
) -> str:
    """Header lines, then one table row per group (every column defined in docs/metrics.md).

    ``present`` says what the profile holds (its epochs, its kernels) when nothing matched."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    table.add_column("group", overflow="fold")
    for dimension in summary.group_by:
        table.add_column(dimension)
    columns = [
        ("samples", "sampleCount", _integer),
        ("tiles", "tileCount", _integer),
        ("phases", "phaseCount", _integer),
        ("phase cycles", "phaseCycles", _integer),
        ("phase ms", "phaseMs", lambda v: _decimal(v, 6)),
        ("avg tiles", "averageActiveTiles", _decimal),
        ("useful", "usefulUtilization", _percent),
        ("lanes", "workLaneOccupancy", _percent),
        ("device", "deviceUsefulUtilization", _percent),
        ("p50", "p50Cycles", _integer),
        ("p95", "p95Cycles", _integer),
        ("max", "maximumCycles", _integer),
    ]
    for title, _, _ in columns:
        table.add_column(title, justify="right")
    for row in summary.groups.iter_rows(named=True):
        dims = [cell(None if row[d] is None else str(row[d])) for d in summary.group_by]
        table.add_row(cell(row["name"]), *dims, *(fmt(row[key]) for _, key, fmt in columns))
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, force_terminal=False, no_color=True, highlight=False
    )
    for line in header_lines(summary, device):
        console.print(escape_control(line), markup=False)
    console.print()
    if summary.groups.height:
        console.print(table)
    else:
        console.print("no samples matched", markup=False)
        for line in present:
            console.print(escape_control(line), markup=False)
    return buffer.getvalue()
