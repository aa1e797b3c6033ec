"""How the command line reads tile dumps, as one value: ``DumpReading``.

Kept apart from ``gather`` and light (no polars, numpy or model import until a dump is
loaded), because every command builds one before it knows whether a dump will be read: a warm
``diff --cache`` reads two summary documents and never loads a profile.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tileprof.model.profile import Profile


@dataclass(frozen=True)
class DumpReading:
    """How tile dumps are read: the command line's ``--format-in``, ``--clock-hz``,
    ``--tile-count``, ``--cache`` and ``-q``, as one value instead of five arguments."""

    format_in: str | None = None
    clock_hz: float | None = None
    tile_count: int | None = None
    cache: bool = False
    quiet: bool = True

    @property
    def overrides_device(self) -> bool:
        return self.clock_hz is not None or self.tile_count is not None

    def load(self, path: Path) -> Profile:
        """One dump (through the automatic cache with ``cache``)."""
        if self.cache:
            from tileprof.model.cache import load_cached

            return load_cached(path, **self.keywords)
        from tileprof.model.profile import load

        return load(path, **self.keywords)

    @property
    def options(self) -> dict[str, Any]:
        """These fields by name (``diff_inputs.ReadOptions`` takes them)."""
        return dataclasses.asdict(self)

    @property
    def keywords(self) -> dict[str, Any]:
        """``tileprof.load``'s keyword arguments."""
        return {
            "format": self.format_in,
            "clock_hz": self.clock_hz,
            "tile_count": self.tile_count,
            "quiet": self.quiet,
        }
