"""Fitting a rich table to the terminal's width, shared by ``summary``, ``runs`` and ``supersteps``.

A table that goes to a terminal narrower than the fixed width of files loses, in this order:
the middle of its names (down to ``Fit.min_limit`` characters, keeping the distinguishing end),
then whole columns in the table's priority order (``Fit.drop_first``, lowest priority first),
then, as a last resort, more of its names. What is left over goes back to the names. Rows are
never wrapped: every cell keeps its whole text on one line, and numbers are never cut (a table
that still does not fit with every droppable column gone is printed whole, wider than the
terminal). A table that lost columns ends with one line naming them and how to see them
(``dropped_line``). Names shortened to the same text stay apart (``distinct_shortened``).
Tables that are plain aligned text rather than rich (``diff``, ``history``: thousands of rows)
fit the same way through ``fit_plain``.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:  # rich is imported where a rich table is built: diff and history use none
    from rich.console import Console
    from rich.table import Table

TableBuilder = Callable[[Sequence[str], int], "Table"]
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
    keep: tuple[str, ...] = ()
    """Columns never dropped: the sort key and the column that tells rows apart."""
    see_all: str = "--format csv"
    """The option that shows every column, named in ``dropped_line``."""

    def __post_init__(self) -> None:
        unknown = (set(self.drop_first) | set(self.keep)) - set(self.titles)
        if unknown:
            raise ValueError(f"drop_first or keep names columns the table lacks: {sorted(unknown)}")
        kept_and_dropped = set(self.drop_first) & set(self.keep)
        if kept_and_dropped:
            raise ValueError(f"columns both kept and dropped: {sorted(kept_and_dropped)}")


@dataclass(frozen=True)
class Fitted:
    """A table fitted to a width: what it left out, and whether it is still wider."""

    table: Table
    dropped: tuple[str, ...]
    """The columns left out, in display order."""
    overflow: int | None = None
    """The table's width when even with every droppable column gone and names at
    ``NAME_FLOOR`` it is wider than the terminal: it is printed whole at this width (numbers are
    never cut), and the terminal wraps it."""


def dropped_line(dropped: Sequence[str], see_all: str = "--format csv") -> str:
    """The line that ends a table which lost columns: which, and how to see them."""
    return f"not shown: {', '.join(dropped)} (a wider terminal or {see_all} shows them)"


def wrap(line: str, width: int, indent: str = "") -> list[str]:
    """``line`` broken at spaces into lines of at most ``width`` characters, the later ones
    indented by ``indent`` (a plain table's header and dropped line on a narrow terminal); a
    word longer than the line is left whole."""
    import textwrap

    return textwrap.wrap(
        line,
        width,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
        drop_whitespace=True,
    ) or [""]


def print_fitted(console: Console, fitted: Fitted, fit: Fit) -> None:
    """Print a fitted table (whole, never cut) and, if it lost columns, ``dropped_line``."""
    if fitted.overflow is not None:
        fitted.table.width = fitted.overflow  # rich lays a table out at its own width
        console.print(fitted.table, crop=False)
    else:
        console.print(fitted.table)
    if fitted.dropped:
        console.print(dropped_line(fitted.dropped, fit.see_all), markup=False)


def _natural_width(console: Console, table: Table) -> int:
    from rich.measure import Measurement

    return Measurement.get(console, console.options.update_width(1 << 20), table).maximum


def fit_to_width(build: TableBuilder, fit: Fit, console: Console, width: int) -> Table:
    """The table ``build`` makes, narrowed to ``width`` as the module says."""
    return fit_table(build, fit, console, width).table


def fit_table(build: TableBuilder, fit: Fit, console: Console, width: int) -> Fitted:
    """The table ``build`` makes, narrowed to ``width``, with the columns it lost.

    Each table built is measured once (rich measures every cell: a 50-group summary's
    measurement cost as much as printing it)."""
    table, dropped, overflow = fit_layout(
        build, lambda table: _natural_width(console, table), fit, width
    )
    return Fitted(table, dropped, overflow)


T = TypeVar("T")


def fit_layout(
    build: Callable[[Sequence[str], int], T], measure: Callable[[T], int], fit: Fit, width: int
) -> tuple[T, tuple[str, ...], int | None]:
    """What ``fit_table`` does, for any table ``build`` makes and ``measure`` measures: the
    table fitted to ``width``, the columns it lost, and its width when it is still wider."""
    shown = list(fit.titles)
    limit = fit.full_limit if width >= fit.full_width else max(fit.min_limit, width // 3)
    table = build(shown, limit)
    natural = measure(table)
    for title in fit.drop_first:
        if natural <= width:
            break
        shown.remove(title)
        table = build(shown, limit)
        natural = measure(table)
    dropped = tuple(t for t in fit.titles if t not in shown)

    def widest_limit(low: int, high: int) -> int:
        """The largest name limit in [low, high] whose table fits (``low`` if none)."""
        while low < high:
            middle = (low + high + 1) // 2
            if measure(build(shown, middle)) <= width:
                low = middle
            else:
                high = middle - 1
        return low

    if natural > width:  # every droppable column gone: cut names more
        table = build(shown, widest_limit(NAME_FLOOR, limit))
        natural = measure(table)
        return table, dropped, natural if natural > width else None
    slack = width - natural
    if slack > 0 and limit < fit.full_limit:  # give the names what is left
        guess = min(fit.full_limit, limit + slack)  # exact for a table of one name column
        wider = build(shown, guess)
        if measure(wider) <= width:
            return wider, dropped, None
        return build(shown, widest_limit(limit, guess - 1)), dropped, None
    return table, dropped, None


@dataclass(frozen=True)
class HeavyHeadTable:
    """A table of one-line text cells in rich's look for ``Table(show_edge=False,
    pad_edge=False)`` (the HEAVY_HEAD box: ``┃`` between titles, a ``━``/``╇`` rule, ``│``
    between cells), laid out at its natural width, without rich's console.

    rich measures every cell of a table each time it is measured and again when it prints it:
    for a 50-group summary that took a tenth of a second, as long as its group table, and
    importing rich's console and table took a third as long again. Here cells are measured
    in terminal cells (``rich.cells.cell_len``: wide characters count twice, as rich counts
    them). Only for tables printed at their natural width: rich would fold or crop cells to fit
    a narrower one, this never does (``fit_layout`` leaves a table that does not fit whole,
    as ``fit_table`` does, and rich then prints it whole too)."""

    titles: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[bool]
    """Per column: right-aligned (numbers) or left (names)."""

    def widths(self) -> list[int]:
        return _cell_widths(self.titles, self.rows)

    def width(self) -> int:
        """The table's width: its cells, one space each side of every rule, the rules."""
        return sum(self.widths()) + 3 * (len(self.titles) - 1)

    def lines(self) -> list[str]:
        """The title line, the rule, the rows; no line ends in padding."""
        widths = self.widths()

        def line(cells: Sequence[str], rule: str) -> str:
            padded = map(_padded_cell, cells, widths, self.right)
            return f" {rule} ".join(padded).rstrip()

        head_rule = "╇".join("━" * (w + 2) for w in widths)[1:-1]
        return [line(self.titles, "┃"), head_rule, *(line(row, "│") for row in self.rows)]


