"""``history`` and ``diff`` as Markdown (``tileprof.views.markdown``), over stand-ins holding
only the fields the views read: the functions only format, so every line is held here as a
CI job summary shows it."""

from __future__ import annotations

from types import SimpleNamespace as NS
from typing import Any

import polars as pl
import pytest

from tileprof.views import markdown
from tileprof.views.markdown import MARKDOWN_ROWS, cell, render_diff, render_history, table


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (None, "—"),
        (1234567, "1,234,567"),
        (0.5, "0.5000"),
        ("a|b", "a\\|b"),
        ("back\\slash", "back\\\\slash"),
        ("two\nlines\r", "two lines "),
        ("plain", "plain"),
    ],
)
def test_a_cell_is_escaped_and_numbers_print_as_the_tables_print_them(
    value: Any, text: str
) -> None:
    assert cell(value) == text


def test_a_table_aligns_text_left_and_numbers_right() -> None:
    lines = table(("group", "field", "value", "flag"), [("g", "x", 1.5, "ok")], text=2)
    assert lines == [
        "| group | field | value | flag |",
        "| :--- | :--- | ---: | :--- |",
        "| g | x | 1.500 | ok |",
    ]
    assert table(("group", "value"), [])[1] == "| :--- | ---: |"


def test_a_long_table_shows_fifty_rows_and_says_where_the_rest_are() -> None:
    rows = [(f"g{i}", i) for i in range(MARKDOWN_ROWS + 1)]
    lines = table(("group", "value"), rows)
    assert len(lines) == 2 + MARKDOWN_ROWS + 1
    assert (
        lines[-1] == f"\n{MARKDOWN_ROWS} of {MARKDOWN_ROWS + 1} rows (`--format csv` has them all)"
    )
    assert len(table(("group", "value"), rows[:MARKDOWN_ROWS])) == 2 + MARKDOWN_ROWS


def _history(failures: list[Any], runs: list[str], trends: list[Any]) -> Any:
    return NS(failures=failures, runs=[NS(run=r) for r in runs], trends=trends)


def _point(**fields: Any) -> Any:
    base = {"value": 10.0, "median": 9.0, "low": 8.0, "high": 11.0, "flag": "ok", "step": None}
    return NS(**{**base, **fields})


def test_history_that_passes() -> None:
    trend = NS(group="gemm", field="phaseCycles", points=[_point()], changes=[])
    text = render_history(_history([], ["r1", "r2"], [trend]))
    assert text.splitlines() == [
        "## tileprof history: 2 runs, newest r2",
        "",
        "**Passed**",
        "",
        "| group | field | newest | median | band | flag | change points |",
        "| :--- | :--- | ---: | ---: | ---: | :--- | :--- |",
        "| gemm | phaseCycles | 10 | 9 | 8 – 11 | ok | — |",
    ]
    assert text.endswith("|\n")
    one = render_history(_history([], ["r1"], [trend]))
    assert one.splitlines()[0] == "## tileprof history: 1 run, newest r1"


def test_history_that_fails_names_each_failure_and_change_point() -> None:
    failure = NS(
        threshold="+10%", group="gemm", field="phaseCycles", baseline=1000,
        value=1500, run="r3", change="r2",
    )  # fmt: skip
    plain = NS(
        threshold="+10%", group="copy", field="phaseCycles", baseline=10,
        value=20, run="r3", change=None,
    )  # fmt: skip
    changed = NS(run="r2", point=_point(step=0.5))
    unknown = NS(run="r3", point=_point(step=None))
    trend = NS(
        group="gemm", field="phaseCycles", points=[_point(low=None)], changes=[changed, unknown]
    )
    empty = NS(group="idle", field="phaseCycles", points=[], changes=[])
    text = render_history(_history([failure, plain], ["r1", "r2", "r3"], [empty, trend]))
    lines = text.splitlines()
    assert lines[0] == "## tileprof history: 3 runs, newest r3"
    assert lines[2] == "**Failed** (exit 1): 2"
    assert lines[4] == "- +10%: gemm phaseCycles 1,000 → 1,500 in run r3 (change point from run r2)"
    assert lines[5] == "- +10%: copy phaseCycles 10 → 20 in run r3"
    assert lines[-1] == "| gemm | phaseCycles | 10 | 9 | — | ok | r2 (+50.00%), r3 (—) |"
    assert "idle" not in text  # a trend without points has no row


def test_history_that_abstains_says_why_before_any_failure() -> None:
    failure = NS(threshold="+10%", group="g", field="f", baseline=1, value=2, run="r", change=None)
    text = render_history(_history([failure], [], []), abstained=["runs differ | in device"])
    lines = text.splitlines()
    assert lines[0] == "## tileprof history: 0 runs, newest —"
    assert lines[2:5] == ["**No verdict** (exit 3):", "", "- runs differ \\| in device"]
    assert "Failed" not in text


def _diff(confidence: float | None, rows: list[dict[str, Any]]) -> Any:
    frame = pl.DataFrame(rows)
    return NS(
        before=NS(label="base|line"), after=NS(label="new"), impact="phaseCycles",
        confidence=confidence, shown_rows=lambda: frame,
    )  # fmt: skip


ROW = {
    "group": "gemm",
    "status": "changed",
    "phaseCycles_before": 1000,
    "phaseCycles_after": 1100,
    "phaseCycles_relative": 0.1,
}


def test_diff_without_calls_shows_the_main_figure_before_and_after() -> None:
    text = render_diff(_diff(None, [ROW]), first_notes=["different devices"])
    assert text.splitlines() == [
        "## tileprof diff: base\\|line → new",
        "",
        "**different devices**",
        "",
        "**Passed**",
        "",
        "| group | status | phaseCycles before | after | Δ % |",
        "| :--- | :--- | ---: | ---: | ---: |",
        "| gemm | changed | 1,000 | 1,100 | +10.00% |",
    ]


def test_diff_with_calls_adds_the_per_call_change_interval_and_verdict() -> None:
    rows = [
        {**ROW, "perCall_low": 0.05, "perCall_high": 0.15, "perCall_change": 0.1,
         "verdict": "slower"},
        {**ROW, "group": "copy", "perCall_low": None, "perCall_high": 0.1,
         "perCall_change": None, "verdict": None},
    ]  # fmt: skip
    text = render_diff(_diff(0.95, rows), broken=["broken: gemm +10%"])
    lines = text.splitlines()
    assert lines[2:5] == ["**Failed** (exit 1): 1", "", "- gemm +10%"]
    assert lines[6] == (
        "| group | status | phaseCycles before | after | Δ % | per call Δ % | 95% interval"
        " | verdict |"
    )
    assert lines[7].endswith("| ---: | ---: | :--- |")
    assert lines[8] == (
        "| gemm | changed | 1,000 | 1,100 | +10.00% | +10.00% | +5.00% to +15.00% | slower |"
    )
    assert lines[9] == "| copy | changed | 1,000 | 1,100 | +10.00% | — | — | — |"


def test_text_titles_are_the_word_columns() -> None:
    assert {"flag", "verdict", "change points"} == markdown.TEXT_TITLES


def test_a_diff_that_abstained_says_why_instead_of_a_verdict() -> None:
    text = render_diff(_diff(None, [ROW]), broken=["broken: gemm +10%"], abstained=["no setup"])
    lines = text.splitlines()
    assert lines[2:5] == ["**No verdict** (exit 3):", "", "- no setup"]
    assert "Failed" not in text
