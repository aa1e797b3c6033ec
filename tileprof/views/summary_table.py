"""``summary`` in the terminal: a header and the group table (rich)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from tileprof.analyses.summary import Summary
from tileprof.core import numbers
from tileprof.core.text import DISPLAY_NAME_LIMIT, cell, distinct_shortened, escape_control
from tileprof.views.fit import Fit, Fitted, fit_table, plain_console, print_fitted, strip_padding

TABLE_WIDTH = 200


def _integer(value: int | None) -> str:
    return numbers.number(value)


def _percent(value: float | None) -> str:
    return numbers.percent(value)


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


COLUMNS: list[tuple[str, str, Callable[[Any], str]]] = [
    ("samples", "sampleCount", _integer),
    ("tiles", "tileCount", _integer),
    ("phases", "phaseCount", _integer),
    ("phase cycles", "phaseCycles", _integer),
    ("phase ms", "phaseMs", numbers.number),
    ("avg tiles", "averageActiveTiles", numbers.number),
    ("useful", "usefulUtilization", _percent),
    ("lanes", "workLaneOccupancy", _percent),
    ("device", "deviceUsefulUtilization", _percent),
    ("p50", "p50Cycles", _integer),
    ("p95", "p95Cycles", _integer),
    ("max", "maximumCycles", _integer),
]
DROP_FIRST: tuple[str, ...] = (
    "lanes",
    "phases",
    "p50",
    "max",
    "tiles",
    "avg tiles",
    "p95",
    "samples",
    "device",
)
"""Columns left out, in this order, when the table would be wider than the terminal: the
figures people came for (phase ms, useful and device utilization) go last, and ``KEEP``
never."""
KEEP: tuple[str, ...] = ("phase cycles",)
"""Never dropped: the sort key (groups are sorted by phase cycles, largest first)."""


def _table(summary: Summary, shown: Sequence[str], name_limit: int) -> Table:
    """The group table; its figures are plain ``Text`` (numbers are never markup, and rich
    parses every ``str`` cell as markup again each time the fit measures the table)."""
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    table.add_column("group", overflow="fold")
    for dimension in summary.group_by:
        table.add_column(dimension)
    columns = [c for c in COLUMNS if c[0] in shown]
    for title, _, _ in columns:
        table.add_column(title, justify="right")
    names = distinct_shortened(summary.groups.get_column("name").to_list(), name_limit)
    for row, name in zip(summary.groups.iter_rows(named=True), names, strict=True):
        dims = [cell(None if row[d] is None else str(row[d])) for d in summary.group_by]
        table.add_row(cell(name), *dims, *(Text(fmt(row[key])) for _, key, fmt in columns))
    return table


FIT = Fit(
    titles=tuple(title for title, _, _ in COLUMNS),
    drop_first=DROP_FIRST,
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=KEEP,
)


def fitted_table(summary: Summary, console: Console, width: int) -> Fitted:
    """The group table, narrowed to ``width`` (tileprof.views.fit): names lose their middle
    first (down to 24 characters), then columns go in ``DROP_FIRST`` order."""
    return fit_table(partial(_table, summary), FIT, console, width)


def render(
    summary: Summary,
    device: str,
    width: int = TABLE_WIDTH,
    present: Sequence[str] = (),
) -> str:
    """Header lines, then one table row per group (every column defined in docs/metrics.md).

    ``present`` says what the profile holds (its epochs, its kernels) when nothing matched.
    ``width`` is the terminal's when the table goes to one (``fitted_table``)."""
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    for line in header_lines(summary, device):
        console.print(escape_control(line), markup=False)
    console.print()
    if summary.groups.height:
        print_fitted(console, fitted_table(summary, console, width), FIT)
    else:
        console.print("no samples matched", markup=False)
        for line in present:
            console.print(escape_control(line), markup=False)
    return strip_padding(buffer.getvalue())
