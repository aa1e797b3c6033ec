"""Issue 22: the NDJSON decoder keeps each sample's line as runs of consecutive lines (no line
column), and hands ``metadataId`` over as the frame's nullable UInt32. Held to a plain
reference: the lines counted here one by one, the frame built by the ``json`` module.

Blank lines (of every kind the reader skips) fall anywhere: before the header, between samples,
at window and range boundaries (tiny windows, several threads), so runs start and merge
everywhere. Every sample's place, and the place of an error found on the frame (a range check)
or in the metadata, must name the line the sample is on.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samples import sample
from tests.test_parallel_ingest import _json_file, _outcome, assert_matches_reference
from tileprof.core import _native
from tileprof.core.errors import InputError
from tileprof.inputs import read_dump, threads
from tileprof.inputs._common import ParsedDump, validate_samples
from tileprof.inputs.tile import ndjson_dump

_BLANKS = st.lists(st.sampled_from([b"", b" ", b"\t", b"\r", b" \x0c "]), max_size=3)


def _text(samples: list[dict[str, Any]], blanks: list[list[bytes]], header: bool) -> bytes:
    """The dump's text: blank lines ``blanks[i]`` before sample i (and the header first)."""
    lines: list[bytes] = [b'{"tileCount": 64}'] if header else []
    for index, record in enumerate(samples):
        lines += blanks[index % len(blanks)] if blanks else []
        lines.append(json.dumps(record).encode())
    return b"\n".join(lines) + b"\n"


def _sample_lines(text: bytes, header: bool) -> list[int]:
    """The reference: the number of every line that holds a sample, counted one by one."""
    numbers = [n for n, line in enumerate(text.split(b"\n"), start=1) if line.strip()]
    return numbers[1:] if header else numbers


@settings(
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    count=st.integers(0, 14),
    blanks=st.lists(_BLANKS, min_size=1, max_size=5),
    header=st.booleans(),
    window=st.integers(1, 400),
    jobs=st.integers(1, 3),
)
def test_every_sample_names_its_line_whatever_the_blank_lines(
    count: int, blanks: list[list[bytes]], header: bool, window: int, jobs: int
) -> None:
    threads.configure(jobs)
    samples = [sample(i % 4, i, 1 + i, f"k{i % 3}", useful=i % 2) for i in range(count)]
    text = _text(samples, blanks, header)
    with tempfile.TemporaryDirectory() as name:
        path = _json_file(Path(name), text, "d.ndjson")
        parsed = ndjson_dump.parse_file(path, window=window)
        *_, runs = _native.decode_ndjson_file(str(path), jobs, window)
    assert_matches_reference(parsed, samples)
    lines = _sample_lines(text, header)
    assert [parsed.place(i) for i in range(count)] == [f"line {n}" for n in lines]
    # The runs are minimal: a new run exactly where a sample is not on the line after the last.
    breaks = [i for i in range(count) if i == 0 or lines[i] != lines[i - 1] + 1]
    runs_frame = pl.DataFrame(runs)
    assert runs_frame["start"].to_list() == breaks
    assert runs_frame["line"].to_list() == [lines[i] for i in breaks]


@pytest.mark.parametrize("window", [1, 50, None])
@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (("duration", -3), "negative duration -3"),
        (("physicalTile", 70), "physicalTile 70 is not below tileCount 64"),
        (
            ("metadata", [{"name": "usefulCycles", "value": "many"}]),
            "metadata usefulCycles 'many' is not a number",
        ),
    ],
)
def test_errors_found_after_the_decode_name_the_line_past_blank_lines(
    tmp_path: Path, window: int | None, bad: tuple[str, object], message: str
) -> None:
    """A range check on the frame, and a bad metadata list, name the bad sample's line."""
    samples = [sample(i % 4, i, 1, "k") for i in range(9)]
    key, value = bad
    samples[7][key] = value
    text = _text(samples, [[b""], [], [b" ", b"\r"]], header=True)
    path = _json_file(tmp_path, text, "d.ndjson")
    line = _sample_lines(text, header=True)[7]
    threads.configure(2)

    def load() -> ParsedDump:  # as read_dump does, with the window given
        parsed = ndjson_dump.parse_file(path, window=window)
        validate_samples(parsed.samples, path, 64, parsed.place)
        return parsed

    assert _outcome(load) == f"InputError: {path}: line {line}: {message}"
    assert _outcome(lambda: read_dump(path)[0]) == _outcome(load)


