"""The Python side of the compiled decoder (``tileprof.inputs.native``), held to its docstrings.

``text_size`` on gzip bytes made here (the trailer's ISIZE, mod 2^32, as it stands in a file
too small to hold 4 GiB of text, else raised by 2^32 until it is at least half the file's size;
the 18 bytes of a gzip member's header and trailer), the split of a decoder error
(``error_parts``: "memory" as ``MemoryError``), the one-line errors of a decoder that hands back
no ``metadataId`` column or panics in ``gather_by_id``, the memory check before the frame is
built, and the per-sample cycles gathered from the metadata lists.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from tests.hostile import time_limit
from tests.samples import document, sample, write_dump
from tileprof.core import _native
from tileprof.core.errors import InputError
from tileprof.inputs import native
from tileprof.inputs.tile import json_dump
from tileprof.model.profile import load

ISIZE_MODULUS = 1 << 32
GZIP_MEMBER_MINIMUM = 18
"""A gzip member's 10-byte header and 8-byte trailer (RFC 1952)."""
TEXT = b'{"samples": []}' * 40


def _gzip_file(path: Path, stated: int | None = None, text: bytes = TEXT) -> Path:
    """``text`` gzipped to ``path``, its trailer's ISIZE replaced by ``stated`` when given."""
    data = gzip.compress(text, mtime=0)
    if stated is not None:
        data = data[:-4] + stated.to_bytes(4, "little")
    path.write_bytes(data)
    return path


def _member_bytes(size: int, stated: int) -> bytes:
    """``size`` bytes that open like a gzip member and end in a trailer stating ``stated``."""
    header = gzip.compress(b"", mtime=0)[:10]
    filler = bytes(max(size - len(header) - 4, 0))
    return (header + filler)[: size - 4] + stated.to_bytes(4, "little")


# --- text_size -----------------------------------------------------------------------------------


