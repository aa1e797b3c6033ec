"""Tile balance: busy cycles of every tile, so an idle or overloaded tile stands out.

docs/metrics.md, "HTML report" → "Charts", "Tile balance": busy cycles of tile *t* = Σ duration
of the matched samples on *t*, for every tile 0 … tileCount − 1 (idle tiles count 0).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:  # numpy is imported where it computes (a summary loads a profile, not this)
    import numpy as np


@dataclass(frozen=True)
class TileBalance:
    """Busy cycles (Σ duration of matched samples) of every tile 0 … tileCount − 1."""

    busy: np.ndarray
    minimum: int
    mean: float
    maximum: int
    idle_tiles: int
    min_tile: int
    max_tile: int


def tile_balance(matched: pl.DataFrame, tile_count: int) -> TileBalance:
    """Busy cycles per tile, idle tiles included, so an idle or overloaded tile stands out."""
    import numpy as np

    in_range = matched.filter(pl.col("tile") < tile_count)
    busy = np.bincount(
        in_range["tile"].to_numpy().astype(np.int64),
        weights=in_range["duration"].to_numpy().astype(np.float64),
        minlength=tile_count,
    ).astype(np.int64)
    return TileBalance(
        busy=busy,
        minimum=int(busy.min()),
        mean=float(busy.mean()),
        maximum=int(busy.max()),
        idle_tiles=int((busy == 0).sum()),
        min_tile=int(busy.argmin()),
        max_tile=int(busy.argmax()),
    )


def tile_balance_frame(samples: pl.DataFrame, tile_count: int) -> pl.DataFrame:
    """Busy cycles per tile as a frame: ``tile`` (every tile below tileCount) and
    ``busyCycles`` (``Profile.tile_balance``)."""
    import numpy as np

    busy = tile_balance(samples, tile_count).busy
    return pl.DataFrame(
        {"tile": np.arange(tile_count, dtype=np.int64), "busyCycles": busy},
        schema={"tile": pl.Int64, "busyCycles": pl.Int64},
    )
