"""The ``tile_dump`` spec builder: deterministic, physically plausible, faithful to the spec."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tileprof
from tileprof.testing import DumpSpec, SpecError, TileDumpFactory, build_dump, profile_from_spec

SPEC: dict[str, Any] = {
    "seed": 3,
    "tileCount": 64,
    "epoch": 1,
    "groups": [
        {
            "kernel": "gemm_f16_a",
            "operation": "operation.1",
            "samples": 96,
            "tiles": 16,
            "phases": 3,
            "duration": {"normal": [20000, 400]},
            "useful": 0.68,
            "occupancy": 0.9,
            "metadata": {"kernelSpec": "Gemm { m: 64 }"},
            "tail": {"tiles": [2], "factor": 3.0},
        },
        {
            "kind": "exchange",
            "samples": 40,
            "tiles": [0, 5, 9, 63],
            "duration": {"uniform": [1, 9]},
        },
        {
            "kernel": "copy_u64",
            "samples": 10,
            "duration": 500,
            "epoch": 2,
            "start": "with-previous",
        },
    ],
}


def _profile(spec: dict[str, Any] = SPEC) -> tileprof.Profile:
    return profile_from_spec(DumpSpec.from_mapping(spec))


def test_same_spec_same_samples() -> None:
    assert _profile().samples.equals(_profile().samples)


def test_seed_changes_the_draws() -> None:
    other = _profile({**SPEC, "seed": 4}).samples
    assert not _profile().samples.equals(other)


def test_adding_a_group_leaves_earlier_groups_alone() -> None:
    longer = {**SPEC, "groups": [*SPEC["groups"], {"kernel": "late", "samples": 4}]}
    head = _profile(longer).samples.head(_profile().samples.height)
    assert head.equals(_profile().samples)


def test_no_tile_runs_two_samples_at_once() -> None:
    samples = _profile().samples.sort("tile", "offset")
    overlap = samples.with_columns(
        prev_end=(pl.col("offset") + pl.col("duration")).shift(1).over("tile")
    ).filter(pl.col("prev_end") > pl.col("offset"))
    assert overlap.height == 0  # even copy_u64, which starts with the exchange


def test_groups_follow_the_spec() -> None:
    summary = _profile().summary(epoch=1)
    groups = {row["name"]: row for row in summary.groups.iter_rows(named=True)}
    gemm = groups["gemm_f16_a"]
    assert gemm["sampleCount"] == 96
    assert gemm["tileCount"] == 16
    assert gemm["phaseCount"] == 3
    assert gemm["usefulUtilization"] == pytest.approx(0.68, rel=1e-3)
    assert gemm["workLaneOccupancy"] == pytest.approx(0.9, rel=1e-3)
    # the tail tile runs ~3x longer than the rest
    assert gemm["maximumCycles"] > 2.5 * gemm["p50Cycles"]
    exchange = groups["exchange"]
    assert exchange["tileCount"] == 4 and exchange["usefulUtilization"] is None
    assert summary.sample_count == 146 and summary.matched_sample_count == 136


def test_group_without_estimate_carries_only_its_metadata() -> None:
    profile = _profile()
    copy = profile.samples.filter(pl.col("kernel") == "copy_u64")
    assert copy["usefulCycles"].null_count() == copy.height
    assert copy["metadataId"].null_count() == copy.height
    gemm = profile.samples.filter(pl.col("kernel") == "gemm_f16_a")
    names = [n for n, _ in profile.metadata[gemm["metadataId"][0]]]
    assert names == ["kernelSpec", "usefulCycles", "physicalWorkCycles"]


@pytest.mark.parametrize("name", ["d.json", "d.json.gz", "d.ndjson", "d.csv", "d.parquet"])
def test_written_dump_loads_to_the_same_summary(tmp_path: Path, name: str) -> None:
    factory = TileDumpFactory(tmp_path, tmp_path)
    path = factory.path(SPEC, name)
    loaded = tileprof.load(path).summary(epoch=1)
    direct = factory(SPEC).summary(epoch=1)
    assert loaded.groups.equals(direct.groups)


def test_fixture_names_resolve_to_spec_files(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "spec.json").write_text('{"groups": [{"kernel": "k", "samples": 2}]}')
    assert TileDumpFactory(tmp_path, tmp_path)("mine").samples.height == 2
    with pytest.raises(SpecError, match="no such spec file"):
        TileDumpFactory(tmp_path, tmp_path)("absent")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({}, "groups"),
        ({"groups": [{"kernel": "k"}]}, r"groups\[0\].samples"),
        ({"groups": [{"samples": 1, "tiles": [2000]}]}, "tileCount"),
        ({"groups": [{"samples": 1, "duration": {"zipf": [1]}}]}, "unknown distribution"),
        ({"groups": [{"samples": 1, "useful": 1.5}]}, "fraction"),
        ({"groups": [{"samples": 1, "colour": "red"}]}, r"groups\[0\].colour: unknown key"),
        ({"groups": [], "sed": 1}, "sed: unknown key"),
    ],
)
def test_bad_specs_name_the_key(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError, match=message):
        DumpSpec.from_mapping(spec)


def test_empty_group_and_empty_dump() -> None:
    dump = build_dump({"groups": [{"kernel": "k", "samples": 0}]})
    assert len(dump) == 0


def test_group_missing_a_string_key_may_come_first() -> None:
    # An exchange group (no kernel) before a kernel group: the kernel column starts with null.
    profile = _profile(
        {"groups": [{"kind": "exchange", "samples": 4}, {"kernel": "k", "samples": 4}]}
    )
    assert profile.samples["kernel"].to_list() == [None] * 4 + ["k"] * 4
    assert profile.samples["kind"].to_list()[:4] == ["exchange"] * 4
