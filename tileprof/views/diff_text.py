"""``diff`` as text: the terminal table, the JSON document and CSV rows.

Every figure is one of ``tileprof.analyses.diff.Diff`` (defined in docs/metrics.md, "Diff"); these
functions only format.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import polars as pl

from tileprof.analyses.diff import STATUSES, Diff
from tileprof.core import numbers
from tileprof.core.text import DISPLAY_NAME_LIMIT, escape_control, shorten
from tileprof.views.fit import Fit, PlainColumn, dropped_line, fit_plain, wrap


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


def _figure_line(
    title: str, figure: dict[str, Any], fmt: Callable[[Any], str] = _number, unit: str = ""
) -> str:
    change = figure["change"]
    if change is None:
        signed = "—"
    elif fmt is _share:
        signed = numbers.points(change)
    else:
        signed = _signed(change)
    return (
        f"{title:<16}{fmt(figure['before'])} → {fmt(figure['after'])}{unit}  "
        f"({signed}, {_percent(figure['relative'])})"
    )


STATUS_MARKS = {"added": "+", "removed": "-", "changed": "~", "unchanged": "="}
"""The mark before each group's name: its status, in one column with the name."""


def header_lines(diff: Diff, breaches: Sequence[str] = ()) -> list[str]:
    """The figures first (the change, the matched span, samples, device busy, the status
    counts), then the filters and both inputs. When some group ran a different number of
    times on the two sides, the calls and the change per call come first, and the total
    shows what the call counts explain (docs/metrics.md, "Calls and time per call")."""
    h = diff.header
    share_of = (
        "of the change the call counts do not explain" if diff.calls_differ else ("of the gross")
    )
    lines = [
        f"{diff.impact:<16}net {_signed(h[f'{diff.impact}NetChange'])}, gross "
        f"{_number(h[f'{diff.impact}GrossChange'])}; the top {h['topGroups']} groups explain "
        f"{_share(h['topShare'])} {share_of}"
    ]
    if diff.impact == "phaseCycles":
        if diff.samples_differ:  # the samples and the change per sample lead
            lines = [*sample_lines(diff), *lines]
        lines.append(_figure_line("matched span", h["matchedSpanCycles"], unit=" cycles"))
        if not diff.samples_differ:
            lines.append(_figure_line("matched samples", h["matchedSampleCount"]))
        lines.append(_figure_line("device busy", h["deviceBusy"], _share))
    elif diff.calls_differ:
        lines = [*call_lines(diff), *lines]
    else:
        lines.append(_figure_line("total µs", h["totalUs"]))
    counts = ", ".join(f"{h['groups'][s]} {s} ({STATUS_MARKS[s]})" for s in STATUSES)
    if "significance" in h:
        counts += f"; {significance_text(h['significance'])}"
    lines.append(f"groups          {counts}")
    lines.append(f"filters         {' '.join(_filters(diff)) or 'none'}")
    lines.append(f"before          {diff.before.label} ({diff.before.kind})")
    lines.append(f"after           {diff.after.label} ({diff.after.kind})")
    return [*breaches, *lines]


def significance_text(figures: dict[str, Any]) -> str:
    """How many paired groups changed per call, at which level, over how many resamples."""
    counts = ", ".join(f"{n} {v}" for v, n in figures["verdicts"].items())
    return (
        f"per call {counts} (mean per call, {figures['confidence'] * 100:g}% bootstrap "
        f"interval, {figures['resamples']:,} resamples, at least {figures['minimumCalls']} "
        "calls or samples a side)"
    )


def call_lines(diff: Diff) -> list[str]:
    """The headline of a GPU diff whose groups ran different numbers of times: the calls,
    the change per call at equal calls, then the total with what the call counts explain."""
    h = diff.header
    per_call = h["perCall"]
    differ = h["groupsWithOtherCalls"]
    return [
        _figure_line("calls", h["calls"])
        + f"; {differ} group{'s' if differ != 1 else ''} ran a different number of times: "
        "compare time per call, not total time",
        f"{'per call':<16}{_percent(per_call['relative'])} at equal calls (before scaled to "
        f"the after side's calls: {_number(per_call['before'])} → "
        f"{_number(per_call['after'])} µs, {_signed(per_call['change'])})",
        _figure_line("total µs", h["totalUs"])
        + f"; call counts {_signed(h['countEffectUs'])}, time per call "
        f"{_signed(per_call['change'])}, added and removed groups {_signed(h['oneSideUs'])}",
    ]


