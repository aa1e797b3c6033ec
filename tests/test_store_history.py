"""`tileprof history`: trends from the stored statistics, the noise band, flags and --fail-on.

Each run holds one `gemm` group of ten 100-cycle samples on tiles 0-9 with known useful
cycles, so usefulUtilization = useful / 100 and phaseCycles = 100 exactly; and one `softmax`
group whose values never move. Expected bands are worked out by hand below.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner, Result

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli
from tileprof.model.store.history import band, trend_points

UTILIZATION = (0.50, 0.51, 0.49, 0.50, 0.40)
"""gemm's usefulUtilization in runs 1..5; the last one drops out of its band."""


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli, list(args), env=env)


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("history")
    uri = str(folder / "store")
    for index, utilization in enumerate(UTILIZATION, start=1):
        start = 1000 + index  # distinct files (an identical one would be a no-op)
        samples = [sample(t, start, 100, "gemm", useful=utilization * 100) for t in range(10)]
        samples += [sample(t, 2000, 50, "softmax", useful=25) for t in range(4)]
        dump = write_dump(folder / f"run{index}.json", samples)
        result = invoke(
            "store", "add", str(dump), "--store", uri, "--run", f"n{index}",
            "--label", f"commit=abc{index}", "--label", f"date=2026-11-0{6 - index}",
        )  # fmt: skip
        assert result.exit_code == 0, result.output
    return uri


def test_band_is_median_and_scaled_mad_of_the_previous_runs() -> None:
    assert band(np.array([0.50, 0.51])) is None  # fewer than 3 runs: no band
    median, low, high = band(np.array([0.50, 0.51, 0.49, 0.50]))  # type: ignore[misc]
    # median 0.50; |x - m| = 0, .01, .01, 0 → MAD 0.005; 3 × 1.4826 × 0.005 = 0.022239
    assert median == pytest.approx(0.50)
    assert (low, high) == (pytest.approx(0.477761), pytest.approx(0.522239))
    # a flat history gets the 1% floor: 200 ± 2
    assert band(np.array([200.0, 200.0, 200.0])) == (200.0, 198.0, 202.0)


def test_only_the_last_value_leaves_its_band() -> None:
    points = trend_points([f"n{i}" for i in range(1, 6)], list(UTILIZATION))
    assert [p.flag for p in points] == [None, None, None, None, "drop"]
    assert [p.median for p in points[:3]] == [None, None, None]
    assert points[3].median == pytest.approx(0.50)  # median of .50 .51 .49
    assert points[3].low == pytest.approx(0.50 - 3 * 1.4826 * 0.01)
    rising = trend_points(["a", "b", "c", "d"], [10.0, 10.0, 10.0, 10.5])
    assert rising[-1].flag == "rise"  # 10 ± 0.1 (floor); 10.5 is above


def test_a_value_on_its_bands_edge_is_inside_it() -> None:
    """The band is closed: a value at its high or its low end is not flagged."""
    points = trend_points(list("abcde"), [200.0, 200.0, 200.0, 202.0, 198.0])
    assert [(p.low, p.high) for p in points[3:]] == [(198.0, 202.0), (198.0, 202.0)]
    assert [p.flag for p in points] == [None] * 5
    just_out = trend_points(list("abcde"), [200.0, 200.0, 200.0, 202.01, 197.99])
    assert [p.flag for p in just_out[3:]] == ["rise", "drop"]


