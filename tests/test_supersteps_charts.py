"""The report's Supersteps charts (``views.html.supersteps_charts``) draw what their captions
say: each chart's figure is kept as it is written to SVG and read back here (its bars, points,
image, limits, labels and legend), against the section's own frames and against the intervals
the dump was built from.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

import numpy as np
import polars as pl
import pytest
from matplotlib.colors import to_hex

from tests.samples import frame, sample
from tileprof.model.profile import Profile
from tileprof.views.html import charts as chart_helpers
from tileprof.views.html import supersteps_charts
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.supersteps_charts import (
    PARTS,
    ends_chart,
    heat_chart,
    split_chart,
    straggler_text,
)
from tileprof.views.html.supersteps_data import superstep_section
from tileprof.views.html.view import SuperstepSection

TILES = 8
STEPS = [
    [(0, 0, 100), (1, 0, 50), (4, 10, 110), (7, 0, 25)],
    [(2, 200, 240), (6, 200, 280)],
]
"""(tile, start, end) of each superstep's compute: the first is the longest (0 to 110), its
critical tile 4 ending 10 cycles after tile 0."""


def section_of(
    steps: list[list[tuple[int, int, int]]], tiles: int = TILES, epoch: int | None = 1
) -> SuperstepSection:
    samples = [sample(t, s, e - s, f"g{t}", epoch=epoch) for step in steps for t, s, e in step]
    profile = Profile(frame(samples), (), 1_500_000_000, tiles)
    section = superstep_section(profile, None, "tile-0-supersteps", table_from_frame)
    assert section is not None
    return section


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """Each chart's figure and SVG by its id, as ``to_svg`` is given and returns them."""
    kept: dict[str, Any] = {}
    real = chart_helpers.to_svg

    def keep(figure: Any, prefix: str, *, tight: bool = True) -> str:
        svg = real(figure, prefix, tight=tight)
        kept[prefix] = (figure, svg)
        return svg

    monkeypatch.setattr(supersteps_charts, "to_svg", keep)
    return kept


def drawn_chart(
    drawn: dict[str, Any], draw: Any, section: SuperstepSection, part: str, title: str
) -> tuple[Any, Any, str]:
    """(the chart ``draw`` makes of ``section``, its figure, its SVG), after checking the
    chart's id (``tile-0-supersteps-<part>``) and title."""
    chart = draw(section)
    assert chart is not None
    assert chart.id == f"tile-0-supersteps-{part}"
    assert chart.title == title
    figure, svg = drawn[chart.id]
    return chart, figure, svg


def legend_texts(axes: Any) -> list[str]:
    return [t.get_text() for t in axes.get_legend().get_texts()]


def assert_legend_outside_and_shown(figure: Any, axes: Any) -> None:
    """The legend sits right of the plot, frameless, and wholly inside the figure (the margin
    ``fit`` leaves for it is wide enough)."""
    legend = axes.get_legend()
    assert legend.get_frame_on() is False
    renderer = figure.canvas.get_renderer()
    box = legend.get_window_extent(renderer)
    assert box.x0 >= axes.bbox.x1 - 1e-6  # right of the plot, not over its points
    assert box.y1 <= axes.bbox.y1 + 1e-6  # its top at the plot's top
    assert box.x1 <= figure.bbox.x1 and box.y0 >= figure.bbox.y0


def svg_size_pt(svg: str) -> tuple[float, float]:
    match = re.search(r'<svg[^>]* width="([\d.]+)pt" height="([\d.]+)pt"', svg)
    assert match is not None
    return float(match.group(1)), float(match.group(2))


