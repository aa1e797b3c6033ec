"""The ``tileprof`` command line: a thin layer of click commands over the Python API.

Errors are caught once, here: a ``TileprofError`` becomes one line on stderr and its exit
code; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import importlib
import sys
import traceback
from typing import Any

import click

from tileprof._version import __version__
from tileprof.errors import TileprofError

_COMMANDS = {
    "summary": "tileprof.commands.summary",
    "runs": "tileprof.commands.runs",
    "convert": "tileprof.commands.convert",
    "report": "tileprof.commands.report",
    "store": "tileprof.commands.store",
    "history": "tileprof.commands.history",
    "diff": "tileprof.commands.diff",
    "trace": "tileprof.commands.trace",
    "supersteps": "tileprof.commands.supersteps",
}
"""Subcommand name -> module defining ``command``; imported only when that command runs (or
help lists it), so ``summary`` does not pay for the report's or the run table's imports."""


class TileprofGroup(click.Group):
    """The top-level group; loads subcommands lazily and turns ``TileprofError`` into a
    one-line message."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in _COMMANDS:
            command = importlib.import_module(_COMMANDS[cmd_name]).command
            self.add_command(command, cmd_name)
        return command

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


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="tileprof")
