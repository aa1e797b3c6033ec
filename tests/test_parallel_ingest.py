"""Issues 15 and 22: JSON and NDJSON dumps decoded on threads by the compiled decoder.

Every decode is held to an independent reference written here with the ``json`` module (the
frame column for column, the metadata lists, the header), on hand-written awkward dumps and on
hypothesis-random ones, with tiny blocks (JSON) and windows (NDJSON) so that thread boundaries
fall everywhere: inside strings, escapes, unicode, nested objects, between CR and LF. Errors
are held to what the reference expects: the same file, sample index or line, field.
"""

from __future__ import annotations

import gzip
import json
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.samples import document, sample
from tileprof.commands.cli import cli
from tileprof.core import _native
from tileprof.core.errors import InputError
from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs import threads
from tileprof.inputs._common import ParsedDump
from tileprof.inputs.tile import json_dump, ndjson_dump

AWKWARD_TEXT = [
    'a},{"physicalTile":1,"offset":2,"duration":3}',
    'quote \\" and },{ and \\\\',
    "},{",
    '"},{"',
    "new\nline },\n{ inside",
    "\\",
    "ünïcødé },{ 🙂",
    "\r\n",
]
NUMBER_KEYS = ("usefulCycles", "physicalWorkCycles")


@pytest.fixture(autouse=True)
def two_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(threads, "_jobs", 2)


# --- the reference: the json module, one sample at a time -------------------------------------


def reference_frame(samples: list[dict[str, Any]]) -> tuple[pl.DataFrame, list[Any]]:
    """The typed frame and metadata lists of ``samples`` (decoded by ``json``), built the plain
    way: metadata interned by its JSON text in order of first appearance."""
    ids: dict[str, int] = {}
    table: list[tuple[tuple[str, str], ...]] = []
    rows: dict[str, list[Any]] = {name: [] for name in SAMPLE_SCHEMA}
    for record in samples:
        for name, key in (("tile", "physicalTile"), ("offset", "offset"), ("duration", "duration")):
            rows[name].append(record[key])
        for name in ("phase", "epoch", "kind", "operation", "kernel"):
            rows[name].append(record.get(name))
        metadata = record.get("metadata")
        pairs: tuple[tuple[str, str], ...] = ()
        if metadata is None:
            rows["metadataId"].append(None)
        else:
            text = json.dumps(metadata)
            if text not in ids:
                ids[text] = len(table)
                table.append(tuple((m["name"], str(m["value"])) for m in metadata))
            rows["metadataId"].append(ids[text])
            pairs = table[ids[text]]
        for key in NUMBER_KEYS:
            value = next((v for n, v in pairs if n == key), None)
            rows[key].append(None if value is None else float(value))
    return pl.DataFrame(rows, schema=SAMPLE_SCHEMA), table


def assert_matches_reference(parsed: ParsedDump, samples: list[dict[str, Any]]) -> None:
    frame, table = reference_frame(samples)
    assert parsed.samples.schema == frame.schema
    for name in frame.columns:
        assert parsed.samples[name].to_list() == frame[name].to_list(), name
    assert parsed.metadata == table


def _json_file(folder: Path, text: bytes, name: str = "d.json") -> Path:
    path = folder / name
    path.write_bytes(text)
    return path


def _outcome(parse: Callable[[], ParsedDump]) -> ParsedDump | str:
    try:
        return parse()
    except InputError as exc:
        return f"InputError: {exc}"


# --- awkward boundaries --------------------------------------------------------------------------


def _awkward_samples() -> list[dict[str, Any]]:
    return [
        sample(
            i % 16,
            10 * i,
            1 + i,
            text,
            kind=text,
            metadata=[{"name": "kernelSpec", "value": text}, {"name": "usefulCycles", "value": i}],
        )
        for i, text in enumerate(AWKWARD_TEXT * 2)
    ]


@pytest.mark.parametrize("indent", [None, 2, "\t"])
@pytest.mark.parametrize("block", [1, 2, 3, 7, 64, 500, None])
def test_json_blocks_anywhere_match_the_reference(
    tmp_path: Path, indent: int | str | None, block: int | None
) -> None:
    samples = _awkward_samples()
    text = json.dumps({"clockHz": 1e9, "tileCount": 16, "samples": samples}, indent=indent)
    path = _json_file(tmp_path, text.encode())
    parsed = json_dump.parse_file(path, block_bytes=block)
    assert_matches_reference(parsed, samples)
    assert parsed.header.clock_hz == 1e9 and parsed.header.tile_count == 16
    assert json_dump.parse(path, text.encode(), block_bytes=block).samples.equals(parsed.samples)


