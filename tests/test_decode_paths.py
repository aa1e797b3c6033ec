"""Issue 22: the decoder's one-thread path (no structural scan) and its fast sample path, held
to the same ``json``-module reference as every other path (tests/test_parallel_ingest.py).

With the default blocks, a JSON dump is decoded without the scan that splits the work: one
thread decodes the samples array from its ``[`` on, which finds its ``]``; several threads each
guess where a sample starts in their range, and a guess is kept only where the run before it
ended. Each sample is read
by the crate's fast path, and serde_json decodes the samples the fast path leaves to it.
Progress is reported while decoding, as stretches of the file finish.
"""

from __future__ import annotations

import gzip
import json
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samples import sample
from tests.test_parallel_ingest import (
    _BAD,
    _SAMPLE,
    _awkward_samples,
    _check,
    _json_file,
    _outcome,
    assert_matches_reference,
)
from tileprof.core import _native
from tileprof.core.errors import InputError
from tileprof.inputs import native, read_dump, threads
from tileprof.inputs._format import ProgressFn
from tileprof.inputs.tile import json_dump, ndjson_dump


@pytest.fixture(autouse=True)
def one_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "_jobs", 1)


@pytest.mark.parametrize("jobs", [1, 2, 3])
@pytest.mark.parametrize("indent", [None, 2, "\t"])
def test_default_blocks_awkward_dumps_match_the_reference(
    tmp_path: Path, indent: int | str | None, jobs: int
) -> None:
    threads.configure(jobs)
    samples = _awkward_samples()
    head = {"note": '"samples": [', "groups": [{"samples": [1]}], "clockHz": 1e9}
    text = json.dumps({**head, "samples": samples, "tileCount": 16}, indent=indent)
    path = _json_file(tmp_path, text.encode())
    parsed = json_dump.parse_file(path)
    assert_matches_reference(parsed, samples)
    assert parsed.header.clock_hz == 1e9 and parsed.header.tile_count == 16


@pytest.mark.parametrize(
    "text",
    [
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}], "samples": []}',
        b'{"samples": [{"physicalTile": 1, "offset": 01, "duration": 1}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1e3}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1, "kind": "\\ud800"}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1, "kind": "a\tb"}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1, "x": [1,]}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1, "metadata": [1,}]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}] "x": 1}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}x]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1, "kind": "a\\nb"},'
        b' {"physicalTile": 1, "offset": 1, "duration": 1, "kind": "a\nb"}]}',
    ],
)
@pytest.mark.parametrize("jobs", [1, 2])
def test_default_blocks_errors_are_what_the_typed_decode_says(
    tmp_path: Path, text: bytes, jobs: int
) -> None:
    threads.configure(jobs)
    path = _json_file(tmp_path, text)
    expected = json_dump.precise_error(path, text)
    outcome = _outcome(lambda: json_dump.parse_file(path))
    if expected is None:
        assert not isinstance(outcome, str), outcome
        assert_matches_reference(outcome, json.loads(text)["samples"])
    else:
        assert outcome == f"InputError: {expected}"


def test_escapes_in_keys_and_texts_take_the_same_values(tmp_path: Path) -> None:
    samples = [sample(i, i, 1, f'k\u00e9"{i}\\', kind="\u2603\n") for i in range(4)]
    text = json.dumps({"samples": samples}, ensure_ascii=True).replace(
        '"physicalTile"', '"physical\\u0054ile"'
    )
    parsed = json_dump.parse_file(_json_file(tmp_path, text.encode()))
    assert_matches_reference(parsed, samples)


def test_a_repeated_number_key_is_checked_every_time_and_the_first_gives_the_value(
    tmp_path: Path,
) -> None:
    """Found by the random dumps below: a list naming usefulCycles twice, the second not a
    number, was taken (only the first entry was read); the reference refuses it."""
    good = sample(0, 0, 5)
    good["metadata"] = [
        {"name": "usefulCycles", "value": "4"},
        {"name": "usefulCycles", "value": "7"},
    ]
    parsed = json_dump.parse_file(_json_file(tmp_path, json.dumps({"samples": [good]}).encode()))
    assert parsed.samples["usefulCycles"].to_list() == [4.0]
    bad = sample(0, 0, 5)
    bad["metadata"] = [
        {"name": "usefulCycles", "value": "4"},
        {"name": "usefulCycles", "value": "x"},
    ]
    with pytest.raises(InputError, match=r"sample 1: metadata usefulCycles 'x' is not a number"):
        json_dump.parse_file(_json_file(tmp_path, json.dumps({"samples": [good, bad]}).encode()))


def test_a_malformed_metadata_list_is_named_before_a_bad_number_in_an_earlier_one(
    tmp_path: Path,
) -> None:
    """The reference checks a dump's structure before its numbers (found by the random dumps
    below: the bad number of sample 0 was named instead of sample 1's list that is no list)."""
    bad_number = sample(0, 0, 5)
    bad_number["metadata"] = [{"name": "usefulCycles", "value": "x"}]
    not_a_list = sample(1, 0, 5)
    not_a_list["metadata"] = 5
    text = json.dumps({"samples": [bad_number, not_a_list]}).encode()
    with pytest.raises(InputError, match=r": sample 1: metadata"):
        json_dump.parse_file(_json_file(tmp_path, text))


