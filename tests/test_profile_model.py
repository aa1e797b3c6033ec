"""The profile model's own promises (``tileprof.model.profile``): ``load`` keeps what the dump
states and what its reader noted, reads bytes already in hand, stays quiet unless asked; a
``Profile`` prints in one line; filters come one way or the other, never both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

import tileprof.inputs
from tests.samples import document, frame, sample, write_dump
from tileprof.analyses.filters import Filters
from tileprof.analyses.summary import DEFAULT_TOP_SAMPLES
from tileprof.inputs import read_dump
from tileprof.model.profile import Profile, load

DEVICE_LOG = Path(__file__).parent.parent / "fixtures" / "real" / "tt-device-log"
"""A tt-metal device log: it names its device, and its reader notes what it left out."""


def test_load_keeps_the_dumps_device_its_readers_notes_and_where_it_came_from() -> None:
    path = DEVICE_LOG / "profile_log_device.csv"
    profile = load(path)
    notes = read_dump(path)[0].header.notes
    assert notes and profile.notes == notes
    assert profile.device == "Tenstorrent wormhole_b0"
    assert (profile.source, profile.format) == (str(path), "tt-device-log")
    assert profile.target == "Tenstorrent wormhole_b0 (1 tile @ 1 GHz)"


def test_load_reads_the_bytes_it_is_given_not_the_file(tmp_path: Path) -> None:
    path = write_dump(tmp_path / "dump.json", [sample(0, 0, 10)])
    given = document([sample(t, 0, 10) for t in range(3)], clockHz=1_000_000_000)
    profile = load(path, content=given)
    assert profile.samples.height == 3 and profile.clock_hz == 1_000_000_000
    assert profile.source == str(path)  # the bytes are the file's, read by the caller


def test_load_is_quiet_unless_asked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No progress bar from the Python API by default: a notebook's stderr stays clean."""
    asked: list[Any] = []
    real = tileprof.inputs.read_dump

    def spy(*args: Any, **options: Any) -> Any:
        asked.append(options["quiet"])
        return real(*args, **options)

    monkeypatch.setattr(tileprof.inputs, "read_dump", spy)
    path = write_dump(tmp_path / "dump.json", [sample(0, 0, 10)])
    load(path)
    load(path, quiet=False)
    assert asked == [True, False]


def profile_of_epochs(epochs: range) -> Profile:
    samples = [sample(0, 100 * e, 10, epoch=e) for e in epochs]
    return Profile(frame(samples), (), 1_500_000_000, 4, "d.json")


@pytest.mark.parametrize(
    ("epochs", "shown"),
    [
        (range(8), "epochs=[0, 1, 2, 3, 4, 5, 6, 7]"),
        (range(9), "epochs=9 (0..8)"),
        (range(3, 13), "epochs=10 (3..12)"),
    ],
)
def test_a_profile_lists_few_epochs_and_counts_many(epochs: range, shown: str) -> None:
    text = repr(profile_of_epochs(epochs))
    assert text == (
        f"Profile(source='d.json', samples={len(epochs)}, tiles=4, clock_hz=1500000000, "
        f"{shown}, groups=1)"
    )


@pytest.mark.parametrize("view", ["summary", "tile_balance", "occupancy", "active_tiles"])
def test_filters_come_as_filters_or_as_keywords_not_both(view: str) -> None:
    profile = profile_of_epochs(range(2))
    with pytest.raises(TypeError) as raised:
        getattr(profile, view)(Filters(epoch=1), kernels="k")
    assert str(raised.value) == "pass filters either as Filters or as keywords, not both"
    by_keyword = getattr(profile, view)(epoch=1)
    assert type(by_keyword) is type(getattr(profile, view)(Filters(epoch=1)))


