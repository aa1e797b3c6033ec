"""``read_input`` of a pipe (``inputs.sources``): a FIFO is read whole once, so it is never
offered to the streaming reader (which opens the path again), and its size is what was piped,
not what the first read took."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from tests.samples import document, fifo_of, sample
from tileprof.inputs import sources
from tileprof.inputs._format import SNIFF_BYTES, TILE_DUMP
from tileprof.inputs._sniff import TRACE

TRACE_FILE = Path(__file__).parent.parent / "fixtures" / "traces" / "kineto_small.json"


def test_a_piped_trace_is_read_whole_and_never_streamed(tmp_path: Path) -> None:
    offered: list[Path] = []

    def stream(path: Path) -> sources.FileRead | None:
        offered.append(path)
        return None

    data = TRACE_FILE.read_bytes()
    found = sources.read_input(fifo_of(tmp_path, data), stream=stream)
    assert offered == []  # the reader would open the FIFO again, and find it drained
    assert (found.kind, found.data, found.size) == (TRACE, data, len(data))
    assert found.sha256 == hashlib.sha256(data).hexdigest()


@pytest.mark.parametrize(("count", "whole"), [(560, True), (700, False)])
def test_a_piped_dump_is_read_whole_only_up_to_the_limit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, count: int, whole: bool
) -> None:
    """The limit on what ``whole_dumps`` reads is set between the first read (``SNIFF_BYTES``)
    and the larger piped dump's length: the whole length decides, not the first read's."""
    limit = SNIFF_BYTES + 10_000
    monkeypatch.setattr(sources, "WHOLE_DUMP_BYTES", limit)
    data = document([sample(t % 4, 10 * t, 5) for t in range(count)])
    assert len(data) > SNIFF_BYTES and (len(data) <= limit) is whole
    found = sources.read_input(fifo_of(tmp_path, data), whole_dumps=True)
    assert found.kind == TILE_DUMP
    assert found.data == (data if whole else None)
