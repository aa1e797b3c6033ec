"""The tile-dump side of the input registry (``tileprof.inputs``): the format a file name
suggests, a file's head, whether gzipped and its size (``peek``), a device checked against
samples already in memory (``check_device``) and the decoding threads' setting."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import msgspec
import pytest

from tests.samples import document, fifo_of, frame, sample
from tileprof.core.errors import InputError
from tileprof.inputs import (
    check_device,
    decoding_jobs,
    detect,
    detect_dump_format,
    format_from_extension,
    is_tile_dump_head,
    peek,
    read_dump,
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
    path = fifo_of(tmp_path, data)
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
    """The way back restores the setting before, also one that was not the default."""
    before = threads.setting()
    try:
        for previous in (None, 2):
            threads.configure(previous)
            restore = decoding_jobs(3)
            assert threads.setting() == 3 and threads.jobs() == 3
            restore()
            assert threads.setting() == previous
    finally:
        threads.configure(before)


def test_every_run_source_is_named_in_words_when_a_tile_command_refuses_it() -> None:
    """``_refuse_run_source`` names a run source by its words (``a PyTorch profiler trace``):
    every run-source format has them, so none is named by its bare format name."""
    from tileprof.inputs import _RUN_SOURCE_WORDS, INPUTS, SUMMARY_DOCUMENT, TILE_DUMP

    sources = {f.name for f in INPUTS if f.kind not in (TILE_DUMP, SUMMARY_DOCUMENT)}
    assert len(sources) == 9 and sources == set(_RUN_SOURCE_WORDS)


TEN_KEYS = msgspec.json.encode({f"k{i}": i for i in range(9, -1, -1)})
"""A document of ten keys, written last to first: the error lists the first eight, sorted."""
KNOWN = "a tile dump, latency benchmarks, an energy report, a PyTorch trace or a run table"


@pytest.mark.parametrize(
    ("data", "keys"),
    [
        (b'{"b": 1, "a": 2}', "a, b"),
        (b"{}", "none"),
        (TEN_KEYS, "k0, k1, k2, k3, k4, k5, k6, k7"),
    ],
)
def test_json_of_no_known_layout_names_its_first_keys(data: bytes, keys: str) -> None:
    with pytest.raises(InputError) as raised:
        detect("f.json", data)
    assert (raised.value.path, raised.value.where) == ("f.json", "$")
    assert (
        raised.value.message
        == f"JSON of no known layout (top-level keys: {keys}); expected {KNOWN}"
    )
    with pytest.raises(InputError) as raised:
        detect("f.json", data, "a PyTorch trace")
    assert raised.value.message.endswith("); expected a PyTorch trace")


@pytest.mark.parametrize(
    ("data", "columns"),
    [
        (b"x,y,z\n1,2,3\n", "x, y, z"),
        (b"a,b,c,d,e,f,g\n1,2,3,4,5,6,7\n", "a, b, c, d, e, f"),
        (b"", "none"),
    ],
)
def test_csv_of_no_known_layout_names_its_first_columns(data: bytes, columns: str) -> None:
    with pytest.raises(InputError) as raised:
        detect("f.csv", data, "a run table")
    assert (raised.value.path, raised.value.where) == ("f.csv", "line 1")
    assert (
        raised.value.message == f"CSV of no known layout (columns: {columns}); expected a run table"
    )


def test_text_of_no_kind_is_named_as_not_what_the_command_reads() -> None:
    with pytest.raises(InputError) as raised:
        detect("f.dat", b"hello", "a PyTorch trace")
    assert (raised.value.path, raised.value.where, raised.value.message) == (
        "f.dat",
        None,
        "not a PyTorch trace",
    )


@pytest.mark.parametrize(
    ("name", "what"),
    [
        ("traces/kineto_small.json", "a PyTorch profiler trace"),
        ("real/kernel_trace.csv", "a rocprofv3 kernel trace"),
    ],
)
def test_a_gpu_file_given_as_a_tile_dump_is_named_with_the_command_that_reads_it(
    name: str, what: str
) -> None:
    path = Path(__file__).parent.parent / "fixtures" / name
    with pytest.raises(InputError) as raised:
        read_dump(path)
    assert str(raised.value) == (
        f"{path}: this is {what}, not a tile dump; use `tileprof runs` (or `report`)"
    )


def test_a_dump_of_an_unknown_format_or_content_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "x.dat"
    path.write_bytes(b"hello there")
    with pytest.raises(InputError) as raised:
        read_dump(path, format="xml")
    assert (raised.value.path, raised.value.where) == (str(path), None)
    assert raised.value.message == (
        "unknown format 'xml' (one of json, ndjson, parquet, csv, tt-device-log)"
    )
    with pytest.raises(InputError) as raised:
        read_dump(path)
    assert (raised.value.path, raised.value.where) == (str(path), "start of file")
    assert raised.value.message == (
        "unknown format: not a JSON, NDJSON, Parquet or CSV tile dump (use --format-in)"
    )


def test_a_piped_dump_is_parsed_from_the_one_read(tmp_path: Path) -> None:
    data = document([sample(t, 0, 10) for t in range(3)], tileCount=4)
    path = fifo_of(tmp_path, data)
    parsed, _clock, tiles, chosen = read_dump(path)
    assert (parsed.samples.height, tiles, chosen) == (3, 4, "json")


def test_a_file_that_fails_while_its_head_is_read_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An I/O error after the open (a bad disk block) names the file and the system's words."""
    import contextlib
    import errno

    import tileprof.inputs as inputs

    class Failing:
        def read(self, size: int) -> bytes:
            raise OSError(errno.EIO, "Input/output error")

    path = tmp_path / "d.json"
    path.write_text("{}")
    monkeypatch.setattr(inputs, "open_input", lambda p: contextlib.nullcontext(Failing()))
    with pytest.raises(InputError) as caught:
        inputs.peek(path)
    assert str(caught.value) == f"{path}: cannot read: Input/output error"


