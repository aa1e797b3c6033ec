"""CSV reports read as text tables: one checked read shared by the report formats.

rocprofv3 kernel traces, Tenstorrent ops reports, ``ncu --csv`` output and nsys's
``cuda_gpu_kern_sum`` reports are CSV with a header row (nsys's reader takes ``records`` only:
its report has its own header checks and lines before the header). Records are read by
Python's ``csv`` module (RFC 4180 quoting: a quoted cell may hold commas, quotes and line
ends), with these rules, stated in docs/reliability.md:

- line ends are LF, CRLF or a bare CR; no other character (U+2028, form feed, …) ends a line;
- a cell holds at most ``CELL_LIMIT`` characters (long C++ template names are read);
- a quote never closed, a record with fewer or more fields than the header, a column named
  twice, the header repeated as a row (two files joined), and a header with no line end and
  no rows (a file cut inside its header) are errors naming the line;
- empty cells are null; a numeric column is converted and checked by ``numbers``: text that
  is no number, NaN, ±inf, a fraction or out-of-range value where an integer is expected,
  and a value under the column's minimum are errors naming the line and column.
"""

from __future__ import annotations

import contextlib
import csv
import io
import threading
from collections.abc import Callable, Collection, Iterator
from pathlib import Path

import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.text import shorten

CELL_LIMIT = 16 * 2**20
"""The most characters one CSV cell may hold (16 Mi): a C++ template name of hundreds of
kilobytes is read; a longer cell is an error naming its line."""
ANY_CELL = 2**31 - 1
"""``csv``'s largest cell limit: for the readers whose cells polars has already read (a tile
dump's or a device log's), which only place a fault."""
INT_LIMIT = 2.0**63
"""Integer cells must lie in [-2^63, 2^63)."""
LINE = "\x00line"
"""The column of ``read_text_table``'s frame that holds each row's line number (a quoted line
end or a blank line makes it differ from the row's index)."""