def test_metadata_ids_are_handed_over_as_the_frames_nullable_uint32(tmp_path: Path) -> None:
    """No metadata is a null id (not -1), the type is the frame's, and the columns are handed
    out once: the decoder's object keeps none of them."""
    samples = [sample(i, i, 1, useful=5 if i % 2 else None) for i in range(4)]
    path = _json_file(tmp_path, _text(samples, [], header=False), "d.ndjson")
    columns, *_ = _native.decode_ndjson_file(str(path), 2)
    by_name = dict(columns.columns())
    ids = pl.Series(by_name["metadataId"])
    assert ids.dtype == pl.UInt32
    assert ids.to_list() == [None, 0, None, 0]
    assert len(columns) == 4
    with pytest.raises(_native.DecodeError):
        columns.columns()
    assert ndjson_dump.parse_file(path).samples["metadataId"].to_list() == [None, 0, None, 0]


def test_the_per_sample_metadata_numbers_are_gathered_by_id_in_the_crate(tmp_path: Path) -> None:
    """``gather_by_id``: each sample's value by its metadata id, null where the sample has no
    metadata, where its list has no such number, or where the table has no such id; equal to
    polars' gather."""
    samples = [sample(i, i, 1, useful=[None, 5, 7][i % 3]) for i in range(7)]
    path = _json_file(tmp_path, _text(samples, [], header=False), "d.ndjson")
    columns, *_ = _native.decode_ndjson_file(str(path), 2)
    ids = dict(columns.columns())["metadataId"]
    tables: list[list[float | None]] = [[1.5, None], [], [2.5]]
    gathers = [pl.Series(column) for column in _native.gather_by_id(ids, tables, 3)]
    id_series = pl.Series(ids)
    assert id_series.to_list() == [None, 0, 1, None, 0, 1, None]
    assert (
        gathers[0].to_list() == pl.Series(tables[0], dtype=pl.Float64).gather(id_series).to_list()
    )
    assert gathers[1].to_list() == [None] * 7
    assert gathers[2].to_list() == [None, 2.5, None, None, 2.5, None, None]
    assert all(gather.dtype == pl.Float64 for gather in gathers)


def test_gather_by_id_refuses_ids_of_another_type_with_its_decode_error(tmp_path: Path) -> None:
    path = _json_file(tmp_path, _text([sample(0, 0, 1)], [], header=False), "d.ndjson")
    columns, *_ = _native.decode_ndjson_file(str(path), 1)
    with pytest.raises(_native.DecodeError, match="UInt32"):
        _native.gather_by_id(dict(columns.columns())["tile"], [[1.0]], 1)


# --- the errors, word for word (issue 38): a line, the header, gzip, and what the crate says --

_GOOD = b'{"physicalTile": 0, "offset": 0, "duration": 5, "kind": "compute", "kernel": "k"}'


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (
            [_GOOD, _GOOD, _GOOD.replace(b": 0,", b': "x",', 1)],
            "line 3: physicalTile: expected `int`, got `str`",
        ),
        (
            [_GOOD, b'{"physicalTile": 0,'],
            "line 2, column 20: malformed JSON: truncated: the file ends inside the document",
        ),
        (
            [_GOOD, _GOOD.replace(b', "duration": 5', b"")],
            "line 2: object missing required field `duration`",
        ),
        ([_GOOD, b"[1,2]"], "line 2: expected `object`, got `array`"),
        (
            [b'{"clockHz": "fast"}', _GOOD],
            "line 1: bad header: clockHz: expected `int | float | null`, got `str`",
        ),
        (
            [b'{"clockHz": 1e9, x}', _GOOD],
            "line 1, column 18: bad header: malformed JSON: object keys must be strings",
        ),
    ],
)
def test_a_bad_line_is_named_word_for_word(
    tmp_path: Path, lines: list[bytes], message: str
) -> None:  # fmt: skip
    path = tmp_path / "d.ndjson"
    path.write_bytes(b"\n".join(lines) + b"\n")
    for read in (
        lambda: ndjson_dump.parse_file(path),
        lambda: ndjson_dump.parse(path, path.read_bytes()),
    ):
        with pytest.raises(InputError) as caught:
            read()
        assert str(caught.value) == f"{path}: {message}"


