"""Charts of the report's Supersteps section, drawn at render time like the other charts."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import matplotlib
import numpy as np
from matplotlib.ticker import MaxNLocator

from tileprof.views.html.charts import RC, fit, subplots, thousands, to_svg
from tileprof.views.html.view import Chart, Report, SuperstepSection, TileSection

if TYPE_CHECKING:
    from matplotlib.figure import Figure as MplFigure

PARTS = (
    ("lateStart", "late start", "#f28e2b"),
    ("busy", "busy", "#4e79a7"),
    ("gaps", "internal gaps", "#bab0ac"),
    ("syncWait", "sync wait", "#e15759"),
)
"""The four parts of a tile's superstep, bottom to top (their order in time), and colours."""


def _chart(id: str, title: str, caption: str, figure: MplFigure) -> Chart:
    return Chart(id, title, caption, to_svg(figure, id, tight=False))


def split_chart(section: SuperstepSection) -> Chart | None:
    """One stacked bar per superstep: late start, busy, gaps and sync wait, each averaged over
    the superstep's active tiles (together its length)."""
    split = section.split
    if not split.height:
        return None
    x = np.arange(split.height)
    with matplotlib.rc_context(RC):  # type: ignore[arg-type]
        figure, axes = subplots(figsize=(9.0, 3.2))
        bottom = np.zeros(split.height)
        for key, label, colour in PARTS:
            values = split.get_column(key).fill_null(0).to_numpy().astype(np.float64)
            axes.bar(x, values, bottom=bottom, color=colour, width=0.8, lw=0, label=label)
            bottom += values
        labels = split.get_column("label").to_list()
        step = max(1, len(labels) // 40)
        axes.set_xticks(x[::step], labels[::step], rotation=90 if len(labels) > 12 else 0)
        axes.set_xlim(-0.6, split.height - 0.4)
        axes.set_xlabel("superstep")
        axes.set_ylabel("cycles (mean over active tiles)")
        axes.yaxis.set_major_locator(MaxNLocator(5))
        thousands(axes.yaxis)
        axes.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fit(figure, left_chars=10, legend_chars=14)
    caption = (
        "Per superstep, the mean over its active tiles of late start, busy, internal gaps and "
        "sync wait; the four add up to the superstep's length. " + section.note
    ).strip()
    return _chart(f"{section.id}-split", "Where each superstep's time goes", caption, figure)


def ends_chart(section: SuperstepSection) -> Chart | None:
    """The last compute end of every active tile in the longest superstep, the critical tile
    marked."""
    longest = section.longest
    if longest is None or not section.ends.height:
        return None
    start = int(longest["start"])
    tiles = section.ends.get_column("tile").to_numpy()
    ends = section.ends.get_column("end").to_numpy() - start
    critical = int(longest["criticalTile"])
    critical_end = int(longest["end"]) - start
    with matplotlib.rc_context(RC):  # type: ignore[arg-type]
        figure, axes = subplots(figsize=(9.0, 3.0))
        axes.scatter(tiles, ends, s=4, color="#4e79a7", lw=0, label="active tile")
        axes.axhline(critical_end, color="#9a9a9a", ls="--", lw=0.8)
        axes.scatter(
            [critical], [critical_end], s=40, color="#e15759", marker="v", label="critical tile"
        )
        axes.annotate(
            f"tile {critical}",
            (critical, critical_end),
            textcoords="offset points",
            xytext=(6, 4),
            color="#e15759",
        )
        axes.set_xlim(-0.5, section.result.tile_count - 0.5)
        axes.set_ylim(0, max(critical_end, 1) * 1.1)
        axes.set_xlabel("tile")
        axes.set_ylabel("last end − superstep start")
        thousands(axes.xaxis)
        axes.yaxis.set_major_locator(MaxNLocator(5))
        thousands(axes.yaxis)
        axes.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        fit(figure, left_chars=10, legend_chars=14)
    epoch = "—" if longest["epoch"] is None else longest["epoch"]
    margin = longest["stragglerMargin"]
    caption = (
        f"Superstep {longest['index']} of epoch {epoch}, the longest shown "
        f"({int(longest['cycles']):,} cycles): critical tile {critical} "
        f"({longest['criticalGroup']}), " + straggler_text(margin)
    )
    return _chart(f"{section.id}-ends", "Tile end times, longest superstep", caption, figure)


def heat_chart(section: SuperstepSection) -> Chart | None:
    """Tile bins × supersteps, each cell the bin's mean busy / cycles: stragglers show as dark
    cells among light ones, idle tiles as pale rows."""
    heat = section.heat
    if heat.size == 0 or not section.split.height:
        return None
    bins, steps = heat.shape
    tile_count = section.result.tile_count
    with matplotlib.rc_context(RC):  # type: ignore[arg-type]
        figure, axes = subplots(figsize=(9.0, 4.2))
        image = axes.imshow(
            heat,
            aspect="auto",
            interpolation="nearest",
            cmap="Blues",
            vmin=0.0,
            vmax=1.0,
            origin="lower",
            extent=(-0.5, steps - 0.5, -0.5, bins * section.heat_bin - 0.5),
        )
        labels = section.split.get_column("label").to_list()
        step = max(1, -(-len(labels) // 30))  # at most 30 labels
        rotated = len(labels) > 12
        x = np.arange(steps)
        axes.set_xticks(x[::step], labels[::step], rotation=90 if rotated else 0)
        axes.set_xlabel("superstep")
        axes.set_ylabel("tile")
        axes.set_ylim(-0.5, tile_count - 0.5)
        thousands(axes.yaxis)
        bar = figure.colorbar(image, ax=axes, fraction=0.04, pad=0.02)
        bar.set_label("busy / cycles")
        fit(figure, left_chars=10, legend_chars=8, tick_lines=4 if rotated else 1)
    binned = (
        "one row per tile"
        if section.heat_bin == 1
        else f"rows of {section.heat_bin:,} consecutive tiles (their mean)"
    )
    caption = (
        f"Per superstep and tile, the share of the superstep the tile computed (busy / cycles; "
        f"idle 0), {binned}, {tile_count:,} tiles. " + section.note
    ).strip()
    return _chart(f"{section.id}-heat", "Busy share by tile and superstep", caption, figure)


def straggler_text(margin: int | None) -> str:
    """How far the critical tile ends after the runner-up (``stragglerMargin``), in words: a
    tie is said as a tie, not as "0 cycles after the next"."""
    if margin is None:
        return "the only active tile."
    if margin == 0:
        return "ending with another tile (a tie: no single straggler)."
    return f"ending {int(margin):,} cycles after the next tile to end."


def with_superstep_charts(report: Report) -> Report:
    """The report with each tile section's Supersteps charts drawn."""
    return dataclasses.replace(report, tiles=tuple(_drawn(tile) for tile in report.tiles))


def _drawn(tile: TileSection) -> TileSection:
    section = tile.supersteps
    if section is None:
        return tile
    drawn = (split_chart(section), heat_chart(section), ends_chart(section))
    charts = tuple(c for c in drawn if c is not None)
    return dataclasses.replace(tile, supersteps=dataclasses.replace(section, charts=charts))
