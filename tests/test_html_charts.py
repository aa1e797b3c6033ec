"""The report's charts drawn from small hand-built inputs (``views.html.charts``): what each
mark says (its colour, style and legend label), read from the matplotlib objects, not the
SVG's text."""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from tileprof.views.html.charts import _draw_roofs, _group_labels, _has_energy
from tileprof.views.html.view import RooflinePlot

LONG = "a" * 20 + "b" * 30


def _roofs() -> RooflinePlot:
    roofs = pl.DataFrame(
        {
            "target": ["H100 SXM", "H100 SXM", LONG],
            "roof": ["fp16", "fp32", "fp16"],
            "peak": [989.0, 67.0, 100.0],
            "bandwidth": [3350.0, 3350.0, 2000.0],
        }
    )
    return RooflinePlot("roofline", "roofline", "Roofline", pl.DataFrame(), roofs=roofs)


def test_each_roof_has_its_target_s_colour_its_own_style_and_a_label_with_units() -> None:
    """One target's roofs share its colour and differ in style (``ROOF_STYLES`` in order); a
    roof is min(peak, intensity × bandwidth / 1000); the label names the target (its middle
    elided at 36 characters), the roof, the peak and the bandwidth with its decimal unit."""
    axes = Figure().subplots()
    x = np.array([0.1, 10.0, 1000.0])
    _draw_roofs(axes, _roofs(), {"H100 SXM": "#111111", LONG: "#222222"}, x)
    lines = axes.get_lines()
    assert [line.get_gid() for line in lines] == ["roof_0", "roof_1", "roof_2"]
    assert [line.get_color() for line in lines] == ["#111111", "#111111", "#222222"]
    assert [line.get_linestyle() for line in lines] == ["-", "--", "-"]
    assert [line.get_label() for line in lines] == [
        "H100 SXM fp16: 989 TFLOP/s, 3,350 GB/s (10⁹ B/s)",
        "H100 SXM fp32: 67 TFLOP/s, 3,350 GB/s (10⁹ B/s)",
        "aaaaaaaaaaaaaaaaaa…bbbbbbbbbbbbbbbbb fp16: 100 TFLOP/s, 2,000 GB/s (10⁹ B/s)",
    ]
    assert np.allclose(lines[0].get_ydata(), [0.335, 33.5, 989.0])
    assert np.allclose(lines[2].get_ydata(), [0.2, 20.0, 100.0])


def test_group_labels_show_an_empty_name_as_a_dash_and_number_twins() -> None:
    assert _group_labels(["", "x", "x", "y"]) == ["—", "x #1", "x #2", "y"]


def test_energy_is_drawn_only_where_a_run_measured_some() -> None:
    """A GEMM run's energy: a panel only when one run has a nonzero, non-missing figure."""
    assert _has_energy(pl.DataFrame({"energy_j": [None, 0.0, 2.5]}))
    assert not _has_energy(pl.DataFrame({"energy_j": [0.0, None, float("nan")]}))
    assert not _has_energy(pl.DataFrame({"energy_j": []}, schema={"energy_j": pl.Float64}))
    assert not _has_energy(pl.DataFrame({"time_us": [1.0]}))


def test_group_rows_are_labelled_first_on_top_with_a_frameless_legend() -> None:
    """The group charts' rows: names down the side, the first on top, the x axis titled, the
    legend without a frame (a frame would box off the bars it sits over)."""
    from tileprof.views.html.charts import _group_rows, _label_group_rows

    figure, axes, y = _group_rows(3)
    axes.barh(y, [3.0, 2.0, 1.0], label="useful")
    _label_group_rows(figure, axes, y, ("gemm", "", "gemm"), "cycles", clock_hz=1.5e9)
    assert [t.get_text() for t in axes.get_yticklabels()] == ["gemm #1", "—", "gemm #2"]
    assert axes.yaxis_inverted() and axes.get_xlabel() == "cycles"
    legend = axes.get_legend()
    assert legend is not None and not legend.get_frame_on()
    assert [t.get_text() for t in legend.get_texts()] == ["useful"]


