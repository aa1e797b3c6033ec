"""The input registry's entries (``tileprof.inputs._format``): the views of a file's bytes
every recogniser reads (``Content``), and an ``InputFormat`` resolving its module's
``READER`` only when asked."""

from __future__ import annotations

from pathlib import Path

import pytest

from tileprof.core import _native
from tileprof.inputs import INPUTS
from tileprof.inputs._format import SNIFF_BYTES, Content, InputFormat, Reader, never


def test_the_opening_is_the_first_byte_that_is_not_whitespace() -> None:
    assert Content(b" \n\t{x").opening == b"{"
    assert Content(b"   ").opening == b""


def test_the_head_is_the_start_without_leading_whitespace() -> None:
    data = b"\n  " + b"x" * (SNIFF_BYTES + 10)
    head = Content(data).head
    assert head.startswith(b"x") and len(head) == SNIFF_BYTES - 3
    assert Content(b'  {"a": 1}\n{"b": 2}').first_line == b'{"a": 1}'


@pytest.mark.parametrize(
    ("data", "value", "ndjson_shaped"),
    [
        (b'{"clockHz": 1}\n{"physicalTile": 0}', {"clockHz": 1}, True),
        (b'{"samples": []}\n', {"samples": []}, False),
        (b"[1, 2]\n3", [1, 2], False),
        (b"physicalTile,offset\n0,1", None, False),
        (b"[" * 100_000, None, False),
    ],
)
def test_the_first_line_as_json(data: bytes, value: object, ndjson_shaped: bool) -> None:
    content = Content(data)
    assert content.first_value == value
    assert content.first_line_is_object_without_samples is ndjson_shaped


def test_keys_are_the_top_level_keys_of_one_object() -> None:
    assert Content(b'{"traceEvents": [], "schemaVersion": 1}').keys == {
        "traceEvents",
        "schemaVersion",
    }
    assert Content(b"{}").keys == set()
    assert Content(b"[1]").keys is None
    assert Content(b'{"a": 1,}').keys is None


def test_keys_fall_back_to_msgspec_where_the_compiled_scan_declines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_native, "top_level_keys", lambda data: None)
    assert Content(b'{"a": 1, "b": {"c": [2]}}').keys == {"a", "b"}
    assert Content(b"[1]").keys is None
    assert Content(b'{"a": ').keys is None
    assert Content(b'{"a": ' + b"[" * 100_000).keys is None


def test_text_lines_replace_what_is_not_utf8() -> None:
    assert Content(b"a\r\nb\xff\nc").text_lines == ["a", "b\ufffd", "c"]
    long = Content(b"x\n" * SNIFF_BYTES)
    assert len(long.text_lines) == SNIFF_BYTES // 2


def test_a_reader_streams_nothing_unless_it_says_so() -> None:
    reader: Reader[int] = Reader(lambda path, data: len(data))
    assert reader.parse_file is None and reader.stream_gzip is True
    assert reader.parse("p", b"abc") == 3


def test_a_format_hands_over_its_modules_reader() -> None:
    (csv_dump,) = [f for f in INPUTS if f.module.endswith("tile.csv_dump")]
    module = __import__(csv_dump.module, fromlist=["READER"])
    assert csv_dump.reader is module.READER
    assert csv_dump.parse is module.READER.parse
    assert csv_dump.parse_file is None and csv_dump.stream_gzip is True


def test_a_streaming_format_hands_over_its_file_reader() -> None:
    (json_dump,) = [f for f in INPUTS if f.module.endswith("tile.json_dump")]
    module = __import__(json_dump.module, fromlist=["READER"])
    assert json_dump.parse_file is module.READER.parse_file is not None


def test_a_format_of_a_module_made_here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its module is imported when it is first read, from wherever it is on the path."""
    (tmp_path / "made_format.py").write_text(
        "from tileprof.inputs._format import Reader\n"
        "READER = Reader(lambda path, data: data.upper(), stream_gzip=False)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    made: InputFormat[bytes] = InputFormat("made", "tile dump", never, "made_format")
    assert made.parse("p", b"abc") == b"ABC"
    assert made.stream_gzip is False and made.parse_file is None
    assert never(Content(b"{}")) is False