@dataclass(frozen=True)
class SpacedTable:
    """A titled table of one-line text cells in rich's look for ``Table(title=...,
    title_justify="left", box=None, pad_edge=False)`` (columns two spaces apart, no rules),
    laid out at its natural width without rich's console: the ``breakdown`` tables.

    rich measures every cell each time ``fit_layout`` measures a table, and again when it
    prints it: a breakdown of 189 steps (2,100 lines) spent 4 s there, as long as reading its
    626 MB trace. Here cells are measured as rich measures them (``rich.cells.cell_len``).
    ``printable`` says whether these lines are rich's; where not (a cell rich would read as
    markup, or pad, strip or wrap), the caller prints the table with rich instead."""

    title: str
    titles: Sequence[str]
    rows: Sequence[Sequence[str]]
    right: Sequence[bool]
    """Per column: right-aligned (numbers) or left (names)."""

    def widths(self) -> list[int]:
        return _cell_widths(self.titles, self.rows)

    def width(self) -> int:
        """The table's width: its cells and two spaces between columns."""
        return sum(self.widths()) + 2 * (len(self.titles) - 1)

    def printable(self) -> bool:
        """Whether ``lines`` are the lines rich prints: no text that rich may read as markup or
        an emoji code, none with a control character or a space at either end, and a title
        no wider than the table (rich wraps a wider one)."""
        from rich.cells import cell_len

        texts = [self.title, *self.titles, *(text for row in self.rows for text in row)]
        plain = all(text == text.strip() and not _RICH_READS.search(text) for text in texts)
        return plain and cell_len(self.title) <= self.width()

    def lines(self) -> list[str]:
        """The title line, the header, the rows; no line ends in padding."""
        widths = self.widths()

        def line(cells: Sequence[str]) -> str:
            return "  ".join(map(_padded_cell, cells, widths, self.right)).rstrip()

        return [self.title, line(self.titles), *(line(row) for row in self.rows)]


