"""``inputs/_csv_table``, the one checked CSV read of the report formats (rocprofv3, Tenstorrent,
ncu), called directly: every refusal's place and words, and the cells and lines it keeps."""

from __future__ import annotations

import csv

import polars as pl
import pytest

from tileprof.core.errors import InputError
from tileprof.inputs._csv_table import (
    ANY_CELL,
    CELL_LIMIT,
    INT_LIMIT,
    LINE,
    RECORD_BATCH,
    decode,
    field_limit,
    header_spelling,
    numbers,
    read_text_table,
    records,
)


def _error(call: object, *args: object, **kwargs: object) -> str:
    with pytest.raises(InputError) as info:
        call(*args, **kwargs)  # type: ignore[operator]
    return str(info.value)


def test_decode_drops_a_byte_order_mark_and_names_a_bad_byte() -> None:
    assert decode("r.csv", "\ufeffa,b\n".encode()) == "a,b\n"
    assert decode("r.csv", "é".encode()) == "é"
    assert _error(decode, "r.csv", b"ab\xff") == "r.csv: byte 2: not UTF-8 text"


def test_records_name_the_line_each_starts_on() -> None:
    text = 'a,b\r\n"x\ny",2\rlast,3\n'
    assert list(records("r.csv", text)) == [(1, ["a", "b"]), (2, ["x\ny", "2"]), (4, ["last", "3"])]
    assert list(records("r.csv", "a\nb\n", first=10)) == [(10, ["a"]), (11, ["b"])]
    skipped = list(records("r.csv", "a\n# note\nb\n", skip=lambda line: line.startswith("#")))
    assert skipped == [(1, ["a"]), (3, ["b"])]


def test_records_refuse_bad_quoting_and_long_cells_at_their_line() -> None:
    assert _error(list, records("r.csv", 'a\n"b\nc\n')) == (
        "r.csv: line 2: a quoted cell is never closed (truncated file?)"
    )
    assert _error(list, records("r.csv", 'a\n"b"x\n')) == (
        "r.csv: line 2: malformed CSV: ',' expected after '\"'"
    )
    long = "a\n" + "x" * (CELL_LIMIT + 1) + "\n"
    assert _error(list, records("r.csv", long)) == (
        f"r.csv: line 2: a cell longer than {CELL_LIMIT:,} characters"
    )
    assert list(records("r.csv", "a\n" + "x" * CELL_LIMIT + "\n"))[1][0] == 2


def test_a_table_keeps_text_cells_nulls_and_each_rows_line() -> None:
    data = b'name , n\r\nk1,1\r\n\r\n"k,2",\r\n  , 3\r\n'
    frame = read_text_table("r.csv", data, ["name"])
    assert frame.columns == ["name", "n", LINE]
    assert frame.schema[LINE] == pl.Int64 and frame.schema["n"] == pl.String
    assert frame.rows() == [("k1", "1", 2), ("k,2", None, 4), ("  ", " 3", 5)]


def test_header_names_are_folded_or_numbered_when_blank() -> None:
    frame = read_text_table("r.csv", b"Name,,X\na,b,c\n", ["name"], fold_case=True)
    assert frame.columns == ["name", "(column 2)", "x", LINE]
    spelled = header_spelling(b"\xef\xbb\xbfName , X\xff\n1,2\n")
    assert spelled == {"name": "Name", "x\ufffd": "X\ufffd"}
    assert header_spelling(b"") == {}


