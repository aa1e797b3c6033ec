"""Which kind of run source a file is, and its runs: thin calls into the input registry.

Detection reads content, not names (``tileprof.inputs.detect``: JSON objects by their
top-level keys, CSV by its header line, anything else offered to the tile-dump formats).
``docs/runs.md`` lists the rules.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof.core.errors import InputError
from tileprof.inputs import RUN_INPUTS, detect, is_tile_dump_head, peek
from tileprof.inputs._common import read_bytes
from tileprof.inputs._format import TILE_DUMP

if TYPE_CHECKING:
    from tileprof.core.run_schema import ParsedRuns

__all__ = ["TILE_DUMP", "detect_file_kind", "detect_kind", "load_runs", "parse_runs"]


def detect_kind(path: str | Path, data: bytes) -> str:
    """The kind of run source ``data`` (read from ``path``) is, or "tile dump"; InputError if
    none."""
    found = detect(path, data)
    return TILE_DUMP if found.kind == TILE_DUMP else found.name


def detect_file_kind(path: str | Path) -> tuple[str, bytes | None]:
    """The kind of the file at ``path``, and its content when reading it was needed.

    A tile dump is recognised from its first bytes, so a large dump is read once, by the
    tile loader, not also here; GPU files are small next to it and are read whole.
    """
    head, _, _ = peek(Path(path))
    if is_tile_dump_head(head):
        return TILE_DUMP, None
    data = read_bytes(Path(path))
    return detect_kind(path, data), data


def load_runs(
    path: str | Path, *, tile_loader: Callable[[Path], ParsedRuns] | None = None, **_: Any
) -> ParsedRuns:
    """The runs of one file, whatever its kind; tile dumps go to ``tile_loader``."""
    kind, data = detect_file_kind(path)
    if kind == TILE_DUMP or data is None:
        if tile_loader is None:
            raise InputError(path, None, "tile dumps need the tile core (tileprof.load)")
        return tile_loader(Path(path))
    return parse_runs(path, kind, data)


def parse_runs(path: str | Path, kind: str, data: bytes) -> ParsedRuns:
    """The runs of a GPU run file of ``kind`` (as ``detect_kind`` named it)."""
    for source in RUN_INPUTS:
        if source.name == kind:
            return source.parse(path, data)
    raise InputError(path, None, f"{kind} files hold no GPU runs")
