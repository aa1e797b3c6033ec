"""Strict JSON output: ``--format json`` never writes ``NaN`` or ``Infinity``.

A figure that is not finite (a speedup over a time of 0, a mean of durations near 1e308) is
written as ``null``, and a note names where and why, so a reader of the document can tell a
missing figure from an undefined one (docs/reliability.md, "Non-finite values").
"""

from __future__ import annotations

import json
import math
from typing import Any


def finite_or_null(value: Any, where: str = "$") -> tuple[Any, list[str]]:
    """``value`` with every non-finite float replaced by None, and the notes saying where."""
    notes: list[str] = []

    def walk(item: Any, at: str) -> Any:
        if isinstance(item, float) and not math.isfinite(item):
            notes.append(f"{at} is {item} (not finite); written as null")
            return None
        if isinstance(item, dict):
            return {k: walk(v, f"{at}.{k}") for k, v in item.items()}
        if isinstance(item, (list, tuple)):
            return [walk(v, f"{at}[{i}]") for i, v in enumerate(item)]
        return item

    return walk(value, where), notes


def dumps(document: dict[str, Any], *, notes_key: str = "notes", **options: Any) -> str:
    """``json.dumps`` of ``document`` with non-finite floats as null and a note per value under
    ``notes_key`` (added only when there is something to say)."""
    clean, notes = finite_or_null(document)
    if notes:
        existing = clean.get(notes_key) or []
        clean[notes_key] = [*existing, *notes]
    return json.dumps(clean, allow_nan=False, **options)