def test_a_plot_with_no_positive_time_or_no_roof_is_a_line_not_an_empty_chart() -> None:
    """Zero and missing times draw bars of no length: the page says so instead; a roofline
    without a roof names its targets in the order the table first shows them."""
    from tileprof.views.html.charts import nothing_to_draw
    from tileprof.views.html.view import Plot

    def gemm(times: list[float | None]) -> Plot:
        return Plot(
            "gemm", "g", "GEMM", pl.DataFrame({"time_us": times}, schema={"time_us": pl.Float64})
        )

    no_time = "No chart: no run here has a time (time_us); the table lists them."
    assert nothing_to_draw(gemm([0.0, None, float("nan")])) == no_time
    assert nothing_to_draw(gemm([0.0, 2.0])) is None
    targets = [f"GPU {n:02d}" for n in range(30, 0, -1)]
    points = pl.DataFrame({"target": [*targets, targets[0]]})
    line = nothing_to_draw(RooflinePlot("roofline", "r", "Roofline", points, roofs=pl.DataFrame()))
    assert line == (
        f"No chart: no spec gives both a peak and a memory bandwidth for {', '.join(targets)}, "
        "so there is no roof to place the points under; the table lists them."
    )
    assert nothing_to_draw(_roofs()) is None


def test_the_intensity_axis_runs_a_decade_beyond_the_points_and_ridges() -> None:
    """From a decade below the lowest of the points and ridge points (peak × 1000 /
    bandwidth) to a decade above the highest, each at a power of ten."""
    from tileprof.views.html.charts import _roof_span

    plot = _roofs()
    points = pl.DataFrame({"arithmetic_intensity": [0.5, 20.0]})
    with_points = RooflinePlot("roofline", "r", "Roofline", points, roofs=plot.roofs)
    assert _roof_span(with_points) == (0.01, 10_000.0)  # ridges 295, 20 and 50
    high = pl.DataFrame({"arithmetic_intensity": [3.0, 4000.0]})
    assert _roof_span(RooflinePlot("roofline", "r", "Roofline", high, roofs=plot.roofs)) == (
        0.1,
        100_000.0,
    )


def test_the_active_tiles_chart_names_each_group_in_its_legend(
    figures: dict[str, Figure],
) -> None:
    from tests.report_samples import generated_profile
    from tileprof.views.html import charts
    from tileprof.views.html.data import tile_section

    section = tile_section(generated_profile(samples=2_000, tiles=32))
    assert section.active is not None
    charts.active_chart(section)
    legend = figures["tile-0-active"].axes[0].get_legend()
    assert legend is not None
    texts = [t.get_text() for t in legend.get_texts()]
    assert texts == [charts._short(name) for name in section.active.legend] and len(texts) >= 3


def test_balance_profile_past_4096_tiles_keeps_the_largest_of_each_run() -> None:
    """10,000 tiles: runs of ⌈10,000 / 4,096⌉ = 3 tiles, 3,334 points at each run's first
    tile; the last run is one tile (padded, never read past the end)."""
    from tileprof.views.html.charts import balance_profile

    busy = np.arange(10_000, dtype=np.float64) % 7
    tiles, drawn = balance_profile(busy)
    assert len(tiles) == len(drawn) == 3_334
    assert tiles[:3].tolist() == [0, 3, 6] and tiles[-1] == 9_999
    assert drawn[:3].tolist() == [2.0, 5.0, 6.0] and drawn[-1] == busy[-1]


def test_the_balance_axis_starts_at_0_unless_every_tile_is_busy_past_half_the_most() -> None:
    from tileprof.views.html.charts import balance_floor

    assert balance_floor(np.array([400.0, 1000.0])) == 0  # less than half: from 0
    assert balance_floor(np.array([500.0, 1000.0])) == 400  # half: a round value below
    assert balance_floor(np.array([1000.0, 1000.0])) == 0  # nothing to show apart
    assert balance_floor(np.array([], dtype=np.float64)) == 0


def test_a_name_the_font_lacks_draws_without_a_warning() -> None:
    """A CJK group name is drawn as boxes; matplotlib's missing-glyph warning, which would
    print the raw character on the terminal, is silenced for the chart alone."""
    import warnings

    from tileprof.views.html.charts import subplots, to_svg

    figure, axes = subplots()
    axes.set_title("行列積")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert to_svg(figure, "cjk").startswith("<svg")


def test_unlike_work_without_a_peak_says_why_there_is_no_chart() -> None:
    from tileprof.views.html.charts import nothing_to_draw
    from tileprof.views.html.view import Plot

    frame = pl.DataFrame({"target": ["H100", None, "H100"], "peak_fraction": [None, 0.0, None]})
    assert nothing_to_draw(Plot("linked_efficiency", "l", "unlike", frame)) == (
        "No chart: no spec gives a peak for H100 at this work, so there is no fraction of "
        "peak to compare; the table lists the runs."
    )
    drawn = frame.with_columns(peak_fraction=pl.Series([0.4, None, None]))
    assert nothing_to_draw(Plot("linked_efficiency", "l", "unlike", drawn)) is None
