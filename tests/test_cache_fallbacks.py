"""The paths that run only when something is wrong: a corrupt cache entry, a cache folder that
cannot be written, and Parquet files whose header or cache layout is bad."""

from __future__ import annotations

import io
from pathlib import Path

import polars as pl
import pytest

import tileprof
from tests.samples import document, sample
from tileprof.core.errors import InputError
from tileprof.inputs.tile.parquet_dump import CACHE_LAYOUT, CACHE_LAYOUT_KEY, METADATA_TABLE_KEY
from tileprof.model.cache import cache_path, load_cached

SAMPLES = [sample(0, 0, 10, "a", useful=5), sample(1, 4, 6, "b"), sample(0, 10, 3, "a")]


@pytest.fixture()
def dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "d.json"
    path.write_bytes(document(SAMPLES, clockHz=1e9, tileCount=4))
    return path


def _durations(profile: tileprof.Profile) -> list[int]:
    return profile.samples["duration"].to_list()


def test_corrupt_cache_entry_is_ignored_and_rewritten(dump: Path) -> None:
    entry = cache_path(dump)
    entry.parent.mkdir(parents=True)
    entry.write_bytes(b"PAR1 this is not a Parquet file PAR1")
    profile = load_cached(dump)
    assert profile.format == "json"  # parsed from the dump, not read from the entry
    assert _durations(profile) == [10, 6, 3]
    assert (profile.clock_hz, profile.tile_count) == (1e9, 4)
    assert entry.read_bytes()[:4] == b"PAR1" and entry.stat().st_size > 100
    again = load_cached(dump)
    assert again.format == "parquet" and again.source == str(dump)
    assert _durations(again) == [10, 6, 3]


def test_unwritable_cache_folder_costs_a_warning_not_the_run(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # A regular file where the cache folder should be: no folder can be made, even as root.
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(blocker / "cache"))
    profile = load_cached(dump)
    assert _durations(profile) == [10, 6, 3]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith(f"tileprof: warning: cannot write cache {blocker / 'cache'}/d.json.")
    assert not (blocker.parent / "cache").exists()


def _parquet(path: Path, frame: pl.DataFrame, kv: dict[str, str]) -> Path:
    buffer = io.BytesIO()
    frame.write_parquet(buffer, metadata=kv)
    path.write_bytes(buffer.getvalue())
    return path


DUMP_COLUMNS = pl.DataFrame(
    {"physicalTile": [0], "offset": [0], "duration": [5], "kind": ["compute"], "kernel": ["k"]}
)


@pytest.mark.parametrize(
    ("kv", "where", "message"),
    [
        ({"clockHz": "fast"}, "key-value metadata", "bad clockHz/tileCount"),
        ({"clockHz": "true"}, "key-value metadata clockHz", "not a number: True"),
        ({"clockHz": '"1e9"'}, "key-value metadata clockHz", "not a number: '1e9'"),
        ({"tileCount": "1.5"}, "key-value metadata tileCount", "not an integer: 1.5"),
        ({"tileCount": "false"}, "key-value metadata tileCount", "not an integer: False"),
    ],
)
def test_bad_parquet_header(tmp_path: Path, kv: dict[str, str], where: str, message: str) -> None:
    path = _parquet(tmp_path / "d.parquet", DUMP_COLUMNS, kv)
    with pytest.raises(InputError) as info:
        tileprof.load(path)
    assert (info.value.path, info.value.where) == (str(path), where)
    assert info.value.message.startswith(message)


def test_good_parquet_header_is_read(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "d.parquet", DUMP_COLUMNS, {"clockHz": "2e9", "tileCount": "8"})
    profile = tileprof.load(path)
    assert (profile.clock_hz, profile.tile_count, _durations(profile)) == (2e9, 8, [5])


def _cache_layout(tmp_path: Path) -> tuple[pl.DataFrame, dict[str, str]]:
    saved = tmp_path / "saved.parquet"
    profile = tileprof.load(tmp_path / "d.json")
    profile.save(saved)
    return pl.read_parquet(saved), pl.read_parquet_metadata(saved)


def test_cache_layout_without_the_sample_columns(dump: Path, tmp_path: Path) -> None:
    frame, kv = _cache_layout(tmp_path)
    assert kv[CACHE_LAYOUT_KEY] == CACHE_LAYOUT
    path = _parquet(tmp_path / "bad.parquet", frame.drop("phase"), kv)
    with pytest.raises(InputError) as info:
        tileprof.load(path)
    assert info.value.where == "columns"
    assert info.value.message == "cache layout does not hold the sample columns"


@pytest.mark.parametrize("table", ["not json", '[[["usefulCycles", 5]]]', '{"a": 1}'])
def test_cache_layout_with_a_bad_metadata_table(dump: Path, tmp_path: Path, table: str) -> None:
    frame, kv = _cache_layout(tmp_path)
    path = _parquet(tmp_path / "bad.parquet", frame, {**kv, METADATA_TABLE_KEY: table})
    with pytest.raises(InputError) as info:
        tileprof.load(path)
    assert info.value.where == METADATA_TABLE_KEY
    assert info.value.message.startswith("bad metadata table: ")


def test_cache_layout_round_trip_keeps_metadata(dump: Path, tmp_path: Path) -> None:
    frame, kv = _cache_layout(tmp_path)
    profile = tileprof.load(_parquet(tmp_path / "copy.parquet", frame, kv))
    assert profile.format == "parquet"
    assert _durations(profile) == [10, 6, 3]
    assert profile.samples["usefulCycles"].to_list() == [5.0, None, None]