@pytest.mark.parametrize(
    ("data", "required", "message"),
    [
        (b"a,b\n1,2\n", ["c"], "line 1: column 'c' is missing"),
        (b"a,A\n1,2\n", [], "line 1: column 'A' is named twice"),
        (b"a,b\n1,2\na,b\n", [], "line 3: the header again (two files joined?)"),
        (b"a,b\n1,2\n3,4,5\n", [], "line 3: malformed CSV: 3 fields, expected 2"),
        (b"a,b\n1,2\n3\n", [], "line 3: 1 fields, expected 2 (a row cut short)"),
        (b"a,b\n1,2\n3", [], "line 3: 1 fields, expected 2 (truncated file?)"),
        (b"a,b\n1,2\nX", [], "line 3: 1 fields, expected 2 (truncated file?)"),
        (b'a,b\n1,2\n"3,4\n', [], "line 3: a quoted cell is never closed (truncated file?)"),
        (b"", [], "line 1: the file ends inside its header (cut short?)"),
        (b"a,b", [], "line 1: the file ends inside its header (cut short?)"),
        (b"a,b\n", [], "line 1: a header and no rows"),
        (b"a,b\n\n \n", [], "line 1: a header and no rows"),
        (b"a,b\n1,\xff\n", [], "byte 6: not UTF-8 text"),
    ],
)
def test_a_table_refused_at_its_line(data: bytes, required: list[str], message: str) -> None:
    assert _error(read_text_table, "r.csv", data, required, fold_case=True) == f"r.csv: {message}"


def _raw(*cells: str | None, lines: bool = True) -> pl.DataFrame:
    frame = pl.DataFrame({"Dur": list(cells)}, schema={"Dur": pl.String})
    if lines:
        frame = frame.with_columns(pl.Series(LINE, [10 + 2 * i for i in range(len(cells))]))
    return frame


def test_numbers_as_floats_or_exact_integers() -> None:
    floats = numbers("r.csv", _raw(" 1.5", None, "2"), "Dur")
    assert floats.dtype == pl.Float64 and floats.to_list() == [1.5, None, 2.0]
    exact = numbers("r.csv", _raw("9007199254740993", "4.0", None), "Dur", integer=True)
    assert exact.dtype == pl.Int64 and exact.to_list() == [9007199254740993, 4, None]
    absent = numbers("r.csv", _raw("1"), "other", integer=True)
    assert (absent.name, absent.dtype, absent.to_list()) == ("other", pl.Int64, [None])
    assert numbers("r.csv", _raw("1"), "other").dtype == pl.Float64


@pytest.mark.parametrize(
    ("cells", "options", "message"),
    [
        (("1", "x"), {}, "line 12, column 'duration': not a number: 'x'"),
        (("nan",), {}, "line 10, column 'duration': not a finite number: 'nan'"),
        (("-inf",), {"integer": True}, "line 10, column 'duration': not a finite number: '-inf'"),
        (("1.5",), {"integer": True}, "line 10, column 'duration': not an integer: '1.5'"),
        (
            ("9223372036854775808",),
            {"integer": True},
            "line 10, column 'duration': out of range for a 64-bit integer: '9223372036854775808'",
        ),
        (("-1",), {"minimum": 0}, "line 10, column 'duration': negative: '-1'"),
        (("2", "0.5"), {"minimum": 1}, "line 12, column 'duration': below 1: '0.5'"),
        (("1", None), {"required": True}, "line 12, column 'duration': empty cell"),
        (  # shortened to 80 characters, the ellipsis in the middle
            ("1", "y" * 100),
            {},
            "line 12, column 'duration': not a number: '" + "y" * 40 + "…" + "y" * 39 + "'",
        ),
    ],
)
def test_numbers_refused_at_line_and_column_as_written(
    cells: tuple[str | None, ...], options: dict[str, object], message: str
) -> None:
    raw = _raw(*cells).rename({"Dur": "dur"})
    said = _error(numbers, "r.csv", raw, "dur", {"dur": "duration"}, **options)
    assert said == f"r.csv: {message}"


