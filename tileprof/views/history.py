"""``tileprof history`` as a terminal table, JSON, CSV or a self-contained HTML page."""

from __future__ import annotations

import io
from collections.abc import Sequence
from datetime import timezone
from typing import Any

import msgspec

from tileprof.core import numbers
from tileprof.core.text import DISPLAY_NAME_LIMIT, display_name, escape_control
from tileprof.model.store.history import (
    BAND_RUNS,
    FLOOR,
    MAD_SCALE,
    MIN_RUNS,
    SIGMAS,
    History,
    Point,
    Trend,
)
from tileprof.views.fit import Fit, PlainColumn, dropped_line, fit_plain, wrap

PERCENT_FIELDS = frozenset({"usefulUtilization", "deviceUsefulUtilization", "workLaneOccupancy"})


def rule() -> dict[str, Any]:
    """The regression rule's constants, as the JSON document states them."""
    return {
        "previousRuns": BAND_RUNS,
        "minimumRuns": MIN_RUNS,
        "sigmas": SIGMAS,
        "madScale": MAD_SCALE,
        "relativeFloor": FLOOR,
    }


def labels_text(labels: dict[str, str]) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(labels.items()))


def to_document(history: History) -> dict[str, Any]:
    """Runs, per-group per-field series (values, band, flags), flags and failures."""
    labels = {r.run: r.labels for r in history.runs}
    return {
        "order": history.order,
        "fields": list(history.fields),
        "rule": rule(),
        "runs": [
            {
                "run": r.run,
                "labels": r.labels,
                "source": r.source,
                "addedAt": r.added_at.astimezone(timezone.utc).isoformat(),
            }
            for r in history.runs
        ],
        "trends": [
            {
                "group": t.group,
                "field": t.field,
                "values": [p.value for p in t.points],
                "median": [p.median for p in t.points],
                "low": [p.low for p in t.points],
                "high": [p.high for p in t.points],
                "flags": [p.flag for p in t.points],
                **({"changePoints": _changes(t)} if history.change_points else {}),
            }
            for t in history.trends
        ],
        "flags": [
            {
                "run": p.run,
                "labels": labels[p.run],
                "group": t.group,
                "field": t.field,
                "value": p.value,
                "median": p.median,
                "low": p.low,
                "high": p.high,
                "direction": p.flag,
            }
            for t, p in history.flags()
        ],
        "failures": [
            {
                "threshold": f.threshold,
                "run": f.run,
                "group": f.group,
                "field": f.field,
                "baseline": f.baseline,
                "value": f.value,
                **({"changePoint": f.change} if f.change is not None else {}),
            }
            for f in history.failures
        ],
    }


def _changes(trend: Trend) -> list[dict[str, Any]]:
    return [
        {
            "run": c.run,
            "before": c.point.before,
            "after": c.point.after,
            "step": c.point.step,
            "pValue": c.point.p_value,
        }
        for c in trend.changes
    ]


def change_lines(history: History) -> list[str]:
    """``changes  N``, then one line per change point: group, field, the run it starts at,
    the levels before and after, the step and the confidence."""
    from tileprof.analyses.change_points import ALPHA

    changes = [(t, c) for t in history.trends for c in t.changes]
    lines = [f"changes  {len(changes)} (E-Divisive means, p ≤ {ALPHA:g})"]
    for trend, change in changes:
        point = change.point
        step = "—" if point.step is None else f"{point.step * 100:+.2f}%"
        lines.append(
            f"  {display_name(trend.group)} {trend.field}: from run {escape_control(change.run)}"
            f" {format_value(trend.field, point.before)} → "
            f"{format_value(trend.field, point.after)} ({step}, confidence "
            f"{point.confidence * 100:.1f}%)"
        )
    return lines


def render_json(history: History) -> str:
    """The document, indented by 2. Encoded by msgspec (a tenth of ``json.dumps``' time with an
    indent, which falls back to the pure-Python encoder); floats are shortest round-trip as
    with ``json``, written ``1e-05`` as ``0.00001`` and ``1e+16`` as ``1e16``."""
    return msgspec.json.format(msgspec.json.encode(to_document(history)), indent=2).decode() + "\n"


def render_csv(history: History) -> str:
    """One row per run, group and field: value, band and flag (empty cells when undefined)."""
    import csv

    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(["run", "group", "field", "value", "median", "low", "high", "flag"])
    for trend in history.trends:
        for p in trend.points:
            cells = (p.value, p.median, p.low, p.high)
            texts = ["" if c is None else repr(c) for c in cells]
            writer.writerow([p.run, trend.group, trend.field, *texts, p.flag or ""])
    return buffer.getvalue()


def format_value(field: str, value: float | None) -> str:
    if field in PERCENT_FIELDS:
        return numbers.percent(value)
    return numbers.number(value)


def _band_text(trend: Trend, point: Point) -> str:
    if point.low is None or point.high is None:
        return "—"
    return f"{format_value(trend.field, point.low)} … {format_value(trend.field, point.high)}"


