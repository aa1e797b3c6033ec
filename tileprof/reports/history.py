"""``tileprof history`` as a terminal table, JSON, CSV or a self-contained HTML page."""

from __future__ import annotations

import io
import json
from datetime import timezone
from typing import Any

from rich.console import Console
from rich.table import Table

from tileprof import numbers
from tileprof.store.history import (
    BAND_RUNS,
    FLOOR,
    MAD_SCALE,
    MIN_RUNS,
    SIGMAS,
    History,
    Point,
    Trend,
)

TABLE_WIDTH = 200
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
            }
            for f in history.failures
        ],
    }


def render_json(history: History) -> str:
    return json.dumps(to_document(history), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


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


def render_table(history: History, width: int = TABLE_WIDTH) -> str:
    """The newest run of each trend against its band, then every flag, then the failures."""
    buffer = io.StringIO()
    console = Console(
        file=buffer, width=width, force_terminal=False, no_color=True, highlight=False
    )
    newest = history.runs[-1].run if history.runs else "—"
    console.print(
        f"runs     {len(history.runs)} (order: {history.order}; newest {newest})", markup=False
    )
    console.print(
        f"band     median ± max({SIGMAS:g} × {MAD_SCALE} × MAD, {FLOOR:g} × |median|) "
        f"of the previous {BAND_RUNS} runs (at least {MIN_RUNS})",
        markup=False,
    )
    console.print()
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    for title in ("group", "field", "runs", "newest", "band", "flags"):
        table.add_column(title, justify="left" if title in ("group", "field", "band") else "right")
    for trend in history.trends:
        last = trend.points[-1]
        count = sum(p.value is not None for p in trend.points)
        flagged = sum(p.flag is not None for p in trend.points)
        table.add_row(
            trend.group, trend.field, str(count), format_value(trend.field, last.value),
            _band_text(trend, last), str(flagged) if flagged else "",
        )  # fmt: skip
    console.print(table if history.trends else "no stored statistics matched", markup=False)
    flags = history.flags()
    console.print()
    console.print(f"flags    {len(flags)}", markup=False)
    if flags:
        flag_table = Table(show_edge=False, header_style="bold", pad_edge=False)
        for title in ("run", "labels", "group", "field", "value", "band", "direction"):
            flag_table.add_column(title)
        labels = {r.run: r.labels for r in history.runs}
        for trend, point in flags:
            flag_table.add_row(
                point.run, labels_text(labels[point.run]) or "—", trend.group, trend.field,
                format_value(trend.field, point.value), _band_text(trend, point), point.flag or "",
            )  # fmt: skip
        console.print(flag_table)
    for failure in history.failures:
        console.print(
            f"FAIL     {failure.threshold}: {failure.group} {failure.field} "
            f"{format_value(failure.field, failure.baseline)} → "
            f"{format_value(failure.field, failure.value)} in run {failure.run}",
            markup=False,
        )
    return buffer.getvalue()
