"""Data-quality checks: overlapping samples, tiles out of range, missing metadata, run notes.

docs/metrics.md, "HTML report" → "Data quality". Each check is one row of a polars frame:
``check`` (its name), ``count`` (how many things it found), ``status`` ("ok", "info" or
"warn") and ``detail`` (one line saying what they were). The checks of a dump look at all its
samples: filters do not hide problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import polars as pl

QUALITY_SCHEMA: dict[str, pl.DataType] = {
    "check": pl.String(),
    "count": pl.Int64(),
    "status": pl.String(),
    "detail": pl.String(),
}
"""The columns of every quality frame."""


def _checks(rows: list[tuple[str, int, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=QUALITY_SCHEMA, orient="row")


def overlapping_samples(samples: pl.DataFrame) -> tuple[int, int]:
    """Samples that start before an earlier sample of the same tile ends; tiles affected.

    Sorted by (tile, offset, duration), so of two samples starting together the shorter comes
    first and is not flagged (a zero-length one never is, at another's start). Each tile's
    intervals are shifted by tile rank × (span + 1), so one running maximum of ends over the
    whole array restarts at every tile.
    """
    import numpy as np  # here, not at the top: a summary loads this module, never calls it

    if samples.height == 0:
        return 0, 0
    ordered = samples.select("tile", "offset", "duration").sort(["tile", "offset", "duration"])
    tile = ordered["tile"].to_numpy()
    offset = ordered["offset"].to_numpy().astype(np.int64)
    end = offset + ordered["duration"].to_numpy().astype(np.int64)
    low = int(offset.min())
    width = int(end.max()) - low + 1
    rank = np.cumsum(np.r_[0, tile[1:] != tile[:-1]])
    if width * (int(rank[-1]) + 1) >= 2**62:  # would overflow: per-tile window instead
        flagged = (
            ordered.lazy()
            .with_columns(
                prev=(pl.col("offset") + pl.col("duration")).cum_max().shift(1).over("tile")
            )
            .filter(pl.col("offset") < pl.col("prev"))
            .select(n=pl.len(), tiles=pl.col("tile").n_unique())
            .collect()
        )
        return int(flagged["n"][0]), int(flagged["tiles"][0])
    shift = rank * width - low
    covered = np.maximum.accumulate(end + shift)
    hit = np.zeros(tile.size, dtype=bool)
    hit[1:] = (offset[1:] + shift[1:]) < covered[:-1]
    return int(hit.sum()), int(np.unique(tile[hit]).size)


def tile_quality(samples: pl.DataFrame, tile_count: int, name: str) -> pl.DataFrame:
    """Checks on one dump's samples (``name`` heads each detail line)."""
    overlaps, overlap_tiles = overlapping_samples(samples)
    above = samples.filter(pl.col("tile") >= tile_count)
    no_meta = samples["metadataId"].null_count()
    no_useful = samples["usefulCycles"].null_count()

    def status(count: int) -> str:
        return "ok" if count == 0 else "warn"

    return _checks(
        [
            (
                "Samples overlapping on one tile",
                overlaps,
                status(overlaps),
                f"{name}: {overlaps:,} samples start before an earlier sample on the same tile "
                f"ends ({overlap_tiles:,} tiles)",
            ),
            (
                "Tiles above tileCount",
                above.height,
                status(above.height),
                f"{name}: {above.height:,} samples on tiles ≥ {tile_count:,} "
                f"({above['tile'].n_unique() if above.height else 0:,} tiles); "
                "left out of the maps",
            ),
            (
                "Samples with no metadata",
                no_meta,
                "info" if no_meta else "ok",
                f"{name}: {no_meta:,} of {samples.height:,} samples carry no metadata; "
                f"{no_useful:,} carry no usefulCycles",
            ),
        ]
    )


def run_quality(cpu_only_traces: Sequence[str], notes: Sequence[str]) -> pl.DataFrame:
    """CPU-only traces (PyTorch traces with no GPU kernel events) and the parsers' notes."""
    return _checks(
        [
            (
                "CPU-only traces",
                len(cpu_only_traces),
                "info" if cpu_only_traces else "ok",
                "; ".join(cpu_only_traces) if cpu_only_traces else "no trace without GPU events",
            ),
            (
                "Parser notes",
                len(notes),
                "info" if notes else "ok",
                "; ".join(notes) if notes else "nothing to note",
            ),
        ]
    )


# ---------------------------------------------------------------- capture checks (tileprof check)


def tile_integrity(
    samples: pl.DataFrame,
    tile_count: int,
    source: str,
    rules: Any,
    unparsed: Sequence[int] = (),
) -> list[dict[str, Any]]:
    """The capture checks of one dump (``tileprof.analyses.integrity``; docs/metrics.md,
    "Capture checks"): tiles that never appear, epochs with gaps, samples overlapping on a
    tile, samples past the profile span, and the samples whose metadata did not parse
    (``unparsed``: their indices, found by the reader)."""
    from tileprof.analyses.integrity import result

    seen = set(samples.get_column("tile").unique().to_list())
    absent = tile_count - sum(1 for tile in seen if 0 <= tile < tile_count)
    epochs = sorted(samples.get_column("epoch").drop_nulls().unique().to_list())
    gaps = epochs[-1] - epochs[0] + 1 - len(epochs) if epochs else 0
    # The places drawn lazily, the first few only: counted from the distinct tiles and epochs
    # the samples hold, not by walking the 2²⁰ tiles (or 2⁶² epochs) a dump may claim.
    absent_tiles = (t for t in range(tile_count) if t not in seen)
    epoch_set = set(epochs)
    missing = (e for e in range(epochs[0], epochs[-1] + 1) if e not in epoch_set) if epochs else ()
    overlaps = _overlap_rows(samples)
    rule = rules["sample-past-span"]
    past, gap = samples_past_span(
        samples, float(rule.param("gap_share")), float(rule.param("tail_share"))
    )
    return [
        result(
            rules,
            "tile-never-appears",
            source,
            absent,
            (f"tile {t}" for t in absent_tiles),
            f"{absent:,} of {tile_count:,} tiles hold no sample",
        ),
        result(
            rules,
            "epoch-gap",
            source,
            gaps,
            (f"epoch {e}" for e in missing),
            f"{gaps:,} epoch numbers missing between epoch {epochs[0] if epochs else '—'} "
            f"and {epochs[-1] if epochs else '—'}",
        ),
        result(
            rules,
            "overlapping-samples",
            source,
            len(overlaps),
            [f"sample {i}" for i in overlaps],
            f"{len(overlaps):,} samples start before an earlier sample on the same tile ends",
        ),
        result(
            rules,
            "sample-past-span",
            source,
            len(past),
            [f"sample {i}" for i in past],
            f"{len(past):,} samples start after a device-wide idle gap of {gap:,} cycles"
            if past
            else "no device-wide idle gap splits off a tail of the profile",
        ),
        result(
            rules,
            "metadata-unparsed",
            source,
            len(unparsed),
            [f"sample {i}" for i in unparsed],
            f"{len(unparsed):,} samples carry metadata that does not parse (read without it)",
        ),
    ]


def _overlap_rows(samples: pl.DataFrame) -> list[int]:
    """The sample indices ``overlapping_samples`` counts, in sample order."""
    flagged = (
        samples.select("tile", "offset", "duration")
        .with_row_index("sample")
        .sort(["tile", "offset", "duration"])
        .with_columns(prev=(pl.col("offset") + pl.col("duration")).cum_max().shift(1).over("tile"))
        .filter(pl.col("offset") < pl.col("prev"))
        .sort("sample")
    )
    return [int(i) for i in flagged.get_column("sample").to_list()]


def samples_past_span(
    samples: pl.DataFrame, gap_share: float, tail_share: float
) -> tuple[list[int], int]:
    """The samples after the longest device-wide idle gap, when that gap is longer than
    ``gap_share`` × the span before it and they are at most ``tail_share`` of the samples;
    and the gap in cycles (0 when none)."""
    if samples.height < 2:
        return [], 0
    ordered = (
        samples.select("offset", end=pl.col("offset") + pl.col("duration"))
        .with_row_index("sample")
        .sort("offset", "sample")
        .with_columns(reach=pl.col("end").cum_max().shift(1))
        .with_columns(gap=(pl.col("offset") - pl.col("reach")).fill_null(0))
    )
    position = int(ordered["gap"].arg_max() or 0)
    gap = int(ordered["gap"][position])
    before = int(ordered["reach"][position] or 0) - int(ordered["offset"][0])
    tail = ordered.height - position
    if gap <= 0 or gap <= gap_share * before or tail > tail_share * ordered.height:
        return [], 0
    past = ordered.slice(position).sort("sample").get_column("sample")
    return [int(i) for i in past.to_list()], gap
