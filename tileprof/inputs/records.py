"""One tile sample as the JSON and NDJSON dumps write it, typed for msgspec.

The compiled decoder (``native``) builds the frame; this record is what words a dump's error
when the decoder meets one (``json_dump.precise_error``, ``ndjson_dump._line_problem``): the
same sample index or line and field as tileprof has always named. Kept apart so that both dump
modules import it without importing each other.
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from tileprof.inputs._common import MAX_CYCLES

TileIndex = Annotated[int, msgspec.Meta(le=2**31 - 1)]
Cycles = Annotated[int, msgspec.Meta(le=MAX_CYCLES)]
Int64 = Annotated[int, msgspec.Meta(ge=-(2**63), le=2**63 - 1)]


class SampleRecord(msgspec.Struct, gc=False):
    """One sample in the dump's layout; absent optional fields decode as None.

    ``gc=False``: a record holds only scalars, text and raw bytes, so it can never be part of a
    reference cycle, and a million of them need not be tracked (or scanned) by the collector.
    """

    physicalTile: TileIndex
    offset: Cycles
    duration: Cycles
    phase: Int64 | None = None
    epoch: Int64 | None = None
    kind: str | None = None
    operation: str | None = None
    kernel: str | None = None
    metadata: msgspec.Raw = msgspec.Raw()
