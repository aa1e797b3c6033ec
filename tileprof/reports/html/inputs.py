"""Sorting the command line's files into tile dumps and GPU run files.

Tile dumps are recognised by content (``tileprof.parsers.detect_dump_format``). GPU run files
(latency benchmarks, energy reports, Kineto traces, nsys CSV, generic run tables) are read by
issue 3's parsers; this module is the one seam the report uses to reach them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from tileprof.errors import InputError, OptionError
from tileprof.model import Profile, load
from tileprof.parsers import detect_dump_format
from tileprof.parsers._common import read_bytes
from tileprof.reports.html.data import InputFile, RunInputs, input_file


@dataclass(frozen=True)
class ReportInputs:
    """Everything the report reads: tile profiles, GPU runs and the header's file list."""

    profiles: tuple[Profile, ...]
    runs: RunInputs | None
    files: tuple[InputFile, ...]


def read_inputs(
    paths: Sequence[Path],
    *,
    format_in: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
    links: Path | None = None,
) -> ReportInputs:
    """Load each file as a tile dump or, failing that, as a GPU run file."""
    profiles: list[Profile] = []
    files: list[InputFile] = []
    gpu_paths: list[Path] = []
    for path in paths:
        data = read_bytes(path)
        if format_in is not None or detect_dump_format(path, data) is not None:
            profiles.append(load(path, format=format_in, clock_hz=clock_hz, tile_count=tile_count))
            files.append(input_file(path, "tile dump"))
        else:
            gpu_paths.append(path)
    runs = read_run_files(gpu_paths, links, files) if gpu_paths or links else None
    return ReportInputs(tuple(profiles), runs, tuple(files))


def read_run_files(paths: Sequence[Path], links: Path | None, files: list[InputFile]) -> RunInputs:
    """GPU run files as ``RunInputs`` (needs the GPU run parsers of issue 3)."""
    if links is not None:
        raise OptionError("--links: linked sets need the GPU run support (issue 3), not built yet")
    first = paths[0]
    raise InputError(
        first,
        "start of file",
        "not a tile dump; GPU run files need the GPU run parsers (issue 3), not built yet",
    )


def empty_run_inputs() -> RunInputs:
    """No GPU runs."""
    return RunInputs(pl.DataFrame())
