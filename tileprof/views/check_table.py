"""``check`` in the terminal and as JSON: one row per input and check, then what failed.

The table gives each check's status, input, count and first place; the lines below it give
every check that did not pass in words, with its first places and the figures it undermines
(docs/metrics.md, "Capture checks").
"""

from __future__ import annotations

import io
import json
import textwrap
from collections.abc import Sequence
from functools import partial
from typing import Any

import polars as pl
from rich.table import Table
from rich.text import Text

from tileprof.views.fit import Fit, fit_to_width, plain_console, strip_padding

TABLE_WIDTH = 200
"""The fixed width of files and pipes."""

COLUMNS: tuple[str, ...] = ("status", "check", "count", "first place", "input")
CHECK_FIT = Fit(
    titles=COLUMNS,
    drop_first=("first place", "input"),
    full_width=TABLE_WIDTH,
    full_limit=TABLE_WIDTH,
)


def _cells(row: dict[str, Any]) -> dict[str, Text]:
    """One row's cells as plain text: an input or a place is not rich markup (the
    ``[rank0]`` of ``trace[rank0].json`` stays)."""
    return {
        "status": Text(row["status"]),
        "check": Text(row["check"]),
        "count": Text(f"{row['count']:,}"),
        "first place": Text(row["places"][0] if row["places"] else "—"),
        "input": Text(row["input"]),
    }


def _table(rows: Sequence[dict[str, Any]], shown: Sequence[str], _limit: int) -> Table:
    table = Table(show_edge=False, header_style="bold", pad_edge=False)
    columns = [c for c in COLUMNS if c in shown]
    for title in columns:
        table.add_column(title, justify="right" if title == "count" else "left")
    for row in rows:
        cells = _cells(row)
        table.add_row(*(cells[c] for c in columns))
    return table


Unchecked = Sequence[tuple[str, str]]
"""Inputs read but of a kind with no capture checks: (input, kind)."""


def render(checks: pl.DataFrame, width: int = TABLE_WIDTH, unchecked: Unchecked = ()) -> str:
    """The check table, then each check that did not pass in words, then the inputs that no
    check looked at."""
    rows = checks.to_dicts()
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    if not rows:
        console.print("no input with capture checks", markup=False)
        _print_unchecked(console, unchecked, width)
        return strip_padding(buffer.getvalue())
    console.print(fit_to_width(partial(_table, rows), CHECK_FIT, console, width))
    for title, status in (("failed", "warn"), ("to know", "info")):
        chosen = [r for r in rows if r["status"] == status]
        if not chosen:
            continue
        console.print()
        console.print(f"{title}:", markup=False)
        for row in chosen:
            console.print(_sentence(row, width), markup=False, highlight=False, soft_wrap=True)
    _print_unchecked(console, unchecked, width)
    failed = sum(r["status"] == "warn" for r in rows)
    facts = sum(r["status"] == "info" for r in rows)
    console.print()
    last = f"{failed} of {len(rows)} checks failed" if failed else f"all {len(rows)} checks passed"
    last += f"; {facts} with facts to know" if facts else ""
    last += f"; {_inputs(len(unchecked))} not checked" if unchecked else ""
    console.print(last, markup=False)
    return strip_padding(buffer.getvalue())


def _inputs(count: int) -> str:
    return f"{count} input" + ("" if count == 1 else "s")


def _print_unchecked(console: Any, unchecked: Unchecked, width: int) -> None:
    """The inputs no check looked at, each with its kind."""
    if not unchecked:
        return
    console.print()
    console.print("not checked (tileprof has no capture checks for their kind):", markup=False)
    for name, kind in unchecked:
        text = textwrap.fill(
            f"{name} ({kind})", width=max(width, 40), initial_indent="- ", subsequent_indent="  "
        )
        console.print(text, markup=False, highlight=False, soft_wrap=True)


def _sentence(row: dict[str, Any], width: int) -> str:
    places = ", ".join(row["places"])
    undermines = ", ".join(row["undermines"])
    text = f"{row['check']} ({row['input']}): {row['detail']}"
    if places:
        text += f"; at {places}" + (" …" if row["count"] > len(row["places"]) else "")
    if undermines and row["status"] == "warn":
        text += f"; abstaining: {undermines}"
    return textwrap.fill(
        text,
        width=max(width, 40),
        initial_indent="- ",
        subsequent_indent="  ",
        break_on_hyphens=False,
    )


def to_document(checks: pl.DataFrame, unchecked: Unchecked = ()) -> dict[str, Any]:
    """``{"checks": [...], "failed": N, "unchecked": [...]}``: one object per input and
    check, and one per input of a kind with no checks (``{"input", "kind"}``)."""
    rows = checks.to_dicts()
    return {
        "checks": rows,
        "failed": sum(r["status"] == "warn" for r in rows),
        "unchecked": [{"input": name, "kind": kind} for name, kind in unchecked],
    }


def render_json(checks: pl.DataFrame, unchecked: Unchecked = ()) -> str:
    """``check --format json``."""
    document = to_document(checks, unchecked)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
