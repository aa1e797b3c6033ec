"""The ``tileprof`` command line: a thin layer of click commands over the Python API.

Errors are caught once, here: a ``TileprofError`` becomes one line on stderr and its exit
code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import sys
import traceback
from typing import Any

import click

from tileprof._version import __version__
from tileprof.errors import TileprofError


class TileprofGroup(click.Group):
    """The top-level group; turns ``TileprofError`` into a one-line message."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except TileprofError as exc:
            if ctx.params.get("debug"):
                traceback.print_exc()
            click.echo(f"tileprof: error: {exc}", err=True)
            ctx.exit(exc.exit_code)


@click.group(cls=TileprofGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show a traceback with errors.")
@click.version_option(__version__, prog_name="tileprof")
def cli(debug: bool) -> None:
    """Profile analyzer for tile-based accelerators, side by side with GPU runs."""


def _register() -> None:
    from tileprof.commands import convert, report, runs, summary

    cli.add_command(summary.command)
    cli.add_command(runs.command)
    cli.add_command(convert.command)
    cli.add_command(report.command)


_register()


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="tileprof")
