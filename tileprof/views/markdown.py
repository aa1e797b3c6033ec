"""``history`` and ``diff`` as GitHub-flavoured Markdown: a CI job summary
(``>> $GITHUB_STEP_SUMMARY``).

The verdict comes first (failures, or why the gate abstained), then the figures as tables.
Every number is one the JSON document holds (docs/store.md, docs/metrics.md); these functions
only format. Cells are escaped (a ``|`` or a newline in a kernel name would break a row).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from tileprof.core import numbers

if TYPE_CHECKING:
    from tileprof.analyses.diff import Diff
    from tileprof.model.store.history import History

TEXT_TITLES = frozenset({"flag", "verdict", "change points"})
"""Columns of words, left-aligned wherever they stand."""
MARKDOWN_ROWS = 50
"""The most table rows a summary shows (the JSON and CSV outputs hold every row)."""


def cell(value: Any) -> str:
    """A table cell: ``—`` for null, numbers as the tables print them, ``|`` and line breaks
    escaped."""
    if value is None:
        return "—"
    text = numbers.number(value) if isinstance(value, int | float) else str(value)
    return text.replace("\\", "\\\\").replace("|", "\\|").replace("\r", " ").replace("\n", " ")


def table(titles: Sequence[str], rows: Sequence[Sequence[Any]], text: int = 1) -> list[str]:
    """A Markdown table: the first ``text`` columns and a trailing verdict column (``flag``,
    ``verdict``, ``change points``) left-aligned, the numbers right-aligned."""
    left = {i for i, t in enumerate(titles) if i < text or t in TEXT_TITLES}
    lines = [
        "| " + " | ".join(cell(t) for t in titles) + " |",
        "| " + " | ".join(":---" if i in left else "---:" for i in range(len(titles))) + " |",
    ]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows[:MARKDOWN_ROWS]]
    if len(rows) > MARKDOWN_ROWS:
        lines.append(f"\n{MARKDOWN_ROWS} of {len(rows)} rows (`--format csv` has them all)")
    return lines


def _verdict_lines(failures: Sequence[str], abstained: Sequence[str]) -> list[str]:
    if abstained:
        return ["**No verdict** (exit 3):", "", *[f"- {cell(line)}" for line in abstained]]
    if failures:
        return [f"**Failed** (exit 1): {len(failures)}", "", *[f"- {cell(f)}" for f in failures]]
    return ["**Passed**"]


def render_history(history: History, abstained: Sequence[str] = ()) -> str:
    """The verdict, then per trend its newest run against its band, then change points."""
    failures = [
        f"{f.threshold}: {f.group} {f.field} {numbers.number(f.baseline)} → "
        f"{numbers.number(f.value)} in run {f.run}"
        + (f" (change point from run {f.change})" if f.change else "")
        for f in history.failures
    ]
    newest = history.runs[-1].run if history.runs else "—"
    lines = [
        f"## tileprof history: {len(history.runs)} run{'' if len(history.runs) == 1 else 's'}, "
        f"newest {cell(newest)}",
        "",
        *_verdict_lines(failures, abstained),
        "",
    ]
    rows = []
    for trend in history.trends:
        point = trend.points[-1] if trend.points else None
        if point is None:
            continue
        band = None if point.low is None else f"{cell(point.low)} – {cell(point.high)}"
        changes = ", ".join(f"{c.run} ({_step(c.point.step)})" for c in trend.changes)
        rows.append((trend.group, trend.field, point.value, point.median, band, point.flag,
                     changes or None))  # fmt: skip
    titles = ("group", "field", "newest", "median", "band", "flag", "change points")
    lines += table(titles, rows, text=2)
    return "\n".join(lines) + "\n"


def _step(step: float | None) -> str:
    return "—" if step is None else numbers.percent(step, signed=True)


def render_diff(
    diff: Diff,
    broken: Sequence[str] = (),
    abstained: Sequence[str] = (),
    first_notes: Sequence[str] = (),
) -> str:
    """The verdict (``first_notes`` first: the two sides ran on different setups, or do
    mostly different work), then each shown group's main figure before and after and, where
    both sides hold calls or samples, its per-call change, interval and verdict."""
    lines = [
        f"## tileprof diff: {cell(diff.before.label)} → {cell(diff.after.label)}",
        "",
        *[line for note in first_notes for line in (f"**{cell(note)}**", "")],
        *_verdict_lines([b.removeprefix("broken: ") for b in broken], abstained),
        "",
    ]
    main = diff.impact
    per_call = diff.confidence is not None
    titles = ["group", "status", f"{main} before", "after", "Δ %"]
    if per_call:
        titles += ["per call Δ %", f"{(diff.confidence or 0) * 100:g}% interval", "verdict"]
    rows = []
    for row in diff.shown_rows().iter_rows(named=True):
        values = [row["group"], row["status"], row[f"{main}_before"], row[f"{main}_after"],
                  numbers.percent(row[f"{main}_relative"], signed=True)]  # fmt: skip
        if per_call:
            values += _per_call(row)
        rows.append(values)
    lines += table(titles, rows, text=2)
    return "\n".join(lines) + "\n"


def _per_call(row: dict[str, Any]) -> list[Any]:
    low, high = row.get("perCall_low"), row.get("perCall_high")
    span = None if low is None or high is None else f"{_step(low)} to {_step(high)}"
    change = row.get("perCall_change")
    return [None if change is None else _step(change), span, row.get("verdict")]
