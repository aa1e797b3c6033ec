"""Issue 15: JSON and NDJSON dumps decoded by worker processes give what one process gives.

Worker mode is forced on these small files by ``TILEPROF_PARALLEL_MIN_BYTES=0`` (and small
tasks), with one pool of two workers for the whole module; "serial" is the same call with the
threshold out of reach. Expected values are stated from the input itself where they can be.
"""

from __future__ import annotations

import json
import os
import signal
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import tileprof
from tests.samples import document, sample
from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.inputs import parallel
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
]


@pytest.fixture(scope="module", autouse=True)
def two_workers() -> Iterator[None]:
    parallel.configure(2)
    yield
    parallel.configure(None)


def _run(parse: Callable[[], ParsedDump], workers: bool) -> ParsedDump | str:
    """``parse()`` in worker mode or in process; an InputError comes back as its message."""
    saved = os.environ.get(parallel.MIN_BYTES_ENV)
    os.environ[parallel.MIN_BYTES_ENV] = "0" if workers else str(2**62)
    try:
        return parse()
    except InputError as exc:
        return f"InputError: {exc}"
    finally:
        if saved is None:
            del os.environ[parallel.MIN_BYTES_ENV]
        else:
            os.environ[parallel.MIN_BYTES_ENV] = saved


def _same(serial: ParsedDump | str, workers: ParsedDump | str) -> None:
    if isinstance(serial, str) or isinstance(workers, str):
        assert workers == serial
        return
    assert workers.samples.equals(serial.samples)
    assert workers.samples.schema == serial.samples.schema
    assert workers.metadata == serial.metadata
    assert workers.header == serial.header
    for index in range(serial.samples.height):
        assert workers.place(index) == serial.place(index)


def _both(parse: Callable[[], ParsedDump]) -> ParsedDump | str:
    serial = _run(parse, workers=False)
    _same(serial, _run(parse, workers=True))
    return serial


