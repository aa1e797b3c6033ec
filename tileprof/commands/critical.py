"""``tileprof critical``: the critical path through a tile dump's epochs and what-if edits
(definitions: docs/metrics.md, "Critical path and what-if")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._options import (
    Output,
    checks_option,
    example_filters,
    example_option,
    filter_options,
    min_sync_gap_option,
    output_options,
    read_options,
    what_if_options,
)
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import CRITICAL_RENDERERS, CriticalModel, write_rendered

if TYPE_CHECKING:
    from tileprof.analyses.critical import Edit
    from tileprof.analyses.integrity import CheckRules
    from tileprof.inputs.sources import FileRead
    from tileprof.model.profile import Profile
    from tileprof.model.reading import DumpReading


@click.command("critical", short_help="The critical path of each epoch, and what edits would gain.")
@click.argument("inputs", nargs=-1, type=click.Path(path_type=Path))
@example_option()
@filter_options(("epoch",), epoch="Only this epoch (default: every epoch).")
@min_sync_gap_option()
@what_if_options()
@output_options(list(CRITICAL_RENDERERS), default="table")
@read_options(tiles_alias=False)
@checks_option()
def command(
    inputs: tuple[Path, ...],
    example: bool,
    filters: Filters,
    min_sync_gap: int,
    edits: list[Edit],
    out: Output,
    read: DumpReading,
    checks: CheckRules,
) -> None:
    """The critical path through each epoch's supersteps (each superstep's critical tile and
    the windows between them), the groups on it, and what edits would gain: --what-if
    re-times the epoch without re-running anything, and the single edits are ranked by their
    gain. On PyTorch profiler traces: the critical path of each step's dependency graph, and
    across the ranks of one job through their collectives. A dump or trace whose capture
    check fails where the ranking needs it (tileprof check) gets no ranked edits: it says
    why."""
    from tileprof.model.critical import tile_critical
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.gpu_critical import read_trace
    from tileprof.model.reading import load_profile

    out.check()
    traces = [] if example else [read_trace(path) for path in inputs]
    if traces and all(traces):
        _trace_critical([t for t in traces if t is not None], edits, out, checks)
        return
    if len(inputs) > 1:
        _not_a_trace(next(p for p, t in zip(inputs, traces, strict=True) if t is None))
    dump = inputs[0] if inputs else None
    profile = load_profile(dump, example, read)
    filters = example_filters(filters) if example else filters
    result = tile_critical(profile, epoch=filters.epoch, min_sync_gap=min_sync_gap, edits=edits)
    withheld = tile_withheld(profile, str(dump) if dump else EXAMPLE_SOURCE, checks)
    model = CriticalModel(result, profile.target, terminal_width(out.path), withheld)
    write_rendered(CRITICAL_RENDERERS[out.format], model, out.path)


def _not_a_trace(path: Path) -> None:
    """The error for a file among several that is no trace: unreadable, or of another kind."""
    from tileprof.core.errors import InputError
    from tileprof.inputs import read_bytes

    read_bytes(path)
    raise InputError(
        path,
        None,
        "not a PyTorch profiler trace or nsys export; critical reads one tile dump, or traces",
    )


def _trace_critical(
    paths: list[FileRead], edits: list[Edit], out: Output, checks: CheckRules
) -> None:
    """``critical`` on traces: text, JSON, CSV or HTML (``--format``); each trace's ranked
    edits withheld when its own failed capture checks undermine them."""
    import json

    from tileprof.core.outputs import write_text
    from tileprof.model.gpu_critical import trace_critical
    from tileprof.views.critical_table import gpu_critical_csv, gpu_critical_text

    document = trace_critical(paths, edits, withheld_candidates(paths, checks))
    if out.format == "json":
        text = json.dumps(document, indent=2) + "\n"
    elif out.format == "html":
        from tileprof.views.html import render_critical
        from tileprof.views.html.critical_data import gpu_section

        text = render_critical(gpu_section(document))
    else:
        text = (gpu_critical_csv if out.format == "csv" else gpu_critical_text)(document)
    write_text(out.path, text)


def withheld_candidates(reads: list[FileRead], checks: CheckRules) -> list[list[str]]:
    """Per trace, why its own failed capture checks undermine its ranked edits (none: they
    hold); the checks read each file once more, as ``check`` does."""
    from tileprof.analyses.integrity import undermined
    from tileprof.model.integrity import check_files

    rows = check_files([r.path for r in reads], checks).checks.to_dicts()
    return [
        undermined(row for row in rows if row["input"] == str(r.path)).get("candidates", [])
        for r in reads
    ]


def tile_withheld(profile: Profile, name: str, checks: CheckRules) -> tuple[str, ...]:
    """Why the dump's own failed capture checks undermine its ranked edits (an epoch gap,
    overlapping samples, samples past the span); none: they hold."""
    from tileprof.analyses.integrity import undermined
    from tileprof.analyses.quality import tile_integrity

    rows = tile_integrity(profile.samples, profile.tile_count, name, checks)
    return tuple(undermined(rows).get("candidates", []))
