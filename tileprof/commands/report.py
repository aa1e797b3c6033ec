"""``tileprof report``: one self-contained HTML utilization report over every input.

The output policy (``_options.check_report_output``): an explicit ``-o FILE`` that exists is
only replaced with ``--force``, as for every command; the default ``tileprof-report.html`` is
replaced freely when it is a tileprof report (it carries the generator mark).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.commands._options import (
    GENERATOR_MARK,
    check_report_output,
    dimensions_from_option,
    dump_input_options,
    example_inputs,
    filter_options,
    filters_from_options,
    group_by_option,
    is_tileprof_report,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import write_text

if TYPE_CHECKING:
    from tileprof.views.html.diff_page import DiffSection
    from tileprof.views.html.inputs import TileInput

__all__ = [
    "DEFAULT_OUTPUT",
    "GENERATOR_MARK",
    "check_default_output",
    "command",
    "is_tileprof_report",
]

DEFAULT_OUTPUT = Path("tileprof-report.html")


def check_default_output(path: Path, force: bool) -> None:
    """The default output may replace an earlier report, never another file (kept for
    callers; ``_options.check_report_output`` holds the policy)."""
    check_report_output(None, path, force)


@click.command("report", short_help="Write one self-contained HTML report of every input.")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option("--example", is_flag=True, help="Use the bundled reference profile.")
@click.option(
    "--links",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML file adding or overriding links between runs.",
)
@dump_input_options
@filter_options
@group_by_option
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    default=None,
    help=f"Write the page here (default: {DEFAULT_OUTPUT} in the current folder; - for stdout).",
)
@click.option(
    "--force",
    is_flag=True,
    help="Overwrite an existing output (the default output is replaced when it is a report).",
)
@click.option(
    "--baseline",
    type=click.Path(path_type=Path),
    default=None,
    help="Add a section comparing the tile dump with BASELINE (a dump, cache or summary "
    "document), as `tileprof diff BASELINE DUMP` would.",
)
@click.option(
    "-q",
    "--quiet",
    is_flag=True,
    help="No progress bar, even for large inputs on a terminal.",
)
def command(
    files: tuple[Path, ...],
    example: bool,
    links: Path | None,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    epoch: int | None,
    at: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    kind: str | None,
    group_by: tuple[str, ...],
    output: Path | None,
    force: bool,
    baseline: Path | None,
    quiet: bool,
) -> None:
    """Write one self-contained HTML report over tile dumps and GPU run FILES."""
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.views.html import build_report, render
    from tileprof.views.html.data import InputFile, generation_time
    from tileprof.views.html.inputs import example_run_files, read_inputs

    generation_time()  # a malformed SOURCE_DATE_EPOCH fails before any input is read
    target = check_report_output(output, DEFAULT_OUTPUT, force)
    if not files and not example:
        raise OptionError("give FILE... (tile dumps, GPU run files) or --example")
    filters = filters_from_options(epoch, at, window, kernels, kind)
    dimensions = dimensions_from_option(group_by)
    example_profile, example_filters = example_inputs(example, filters, clock_hz, tile_count)
    paths = [*example_run_files(), *files] if example else list(files)
    inputs = read_inputs(
        paths,
        filters,
        example=example_profile,
        example_filters=example_filters,
        example_name=EXAMPLE_SOURCE,
        format_in=format_in,
        clock_hz=clock_hz,
        tile_count=tile_count,
        links=links,
        quiet=quiet,
    )
    listed = list(inputs.files)
    if example:
        listed.insert(0, InputFile(EXAMPLE_SOURCE, "tile dump (generated)", None, None))
    report = build_report(
        [t.profile for t in inputs.tiles],
        inputs.runs,
        inputs=listed,
        filters=filters,
        group_by=dimensions,
        tile_filters=[t.filters for t in inputs.tiles],
    )
    section = None
    if baseline is not None:
        section = baseline_section(baseline, inputs.tiles, dimensions, quiet=quiet)
    write_text(target, render(report, baseline=section))
    if str(target) != "-":
        click.echo(str(target.resolve()) if output is None else str(target))


def baseline_section(
    baseline: Path,
    tiles: Sequence[TileInput],
    dimensions: tuple[str, ...],
    *,
    quiet: bool,
) -> DiffSection:
    """The comparison of the report's one tile dump with ``baseline``, same filters and
    grouping on both sides."""
    import dataclasses

    from tileprof.analyses.diff import compare_summaries, tile_side
    from tileprof.analyses.filters import Filters
    from tileprof.inputs.sources import TILE_DUMP
    from tileprof.model.diff_inputs import (
        SUMMARY_DOCUMENT,
        ReadOptions,
        check_kinds,
        input_kind,
        read_side,
    )
    from tileprof.views.html.diff_page import diff_section
    from tileprof.views.html.inputs import file_digest

    if len(tiles) != 1:
        raise OptionError(f"--baseline compares with one tile dump; the report has {len(tiles)}")
    (tile,) = tiles
    kind = input_kind(baseline)
    check_kinds(baseline, kind, Path(tile.name), TILE_DUMP)
    filters = tile.filters
    if kind == SUMMARY_DOCUMENT:  # its groups were filtered when it was written
        filters = Filters(kernels=filters.kernels)
    options = ReadOptions(filters=filters, group_by=dimensions, quiet=quiet)
    before = read_side(baseline, kind, options)
    before = dataclasses.replace(before, sha256=file_digest(baseline)[1])
    source = tile.profile.source
    digest = file_digest(source)[1] if source and Path(source).is_file() else None
    after = tile_side(tile.profile.summary(tile.filters, group_by=dimensions), tile.name, digest)
    return diff_section(compare_summaries(before, after), id="baseline")
