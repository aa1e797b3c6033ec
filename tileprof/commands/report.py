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

from tileprof.analyses.filters import Filters
from tileprof.commands._options import (
    GENERATOR_MARK,
    Output,
    check_report_output,
    checks_option,
    example_inputs,
    example_option,
    file_engine_options,
    filter_options,
    group_by_option,
    is_tileprof_report,
    links_option,
    option,
    output_options,
    read_options,
    rules_option,
    spec_option,
)
from tileprof.core.errors import OptionError

if TYPE_CHECKING:
    from tileprof.analyses.findings import Rule
    from tileprof.analyses.integrity import CheckRules
    from tileprof.core.gpu_events import GpuTimeline
    from tileprof.model.engines import Engine
    from tileprof.model.gather import ReportInputs, TileInput
    from tileprof.model.reading import DumpReading
    from tileprof.views.html import Report
    from tileprof.views.html.diff_page import DiffSection

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
@example_option()
@links_option("TOML file adding or overriding links between runs.")
@spec_option()
@read_options(cache=False)
@filter_options()
@group_by_option()
@output_options(
    output_help=f"Write the page here (default: {DEFAULT_OUTPUT} in the current folder; - for "
    "stdout).",
    force_help="Overwrite an existing output (the default output is replaced when it is a report).",
)
@option(
    "--baseline",
    type=click.Path(path_type=Path),
    default=None,
    help="Add a section comparing the tile dump with BASELINE (a dump, cache or summary "
    "document), as `tileprof diff BASELINE DUMP` would.",
)
@rules_option()
@checks_option()
@file_engine_options()
def command(
    files: tuple[Path, ...],
    example: bool,
    links_path: Path | None,
    read: DumpReading,
    filters: Filters,
    group_by: tuple[str, ...],
    out: Output,
    baseline: Path | None,
    rules: Sequence[Rule],
    checks: CheckRules,
    engine: Engine,
) -> None:
    """Write one self-contained HTML report over tile dumps and GPU run FILES."""
    from tileprof.commands._command_line import command_line
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.gather import InputFile, example_run_files, read_inputs
    from tileprof.views.html import build_report
    from tileprof.views.html.data import generation_time, with_checks
    from tileprof.views.renderers import REPORT_RENDERERS, ReportModel, write_rendered

    generation_time()  # a malformed SOURCE_DATE_EPOCH fails before any input is read
    target = check_report_output(out.path, DEFAULT_OUTPUT, out.force)
    if not files and not example:
        raise OptionError("give FILE... (tile dumps, GPU run files) or --example")
    example_profile, own_filters = example_inputs(example, filters, read)
    paths = [*example_run_files(), *files] if example else list(files)
    inputs = read_inputs(
        paths,
        filters,
        example=example_profile,
        example_filters=own_filters,
        example_name=EXAMPLE_SOURCE,
        read=read,
        links=links_path,
        rules=rules,
        checks=checks,
        engine=engine,
    )
    generated = [InputFile(EXAMPLE_SOURCE, "tile dump (generated)", None, None)] if example else []
    listed = [*generated, *inputs.files]
    report = build_report(
        [t.profile for t in inputs.tiles],
        inputs.runs,
        inputs=listed,
        filters=filters,
        group_by=group_by,
        tile_filters=[t.filters for t in inputs.tiles],
        findings=inputs.findings,
        command=command_line(click.get_current_context()),
    )
    report = with_checks(with_critical(report, inputs), inputs.checks)
    section = None if baseline is None else baseline_section(baseline, inputs.tiles, group_by)
    write_rendered(REPORT_RENDERERS["html"], ReportModel(report, section), target)


def with_breakdown(report: Report, timelines: Sequence[GpuTimeline]) -> Report:
    """The report with the GPU time breakdown of its traces (none: unchanged)."""
    import dataclasses

    from tileprof.model.breakdown import report_breakdown
    from tileprof.views.html.breakdown_data import breakdown_section

    found = report_breakdown(timelines)
    if found is None:
        return report
    return dataclasses.replace(report, breakdown=breakdown_section(found.breakdown, found.job))


def with_critical(report: Report, inputs: ReportInputs) -> Report:
    """The report with the GPU time breakdown and the critical path of each step of its
    traces (none: unchanged)."""
    import dataclasses

    from tileprof.views.html.critical_data import gpu_section

    report = with_breakdown(report, inputs.timelines)
    documents = inputs.critical
    if not documents:
        return report
    traces = [trace for document in documents for trace in document["traces"]]
    section = gpu_section({"edits": [], "traces": traces, "job": None}, id="gpu-critical")
    return dataclasses.replace(report, critical=dataclasses.replace(section, folded=True))


def baseline_section(
    baseline: Path,
    tiles: Sequence[TileInput],
    dimensions: tuple[str, ...],
) -> DiffSection:
    """The comparison of the report's one tile dump with ``baseline``, same filters and
    grouping on both sides."""

    from tileprof.model.diff_inputs import baseline_diff
    from tileprof.views.html.diff_page import diff_section

    if len(tiles) != 1:
        raise OptionError(f"--baseline compares with one tile dump; the report has {len(tiles)}")
    (tile,) = tiles
    diff = baseline_diff(baseline, tile.profile, tile.filters, tile.name, dimensions)
    return diff_section(diff, id="baseline")