@pytest.mark.parametrize("view", ["tile_balance", "occupancy", "active_tiles"])
def test_a_views_filters_choose_its_samples(view: str) -> None:
    """Epoch 1 holds tile 0's sample, epoch 2 tile 1's: each view sees only the chosen one."""
    samples = [sample(0, 0, 10, epoch=1), sample(1, 100, 30, epoch=2)]
    profile = Profile(frame(samples), (), 1_500_000_000, 4, "d.json")
    as_filters = getattr(profile, view)(Filters(epoch=1))
    assert as_filters.equals(getattr(profile, view)(epoch=1))
    only_epoch_1 = Profile(frame(samples[:1]), (), 1_500_000_000, 4)
    assert as_filters.equals(getattr(only_epoch_1, view)())
    assert not as_filters.equals(getattr(profile, view)())


def test_quality_details_name_the_dump_or_say_it_is_in_memory() -> None:
    samples = frame([sample(0, 0, 10), sample(0, 5, 10)])
    named = Profile(samples, (), 1_500_000_000, 4, "d.json").quality()
    unnamed = Profile(samples, (), 1_500_000_000, 4).quality()
    assert named.get_column("detail").str.starts_with("d.json: ").all()
    assert unnamed.get_column("detail").str.starts_with("(in memory): ").all()


def test_summary_lists_as_many_samples_as_asked_and_top_is_its_old_name() -> None:
    profile = profile_of_epochs(range(8))
    assert len(profile.summary(samples=2).samples) == 2
    assert len(profile.summary().samples) == DEFAULT_TOP_SAMPLES == 3
    with pytest.warns(DeprecationWarning) as warned:
        old = profile.summary(top=5)
    assert len(old.samples) == 5
    (warning,) = warned
    assert str(warning.message) == (
        "Profile.summary(top=) is deprecated; use samples= (as the CLI's --samples)"
    )


def test_the_deprecation_points_at_the_callers_line() -> None:
    with pytest.warns(DeprecationWarning) as warned:
        profile_of_epochs(range(1)).summary(top=1)
    assert warned[0].filename == __file__  # not tileprof's own line


def test_records_are_of_the_frame_given_else_of_every_sample() -> None:
    profile = profile_of_epochs(range(3))
    assert len(profile.records()) == 3
    assert [r["offset"] for r in profile.records(profile.samples.tail(1))] == [200]


def test_a_saved_profile_reloads_with_its_device(tmp_path: Path) -> None:
    profile = load(DEVICE_LOG / "profile_log_device.csv")
    profile.save(tmp_path / "cache.parquet")
    again = load(tmp_path / "cache.parquet")
    assert again.device == "Tenstorrent wormhole_b0"
    assert (again.clock_hz, again.tile_count) == (profile.clock_hz, profile.tile_count)
    assert again.samples.equals(profile.samples)


def test_to_pandas_gives_each_sample_its_metadata_list() -> None:
    samples = frame([sample(t, 10 * t, 5) for t in range(4)])
    ids = pl.Series("metadataId", [1, None, 0, 1], dtype=samples.schema["metadataId"])
    metadata = ((("kernelSpec", "gemm"),), (("a", "1"), ("b", "2")))
    profile = Profile(samples.with_columns(ids), metadata, 1_500_000_000, 4)
    table = profile.to_pandas()
    assert "metadataId" not in table.columns and len(table) == 4
    assert table["metadata"].dtype == object
    assert list(table.index) == [0, 1, 2, 3]
    b_entries = [{"name": "a", "value": "1"}, {"name": "b", "value": "2"}]
    assert table["metadata"].tolist() == [
        b_entries,
        [],
        [{"name": "kernelSpec", "value": "gemm"}],
        b_entries,
    ]
    shifted = profile_of_epochs(range(3)).to_pandas()
    assert shifted["metadata"].tolist() == [[], [], []]


def test_supersteps_split_at_any_idle_gap_unless_asked_for_a_longer_one() -> None:
    """Two bursts on both tiles, one idle cycle apart (10 to 11)."""
    bursts = [sample(t, start, 10) for start in (0, 11) for t in (0, 1)]
    profile = Profile(frame(bursts), (), 1_500_000_000, 2)
    default = profile.supersteps()
    assert (default.supersteps.height, default.min_sync_gap) == (2, 0)
    assert profile.supersteps(min_sync_gap=2).supersteps.height == 1
