"""``findings`` in the terminal and as JSON: one row per rule that applies to the inputs, then
each finding in words, then a count of the rules that do not apply.

The table gives each rule's status, its source, how many rows fired it out of how many it
read, and the first condition's metric, cited value and threshold; the sentences below it are
the fired findings' messages, then why the others abstained; a rule with no input of its kind
(the tile rules on a GPU trace) is no row, only named in the footer (docs/metrics.md,
"Findings")."""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Callable, Sequence
from functools import partial

from rich.table import Table

from tileprof.analyses.findings import ABSTAINED, FIRED, NOT_APPLICABLE, Finding
from tileprof.core.text import escape_control
from tileprof.views.fit import Fit, fit_to_width, plain_console, strip_padding

TABLE_WIDTH = 200
"""The fixed width of files and pipes."""

FindingCell = Callable[[Finding], str]
FINDING_COLUMNS: tuple[tuple[str, FindingCell], ...] = (
    ("status", lambda f: f.status),
    ("rule", lambda f: f.rule.id),
    ("source", lambda f: f.rule.source),
    ("rows", lambda f: f"{f.count:,} of {f.rows:,}" if f.rows else "—"),
    ("metric", lambda f: f.rule.conditions[0].metric),
    ("value", lambda f: f.rule.conditions[0].text(f.values.get(f.rule.conditions[0].key))),
    (
        "threshold",
        lambda f: (
            f"{f.rule.conditions[0].comparison} "
            f"{f.rule.conditions[0].text(f.rule.conditions[0].threshold)}"
        ),
    ),
)
"""The table's columns: title, and the cell of one finding."""
FINDING_DROP_FIRST: tuple[str, ...] = ("source", "metric", "rows", "threshold")
"""Columns left out, in this order, on a narrow terminal: which rule, its status and the cited
value stay (the sentences below repeat every number)."""
FINDING_FIT = Fit(
    titles=tuple(title for title, _ in FINDING_COLUMNS),
    drop_first=FINDING_DROP_FIRST,
    full_width=TABLE_WIDTH,
    full_limit=TABLE_WIDTH,
)


def _table(findings: Sequence[Finding], shown: Sequence[str], _limit: int) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    columns = [c for c in FINDING_COLUMNS if c[0] in shown]
    for title, _ in columns:
        table.add_column(title, justify="right" if title in ("rows", "value") else "left")
    for finding in findings:
        table.add_row(*(make(finding) for _, make in columns))
    return table


def applicable(findings: Sequence[Finding]) -> list[Finding]:
    """The findings of the rules that apply to the inputs: the rows of the table."""
    return [f for f in findings if f.status != NOT_APPLICABLE]


def not_applicable_line(findings: Sequence[Finding]) -> str | None:
    """The footer that counts the rules left out as not applicable (None: every rule applies),
    ``N rules do not apply to these inputs: id, id``."""
    ids = [f.rule.id for f in findings if f.status == NOT_APPLICABLE]
    if not ids:
        return None
    rules = "1 rule does not" if len(ids) == 1 else f"{len(ids)} rules do not"
    return f"{rules} apply to these inputs: {', '.join(ids)}"


def render(findings: Sequence[Finding], width: int = TABLE_WIDTH) -> str:
    """The table of the rules that apply, then the fired findings' messages, the
    abstentions' reasons and the footer counting the rules that do not apply, wrapped to
    ``width``."""
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    footer = not_applicable_line(findings)
    findings = applicable(findings)
    if findings:
        console.print(fit_to_width(partial(_table, findings), FINDING_FIT, console, width))
    for title, status in (("findings", FIRED), ("abstained", ABSTAINED)):
        chosen = [f for f in findings if f.status == status]
        if not chosen:
            continue
        console.print()
        console.print(f"{title}:", markup=False)
        for finding in chosen:
            said = finding.text if status == FIRED else f"{finding.rule.id}: {finding.text}"
            text = textwrap.fill(
                escape_control(said),  # a kernel or group name from the input
                width=max(width, 40),
                initial_indent="- ",
                subsequent_indent="  ",
                break_on_hyphens=False,
            )
            console.print(text, markup=False, highlight=False, soft_wrap=True)
    if footer:
        if findings:  # a blank line after the table and sentences, none at the top
            console.print()
        console.print(
            textwrap.fill(footer, width=max(width, 40), break_on_hyphens=False),
            markup=False,
            highlight=False,
            soft_wrap=True,
        )
    return strip_padding(buffer.getvalue())


def render_json(findings: Sequence[Finding]) -> str:
    """``{"findings": [...], "not_applicable": [...]}``: the outcome of every rule that
    applies, fired first (``Finding.to_dict``), then each rule that does not (its id, source
    and what it needs)."""
    document = {
        "findings": [f.to_dict() for f in applicable(findings)],
        "not_applicable": [
            {"id": f.rule.id, "source": f.rule.source, "reason": f.text}
            for f in findings
            if f.status == NOT_APPLICABLE
        ],
    }
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False, default=str) + "\n"
