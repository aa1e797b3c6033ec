"""The parts of ``views/fit.py`` that the whole-table tests reach only in bulk, each pinned on a
small hand-built input: the plain layout (``_aligned``), a plain column's measured widths
(``_measured``), the cells of the plain rows (``_plain_rows``), ``fit_plain`` on a table whose
every width is counted by hand, and the search for the widest name limit in ``fit_layout``.

Every expected value is worked out from the docstrings, not copied from the code's output.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pytest
from rich.table import Table

from tileprof.views.fit import (
    NAME_FLOOR,
    Fit,
    PlainColumn,
    SpacedTable,
    _aligned,
    _measured,
    _plain_rows,
    dropped_line,
    fit_layout,
    fit_plain,
    fit_table,
    plain_console,
    print_fitted,
    wrap,
)

# --- _aligned: plain aligned columns ---------------------------------------------------------


def test_aligned_pads_names_on_the_right_and_rules_only_the_header() -> None:
    """A left column (names) is padded after its text, a right one (numbers) before it, two
    spaces between columns, and the rule comes once, under the header, as wide as each
    column's widest text."""
    rows = [["name", "n"], ["ab", "12345"], ["abcdef", "7"]]
    assert _aligned(rows, [False, True]) == [
        "name" + " " * 8 + "n",  # "name  " + "  " + "    n"
        "──────  ─────",
        "ab" + " " * 6 + "12345",  # "ab    " + "  " + "12345"
        "abcdef" + " " * 6 + "7",  # "abcdef" + "  " + "    7"
    ]


def test_aligned_lines_never_end_in_padding_and_keep_their_leading_spaces() -> None:
    """A last column that is left-aligned would end short lines in padding: it is stripped
    there ("no line ends in padding"), while a right-aligned first column keeps the spaces
    that align its numbers."""
    rows = [["n", "name"], ["12345", "ab"], ["7", "abcd"]]
    assert _aligned(rows, [True, False]) == [
        "    n  name",
        "─────  ────",
        "12345  ab",  # not "12345  ab  "
        "    7  abcd",
    ]


def test_aligned_header_alone_still_gets_its_rule() -> None:
    """A table of no rows is its header and the rule under it, nothing after."""
    assert _aligned([["group", "n"]], [False, True]) == ["group  n", "─────  ─"]


# --- _measured: one plain column's widths ----------------------------------------------------


def test_a_missing_cell_measures_one_character() -> None:
    """None is shown as "—", one character: a column of nothing but None is one wide."""
    measured = _measured(PlainColumn("x", [None, None]), holds_names=False)
    assert (measured.cells, measured.names, measured.prefix) == (1, None, 0)
    mixed = _measured(PlainColumn("x", [None, "ab", None]), holds_names=False)
    assert mixed.cells == 2


def test_a_name_column_without_prefixes_adds_nothing_before_its_names() -> None:
    """No prefixes: the names' widths are the whole width (prefix 0); with them, the widest
    prefix counts, never shortened."""
    plain = _measured(PlainColumn("group", ["abc", None], right=False), holds_names=True)
    assert (plain.cells, plain.names, plain.prefix) == (3, 3, 0)
    marked = PlainColumn("group", ["abc", "de"], right=False, prefixes=["+ ", "!! "])
    assert _measured(marked, holds_names=True).prefix == 3


# --- _plain_rows: the cells of a plain table's rows -------------------------------------------


def test_plain_rows_show_missing_cells_as_a_dash_and_keep_the_others() -> None:
    """A figure column's None is "—" and its text is kept as it is; a name column's names are
    shortened (``distinct_shortened``: short names stay whole) with the prefix before each,
    its None also "—"."""
    kept = [
        PlainColumn("n", ["1", None, "22"]),
        PlainColumn("group", ["alpha", None, "beta"], right=False, prefixes=["+ ", "- ", "= "]),
    ]
    assert _plain_rows(kept, ["group"], 10) == [["1", "+ alpha"], ["—", "- —"], ["22", "= beta"]]


def test_plain_rows_without_prefixes_and_with_a_cut_name() -> None:
    """No prefixes: the name alone, cut to ``limit`` by losing its middle (``shorten``: of 16
    characters at 11, the first 5, "…", the last 5)."""
    kept = [
        PlainColumn("group", ["abcdefghijklmnop", None], right=False),
        PlainColumn("v", ["x", "y"]),
    ]
    assert _plain_rows(kept, ("group",), 11) == [["abcde…lmnop", "x"], ["—", "y"]]


# --- fit_plain: a table whose every width is counted by hand ---------------------------------

_COLUMNS = [
    PlainColumn("n", ["1", "22"]),
    PlainColumn("x", [None, None]),
    PlainColumn("group", ["abcdefghijklmnop", "q"], right=False),
]
_FIT = Fit(titles=("n", "x", "group"), drop_first=(), full_width=100, full_limit=50)


