"""The one-read helpers of ``inputs.sources`` that commands share: a file's size and sha256 read
in chunks (a pipe's from the one read already made), a streamed trace's digest of every byte
on disk, a trace's events from bytes in hand, and where ``load_runs`` sends a tile dump."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import polars as pl
import pytest

from tests.samples import sample, write_dump
from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns
from tileprof.inputs import sources
from tileprof.inputs._sniff import TRACE

FIXTURES = Path(__file__).parent.parent / "fixtures"
GZIP_TRACE = FIXTURES / "hta" / "nccl_2xA100_rank0.json.gz"
"""750 kB on disk: more than the first read (64 KiB) takes."""


def test_a_files_digest_covers_every_chunk(tmp_path: Path) -> None:
    data = os.urandom((5 << 20) // 2)  # two and a half 1 MiB chunks
    path = tmp_path / "blob.bin"
    path.write_bytes(data)
    assert sources.file_digest(path) == (len(data), hashlib.sha256(data).hexdigest())
    assert sources.file_digest(str(path)) == sources.file_digest(path)


def test_a_pipes_digest_is_of_what_was_piped(tmp_path: Path) -> None:
    data = b"piped bytes " * 1000
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()
    assert sources.file_digest(path) == (len(data), hashlib.sha256(data).hexdigest())


def test_a_streamed_trace_is_digested_whole(tmp_path: Path) -> None:
    raw = GZIP_TRACE.read_bytes()
    found = sources.read_input(GZIP_TRACE, stream=sources.streamed_trace)
    assert found.kind == TRACE and found.data is None  # decoded through the window
    assert (found.size, found.sha256) == (len(raw), hashlib.sha256(raw).hexdigest())
    quick = sources.read_input(GZIP_TRACE, stream=sources.streamed_trace, digest=False)
    assert (quick.size, quick.sha256) == (len(raw), None)


def test_a_traces_events_come_from_the_bytes_given() -> None:
    path = FIXTURES / "traces" / "kineto_small.json"
    events = sources.kineto_events_of(path, path.read_bytes())
    assert events.frame.height == sources.read_kineto_events(path).frame.height > 0
    assert events.name == path.name


def test_load_runs_hands_a_tile_dump_to_the_tile_loader(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json", [sample(0, 0, 10)])
    with pytest.raises(InputError) as raised:
        sources.load_runs(dump)
    assert (raised.value.path, raised.value.message) == (
        str(dump),
        "tile dumps need the tile core (tileprof.load)",
    )
    handed: list[Path] = []
    parsed = ParsedRuns("tile dump", pl.DataFrame())

    def loader(path: Path) -> ParsedRuns:
        handed.append(path)
        return parsed

    assert sources.load_runs(str(dump), tile_loader=loader) is parsed
    assert handed == [dump]
