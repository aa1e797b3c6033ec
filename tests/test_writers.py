"""Writing a profile back out (``tileprof.views.writers``): every format reads back as the
profile it was written from, in one batch or many, gzipped or not; the bytes are exactly the
dump layout docs/formats.md gives, and the gzip bytes depend on the profile only."""

from __future__ import annotations

import gzip
import io
import json
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from tests.samples import profile, sample
from tileprof.core.errors import OptionError
from tileprof.model.profile import Profile, load
from tileprof.views import writers

SAMPLES = [
    sample(0, 0, 10, "gemm", useful=4, physical=8),
    sample(1, 5, 20, "gemm", useful=4, physical=8),
    sample(1, 30, 7, None, kind="exchange", phase=None),
    sample(2, 3, 9, "réduction", epoch=2, useful=1.5),
    sample(3, 1, 2, "copy"),
]


@pytest.fixture
def source(tmp_path: Path) -> Profile:
    return profile(tmp_path, SAMPLES, clockHz=1_500_000_000, tileCount=4)


@pytest.mark.parametrize("batch", [65536, 2, 1])
@pytest.mark.parametrize("fmt", writers.WRITE_FORMATS)
@pytest.mark.parametrize("gz", [False, True])
def test_every_format_reads_back_as_written(
    source: Profile,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fmt: str,
    batch: int,
    gz: bool,
) -> None:
    monkeypatch.setattr(writers, "WRITE_BATCH_ROWS", batch)
    path = tmp_path / f"out.{fmt}{'.gz' if gz else ''}"
    writers.write_dump(source, path, fmt)
    back = load(path, format=fmt)
    assert back.samples.equals(source.samples)
    assert back.metadata == source.metadata
    assert (back.clock_hz, back.tile_count) == (1_500_000_000, 4)
    assert path.read_bytes().startswith(b"\x1f\x8b") is gz


def test_json_is_the_documents_layout(source: Profile) -> None:
    text = writers.dump_bytes(source, "json")
    assert text.startswith(b'{"clockHz":1500000000,"tileCount":4,"samples":[{"physicalTile":0,')
    assert text.endswith(b"]}\n")
    document = json.loads(text)
    assert document["samples"][0]["metadata"] == [
        {"name": "usefulCycles", "value": "4"},
        {"name": "physicalWorkCycles", "value": "8"},
    ]
    assert "metadata" not in document["samples"][2]  # absent, not null


@pytest.mark.parametrize("batch", [65536, 2])
def test_json_batches_join_into_one_array(
    source: Profile, monkeypatch: pytest.MonkeyPatch, batch: int
) -> None:
    monkeypatch.setattr(writers, "WRITE_BATCH_ROWS", batch)
    text = writers.dump_bytes(source, "json")
    assert b",," not in text and b"[," not in text and b",]" not in text
    assert len(json.loads(text)["samples"]) == 5


def test_ndjson_is_a_header_line_then_a_sample_a_line(
    source: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writers, "WRITE_BATCH_ROWS", 2)
    lines = writers.dump_bytes(source, "ndjson").split(b"\n")
    assert lines[0] == b'{"clockHz":1500000000,"tileCount":4}'
    assert lines[-1] == b"" and len(lines) == 7
    assert [json.loads(line)["physicalTile"] for line in lines[1:-1]] == [0, 1, 1, 2, 3]


def test_csv_is_a_header_comment_then_one_header_row(
    source: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writers, "WRITE_BATCH_ROWS", 2)
    lines = writers.dump_bytes(source, "csv").decode().splitlines()
    assert lines[0] == '# {"clockHz":1500000000,"tileCount":4}'
    assert lines[1] == "physicalTile,offset,duration,phase,epoch,kind,operation,kernel,metadata"
    assert len(lines) == 7  # one header row, however many batches
    assert lines[4].startswith("1,30,7,,1,exchange,operation.1,,")


def test_an_empty_profile_is_still_a_dump(tmp_path: Path, source: Profile) -> None:
    empty = Profile(source.samples.head(0), (), 1_000, 2)
    assert writers.dump_bytes(empty, "json") == b'{"clockHz":1000,"tileCount":2,"samples":[]}\n'
    csv_lines = writers.dump_bytes(empty, "csv").decode().splitlines()
    assert csv_lines[1].startswith("physicalTile,offset")
    for fmt in writers.WRITE_FORMATS:
        path = tmp_path / f"empty.{fmt}"
        writers.write_dump(empty, path, fmt)
        assert load(path, format=fmt).samples.height == 0


def test_parquet_states_the_device_in_its_key_value_metadata(source: Profile) -> None:
    data = writers.dump_bytes(source, "parquet")
    stated = pq.read_metadata(io.BytesIO(data)).metadata
    assert stated[b"clockHz"] == b"1500000000" and stated[b"tileCount"] == b"4"
    table = pl.read_parquet(io.BytesIO(data))
    assert table.columns[:3] == ["physicalTile", "offset", "duration"]
    assert table["kind"].dtype == pl.String
    assert table["metadata"][2] is None


def test_gzip_bytes_depend_on_the_profile_only(source: Profile, tmp_path: Path) -> None:
    first, second = tmp_path / "a.json.gz", tmp_path / "b.json.gz"
    writers.write_dump(source, first, "json")
    writers.write_dump(source, second, "json")
    assert first.read_bytes() == second.read_bytes()
    assert gzip.decompress(first.read_bytes()) == writers.dump_bytes(source, "json")
    header = first.read_bytes()[:10]
    assert header[3] == 0  # no name stored
    assert header[4:8] == b"\0\0\0\0"  # no time stored


def test_an_unknown_format_is_refused_before_anything_is_written(
    source: Profile, tmp_path: Path
) -> None:
    with pytest.raises(OptionError, match="cannot write format 'xml' \\(one of json, ndjson"):
        writers.dump_bytes(source, "xml")
    with pytest.raises(OptionError):
        writers.write_dump(source, tmp_path / "out.xml", "xml")
    assert not (tmp_path / "out.xml").exists()


def test_a_profile_without_metadata_still_types_the_column_as_text(tmp_path: Path) -> None:
    """docs/formats.md: metadata is JSON text per row; a column of nulls keeps that type, so
    another reader of the Parquet file finds a string column, not a null-typed one."""
    bare = profile(tmp_path, [sample(0, 0, 10), sample(1, 0, 5)])
    assert bare.metadata == ()
    table = pl.read_parquet(io.BytesIO(writers.dump_bytes(bare, "parquet")))
    assert table.schema["metadata"] == pl.String
    assert table["metadata"].to_list() == [None, None]
