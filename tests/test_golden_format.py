"""The golden aggregates file: its exact bytes, each refusal's place and words, and what
``aggregates_of`` keys each group by."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tileprof.core.errors import InputError
from tileprof.testing import Aggregates, Threshold, aggregates_of, profile_from_spec, stable_json
from tileprof.testing.aggregates import GOLDEN_FORMAT, group_key
from tileprof.testing.spec import DumpSpec


def test_a_golden_file_reads_as_it_is_reviewed() -> None:
    rule = Threshold.parse("usefulUtilization of gemm may not drop by more than 2%")
    golden = Aggregates(
        groups={"gemm": {"sampleCount": 8, "usefulUtilization": 0.1 + 0.2, "p50Cycles": None}},
        header={"clockHz": 1_500_000_000},
        thresholds=(rule,),
        dump="spec.json",
    )
    assert golden.to_json() == (
        "{\n"
        '  "dump": "spec.json",\n'
        '  "format": "tileprof-aggregates/1",\n'
        '  "groups": {\n'
        '    "gemm": {\n'
        '      "p50Cycles": null,\n'
        '      "sampleCount": 8,\n'
        '      "usefulUtilization": 0.30000000000000004\n'
        "    }\n"
        "  },\n"
        '  "header": {\n'
        '    "clockHz": 1500000000\n'
        "  },\n"
        '  "thresholds": [\n'
        '    "usefulUtilization of gemm may not drop by more than 2%"\n'
        "  ]\n"
        "}\n"
    )
    assert Aggregates.from_json(golden.to_json()) == golden


def test_a_golden_without_dump_or_thresholds_writes_neither() -> None:
    text = Aggregates({"g": {}}, {}).to_json()
    assert json.loads(text) == {"format": GOLDEN_FORMAT, "groups": {"g": {}}, "header": {}}
    assert text == (
        '{\n  "format": "tileprof-aggregates/1",\n  "groups": {\n    "g": {}\n  },\n'
        '  "header": {}\n}\n'
    )
    read = Aggregates.from_json(text)
    assert (read.thresholds, read.dump) == ((), None)
    # a golden written by hand may leave the header out: it pins no header field
    bare = Aggregates.from_json(f'{{"format": "{GOLDEN_FORMAT}", "groups": {{"g": {{}}}}}}')
    assert bare == Aggregates({"g": {}}, {})


def test_stable_json_writes_each_kind_of_value() -> None:
    assert stable_json([]) == "[]"
    assert stable_json({}) == "{}"
    assert stable_json({2: True, 10: "a\u00e9"}) == '{\n  "10": "a\\u00e9",\n  "2": true\n}'
    assert stable_json([np.int64(3), np.float64(0.5), False]) == "[\n  3,\n  0.5,\n  false\n]"
    assert stable_json({"a": [[1]]}) == '{\n  "a": [\n    [\n      1\n    ]\n  ]\n}'
    with pytest.raises(ValueError, match=r"^golden files hold finite numbers only, not inf$"):
        stable_json([float("inf")])
    with pytest.raises(TypeError, match=r"^cannot write complex to a golden file$"):
        stable_json({"x": 1j})


@pytest.mark.parametrize(
    ("text", "where", "message"),
    [
        ("{", "line 1", "invalid JSON: Expecting property name enclosed in double quotes"),
        ("[]", "format", f"not a golden aggregates file ({GOLDEN_FORMAT})"),
        ('{"format": "tileprof-aggregates/2"}', "format", "not a golden aggregates file"),
        (f'{{"format": "{GOLDEN_FORMAT}"}}', "groups", "expected an object of group:"),
        (f'{{"format": "{GOLDEN_FORMAT}", "groups": {{"g": 1}}}}', "groups", "expected an"),
        (
            f'{{"format": "{GOLDEN_FORMAT}", "groups": {{}}, "thresholds": "x"}}',
            "thresholds",
            "expected a list",
        ),
        (
            f'{{"format": "{GOLDEN_FORMAT}", "groups": {{}}, "thresholds": ["x"]}}',
            "thresholds",
            "cannot read threshold 'x'",
        ),
    ],
)
def test_a_bad_golden_is_refused_at_its_key(text: str, where: str, message: str) -> None:
    with pytest.raises(InputError) as info:
        Aggregates.from_json(text, "golden.json")
    assert info.value.where == where
    assert str(info.value).startswith(f"golden.json: {where}: {message}")


def test_from_json_keeps_dump_as_text_and_groups_keyed_by_text() -> None:
    text = json.dumps(
        {"format": GOLDEN_FORMAT, "groups": {"g": {"sampleCount": 1}}, "dump": 7, "header": {}}
    )
    read = Aggregates.from_json(text)
    assert read.dump == "7" and read.groups == {"g": {"sampleCount": 1}} and read.header == {}


def test_a_missing_golden_is_named(tmp_path: Path) -> None:
    with pytest.raises(InputError) as info:
        Aggregates.load(tmp_path / "nope.json")
    assert str(info.value) == f"{tmp_path / 'nope.json'}: no such golden aggregates file"
    path = tmp_path / "g.json"
    path.write_text("{", encoding="utf-8")
    with pytest.raises(InputError, match=r"g\.json: line 1: invalid JSON"):
        Aggregates.load(str(path))


def test_group_keys_name_their_dimensions_in_order() -> None:
    assert group_key("gemm", {}) == "gemm"
    assert group_key("gemm", {"tile": 3, "epoch": "e1"}) == "gemm[tile=3, epoch=e1]"


def test_aggregates_of_a_summary_document() -> None:
    document: dict[str, Any] = {
        "clockHz": 1_000,
        "sampleCount": 3,
        "other": 1,
        "groups": [
            {"name": "g", "dimensions": {"epoch": 1}, "sampleCount": 2, "unknown": 5},
            {"name": "g", "dimensions": None, "p50Cycles": None},
        ],
    }
    got = aggregates_of(document)
    assert got.groups == {"g[epoch=1]": {"sampleCount": 2}, "g": {"p50Cycles": None}}
    assert got.header == {"clockHz": 1_000, "sampleCount": 3}
    assert aggregates_of(got) is got
    assert aggregates_of({}) == Aggregates({}, {})
    twice = {"groups": [{"name": "g"}, {"name": "g", "dimensions": {}}]}
    with pytest.raises(ValueError, match=r"^two groups share the key 'g'$"):
        aggregates_of(twice)


def test_aggregates_of_a_profile_is_its_unfiltered_summary() -> None:
    spec = DumpSpec.from_mapping(
        {
            "seed": 1,
            "tileCount": 4,
            "groups": [{"kernel": "k", "samples": 8, "tiles": 4, "duration": 10}],
        }
    )
    profile = profile_from_spec(spec)
    got = aggregates_of(profile)
    assert got == aggregates_of(profile.summary()) == aggregates_of(profile.summary().to_document())
    assert got.groups["k"]["sampleCount"] == 8 and got.header["sampleCount"] == 8
