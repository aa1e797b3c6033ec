"""Writing results: atomically, so nothing already on disk is lost or half-written."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from tileprof.errors import OutputError


class Writable(Protocol):
    """Anything bytes can be written to: an open file, a ``gzip.GzipFile``."""

    def write(self, data: bytes, /) -> int: ...


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` and move it over ``path`` only on success.

    A failure while writing leaves any existing file untouched and removes the temporary one.
    """
    target = Path(path)
    if target.is_dir():
        raise OutputError(f"{target} is a folder, not a file")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise OutputError(f"{target}: folder {directory} does not exist")
    try:
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror}") from exc
    try:
        handle: IO[Any] = (
            os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8", newline="")
        )
        with handle:
            yield handle
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, _mode_for(target))
        os.replace(tmp_name, target)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        if isinstance(exc, OSError):
            # A full disk or a vanished folder is the user's to fix: one line, not a traceback.
            raise OutputError(f"{target}: cannot write: {exc.strerror or exc}") from exc
        raise


def _mode_for(target: Path) -> int:
    """The replaced file's mode, or what ``open`` would give a new file (0666 less the umask).

    ``mkstemp`` creates its file 0600; left so, every output would be private to its writer.
    """
    try:
        return target.stat().st_mode & 0o7777
    except OSError:
        umask = os.umask(0)
        os.umask(umask)
        return 0o666 & ~umask


def write_text(path: str | os.PathLike[str] | None, text: str) -> None:
    """Write ``text`` to ``path`` atomically, or to stdout when ``path`` is None or ``-``."""
    if path is None or str(path) == "-":
        sys.stdout.write(text)
        if text and not text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
        return
    with atomic_writer(path) as handle:
        handle.write(text)


def write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` atomically."""
    with atomic_writer(path, binary=True) as handle:
        handle.write(data)
