"""Errors that end a command with a one-line message and an exit code.

Every failure a user can cause (bad input, bad options, unwritable output) is raised as a
``TileprofError``; ``tileprof.commands.cli.main`` catches it once, prints ``tileprof: error: …`` on
stderr and exits with ``exit_code``. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

from os import PathLike

EXIT_BAD_INPUT = 2
EXIT_ABSTAINED = 3
"""A gate (``diff --fail-on``, ``history --fail-on``) that gave no verdict: a capture check
its figures depend on failed (docs/reliability.md, "Captures that cannot be trusted")."""


class TileprofError(Exception):
    """A failure the user can act on; its message is one line."""

    exit_code: int = EXIT_BAD_INPUT


class InputError(TileprofError):
    """An input file that cannot be read: names the file and the place in it."""

    def __init__(self, path: str | PathLike[str] | None, where: str | None, message: str) -> None:
        self.path = None if path is None else str(path)
        self.where = where
        self.message = message
        super().__init__(self._render())

    def __reduce__(self) -> tuple[type[InputError], tuple[str | None, str | None, str]]:
        """Pickled with its three parts, so that an error raised on a dask worker
        (``model.engines``) reaches the command line as it would from this process."""
        return (type(self), (self.path, self.where, self.message))

    def _render(self) -> str:
        parts = [p for p in (self.path, self.where) if p]
        prefix = ": ".join(parts)
        text = f"{prefix}: {self.message}" if prefix else self.message
        return " ".join(text.split("\n"))


class OptionError(TileprofError):
    """A command-line value that makes no sense (a malformed window, an unknown dimension)."""


class OutputError(TileprofError):
    """An output that cannot be written, or would overwrite a file without ``--force``."""
