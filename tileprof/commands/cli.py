"""The ``tileprof`` command line: a thin layer of click commands over the Python API.

Errors are caught once, here: a ``TileprofError`` becomes one line on stderr and its exit
code; ``--debug`` shows the traceback instead. Click's own usage errors (a bad option value, a
missing value, an unknown option or command) are worded the same way, one line with the hint
``(see tileprof COMMAND --help)`` and exit code 2, instead of click's usage block; an unknown
command names the closest one. ``--debug`` is accepted after the subcommand too. A group
given no command (bare ``tileprof``, bare ``tileprof store``) prints its help on stdout and
exits 0, as ``--help`` does.
"""

from __future__ import annotations

import errno
import importlib
import os
import sys
import traceback
from typing import Any

import click

from tileprof.commands._groups import SuggestingGroup
from tileprof.core.errors import EXIT_BAD_INPUT, TileprofError
from tileprof.core.text import escape_control

JEMALLOC_CONF = "_RJEM_MALLOC_CONF"
"""The environment variable polars' allocator (jemalloc, its symbols prefixed ``_rjem_``)
reads its options from when polars is first imported; polars puts its own defaults
(``POLARS_DEFAULT``) first and the variable's value after them, and of an option given
twice jemalloc takes the last (polars' ``__init__``, polars #18088)."""
POLARS_DEFAULT = "dirty_decay_ms:500,muzzy_decay_ms:1000"
"""What polars writes into the variable of any process that imports it, and so into the
environment of every process that one starts (a script or a benchmark that runs tileprof):
found there, it is not a user's setting."""
RETURN_FREED_PAGES = "dirty_decay_ms:0,muzzy_decay_ms:0"
"""Polars' jemalloc keeps the pages a program frees resident for half a second and more
(``POLARS_DEFAULT``), so a command's short-lived frames added up in its peak RSS; with these
it hands them back at once. Measured (docs/performance.md): `breakdown` of the 626 MB Kineto
trace 302-307 -> 272-274 MB and `summary` of a 1M-sample dump 222-230 -> 190-194 MB at the
same time, `runs` of the trace 913-955 -> 827-856 MB at up to a tenth more."""


def allocator_setting(current: str | None) -> str:
    """The jemalloc options for polars in a tileprof command, given the variable's value:
    ``RETURN_FREED_PAGES`` after it, unless a user's own setting names a decay."""
    own = (current or "").removeprefix(POLARS_DEFAULT).lstrip(",")
    if current and "decay_ms" in own:
        return current
    return f"{current},{RETURN_FREED_PAGES}" if current else RETURN_FREED_PAGES


os.environ[JEMALLOC_CONF] = allocator_setting(os.environ.get(JEMALLOC_CONF))  # before polars

_COMMANDS: dict[str, tuple[str, str]] = {
    "summary": ("tileprof.commands.summary", "Per-group statistics of one tile dump."),
    "runs": ("tileprof.commands.runs", "One run table of tile dumps and GPU files, linked."),
    "convert": (
        "tileprof.commands.convert",
        "Convert a dump to the cache layout or another dump format.",
    ),
    "report": ("tileprof.commands.report", "Write one self-contained HTML report of every input."),
    "store": ("tileprof.commands.store", "Keep many runs in one store (Delta Lake tables)."),
    "history": ("tileprof.commands.history", "Trend of figures per run and group from a store."),
    "diff": ("tileprof.commands.diff", "Compare two dumps or summaries, group by group."),
    "trace": ("tileprof.commands.trace", "Write a Perfetto or Chrome trace of every target."),
    "supersteps": (
        "tileprof.commands.supersteps",
        "Cut each epoch into supersteps from compute timing.",
    ),
    "critical": (
        "tileprof.commands.critical",
        "The critical path of each epoch, and what edits would gain.",
    ),
    "findings": (
        "tileprof.commands.findings",
        "What to look at first, by rules over the metrics.",
    ),
    "breakdown": (
        "tileprof.commands.breakdown",
        "GPU time per device and step: busy, idle causes, launches, ranks.",
    ),
    "check": (
        "tileprof.commands.check",
        "Check each capture before any verdict is drawn from it.",
    ),
}
"""Subcommand name -> (module defining ``command``, its one-line help). A module is imported
only when its command runs, so ``summary`` does not pay for the report's or the run table's
imports, and ``tileprof --help`` lists every command from this table without importing any
(the one-line help is the command's own ``short_help``; tests/test_startup.py holds them
equal)."""