TABLE_WIDTH = 200
"""The width of the tables in files and pipes."""
TREND_FIT = Fit(
    titles=("group", "field", "runs", "newest", "band", "flags"),
    drop_first=("runs", "flags", "band"),
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=("group", "field", "newest"),
)
"""A trend is its group and field: both stay, with the newest value."""
FLAG_FIT = Fit(
    titles=("run", "labels", "group", "field", "value", "band", "direction"),
    drop_first=("labels", "band"),
    full_width=TABLE_WIDTH,
    full_limit=DISPLAY_NAME_LIMIT,
    keep=("run", "group", "field", "value", "direction"),
)


def _trend_columns(history: History) -> list[PlainColumn]:
    rows = []
    for trend in history.trends:
        last = trend.points[-1]
        flagged = sum(p.flag is not None for p in trend.points)
        rows.append((
            trend.group, trend.field, str(sum(p.value is not None for p in trend.points)),
            format_value(trend.field, last.value), _band_text(trend, last),
            str(flagged) if flagged else "",
        ))  # fmt: skip
    cells = list(zip(*rows, strict=True)) if rows else [()] * 6
    right = (False, False, True, True, False, True)
    return [
        PlainColumn(title, list(column), right=r)
        for title, column, r in zip(TREND_FIT.titles, cells, right, strict=True)
    ]


def _flag_columns(history: History) -> list[PlainColumn]:
    labels = {r.run: r.labels for r in history.runs}
    rows = [
        (
            point.run, escape_control(labels_text(labels[point.run])) or "—",
            trend.group, trend.field, format_value(trend.field, point.value),
            _band_text(trend, point), point.flag or "",
        )
        for trend, point in history.flags()
    ]  # fmt: skip
    cells = list(zip(*rows, strict=True)) if rows else [()] * 7
    return [
        PlainColumn(title, list(column), right=False)
        for title, column in zip(FLAG_FIT.titles, cells, strict=True)
    ]


def render_table(history: History, width: int | None = None) -> str:
    """The newest run of each trend against its band, then every flag, then the failures.

    Plain aligned text (one line per trend whatever the name's length; cheap for thousands of
    trends, where laying out a rich table took seconds); names from the store are shown as
    ``display_name`` shows them (long ones elided in the middle, control characters escaped).
    On a terminal (``width``) the tables fit it as ``diff``'s does (``fit_plain``).
    """
    newest = history.runs[-1].run if history.runs else "—"
    lines = [
        f"runs     {len(history.runs)} (order: {history.order}; newest {escape_control(newest)})",
        f"band     median ± max({SIGMAS:g} × {MAD_SCALE} × MAD, {FLOOR:g} × |median|) "
        f"of the previous {BAND_RUNS} runs (at least {MIN_RUNS})",
        "",
    ]
    if width is not None:  # the lines above and the FAIL lines below break under their value
        lines = _wrapped(lines, width)
    if history.trends:
        table, dropped = fit_plain(_trend_columns(history), "group", TREND_FIT, width)
        lines += table + _dropped(dropped, width)
    else:
        lines.append("no stored statistics matched")
    if history.change_points:
        lines += ["", *change_lines(history)]
    flags = history.flags()
    lines += ["", f"flags    {len(flags)}"]
    if flags:
        table, dropped = fit_plain(_flag_columns(history), ("run", "group"), FLAG_FIT, width)
        lines += table + _dropped(dropped, width)
    failures = [
        f"FAIL     {failure.threshold}: {display_name(failure.group)} {failure.field} "
        f"{format_value(failure.field, failure.baseline)} → "
        f"{format_value(failure.field, failure.value)} in run {escape_control(failure.run)}"
        + _since(failure.change)
        for failure in history.failures
    ]
    lines += failures if width is None else _wrapped(failures, width)
    return "\n".join(lines) + "\n"


def _since(change: str | None) -> str:
    """A change-point failure's origin: the run whose change point started the level."""
    if change is None:
        return ""
    return f" (a change point from run {escape_control(change)}; baseline: the level before)"


def _wrapped(lines: Sequence[str], width: int) -> list[str]:
    """Lines longer than ``width`` broken at spaces, continued 9 columns in."""
    return [
        part
        for line in lines
        for part in (wrap(line, width, indent=" " * 9) if len(line) > width else [line])
    ]


def _dropped(dropped: Sequence[str], width: int | None) -> list[str]:
    return wrap(dropped_line(dropped, "--format csv"), width or TABLE_WIDTH) if dropped else []


def verdict(history: History) -> str:
    """The last line of a ``history --fail-on`` that broke thresholds: a verdict (exit 1),
    worded as one, not as an error."""
    failures = history.failures
    first = failures[0]
    count = f"{len(failures)} threshold{'s' if len(failures) > 1 else ''} failed"
    example = f"{first.threshold} ({display_name(first.group)})"
    lead = "" if len(failures) == 1 else "e.g. "
    return f"tileprof: {count} for run {escape_control(first.run)}: {lead}{example}"
