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

from tileprof.analyses.balance import tile_balance_frame
from tileprof.analyses.filters import Filters, apply_filters, group_name
from tileprof.analyses.quality import tile_quality
from tileprof.analyses.summary import DEFAULT_TOP_SAMPLES, Summary, sample_records, summarize
from tileprof.analyses.timeline import TIME_BINS, active_tiles_frame, occupancy_frame
from tileprof.core.run_schema import tile_target_name
from tileprof.core.schema import MetadataEntries

if TYPE_CHECKING:
    import pandas as pd

    from tileprof.analyses.supersteps import Supersteps


@dataclass(frozen=True, repr=False)
class Profile:
    """A tile-device sample dump, typed and validated."""

    samples: pl.DataFrame
    metadata: tuple[MetadataEntries, ...]
    clock_hz: int | float
    tile_count: int
    source: str | None = None
    format: str | None = None
    device: str | None = None
    """The device's name where the dump states it (``Tenstorrent wormhole_b0``)."""
    notes: tuple[str, ...] = ()
    """What the reader had to tell beside the samples (markers left out, …), one line each."""

    def __repr__(self) -> str:
        """One line for a REPL (the dataclass default printed every sample frame and metadata
        list: 14,580 characters for the reference profile)."""
        counts = self.samples.select(
            epochs=pl.col("epoch").drop_nulls().unique().sort().implode(),
            groups=group_name().n_unique(),
        ).row(0)
        return (
            f"Profile(source={self.source!r}, samples={self.samples.height}, "
            f"tiles={self.tile_count}, clock_hz={self.clock_hz!r}, "
            f"epochs={_epochs_text(counts[0])}, groups={counts[1]})"
        )

    @property
    def target(self) -> str:
        """The device as runs and reports name it."""
        return tile_target_name(self.clock_hz, self.tile_count, self.device)

    def summary(
        self,
        filters: Filters | None = None,
        *,
        group_by: Sequence[str] = (),
        samples: int = DEFAULT_TOP_SAMPLES,
        top: int | None = None,
        **filter_options: Any,
    ) -> Summary:
        """The group table and header; filters as a ``Filters`` or as its keyword fields.

        ``samples``: how many of the longest matched samples the summary lists (the CLI's
        ``--samples``); ``top`` is its old name, deprecated."""
        if top is not None:
            import warnings

            warnings.warn(
                "Profile.summary(top=) is deprecated; use samples= (as the CLI's --samples)",
                DeprecationWarning,
                stacklevel=2,
            )
            samples = top
        return summarize(
            self.samples,
            self.metadata,
            clock_hz=self.clock_hz,
            tile_count=self.tile_count,
            filters=_chosen_filters(filters, filter_options),
            group_by=group_by,
            top=samples,
            source=self.source,
        )

    def supersteps(
        self,
        *,
        epoch: int | None = None,
        min_sync_gap: int = 0,
        window: tuple[int, int] | str | None = None,
        kernels: Sequence[str] | str = (),
        top: int | None = None,
    ) -> Supersteps:
        """The BSP view: supersteps from compute timing, per epoch
        (``tileprof.analyses.supersteps``)."""
        from tileprof.analyses.supersteps import superstep_analysis

        return superstep_analysis(
            self.samples,
            tile_count=self.tile_count,
            clock_hz=self.clock_hz,
            epoch=epoch,
            min_sync_gap=min_sync_gap,
            window=window,
            kernels=kernels,
            top=top,
        )

    def tile_balance(self, filters: Filters | None = None, **filter_options: Any) -> pl.DataFrame:
        """Busy cycles of every tile after the filters: columns ``tile``, ``busyCycles``
        (``tileprof.analyses.balance``; docs/metrics.md, "Tile balance")."""
        matched = self.filtered(_chosen_filters(filters, filter_options))
        return tile_balance_frame(matched, self.tile_count)

    def occupancy(
        self, filters: Filters | None = None, *, bins: int = TIME_BINS, **filter_options: Any
    ) -> pl.DataFrame:
        """The tile × time occupancy map after the filters, one row per busy (tile, bin)
        (``tileprof.analyses.timeline``; docs/metrics.md, "Time bins" and "Charts")."""
        matched = self.filtered(_chosen_filters(filters, filter_options))
        return occupancy_frame(matched, self.tile_count, bins)

    def active_tiles(
        self, filters: Filters | None = None, *, bins: int = TIME_BINS, **filter_options: Any
    ) -> pl.DataFrame:
        """Mean active tiles per time bin and legend group after the filters
        (``tileprof.analyses.timeline``; docs/metrics.md, "Active tiles over time")."""
        matched = self.filtered(_chosen_filters(filters, filter_options))
        return active_tiles_frame(matched, self.tile_count, bins)

    def quality(self) -> pl.DataFrame:
        """The data-quality checks of all samples: ``check``, ``count``, ``status``,
        ``detail`` (``tileprof.analyses.quality``; docs/metrics.md, "Data quality")."""
        return tile_quality(self.samples, self.tile_count, self.source or "(in memory)")

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
        """Write the columnar cache layout (Parquet) atomically; ``tileprof.load`` reads it back.

        The one writer of the layout: the automatic cache and ``convert`` call it too."""
        from tileprof.core.outputs import write_bytes
        from tileprof.inputs.tile.parquet_dump import cache_bytes

        data = cache_bytes(self.samples, self.metadata, self.clock_hz, self.tile_count, self.device)
        write_bytes(Path(path), data)


def _chosen_filters(filters: Filters | None, options: dict[str, Any]) -> Filters | None:
    """Filters given as a ``Filters`` or as its keyword fields (not both)."""
    if not options:
        return filters
    if filters is not None:
        raise TypeError("pass filters either as Filters or as keywords, not both")
    return Filters(**options)


def load(
    path: str | Path,
    *,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
    content: bytes | None = None,
) -> Profile:
    """Read a tile dump in any supported format (``format`` overrides detection).

    ``clock_hz`` and ``tile_count`` override what the dump states; a dump that states neither
    gets the device defaults (1.5 GHz, 1472 tiles). ``quiet=False`` shows a progress bar on a
    terminal's stderr while a large dump is read. ``content``: the file's bytes when the
    caller has read them already (the gatherer reads each input once).
    """
    from tileprof.core.memory import require_room_for_analyses
    from tileprof.inputs import read_dump

    parsed, clock, tiles, chosen = read_dump(
        path,
        format=format,
        clock_hz=clock_hz,
        tile_count=tile_count,
        quiet=quiet,
        content=content,
    )
    header = parsed.header
    require_room_for_analyses(parsed.samples.estimated_size())
    return Profile(
        parsed.samples,
        tuple(parsed.metadata),
        clock,
        tiles,
        str(path),
        chosen,
        header.device,
        header.notes,
    )


def _epochs_text(epochs: Sequence[int]) -> str:
    """The epochs present, listed when few, else their count and range."""
    if len(epochs) <= 8:
        return "[" + ", ".join(map(str, epochs)) + "]"
    return f"{len(epochs)} ({epochs[0]}..{epochs[-1]})"
