"""Charts of the report: matplotlib (Agg) figures turned into inline, deterministic SVG.

Charts draw what ``data`` computed (already binned); nothing here reads samples. Text is
drawn as paths, so no input name reaches the SVG as markup, and the output does not depend
on installed fonts at view time. ``svg.hashsalt`` and a null date make the bytes repeatable;
ids are prefixed per chart so several SVGs can live in one page.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import math
import re
import warnings
from collections.abc import Callable, Sequence
from typing import Any

import matplotlib

matplotlib.use("Agg")

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import ListedColormap
from matplotlib.figure import Figure as MplFigure
from matplotlib.patches import Rectangle
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from tileprof.core import numbers
from tileprof.core.text import display_name, distinct_shortened, escape_control, numbered
from tileprof.views.html.view import (
    Chart,
    ChartedTable,
    Plot,
    Report,
    RooflinePlot,
    TileSection,
)

RC: dict[str, Any] = {
    "svg.hashsalt": "tileprof",
    "svg.fonttype": "path",
    "font.family": "DejaVu Sans",
    "font.size": 8,
    "axes.titlesize": 9,
    "figure.dpi": 100,
    "path.simplify": True,
}
PALETTE = (
    "#4e79a7",
    "#f28e2b",
    "#e15759",
    "#76b7b2",
    "#59a14f",
    "#edc948",
    "#b07aa1",
    "#ff9da7",
    "#9c755f",
    "#2f4b7c",
)
OTHER_COLOUR = "#9a9a9a"
IDLE_COLOUR = "#f4f4f4"
USEFUL_COLOUR = "#59a14f"
OTHER_WORK_COLOUR = "#c9c9c9"
EXCHANGE_COLOUR = "#76b7b2"
"""Exchange in the phase chart: its own colour, never the grey of other work."""


def _style() -> contextlib.AbstractContextManager[None]:
    """The report's matplotlib settings, for the duration of one chart."""
    return matplotlib.rc_context(RC)  # type: ignore[arg-type]


def colours(legend: tuple[str, ...], other: str | None = None) -> list[str]:
    """One colour per legend entry; ``other``, the entry the groups past the named ones
    share, is grey (a group that is only called "other" keeps a colour of its own)."""
    return [
        OTHER_COLOUR if name == other else PALETTE[i % len(PALETTE)]
        for i, name in enumerate(legend)
    ]


SVG_METADATA: dict[str, Any] = {"Date": None, "Creator": None, "Format": None, "Type": None}
"""No RDF block: no date (repeatable bytes) and no namespace URLs in the page."""

_ID = re.compile(r'id="([^"]+)"')
_ID_USE = re.compile(r'(id=")([^"]+)(")|("#)([^"]+)(")|(\(#)([^)]+)(\))')


CHAR_WIDTH_IN = 0.068
"""Width of one 8 pt DejaVu Sans character, rounded up (digits are 0.64 em)."""


def fit(
    figure: MplFigure,
    *,
    left_chars: int,
    legend_chars: int = 0,
    plot_width: float = 7.2,
    tick_lines: int = 1,
) -> None:
    """Margins from the longest tick label and outside-legend entry, without a layout pass.

    The tile charts are drawn once: a tight bounding box or a layout engine would draw (or lay
    out every label) a second time, which for a chart per group of a large profile cost as
    much as the drawing itself. Labels are shortened (``_short``) so the estimate is bounded.
    ``tick_lines`` is 2 under an axis in cycles, whose ticks also give µs (``cycle_axis``).
    """
    left = 0.35 + left_chars * CHAR_WIDTH_IN
    right = 0.2 + (legend_chars * CHAR_WIDTH_IN + 0.45 if legend_chars else 0.0)
    height = figure.get_figheight()
    figure.set_figwidth(left + plot_width + right)
    width = figure.get_figwidth()
    figure.subplots_adjust(
        left=left / width,
        right=1 - right / width,
        bottom=min((0.45 + 0.14 * (tick_lines - 1)) / height, 0.5),
        top=1 - min(0.12 / height, 0.2),
    )


def subplots(nrows: int = 1, ncols: int = 1, **options: Any) -> tuple[MplFigure, Any]:
    """A figure and its axes, as ``pyplot.subplots`` gives them, but never registered with
    pyplot: nothing holds a chart open once its SVG is written (or when drawing it fails),
    so no run accumulates figures. ``figsize`` and the other figure options go to the figure,
    the rest to ``Figure.subplots``."""
    figure_keys = ("figsize", "dpi", "layout")
    figure = MplFigure(**{k: options.pop(k) for k in figure_keys if k in options})
    FigureCanvasAgg(figure)  # the canvas pyplot's Agg backend gives a figure
    return figure, figure.subplots(nrows, ncols, **options)