def _cell_widths(titles: Sequence[str], rows: Sequence[Sequence[str]]) -> list[int]:
    """Each column's widest text, in terminal cells as rich counts them (``cell_len``: wide
    characters count twice)."""
    from rich.cells import cell_len

    columns = zip(titles, *rows, strict=True)
    return [max(cell_len(text) for text in column) for column in columns]


def _padded_cell(text: str, width: int, right: bool) -> str:
    """A cell padded to ``width``: right-aligned (numbers) or left (names)."""
    from rich.cells import cell_len

    if right:  # rich strips a right-aligned cell's trailing space, not its width
        text = text.rstrip()
        return " " * (width - cell_len(text)) + text
    return text + " " * (width - cell_len(text))


_RICH_READS = re.compile(r"[\[\x00-\x1f\x7f-\x9f]|:\S*?:")
"""What rich may read as markup (``[``) or an emoji code (``:smile:``), or render otherwise
than as text (control characters)."""


def plain_console(buffer: io.StringIO, width: int) -> Console:
    """A console that writes plain text (no colour, no highlighting, no terminal codes) of
    ``width`` columns into ``buffer``: how every terminal table is rendered, to a terminal,
    a pipe or a file alike."""
    from rich.console import Console

    return Console(file=buffer, width=width, force_terminal=False, no_color=True, highlight=False)


def strip_padding(text: str) -> str:
    """``text`` without the spaces rich pads each line with up to the table's width, so a line
    whose last column is left-aligned (a name, a linked set's text) ends at its text."""
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


@dataclass(frozen=True)
class PlainColumn:
    """One column of a plain aligned table (``fit_plain``)."""

    key: str
    """What ``Fit.titles``, ``drop_first`` and the dropped line call it."""
    cells: Sequence[str | None]
    """The texts; in the name column the full names (None: "—"), shortened as needed."""
    right: bool = True
    title: str | None = None
    """The title shown (default ``key``)."""
    group: str | None = None
    """A title shared by neighbouring columns (``phase cycles`` over before, after, Δ, Δ%):
    shown before the title of the group's first column left in the table."""
    prefixes: Sequence[str] = ()
    """The name column only: a text before each name (a status mark), never shortened."""


