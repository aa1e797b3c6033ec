"""``tileprof convert``: write a dump once in the columnar cache layout (or another dump format).

Parsing a large JSON dump costs seconds; loading the cache layout costs a fraction of that and
does no conversion at all, so a dump that will be read many times is worth converting first.
"""

from __future__ import annotations

from pathlib import Path

import click

from tileprof.commands._options import check_output, dump_input_options, load_profile
from tileprof.core.errors import OptionError
from tileprof.views.writers import WRITE_FORMATS, write_cache, write_dump

TARGETS: tuple[str, ...] = ("cache", *WRITE_FORMATS)
_BY_SUFFIX = {".json": "json", ".ndjson": "ndjson", ".jsonl": "ndjson", ".csv": "csv"}


def target_format(output: Path, to: str | None) -> str:
    """``--to``, else from the output's name: ``.parquet`` (and anything unknown) is the cache."""
    if to is not None:
        return to
    suffixes = [s.lower() for s in output.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    return _BY_SUFFIX.get(suffixes[-1], "cache") if suffixes else "cache"


@click.command("convert", short_help="Convert a dump to the cache layout or another dump format.")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@click.option(
    "--example", is_flag=True, help="Write the bundled reference profile (e.g. example.json.gz)."
)
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path),
    required=True,
    help="The file to write (e.g. dump.parquet).",
)
@click.option(
    "--to",
    type=click.Choice(TARGETS),
    default=None,
    help="Output layout; default from the name (.parquet: the cache layout).",
)
@dump_input_options
@click.option("--force", is_flag=True, help="Overwrite an existing output file.")
@click.option("-q", "--quiet", is_flag=True, help="No progress bar.")
def command(
    dump: Path | None,
    example: bool,
    output: Path,
    to: str | None,
    format_in: str | None,
    clock_hz: float | None,
    tile_count: int | None,
    force: bool,
    quiet: bool,
) -> None:
    """Convert a DUMP (or --example) to the cache layout or another dump format."""
    if str(output) == "-":
        raise OptionError("convert writes a file; give -o FILE")
    check_output(output, force)
    chosen = target_format(output, to)
    profile = load_profile(dump, example, format_in, clock_hz, tile_count, quiet=quiet)
    if chosen == "cache":
        if output.suffix == ".gz":
            raise OptionError("the cache layout is compressed Parquet already; drop the .gz")
        write_cache(profile, output)
    else:
        write_dump(profile, output, chosen)
