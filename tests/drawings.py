"""A matplotlib figure as plain data: what the report's charts set on it, for the recorded
drawings of ``tests/test_chart_drawings.py``.

Each mark is read from its artist (colour, style, width, size, label, gid, data), each axes
from what the charts set (position, labels, scales, limits, fixed ticks, locators, what its
formatters print, legend), so a change to any of them shows as a difference in one named
field. What matplotlib chooses on its own (automatic tick positions, the SVG writer's output)
is left out, so the description stays the same across matplotlib releases.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from matplotlib.axes import Axes
from matplotlib.collections import Collection, LineCollection, PathCollection, PolyCollection
from matplotlib.colors import to_hex
from matplotlib.figure import Figure
from matplotlib.image import AxesImage
from matplotlib.legend import Legend
from matplotlib.lines import Line2D
from matplotlib.patches import Rectangle
from matplotlib.text import Annotation, Text
from matplotlib.ticker import FixedLocator, Formatter, Locator, MaxNLocator

SAMPLE_TICKS = (0.0, 0.05, 1.0, 1500.0, 2.5e6)
"""Values each axis formatter prints, so a change of formatter shows."""


def rounded(value: Any) -> Any:
    """Numbers at 6 significant digits (nested lists too), ``None`` for NaN, so a recorded
    drawing compares exactly and stays JSON."""
    if isinstance(value, np.ndarray | list | tuple):
        return [rounded(v) for v in np.asarray(value, dtype=object).tolist()]
    if isinstance(value, bool | str) or value is None:
        return value
    number = float(value)
    if number != number:
        return None
    if number in (float("inf"), float("-inf")):
        return str(number)
    return float(f"{number:.6g}")


def colour(value: Any) -> str:
    return to_hex(value, keep_alpha=True)


def colours(values: Any) -> list[str]:
    return [colour(v) for v in np.atleast_2d(values)] if len(values) else []


def describe(figure: Figure) -> dict[str, Any]:
    """The figure's size, margins and each axes' description."""
    params = figure.subplotpars
    margins = (params.left, params.right, params.bottom, params.top, params.wspace)
    return {
        "size": rounded(figure.get_size_inches()),
        "margins": rounded(margins),
        "axes": [_axes(axes) for axes in figure.axes],
    }


def _axes(axes: Axes) -> dict[str, Any]:
    legend = axes.get_legend()
    return {
        "position": rounded(axes.get_position().bounds),
        "title": axes.get_title(),
        "x": _axis(axes, "x"),
        "y": _axis(axes, "y"),
        "grid": [line.get_visible() for line in axes.get_xgridlines()[:1]],
        "lines": [_line(line) for line in axes.get_lines()],
        "patches": [_patch(p) for p in axes.patches if isinstance(p, Rectangle)],
        "collections": [_collection(c) for c in axes.collections],
        "images": [_image(image) for image in axes.get_images()],
        "texts": [_text(text) for text in axes.texts],
        "legend": None if legend is None else _legend(legend),
    }


def _axis(axes: Axes, which: str) -> dict[str, Any]:
    axis = axes.xaxis if which == "x" else axes.yaxis
    limits = axes.get_xlim() if which == "x" else axes.get_ylim()
    return {
        "label": axis.get_label().get_text(),
        "scale": axis.get_scale(),
        "limits": rounded(limits),
        "locator": _locator(axis.get_major_locator()),
        "ticks": [t.get_text() for t in axis.get_majorticklabels()]
        if isinstance(axis.get_major_locator(), FixedLocator)
        else None,
        "prints": _prints(axis.get_major_formatter()),
        "minor_prints": _prints(axis.get_minor_formatter()),
    }


def _locator(locator: Locator) -> Any:
    # neither locator has a public getter for what it was given
    if isinstance(locator, FixedLocator):
        return ["fixed", rounded(vars(locator)["locs"])]
    if isinstance(locator, MaxNLocator):
        return ["max_n", vars(locator)["_nbins"]]
    return type(locator).__name__


def _prints(formatter: Formatter) -> list[str] | str:
    if type(formatter).__name__ in ("NullFormatter", "FuncFormatter"):
        return [formatter(v, i) for i, v in enumerate(SAMPLE_TICKS)]
    return type(formatter).__name__


def _line(line: Line2D) -> dict[str, Any]:
    return {
        "gid": line.get_gid(),
        "label": _label(line.get_label()),
        "colour": colour(line.get_color()),
        "style": line.get_linestyle(),
        "width": rounded(line.get_linewidth()),
        "marker": str(line.get_marker()),
        "marker_size": rounded(line.get_markersize()),
        "marker_edge": rounded(line.get_markeredgewidth()),
        "x": _series(line.get_xdata()),
        "y": _series(line.get_ydata()),
    }


def _series(values: Any) -> Any:
    """A line's data: every value, or for a long one (a roof's 256 points) its length, ends
    and sum."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= 32:
        return rounded(values)
    return {"n": values.size, "ends": rounded(values[[0, 1, -2, -1]]), "sum": rounded(values.sum())}