def test_crlf_unicode_escapes_and_nested_objects(tmp_path: Path) -> None:
    samples = [
        {**sample(i, i, 1, f"k\u00e9{i}"), "extra": [{"kind": "x"}, {"physicalTile": 9}]}
        for i in range(5)
    ]
    text = json.dumps({"samples": samples}, indent=1, ensure_ascii=True).replace("\n", "\r\n")
    assert "\\u00e9" in text
    for block in (1, 5, 33, None):
        parsed = json_dump.parse_file(_json_file(tmp_path, text.encode()), block_bytes=block)
        assert_matches_reference(parsed, samples)


@pytest.mark.parametrize(
    "text",
    [
        b'{"samples": []}',
        b'{"samples": 5}',
        b'{"samples": [1, 2]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}, 2]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1},]}',
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}] } x',
        b"[]",
        b'{"samples": [{"physicalTile": 1, "offset": 1, "duration": 1}',
    ],
)
def test_json_that_cannot_be_split_is_what_the_typed_decode_says(
    tmp_path: Path, text: bytes
) -> None:
    path = _json_file(tmp_path, text)
    expected = json_dump.precise_error(path, text)
    for block in (1, 4, None):
        outcome = _outcome(lambda block=block: json_dump.parse_file(path, block_bytes=block))
        if expected is None:
            assert not isinstance(outcome, str)
            assert_matches_reference(outcome, json.loads(text)["samples"])
        else:
            assert outcome == f"InputError: {expected}"


@pytest.mark.parametrize("window", [1, 40, 300, None])
def test_ndjson_awkward_lines_match_the_reference(tmp_path: Path, window: int | None) -> None:
    samples = _awkward_samples()
    lines = [b"", b'{"clockHz": 1e9, "tileCount": 16}', b"  "]
    lines += [json.dumps(s).encode() for s in samples]
    lines.insert(6, b"")
    lines.insert(9, b"\r")
    path = _json_file(tmp_path, b"\n".join(lines), "d.ndjson")  # no newline after the last line
    parsed = ndjson_dump.parse_file(path, window=window)
    assert_matches_reference(parsed, samples)
    assert parsed.header.clock_hz == 1e9
    # Sample 0 is on line 4 (blank, header, blank first); blank lines inserted at 7 and 10.
    expected_lines = [n for n in range(4, len(lines) + 1) if n not in (7, 10)]
    assert [parsed.place(i) for i in range(parsed.samples.height)] == [
        f"line {n}" for n in expected_lines
    ]


@pytest.mark.parametrize("separator", [b"\n", b"\r\n", b"\n  ", b"\n\x0b", b"\n\n"], ids=repr)
def test_ndjson_lines_with_white_space(tmp_path: Path, separator: bytes) -> None:
    lines = [msgspec.json.encode(sample(i % 16, i, 1 + i, f"k{i % 3}")) for i in range(30)]
    path = _json_file(tmp_path, separator.join(lines) + b"\n", "d.ndjson")
    parsed = _outcome(lambda: ndjson_dump.parse_file(path, window=300))
    if separator == b"\n\x0b":
        assert parsed == f"InputError: {path}: line 2, column 1: malformed JSON: invalid character"
        return
    assert not isinstance(parsed, str)
    assert parsed.samples["offset"].to_list() == list(range(30))
    step = 2 if separator == b"\n\n" else 1
    assert [parsed.place(i) for i in range(30)] == [f"line {1 + step * i}" for i in range(30)]


# --- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize("window", [1, 100, None])
def test_ndjson_errors_name_the_first_bad_line(tmp_path: Path, window: int | None) -> None:
    lines = [msgspec.json.encode(sample(i, i, 1, "k")) for i in range(12)]
    lines[8] = b'{"physicalTile": 8, "offset": "late", "duration": 1}'
    lines[10] = b"{broken"
    path = _json_file(tmp_path, b"\n".join([b"", *lines]) + b"\n", "d.ndjson")
    error = _outcome(lambda: ndjson_dump.parse_file(path, window=window))
    assert error == f"InputError: {path}: line 10: offset: expected `int`, got `str`"


def test_json_errors_and_metadata_errors_name_the_sample(tmp_path: Path) -> None:
    samples = [sample(i, i, 1, "k") for i in range(9)]
    bad_type = [*samples[:6], {**samples[6], "duration": "x"}, *samples[7:]]
    path = _json_file(tmp_path, document(bad_type))
    for block in (1, 30, None):
        error = _outcome(lambda block=block: json_dump.parse_file(path, block_bytes=block))
        assert error == f"InputError: {path}: sample 6: duration: expected `int`, got `str`"
    bad_metadata = [
        *samples[:5],
        sample(5, 5, 1, "k", metadata=[{"name": "usefulCycles", "value": "many"}]),
        *samples[6:],
    ]
    path.write_bytes(document(bad_metadata))
    error = _outcome(lambda: json_dump.parse_file(path, block_bytes=16))
    assert error == f"InputError: {path}: sample 5: metadata usefulCycles 'many' is not a number"
    path.write_bytes(document(samples)[:-30])
    error = _outcome(lambda: json_dump.parse_file(path, block_bytes=16))
    assert isinstance(error, str) and "line 1, column" in error and "truncated" in error


