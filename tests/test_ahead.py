"""A trace's decode started before it is asked for (``tileprof.core.ahead``): it is the decode
the reader asks for, made once; a changed file, other arguments, a pipe or an error give what
the reader's own decode would."""

from __future__ import annotations

import gzip
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from polars.testing import assert_frame_equal

import tileprof.core._native as native
from tileprof.core import ahead
from tileprof.core.errors import InputError
from tileprof.inputs import threads
from tileprof.inputs.gpu.kineto_native import streamed_events

ROOT = Path(__file__).resolve().parent.parent
RANK = ROOT / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"


@pytest.fixture(autouse=True)
def nothing_pending() -> Any:
    ahead._pending.clear()
    yield
    ahead._pending.clear()


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "rank0.json"
    with gzip.open(RANK, "rb") as source, path.open("wb") as out:
        shutil.copyfileobj(source, out)
    return path


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Every call of the compiled file decoder, by whichever thread makes it."""
    made: list[tuple[Any, ...]] = []
    decode = native.decode_kineto_file

    def counted(*args: Any) -> Any:
        made.append(args)
        return decode(*args)

    monkeypatch.setattr(native, "decode_kineto_file", counted)
    return made


def frame(path: Path) -> pl.DataFrame:
    found = streamed_events(path, timeline=True)
    assert found is not None
    return found[0]


def start(path: Path) -> None:
    ahead.start_kineto_decode(str(path), threads.jobs(), timeline=True)


def test_a_decode_started_ahead_is_the_one_asked_for_made_once(
    trace: Path, calls: list[tuple[Any, ...]]
) -> None:
    start(trace)
    started = frame(trace)
    assert len(calls) == 1 and not ahead._pending
    assert_frame_equal(started, frame(trace))  # decoded now, as without it
    assert len(calls) == 2
    assert started.height > 1000


def test_a_file_changed_since_is_decoded_again(
    trace: Path, tmp_path: Path, calls: list[tuple[Any, ...]]
) -> None:
    start(trace)
    ahead._pending[0][1].outcome()  # the old text decoded
    short = tmp_path / "short.json"
    short.write_bytes(
        b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2,'
        b' "pid": 0, "tid": 7, "args": {"device": 0, "stream": 7}}]}'
    )
    short.replace(trace)
    assert frame(trace).height == 1
    assert len(calls) == 2


def test_other_arguments_or_another_file_are_decoded_as_asked(
    trace: Path, tmp_path: Path, calls: list[tuple[Any, ...]]
) -> None:
    start(trace)
    other = tmp_path / "other.json"
    shutil.copy(trace, other)
    assert_frame_equal(frame(other), frame(trace))
    assert [call[0] for call in calls] == [str(trace), str(other)]  # the started one taken
    start(trace)
    everything = streamed_events(trace)  # every row, not a timeline's: decoded as asked
    assert everything is not None and everything[0].height > frame(trace).height
    assert not ahead._pending  # the started decode of the same file let go


def test_only_a_regular_file_is_decoded_ahead_and_only_one_is_held(
    trace: Path, tmp_path: Path
) -> None:
    for odd in (tmp_path, tmp_path / "missing.json", Path("-")):
        ahead.start_kineto_decode(str(odd), 2, timeline=True)
        assert not ahead._pending
    start(trace)
    second = tmp_path / "second.json"
    shutil.copy(trace, second)
    start(second)
    assert [key[0] for key, _ in ahead._pending] == [str(second)]


def test_an_error_of_the_decode_ahead_is_the_readers_error(
    trace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    calls: list[tuple[Any, ...]] = []

    def panics(*args: Any) -> Any:
        calls.append(args)
        raise native.DecodeError("panic", None, "index out of bounds", None)

    monkeypatch.setattr(native, "decode_kineto_file", panics)
    start(trace)
    with pytest.raises(InputError) as ahead_error:
        frame(trace)
    assert len(calls) == 1  # raised by the decode ahead, not decoded again
    with pytest.raises(InputError) as own_error:
        frame(trace)
    assert len(calls) == 2
    assert str(ahead_error.value) == str(own_error.value)
    assert "internal error in the decoder (index out of bounds)" in str(own_error.value)


def test_breakdown_starts_its_first_trace_before_polars_is_imported(
    trace: Path, tmp_path: Path
) -> None:
    """The command module, the option and renderer registries and ``core.ahead`` import no
    polars, so the decode starts while polars, numpy and the analyses are imported; the
    output is the same bytes as with nothing started ahead."""

    def breakdown(out: Path, started: bool) -> str:
        script = f"""
import sys
import tileprof.core.ahead as ahead
seen = []
start = ahead.start_kineto_decode
def noted(*args, **kwargs):
    seen.append(sorted(m for m in ("polars", "numpy") if m in sys.modules))
    if {started!r}:
        start(*args, **kwargs)
ahead.start_kineto_decode = noted
from tileprof.commands.cli import main
try:
    main(["breakdown", {str(trace)!r}, "--format", "json", "-o", {str(out)!r}])
except SystemExit:
    pass
print(seen)
"""
        run = [sys.executable, "-c", script]
        done = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, check=True)
        return done.stdout.strip().splitlines()[-1]

    assert breakdown(tmp_path / "a.json", started=True) == "[[]]"
    assert breakdown(tmp_path / "b.json", started=False) == "[[]]"
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
