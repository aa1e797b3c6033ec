"""Small text helpers shared by the terminal and linked-set renderings."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters with the middle elided ("…"), keeping the start
    and the distinguishing end (``gemm_f16_init_…_r121_r122``). Linear in ``limit``: only the
    kept ends are copied, so a name of 200 MB costs no more than a short one."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2
    head = limit - 1 - tail
    return text[:head] + "…" + (text[-tail:] if tail else "")


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}
_CONTROL.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})
_CONTROL_TABLE = str.maketrans({chr(c): text for c, text in _CONTROL.items()})
_C1_TABLE = str.maketrans({chr(c): f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def escape_control(text: str) -> str:
    """``text`` with control characters (ESC, NUL, BEL, newlines, C1) shown as escapes, so a
    name from a file cannot move the cursor, ring the bell or break a line on a terminal."""
    return text.translate(_CONTROL_TABLE).translate(_C1_TABLE)


DISPLAY_NAME_LIMIT = 120
"""Longest name a terminal or HTML view shows whole; longer ones lose their middle."""


def display_name(text: str, limit: int = DISPLAY_NAME_LIMIT) -> str:
    """A name from an input as a view shows it: middle elided past ``limit``, then control
    characters escaped (shortening first, so the escaping is bounded too)."""
    return escape_control(shorten(text, limit))


def cell(text: str | None, limit: int = DISPLAY_NAME_LIMIT) -> Text:
    """A table cell for a name from an input: ``display_name`` as plain text (a ``[bold]`` in a
    kernel name is not rich markup), "—" when there is none."""
    from rich.text import Text

    return Text(display_name(text, limit) if text else "—")
