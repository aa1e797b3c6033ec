"""``model/findings.py``: the frames the findings' rules read from a tile dump follow the
filters' epoch and kernels, and are named after the input (issue 38)."""

from __future__ import annotations

from functools import cache

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.model.examples import example_profile
from tileprof.model.findings import profile_frames
from tileprof.model.profile import Profile


@cache
def _example() -> Profile:
    return example_profile()


def test_an_epochs_frames_are_that_epochs_alone() -> None:
    profile = _example()
    frames = profile_frames(profile, Filters(epoch=1), "ex")
    assert set(frames) == {"groups", "supersteps", "epochs", "candidates"}
    in_epoch = profile.samples.filter(pl.col("epoch") == 1).height
    assert frames["groups"]["sampleCount"].sum() == in_epoch < profile.samples.height
    assert frames["groups"]["source"].unique().to_list() == ["ex"]
    assert frames["supersteps"]["epoch"].unique().to_list() == [1]
    assert frames["epochs"]["epoch"].to_list() == [1]
    assert frames["candidates"]["scope"].unique().to_list() == ["epoch 1"]
    assert frames["candidates"]["source"].unique().to_list() == ["ex"]


def test_every_epoch_without_filters_and_a_kernel_filter_on_the_groups() -> None:
    profile = _example()
    frames = profile_frames(profile, None, "ex")
    assert frames["groups"]["sampleCount"].sum() == profile.samples.height
    assert frames["epochs"]["epoch"].to_list() == [0, 1, 2]
    assert set(frames["candidates"]["scope"]) == {"epoch 0", "epoch 1", "epoch 2"}
    one = profile_frames(profile, Filters(kernels=("exchange",)), "ex")["groups"]
    assert one["name"].to_list() == ["exchange"]


def test_an_epoch_without_samples_leaves_only_the_groups() -> None:
    frames = profile_frames(_example(), Filters(epoch=9), "ex")
    assert set(frames) == {"groups"} and frames["groups"].height == 0
