"""``model/cache.py`` by hand: where the cache lives, what its key covers, and that a second
run reads the entry rather than the dump (issue 38). ``tests/test_cache_fallbacks.py`` holds
the paths that run when something is wrong."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.samples import document, sample
from tileprof.analyses.filters import Filters
from tileprof.core.errors import InputError, TileprofError
from tileprof.model import cache
from tileprof.model.cache import (
    cache_dir,
    cache_key,
    cache_path,
    load_cached,
    load_cached_summary,
    summary_cache_path,
)

SAMPLES = [sample(0, 0, 10, "a", useful=5), sample(1, 4, 6, "b"), sample(0, 10, 3, "a")]


@pytest.fixture()
def dump(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    path = tmp_path / "d.json"
    path.write_bytes(document(SAMPLES, clockHz=1e9, tileCount=4))
    return path


def test_the_cache_folder_is_the_variables_else_xdgs_else_homes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TILEPROF_CACHE_DIR", raising=False)
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    assert cache_dir() == tmp_path / "home" / ".cache" / "tileprof"
    monkeypatch.setenv("XDG_CACHE_HOME", "")  # set but empty: not a folder
    assert cache_dir() == tmp_path / "home" / ".cache" / "tileprof"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tileprof"
    monkeypatch.setenv("TILEPROF_CACHE_DIR", "")
    assert cache_dir() == tmp_path / "xdg" / "tileprof"
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "mine"))
    assert cache_dir() == tmp_path / "mine"


def test_the_key_changes_with_each_thing_that_changes_the_profile(
    dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = cache_key(dump)
    assert re.fullmatch(r"[0-9a-f]{32}", key)
    assert cache_key(dump) == key
    assert cache_key(str(dump)) == key
    others = {
        cache_key(dump, format="json"),
        cache_key(dump, clock_hz=1e9),
        cache_key(dump, tile_count=4),
    }
    assert key not in others and len(others) == 3
    copy = dump.with_name("copy.json")
    copy.write_bytes(dump.read_bytes())
    os.utime(copy, ns=(dump.stat().st_atime_ns, dump.stat().st_mtime_ns))
    assert cache_key(copy) != key  # another path
    stat = dump.stat()
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1))
    touched = cache_key(dump)
    assert touched != key
    monkeypatch.setattr(cache, "__version__", "0.0.0+other")
    assert cache_key(dump) != touched


def test_a_missing_dump_has_no_key(tmp_path: Path) -> None:
    with pytest.raises(InputError) as caught:
        cache_key(tmp_path / "gone.json")
    assert str(caught.value) == f"{tmp_path / 'gone.json'}: no such file"


def test_entries_are_named_after_the_dump_and_its_question(dump: Path, tmp_path: Path) -> None:
    key = cache_key(dump, clock_hz=2e9)
    assert cache_path(dump, clock_hz=2e9) == tmp_path / "cache" / f"d.json.{key}.parquet"
    plain = summary_cache_path(dump, Filters(), ())
    name = re.fullmatch(rf"d\.json\.{cache_key(dump)}\.summary-([0-9a-f]{{16}})\.json", plain.name)
    assert name is not None and plain.parent == tmp_path / "cache"
    questions = {
        plain,
        summary_cache_path(dump, Filters(kernels=("a",)), ()),
        summary_cache_path(dump, Filters(), ("kind",)),
        summary_cache_path(dump, Filters(), (), clock_hz=2e9),
    }
    assert len(questions) == 4


def test_a_second_load_reads_the_entry_with_the_options_it_was_keyed_by(dump: Path) -> None:
    """The first load parses and saves; the second reads the entry (Parquet), named by the
    dump's path; options reach the parse and key their own entry."""
    first = load_cached(dump)
    assert first.format == "json" and cache_path(dump).is_file()
    second = load_cached(dump)
    assert second.format == "parquet" and second.source == str(dump)
    assert second.samples["duration"].to_list() == [10, 6, 3]
    clocked = load_cached(dump, clock_hz=2e9, tile_count=8)
    assert (clocked.format, clocked.clock_hz, clocked.tile_count) == ("json", 2e9, 8)
    again = load_cached(dump, clock_hz=2e9, tile_count=8)
    assert (again.format, again.clock_hz, again.tile_count) == ("parquet", 2e9, 8)
    assert load_cached(str(dump), format="json").format == "json"  # its own entry


