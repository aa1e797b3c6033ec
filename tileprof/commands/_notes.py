"""Notes a command has for its user (an old option spelling, what ``--example`` chose), held
until the command has succeeded and then printed on stderr, one line each: a command that
fails prints its one error line and nothing else."""

from __future__ import annotations

import click

_KEY = "tileprof.notes"


def note(text: str) -> None:
    """Queue ``tileprof: TEXT`` for the end of the running command (now, outside one)."""
    context = click.get_current_context(silent=True)
    if context is None:
        click.echo(f"tileprof: {text}", err=True)
        return
    context.find_root().meta.setdefault(_KEY, []).append(text)


def say_notes(texts: tuple[str, ...] | list[str]) -> None:
    """Queue each of a reader's notes (``Profile.notes``) for the end of the command."""
    for text in texts:
        note(text)


def flush(context: click.Context) -> None:
    """Print the queued notes (``cli`` calls it once the command has succeeded)."""
    for text in context.find_root().meta.pop(_KEY, []):
        click.echo(f"tileprof: {text}", err=True)