def test_the_ends_chart_marks_each_active_tile_and_the_critical_one(drawn: dict) -> None:
    chart, figure, svg = drawn_chart(
        drawn, ends_chart, section_of(STEPS), "ends", "Tile end times, longest superstep"
    )
    (axes,) = figure.axes
    active, critical = axes.collections
    # Every active tile of the longest superstep at its last end after the superstep's start.
    points = sorted(map(tuple, np.asarray(active.get_offsets()).tolist()))
    assert points == [(0.0, 100.0), (1.0, 50.0), (4.0, 110.0), (7.0, 25.0)]
    assert np.asarray(critical.get_offsets()).tolist() == [[4.0, 110.0]]
    assert legend_texts(axes) == ["active tile", "critical tile"]
    # The critical tile stands out: its own colour, a larger marker, named in that colour.
    red = to_hex(critical.get_facecolor()[0])
    assert red != to_hex(active.get_facecolor()[0])
    assert critical.get_sizes()[0] > active.get_sizes()[0]
    assert list(active.get_linewidths()) == [0]  # dense points stay apart
    # 1,472 tiles across the 7.2 in plot: a point of each at most 2 pt across
    assert active.get_sizes()[0] <= 4
    (note,) = axes.texts
    assert note.get_text() == "tile 4" and note.xy == (4, 110) and to_hex(note.get_color()) == red
    assert note.anncoords == "offset points"  # beside the marker, whatever the axes' scale
    # The text at 8 pt, the size fit's margins are estimated for (charts.CHAR_WIDTH_IN)
    assert axes.xaxis.label.get_size() == note.get_size() == 8
    (line,) = axes.lines  # the critical end across every tile, dashed
    assert list(line.get_ydata()) == [110, 110] and line.get_linestyle() == "--"
    assert to_hex(line.get_color()) not in (red, to_hex(active.get_facecolor()[0]))
    # Every tile of the device has its place; the critical end has headroom above it.
    assert axes.get_xlim() == (-0.5, TILES - 0.5)
    assert axes.get_ylim() == pytest.approx((0, 110 * 1.1))
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("tile", "last end − superstep start")
    assert_legend_outside_and_shown(figure, axes)
    assert chart.caption == (
        "Superstep 0 of epoch 1, the longest shown (110 cycles): critical tile 4 (g4), "
        "ending 10 cycles after the next tile to end."
    )
    width, height = svg_size_pt(svg)  # the margins fit set, not a tight box
    assert (width, height) == pytest.approx(tuple(figure.get_size_inches() * 72))


def test_the_ends_chart_of_a_dump_without_epochs_says_so() -> None:
    chart = ends_chart(section_of(STEPS, epoch=None))
    assert chart is not None
    assert chart.caption.startswith("Superstep 0 of epoch —, the longest shown (110 cycles)")


def test_the_ends_chart_of_a_one_cycle_superstep_keeps_its_headroom(drawn: dict) -> None:
    section = section_of([[(0, 0, 1)]])
    assert ends_chart(section) is not None
    (axes,) = drawn["tile-0-supersteps-ends"][0].axes
    assert axes.get_ylim() == pytest.approx((0, 1.1))


def test_no_ends_chart_without_a_longest_superstep_or_its_tiles() -> None:
    section = section_of(STEPS)
    assert ends_chart(section) is not None
    no_tiles = replace(section, ends=section.ends.clear())
    assert ends_chart(no_tiles) is None
    no_longest = replace(section, longest=None)
    assert ends_chart(no_longest) is None


def test_the_split_chart_stacks_the_four_parts_to_each_supersteps_length(drawn: dict) -> None:
    section = section_of(STEPS)
    chart, figure, svg = drawn_chart(
        drawn, split_chart, section, "split", "Where each superstep's time goes"
    )
    (axes,) = figure.axes
    assert legend_texts(axes) == [label for _, label, _ in PARTS]
    containers = axes.containers
    assert len(containers) == len(PARTS)
    split = section.split
    bottom = np.zeros(split.height)
    for (key, _, colour), bars in zip(PARTS, containers, strict=True):
        heights = [bar.get_height() for bar in bars]
        assert heights == pytest.approx(split.get_column(key).fill_null(0).to_list())
        assert [bar.get_y() for bar in bars] == pytest.approx(bottom.tolist())
        assert {to_hex(bar.get_facecolor()) for bar in bars} == {colour}
        assert {bar.get_linewidth() for bar in bars} == {0}  # no outline hides a thin part
        assert [bar.get_x() + bar.get_width() / 2 for bar in bars] == pytest.approx([0, 1])
        bottom += heights
    # The four parts add up to each superstep's length (docs/metrics.md, "Supersteps").
    assert bottom.tolist() == pytest.approx(split.get_column("cycles").to_list())
    assert len({colour for _, _, colour in PARTS}) == len(PARTS)
    assert [t.get_text() for t in axes.get_xticklabels()] == ["0", "1"]
    assert {t.get_rotation() for t in axes.get_xticklabels()} == {0}
    assert axes.get_xlim() == pytest.approx((-0.6, 1.6))
    low, high = axes.get_ylim()
    assert len([y for y in axes.get_yticks() if low <= y <= high]) <= 6  # at most 5 steps
    assert axes.get_xlabel() == "superstep"
    assert axes.get_ylabel() == "cycles (mean over active tiles)"
    assert_legend_outside_and_shown(figure, axes)
    assert chart.caption == (
        "Per superstep, the mean over its active tiles of late start, busy, internal gaps and "
        "sync wait; the four add up to the superstep's length."
    )
    assert svg_size_pt(svg) == pytest.approx(tuple(figure.get_size_inches() * 72))


