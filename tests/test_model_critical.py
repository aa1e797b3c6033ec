"""``tileprof.model.critical``: the tile critical path fed with the run table's roofline
fractions. The analysis itself is held to hand-computed paths in ``tests/test_critical.py``;
this holds what the model layer passes it: the profile's device, the epoch, the sync gap, the
edits, and each group's roofline fraction (roofline time over phase time, docs/runs.md)."""

from __future__ import annotations

import pytest

from tileprof.analyses.critical import critical_path, parse_edit
from tileprof.analyses.filters import Filters
from tileprof.model.critical import roofline_fractions, tile_critical
from tileprof.model.examples import example_profile
from tileprof.model.profile import Profile
from tileprof.model.tile_runs import tile_source_runs


@pytest.fixture(scope="module")
def profile() -> Profile:
    return example_profile()


@pytest.mark.parametrize("epoch", [1, 2, None])
def test_fractions_are_the_run_tables_roofline_over_phase_time(
    profile: Profile, epoch: int | None
) -> None:
    runs = tile_source_runs(profile, Filters(epoch=epoch), source="critical").frame
    fractions = roofline_fractions(profile, epoch)
    assert fractions  # the reference profile's GEMMs, casts and copies have a roofline
    for row in runs.iter_rows(named=True):
        if row["roofline_fraction"] is None:
            assert row["kernel"] not in fractions
            continue
        assert fractions[row["kernel"]] == row["roofline_fraction"]
        assert 0 < fractions[row["kernel"]] <= 1


def test_the_epoch_chosen_is_the_epoch_measured(profile: Profile) -> None:
    assert roofline_fractions(profile, 1) != roofline_fractions(profile, None)


@pytest.mark.parametrize(
    ("epoch", "gap", "edits"),
    [
        (1, 0, ()),
        (None, 0, ()),
        (1, 500, ("roofline:gemm_*",)),
        (2, 0, ("scale:reduce_*=0.5", "balance")),
    ],
)
def test_the_path_is_the_analysis_of_the_profile_with_its_fractions(
    profile: Profile, epoch: int | None, gap: int, edits: tuple[str, ...]
) -> None:
    parsed = tuple(parse_edit(edit) for edit in edits)
    made = tile_critical(profile, epoch=epoch, min_sync_gap=gap, edits=parsed)
    expected = critical_path(
        profile.samples,
        tile_count=profile.tile_count,
        clock_hz=profile.clock_hz,
        epoch=epoch,
        min_sync_gap=gap,
        edits=parsed,
        roofline=roofline_fractions(profile, epoch),
    )
    assert made.to_document() == expected.to_document()
    assert (made.tile_count, made.clock_hz) == (1_472, 1_500_000_000)


def test_options_change_the_path(profile: Profile) -> None:
    """Each option reaches the analysis: the documents differ when it does."""
    base = tile_critical(profile, epoch=1).to_document()
    assert tile_critical(profile, epoch=2).to_document() != base
    assert tile_critical(profile, epoch=1, min_sync_gap=10_000).to_document() != base
    roofline = tile_critical(profile, epoch=1, edits=(parse_edit("roofline:gemm_*"),))
    assert roofline.to_document() != base
    assert [edit.describe() for edit in roofline.edits] == ["roofline:gemm_*"]