def test_read_dump_draws_no_progress_bar_unless_asked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library call is quiet by default, even on a terminal and for a large input; with
    ``quiet=False`` the bar is drawn there (``core.progress``)."""
    import io
    import sys

    from tileprof.core import progress
    from tileprof.inputs import read_dump

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    dump = tmp_path / "d.json"
    dump.write_bytes(document([sample(0, 0, 10), sample(1, 5, 20)]))
    monkeypatch.setattr(progress, "PROGRESS_THRESHOLD_BYTES", 0)  # every input is large
    monkeypatch.setenv("TERM", "xterm")  # rich draws nothing on a dumb terminal (some CIs')
    for name in ("NO_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for quiet, drawn in ((None, False), (False, True)):
        terminal = Terminal()
        monkeypatch.setattr(sys, "stderr", terminal)
        options = {} if quiet is None else {"quiet": quiet}
        read_dump(dump, **options)  # type: ignore[arg-type]
        assert bool(terminal.getvalue()) == drawn, quiet
    # the bar names the file and, told the decoder's progress, reaches the end
    assert "reading d.json" in terminal.getvalue() and "100%" in terminal.getvalue()


@pytest.mark.parametrize("suffix", [".json", ".ndjson", ".json.gz", ".ndjson.gz"])
def test_a_dump_whose_head_shows_its_format_is_never_read_whole_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, suffix: str
) -> None:
    """Its format is taken from its first bytes and the file handed to the compiled decoder's
    file reader (JSON, NDJSON): the whole file is not read into memory to find the format."""
    import tileprof.inputs as inputs
    from tests.report_samples import generated_profile
    from tileprof.views.writers import dump_bytes

    dump = tmp_path / f"d{suffix}"
    kind = suffix.split(".")[1]
    written = dump_bytes(generated_profile(samples=200, tiles=4), kind)
    dump.write_bytes(gzip.compress(written) if suffix.endswith(".gz") else written)

    def whole(path: object) -> bytes:
        raise AssertionError(f"{path} read whole")

    monkeypatch.setattr(inputs, "read_bytes", whole)
    parsed, _, _, chosen = inputs.read_dump(dump)  # a gzip file streamed through the decoder
    assert chosen == kind and len(parsed.samples) == 200


def test_a_dump_whose_head_is_blank_is_known_by_its_whole_content(tmp_path: Path) -> None:
    """A JSON dump after more white space than the head holds: its format is found in the
    whole file, not refused as unknown."""
    dump = tmp_path / "d.json"
    dump.write_bytes(b" " * (SNIFF_BYTES + 10) + document([sample(0, 0, 10)]))
    parsed, _, _, chosen = read_dump(dump)
    assert chosen == "json" and len(parsed.samples) == 1


def test_a_json_run_source_given_to_a_tile_command_is_named_as_what_it_is(tmp_path: Path) -> None:
    """Its head mentions "samples" (an event so named; indented as PyTorch writes a trace) and
    so sniffs as a JSON dump, but shows no sample field: the whole file is read and the trace
    named as a trace (with the command that reads it), not failed on a missing field."""
    trace = tmp_path / "t.json"
    event = {"ph": "X", "cat": "user_annotation", "name": "samples", "ts": 0, "dur": 1}
    trace.write_text(json.dumps({"schemaVersion": 1, "traceEvents": [event]}, indent=1))
    with pytest.raises(InputError) as caught:
        read_dump(trace)
    assert str(caught.value) == (
        f"{trace}: this is a PyTorch profiler trace, not a tile dump; use `tileprof runs` "
        "(or `report`)"
    )


def test_a_typed_json_decode_names_the_file_and_the_place() -> None:
    """``decode_typed_json``, the decode the layers above inputs use for their own JSON
    documents: the value as the type, a wrong value at its JSON path, broken JSON at its
    line and column, each naming the file."""
    import msgspec

    from tileprof.core.errors import InputError
    from tileprof.inputs import decode_typed_json

    class Point(msgspec.Struct):
        x: int
        names: list[str] = []

    path = Path("saved/point.json")
    assert decode_typed_json(path, b'{"x": 3, "names": ["a"]}', Point) == Point(3, ["a"])
    with pytest.raises(InputError) as wrong:
        decode_typed_json(path, b'{"x": 3, "names": [1]}', Point)
    assert str(wrong.value) == "saved/point.json: $.names[0]: expected `str`, got `int`"
    with pytest.raises(InputError) as broken:
        decode_typed_json(path, b'{"x": 3,\n "names": [', Point)
    assert str(broken.value).startswith("saved/point.json: line 2, column ")
