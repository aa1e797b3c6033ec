"""``diff --format html`` and the report's baseline section: the view model of a ``Diff``.

Everything shown is a figure of ``tileprof.analyses.diff.Diff`` (docs/metrics.md, "Diff");
this module only selects, formats and charts it. Names reach the page through the templates'
escaping and, in charts, as text drawn as paths.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from tileprof._version import __version__
from tileprof.analyses.comparability import setup_note
from tileprof.analyses.diff import STATUSES, Diff, Side
from tileprof.analyses.shared_work import work_note
from tileprof.core import numbers
from tileprof.views.diff_text import STATUS_MARKS
from tileprof.views.html import charts
from tileprof.views.html.data import (
    GROUP_PERCENT_FIELDS,
    format_number,
    generation_time,
    number_cell,
    text_cell,
)
from tileprof.views.html.view import Cell, Chart, Column, Figure

WATERFALL_GROUPS = 20
"""Groups the waterfall draws one by one; the rest are one bar ("other N groups")."""

BAR_GROUPS = 10
"""Top groups in the before/after chart."""


@dataclass(frozen=True)
class DiffInput:
    """One side as the header lists it."""

    role: str
    path: str
    kind: str
    sha256: str | None


@dataclass(frozen=True)
class DiffRow:
    """One table row: its status (for the marker) and its cells."""

    status: str
    cells: tuple[Cell, ...]


@dataclass(frozen=True)
class DiffSection:
    """The comparison: inputs, headline figures, charts and the full table."""

    id: str
    title: str
    inputs: tuple[DiffInput, ...]
    figures: tuple[Figure, ...]
    charts: tuple[Chart, ...]
    columns: tuple[Column, ...]
    rows: tuple[DiffRow, ...]
    broken: tuple[str, ...] = ()
    hint: str = "Every group of either side, largest change first."
    """Which rows the table holds (all, or the ``--top`` largest changes)."""
    abstained: tuple[str, ...] = ()
    """Why ``--fail-on`` gave no verdict (a failed capture check), one line each."""
    setup_note: str | None = None
    """Said first when the two sides ran on different setups (``comparability.setup_note``)."""
    work_note: str | None = None
    """Said next when the groups both sides have hold little of either side's time
    (``shared_work.work_note``)."""


@dataclass(frozen=True)
class DiffPage:
    """A page holding only the comparison."""

    title: str
    version: str
    generated_at: str
    section: DiffSection


def _input(role: str, side: Side) -> DiffInput:
    return DiffInput(role, side.label, side.kind, side.sha256)


def _change_text(figure: dict[str, Any], *, percent: bool = False) -> str:
    change, relative = figure["change"], figure["relative"]
    if change is None:
        return "—"
    if percent:
        return numbers.points(change)
    sign = "+" if change > 0 else ""
    rel = "" if relative is None else f", {_relative_text(relative)}"
    return f"{sign}{format_number(change)}{rel}"


def _relative_text(value: float | None) -> str:
    return numbers.percent(value, signed=True)


def _figure(
    label: str, figure: dict[str, Any], definition: str, *, percent: bool = False
) -> Figure:
    before = format_number(figure["before"], percent=percent)
    after = format_number(figure["after"], percent=percent)
    text = f"{before} → {after} ({_change_text(figure, percent=percent)})"
    return Figure(label, figure["change"], text, definition)


def _top_share_definition(diff: Diff) -> str:
    """``topShare``'s definition: a GPU diff's rows are ordered by ``time_effect_us`` (the
    change the call counts do not explain), whose gross the share is of."""
    if diff.order == f"{diff.impact}_change":
        return f"topShare: Σ |{diff.order}| of the top rows / {diff.impact}GrossChange"
    return f"topShare: Σ |{diff.order}| of the top rows / Σ |{diff.order}| of every row"


def headline(diff: Diff) -> tuple[Figure, ...]:
    """The header figures of docs/metrics.md, "Diff"."""
    h = diff.header
    impact = diff.impact
    figures = []
    if impact == "phaseCycles":
        figures += _sample_figures(diff) if diff.samples_differ else []
        figures += [
            _figure("Matched span (cycles)", h["matchedSpanCycles"], "matchedSpanCycles"),
            *([] if diff.samples_differ else [_matched_samples(h)]),
            _figure("Device busy", h["deviceBusy"], "deviceBusy", percent=True),
        ]
    elif diff.calls_differ:
        figures += _call_figures(diff)
    else:
        figures.append(_figure("Total µs", h["totalUs"], "Σ total_us over the rows"))
    net = h[f"{impact}NetChange"]
    share = h["topShare"]
    figures += [
        Figure(
            f"Net change in {impact}",
            net,
            ("+" if net is not None and net > 0 else "") + format_number(net),
            f"{impact}NetChange: Σ {impact}_change",
        ),
        Figure(
            f"Top {h['topGroups']} groups explain",
            share,
            format_number(share, percent=True),
            _top_share_definition(diff),
        ),
        Figure(
            "Groups",
            None,
            ", ".join(f"{h['groups'][s]} {s} ({STATUS_MARKS[s]})" for s in STATUSES),
            "added, removed, changed, unchanged",
        ),
        Figure(
            "Filters",
            None,
            " ".join(_filters(diff)) or "none",
            "the filters both sides were read with",
        ),
    ]
    return tuple(figures)


def _matched_samples(h: dict[str, Any]) -> Figure:
    return _figure("Matched samples", h["matchedSampleCount"], "matchedSampleCount")


def _sample_figures(diff: Diff) -> list[Figure]:
    """A tile diff whose groups hold different numbers of samples: the samples first, then
    the change in work cycles per sample at equal samples."""
    h = diff.header
    differ = h["groupsWithOtherSamples"]
    per_sample = h["perSample"]
    return [
        _figure(
            "Matched samples (differ: compare cycles per sample, not total cycles)",
            h["matchedSampleCount"],
            f"matchedSampleCount; {differ} {'groups hold' if differ != 1 else 'group holds'} a "
            "different number of samples",
        ),
        Figure(
            "Work cycles per sample, at equal samples",
            per_sample["relative"],
            f"{_relative_text(per_sample['relative'])} ({format_number(per_sample['before'])} → "
            f"{format_number(per_sample['after'])} cycles)",
            "perSample: Σ workCycles_before × sampleCount_after / sampleCount_before against "
            "Σ workCycles_after, over the groups both sides hold",
        ),
    ]


def _call_figures(diff: Diff) -> list[Figure]:
    """A GPU diff whose groups ran different numbers of times: the calls first, then the
    change per call at equal calls, then the total with what the call counts explain."""
    h = diff.header
    differ = h["groupsWithOtherCalls"]
    per_call = h["perCall"]
    split = (
        f"call counts {_signed(h['countEffectUs'])}, time per call "
        f"{_signed(per_call['change'])}, added and removed groups {_signed(h['oneSideUs'])}"
    )
    return [
        _figure(
            "Calls (differ: compare time per call, not total time)",
            h["calls"],
            f"Σ calls per side; {differ} group{'s' if differ != 1 else ''} ran a different "
            "number of times",
        ),
        Figure(
            "Time per call, at equal calls",
            per_call["relative"],
            f"{_relative_text(per_call['relative'])} ({format_number(per_call['before'])} → "
            f"{format_number(per_call['after'])} µs)",
            "perCall: Σ total_us_before × calls_after / calls_before against Σ total_us_after, "
            "over the groups both sides ran",
        ),
        _figure("Total µs", h["totalUs"], f"Σ total_us over the rows: {split}"),
    ]


def _signed(value: float) -> str:
    return ("+" if value > 0 else "") + format_number(value)


def _waterfall(diff: Diff, id: str) -> Chart | None:
    rows = diff.rows
    changes = rows.get_column(diff.order).fill_null(0).cast(pl.Float64).to_numpy()
    names = rows.get_column("group").to_list()
    shown = min(WATERFALL_GROUPS, len(names))
    values = changes[:shown]
    labels = list(names[:shown])
    if len(names) > shown:
        labels.append(f"other {len(names) - shown} groups")
        values = np.append(values, changes[shown:].sum())
    unit = "phase cycles" if diff.impact == "phaseCycles" else "total µs"
    caption = (
        f"Groups by |change in {diff.impact}|, largest first; each bar starts where the one "
        "above ended, the last is the net change. Red: more time; green: less."
    )
    counts = 0
    if diff.calls_differ:
        counts = 1
        labels.insert(0, "call counts (more or fewer calls, not a change of speed)")
        values = np.insert(values, 0, float(diff.header["countEffectUs"]))
        caption = (
            "The first bar (grey) is the change the groups' call counts explain: more or fewer "
            "calls, not faster or slower ones. Then groups by |change their call counts do not "
            "explain|, largest first; each bar starts where the one above ended, the last is "
            "the net change. Red: more time per call; green: less."
        )
    return charts.waterfall_chart(
        f"{id}-waterfall", tuple(labels), values, unit, caption, neutral=counts
    )


def _bars(diff: Diff, id: str) -> Chart | None:
    field = "usefulUtilization" if diff.impact == "phaseCycles" else "total_us"
    top = diff.rows.head(BAR_GROUPS)
    before = top.get_column(f"{field}_before").cast(pl.Float64).fill_null(0).to_numpy()
    after = top.get_column(f"{field}_after").cast(pl.Float64).fill_null(0).to_numpy()
    if field == "usefulUtilization":
        before, after = before * 100, after * 100
        title, xlabel = "Useful utilization, before and after", "usefulUtilization (%)"
    else:
        title, xlabel = "Total µs, before and after", "total_us"
    caption = (
        f"The top {top.height} groups of the table; a group absent from a side, or with "
        f"null {field}, has no bar there."
    )
    names = tuple(top.get_column("group").to_list())
    return charts.before_after_chart(f"{id}-bars", title, names, before, after, xlabel, caption)


def _columns(diff: Diff) -> tuple[Column, ...]:
    columns = [
        Column(
            "group",
            "group",
            False,
            "matching key (after --match and --normalize), after its status mark: + added, "
            "- removed, ~ changed, = unchanged; hover for each side's own name",
        ),
    ]
    if diff.calls_differ:
        columns += [
            Column(
                "time_effect_us",
                "Δ µs per call",
                True,
                "time_effect_us: the change in total_us the call counts do not explain "
                "(calls_after × Δ µs per call; an added or removed group's whole change)",
            ),
            Column(
                "count_effect_us",
                "Δ µs from calls",
                True,
                "count_effect_us: the change in total_us the change in calls explains "
                "(Δ calls × µs per call before): more or fewer calls, not faster ones",
            ),
        ]
    fields = changed_first(diff)
    columns += _field_columns(fields[:1])  # the figure the rows are sorted by, by the name
    if diff.confidence is not None:
        columns += _significance_columns(diff.confidence)
    return (*columns, *_field_columns(fields[1:]))


def _field_columns(fields: list[str]) -> list[Column]:
    return [
        column
        for f in fields
        for column in (
            Column(f"{f}_change", f"{f} Δ", True, f"{f}_change: after − before"),
            Column(f"{f}_relative", "Δ %", True, f"{f}_relative: (after − before) / |before|"),
            Column(f"{f}_before", "before", True, f),
            Column(f"{f}_after", "after", True, f),
        )
    ]


def changed_first(diff: Diff) -> list[str]:
    """The fields in the order the table shows them: the one the rows are sorted by (its
    change next to the name), then those that changed in some shown row, then the unchanged
    ones, each a change first and both sides after it."""
    rows = diff.shown_rows()
    lead = diff.impact if diff.impact in diff.fields else None

    def changed(field: str) -> bool:
        column = f"{field}_change"
        if column not in rows.columns:
            return False
        values = rows[column].cast(pl.Float64).fill_nan(None).drop_nulls()
        return bool((values != 0).any())

    rest = [f for f in diff.fields if f != lead]
    ordered = [f for f in rest if changed(f)] + [f for f in rest if not changed(f)]
    return ([lead] if lead else []) + ordered


def _significance_columns(confidence: float) -> list[Column]:
    """The per-call verdict and its interval (docs/metrics.md, "Significance")."""
    level = f"{confidence * 100:g}%"
    return [
        Column("verdict", "per call", False, "changed / unchanged / not enough calls"),
        Column("perCall_change", "Δ % per call", True, "mean per call after / before − 1"),
        Column("perCall_low", f"{level} low", True, f"the {level} interval's low end"),
        Column("perCall_high", f"{level} high", True, f"the {level} interval's high end"),
    ]


def _row(record: dict[str, Any], columns: tuple[Column, ...]) -> DiffRow:
    cells = []
    for column in columns:
        value = record[column.key]
        if column.key == "group":
            cells.append(_group_cell(record))
        elif not column.numeric:
            cells.append(text_cell(value))
        elif column.key.endswith("_relative") or column.key.startswith("perCall_"):
            cells.append(_exact_cell(_relative_text(value), value))
        elif column.key.removesuffix("_change") in GROUP_PERCENT_FIELDS:
            cells.append(_exact_cell(numbers.points(value), value))  # a ratio's change: points
        else:
            percent = column.key.rsplit("_", 1)[0] in GROUP_PERCENT_FIELDS
            cells.append(number_cell(value, percent=percent))
    return DiffRow(record["status"], tuple(cells))


def _exact_cell(text: str, value: float | None) -> Cell:
    """A cell printed as ``text`` that sorts by ``value`` and holds it exactly in its title."""
    return Cell(text, None if value is None else float(value), "" if value is None else repr(value))


def _group_cell(record: dict[str, Any]) -> Cell:
    """The group with its status mark; the title names each side's own name when the key
    differs from it (a --match or --normalize pairing)."""
    group = record["group"]
    names = [(side, record[f"{side}Name"]) for side in ("before", "after")]
    renamed = [f"{side}: {name}" for side, name in names if name is not None and name != group]
    cell = text_cell(group)
    title = "; ".join(renamed) or cell.title
    return Cell(f"{STATUS_MARKS[record['status']]} {cell.text}", cell.sort, title)


def _filters(diff: Diff) -> list[str]:
    summary = diff.before.summary
    return [] if summary is None else list(summary.filters.describe())


def diff_page(diff: Diff, broken: tuple[str, ...] = ()) -> DiffPage:
    """The page of ``diff --format html``: a title and the comparison section."""
    return DiffPage(
        title=f"tileprof diff: {diff.before.label} → {diff.after.label}",
        version=__version__,
        generated_at=generation_time(),
        section=diff_section(diff, broken=broken),
    )


def diff_section(diff: Diff, *, id: str = "diff", broken: tuple[str, ...] = ()) -> DiffSection:
    """The comparison as a page section."""
    columns = _columns(diff)
    charted = [c for c in (_waterfall(diff, id), _bars(diff, id)) if c is not None]
    return DiffSection(
        id=id,
        title=f"Compared with {diff.before.label}",
        inputs=(_input("before", diff.before), _input("after", diff.after)),
        figures=headline(diff),
        charts=tuple(charted),
        columns=columns,
        rows=tuple(_row(r, columns) for r in diff.shown_rows().iter_rows(named=True)),
        broken=broken,
        hint=_rows_hint(diff),
        setup_note=setup_note(diff.before.environment, diff.after.environment),
        work_note=work_note(diff),
    )


def _rows_hint(diff: Diff) -> str:
    shown, total = diff.shown_rows().height, diff.rows.height
    if shown < total:
        return f"The {shown} largest changes of {total} groups (--top {shown}), largest first."
    return "Every group of either side, largest change first."
