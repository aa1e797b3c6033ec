"""Building the sample frame batch by batch, so large dumps never hold every sample object.

Decoding a sample into a typed msgspec Struct costs a handful of Python objects; a million of
them at once is most of a large dump's peak memory. ``SampleBatches`` takes the decoded records
of one batch, turns them into typed polars columns at once (list comprehensions per field, the
cheapest way out of Python objects), interns each sample's raw metadata text into one table
shared by all batches, and drops the records. Only the columns (8 bytes a value) and the
distinct metadata texts (hundreds, not millions) outlive a batch.

Every JSON-shaped reader uses it: the JSON fast path and the NDJSON streaming reader batch by
batch, the precise JSON path (``json_dump.samples_to_parsed``) as one batch.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import polars as pl

from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs._common import (
    DeviceHeader,
    MetadataInterner,
    ParsedDump,
    PlaceFn,
    build_sample_frame,
    decode_metadata,
    intern_metadata,
)
from tileprof.inputs.records import SampleRecord

DEFAULT_BATCH_ROWS = 100_000
"""Samples decoded at once: large enough to amortise per-batch costs, small enough that a batch's
Python objects (about 0.5 KB a sample) stay far below the frame itself."""

_RAW_COLUMNS: tuple[str, ...] = (
    "tile",
    "offset",
    "duration",
    "phase",
    "epoch",
    "kind",
    "operation",
    "kernel",
)


_TEXT_COLUMNS = frozenset({"kind", "operation", "kernel"})


def record_columns(records: Sequence[SampleRecord]) -> dict[str, pl.Series]:
    """One batch's raw columns: Int64, and String for the text columns.

    One list comprehension per field, then one Series each: of the ways measured (tuples
    through ``attrgetter`` and ``zip``, ``structs.astuple``, ``np.fromiter`` into preallocated
    arrays) the cheapest (docs/performance.md). Text stays ``String`` here (a third of the
    cost of building ``Categorical`` per batch); ``finish`` casts each whole column once.
    """
    values: dict[str, list[object]] = {
        "tile": [r.physicalTile for r in records],
        "offset": [r.offset for r in records],
        "duration": [r.duration for r in records],
        "phase": [r.phase for r in records],
        "epoch": [r.epoch for r in records],
        "kind": [r.kind for r in records],
        "operation": [r.operation for r in records],
        "kernel": [r.kernel for r in records],
    }
    return {
        name: pl.Series(
            name, values.pop(name), dtype=pl.String if name in _TEXT_COLUMNS else pl.Int64
        )
        for name in _RAW_COLUMNS
    }


def metadata_texts(records: Sequence[SampleRecord]) -> list[bytes]:
    """Each record's raw metadata text, to be interned."""
    return [bytes(record.metadata) for record in records]


def intern_columns(records: Sequence[SampleRecord]) -> tuple[pl.DataFrame, list[bytes]]:
    """One batch as a frame of raw columns plus ``metadataId`` into its own distinct metadata
    texts (what a worker process sends back; ``SampleBatches.add_interned`` takes it)."""
    ids, distinct = intern_metadata(metadata_texts(records))
    frame = pl.DataFrame(record_columns(records)).with_columns(
        pl.Series("metadataId", ids, dtype=pl.Int64)
    )
    return frame, [text if isinstance(text, bytes) else text.encode() for text in distinct]


class SampleBatches:
    """Accumulates typed columns and interned metadata ids over batches of decoded records."""

    def __init__(self) -> None:
        self._columns: dict[str, list[pl.Series]] = {name: [] for name in _RAW_COLUMNS}
        self._ids: list[np.ndarray] = []
        self._metadata = MetadataInterner()
        self.rows = 0
        self.batches = 0

    def add(self, records: Sequence[SampleRecord]) -> None:
        """Convert one batch of records to columns and intern its metadata; keeps no record."""
        ids = self._metadata.intern(metadata_texts(records))
        self._append(record_columns(records), ids)

    def add_interned(self, columns: pl.DataFrame, distinct: Sequence[bytes]) -> None:
        """Add one batch decoded elsewhere (a worker process): ``columns`` holds the raw columns
        and ``metadataId`` indexing ``distinct``, the batch's own distinct metadata texts."""
        local = columns["metadataId"].to_numpy()
        remap = self._metadata.intern(distinct)
        ids = (
            np.where(local >= 0, remap[np.maximum(local, 0)], -1)
            if len(remap)
            else np.full(len(local), -1, dtype=np.int64)
        )
        self._append({name: columns[name] for name in _RAW_COLUMNS}, ids)

    def _append(self, columns: dict[str, pl.Series], ids: np.ndarray) -> None:
        for name in _RAW_COLUMNS:
            self._columns[name].append(columns[name])
        self._ids.append(ids)
        self.rows += len(ids)
        self.batches += 1

    def finish(self, path: Path, header: DeviceHeader, place: PlaceFn) -> ParsedDump:
        """The typed frame and metadata table of every batch added, in order."""
        # Column by column, each column's batches joined then dropped: the join never holds a
        # second copy of the whole frame, only of one column.
        columns: dict[str, pl.Series] = {}
        for name in _RAW_COLUMNS:
            chunks = self._columns[name]
            columns[name] = (
                pl.concat(chunks, rechunk=True).cast(SAMPLE_SCHEMA[name])
                if chunks
                else pl.Series(name, [], dtype=SAMPLE_SCHEMA[name])
            )
            chunks.clear()
        ids = np.concatenate(self._ids) if self._ids else np.empty(0, dtype=np.int64)
        self._ids.clear()
        table, useful, physical = decode_metadata(path, self._metadata.distinct, ids, place)
        frame = build_sample_frame(columns, ids, useful, physical)
        return ParsedDump(frame, table, header, place)
