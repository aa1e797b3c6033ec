"""``supersteps --format json|csv``: the superstep frames as a document or as rows."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tileprof.analyses.supersteps import Supersteps


def render_json(result: Supersteps, tiles: bool = False) -> str:
    """``{"supersteps": [...], "tiles": [...] (with tiles), "epochs": [...], "options": {...}}``."""
    document = result.to_document(tiles=tiles)
    return json.dumps(document, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def render_csv(result: Supersteps, tiles: bool = False) -> str:
    """One row per superstep, or with ``tiles`` one row per active tile of each superstep."""
    frame = result.tiles if tiles else result.supersteps
    return frame.write_csv(float_precision=None)