def to_svg(figure: MplFigure, prefix: str, *, tight: bool = True) -> str:
    """The figure as an inline ``<svg>`` element with ids unique to ``prefix``.

    ``tight=False`` keeps the margins the chart set with ``fit``. A tight box is measured here
    (an Agg dry run) and passed as a box: with ``bbox_inches="tight"`` matplotlib would make its
    dry run through the SVG writer *without* our metadata, and that writer, finding no Date,
    reads ``SOURCE_DATE_EPOCH`` (and fails on a malformed one). The SVG writer thus only ever
    sees ``SVG_METADATA``, whose null Date keeps the environment out of it.
    """
    buffer = io.StringIO()
    with _style(), warnings.catch_warnings():
        # a glyph the font lacks (a CJK name) is drawn as a box; matplotlib's warning would
        # print the character itself on the terminal
        warnings.filterwarnings("ignore", message="Glyph .* missing from font")
        box = None
        if tight:
            box = figure.get_tightbbox().padded(matplotlib.rcParams["savefig.pad_inches"])
        figure.savefig(buffer, format="svg", metadata=SVG_METADATA, bbox_inches=box)
    text = buffer.getvalue()
    text = text[text.index("<svg") :]
    ids = set(_ID.findall(text))

    def prefixed(found: re.Match[str]) -> str:
        opening, old, closing = (g for g in found.groups() if g is not None)
        return f"{opening}{prefix}-{old}{closing}" if old in ids else found.group(0)

    # one pass over the text (a replace per id was quadratic: 10 minutes for a chart of 2²⁰
    # tiles); each alternative is a literal, a run without its closing character, and that
    # character, so the pass is linear
    return _ID_USE.sub(prefixed, text)


def _short(name: str, limit: int = 48) -> str:
    """A name from an input as a chart label: its middle elided, control characters escaped
    (a font has no glyph for ESC, and matplotlib's warning would print the raw byte)."""
    return display_name(name, limit)


def thousands(axis: Any) -> None:
    """Tick labels of ``axis`` as the number policy prints them: "1,000", never "1e3"."""
    axis.set_major_formatter(FuncFormatter(numbers.tick))


def cycle_axis(axis: Any, clock_hz: float) -> None:
    """An axis in cycles: each tick gives the cycles and, below, the µs at ``clock_hz``
    ("1,500,000" over "(1,000 µs)")."""
    axis.set_major_formatter(FuncFormatter(numbers.cycle_tick(clock_hz)))
    axis.set_minor_formatter(NullFormatter())


def _chart(id: str, title: str, caption: str, figure: MplFigure, *, tight: bool = True) -> Chart:
    return Chart(id, title, caption, to_svg(figure, id, tight=tight))


# ---------------------------------------------------------------- tile device


def occupancy_chart(section: TileSection) -> Chart | None:
    """Tile × time map: each cell coloured by the group with most cycles there."""
    occ = section.occupancy
    if occ is None:
        return None
    palette = colours(occ.legend, occ.other)
    cmap = ListedColormap([IDLE_COLOUR, *palette])
    with _style():
        figure, axes = subplots(figsize=(9.5, 5.2))
        edges = occ.bins.edges
        axes.imshow(
            occ.cells.astype(np.int16) + 1,
            aspect="auto",
            interpolation="nearest",
            cmap=cmap,
            vmin=0,
            vmax=len(palette),
            origin="lower",
            extent=(
                float(edges[0]),
                float(edges[-1]),
                -0.5,
                occ.cells.shape[0] * occ.tiles_per_row - 0.5,
            ),
        )
        axes.set_xlabel("cycle (µs)")
        axes.set_ylabel("tile")
        cycle_axis(axes.xaxis, section.summary.clock_hz)
        thousands(axes.yaxis)
        handles = [Rectangle((0, 0), 1, 1, color=c) for c in palette] + [
            Rectangle((0, 0), 1, 1, color=IDLE_COLOUR, ec="#999")
        ]
        labels = [_short(n) for n in occ.legend] + ["idle"]
        axes.legend(handles, labels, loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        fit(figure, left_chars=6, legend_chars=max(map(len, labels)), tick_lines=2)
    count, per_row = occ.cells.shape[0], occ.tiles_per_row
    rows = f"{count:,} tiles"
    if per_row > 1:  # a device of more than OCCUPANCY_ROWS tiles
        rows = f"{section.summary.tile_count:,} tiles in {count:,} rows of {per_row:,}"
    caption = (
        f"{rows} × {occ.bins.count} bins of {occ.bins.width:,} cycles; "
        "each cell shows the group with most cycles in it."
    )
    return _chart(f"{section.id}-occupancy", "Tile × time occupancy", caption, figure, tight=False)


def active_chart(section: TileSection) -> Chart | None:
    """Mean active tiles per time bin, stacked by group."""
    act = section.active
    if act is None:
        return None
    with _style():
        figure, axes = subplots(figsize=(9.5, 3.2))
        edges = act.bins.edges.astype(np.float64)
        x = np.repeat(edges, 2)[1:-1]
        stacked = np.repeat(act.series, 2, axis=1)
        axes.stackplot(
            x,
            stacked,
            colors=colours(act.legend, act.other),
            labels=[_short(n) for n in act.legend],
            linewidth=0,
        )
        axes.axhline(section.summary.tile_count, color="#333", lw=0.8, ls="--")
        axes.set_xlim(edges[0], edges[-1])
        axes.set_xlabel("cycle (µs)")
        axes.set_ylabel("active tiles (mean per bin)")
        cycle_axis(axes.xaxis, section.summary.clock_hz)
        thousands(axes.yaxis)
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1), frameon=False)
        legend = max(len(_short(n)) for n in act.legend)
        fit(figure, left_chars=6, legend_chars=legend, tick_lines=2)
    kinds = ", ".join(
        f"{k}: peak {numbers.number(float(v.max()))}" for k, v in sorted(act.by_kind.items())
    )
    caption = (
        f"Σ cycles of samples in a bin / bin width, stacked by group; dashed line: tileCount. "
        f"By kind — {kinds}."
    )
    return _chart(f"{section.id}-active", "Active tiles over time", caption, figure, tight=False)


