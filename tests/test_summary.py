"""The summary of a profile by hand: its document, its repr, the longest samples and a summary
read back from its document (tileprof/analyses/summary.py; issue 38, branch mutR).

Each test writes its samples out and states the figures they give.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.samples import document, sample
from tileprof.analyses.filters import Filters
from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.analyses.summary import (
    FLOAT_FIELDS,
    Summary,
    longest_samples,
    summarize,
    summary_from_document,
)
from tileprof.core.errors import InputError
from tileprof.inputs.tile import json_dump

# tile 0: a [0, 10) with 5 useful cycles; tile 1: an exchange [3, 7); tile 1: b [20, 26) in
# epoch 2 (outside epoch 1: the span still counts it, 26 cycles from cycle 0)
SAMPLES = [
    sample(0, 0, 10, "a", useful=5),
    sample(1, 3, 4, None, kind="exchange"),
    sample(1, 20, 6, "b", epoch=2, phase=1),
]


def dump() -> Any:
    return json_dump.parse(Path("<test>"), document(SAMPLES))


def summary_of(**options: Any) -> Summary:
    parsed = dump()
    return summarize(parsed.samples, parsed.metadata, clock_hz=1000, tile_count=2, **options)


def test_the_document_by_hand() -> None:
    got = summary_of(filters=Filters(epoch=1), top=2).to_document()
    assert list(got) == [
        "clockHz",
        "tileCount",
        "sampleCount",
        "matchedSampleCount",
        "profileSpanCycles",
        "profileSpanMs",
        "atOffset",
        "groups",
        "samples",
    ]
    header = {k: got[k] for k in list(got)[:7]}
    assert header == {
        "clockHz": 1000,
        "tileCount": 2,
        "sampleCount": 3,
        "matchedSampleCount": 2,
        "profileSpanCycles": 26,  # every sample's span, not the matched ones'
        "profileSpanMs": 26.0,  # 26 cycles at 1 kHz
        "atOffset": None,
    }
    assert [g["name"] for g in got["groups"]] == ["a", "exchange"]
    first = got["groups"][0]
    assert list(first) == ["name", "dimensions", *GROUP_FIELDS]
    assert first["dimensions"] == {}
    assert (first["sampleCount"], first["phaseCycles"], first["usefulCycles"]) == (1, 10, 5.0)
    assert got["samples"] == [
        {
            "physicalTile": 0,
            "offset": 0,
            "duration": 10,
            "phase": 0,
            "epoch": 1,
            "kind": "compute",
            "operation": "operation.1",
            "kernel": "a",
            "metadata": [{"name": "usefulCycles", "value": "5"}],
        },
        {
            "physicalTile": 1,
            "offset": 3,
            "duration": 4,
            "phase": 0,
            "epoch": 1,
            "kind": "exchange",
            "operation": "operation.1",
            "kernel": None,
            "metadata": None,
        },
    ]


def test_filters_dimensions_and_the_sample_count() -> None:
    at = summary_of(filters=Filters(at=5))
    assert at.to_document()["atOffset"] == 5
    assert at.matched_sample_count == 2  # a and the exchange run at cycle 5
    assert at.filters == Filters(at=5)
    everything = summary_of()
    assert everything.filters == Filters()
    assert everything.matched_sample_count == 3
    assert [s["kernel"] for s in everything.samples] == ["a", "b", None]  # 3 by default
    by_phase = summary_of(group_by=["phase"], top=1)
    assert by_phase.group_by == ("phase",)
    records = by_phase.group_records()
    assert [(r["name"], r["dimensions"]) for r in records] == [
        ("a", {"phase": 0}),
        ("b", {"phase": 1}),
        ("exchange", {"phase": 0}),
    ]
    assert [s["kernel"] for s in by_phase.samples] == ["a"]
    assert summary_of(top=0).samples == [] and summary_of(top=-1).samples == []


def test_reprs_by_hand() -> None:
    assert repr(summary_of(filters=Filters(epoch=2), source="run.json")) == (
        "Summary(source='run.json', samples=1 of 3, tiles=2, epoch=2, groups=1)"
    )
    assert repr(summary_of(group_by=("kind", "phase"))) == (
        "Summary(source=None, samples=3 of 3, tiles=2, epochs=all, groups=3, "
        "group_by=('kind', 'phase'))"
    )


def test_span_in_milliseconds() -> None:
    summary = summary_of()
    assert summary.profile_span_ms == 26.0
    half = Summary(1.5e9, 1, 0, 0, 3_000_000, None, pl.DataFrame())
    assert half.profile_span_ms == 2.0  # 3,000,000 cycles at 1.5 GHz
    assert Summary(1000, 1, 0, 0, None, None, pl.DataFrame()).profile_span_ms is None
    parsed = dump()
    empty = summarize(parsed.samples.head(0), [], clock_hz=1000, tile_count=2)
    assert (empty.profile_span_cycles, empty.profile_span_ms) == (None, None)
    assert empty.samples == [] and empty.groups.height == 0


def test_longest_samples_keeps_every_tie_at_the_cut() -> None:
    # durations 5 5 5 3: the two longest of three ties are the lowest tiles, then offsets
    frame = pl.DataFrame({"duration": [3, 5, 5, 5], "tile": [0, 2, 1, 1], "offset": [0, 0, 9, 4]})
    assert longest_samples(frame, 2).rows() == [(5, 1, 4), (5, 1, 9)]
    assert longest_samples(frame, 3).rows() == [(5, 1, 4), (5, 1, 9), (5, 2, 0)]
    assert longest_samples(frame, 4).rows()[-1] == (3, 0, 0)
    assert longest_samples(frame, 1).rows() == [(5, 1, 4)]
    assert longest_samples(frame, -2).height == 0


def test_a_document_read_back_gives_the_same_document() -> None:
    original = summary_of(filters=Filters(at=5), group_by=("phase",))
    written = original.to_document()
    back = summary_from_document(written, "s.json")
    assert back.to_document() == written
    assert (back.source, back.group_by, back.at_offset) == ("s.json", ("phase",), 5)
    assert back.groups.columns == ["name", "phase", *GROUP_FIELDS]
    for key in GROUP_FIELDS:
        want = pl.Float64 if key in FLOAT_FIELDS else pl.Int64
        assert back.groups.schema[key] == want, key
    assert back.groups.schema["name"] == pl.String
    assert back.groups.schema["phase"] == pl.Int64
    # an integer where the layout holds a float is read as a float, and back as the same number
    written["groups"][0]["meanCycles"] = 10
    assert summary_from_document(written).groups["meanCycles"].to_list()[0] == 10.0


def test_a_document_without_optional_keys_or_groups() -> None:
    bare = {"clockHz": 1, "tileCount": 2, "sampleCount": 3, "matchedSampleCount": 0, "groups": []}
    summary = summary_from_document(bare)
    assert summary.source is None and summary.group_by == ()
    assert (summary.profile_span_cycles, summary.at_offset, summary.samples) == (None, None, [])
    assert summary.groups.columns == ["name", *GROUP_FIELDS]
    assert summary.groups.height == 0
    assert summary.groups.schema["phaseMs"] == pl.Float64
    assert summary.groups.schema["sampleCount"] == pl.Int64
    assert summary_from_document({**bare, "samples": None}).samples == []
    assert summary_from_document({**bare, "samples": [{"offset": 1}]}).samples == [{"offset": 1}]


def _group(**changes: Any) -> dict[str, Any]:
    group: dict[str, Any] = {"name": "g", "dimensions": {"phase": 1}}
    group.update(dict.fromkeys(GROUP_FIELDS, 1))
    group.update(changes)
    return group


def _document(*groups: Any) -> dict[str, Any]:
    header = {"clockHz": 1, "tileCount": 1, "sampleCount": 1, "matchedSampleCount": 1}
    return {**header, "groups": list(groups)}


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ([], "s.json: $: a summary document is a JSON object"),
        (
            {"clockHz": 1, "tileCount": 1, "sampleCount": 1, "groups": []},
            "s.json: matchedSampleCount: missing from the summary document",
        ),
        (
            {"tileCount": 1, "sampleCount": 1, "matchedSampleCount": 1, "groups": []},
            "s.json: clockHz: missing from the summary document",
        ),
        (
            {"clockHz": 1, "tileCount": 1, "sampleCount": 1, "matchedSampleCount": 1},
            "s.json: groups: missing from the summary document",
        ),
        ({**_document(), "groups": {}}, "s.json: groups: expected a list"),
        (_document(_group(), "g"), "s.json: groups[1]: expected an object with a string name"),
        (_document(_group(name=3)), "s.json: groups[0]: expected an object with a string name"),
        (_document(_group(dimensions=[1])), "s.json: groups[0].dimensions: expected an object"),
        (
            _document(_group(), _group(dimensions={"kind": "x"})),
            "s.json: groups[1].dimensions: differs from the first group's",
        ),
        (
            _document(_group(), _group(dimensions=None)),
            "s.json: groups[1].dimensions: differs from the first group's",
        ),
        (
            _document({k: v for k, v in _group().items() if k != "lastOffset"}),
            "s.json: groups[0].lastOffset: missing from the group",
        ),
        (
            _document(_group(p50Cycles=True)),
            "s.json: groups[0].p50Cycles: expected a number or null, got True",
        ),
        (
            _document(_group(phaseMs="2")),
            "s.json: groups[0].phaseMs: expected a number or null, got '2'",
        ),
    ],
)
def test_a_bad_document_is_refused_with_its_place(document: Any, message: str) -> None:
    with pytest.raises(InputError) as raised:
        summary_from_document(document, "s.json")
    assert str(raised.value) == message


def test_numbers_and_nulls_of_a_group_are_taken() -> None:
    summary = summary_from_document(_document(_group(), _group(name="h", meanCycles=None)))
    assert summary.groups["name"].to_list() == ["g", "h"]
    assert summary.groups["phase"].to_list() == [1, 1]
    assert summary.groups["meanCycles"].to_list() == [1.0, None]
    assert summary.groups["phaseMs"].dtype == pl.Float64


def test_an_integer_field_written_as_a_float_is_read_as_an_integer() -> None:
    # a JSON writer may print 10 as 10.0; the group's integer columns stay Int64
    summary = summary_from_document(_document(_group(p50Cycles=10.0, sampleCount=2.0)))
    assert summary.groups["p50Cycles"].to_list() == [10]
    assert summary.groups["sampleCount"].dtype == pl.Int64
    assert summary.to_document()["groups"][0]["sampleCount"] == 2
