"""Golden files and ``--tileprof-regen`` (``tileprof.testing.golden``) over files written here:
a rewrite keeps the reviewed thresholds and ``dump``, leaves a golden whose dump is gone, and
says what it did to each file once."""

from __future__ import annotations

from pathlib import Path

import pytest

from tileprof.testing import Threshold
from tileprof.testing.aggregates import Aggregates
from tileprof.testing.golden import GoldenFile, RegenLog, shown

ACTUAL = Aggregates(
    groups={"gemm": {"phaseCycles": 120, "usefulUtilization": 0.5}},
    header={"clockHz": 1_500_000_000, "tileCount": 4},
)


def test_shown_is_relative_under_the_base_and_as_is_elsewhere(tmp_path: Path) -> None:
    inside = tmp_path / "a" / "b.json"
    assert shown(inside, tmp_path) == str(Path("a") / "b.json")
    assert shown(Path("/elsewhere/c.json"), tmp_path) == "/elsewhere/c.json"


def test_shown_defaults_to_the_working_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    assert shown(tmp_path / "x" / "aggregates.json") == str(Path("x") / "aggregates.json")


def test_a_new_golden_is_created_with_its_folders(tmp_path: Path) -> None:
    log = RegenLog()
    golden = GoldenFile(tmp_path / "deep" / "er" / "aggregates.json", log)
    assert golden.name == "er" and not golden.exists()
    assert golden.regenerate(ACTUAL) is True
    assert golden.load() == ACTUAL
    assert (log.created, log.written, log.unchanged) == ([golden.path], [], [])


def test_a_rewrite_keeps_the_thresholds_and_the_dump(tmp_path: Path) -> None:
    (tmp_path / "dump.json").write_text("{}")
    path = tmp_path / "aggregates.json"
    kept = Aggregates(
        groups={"gemm": {"phaseCycles": 100}},
        header={"clockHz": 1},
        thresholds=(Threshold("usefulUtilization", max_drop=0.1),),
        dump="dump.json",
    )
    path.write_text(kept.to_json())
    log = RegenLog()
    assert GoldenFile(path, log).regenerate(ACTUAL) is True
    written = Aggregates.load(path)
    assert written.groups == ACTUAL.groups and written.header == ACTUAL.header
    assert written.thresholds == kept.thresholds and written.dump == "dump.json"
    assert log.written == [path] and log.created == []
    assert GoldenFile(path, log).regenerate(ACTUAL) is False  # now the same bytes
    assert GoldenFile(path, log).regenerate(ACTUAL) is False
    assert log.unchanged == [path]  # once


def test_an_unchanged_golden_outside_a_session_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "aggregates.json"
    path.write_text(ACTUAL.to_json())
    before = path.stat().st_mtime_ns
    assert GoldenFile(path).regenerate(ACTUAL) is False
    assert path.stat().st_mtime_ns == before


def test_a_golden_whose_dump_is_gone_is_skipped_once_and_says_why(tmp_path: Path) -> None:
    path = tmp_path / "aggregates.json"
    stale = Aggregates(groups={"gemm": {"phaseCycles": 1}}, dump="gone.json")
    path.write_text(stale.to_json())
    log = RegenLog()
    assert GoldenFile(path, log).regenerate(ACTUAL) is False
    assert GoldenFile(path, log).regenerate(ACTUAL) is False
    assert log.skipped == [(path, "dump gone.json is missing")]
    assert Aggregates.load(path) == stale


def test_skip_records_each_path_once() -> None:
    log = RegenLog()
    log.skip(Path("a"), "first")
    log.skip(Path("b"), "other")
    log.skip(Path("a"), "again")
    assert log.skipped == [(Path("a"), "first"), (Path("b"), "other")]
