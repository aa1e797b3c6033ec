"""The one typed frame every dump parser returns.

Columns are declared once (frame name, key in the dump, polars type, whether the dump must
carry it); parsers build frames from these declarations and nothing else. Repeated strings
(kind, operation, kernel) are interned as ``Categorical``; each sample's metadata list is
interned too, as ``metadataId`` into ``Profile.metadata``.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

DEFAULT_CLOCK_HZ = 1_500_000_000
DEFAULT_TILE_COUNT = 1472


@dataclass(frozen=True)
class Column:
    """One column of the sample frame and where it comes from in a dump."""

    name: str
    raw_key: str
    dtype: pl.DataType
    required: bool
    from_metadata: bool = False
    doc: str = ""


SAMPLE_COLUMNS: tuple[Column, ...] = (
    Column("tile", "physicalTile", pl.Int64(), True, doc="physical tile index"),
    Column("offset", "offset", pl.Int64(), True, doc="start, in device cycles"),
    Column("duration", "duration", pl.Int64(), True, doc="length, in device cycles"),
    Column("phase", "phase", pl.Int64(), False, doc="per-tile schedule label (not a superstep)"),
    Column("epoch", "epoch", pl.Int64(), False, doc="run epoch"),
    Column("kind", "kind", pl.Categorical(), False, doc="compute, exchange, ..."),
    Column("operation", "operation", pl.Categorical(), False, doc="graph operation"),
    Column("kernel", "kernel", pl.Categorical(), False, doc="kernel name"),
    Column("usefulCycles", "usefulCycles", pl.Float64(), False, True, "metadata: useful work"),
    Column(
        "physicalWorkCycles",
        "physicalWorkCycles",
        pl.Float64(),
        False,
        True,
        "metadata: issue slots the work occupies",
    ),
    Column("metadataId", "metadata", pl.UInt32(), False, doc="index into Profile.metadata"),
)

SAMPLE_SCHEMA: dict[str, pl.DataType] = {c.name: c.dtype for c in SAMPLE_COLUMNS}
RAW_KEYS: dict[str, str] = {c.name: c.raw_key for c in SAMPLE_COLUMNS}
INTEGER_COLUMNS: tuple[str, ...] = ("tile", "offset", "duration", "phase", "epoch")
STRING_COLUMNS: tuple[str, ...] = ("kind", "operation", "kernel")
METADATA_NUMBER_KEYS: tuple[str, ...] = ("usefulCycles", "physicalWorkCycles")
REQUIRED_RAW_KEYS: tuple[str, ...] = tuple(c.raw_key for c in SAMPLE_COLUMNS if c.required)

COMPUTE_KINDS: tuple[str, ...] = (
    "compute",
    "BRISC",
    "NCRISC",
    "TRISC0",
    "TRISC1",
    "TRISC2",
    "TRISC_0",
    "TRISC_1",
    "TRISC_2",
    "ERISC",
)
"""Sample kinds that count as compute for supersteps: ``compute``, and the RISCs of a
Tenstorrent core, which a tt-metal device log names as a kernel zone's kind (every one of them
runs the op's kernel: an op is the bulk-synchronous step across the cores). Current tt-metal
writes the TRISCs as ``TRISC_0``… (``tracy::RiscType``, printed by name), older logs
``TRISC0``…"""

MetadataEntries = tuple[tuple[str, str], ...]
"""One sample's metadata: ``(name, value)`` string pairs in dump order."""
