"""A progress bar on stderr for large inputs, and silence everywhere else.

Reading a 1 GB dump takes long enough that a user wants to see it move; a pipe, a log file or a
test wants no escape codes. So the bar shows only when the input is over
``PROGRESS_THRESHOLD_BYTES``, stderr is a terminal and ``--quiet`` was not given.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Protocol

PROGRESS_THRESHOLD_BYTES = 50 * 1024 * 1024
"""Inputs at or below this size read too fast for a bar to be worth drawing."""


class Reporter(Protocol):
    """What readers call while they work: ``update(done, total)`` in any unit."""

    def __call__(self, done: int, total: int) -> None: ...


def progress_wanted(size: int, *, quiet: bool, stream: IO[str] | None = None) -> bool:
    """Whether to draw a bar for an input of ``size`` bytes on ``stream`` (stderr by default)."""
    if quiet or size <= PROGRESS_THRESHOLD_BYTES:
        return False
    stream = sys.stderr if stream is None else stream
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


@contextmanager
def progress_bar(
    label: str, size: int, *, quiet: bool, stream: IO[str] | None = None
) -> Iterator[Reporter | None]:
    """A reporter drawing a rich bar on ``stream``, or None when no bar is wanted.

    Readers skip all reporting work when they get None, so a quiet run pays nothing.
    """
    if not progress_wanted(size, quiet=quiet, stream=stream):
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TaskProgressColumn, TimeElapsedColumn

    console = Console(file=sys.stderr if stream is None else stream)
    with Progress(
        "[progress.description]{task.description}",
        BarColumn(),
        TaskProgressColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        task = bar.add_task(label, total=None)

        def report(done: int, total: int) -> None:
            bar.update(task, completed=done, total=total)

        yield report
