"""The Parquet reader's own checks, by hand (issue 38, the mutation run of
inputs/tile/parquet_dump.py): the cache layout written and read back, each refusal's exact
words, and the footer check on files whose byte layout is stated below."""

from __future__ import annotations

import io
import struct
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tests.hostile import varint, zigzag
from tileprof.core.errors import InputError
from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs.tile.parquet_dump import (
    CACHE_LAYOUT,
    CACHE_LAYOUT_KEY,
    METADATA_TABLE_KEY,
    _chunk_bytes,
    _first,
    cache_bytes,
    check_footer,
    parse,
)

PATH = Path("d.parquet")


def samples(**changes: list[Any]) -> pl.DataFrame:
    """Two samples in the cache layout's typed frame."""
    columns: dict[str, list[Any]] = {
        "tile": [0, 1],
        "offset": [10, 20],
        "duration": [5, 6],
        "phase": [0, 1],
        "epoch": [1, 1],
        "kind": ["compute", "exchange"],
        "operation": ["op.1", None],
        "kernel": ["k", None],
        "usefulCycles": [4.0, None],
        "physicalWorkCycles": [None, 2.5],
        "metadataId": [0, 1],
    }
    columns.update(changes)
    return pl.DataFrame(columns, schema=SAMPLE_SCHEMA)


METADATA = ((("usefulCycles", "4"), ("note", "a")), (("physicalWorkCycles", "2.5"),))


def refusal(data: bytes) -> InputError:
    with pytest.raises(InputError) as caught:
        parse(PATH, data)
    return caught.value


def test_the_cache_layout_round_trip_with_its_header() -> None:
    data = cache_bytes(samples(), METADATA, 1.5e9, 4, device="chip 7")
    kv = pl.read_parquet_metadata(io.BytesIO(data))
    assert {k: v for k, v in kv.items() if not k.startswith("ARROW")} == {
        "clockHz": "1500000000.0",
        "tileCount": "4",
        "device": "chip 7",
        CACHE_LAYOUT_KEY: CACHE_LAYOUT,
        METADATA_TABLE_KEY: '[[["usefulCycles","4"],["note","a"]],[["physicalWorkCycles","2.5"]]]',
    }
    meta = pq.read_metadata(pa.BufferReader(data))
    assert meta.row_group(0).column(0).compression == "ZSTD"
    parsed = parse(PATH, data)
    assert parsed.samples.equals(samples())
    assert parsed.samples.schema == SAMPLE_SCHEMA
    assert parsed.metadata == list(METADATA)
    header = parsed.header
    assert (header.clock_hz, header.tile_count, header.device) == (1.5e9, 4, "chip 7")
    assert parsed.place(3) == "row 3"


def test_a_cache_without_a_device_or_a_metadata_table() -> None:
    """No device stated: none read (an empty one is none too). No metadata table: none, so
    any metadataId is beyond it."""
    data = cache_bytes(samples(metadataId=[None, None]), (), 2e9, 8)
    assert "device" not in pl.read_parquet_metadata(io.BytesIO(data))
    parsed = parse(PATH, data)
    header = parsed.header
    assert (header.clock_hz, header.tile_count, header.device) == (2e9, 8, None)
    assert parsed.metadata == []
    kv = {"device": "", CACHE_LAYOUT_KEY: CACHE_LAYOUT}
    buffer = io.BytesIO()
    samples(metadataId=[None, None]).write_parquet(buffer, metadata=kv)
    parsed = parse(PATH, buffer.getvalue())
    assert (parsed.header.device, parsed.metadata) == (None, [])
    buffer = io.BytesIO()
    samples().write_parquet(buffer, metadata=kv)
    assert str(refusal(buffer.getvalue())) == (
        "d.parquet: row 0, column metadataId: 0 is not below the 0 entries of the metadata table"
    )


def test_a_metadata_id_beyond_the_table_is_named_at_its_first_row() -> None:
    data = cache_bytes(samples(metadataId=[1, 5]), METADATA, 1e9, 2)
    assert str(refusal(data)) == (
        "d.parquet: row 1, column metadataId: 5 is not below the 2 entries of the metadata table"
    )


def test_a_bad_metadata_table_names_the_file_and_the_key() -> None:
    buffer = io.BytesIO()
    kv = {CACHE_LAYOUT_KEY: CACHE_LAYOUT, METADATA_TABLE_KEY: '[["a"]]'}
    samples().write_parquet(buffer, metadata=kv)
    # msgspec's words: a pair must be an array of two strings, not a string
    assert str(refusal(buffer.getvalue())) == (
        "d.parquet: tileprof.metadata: bad metadata table: Expected `array`, got `str` - at "
        "`$[0][0]`"
    )


