"""The CSV dump reader (``tileprof.inputs.tile.csv_dump``): the header comment, and the place
every fault is named at. polars reads the file; when it refuses one, a strict ``csv`` reader
re-reads it only to find the line and column, held here to faults placed by hand."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tileprof.core.errors import InputError
from tileprof.inputs.tile.csv_dump import READER, locate_csv_fault, parse

HEAD = b"physicalTile,offset,duration"
COMMENT = b'# {"clockHz": 100, "tileCount": 4}'


def _error(data: bytes) -> str:
    with pytest.raises(InputError) as caught:
        parse(Path("c.csv"), data)
    return str(caught.value)


def test_the_header_comment_gives_the_device() -> None:
    parsed = parse(Path("c.csv"), COMMENT + b"\n" + HEAD + b"\n0,1,2\n3,4,5\n")
    assert (parsed.header.clock_hz, parsed.header.tile_count) == (100, 4)
    assert parsed.samples["offset"].to_list() == [1, 4]
    bare = parse(Path("c.csv"), HEAD + b"\n0,1,2\n")
    assert (bare.header.clock_hz, bare.header.tile_count) == (None, None)
    assert READER.parse(Path("c.csv"), HEAD + b"\n0,1,2\n").samples.height == 1


@pytest.mark.parametrize(
    ("comment", "expected"),
    [
        (
            b'# {"clockHz": "fast"}',
            "c.csv: line 1: bad header comment: clockHz: expected `int | float | null`, got `str`",
        ),
        (b"#  {}", None),
        (b"# [1]", "c.csv: line 1: bad header comment: expected `object`, got `array`"),
        (
            b"# not json",  # msgspec's place: where it gave up on "not"
            "c.csv: line 1, column 7: bad header comment: malformed JSON: invalid character",
        ),
        (
            b'#{"clockHz": 1e9, x}',
            "c.csv: line 1, column 19: bad header comment: malformed JSON: object keys must be",
        ),
        (
            b"#",
            "c.csv: line 1, column 2: bad header comment: malformed JSON: truncated: the file "
            "ends inside the document",
        ),
    ],
)
def test_a_bad_header_comment_is_line_1(comment: bytes, expected: str | None) -> None:
    """Worded as a sample line's error is: the key at fault, or the JSON's reason at its
    column in the file's line (the "#" is column 1)."""
    data = comment + b"\n" + HEAD + b"\n0,1,2\n"
    if expected is None:
        assert parse(Path("c.csv"), data).samples.height == 1
    else:
        assert _error(data).startswith(expected)


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        ([HEAD, b"0,1,2", b"1,x,3"], "line 3, column offset: 'x' is not an integer"),
        ([COMMENT, HEAD, b"0,1,2", b"1,x,3"], "line 4, column offset: 'x' is not an integer"),
        ([HEAD, b"0,1,2", b"3,4,5,6"], "line 3, column 7: malformed CSV: 4 fields, expected 3"),
        ([COMMENT, HEAD, b"3,44,5,6"], "line 3, column 8: malformed CSV: 4 fields, expected 3"),
        ([HEAD, b"0,1,2", b"", b"3,4,5,6"], "line 4, column 7: malformed CSV: 4 fields"),
        ([HEAD, b'0,"1"x,2'], "line 2: malformed CSV: ',' expected after '\"'"),
        ([HEAD, b'0,"1,2'], "line 2: malformed CSV: unexpected end of data"),
        ([HEAD, b"0,1,\xff"], "line 2, column 5: not UTF-8 text (byte 0xff)"),
        ([COMMENT, HEAD, b"0,1,2", b"0,\xff,2"], "line 4, column 3: not UTF-8 text (byte 0xff)"),
    ],
)
def test_each_fault_names_its_line_and_column(lines: list[bytes], expected: str) -> None:
    assert _error(b"\n".join(lines) + b"\n").startswith(f"c.csv: {expected}")


