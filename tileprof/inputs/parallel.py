"""Worker processes that decode byte ranges of one large dump in parallel.

A dump's decoding is CPU-bound Python (msgspec Structs, then columns), so threads would share
one core; processes do not. The JSON and NDJSON readers cut a plain file into contiguous byte
ranges (whole samples, whole lines), and each worker reads its range itself, decodes it and
sends back its typed columns as Arrow IPC plus its distinct raw metadata texts: the columns go
through a file in shared memory (``/dev/shm``) whose name goes through the pipe, never a
pickled Python object per sample. The parent joins the columns and interns the metadata
(``batches.SampleBatches.add_interned``).

``jobs`` processes decode: the parent and ``jobs - 1`` workers. The workers take tasks from the
front while the parent takes those no worker has started from the back (``run_tasks``), so the
parent never idles and no core runs a process more than it has.

One pool (``ProcessPoolExecutor``, started by ``spawn``: a fork of a process that already runs
polars' threads may deadlock) serves a whole command: ``prestart`` starts it as soon as a large
JSON or NDJSON input is named (its start-up overlaps the parent's first scan), it is reused for
every input (``report`` and ``diff`` read several), and ``shutdown`` ends it; the ``--jobs``
option registers that at the command's end. Files under ``min_bytes()`` stay in process, where
starting workers would cost more than it saves. A worker that dies (killed, out of memory)
breaks the pool: that is reported as one ``InputError`` naming the file, never a hang.

The command line decodes on every usable core unless ``--jobs`` says otherwise. The Python API
decodes in process until ``configure`` asks for workers: like any ``spawn`` pool, workers import
the caller's main module, so a script that opts in must guard its top level with
``if __name__ == "__main__":``, and a script that does not opt in never meets that rule.
"""

from __future__ import annotations

import atexit
import contextlib
import io
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from tileprof.core.errors import InputError

if TYPE_CHECKING:  # imported when a pool starts: setting --jobs costs no multiprocessing import
    from concurrent.futures import Future, ProcessPoolExecutor

MIN_BYTES = 50_000_000
"""Files smaller than this decode in process (override: ``TILEPROF_PARALLEL_MIN_BYTES``)."""
MIN_BYTES_ENV = "TILEPROF_PARALLEL_MIN_BYTES"
R = TypeVar("R")

_jobs: int | None = 1
_executor: ProcessPoolExecutor | None = None
_spool_folder: str | None = None
"""The folder in shared memory the parent made for its pool's results (None in a worker)."""
_spool: str | None = None
"""In a worker, that folder, where it writes its results; None in the parent, whose own results
stay in memory."""


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)


def configure(jobs: int | None) -> None:
    """Set the number of decoding processes (None: the usable cores); 1, the API's default
    until this is called, decodes in process."""
    global _jobs
    if jobs is not None and jobs < 1:
        raise ValueError("jobs must be at least 1")
    if jobs != _jobs:
        shutdown()
    _jobs = jobs


def setting() -> int | None:
    """What ``configure`` was last given (None: the usable cores), to restore it later."""
    return _jobs


def jobs() -> int:
    """The number of decoding processes in effect."""
    return _jobs if _jobs is not None else usable_cores()


def min_bytes() -> int:
    """The file size from which decoding goes to worker processes."""
    text = os.environ.get(MIN_BYTES_ENV, "")
    return int(text) if text.strip().isdigit() else MIN_BYTES


def use_workers(size: int) -> bool:
    """Whether a plain file of ``size`` bytes is decoded by worker processes."""
    return jobs() > 1 and size >= min_bytes()


def executor() -> ProcessPoolExecutor:
    """The command's pool of ``jobs() - 1`` workers (the parent decodes too), started on
    first use."""
    global _executor, _spool_folder
    if _executor is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _spool_folder = tempfile.mkdtemp(
            prefix="tileprof-ipc-", dir=_SHM if os.path.isdir(_SHM) else None
        )
        _executor = ProcessPoolExecutor(
            max_workers=max(1, jobs() - 1),
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_set_spool,
            initargs=(_spool_folder,),
        )
    return _executor


_SHM = "/dev/shm"


def _set_spool(folder: str) -> None:
    global _spool
    _spool = folder


