"""The geometry and words of ``history --format html``'s panels (``views.history_html``), from
trends built by hand: each point's place in the plot, the band's outline, the markers' hover
titles, the value and run axes, the change points' lines and the page's flag and failure rows.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from tileprof.analyses.change_points import ChangePoint
from tileprof.model.store.history import Change, Failure, History, Point, Trend
from tileprof.model.store.tables import RunRecord
from tileprof.views.history_html import (
    PLOT_BOTTOM,
    PLOT_LEFT,
    PLOT_RIGHT,
    PLOT_TOP,
    AxisLabel,
    Marker,
    build_page,
    panel,
)

BANDED = Trend(
    "gemm",
    "phaseCycles",
    (
        Point("a", 10.0),
        Point("b", 20.0, median=20.0, low=12.0, high=28.0),
        Point("c", 30.0, median=20.0, low=14.0, high=26.0, flag="rise"),
    ),
)
"""Three runs from 10 to 30 cycles, the last above its band: the plot spans 10 to 30."""


def test_points_are_spread_across_the_plot_and_scaled_to_the_values() -> None:
    drawn = panel(BANDED)
    assert (PLOT_LEFT, PLOT_RIGHT, PLOT_TOP, PLOT_BOTTOM) == (58.0, 350.0, 8.0, 62.0)
    # the first run at the left edge, the last at the right; the lowest value at the bottom
    assert drawn.line == "58.0,62.0 204.0,35.0 350.0,8.0"
    assert drawn.points == (
        Marker(58.0, 62.0, "a: 10"),
        Marker(204.0, 35.0, "b: 20"),
        Marker(350.0, 8.0, "c: 30"),
    )
    assert drawn.flags == (Marker(350.0, 8.0, "c: rise to 30"),)
    assert (drawn.newest, drawn.minimum, drawn.maximum) == ("30", "10", "30")
    assert (drawn.axis_low, drawn.axis_high) == ("10", "30")
    assert drawn.field == "phaseCycles"


def test_the_band_is_outlined_along_its_top_and_back_along_its_bottom() -> None:
    # runs b and c have a band: 12 to 28 and 14 to 26 of the plot's 10 to 30
    assert panel(BANDED).band == "204.0,13.4 350.0,18.8 350.0,51.2 204.0,56.6"


def test_the_band_widens_the_value_axis() -> None:
    trend = Trend("gemm", "phaseCycles", (Point("a", 20.0), Point("b", 20.0, low=0.0, high=40.0)))
    drawn = panel(trend)
    assert (drawn.axis_low, drawn.axis_high) == ("0", "40")
    assert drawn.line == "58.0,35.0 350.0,35.0"
    assert (drawn.minimum, drawn.maximum) == ("20", "20")  # of the values, not the band


def test_a_flat_series_sits_mid_plot_between_one_below_and_one_above() -> None:
    trend = Trend("gemm", "phaseCycles", (Point("a", 5.0), Point("b", 5.0), Point("c", 5.0)))
    drawn = panel(trend)
    assert drawn.line == "58.0,35.0 204.0,35.0 350.0,35.0"
    assert (drawn.axis_low, drawn.axis_high) == ("4", "6")


def test_one_run_stands_at_the_left_edge() -> None:
    drawn = panel(Trend("gemm", "phaseCycles", (Point("only", 7.0),)), {"only": "2026-12-01"})
    assert drawn.line == "58.0,35.0"
    assert drawn.runs == (AxisLabel(58.0, "only", "2026-12-01", "start"),)
    assert (drawn.axis_low, drawn.axis_high) == ("6", "8")


def test_a_field_never_measured_draws_nothing() -> None:
    trend = Trend("gemm", "usefulUtilization", (Point("a", None), Point("b", None)))
    drawn = panel(trend)
    assert (drawn.line, drawn.band, drawn.points, drawn.flags) == ("", "", (), ())
    assert (drawn.newest, drawn.minimum, drawn.maximum) == ("—", "—", "—")
    assert (drawn.axis_low, drawn.axis_high) == ("0.00%", "100.00%")  # 0 to 1, a share


def test_a_share_is_written_as_a_percentage_everywhere() -> None:
    points = (Point("a", 0.5), Point("b", 0.4, low=0.45, high=0.55, flag="drop"))
    drawn = panel(Trend("gemm", "usefulUtilization", points))
    assert (drawn.newest, drawn.minimum, drawn.maximum) == ("40.00%", "40.00%", "50.00%")
    assert (drawn.axis_low, drawn.axis_high) == ("40.00%", "55.00%")
    assert [m.title for m in drawn.points] == ["a: 50.00%", "b: 40.00%"]
    assert [m.title for m in drawn.flags] == ["b: drop to 40.00%"]


def test_a_missing_value_breaks_no_other_points_place() -> None:
    trend = Trend("gemm", "phaseCycles", (Point("a", 10.0), Point("b", None), Point("c", 30.0)))
    drawn = panel(trend)
    assert drawn.line == "58.0,62.0 350.0,8.0"
    assert [m.title for m in drawn.points] == ["a: 10", "c: 30"]
    assert drawn.newest == "30"


def test_the_run_axis_names_the_first_and_last_runs_and_the_middle_from_five() -> None:
    dates = {"a": "2026-11-01", "c": "2026-11-03"}
    assert panel(BANDED, dates).runs == (
        AxisLabel(58.0, "a", "2026-11-01", "start"),
        AxisLabel(350.0, "c", "2026-11-03", "end"),
    )
    runs = [f"r{i}" for i in range(5)]
    five = Trend("gemm", "phaseCycles", tuple(Point(r, float(i)) for i, r in enumerate(runs)))
    assert panel(five).runs == (
        AxisLabel(58.0, "r0", "", "start"),
        AxisLabel(204.0, "r2", "", "middle"),
        AxisLabel(350.0, "r4", "", "end"),
    )
    four = Trend("gemm", "phaseCycles", five.points[:4])
    assert [label.run for label in panel(four).runs] == ["r0", "r3"]
    two = Trend("gemm", "phaseCycles", five.points[:2])
    assert [(label.x, label.anchor) for label in panel(two).runs] == [
        (58.0, "start"),
        (350.0, "end"),
    ]


def test_places_are_rounded_to_a_hundredth() -> None:
    """Eight runs are 292 / 7 = 41.714… apart: places keep two decimals, no more, no fewer."""
    points = tuple(Point(f"r{i}", float(i), flag="rise" if i == 1 else None) for i in range(8))
    trend = Trend("gemm", "phaseCycles", points, changes=(change("r1", 0.0, 5.0),))
    drawn = panel(trend)
    assert [label.x for label in drawn.runs] == [58.0, 224.86, 350.0]
    assert drawn.line.split()[:2] == ["58.0,62.0", "99.71,54.29"]
    assert [m.x for m in drawn.points][:3] == [58.0, 99.71, 141.43]
    assert drawn.changes[0].x == drawn.flags[0].x == 99.71


def test_a_long_run_id_is_shortened_on_the_axis_but_whole_in_the_hover_title() -> None:
    run = "nightly-2026-12-01-commit-0123456789abcdef"
    drawn = panel(Trend("gemm", "phaseCycles", (Point(run, 1.0),)))
    assert drawn.runs[0].run == "nightly-202…6789abcdef" and len(drawn.runs[0].run) == 22
    assert drawn.points[0].title == f"{run}: 1"


def change(run: str, before: float, after: float, p_value: float = 0.01) -> Change:
    return Change(run, ChangePoint(index=2, before=before, after=after, p_value=p_value))


def test_a_change_point_is_a_line_at_the_first_run_of_its_new_level() -> None:
    trend = Trend("gemm", "phaseCycles", BANDED.points, changes=(change("b", 10.0, 25.0),))
    (line,) = panel(trend).changes
    assert line == Marker(
        204.0, PLOT_TOP, "change from run b: 10 → 25 (+150.00%), confidence 99.0%"
    )


def test_a_change_from_zero_has_no_step_and_a_share_is_written_as_one() -> None:
    from_zero = Trend("gemm", "phaseCycles", BANDED.points, changes=(change("c", 0.0, 30.0),))
    (line,) = panel(from_zero).changes
    assert line.title == "change from run c: 0 → 30, confidence 99.0%"
    points = (Point("a", 0.5), Point("b", 0.5), Point("c", 0.4))
    share = Trend("gemm", "usefulUtilization", points, changes=(change("c", 0.5, 0.4, 0.2),))
    (line,) = panel(share).changes
    assert line == Marker(
        350.0, PLOT_TOP, "change from run c: 50.00% → 40.00% (-20.00%), confidence 80.0%"
    )


@pytest.fixture
def far_east(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The machine's own time zone nine hours east of UTC, as a CI runner's may be."""
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def record(run: str, day: int, labels: dict[str, str] | None = None) -> RunRecord:
    added = datetime(2026, 11, day, 1, 0, tzinfo=timezone(timedelta(hours=2)))  # day − 1 in UTC
    return RunRecord(
        run, labels or {}, f"{run}.json", "0" * 64, "json", 1_500_000_000, 4, 8, 100, "1", added
    )