def test_a_plain_file_is_its_own_size(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(TEXT)
    assert native.text_size(path) == len(TEXT)


def test_a_gzip_file_is_the_size_its_trailer_states(tmp_path: Path) -> None:
    path = _gzip_file(tmp_path / "d.json.gz")
    assert path.stat().st_size < len(TEXT)
    assert native.text_size(path) == len(TEXT)


def _large_member(path: Path, stated: int) -> Path:
    """A sparse file just large enough to hold 4 GiB of deflated text (``DEFLATE_MAX_RATIO``),
    opening like a gzip member and ending in a trailer stating ``stated``."""
    size = -(-ISIZE_MODULUS // native.DEFLATE_MAX_RATIO)
    with path.open("wb") as stream:
        stream.write(gzip.compress(b"", mtime=0)[:10])
        stream.seek(size - 4)
        stream.write(stated.to_bytes(4, "little"))
    return path


def test_a_small_gzip_file_states_its_text_even_below_its_own_size(tmp_path: Path) -> None:
    """A short text gzips to more bytes than it has (14 → 34): the trailer's 14 stands."""
    path = _gzip_file(tmp_path / "d.json.gz", text=b'{"samples":[]}')
    assert path.stat().st_size > 14
    assert native.text_size(path) == 14


def test_a_file_that_may_hold_4_gib_raises_a_stated_size_below_half_its_own(
    tmp_path: Path,
) -> None:
    """ISIZE is the size mod 2^32: in a file that can hold a text of 4 GiB, a stated size
    below half the file's is taken 2^32 further; half the file's or more stands."""
    half = -(-ISIZE_MODULUS // native.DEFLATE_MAX_RATIO) // 2
    for stated, expected in ((5, 5 + ISIZE_MODULUS), (half - 1, half - 1 + ISIZE_MODULUS)):
        with time_limit(2):
            assert native.text_size(_large_member(tmp_path / "d.gz", stated)) == expected
    assert native.text_size(_large_member(tmp_path / "d.gz", half)) == half
    smaller = tmp_path / "s.gz"
    smaller.write_bytes(_member_bytes(4_000_000, 5))
    assert native.text_size(smaller) == 5  # under 2^32 / 1032 bytes: no text of 4 GiB fits


def test_a_stated_size_equal_to_the_compressed_one_is_kept(tmp_path: Path) -> None:
    size = len(gzip.compress(TEXT, mtime=0))
    path = _gzip_file(tmp_path / "d.json.gz", stated=size)
    assert path.stat().st_size == size
    assert native.text_size(path) == size


def test_a_file_of_exactly_a_gzip_members_minimum_is_read_as_gzip(tmp_path: Path) -> None:
    path = tmp_path / "d.gz"
    path.write_bytes(_member_bytes(GZIP_MEMBER_MINIMUM, 1000))
    assert path.stat().st_size == GZIP_MEMBER_MINIMUM
    assert native.text_size(path) == 1000


def test_a_file_shorter_than_a_gzip_member_is_its_own_size(tmp_path: Path) -> None:
    path = tmp_path / "d.gz"
    path.write_bytes(_member_bytes(GZIP_MEMBER_MINIMUM - 1, 1000))
    assert path.read_bytes().startswith(native.GZIP_MAGIC)
    assert native.text_size(path) == GZIP_MEMBER_MINIMUM - 1


# --- error_parts ---------------------------------------------------------------------------------


def test_a_decoder_error_splits_into_kind_place_message_and_text() -> None:
    error = _native.DecodeError("invalid", 7, "expected `int`", b"[1]")
    assert native.error_parts(error) == ("invalid", 7, "expected `int`", b"[1]")


def test_the_decoder_running_out_of_memory_is_a_memory_error_with_its_message() -> None:
    error = _native.DecodeError("memory", None, "cannot reserve the columns", None)
    with pytest.raises(MemoryError) as caught:
        native.error_parts(error)
    assert str(caught.value) == "cannot reserve the columns"


# --- the decoder's columns into the frame --------------------------------------------------------


class _WithoutIds:
    """Decoded columns as the decoder would hand them over had it lost ``metadataId``."""

    def __init__(self, columns: native.ArrowColumns) -> None:
        self._columns = columns

    def __len__(self) -> int:
        return len(self._columns)

    def columns(self) -> list[tuple[str, Any]]:
        return [(name, c) for name, c in self._columns.columns() if name != "metadataId"]


def test_columns_without_metadata_ids_are_one_line_naming_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decode = native.core.decode_json_bytes

    def lose_ids(*args: Any) -> Any:
        columns, *rest = decode(*args)
        return (_WithoutIds(columns), *rest)

    monkeypatch.setattr(native.core, "decode_json_bytes", lose_ids)
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("m.json"), document([sample(0, 0, 10), sample(1, 5, 3)]))
    assert str(caught.value) == (
        "m.json: internal error in the decoder "
        "(the decoder returned no metadataId column); please report it"
    )


def test_a_panic_in_the_gather_is_one_line_naming_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    def panic(*args: Any) -> Any:
        raise _native.DecodeError("panic", None, "index out of bounds", None)

    monkeypatch.setattr(native.core, "gather_by_id", panic)
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("g.json"), document([sample(0, 0, 10, useful=4)]))
    assert str(caught.value) == (
        "g.json: internal error in the decoder (index out of bounds); please report it"
    )


def test_room_for_the_frame_is_checked_per_sample(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[float] = []
    monkeypatch.setattr(native, "require_room_for_analyses", asked.append)
    samples = [sample(i % 4, i * 10, 5) for i in range(13)]
    load(write_dump(tmp_path / "d.json", samples))
    assert asked == [len(samples) * native.FRAME_BYTES_PER_SAMPLE]


def test_each_sample_carries_the_cycles_of_its_metadata_list(tmp_path: Path) -> None:
    cycles = [(3, 4.5), (None, 2), (3, 4.5), (None, None), (7.25, None), (3, 4.5)]
    samples = [
        sample(tile, tile * 10, 5, useful=useful, physical=physical)
        for tile, (useful, physical) in enumerate(cycles)
    ]
    frame = load(write_dump(tmp_path / "d.json", samples)).samples.sort("tile")
    assert frame["tile"].to_list() == list(range(len(cycles)))
    want = [
        [None if v is None else float(v) for v in column] for column in zip(*cycles, strict=True)
    ]
    assert frame["usefulCycles"].to_list() == want[0]
    assert frame["physicalWorkCycles"].to_list() == want[1]