def test_a_second_summary_is_read_from_its_document(dump: Path) -> None:
    """The summary's document is what a second run reads: a number changed in it comes back,
    with the filters and grouping of the call; an unreadable document is recomputed."""
    filters = Filters(kernels=("a",))
    first = load_cached_summary(dump, filters)
    entry = summary_cache_path(dump, filters, ())
    written = json.loads(entry.read_bytes())
    assert written == first.to_document()
    assert [g["name"] for g in written["groups"]] == ["a"]
    written["groups"][0]["maximumCycles"] = 12
    entry.write_text(json.dumps(written))
    second = load_cached_summary(dump, filters)
    assert second.groups["maximumCycles"].to_list() == [12]
    assert second.filters == filters and second.group_by == ()
    entry.write_text("{ not json")
    third = load_cached_summary(dump, filters)
    assert third.groups["maximumCycles"].to_list() == [10]
    assert json.loads(entry.read_bytes()) == first.to_document()


def test_a_summary_grouped_and_clocked_keys_and_keeps_its_question(dump: Path) -> None:
    grouped = load_cached_summary(dump, Filters(), ("kind",), clock_hz=2e9)
    assert grouped.group_by == ("kind",) and grouped.clock_hz == 2e9
    entry = summary_cache_path(dump, Filters(), ("kind",), clock_hz=2e9)
    assert json.loads(entry.read_bytes())["clockHz"] == 2e9
    read_back = load_cached_summary(dump, Filters(), ["kind"], clock_hz=2e9)
    assert read_back.group_by == ("kind",) and read_back.clock_hz == 2e9


def test_a_summary_that_cannot_be_saved_costs_a_warning(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    blocker = tmp_path / "blocker"
    blocker.write_text("")
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(blocker / "cache"))
    summary = load_cached_summary(dump, Filters())
    assert summary.groups["name"].to_list() == ["a", "b"]
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2  # the profile's entry, then the summary's
    assert err[1].startswith(f"tileprof: warning: cannot write cache {blocker / 'cache'}/d.json.")
    assert ".summary-" in err[1]


def test_each_option_keys_the_entries(dump: Path, tmp_path: Path) -> None:
    options = {"format": "json", "clock_hz": 2e9, "tile_count": 8}
    key = cache_key(dump, **options)  # type: ignore[arg-type]
    assert cache_path(dump, **options) == tmp_path / "cache" / f"d.json.{key}.parquet"  # type: ignore[arg-type]
    summary = summary_cache_path(dump, Filters(), (), **options)  # type: ignore[arg-type]
    assert summary.name.startswith(f"d.json.{key}.summary-")
    for name, value in options.items():
        assert cache_path(dump, **{name: value}) != cache_path(dump)  # type: ignore[arg-type]
        one = summary_cache_path(dump, Filters(), (), **{name: value})  # type: ignore[arg-type]
        assert one != summary_cache_path(dump, Filters(), ())


def test_a_new_size_at_the_same_time_is_a_new_key(dump: Path) -> None:
    stat = dump.stat()
    key = cache_key(dump)
    dump.write_bytes(dump.read_bytes() + b"\n")
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    assert dump.stat().st_mtime_ns == stat.st_mtime_ns
    assert cache_key(dump) != key


def test_a_cached_profile_is_not_taken_for_other_options(dump: Path) -> None:
    """After a plain load, a clock or a tile count of its own parses again with it; a format
    reaches the parse (a JSON dump read as CSV is refused, not read as JSON)."""
    assert load_cached(dump).clock_hz == 1e9
    assert load_cached(dump, tile_count=8).tile_count == 8
    assert load_cached(dump, clock_hz=2e9).clock_hz == 2e9
    with pytest.raises(TileprofError):
        load_cached(dump, format="csv")


def test_the_cache_folder_is_made_with_its_parents(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:  # fmt: skip
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "deep" / "er" / "cache"))
    load_cached_summary(dump, Filters())
    assert capsys.readouterr().err == ""
    assert cache_path(dump).is_file()
    assert summary_cache_path(dump, Filters(), ()).is_file()


def test_quiet_reaches_the_parse(dump: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``quiet=False`` (a progress bar on a terminal) is passed down to the reader, through
    the summary's cache too; the default is quiet."""
    from tileprof.model import profile

    seen: list[object] = []
    real_load = profile.load

    def spy(*args: object, **kwargs: object) -> profile.Profile:
        if kwargs.get("format") != "parquet":
            seen.append(kwargs.get("quiet"))
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(profile, "load", spy)
    load_cached(dump)
    load_cached(dump, clock_hz=2e9, quiet=False)
    load_cached_summary(dump, Filters(), tile_count=8)
    load_cached_summary(dump, Filters(), clock_hz=3e9, quiet=False)
    assert seen == [True, False, True, False]


def test_a_summary_read_back_names_its_dump_and_question(dump: Path) -> None:
    """The document holds no source and no grouping when nothing matched: the read-back
    summary takes both from the call."""
    nothing = Filters(kernels=("absent",))
    load_cached_summary(dump, nothing, ("kind",))
    back = load_cached_summary(dump, nothing, ("kind",))
    assert back.groups.height == 0
    assert back.source == str(dump) and back.group_by == ("kind",)