def test_a_panic_in_the_decoder_is_caught() -> None:
    with pytest.raises(_native.DecodeError) as caught:
        _native._panic_in_decoder(2)
    assert caught.value.args[0] == "panic"
    assert "on purpose" in caught.value.args[2]


def test_gzip_is_decoded_by_the_crate_and_corruption_named(tmp_path: Path) -> None:
    samples = _awkward_samples()
    data = json.dumps({"samples": samples}).encode()
    path = _json_file(tmp_path, gzip.compress(data), "d.json.gz")
    assert_matches_reference(json_dump.parse_file(path), samples)
    lines = b"\n".join(json.dumps(s).encode() for s in samples)
    ndjson = _json_file(tmp_path, gzip.compress(lines), "d.ndjson.gz")
    assert_matches_reference(ndjson_dump.parse_file(ndjson, window=50), samples)
    for target in (path, ndjson):
        target.write_bytes(target.read_bytes()[:-12])
        reader = json_dump if target is path else ndjson_dump
        error = _outcome(lambda reader=reader, target=target: reader.parse_file(target))
        assert isinstance(error, str) and "corrupt or truncated gzip data" in error


# --- random dumps --------------------------------------------------------------------------------

_TEXT = st.text(alphabet=st.sampled_from('ab{}[],:"\\\n\r é🙂\u2028'), max_size=8)
_SAMPLE = st.fixed_dictionaries(
    {
        "physicalTile": st.integers(0, 2000),
        "offset": st.integers(0, 2**40),
        "duration": st.integers(0, 2**40),
    },
    optional={
        "phase": st.none() | st.integers(-(2**63), 2**63 - 1),
        "epoch": st.integers(0, 3),
        "kind": st.none() | _TEXT,
        "operation": _TEXT,
        "kernel": _TEXT,
        "metadata": st.none()
        | st.lists(
            st.fixed_dictionaries(
                {
                    "name": st.sampled_from(["usefulCycles", "physicalWorkCycles"]) | _TEXT,
                    "value": st.integers(0, 99) | st.sampled_from(["1.5", "7", "x", "-1"]),
                }
            ),
            max_size=3,
        ),
        "extra": st.recursive(
            st.none() | _TEXT, lambda inner: st.lists(inner, max_size=2), max_leaves=4
        ),
    },
)
_BAD = st.sampled_from(
    [None, ("offset", "x"), ("duration", 1.5), ("physicalTile", None), ("metadata", {"a": 1})]
)


def _expected_error(samples: list[dict[str, Any]]) -> tuple[int, str] | None:
    """(index, field) of the first sample the reference rejects, or None."""
    for index, record in enumerate(samples):
        for key in ("physicalTile", "offset", "duration"):
            if type(record.get(key)) is not int:
                return index, key
        metadata = record.get("metadata")
        if metadata is not None and not isinstance(metadata, list):
            return index, "metadata"
    for index, record in enumerate(samples):
        for entry in record.get("metadata") or []:
            if entry["name"] in NUMBER_KEYS:
                value = str(entry["value"])
                try:
                    number = float(value)
                except ValueError:
                    return index, entry["name"]
                if not math.isfinite(number) or number < 0:
                    return index, entry["name"]
    return None


def _check(
    parsed: ParsedDump | str, samples: list[dict[str, Any]], place: Callable[[int], str]
) -> None:
    expected = _expected_error(samples)
    if expected is None:
        assert not isinstance(parsed, str), parsed
        assert_matches_reference(parsed, samples)
        return
    index, field = expected
    assert isinstance(parsed, str)
    assert f": {place(index)}: " in parsed and field in parsed, (parsed, expected)


@settings(
    derandomize=True,
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    samples=st.lists(_SAMPLE, min_size=0, max_size=12),
    bad=_BAD,
    bad_at=st.integers(0, 11),
    indent=st.sampled_from([None, 1]),
    block=st.integers(1, 200),
    jobs=st.integers(1, 3),
)
def test_random_dumps_match_the_reference(
    samples: list[dict[str, Any]],
    bad: tuple[str, object] | None,
    bad_at: int,
    indent: int | None,
    block: int,
    jobs: int,
) -> None:
    threads.configure(jobs)
    if bad is not None and samples:
        key, value = bad
        samples[bad_at % len(samples)][key] = value
    text = json.dumps({"tileCount": 4096, "samples": samples}, indent=indent).encode()
    lines = b"\n".join(json.dumps(s).encode() for s in samples) + b"\n"
    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        json_path = _json_file(folder, text)
        ndjson_path = _json_file(folder, lines, "d.ndjson")
        parsed = _outcome(lambda: json_dump.parse_file(json_path, block_bytes=block))
        _check(parsed, samples, lambda i: f"sample {i}")
        parsed = _outcome(lambda: ndjson_dump.parse_file(ndjson_path, window=block))
        _check(parsed, samples, lambda i: f"line {i + 1}")


