"""What work a tile group states: its kernelSpec and the output elements its samples wrote.

The tile device's samples carry their kernel's description in metadata (``kernelSpec``, e.g.
``Gemm { a: f16, rows: large, k: 80, cols: 112, interleaved: true }``, and ``outputElements``).
A group's work is the kernelSpec its samples share (or how many distinct ones they have) and
Σ outputElements over the samples that state it; a group whose samples state neither has no
work here, and the run table says "work unknown" rather than guess one.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tileprof.analyses.filters import group_name
from tileprof.core.schema import MetadataEntries

WORK_SCHEMA: dict[str, pl.DataType] = {
    "name": pl.String(),
    "kernelSpec": pl.String(),
    "kernelSpecs": pl.Int64(),
    "outputElements": pl.Int64(),
}


def _metadata_work(metadata: Sequence[MetadataEntries]) -> pl.DataFrame:
    """One row per interned metadata list (not per sample): its kernelSpec and outputElements."""
    ids, specs, outputs = [], [], []
    for i, entries in enumerate(metadata):
        values = dict(entries)
        out = values.get("outputElements", "").strip()
        ids.append(i)
        specs.append(values.get("kernelSpec") or None)
        outputs.append(int(out) if out.isdigit() else None)
    return pl.DataFrame(
        {"metadataId": ids, "kernelSpec": specs, "outputElements": outputs},
        schema={"metadataId": pl.UInt32, "kernelSpec": pl.String, "outputElements": pl.Int64},
    )


def group_work(samples: pl.DataFrame, metadata: Sequence[MetadataEntries]) -> pl.DataFrame:
    """Per group (``name``, as the summary names groups): the shared kernelSpec (null when the
    samples state none or several), how many distinct ones, and Σ outputElements (null when no
    sample states it)."""
    if samples.height == 0:
        return pl.DataFrame(schema=WORK_SCHEMA)
    joined = samples.select(
        group_name().cast(pl.String).alias("name"), pl.col("metadataId").cast(pl.UInt32)
    ).join(_metadata_work(metadata), on="metadataId", how="left")
    specs = pl.col("kernelSpec").drop_nulls().unique()
    return (
        joined.group_by("name")
        .agg(
            specs.len().cast(pl.Int64).alias("kernelSpecs"),
            pl.when(specs.len() == 1).then(specs.first()).alias("kernelSpec"),
            pl.when(pl.col("outputElements").is_not_null().any())
            .then(pl.col("outputElements").sum())
            .alias("outputElements"),
        )
        .select([pl.col(c).cast(t) for c, t in WORK_SCHEMA.items()])
    )
