"""``tileprof trace``: every target on one zoomable timeline, for Perfetto or chrome://tracing."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters, check_epoch
from tileprof.commands._notes import say
from tileprof.commands._options import (
    Output,
    example_filters,
    example_option,
    filter_options,
    option,
    output_options,
    read_options,
)
from tileprof.core.errors import OptionError
from tileprof.model.trace import DEFAULT_MAX_SAMPLES
from tileprof.views.trace import TRACE_FORMATS, trace_format

if TYPE_CHECKING:
    from tileprof.model.reading import DumpReading


def parse_tile_range(text: str | None) -> tuple[int, int] | None:
    """``--tile-range START:END`` (half-open) or a single tile ``N``."""
    if text is None:
        return None
    start, sep, end = text.partition(":")
    try:
        low = int(start)
        high = int(end) if sep else low + 1
    except ValueError:
        low, high = -1, -1
    if not 0 <= low < high:
        raise OptionError(f"--tile-range {text}: expected START:END with 0 ≤ START < END, or N")
    return low, high


@click.command("trace", short_help="Write a Perfetto or Chrome trace of every target.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@example_option()
@read_options()
@filter_options()
@option(
    "--align",
    "align",
    multiple=True,
    metavar="start|none|TARGET=OFFSET_US",
    help="start (default): every target begins at 0; none: the sources' own clocks; "
    "TARGET=OFFSET_US shifts one target (process name, GPU trace file name or tile); "
    "repeatable.",
)
@option(
    "--tile-range",
    default=None,
    metavar="START:END",
    help="Only tiles START ≤ tile < END (or one tile N).",
)
@option(
    "--max-samples",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SAMPLES,
    show_default=True,
    help="Write at most this many samples (the first in time order) and say so.",
)
@option(
    "--critical-path",
    "critical_path",
    is_flag=True,
    help="Add each PyTorch profiler trace's critical path as a track (see `critical`).",
)
@output_options(required=True, output_help=f"The trace file: {', '.join(TRACE_FORMATS)}.")
def command(
    paths: tuple[Path, ...],
    example: bool,
    read: DumpReading,
    filters: Filters,
    align: tuple[str, ...],
    tile_range: str | None,
    max_samples: int,
    critical_path: bool,
    out: Output,
) -> None:
    """Write a tile dump's samples (one track per tile) and the GPU events of PyTorch
    profiler traces, nsys SQLite exports and rocprofv3 kernel traces as one trace; any of
    them alone, or all together.

    The output's extension picks the format: .pftrace is Perfetto's own (open it in
    ui.perfetto.dev), .json or .json.gz the Chrome trace event format.
    """
    from tileprof.model.trace import build_timeline, parse_alignment, trace_inputs
    from tileprof.views.trace import write_trace

    assert out.path is not None  # required
    fmt = trace_format(out.path)
    out.check()
    alignment = parse_alignment(align)
    tiles = parse_tile_range(tile_range)
    profile, gpu_traces = trace_inputs(paths, example, read)
    filters = example_filters(filters) if example else filters
    if profile is not None:
        check_epoch(profile.samples, filters.epoch)
    timeline = build_timeline(
        profile,
        filters,
        gpu_traces,
        alignment,
        tile_range=tiles,
        max_samples=max_samples,
        critical_path=critical_path,
    )
    write_trace(out.path, fmt, timeline)
    for line in timeline.notes:
        say(f"tileprof trace: {line}", err=True)
    say(f"{out.path}: {timeline.describe()}")