def test_history_json_reads_the_stored_statistics(store: str) -> None:
    result = invoke("history", "--store", store, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.output)
    assert [r["run"] for r in document["runs"]] == ["n1", "n2", "n3", "n4", "n5"]
    trends = {(t["group"], t["field"]): t for t in document["trends"]}
    assert set(trends) == {
        (g, f)
        for g in ("gemm", "softmax")
        for f in ("phaseCycles", "usefulUtilization", "deviceUsefulUtilization")
    }
    assert trends["gemm", "usefulUtilization"]["values"] == pytest.approx(list(UTILIZATION))
    assert trends["gemm", "phaseCycles"]["values"] == [100] * 5
    # deviceUsefulUtilization = useful / (phaseCycles × 1472 tiles) = 10 × u × 100 / (100 × 1472)
    device = [10 * u * 100 / (100 * 1472) for u in UTILIZATION]
    assert trends["gemm", "deviceUsefulUtilization"]["values"] == pytest.approx(device)
    assert trends["softmax", "usefulUtilization"]["flags"] == [None] * 5
    flags = [(f["run"], f["group"], f["field"], f["direction"]) for f in document["flags"]]
    assert flags == [
        ("n5", "gemm", "usefulUtilization", "drop"),
        ("n5", "gemm", "deviceUsefulUtilization", "drop"),
    ]
    assert document["flags"][0]["labels"] == {"commit": "abc5", "date": "2026-11-01"}
    assert document["failures"] == []


def test_fields_kernels_and_order(store: str) -> None:
    result = invoke(
        "history", "--store", store, "--format", "json", "--field", "p50Cycles",
        "--kernel", "soft*", "--order", "date",
    )  # fmt: skip
    document = json.loads(result.output)
    assert [r["run"] for r in document["runs"]] == ["n5", "n4", "n3", "n2", "n1"]  # by date
    assert [(t["group"], t["field"], t["values"]) for t in document["trends"]] == [
        ("softmax", "p50Cycles", [50] * 5)
    ]
    bad = invoke("history", "--store", store, "--field", "speed")
    assert bad.exit_code == 2 and "--field 'speed': not a group statistic" in bad.output


@pytest.mark.parametrize("choice", [["--kernel", "nothing*"], ["--label", "commit=none"]])
def test_no_group_or_no_run_chosen_is_an_empty_history(store: str, choice: list[str]) -> None:
    """A glob that matches no group, or a label no run carries: no trend, said so."""
    document = json.loads(invoke("history", "--store", store, "--format", "json", *choice).output)
    assert (document["trends"], document["flags"], document["failures"]) == ([], [], [])
    table = invoke("history", "--store", store, *choice)
    assert table.exit_code == 0 and "no stored statistics matched" in table.output


def test_fail_on_compares_the_newest_run_with_its_band(store: str, tmp_path: Path) -> None:
    output = tmp_path / "history.json"
    failing = invoke(
        "history", "--store", store, "--format", "json", "-o", str(output),
        "--fail-on", "usefulUtilization of gemm may not drop by more than 5%",
    )  # fmt: skip
    assert failing.exit_code == 1
    # a verdict, worded as one (exit 1), then the path written: no "error"
    assert failing.stderr.splitlines() == [
        "tileprof: 1 threshold failed for run n5: "
        "usefulUtilization of gemm may not drop by more than 5% (gemm)"
    ]
    assert failing.stdout == f"{output}\n"
    [failure] = json.loads(output.read_text())["failures"]
    # baseline: the median of n1..n4 = 0.50; 0.40 is a 20% drop
    assert failure["baseline"] == pytest.approx(0.50) and failure["value"] == pytest.approx(0.40)
    passing = invoke(
        "history", "--store", store,
        "--fail-on", "usefulUtilization of gemm may not drop by more than 25%",
        "--fail-on", "phaseCycles may not rise by more than 1%",
    )  # fmt: skip
    assert passing.exit_code == 0, passing.output
    bad = invoke("history", "--store", store, "--fail-on", "gemm must be fast")
    assert bad.exit_code == 2 and bad.output.startswith("tileprof: error: --fail-on")


def test_a_fail_on_without_a_band_is_not_a_pass(store: str) -> None:
    """Too few earlier runs for a band: nothing is checked, and the command says so and exits
    2 instead of passing silently; --allow-empty accepts it with a note."""
    sentence = "usefulUtilization of gemm may not drop by more than 5%"
    few = ("history", "--store", store, "--label", "commit=abc5", "--fail-on", sentence)
    refused = invoke(*few)
    assert refused.exit_code == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"tileprof: error: --fail-on '{sentence}': no band yet (needs 3 earlier runs with a "
        "value, has 0); nothing was checked (--allow-empty accepts that)\n"
    )
    allowed = invoke(*few, "--allow-empty")
    assert allowed.exit_code == 0, allowed.output
    assert "tileprof: note: --fail-on" in allowed.stderr and "no band yet" in allowed.stderr
    misspelt = invoke("history", "--store", store, "--fail-on", sentence.replace("gemm", "gemn"))
    assert misspelt.exit_code == 2
    assert "matches no stored group" in misspelt.stderr


