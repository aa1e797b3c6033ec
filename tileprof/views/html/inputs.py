"""Sorting the command line's files into tile dumps and GPU run files, and reading them.

``tileprof.model.gather.gather_inputs`` reads them (the same reader as ``tileprof runs``, with the
same ``--format-in`` rule). Tile dumps become profiles (the tile-device sections) and, through
their group table, rows of the run table; GPU files (latency benchmarks, energy reports,
Kineto traces, nsys CSV, run tables) are read by their parsers. The run table and its linked
sets feed the GPU and across-targets sections.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.analyses.links import load_links
from tileprof.inputs._common import stream_content
from tileprof.inputs.gpu import kineto
from tileprof.model.gather import gather_inputs, run_table
from tileprof.model.profile import Profile
from tileprof.views.html.data import InputFile, LinkedSet, RunInputs

EXAMPLE_RUN_FILES: tuple[str, ...] = ("000_55f6fcd9cea2f10a.txt", "003_2d9153cb18ea7de3.txt")
"""The seed GPU files ``report --example`` adds, shipped as package data."""


@dataclass(frozen=True)
class TileInput:
    """One tile dump, with the filters its section uses."""

    profile: Profile
    filters: Filters
    name: str


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report reads: tile profiles, GPU runs and the header's file list."""

    tiles: tuple[TileInput, ...]
    runs: RunInputs | None
    files: tuple[InputFile, ...]


def file_digest(path: str | os.PathLike[str]) -> tuple[int, str]:
    """Size and sha256 of a file, read in chunks (the view model never reads files)."""
    digest = hashlib.sha256()
    size = 0
    stream = stream_content(Path(path))  # a pipe was read once already; it cannot be re-read
    if stream is not None:
        return len(stream), hashlib.sha256(stream).hexdigest()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
            size += len(chunk)
    return size, digest.hexdigest()


def input_file(path: str | os.PathLike[str], kind: str) -> InputFile:
    """The header's entry for one input file."""
    size, sha = file_digest(path)
    return InputFile(str(path), kind, size, sha)


def example_run_files() -> list[Path]:
    """The packaged seed files (latency benchmarks 000, energy report 003)."""
    folder = resources.files("tileprof") / "data" / "seeds"
    return [Path(str(folder / name)) for name in EXAMPLE_RUN_FILES]


def read_inputs(
    paths: Sequence[Path],
    filters: Filters,
    *,
    example: Profile | None = None,
    example_filters: Filters | None = None,
    example_name: str = "example",
    format_in: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    links: Path | None = None,
    quiet: bool = True,
) -> ReportInputs:
    """Read every file once (``tileprof.model.gather.gather_inputs``, the reader ``runs`` uses too);
    tile dumps also give one run per group for the linked sets.

    The run table lists the tile groups first, then the GPU files in command-line order.
    ``quiet=False`` lets large tile dumps draw the progress bar (``tileprof.core.progress``).
    """
    sources = gather_inputs(
        paths,
        filters,
        example=example,
        example_filters=example_filters,
        example_name=example_name,
        format_in=format_in,
        clock_hz=clock_hz,
        tile_count=tile_count,
        quiet=quiet,
    )
    tiles = tuple(
        TileInput(s.profile, s.filters or filters, s.name if s.path is None else s.path.name)
        for s in sources
        if s.profile is not None
    )
    files = tuple(input_file(s.path, s.kind) for s in sources if s.path is not None)
    gpu = [s for s in sources if s.profile is None]
    if not gpu and links is None:
        # Tile dumps only: no run table to build (the tile sections summarise the dumps).
        return ReportInputs(tiles, None, files)
    tile_sources = [s for s in sources if s.profile is not None]
    runs, sets = run_table([*tile_sources, *gpu], load_links(links) if links is not None else None)
    parsed = [s.runs for s in gpu]
    cpu_only = tuple(
        note for p in parsed if p.kind == kineto.KIND and p.frame.height == 0 for note in p.notes
    )
    notes = tuple(note for p in parsed for note in p.notes if note not in cpu_only)
    return ReportInputs(
        tiles,
        RunInputs(runs, linked_from_frame(sets), notes=notes, cpu_only_traces=cpu_only),
        files,
    )


def linked_from_frame(sets: pl.DataFrame) -> tuple[LinkedSet, ...]:
    """``tileprof.analyses.links.linked_sets``'s flat frame (one row per set and target) as sets."""
    out = []
    for (_, label, link_by), frame in sets.group_by(
        ["set_id", "set", "link_by"], maintain_order=True
    ):
        out.append(LinkedSet(f"{label} ({link_by})", frame))
    return tuple(out)
