"""``runs`` as data (``tileprof.views.runs_data``) over frames built here: the JSON layout and
its ``--linked`` form, metadata as objects, enums as text, nulls kept, every digit, Parquet's
types, and the op table's units."""

from __future__ import annotations

import datetime as dt
import io
import json

import polars as pl
import pytest

from tileprof.views.runs_data import (
    OP_UNITS,
    render_csv,
    render_json,
    render_ops_json,
    render_parquet,
)

KIND = pl.Enum(["tile", "gpu"])
RUNS = pl.DataFrame(
    {
        "target": ["tile device", "H100 SXM"],
        "kind": pl.Series(["tile", "gpu"], dtype=KIND),
        "time_us": [1 / 3, None],
        "metadata": ['{"dtype": "f16", "n": 2}', None],
        "when": [dt.date(2026, 12, 5), None],
    }
)
LINKED = pl.DataFrame({"link": ["layer 3"], "ratio": [2.5], "kind": pl.Series(["gpu"], dtype=KIND)})


def test_json_holds_sources_runs_linked_sets_and_notes_in_that_order() -> None:
    text = render_json(RUNS, LINKED, ["a note"], [{"path": "d.json", "kind": "tile dump"}])
    document = json.loads(text)
    assert list(document) == ["sources", "runs", "linkedSets", "notes"]
    assert document["sources"] == [{"path": "d.json", "kind": "tile dump"}]
    assert document["notes"] == ["a note"]
    first, second = document["runs"]
    assert first["kind"] == "tile" and second["kind"] == "gpu"  # enums as their text
    assert first["metadata"] == {"dtype": "f16", "n": 2}  # an object again, not JSON text
    assert second["metadata"] is None and second["time_us"] is None
    assert first["time_us"] == 1 / 3
    assert first["when"] == "2026-12-05"  # what JSON has no type for, as text
    assert document["linkedSets"] == [{"link": "layer 3", "ratio": 2.5, "kind": "gpu"}]
    assert text.startswith('{\n  "sources": [\n    {\n      "')
    assert text.endswith("}\n") and not text.endswith("\n\n")


def test_linked_only_keeps_the_linked_sets_and_notes() -> None:
    document = json.loads(render_json(RUNS, LINKED, ["n"], [{"p": 1}], linked_only=True))
    assert list(document) == ["linkedSets", "notes"]


def test_json_writes_text_as_it_is_and_a_number_json_cannot_hold_as_null_with_a_note() -> None:
    runs = pl.DataFrame({"target": ["réseau"], "time_us": [float("inf")]})
    text = render_json(runs, LINKED.head(0))
    assert '"réseau"' in text
    document = json.loads(text)
    assert document["runs"][0]["time_us"] is None  # strict JSON: not Infinity
    assert document["linkedSets"] == []
    assert document["notes"] == ["$.runs[0].time_us is inf (not finite); written as null"]


def test_csv_keeps_nulls_empty_and_every_digit() -> None:
    text = render_csv(RUNS.select("target", "time_us"))
    assert text.splitlines() == ["target,time_us", "tile device,0.3333333333333333", "H100 SXM,"]


def test_parquet_keeps_the_types() -> None:
    read = pl.read_parquet(io.BytesIO(render_parquet(RUNS)))
    assert read.schema["time_us"] == pl.Float64
    assert read.schema["when"] == pl.Date
    assert read["kind"].cast(pl.String).to_list() == ["tile", "gpu"]
    assert read.drop("kind").equals(RUNS.drop("kind"))


def test_ops_json_holds_the_rows_and_the_unit_of_each_column() -> None:
    ops = pl.DataFrame({"op": ["matmul"], "flops": [2.0e12], "bytes": [None], "kind": ["gemm"]})
    text = render_ops_json(ops, ["n"], [{"path": "t.json"}])
    document = json.loads(text)
    assert list(document) == ["sources", "ops", "units", "notes"]
    assert document["ops"] == [{"op": "matmul", "flops": 2.0e12, "bytes": None, "kind": "gemm"}]
    assert document["units"] == OP_UNITS
    assert document["units"]["flops"] == "FLOP"
    assert document["units"]["bytes"].startswith("B (bytes")
    assert "µs" in text and "10¹²" in text  # written as they are, not escaped
    assert text.startswith('{\n  "sources": [\n    {\n      "path"')
    assert text.endswith("}\n")


def test_ops_json_writes_what_json_has_no_type_for_as_text() -> None:
    ops = pl.DataFrame({"op": ["matmul"], "when": [dt.date(2026, 12, 5)]})
    assert json.loads(render_ops_json(ops))["ops"] == [{"op": "matmul", "when": "2026-12-05"}]


@pytest.mark.parametrize(
    ("column", "unit"),
    [
        ("time_us", "µs"),
        ("total_us", "µs"),
        ("aux_us", "µs"),
        ("roofline_us", "µs"),
        ("time_lost_us", "µs"),
        ("total_flops", "FLOP"),
        ("tflops", "10¹² FLOP/s"),
        ("peak_tflops", "10¹² FLOP/s"),
        ("arithmetic_intensity", "FLOP/B"),
    ],
)
def test_each_op_column_has_the_unit_docs_runs_md_states(column: str, unit: str) -> None:
    assert OP_UNITS[column] == unit


def test_ops_json_is_strict_json_too() -> None:
    """An op's rate over a time of 0 is not finite: null, with the note saying where."""
    ops = pl.DataFrame({"op": ["empty"], "tflops": [float("inf")], "time_us": [0.0]})
    text = render_ops_json(ops)
    assert "Infinity" not in text
    document = json.loads(text)
    assert document["ops"][0]["tflops"] is None
    assert document["notes"] == ["$.ops[0].tflops is inf (not finite); written as null"]