def test_fit_plain_gives_the_names_exactly_what_is_left() -> None:
    """At 18 columns: two gaps (4), "n" two wide, "x" one ("—" and its title), so the names
    get 11 of their 16 characters and the widest row is exactly 18."""
    lines, dropped = fit_plain(_COLUMNS, "group", _FIT, 18)
    assert lines == [
        " n  x  group",
        "──  ─  ───────────",
        " 1  —  abcde…lmnop",
        "22  —  q",
    ]
    assert dropped == ()
    assert max(len(line) for line in lines) == 18


def test_fit_plain_at_its_natural_width_shows_the_names_whole() -> None:
    """With the full width of files (None) the names are not cut; nor at 23, the table's
    natural width (4 + 2 + 1 + 16); one column less and they lose one character."""
    full, _ = fit_plain(_COLUMNS, "group", _FIT, None)
    assert full[2] == " 1  —  abcdefghijklmnop"
    assert fit_plain(_COLUMNS, "group", _FIT, 23)[0] == full
    assert fit_plain(_COLUMNS, "group", _FIT, 22)[0][2] == " 1  —  abcdefg…jklmnop"  # 15


# --- fit_layout: columns out, then the names get what is left --------------------------------

_LAYOUT_FIT = Fit(
    titles=("name", "a", "b"), drop_first=("b", "a"), full_width=100, full_limit=40,
    min_limit=12, keep=("name",),
)  # fmt: skip

Layout = tuple[tuple[str, ...], int]


