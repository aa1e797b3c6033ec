"""Worker processes that decode byte ranges of one large dump in parallel.

A dump's decoding is CPU-bound Python (msgspec Structs, then columns), so threads would share
one core; processes do not. The JSON and NDJSON readers cut a plain file into contiguous byte
ranges (whole samples, whole lines), and each worker reads its range itself, decodes it and
sends back its typed columns as Arrow IPC bytes plus its distinct raw metadata texts: a few
bytes a sample through the pipe, never a pickled Python object per sample. The parent joins
the columns and interns the metadata (``batches.SampleBatches.add_interned``).

One pool (``ProcessPoolExecutor``, started by ``spawn``: a fork of a process that already runs
polars' threads may deadlock) serves a whole command: it starts on first use and is reused for
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
import io
import os
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import polars as pl

from tileprof.errors import InputError

if TYPE_CHECKING:  # imported when a pool starts: setting --jobs costs no multiprocessing import
    from concurrent.futures import Future, ProcessPoolExecutor

MIN_BYTES = 50_000_000
"""Files smaller than this decode in process (override: ``TILEPROF_PARALLEL_MIN_BYTES``)."""
MIN_BYTES_ENV = "TILEPROF_PARALLEL_MIN_BYTES"
R = TypeVar("R")

_jobs: int | None = 1
_executor: ProcessPoolExecutor | None = None


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
    """The command's pool, started on first use."""
    global _executor
    if _executor is None:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        _executor = ProcessPoolExecutor(
            max_workers=jobs(), mp_context=multiprocessing.get_context("spawn")
        )
    return _executor


def shutdown() -> None:
    """Stop the pool's workers (a later decode starts a new pool)."""
    global _executor
    pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=True, cancel_futures=True)


atexit.register(shutdown)


def _broken(path: Path) -> InputError:
    global _executor
    pool, _executor = _executor, None
    if pool is not None:
        pool.shutdown(wait=False, cancel_futures=True)
    return InputError(
        path,
        None,
        "a decoding worker process died (killed, or out of memory); --jobs 1 "
        "(from Python: tileprof.parsers.parallel.configure(1)) decodes in one process",
    )


def run_tasks(
    path: Path, function: Callable[..., R], tasks: Iterable[tuple[Any, ...]]
) -> Iterator[R]:
    """``function(*task)`` for every task in the pool, results in task order.

    Every task is submitted at once (results are small: columns, not text); a generator closed
    early cancels the tasks not yet started. A dead worker raises ``InputError``.
    """
    from concurrent.futures.process import BrokenProcessPool

    futures: list[Future[R]] = []
    try:
        try:
            pool = executor()
            futures = [pool.submit(function, *task) for task in tasks]
            for future in futures:
                yield future.result()
        except BrokenProcessPool:
            raise _broken(path) from None
    finally:
        for future in futures:
            future.cancel()


def encode_columns(frame: pl.DataFrame) -> bytes:
    """A worker's columns as Arrow IPC bytes (uncompressed: the pipe is faster than zstd)."""
    sink = io.BytesIO()
    frame.write_ipc(sink, compression="uncompressed")
    return sink.getvalue()


def decode_columns(data: bytes) -> pl.DataFrame:
    """The columns ``encode_columns`` wrote."""
    return pl.read_ipc(io.BytesIO(data))
