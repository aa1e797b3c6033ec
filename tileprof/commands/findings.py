"""``tileprof findings``: what to look at first, from the rule table over every input's
computed metrics (definitions: docs/metrics.md, "Findings")."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import (
    check_output,
    dump_input_options,
    example_inputs,
    filter_options,
    filters_from_options,
    output_options,
    rules_from_option,
    rules_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import FINDINGS_RENDERERS, FindingsModel, write_rendered


@click.command("findings", short_help="What to look at first, by rules over the metrics.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@click.option("--example", is_flag=True, help="Use the bundled reference profile.")
@rules_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(FINDINGS_RENDERERS)),
    default="table",
    show_default=True,
)
@dump_input_options
@filter_options
@output_options
def command(
    paths: tuple[Path, ...],
    example: bool,
    rules_file: Path | None,
    output_format: str,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    epoch: int | None,
    at: int | None,
    window: str | None,
    kernels: tuple[str, ...],
    kind: str | None,
    output: Path | None,
    force: bool,
) -> None:
    """Run the rule table over tile dumps and GPU files in PATHS; each finding cites its
    numbers and threshold, and a rule whose input is missing says why it abstained."""
    from tileprof.analyses.findings import evaluate
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.findings import finding_frames
    from tileprof.model.gather import gather_inputs

    check_output(output, force)
    if not paths and not example:
        raise OptionError("give PATHS... (tile dumps, GPU files) or --example")
    rules = rules_from_option(rules_file)
    filters = filters_from_options(epoch, at, window, kernels, kind)
    example_profile, example_filters = example_inputs(example, filters, clock_hz, tile_count)
    sources = gather_inputs(
        list(paths),
        filters,
        example=example_profile,
        example_filters=example_filters,
        example_name=EXAMPLE_SOURCE,
        format_in=format_in,
        clock_hz=clock_hz,
        tile_count=tile_count,
    )
    findings = evaluate(finding_frames(sources), rules)
    write_rendered(
        FINDINGS_RENDERERS[output_format], FindingsModel(findings, terminal_width(output)), output
    )
