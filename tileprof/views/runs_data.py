"""``runs`` as data: JSON documents, CSV and Parquet, with nulls kept as nulls."""

from __future__ import annotations

import io
import json
from collections.abc import Sequence
from typing import Any

import polars as pl

from tileprof.views.strict_json import dumps


def _records(frame: pl.DataFrame) -> list[dict[str, Any]]:
    rows = frame.with_columns(pl.col(pl.Enum).cast(pl.String)).to_dicts()
    for row in rows:
        if isinstance(row.get("metadata"), str):
            row["metadata"] = json.loads(row["metadata"])
    return rows


def render_json(
    runs: pl.DataFrame,
    linked: pl.DataFrame,
    notes: Sequence[str] = (),
    sources: Sequence[dict[str, Any]] = (),
    *,
    linked_only: bool = False,
) -> str:
    """``{"sources": […], "runs": […], "linkedSets": […], "notes": […]}``; ``--linked`` keeps
    only ``linkedSets`` and ``notes``. Each run's ``metadata`` is an object again."""
    doc: dict[str, Any] = {}
    if not linked_only:
        doc["sources"] = list(sources)
        doc["runs"] = _records(runs)
    doc["linkedSets"] = _records(linked)
    doc["notes"] = list(notes)
    return dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"


def render_csv(frame: pl.DataFrame) -> str:
    """One row per run (or linked-set row); nulls are empty cells, floats at full precision."""
    return frame.write_csv(float_precision=None)


def render_parquet(frame: pl.DataFrame) -> bytes:
    """The frame as Parquet, types kept (enums become dictionary-encoded strings)."""
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


OP_UNITS: dict[str, str] = {
    "flops": "FLOP",
    "total_flops": "FLOP",
    "time_us": "µs",
    "total_us": "µs",
    "aux_us": "µs",
    "tflops": "10¹² FLOP/s",
    "peak_tflops": "10¹² FLOP/s",
    "bytes": "B (bytes; tables show MB = 10⁶ B, never MiB)",
    "arithmetic_intensity": "FLOP/B",
    "roofline_us": "µs",
    "time_lost_us": "µs",
}
"""The unit of each op-table column that has one (docs/runs.md, "Op rows"; docs/metrics.md,
"Bytes and their units"), written beside the rows in ``--ops --format json``."""


def render_ops_json(
    ops: pl.DataFrame, notes: Sequence[str] = (), sources: Sequence[dict[str, Any]] = ()
) -> str:
    """``{"sources": […], "ops": […], "units": {…}, "notes": […]}``: the op rows, nulls kept,
    and the unit of each column that has one (``OP_UNITS``); a figure that is not finite is
    null with a note, as in every JSON document."""
    doc = {
        "sources": list(sources),
        "ops": _records(ops),
        "units": OP_UNITS,
        "notes": list(notes),
    }
    return dumps(doc, indent=2, ensure_ascii=False, default=str) + "\n"