def test_a_header_line_states_the_device(tmp_path: Path) -> None:
    path = tmp_path / "d.ndjson"
    path.write_bytes(b'{"clockHz": 2e9, "tileCount": 8}\n' + _GOOD + b"\n")
    parsed = ndjson_dump.parse_file(path)
    assert (parsed.header.clock_hz, parsed.header.tile_count) == (2e9, 8)
    assert parsed.place(0) == "line 2"


def test_a_truncated_gzip_says_pythons_reason(tmp_path: Path) -> None:
    import gzip

    whole = gzip.compress(_GOOD * 1000 + b"\n")
    path = tmp_path / "d.ndjson.gz"
    path.write_bytes(whole[: len(whole) // 2])
    with pytest.raises(InputError) as caught:
        ndjson_dump.parse_file(path)
    assert str(caught.value) == (
        f"{path}: corrupt or truncated gzip data (Compressed file ended before the "
        "end-of-stream marker was reached)"
    )


def _crate_error(tmp_path: Path, *args: object) -> str:
    path = tmp_path / "d.ndjson"
    return str(ndjson_dump._failure(path, ndjson_dump.native.DecodeError(*args)))


def test_each_kind_of_crate_error_becomes_its_line(tmp_path: Path) -> None:
    """The decoder's (kind, line, message, text): a line it names is decoded alone for
    msgspec's precise words, kept in the crate's where msgspec finds nothing wrong; any other
    kind, or a line without its number or text, is the crate's message alone."""
    import gzip

    path = tmp_path / "d.ndjson"
    bad = _GOOD.replace(b": 0,", b': "x",', 1)
    assert _crate_error(tmp_path, "line", 4, "crate's words", bad) == (
        f"{path}: line 4: physicalTile: expected `int`, got `str`"
    )
    assert _crate_error(tmp_path, "line", 4, "crate's words", _GOOD) == (
        f"{path}: line 4: crate's words"
    )
    for args in (
        ("io", None, "read failed", None),
        ("json", 3, "read failed", None),
        ("line", None, "read failed", bad),
        ("line", 4, "read failed", None),
    ):
        assert _crate_error(tmp_path, *args) == f"{path}: read failed", args
    assert _crate_error(tmp_path, "panic", None, "boom", None) == (
        f"{path}: internal error in the decoder (boom); please report it"
    )
    path.write_bytes(b"not gzip at all")
    assert _crate_error(tmp_path, "gzip", None, "crate's detail", None) == (
        f"{path}: corrupt or truncated gzip data (Not a gzipped file (b'no'))"
    )
    path.write_bytes(gzip.compress(_GOOD))  # Python finds nothing wrong: the crate's words
    assert _crate_error(tmp_path, "gzip", None, "crate's detail", None) == (
        f"{path}: corrupt or truncated gzip data (crate's detail)"
    )
    with pytest.raises(MemoryError):
        _crate_error(tmp_path, "memory", None, "the columns", None)


def test_a_line_nested_too_deeply_is_named_without_a_column(tmp_path: Path) -> None:
    """msgspec gives no byte position when it runs out of depth: the line alone is named."""
    deep = _GOOD[:-1] + b', "extra": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    assert _crate_error(tmp_path, "line", 2, "crate's words", deep) == (
        f"{tmp_path / 'd.ndjson'}: line 2: malformed JSON: nested too deeply (more levels of "
        "[ or { than any profile has)"
    )


def test_progress_is_reported_by_the_decoder_and_at_the_end(tmp_path: Path) -> None:
    """One window: the decoder reports it, then the reader reports the whole; the registry's
    streamed reader passes the callback on."""
    path = tmp_path / "d.ndjson"
    path.write_bytes(_GOOD + b"\n" + _GOOD + b"\n")
    size = path.stat().st_size
    calls: list[tuple[int, int]] = []
    ndjson_dump.parse_file(path, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(size, size), (size, size)]
    calls.clear()
    assert ndjson_dump.READER.parse_file is not None
    parsed = ndjson_dump.READER.parse_file(path, lambda d, t: calls.append((d, t)), size)
    assert parsed.samples.height == 2 and calls == [(size, size), (size, size)]
