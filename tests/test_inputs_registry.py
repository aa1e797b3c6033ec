"""The tile-dump side of the input registry (``tileprof.inputs``): the format a file name
suggests, a file's head, whether gzipped and its size (``peek``), a device checked against
samples already in memory (``check_device``) and the decoding threads' setting."""

from __future__ import annotations

import gzip
import os
import threading
from pathlib import Path

import pytest

from tests.samples import document, frame, sample
from tileprof.core.errors import InputError
from tileprof.inputs import (
    check_device,
    decoding_jobs,
    detect_dump_format,
    format_from_extension,
    is_tile_dump_head,
    peek,
    threads,
)
from tileprof.inputs._format import SNIFF_BYTES


@pytest.mark.parametrize(
    ("name", "found"),
    [
        ("d.json", "json"),
        ("d.JSON.GZ", "json"),
        ("run.1.ndjson.gz", "ndjson"),
        ("d.csv", "csv"),
        ("d.gz", None),
        ("dump", None),
    ],
)
def test_the_format_a_name_suggests_looks_through_gzip(name: str, found: str | None) -> None:
    assert format_from_extension(Path(name)) == found


def test_content_tells_a_dump_before_its_name(tmp_path: Path) -> None:
    data = document([sample(0, 0, 10)])
    assert detect_dump_format(tmp_path / "dump.csv", data) == "json"  # the bytes given
    assert not is_tile_dump_head(b"  \n ")


def test_peek_gives_the_head_whether_gzipped_and_the_size_on_disk(tmp_path: Path) -> None:
    data = document([sample(t % 4, 10 * t, 5) for t in range(1000)])
    plain = tmp_path / "d.json"
    plain.write_bytes(data)
    assert peek(plain) == (data[:SNIFF_BYTES], False, len(data))
    packed = tmp_path / "d.json.gz"
    packed.write_bytes(gzip.compress(data))
    assert peek(packed) == (data[:SNIFF_BYTES], True, packed.stat().st_size)
    broken = tmp_path / "cut.json.gz"
    broken.write_bytes(gzip.compress(data)[:10])
    assert peek(broken) == (b"", True, 10)  # reading it whole words the error


def test_peek_of_a_pipe_sizes_what_was_piped(tmp_path: Path) -> None:
    data = document([sample(0, 0, 10)])
    path = tmp_path / "pipe"
    os.mkfifo(path)

    def write() -> None:
        with open(path, "wb") as pipe:
            pipe.write(data)

    threading.Thread(target=write, daemon=True).start()
    assert peek(path) == (data, False, len(data))


def test_a_device_is_the_headers_unless_overridden_and_holds_every_tile() -> None:
    samples = frame([sample(5, 0, 10)])
    source = Path("d.json")
    assert check_device(source, samples, 1e9, 8, None, None) == (1_000_000_000, 8)
    assert check_device(source, samples, 1e9, 8, 2e9, 16) == (2_000_000_000, 16)
    assert check_device(source, samples, None, None, None, None) == (1_500_000_000, 1472)
    with pytest.raises(InputError) as raised:
        check_device(source, samples, 1e9, 8, None, 4)
    assert str(raised.value) == "d.json: sample 0: physicalTile 5 is not below tileCount 4"
    with pytest.raises(InputError) as raised:
        check_device(source, samples, 1e9, 4, None, None)
    assert raised.value.where == "sample 0"
    with pytest.raises(InputError, match=r"^d\.json: tileCount: must be a positive integer"):
        check_device(source, samples, 1e9, 8, None, -1)


def test_decoding_jobs_sets_the_threads_and_gives_the_way_back() -> None:
    before = threads.setting()
    restore = decoding_jobs(3)
    try:
        assert threads.setting() == 3 and threads.jobs() == 3
    finally:
        restore()
    assert threads.setting() == before
