"""Time binning, occupancy and active tiles over time: where on the device work ran, when.

Pure functions of a sample frame (docs/metrics.md, "HTML report" → "Time bins", "Legend
groups" and "Charts"). Intervals are binned with numpy difference arrays, so a million samples
cost a few array passes, never a Python loop per sample. ``tile_activity`` gives the arrays the
report draws; ``occupancy_frame`` and ``active_tiles_frame`` give the same numbers as polars
frames (``Profile.occupancy`` and ``Profile.active_tiles``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from tileprof.analyses.filters import group_name

if TYPE_CHECKING:  # numpy is imported where it computes (a summary loads a profile, not this)
    import numpy as np

TIME_BINS = 320
"""Columns of the occupancy map and points of the active-tiles curve."""

LEGEND_GROUPS = 10
"""Groups that get their own colour; the rest share one entry, ``other (N groups)``."""

OTHER = "other"
"""The first word of the legend entry the groups past ``LEGEND_GROUPS`` share."""

IDLE = -1
"""Occupancy-map cell value of a (tile, time bin) where no matched sample runs."""

OCCUPANCY_ROWS = 4096
"""Most rows of the occupancy map: a device of more tiles (up to 2²⁰) gets rows of
⌈tileCount / 4096⌉ consecutive tiles each, so that the map's memory (rows × groups × bins)
follows a bound, not the tileCount a dump claims."""


@dataclass(frozen=True)
class TimeBins:
    """Equal bins of ``width`` cycles from ``start``; the last may reach past ``stop``."""

    start: int
    stop: int
    width: int
    count: int

    @property
    def edges(self) -> np.ndarray:
        """Bin edges in cycles, ``count + 1`` of them."""
        import numpy as np

        return self.start + self.width * np.arange(self.count + 1, dtype=np.int64)

    @property
    def covered(self) -> np.ndarray:
        """Cycles of each bin inside [start, stop): the divisor of a bin's mean."""
        import numpy as np

        edges = self.edges
        return (np.minimum(edges[1:], self.stop) - edges[:-1]).astype(np.float64)


@dataclass(frozen=True)
class OccupancyMap:
    """Per (tile, time bin): the legend index of the group with most cycles there, or IDLE."""

    bins: TimeBins
    legend: tuple[str, ...]
    cells: np.ndarray
    tiles_per_row: int = 1
    """Tiles of one row of ``cells`` (row r holds tiles r × tiles_per_row onwards)."""
    other: str | None = None
    """The legend entry of the groups past the named ones (the last), None when all are named."""


@dataclass(frozen=True)
class ActiveTiles:
    """Mean active tiles per time bin, one series per legend entry (they stack)."""

    bins: TimeBins
    legend: tuple[str, ...]
    series: np.ndarray
    by_kind: dict[str, np.ndarray]
    other: str | None = None
    """As ``OccupancyMap.other``."""


