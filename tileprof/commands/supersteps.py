"""``tileprof supersteps``: the BSP view of one tile dump (definitions: docs/metrics.md)."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import (
    check_output,
    device_input_options,
    load_profile,
    output_options,
    speed_options,
)
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import SUPERSTEPS_RENDERERS, SuperstepsModel, write_rendered


@click.command("supersteps", short_help="Cut each epoch into supersteps from compute timing.")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@click.option("--example", is_flag=True, help="Use the bundled reference profile.")
@click.option("--epoch", type=int, default=None, help="Only this epoch (default: every epoch).")
@click.option(
    "--window",
    default=None,
    metavar="START:END",
    help="Show the supersteps overlapping [START, END); segmentation is unchanged.",
)
@click.option(
    "--kernel",
    "kernels",
    multiple=True,
    metavar="GLOB",
    help="Show the supersteps (and with --tiles the tiles) running a matching compute group.",
)
@click.option(
    "--min-sync-gap",
    type=int,
    default=0,
    show_default=True,
    metavar="CYCLES",
    help="Merge supersteps separated by a compute-free gap shorter than this.",
)
@click.option("--tiles", "show_tiles", is_flag=True, help="Add one row per active tile.")
@click.option("--top", type=int, default=None, metavar="N", help="The N longest, longest first.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(SUPERSTEPS_RENDERERS)),
    default="table",
    show_default=True,
)
@device_input_options("--tile-count")
@speed_options
@output_options
def command(
    dump: Path | None,
    example: bool,
    epoch: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    min_sync_gap: int,
    show_tiles: bool,
    top: int | None,
    output_format: str,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    cache: bool,
    quiet: bool,
    output: Path | None,
    force: bool,
) -> None:
    """Cut each epoch into supersteps from compute timing; show where each one's time goes
    and which tile holds it up."""
    check_output(output, force)
    profile = load_profile(dump, example, format_in, clock_hz, tile_count, cache=cache, quiet=quiet)
    result = profile.supersteps(
        epoch=epoch, min_sync_gap=min_sync_gap, window=window, kernels=kernels, top=top
    )
    model = SuperstepsModel(result, profile.target, show_tiles, terminal_width(output))
    write_rendered(SUPERSTEPS_RENDERERS[output_format], model, output)
