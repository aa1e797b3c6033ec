"""How the command line reads its one dump (``tileprof.model.reading``): ``DumpReading``'s
options reaching the loader and the cache, ``load_profile``'s refusals, and the reference
profile with its device overrides and its epoch."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.samples import sample, write_dump
from tileprof.analyses.filters import Filters
from tileprof.core.errors import InputError, OptionError
from tileprof.model.examples import EXAMPLE_SOURCE, example_profile
from tileprof.model.reading import (
    DumpReading,
    example_epoch_filters,
    example_with_device,
    load_profile,
)


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "d.json", [sample(0, 0, 10), sample(1, 5, 5)], clockHz=1_000)


def test_the_defaults_read_as_the_file_says_quietly() -> None:
    read = DumpReading()
    assert read.keywords == {"format": None, "clock_hz": None, "tile_count": None, "quiet": True}
    assert read.options == {
        "format_in": None,
        "clock_hz": None,
        "tile_count": None,
        "cache": False,
        "quiet": True,
    }
    assert read.overrides_device is False


@pytest.mark.parametrize(
    ("clock", "tiles", "overrides"), [(None, None, False), (2e9, None, True), (None, 8, True)]
)
def test_a_device_override_is_either_fact(
    clock: float | None, tiles: int | None, overrides: bool
) -> None:
    assert DumpReading(clock_hz=clock, tile_count=tiles).overrides_device is overrides


def test_every_option_reaches_the_loader(dump: Path) -> None:
    read = DumpReading(format_in="json", clock_hz=2_000, tile_count=4, quiet=False)
    assert read.keywords == {"format": "json", "clock_hz": 2_000, "tile_count": 4, "quiet": False}
    profile = read.load(dump)
    assert (profile.clock_hz, profile.tile_count) == (2_000, 4)
    with pytest.raises(InputError):
        DumpReading(format_in="csv").load(dump)


def test_the_cache_is_used_only_when_asked(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    DumpReading().load(dump)
    assert not (tmp_path / "cache").exists()
    cached = DumpReading(cache=True, tile_count=4).load(dump)
    assert cached.tile_count == 4
    assert any((tmp_path / "cache").rglob("*"))


def test_load_profile_reads_the_dump_or_the_example(dump: Path) -> None:
    assert load_profile(dump, False, DumpReading()).samples.height == 2
    assert load_profile(None, True, DumpReading()) is example_profile()


@pytest.mark.parametrize(
    ("path", "example", "read", "message"),
    [
        (Path("d.json"), True, DumpReading(), "give a DUMP or --example, not both"),
        (None, False, DumpReading(), "give a DUMP file (or --example for the bundled"),
        (None, True, DumpReading(cache=True), "--example takes no --cache or --format-in"),
        (None, True, DumpReading(format_in="json"), "--example takes no --cache or --format-in"),
    ],
)
def test_load_profile_refuses_what_cannot_be_meant(
    path: Path | None, example: bool, read: DumpReading, message: str
) -> None:
    with pytest.raises(OptionError) as caught:
        load_profile(path, example, read)
    assert str(caught.value).startswith(message)


def test_the_example_takes_the_device_overrides_checked() -> None:
    profile = load_profile(None, True, DumpReading(clock_hz=1e9, tile_count=2_000))
    assert (profile.clock_hz, profile.tile_count) == (1e9, 2_000)
    assert profile.samples is example_profile().samples
    tiles_only, clock_only = example_with_device(None, 1_500), example_with_device(2e9, None)
    assert (tiles_only.clock_hz, tiles_only.tile_count) == (1_500_000_000, 1_500)
    assert (clock_only.clock_hz, clock_only.tile_count) == (2e9, 1_472)
    with pytest.raises(InputError) as caught:
        example_with_device(None, 8)  # the reference profile's samples reach tile 1,471
    assert EXAMPLE_SOURCE in str(caught.value)


def test_the_example_is_epoch_1_unless_another_is_chosen() -> None:
    said: list[str] = []
    filters = example_epoch_filters(Filters(kernels=("gemm*",)), said.append)
    assert filters == Filters(kernels=("gemm*",), epoch=1)
    assert said == [
        "--example: epoch 1 of the reference profile, as seed 004 was summarized "
        "(--epoch N for another, --epoch all for every one)"
    ]
    chosen = Filters(epoch=2)
    assert example_epoch_filters(chosen, said.append) is chosen and len(said) == 1
    assert example_epoch_filters(Filters()) == Filters(epoch=1)