def test_many_supersteps_are_labelled_turned_and_thinned(drawn: dict) -> None:
    """Over 12 supersteps the labels turn upright; over 40, every ⌊n / 40⌋-th is written."""
    steps = [[(0, 100 * i, 100 * i + 10 + i), (1, 100 * i, 100 * i + 5)] for i in range(90)]
    section = section_of(steps, tiles=2)
    assert split_chart(section) is not None
    (axes,) = drawn["tile-0-supersteps-split"][0].axes
    labels = axes.get_xticklabels()
    assert [t.get_text() for t in labels] == [str(i) for i in range(0, 90, 2)]
    assert {t.get_rotation() for t in labels} == {90}
    assert axes.get_xlim() == pytest.approx((-0.6, 89.6))
    # The heat map writes at most 30 labels (every ⌈n / 30⌉-th), turned as well, and leaves
    # room under its plot for them.
    assert heat_chart(section) is not None
    heat_figure = drawn["tile-0-supersteps-heat"][0]
    heat = heat_figure.axes[0].get_xticklabels()
    assert [t.get_text() for t in heat] == [str(i) for i in range(0, 90, 3)]
    assert {t.get_rotation() for t in heat} == {90}
    assert heat_bottom_inches(heat_figure) > 0.45


def heat_bottom_inches(figure: Any) -> float:
    return float(figure.axes[0].get_position().y0 * figure.get_figheight())


@pytest.mark.parametrize(("count", "turned"), [(12, False), (13, True)])
def test_the_heat_maps_labels_turn_past_twelve_supersteps(
    drawn: dict, count: int, turned: bool
) -> None:
    steps = [[(0, 100 * i, 100 * i + 10 + i), (1, 100 * i, 100 * i + 5)] for i in range(count)]
    assert heat_chart(section_of(steps, tiles=2)) is not None
    figure = drawn["tile-0-supersteps-heat"][0]
    labels = figure.axes[0].get_xticklabels()
    assert [t.get_text() for t in labels] == [str(i) for i in range(count)]
    assert {t.get_rotation() for t in labels} == {90 if turned else 0}
    assert (heat_bottom_inches(figure) > 0.45) is turned


def test_the_split_caption_carries_the_sections_note(drawn: dict) -> None:
    section = section_of(STEPS)
    noted = replace(section, note="The 2 longest of 9 supersteps.")
    chart = split_chart(noted)
    assert chart is not None and chart.caption.endswith("length. The 2 longest of 9 supersteps.")
    empty = replace(section, split=section.split.clear())
    assert split_chart(empty) is None