def sample_lines(diff: Diff) -> list[str]:
    """The headline of a tile diff whose groups hold different numbers of samples: the
    samples first, then the change in work cycles per sample at equal samples."""
    h = diff.header
    per_sample = h["perSample"]
    differ = h["groupsWithOtherSamples"]
    return [
        _figure_line("matched samples", h["matchedSampleCount"])
        + f"; {differ} {'groups hold' if differ != 1 else 'group holds'} a different number "
        "of samples: compare cycles per sample, not total cycles",
        f"{'per sample':<16}{_percent(per_sample['relative'])} at equal samples (work cycles, "
        f"before scaled to the after side's samples: {_number(per_sample['before'])} → "
        f"{_number(per_sample['after'])}, {_signed(per_sample['change'])})",
    ]


def _filters(diff: Diff) -> list[str]:
    """The filters both sides were read with, as options (a tile diff's summaries hold them)."""
    summary = diff.before.summary
    return [] if summary is None else list(summary.filters.describe())


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
_OP_COLUMNS = (*_GPU_COLUMNS, ("% of roofline", "roofline_fraction", True))
"""A per-op diff of traces adds each op's fraction of its roofline (docs/runs.md)."""
_PARTS = ("before", "after", "Δ", "Δ%")


def statistics(diff: Diff) -> tuple[tuple[str, str, bool], ...]:
    """The statistics the table shows (title, field, whether a fraction), the sort
    statistic first: tile groups' or GPU rows'."""
    if diff.impact == "phaseCycles":
        return _TILE_COLUMNS
    columns = _OP_COLUMNS if "roofline_fraction_before" in diff.rows.columns else _GPU_COLUMNS
    if diff.calls_differ:  # the time per call leads; the total follows the calls
        return (columns[2], columns[1], columns[0], *columns[3:])
    return columns


def _fit(columns: Sequence[tuple[str, str, bool]], verdicts: bool = False) -> Fit:
    """Drop the least wanted statistics first, each from its right end (Δ%, Δ, after,
    before), so that what is left keeps its title, then the per-call verdict; the main
    statistic's change and the group stay."""
    main, rest = columns[0][0], [title for title, _, _ in reversed(columns[1:])]
    keys = [f"{title} {part}" for title, _, _ in columns for part in _PARTS]
    drop = [f"{title} {part}" for title in rest for part in reversed(_PARTS)]
    if verdicts:
        keys.append(PER_CALL)
        drop.append(PER_CALL)
    drop += [f"{main} Δ%", f"{main} before", f"{main} after"]
    return Fit(
        titles=(*keys, "group"),
        drop_first=tuple(drop),
        full_width=TABLE_WIDTH,
        full_limit=DISPLAY_NAME_LIMIT,
        keep=(f"{main} Δ", "group"),
    )


PER_CALL = "per call"
"""The column of each group's per-call verdict and interval (docs/metrics.md,
"Significance")."""


def verdict_text(row: dict[str, Any]) -> str:
    """A group's per-call verdict: ``changed +3.10% [+1.20%, +5.00%]``, ``unchanged …``, or
    ``few calls +2.00%``; "—" for a group one side lacks."""
    verdict = row.get("verdict")
    if verdict is None:
        return "—"
    change = _percent(row["perCall_change"])
    low, high = row["perCall_low"], row["perCall_high"]
    if low is None or high is None:
        return f"few calls {change}"
    return f"{verdict} {change} [{_percent(low)}, {_percent(high)}]"


TABLE_WIDTH = 200
"""The width of the table in files and pipes (names up to ``DISPLAY_NAME_LIMIT``)."""


def _cells(row: dict[str, Any], key: str, fraction: bool) -> list[str]:
    """Before, after, Δ and Δ% of one statistic; fractions as percentages, Δ in points."""
    before, after, change = row[f"{key}_before"], row[f"{key}_after"], row[f"{key}_change"]
    if fraction:
        shown = [_share(v) for v in (before, after)]
        delta = "—" if change is None else numbers.points(change)
        return [*shown, delta, _percent(row[f"{key}_relative"])]
    return [_number(before), _number(after), _signed(change), _percent(row[f"{key}_relative"])]


