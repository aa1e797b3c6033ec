"""``tileprof check``: the capture checks of every input, before any verdict is drawn from it
(definitions: docs/metrics.md, "Capture checks"; what a failed check means: docs/reliability.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.commands._options import (
    Output,
    checks_option,
    example_option,
    output_options,
    read_options,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import CHECK_RENDERERS, CheckModel, write_rendered

if TYPE_CHECKING:
    from tileprof.analyses.integrity import CheckRules
    from tileprof.model.reading import DumpReading

EXIT_FAILED = 1
"""A check failed: a verdict on the capture (2 stays for bad input and options)."""


@click.command("check", short_help="Check each capture before any verdict is drawn from it.")
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
@example_option()
@checks_option()
@output_options(list(CHECK_RENDERERS))
@read_options(cache=False)
@click.pass_context
def command(
    ctx: click.Context,
    paths: tuple[Path, ...],
    example: bool,
    checks: CheckRules,
    out: Output,
    read: DumpReading,
) -> None:
    """Count what each capture in PATHS gets wrong (PyTorch traces, nsys exports, Tenstorrent
    reports, tile dumps): each check's count, first places and severity. Exit 1 when a check
    fails (elsewhere the findings leave that input out of what it undermines, and the other
    figures it undermines say so), 0 when every check passes."""
    from tileprof.analyses.integrity import failed
    from tileprof.model.integrity import check_files

    out.check()
    if not paths and not example:
        raise OptionError("give PATHS... (traces, exports, reports, tile dumps) or --example")
    profile = None
    if example:
        from tileprof.model.reading import example_with_device

        profile = example_with_device(read.clock_hz, read.tile_count)
    found = check_files(paths, checks, read, example=profile)
    model = CheckModel(found.checks, terminal_width(out.path), found.unchecked)
    write_rendered(CHECK_RENDERERS[out.format], model, out.path)
    if failed(found.checks).height:
        ctx.exit(EXIT_FAILED)