@settings(
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    samples=st.lists(_SAMPLE, min_size=0, max_size=12),
    bad=_BAD,
    bad_at=st.integers(0, 11),
    indent=st.sampled_from([None, 1]),
    jobs=st.integers(1, 3),
)
def test_default_blocks_random_dumps_match_the_reference(
    samples: list[dict[str, Any]],
    bad: tuple[str, object] | None,
    bad_at: int,
    indent: int | None,
    jobs: int,
) -> None:
    """One thread (no scan) and several (guessed starts, checked by the chain), default blocks."""
    threads.configure(jobs)
    if bad is not None and samples:
        key, value = bad
        samples[bad_at % len(samples)][key] = value
    text = json.dumps({"tileCount": 4096, "samples": samples}, indent=indent).encode()
    with tempfile.TemporaryDirectory() as name:
        path = _json_file(Path(name), text)
        _check(_outcome(lambda: json_dump.parse_file(path)), samples, lambda i: f"sample {i}")


# --- progress while decoding ---------------------------------------------------------------------


def _reports(parse: Callable[[ProgressFn], object]) -> list[tuple[int, int]]:
    seen: list[tuple[int, int]] = []
    parse(lambda done, total: seen.append((done, total)))
    return seen


def _assert_moves(seen: list[tuple[int, int]], total: int) -> None:
    """The reports rise to the total, and some come before the end."""
    assert seen and seen[-1] == (total, total)
    assert all(t == total for _, t in seen)
    dones = [done for done, _ in seen]
    assert dones == sorted(dones)
    assert any(0 < done < total for done in dones), dones


@pytest.mark.parametrize("jobs", [1, 2])
def test_json_progress_is_reported_while_decoding(tmp_path: Path, jobs: int) -> None:
    threads.configure(jobs)
    samples = [sample(i % 16, i, 1, f"k{i % 7}", useful=i) for i in range(400)]
    path = _json_file(tmp_path, json.dumps({"samples": samples}).encode())
    total = path.stat().st_size
    seen = _reports(lambda report: json_dump.parse_file(path, progress=report, block_bytes=2048))
    _assert_moves(seen, total)


def test_ndjson_progress_is_reported_per_window(tmp_path: Path) -> None:
    samples = [sample(i % 16, i, 1, f"k{i % 7}", useful=i) for i in range(400)]
    text = b"".join(json.dumps(s).encode() + b"\n" for s in samples)
    plain = _json_file(tmp_path, text, "d.ndjson")
    zipped = _json_file(tmp_path, gzip.compress(text), "d.ndjson.gz")
    for path in (plain, zipped):

        def parse(report: ProgressFn, path: Path = path) -> object:
            return ndjson_dump.parse_file(path, window=4096, progress=report)

        _assert_moves(_reports(parse), len(text))
        assert native.text_size(path) == len(text)


def test_an_exception_in_the_progress_callback_is_raised_after_the_decode(tmp_path: Path) -> None:
    text = b"".join(json.dumps(sample(i, i, 1)).encode() + b"\n" for i in range(200))
    path = _json_file(tmp_path, text, "d.ndjson")

    def fail(done: int) -> None:
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        _native.decode_ndjson_file(str(path), 2, 512, fail)


# --- invalid UTF-8 ---------------------------------------------------------------------------

_PLAIN = b'"physicalTile": 1, "offset": 1, "duration": 1'
_ENTRY = b'{"name": "usefulCycles", "value": "7"'


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    "extra",
    [b', "note": "caf\xe9"', b', "metadata": [' + _ENTRY + b', "note": "\xff\xfe"}]'],
    ids=["unknown key", "metadata entry's unknown key"],
)
def test_invalid_utf8_where_tileprof_never_reads_is_accepted(
    tmp_path: Path, jobs: int, extra: bytes
) -> None:
    """JSON text must be UTF-8, but bytes that tileprof skips were never checked (the msgspec
    decoder before the crate skipped them too): a dump written by a tool with a Latin-1 note
    still reads. The decoder checks every text it keeps."""
    threads.configure(jobs)
    record = b"{" + _PLAIN + extra + b"}"
    path = _json_file(tmp_path, b'{"samples": [' + record + b", " + record + b"]}")
    ndjson_path = _json_file(tmp_path, record + b"\n" + record + b"\n", "d.ndjson")
    for parsed in (json_dump.parse_file(path), ndjson_dump.parse_file(ndjson_path)):
        assert parsed.samples["tile"].to_list() == [1, 1]
        useful = parsed.samples["usefulCycles"].to_list()
        assert useful == ([7.0, 7.0] if b"metadata" in extra else [None, None])


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (b', "kernel": "caf\xe9"', "document: malformed JSON: Invalid UTF-8 encoded string"),
        (b', "caf\xe9": 1', "sample 0: invalid unicode code point"),
        (
            b', "metadata": [{"name": "reason", "value": "\xff"}]',
            "sample 0: metadata: Invalid UTF-8 encoded string",
        ),
    ],
    ids=["text field", "key", "metadata value"],
)
def test_invalid_utf8_in_what_tileprof_reads_is_an_error(
    tmp_path: Path, jobs: int, extra: bytes, message: str
) -> None:
    threads.configure(jobs)
    path = _json_file(tmp_path, b'{"samples": [{' + _PLAIN + extra + b"}]}")
    assert _outcome(lambda: json_dump.parse_file(path)) == f"InputError: {path}: {message}"


@pytest.mark.parametrize("blank", [b"", b"\n \n"])
def test_ndjson_errors_after_the_decode_name_the_line(tmp_path: Path, blank: bytes) -> None:
    """Range checks run on the frame and name a sample by its line, blank lines or none."""
    lines = [json.dumps(sample(i, i, 1)).encode() for i in range(4)]
    lines[3] = lines[3].replace(b'"duration": 1', b'"duration": -1')
    text = b'{"tileCount": 16}\n' + lines[0] + b"\n" + blank + b"\n".join(lines[1:])
    path = _json_file(tmp_path, text, "d.ndjson")
    line = 5 + blank.count(b"\n")
    outcome = _outcome(lambda: read_dump(path)[0])
    assert outcome == f"InputError: {path}: line {line}: negative duration -1"