class _Measurer:
    """A table of two name columns and figures five wide: ``2 * min(40, limit)`` plus five a
    figure column. Counts its measurements, and stops a search that would never end."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, table: Layout) -> int:
        self.calls += 1
        if self.calls > 100:
            raise AssertionError("the name limit's search does not end")
        shown, limit = table
        return 2 * min(40, limit) + 5 * (len(shown) - 1)


def _build(shown: Sequence[str], limit: int) -> Layout:
    return tuple(shown), limit


def _fit(width: int) -> tuple[Layout, tuple[str, ...], int | None, int]:
    measure = _Measurer()
    table, dropped, overflow = fit_layout(_build, measure, _LAYOUT_FIT, width)
    return table, dropped, overflow, measure.calls


@pytest.mark.parametrize(
    ("width", "table", "dropped", "overflow"),
    [
        (100, (("name", "a", "b"), 40), (), None),  # full width: full_limit, slack kept
        (50, (("name", "a", "b"), 20), (), None),  # 16 fits (42); the widest: 2·20 + 10 = 50
        (36, (("name", "a", "b"), 13), (), None),  # 12: 34; the guess 14 is 38, 13 is 36
        (30, (("name", "a"), 12), ("b",), None),  # 12: 34 > 30, without b 29; 13 would be 31
        (20, (("name",), 10), ("a", "b"), None),  # even alone 24 > 20: names cut to 10
        (14, (("name",), 8), ("a", "b"), 16),  # at the floor (8) still 16: printed whole
    ],
)
def test_fit_layout_drops_in_order_then_widens_the_names(
    width: int, table: Layout, dropped: tuple[str, ...], overflow: int | None
) -> None:
    """Names go to ``max(min_limit, width // 3)``, columns go in ``drop_first`` order until
    the table fits, and the names then get the widest limit that still fits (below the
    guess, which is exact only for one name column); with nothing left to drop they go down
    to ``NAME_FLOOR`` and the table is printed whole at its width. The search measures a few
    tables, each step halving the range, and ends."""
    got_table, got_dropped, got_overflow, calls = _fit(width)
    assert (got_table, got_dropped, got_overflow) == (table, dropped, overflow)
    assert calls <= 10


def test_fit_layout_gives_the_names_a_last_column_of_slack() -> None:
    """One name column, each character of its limit one column wide: at width 23 the names
    start at ``min_limit`` (12), the table is 12 + 2 · 5 = 22 wide, and the one column left
    goes to the names (13), as any slack does."""

    def measure(table: Layout) -> int:
        shown, limit = table
        return min(40, limit) + 5 * (len(shown) - 1)

    table, dropped, overflow = fit_layout(_build, measure, _LAYOUT_FIT, 23)
    assert (table, dropped, overflow) == ((("name", "a", "b"), 13), (), None)


def test_fit_plain_measures_a_name_as_printed_with_its_control_characters_escaped() -> None:
    """An ESC prints as the four characters ``\\x1b``: a name full of them is measured and cut
    as printed, so every line still fits the width, and no raw control character is left."""
    name = "ab" + "\x1b" * 6 + "cdefghijklmnopqrstuvwxyz"
    columns = [PlainColumn("n", ["1", "2"]), PlainColumn("group", [name, "x\ty"], right=False)]
    fit = Fit(("n", "group"), (), full_width=120, full_limit=60, min_limit=8)
    lines, dropped = fit_plain(columns, "group", fit, 20)
    assert dropped == ()
    assert max(len(line) for line in lines) == 20
    assert lines[2].startswith("1  ab\\x1b") and lines[3] == "2  x\\ty"
    assert not any(c in line for line in lines for c in "\x1b\t")
    whole, _ = fit_plain(columns, "group", fit, None)
    assert whole[2] == "1  ab" + "\\x1b" * 6 + "cdefghijklmnopqrstuvwxyz"


# --- fit_table and print_fitted: a rich table, fitted and printed ------------------------------

_RICH_FIT = Fit(
    titles=("name", "a", "b"), drop_first=("b",), full_width=100, full_limit=40, min_limit=12,
    keep=("name", "a"), see_all="--format csv [all columns]",
)  # fmt: skip


def _rich_build(shown: Sequence[str], limit: int) -> Table:
    """Two rows of a 30-character name, each cut to ``limit``, and two figure columns."""
    table = Table(show_edge=False, pad_edge=False)
    for title in shown:
        table.add_column(title, no_wrap=True)
    for name in ("a" * 30, "b" * 30):
        cells = {"name": name[:limit], "a": "1.0", "b": "2.0"}
        table.add_row(*(cells[t] for t in shown))
    return table


def _printed(width: int) -> tuple[list[str], int | None, tuple[str, ...]]:
    buffer = io.StringIO()
    console = plain_console(buffer, width)
    fitted = fit_table(_rich_build, _RICH_FIT, console, width)
    print_fitted(console, fitted, _RICH_FIT)
    return buffer.getvalue().splitlines(), fitted.overflow, fitted.dropped


def test_a_table_wider_than_the_terminal_is_printed_whole_at_its_own_width() -> None:
    """With ``b`` gone and names at ``NAME_FLOOR`` the table is still wider than 10: its width
    is the overflow, and every row is printed at it, names and figures uncut."""
    lines, overflow, dropped = _printed(10)
    assert dropped == ("b",)
    assert overflow is not None and overflow > 10
    rows = [line for line in lines if "1.0" in line]
    assert [r.split()[0] for r in rows] == ["a" * NAME_FLOOR, "b" * NAME_FLOOR]
    assert max(len(line) for line in lines[:-1]) == overflow


def test_the_dropped_line_is_printed_as_written_with_the_fits_own_hint() -> None:
    """The line after the table names the columns left out and the fit's own way to see
    them, its brackets printed as they are (not read as markup); the console wraps it."""
    lines, overflow, dropped = _printed(20)
    assert overflow is None and dropped == ("b",)
    after_the_table = " ".join(" ".join(lines[4:]).split())  # after header, rule, two rows
    assert after_the_table == dropped_line(("b",), "--format csv [all columns]")
    assert after_the_table.endswith("(a wider terminal or --format csv [all columns] shows them)")


def test_plain_output_has_no_terminal_codes_where_the_environment_forces_colour(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """CI systems set FORCE_COLOR; a table written to a pipe or a file stays plain text."""
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("TTY_COMPATIBLE", "1")
    lines, _, _ = _printed(100)
    assert lines and not any("\x1b" in line for line in lines)


def test_fit_plain_drops_a_column_only_when_names_at_a_third_of_the_width_do_not_fit() -> None:
    """Before any column goes, names are cut to ``max(min_limit, width // 3)`` (8 at 20), not
    to ``full_limit``: at 8 the table with ``x`` is 2 + 2 + 5 + 2 + 8 = 19 wide, so ``x``
    stays and the names get what is left (9); whole (16) they would have pushed ``x`` out."""
    columns = [
        PlainColumn("n", ["1", "22"]),
        PlainColumn("x", ["12345", "6"]),
        PlainColumn("group", ["abcdefghijklmnop", "q"], right=False),
    ]
    fit = Fit(("n", "x", "group"), ("x",), full_width=100, full_limit=50, min_limit=8)
    lines, dropped = fit_plain(columns, "group", fit, 20)
    assert dropped == ()
    assert lines[2] == " 1  12345  abcd…mnop"
    assert max(len(line) for line in lines) == 20


# --- wrap: a plain line broken for a narrow terminal ------------------------------------------


def test_wrap_breaks_at_spaces_indents_the_later_lines_and_keeps_long_words_whole() -> None:
    """Lines of at most 9 characters, the later ones indented by two spaces; a word with
    hyphens is not broken at them, a word longer than the line is left whole."""
    line = "not shown: p50-cycles, a-very-long-column (see all)"
    assert wrap(line, 9, "  ") == [
        "not",
        "  shown:",
        "  p50-cycles,",
        "  a-very-long-column",
        "  (see",
        "  all)",
    ]
    assert wrap("a b", 80) == ["a b"]
    assert wrap("", 10) == [""]


# --- SpacedTable: the breakdown's tables without rich's console -------------------------------


def test_a_spaced_tables_width_is_its_widest_line_and_a_title_wider_is_not_printable() -> None:
    """Columns 3 (``kernel``'s "abc" under a 6-wide title: 6), 2 and 5 wide, two spaces
    apart: 6 + 2 + 2 + 2 + 5 = 17, the width of its widest line; a title of 17 characters
    fits (the lines are rich's), one of 18 would be wrapped by rich."""
    titles, rows = ["kernel", "n", "share"], [["abc", "12", "0.5 %"], ["de", "3", "10 %"]]
    table = SpacedTable("t" * 17, titles, rows, [False, True, True])
    assert table.width() == 17
    assert max(len(line) for line in table.lines()[1:]) == 17
    assert table.printable()
    assert not SpacedTable("t" * 18, titles, rows, [False, True, True]).printable()