def decode(path: str | Path, data: bytes) -> str:
    """The file's text (a UTF-8 byte-order mark dropped); InputError naming the byte when it
    is not UTF-8."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None


_LIMIT_LOCK = threading.Lock()
_limits_held: list[int] = []
_limit_before: list[int] = []


RECORD_BATCH = 1024
"""Records ``records`` reads under one hold of the cell limit: a hold per record took 2 of
the 2.7 µs a record cost (``benchmarks/csv_records.py``)."""


@contextlib.contextmanager
def field_limit(limit: int = CELL_LIMIT) -> Iterator[None]:
    """``csv``'s cell limit at least ``limit`` inside the block.

    The limit is one setting of the whole process, and a job's files are read on threads: each
    reader holds the limit it needs, the largest held is in force, and the setting from before
    the first comes back when the last lets go (so one file reads the same whatever was read
    before it, and a reader finishing never lowers another's limit under it). ``limit`` is a
    floor: beside a reader holding ``ANY_CELL``, a report's cell over ``CELL_LIMIT`` is read."""
    with _LIMIT_LOCK:
        if not _limits_held:
            _limit_before.append(csv.field_size_limit())
        _limits_held.append(limit)
        csv.field_size_limit(max(_limits_held))
    try:
        yield
    finally:
        with _LIMIT_LOCK:
            _limits_held.remove(limit)
            csv.field_size_limit(max(_limits_held) if _limits_held else _limit_before.pop())


def _csv_error(exc: csv.Error) -> str:
    text = str(exc)
    if "field limit" in text:
        return f"a cell longer than {CELL_LIMIT:,} characters"
    if "unexpected end of data" in text:
        return "a quoted cell is never closed (truncated file?)"
    return f"malformed CSV: {text}"


def records(
    path: str | Path, text: str, *, skip: Callable[[str], bool] | None = None, first: int = 1
) -> Iterator[tuple[int, list[str]]]:
    """Each CSV record of ``text`` with the line it starts on (``first`` is the first line's
    number); lines for which ``skip`` is true are left out (a tool's own messages between
    records). InputError naming the line for a cell over ``CELL_LIMIT`` or bad quoting."""
    state = {"line": first - 1, "start": 0}

    def lines() -> Iterator[str]:
        for line in io.StringIO(text, newline=""):
            state["line"] += 1
            if skip is not None and skip(line):
                continue
            if not state["start"]:
                state["start"] = state["line"]
            yield line

    reader = csv.reader(lines(), strict=True)
    while True:
        batch, fault = _record_batch(reader, state)
        yield from batch  # the records before a fault first, so a caller's own check of them
        if fault is not None:  # names the first bad line, as one record at a time would
            raise InputError(path, f"line {fault[0]}", fault[1])
        if len(batch) < RECORD_BATCH:
            return


def _record_batch(
    reader: Iterator[list[str]], state: dict[str, int]
) -> tuple[list[tuple[int, list[str]]], tuple[int, str] | None]:
    """Up to ``RECORD_BATCH`` records with their lines, read under one hold of the cell limit
    (``field_limit``); the line and the words of the fault that ended the batch, if one did."""
    batch: list[tuple[int, list[str]]] = []
    with field_limit():  # held while reading, not while the caller has the records
        while len(batch) < RECORD_BATCH:
            state["start"] = 0
            try:
                record = next(reader)
            except StopIteration:
                break
            except csv.Error as exc:
                return batch, (state["start"] or state["line"], _csv_error(exc))
            batch.append((state["start"], record))
    return batch, None


def read_text_table(
    path: str | Path, data: bytes, required: Collection[str], *, fold_case: bool = False
) -> pl.DataFrame:
    """Every cell of the CSV as text, empty cells null (header names stripped; lower-cased
    with ``fold_case``); InputError naming the line for what the module docstring lists, a
    missing ``required`` column, or a file of no rows."""
    text = decode(path, data)
    rows = records(path, text)
    line, first = next(rows, (1, []))
    header = [h.strip() or f"(column {i + 1})" for i, h in enumerate(first)]
    names = [h.lower() for h in header] if fold_case else header
    _check_header(path, names, header, required)
    width = len(header)
    kept: list[list[str]] = []
    at: list[int] = []
    last = line
    for line, record in rows:
        if len(record) != width or record == first:
            if not any(c.strip() for c in record):
                continue  # a blank line
            _bad_record(path, line, record, header, at_end=text[-1] not in "\r\n")
        kept.append(record)
        at.append(line)
        last = line
    if not kept:
        cut = "\r" not in text and "\n" not in text
        why = "the file ends inside its header (cut short?)" if cut else "a header and no rows"
        raise InputError(path, f"line {last}", why)
    columns = zip(*kept, strict=True)
    frame = pl.DataFrame(
        [pl.Series(n, c, dtype=pl.String) for n, c in zip(names, columns, strict=True)]
    )
    cells = [pl.when(pl.col(n) != "").then(pl.col(n)).alias(n) for n in names]
    return frame.select(*cells, pl.Series(LINE, at, dtype=pl.Int64))


def _check_header(
    path: str | Path, names: list[str], header: list[str], required: Collection[str]
) -> None:
    missing = [c for c in required if c not in names]
    if missing:
        raise InputError(path, "line 1", f"column {missing[0]!r} is missing")
    seen: set[str] = set()
    for name, written in zip(names, header, strict=True):
        if name in seen:
            raise InputError(path, "line 1", f"column {written!r} is named twice")
        seen.add(name)


def _bad_record(
    path: str | Path, line: int, record: list[str], header: list[str], *, at_end: bool
) -> None:
    """InputError for a record that is the header again or has the wrong number of fields."""
    if [c.strip() for c in record] == header:
        raise InputError(path, f"line {line}", "the header again (two files joined?)")
    fields = f"{len(record)} fields, expected {len(header)}"
    if len(record) > len(header):
        raise InputError(path, f"line {line}", f"malformed CSV: {fields}")
    why = "truncated file?" if at_end else "a row cut short"
    raise InputError(path, f"line {line}", f"{fields} ({why})")


def header_spelling(data: bytes) -> dict[str, str]:
    """Each header name lower-cased → as the file spells it (for errors after ``fold_case``)."""
    text = data.decode("utf-8-sig", errors="replace")
    first = next(records("", text), (1, []))[1]
    return {h.strip().lower(): h.strip() for h in first}


def numbers(
    path: str | Path,
    raw: pl.DataFrame,
    column: str,
    written: dict[str, str] | None = None,
    *,
    integer: bool = False,
    minimum: float | None = None,
    required: bool = False,
) -> pl.Series:
    """The column as Float64 (Int64 with ``integer``; empty cells null). InputError naming
    the line (the header is line 1) and column, as the file spells it (``written`` maps a
    folded name back), for a cell that is no number, NaN or ±inf, no integer in [-2^63, 2^63)
    where ``integer``, under ``minimum``, or empty where ``required``."""
    if column not in raw.columns:
        return pl.Series(column, [None] * raw.height, dtype=pl.Int64 if integer else pl.Float64)
    cells = raw[column].str.strip_chars()
    values = cells.cast(pl.Float64, strict=False)
    shown = written.get(column, column) if written else column
    checks: list[tuple[pl.Series, str]] = [
        (cells.is_not_null() & (cells != "") & values.is_null(), "not a number"),
        (values.is_nan() | values.is_infinite(), "not a finite number"),
    ]
    # an integer written out is read exactly (2^63 - 1 has no Float64 of its own), and one
    # that Int64 cannot hold is out of range even where its Float64 rounds into it
    exact = cells.cast(pl.Int64, strict=False) if integer else None
    if exact is not None:
        beyond = (values >= INT_LIMIT) | (values < -INT_LIMIT)
        digits = cells.str.contains(r"^[+-]?[0-9]+$")
        outside = (beyond | digits) & values.is_finite() & exact.is_null()
        checks.append((outside, "out of range for a 64-bit integer"))
        checks.append(((values != values.floor()) & values.is_finite(), "not an integer"))
    if minimum is not None:
        below = "negative" if minimum == 0 else f"below {minimum:g}"
        checks.append((values < minimum, below))
    if required:
        checks.append((values.is_null(), "empty cell"))
    for bad, what in checks:
        found = bad.fill_null(False).arg_true()
        if found.len():
            i = int(found[0])
            line = raw[LINE][i] if LINE in raw.columns else i + 2
            said = f"{what}: {shorten(cells[i], 80)!r}" if cells[i] else what
            raise InputError(path, f"line {line}, column {shown!r}", said)
    if exact is None:
        return values
    return exact.fill_null(values.cast(pl.Int64, strict=False))
