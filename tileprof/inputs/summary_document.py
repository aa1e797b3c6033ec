"""``summary --format json`` documents as an input: the groups a summary already holds.

``diff`` and ``report --baseline`` compare with one; the model turns the decoded document into
a ``Summary`` (``tileprof.analyses.summary.summary_from_document``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tileprof.core.errors import InputError
from tileprof.inputs._format import Reader


def parse(path: str | Path, data: bytes) -> dict[str, Any]:
    """The document as JSON; broken JSON names its line."""
    try:
        document = json.loads(data)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
    if not isinstance(document, dict):
        raise InputError(path, "$", "a summary document is one JSON object")
    return document


READER: Reader[dict[str, Any]] = Reader(parse)
