"""``summary --format json``: the reference document, two-space indented like seed 004."""

from __future__ import annotations

from tileprof.analyses.summary import Summary
from tileprof.views.strict_json import dumps


def render(summary: Summary) -> str:
    """The summary document; integers stay integers and undefined values are null (a value that
    is not finite too, with a ``notes`` entry saying where)."""
    return dumps(summary.to_document(), indent=2, ensure_ascii=False) + "\n"
