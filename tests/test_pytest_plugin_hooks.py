"""The pytest plugin's own hooks, in-process through pytester: its options and ini value in
``pytest --help``, the report header under ``--tileprof-regen``, the terminal summary's paths
relative to the rootdir whatever the working folder, and the fixtures folder an ini file
names relative to that file (``tileprof.testing.plugin``)."""

from __future__ import annotations

from pathlib import Path

import pytest

SPEC = '{"groups": [{"kernel": "k", "samples": 3}]}'
TEST = """
from tileprof.testing import assert_aggregates_match
def test_it(tile_dump, reference_aggregates):
    assert_aggregates_match(tile_dump("one"), reference_aggregates("one"))
"""
HEADER = "tileprof: --tileprof-regen: golden aggregates are rewritten, not compared"


def _fixture(folder: Path) -> Path:
    """``folder/one/spec.json``; returns where its golden file goes."""
    (folder / "one").mkdir(parents=True)
    (folder / "one" / "spec.json").write_text(SPEC)
    return folder / "one" / "aggregates.json"


def test_help_lists_the_option_and_the_ini_value_under_the_plugins_group(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "250")  # one line each
    result = pytester.runpytest("--help")
    assert result.ret == 0
    result.stdout.fnmatch_lines(
        [
            "tileprof golden aggregates:",
            "  --tileprof-regen * rewrite tileprof golden aggregates from the current dumps "
            "instead of comparing",
        ]
    )
    result.stdout.fnmatch_lines(
        [
            "  tileprof_fixtures (string):*",
            "* folder of tileprof fixtures (<name>/aggregates.json, <name>/spec.json), relative "
            "to the ini file; default: 'fixtures' beside each test module",
        ],
        consecutive=False,
    )


def test_the_header_says_golden_files_are_rewritten_only_under_regen(
    pytester: pytest.Pytester,
) -> None:
    _fixture(pytester.path / "fixtures")
    pytester.makepyfile(test_it=TEST)
    regen = pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen")
    regen.assert_outcomes(passed=1)
    assert HEADER in regen.stdout.lines
    compare = pytester.runpytest("-p", "no:cacheprovider")
    compare.assert_outcomes(passed=1)
    assert HEADER not in compare.stdout.str()
    assert "tileprof golden aggregates" not in compare.stdout.str()  # no summary either


def test_the_summary_names_files_from_the_rootdir_when_run_from_a_subfolder(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each kind of line with its path as the author types it from the project's root (the
    ini file's folder), not from the folder pytest was started in."""
    pytester.makeini("[pytest]\n")
    tests = pytester.path / "tests"
    golden = _fixture(tests / "fixtures")
    (tests / "test_it.py").write_text(TEST)
    monkeypatch.chdir(tests)
    created = pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen")
    created.assert_outcomes(passed=1)
    created.stdout.fnmatch_lines(
        [
            "*= tileprof golden aggregates =*",
            "created: tests/fixtures/one/aggregates.json",
            "1 created, 0 rewritten, 0 unchanged, 0 not touched",
        ]
    )
    golden.write_text(golden.read_text().replace('"k"', '"renamed"'))
    rewritten = pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen")
    rewritten.stdout.fnmatch_lines(
        [
            "rewritten: tests/fixtures/one/aggregates.json",
            "0 created, 1 rewritten, 0 unchanged, 0 not touched",
        ]
    )
    (tests / "fixtures" / "one" / "spec.json").unlink()
    missing = pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen")
    missing.stdout.fnmatch_lines(
        [
            "not touched: tests/fixtures/one/aggregates.json (spec spec.json is missing)",
            "0 created, 0 rewritten, 0 unchanged, 1 not touched",
        ]
    )


def test_an_ini_files_fixtures_folder_is_beside_it_and_without_one_beside_the_rootdir(
    pytester: pytest.Pytester,
) -> None:
    """``-c conf/pytest.ini`` with ``--rootdir`` elsewhere: ``tileprof_fixtures`` is read
    from the ini file's folder; given with ``-o`` and no ini file, from the rootdir."""
    conf = pytester.path / "conf"
    conf.mkdir()
    (conf / "pytest.ini").write_text("[pytest]\ntileprof_fixtures = golden\n")
    beside_ini = _fixture(conf / "golden")
    pytester.makepyfile(test_it=TEST)
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-c", str(conf / "pytest.ini"),
        "--rootdir", str(pytester.path), "--tileprof-regen",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert beside_ini.is_file()
    assert not (pytester.path / "golden").exists()
    beside_root = _fixture(pytester.path / "elsewhere")
    result = pytester.runpytest(
        "-p", "no:cacheprovider", "-o", "tileprof_fixtures=elsewhere",
        "--rootdir", str(pytester.path), "--tileprof-regen",
    )  # fmt: skip
    result.assert_outcomes(passed=1)
    assert beside_root.is_file()
