"""How the command line reads tile dumps, as one value: ``DumpReading``; and the one dump of
a single-dump command (``load_profile``: ``summary``, ``supersteps``, ``trace``, ``convert``).

Kept apart from ``gather`` and light (no polars, numpy or model import until a dump is
loaded), because every command builds one before it knows whether a dump will be read: a warm
``diff --cache`` reads two summary documents and never loads a profile. ``load_profile`` is
here rather than in ``gather`` (which imports the run sources, links and findings that
``runs`` and ``report`` gather) so that a single-dump command imports only what reads a dump.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof.core.errors import OptionError

if TYPE_CHECKING:
    from tileprof.analyses.filters import Filters
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


def load_profile(path: Path | None, example: bool, read: DumpReading) -> Profile:
    """The dump named on the command line, or the bundled reference profile with ``--example``
    (with the device overrides checked as a dump read with them would be)."""
    if example and path is not None:
        raise OptionError("give a DUMP or --example, not both")
    if path is None and not example:
        raise OptionError("give a DUMP file (or --example for the bundled reference profile)")
    if path is not None:
        return read.load(path)
    if read.cache or read.format_in is not None:
        raise OptionError("--example takes no --cache or --format-in: it is built in memory")
    return example_with_device(read.clock_hz, read.tile_count)


def example_with_device(clock_hz: float | None, tile_count: int | None) -> Profile:
    """The reference profile, with ``--clock-hz``/``--tile-count`` applied and checked."""

    from tileprof.inputs import check_device
    from tileprof.model.examples import example_profile

    profile = example_profile()
    if clock_hz is None and tile_count is None:
        return profile
    source = Path(profile.source or "example")
    clock, tiles = check_device(
        source, profile.samples, profile.clock_hz, profile.tile_count, clock_hz, tile_count
    )
    return dataclasses.replace(profile, clock_hz=clock, tile_count=tiles)


def example_epoch_filters(filters: Filters, note: Callable[[str], None] | None = None) -> Filters:
    """Filters for the reference profile: epoch 1, as seed 004 was summarized, unless
    ``--epoch`` chose another; ``note`` is told so (every command says it the same way)."""

    from tileprof.model.examples import EXAMPLE_EPOCH

    if filters.epoch is not None:
        return filters
    if note is not None:
        note(
            f"--example: epoch {EXAMPLE_EPOCH} of the reference profile, as seed 004 was "
            "summarized (--epoch N for another, --epoch all for every one)"
        )
    return dataclasses.replace(filters, epoch=EXAMPLE_EPOCH)
