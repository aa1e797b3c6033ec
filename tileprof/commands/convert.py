"""``tileprof convert``: write a dump once in the columnar cache layout (or another dump format).

Parsing a large JSON dump costs seconds; loading the cache layout costs a fraction of that and
does no conversion at all, so a dump that will be read many times is worth converting first.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import click

from tileprof.commands._options import Output, example_option, option, output_options, read_options
from tileprof.core.errors import OptionError
from tileprof.core.outputs import say_written, write_bytes
from tileprof.model.examples import EXAMPLE_FILES
from tileprof.views.writers import WRITE_FORMATS, write_dump

if TYPE_CHECKING:
    from tileprof.model.reading import DumpReading

TARGETS: tuple[str, ...] = ("cache", *WRITE_FORMATS)
_BY_SUFFIX = {
    ".parquet": "cache",
    ".json": "json",
    ".ndjson": "ndjson",
    ".jsonl": "ndjson",
    ".csv": "csv",
}


def target_format(output: Path, to: str | None) -> str:
    """``--to``, else from the output's name (``.parquet``: the cache layout). A name that
    says no known layout is refused rather than given Parquet under a name that hides it."""
    if to is not None:
        return to
    suffixes = [s.lower() for s in output.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes = suffixes[:-1]
    if not suffixes or suffixes[-1] not in _BY_SUFFIX:
        known = ", ".join(_BY_SUFFIX)
        raise OptionError(
            f"-o {output}: the name says no layout ({known}, optionally .gz; or --to FORMAT)"
        )
    return _BY_SUFFIX[suffixes[-1]]


def write_example_file(name: str, output: Path, with_dump: bool) -> None:
    """``--example-file NAME``: the bundled input's bytes, written as they are."""
    from tileprof.model.examples import example_file

    if with_dump:
        raise OptionError(
            "--example-file writes a bundled file as it is: no DUMP, --example or --to"
        )
    write_bytes(output, example_file(name))
    say_written(output)


@click.command("convert", short_help="Convert a dump to the cache layout or another dump format.")
@click.argument("dump", required=False, type=click.Path(path_type=Path))
@example_option()
@output_options(required=True, output_help="The file to write (e.g. dump.parquet).")
@option(
    "--to",
    type=click.Choice(TARGETS),
    default=None,
    help="Output layout; default from the name (.parquet: the cache layout).",
)
@option(
    "--example-file",
    type=click.Choice(list(EXAMPLE_FILES)),
    default=None,
    help="Write a bundled example input instead, as it is: "
    + "; ".join(f"{name}: {what}" for name, (_, what) in EXAMPLE_FILES.items())
    + ".",
)
@read_options(cache=False)
def command(
    dump: Path | None,
    example: bool,
    out: Output,
    to: str | None,
    example_file: str | None,
    read: DumpReading,
) -> None:
    """Convert a DUMP (or --example) to the cache layout or another dump format, or write a
    bundled example input (--example-file) to try the other commands on."""
    from tileprof.model.reading import load_profile

    output = out.path
    assert output is not None  # required
    if str(output) == "-":
        raise OptionError("convert writes a file; give -o FILE")
    out.check()
    if example_file is not None:
        write_example_file(example_file, output, dump is not None or example or to is not None)
        return
    chosen = target_format(output, to)
    profile = load_profile(dump, example, read)
    if chosen == "cache":
        if output.suffix == ".gz":
            raise OptionError("the cache layout is compressed Parquet already; drop the .gz")
        profile.save(output)
    else:
        write_dump(profile, output, chosen)
    say_written(output)