def time_bins(start: int, stop: int, count: int = TIME_BINS) -> TimeBins:
    """``count`` bins of whole cycles covering [start, stop) (one bin for an empty span)."""
    span = max(stop - start, 1)
    width = max(-(-span // count), 1)
    return TimeBins(start, max(stop, start + 1), width, -(-span // width))


def binned_cycles(
    starts: np.ndarray, ends: np.ndarray, keys: np.ndarray, key_count: int, bins: TimeBins
) -> np.ndarray:
    """Cycles of the intervals [start, end) falling in each (key, bin): shape (keys, bins).

    Each interval adds its partial first and last bins directly and its full middle bins
    through a difference array, so the cost is O(intervals + keys × bins) whatever the lengths.
    """
    import numpy as np

    nb, w = bins.count, bins.width
    rel_start = starts - bins.start
    rel_end = ends - bins.start
    b0 = np.clip(rel_start // w, 0, nb - 1)
    b1 = np.clip(np.maximum(rel_end - 1, rel_start) // w, 0, nb - 1)
    base = keys.astype(np.int64) * nb
    size = key_count * nb
    same = b0 == b1
    split = ~same
    s0, s1, sb = b0[split], b1[split], base[split]
    # Partial bins in one pass: whole samples in one bin, and the head and tail of the others.
    direct = np.bincount(
        np.concatenate((base[same] + b0[same], sb + s0, sb + s1)),
        weights=np.concatenate(
            (
                (rel_end - rel_start)[same],
                (s0 + 1) * w - rel_start[split],
                rel_end[split] - s1 * w,
            )
        ).astype(np.float64),
        minlength=size,
    )
    # Full middle bins: +w from the bin after the head, −w from the tail's bin, then cumsum.
    diff = np.bincount(
        np.concatenate((sb + s0 + 1, sb + s1)),
        weights=np.concatenate((np.full(s0.size, w), np.full(s0.size, -w))).astype(np.float64),
        minlength=size + 1,
    )
    full = np.cumsum(diff[:size].reshape(key_count, nb), axis=1)
    return direct[:size].reshape(key_count, nb) + full


def _combinations(samples: pl.DataFrame) -> pl.DataFrame:
    """Work per distinct (kernel, kind) pair, with its group name: a few rows, however many
    samples (grouping categoricals works on their codes, no string per sample)."""
    return (
        samples.group_by(["kernel", "kind"])
        .agg(w=pl.col("duration").sum())
        .with_columns(g=group_name().fill_null("(none)"))
    )


def _legend(combinations: pl.DataFrame, limit: int) -> tuple[tuple[str, ...], str | None]:
    """The ``limit`` groups of most work, then (when there are more) the entry they share,
    ``other (N groups)``, named apart from every group kept (a kernel may be called
    ``other``); with that entry's name, or None."""
    if combinations.height == 0:
        return (), None
    work = (
        combinations.group_by("g").agg(pl.col("w").sum()).sort(["w", "g"], descending=[True, False])
    )
    names = tuple(work["g"].to_list())
    if len(names) <= limit:
        return names, None
    kept = names[:limit]
    other = f"{OTHER} ({len(names) - limit} groups)"
    while other in kept:
        other = f"({other})"
    return (*kept, other), other


def _codes(samples: pl.DataFrame, pairs: pl.DataFrame, values: list[int]) -> np.ndarray:
    """Per sample, the value of its (kernel, kind) pair in ``pairs`` (joined on codes)."""
    table = pairs.select("kernel", "kind").with_columns(_v=pl.Series(values, dtype=pl.Int64))
    joined = samples.select("kernel", "kind").join(
        table, on=["kernel", "kind"], how="left", nulls_equal=True, maintain_order="left"
    )
    return joined["_v"].to_numpy()


def tile_activity(
    matched: pl.DataFrame, tile_count: int, bins_count: int = TIME_BINS
) -> tuple[OccupancyMap | None, ActiveTiles | None]:
    """The occupancy map and the active-tiles curve of the matched samples (tiles in range)."""
    import numpy as np

    in_range = matched.filter(pl.col("tile") < tile_count)
    if in_range.height == 0:
        return None, None
    starts = in_range["offset"].to_numpy().astype(np.int64)
    ends = starts + in_range["duration"].to_numpy().astype(np.int64)
    bins = time_bins(int(starts.min()), int(ends.max()), bins_count)
    pairs = _combinations(in_range)
    legend, other_name = _legend(pairs, LEGEND_GROUPS)
    lookup = {name: i for i, name in enumerate(legend) if name != other_name}
    other = len(legend) - 1  # the shared entry; every group has its own when there is none
    groups = _codes(in_range, pairs, [lookup.get(g, other) for g in pairs["g"].to_list()])
    width = max(1, -(-tile_count // OCCUPANCY_ROWS))
    rows = -(-tile_count // width)
    tiles = in_range["tile"].to_numpy().astype(np.int64) // width
    g = len(legend)
    cycles = binned_cycles(starts, ends, tiles * g + groups, rows * g, bins)
    per_row = cycles.reshape(rows, g, bins.count)
    dominant = per_row.argmax(axis=1).astype(np.int16)
    dominant[per_row.sum(axis=1) <= 0] = IDLE
    covered = bins.covered
    series = per_row.sum(axis=0) / covered
    pair_kinds = pairs["kind"].cast(pl.String).fill_null("(none)").to_list()
    kind_names = sorted(set(pair_kinds))
    kind_keys = _codes(in_range, pairs, [kind_names.index(k) for k in pair_kinds])
    by_kind_cycles = binned_cycles(starts, ends, kind_keys, len(kind_names), bins)
    by_kind = {k: by_kind_cycles[i] / covered for i, k in enumerate(kind_names)}
    occupancy = OccupancyMap(bins, legend, dominant, width, other_name)
    return occupancy, ActiveTiles(bins, legend, series, by_kind, other_name)


def occupancy_frame(samples: pl.DataFrame, tile_count: int, bins: int = TIME_BINS) -> pl.DataFrame:
    """The occupancy map as a frame: one row per (tile, time bin) where a sample runs.

    Columns ``tile``, ``bin``, ``start``, ``stop`` (the bin's cycles) and ``group`` (the legend
    group with most cycles in that cell; docs/metrics.md, "Charts", "Tile × time occupancy").
    Idle cells are left out.
    """
    import numpy as np

    occupancy, _ = tile_activity(samples, tile_count, bins)
    schema = {
        "tile": pl.Int64,
        "bin": pl.Int64,
        "start": pl.Int64,
        "stop": pl.Int64,
        "group": pl.String,
    }
    if occupancy is None:
        return pl.DataFrame(schema=schema)
    tiles, cells = np.nonzero(occupancy.cells != IDLE)
    edges = occupancy.bins.edges
    legend = np.array(occupancy.legend, dtype=object)
    return pl.DataFrame(
        {
            "tile": tiles.astype(np.int64) * occupancy.tiles_per_row,
            "bin": cells.astype(np.int64),
            "start": edges[cells],
            "stop": edges[cells + 1],
            "group": legend[occupancy.cells[tiles, cells]].tolist(),
        },
        schema=schema,
    )


def active_tiles_frame(
    samples: pl.DataFrame, tile_count: int, bins: int = TIME_BINS
) -> pl.DataFrame:
    """Mean active tiles per time bin as a frame: one row per (bin, legend group).

    Columns ``bin``, ``start``, ``stop`` and ``group``, then ``activeTiles`` = Σ cycles of the
    group's samples in the bin / the bin's cycles inside the matched span (docs/metrics.md,
    "Charts", "Active tiles over time"). The groups of one bin add up to its mean active tiles.
    """
    import numpy as np

    _, active = tile_activity(samples, tile_count, bins)
    schema = {
        "bin": pl.Int64,
        "start": pl.Int64,
        "stop": pl.Int64,
        "group": pl.String,
        "activeTiles": pl.Float64,
    }
    if active is None:
        return pl.DataFrame(schema=schema)
    groups, count = len(active.legend), active.bins.count
    index = np.tile(np.arange(count, dtype=np.int64), groups)
    edges = active.bins.edges
    return pl.DataFrame(
        {
            "bin": index,
            "start": edges[index],
            "stop": edges[index + 1],
            "group": np.repeat(np.array(active.legend, dtype=object), count).tolist(),
            "activeTiles": active.series.reshape(-1),
        },
        schema=schema,
    )
