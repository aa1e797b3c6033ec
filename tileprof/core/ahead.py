"""A trace's decode started before it is asked for.

A command that reads a PyTorch trace spends its first few tenths of a second importing polars,
numpy and its analyses, on one core, while the compiled decoder, which needs none of them,
could already be reading the trace on the others. ``start_kineto_decode`` starts the decode
that ``inputs.gpu.kineto_native.streamed_events`` will ask for on a thread of its own (the
decoder releases the GIL); ``take`` hands its outcome over when that same decode of the same,
unchanged file is asked for. Anything else is decoded as before, and a decode that nothing
takes is only work thrown away: its outcome, an error included, is what the call would have
given at that moment (docs/performance.md, "Decoding Kineto traces").

This module imports nothing but the compiled module: every command module may import it
before polars is loaded (docs/architecture.md, "Start-up").
"""

from __future__ import annotations

import os
import stat
import threading
from typing import Any

import tileprof.core._native as native

DecodeKey = tuple[str, int, int | None, int | None, bool]
"""The arguments of ``decode_kineto_file``: path, threads, part and window bytes, timeline."""
FileIdentity = tuple[int, int, int, int]
"""A regular file's device, inode, size and modification time (ns)."""


class _Started:
    """One decode running on its own thread, and its outcome once it has ended."""

    def __init__(self, key: DecodeKey, identity: FileIdentity) -> None:
        self.identity = identity
        self._outcome: Any = None
        self._error: BaseException | None = None
        # not a daemon: a decode nothing takes ends before the interpreter does, never cut
        # off inside the compiled module
        self._thread = threading.Thread(target=self._run, args=(key,), name="tileprof-ahead")
        self._thread.start()

    def _run(self, key: DecodeKey) -> None:
        try:
            self._outcome = native.decode_kineto_file(*key)
        except BaseException as error:  # handed to the taker, who would have seen it
            self._error = error

    def outcome(self) -> Any:
        """What ``decode_kineto_file`` returned, or raise what it raised."""
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._outcome


_pending: list[tuple[DecodeKey, _Started]] = []
"""The one decode started and not yet taken: a command starts one (its first trace), so a
decode that nothing takes is held until the next is started, never more than one."""


def start_kineto_decode(path: str, jobs: int, *, timeline: bool) -> None:
    """Start ``decode_kineto_file(path, jobs, None, None, timeline)`` on a thread when ``path``
    is a regular file (a pipe is read whole, by the Python side), in place of any decode
    started before and not taken; a thread that cannot start leaves the decode to be made
    when asked for."""
    key: DecodeKey = (path, jobs, None, None, timeline)
    identity = _identity(path)
    _pending.clear()
    if identity is None:
        return
    try:
        _pending.append((key, _Started(key, identity)))
    except RuntimeError:  # no thread to be had: nothing started
        return


def take(key: DecodeKey) -> Any | None:
    """The outcome of the decode started for ``key`` (raising what it raised); None when none
    was, or the file has changed since (then decode it now). A decode started for the same
    file with other arguments is let go."""
    if not _pending or _pending[0][0][0] != key[0]:
        return None
    started_key, started = _pending.pop()
    if started_key != key:
        return None
    outcome = started.outcome()
    return outcome if _identity(key[0]) == started.identity else None


def _identity(path: str) -> FileIdentity | None:
    """``path``'s identity when it is a regular file; None otherwise."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(found.st_mode):
        return None
    return found.st_dev, found.st_ino, found.st_size, found.st_mtime_ns
