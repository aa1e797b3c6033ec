"""``tileprof trace``: every target on one zoomable timeline, for Perfetto or chrome://tracing."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import (
    check_output,
    dump_input_options,
    filter_options,
    filters_from_options,
    load_profile,
    speed_options,
)
from tileprof.core.errors import OptionError
from tileprof.views.trace import TRACE_FORMATS, trace_format
from tileprof.views.trace.tracks import DEFAULT_MAX_SAMPLES


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
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@click.argument("gpu_traces", nargs=-1, type=click.Path(path_type=Path))
@click.option("--example", is_flag=True, help="Use the bundled reference profile as the DUMP.")
@dump_input_options
@filter_options
@click.option(
    "--align",
    "align",
    multiple=True,
    metavar="start|none|TARGET=OFFSET_US",
    help="start (default): every target begins at 0; none: the sources' own clocks; "
    "TARGET=OFFSET_US shifts one target (process name or GPU trace file name); repeatable.",
)
@click.option(
    "--tile-range",
    default=None,
    metavar="START:END",
    help="Only tiles START ≤ tile < END (or one tile N).",
)
@click.option(
    "--max-samples",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_SAMPLES,
    show_default=True,
    help="Write at most this many samples (the first in time order) and say so.",
)
@speed_options
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help=f"The trace file: {', '.join(TRACE_FORMATS)}.",
)
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
def command(
    dump: Path | None,
    gpu_traces: tuple[Path, ...],
    example: bool,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    epoch: int | None,
    at: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    kind: str | None,
    align: tuple[str, ...],
    tile_range: str | None,
    max_samples: int,
    cache: bool,
    quiet: bool,
    output: Path,
    force: bool,
) -> None:
    """Write the DUMP's samples (one track per tile) and GPU_TRACE kernels as one trace.

    The output's extension picks the format: .pftrace is Perfetto's own (open it in
    ui.perfetto.dev), .json or .json.gz the Chrome trace event format.
    """
    from tileprof.views.trace import build_timeline, write_trace
    from tileprof.views.trace.tracks import parse_alignment

    fmt = trace_format(output)
    check_output(output, force)
    if example and dump is not None:
        gpu_traces = (dump, *gpu_traces)
        dump = None
    filters = filters_from_options(epoch, at, window, kernels, kind)
    alignment = parse_alignment(align)
    tiles = parse_tile_range(tile_range)
    profile = load_profile(dump, example, format_in, clock_hz, tile_count, cache=cache, quiet=quiet)
    timeline = build_timeline(
        profile, filters, gpu_traces, alignment, tile_range=tiles, max_samples=max_samples
    )
    write_trace(output, fmt, timeline)
    for line in timeline.notes:
        click.echo(f"tileprof trace: {line}", err=True)
    tile = timeline.tile
    gpu_slices = sum(g.slices.height for g in timeline.gpus)
    click.echo(
        f"{output}: {tile.slices.height:,} samples on {len(tile.tiles):,} tile tracks "
        f"({tile.overlapping:,} overlapping, on overlap tracks), "
        f"{gpu_slices:,} GPU events on {len(timeline.gpus)} "
        f"device{'' if len(timeline.gpus) == 1 else 's'}"
    )
