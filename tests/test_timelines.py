"""``tileprof.inputs.timelines``: which reader each kind of file goes to, what a file that
holds no timeline is told, and which files are streamed rather than read whole."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from tileprof.core.errors import InputError
from tileprof.inputs import _sniff
from tileprof.inputs.timelines import _streamed_trace, load_timeline, parse_timeline
from tileprof.model.examples import example_file

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "real"
TENSTORRENT = FIXTURES / "ops_perf_results_2025_09_18_11_39_20.csv"


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "train.json"
    path.write_bytes(gzip.decompress(example_file("trace")))
    return path


def test_a_trace_is_read_by_the_kineto_reader_named_by_its_file(trace: Path) -> None:
    parsed = parse_timeline(trace, _sniff.TRACE, trace.read_bytes())
    loaded = load_timeline(trace)
    assert parsed.name == loaded.name == "train.json"
    assert parsed.events.equals(loaded.events) and parsed.steps.equals(loaded.steps)


def test_a_tenstorrent_report_is_read_by_its_reader_named_by_its_file() -> None:
    parsed = parse_timeline(TENSTORRENT, _sniff.TENSTORRENT, TENSTORRENT.read_bytes())
    assert parsed.name == TENSTORRENT.name
    assert parsed.events.height > 0
    assert parsed.events.equals(load_timeline(TENSTORRENT).events)


def test_a_kind_without_a_timeline_is_told_what_breakdown_reads() -> None:
    with pytest.raises(InputError) as caught:
        parse_timeline(Path("lat.txt"), "latency benchmarks", b"")
    assert str(caught.value) == (
        "lat.txt: a latency benchmarks holds no GPU timeline; `breakdown` reads PyTorch "
        "profiler traces, nsys SQLite exports and Tenstorrent ops reports"
    )


def test_a_file_of_no_known_kind_is_named_with_what_breakdown_reads(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("hello\n")
    with pytest.raises(InputError) as caught:
        load_timeline(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "a PyTorch profiler trace or an nsys SQLite export (what `breakdown` reads)" in message


def test_only_a_regular_file_is_streamed(
    trace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _streamed_trace(trace) is not None
    assert _streamed_trace(tmp_path) is None  # a folder
    monkeypatch.chdir(tmp_path)
    Path("-").write_bytes(trace.read_bytes())
    assert _streamed_trace("-") is None  # standard input, even beside a file named "-"