def test_order_by_a_label_no_run_carries_is_refused(store: str) -> None:
    result = invoke("history", "--store", store, "--order", "dat")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr == (
        "tileprof: error: --order 'dat': no run carries that label "
        "(labels: commit, date; or --order time)\n"
    )


def test_order_by_a_label_when_no_run_has_labels_says_there_are_none() -> None:
    from datetime import datetime, timezone

    from tileprof.core.errors import OptionError
    from tileprof.model.store.history import order_runs
    from tileprof.model.store.tables import RunRecord

    added = datetime(2026, 12, 1, tzinfo=timezone.utc)
    runs = [RunRecord("r1", {}, "r1.json", "0" * 64, "json", 1, 1, 1, 1, "1", added)]
    with pytest.raises(OptionError, match=r"\(labels: none; or --order time\)$"):
        order_runs(runs, "commit")


def test_table_and_csv(store: str) -> None:
    table = invoke("history", "--store", store)
    assert table.exit_code == 0
    assert "flags    2" in table.output
    assert "40.00%" in table.output and "47.78% … 52.22%" in table.output
    rows = list(
        csv.DictReader(io.StringIO(invoke("history", "--store", store, "--format", "csv").output))
    )
    assert len(rows) == 2 * 3 * 5
    last = [
        r for r in rows if (r["run"], r["group"], r["field"]) == ("n5", "gemm", "usefulUtilization")
    ]
    assert last[0]["flag"] == "drop" and float(last[0]["value"]) == pytest.approx(0.40)


def test_html_is_self_contained_and_deterministic(store: str, tmp_path: Path) -> None:
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    pages = []
    for name in ("a.html", "b.html"):
        path = tmp_path / name
        result = invoke("history", "--store", store, "--format", "html", "-o", str(path), env=env)
        assert result.exit_code == 0, result.output
        pages.append(path.read_text())
    assert pages[0] == pages[1]
    page = pages[0]
    assert "default-src 'none'" in page and "http://" not in page.replace(
        'xmlns="http://www.w3.org/2000/svg"', ""
    )
    assert "2023-11-14 22:13:20 UTC" in page
    assert page.count('class="flag"') == 2  # the two flagged points of n5
    assert page.count("<polyline") == 6  # one line per group and field


def test_a_trend_never_measured_or_empty_has_no_band() -> None:
    """A field no run has (all missing, or all NaN) and a trend of no runs: no band, no error."""
    from tileprof.model.store.history import band_frame, bands

    for values in ([], [None] * 4, [float("nan")] * 4):
        assert bands(values) == ([None] * len(values),) * 3
    frame = pl.DataFrame({"trend": [0, 0, 0, 0], "value": [1.0, 2.0, 3.0, 4.0]})
    assert band_frame(frame).columns == ["trend", "value", "median", "low", "high"]


def test_the_vectorised_bands_follow_the_per_run_rule() -> None:
    """`bands` (all positions at once) against `band` applied run by run as the rule reads."""
    from tileprof.model.store.history import BAND_RUNS, bands

    rng = np.random.default_rng(3)
    values = rng.normal(100, 5, 40)
    values[[0, 4, 5, 17, 39]] = np.nan
    medians, lows, highs = bands(list(values))
    for i in range(values.size):
        before = values[:i][~np.isnan(values[:i])][-BAND_RUNS:]
        expected = band(before)
        if expected is None:
            assert medians[i] is None and lows[i] is None and highs[i] is None
        else:
            assert (medians[i], lows[i], highs[i]) == pytest.approx(expected, rel=1e-12)
