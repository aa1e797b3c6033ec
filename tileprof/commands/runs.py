"""``tileprof runs``: tile groups and GPU runs in one table, and the sets that link them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
import polars as pl

from tileprof.commands._options import (
    check_output,
    dump_input_options,
    filter_options,
    filters_from_options,
    output_options,
)
from tileprof.errors import OptionError
from tileprof.filters import Filters
from tileprof.links import linked_sets, load_links
from tileprof.model import Profile, load
from tileprof.outputs import write_bytes, write_text
from tileprof.reports import runs_data, runs_table
from tileprof.runs import ParsedRuns, concat_runs, tile_runs
from tileprof.sources import TILE_DUMP, load_runs


def tile_source_runs(profile: Profile, filters: Filters, source: str) -> ParsedRuns:
    """One run per tile group of ``profile`` after ``filters``."""
    summary = profile.summary(filters)
    frame = tile_runs(summary, source=source, target=profile.target)
    notes = [] if summary.groups.height else [f"{source}: no tile samples matched the filters"]
    return ParsedRuns(
        TILE_DUMP,
        frame,
        notes=notes,
        metadata={
            "clockHz": summary.clock_hz,
            "tileCount": summary.tile_count,
            "sampleCount": summary.sample_count,
            "matchedSampleCount": summary.matched_sample_count,
            "filters": list(summary.filters.describe()),
        },
    )


@click.command("runs")
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
    type=click.Choice(["table", "json", "csv", "parquet"]),
    default="table",
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
    if output_format == "parquet" and (output is None or str(output) == "-"):
        raise OptionError("--format parquet needs -o FILE")
    check_output(output, force)
    filters = filters_from_options(epoch, at, window, kernels, kind)
    links = load_links(links_path) if links_path is not None else None
    if ops:
        _write_ops(files, example, linked, output_format, output)
        return

    def tile_loader(path: Path) -> ParsedRuns:
        profile = load(path, format=format_in, clock_hz=clock_hz, tile_count=tile_count)
        return tile_source_runs(profile, filters, path.name)

    parsed: list[tuple[str, ParsedRuns]] = []
    if example:
        from tileprof.commands._options import example_filters, load_profile
        from tileprof.examples import EXAMPLE_SOURCE

        profile = load_profile(None, True, None, clock_hz, tile_count)
        example_runs = tile_source_runs(profile, example_filters(filters), EXAMPLE_SOURCE)
        parsed.append((EXAMPLE_SOURCE, example_runs))
    for path in files:
        parsed.append((str(path), load_runs(path, tile_loader=tile_loader)))

    runs = concat_runs([p.frame for _, p in parsed])
    sets = linked_sets(runs, links)
    notes = [note for _, p in parsed for note in p.notes]
    sources: list[dict[str, Any]] = [
        {"file": name, "kind": p.kind, "runs": p.frame.height, "metadata": p.metadata}
        for name, p in parsed
    ]
    if output_format == "json":
        write_text(output, runs_data.render_json(runs, sets, notes, sources, linked_only=linked))
    elif output_format == "csv":
        write_text(output, runs_data.render_csv(sets if linked else runs))
    elif output_format == "parquet":
        assert output is not None
        write_bytes(output, runs_data.render_parquet(sets if linked else runs))
    else:
        write_text(output, runs_table.render(runs, sets, notes, linked_only=linked))


def _write_ops(
    files: tuple[Path, ...], example: bool, linked: bool, output_format: str, output: Path | None
) -> None:
    """``--ops``: the op rows of every FILE (each a PyTorch trace), in one table."""
    from tileprof.ops import load_ops

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
        write_text(output, runs_table.render_ops(frame, notes))
