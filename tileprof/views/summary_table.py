"""``summary`` in the terminal: a header and the group table, in rich's look
(``views.fit.HeavyHeadTable``: a 1M-sample summary's table took as long in rich as its group
statistics)."""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from typing import Any

from tileprof.analyses.summary import Summary
from tileprof.core import numbers
from tileprof.core.text import (
    DISPLAY_NAME_LIMIT,
    display_name,
    distinct_shortened,
    escape_control,
)
from tileprof.views.fit import (
    Fit,
    HeavyHeadTable,
    dropped_line,
    fit_layout,
    plain_console,
    strip_padding,
)

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


def _name(text: str | None) -> str:
    """A name cell: ``display_name``, "—" when there is none (``core.text.cell``'s text)."""
    return display_name(text) if text else "—"


def _table_of(summary: Summary) -> Callable[[Sequence[str], int], HeavyHeadTable]:
    """What builds the group table for the columns shown and a name limit: the figures are
    formatted once, the names again for each limit."""
    groups = summary.groups
    figures = {title: [fmt(v) for v in groups.get_column(key)] for title, key, fmt in COLUMNS}
    dimensions = [
        [_name(None if v is None else str(v)) for v in groups.get_column(d)]
        for d in summary.group_by
    ]
    full_names = groups.get_column("name").to_list()

    def build(shown: Sequence[str], name_limit: int) -> HeavyHeadTable:
        titles = [title for title, _, _ in COLUMNS if title in shown]
        names = [_name(n) for n in distinct_shortened(full_names, name_limit)]
        columns = [names, *dimensions, *(figures[title] for title in titles)]
        right = [False] * (1 + len(dimensions)) + [True] * len(titles)
        rows = list(zip(*columns, strict=True))
        return HeavyHeadTable(["group", *summary.group_by, *titles], rows, right)

    return build


FIT = Fit(
    titles=tuple(title for title, _, _ in COLUMNS),
    drop_first=DROP_FIRST,
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=KEEP,
)


def fitted_table(summary: Summary, width: int) -> tuple[HeavyHeadTable, tuple[str, ...]]:
    """The group table, narrowed to ``width`` (tileprof.views.fit): names lose their middle
    first (down to 24 characters), then columns go in ``DROP_FIRST`` order; and the columns
    it lost."""
    table, dropped, _ = fit_layout(_table_of(summary), HeavyHeadTable.width, FIT, width)
    return table, dropped


def render(
    summary: Summary,
    device: str,
    width: int = TABLE_WIDTH,
    present: Sequence[str] = (),
) -> str:
    """Header lines, then one table row per group (every column defined in docs/metrics.md).

    ``present`` says what the profile holds (its epochs, its kernels) when nothing matched.
    ``width`` is the terminal's when the table goes to one (``fitted_table``)."""
    head = [*(escape_control(line) for line in header_lines(summary, device)), ""]
    if not summary.groups.height:
        nothing = ["no samples matched", *(escape_control(line) for line in present)]
        return _printed([*head, *nothing], width)
    table, dropped = fitted_table(summary, width)
    tail = [dropped_line(dropped, FIT.see_all)] if dropped else []
    rows = "".join(line + "\n" for line in table.lines())
    return _printed(head, width) + rows + _printed(tail, width)


def _printed(lines: Sequence[str], width: int) -> str:
    """``lines`` as rich's console prints them at ``width``: each as it is where it fits and
    holds no ``:`` (which rich may read as an emoji code), else through rich, which wraps it."""
    from rich.cells import cell_len

    if all(cell_len(line) <= width and ":" not in line for line in lines):
        return "".join(line.rstrip() + "\n" for line in lines)
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    for line in lines:
        console.print(line, markup=False)
    return strip_padding(buffer.getvalue())
