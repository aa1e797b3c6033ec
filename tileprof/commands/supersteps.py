"""``tileprof supersteps``: the BSP view of one tile dump (definitions: docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._notes import say_notes
from tileprof.commands._options import (
    Output,
    example_filters,
    example_option,
    filter_options,
    min_sync_gap_option,
    option,
    output_options,
    per_tile_option,
    read_options,
    top_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import SUPERSTEPS_RENDERERS, SuperstepsModel, write_rendered

if TYPE_CHECKING:
    from tileprof.model.reading import DumpReading


@click.command("supersteps", short_help="Cut each epoch into supersteps from compute timing.")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@example_option()
@filter_options(
    ("epoch", "window", "kernels"),
    epoch="Only this epoch (default: every epoch).",
    window="Show the supersteps overlapping [START, END); segmentation is unchanged.",
    kernels="Show the supersteps (and with --per-tile the tiles) running a matching compute group.",
)
@min_sync_gap_option()
@per_tile_option()
@option(
    "--per-epoch",
    "per_epoch",
    is_flag=True,
    help="Add the per-epoch table (with --format csv: one row per epoch instead).",
)
@top_option("The N longest, longest first.")
@output_options(list(SUPERSTEPS_RENDERERS), default="table")
@read_options(tiles_alias=False)
def command(
    dump: Path | None,
    example: bool,
    filters: Filters,
    min_sync_gap: int,
    per_tile: bool,
    per_epoch: bool,
    top: int | None,
    out: Output,
    read: DumpReading,
) -> None:
    """Cut each epoch into supersteps from compute timing; show where each one's time goes
    and which tile holds it up."""
    from tileprof.model.reading import load_profile

    out.check()
    if per_tile and per_epoch and out.format == "csv":
        raise OptionError("--format csv prints one kind of row: give --per-tile or --per-epoch")
    profile = load_profile(dump, example, read)
    say_notes(profile.notes)
    filters = example_filters(filters) if example else filters
    window = filters.window
    result = profile.supersteps(
        epoch=filters.epoch,
        min_sync_gap=min_sync_gap,
        window=window,
        kernels=filters.kernels,
        top=top,
    )
    model = SuperstepsModel(
        result, profile.target, per_tile, terminal_width(out.path), epochs=per_epoch
    )
    write_rendered(SUPERSTEPS_RENDERERS[out.format], model, out.path)