def test_the_heat_chart_shows_the_sections_busy_shares(drawn: dict) -> None:
    section = section_of(STEPS)
    chart, figure, svg = drawn_chart(
        drawn, heat_chart, section, "heat", "Busy share by tile and superstep"
    )
    axes = figure.axes[0]
    (image,) = axes.images
    np.testing.assert_array_equal(image.get_array(), section.heat)
    assert section.heat[6, 1] == 1.0 and section.heat[3, 0] == 0.0  # busy throughout, idle
    assert image.get_clim() == (0.0, 1.0)  # a share: the scale is fixed, not stretched
    assert image.origin == "lower" and image.get_interpolation() == "nearest"
    assert image.get_cmap().name == "Blues"
    # One row per tile, tile 0 at the bottom; one column per superstep.
    assert image.get_extent() == [-0.5, 1.5, -0.5, TILES - 0.5]
    assert axes.get_ylim() == (-0.5, TILES - 0.5)
    assert [t.get_text() for t in axes.get_xticklabels()] == ["0", "1"]
    assert (axes.get_xlabel(), axes.get_ylabel()) == ("superstep", "tile")
    (bar,) = [a for a in figure.axes if a is not axes]
    assert bar.get_ylabel() == "busy / cycles"
    (scale,) = [c for c in bar.collections if type(c).__name__ == "QuadMesh"]
    assert scale.get_cmap().name == "Blues"  # the bar is the map's own scale: its colours,
    assert scale.get_clim() == (0.0, 1.0)  # 0 to 1
    assert chart.caption == (
        "Per superstep and tile, the share of the superstep the tile computed (busy / cycles; "
        "idle 0), one row per tile, 8 tiles."
    )
    assert svg_size_pt(svg) == pytest.approx(tuple(figure.get_size_inches() * 72))


def test_the_heat_chart_of_binned_tiles_says_how_many_a_row(drawn: dict) -> None:
    steps = [[(t, 0, 10 + t) for t in range(0, 200, 3)]]
    section = section_of(steps, tiles=200)
    chart = heat_chart(section)
    assert chart is not None
    assert section.heat_bin == 3 and section.heat.shape == (67, 1)
    assert "rows of 3 consecutive tiles (their mean), 200 tiles." in chart.caption
    image = drawn["tile-0-supersteps-heat"][0].axes[0].images[0]
    assert image.get_extent() == [-0.5, 0.5, -0.5, 67 * 3 - 0.5]
    assert section.heat.min() > 0  # no idle row, and still a scale from 0 to 1
    assert image.get_clim() == (0.0, 1.0)
    assert drawn["tile-0-supersteps-heat"][0].axes[0].get_ylim() == (-0.5, 199.5)


def test_no_heat_chart_without_supersteps() -> None:
    section = section_of(STEPS)
    assert heat_chart(replace(section, heat=np.zeros((0, 0)))) is None
    assert heat_chart(replace(section, split=section.split.clear())) is None


def test_the_sections_charts_line_up(drawn: dict) -> None:
    """Each chart's plot area starts at the same left edge, and the two bar and point charts
    are as wide as each other, so a section's supersteps sit under each other on the page
    (the heat map gives the right of its plot to its colour bar)."""
    section = section_of(STEPS)
    for draw in (split_chart, heat_chart, ends_chart):
        assert draw(section) is not None
    lefts, widths = {}, {}
    for id, (figure, _) in drawn.items():
        box = figure.axes[0].get_position()
        lefts[id] = round(box.x0 * figure.get_figwidth(), 6)
        widths[id] = round(box.width * figure.get_figwidth(), 6)
    assert len(set(lefts.values())) == 1
    assert widths["tile-0-supersteps-split"] == widths["tile-0-supersteps-ends"] == 7.2
    assert widths["tile-0-supersteps-heat"] >= 0.93 * 7.2  # a slim colour bar beside it


def test_the_straggler_is_said_in_words() -> None:
    assert straggler_text(None) == "the only active tile."
    assert straggler_text(0) == "ending with another tile (a tie: no single straggler)."
    assert straggler_text(1234) == "ending 1,234 cycles after the next tile to end."


def test_the_report_draws_each_sections_three_charts() -> None:
    from tileprof.views.html import build_report

    report = supersteps_charts.with_superstep_charts(
        build_report([Profile(frame([sample(0, 0, 10)]), (), 1_500_000_000, 2)])
    )
    (tile,) = report.tiles
    assert tile.supersteps is not None
    assert [c.id for c in tile.supersteps.charts] == [
        "tile-0-supersteps-split",
        "tile-0-supersteps-heat",
        "tile-0-supersteps-ends",
    ]
    assert all(c.svg.startswith("<svg") for c in tile.supersteps.charts)
    assert isinstance(tile.supersteps.split, pl.DataFrame)
