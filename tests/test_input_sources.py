"""The one-read helpers of ``inputs.sources`` that commands share: a file's size and sha256 read
in chunks (a pipe's from the one read already made), a streamed trace's digest of every byte
on disk, a trace's events from bytes in hand, and where ``load_runs`` sends a tile dump."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tests.samples import fifo_of, sample, write_dump
from tileprof.core.errors import InputError
from tileprof.core.run_schema import ParsedRuns
from tileprof.inputs import sources
from tileprof.inputs._format import SNIFF_BYTES, TILE_DUMP
from tileprof.inputs._sniff import NSYS_SQLITE, ROCPROF, TRACE

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
    path = fifo_of(tmp_path, data)
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


def test_a_file_of_no_runs_and_a_broken_summary_name_their_file() -> None:
    with pytest.raises(InputError) as raised:
        sources.parse_runs("s.json", "tile dump", b"")
    assert str(raised.value) == "s.json: tile dump files hold no GPU runs"
    with pytest.raises(InputError) as raised:
        sources.parse_summary_document("s.json", b"{")
    assert raised.value.path == "s.json" and "invalid JSON" in raised.value.message
    summary = FIXTURES / "seed_004_summary.json"
    assert isinstance(sources.parse_summary_document(summary, summary.read_bytes()), dict)


def test_a_file_that_is_no_trace_is_named_as_what_it_is(tmp_path: Path) -> None:
    summary = FIXTURES / "seed_004_summary.json"
    with pytest.raises(InputError) as raised:
        sources.read_kineto_events(summary)
    assert str(raised.value) == (
        f"{summary}: summary document, not a PyTorch profiler (Kineto) trace"
    )
    dump = write_dump(tmp_path / "dump.json", [sample(0, 0, 10)])
    with pytest.raises(InputError) as raised:
        sources.read_kineto_events(dump, expected="a GPU trace")
    assert raised.value.message == (
        "tile dump, not a GPU trace (give the one tile DUMP first, then GPU traces)"
    )
    # not a JSON object at all: the decoder names the place, in this file
    csv = FIXTURES / "real" / "kernel_trace.csv"
    with pytest.raises(InputError) as raised:
        sources.read_kineto_events(csv)
    assert (raised.value.path, raised.value.where) == (str(csv), "$")


def test_a_trace_file_is_decoded_through_the_window(monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read whole into memory: the streaming reader is offered the file."""
    offered: list[Path] = []
    real = sources.streamed_trace

    def spy(path: Path, **options: bool) -> sources.FileRead | None:
        offered.append(path)
        return real(path, **options)

    monkeypatch.setattr(sources, "streamed_trace", spy)
    events = sources.read_kineto_events(GZIP_TRACE)
    assert offered == [GZIP_TRACE] and events.frame.height > 0


def test_a_rocprof_trace_gives_its_runs_and_one_row_per_dispatch() -> None:
    path = FIXTURES / "real" / "kernel_trace.csv"
    runs, calls = sources.runs_and_calls(path, ROCPROF, path.read_bytes())
    assert calls is not None and calls.columns == ["name", "value"]
    assert calls.height == runs.frame.get_column("calls").sum() == 8
    assert set(runs.frame.get_column("source")) == {"kernel_trace.csv: agent 2"}
    assert set(calls.get_column("name")) == set(runs.frame.get_column("kernel"))


@pytest.mark.parametrize(
    ("name", "kind", "calls"),
    [("traces/kineto_small.json", TRACE, 8), ("real/h100_2gpu_1s.sqlite", NSYS_SQLITE, 4368)],
)
def test_a_call_source_gives_its_runs_and_one_row_per_call(
    name: str, kind: str, calls: int
) -> None:
    """Two devices each: the runs' sources name the file and the device."""
    path = FIXTURES / name
    runs, rows = sources.runs_and_calls(path, kind, path.read_bytes())
    assert rows is not None and rows.height == runs.frame.get_column("calls").sum() == calls
    named = {f"{path.name}: device {device}" for device in (0, 1)}
    assert set(runs.frame.get_column("source")) == named


