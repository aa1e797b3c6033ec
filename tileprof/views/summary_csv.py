"""``summary --format csv``: one row per group, the dimensions as columns after ``name``."""

from __future__ import annotations

from tileprof.analyses.summary import Summary


def render(summary: Summary) -> str:
    """Group rows with the document's field names as the header; nulls are empty cells."""
    return summary.groups.write_csv(float_precision=None)
