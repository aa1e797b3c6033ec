"""``tileprof findings``: what to look at first, from the rule table over every input's
computed metrics (definitions: docs/metrics.md, "Findings")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._options import (
    Output,
    checks_option,
    example_inputs,
    example_option,
    filter_options,
    output_options,
    read_options,
    rules_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import FINDINGS_RENDERERS, FindingsModel, write_rendered

if TYPE_CHECKING:
    from tileprof.analyses.findings import Rule
    from tileprof.analyses.integrity import CheckRules
    from tileprof.model.reading import DumpReading


@click.command("findings", short_help="What to look at first, by rules over the metrics.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@example_option()
@rules_option()
@checks_option()
@output_options(list(FINDINGS_RENDERERS))
@read_options(cache=False)
@filter_options()
def command(
    paths: tuple[Path, ...],
    example: bool,
    rules: Sequence[Rule],
    checks: CheckRules,
    out: Output,
    read: DumpReading,
    filters: Filters,
) -> None:
    """Run the rule table over tile dumps and GPU files in PATHS; each finding cites its
    numbers and threshold, and a rule whose input is missing, or whose input fails a capture
    check (tileprof check), says why it abstained."""
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.gather import capture_checks, gather_inputs, source_findings

    out.check()
    if not paths and not example:
        raise OptionError("give PATHS... (tile dumps, GPU files) or --example")
    example_profile, own_filters = example_inputs(example, filters, read)
    sources = gather_inputs(
        paths,
        filters,
        example=example_profile,
        example_filters=own_filters,
        example_name=EXAMPLE_SOURCE,
        read=read,
        ops=True,
        timelines=True,
        critical=True,
        checks=checks,
    )
    found = source_findings(sources, rules, capture_checks(sources, checks))
    model = FindingsModel(found, terminal_width(out.path))
    write_rendered(FINDINGS_RENDERERS[out.format], model, out.path)
