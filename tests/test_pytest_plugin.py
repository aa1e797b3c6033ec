"""The pytest plugin end to end: in-process through pytester, and as a downstream project would.

The downstream test runs pytest in a subprocess on a throwaway project that has nothing but an
empty conftest.py: the fixtures must come from the installed tileprof's ``pytest11`` entry
point alone.
"""

from __future__ import annotations

import filecmp
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

KERNEL_TEST = """
from tileprof.testing import assert_aggregates_match


def test_gemm(tile_dump, reference_aggregates):
    profile = tile_dump("gemm")
    assert_aggregates_match(
        profile.summary(epoch=1),
        reference_aggregates("gemm"),
        thresholds=["usefulUtilization of gemm_f16_* may not drop by more than 2%"],
    )
"""


def _spec(useful: float) -> str:
    return json.dumps(
        {
            "seed": 9,
            "tileCount": 64,
            "epoch": 1,
            "groups": [
                {"kernel": "gemm_f16_main", "samples": 128, "tiles": 64,
                 "duration": {"normal": [20000, 300]}, "useful": useful, "occupancy": 0.9},
                {"kind": "exchange", "samples": 64, "tiles": 64, "duration": 3000},
            ],
        }
    )  # fmt: skip


def _environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "PYTHONPATH"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