def test_the_versions_a_source_states() -> None:
    trace = FIXTURES / "real" / "mi300_gaunernst_bert-small-uncased__1016001.json.gz"
    from_file = sources.source_environment(trace, TRACE, None)
    assert from_file == {"rocm": "6.4.43483", "driver": "60443483"}
    text = b'{"hip_runtime_version": "6.2.1", "cuda_driver_version": 12040, "traceEvents": []}'
    assert sources.source_environment("t.json", TRACE, text) == {
        "rocm": "6.2.1",
        "cudaDriver": "12040",
    }
    export = FIXTURES / "real" / "h100_2gpu_1s.sqlite"
    assert sources.source_environment(export, NSYS_SQLITE, export.read_bytes()) == {
        "driver": "580.95.05",
        "cudaDriver": "13000",
    }
    assert sources.source_environment("r.csv", ROCPROF, b"") == {}


def test_a_streamed_trace_for_a_timeline_keeps_only_the_timelines_rows() -> None:
    whole = sources.streamed_trace(GZIP_TRACE)
    timeline = sources.streamed_trace(GZIP_TRACE, timeline=True)
    assert whole is not None and timeline is not None
    assert timeline.kineto_events().frame.height < whole.kineto_events().frame.height


class FailingRead:
    """An open input whose reads fail as a disk's can (EIO)."""

    def __enter__(self) -> FailingRead:
        return self

    def __exit__(self, *_: object) -> None:
        return None

    def read(self, size: int = -1) -> bytes:
        raise OSError(5, "Input/output error")


def test_a_read_that_fails_is_one_line_naming_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "open_input", lambda path: FailingRead())
    with pytest.raises(InputError) as raised:
        sources.read_input(Path("broken.json"))
    assert str(raised.value) == "broken.json: cannot read: Input/output error"
    assert (raised.value.path, raised.value.where) == ("broken.json", None)


def test_a_tile_dump_is_told_from_its_head_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dump is left to its loader after one read of ``SNIFF_BYTES``: never read whole here."""
    dump = write_dump(tmp_path / "dump.json", [sample(t % 4, 10 * t, 5) for t in range(2000)])
    sizes: list[int] = []
    real = sources.open_input

    def spied(path: Path) -> Any:
        handle = real(path)
        read = handle.read

        def counted(size: int = -1) -> bytes:
            sizes.append(size)
            return read(size)

        handle.read = counted
        return handle

    monkeypatch.setattr(sources, "open_input", spied)
    found = sources.read_input(dump)
    assert (found.path, found.kind, found.data) == (dump, TILE_DUMP, None)
    assert sizes == [SNIFF_BYTES] and dump.stat().st_size > SNIFF_BYTES


def test_an_unknown_file_is_refused_in_the_words_of_what_the_command_reads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("nothing tileprof reads\n")
    with pytest.raises(InputError) as raised:
        sources.read_input(path, reads="a PyTorch trace")
    assert raised.value.message == "not a PyTorch trace"
    utf16 = tmp_path / "utf16.json"
    utf16.write_bytes('{"samples": []}'.encode("utf-16"))
    with pytest.raises(InputError) as raised:
        sources.read_input(utf16)
    assert raised.value.path == str(utf16) and "UTF-16" in raised.value.message


def test_a_version_at_the_very_end_of_a_trace_is_found(tmp_path: Path) -> None:
    """The last match reaches the text's end (its value could go on in a next chunk that
    never comes): it is read from the kept tail."""
    path = tmp_path / "t.json"
    path.write_bytes(b'{"traceEvents": [], "cuda_driver_version": 12040')
    assert sources.trace_versions(path) == [(b"cuda_driver_version", b"12040")]


def test_a_trace_cut_short_is_one_line_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(GZIP_TRACE.read_bytes()[:5000])
    with pytest.raises(InputError) as raised:
        sources.trace_versions(path)
    assert (raised.value.path, raised.value.where) == (str(path), None)
    assert raised.value.message.startswith("cannot read: Compressed file ended")
