"""``tileprof summary``: the group table of one tile dump."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import (
    check_output,
    dimensions_from_option,
    dump_input_options,
    filter_options,
    filters_from_options,
    group_by_option,
    load_profile,
    output_options,
    speed_options,
)
from tileprof.reports.renderers import SUMMARY_RENDERERS, SummaryModel, write_rendered
from tileprof.summary import DEFAULT_TOP_SAMPLES


@click.command("summary")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@click.option("--example", is_flag=True, help="Use the bundled reference profile.")
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(SUMMARY_RENDERERS)),
    default=next(iter(SUMMARY_RENDERERS)),
    show_default=True,
)
@click.option(
    "--samples",
    "top",
    type=click.IntRange(min=0),
    default=DEFAULT_TOP_SAMPLES,
    show_default=True,
    help="How many of the longest matched samples the JSON document lists.",
)
@dump_input_options
@filter_options
@group_by_option
@speed_options
@output_options
def command(
    dump: Path | None,
    example: bool,
    output_format: str,
    top: int,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    epoch: int | None,
    at: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    kind: str | None,
    group_by: tuple[str, ...],
    cache: bool,
    quiet: bool,
    output: Path | None,
    force: bool,
) -> None:
    """Rebuild per-group statistics (phase cycles, utilization, p50/p95, tiles) from a DUMP."""
    check_output(output, force)
    filters = filters_from_options(epoch, at, window, kernels, kind)
    dimensions = dimensions_from_option(group_by)
    profile = load_profile(dump, example, format_in, clock_hz, tile_count, cache=cache, quiet=quiet)
    summary = profile.summary(filters, group_by=dimensions, top=top)
    write_rendered(SUMMARY_RENDERERS[output_format], SummaryModel(summary, profile.target), output)
