"""``tileprof store add|list|rm``: the profile store of many runs (docs/store.md)."""

from __future__ import annotations

import json
from pathlib import Path

import click

from tileprof.commands._options import dump_input_options
from tileprof.core.errors import OptionError
from tileprof.core.outputs import write_text

store_option = click.option(
    "--store",
    "store_uri",
    required=True,
    metavar="URI",
    help="The store: a folder, or an object-store URI (s3://bucket/path).",
)
label_option = click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="A run label (commit, date, model, …); repeatable.",
)


@click.group("store", short_help="Keep many runs in one store (Delta Lake tables).")
def command() -> None:
    """Keep many runs in one store (Delta Lake tables) for `history` and `summary --store`."""


@command.command("add")
@click.argument("dumps", nargs=-1, required=True, type=click.Path(path_type=Path))
@store_option
@click.option("--run", "run", default=None, metavar="ID", help="Run id (one DUMP only).")
@label_option
@dump_input_options
def add(
    dumps: tuple[Path, ...],
    store_uri: str,
    run: str | None,
    labels: tuple[str, ...],
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
) -> None:
    """Add DUMPs as runs; a dump already stored (same sha256) is skipped and says so."""
    from tileprof.model.store.tables import create_store, parse_labels
    from tileprof.model.store.writes import add_run

    if run is not None and len(dumps) > 1:
        raise OptionError("--run names one run: give one DUMP with it")
    label_map = parse_labels(labels)
    store = create_store(store_uri)
    for dump in dumps:
        result = add_run(
            store,
            dump,
            run=run,
            labels=label_map,
            format=format_in,
            clock_hz=clock_hz,
            tile_count=tile_count,
        )
        click.echo(result.message())


@command.command("list")
@store_option
@label_option
@click.option(
    "--format",
    "output_format",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
)
def list_runs(store_uri: str, labels: tuple[str, ...], output_format: str) -> None:
    """List the runs (oldest first), optionally only those carrying every --label."""
    from tileprof.model.store.tables import open_store, parse_labels, read_runs, select_runs

    runs = select_runs(read_runs(open_store(store_uri)), labels=parse_labels(labels))
    if output_format == "json":
        text = json.dumps([r.to_json() for r in runs], indent=2, ensure_ascii=False) + "\n"
    else:
        from tileprof.views.store_table import render_runs

        text = render_runs(runs)
    write_text(None, text)


@command.command("rm")
@store_option
@click.option("--run", "run", required=True, metavar="ID", help="The run to remove.")
def rm(store_uri: str, run: str) -> None:
    """Remove one run: its record, samples, metadata and statistics."""
    from tileprof.model.store.tables import open_store
    from tileprof.model.store.writes import remove_run

    record = remove_run(open_store(store_uri), run)
    click.echo(f"removed run {record.run} ({record.source})")