def _patch(patch: Rectangle) -> dict[str, Any]:
    return {
        "xywh": rounded((patch.get_x(), patch.get_y(), patch.get_width(), patch.get_height())),
        "face": colour(patch.get_facecolor()),
        "edge": colour(patch.get_edgecolor()),
        "width": rounded(patch.get_linewidth()),
        "label": _label(patch.get_label()),
    }


def _collection(found: Collection) -> dict[str, Any]:
    described: dict[str, Any] = {
        "kind": _kind(found),
        "gid": found.get_gid(),
        "label": _label(found.get_label()),
        "faces": colours(found.get_facecolor()),
        "edges": colours(found.get_edgecolor()),
        "widths": rounded(found.get_linewidth()),
        "zorder": found.get_zorder(),
    }
    if isinstance(found, LineCollection):
        described["segments"] = rounded([s.tolist() for s in found.get_segments()])
    elif isinstance(found, PathCollection):
        described["offsets"] = rounded(np.asarray(found.get_offsets()))
        described["sizes"] = rounded(np.asarray(found.get_sizes()))
        described["marker_vertices"] = len(np.asarray(found.get_paths()[0].vertices))
    elif isinstance(found, PolyCollection):
        boxes = [path.get_extents().bounds for path in found.get_paths()]
        described["extents"] = rounded(boxes)
    return described


def _kind(found: Collection) -> str:
    """What a collection draws, by the class every matplotlib release has for it."""
    for kind in (LineCollection, PathCollection, PolyCollection):
        if isinstance(found, kind):
            return kind.__name__
    return type(found).__name__


def _label(label: Any) -> Any:
    """A label the legend shows; matplotlib's own names for the rest ("_child3") are not
    ours, and differ between releases."""
    return None if isinstance(label, str) and label.startswith("_") else label


def _image(image: AxesImage) -> dict[str, Any]:
    array = np.asarray(image.get_array())
    cmap = image.get_cmap()
    return {
        "shape": list(array.shape),
        "values": rounded(np.unique(array)),
        "colours": [colour(cmap(i)) for i in range(cmap.N)],
        "limits": rounded(image.get_clim()),
        "extent": rounded(image.get_extent()),
        "aspect": image.axes.get_aspect(),
        "interpolation": image.get_interpolation(),
        "origin": image.origin,
    }


def _text(text: Text) -> dict[str, Any]:
    described: dict[str, Any] = {
        "text": text.get_text(),
        "size": rounded(text.get_fontsize()),
        "colour": colour(text.get_color()),
        "va": text.get_verticalalignment(),
    }
    if isinstance(text, Annotation):
        described["xy"] = rounded(text.xy)
        described["xycoords"] = str(text.xycoords)
        described["offset"] = rounded(text.xyann)
        described["textcoords"] = str(text.anncoords)
    box = text.get_bbox_patch()
    if box is not None:
        described["box"] = [
            colour(box.get_facecolor()),
            colour(box.get_edgecolor()),
            rounded(box.get_linewidth()),
            type(box.get_boxstyle()).__name__,
        ]
    return described


def _legend(legend: Legend) -> dict[str, Any]:
    axes = legend.axes  # the charts' legends are all of one axes
    anchor = legend.get_bbox_to_anchor().transformed(axes.transAxes.inverted())
    return {
        "texts": [t.get_text() for t in legend.get_texts()],
        "loc": vars(legend)["_loc_real"],  # the placement code; no public getter
        "anchor": rounded(anchor.bounds),
        "frame": legend.get_frame_on(),
        "size": rounded(legend.get_texts()[0].get_fontsize()) if legend.get_texts() else None,
        "handles": [_handle(h) for h in legend.legend_handles],
    }


def _handle(handle: Any) -> list[Any]:
    face = handle.get_facecolor() if hasattr(handle, "get_facecolor") else handle.get_color()
    faces = np.atleast_2d(face) if len(np.shape(face)) else [face]
    edge = handle.get_edgecolor() if hasattr(handle, "get_edgecolor") else None
    edges = [] if edge is None or not len(np.shape(edge)) or not len(edge) else colours(edge)
    kind = type(handle).__name__.removesuffix("Collection")
    return [kind, [colour(f) for f in faces][:1], edges[:1]]


