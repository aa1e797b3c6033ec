"""``tileprof diff``: what changed between two profiles, as a report and as a CI gate."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import click

from tileprof.analyses.diff import DEFAULT_TOP, Diff
from tileprof.analyses.thresholds import ThresholdError, evaluate
from tileprof.commands._options import (
    check_output,
    dimensions_from_option,
    dump_input_options,
    filter_options,
    filters_from_options,
    group_by_option,
    output_options,
    speed_options,
)
from tileprof.core.errors import OptionError
from tileprof.model.diff_inputs import ReadOptions, compare_files
from tileprof.views.renderers import DIFF_RENDERERS, DiffModel, write_rendered

EXIT_BROKEN = 1
"""A --fail-on threshold was broken (2 stays for bad input and options)."""


def broken_thresholds(diff: Diff, sentences: tuple[str, ...]) -> list[str]:
    """One line per broken ``--fail-on`` threshold; a bad sentence is an OptionError."""
    if not sentences:
        return []
    fields = diff.fields
    try:
        breaches = evaluate(sentences, diff.values("before"), diff.values("after"), fields=fields)
    except ThresholdError as exc:
        raise OptionError(f"--fail-on: {exc}") from None
    return [f"broken: {b}" for b in breaches]


@click.command("diff", short_help="Compare two dumps or summaries, group by group.")
@click.argument("before", type=click.Path(path_type=Path))
@click.argument("after", type=click.Path(path_type=Path))
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(DIFF_RENDERERS)),
    default="table",
    show_default=True,
)
@click.option(
    "--match",
    "match",
    multiple=True,
    metavar="OLD=NEW",
    help="Pair a renamed group: OLD names the before side, NEW the after side (globs, "
    "wildcards carried over in order); repeatable.",
)
@click.option(
    "--normalize",
    default=None,
    metavar="REGEX",
    help="Strip what REGEX matches from every name before pairing (e.g. '_c\\d+(_r\\d+)*$').",
)
@click.option(
    "--fail-on",
    "fail_on",
    multiple=True,
    metavar="SENTENCE",
    help="Exit 1 when broken, e.g. 'phaseCycles of * may not rise by more than 5%'; repeatable.",
)
@click.option(
    "--per-op",
    is_flag=True,
    help="GPU sources: compare op rows (PyTorch traces, as `runs --ops`) or kernels grouped "
    "by launching op (other sources) instead of kernels.",
)
@click.option(
    "--top",
    type=click.IntRange(min=1),
    default=DEFAULT_TOP,
    show_default=True,
    help="How many top groups the header's explained share covers.",
)
@dump_input_options
@filter_options
@group_by_option
@speed_options
@output_options
@click.pass_context
def command(
    ctx: click.Context,
    before: Path,
    after: Path,
    output_format: str,
    match: tuple[str, ...],
    normalize: str | None,
    fail_on: tuple[str, ...],
    per_op: bool,
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
    """Compare BEFORE with AFTER: every group added, removed, changed or unchanged.

    Both are tile dumps (or caches, or `summary --format json` documents), or both GPU run
    sources (traces, nsys CSV, run tables). The same filters apply to both sides. Rows are
    sorted by the change in phase cycles (total µs for GPU sources), largest first.
    """
    check_output(output, force)
    options = ReadOptions(
        filters=filters_from_options(epoch, at, window, kernels, kind),
        group_by=dimensions_from_option(group_by),
        format_in=format_in,
        clock_hz=clock_hz,
        tile_count=tile_count,
        cache=cache,
        quiet=quiet,
        per_op=per_op,
    )
    diff = compare_files(before, after, options, match=match, normalize=normalize, top=top)
    broken = broken_thresholds(diff, fail_on)
    if output_format != "table" or (output is not None and str(output) != "-"):
        for line in broken:  # the terminal table lists them first itself
            click.echo(f"tileprof: {line}", err=True)
    if output_format == "html":
        diff = _with_digests(diff)
    write_rendered(DIFF_RENDERERS[output_format], DiffModel(diff, tuple(broken)), output)
    if broken:
        ctx.exit(EXIT_BROKEN)


def _with_digests(diff: Diff) -> Diff:
    """The diff with each side's sha256, which the HTML header shows."""
    from tileprof.views.html.inputs import file_digest

    sides = [
        dataclasses.replace(side, sha256=file_digest(side.label)[1])
        for side in (diff.before, diff.after)
    ]
    return dataclasses.replace(diff, before=sides[0], after=sides[1])
