"""``tileprof.trace`` (``tileprof.views.trace.public``): what the Python call hands the
timeline builder for each argument, the file it writes and returns, its notes as warnings, and
its refusals (a wrong extension before any reading; filters given twice)."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest

from tests.samples import sample, write_dump
from tileprof.analyses.filters import Filters
from tileprof.core.errors import OptionError
from tileprof.model.profile import Profile, load
from tileprof.model.trace import DEFAULT_MAX_SAMPLES, parse_alignment
from tileprof.views.trace import public, trace_format

SAMPLES = [sample(t, 10 * t, 5, "gemm", epoch=e) for e in (1, 2) for t in range(4)]


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "d.json", SAMPLES, clockHz=1_000_000, tileCount=4)


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """Every call of the timeline builder, with its arguments by name."""
    seen: list[dict[str, Any]] = []
    real = public.build_timeline

    def spy(profile: Any, filters: Any, gpu: Any, alignment: Any, **options: Any) -> Any:
        seen.append({"profile": profile, "filters": filters, "gpu": gpu, "align": alignment})
        seen[-1].update(options)
        return real(profile, filters, gpu, alignment, **options)

    monkeypatch.setattr(public, "build_timeline", spy)
    return seen


def test_every_argument_reaches_the_builder(
    dump: Path, tmp_path: Path, calls: list[dict[str, Any]]
) -> None:
    out = public.trace(
        str(dump),
        tmp_path / "t.json",
        filters=Filters(epoch=2),
        align=["none"],
        tile_range=(1, 3),
        max_samples=3,
        critical_path=True,
    )
    (call,) = calls
    assert out == tmp_path / "t.json" and out.exists()
    assert isinstance(call["profile"], Profile)
    assert call["profile"].samples.equals(load(dump).samples)
    assert call["filters"] == Filters(epoch=2)
    assert call["gpu"] == []
    assert call["align"] == parse_alignment(("none",))
    assert (call["tile_range"], call["max_samples"], call["critical_path"]) == ((1, 3), 3, True)


def test_the_defaults_are_the_commands(
    dump: Path, tmp_path: Path, calls: list[dict[str, Any]]
) -> None:
    profile = load(dump)
    public.trace(profile, tmp_path / "t.json")
    (call,) = calls
    assert call["profile"] is profile
    assert call["filters"] == Filters()
    assert call["align"] == parse_alignment(())
    assert (call["tile_range"], call["max_samples"], call["critical_path"]) == (
        None,
        DEFAULT_MAX_SAMPLES,
        False,
    )


def test_filters_as_keywords_are_the_filters(
    dump: Path, tmp_path: Path, calls: list[dict[str, Any]]
) -> None:
    public.trace(dump, tmp_path / "a.json", epoch=1)
    public.trace(dump, tmp_path / "b.json", filters=Filters(epoch=1))
    assert calls[0]["filters"] == calls[1]["filters"] == Filters(epoch=1)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()


def test_gpu_traces_are_paths(tmp_path: Path, calls: list[dict[str, Any]]) -> None:
    from tileprof.model.examples import example_file

    gpu = tmp_path / "trace.json.gz"
    gpu.write_bytes(example_file("trace"))
    out = public.trace(None, tmp_path / "g.json", gpu_traces=[str(gpu)])
    assert calls[0]["profile"] is None and calls[0]["gpu"] == [gpu]
    assert json.loads(out.read_text())["traceEvents"]


def test_the_trace_is_in_the_format_its_extension_names(dump: Path, tmp_path: Path) -> None:
    chrome = public.trace(dump, tmp_path / "t.JSON")
    assert json.loads(chrome.read_text())["traceEvents"]
    perfetto = public.trace(dump, tmp_path / "t.pftrace")
    assert not perfetto.read_bytes().startswith(b"{")


def test_a_wrong_extension_fails_before_any_reading(tmp_path: Path) -> None:
    with pytest.raises(OptionError, match="unknown trace extension"):
        public.trace(tmp_path / "missing.json", tmp_path / "t.txt")


def test_filters_twice_is_refused(dump: Path, tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="either as Filters or as keywords"):
        public.trace(dump, tmp_path / "t.json", filters=Filters(), epoch=1)


def test_each_note_is_a_warning_from_the_callers_line(dump: Path, tmp_path: Path) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        public.trace(dump, tmp_path / "t.json", max_samples=2)
    notes = [w for w in caught if issubclass(w.category, UserWarning)]
    assert notes, "cutting 8 samples to 2 is said"
    assert all(Path(w.filename).name == Path(__file__).name for w in notes)


@pytest.mark.parametrize(
    ("name", "fmt"),
    [
        ("t.pftrace", "pftrace"),
        ("T.PFTRACE", "pftrace"),
        ("t.json", "json"),
        ("t.trace.json", "json"),
        ("t.json.gz", "json.gz"),
        ("T.Json.GZ", "json.gz"),
    ],
)
def test_the_extension_names_the_format(name: str, fmt: str) -> None:
    assert trace_format(Path("out") / name) == fmt


@pytest.mark.parametrize("name", ["t.gz", "t.txt", "t.pftrace.gz", "json", "t.json.bz2"])
def test_another_extension_is_refused_naming_those_known(name: str) -> None:
    with pytest.raises(OptionError) as caught:
        trace_format(Path(name))
    assert str(caught.value) == (f"{name}: unknown trace extension (use .pftrace, .json, .json.gz)")
