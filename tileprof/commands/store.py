"""``tileprof store add|list|rm|vacuum``: the profile store of many runs (docs/store.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.commands._groups import SuggestingGroup
from tileprof.commands._notes import say
from tileprof.commands._options import (
    format_only,
    label_option,
    read_options,
    run_option,
    store_uri_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import write_text

if TYPE_CHECKING:
    from tileprof.model.reading import DumpReading

STORE_LIST_FORMATS = ("table", "json")
"""The names of ``tileprof.views.renderers.STORE_LIST_RENDERERS``."""


@click.group(
    "store", cls=SuggestingGroup, short_help="Keep many runs in one store (Delta Lake tables)."
)
def command() -> None:
    """Keep many runs in one store (Delta Lake tables) for `history` and `summary --store`."""


@command.command("add")
@click.argument("dumps", nargs=-1, required=True, type=click.Path(path_type=Path))
@store_uri_option()
@run_option(multiple=False, help="Run id (one DUMP only).")
@label_option()
@read_options(cache=False, quiet=False)
def add(
    dumps: tuple[Path, ...],
    store_uri: str,
    run: str | None,
    labels: tuple[str, ...],
    read: DumpReading,
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
            format=read.format_in,
            clock_hz=read.clock_hz,
            tile_count=read.tile_count,
        )
        say(result.message())


@command.command("list")
@store_uri_option()
@label_option()
@format_only(STORE_LIST_FORMATS)
def list_runs(store_uri: str, labels: tuple[str, ...], output_format: str) -> None:
    """List the runs (oldest first), optionally only those carrying every --label."""
    from tileprof.model.store.tables import open_store, parse_labels, read_runs, select_runs
    from tileprof.views.renderers import STORE_LIST_RENDERERS

    runs = select_runs(read_runs(open_store(store_uri)), labels=parse_labels(labels))
    text = STORE_LIST_RENDERERS[output_format].render(runs)
    assert isinstance(text, str)
    write_text(None, text)


@command.command("rm")
@store_uri_option()
@run_option(multiple=False, required=True, help="The run to remove.")
def rm(store_uri: str, run: str) -> None:
    """Remove one run: its record, samples, metadata and statistics."""
    from tileprof.model.store.tables import open_store
    from tileprof.model.store.writes import remove_run

    say(remove_run(open_store(store_uri), run))


@command.command("vacuum")
@store_uri_option()
@click.option(
    "--retain-hours",
    type=click.IntRange(min=0),
    default=168,
    show_default=True,
    help="Keep every file a version of the last H hours needs (0: only the current version).",
)
@click.option("--dry-run", is_flag=True, help="Compact nothing; count what would be deleted.")
def vacuum(store_uri: str, retain_hours: int, dry_run: bool) -> None:
    """Compact each table's small files, then delete files no kept version needs."""
    from tileprof.model.store.tables import open_store
    from tileprof.model.store.vacuum import vacuum_store

    for table in vacuum_store(open_store(store_uri), retain_hours=retain_hours, dry_run=dry_run):
        say(table.line(dry_run))
