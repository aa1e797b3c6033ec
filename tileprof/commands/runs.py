"""``tileprof runs``: tile groups and GPU runs in one table, and the sets that link them."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._options import (
    Output,
    example_inputs,
    example_option,
    file_engine_options,
    filter_options,
    links_option,
    option,
    output_options,
    read_options,
    spec_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.views.renderers import (
    RUNS_RENDERERS,
    RunsModel,
    check_destination,
    write_rendered,
)

if TYPE_CHECKING:
    from tileprof.model.engines import Engine
    from tileprof.model.reading import DumpReading


@click.command("runs", short_help="One run table of tile dumps and GPU files, linked.")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@example_option()
@output_options(list(RUNS_RENDERERS))
@links_option("TOML file of links to add and classifications to override (docs/runs.md).")
@option("--linked", is_flag=True, help="Print only the linked sets.")
@option(
    "--ops",
    "ops",
    is_flag=True,
    help="Op-level rows of PyTorch traces: FLOPs, GPU time, TFLOP/s and fraction of peak "
    "per (device, op, input dims, dtypes) (docs/runs.md).",
)
@option(
    "--sort",
    type=click.Choice(["total", "lost"]),
    default="total",
    show_default=True,
    help="--ops row order: total GPU time, or time lost to the roofline "
    "((measured - roofline) x calls).",
)
@spec_option()
@read_options(cache=False, quiet=False)
@filter_options()
@file_engine_options()
def command(
    files: tuple[Path, ...],
    example: bool,
    out: Output,
    links_path: Path | None,
    linked: bool,
    ops: bool,
    sort: str,
    read: DumpReading,
    filters: Filters,
    engine: Engine,
) -> None:
    """One run table of tile dumps and GPU files (PyTorch traces, nsys CSV, benchmarks, energy
    reports, run tables), each file's kind detected from its content, and the linked sets."""
    if not files and not example:
        raise OptionError("give FILES (tile dumps, GPU traces, reports) or --example")
    renderer = RUNS_RENDERERS[out.format]
    check_destination(renderer, out.path)
    out.check()
    if ops:
        if example or linked:
            raise OptionError("--ops reads PyTorch traces only: drop --example and --linked")
        return _write_ops(files, out, sort, engine)
    from tileprof.inputs.links_file import load_links
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.gather import gather_inputs, run_table

    links = load_links(links_path) if links_path is not None else None
    example_profile, own_filters = example_inputs(example, filters, read)
    sources = gather_inputs(
        files,
        filters,
        example=example_profile,
        example_filters=own_filters,
        example_name=EXAMPLE_SOURCE,
        read=read,
        engine=engine,
    )
    runs, sets = run_table(sources, links)
    from tileprof.core.roofline import roofline_notes

    notes = [note for s in sources for note in s.runs.notes] + roofline_notes(runs)
    described = [s.describe() for s in sources]
    width = terminal_width(out.path)
    model = RunsModel(runs, sets, notes, described, linked_only=linked, width=width)
    write_rendered(renderer, model, out.path)


def _write_ops(files: tuple[Path, ...], out: Output, sort: str, engine: Engine) -> None:
    """``--ops``: the op rows of every FILE (each a PyTorch trace), in one table."""
    import polars as pl

    from tileprof.model.ops import load_named_ops
    from tileprof.views.renderers import OPS_RENDERERS, OpsModel

    parsed = list(zip(map(str, files), load_named_ops(files, engine), strict=True))
    from tileprof.core.roofline import roofline_notes

    frame = pl.concat([p.frame for _, p in parsed], how="vertical")
    if sort == "lost":
        frame = frame.sort("time_lost_us", descending=True, nulls_last=True, maintain_order=True)
    notes = [n for _, p in parsed for n in p.notes] + roofline_notes(frame)
    sources = [{"file": name, "ops": p.frame.height} for name, p in parsed]
    model = OpsModel(frame, notes, sources, terminal_width(out.path))
    write_rendered(OPS_RENDERERS[out.format], model, out.path)
