"""``summary --format json``: the reference document, two-space indented like seed 004."""

from __future__ import annotations

import json

from tileprof.summary import Summary


def render(summary: Summary) -> str:
    """The summary document; integers stay integers and undefined values are null."""
    return json.dumps(summary.to_document(), indent=2, ensure_ascii=False, allow_nan=False) + "\n"
