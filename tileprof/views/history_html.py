"""``history --format html``: one small line chart per group (a panel per field, the noise band
shaded, flagged runs marked) and a sortable table of flags, in the report's page style.

The charts are plain inline SVG built here from the numbers (no matplotlib: a store of many
groups draws in milliseconds); names go into the HTML only, autoescaped, never into the SVG.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timezone

from tileprof.core.text import shorten
from tileprof.model.store.history import Change, History, Trend
from tileprof.views.history import format_value, labels_text, rule

WIDTH, HEIGHT = 360.0, 100.0
"""The SVG box of one panel: the plot, its value axis on the left, its run axis below."""
PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM = 58.0, 350.0, 8.0, 62.0
"""The plot area inside the box; the value labels sit left of it, run ids and dates below."""
RUN_LABEL_LIMIT = 22
"""Longest run id an axis label shows (the whole id is in each point's hover title)."""


@dataclass(frozen=True)
class AxisLabel:
    """A label of the run axis: where, which run, and the date it was added (UTC)."""

    x: float
    run: str
    date: str
    anchor: str


@dataclass(frozen=True)
class Marker:
    x: float
    y: float
    title: str


@dataclass(frozen=True)
class Panel:
    """One field of one group: the line, the band area and the flagged points."""

    field: str
    line: str
    band: str
    flags: tuple[Marker, ...]
    points: tuple[Marker, ...]
    newest: str
    minimum: str
    maximum: str
    axis_low: str = ""
    """The value at the bottom of the plot (the lower end of the values and the band)."""
    axis_high: str = ""
    """The value at the top."""
    runs: tuple[AxisLabel, ...] = ()
    """The first and the last run (and the middle one from five runs up) under the plot."""
    changes: tuple[Marker, ...] = ()
    """A dashed line at the first run of each new level (``history --change-points``)."""


@dataclass(frozen=True)
class GroupCharts:
    id: str
    name: str
    panels: tuple[Panel, ...]
    flagged: int


@dataclass(frozen=True)
class FlagRow:
    run: str
    labels: str
    group: str
    field: str
    value: str
    value_sort: float | None
    band: str
    direction: str


@dataclass(frozen=True)
class HistoryPage:
    title: str
    generated_at: str
    version: str
    runs: tuple[tuple[str, str], ...]
    rule: dict[str, float | int]
    fields: tuple[str, ...]
    groups: tuple[GroupCharts, ...]
    flags: tuple[FlagRow, ...]
    failures: tuple[str, ...]
    abstained: tuple[str, ...] = ()
    """Why ``--fail-on`` gave no verdict (a failed capture check), one line each."""


def _coordinates(trend: Trend, count: int) -> tuple[float, float, list[float]]:
    values = [v for p in trend.points for v in (p.value, p.low, p.high) if v is not None]
    low, high = (min(values), max(values)) if values else (0.0, 1.0)
    if high == low:
        low, high = low - 1, high + 1
    step = (PLOT_RIGHT - PLOT_LEFT) / max(count - 1, 1)
    return low, high, [PLOT_LEFT + i * step for i in range(count)]


def _run_axis(trend: Trend, xs: list[float], dates: dict[str, str]) -> tuple[AxisLabel, ...]:
    count = len(trend.points)
    chosen = sorted({0, count - 1} | ({count // 2} if count >= 5 else set()))
    anchors = {0: "start", count - 1: "end"}
    return tuple(
        AxisLabel(
            round(xs[i], 2),
            shorten(trend.points[i].run, RUN_LABEL_LIMIT),
            dates.get(trend.points[i].run, ""),
            anchors.get(i, "middle") if count > 1 else "start",
        )
        for i in chosen
        if count
    )


def panel(trend: Trend, dates: dict[str, str] | None = None) -> Panel:
    """The SVG geometry of one trend, in a WIDTH × HEIGHT box: the plot, the value axis
    (its low and high ends) and the run axis (run ids and the dates they were added)."""
    low, high, xs = _coordinates(trend, len(trend.points))

    def y(value: float) -> float:
        span = PLOT_BOTTOM - PLOT_TOP
        return round(PLOT_BOTTOM - (value - low) / (high - low) * span, 2)

    placed = list(zip(xs, trend.points, strict=True))
    line = " ".join(f"{round(x, 2)},{y(p.value)}" for x, p in placed if p.value is not None)
    banded = [(x, p) for x, p in placed if p.low is not None and p.high is not None]
    upper = [f"{round(x, 2)},{y(p.high)}" for x, p in banded]  # type: ignore[arg-type]
    lower = [f"{round(x, 2)},{y(p.low)}" for x, p in reversed(banded)]  # type: ignore[arg-type]
    markers = [
        Marker(round(x, 2), y(p.value), f"{p.run}: {format_value(trend.field, p.value)}")
        for x, p in zip(xs, trend.points, strict=True)
        if p.value is not None
    ]
    flags = [
        Marker(
            round(x, 2), y(p.value), f"{p.run}: {p.flag} to {format_value(trend.field, p.value)}"
        )
        for x, p in zip(xs, trend.points, strict=True)
        if p.value is not None and p.flag is not None
    ]
    defined = [p.value for p in trend.points if p.value is not None]
    at = {p.run: x for x, p in placed}
    changes = [
        Marker(round(at[c.run], 2), PLOT_TOP, _change_title(trend.field, c)) for c in trend.changes
    ]
    return Panel(
        field=trend.field,
        line=line,
        band=" ".join(upper + lower),
        flags=tuple(flags),
        points=tuple(markers),
        newest=format_value(trend.field, trend.points[-1].value if trend.points else None),
        minimum=format_value(trend.field, min(defined) if defined else None),
        maximum=format_value(trend.field, max(defined) if defined else None),
        axis_low=format_value(trend.field, low),
        axis_high=format_value(trend.field, high),
        runs=_run_axis(trend, xs, dates or {}),
        changes=tuple(changes),
    )


def _change_title(field: str, change: Change) -> str:
    point = change.point
    step = "" if point.step is None else f" ({point.step * 100:+.2f}%)"
    return (
        f"change from run {change.run}: {format_value(field, point.before)} → "
        f"{format_value(field, point.after)}{step}, confidence {point.confidence * 100:.1f}%"
    )


def build_page(history: History, generated_at: str, version: str) -> HistoryPage:
    """The page's view model."""
    by_group: dict[str, list[Trend]] = {}
    for trend in history.trends:
        by_group.setdefault(trend.group, []).append(trend)
    dates = {r.run: r.added_at.astimezone(timezone.utc).strftime("%Y-%m-%d") for r in history.runs}
    groups = tuple(
        GroupCharts(
            id=f"group-{index}",
            name=name,
            panels=tuple(panel(t, dates) for t in trends),
            flagged=sum(p.flag is not None for t in trends for p in t.points),
        )
        for index, (name, trends) in enumerate(by_group.items())
    )
    labels = {r.run: labels_text(r.labels) for r in history.runs}
    flags = tuple(
        FlagRow(
            run=p.run,
            labels=labels[p.run] or "—",
            group=t.group,
            field=t.field,
            value=format_value(t.field, p.value),
            value_sort=p.value,
            band=f"{format_value(t.field, p.low)} … {format_value(t.field, p.high)}",
            direction=p.flag or "",
        )
        for t, p in history.flags()
    )
    failures = tuple(
        f"{f.threshold}: {f.group} {f.field} {format_value(f.field, f.baseline)} → "
        f"{format_value(f.field, f.value)} in run {f.run}"
        for f in history.failures
    )
    return HistoryPage(
        title=f"tileprof history: {len(history.runs)} run{'' if len(history.runs) == 1 else 's'}",
        generated_at=generated_at,
        version=version,
        runs=tuple((r.run, labels[r.run]) for r in history.runs),
        rule=rule(),
        fields=history.fields,
        groups=groups,
        flags=flags,
        failures=failures,
    )


def render(history: History, generated_at: str, abstained: tuple[str, ...] = ()) -> str:
    """The self-contained page; ``abstained``: why ``--fail-on`` gave no verdict."""
    import dataclasses

    from tileprof._version import __version__
    from tileprof.views.html import environment

    page = dataclasses.replace(build_page(history, generated_at, __version__), abstained=abstained)
    return environment().get_template("history.html.j2").render(page=page)
