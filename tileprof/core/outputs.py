"""Writing results: atomically, so nothing already on disk is lost or half-written.

A regular file (or a new one) is written to a temporary file beside it and renamed over it on
success. Anything else is written the way shell redirection would: through a symbolic link to
what it points at (the link stays), and straight into a character device (``/dev/stdout``,
``/dev/null``) or a FIFO, where there is nothing to rename.

Temporary files are named ``.NAME.tileprof-PID-RANDOM.tmp`` so they can be recognised: a
process killed mid-write (``kill -9``) leaves one behind, and the next write to that folder
removes it once its process is gone or it is more than a day old (``remove_stale``).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from tileprof.core.errors import OutputError
from tileprof.core.text import escape_control

TEMP_MARK = ".tileprof-"
STALE_AFTER_S = 86400.0
"""A temporary file older than this is removed even when its pid is alive (pids are reused)."""
_TEMP_NAME = re.compile(r"^\..+\.tileprof-(\d+)-[^.]+\.tmp$")


def terminal_width(output: Path | None) -> int | None:
    """The terminal's width (``COLUMNS``, else the terminal's size) when a table is printed on
    one (stdout, a terminal), else None: files and pipes get the fixed width of each table."""
    if output is not None and str(output) != "-":
        return None
    if not sys.stdout.isatty():
        return None
    return shutil.get_terminal_size().columns


def is_special(path: Path) -> bool:
    """Whether ``path`` exists and is neither a regular file nor a folder (a device, a FIFO)."""
    try:
        mode = path.stat().st_mode
    except OSError:
        return False
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode))


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def remove_stale(directory: Path, *, now: float | None = None) -> list[Path]:
    """Remove tileprof temporary files in ``directory`` whose writer is dead or that are more
    than a day old; returns what was removed. Failures are ignored: this is housekeeping."""
    now = time.time() if now is None else now
    removed: list[Path] = []
    try:
        entries = list(os.scandir(directory))
    except OSError:
        return removed
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if match is None:
            continue
        if _pid_alive(int(match.group(1))) and now - _mtime(entry) < STALE_AFTER_S:
            continue
        with contextlib.suppress(OSError):
            os.unlink(entry.path)
            removed.append(Path(entry.path))
    return removed


def _mtime(entry: os.DirEntry[str]) -> float:
    try:
        return entry.stat(follow_symlinks=False).st_mtime
    except OSError:
        return 0.0


class Writable(Protocol):
    """Anything bytes can be written to: an open file, a ``gzip.GzipFile``."""

    def write(self, data: bytes, /) -> int: ...


@contextlib.contextmanager
def atomic_writer(path: str | os.PathLike[str], binary: bool = False) -> Iterator[IO[Any]]:
    """Open a temporary file beside ``path`` and move it over ``path`` only on success.

    A failure while writing leaves any existing file untouched and removes the temporary one.
    A symbolic link is written through; a device or FIFO is written directly (see the module).
    """
    target = Path(path)
    if is_special(target):  # through links too: /dev/stdout is a link to a pipe or a tty
        with _open_special(target, binary) as special:
            yield special
        return
    if target.is_symlink():
        target = Path(os.path.realpath(target))
    if target.is_dir():
        raise OutputError(f"{path} is a folder, not a file")
    directory = target.parent if str(target.parent) else Path(".")
    if not directory.is_dir():
        raise OutputError(f"{path}: folder {directory} does not exist")
    remove_stale(directory)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}{TEMP_MARK}{os.getpid()}-", suffix=".tmp", dir=directory
        )
    except OSError as exc:
        raise OutputError(f"{path}: cannot write: {exc.strerror}") from exc
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


@contextlib.contextmanager
def _open_special(target: Path, binary: bool) -> Iterator[IO[Any]]:
    """A device or FIFO opened for writing, as ``>`` would open it (no rename, no fsync)."""
    try:
        fd = os.open(target, os.O_WRONLY | os.O_TRUNC)
    except OSError as exc:
        raise OutputError(f"{target}: cannot write: {exc.strerror}") from exc
    with os.fdopen(fd, "wb") if binary else os.fdopen(fd, "w", encoding="utf-8") as handle:
        yield handle


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


def say_written(path: str | os.PathLike[str] | None) -> None:
    """Print the path of a file a command just wrote, on stdout, as ``tileprof report`` does:
    a command that writes a file never ends in silence. Nothing for stdout (None or ``-``) or
    a device or FIFO written into (``/dev/stdout``): there the output itself is the answer."""
    if path is None or str(path) == "-" or is_special(Path(path)):
        return
    sys.stdout.write(f"{escape_control(os.fspath(path))}\n")
    sys.stdout.flush()
