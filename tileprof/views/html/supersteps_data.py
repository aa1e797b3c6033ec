"""The report's Supersteps section: superstep frames turned into its table and chart data.

The section covers the tile section's epoch (every epoch without ``--epoch``) and shows the
supersteps its ``--window`` and ``--kernel`` choose; segmentation always runs on whole epochs
(docs/metrics.md, "Supersteps").
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import polars as pl

from tileprof.analyses.critical import PATH_PARTS, CriticalPath
from tileprof.analyses.filters import Filters
from tileprof.analyses.findings import is_tenstorrent
from tileprof.model.critical import tile_critical
from tileprof.model.profile import Profile
from tileprof.views.critical_table import PATH_TITLES
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
    "loadBalanceEfficiency",
    "communicationEfficiency",
    "parallelEfficiency",
    "startSkewCycles",
    "imbalanceCycles",
)
PERCENT_COLUMNS = (
    "efficiency",
    "tileBalance",
    "activeTileBalance",
    "loadBalanceEfficiency",
    "communicationEfficiency",
    "parallelEfficiency",
)
HEAT_ROWS = 92
"""The heat map's most rows: tiles are binned ⌈tileCount / 92⌉ to a row (16 for 1,472)."""
DOCS = {"us": "cycles / clockHz × 10⁶"}
OP_CALL_LABELS = {"syncAfter": "gapAfter"}
"""A tt-metal device log's supersteps are op calls: the time after one is the host's, not a
sync (the terminal table's "gap after", ``supersteps_table.OP_CALL_TITLES``)."""
OP_CALL_DOCS = DOCS | {"syncAfter": "cycles from this op call's end to the next one's start"}
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
    bin_size, heat = busy_heat(rows, full.tiles, profile.tile_count)
    critical = tile_critical(profile, epoch=filters.epoch)
    return SuperstepSection(
        id=id,
        result=shown,
        heat=heat,
        heat_bin=bin_size,
        table=_superstep_table(table, f"{id}-table", rows, is_tenstorrent(profile.device or "")),
        split=split,
        longest=longest,
        ends=ends,
        note=note,
        critical=path_sentences(critical),
        candidates=table(
            f"{id}-candidates",
            critical.candidates,
            ("epoch", "edit", "whatIfCycles", "gainCycles", "gainShare"),
            percent=("gainShare",),
            docs=CANDIDATE_DOCS,
            ditto=("epoch",),
        )
        if critical.candidates.height
        else None,
    )


def _superstep_table(table: TableBuilder, id: str, rows: pl.DataFrame, op_calls: bool) -> Table:
    labels = OP_CALL_LABELS if op_calls else {}
    docs = OP_CALL_DOCS if op_calls else DOCS
    return table(
        id, rows, TABLE_COLUMNS, percent=PERCENT_COLUMNS, docs=docs, ditto=("epoch",), labels=labels
    )


CANDIDATE_DOCS = {
    "whatIfCycles": "the epoch's cycles after the edit alone (docs/metrics.md, What-if)",
    "gainCycles": "measured − what-if cycles",
    "gainShare": "gainCycles / measured cycles",
}


def path_sentences(result: CriticalPath) -> tuple[str, ...]:
    """Per epoch: the path's length and its parts' shares, largest first."""
    titles = dict(zip(PATH_PARTS, PATH_TITLES, strict=True))
    sentences = []
    for row in result.epochs.iter_rows(named=True):
        cycles = row["cycles"]
        parts = sorted(PATH_PARTS, key=lambda p: -row[p])
        shares = ", ".join(f"{titles[p]} {row[p] / cycles:.1%}" for p in parts if row[p] and cycles)
        epoch = "—" if row["epoch"] is None else row["epoch"]
        sentences.append(f"Epoch {epoch}: the critical path is {cycles:,} cycles: {shares}.")
    return tuple(sentences)


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


def busy_heat(
    rows: pl.DataFrame, tiles: pl.DataFrame, tile_count: int, max_rows: int = HEAT_ROWS
) -> tuple[int, np.ndarray]:
    """The tile × superstep heat map: bin size B and a (bins × shown supersteps) array of the
    mean over each bin's tiles of busy / cycles (idle tiles 0; docs/metrics.md, "In the HTML
    report"), columns in the order of ``rows``."""
    bin_size = max(1, math.ceil(tile_count / max_rows))
    bins = max(1, math.ceil(tile_count / bin_size))
    heat = np.zeros((bins, rows.height), dtype=np.float64)
    if not rows.height or not tiles.height:
        return bin_size, heat
    columns = rows.select("epoch", "index", "cycles").with_row_index("_column")
    tiles_in_bin = (
        pl.min_horizontal(pl.lit(tile_count), (pl.col("_bin") + 1) * bin_size)
        - pl.col("_bin") * bin_size
    )
    cells = (
        tiles.filter(pl.col("tile") < tile_count)
        .join(columns, on=["epoch", "index"], nulls_equal=True)
        .with_columns(_bin=pl.col("tile") // bin_size)
        .group_by("_bin", "_column")
        .agg(_share=(pl.col("busy") / pl.col("cycles")).sum())
        .with_columns(_share=pl.col("_share") / tiles_in_bin)
    )
    heat[
        cells.get_column("_bin").to_numpy(), cells.get_column("_column").cast(pl.Int64).to_numpy()
    ] = cells.get_column("_share").to_numpy()
    return bin_size, heat
