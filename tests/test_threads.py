"""``inputs/threads.py``: ``--jobs N`` and its default (issue 38)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tileprof.inputs import threads


@pytest.fixture(autouse=True)
def _restored() -> Iterator[None]:
    before = threads.setting()
    yield
    threads.configure(before)


def test_jobs_are_the_setting_else_the_usable_cores(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "usable_cores", lambda: 7)
    threads.configure(None)
    assert (threads.setting(), threads.jobs()) == (None, 7)
    threads.configure(1)
    assert (threads.setting(), threads.jobs()) == (1, 1)
    threads.configure(3)
    assert (threads.setting(), threads.jobs()) == (3, 3)


@pytest.mark.parametrize("jobs", [0, -2])
def test_fewer_than_one_thread_is_refused_and_changes_nothing(jobs: int) -> None:
    threads.configure(2)
    with pytest.raises(ValueError, match=r"^jobs must be at least 1$"):
        threads.configure(jobs)
    assert threads.setting() == 2
