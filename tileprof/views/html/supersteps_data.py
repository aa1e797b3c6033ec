"""The report's Supersteps section: superstep frames turned into its table and chart data.

The section covers the tile section's epoch (every epoch without ``--epoch``) and shows the
supersteps its ``--window`` and ``--kernel`` choose; segmentation always runs on whole epochs
(docs/metrics.md, "Supersteps").
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.model.profile import Profile
from tileprof.views.html.view import SuperstepSection, Table

MAX_ROWS = 100
"""Supersteps the table and the bar chart show at most: the longest, kept in time order."""

TABLE_COLUMNS: tuple[str, ...] = (
    "epoch",
    "index",
    "start",
    "end",
    "cycles",
    "us",
    "syncAfter",
    "exchangeCycles",
    "overlappedExchangeCycles",
    "activeTiles",
    "idleTiles",
    "efficiency",
    "tileBalance",
    "activeTileBalance",
    "meanSyncWait",
    "maxSyncWait",
    "criticalTile",
    "criticalGroup",
    "stragglerMargin",
)
PERCENT_COLUMNS = ("efficiency", "tileBalance", "activeTileBalance")
DOCS = {"us": "cycles / clockHz × 10⁶"}
SPLIT = ("lateStart", "busy", "gaps", "syncWait")
"""A superstep's parts in time order on a tile; their means over active tiles add to cycles."""

TableBuilder = Callable[..., Table]


def superstep_section(
    profile: Profile, filters: Filters | None, id: str, table: TableBuilder
) -> SuperstepSection | None:
    """The section, or None when the chosen epoch has no samples (``table`` builds the
    sortable table the way the rest of the report does)."""
    filters = filters or Filters()
    if (
        filters.epoch is not None
        and not profile.samples.filter(pl.col("epoch") == filters.epoch).height
    ):
        return None
    shown = profile.supersteps(epoch=filters.epoch, window=filters.window, kernels=filters.kernels)
    full = shown if not filters.kernels else profile.supersteps(epoch=filters.epoch)
    rows, note = _capped(shown.supersteps)
    rows = rows.with_columns(us=pl.col("cycles") * 1_000_000 / profile.clock_hz)
    split = _split(rows, full.tiles)
    longest = _longest(rows)
    ends = pl.DataFrame(schema={"tile": pl.Int64, "end": pl.Int64})
    if longest is not None:
        ends = full.tiles.filter(
            (pl.col("epoch").eq_missing(longest["epoch"])) & (pl.col("index") == longest["index"])
        ).select("tile", end=longest["end"] - pl.col("syncWait"))
    return SuperstepSection(
        id=id,
        result=shown,
        table=table(
            f"{id}-table", rows, TABLE_COLUMNS, percent=PERCENT_COLUMNS, docs=DOCS, ditto=("epoch",)
        ),
        split=split,
        longest=longest,
        ends=ends,
        note=note,
    )


def _capped(steps: pl.DataFrame, limit: int = MAX_ROWS) -> tuple[pl.DataFrame, str]:
    """At most ``limit`` supersteps: the longest (cycles, then time), shown in time order."""
    if steps.height <= limit:
        return steps, ""
    kept = (
        steps.with_row_index("_at")
        .sort(["cycles", "_at"], descending=[True, False])
        .head(limit)
        .sort("_at")
        .drop("_at")
    )
    return kept, f"The {limit} longest of {steps.height:,} supersteps, in time order."


def _split(rows: pl.DataFrame, tiles: pl.DataFrame) -> pl.DataFrame:
    """Per shown superstep: its label and the four parts averaged over its active tiles."""
    means = tiles.group_by("epoch", "index").agg(pl.col(list(SPLIT)).mean())
    several = rows.get_column("epoch").n_unique() > 1
    label = (
        pl.format("{}:{}", pl.col("epoch").cast(pl.String).fill_null("—"), pl.col("index"))
        if several
        else pl.col("index").cast(pl.String)
    )
    return rows.select("epoch", "index", "cycles", label=label).join(
        means, on=["epoch", "index"], how="left", nulls_equal=True, maintain_order="left"
    )


def _longest(rows: pl.DataFrame) -> dict[str, Any] | None:
    """The longest shown superstep (the earliest on a tie)."""
    if not rows.height:
        return None
    return (
        rows.with_row_index("_at")
        .sort(["cycles", "_at"], descending=[True, False])
        .row(0, named=True)
    )
