"""CSV reports read as text tables: one checked read shared by the report formats.

rocprofv3 kernel traces and Tenstorrent ops reports are plain CSV with a header row. Every
cell is read as text first (polars, no type inference: a column that is empty in the first
rows must not become the wrong type), then each numeric column is converted and checked here,
so a bad cell is named by its line and column and a cut-off last line is named as a
truncated file rather than read as a row of nulls.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Collection
from pathlib import Path

import polars as pl

from tileprof.core.errors import InputError


def read_text_table(
    path: str | Path, data: bytes, required: Collection[str], *, fold_case: bool = False
) -> pl.DataFrame:
    """Every cell of the CSV as text (header names stripped; lower-cased with ``fold_case``).

    InputError when the text is not UTF-8, a ``required`` column is missing, the last line
    has fewer fields than the header (a truncated file), or the CSV is malformed.
    """
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"byte {exc.start}", "not UTF-8 text") from None
    lines = text.splitlines()
    header = [h.strip() for h in next(csv.reader(lines[:1]), [])]
    names = [h.lower() for h in header] if fold_case else header
    missing = [c for c in required if c not in names]
    if missing:
        raise InputError(path, "line 1", f"column {missing[0]!r} is missing")
    last = max((i for i, ln in enumerate(lines) if ln.strip()), default=0)
    fields = len(next(csv.reader(lines[last : last + 1]), []))
    if last > 0 and fields < len(header):
        raise InputError(
            path, f"line {last + 1}", f"{fields} fields, expected {len(header)} (truncated file?)"
        )
    try:
        raw = pl.read_csv(io.StringIO(text), infer_schema=False, raise_if_empty=False)
    except (pl.exceptions.ComputeError, pl.exceptions.NoDataError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise InputError(path, "CSV", f"malformed CSV: {first}") from None
    return raw.rename(dict(zip(raw.columns, names, strict=True)))


def header_spelling(data: bytes) -> dict[str, str]:
    """Each header name lower-cased → as the file spells it (for errors after ``fold_case``)."""
    first = data.decode("utf-8-sig", errors="replace").split("\n", 1)[0]
    return {h.strip().lower(): h.strip() for h in next(csv.reader([first]), [])}


def numbers(
    path: str | Path, raw: pl.DataFrame, column: str, written: dict[str, str] | None = None
) -> pl.Series:
    """The column as Float64 (empty cells null); a cell that is no number is an InputError
    naming its line (the header is line 1) and column, as the file spells it (``written``
    maps a folded name back)."""
    if column not in raw.columns:
        return pl.Series(column, [None] * raw.height, dtype=pl.Float64)
    cells = raw[column].str.strip_chars()
    values = cells.cast(pl.Float64, strict=False)
    bad = (cells.is_not_null() & (cells != "") & values.is_null()).arg_true()
    if bad.len():
        i = int(bad[0])
        shown = written.get(column, column) if written else column
        raise InputError(path, f"line {i + 2}, column {shown!r}", f"not a number: {cells[i]!r}")
    return values
