"""``tileprof summary``: the group table of one tile dump."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters, check_epoch, present_epochs_and_groups
from tileprof.analyses.summary import DEFAULT_TOP_SAMPLES
from tileprof.commands._notes import say_notes
from tileprof.commands._options import (
    Output,
    dimensions_from_option,
    example_filters,
    example_option,
    filter_options,
    group_by_option,
    option,
    output_options,
    read_options,
)
from tileprof.commands._store_summary import StoreOptions, store_options
from tileprof.core.errors import OptionError
from tileprof.core.outputs import say_written, terminal_width, write_text
from tileprof.views.renderers import SUMMARY_RENDERERS, SummaryModel, write_rendered

if TYPE_CHECKING:
    from tileprof.model.reading import DumpReading


@click.command("summary", short_help="Per-group statistics of one tile dump.")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@example_option()
@option(
    "--samples",
    "samples",
    type=click.IntRange(min=0),
    default=DEFAULT_TOP_SAMPLES,
    show_default=True,
    help="How many of the longest matched samples the JSON document lists.",
)
@read_options()
@filter_options()
@group_by_option(checked=False)
@output_options(list(SUMMARY_RENDERERS))
@store_options
def command(
    dump: Path | None,
    example: bool,
    samples: int,
    read: DumpReading,
    filters: Filters,
    group_by: tuple[str, ...],
    out: Output,
    store: StoreOptions | None = None,
) -> None:
    """Rebuild per-group statistics (phase cycles, utilization, p50/p95, tiles) from a DUMP."""
    from tileprof.model.reading import load_profile

    out.check()
    if store is not None:
        from tileprof.commands._store_summary import store_summary_text

        if dump is not None or example:
            raise OptionError("give a DUMP, --example or --store, not several")
        if read.cache or read.format_in or read.overrides_device:
            raise OptionError(
                "--cache, --format-in, --clock-hz and --tile-count read a DUMP, not --store"
            )
        width = terminal_width(out.path)
        text = store_summary_text(store, filters, group_by, samples, out.format, width)
        write_text(out.path, text)
        say_written(out.path)
        return
    dimensions = dimensions_from_option(group_by)
    profile = load_profile(dump, example, read)
    say_notes(profile.notes)
    filters = example_filters(filters) if example else filters
    check_epoch(profile.samples, filters.epoch)
    summary = profile.summary(filters, group_by=dimensions, samples=samples)
    present = [] if summary.groups.height else present_epochs_and_groups(profile.samples)
    model = SummaryModel(summary, profile.target, present, terminal_width(out.path))
    write_rendered(SUMMARY_RENDERERS[out.format], model, out.path)
