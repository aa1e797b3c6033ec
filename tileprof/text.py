"""Small text helpers shared by the terminal and linked-set renderings."""

from __future__ import annotations


def shorten(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, the last one an ellipsis when cut."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    return text if len(text) <= limit else text[: limit - 1] + "…"
