"""The summary's machine formats and the summary document read back as an input:
``views/summary_json.py`` (seed 004's layout: two-space indent, text as written, one newline
at the end), ``views/summary_csv.py`` (every digit of every float) and
``inputs/summary_document.py`` (one JSON object, broken JSON named by its line)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from tests.samples import profile, sample
from tileprof.analyses.summary import Summary, summarize
from tileprof.core.errors import InputError
from tileprof.inputs.sources import parse_summary_document
from tileprof.inputs.summary_document import READER, parse
from tileprof.views import summary_csv, summary_json


@pytest.fixture
def summary(tmp_path: Path) -> Summary:
    """Two groups, one named in non-ASCII text, with a utilization that is not a short float."""
    samples = [
        sample(0, 0, 3, "gemm", useful=1),
        sample(1, 0, 7, "gemm", useful=2),
        sample(0, 10, 9, "réduction", useful=1),
    ]
    return _summary(tmp_path, samples)


def _summary(tmp_path: Path, samples: list[dict[str, object]]) -> Summary:
    loaded = profile(tmp_path, samples, clockHz=1_000, tileCount=2)
    return summarize(loaded.samples, loaded.metadata, clock_hz=1_000, tile_count=2)


def test_json_is_the_document_two_space_indented_ending_in_a_newline(summary: Summary) -> None:
    text = summary_json.render(summary)
    assert json.loads(text) == json.loads(json.dumps(summary.to_document()))
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert text.startswith('{\n  "')
    assert '\n    {\n      "' in text  # the second and third levels by four and six
    assert '"réduction"' in text  # as written, not \u00e9


def test_json_writes_an_undefined_number_as_null(tmp_path: Path) -> None:
    samples = [sample(0, 0, 5, "k")]  # no useful cycles: the useful utilization is undefined
    text = summary_json.render(_summary(tmp_path, samples))
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text)["groups"][0]["usefulUtilization"] is None


def test_csv_is_one_row_per_group_with_every_digit(summary: Summary) -> None:
    text = summary_csv.render(summary)
    read = pl.read_csv(text.encode())
    assert read.columns == summary.groups.columns
    assert read.height == summary.groups.height == 2
    floats = [c for c, t in summary.groups.schema.items() if t == pl.Float64]
    assert floats
    for column in floats:
        assert read[column].to_list() == summary.groups[column].to_list()
    assert "0.333333333" in text or "0.666666666" in text or "0.111111111" in text


def test_a_summary_document_is_one_json_object() -> None:
    assert parse("s.json", b'{"groups": []}') == {"groups": []}
    assert READER.parse(Path("s.json"), b'{"a": 1}') == {"a": 1}
    assert parse_summary_document("s.json", b'{"b": 2}') == {"b": 2}


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        (b'{\n  "groups": [,]\n}', "line 2", "invalid JSON: Expecting value"),
        (b'{"groups": [', "line 1", "invalid JSON: Expecting value"),
        (b"[]", "$", "a summary document is one JSON object"),
        (b'"text"', "$", "a summary document is one JSON object"),
    ],
)
def test_a_bad_summary_document_is_named(data: bytes, where: str, message: str) -> None:
    with pytest.raises(InputError) as caught:
        parse(Path("doc.json"), data)
    assert caught.value.where == where
    assert caught.value.message == message
    assert str(caught.value).startswith(f"doc.json: {where}: ")