@settings(derandomize=True, max_examples=40, deadline=None)
@given(
    samples=st.lists(_SAMPLE, min_size=1, max_size=6),
    cut=st.integers(1, 60),
    block=st.integers(1, 50),
)
def test_truncated_dumps_are_errors_named_like_the_typed_decode(
    samples: list[dict[str, Any]], cut: int, block: int
) -> None:
    text = json.dumps({"samples": samples}).encode()[:-cut]
    with tempfile.TemporaryDirectory() as name:
        path = _json_file(Path(name), text)
        expected = json_dump.precise_error(path, text)
        parsed = _outcome(lambda: json_dump.parse_file(path, block_bytes=block))
        assert expected is not None and parsed == f"InputError: {expected}"


# --- the binding, fuzzed -------------------------------------------------------------------------

_SEED = document([sample(i % 4, i, 1 + i, f"k{i % 2}", useful=i) for i in range(6)])
_GARBAGE = st.sampled_from(
    [b"\x00", b"\xff", b'"', b"\\", b"{", b"}", b"[", b"]", b",", b"\n", b"1e999"]
)


@pytest.mark.fuzz
@settings(derandomize=True, max_examples=150, deadline=None)
@given(
    edits=st.lists(st.tuples(st.integers(0, len(_SEED)), _GARBAGE, st.integers(0, 3)), max_size=4),
    block=st.integers(1, 64),
    jobs=st.integers(1, 3),
)
def test_fuzzed_bytes_decode_or_raise_decode_error(
    edits: list[tuple[int, bytes, int]], block: int, jobs: int
) -> None:
    """Whatever the bytes, the binding returns columns or raises its DecodeError (never a crash,
    a hang or another exception); when the json module decodes them, so must the crate."""
    data = bytearray(_SEED)
    for at, garbage, removed in edits:
        data[at : at + removed] = garbage
    text = bytes(data)
    for decode in (
        lambda: _native.decode_json_bytes(text, jobs, block)[0],
        lambda: _native.decode_ndjson_bytes(text, jobs, block)[0],
    ):
        try:
            columns = decode()
        except _native.DecodeError as error:
            assert error.args[0] in ("json", "line")
            continue
        assert len(pl.DataFrame(columns)) == len(columns)
    try:
        records = json.loads(text)["samples"]
        valid = isinstance(records, list) and _expected_error(records) is None
        if valid:
            reference_frame(records)
    except (ValueError, RecursionError, LookupError, TypeError, AttributeError):
        return  # not a dump the reference reads
    with tempfile.TemporaryDirectory() as name:
        path = _json_file(Path(name), text)
        parsed = _outcome(lambda: json_dump.parse_file(path, block_bytes=block))
        if valid and json_dump.precise_error(path, text) is None:
            assert not isinstance(parsed, str), parsed
            assert_matches_reference(parsed, records)


# --- threads -------------------------------------------------------------------------------------


def test_summary_with_jobs_matches_one_thread(tmp_path: Path) -> None:
    path = _json_file(
        tmp_path, document([sample(i % 16, i, 1 + i % 3, f"k{i % 4}") for i in range(50)])
    )
    runner = CliRunner()
    one = runner.invoke(cli, ["summary", str(path), "--format", "json", "--jobs", "1"])
    two = runner.invoke(cli, ["summary", str(path), "--format", "json", "--jobs", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    assert one.output == two.output
    assert json.loads(two.output)  # a real summary document
    assert threads.setting() == 2  # the command restored the API's setting


def test_default_jobs_are_the_usable_cores() -> None:
    import os

    threads.configure(None)
    assert threads.jobs() == len(os.sched_getaffinity(0))
    threads.configure(3)
    assert threads.jobs() == 3
    with pytest.raises(ValueError):
        threads.configure(0)


def test_the_api_needs_no_main_guard(tmp_path: Path) -> None:
    """A script that loads a dump at its top level runs as is: threads, not spawned processes
    that would import the script again."""
    import subprocess
    import sys

    dump = _json_file(tmp_path, document([sample(i, i, 1, "k") for i in range(100)]))
    script = tmp_path / "script.py"
    script.write_text(
        f"import tileprof\nprofile = tileprof.load({str(dump)!r})\nprint(profile.samples.height)\n"
    )
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "100"