def test_a_header_without_clock_or_tiles_reads_as_none() -> None:
    buffer = io.BytesIO()
    pl.DataFrame({"physicalTile": [0], "offset": [0], "duration": [5]}).write_parquet(
        buffer, metadata={"tileCount": "3"}
    )
    header = parse(PATH, buffer.getvalue()).header
    assert (header.clock_hz, header.tile_count, header.device) == (None, 3, None)
    buffer = io.BytesIO()
    pl.DataFrame({"physicalTile": [0], "offset": [0], "duration": [5]}).write_parquet(
        buffer, metadata={"clockHz": "5"}
    )
    header = parse(PATH, buffer.getvalue()).header
    assert (header.clock_hz, header.tile_count) == (5, None)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        # text where a number belongs, a number where text belongs
        (
            {"tile": pl.Series(["0", "1"])},
            "d.parquet: column tile: expected Int64, got String",
        ),
        (
            {"kind": pl.Series([1, 2])},
            "d.parquet: column kind: expected Categorical, got Int64",
        ),
        (
            {"usefulCycles": pl.Series(["4", None])},
            "d.parquet: column usefulCycles: expected Float64, got String",
        ),
        # a float where an integer belongs
        (
            {"offset": pl.Series([1.0, 2.0])},
            "d.parquet: column offset: expected Int64, got Float64",
        ),
        # a required value missing, an optional one that does not fit
        (
            {"duration": pl.Series([5, None])},
            "d.parquet: row 1, column duration: value is missing",
        ),
        (
            {"metadataId": pl.Series([0, -1])},
            "d.parquet: row 1, column metadataId: -1 does not fit",
        ),
    ],
    ids=["tile-text", "kind-int", "useful-text", "offset-float", "duration-null", "id-negative"],
)
def test_a_cache_layout_column_that_does_not_fit(
    changes: dict[str, pl.Series], message: str
) -> None:
    frame = samples().with_columns(**{name: series.alias(name) for name, series in changes.items()})
    kv = {"clockHz": "1", "tileCount": "2", CACHE_LAYOUT_KEY: CACHE_LAYOUT}
    kv[METADATA_TABLE_KEY] = "[[], []]"
    buffer = io.BytesIO()
    frame.write_parquet(buffer, metadata=kv)
    assert str(refusal(buffer.getvalue())) == message


def test_null_columns_and_nulls_in_optional_columns_are_read() -> None:
    """A column of nulls only (Parquet's null type) fits any column; an optional value may be
    missing."""
    frame = samples().with_columns(
        pl.lit(None).alias("kernel"),
        pl.lit(None).alias("phase"),
        pl.lit(None).alias("usefulCycles"),
    )
    kv = {CACHE_LAYOUT_KEY: CACHE_LAYOUT, METADATA_TABLE_KEY: "[[], []]"}
    buffer = io.BytesIO()
    frame.write_parquet(buffer, metadata=kv)
    parsed = parse(PATH, buffer.getvalue())
    assert parsed.samples["kernel"].to_list() == [None, None]
    assert parsed.samples["phase"].to_list() == [None, None]
    assert parsed.samples["usefulCycles"].to_list() == [None, None]
    assert parsed.samples["duration"].to_list() == [5, 6]
    assert parsed.samples.schema == SAMPLE_SCHEMA


def _tight_file() -> bytes:
    """Two row groups of two columns, written by pyarrow without statistics or page index:
    the column chunks lie back to back, the first at byte 4 and the last ending where the
    footer starts."""
    table = pa.table({"a": [1, 2, 3] * 10, "b": ["x", "y", "x"] * 10})
    buffer = io.BytesIO()
    pq.write_table(table, buffer, row_group_size=15, write_statistics=False, write_page_index=False)
    return buffer.getvalue()


def _chunks(data: bytes) -> list[tuple[int, int]]:
    meta = pq.read_metadata(pa.BufferReader(data))
    spans = []
    for g in range(meta.num_row_groups):
        for c in range(meta.num_columns):
            chunk = meta.row_group(g).column(c)
            spans.append((chunk.dictionary_page_offset, chunk.total_compressed_size))
    return spans


def _with_chunk_size(data: bytes, index: int, size: int) -> bytes:
    """``data`` with the ``index``-th chunk's total_compressed_size (Thrift compact field 6 of
    ColumnMetaData: 0x16, then a zigzag varint) set to ``size`` in the footer."""
    spans = _chunks(data)
    old = b"\x16" + varint(zigzag(spans[index][1]))
    new = b"\x16" + varint(zigzag(size))
    assert len(old) == len(new)
    at = len(data) - 8 - struct.unpack("<I", data[-8:-4])[0]
    for _ in range(1 + sum(1 for _, s in spans[:index] if s == spans[index][1])):
        at = data.index(old, at) + 1
    bad = data[: at - 1] + new + data[at - 1 + len(old) :]
    assert _chunks(bad)[index][1] == size
    return bad


def test_the_footer_check_passes_chunks_back_to_back() -> None:
    data = _tight_file()
    spans = _chunks(data)
    ends = [start + size for start, size in spans]
    footer = len(data) - 8 - struct.unpack("<I", data[-8:-4])[0]
    # the layout the cases below rely on: 4 bytes of magic, then each chunk where the last ended
    assert [start for start, _ in spans] == [4, *ends[:-1]]
    assert ends[-1] == footer
    check_footer(PATH, data)


