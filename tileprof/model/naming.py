"""How an input is named in rows, notes and titles: its file name, or the path as given where
two inputs share a file name (rank0/trace.json, rank1/trace.json), as every command names it.

A reader writes rows and notes with the file's name ("trace.json: device 0"); the reading of
several files renames those of a shared name here, so that no table, kernel set, finding or
critical path mixes two files under one name.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import polars as pl


def display_names(paths: Sequence[Path]) -> list[str]:
    """Each input's name: its file name, or the path as given where two share a file name
    (rank0/trace.json, rank1/trace.json; a third, other.json, keeps its file name)."""
    counts = Counter(p.name for p in paths)
    return [str(p) if counts[p.name] > 1 else p.name for p in paths]


def renamed_text(text: str, own: str, name: str) -> str:
    """``text`` that begins with a file's name ``own`` ("t.json: …"), beginning with ``name``
    instead; other text as it is."""
    return name + text[len(own) :] if text.startswith(own) else text


def renamed_frame(frame: pl.DataFrame, own: str, name: str) -> pl.DataFrame:
    """``frame`` (run or op rows) with ``renamed_text`` applied to its ``source`` column."""
    column = pl.col("source")
    renamed = pl.lit(name) + column.str.slice(len(own))
    return frame.with_columns(
        pl.when(column.str.starts_with(own)).then(renamed).otherwise(column).alias("source")
    )


def renamed_rows(
    frame: pl.DataFrame, notes: list[str], own: str, name: str
) -> tuple[pl.DataFrame, list[str]]:
    """A reader's rows and notes (run or op rows) about the file ``own``, about ``name``."""
    return renamed_frame(frame, own, name), [renamed_text(n, own, name) for n in notes]