def _plain_columns(diff: Diff, rows: pl.DataFrame) -> list[PlainColumn]:
    columns = statistics(diff)
    cells: list[list[str]] = [[] for _ in range(4 * len(columns))]
    for row in rows.iter_rows(named=True):
        for index, (_, key, fraction) in enumerate(columns):
            for part, text in enumerate(_cells(row, key, fraction)):
                cells[4 * index + part].append(text)
    plain = [
        PlainColumn(f"{title} {part}", cells[4 * i + p], title=part, group=title)
        for i, (title, _, _) in enumerate(columns)
        for p, part in enumerate(_PARTS)
    ]
    if diff.confidence is not None:
        verdicts = [verdict_text(row) for row in rows.iter_rows(named=True)]
        plain.append(PlainColumn(PER_CALL, verdicts, right=False))
    marks = [STATUS_MARKS[s] + " " for s in rows.get_column("status").to_list()]
    names = rows.get_column("group").to_list()
    return [*plain, PlainColumn("group", names, right=False, prefixes=marks)]


def render_table(diff: Diff, breaches: Sequence[str] = (), width: int | None = None) -> str:
    """The header figures, then one line per group shown: the main statistics before, after,
    Δ and Δ%, and the group last with its status mark (plain aligned columns, cheap to render
    for thousands of groups), fitted to ``width`` (a terminal's; None: files and pipes)."""
    header = [escape_control(line) for line in header_lines(diff, breaches)]  # names, paths
    lines = [*_fitted_lines(header, width), ""]
    rows = diff.shown_rows()
    if diff.rows.height == 0:
        return "\n".join([*lines, "no groups on either side"]) + "\n"
    columns = _plain_columns(diff, rows)
    fit = _fit(statistics(diff), diff.confidence is not None)
    table, dropped = fit_plain(columns, "group", fit, width)
    lines += table
    if rows.height < diff.rows.height:
        lines.append(f"the {rows.height} largest changes of {diff.rows.height} groups (--top)")
    if dropped:
        lines += wrap(dropped_line(_whole_statistics(dropped)), width or TABLE_WIDTH)
    return "\n".join(lines) + "\n"


def _fitted_lines(lines: Sequence[str], width: int | None) -> list[str]:
    """Header lines on a terminal: broken at spaces under their value (16 columns in), a
    word longer than the line (a path) losing its middle."""
    if width is None:
        return list(lines)
    fitted = []
    for line in lines:
        for part in wrap(line, width, indent=" " * 16) if len(line) > width else [line]:
            fitted.append(part if len(part) <= width else shorten(part, width))
    return fitted


def _whole_statistics(dropped: Sequence[str]) -> list[str]:
    """The dropped columns, a statistic whose four columns all went named once."""
    named: list[str] = []
    for key in dropped:
        statistic = key.rsplit(" ", 1)[0]
        whole = all(f"{statistic} {part}" in dropped for part in _PARTS)
        text = statistic if whole else key
        if text not in named:
            named.append(text)
    return named


def to_document(diff: Diff, breaches: Sequence[str] = ()) -> dict[str, Any]:
    """The diff as one JSON object: inputs, header, broken thresholds and every row."""
    return {
        "before": _side(diff, "before"),
        "after": _side(diff, "after"),
        "impact": _finite(diff.impact),
        "header": _finite(diff.header),
        "broken": list(breaches),
        "groups": [_finite(row) for row in diff.shown_rows().iter_rows(named=True)],
    }


def _side(diff: Diff, which: str) -> dict[str, Any]:
    side = diff.before if which == "before" else diff.after
    return {"path": side.label, "kind": side.kind, "sha256": side.sha256}


def _finite(value: Any) -> Any:
    """Infinite relative changes as the strings ``"+inf"``/``"-inf"`` (JSON has no infinity),
    in a row, the header (a total that grew from 0) or anything nested in them."""
    if isinstance(value, float) and math.isinf(value):
        return "+inf" if value > 0 else "-inf"
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def render_json(diff: Diff, breaches: Sequence[str] = ()) -> str:
    """``diff --format json``."""
    document = to_document(diff, breaches)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(diff: Diff) -> str:
    """``diff --format csv``: the rows with their column names; nulls are empty cells."""
    return diff.shown_rows().write_csv(float_precision=None)