@pytest.mark.usefixtures("far_east")
def test_the_page_groups_panels_counts_flags_and_words_failures() -> None:
    other = Trend("attention", "phaseCycles", (Point("a", 1.0), Point("b", 2.0), Point("c", 3.0)))
    flagged_too = Trend(
        "gemm",
        "usefulUtilization",
        (Point("a", 0.5), Point("c", 0.2, low=0.4, high=0.6, flag="drop")),
    )
    failure = Failure(
        "gemm phaseCycles may not rise by more than 5%", "c", "gemm", "phaseCycles", 20.0, 30.0
    )
    share = Failure("any drop", "c", "gemm", "usefulUtilization", 0.5, 0.2)
    runs = (record("a", 2, {"branch": "main", "arch": "x"}), record("b", 3), record("c", 4))
    history = History(
        runs,
        ("phaseCycles", "usefulUtilization"),
        (BANDED, other, flagged_too),
        failures=(failure, share),
    )
    page = build_page(history, "2026-12-06T00:00:00Z", "9.9")
    assert page.title == "tileprof history: 3 runs"
    assert (page.generated_at, page.version) == ("2026-12-06T00:00:00Z", "9.9")
    assert page.runs == (("a", "arch=x branch=main"), ("b", ""), ("c", ""))
    assert [(g.id, g.name, g.flagged) for g in page.groups] == [
        ("group-0", "gemm", 2),
        ("group-1", "attention", 0),
    ]
    assert [p.field for p in page.groups[0].panels] == ["phaseCycles", "usefulUtilization"]
    # the dates under each plot are the days the runs were added, in UTC, not the machine's
    # time zone
    assert [label.date for label in page.groups[0].panels[0].runs] == ["2026-11-01", "2026-11-03"]
    rows = [
        (f.run, f.labels, f.group, f.field, f.value, f.value_sort, f.band, f.direction)
        for f in page.flags
    ]
    assert rows == [
        ("c", "—", "gemm", "phaseCycles", "30", 30.0, "14 … 26", "rise"),
        ("c", "—", "gemm", "usefulUtilization", "20.00%", 0.2, "40.00% … 60.00%", "drop"),
    ]
    assert page.failures == (
        "gemm phaseCycles may not rise by more than 5%: gemm phaseCycles 20 → 30 in run c",
        "any drop: gemm usefulUtilization 50.00% → 20.00% in run c",
    )
    assert page.fields == ("phaseCycles", "usefulUtilization")


def test_the_page_says_when_it_was_generated_and_by_which_version() -> None:
    from tileprof._version import __version__
    from tileprof.views.history_html import render

    history = History((record("a", 2),), ("phaseCycles",), (Trend("g", "phaseCycles", ()),))
    page = render(history, "2026-12-06T10:00:00Z", abstained=("no band yet",))
    assert "<dt>Generated</dt><dd>2026-12-06T10:00:00Z</dd>" in page
    assert f"<dt>tileprof</dt><dd>{__version__}</dd>" in page
    assert "<title>tileprof history: 1 run</title>" in page
    assert '<p class="abstained" role="alert"><strong>ABSTAINED</strong> no band yet</p>' in page