def _remove_spool() -> None:
    global _spool_folder
    folder, _spool_folder = _spool_folder, None
    if folder is not None:
        shutil.rmtree(folder, ignore_errors=True)


def _ready() -> int:
    """A task that only makes a worker import this package (done on arrival)."""
    return os.getpid()


def _json_file(path: object) -> bool:
    """Whether ``path`` is a plain (not gzipped) file large enough for workers whose text starts
    like JSON or NDJSON (the only formats they decode)."""
    if not isinstance(path, (str, Path)):
        return False
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode) or not use_workers(info.st_size):
            return False
        with open(path, "rb") as handle:
            head = handle.read(64)
    except (OSError, ValueError):
        return False
    return head.lstrip(b"\xef\xbb\xbf \t\r\n").startswith(b"{")


def prestart(paths: Iterable[object]) -> None:
    """Start the pool now when one of ``paths`` is a JSON or NDJSON file that workers would
    decode, so that the workers' start-up (an interpreter, then tileprof's imports: most of a
    second) overlaps what the parent does before it has ranges to hand out."""
    if jobs() > 1 and _executor is None and any(_json_file(path) for path in paths):
        pool = executor()
        for _ in range(jobs() - 1):
            pool.submit(_ready)


def shutdown() -> None:
    """Stop the pool's workers (a later decode starts a new pool)."""
    global _executor
    pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)
    _remove_spool()


atexit.register(shutdown)


def _broken(path: Path) -> InputError:
    global _executor
    pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    _remove_spool()
    return InputError(
        path,
        None,
        "a decoding worker process died (killed, or out of memory); --jobs 1 "
        "(from Python: tileprof.inputs.parallel.configure(1)) decodes in one process",
    )


def run_tasks(
    path: Path, function: Callable[..., R], tasks: Iterable[tuple[Any, ...]]
) -> Iterator[R]:
    """``function(*task)`` for every task, results in task order.

    Every task is submitted to the pool at once (results are small: columns, not text); the
    workers take them from the front while this process takes them from the back, each one that
    no worker has started yet (it cancels the task, then runs it itself), so ``jobs`` processes
    decode and none idles. A generator closed early cancels the tasks not yet started. A dead
    worker raises ``InputError``.
    """
    from concurrent.futures.process import BrokenProcessPool

    futures: list[Future[R]] = []
    try:
        try:
            pool = executor()
            work = list(tasks)
            futures = [pool.submit(function, *task) for task in work]
            done: dict[int, R] = {}
            ready = 0  # results before this one have been yielded
            for index in reversed(range(len(work))):
                while ready < index and futures[ready].done():
                    yield futures[ready].result()  # the workers' finished results go on now
                    ready += 1
                if index < ready or not futures[index].cancel():
                    break
                done[index] = function(*work[index])
            for index in range(ready, len(work)):
                yield done.pop(index) if index in done else futures[index].result()
        except BrokenProcessPool:
            raise _broken(path) from None
    finally:
        for future in futures:
            future.cancel()


def encode_columns(frame: pl.DataFrame) -> bytes | str:
    """A task's columns as Arrow IPC (uncompressed: copying is faster than zstd): in a worker,
    a file in the shared-memory spool whose name goes back through the pipe (a pipe of a few
    MB would stall the worker while the parent, busy decoding, cannot read it); in the parent,
    bytes."""
    if _spool is not None:
        name = ""
        try:
            handle, name = tempfile.mkstemp(suffix=".arrow", dir=_spool)
            with os.fdopen(handle, "wb") as spooled:
                frame.write_ipc(spooled, compression="uncompressed")
            return name
        except OSError:  # shared memory full (a container's is often small): use the pipe
            if name:
                with contextlib.suppress(OSError):
                    os.unlink(name)
    sink = io.BytesIO()
    frame.write_ipc(sink, compression="uncompressed")
    return sink.getvalue()


def decode_columns(data: bytes | str) -> pl.DataFrame:
    """The columns ``encode_columns`` wrote (a spooled file is removed once read)."""
    if isinstance(data, bytes):
        return pl.read_ipc(io.BytesIO(data))
    try:
        with open(data, "rb") as spooled:
            return pl.read_ipc(io.BytesIO(spooled.read()))
    finally:
        os.unlink(data)