class TileprofGroup(SuggestingGroup):
    """The top-level group; loads subcommands lazily and turns ``TileprofError`` into a
    one-line message."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted({*super().list_commands(ctx), *_COMMANDS})

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        command = super().get_command(ctx, cmd_name)
        if command is None and cmd_name in _COMMANDS:
            command = importlib.import_module(_COMMANDS[cmd_name][0]).command
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The commands section of ``--help``, from ``_COMMANDS`` (no command module loaded)."""
        rows = []
        for name in self.list_commands(ctx):
            if name in _COMMANDS and name not in self.commands:
                rows.append((name, _COMMANDS[name][1]))
                continue
            command = self.get_command(ctx, name)
            if command is not None and not command.hidden:
                rows.append((name, command.get_short_help_str(formatter.width)))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        """``--debug`` anywhere before ``--`` counts as the group's own (``tileprof summary
        --debug x.json`` as ``tileprof --debug summary x.json``)."""
        end = args.index("--") if "--" in args else len(args)
        if "--debug" in args[1:end]:
            args = ["--debug", *(a for a in args[:end] if a != "--debug"), *args[end:]]
        ctx.meta[_ARGUMENTS] = list(args)  # for the out-of-memory line, which names the files
        return super().parse_args(ctx, args)

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        try:
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as exc:
            _usage_error(exc)
            raise AssertionError("unreachable") from None

    def invoke(self, ctx: click.Context) -> Any:
        from tileprof.commands import _notes  # not at start-up: --help loads no command module

        try:
            result = super().invoke(ctx)
            _notes.flush(ctx)  # only a command that succeeded has notes to add
            return result
        except click.exceptions.Exit as exc:
            if exc.exit_code == 0:
                _notes.flush(ctx)
            raise
        except click.UsageError as exc:
            if ctx.params.get("debug"):
                traceback.print_exc()
            sub = ctx.invoked_subcommand
            named = exc.ctx is not None and exc.ctx is not ctx
            _usage_error(exc, None if named or sub is None else f"{ctx.command_path} {sub}")
        except TileprofError as exc:
            self._fail(ctx, str(exc), exc.exit_code)
        except MemoryError:
            self._fail(ctx, _out_of_memory(ctx.meta.get(_ARGUMENTS, [])))
        except OSError as exc:
            self._fail(ctx, os_error_text(exc))

    @staticmethod
    def _fail(ctx: click.Context, message: str, code: int = EXIT_BAD_INPUT) -> None:
        """One line on stderr (the traceback first under ``--debug``), then exit ``code``."""
        if ctx.params.get("debug"):
            traceback.print_exc()
        click.echo(f"tileprof: error: {escape_control(message)}", err=True)
        ctx.exit(code)


_ARGUMENTS = "tileprof.arguments"
_OUTPUT_FLAGS = ("-o", "--output")


def _out_of_memory(arguments: list[str]) -> str:
    """The out-of-memory line, naming the input files on the command line (the error may come
    from reading one or from what was made of them)."""
    files = []
    for before, arg in zip(["", *arguments], arguments, strict=False):
        if before in _OUTPUT_FLAGS or any(arg.startswith(f"{flag}=") for flag in _OUTPUT_FLAGS):
            continue  # the file being written (it exists under --force), not an input
        try:
            if os.path.isfile(arg):
                files.append(arg)
        except (OSError, ValueError):
            continue
    where = f"{', '.join(files)}: " if files else ""
    return f"{where}out of memory (try a smaller input, a filter, or the cache layout)"


def _usage_error(exc: click.UsageError, where: str | None = None) -> None:
    """Click's usage error as the one error line, naming where ``--help`` explains it; a
    group given nothing to do prints its help on stdout and exits 0 instead."""
    if isinstance(exc, click.exceptions.NoArgsIsHelpError) and exc.ctx is not None:
        click.echo(exc.ctx.get_help())
        sys.exit(0)
    if where is None:
        where = exc.ctx.command_path if exc.ctx is not None else "tileprof"
    where = " ".join(["tileprof", *where.split()[1:]])  # the program, however it was started
    message = escape_control(exc.format_message())
    click.echo(f"tileprof: error: {message} (see {where} --help)", err=True)
    sys.exit(EXIT_BAD_INPUT)


def os_error_text(exc: OSError) -> str:
    """An ``OSError`` met while reading or writing (a full disk, a vanished file) in one line."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno == errno.ENOSPC:
        reason = "no space left on device (nothing partial was left behind)"
    return f"{exc.filename}: {reason}" if exc.filename else reason


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    """``--version`` as click's ``version_option`` prints it; the installed version is looked
    up here (``importlib.metadata``, ~40 ms), not by every command that starts."""
    if not value or ctx.resilient_parsing:
        return
    from tileprof._version import __version__

    click.echo(f"tileprof, version {__version__}")
    ctx.exit()


@click.group(cls=TileprofGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--debug", is_flag=True, help="Show a traceback with errors.")
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the version and exit.",
)
def cli(debug: bool) -> None:
    """Profile analyzer for tile-based accelerators, side by side with GPU runs."""


def main(argv: list[str] | None = None) -> None:
    """Console-script entry point."""
    from tileprof.core.memory import share_malloc_arenas_under_a_limit

    share_malloc_arenas_under_a_limit()
    cli.main(args=argv if argv is not None else sys.argv[1:], prog_name="tileprof")
