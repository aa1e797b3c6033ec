"""``tileprof summary``: the group table of one tile dump."""

from __future__ import annotations

from pathlib import Path

import click
import polars as pl

from tileprof.analyses.filters import group_name
from tileprof.analyses.summary import DEFAULT_TOP_SAMPLES
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
from tileprof.commands._store_summary import StoreOptions, store_options
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width, write_text
from tileprof.core.text import shorten
from tileprof.model.profile import Profile
from tileprof.views.renderers import SUMMARY_RENDERERS, SummaryModel, write_rendered


def what_is_present(profile: Profile, shown: int = 12) -> list[str]:
    """The epochs and group names a profile holds, for a filter that matched nothing."""
    samples = profile.samples
    epochs = samples.get_column("epoch").drop_nulls().unique().sort().to_list()
    names = (
        samples.select(group_name().cast(pl.String).alias("name"))
        .get_column("name")
        .drop_nulls()
        .unique()
        .sort()
        .to_list()
    )

    def listed(values: list[object]) -> str:
        more = f", … ({len(values)} in all)" if len(values) > shown else ""
        return (", ".join(shorten(str(v), 60) for v in values[:shown]) + more) or "none"

    return [f"epochs present: {listed(epochs)}", f"groups present: {listed(names)}"]


@click.command("summary", short_help="Per-group statistics of one tile dump.")
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
@store_options
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
    store: StoreOptions | None = None,
) -> None:
    """Rebuild per-group statistics (phase cycles, utilization, p50/p95, tiles) from a DUMP."""
    check_output(output, force)
    filters = filters_from_options(epoch, at, window, kernels, kind)
    if store is not None:
        from tileprof.commands._store_summary import store_summary_text

        if dump is not None or example:
            raise OptionError("give a DUMP, --example or --store, not several")
        if cache or format_in or clock_hz or tile_count:
            raise OptionError(
                "--cache, --format-in, --clock-hz and --tiles read a DUMP, not --store"
            )
        write_text(output, store_summary_text(store, filters, group_by, top, output_format))
        return
    dimensions = dimensions_from_option(group_by)
    profile = load_profile(dump, example, format_in, clock_hz, tile_count, cache=cache, quiet=quiet)
    summary = profile.summary(filters, group_by=dimensions, top=top)
    present = [] if summary.groups.height else what_is_present(profile)
    model = SummaryModel(summary, profile.target, present, terminal_width(output))
    write_rendered(SUMMARY_RENDERERS[output_format], model, output)
