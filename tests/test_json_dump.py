"""The JSON dump reader's own wording and plumbing (``tileprof.inputs.tile.json_dump``).

The decoder's results are held elsewhere to a ``json``-module reference
(``tests/test_parallel_ingest.py``); this file holds what the module adds around it: where an
error is placed and in whose words, which bytes the precise decode reads on failure, the
header's types, and that what a caller passes (the block size, the progress callback)
reaches the decoder.
"""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

from tests.samples import document, sample
from tileprof.core import _native
from tileprof.core.errors import InputError
from tileprof.inputs import native
from tileprof.inputs.tile import json_dump

SAMPLES = [sample(0, 0, 10), sample(1, 5, 20)]


@pytest.mark.parametrize(
    ("message", "container", "expected"),
    [
        (
            "Expected `int`, got `str` - at `$.samples[12].offset`",
            "samples",
            ("sample 12", "offset: expected `int`, got `str`"),
        ),
        (
            "Expected `object`, got `array` - at `$.samples[3]`",
            "samples",
            ("sample 3", "expected `object`, got `array`"),
        ),
        (
            "Object missing required field `samples`",
            "samples",
            ("document", "object missing required field `samples`"),
        ),
        (
            "Object missing required field `samples` - at `$`",
            "samples",
            ("document", "object missing required field `samples`"),
        ),
        (
            "Expected `int | null`, got `str` - at `$.tileCount`",
            "samples",
            ("$.tileCount", "expected `int | null`, got `str`"),
        ),
        (
            "Expected `int`, got `str` - at `$.samples[3].offset`",
            "events",
            ("$.samples[3].offset", "expected `int`, got `str`"),
        ),
    ],
)
def test_validation_place_names_the_sample_and_field(
    message: str, container: str, expected: tuple[str, str]
) -> None:
    """A path into the samples array is "sample N" (and the field, when there is one); the
    root is "document"; any other path, or a container other than ``samples``, stays a path."""
    assert json_dump.validation_place(message, container) == expected


def test_an_error_of_bytes_names_the_file_and_the_sample() -> None:
    data = document([sample(0, 0, 10), {**sample(1, 0, 10), "offset": "soon"}], clockHz=100)
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("held.json"), data)
    assert str(caught.value) == "held.json: sample 1: offset: expected `int`, got `str`"


@pytest.mark.parametrize("gzipped", [False, True])
def test_a_header_of_the_wrong_type_is_worded_by_the_typed_decode(
    tmp_path: Path, gzipped: bool
) -> None:
    """The decoder hands the header over as raw text; a clock that is text is refused at its
    JSON path, from the file's bytes (decompressed when gzipped) and from bytes in memory."""
    data = document(SAMPLES, clockHz="fast", tileCount=4)
    path = tmp_path / ("clock.json.gz" if gzipped else "clock.json")
    path.write_bytes(gzip.compress(data) if gzipped else data)
    expected = f"{path}: $.clockHz: expected `int | float | null`, got `str`"
    with pytest.raises(InputError) as from_file:
        json_dump.parse_file(path)
    assert str(from_file.value) == expected
    with pytest.raises(InputError) as from_bytes:
        json_dump.parse(path, data)
    assert str(from_bytes.value) == expected
    with pytest.raises(InputError) as tiles:
        json_dump.parse(path, document(SAMPLES, clockHz=100, tileCount=2.5))
    assert str(tiles.value) == f"{path}: $.tileCount: expected `int | null`, got `float`"


def test_a_header_error_the_typed_decode_misses_is_the_headers_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Should the whole-document decode ever accept what the header's decode refuses, the
    header's own message is given, at the document."""
    monkeypatch.setattr(json_dump, "precise_error", lambda path, data: None)
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("h.json"), document(SAMPLES, clockHz="fast"))
    assert caught.value.where == "document"
    assert str(caught.value).startswith("h.json: document: Expected `int | float | null`")


def _raising(error: Exception) -> Any:
    def decode(*args: Any) -> Any:
        raise error

    return decode


def test_a_panic_in_the_decoder_is_one_line_naming_the_file(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    panic = _native.DecodeError("panic", None, "index out of bounds", None)
    monkeypatch.setattr(native.core, "decode_json_bytes", _raising(panic))
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("p.json"), document(SAMPLES))
    assert str(caught.value) == (
        "p.json: internal error in the decoder (index out of bounds); please report it"
    )


@pytest.mark.parametrize(("place", "where"), [(None, "document"), (7, "sample 7")])
def test_a_refusal_the_typed_decode_does_not_share_is_the_decoders_own(
    monkeypatch: pytest.MonkeyPatch, place: int | None, where: str
) -> None:
    """The typed decode words an error when it finds one too; when the document is valid to it,
    the decoder's message stands, at the sample the decoder names or at the document."""
    refusal = _native.DecodeError("invalid", place, "a limit of the decoder", None)
    monkeypatch.setattr(native.core, "decode_json_bytes", _raising(refusal))
    with pytest.raises(InputError) as caught:
        json_dump.parse(Path("r.json"), document(SAMPLES))
    assert str(caught.value) == f"r.json: {where}: a limit of the decoder"


def test_a_decoder_error_is_worded_from_the_files_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On failure the precise decode reads the file the decoder was given."""
    path = tmp_path / "bad.json"
    path.write_bytes(document([{**sample(0, 0, 10), "duration": "long"}]))
    refusal = _native.DecodeError("invalid", 0, "the decoder's words", None)
    monkeypatch.setattr(native.core, "decode_json_file", _raising(refusal))
    with pytest.raises(InputError) as caught:
        json_dump.parse_file(path)
    assert str(caught.value) == f"{path}: sample 0: duration: expected `int`, got `str`"


def test_the_block_size_asked_for_reaches_the_decoder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The thread-boundary tests (``tests/test_parallel_ingest.py``) ask for tiny blocks; they
    test what they say only if the size reaches the decoder."""
    seen: list[Any] = []
    bytes_decoder, file_decoder = native.core.decode_json_bytes, native.core.decode_json_file

    def bytes_spy(data: bytes, jobs: int, block: int | None) -> Any:
        seen.append(block)
        return bytes_decoder(data, jobs, block)

    def file_spy(path: str, jobs: int, block: int | None, report: Any) -> Any:
        seen.append(block)
        return file_decoder(path, jobs, block, report)

    monkeypatch.setattr(native.core, "decode_json_bytes", bytes_spy)
    monkeypatch.setattr(native.core, "decode_json_file", file_spy)
    path = tmp_path / "d.json"
    path.write_bytes(document(SAMPLES))
    json_dump.parse(path, path.read_bytes(), block_bytes=16)
    json_dump.parse_file(path, block_bytes=24)
    json_dump.parse(path, path.read_bytes())
    assert seen == [16, 24, None]


def test_the_reader_reports_progress_to_the_end(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(document(SAMPLES, clockHz=100))
    calls: list[tuple[int, int]] = []
    parsed = json_dump.READER.parse_file(path, lambda done, total: calls.append((done, total)), 0)
    assert parsed.samples.height == 2
    size = path.stat().st_size
    assert calls and calls[-1] == (size, size)
