"""``tileprof.model.naming``: how every command names an input, by hand."""

from __future__ import annotations

from pathlib import Path

import polars as pl

from tileprof.model.naming import display_names, renamed_frame, renamed_text


def test_only_inputs_that_share_a_file_name_take_their_path() -> None:
    paths = [Path("rank0/t.json"), Path("other.json"), Path("rank1/t.json"), Path("t.json")]
    assert display_names(paths) == ["rank0/t.json", "other.json", "rank1/t.json", "t.json"]
    assert display_names([Path("a/x.json"), Path("b/y.json")]) == ["x.json", "y.json"]
    assert display_names([]) == []


def test_text_and_rows_that_begin_with_the_file_name_begin_with_the_name() -> None:
    """A note or a row's source about the file is renamed; one that is not, or null, is kept."""
    assert renamed_text("t.json: 3 notes", "t.json", "rank0/t.json") == "rank0/t.json: 3 notes"
    assert renamed_text("t.json pid 7", "t.json", "a/t.json") == "a/t.json pid 7"
    assert renamed_text("a note of other.json", "t.json", "a/t.json") == "a note of other.json"
    rows = pl.DataFrame({"source": ["t.json: device 0", "t.json: op rows", "x.csv: line 2", None]})
    assert renamed_frame(rows, "t.json", "r0/t.json").get_column("source").to_list() == [
        "r0/t.json: device 0",
        "r0/t.json: op rows",
        "x.csv: line 2",
        None,
    ]


def test_rows_and_notes_together() -> None:
    from tileprof.model.naming import renamed_rows

    rows = pl.DataFrame({"source": ["t.json: op rows"]})
    frame, notes = renamed_rows(rows, ["t.json: 2 notes", "other"], "t.json", "a/t.json")
    assert frame.get_column("source").to_list() == ["a/t.json: op rows"]
    assert notes == ["a/t.json: 2 notes", "other"]