def test_the_footer_check_names_a_chunk_that_overlaps() -> None:
    data = _tight_file()
    (_, n0), (s1, n1), _, (s3, n3) = _chunks(data)
    # the first chunk one byte longer runs into the second
    with pytest.raises(InputError) as caught:
        check_footer(PATH, _with_chunk_size(data, 0, n0 + 1))
    assert str(caught.value) == (
        f"d.parquet: parquet footer, row group 0, column 1: pages at bytes {s1}-{s1 + n1} "
        "overlap other data"
    )
    # the last one byte longer runs into the footer
    with pytest.raises(InputError) as caught:
        check_footer(PATH, _with_chunk_size(data, 3, n3 + 1))
    assert str(caught.value) == (
        f"d.parquet: parquet footer, row group 1, column 1: pages at bytes {s3}-{s3 + n3 + 1} "
        "overlap other data"
    )


def test_the_footer_check_of_a_file_pyarrow_cannot_read() -> None:
    data = _tight_file()
    with pytest.raises(InputError) as caught:
        check_footer(PATH, data[:-12] + b"\xff" * 4 + data[-8:])
    assert str(caught.value).startswith("d.parquet: parquet footer: unreadable Parquet: ")


def chunk(**changes: Any) -> SimpleNamespace:
    fields = {
        "num_values": 3,
        "total_compressed_size": 100,
        "total_uncompressed_size": 120,
        "data_page_offset": 50,
        "dictionary_page_offset": 4,
        "encodings": ("PLAIN", "RLE_DICTIONARY"),
    }
    return SimpleNamespace(**(fields | changes))


def test_a_chunks_bytes_start_at_its_dictionary_page() -> None:
    assert _chunk_bytes(PATH, chunk(), "here") == (4, 104)
    plain = chunk(dictionary_page_offset=None, encodings=("PLAIN", "RLE"))
    assert _chunk_bytes(PATH, plain, "here") == (50, 150)
    # sizes of zero are no error
    empty = chunk(num_values=0, total_compressed_size=0, total_uncompressed_size=0)
    assert _chunk_bytes(PATH, empty, "here") == (4, 4)
    assert _chunk_bytes(PATH, chunk(dictionary_page_offset=0), "here") == (0, 100)


@pytest.mark.parametrize(
    "name",
    [
        "num_values",
        "total_compressed_size",
        "total_uncompressed_size",
        "data_page_offset",
        "dictionary_page_offset",
    ],
)
def test_a_negative_chunk_field_is_named(name: str) -> None:
    with pytest.raises(InputError) as caught:
        _chunk_bytes(PATH, chunk(**{name: -2}), "here")
    assert str(caught.value) == f"d.parquet: here: negative {name} (-2)"


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"dictionary_page_offset": 50}, "dictionary page after the data pages"),
        ({"dictionary_page_offset": 51}, "dictionary page after the data pages"),
        (
            {"dictionary_page_offset": None},
            "dictionary-encoded pages without a dictionary page",
        ),
        (
            {"dictionary_page_offset": None, "encodings": ("PLAIN_DICTIONARY",)},
            "dictionary-encoded pages without a dictionary page",
        ),
    ],
)
def test_a_chunks_dictionary_page_out_of_place(changes: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as caught:
        _chunk_bytes(PATH, chunk(**changes), "here")
    assert str(caught.value) == f"d.parquet: here: {message}"


def test_the_first_line_of_an_error() -> None:
    assert _first(ValueError("one\ntwo")) == "one"
    assert _first(KeyError()) == "KeyError"


def test_a_negative_row_count_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A footer whose second row group states −1 rows, after one of 0 rows and no columns
    (pyarrow's reading of it stood in for: no writer makes one)."""
    groups = [SimpleNamespace(num_rows=0, num_columns=0), SimpleNamespace(num_rows=-1)]
    meta = SimpleNamespace(serialized_size=10, num_row_groups=2, row_group=groups.__getitem__)
    monkeypatch.setattr(pq, "read_metadata", lambda _: meta)
    with pytest.raises(InputError) as caught:
        check_footer(PATH, _tight_file())
    assert str(caught.value) == "d.parquet: parquet footer, row group 1: negative row count"


def test_a_damaged_page_with_a_sound_footer_is_one_error() -> None:
    """The first column's dictionary page header (bytes 4 to 42 of this file) inverted:
    polars cannot read it, the footer check finds nothing wrong, and the one error names the
    file, "parquet" and polars' first line."""
    data = bytearray(cache_bytes(samples(), METADATA, 1e9, 2))
    chunk = pq.read_metadata(pa.BufferReader(bytes(data))).row_group(0).column(0)
    assert (chunk.dictionary_page_offset, chunk.data_page_offset) == (4, 42)
    for i in range(4, 42):
        data[i] ^= 0xFF
    check_footer(PATH, bytes(data))
    assert str(refusal(bytes(data))) == (
        "d.parquet: parquet: unreadable Parquet: parquet: File out of specification: "
        "Invalid thrift: transport error"
    )
