"""``diff`` says whether each group's time per call changed, with a bootstrap interval over
its calls, and ``--fail-on`` fails only on significant changes (issue 37; docs/metrics.md,
"Significance").

The real before/after pair is the committed nsys export ``fixtures/real/h100_2gpu_1s.sqlite``
(2×H100, one second; nsys-ai's test fixture, MIT) split at the median start of its GPU
events: the first half of the capture is "before", the second "after", so both hold the same
number of calls and the same kernels with their own run-to-run noise.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import statistics
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner, Result

from tileprof.analyses import significance
from tileprof.analyses.significance import (
    CALLS_CAP,
    MIN_CALLS,
    MIN_DRAWS,
    RESAMPLES,
    interval,
    per_call_changes,
    resample_cap,
    verdict,
)
from tileprof.commands.cli import cli

EXPORT = Path(__file__).parent.parent / "fixtures" / "real" / "h100_2gpu_1s.sqlite"
GPU_TABLES = (
    "CUPTI_ACTIVITY_KIND_KERNEL",
    "CUPTI_ACTIVITY_KIND_MEMCPY",
    "CUPTI_ACTIVITY_KIND_MEMSET",
)
STEADY = "void at::native::vectorized_elementwise_kernel<(int)2, at::native::CUDAFunctor_add<long>, std::array<char *, (unsigned long)3>>(int, T2, T3)"  # noqa: E501
"""A kernel whose mean time per call moved by about 0.2% between the halves while its calls
spread by several percent."""


def invoke(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


@pytest.fixture(scope="module")
def halves(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(first half, second half) of the export's capture, split at the median GPU event."""
    folder = tmp_path_factory.mktemp("halves")
    paths = folder / "before.sqlite", folder / "after.sqlite"
    for path, keep_first in zip(paths, (True, False), strict=True):
        shutil.copyfile(EXPORT, path)
        with sqlite3.connect(path) as db:
            starts = sorted(s for t in GPU_TABLES for (s,) in db.execute(f"SELECT start FROM {t}"))
            middle = starts[len(starts) // 2]
            for table in GPU_TABLES:
                db.execute(f"DELETE FROM {table} WHERE (start < ?) = ?", (middle, not keep_first))
    return paths


def durations(path: Path, kernel: str) -> list[int]:
    """The kernel's call durations (ns), by SQL."""
    with sqlite3.connect(path) as db:
        query = (
            "SELECT k.end - k.start FROM CUPTI_ACTIVITY_KIND_KERNEL k "
            "JOIN StringIds s ON s.id = k.demangledName WHERE s.value = ?"
        )
        return [d for (d,) in db.execute(query, (kernel,))]


def test_a_kernel_moved_by_a_fraction_of_its_noise_is_unchanged(
    halves: tuple[Path, Path],
) -> None:
    before, after = (durations(p, STEADY) for p in halves)
    moved = statistics.mean(after) / statistics.mean(before) - 1
    assert 0.001 < abs(moved) < 0.003  # about 0.2%
    spread = [statistics.pstdev(d) / statistics.mean(d) for d in (before, after)]
    assert min(spread) > 0.025  # with noise of several percent
    result = invoke("diff", *map(str, halves), "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    row = next(g for g in document["groups"] if g["group"] == STEADY)
    assert (row["calls_before"], row["calls_after"]) == (len(before), len(after))
    assert row["perCall_change"] == pytest.approx(moved, rel=1e-9)
    assert row["verdict"] == "unchanged"
    assert row["perCall_low"] < 0 < row["perCall_high"]
    assert row["perCall_high"] - row["perCall_low"] > 0.01  # the noise, not the 0.2%
    figures = document["header"]["significance"]
    assert (figures["confidence"], figures["resamples"], figures["minimumCalls"]) == (
        0.95,
        RESAMPLES,
        MIN_CALLS,
    )
    assert sum(figures["verdicts"].values()) == sum(
        g["verdict"] is not None for g in document["groups"] if "verdict" in g
    )


def test_the_gate_does_not_fail_on_a_change_inside_the_noise(halves: tuple[Path, Path]) -> None:
    glob = STEADY.replace(" ", "?")  # a sentence's glob holds no spaces
    sentence = f"time_us of {glob} may not change by more than 0.1%"
    result = invoke("diff", *map(str, halves), "--fail-on", sentence)
    assert result.exit_code == 0, result.output  # 0.2% > 0.1%, but not significant
    assert "not a breach, unchanged per call (95% interval " in result.stderr
    # the same sentence on a kernel that did change per call fails the gate
    gather = "void?at::native::vectorized_gather_kernel<(int)16,?long>*"
    failed = invoke(
        "diff", *map(str, halves), "--fail-on", f"time_us of {gather} may not rise by more than 5%"
    )
    assert failed.exit_code == 1, failed.output
    assert failed.stdout.startswith("broken: time_us of void at::native::vectorized_gather_kernel")


GATHER = "void at::native::vectorized_gather_kernel<(int)16, long>(char *, char *, T2 *, int, long, long, long, long, bool)"  # noqa: E501
"""A kernel whose time per call changed between the halves, 30 calls a side."""


def test_the_gate_gives_no_verdict_on_a_breach_too_few_calls_cannot_judge(
    halves: tuple[Path, Path], tmp_path: Path
) -> None:
    # The gather kernel's change fails the gate over its 30 calls a side; over 5 it is not
    # a pass either: too few calls to tell it from noise, so the gate gives no verdict.
    few = []
    for half in halves:
        path = tmp_path / half.name
        shutil.copyfile(half, path)
        with sqlite3.connect(path) as db:
            db.execute(
                "DELETE FROM CUPTI_ACTIVITY_KIND_KERNEL WHERE demangledName = "
                "(SELECT id FROM StringIds WHERE value = ?) AND start > (SELECT start FROM "
                "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName "
                "WHERE s.value = ? ORDER BY start LIMIT 1 OFFSET 4)",
                (GATHER, GATHER),
            )
        few.append(path)
    assert [len(durations(p, GATHER)) for p in few] == [5, 5]
    glob = "void?at::native::vectorized_gather_kernel<(int)16,?long>*"
    sentence = f"time_us of {glob} may not change by more than 5%"
    assert invoke("diff", *map(str, halves), "--fail-on", sentence).exit_code == 1
    document = json.loads(invoke("diff", *map(str, few), "--format", "json").stdout)
    row = next(g for g in document["groups"] if g["group"] == GATHER)
    assert row["verdict"] == "not enough calls"
    assert abs(row["time_us_change"]) > 0.05 * row["time_us_before"]  # -8.7% over 5 calls
    result = invoke("diff", *map(str, few), "--fail-on", sentence)
    assert result.exit_code == 3, result.output
    assert result.stdout.startswith(
        "abstained, no verdict: 1 breach is of groups with not enough calls (under 10 calls "
        "or samples on a side, or no positive time per call) to tell a change from noise "
        f"(capture more steps); the largest: time_us of {GATHER}: "
    )
    assert "tileprof: note: not judged, not enough calls (" in result.stderr
    # a breach that stands still fails the gate (exit 1); the undecided one is only noted
    gemm = "time_us of sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_* may not change by more than 1%"
    both = invoke("diff", *map(str, few), "--fail-on", sentence, "--fail-on", gemm)
    assert both.exit_code == 1, both.output
    assert both.stdout.startswith("broken: time_us of sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_")
    assert "abstained" not in both.stdout and "not judged, not enough calls" in both.stderr


def test_the_table_html_and_json_say_the_calls_and_the_interval(
    halves: tuple[Path, Path], tmp_path: Path
) -> None:
    table = invoke("diff", *map(str, halves)).stdout
    groups = next(line for line in table.splitlines() if line.startswith("groups "))
    assert "per call " in groups and "95% bootstrap interval" in groups
    assert "unchanged " in table and "changed " in table and "[" in table
    page = tmp_path / "diff.html"
    assert invoke("diff", *map(str, halves), "--format", "html", "-o", str(page)).exit_code == 0
    html = page.read_text()
    assert "95% low" in html and "95% high" in html and "unchanged" in html
    level = invoke("diff", *map(str, halves), "--format", "json", "--confidence", "99")
    assert json.loads(level.stdout)["header"]["significance"]["confidence"] == 0.99


def test_the_same_inputs_give_the_same_bytes(halves: tuple[Path, Path], tmp_path: Path) -> None:
    outputs = []
    for index in range(2):
        for fmt in ("json", "table"):
            out = tmp_path / f"{index}.{fmt}"
            args = ["diff", *map(str, halves), "--format", fmt, "-o", str(out), "--force"]
            assert invoke(*args).exit_code == 0
            outputs.append(out.read_bytes())
    assert outputs[:2] == outputs[2:]


def test_the_interval_covers_a_known_ratio() -> None:
    """Exponential calls with a 10% slower after side: the 95% interval holds 10% and is
    narrower than the noise; identical sides give exactly 0."""
    rng = np.random.default_rng(3)
    before = rng.exponential(100.0, 2000)
    after = rng.exponential(110.0, 2000)
    change, low, high = interval(before, after, "k")  # type: ignore[misc]
    assert low < 0.10 < high and high - low < 0.2
    assert change == pytest.approx(after.mean() / before.mean() - 1)
    same, low, high = interval(before, before, "k")  # type: ignore[misc]
    assert same == 0.0 and low < 0 < high
    assert interval(np.full(50, 3.0), np.full(50, 3.0), "k") == (0.0, 0.0, 0.0)
    assert verdict((MIN_CALLS - 1, 500), (0.5, 0.4, 0.6)) == "not enough calls"
    assert verdict((500, 500), (0.5, 0.4, 0.6)) == "changed"
    assert verdict((500, 500), (0.0, -0.1, 0.1)) == "unchanged"


def test_an_interval_by_hand_from_two_calls() -> None:
    """Before [1, 3] (mean 2), after [2, 2] (mean 2): a resample of the two before calls has
    mean 1, 2 or 3 with chances 1/4, 1/2, 1/4, and the after side's resamples all have mean
    2, so the ratio's resampled values are 2/1, 2/2 and 2/3 (change +100%, 0, −1/3). At 95%
    the 2.5% tails lie inside each outer quarter: (0, −1/3, +1). At 40% the 30% tails reach
    past each quarter into the middle half: (0, 0, 0)."""
    before, after = np.array([1.0, 3.0]), np.array([2.0, 2.0])
    assert interval(before, after, "k") == pytest.approx((0.0, -1 / 3, 1.0))
    assert interval(before, after, "k", confidence=0.4) == pytest.approx((0.0, 0.0, 0.0))


def test_a_side_whose_mean_is_not_positive_has_no_ratio() -> None:
    calls, zeros = np.full(20, 5.0), np.zeros(20)
    assert interval(calls, zeros, "k") is None
    assert interval(zeros, calls, "k") is None


def test_calls_under_a_microsecond_have_a_ratio() -> None:
    """Calls of 0.5 µs against calls of 1 µs: twice as slow, or half, with every resample
    alike (no spread)."""
    half, one = np.full(20, 0.5), np.full(20, 1.0)
    assert interval(half, one, "k") == pytest.approx((1.0, 1.0, 1.0))
    assert interval(one, half, "k") == pytest.approx((-0.5, -0.5, -0.5))


def test_verdicts_at_the_edges() -> None:
    """MIN_CALLS calls a side is enough; an interval that reaches 0 holds it."""
    assert verdict((MIN_CALLS, MIN_CALLS), (0.5, 0.4, 0.6)) == "changed"
    assert verdict((500, 500), (0.25, 0.0, 0.5)) == "unchanged"
    assert verdict((500, 500), (-0.25, -0.5, 0.0)) == "unchanged"
    assert verdict((500, 500), None) == "not enough calls"


class _CountingGenerator:
    """A numpy generator that adds up the indices each ``integers`` call draws."""

    def __init__(self, seed: Any, drawn: list[int]) -> None:
        self.rng = REAL_DEFAULT_RNG(seed)
        self.drawn = drawn

    def integers(self, *args: object, **kwargs: object) -> np.ndarray:
        out: np.ndarray = self.rng.integers(*args, **kwargs)  # type: ignore[call-overload]
        self.drawn.append(out.size)
        return out


REAL_DEFAULT_RNG = np.random.default_rng


def test_each_side_draws_resamples_times_its_capped_calls(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A group draws RESAMPLES × m calls a side, m its calls or the cap (DRAWS_BUDGET's
    count), and a diff whose groups would draw more than DRAWS_BUDGET lowers every m to
    keep within it."""
    drawn: list[int] = []
    monkeypatch.setattr(np.random, "default_rng", lambda seed: _CountingGenerator(seed, drawn))
    calls = np.arange(1.0, 301.0)
    interval(calls, calls * 2, "k", cap=50)
    assert sum(drawn) == 2 * RESAMPLES * 50
    drawn.clear()
    interval(calls[:30], calls[:30], "k", cap=50)
    assert sum(drawn) == 2 * RESAMPLES * 30
    # two groups of 300 calls a side would draw 4 × 1000 × 250 = 10⁶: a budget of a fifth
    # of that lowers every side's m to 50
    drawn.clear()
    monkeypatch.setattr(significance, "DRAWS_BUDGET", 200_000)
    rows = pl.DataFrame({"group": ["a", "b"], "beforeName": ["a", "b"], "afterName": ["a", "b"]})
    side = pl.DataFrame({"name": ["a"] * 300 + ["b"] * 300, "value": [*calls, *calls]})
    per_call_changes(rows, side, side)
    assert sum(drawn) == 4 * RESAMPLES * 50 == 200_000


def test_a_large_side_is_resampled_at_a_cap_and_scaled() -> None:
    """100,000 calls a side: the m-out-of-n interval is as wide as the plain standard error
    says (±1.96 σ/√n on the log ratio), not as wide as for the 250 a resample draws."""
    rng = np.random.default_rng(4)
    before = rng.normal(100.0, 10.0, 100_000)
    after = rng.normal(100.0, 10.0, 100_000)
    _, low, high = interval(before, after, "big")  # type: ignore[misc]
    expected = 2 * 1.96 * np.sqrt(2) * 0.1 / np.sqrt(100_000)
    assert (high - low) == pytest.approx(expected, rel=0.15)


def test_many_groups_lower_the_cap_alike() -> None:
    assert resample_cap([(5000, 5000)] * 10) == CALLS_CAP
    assert resample_cap([(5, 5000)] * 10_000) == CALLS_CAP  # too few calls: no draws
    lowered = resample_cap([(5000, 5000)] * 400)  # 2 × 10⁸ draws at the full cap
    assert lowered == CALLS_CAP // 4
    assert resample_cap([(5000, 5000)] * 100_000) == MIN_DRAWS


def test_rows_pair_calls_by_each_side_name() -> None:
    rows = pl.DataFrame(
        {"group": ["k", "gone"], "beforeName": ["k_v1", "gone"], "afterName": ["k_v2", None]}
    )
    before = pl.DataFrame({"name": ["k_v1"] * 20 + ["gone"] * 20, "value": [1.0] * 40})
    after = pl.DataFrame({"name": ["k_v2"] * 20, "value": [2.0] * 20})
    found = per_call_changes(rows, before, after)
    assert found.to_dicts() == [
        {
            "group": "k",
            "perCall_change": 1.0,
            "perCall_low": 1.0,
            "perCall_high": 1.0,
            "verdict": "changed",
        }
    ]


def test_groups_with_few_or_no_calls_by_hand() -> None:
    """Five groups (as many as the result's columns): MIN_CALLS calls a side is enough for an
    interval; one call a side has a change but no interval; a side without calls, or a
    before side of zero-length calls, has no change."""
    names = ["ten", "one", "no_after", "no_before", "zero_before"]
    rows = pl.DataFrame({"group": names, "beforeName": names, "afterName": names})
    before = pl.DataFrame(
        {
            "name": ["ten"] * MIN_CALLS + ["one", "no_after", "zero_before", "zero_before"],
            "value": [1.0] * MIN_CALLS + [2.0, 5.0, 0.0, 0.0],
        }
    )
    after = pl.DataFrame(
        {
            "name": ["ten"] * MIN_CALLS + ["one", "no_before", "zero_before", "zero_before"],
            "value": [2.0] * MIN_CALLS + [3.0, 7.0, 1.0, 1.0],
        }
    )
    found = per_call_changes(rows, before, after)
    assert found.rows() == [
        ("ten", 1.0, 1.0, 1.0, "changed"),
        ("one", 0.5, None, None, "not enough calls"),
        ("no_after", None, None, None, "not enough calls"),
        ("no_before", None, None, None, "not enough calls"),
        ("zero_before", None, None, None, "not enough calls"),
    ]


def test_calls_pair_on_a_null_dimension() -> None:
    """A group whose dimension is null finds the calls whose dimension is null."""
    rows = pl.DataFrame(
        {
            "group": ["k [rank=null]", "k [rank=1]"],
            "beforeName": ["k", "k"],
            "afterName": ["k", "k"],
            "rank": [None, 1],
        },
        schema_overrides={"rank": pl.Int64},
    )
    ranks = [None] * MIN_CALLS + [1] * MIN_CALLS
    before = pl.DataFrame(
        {
            "name": ["k"] * 2 * MIN_CALLS,
            "rank": ranks,
            "value": [1.0] * MIN_CALLS + [4.0] * MIN_CALLS,
        }
    )
    after = pl.DataFrame(
        {
            "name": ["k"] * 2 * MIN_CALLS,
            "rank": ranks,
            "value": [3.0] * MIN_CALLS + [4.0] * MIN_CALLS,
        }
    )
    found = per_call_changes(rows, before, after, dimensions=("rank",))
    assert found.rows() == [
        ("k [rank=null]", 2.0, 2.0, 2.0, "changed"),
        ("k [rank=1]", 0.0, 0.0, 0.0, "unchanged"),
    ]


def test_markdown_gives_the_calls_interval_and_verdict(halves: tuple[Path, Path]) -> None:
    result = invoke("diff", *map(str, halves), "--format", "markdown")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("## tileprof diff: ") and lines[2] == "**Passed**"
    assert lines[4].startswith("| group | status | total_us before | after | Δ % | per call Δ % |")
    steady = next(line for line in lines if line.startswith("| " + STEADY.replace("|", "\\|")))
    assert steady.endswith(" | unchanged |") and " to " in steady


TRAINING = Path(__file__).parent.parent / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"
"""A training trace whose ops run 10 and more times each (the verdict's minimum)."""


def test_op_rows_carry_the_calls_behind_their_time_per_call() -> None:
    """``diff --per-op``'s evidence: each op row's calls that ran GPU work, whose mean is the
    row's time per call (checked against a plain loop over the calls)."""
    from tileprof.analyses.diff import op_call_durations, op_groups
    from tileprof.analyses.ops import op_rows
    from tileprof.inputs import read_bytes
    from tileprof.inputs.sources import kineto_events_of

    parsed = op_rows(kineto_events_of(TRAINING, read_bytes(TRAINING)))
    assert parsed.calls is not None
    calls = op_call_durations(parsed.calls)
    by_name: dict[str, list[float]] = {}
    for name, value in calls.iter_rows():
        by_name.setdefault(name, []).append(value)
    rows = op_groups(parsed.frame)
    assert set(by_name) <= set(rows["name"])
    checked = 0
    for row in rows.iter_rows(named=True):
        if row["time_us"] is not None and row["name"] in by_name:
            assert statistics.fmean(by_name[row["name"]]) == pytest.approx(row["time_us"])
            checked += 1
    assert checked > 10


def test_a_per_op_diff_gives_each_op_a_verdict(tmp_path: Path) -> None:
    """A trace against itself: every op with enough calls is unchanged (change 0, an interval
    around it); a per-op diff had no verdicts before."""
    out = tmp_path / "ops.json"
    result = invoke(
        "diff", str(TRAINING), str(TRAINING), "--per-op", "--format", "json", "-o", str(out)
    )
    assert result.exit_code == 0, result.output
    document = json.loads(out.read_text())
    verdicts = document["header"]["significance"]["verdicts"]
    assert verdicts["unchanged"] > 0 and verdicts["changed"] == 0
    judged = [r for r in document["groups"] if r.get("verdict") == "unchanged"]
    assert judged and all(r["perCall_change"] == 0.0 for r in judged)
    assert all(r["perCall_low"] <= 0.0 <= r["perCall_high"] for r in judged)
