"""``history --fail-on`` fails on a recent significant regression change point, and every
gate refuses a verdict across runs that are not comparable (issue 37; docs/store.md,
"Comparability").

The store's runs each hold one ``gemm`` group of ten samples on tiles 0-9 of one duration
(so phaseCycles is that duration): ten runs at about 1,000 cycles, then seven at about
1,100 (a 10% regression). By the newest run, six of the ten runs of its band are at the new
level, so the MAD band has moved with it and passes; the change point does not.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner, Result

from tests.samples import sample, write_dump
from tileprof.analyses.comparability import differences
from tileprof.analyses.thresholds import parse_thresholds
from tileprof.commands.cli import cli
from tileprof.model.store.history import (
    RECENT_RUNS,
    Trend,
    check_changes,
    check_thresholds,
    trend_points,
    with_changes,
)

JITTER = (0, 3, -2, 1, -3, 2, -1, 4, -4, 0, 2, -2, 3, -1, 1, -3, 0)
LEVELS = [1000 + j for j in JITTER[:10]] + [1100 + j for j in JITTER[10:]]
"""phaseCycles of the 17 runs: a 10% step at run 11 (index 10)."""


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


def dump(folder: Path, index: int, cycles: int, **header: object) -> Path:
    samples = [sample(t, 1000 + index, cycles, "gemm", useful=cycles / 2) for t in range(10)]
    return write_dump(folder / f"run{index:02}.json", samples, **header)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("gate")
    uri = str(folder / "store")
    dumps = [str(dump(folder, i, c)) for i, c in enumerate(LEVELS)]
    result = invoke("store", "add", *dumps, "--store", uri, env={"GITHUB_SHA": "0123abc"})
    assert result.exit_code == 0, result.output
    return uri


def trend(values: list[float]) -> Trend:
    runs = [f"r{i}" for i in range(len(values))]
    return with_changes(Trend("gemm", "phaseCycles", trend_points(runs, values)))


def test_a_recent_regression_change_point_fails_where_the_band_passes() -> None:
    rise = parse_thresholds(["phaseCycles of gemm may not rise by more than 5%"])
    small = parse_thresholds(["phaseCycles may not rise by more than 20%"])
    drop = parse_thresholds(["phaseCycles may not drop by more than 5%"])
    stepped = trend([float(v) for v in LEVELS])
    assert [c.run for c in stepped.changes] == ["r10"]
    assert check_thresholds([stepped], rise) == ()  # the band has moved with the level
    (failure,) = check_changes([stepped], rise)
    assert (failure.run, failure.change) == ("r16", "r10")
    assert failure.baseline == pytest.approx(np.mean(LEVELS[:10]))
    assert (failure.threshold, failure.group, failure.field, failure.value) == (
        "phaseCycles of gemm may not rise by more than 5%",
        "gemm",
        "phaseCycles",
        LEVELS[-1],
    )
    # a step smaller than the threshold, an improvement, and an old step all pass
    assert check_changes([stepped], small) == () and check_changes([stepped], drop) == ()
    old = trend([float(v) for v in LEVELS] + [1100.0 + j for j in JITTER[:RECENT_RUNS]])
    assert check_changes([old], rise) == ()
    flat = trend([1000.0 + j for j in JITTER])
    assert flat.changes == () and check_changes([flat], rise) == ()


def test_history_fail_on_names_the_change_point(store: str) -> None:
    sentence = "phaseCycles of gemm may not rise by more than 5%"
    result = invoke("history", "--store", store, "--fail-on", sentence, "--format", "json")
    assert result.exit_code == 1, result.output
    (failure,) = json.loads(result.stdout)["failures"]
    runs = [r["run"] for r in json.loads(result.stdout)["runs"]]
    assert failure["changePoint"] == runs[10] and failure["run"] == runs[-1]
    assert failure["threshold"] == sentence and failure["value"] == LEVELS[-1]
    assert all("changePoints" not in t for t in json.loads(result.stdout)["trends"])
    asked = invoke("history", "--store", store, "--change-points", "--format", "json")
    cycles = [t for t in json.loads(asked.stdout)["trends"] if t["field"] == "phaseCycles"]
    assert [c["run"] for c in cycles[0]["changePoints"]] == [runs[10]]
    table = invoke("history", "--store", store, "--fail-on", sentence).stdout
    assert f"(a change point from run {runs[10]}; baseline: the level before)" in table


def test_a_run_records_what_makes_it_comparable(store: str) -> None:
    (first, *_) = json.loads(invoke("store", "list", "--store", store, "--format", "json").stdout)
    assert first["environment"]["commit"] == "0123abc"  # from GITHUB_SHA
    assert first["environment"]["host"]
    assert (first["clockHz"], first["tileCount"]) == (1_500_000_000, 1472)


def test_history_refuses_a_verdict_across_tile_counts(tmp_path: Path) -> None:
    uri = str(tmp_path / "store")
    dumps = [str(dump(tmp_path, i, 1000 + JITTER[i])) for i in range(4)]
    dumps.append(str(dump(tmp_path, 4, 1001, tileCount=64)))
    assert invoke("store", "add", *dumps, "--store", uri).exit_code == 0
    gate = ["history", "--store", uri, "--fail-on", "phaseCycles may not rise by more than 5%"]
    refused = invoke(*gate)
    assert refused.exit_code == 3, refused.output
    assert "differ in tileCount 1472 → 64" in refused.stderr
    allowed = invoke(*gate, "--allow-different")
    assert allowed.exit_code == 0, allowed.output
    assert "judged under --allow-different" in allowed.stderr


def test_diff_refuses_a_verdict_across_clocks(tmp_path: Path) -> None:
    before = dump(tmp_path, 0, 1000, clockHz=1_000_000_000)
    after = dump(tmp_path, 1, 1000, clockHz=1_350_000_000)
    gate = [
        "diff",
        str(before),
        str(after),
        "--fail-on",
        "phaseCycles may not rise by more than 5%",
    ]
    refused = invoke(*gate)
    assert refused.exit_code == 3, refused.output
    assert "the two sides differ in clockHz 1000000000 → 1350000000" in refused.output
    assert invoke(*gate, "--allow-different").exit_code == 0


def test_differences_compare_only_what_both_state() -> None:
    assert differences({"device": "A", "driver": "1"}, {"device": "B"}) == ["device A → B"]
    assert differences({"host": "a", "commit": "1"}, {"host": "b", "commit": "2"}) == []


def test_markdown_summary_leads_with_the_verdict(store: str) -> None:
    sentence = "phaseCycles of gemm may not rise by more than 5%"
    result = invoke(
        "history", "--store", store, "--fail-on", sentence, "--format", "markdown",
        "--change-points",
    )  # fmt: skip
    assert result.exit_code == 1, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("## tileprof history: 17 runs, newest ")
    assert lines[2] == "**Failed** (exit 1): 1"
    assert "(change point from run " in lines[4]
    header = next(i for i, line in enumerate(lines) if line.startswith("| group | field |"))
    assert lines[header + 1] == "| :--- | :--- | ---: | ---: | ---: | :--- | :--- |"
    gemm = next(line for line in lines if line.startswith("| gemm | phaseCycles |"))
    assert gemm.endswith(" (+10.00%) |")  # the step: mean 1,100 after, 1,000 before
    passed = invoke("history", "--store", store, "--format", "markdown").stdout
    assert passed.splitlines()[2] == "**Passed**"
