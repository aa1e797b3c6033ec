"""``tileprof runs``: tile groups and GPU runs in one table, and the sets that link them."""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.analyses.links import load_links
from tileprof.commands._options import (
    check_output,
    dump_input_options,
    example_inputs,
    filter_options,
    filters_from_options,
    output_options,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width
from tileprof.model.gather import tile_source_runs as tile_source_runs  # moved; kept importable
from tileprof.views.renderers import (
    RUNS_RENDERERS,
    RunsModel,
    check_destination,
    write_rendered,
)


@click.command("runs", short_help="One run table of tile dumps and GPU files, linked.")
@click.argument("files", nargs=-1, type=click.Path(path_type=Path))
@click.option(
    "--example",
    is_flag=True,
    help="Add the bundled reference tile profile (filtered to epoch 1, as seed 004 was, "
    "unless --epoch is given).",
)
@click.option(
    "--format",
    "output_format",
    type=click.Choice(list(RUNS_RENDERERS)),
    default=next(iter(RUNS_RENDERERS)),
    show_default=True,
)
@click.option(
    "--links",
    "links_path",
    type=click.Path(path_type=Path),
    default=None,
    help="TOML file of links to add and classifications to override (docs/runs.md).",
)
@click.option("--linked", is_flag=True, help="Print only the linked sets.")
@click.option(
    "--ops",
    "ops",
    is_flag=True,
    help="Op-level rows of PyTorch traces: FLOPs, GPU time, TFLOP/s and fraction of peak "
    "per (device, op, input dims, dtypes) (docs/runs.md).",
)
@dump_input_options
@filter_options
@output_options
def command(
    files: tuple[Path, ...],
    example: bool,
    output_format: str,
    links_path: Path | None,
    linked: bool,
    ops: bool,
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
    """One run table of tile dumps and GPU files (PyTorch traces, nsys CSV, benchmarks, energy
    reports, run tables), each file's kind detected from its content, and the linked sets."""
    if not files and not example:
        raise OptionError("give FILES (tile dumps, GPU traces, reports) or --example")
    renderer = RUNS_RENDERERS[output_format]
    check_destination(renderer, output)
    check_output(output, force)
    filters = filters_from_options(epoch, at, window, kernels, kind)
    links = load_links(links_path) if links_path is not None else None
    if ops:
        _write_ops(files, example, linked, output_format, output)
        return
    example_profile, example_filters = example_inputs(example, filters, clock_hz, tile_count)
    from tileprof.model.examples import EXAMPLE_SOURCE
    from tileprof.model.gather import gather_inputs, run_table

    sources = gather_inputs(
        files,
        filters,
        example=example_profile,
        example_filters=example_filters,
        example_name=EXAMPLE_SOURCE,
        format_in=format_in,
        clock_hz=clock_hz,
        tile_count=tile_count,
    )
    runs, sets = run_table(sources, links)
    model = RunsModel(
        runs,
        sets,
        notes=[note for s in sources for note in s.runs.notes],
        sources=[s.describe() for s in sources],
        linked_only=linked,
        width=terminal_width(output),
    )
    write_rendered(renderer, model, output)


def _write_ops(
    files: tuple[Path, ...], example: bool, linked: bool, output_format: str, output: Path | None
) -> None:
    """``--ops``: the op rows of every FILE (each a PyTorch trace), in one table."""
    import polars as pl

    from tileprof.analyses.ops import load_ops
    from tileprof.core.outputs import write_bytes, write_text
    from tileprof.views import runs_data, runs_table

    if example or linked:
        raise OptionError("--ops reads PyTorch traces only: drop --example and --linked")
    parsed = [(str(path), load_ops(path)) for path in files]
    frame = pl.concat([p.frame for _, p in parsed], how="vertical")
    notes = [n for _, p in parsed for n in p.notes]
    if output_format == "json":
        sources = [{"file": name, "ops": p.frame.height} for name, p in parsed]
        write_text(output, runs_data.render_ops_json(frame, notes, sources))
    elif output_format == "csv":
        write_text(output, runs_data.render_csv(frame))
    elif output_format == "parquet":
        assert output is not None
        write_bytes(output, runs_data.render_parquet(frame))
    else:
        width = terminal_width(output) or runs_table.TABLE_WIDTH
        write_text(output, runs_table.render_ops(frame, notes, width=width))