def _group_rows(count: int) -> tuple[MplFigure, Any, np.ndarray]:
    """A figure with one horizontal row per group, tall enough for ``count`` labels."""
    figure, axes = subplots(figsize=(9.5, 0.8 + 0.22 * count))
    return figure, axes, np.arange(count)


def _label_group_rows(
    figure: MplFigure,
    axes: Any,
    y: np.ndarray,
    names: tuple[str, ...],
    xlabel: str,
    clock_hz: float | None = None,
) -> None:
    """Group names down the side (first on top), the x label and legend, and the margins;
    with ``clock_hz`` the x axis is in cycles and its ticks also give µs."""
    labels = _group_labels(names)
    axes.set_yticks(y, labels)
    axes.invert_yaxis()
    axes.set_xlabel(xlabel)
    if clock_hz is None:
        thousands(axes.xaxis)
    else:
        cycle_axis(axes.xaxis, clock_hz)
    axes.legend(loc="lower right", frameon=False)
    fit(figure, left_chars=max(map(len, labels)), tick_lines=1 if clock_hz is None else 2)


def _group_labels(names: Sequence[str]) -> list[str]:
    """Group names as row labels: middles elided apart (``distinct_shortened``), numbered where
    two still read alike."""
    return numbered([escape_control(s or "—") for s in distinct_shortened(list(names), 60)])


def phase_chart(section: TileSection) -> Chart | None:
    """phaseCycles per group, split into useful and other."""
    split = section.phase
    if not split.names:
        return None
    with _style():
        figure, axes, y = _group_rows(len(split.names))
        axes.barh(y, split.useful, color=USEFUL_COLOUR, label="useful")
        axes.barh(y, split.other, left=split.useful, color=OTHER_WORK_COLOUR, label="other")
        if split.exchange is not None and split.exchange.any():
            left = split.useful + split.other
            axes.barh(y, split.exchange, left=left, color=EXCHANGE_COLOUR, label="exchange")
        clock = section.summary.clock_hz
        _label_group_rows(figure, axes, y, split.names, "phase cycles (µs)", clock)
    caption = (
        "useful = phaseCycles × usefulUtilization; other = the rest (all of it without "
        "estimate); exchange = all of a group of exchange samples (data moving between tiles)."
    )
    return _chart(f"{section.id}-phase", "Phase cycles per group", caption, figure, tight=False)


def spread_chart(section: TileSection) -> Chart | None:
    """p50, p95 and max sample duration per group (log scale)."""
    spread = section.spread
    if not spread.names:
        return None
    with _style():
        figure, axes, y = _group_rows(len(spread.names))
        floor = 0.8
        axes.hlines(
            y,
            np.maximum(spread.p50, floor),
            np.maximum(spread.maximum, floor),
            color="#bbb",
            lw=1.5,
        )
        axes.plot(np.maximum(spread.p50, floor), y, "o", color="#4e79a7", ms=4, label="p50")
        axes.plot(np.maximum(spread.p95, floor), y, "D", color="#f28e2b", ms=4, label="p95")
        axes.plot(
            np.maximum(spread.maximum, floor), y, "|", color="#e15759", ms=9, mew=2, label="max"
        )
        axes.set_xscale("log")
        xlabel = "sample duration, cycles (µs), log"
        _label_group_rows(figure, axes, y, spread.names, xlabel, section.summary.clock_hz)
    return _chart(
        f"{section.id}-spread",
        "Duration spread per group",
        "p50Cycles, p95Cycles and maximumCycles of each group.",
        figure,
        tight=False,
    )


