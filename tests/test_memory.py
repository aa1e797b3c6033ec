"""``core/memory.py`` by hand: the address space asked before the analyses, and glibc's
arenas under a limit (issue 38; docs/reliability.md, "Memory")."""

from __future__ import annotations

import mmap
import resource
from typing import Any

import pytest

from tileprof.core import memory


def test_room_is_what_a_mapping_of_that_size_can_have() -> None:
    assert memory.can_reserve(0) and memory.can_reserve(-1)  # one page at least
    assert memory.can_reserve(mmap.PAGESIZE + 1)
    assert not memory.can_reserve(1 << 62)  # more than any 64-bit address space
    assert not memory.can_reserve(1 << 64)  # past what mmap takes: OverflowError


def test_the_analyses_ask_for_twice_the_frame_and_the_slack(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    asked: list[int] = []

    def ask(size: int) -> bool:
        asked.append(size)
        return size < 1 << 30

    monkeypatch.setattr(memory, "can_reserve", ask)
    memory.require_room_for_analyses(100.6)
    memory.require_room_for_analyses(1000, slack=5)
    assert asked == [201 + memory.ANALYSIS_SLACK, 2005]
    assert (memory.ANALYSIS_FACTOR, memory.ANALYSIS_SLACK) == (2, 64 << 20)
    with pytest.raises(MemoryError) as caught:
        memory.require_room_for_analyses(600 << 20)
    assert str(caught.value) == "the analyses need about 1264 MiB of address space"


class _Libc:
    def __init__(self) -> None:
        self.calls: list[tuple[int, int]] = []

    def mallopt(self, parameter: int, value: int) -> int:
        self.calls.append((parameter, value))
        return 1


def test_arenas_are_shared_only_under_a_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    import ctypes

    libc = _Libc()
    monkeypatch.setattr(ctypes, "CDLL", lambda name: libc)
    unlimited = (resource.RLIM_INFINITY, resource.RLIM_INFINITY)
    monkeypatch.setattr(resource, "getrlimit", lambda which: unlimited)
    memory.share_malloc_arenas_under_a_limit()
    assert libc.calls == []
    asked: list[Any] = []

    def limited(which: int) -> tuple[int, int]:
        asked.append(which)
        return (1 << 30, resource.RLIM_INFINITY)

    monkeypatch.setattr(resource, "getrlimit", limited)
    memory.share_malloc_arenas_under_a_limit()
    assert libc.calls == [(-8, 2)] and asked == [resource.RLIMIT_AS]


@pytest.mark.parametrize("fault", [OSError, AttributeError])
def test_no_glibc_is_nothing_to_do(monkeypatch: pytest.MonkeyPatch, fault: type) -> None:
    import ctypes

    def missing(name: object) -> None:
        raise fault("no libc here")

    monkeypatch.setattr(ctypes, "CDLL", missing)
    monkeypatch.setattr(resource, "getrlimit", lambda which: (1 << 30, 1 << 30))
    memory.share_malloc_arenas_under_a_limit()  # no error