@pytest.fixture
def task_counter(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many tasks each worker-mode decode sent to the pool."""
    counts: list[int] = []
    real = parallel.run_tasks

    def counting(path: Path, function: Any, tasks: Any) -> Any:
        tasks = list(tasks)
        counts.append(len(tasks))
        return real(path, function, tasks)

    monkeypatch.setattr(parallel, "run_tasks", counting)
    return counts


def _awkward_samples() -> list[dict[str, object]]:
    samples: list[dict[str, object]] = []
    for i, text in enumerate(AWKWARD_TEXT * 2):
        samples.append(
            sample(
                i % 16,
                10 * i,
                1 + i,
                text,
                kind=text,
                metadata=[
                    {"name": "kernelSpec", "value": text},
                    {"name": "usefulCycles", "value": i},
                ],
            )
        )
    return samples


@pytest.mark.parametrize("indent", [None, 2])
@pytest.mark.parametrize("task_bytes", [1, 600, 1500])
def test_json_split_inside_awkward_strings_matches_serial(
    tmp_path: Path, task_counter: list[int], indent: int | None, task_bytes: int
) -> None:
    samples = _awkward_samples()
    text = json.dumps({"clockHz": 1e9, "tileCount": 16, "samples": samples}, indent=indent)
    path = tmp_path / "d.json"
    path.write_text(text)
    parsed = _both(lambda: json_dump.parse_file(path, task_bytes=task_bytes))
    # Really went to the workers: one task per sample when a task is 1 byte, fewer otherwise.
    assert len(task_counter) == 1
    assert task_counter[0] == len(samples) if task_bytes == 1 else 2 <= task_counter[0] < 14
    assert not isinstance(parsed, str)
    assert parsed.samples["kind"].to_list() == AWKWARD_TEXT * 2
    assert parsed.samples["usefulCycles"].to_list() == [float(i) for i in range(len(samples))]
    assert [dict(m)["kernelSpec"] for m in parsed.metadata] == AWKWARD_TEXT * 2


def _ranges(data: bytes, task_bytes: int) -> list[tuple[int, int]]:
    span = msgspec.json.decode(data, type=json_dump.SamplesSpan).samples
    found = json_dump.samples_span(data, span)  # type: ignore[arg-type]
    assert found is not None
    return json_dump.sample_ranges(data, *found, task_bytes)


@pytest.mark.parametrize("indent", [None, 1, "\t"])
def test_json_ranges_are_whole_samples(indent: int | str | None) -> None:
    samples = _awkward_samples()
    data = json.dumps({"samples": samples, "tileCount": 16}, indent=indent).encode()
    one_each = _ranges(data, 1)
    assert len(one_each) == len(samples)
    # Each range is exactly one sample's text: a cut never falls inside a string.
    assert [json.loads(data[start:end]) for start, end in one_each] == samples
    assert _ranges(data, len(data)) == [(one_each[0][0], one_each[-1][1])]
    decoded = [json.loads(b"[" + data[start:end] + b"]") for start, end in _ranges(data, 200)]
    assert [s for chunk in decoded for s in chunk] == samples


def test_json_cut_at_a_nested_object_is_caught_and_decoded_in_process(
    tmp_path: Path, task_counter: list[int]
) -> None:
    # An unknown field holding objects whose first key is a sample field: the candidate cuts
    # fall inside samples, the ranges do not decode, and the file is decoded in process.
    nested = [{"kind": "a"}, {"kind": "b"}, {"kind": "c"}]
    samples = [{**sample(i, i, 1, "k"), "extra": nested} for i in range(6)]
    path = tmp_path / "d.json"
    path.write_bytes(document(samples))
    data = path.read_bytes()
    starts = {start for start, _ in _ranges(data, 1)}
    assert any(data[start : start + 8] == b'{"kind":' for start in starts)  # a wrong cut
    parsed = _both(lambda: json_dump.parse_file(path, task_bytes=1))
    assert task_counter  # the workers were tried
    assert not isinstance(parsed, str)
    assert parsed.samples["tile"].to_list() == list(range(6))


@pytest.mark.parametrize("text", [b'{"samples": []}', b'{"samples": 5}', b'{"samples": [1, 2]}'])
def test_json_arrays_that_cannot_be_cut_decode_in_process(tmp_path: Path, text: bytes) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(text)
    _both(lambda: json_dump.parse_file(path, task_bytes=1))


@pytest.mark.parametrize("task_bytes", [1, 40, 300, 10**6])
def test_ndjson_awkward_lines_match_serial(
    tmp_path: Path, task_counter: list[int], task_bytes: int
) -> None:
    lines = [b"", b'{"clockHz": 1e9, "tileCount": 16}', b"  "]
    lines += [msgspec.json.encode(s) for s in _awkward_samples()]
    lines.insert(6, b"")
    lines.insert(9, b"\r")
    path = tmp_path / "d.ndjson"
    path.write_bytes(b"\n".join(lines))  # no newline after the last line
    parsed = _both(lambda: ndjson_dump.parse_file(path, task_bytes=task_bytes))
    assert task_counter and task_counter[0] >= (2 if task_bytes < 10**6 else 1)
    assert not isinstance(parsed, str)
    assert parsed.header.clock_hz == 1e9
    assert parsed.samples["kind"].to_list() == AWKWARD_TEXT * 2
    # Sample 0 is on line 4 (blank, header, blank first); blank lines inserted at 7 and 10.
    expected_lines = [n for n in range(4, len(lines) + 1) if n not in (7, 10)]
    assert [parsed.place(i) for i in range(parsed.samples.height)] == [
        f"line {n}" for n in expected_lines
    ]


@pytest.mark.parametrize("task_bytes", [1, 100, 10**6])
def test_ndjson_errors_name_the_same_line(tmp_path: Path, task_bytes: int) -> None:
    lines = [msgspec.json.encode(sample(i, i, 1, "k")) for i in range(12)]
    lines[8] = b'{"physicalTile": 8, "offset": "late", "duration": 1}'
    lines[10] = b"{broken"
    path = tmp_path / "d.ndjson"
    path.write_bytes(b"\n".join([b"", *lines]) + b"\n")
    error = _both(lambda: ndjson_dump.parse_file(path, task_bytes=task_bytes))
    assert error == f"InputError: {path}: line 10: offset: expected `int`, got `str`"


def test_json_errors_and_metadata_errors_name_the_same_sample(tmp_path: Path) -> None:
    samples = [sample(i, i, 1, "k") for i in range(9)]
    bad_type = [*samples[:6], {**samples[6], "duration": "x"}, *samples[7:]]
    path = tmp_path / "d.json"
    path.write_bytes(document(bad_type))
    error = _both(lambda: json_dump.parse_file(path, batch_rows=2, task_bytes=30))
    assert error == f"InputError: {path}: sample 6: duration: expected `int`, got `str`"
    bad_metadata = [
        *samples[:5],
        sample(5, 5, 1, "k", metadata=[{"name": "usefulCycles", "value": "many"}]),
        *samples[6:],
    ]
    path.write_bytes(document(bad_metadata))
    error = _both(lambda: json_dump.parse_file(path, batch_rows=2))
    assert error == f"InputError: {path}: sample 5: metadata usefulCycles 'many' is not a number"
    path.write_bytes(document(samples)[:-30])
    error = _both(lambda: json_dump.parse_file(path, batch_rows=2))
    assert isinstance(error, str) and "truncated" in error


_TEXT = st.text(alphabet=st.sampled_from('ab{}[],:"\\\n é🙂'), max_size=8)
_SAMPLE = st.fixed_dictionaries(
    {
        "physicalTile": st.integers(0, 2000),
        "offset": st.integers(0, 2**40),
        "duration": st.integers(0, 2**40),
    },
    optional={
        "phase": st.none() | st.integers(-5, 5),
        "epoch": st.integers(0, 3),
        "kind": st.none() | _TEXT,
        "operation": _TEXT,
        "kernel": _TEXT,
        "metadata": st.none()
        | st.lists(
            st.fixed_dictionaries({"name": _TEXT, "value": _TEXT | st.integers(0, 99)}),
            max_size=3,
        ),
    },
)
_BAD = st.sampled_from(
    [None, ("offset", "x"), ("duration", 1.5), ("physicalTile", None), ("metadata", {"a": 1})]
)


@settings(
    derandomize=True,
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    samples=st.lists(_SAMPLE, min_size=0, max_size=14),
    bad=_BAD,
    bad_at=st.integers(0, 13),
    indent=st.sampled_from([None, 1]),
    rows=st.integers(1, 4),
    task_bytes=st.integers(1, 400),
    cut=st.none() | st.integers(1, 40),
)
def test_random_dumps_decode_the_same_in_workers(
    samples: list[dict[str, Any]],
    bad: tuple[str, object] | None,
    bad_at: int,
    indent: int | None,
    rows: int,
    task_bytes: int,
    cut: int | None,
) -> None:
    if bad is not None and samples:
        key, value = bad
        samples[bad_at % len(samples)][key] = value
    text = json.dumps({"tileCount": 4096, "samples": samples}, indent=indent).encode()
    lines = b"\n".join(json.dumps(s).encode() for s in samples) + b"\n"
    if cut is not None:
        text, lines = text[:-cut], lines[:-cut]
    with tempfile.TemporaryDirectory() as folder:
        json_path, ndjson_path = Path(folder) / "d.json", Path(folder) / "d.ndjson"
        json_path.write_bytes(text)
        ndjson_path.write_bytes(lines)
        parsed = _both(
            lambda: json_dump.parse_file(json_path, batch_rows=rows, task_bytes=task_bytes)
        )
        if bad is None and cut is None:
            assert not isinstance(parsed, str)
            assert parsed.samples["offset"].to_list() == [s["offset"] for s in samples]
        _both(lambda: ndjson_dump.parse_file(ndjson_path, task_bytes=task_bytes))


_PIECES = st.sampled_from(['},{"kind":', '} , {"offset" :', '"', "\\", "},{", "{", "}", "x", "\n"])
_NESTED = st.recursive(
    st.none() | st.integers(0, 9) | st.lists(_PIECES, max_size=4).map("".join),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.sampled_from(["kind", "offset", "name", "x"]), inner, max_size=3)
    ),
    max_leaves=8,
)


@settings(derandomize=True, max_examples=60, deadline=None)
@given(
    samples=st.lists(
        st.fixed_dictionaries(
            {"physicalTile": st.integers(0, 9), "offset": st.integers(0, 9)},
            optional={"duration": st.integers(0, 9), "extra": _NESTED, "kind": _NESTED},
        ),
        min_size=1,
        max_size=8,
    ),
    indent=st.sampled_from([None, 1]),
    task_bytes=st.integers(1, 200),
)
def test_json_ranges_that_decode_are_the_samples(
    samples: list[dict[str, Any]], indent: int | None, task_bytes: int
) -> None:
    """Soundness of the cut: when every range decodes as an array (as the workers require),
    the ranges together are exactly the samples, whatever strings and nested objects hold."""
    data = json.dumps({"samples": samples}, indent=indent).encode()
    try:
        chunks = [json.loads(b"[" + data[a:b] + b"]") for a, b in _ranges(data, task_bytes)]
    except ValueError:
        return  # a cut inside a sample: the workers' decode fails the same way
    assert [s for chunk in chunks for s in chunk] == samples


def test_summary_with_jobs_matches_one_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "d.json"
    path.write_bytes(document([sample(i % 16, i, 1 + i % 3, f"k{i % 4}") for i in range(50)]))
    monkeypatch.setenv(parallel.MIN_BYTES_ENV, "0")
    runner = CliRunner()
    one = runner.invoke(cli, ["summary", str(path), "--format", "json", "--jobs", "1"])
    two = runner.invoke(cli, ["summary", str(path), "--format", "json", "--jobs", "2"])
    assert one.exit_code == 0 and two.exit_code == 0, two.output
    assert one.output == two.output
    assert json.loads(two.output)  # a real summary document
    parallel.configure(2)  # the commands changed the module's setting; restore it


def test_default_jobs_are_the_usable_cores() -> None:
    parallel.configure(None)
    assert parallel.jobs() == len(os.sched_getaffinity(0))
    parallel.configure(2)
    assert parallel.jobs() == 2
    with pytest.raises(ValueError):
        parallel.configure(0)


def test_a_killed_worker_is_a_one_line_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(parallel.MIN_BYTES_ENV, "0")
    path = tmp_path / "d.json"
    path.write_bytes(document([sample(i, i, 1, "k") for i in range(40)]))
    pool = parallel.executor()
    victim = pool.submit(os.getpid).result(timeout=60)
    os.kill(victim, signal.SIGKILL)
    deadline = time.monotonic() + 30
    while not getattr(pool, "_broken", False) and time.monotonic() < deadline:
        time.sleep(0.05)
    with pytest.raises(InputError) as caught:
        json_dump.parse_file(path, batch_rows=3)
    message = str(caught.value)
    assert message == (
        f"{path}: a decoding worker process died (killed, or out of memory); --jobs 1 "
        "(from Python: tileprof.inputs.parallel.configure(1)) decodes in one process"
    )
    assert "\n" not in message
    # The pool is replaced: the next decode works again.
    assert json_dump.parse_file(path, batch_rows=3).samples.height == 40
    assert tileprof.load(path).samples.height == 40


def test_one_pool_serves_every_input_of_a_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(parallel.MIN_BYTES_ENV, "0")
    first, second = tmp_path / "a.json", tmp_path / "b.ndjson"
    first.write_bytes(document([sample(i, i, 1, "k") for i in range(20)]))
    second.write_bytes(b"\n".join(msgspec.json.encode(sample(i, i, 2, "k")) for i in range(20)))
    assert json_dump.parse_file(first, batch_rows=4).samples.height == 20
    pool = parallel.executor()
    workers = set(pool._processes or {})  # type: ignore[attr-defined]
    assert ndjson_dump.parse_file(second, task_bytes=50).samples["duration"].to_list() == [2] * 20
    assert parallel.executor() is pool
    assert set(pool._processes or {}) == workers  # type: ignore[attr-defined]
    parallel.shutdown()
    assert parallel.executor() is not pool


@pytest.mark.parametrize("separator", [b"\n", b"\r\n", b"\n  ", b"\n\x0b", b"\n\n"], ids=repr)
def test_ndjson_lines_with_white_space_match_serial(
    tmp_path: Path, task_counter: list[int], separator: bytes
) -> None:
    # Dense ranges (one sample a line, nothing else) are decoded straight from the buffer;
    # anything else goes line by line: both must give what one process gives.
    lines = [msgspec.json.encode(sample(i % 16, i, 1 + i, f"k{i % 3}")) for i in range(30)]
    path = tmp_path / "d.ndjson"
    path.write_bytes(separator.join(lines) + b"\n")
    parsed = _both(lambda: ndjson_dump.parse_file(path, task_bytes=300))
    assert task_counter and task_counter[0] >= 2
    if separator == b"\n\x0b":
        assert isinstance(parsed, str)  # a vertical tab before a value is not JSON
        return
    assert not isinstance(parsed, str)
    assert parsed.samples["offset"].to_list() == list(range(30))
    step = 2 if separator == b"\n\n" else 1
    assert [parsed.place(i) for i in range(30)] == [f"line {1 + step * i}" for i in range(30)]


def test_columns_travel_through_the_spool_or_the_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import polars as pl

    frame = pl.DataFrame({"tile": [3, 1, 2], "kind": ["a", None, "c"]})
    monkeypatch.setattr(parallel, "_spool", str(tmp_path))
    spooled = parallel.encode_columns(frame)
    assert isinstance(spooled, str) and Path(spooled).parent == tmp_path
    assert parallel.decode_columns(spooled).equals(frame)
    assert not Path(spooled).exists()  # read once, then removed
    monkeypatch.setattr(parallel, "_spool", str(tmp_path / "missing"))  # e.g. /dev/shm full
    piped = parallel.encode_columns(frame)
    assert isinstance(piped, bytes) and parallel.decode_columns(piped).equals(frame)


def test_the_spool_ends_with_the_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    parallel.executor()
    folder = parallel._spool_folder
    assert folder is not None and Path(folder).is_dir()
    assert parallel._spool is None  # the parent's own results are not spooled
    parallel.shutdown()
    assert parallel._spool_folder is None and not Path(folder).exists()


def test_prestart_only_for_json_text_workers_would_decode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    csv_path, json_path = tmp_path / "d.csv", tmp_path / "d.json"
    csv_path.write_text("physicalTile,offset,duration\n1,2,3\n")
    json_path.write_bytes(document([sample(1, 2, 3, "k")]))
    parallel.shutdown()
    monkeypatch.setenv(parallel.MIN_BYTES_ENV, str(2**40))
    parallel.prestart([json_path])
    assert parallel._executor is None  # too small
    monkeypatch.setenv(parallel.MIN_BYTES_ENV, "0")
    parallel.prestart([csv_path, tmp_path / "missing.json", tmp_path, 5])
    assert parallel._executor is None  # not JSON text, not a file
    parallel.prestart([csv_path, json_path])
    assert parallel._executor is not None
    parallel.shutdown()
