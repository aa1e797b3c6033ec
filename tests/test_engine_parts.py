"""``model/engines.py`` part by part, without a cluster: what each engine is handed and what a
user reads when it fails (issue 38's mutation run: ``tests/test_engines.py`` holds the answers of
whole commands on threads and on a local cluster, not these details)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import SimpleNamespace
from typing import Any

import distributed
import pytest
from distributed.scheduler import KilledWorker

from tileprof.core.errors import OptionError
from tileprof.model import engines
from tileprof.model.engines import Engine, EngineError, first_line, gather_tasks, map_ordered


def test_first_line_is_the_messages_first_line_without_its_margin() -> None:
    assert first_line(ValueError("  \n  lost worker\nsecond line")) == "lost worker"


@pytest.mark.parametrize("message", ["", "  \n \t"])
def test_first_line_of_an_empty_message_is_the_exceptions_type(message: str) -> None:
    assert first_line(ValueError(message)) == "ValueError"


def test_an_unknown_engine_and_a_scheduler_without_dask_are_named() -> None:
    with pytest.raises(OptionError) as unknown:
        Engine("spark").check()
    assert str(unknown.value) == "--engine 'spark': one of threads, dask"
    with pytest.raises(OptionError) as scheduler:
        Engine("threads", scheduler="tcp://x:8786").check()
    assert str(scheduler.value) == "--scheduler needs --engine dask"
    dask = Engine("dask", scheduler="tcp://x:8786")
    assert dask.check() is dask


def _thread_of(item: int) -> tuple[int, str]:
    return item, threading.current_thread().name


def test_one_file_is_read_in_this_thread_and_two_on_the_pool() -> None:
    """A lone file needs no pool (its errors and progress stay in the caller's thread)."""
    here = threading.current_thread().name
    assert map_ordered(_thread_of, [7]) == [(7, here)]
    assert map_ordered(_thread_of, []) == []
    two = map_ordered(_thread_of, [1, 2])
    assert [item for item, _ in two] == [1, 2]
    assert all(thread != here for _, thread in two)


def test_the_pool_has_a_thread_a_file_up_to_the_usable_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    sizes: list[int | None] = []
    real = engines.ThreadPoolExecutor

    def pool(max_workers: int | None = None) -> Any:
        sizes.append(max_workers)
        return real(max_workers=max_workers)

    monkeypatch.setattr(engines, "ThreadPoolExecutor", pool)
    monkeypatch.setattr(engines, "usable_cores", lambda: 3)
    assert map_ordered(abs, [-1, -2]) == [1, 2]
    assert map_ordered(abs, [-1, -2, -3, -4, -5]) == [1, 2, 3, 4, 5]
    assert sizes == [2, 3]


def test_the_dask_engine_gets_its_scheduler_and_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[tuple[str | None, int]] = []

    @contextmanager
    def client(scheduler: str | None, workers: int) -> Iterator[_Client]:
        asked.append((scheduler, workers))
        yield _Client()

    monkeypatch.setattr(engines, "dask_client", client)
    assert map_ordered(abs, [-4, 5], Engine("dask", workers=3)) == [4, 5]
    assert map_ordered(abs, [-6], Engine("dask", "tcp://h:1")) == [6]
    assert asked == [(None, 3), ("tcp://h:1", 2)]


class _Client:
    """A dask client that runs each task when it is submitted and records how."""

    def __init__(self, lost: BaseException | None = None) -> None:
        self.lost = lost
        self.options: list[dict[str, Any]] = []

    def submit(self, function: Callable[..., Any], *arguments: Any, **options: Any) -> Any:
        self.options.append(options)
        return function(*arguments)

    def gather(self, futures: list[Any]) -> list[Any]:
        if self.lost is not None:
            raise self.lost
        return futures


def test_tasks_are_submitted_impure_in_order() -> None:
    """``pure=False``: two tasks of equal arguments (one file named twice) are both run."""
    client = _Client()
    calls: list[tuple[Callable[..., int], tuple[int, ...]]] = [
        (pow, (2, 3)),
        (pow, (2, 3)),
        (abs, (-1,)),
    ]
    assert gather_tasks(client, calls) == [8, 8, 1]
    assert client.options == [{"pure": False}] * 3


def test_a_task_lost_with_its_workers_is_one_line_with_the_hint() -> None:
    worker: Any = SimpleNamespace(address="tcp://127.0.0.1:1")  # the one field its text reads
    lost = KilledWorker("task-1", worker, 3)
    message = "dask: a task was lost with its worker too many times ({}); {}"
    with pytest.raises(EngineError) as default:
        gather_tasks(_Client(lost), [(abs, (1,))])
    first = first_line(lost)
    assert first and first != "KilledWorker"
    assert str(default.value) == message.format(first, "the workers may lack memory for one task")
    with pytest.raises(EngineError) as hinted:
        gather_tasks(_Client(lost), [(abs, (1,))], hint="use fewer ranks a task")
    assert str(hinted.value) == message.format(first, "use fewer ranks a task")


def test_the_local_cluster_is_single_threaded_processes_on_loopback_over_tls() -> None:
    options = engines.local_cluster_options(3)
    security = options.pop("security")
    assert isinstance(security, distributed.Security)
    assert security.require_encryption
    assert options == {
        "n_workers": 3,
        "threads_per_worker": 1,
        "processes": True,
        "host": "127.0.0.1",
        "dashboard_address": None,
        "worker_dashboard_address": None,
        "silence_logs": engines.logging.ERROR,
    }


def test_a_local_cluster_without_its_tls_package_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delattr(distributed, "Security")
    with pytest.raises(OptionError) as missing:
        engines.local_cluster_options(2)
    assert str(missing.value) == (
        "--engine dask's local cluster needs the cryptography package for its TLS "
        "certificates: pip install 'tileprof[store]'"
    )