def chart_drawings() -> dict[str, dict[str, Any]]:
    """Every chart of ``views.html.charts`` drawn from fixed inputs, by chart id: its title,
    caption, margins (``tight``) and figure. First the report of one tile profile and the
    run table of ``tests.report_samples`` (the five tile charts, its balance axis above 0,
    speedups, calibrations, GEMM with energy, a linked set on a log axis), then the branches
    it does not take (``_other_branches``)."""
    import pytest

    from tests.report_samples import generated_profile, run_inputs
    from tileprof.views.html import charts
    from tileprof.views.html.data import build_report

    drawn: dict[str, dict[str, Any]] = {}

    def record(id: str, title: str, caption: str, figure: Figure, *, tight: bool = True) -> Any:
        figure.canvas.draw()
        drawn[id] = {"title": title, "caption": caption, "tight": tight, **describe(figure)}
        return charts.Chart(id, title, caption, "<svg></svg>")

    environ = {"SOURCE_DATE_EPOCH": "0"}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(charts, "_chart", record)
        report = build_report([generated_profile(3_000, 64)], run_inputs(), environ=environ)
        charts.with_charts(report)
        drawn["gpu-gemm-chart-with-energy"] = drawn.pop("gpu-gemm-chart")
        plot = report.gpu.gemm.plot if report.gpu and report.gpu.gemm else None
        assert plot is not None and plot.frame.height
        _other_branches(plot.frame)
    return drawn


def _other_branches(gemm: Any) -> None:
    """A device of more tiles than the occupancy map has rows (and the histogram's most
    bins), a balance with an idle tile (its axis from 0), GEMM without energy, a linked set
    on a linear axis (a run of no time, one under a µs) and of unlike work, the diff's
    waterfall and before/after bars, and a roofline of two targets with a linked set."""
    import dataclasses

    from tests.report_samples import generated_profile
    from tileprof.views.html import charts
    from tileprof.views.html.data import tile_section

    wide = tile_section(generated_profile(3_000, 2_000), id="wide")
    charts.occupancy_chart(wide)
    charts.balance_chart(wide)
    busy = np.array([0, 4_000, 10_100, 9_950, 12_000, 9_700], dtype=np.int64)
    balance = dataclasses.replace(
        wide.balance, busy=busy, minimum=0, mean=float(busy.mean()), maximum=12_000
    )
    balance = dataclasses.replace(balance, idle_tiles=1, min_tile=0, max_tile=4)
    charts.balance_chart(dataclasses.replace(wide, id="from-zero", balance=balance))
    charts.gemm_chart(gemm.drop("energy_j"))
    charts.linked_chart("linear", "linear", _linked_runs())
    charts.linked_efficiency_chart("unlike", "unlike", _linked_runs())
    names = ("gemm", "softmax", "")
    changes = np.array([120.0, -45.0, 10.0])
    charts.waterfall_chart("waterfall", names, changes, "cycles", "caption", neutral=1)
    before, after = np.array([300.0, 80.0, np.nan]), np.array([420.0, 35.0, 10.0])
    charts.before_after_chart("bars", "before/after", names, before, after, "µs", "cap")
    charts.roofline_chart(_roofline())


def _linked_runs() -> Any:
    import polars as pl

    return pl.DataFrame(
        {
            "target": ["H100", "tile device", "H100", "H100"],
            "implementation": ["cublas", "poplin", "idle", "short"],
            "kernel": ["gemm", None, "gemm", "gemm"],
            "target_kind": ["gpu", "tile", "gpu", "gpu"],
            "time_us": [40.0, 55.5, 0.0, 0.8],
            "peak_fraction": [0.62, None, 0.3, 0.2],
            "tflops": [301.0, None, None, 2.0],
        }
    )


def _roofline() -> Any:
    """A roofline of a GPU (two roofs, three ops) and a tile device (one roof, two groups), a
    GPU op and a tile group joined as a linked set."""
    import polars as pl

    from tileprof.views.html.view import RooflinePlot

    points = pl.DataFrame(
        {
            "target": ["H100", "H100", "H100", "tile device", "tile device"],
            "target_kind": ["gpu", "gpu", "gpu", "tile", "tile"],
            "arithmetic_intensity": [0.4, 60.0, 900.0, 12.0, 150.0],
            "tflops": [0.9, 120.0, 610.0, 3.5, 40.0],
        }
    )
    roofs = pl.DataFrame(
        {
            "target": ["H100", "H100", "tile device"],
            "roof": ["fp16", "fp32", "fp16"],
            "peak": [989.0, 67.0, 250.0],
            "bandwidth": [3350.0, 3350.0, 47_000.0],
        }
    )
    links = pl.DataFrame(
        {"set": ["gemm", "gemm"], "arithmetic_intensity": [150.0, 60.0], "tflops": [40.0, 120.0]}
    )
    return RooflinePlot("roofline", "roofline", "Roofline", points, roofs=roofs, links=links)
