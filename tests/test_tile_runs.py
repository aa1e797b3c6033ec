"""``model/tile_runs.py``: a tile dump's run rows follow the filters, with the stated work of
the samples the filters keep (issue 38)."""

from __future__ import annotations

from functools import cache

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.analyses.tile_work import group_work
from tileprof.model.examples import example_profile
from tileprof.model.profile import Profile
from tileprof.model.tile_runs import tile_source_runs


@cache
def _example() -> Profile:
    return example_profile()


def test_an_epochs_runs_are_its_groups_with_their_work() -> None:
    profile = _example()
    filters = Filters(epoch=1)
    runs = tile_source_runs(profile, filters, "ex")
    summary = profile.summary(filters, samples=0)
    assert runs.kind == "tile dump" and runs.notes == []
    assert runs.metadata == {
        "clockHz": 1_500_000_000, "tileCount": 1472, "sampleCount": 232_260,
        "matchedSampleCount": 37_376, "filters": ["--epoch 1"],
    }  # fmt: skip
    frame = runs.frame
    assert frame["kernel"].to_list() == summary.groups["name"].to_list()
    assert set(frame["source"]) == {"ex"} and set(frame["target"]) == {profile.target}
    work = group_work(profile.filtered(filters), profile.metadata)
    expected = frame.select("kernel").join(
        work.select(pl.col("name").alias("kernel"), "mac", "bytes"), on="kernel", how="left"
    )
    assert frame["mac"].to_list() == expected["mac"].to_list()
    assert frame["bytes"].to_list() == expected["bytes"].to_list()
    assert frame["mac"].drop_nulls().len() > 0  # the example states some GEMMs' work
    whole = tile_source_runs(profile, Filters(), "ex").frame
    assert whole["mac"].sum() > frame["mac"].sum()


def test_no_group_left_by_the_filters_is_a_note() -> None:
    runs = tile_source_runs(_example(), Filters(kernels=("absent",)), "ex")
    assert runs.frame.height == 0
    assert runs.notes == ["ex: no tile samples matched the filters"]
    assert runs.metadata["matchedSampleCount"] == 0
    assert runs.metadata["filters"] == ["--kernel absent"]


def test_the_runs_name_the_device_the_dump_names() -> None:
    import dataclasses

    named = dataclasses.replace(_example(), device="Tenstorrent wormhole_b0")
    frame = tile_source_runs(named, Filters(kernels=("exchange",)), "ex").frame
    assert frame["target"].to_list() == ["Tenstorrent wormhole_b0 (1472 tiles @ 1.5 GHz)"]
