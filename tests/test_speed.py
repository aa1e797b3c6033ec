"""Issues 6 and 22: the compiled JSON decoder, the streaming NDJSON reader, the cache, convert
and progress."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys
from pathlib import Path

import msgspec
import pytest
from click.testing import CliRunner

import tileprof
from tests.samples import document, sample
from tileprof.commands.cli import cli
from tileprof.core import progress
from tileprof.core.errors import InputError
from tileprof.inputs import threads
from tileprof.inputs.tile import json_dump, ndjson_dump
from tileprof.model.cache import cache_path, load_cached

# Mixed and missing optional fields, metadata present, absent, empty, null and repeated.
MIXED = [
    sample(0, 100, 40, "gemm_f16", useful=10, physical=20, phase=3),
    sample(1, 90, 40, "gemm_f16", useful=12.5, physical=20, phase=4),
    sample(2, 0, 5, None, kind="exchange", phase=None, epoch=None),
    {"physicalTile": 3, "offset": 7, "duration": 1, "kind": "compute"},
    sample(3, 8, 2, "copy", metadata=[{"name": "kernelSpec", "value": "Copy { n: 4 }"}]),
    sample(4, 9, 3, "copy", metadata=[]),
    {"physicalTile": 5, "offset": 1, "duration": 2, "kernel": "", "metadata": None},
    sample(6, 3, 7, "gemm_f16", useful=10, physical=20, phase=3, extra={"ignored": [1, 2]}),
    {"physicalTile": 7, "offset": 4, "duration": 9, "operation": "op.2", "phase": 1},
]


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def _ndjson(samples: list[dict[str, object]], header: bool = True) -> bytes:
    lines = [msgspec.json.encode({"clockHz": 1e9, "tileCount": 16})] if header else []
    lines.extend(msgspec.json.encode(s) for s in samples)
    return b"\n".join(lines) + b"\n"


def _same(a: tileprof.Profile, b: tileprof.Profile) -> None:
    assert a.samples.equals(b.samples)
    assert a.metadata == b.metadata
    assert a.summary(samples=20).to_document() == b.summary(samples=20).to_document()


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_file_and_memory_decodes_agree_on_any_thread_count(
    tmp_path: Path, jobs: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(threads, "_jobs", jobs)
    data = document(MIXED * 3, clockHz=1e9, tileCount=16)
    path = _write(tmp_path / "d.json", data)
    in_memory = json_dump.parse(path, data)
    from_file = json_dump.parse_file(path)
    assert from_file.samples.equals(in_memory.samples)
    assert from_file.metadata == in_memory.metadata
    assert from_file.header == in_memory.header
    assert from_file.place(4) == in_memory.place(4) == "sample 4"
    gzipped = json_dump.parse_file(_write(tmp_path / "d.json.gz", gzip.compress(data)))
    assert gzipped.samples.equals(in_memory.samples)


def test_valid_json_never_runs_the_precise_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _write(tmp_path / "d.json", document(MIXED * 3, clockHz=1e9, tileCount=16))

    def no_fallback(*_: object) -> None:
        raise AssertionError("valid JSON was decoded a second time to word an error")

    monkeypatch.setattr(json_dump, "precise_error", no_fallback)
    assert json_dump.parse_file(path).samples.height == len(MIXED) * 3


def test_pretty_printed_json_takes_the_fast_path_too(tmp_path: Path) -> None:
    pretty = json.dumps({"clockHz": 1e9, "tileCount": 16, "samples": MIXED}, indent=2).encode()
    compact = _write(tmp_path / "c.json", document(MIXED, clockHz=1e9, tileCount=16))
    _same(tileprof.load(_write(tmp_path / "p.json", pretty)), tileprof.load(compact))


def test_every_reader_gives_the_same_profile(tmp_path: Path) -> None:
    json_path = _write(tmp_path / "d.json", document(MIXED, clockHz=1e9, tileCount=16))
    ndjson_path = _write(tmp_path / "d.ndjson", _ndjson(MIXED))
    reference = tileprof.load(json_path)
    _same(tileprof.load(ndjson_path), reference)
    for path in (json_path, ndjson_path):
        in_memory = tileprof.load(path)  # detection by content; the in-memory parsers agree
        parser = json_dump if path.suffix == ".json" else ndjson_dump
        parsed = parser.parse(path, path.read_bytes())
        assert parsed.samples.equals(in_memory.samples)


@pytest.mark.parametrize(
    ("bad", "where", "words"),
    [
        ({"offset": "12"}, "sample 4", "offset: expected `int`, got `str`"),
        ({"physicalTile": None}, "sample 4", "physicalTile: expected `int`, got `null`"),
        ({"metadata": [{"name": "usefulCycles", "value": 5}]}, None, None),
        ({"metadata": [{"name": "usefulCycles", "value": "x"}]}, "sample 4", "not a number"),
        ({"metadata": {"a": 1}}, "sample 4", "metadata"),
    ],
)
def test_decoder_failure_is_worded_by_the_precise_decode(
    tmp_path: Path, bad: dict[str, object], where: str | None, words: str | None
) -> None:
    samples = [sample(i, i, 1, "k") for i in range(8)]
    samples[4] = {**samples[4], **bad}
    data = document(samples)
    path = _write(tmp_path / "d.json", data)
    precise = json_dump.precise_error(path, data)
    if precise is None and where is None:  # valid (a numeric metadata value is fine)
        assert json_dump.parse_file(path).samples.equals(json_dump.parse(path, data).samples)
        return
    if precise is None:  # the document decodes; its metadata is what is wrong
        with pytest.raises(InputError) as caught:
            tileprof.load(path)
        assert caught.value.where == where
        assert words is not None and words.lower() in str(caught.value).lower()
        return
    with pytest.raises(InputError) as caught:
        tileprof.load(path)
    assert str(caught.value) == str(precise)
    assert caught.value.where == where
    assert words is not None and words.lower() in str(caught.value).lower()


def test_truncated_json_names_the_place(tmp_path: Path) -> None:
    data = document([sample(i, i, 1) for i in range(5)])
    path = _write(tmp_path / "d.json", data[:-20])
    with pytest.raises(InputError, match=r"line 1, column \d+: malformed JSON"):
        tileprof.load(path)


def test_ndjson_reader_streams_through_any_window(tmp_path: Path) -> None:
    samples = [sample(i % 16, i, 1 + i % 5, f"k{i % 3}", useful=i % 4) for i in range(25)]
    data = _ndjson(samples)
    path = _write(tmp_path / "d.ndjson", data)
    whole = ndjson_dump.parse_file(path)
    assert whole.samples.height == 25 and whole.header.clock_hz == 1e9
    for window in (1, 7, 64, 1000):  # smaller than a line, a few lines, the whole file
        parsed = ndjson_dump.parse_file(path, window=window)
        assert parsed.samples.equals(whole.samples)
        assert parsed.metadata == whole.metadata
        assert parsed.place(24) == whole.place(24) == "line 26"
    gzipped = ndjson_dump.parse_file(
        _write(tmp_path / "d.ndjson.gz", gzip.compress(data)), window=64
    )
    assert gzipped.samples.equals(whole.samples)
    assert ndjson_dump.parse(path, data).samples.equals(whole.samples)


def test_ndjson_errors_name_the_line_in_any_window(tmp_path: Path) -> None:
    lines = _ndjson([sample(i, i, 1) for i in range(9)]).split(b"\n")
    lines.insert(7, b"")
    lines[8] = lines[8].replace(b'"offset":6', b'"offset":"6"')
    path = _write(tmp_path / "d.ndjson", b"\n".join(lines))
    for window in (1, 100, None):
        with pytest.raises(InputError) as caught:
            ndjson_dump.parse_file(path, window=window)
        assert caught.value.where == "line 9"
        assert "offset" in caught.value.message


def test_ndjson_validation_errors_use_line_numbers(tmp_path: Path) -> None:
    data = _ndjson([sample(i, i, 1) for i in range(3)] + [sample(99, 3, 1)])
    path = _write(tmp_path / "d.ndjson", data)
    with pytest.raises(InputError) as caught:
        tileprof.load(path)
    assert caught.value.where == "line 5"


def test_cache_round_trip_gives_identical_summaries(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    path = _write(tmp_path / "d.json", document(MIXED, clockHz=1e9, tileCount=16))
    first = load_cached(path)
    entry = cache_path(path)
    assert entry.is_file() and entry.parent == tmp_path / "cache"
    second = load_cached(path)
    assert second.format == "parquet" and second.source == str(path)
    _same(first, second)
    _same(first, tileprof.load(path))
    runner = CliRunner()
    plain = runner.invoke(cli, ["summary", str(path), "--format", "json"])
    cached = runner.invoke(cli, ["summary", str(path), "--format", "json", "--cache"])
    assert plain.exit_code == cached.exit_code == 0
    assert plain.stdout == cached.stdout


def test_cache_key_changes_with_size_and_mtime(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "cache"))
    path = _write(tmp_path / "d.json", document([sample(0, 0, 10)]))
    key = cache_path(path)
    assert cache_path(path) == key
    assert cache_path(path, clock_hz=1e9) != key
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    touched = cache_path(path)
    assert touched != key
    load_cached(path)
    _write(path, document([sample(0, 0, 10), sample(1, 5, 10)]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert cache_path(path) != touched  # same mtime, new size
    assert load_cached(path).samples.height == 2


def test_cache_dir_defaults(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tileprof.model.cache import cache_dir

    monkeypatch.delenv("TILEPROF_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert cache_dir() == tmp_path / "xdg" / "tileprof"
    monkeypatch.setenv("TILEPROF_CACHE_DIR", str(tmp_path / "own"))
    assert cache_dir() == tmp_path / "own"


def test_convert_writes_the_cache_layout(tmp_path: Path) -> None:
    path = _write(tmp_path / "d.json", document(MIXED, clockHz=1e9, tileCount=16))
    out = tmp_path / "d.parquet"
    runner = CliRunner()
    result = runner.invoke(cli, ["convert", str(path), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"PAR1"
    _same(tileprof.load(out), tileprof.load(path))
    again = runner.invoke(cli, ["convert", str(path), "-o", str(out)])
    assert again.exit_code == 2 and "already exists" in again.stderr
    ndjson = tmp_path / "d.ndjson"
    assert runner.invoke(cli, ["convert", str(path), "-o", str(ndjson)]).exit_code == 0
    _same(tileprof.load(ndjson), tileprof.load(path))
    bad = runner.invoke(cli, ["convert", str(tmp_path / "missing.json"), "-o", str(out), "--force"])
    assert bad.exit_code == 2 and "missing.json" in bad.stderr


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_only_on_a_terminal_and_never_when_quiet() -> None:
    big = progress.PROGRESS_THRESHOLD_BYTES + 1
    assert progress.progress_wanted(big, quiet=False, stream=_Terminal())
    assert not progress.progress_wanted(big, quiet=True, stream=_Terminal())
    assert not progress.progress_wanted(big, quiet=False, stream=io.StringIO())
    assert not progress.progress_wanted(10, quiet=False, stream=_Terminal())
    terminal = _Terminal()
    with progress.progress_bar("reading", big, quiet=False, stream=terminal) as report:
        assert report is not None
        report(5, 10)
    assert terminal.getvalue()


def test_progress_is_for_inputs_over_the_threshold_on_stderr_by_default(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An input of exactly the threshold gets no bar; stderr is the stream when none is
    given; a stream that cannot say whether it is a terminal is not one."""
    at = progress.PROGRESS_THRESHOLD_BYTES
    assert not progress.progress_wanted(at, quiet=False, stream=_Terminal())
    monkeypatch.setattr(sys, "stderr", _Terminal())
    assert progress.progress_wanted(at + 1, quiet=False)
    assert not progress.progress_wanted(at + 1, quiet=False, stream=object())  # type: ignore[arg-type]


def test_cli_is_silent_on_stderr_when_not_a_terminal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(progress, "PROGRESS_THRESHOLD_BYTES", 0)
    for name, data in (("d.json", document(MIXED)), ("d.ndjson", _ndjson(MIXED))):
        path = _write(tmp_path / name, data)
        for quiet in ([], ["--quiet"]):
            result = CliRunner().invoke(cli, ["summary", str(path), "--format", "json", *quiet])
            assert result.exit_code == 0
            assert result.stderr == ""
            assert json.loads(result.stdout)["sampleCount"] == len(MIXED)
