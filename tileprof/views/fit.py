"""Fitting a rich table to the terminal's width, shared by ``summary``, ``runs`` and ``supersteps``.

A table that goes to a terminal narrower than the fixed width of files loses, in this order:
the middle of its names (down to ``Fit.min_limit`` characters, keeping the distinguishing end),
then whole columns in the table's priority order (``Fit.drop_first``, lowest priority first),
then, as a last resort, more of its names. What is left over goes back to the names. Rows are
never wrapped: every cell keeps its whole text on one line, and numbers are never cut.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table

TableBuilder = Callable[[Sequence[str], int], Table]
"""Builds the table from the titles of the columns shown and the name limit (characters)."""

NAME_FLOOR = 8
"""Names are never cut below this many characters, whatever the width."""


@dataclass(frozen=True)
class Fit:
    """How one table narrows: its columns and which of them matter least."""

    titles: tuple[str, ...]
    """Every column that may be dropped or kept, in display order."""
    drop_first: tuple[str, ...]
    """Columns left out, in this order, while the table is wider than the terminal."""
    full_width: int
    """The fixed width of files: at this width or more, names get ``full_limit``."""
    full_limit: int
    """The longest name shown at full width."""
    min_limit: int = 24
    """Names are cut to ``max(min_limit, width // 3)`` before any column is dropped."""

    def __post_init__(self) -> None:
        unknown = set(self.drop_first) - set(self.titles)
        if unknown:
            raise ValueError(f"drop_first names columns the table lacks: {sorted(unknown)}")


def _natural_width(console: Console, table: Table) -> int:
    return Measurement.get(console, console.options.update_width(1 << 20), table).maximum


def fit_to_width(build: TableBuilder, fit: Fit, console: Console, width: int) -> Table:
    """The table ``build`` makes, narrowed to ``width`` as the module says."""
    shown = list(fit.titles)
    limit = fit.full_limit if width >= fit.full_width else max(fit.min_limit, width // 3)
    table = build(shown, limit)
    for title in fit.drop_first:
        if _natural_width(console, table) <= width:
            break
        shown.remove(title)
        table = build(shown, limit)
    if _natural_width(console, table) > width:  # every droppable column gone: cut names more
        limit = _widest_limit(build, shown, console, width, NAME_FLOOR, limit)
        return build(shown, limit)
    slack = width - _natural_width(console, table)
    if slack > 0 and limit < fit.full_limit:  # give the names what is left
        guess = min(fit.full_limit, limit + slack)  # exact for a table of one name column
        wider = build(shown, guess)
        if _natural_width(console, wider) <= width:
            return wider
        return build(shown, _widest_limit(build, shown, console, width, limit, guess - 1))
    return table


def _widest_limit(
    build: TableBuilder, shown: Sequence[str], console: Console, width: int, low: int, high: int
) -> int:
    """The largest name limit in [low, high] whose table fits ``width`` (``low`` if none)."""
    while low < high:
        middle = (low + high + 1) // 2
        if _natural_width(console, build(shown, middle)) <= width:
            low = middle
        else:
            high = middle - 1
    return low


def plain_console(buffer: io.StringIO, width: int) -> Console:
    """A console that writes plain text (no colour, no highlighting, no terminal codes) of
    ``width`` columns into ``buffer``: how every terminal table is rendered, to a terminal,
    a pipe or a file alike."""
    return Console(file=buffer, width=width, force_terminal=False, no_color=True, highlight=False)


def strip_padding(text: str) -> str:
    """``text`` without the spaces rich pads each line with up to the table's width, so a line
    whose last column is left-aligned (a name, a linked set's text) ends at its text."""
    return "".join(line.rstrip() + "\n" for line in text.splitlines())
