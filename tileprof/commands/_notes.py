"""Notes a command has for its user (an old option spelling, what ``--example`` chose), held
until the command has succeeded and then printed on stderr, one line each: a command that
fails prints its one error line and nothing else. ``say`` prints every line a command writes on
the terminal itself, with control characters escaped as error lines have them."""

from __future__ import annotations

import click

from tileprof.core.text import escape_control

_KEY = "tileprof.notes"


def note(text: str) -> None:
    """Queue ``tileprof: TEXT`` for the end of the running command (now, outside one)."""
    context = click.get_current_context(silent=True)
    if context is None:
        say(f"tileprof: {text}", err=True)
        return
    context.find_root().meta.setdefault(_KEY, []).append(text)


def say_notes(texts: tuple[str, ...] | list[str]) -> None:
    """Queue each of a reader's notes (``Profile.notes``) for the end of the command."""
    for text in texts:
        note(text)


def flush(context: click.Context) -> None:
    """Print the queued notes (``cli`` calls it once the command has succeeded)."""
    for text in context.find_root().meta.pop(_KEY, []):
        say(f"tileprof: {text}", err=True)


def say(text: str, err: bool = False) -> None:
    """Print ``text`` (lines naming runs, files or kernels from inputs) on stdout or stderr,
    each line's control characters escaped (``\\x1b``): an ESC]0 in a kernel name cannot set the
    window title, nor an ESC[2J clear the screen."""
    click.echo("\n".join(escape_control(line) for line in text.split("\n")), err=err)
