"""``tileprof check``'s metadata scan (``tileprof.inputs.tile.metadata_scan``), held to the
loader: a metadata list the scan calls parsable is one the JSON dump reader accepts, and one it
calls bad is one the reader refuses, entry shape for entry shape."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.samples import document, sample
from tileprof.core.errors import InputError
from tileprof.inputs.tile import json_dump, metadata_scan

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.sampled_from(["", "x", "1", "-1", "0", "2.5", "1e3", "nan", "inf", "-0.5", " 4 "]),
)
NAMES = st.sampled_from(["usefulCycles", "physicalWorkCycles", "inputSize", "other"])
ENTRIES = st.one_of(
    st.fixed_dictionaries({"name": NAMES, "value": SCALARS}),
    st.fixed_dictionaries({"name": NAMES, "value": SCALARS, "extra": SCALARS}),
    st.fixed_dictionaries({"value": SCALARS}),
    st.fixed_dictionaries({"name": SCALARS, "value": SCALARS}),
    SCALARS,
)
METADATA = st.one_of(st.none(), SCALARS, st.lists(ENTRIES, max_size=3))


def _loader_accepts(metadata: Any) -> bool:
    record = {**sample(0, 0, 10), "metadata": metadata}
    try:
        json_dump.parse(Path("m.json"), msgspec.json.encode({"samples": [record]}))
    except InputError:
        return False
    return True


@settings(max_examples=300, deadline=None)
@given(METADATA)
def test_the_scan_accepts_exactly_what_the_loader_accepts(metadata: Any) -> None:
    assert metadata_scan.metadata_parses(metadata) == _loader_accepts(metadata)


@pytest.mark.parametrize(
    ("metadata", "parses"),
    [
        (None, True),
        ([], True),
        ([{"name": "usefulCycles", "value": "0"}], True),
        ([{"name": "usefulCycles", "value": "12.5"}], True),
        ([{"name": "inputSize", "value": "-4"}], True),
        ([{"name": "usefulCycles", "value": "-1"}], False),
        ([{"name": "physicalWorkCycles", "value": "inf"}], False),
        ([{"name": "usefulCycles", "value": "nan"}], False),
        ([{"name": "usefulCycles", "value": "many"}], False),
        ([{"name": "usefulCycles", "value": 3}], True),
        ([{"name": "usefulCycles", "value": -3}], False),
        ([{"name": "usefulCycles", "value": True}], False),
        ([{"name": "other", "value": None}], False),
        ([{"name": 3, "value": "3"}], False),
        ([{"name": "x", "value": "3", "unit": "B"}], True),
        (["usefulCycles"], False),
        ({"name": "usefulCycles", "value": "3"}, False),
        ("[]", False),
    ],
)
def test_metadata_parses_case_by_case(metadata: Any, parses: bool) -> None:
    assert metadata_scan.metadata_parses(metadata) is parses


BAD = [{"name": "usefulCycles", "value": "-1"}]
GOOD = [{"name": "usefulCycles", "value": "4"}]


def _records() -> list[dict[str, Any]]:
    return [
        {**sample(0, 0, 10), "metadata": GOOD},
        {**sample(1, 0, 10), "metadata": BAD},
        sample(2, 0, 10),
        {**sample(3, 0, 10), "metadata": "not a list"},
    ]


def test_a_json_dump_is_scanned_and_its_bad_metadata_dropped(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(document(_records(), clockHz=100, tileCount=4))
    found = metadata_scan.scan(path)
    assert found is not None
    bad, cleaned = found
    assert bad == [1, 3]
    decoded = msgspec.json.decode(cleaned)
    assert decoded["clockHz"] == 100 and decoded["tileCount"] == 4
    assert [s.get("metadata") for s in decoded["samples"]] == [GOOD, None, None, None]
    assert json_dump.parse(path, cleaned).samples.height == 4


def test_an_ndjson_dump_is_scanned_line_by_line(tmp_path: Path) -> None:
    """The header line and blank lines are kept as they are; sample indices count samples."""
    lines = [b'{"clockHz": 100, "tileCount": 4}', b""]
    lines += [msgspec.json.encode(record) for record in _records()]
    path = tmp_path / "d.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    found = metadata_scan.scan(path)
    assert found is not None
    bad, cleaned = found
    assert bad == [1, 3]
    out = cleaned.split(b"\n")
    assert out[:2] == lines[:2] and out[2] == lines[2] and out[4] == lines[4]
    assert [msgspec.json.decode(line).get("metadata") for line in out[2:6]] == [
        GOOD,
        None,
        None,
        None,
    ]
    assert out[-1] == b""


@pytest.mark.parametrize(
    "text",
    [
        b"physicalTile,offset,duration\n0,1,2\n",
        b'["samples"]',
        b'{"samples": {"0": {}}}',
        b'{"clockHz": 1}\n{"physicalTile": 0,\n',
    ],
)
def test_what_is_not_a_json_or_ndjson_dump_is_not_scanned(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "other"
    path.write_bytes(text)
    assert metadata_scan.scan(path) is None


def test_a_dump_without_bad_metadata_scans_to_no_indices(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(document([sample(0, 0, 10)]))
    assert metadata_scan.scan(str(path)) == (
        [],
        msgspec.json.encode({"samples": [sample(0, 0, 10)]}),
    )