def test_a_fault_polars_finds_and_the_csv_reader_does_not_is_named_in_polars_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first line of polars' message, or the exception's name when it has none."""
    import polars as pl

    raised: list[Exception] = [
        pl.exceptions.ComputeError("could not parse\nsecond line"),
        pl.exceptions.NoDataError(),
    ]

    def refuse(*args: object, **kwargs: object) -> pl.DataFrame:
        raise raised.pop(0)

    monkeypatch.setattr(pl, "read_csv", refuse)
    assert _error(HEAD + b"\n0,1,2\n") == "c.csv: CSV: malformed CSV: could not parse"
    assert _error(HEAD + b"\n") == "c.csv: CSV: malformed CSV: NoDataError"


def test_locate_finds_nothing_in_a_well_formed_table() -> None:
    assert locate_csv_fault(HEAD + b"\n0,1,2\n\n3,4,5\n") is None
    assert locate_csv_fault(b"") is None


def test_locate_counts_lines_from_the_first_it_is_given() -> None:
    data = HEAD + b"\n0,1,2\n3,4,5,6\n"
    assert locate_csv_fault(data) == ("line 3, column 7", "4 fields, expected 3 as in the header")
    assert locate_csv_fault(data, 2) == (
        "line 4, column 7",
        "4 fields, expected 3 as in the header",
    )


def test_a_quoted_field_over_lines_counts_the_record_from_its_first_line() -> None:
    """A record that spans lines (a quoted newline) is placed at the line it starts on."""
    data = HEAD + b'\n0,"a\nb",2\n3,4,5,6\n'
    assert locate_csv_fault(data) == ("line 4, column 7", "4 fields, expected 3 as in the header")
    spanning = HEAD + b'\n0,1,2\n0,"a\nb",2,9\n'
    assert locate_csv_fault(spanning) == (
        "line 3, column 9",
        "4 fields, expected 3 as in the header",
    )
    short = HEAD + b'\n0,"a\nb",2\n3,4\n'
    assert locate_csv_fault(short) == ("line 4, column 5", "2 fields, expected 3 as in the header")


def test_a_long_field_is_a_field_not_a_fault() -> None:
    """The csv module's default limit is 131,072 characters a field; a kernel name may be
    longer."""
    data = HEAD + b",kernel\n0,1,2," + b"k" * 200_000 + b"\n3,4,5,6,7\n"
    assert locate_csv_fault(data) == (
        "line 3, column 9",
        "5 fields, expected 4 as in the header",
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.lists(st.sampled_from(["1", "22", "", "a b"]), min_size=1, max_size=5), min_size=1)
)
def test_the_first_row_of_another_width_is_the_one_named(rows: list[list[str]]) -> None:
    """Against a plain walk: the first non-empty row whose width differs from the header's."""
    header = ["h1", "h2", "h3"]
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    found = locate_csv_fault(buffer.getvalue().encode())
    for number, row in enumerate(rows, start=2):
        if len(row) != 3:  # a row of one empty field is written as "", a field
            column = sum(len(field) + 1 for field in row[:3]) + 1
            expected = (
                f"line {number}, column {column}",
                f"{len(row)} fields, expected 3 as in the header",
            )
            assert found == expected
            return
    assert found is None


def test_a_header_comment_without_a_space_is_read() -> None:
    parsed = parse(Path("c.csv"), b'#{"clockHz": 100}\n' + HEAD + b"\n0,1,2\n")
    assert parsed.header.clock_hz == 100


def test_every_text_column_stays_text_even_when_it_looks_like_a_number() -> None:
    """Cells are read as text, never inferred: a kernel named 42 is the name "42"."""
    data = HEAD + b",kind,operation,kernel\n0,1,2,compute,7,42\n1,007,3,compute,8,1e3\n"
    parsed = parse(Path("c.csv"), data)
    assert parsed.samples["kernel"].cast(str).to_list() == ["42", "1e3"]
    assert parsed.samples["operation"].cast(str).to_list() == ["7", "8"]
    assert parsed.samples["offset"].to_list() == [1, 7]


def test_a_fault_in_the_header_row_is_its_line() -> None:
    assert locate_csv_fault(b'physicalTile,"offset"x,duration\n0,1,2\n') == (
        "line 1",
        "',' expected after '\"'",
    )
    assert locate_csv_fault(b'physicalTile,"offset"x\n', 2) == ("line 2", "',' expected after '\"'")


def test_a_quoted_line_break_counts_as_the_characters_written() -> None:
    """A CRLF inside a quoted field is two characters of that field, not one: the column of
    the extra field counts it so."""
    data = HEAD + b'\r\n0,"a\r\nb",2,9\r\n'
    assert locate_csv_fault(data) == ("line 2, column 10", "4 fields, expected 3 as in the header")


def test_bare_cr_line_ends_are_line_ends() -> None:
    """Old Mac line ends (polars reads them): the fault is at its row, not at the first CR."""
    data = HEAD + b"\r0,1,2\r3,4,5,6\r"
    assert locate_csv_fault(data) == ("line 3, column 7", "4 fields, expected 3 as in the header")


def test_locating_a_fault_reads_long_cells_and_leaves_the_limit_as_it_was() -> None:
    """A cell of 200,000 characters (over csv's own 128 KiB limit) is a cell; the process's
    limit is the same after as before."""
    before = csv.field_size_limit()
    long = b"k" * 200_000
    data = HEAD + b"\n0,1,2\n" + long + b",4,5,6\n"
    assert locate_csv_fault(data) == (
        "line 3, column 200006",
        "4 fields, expected 3 as in the header",
    )
    assert csv.field_size_limit() == before