def balance_chart(section: TileSection) -> Chart:
    """Busy cycles of every tile, by index and as a histogram, with min/mean/max."""
    bal = section.balance
    with _style():
        figure, (left, right) = subplots(
            1, 2, figsize=(9.5, 3.0), gridspec_kw={"width_ratios": [3, 2]}
        )
        tiles, busy = balance_profile(bal.busy)
        floor = balance_floor(bal.busy)
        left.fill_between(tiles, busy, floor, step="mid", color="#4e79a7", lw=0)
        left.set_xlim(-0.5, bal.busy.size - 0.5)
        if floor > 0:  # the axis starts where the data is: say so on the chart
            top = float(bal.busy.max())
            left.set_ylim(floor, top + (top - floor) * 0.05)
            left.annotate(
                f"axis starts at {numbers.number(floor)}, not 0",
                (0.01, 0.02),
                xycoords="axes fraction",
                fontsize=7,
                color="#555",
                bbox={"boxstyle": "round", "fc": "white", "ec": "#999", "lw": 0.6},
            )
        left.set_xlabel("tile")
        left.set_ylabel("busy cycles")
        right.hist(bal.busy, bins=min(60, max(bal.busy.size // 4, 1)), color="#4e79a7")
        for value, style, label in (
            (bal.minimum, ":", "min"),
            (bal.mean, "-", "mean"),
            (bal.maximum, "--", "max"),
        ):
            left.axhline(value, color="#e15759", ls=style, lw=0.9)
            right.axvline(
                value, color="#e15759", ls=style, lw=0.9, label=f"{label} {numbers.number(value)}"
            )
        right.xaxis.set_major_locator(MaxNLocator(4))
        right.set_xlabel("busy cycles (µs)")
        right.set_ylabel("tiles")
        cycle_axis(right.xaxis, section.summary.clock_hz)
        for axis in (left.xaxis, left.yaxis, right.yaxis):
            thousands(axis)
        right.legend(frameon=False)
        fit(figure, left_chars=10, tick_lines=2)
        figure.subplots_adjust(wspace=0.3)
    caption = (
        f"min {numbers.number(bal.minimum)} (tile {bal.min_tile}), "
        f"mean {numbers.number(bal.mean)}, "
        f"max {numbers.number(bal.maximum)} (tile {bal.max_tile}); "
        f"{numbers.number(bal.idle_tiles)} idle tiles."
    )
    if floor > 0:
        caption += f" The busy-cycles axis starts at {numbers.number(floor)}, not 0."
    return _chart(f"{section.id}-balance", "Tile balance", caption, figure, tight=False)


BALANCE_POINTS = 4096
"""Most points of the tile-balance chart's by-index panel."""


def balance_profile(busy: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(tile, busy cycles) as the by-index panel draws them: every tile, or past
    ``BALANCE_POINTS`` tiles the largest busy cycles of each run of ⌈tiles / 4,096⌉ of them (at
    the run's first tile), so that a dump claiming 2²⁰ tiles draws 4,096 points."""
    width = max(1, -(-busy.size // BALANCE_POINTS))
    if width == 1:
        return np.arange(busy.size), busy
    padded = np.full(-(-busy.size // width) * width, -np.inf)
    padded[: busy.size] = busy
    return np.arange(0, busy.size, width), padded.reshape(-1, width).max(axis=1)


def balance_floor(busy: np.ndarray) -> float:
    """Where the busy-cycles axis starts: 0, unless every tile is busy for more than half of
    the largest value, where a zero-based axis would flatten the differences; then a round
    value a little below the smallest (the chart marks that the axis does not start at 0).
    Every tile equally busy: no difference to show, so 0 (a floor at the one value would
    leave an empty chart with a zero-height axis)."""
    if busy.size == 0:
        return 0.0
    low, high = float(busy.min()), float(busy.max())
    if low <= 0 or low < high / 2 or low == high:
        return 0.0
    step = 10 ** math.floor(math.log10(max(high - low, 1.0)))
    return float(max(0.0, math.floor((low - (high - low) * 0.1) / step) * step))


def with_tile_charts(section: TileSection) -> TileSection:
    """The section with its five charts drawn (those with data; none when nothing matched)."""
    if section.empty:
        return section
    drawn = [
        occupancy_chart(section),
        active_chart(section),
        phase_chart(section),
        spread_chart(section),
        balance_chart(section),
    ]
    return dataclasses.replace(section, charts=tuple(c for c in drawn if c is not None))


# ---------------------------------------------------------------- GPU and links


def _labels(frame: pl.DataFrame, columns: tuple[str, ...]) -> list[str]:
    """One label per row from ``columns`` (those present), shortened apart and numbered where
    two rows would still read alike: every bar names its own row."""
    present = [c for c in columns if c in frame.columns]
    full = [
        " · ".join(str(v) for v in row if v is not None)
        for row in frame.select(present).iter_rows()
    ]
    short = distinct_shortened(full, 70)
    return numbered([escape_control(s or "—") for s in short])


def speedup_chart(frame: pl.DataFrame) -> Chart:
    """Speedup of each implementation over its baseline, per workload and GPU."""
    n = frame.height
    labels = _labels(frame, ("target", "workload", "implementation"))
    with _style():
        figure, axes = subplots(figsize=(9.5, 0.8 + 0.24 * n))
        y = np.arange(n)
        values = frame["speedup"].to_numpy()
        axes.barh(y, values, color=["#59a14f" if v >= 1 else "#e15759" for v in values])
        axes.axvline(1.0, color="#333", lw=0.8)
        axes.set_yticks(y, labels)
        axes.invert_yaxis()
        axes.set_xlabel("speedup (baseline_time_us / time_us)")
        thousands(axes.xaxis)
    return _chart(
        "gpu-speedups-chart",
        "Speedup over baseline",
        "Green: faster than the baseline; red: slower.",
        figure,
    )


def calibration_chart(id: str, title: str, frame: pl.DataFrame) -> Chart:
    """Latency of each schedule in one calibration set."""
    n = frame.height
    with _style():
        figure, axes = subplots(figsize=(7.5, 0.8 + 0.28 * n))
        y = np.arange(n)
        axes.barh(y, frame["time_us"].fill_null(0).to_numpy(), color="#4e79a7")
        axes.set_yticks(y, _labels(frame, ("implementation",)))
        axes.invert_yaxis()
        axes.set_xlabel("µs per step (time_us)")
        thousands(axes.xaxis)
    return _chart(id, f"Calibration latency: {title}", "time_us per schedule.", figure)


GEMM_LABEL_ROOM = 1.45
"""The GEMM chart's time axis runs to this many times the longest bar, so the "…% of peak"
label after it stays inside its own axes instead of running into the energy panel."""


def gemm_labels(frame: pl.DataFrame) -> list[str]:
    """A GEMM bar's label: its precision and shape (and implementation), its target too when
    the chart holds several; rows that still read alike are numbered."""
    several = "target" in frame.columns and frame["target"].n_unique() > 1
    return _labels(frame, (*(("target",) if several else ()), "dtype", "shape", "implementation"))


def _has_energy(frame: pl.DataFrame) -> bool:
    """Whether any GEMM run measured energy (an energy panel of zero-length bars says nothing)."""
    if "energy_j" not in frame.columns:
        return False
    energy = frame["energy_j"].cast(pl.Float64).fill_nan(None).drop_nulls()
    return bool(energy.len()) and bool((energy != 0).any())


def gemm_chart(frame: pl.DataFrame) -> Chart:
    """Time per precision annotated with the peak fraction, and energy beside it when measured
    (no energy: one panel, and the caption says so)."""
    labels = gemm_labels(frame)
    n = frame.height
    energy = _has_energy(frame)
    with _style():
        if energy:
            figure, (left, right) = subplots(1, 2, figsize=(9.5, 0.9 + 0.3 * n), sharey=True)
        else:
            figure, left = subplots(figsize=(9.5, 0.9 + 0.3 * n))
        y = np.arange(n)
        left.barh(y, frame["time_us"].fill_null(0).to_numpy(), color="#4e79a7")
        for yi, pf, t in zip(
            y, frame["peak_fraction"].to_list(), frame["time_us"].to_list(), strict=False
        ):
            if pf is not None and t is not None:
                left.annotate(
                    f"{numbers.percent(pf)} of peak",
                    (t, yi),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                )
        left.set_yticks(y, labels)
        left.invert_yaxis()
        longest = float(frame["time_us"].fill_null(0).cast(pl.Float64).to_numpy().max(initial=0.0))
        if longest > 0:  # room right of the longest bar for its label, inside the axes
            left.set_xlim(0, longest * GEMM_LABEL_ROOM)
        left.set_xlabel("µs per run (time_us)")
        left.xaxis.set_major_locator(MaxNLocator(5))  # tick labels of 6 digits never touch
        thousands(left.xaxis)
        if energy:
            values = frame["energy_j"].fill_null(0).to_numpy()
            right.barh(y, values, color="#59a14f", label="energy_j")
            right.set_xlabel("J per run (energy_j, idle-adjusted)")
            thousands(right.xaxis)
    caption = (
        "time_us and energy_j; annotation: peak_fraction."
        if energy
        else "time_us; annotation: peak_fraction. No energy panel: no run measured energy_j."
    )
    return _chart("gpu-gemm-chart", "GEMM per precision", caption, figure)


LOG_SPAN = 100.0
"""Linked-set times are drawn on a log axis only when the largest exceeds the smallest by this."""


def linked_scale(times: np.ndarray) -> tuple[str, float]:
    """The time axis of a linked-set chart: ("linear", 0) unless the positive times span more
    than two decades; then ("log", left edge), the edge being the power of ten at or below the
    smallest time, so every bar starts from the same visible baseline.
    """
    positive = times[np.isfinite(times) & (times > 0)]
    if positive.size == 0 or positive.max() <= LOG_SPAN * positive.min():
        return "linear", 0.0
    return "log", float(10 ** np.floor(np.log10(positive.min())))


plain_tick = numbers.tick
"""A tick label as a plain number ("13.4", "1,000", "0.01"), never "1.3×10¹"."""


def linked_efficiency_chart(id: str, title: str, frame: pl.DataFrame) -> Chart:
    """One linked set of unlike work: fraction of peak per target (0-100 %), annotated with
    TFLOP/s where the work is known. No time axis: the runs' sizes differ."""
    n = max(frame.height, 1)
    labels = _labels(frame, ("target", "implementation", "kernel"))
    fractions = frame["peak_fraction"].cast(pl.Float64).fill_null(np.nan).to_numpy() * 100
    with _style():
        figure, axes = subplots(figsize=(9.5, 0.8 + 0.3 * n))
        y = np.arange(frame.height)
        kinds = frame["target_kind"].to_list()
        axes.barh(
            y,
            np.nan_to_num(fractions, nan=0.0),
            color=["#f28e2b" if k == "tile" else "#4e79a7" for k in kinds],
        )
        for yi, pf, tf in zip(y, fractions, frame["tflops"].to_list(), strict=False):
            text = "peak unknown" if pf != pf else numbers.percent(pf / 100)
            if tf is not None:
                text += f", {numbers.number(tf)} TFLOP/s"
            axes.annotate(
                text,
                (0.0 if pf != pf else pf, yi),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=7,
            )
        axes.set_xlim(0, 100)
        axes.set_yticks(y, labels)
        axes.invert_yaxis()
        axes.set_xlabel("% of peak")
    return _chart(
        id, title, "Different sizes: efficiency, not time. Orange: tile device; blue: GPU.", figure
    )


def linked_chart(id: str, title: str, frame: pl.DataFrame) -> Chart:
    """One linked set: time per target from 0 (log from a power of ten when times span more
    than two decades), annotated with peak fraction.
    """
    n = max(frame.height, 1)
    labels = _labels(frame, ("target", "implementation", "kernel"))
    times = frame["time_us"].cast(pl.Float64).fill_null(np.nan).to_numpy()
    scale, edge = linked_scale(times)
    with _style():
        figure, axes = subplots(figsize=(9.5, 0.8 + 0.3 * n))
        y = np.arange(frame.height)
        kinds = frame["target_kind"].to_list()
        drawn = np.nan_to_num(times, nan=edge)
        drawn = np.where(drawn > edge, drawn, edge)
        axes.barh(
            y,
            drawn - edge,
            left=edge,
            color=["#f28e2b" if k == "tile" else "#4e79a7" for k in kinds],
        )
        for yi, pf, t in zip(y, frame["peak_fraction"].to_list(), times, strict=False):
            if pf is not None and t == t and t > 0:
                axes.annotate(
                    f"{numbers.percent(pf)} of peak",
                    (t, yi),
                    xytext=(3, 0),
                    textcoords="offset points",
                    va="center",
                    fontsize=7,
                )
        if scale == "log":
            axes.set_xscale("log")
            axes.xaxis.set_minor_formatter(NullFormatter())
        axes.set_xlim(left=edge)
        axes.xaxis.set_major_formatter(FuncFormatter(plain_tick))
        axes.set_yticks(y, labels)
        axes.invert_yaxis()
        axes.set_xlabel("µs (log scale)" if scale == "log" else "µs")
    return _chart(id, title, "Orange: tile device; blue: GPU.", figure)


ROOF_STYLES = ("-", "--", "-.", ":")
"""Line styles of one target's roofs (one per dtype class), in order."""


def _roof_span(plot: RooflinePlot) -> tuple[float, float]:
    """The intensity axis: a decade beyond the points and every roof's ridge point."""
    xs = plot.frame["arithmetic_intensity"].to_numpy()
    ridges = (plot.roofs["peak"] * 1000 / plot.roofs["bandwidth"]).to_numpy()
    values = np.concatenate([xs, ridges]) if ridges.size else xs
    return float(10 ** np.floor(np.log10(values.min()) - 1)), float(
        10 ** np.ceil(np.log10(values.max()) + 1)
    )


def _draw_roofs(axes: Any, plot: RooflinePlot, colour: dict[str, str], x: np.ndarray) -> None:
    """Each roof: min(peak, intensity × bandwidth), TFLOP/s (GB/s × FLOP/B / 1000); its label
    names the bandwidth's unit, decimal GB (docs/metrics.md, "Bytes and their units")."""
    seen: dict[str, int] = {}
    for target, roof, peak, bandwidth in plot.roofs.iter_rows():
        style = ROOF_STYLES[seen.get(target, 0) % len(ROOF_STYLES)]
        seen[target] = seen.get(target, 0) + 1
        label = (
            f"{_short(target, 36)} {roof}: {numbers.number(peak)} TFLOP/s, "
            f"{numbers.number(bandwidth)} GB/s (10⁹ B/s)"
        )
        y = np.minimum(peak, x * bandwidth / 1000)
        (line,) = axes.plot(x, y, color=colour[target], ls=style, lw=1.2, label=label)
        line.set_gid(f"roof_{sum(seen.values()) - 1}")


def roofline_chart(plot: RooflinePlot) -> Chart:
    """The roofline figure (``roofline_figure``) as a chart."""
    return _chart(
        plot.id,
        plot.title,
        "Points: GPU ops (circles) and tile groups (squares) with a FLOP count, at their "
        "arithmetic intensity and achieved TFLOP/s. Lines: each target's roofs from its spec "
        "(flat at the dtype's peak, slanted at memory bandwidth). Dotted: the members of a "
        "linked set. Memory-only ops and tile groups without FLOPs have no point.",
        roofline_figure(plot),
    )


def roofline_figure(plot: RooflinePlot) -> MplFigure:
    """Every target's ops and tile groups at (arithmetic intensity, achieved TFLOP/s) on a
    log-log plane, each target's roofs as lines (gid ``roof_N``), the points per target
    (``points_N``), the members of each linked set joined (``link_N``). Names go in the
    legend, never beside the points, so no label can overlap another."""
    points = plot.frame
    targets = list(dict.fromkeys([*points["target"].to_list(), *plot.roofs["target"].to_list()]))
    colour = dict(zip(targets, colours(tuple(targets)), strict=True))
    lo, hi = _roof_span(plot)
    x = np.logspace(np.log10(lo), np.log10(hi), 256)
    with _style():
        figure, axes = subplots(figsize=(7.2, 4.6))
        axes.set_xscale("log")
        axes.set_yscale("log")
        _draw_roofs(axes, plot, colour, x)
        for n, (_, members) in enumerate(plot.links.group_by("set", maintain_order=True)):
            ordered = members.sort("arithmetic_intensity")
            (joined,) = axes.plot(
                ordered["arithmetic_intensity"].to_numpy(),
                ordered["tflops"].to_numpy(),
                color="#555",
                ls=":",
                lw=0.9,
                marker=None,
                label=None,
            )
            joined.set_gid(f"link_{n}")
        groups = points.group_by(["target", "target_kind"], maintain_order=True)
        for n, ((target, kind), group) in enumerate(groups):
            drawn = axes.scatter(
                group["arithmetic_intensity"].to_numpy(),
                group["tflops"].to_numpy(),
                s=22,
                marker="s" if kind == "tile" else "o",
                color=colour[str(target)],
                edgecolors="#222",
                linewidths=0.4,
                zorder=3,
                label=f"{_short(str(target), 36)}: {group.height} "
                + ("tile groups" if kind == "tile" else "ops"),
            )
            drawn.set_gid(f"points_{n}")
        axes.set_xlim(lo, hi)
        axes.set_xlabel("arithmetic intensity (FLOP / byte)")
        axes.set_ylabel("achieved TFLOP/s")
        axes.xaxis.set_major_formatter(FuncFormatter(plain_tick))
        axes.yaxis.set_major_formatter(FuncFormatter(plain_tick))
        axes.xaxis.set_minor_formatter(NullFormatter())
        axes.yaxis.set_minor_formatter(NullFormatter())
        axes.grid(True, which="major", color="#e6e6e6", lw=0.5)
        axes.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=7, frameon=False)
    return figure


PLOTS: dict[str, Callable[[Plot], Chart]] = {
    "speedup": lambda plot: speedup_chart(plot.frame),
    "calibration": lambda plot: calibration_chart(plot.id, plot.title, plot.frame),
    "gemm": lambda plot: gemm_chart(plot.frame),
    "linked": lambda plot: linked_chart(plot.id, plot.title, plot.frame),
    "linked_efficiency": lambda plot: linked_efficiency_chart(plot.id, plot.title, plot.frame),
    "roofline": lambda plot: roofline_chart(plot),  # type: ignore[arg-type]
}
"""How each ``Plot`` kind of the view model is drawn."""


def _targets_of(frame: pl.DataFrame) -> str:
    if "target" not in frame.columns:
        return "these targets"
    names = [str(t) for t in frame["target"].drop_nulls().unique(maintain_order=True).to_list()]
    return ", ".join(_short(t, 48) for t in names) or "these targets"


def _none_positive(frame: pl.DataFrame, column: str) -> bool:
    if column not in frame.columns:
        return True
    values = frame[column].cast(pl.Float64).fill_nan(None).drop_nulls()
    return not bool((values > 0).any())


def nothing_to_draw(plot: Plot) -> str | None:
    """Why ``plot`` would be an empty chart (a bar of no length, a roofline without a roof),
    in one line for the page instead of the chart; None when it has something to show."""
    frame = plot.frame
    if plot.kind in ("linked", "gemm", "calibration") and _none_positive(frame, "time_us"):
        return "No chart: no run here has a time (time_us); the table lists them."
    if plot.kind == "linked_efficiency" and _none_positive(frame, "peak_fraction"):
        return (
            f"No chart: no spec gives a peak for {_targets_of(frame)} at this work, so there is "
            "no fraction of peak to compare; the table lists the runs."
        )
    if isinstance(plot, RooflinePlot) and plot.roofs.height == 0:
        return (
            f"No chart: no spec gives both a peak and a memory bandwidth for "
            f"{_targets_of(frame)}, so there is no roof to place the points under; the table "
            "lists them."
        )
    return None


def _drawn(table: ChartedTable) -> ChartedTable:
    if table.plot is None or table.chart is not None:
        return table
    why = nothing_to_draw(table.plot)
    if why is not None:
        return dataclasses.replace(table, note=why)
    return dataclasses.replace(table, chart=PLOTS[table.plot.kind](table.plot))


def with_charts(report: Report) -> Report:
    """The report with every chart drawn: tile sections' five, GPU and linked-set charts."""
    gpu = report.gpu
    if gpu is not None:
        gpu = dataclasses.replace(
            gpu,
            speedups=None if gpu.speedups is None else _drawn(gpu.speedups),
            calibrations=tuple(_drawn(c) for c in gpu.calibrations),
            gemm=None if gpu.gemm is None else _drawn(gpu.gemm),
        )
    return dataclasses.replace(
        report,
        tiles=tuple(with_tile_charts(t) for t in report.tiles),
        gpu=gpu,
        linked=tuple(_drawn(c) for c in report.linked),
        roofline=None if report.roofline is None else _drawn(report.roofline),
    )


# ---------------------------------------------------------------- diff

INCREASE_COLOUR = "#e15759"
DECREASE_COLOUR = "#59a14f"
BEFORE_COLOUR = "#bab0ac"
AFTER_COLOUR = "#4e79a7"
NEUTRAL_COLOUR = OTHER_COLOUR
"""Changes that are no speed-up or slowdown (a diff's call counts)."""


def waterfall_chart(
    id: str,
    names: tuple[str, ...],
    changes: np.ndarray,
    unit: str,
    caption: str,
    neutral: int = 0,
) -> Chart | None:
    """Each group's change as a bar starting where the previous ones left the running total,
    then the net change; rises red, falls green (the first ``neutral`` bars grey: changes
    that are no speed-up or slowdown), first group on top."""
    if not names:
        return None
    labels = (*names, "net change")
    ends = np.cumsum(changes)
    starts = ends - changes
    with _style():
        figure, axes, y = _group_rows(len(labels))
        colours = [INCREASE_COLOUR if c > 0 else DECREASE_COLOUR for c in changes]
        colours[:neutral] = [NEUTRAL_COLOUR] * min(neutral, len(colours))
        axes.barh(y[:-1], changes, left=starts, color=colours)
        net = float(ends[-1])
        axes.barh(y[-1:], [net], color=AFTER_COLOUR)
        axes.axvline(0, color="#888", linewidth=0.6)
        shown = _group_labels(labels)
        axes.set_yticks(y, shown)
        axes.invert_yaxis()
        axes.set_xlabel(f"change in {unit}")
        thousands(axes.xaxis)
        fit(figure, left_chars=max(map(len, shown)))
    return _chart(id, f"Change in {unit} by group", caption, figure, tight=False)


def before_after_chart(
    id: str,
    title: str,
    names: tuple[str, ...],
    before: np.ndarray,
    after: np.ndarray,
    xlabel: str,
    caption: str,
) -> Chart | None:
    """Two bars per group, before (grey) above after (blue); a missing value draws no bar."""
    if not names:
        return None
    with _style():
        figure, axes, y = _group_rows(len(names))
        axes.barh(y - 0.2, before, height=0.4, color=BEFORE_COLOUR, label="before")
        axes.barh(y + 0.2, after, height=0.4, color=AFTER_COLOUR, label="after")
        _label_group_rows(figure, axes, y, names, xlabel)
    return _chart(id, title, caption, figure, tight=False)
