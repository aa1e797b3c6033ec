"""Reading the command line's files: one function that both ``runs`` and ``report`` call.

Each file's kind is detected from its content (``tileprof.inputs.detect``). A tile dump
becomes a ``Profile`` and, through its group table, one run per group; a GPU file (latency
benchmarks, energy report, Kineto trace, nsys CSV, run table) becomes its parser's runs.

The ``--format-in`` rule, the same for every command: it names the format of the tile dumps.
A file whose content shows a GPU run source is still read as one; every other file (including
one that detection cannot place) is read as a tile dump in that format.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.analyses.links import Links, linked_sets
from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns, concat_runs, tile_runs
from tileprof.inputs.sources import TILE_DUMP, detect_file_kind, parse_runs
from tileprof.model.profile import Profile, load


@dataclass(frozen=True)
class Source:
    """One input after reading: a tile dump (with its profile and filters) or a GPU run file.

    ``name`` is the file as given (or the example's name); ``runs`` are its rows of the run
    table (for a tile dump, one per group after ``filters``).
    """

    name: str
    path: Path | None
    kind: str
    runs: ParsedRuns
    profile: Profile | None = None
    filters: Filters | None = None

    def describe(self) -> dict[str, Any]:
        """The entry ``runs --format json`` lists under "sources"."""
        return {
            "file": self.name,
            "kind": self.runs.kind,
            "runs": self.runs.frame.height,
            "metadata": self.runs.metadata,
        }


def tile_source_runs(profile: Profile, filters: Filters, source: str) -> ParsedRuns:
    """One run per tile group of ``profile`` after ``filters``."""
    from tileprof.analyses.tile_work import group_work

    summary = profile.summary(filters, top=0)
    work = group_work(profile.filtered(filters), profile.metadata)
    frame = tile_runs(summary, source=source, target=profile.target, work=work)
    notes = [] if summary.groups.height else [f"{source}: no tile samples matched the filters"]
    return ParsedRuns(
        TILE_DUMP,
        frame,
        notes=notes,
        metadata={
            "clockHz": summary.clock_hz,
            "tileCount": summary.tile_count,
            "sampleCount": summary.sample_count,
            "matchedSampleCount": summary.matched_sample_count,
            "filters": list(summary.filters.describe()),
        },
    )


def _kind(path: Path, format_in: str | None) -> tuple[str, bytes | None]:
    """The file's kind by content; with ``format_in``, anything not a run source is a dump."""
    try:
        return detect_file_kind(path)
    except InputError:
        if format_in is None:
            raise
        return TILE_DUMP, None


def gather_inputs(
    paths: Sequence[Path],
    filters: Filters,
    *,
    example: Profile | None = None,
    example_filters: Filters | None = None,
    example_name: str = "example",
    format_in: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    quiet: bool = True,
) -> list[Source]:
    """Every input read once, in command-line order (the example profile first).

    ``filters`` apply to every tile dump (``example_filters`` to the example profile);
    ``clock_hz`` and ``tile_count`` override what the dumps state. ``quiet=False`` lets large
    tile dumps draw the progress bar (``tileprof.core.progress``).
    """
    sources: list[Source] = []
    if example is not None:
        own = example_filters or filters
        runs = tile_source_runs(example, own, example_name)
        sources.append(Source(example_name, None, TILE_DUMP, runs, example, own))
    for path in paths:
        kind, data = _kind(path, format_in)
        if kind == TILE_DUMP or data is None:
            profile = load(
                path, format=format_in, clock_hz=clock_hz, tile_count=tile_count, quiet=quiet
            )
            runs = tile_source_runs(profile, filters, path.name)
            sources.append(Source(str(path), path, TILE_DUMP, runs, profile, filters))
        else:
            sources.append(Source(str(path), path, kind, parse_runs(path, kind, data)))
    return sources


def run_table(sources: Sequence[Source], links: Links | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The run table of ``sources`` in their order, and its linked sets (docs/runs.md)."""
    runs = concat_runs([s.runs.frame for s in sources])
    return runs, linked_sets(runs, links)