def test_the_integer_range_ends_exactly_and_lines_default_to_rows() -> None:
    assert float(-(2**63)) == -INT_LIMIT
    ends = _raw("-9223372036854775808", "9223372036854775807", "1e18")
    assert numbers("r.csv", ends, "Dur", integer=True).to_list() == [
        -(2**63),
        2**63 - 1,
        10**18,
    ]
    assert _error(numbers, "r.csv", _raw("-9223372036854775809"), "Dur", integer=True) == (
        "r.csv: line 10, column 'Dur': out of range for a 64-bit integer: '-9223372036854775809'"
    )
    for written in ("1e19", "9.223372036854775808e18"):  # the second is 2^63 exactly
        assert _error(numbers, "r.csv", _raw(written), "Dur", integer=True) == (
            f"r.csv: line 10, column 'Dur': out of range for a 64-bit integer: '{written}'"
        )
    # without the line column a row's line is its index plus the header's
    assert _error(numbers, "r.csv", _raw("1", "x", lines=False), "Dur") == (
        "r.csv: line 3, column 'Dur': not a number: 'x'"
    )
    # a column the map does not name is shown as it is
    assert _error(numbers, "r.csv", _raw("x"), "Dur", {"other": "Other"}) == (
        "r.csv: line 10, column 'Dur': not a number: 'x'"
    )


def test_the_cell_limit_is_held_not_set() -> None:
    """Readers on threads hold the limit in turn: the largest held is in force, one letting go
    never lowers another's, and the process's own setting comes back after the last."""
    before = csv.field_size_limit()
    first, second = field_limit(CELL_LIMIT), field_limit(ANY_CELL)
    first.__enter__()
    assert csv.field_size_limit() == CELL_LIMIT
    second.__enter__()
    assert csv.field_size_limit() == ANY_CELL
    first.__exit__(None, None, None)
    assert csv.field_size_limit() == ANY_CELL
    second.__exit__(None, None, None)
    assert csv.field_size_limit() == before
    with pytest.raises(ValueError), field_limit(5):
        assert csv.field_size_limit() == 5
        raise ValueError
    assert csv.field_size_limit() == before


def test_records_hold_the_limit_only_while_reading() -> None:
    """A reader left unfinished (an error raised on a row, the caller's traceback keeping it)
    holds no limit: 200,000-character cells are read, and the limit is as before after each
    record is handed out."""
    before = csv.field_size_limit()
    rows = records("r.csv", "a,b\n" + "x" * 200_000 + ",1\n3,4\n")
    assert next(rows) == (1, ["a", "b"])
    assert csv.field_size_limit() == before
    assert next(rows)[1][1] == "1"
    assert csv.field_size_limit() == before


def test_records_past_a_batch_keep_their_lines_and_a_fault_comes_after_the_records_before_it() -> (
    None
):
    """Records are read ``RECORD_BATCH`` at a time under one hold of the limit: every record
    still comes with its line, and a fault inside a batch is raised only once the records
    before it were handed out, so a caller that checks each record names the first bad line
    (here its own check of line 3, before the unclosed quote of the last line)."""
    count = 2 * RECORD_BATCH + 5
    text = "".join(f"{i},x\n" for i in range(count))
    got = list(records("r.csv", text))
    assert got == [(i + 1, [str(i), "x"]) for i in range(count)]
    assert list(records("r.csv", "".join(f"{i}\n" for i in range(RECORD_BATCH)))) == [
        (i + 1, [str(i)]) for i in range(RECORD_BATCH)
    ]

    def check_each(text: str) -> None:
        for line, record in records("r.csv", text):
            if len(record) != 2:
                raise InputError("r.csv", f"line {line}", f"{len(record)} fields, expected 2")

    one_batch = "a,b\n1,2\n3\n" + "4,5\n" * 10 + '"6,7\n'  # both faults in the first batch
    assert _error(check_each, one_batch) == "r.csv: line 3: 1 fields, expected 2"
    bad = "a,b\n1,2\n" + "4,5\n" * RECORD_BATCH + '"6,7\n'
    handed: list[int] = []
    with pytest.raises(InputError) as info:
        for line, _ in records("r.csv", bad):
            handed.append(line)
    assert str(info.value) == (
        f"r.csv: line {RECORD_BATCH + 3}: a quoted cell is never closed (truncated file?)"
    )
    assert handed == list(range(1, RECORD_BATCH + 3))