def _pytest(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd,
        env=_environment(),
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_downstream_project_passes_fails_readably_and_is_repaired(tmp_path: Path) -> None:
    project = tmp_path / "kernels"
    (project / "tests" / "fixtures" / "gemm").mkdir(parents=True)
    (project / "pytest.ini").write_text("[pytest]\n")
    (project / "conftest.py").write_text("")
    (project / "tests" / "test_kernels.py").write_text(KERNEL_TEST)
    spec = project / "tests" / "fixtures" / "gemm" / "spec.json"
    golden = spec.with_name("aggregates.json")
    spec.write_text(_spec(0.70))

    created = _pytest(project, "--tileprof-regen")
    assert created.returncode == 0, created.stdout + created.stderr
    assert "created: tests/fixtures/gemm/aggregates.json" in created.stdout
    assert "1 created, 0 rewritten, 0 unchanged, 0 not touched" in created.stdout
    pinned = golden.read_bytes()

    passing = _pytest(project)
    assert passing.returncode == 0, passing.stdout + passing.stderr

    spec.write_text(_spec(0.60))  # the kernel got worse
    failing = _pytest(project)
    assert failing.returncode == 1, failing.stdout
    table = failing.stdout
    assert "aggregates differ from" in table
    header = next(line for line in table.splitlines() if "limit" in line)
    assert header.split()[-6:] == ["group", "field", "old", "new", "change", "limit"]
    assert "gemm_f16_main  usefulUtilization" in table
    assert "-14.29%" in table and "drop ≤ 2%" in table
    assert "pytest --tileprof-regen" in table
    assert golden.read_bytes() == pinned  # comparing never writes

    repaired = _pytest(project, "--tileprof-regen")
    assert repaired.returncode == 0, repaired.stdout + repaired.stderr
    assert "rewritten: tests/fixtures/gemm/aggregates.json" in repaired.stdout
    assert golden.read_bytes() != pinned
    again = _pytest(project)
    assert again.returncode == 0, again.stdout + again.stderr


def test_regen_on_clean_checkout_changes_nothing(tmp_path: Path) -> None:
    """``pytest --tileprof-regen`` rewrites the project's fixtures into a copy: no byte moves."""
    copy = tmp_path / "fixtures"
    shutil.copytree(ROOT / "fixtures", copy)
    result = _pytest(
        ROOT,
        "tests/test_fixture_goldens.py",
        "--tileprof-regen",
        "-o",
        f"tileprof_fixtures={copy}",
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 rewritten" in result.stdout or "\n0 rewritten" in result.stdout, result.stdout
    comparison = filecmp.dircmp(ROOT / "fixtures", copy)
    assert not comparison.left_only and not comparison.right_only
    for sub in comparison.subdirs.values():
        assert not sub.diff_files and not sub.left_only and not sub.right_only, sub.report()
        for name in sub.common_files:
            left = Path(sub.left) / name
            assert left.read_bytes() == (Path(sub.right) / name).read_bytes(), left


def test_missing_golden_fails_with_instructions(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        test_it="""
        from tileprof.testing import assert_aggregates_match
        def test_it(tile_dump, reference_aggregates):
            profile = tile_dump({"groups": [{"kernel": "k", "samples": 4}]})
            assert_aggregates_match(profile, reference_aggregates("absent"))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        ["*no golden aggregates at*absent*aggregates.json*--tileprof-regen*"]
    )


def test_regen_never_touches_a_golden_whose_dump_is_missing(pytester: pytest.Pytester) -> None:
    fixtures = pytester.path / "fixtures"
    for name in ("stored", "specced"):
        (fixtures / name).mkdir(parents=True)
    # A golden pinned to a stored dump that is gone, and a golden whose spec is gone.
    stored = fixtures / "stored" / "aggregates.json"
    stored.write_text(
        '{\n  "dump": "dump.ndjson.gz",\n  "format": "tileprof-aggregates/1",\n'
        '  "groups": {},\n  "header": {}\n}\n'
    )
    specced = fixtures / "specced" / "aggregates.json"
    specced.write_text('{\n  "format": "tileprof-aggregates/1",\n  "groups": {}\n}\n')
    before = {p: p.read_bytes() for p in (stored, specced)}
    pytester.makepyfile(
        test_it="""
        from tileprof.testing import assert_aggregates_match
        def test_stored(tile_dump, reference_aggregates):
            profile = tile_dump({"groups": [{"kernel": "k", "samples": 4}]})
            assert_aggregates_match(profile, reference_aggregates("stored"))
        def test_specced(tile_dump, reference_aggregates):
            assert_aggregates_match(tile_dump("specced"), reference_aggregates("specced"))
        """
    )
    result = pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen")
    result.assert_outcomes(passed=1, failed=1)  # the missing spec fails its test
    result.stdout.fnmatch_lines(
        [
            "*not touched: fixtures/stored/aggregates.json (dump dump.ndjson.gz is missing)*",
            "*not touched: fixtures/specced/aggregates.json (spec spec.json is missing)*",
            "*0 created, 0 rewritten, 0 unchanged, 2 not touched*",
        ]
    )
    assert {p: p.read_bytes() for p in (stored, specced)} == before


def test_ini_option_points_at_another_fixtures_folder(pytester: pytest.Pytester) -> None:
    pytester.makeini("[pytest]\ntileprof_fixtures = golden\n")
    (pytester.path / "golden" / "one").mkdir(parents=True)
    (pytester.path / "golden" / "one" / "spec.json").write_text(
        '{"groups": [{"kernel": "k", "samples": 3}]}'
    )
    pytester.makepyfile(
        test_it="""
        from tileprof.testing import assert_aggregates_match
        def test_it(tile_dump, reference_aggregates, tileprof_regen):
            assert_aggregates_match(tile_dump("one"), reference_aggregates("one"))
        """
    )
    pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen").assert_outcomes(passed=1)
    assert (pytester.path / "golden" / "one" / "aggregates.json").is_file()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)


def _code_blocks(language: str) -> list[str]:
    text = (ROOT / "docs" / "pytest-plugin.md").read_text(encoding="utf-8")
    blocks = text.split(f"```{language}\n")[1:]
    return [block.split("```", 1)[0] for block in blocks]


def test_documented_example_runs(pytester: pytest.Pytester) -> None:
    """The first JSON and Python blocks of docs/pytest-plugin.md are the copyable example."""
    spec, test = _code_blocks("json")[0], _code_blocks("python")[0]
    fixtures = pytester.path / "tests" / "fixtures" / "gemm"
    fixtures.mkdir(parents=True)
    (fixtures / "spec.json").write_text(spec)
    (pytester.path / "tests" / "test_gemm.py").write_text(test)
    pytester.runpytest("-p", "no:cacheprovider", "--tileprof-regen").assert_outcomes(passed=1)
    assert (fixtures / "aggregates.json").is_file()
    pytester.runpytest("-p", "no:cacheprovider").assert_outcomes(passed=1)
