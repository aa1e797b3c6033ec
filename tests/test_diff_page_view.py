"""The view model of ``diff --format html`` (``tileprof.views.html.diff_page``), checked on
small hand-built diffs without drawing a chart.

Each test calls the page's functions directly: the headline figures (docs/metrics.md, "Diff",
"Calls and time per call", "Tile diffs: samples and cycles per sample"), the table's columns
and cells, the rows hint, and what the waterfall and the before/after chart are asked to draw
(the chart functions are replaced by a recorder of their arguments). Expected numbers are
worked out by hand from the inputs, in the comments next to them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from tests.samples import sample, write_dump
from tests.test_diff import gpu_side
from tileprof._version import __version__
from tileprof.analyses.diff import Diff, Side, compare_runs, compare_summaries, tile_side
from tileprof.model.profile import load
from tileprof.views.html import charts
from tileprof.views.html import diff_page as page
from tileprof.views.html.view import Cell, Chart, Column, Figure

CALLS_CAPTION = (
    "The first bar (grey) is the change the groups' call counts explain: more or fewer calls, "
    "not faster or slower ones. Then groups by |change their call counts do not explain|, "
    "largest first; each bar starts where the one above ended, the last is the net change. "
    "Red: more time per call; green: less."
)
GROUP_DOC = (
    "matching key (after --match and --normalize), after its status mark: + added, - removed, "
    "~ changed, = unchanged; hover for each side's own name"
)


def other_calls() -> Diff:
    """k: 1 call of 2 µs → 2 of 3 µs; j: 2 calls of 3 µs → 1 of 4 µs; gone: 1 of 5 µs → none.
    count effects: k (2 − 1) × 2 / 1 = +2, j (1 − 2) × 6 / 2 = −3: −1 in all; time effects
    (the rest): k 4 − 2 = +2, j −2 + 3 = +1, gone −5. Per call: before scaled to the after
    calls 2 × 2 / 1 + 6 × 1 / 2 = 7 against 6 + 4 = 10 (+3, +42.86%)."""
    before = gpu_side("b.json", {"k": (1, 2.0), "j": (2, 6.0), "gone": (1, 5.0)})
    return compare_runs(before, gpu_side("a.json", {"k": (2, 6.0), "j": (1, 4.0)}))


def equal_calls() -> Diff:
    """k: 1 call of 10 µs → 1 call of 10.5 µs: total and net change +0.5 µs."""
    before = gpu_side("b.json", {"k": (1, 10.0)})
    return compare_runs(before, gpu_side("a.json", {"k": (1, 10.5)}))


def tile_diff(folder: Path, before: list[dict[str, Any]], after: list[dict[str, Any]]) -> Diff:
    """The diff of two tile dumps of 4 tiles, read with ``--epoch 1``."""
    sides = []
    for name, samples in (("before", before), ("after", after)):
        profile = load(write_dump(folder / f"{name}.json", samples, tileCount=4))
        sides.append(tile_side(profile.summary(epoch=1), f"{name}.json"))
    return compare_summaries(*sides)


@pytest.fixture()
def utilization(tmp_path: Path) -> Diff:
    """Both groups one sample a side: gemm 100 cycles, useful 25 → 50 (25% → 50%); copy on
    tile 1, 100 cycles useful 10 → 60 cycles useful 6 (10% on both): phaseCycles −40 net."""
    before = [sample(0, 0, 100, "gemm", useful=25), sample(1, 0, 100, "copy", useful=10)]
    after = [sample(0, 0, 100, "gemm", useful=50), sample(1, 0, 60, "copy", useful=6)]
    return tile_diff(tmp_path, before, after)


@pytest.fixture()
def fewer_samples(tmp_path: Path) -> Diff:
    """a: 10 samples of 100 cycles (sample i at offset 1,000 × i on tile i mod 4) → 9 of 120;
    b: 10 of 50 cycles at 1,000 × i + 500 on both sides. Work cycles at equal samples:
    a 1,000 × 9 / 10 + b 500 = 1,400 → 1,080 + 500 = 1,580 (+12.86%)."""

    def samples(count: int, cycles: int) -> list[dict[str, Any]]:
        a = [sample(i % 4, 1000 * i, cycles, "a") for i in range(count)]
        return a + [sample(i % 4, 1000 * i + 500, 50, "b") for i in range(10)]

    return tile_diff(tmp_path, samples(10, 100), samples(9, 120))


Recorded = dict[str, dict[str, Any]]


@pytest.fixture()
def drawn(monkeypatch: pytest.MonkeyPatch) -> Iterator[Recorded]:
    """{chart function: its arguments by name} of the charts the page asks for."""
    calls: Recorded = {}

    def recorder(name: str, real: Callable[..., Chart | None]) -> Callable[..., Chart]:
        def record(*args: Any, **kwargs: Any) -> Chart:
            bound = inspect.signature(real).bind(*args, **kwargs)
            bound.apply_defaults()
            calls[name] = dict(bound.arguments)
            return Chart(str(bound.arguments["id"]), name, str(bound.arguments["caption"]), "")

        return record

    for name in ("waterfall_chart", "before_after_chart"):
        monkeypatch.setattr(charts, name, recorder(name, getattr(charts, name)))
    yield calls


def by_label(figures: tuple[Figure, ...]) -> dict[str, Figure]:
    return {f.label: f for f in figures}


def test_a_change_is_signed_and_followed_by_its_relative_change() -> None:
    assert page._change_text({"change": 20, "relative": 0.25}) == "+20, +25.00%"
    assert page._change_text({"change": -20, "relative": -0.2}) == "-20, -20.00%"
    assert page._change_text({"change": 3, "relative": None}) == "+3"
    assert page._change_text({"change": None, "relative": None}) == "—"


def test_a_figure_in_percent_changes_in_percentage_points() -> None:
    busy = {"before": 0.5, "after": 0.4, "change": 0.4 - 0.5, "relative": -0.2}
    figure = page._figure("Device busy", busy, "deviceBusy", percent=True)
    assert figure == Figure("Device busy", 0.4 - 0.5, "50.00% → 40.00% (-10.00 pp)", "deviceBusy")


def test_the_matched_samples_figure() -> None:
    count = {"before": 20, "after": 19, "change": -1, "relative": -0.05}
    figure = page._matched_samples({"matchedSampleCount": count})
    assert figure == Figure("Matched samples", -1, "20 → 19 (-1, -5.00%)", "matchedSampleCount")


def test_equal_calls_show_the_total_and_a_signed_net_change() -> None:
    figures = page.headline(equal_calls())
    assert [f.label for f in figures] == [
        "Total µs",
        "Net change in total_us",
        "Top 1 groups explain",
        "Groups",
        "Filters",
    ]
    total, net, top, groups, filters = figures
    assert total == Figure(
        "Total µs", 0.5, "10 → 10.50 (+0.5000, +5.00%)", "Σ total_us over the rows"
    )
    assert net == Figure(
        "Net change in total_us", 0.5, "+0.5000", "total_usNetChange: Σ total_us_change"
    )
    assert (top.value, top.text) == (1.0, "100.00%")  # 0.5 of a gross 0.5
    assert groups == Figure(
        "Groups",
        None,
        "0 added (+), 0 removed (-), 1 changed (~), 0 unchanged (=)",
        "added, removed, changed, unchanged",
    )
    assert filters == Figure("Filters", None, "none", "the filters both sides were read with")


def test_other_calls_lead_with_the_calls_then_the_time_per_call() -> None:
    figures = page.headline(other_calls())
    calls, per_call, total = figures[:3]
    assert calls == Figure(
        "Calls (differ: compare time per call, not total time)",
        -1,
        "4 → 3 (-1, -25.00%)",
        "Σ calls per side; 2 groups ran a different number of times",
    )
    assert per_call == Figure(
        "Time per call, at equal calls", 3 / 7, "+42.86% (7 → 10 µs)", per_call.definition
    )
    assert per_call.definition.startswith("perCall: Σ total_us_before × calls_after / calls_bef")
    # 13 → 10 µs: −1 from the call counts, +3 per call, −5 of the removed group
    assert total == Figure(
        "Total µs",
        -3.0,
        "13 → 10 (-3, -23.08%)",
        "Σ total_us over the rows: call counts -1, time per call +3, added and removed groups -5",
    )
    assert figures[3].text == "-3"  # the net change, no sign of its own


def test_the_top_share_is_defined_over_the_column_the_rows_are_sorted_by() -> None:
    """Calls differ: the rows go by |time_effect_us| (gone −5, k +2, j +1), and the top row's
    share is 5 of their 8, not of the 11 of |total_us_change| (gone −5, k +4, j −2)."""
    before = gpu_side("b.json", {"k": (1, 2.0), "j": (2, 6.0), "gone": (1, 5.0)})
    diff = compare_runs(before, gpu_side("a.json", {"k": (2, 6.0), "j": (1, 4.0)}), top=1)
    top = by_label(page.headline(diff))["Top 1 groups explain"]
    assert (top.value, top.text) == (5 / 8, "62.50%")
    assert top.definition == (
        "topShare: Σ |time_effect_us| of the top rows / Σ |time_effect_us| of every row"
    )
    assert by_label(page.headline(equal_calls()))["Top 1 groups explain"].definition == (
        top.definition  # equal calls: the same column (each group's change is its time effect)
    )


def test_one_group_of_other_calls_is_one_group() -> None:
    before = gpu_side("b.json", {"k": (1, 2.0), "j": (2, 6.0)})
    diff = compare_runs(before, gpu_side("a.json", {"k": (2, 6.0), "j": (2, 6.0)}))
    calls = page.headline(diff)[0]
    assert calls.definition == "Σ calls per side; 1 group ran a different number of times"


def test_a_tile_headline_of_equal_samples(utilization: Diff) -> None:
    figures = page.headline(utilization)
    assert [f.label for f in figures] == [
        "Matched span (cycles)",
        "Matched samples",
        "Device busy",
        "Net change in phaseCycles",
        "Top 2 groups explain",
        "Groups",
        "Filters",
    ]
    found = by_label(figures)
    assert found["Matched samples"].text == "2 → 2 (0, +0.00%)"
    # Σ workCycles / (span 100 × 4 tiles): 200 / 400 → 160 / 400
    busy = found["Device busy"]
    assert busy == Figure("Device busy", busy.value, "50.00% → 40.00% (-10.00 pp)", "deviceBusy")
    assert found["Net change in phaseCycles"].text == "-40"
    assert found["Top 2 groups explain"].definition == (
        "topShare: Σ |phaseCycles_change| of the top rows / phaseCyclesGrossChange"
    )
    assert found["Filters"].text == "--epoch 1"


def test_fewer_samples_lead_with_the_samples_and_cycles_per_sample(fewer_samples: Diff) -> None:
    figures = page.headline(fewer_samples)
    assert [f.label for f in figures[:4]] == [
        "Matched samples (differ: compare cycles per sample, not total cycles)",
        "Work cycles per sample, at equal samples",
        "Matched span (cycles)",
        "Device busy",
    ]
    samples, per_sample = figures[:2]
    assert (samples.text, samples.definition) == (
        "20 → 19 (-1, -5.00%)",
        "matchedSampleCount; 1 group holds a different number of samples",
    )
    assert (per_sample.value, per_sample.text) == (180 / 1400, "+12.86% (1,400 → 1,580 cycles)")
    assert per_sample.definition == (
        "perSample: Σ workCycles_before × sampleCount_after / sampleCount_before against "
        "Σ workCycles_after, over the groups both sides hold"
    )


def test_each_field_has_its_change_relative_change_and_both_sides() -> None:
    assert page._field_columns(["usefulUtilization"]) == [
        Column(
            "usefulUtilization_change",
            "usefulUtilization Δ",
            True,
            "usefulUtilization_change: after − before",
        ),
        Column(
            "usefulUtilization_relative",
            "Δ %",
            True,
            "usefulUtilization_relative: (after − before) / |before|",
        ),
        Column("usefulUtilization_before", "before", True, "usefulUtilization"),
        Column("usefulUtilization_after", "after", True, "usefulUtilization"),
    ]


def test_the_significance_columns_name_their_level() -> None:
    assert page._significance_columns(0.9) == [
        Column("verdict", "per call", False, "changed / unchanged / not enough calls"),
        Column("perCall_change", "Δ % per call", True, "mean per call after / before − 1"),
        Column("perCall_low", "90% low", True, "the 90% interval's low end"),
        Column("perCall_high", "90% high", True, "the 90% interval's high end"),
    ]


def test_other_calls_add_both_effect_columns_after_the_group() -> None:
    columns = page._columns(other_calls())
    assert columns[:4] == (
        Column("group", "group", False, GROUP_DOC),
        Column(
            "time_effect_us",
            "Δ µs per call",
            True,
            "time_effect_us: the change in total_us the call counts do not explain "
            "(calls_after × Δ µs per call; an added or removed group's whole change)",
        ),
        Column(
            "count_effect_us",
            "Δ µs from calls",
            True,
            "count_effect_us: the change in total_us the change in calls explains "
            "(Δ calls × µs per call before): more or fewer calls, not faster ones",
        ),
        Column("total_us_change", "total_us Δ", True, "total_us_change: after − before"),
    )


def test_fields_come_sorted_one_first_then_changed_then_unchanged() -> None:
    """The rows are sorted by a; b never changed; c changed in every row."""
    rows = pl.DataFrame({"a_change": [5, -3], "b_change": [0, 0], "c_change": [2, 1]})
    side = Side("x", "tile", pl.DataFrame())
    diff = Diff(rows, {}, side, side, ("c", "b", "a"), "a")
    assert page.changed_first(diff) == ["a", "c", "b"]


def test_a_row_prints_each_kind_of_cell() -> None:
    keys = [
        ("verdict", False),
        ("total_us_relative", True),
        ("perCall_low", True),
        ("usefulUtilization_before", True),
        ("usefulUtilization_change", True),
        ("calls_after", True),
    ]
    columns = tuple(Column(k, k, numeric) for k, numeric in keys)
    values = ["changed", 0.5, -0.02, 0.25, 0.25, 1500]
    record = dict(zip([k for k, _ in keys], values, strict=True))
    row = page._row({"status": "changed", **record}, columns)
    assert row == page.DiffRow(
        "changed",
        (
            Cell("changed", "changed", ""),
            Cell("+50.00%", 0.5, "0.5"),
            Cell("-2.00%", -0.02, "-0.02"),
            Cell("25.00%", 0.25, "0.25"),  # a ratio in percent
            Cell("+25.00 pp", 0.25, "0.25"),  # its change: percentage points, as the terminal's
            Cell("1,500", 1500.0, "1500"),  # a count stays a count
        ),
    )


def test_a_missing_relative_change_is_a_dash_that_sorts_last() -> None:
    row = page._row({"status": "added", "x_relative": None}, (Column("x_relative", "Δ %", True),))
    assert row.cells == (Cell("—", None, ""),)
    change = Column("usefulUtilization_change", "Δ", True)
    assert page._row({"status": "added", change.key: None}, (change,)).cells == row.cells


def test_the_group_cell_names_each_sides_own_name() -> None:
    record = {"group": "gemm", "status": "changed", "beforeName": "gemm_v1", "afterName": "gemm_v2"}
    assert page._group_cell(record) == Cell("~ gemm", "gemm", "before: gemm_v1; after: gemm_v2")
    same = {**record, "status": "added", "beforeName": None, "afterName": "gemm"}
    assert page._group_cell(same) == Cell("+ gemm", "gemm", "")


def test_the_rows_hint_says_which_rows_are_shown() -> None:
    diff = other_calls()
    assert page._rows_hint(diff) == "Every group of either side, largest change first."
    limited = diff.limited(2)
    assert page._rows_hint(limited) == (
        "The 2 largest changes of 3 groups (--top 2), largest first."
    )


def test_the_waterfall_of_other_calls_starts_with_the_call_counts(drawn: Recorded) -> None:
    chart = page._waterfall(other_calls(), "diff")
    assert chart is not None and chart.id == "diff-waterfall"
    args = drawn["waterfall_chart"]
    assert args["names"] == (
        "call counts (more or fewer calls, not a change of speed)",
        "gone",
        "k",
        "j",
    )
    assert args["changes"].tolist() == [-1.0, -5.0, 2.0, 1.0]  # sums to the net −3
    assert (args["unit"], args["caption"], args["neutral"]) == ("total µs", CALLS_CAPTION, 1)


def test_the_waterfall_of_a_tile_diff_is_in_phase_cycles(
    utilization: Diff, drawn: Recorded
) -> None:
    page._waterfall(utilization, "x")
    args = drawn["waterfall_chart"]
    assert (args["id"], args["names"], args["changes"].tolist()) == (
        "x-waterfall",
        ("copy", "gemm"),
        [-40.0, 0.0],
    )
    assert (args["unit"], args["neutral"]) == ("phase cycles", 0)
    assert args["caption"] == (
        "Groups by |change in phaseCycles|, largest first; each bar starts where the one above "
        "ended, the last is the net change. Red: more time; green: less."
    )


def test_the_waterfall_of_equal_calls_is_in_total_us(drawn: Recorded) -> None:
    page._waterfall(equal_calls(), "diff")
    args = drawn["waterfall_chart"]
    assert (args["names"], args["unit"], args["neutral"]) == (("k",), "total µs", 0)
    assert args["caption"].startswith("Groups by |change in total_us|, largest first;")


def test_a_tile_diffs_bars_are_useful_utilization_in_percent(
    utilization: Diff, drawn: Recorded
) -> None:
    page._bars(utilization, "diff")
    args = drawn["before_after_chart"]
    assert (args["id"], args["title"], args["names"], args["xlabel"]) == (
        "diff-bars",
        "Useful utilization, before and after",
        ("copy", "gemm"),
        "usefulUtilization (%)",
    )
    # copy 10/100 → 6/60, gemm 25/100 → 50/100, in percent
    assert np.allclose(args["before"], [10, 25]) and np.allclose(args["after"], [10, 50])


def test_a_gpu_diffs_bars_are_total_us(drawn: Recorded) -> None:
    page._bars(other_calls(), "diff")
    args = drawn["before_after_chart"]
    assert (args["title"], args["names"], args["xlabel"]) == (
        "Total µs, before and after",
        ("gone", "k", "j"),
        "total_us",
    )
    assert args["before"].tolist() == [5, 2, 6] and args["after"].tolist() == [0, 6, 4]


def test_the_section_names_its_inputs_charts_and_setup(drawn: Recorded) -> None:
    before = gpu_side("b.json", {"k": (1, 10.0)}, device="A100")
    diff = compare_runs(before, gpu_side("a.json", {"k": (1, 10.5)}, device="H100"))
    section = page.diff_section(diff, id="baseline")
    assert [(i.role, i.path) for i in section.inputs] == [("before", "b.json"), ("after", "a.json")]
    assert [c.id for c in section.charts] == ["baseline-waterfall", "baseline-bars"]
    assert section.setup_note == (
        "not the same setup: the two sides differ in device A100 → H100; every change below is "
        "the setup's as much as the code's"
    )


def test_the_page_carries_the_version(drawn: Recorded) -> None:
    assert page.diff_page(equal_calls()).version == __version__
