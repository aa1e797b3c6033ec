"""``breakdown``'s terminal tables, laid out without rich (``views.fit.SpacedTable``), held to
rich's own rendering of the same table, fitted to the same width."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from tileprof.views.breakdown_export import TABLE_WIDTH, _table, rich_table, table_fit

_TEXT = st.text(alphabet=st.sampled_from("ab Z09,.%—…_-µ界語é[]:\n"), min_size=0, max_size=14)
_TITLE = st.text(alphabet=st.sampled_from("ab Z09 µ()界"), min_size=1, max_size=50)


@st.composite
def _tables(draw: st.DrawFn) -> tuple[str, list[str], list[list[str]], int | None, int]:
    columns = draw(st.integers(2, 6))
    header = draw(st.lists(_TEXT.filter(str.strip), min_size=columns, max_size=columns,
                           unique=True))  # fmt: skip
    rows = draw(st.lists(st.lists(_TEXT, min_size=columns, max_size=columns), max_size=6))
    width = draw(st.none() | st.integers(8, 160))
    return draw(_TITLE), header, rows, width, draw(st.integers(1, 2))


@given(_tables())
@example(("Ranks: compute and communication overlap", ["a", "b"], [["x", "1"]], None, 1))
@example(("a title wider than its table", ["a", "b"], [["x", "1"]], None, 1))
@example(("Time :smile: µs", ["device and step", "a::b"], [["x", ":smile:"]], None, 1))
def test_breakdown_tables_print_as_rich_prints_them(
    table: tuple[str, list[str], list[list[str]], int | None, int],
) -> None:
    """Wide characters, empty names ("—"), markup and emoji-code characters, newlines, cells
    wider than a narrow terminal, titles wider than their table: the same text as rich's
    ``Table(box=None, pad_edge=False)`` fitted to the same width."""
    title, header, rows, width, names = table
    fit = table_fit(header, names, None)
    target = TABLE_WIDTH if width is None else width
    assert _table(title, header, rows, width, names) == rich_table(
        title, header, rows, target, names, fit
    )


def test_a_wide_table_is_laid_out_without_rich() -> None:
    """The plain layout is the one taken for an ordinary table (not only the fallback), and
    it is what rich prints: names left, figures right, two spaces between columns."""
    from tileprof.views.fit import SpacedTable

    header = ["device", "step", "busy µs", "idle"]
    rows = [["0 NVIDIA H200", "#4 (cpu)", "49,439", "77.09%"], ["0 NVIDIA H200", "whole", "9", "—"]]
    table = SpacedTable("Time (µs)", header, rows, [False, False, True, True])
    assert table.printable()
    assert table.lines() == [
        "Time (µs)",
        "device         step      busy µs    idle",
        "0 NVIDIA H200  #4 (cpu)   49,439  77.09%",
        "0 NVIDIA H200  whole           9       —",
    ]
    assert _table("Time (µs)", header, rows) == "".join(f"{line}\n" for line in table.lines())
    assert SpacedTable("Ranks: overlap", header, rows, [False, False, True, True]).printable()
    assert not SpacedTable("a title wider than its table", ["a"], [], [True]).printable()
