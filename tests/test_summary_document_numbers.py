"""A summary document's numbers are checked before a diff takes them (bad input, issue 2).

``summary_from_document`` took the header as written and cast the group statistics with
polars' non-strict cast: ``"tileCount": "many"`` was a traceback, a negative clock was a
setup difference, ``true`` was a sample count, and a group's ``"sampleCount": 2.5`` became 2,
which made ``diff`` report a change per sample that no input holds.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tileprof.analyses.summary import summary_from_document
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError


@pytest.fixture(scope="module")
def document(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The bundled example's summary document, as ``summary --format json`` writes it."""
    out = tmp_path_factory.mktemp("doc") / "example.json"
    arguments = ["summary", "--example", "--format", "json", "-o", str(out)]
    result = CliRunner().invoke(cli, arguments)
    assert result.exit_code == 0, result.output
    return json.loads(out.read_text())


def _header(document: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    changed[key] = value
    return changed


def _group(document: dict[str, Any], key: str, value: Any) -> dict[str, Any]:
    changed = copy.deepcopy(document)
    changed["groups"][0][key] = value
    return changed


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("tileCount", "many", "expected a number, got 'many'"),
        ("tileCount", None, "expected a number, got null"),
        ("tileCount", 0, "expected a number above 0, got 0"),
        ("tileCount", 1472.5, "expected a whole number, got 1472.5"),
        ("clockHz", -5, "expected a number above 0, got -5"),
        ("clockHz", math.inf, "expected a number, got inf"),
        ("sampleCount", True, "expected a number, got True"),
        ("sampleCount", -1, "expected a number not below 0, got -1"),
        ("matchedSampleCount", 2.5, "expected a whole number, got 2.5"),
        ("profileSpanCycles", "long", "expected a number or null, got 'long'"),
        ("atOffset", -3, "expected a number not below 0, got -3"),
    ],
)
def test_a_bad_header_number_is_named(
    document: dict[str, Any], key: str, value: Any, message: str
) -> None:
    with pytest.raises(InputError) as raised:
        summary_from_document(_header(document, key, value), "doc.json")
    assert (raised.value.path, raised.value.where, raised.value.message) == (
        "doc.json",
        key,
        message,
    )


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("sampleCount", 2.5, "expected a whole number, got 2.5"),
        ("phaseCycles", -3, "expected a number not below 0, got -3"),
        ("phaseMs", math.nan, "expected a number or null, got nan"),
        ("usefulUtilization", "high", "expected a number or null, got 'high'"),
        ("p95Cycles", False, "expected a number or null, got False"),
    ],
)
def test_a_bad_group_statistic_is_named(
    document: dict[str, Any], key: str, value: Any, message: str
) -> None:
    with pytest.raises(InputError) as raised:
        summary_from_document(_group(document, key, value), "doc.json")
    assert (raised.value.where, raised.value.message) == (f"groups[0].{key}", message)


def test_whole_numbers_written_as_floats_are_whole_numbers(document: dict[str, Any]) -> None:
    """A writer that puts 3.0 for 3 means 3: taken as the integer, not refused."""
    changed = _header(document, "matchedSampleCount", float(document["matchedSampleCount"]))
    changed["groups"][0]["phaseCycles"] = float(document["groups"][0]["phaseCycles"])
    summary = summary_from_document(changed, "doc.json")
    assert summary.matched_sample_count == document["matchedSampleCount"]
    assert isinstance(summary.matched_sample_count, int)
    first = summary.groups.row(0, named=True)
    assert first["phaseCycles"] == document["groups"][0]["phaseCycles"]
    assert summary.to_document()["groups"][0]["phaseCycles"] == first["phaseCycles"]


def test_the_example_document_reads_back_as_written(document: dict[str, Any]) -> None:
    """The checks refuse nothing tileprof writes: the document reads back to itself."""
    summary = summary_from_document(copy.deepcopy(document), "doc.json")
    written = summary.to_document()
    assert {k: written[k] for k in ("clockHz", "tileCount", "sampleCount")} == {
        k: document[k] for k in ("clockHz", "tileCount", "sampleCount")
    }
    assert written["groups"] == document["groups"]


def test_diff_names_the_file_and_key_and_exits_2(document: dict[str, Any], tmp_path: Path) -> None:
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(document))
    bad.write_text(json.dumps(_group(document, "sampleCount", 2.5)))
    result = CliRunner().invoke(cli, ["diff", str(good), str(bad)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"tileprof: error: {bad}: groups[0].sampleCount: expected a whole number, got 2.5"
    ]