def fit_plain(
    columns: Sequence[PlainColumn], names: str | Sequence[str], fit: Fit, width: int | None
) -> tuple[list[str], tuple[str, ...]]:
    """The lines of a plain aligned table (header, rule, rows), fitted to ``width`` (None: the
    full table of files), and the columns it left out. ``names`` are the keys of the columns
    of names, which lose their middle (``distinct_shortened``) as in ``fit_table``."""
    name_keys = (names,) if isinstance(names, str) else tuple(names)
    columns = [_escaped(c) for c in columns]  # measured as printed: an ESC is 4 characters
    measured = [_measured(c, c.key in name_keys) for c in columns]  # once: rows × columns
    target = fit.full_width if width is None else width
    limit = fit.full_limit if target >= fit.full_width else max(fit.min_limit, target // 3)
    shown = list(fit.titles)
    for title in fit.drop_first:
        if width is None or _plain_width(measured, shown, limit) <= target:
            break
        shown.remove(title)
    if width is None:
        limit = fit.full_limit
    else:  # the widest names that fit, as fit_table gives the names what is left
        longest = max(m.names for m in measured if m.names is not None)
        low, high = NAME_FLOOR, max(NAME_FLOOR, min(fit.full_limit, longest))
        while low < high:
            middle = (low + high + 1) // 2
            if _plain_width(measured, shown, middle) <= target:
                low = middle
            else:
                high = middle - 1
        limit = low
    kept = [c for c in columns if c.key in shown]
    table = [_plain_titles(kept), *_plain_rows(kept, name_keys, limit)]
    return _aligned(table, [c.right for c in kept]), tuple(t for t in fit.titles if t not in shown)


def _escaped(column: PlainColumn) -> PlainColumn:
    """``column`` with its texts' control characters escaped (``core.text.escape_control``),
    before they are measured or shortened, so that the table's width is the printed one."""
    from tileprof.core.text import escape_control

    cells = [None if c is None else escape_control(c) for c in column.cells]
    return replace(column, cells=cells)


@dataclass(frozen=True)
class _Measured:
    """One plain column's widths, measured once: its widest cell, or for a column of names
    the longest name and the widest prefix."""

    column: PlainColumn
    cells: int
    names: int | None
    prefix: int


def _measured(column: PlainColumn, holds_names: bool) -> _Measured:
    texts = [len(c) if c is not None else 1 for c in column.cells]  # None shows as "—"
    prefix = max((len(p) for p in column.prefixes), default=0)
    return _Measured(
        column, max(texts, default=0), max(texts, default=1) if holds_names else None, prefix
    )


def _plain_width(measured: Sequence[_Measured], shown: Sequence[str], limit: int) -> int:
    """The width of the table of the ``shown`` columns with names cut to ``limit``."""
    kept = [m for m in measured if m.column.key in shown]
    titles = _plain_titles([m.column for m in kept])
    total = 2 * (len(kept) - 1)
    for m, title in zip(kept, titles, strict=True):
        if m.names is not None:
            total += max(len(title), m.prefix + min(m.names, limit))
        else:
            total += max(len(title), m.cells)
    return total


def _plain_titles(kept: Sequence[PlainColumn]) -> list[str]:
    titles, seen = [], set()
    for column in kept:
        title = column.title if column.title is not None else column.key
        if column.group is not None and column.group not in seen:
            seen.add(column.group)
            title = f"{column.group} {title}"
        titles.append(title)
    return titles


def _plain_rows(kept: Sequence[PlainColumn], names: Sequence[str], limit: int) -> list[list[str]]:
    cells: list[list[str]] = []
    for column in kept:
        if column.key in names:
            from tileprof.core.text import distinct_shortened

            short = distinct_shortened(column.cells, limit)
            prefixes = column.prefixes or [""] * len(short)
            texts = [p + ("—" if s is None else s) for p, s in zip(prefixes, short, strict=True)]
        else:
            texts = ["—" if c is None else c for c in column.cells]
        cells.append(texts)
    return [list(row) for row in zip(*cells, strict=True)]


def _aligned(rows: Sequence[Sequence[str]], right: Sequence[bool]) -> list[str]:
    """Plain aligned columns: the first row is the header, then a rule, then the rows; no
    line ends in padding."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(right))]
    lines = []
    for index, cells in enumerate(rows):
        padded = [
            c.rjust(w) if r else c.ljust(w) for c, w, r in zip(cells, widths, right, strict=True)
        ]
        lines.append("  ".join(padded).rstrip())
        if index == 0:
            lines.append("  ".join("─" * w for w in widths))
    return lines


@dataclass(frozen=True)
class Name:
    """A table cell holding a name, shortened with the rest of its column (``resolve_names``)
    so that names which would shorten alike stay apart."""

    text: str | None
    cap: int | None = None
    """The longest this column's names are ever shown, whatever the limit."""


def resolve_names(rows: Sequence[Sequence[object]], limit: int) -> list[list[object]]:
    """``rows`` with every ``Name`` cell replaced by its text, each column's names shortened
    together to ``limit`` (or the column's cap) by ``distinct_shortened``."""
    from tileprof.core.text import cell, distinct_shortened

    resolved = [list(row) for row in rows]
    width = len(resolved[0]) if resolved else 0
    for index in range(width):
        column = [row[index] for row in resolved]
        names = [c for c in column if isinstance(c, Name)]
        if not names:
            continue
        cap = min((n.cap for n in names if n.cap is not None), default=limit)
        short = iter(distinct_shortened([n.text for n in names], min(limit, cap)))
        for row in resolved:
            if isinstance(row[index], Name):
                row[index] = cell(next(short))
    return resolved
