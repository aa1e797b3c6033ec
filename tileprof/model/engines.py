"""Where per-file and per-task work runs: threads of this process, or a ``dask.distributed``
cluster (docs/scale.md).

A job's ranks are one trace each and independent until their collectives are matched, so
``breakdown``, ``runs`` and ``report`` read them with ``map_ordered``: each file's read and its
per-file part of the answer run on a thread (the compiled decoders release the GIL), or on a
dask worker that reads the file itself and returns only that part. The parts come back in the
order given, so every engine combines the same parts into the same answer. The store's
re-aggregation (``model.store.aggregate``) runs its tasks on the same clusters.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

from tileprof.core.cpus import usable_cores
from tileprof.core.errors import OptionError, TileprofError

SCHEDULER_TIMEOUT_S = 5
"""How long ``--scheduler`` may take to answer before the command gives up."""
FILE_ENGINES = ("threads", "dask")
"""The engines that read a command's input files."""

Item = TypeVar("Item")
Part = TypeVar("Part")


class EngineError(TileprofError):
    """The distributed engine could not finish: no scheduler, or tasks lost with their workers."""


@dataclass(frozen=True)
class Engine:
    """How a command's files are read: ``--engine``, ``--scheduler`` and ``--workers``."""

    name: str = "threads"
    scheduler: str | None = None
    workers: int = 2

    def check(self) -> Engine:
        """This engine, or an OptionError for a combination that makes no sense."""
        if self.name not in FILE_ENGINES:
            raise OptionError(f"--engine {self.name!r}: one of {', '.join(FILE_ENGINES)}")
        if self.name != "dask" and self.scheduler is not None:
            raise OptionError("--scheduler needs --engine dask")
        return self


def map_ordered(
    function: Callable[[Item], Part], items: Sequence[Item], engine: Engine | None = None
) -> list[Part]:
    """``[function(item) for item in items]``, run by ``engine``; the first failure in the
    order of ``items`` is raised, as a loop would raise it."""
    engine = (engine or Engine()).check()
    if engine.name == "dask":
        with dask_client(engine.scheduler, engine.workers) as client:
            return gather_tasks(client, [(function, (item,)) for item in items])
    if len(items) <= 1:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(len(items), usable_cores())) as pool:
        return list(pool.map(function, items))


@contextmanager
def dask_client(scheduler: str | None, workers: int) -> Iterator[Any]:
    """A client of ``scheduler``'s cluster, or of a local one of ``workers`` processes that
    lives as long as the ``with`` block."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise OptionError(
            "--engine dask needs dask.distributed: pip install 'tileprof[store]'"
        ) from None
    cluster = None
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
        else:
            cluster = LocalCluster(**local_cluster_options(workers))
            client = Client(cluster)
    except (OSError, TimeoutError, ValueError) as exc:
        raise EngineError(
            f"--scheduler {scheduler}: cannot reach the dask scheduler ({first_line(exc)})"
        ) from None
    try:
        yield client
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def gather_tasks(
    client: Any,
    calls: Sequence[tuple[Callable[..., Part], tuple[Any, ...]]],
    hint: str = "the workers may lack memory for one task",
) -> list[Part]:
    """Each ``function(*arguments)`` of ``calls`` run on ``client``'s cluster, in order; an
    exception raised by a task is raised here (the first in order), as a loop would raise it."""
    from distributed.scheduler import KilledWorker

    futures = [client.submit(function, *arguments, pure=False) for function, arguments in calls]
    try:
        return list(client.gather(futures))
    except KilledWorker as exc:
        raise EngineError(
            f"dask: a task was lost with its worker too many times ({first_line(exc)}); {hint}"
        ) from None


def local_cluster_options(workers: int) -> dict[str, Any]:
    """The local cluster's settings: ``workers`` single-threaded processes whose scheduler,
    nannies and workers listen on 127.0.0.1 only, over TLS with certificates made for this
    run and held in this process's memory (``Security.temporary``), so that no other user of
    the machine can connect to them or submit work; no dashboards (docs/scale.md)."""
    try:
        from distributed import Security

        security = Security.temporary()
    except ImportError:
        raise OptionError(
            "--engine dask's local cluster needs the cryptography package for its TLS "
            "certificates: pip install 'tileprof[store]'"
        ) from None
    return {
        "n_workers": workers,
        "threads_per_worker": 1,
        "processes": True,
        "host": "127.0.0.1",
        "security": security,
        "dashboard_address": None,
        "worker_dashboard_address": None,
        "silence_logs": logging.ERROR,
    }


def first_line(exc: BaseException) -> str:
    """The first line of an exception's message (dask's are several)."""
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__
