"""The profile model: one dump's samples, their interned metadata and the device they ran on.

A ``Profile`` is what every command works from. It loads from any dump format, saves to the
columnar cache layout and reloads from it unchanged; summaries and other views are pure
functions of it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tileprof.filters import Filters, apply_filters
from tileprof.schema import MetadataEntries
from tileprof.summary import DEFAULT_TOP_SAMPLES, Summary, sample_records, summarize

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Profile:
    """A tile-device sample dump, typed and validated."""

    samples: pl.DataFrame
    metadata: tuple[MetadataEntries, ...]
    clock_hz: int | float
    tile_count: int
    source: str | None = None
    format: str | None = None

    @property
    def target(self) -> str:
        """The device as runs and reports name it."""
        return f"tile device ({self.tile_count} tiles @ {_format_hz(self.clock_hz)})"

    def summary(
        self,
        filters: Filters | None = None,
        *,
        group_by: Sequence[str] = (),
        top: int = DEFAULT_TOP_SAMPLES,
        **filter_options: Any,
    ) -> Summary:
        """The group table and header; filters as a ``Filters`` or as its keyword fields."""
        if filter_options:
            if filters is not None:
                raise TypeError("pass filters either as Filters or as keywords, not both")
            filters = Filters(**filter_options)
        return summarize(
            self.samples,
            self.metadata,
            clock_hz=self.clock_hz,
            tile_count=self.tile_count,
            filters=filters,
            group_by=group_by,
            top=top,
            source=self.source,
        )

    def filtered(self, filters: Filters | None) -> pl.DataFrame:
        """The samples that match ``filters``."""
        return apply_filters(self.samples, filters)

    def metadata_of(self, metadata_id: int | None) -> list[dict[str, str]]:
        """One sample's metadata list, as the dump wrote it."""
        if metadata_id is None:
            return []
        return [{"name": n, "value": v} for n, v in self.metadata[metadata_id]]

    def records(self, frame: pl.DataFrame | None = None) -> list[dict[str, Any]]:
        """Samples (all, or those of ``frame``) in the dump's layout, metadata included."""
        return sample_records(self.samples if frame is None else frame, self.metadata)

    def to_pandas(self) -> pd.DataFrame:
        """The sample frame as pandas, with each sample's metadata list (empty when absent)."""
        import numpy as np
        import pandas as pd

        frame = self.samples.drop("metadataId").to_pandas()
        lists = np.empty(len(self.metadata) + 1, dtype=object)
        lists[:-1] = [self.metadata_of(i) for i in range(len(self.metadata))]
        lists[-1] = []
        ids = self.samples.get_column("metadataId").fill_null(len(self.metadata)).to_numpy()
        frame["metadata"] = pd.Series(lists[ids], index=frame.index, dtype=object)
        return frame

    def save(self, path: str | Path) -> None:
        """Write the columnar cache layout (Parquet) atomically; ``tileprof.load`` reads it back."""
        from tileprof.outputs import write_bytes
        from tileprof.parsers.parquet_dump import cache_bytes

        data = cache_bytes(self.samples, self.metadata, self.clock_hz, self.tile_count)
        write_bytes(Path(path), data)


def _format_hz(clock_hz: int | float) -> str:
    for unit, scale in (("GHz", 1e9), ("MHz", 1e6), ("kHz", 1e3)):
        if clock_hz >= scale:
            return f"{clock_hz / scale:g} {unit}"
    return f"{clock_hz:g} Hz"


def load(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
) -> Profile:
    """Read a tile dump in any supported format (``format`` overrides detection).

    ``clock_hz`` and ``tile_count`` override what the dump states; a dump that states neither
    gets the device defaults (1.5 GHz, 1472 tiles). ``quiet=False`` shows a progress bar on a
    terminal's stderr while a large dump is read.
    """
    from tileprof.parsers import read_dump

    parsed, clock, tiles, chosen = read_dump(
        path, format=format, clock_hz=clock_hz, tile_count=tile_count, quiet=quiet
    )
    return Profile(parsed.samples, tuple(parsed.metadata), clock, tiles, str(path), chosen)
