"""The compiled Kineto decoder (crates/tileprof-decode, ``kineto.rs``) against a reference
reader written with the plain ``json`` module, and against msgspec's reading
(``kineto._read_with_msgspec``): the same Kineto event frame column for column, the same
``args`` of every event, and the same error where the document is bad (the decoder declines
it, msgspec words it)."""

from __future__ import annotations

import gzip
import json
import math
import tempfile
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tileprof.core.errors import InputError
from tileprof.core.kineto import (
    KINETO_SCHEMA,
    TIMELINE_COLUMNS,
    KinetoEvents,
    comm_events,
    timeline_rows,
)
from tileprof.inputs import threads
from tileprof.inputs._common import read_bytes
from tileprof.inputs.gpu.kineto import _read_with_msgspec, read_events
from tileprof.inputs.gpu.kineto_native import SPAN_COLUMNS, decoded_events, event_frame

ROOT = Path(__file__).resolve().parent.parent
KEPT = {"kernel", "gpu_memcpy", "gpu_memset", "cpu_op", "cuda_runtime", "cuda_driver"}
KEPT |= {"user_annotation", "gpu_user_annotation"}
RAW = {"flops": "flops", "input_dims": "Input Dims", "concrete_inputs": "Concrete Inputs"}
RAW |= {"input_type_raw": "Input type"}
"""The frame's columns of JSON text (each reader writes its own: compared decoded), by arg."""


def _int(value: Any) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _dims(value: Any) -> str | None:
    return "x".join(str(v) for v in value) if value else None


def reference_frame(data: bytes) -> pl.DataFrame:
    """The Kineto event frame as the plain ``json`` module reads the document."""
    events = json.loads(data)["traceEvents"]
    rows = []
    for i, ev in enumerate(events):
        if ev.get("ph") != "X" or ev.get("cat") not in KEPT:
            continue
        a = ev.get("args") or {}
        number = [None if ev.get(k) is None else float(ev[k]) for k in ("ts", "dur")]
        types = a.get("Input type")
        raw = [None if a.get(key) is None else json.dumps(a[key]) for key in RAW.values()]
        rows.append(
            (i, ev["cat"], ev.get("name"), *number, _int(ev.get("pid")), a.get("device"),
             _int(a.get("stream")), a.get("correlation"), a.get("External id"),
             _dims(a.get("grid")), _dims(a.get("block")), json.dumps(types) if types else None,
             f"{ev.get('pid')}/{ev.get('tid')}", *raw)
        )  # fmt: skip
    return texts(pl.DataFrame(rows, schema=KINETO_SCHEMA, orient="row"))


def texts(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with its Categorical columns as text: how two frames' texts are compared
    (before polars 1.32, ``equals`` of two Categoricals made apart compares their codes)."""
    return frame.with_columns(pl.col(pl.Categorical).cast(pl.String))


def decoded(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame``, the JSON text columns as the ``json`` module writes the values they hold
    (``RAW``)."""
    canonical = [
        pl.col(c).map_elements(lambda t: json.dumps(json.loads(t)), return_dtype=pl.String)
        for c in RAW
    ]
    return texts(frame).with_columns(canonical)


def crate_frame(data: bytes) -> pl.DataFrame | None:
    found = decoded_events("t.json", data)
    return None if found is None else event_frame(found[0])


def outcome(read: Any, data: bytes) -> tuple[str, Any]:
    """What a reader makes of ``data``: its error line, or its frame, the ``args`` of every
    communication event (all that ``args_of`` serves), devices and rank (what every analysis
    reads: the host frame and the steps are made from the frame, ``test_kineto_host``)."""
    try:
        events: KinetoEvents = read("t.json", data)
    except InputError as error:
        return "error", str(error)
    return "events", reading(events)


def reading(events: KinetoEvents, timeline: bool = False) -> tuple[pl.DataFrame, Any, Any, Any]:
    """``outcome``'s reading of decoded events; with ``timeline``, the frame as it stands (a
    read for a GPU timeline holds ``TIMELINE_COLUMNS`` alone, compared whole), its
    Categorical ``cat`` and ``name`` as text."""
    args = events.args_of(events.frame.filter(comm_events()).get_column("index").to_list())
    frame = timeline_text(events.frame) if timeline else decoded(events.frame)
    return frame, args, events.devices, events.rank


def timeline_text(frame: pl.DataFrame) -> pl.DataFrame:
    """A timeline read's frame, its ``cat`` and ``name`` (the decoder's dictionaries, and
    only those) as text. ``DataFrame.equals`` does not tell Categorical from String."""
    text = {c for c, dtype in frame.schema.items() if dtype == pl.Categorical}
    assert text == {"cat", "name"}, frame.schema
    return frame.with_columns(pl.col("cat", "name").cast(pl.String))


def timeline_reading(data: bytes) -> tuple[str, Any]:
    """What a read for a GPU timeline must make of ``data``: the whole reading's rows that a
    timeline reads (``timeline_rows``) and their ``TIMELINE_COLUMNS``, or its error."""
    found = outcome(read_events, data)
    if found[0] == "error":
        return found
    events = read_events("t.json", data)
    frame = events.frame.filter(timeline_rows()).select(TIMELINE_COLUMNS)
    return "events", (frame, *reading(events)[1:])


STREAM_SIZES = [(1, 1), (64, 16), (4096, 100), (None, None)]
"""(window, part) bytes for the streaming decoder: a window of one byte grows to each event."""


def assert_stream_reads_alike(data: bytes, folder: Path) -> None:
    """The streaming decoder (``kineto.decode_file``) reads ``data`` from a file, plain and
    gzip, through windows of every size in ``STREAM_SIZES`` on two threads, as the decoder of
    the whole text reads it (frame, NCCL ``args``, devices, rank; its keys the document's),
    and declines what that one declines (the caller then reads the file whole). A read for a
    timeline keeps that reading's timeline rows and columns, and declines or errs alike."""
    from tileprof.inputs.gpu.kineto import decode_file

    whole = crate_frame(data)
    plain, packed = folder / "t.json", folder / "t.json.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data, compresslevel=1))
    saved = threads.setting()
    threads.configure(2)
    try:
        for path, timeline in ((plain, False), (packed, False), (plain, True)):
            expected = timeline_reading(data) if timeline else outcome(read_events, data)
            for window, part in STREAM_SIZES:
                found = decode_file(path, window_bytes=window, part_bytes=part, timeline=timeline)
                if whole is None:
                    assert found is None, (path.name, window, part)
                    continue
                assert found is not None, (path.name, window, part)
                pending, keys = found
                assert keys == set(json.loads(data)), keys
                try:
                    got: tuple[str, Any] = ("events", reading(pending.events(), timeline))
                except InputError as error:
                    got = ("error", str(error).replace(str(path), "t.json"))
                assert got[0] == expected[0], (got, expected)
                if got[0] == "error":
                    assert got[1] == expected[1]
                    continue
                assert got[1][0].equals(expected[1][0])
                assert got[1][1:] == expected[1][1:]
    finally:
        threads.configure(saved)


def assert_same_reading(data: bytes) -> None:
    """The compiled path reads ``data`` exactly as msgspec's path does."""
    fast, slow = outcome(read_events, data), outcome(_read_with_msgspec, data)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "error":
        assert fast[1] == slow[1]
        return
    assert fast[1][0].equals(slow[1][0]), (fast[1][0], slow[1][0])
    assert fast[1][1:] == slow[1][1:]


TRACES = [
    ROOT / "fixtures" / "traces" / "kineto_small.json",
    ROOT / "fixtures" / "traces" / "h200_train_steps.json.gz",
    ROOT / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz",
    ROOT / "fixtures" / "hta" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ROOT / "fixtures" / "tracelens" / "mi300_gaunernst_bert-small-uncased__1016001.json.gz",
]


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_real_traces_match_the_reference_and_msgspec(path: Path) -> None:
    data = read_bytes(path)
    frame = crate_frame(data)
    assert frame is not None, "the decoder declined a real trace"
    assert decoded(frame).equals(reference_frame(data))
    assert frame.height > 0
    assert_same_reading(data)
    assert_parts_read_alike(data, frame, [4096, 100_000])


@pytest.mark.parametrize("path", TRACES, ids=lambda p: p.name)
def test_real_traces_stream_as_they_read_whole(path: Path, tmp_path: Path) -> None:
    assert_stream_reads_alike(read_bytes(path), tmp_path)


def assert_parts_read_alike(data: bytes, frame: pl.DataFrame | None, parts: list[int]) -> None:
    """The decoder on two threads, each taking ``parts`` bytes of the events at a time (every
    part after the first starting at a guessed event start), makes one thread's frame, or
    declines as one thread does."""
    saved = threads.setting()
    threads.configure(2)
    try:
        for part in parts:
            found = decoded_events("t.json", data, part_bytes=part)
            timeline = decoded_events("t.json", data, part_bytes=part, timeline=True)
            if frame is None:
                assert found is None and timeline is None, part
            else:
                assert found is not None and timeline is not None, part
                assert texts(event_frame(found[0])).equals(texts(frame)), part
                kept = frame.filter(timeline_rows()).select(TIMELINE_COLUMNS)
                read = event_frame(timeline[0].select(TIMELINE_COLUMNS))
                assert timeline_text(read).equals(kept), part
    finally:
        threads.configure(saved)


@pytest.mark.parametrize("path", TRACES[1:3], ids=lambda p: p.name)
def test_gpu_event_frame_and_timeline_are_msgspecs(path: Path) -> None:
    """The GPU event frame and the step windows made from the decoder's frame (its spans
    decoded for the NCCL parameters) are those made from msgspec's objects."""
    from tileprof.inputs.gpu.kineto import gpu_events_of
    from tileprof.inputs.gpu.kineto_timeline import timeline_of

    data = read_bytes(path)
    fast, slow = read_events("t.json", data), _read_with_msgspec("t.json", data)
    assert texts(gpu_events_of(fast).events).equals(texts(gpu_events_of(slow).events))
    assert decoded_events("t.json", data) is not None  # the decoder's, spans read and gone
    assert not set(SPAN_COLUMNS) & set(fast.frame.columns)
    a, b = timeline_of(fast), timeline_of(slow)
    assert texts(a.events).equals(texts(b.events))
    assert a.steps.equals(b.steps)
    assert a.events.get_column("collective").drop_nulls().len() > 0 or "nccl" not in path.name


@pytest.mark.parametrize("path", TRACES[:3], ids=lambda p: p.name)
def test_both_readers_make_the_event_frame_s_schema(path: Path) -> None:
    """The decoder's event frame and msgspec's have ``KINETO_SCHEMA``, text as Categorical
    (``DataFrame.equals`` does not tell Categorical from String)."""
    data = read_bytes(path)
    assert read_events("t.json", data).frame.schema == KINETO_SCHEMA
    assert _read_with_msgspec("t.json", data).frame.schema == KINETO_SCHEMA
    with_spans = decoded_events("t.json", data)
    assert with_spans is not None
    assert set(with_spans[0].columns) == {*KINETO_SCHEMA, *SPAN_COLUMNS}


def test_spans_hold_each_event() -> None:
    data = read_bytes(TRACES[2])
    found = decoded_events("t.json", data)
    assert found is not None
    frame = found[0]
    events = json.loads(data)["traceEvents"]
    for row in frame.head(50).iter_rows(named=True):
        text = data[row["span_start"] : row["span_end"]]
        assert json.loads(text) == events[row["index"]]


def _doc(events: list[Any], before: dict[str, Any], indent: int | None, ascii_: bool) -> bytes:
    document = {**before, "traceEvents": events, "deviceProperties": [{"id": 0, "name": "G"}]}
    return json.dumps(document, indent=indent, ensure_ascii=ascii_).encode()


AWKWARD = [
    # escapes, unicode, surrogate pairs, traceEvents after other keys
    _doc(
        [
            {
                "ph": "X",
                "cat": "kernel",
                "name": 'k"\\\n\u00e9\U0001f600',
                "ts": 1.25,
                "dur": 0.001,
                "pid": 0,
                "tid": 1,
                "args": {"device": 0, "stream": 7, "grid": [1, 2, 3]},
            },
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "aten::mm",
                "ts": 1e15 + 0.123,
                "dur": 3,
                "pid": 'p\u00e9"',
                "tid": True,
                "args": {
                    "External id": 4,
                    "Input type": ["float", "\u00e9"],
                    "Input Dims": [[2, 3], []],
                    "Concrete Inputs": ["", "\u00e9\n", "1.5e-7"],
                    "flops": 2**70,
                },
            },
        ],
        {"schemaVersion": 1, "other": {"traceEvents": "nested"}},
        1,
        False,
    ),
    _doc(
        [
            {
                "ph": "X",
                "cat": "kernel",
                "name": "ncclKernel_AllReduce",
                "ts": 5,
                "dur": 2,
                "args": {
                    "stream": 1,
                    "correlation": 9,
                    "Collective name": "allreduce",
                    "In msg nelems": "1024",
                    "Group size": "2",
                    "Process Group Name": 0,
                },
            },
            {
                "ph": "X",
                "cat": "cuda_runtime",
                "name": "cudaLaunchKernel",
                "ts": 4,
                "dur": 0.5,
                "args": {"correlation": 9, "External id": 3, "stream": "0x0"},
            },
            {
                "ph": "X",
                "cat": "cpu_op",
                "name": "record_param_comms",
                "ts": 3,
                "dur": 3,
                "args": {"External id": 3, "Collective name": "allreduce", "dtype": "Float"},
            },
            {
                "ph": "X",
                "cat": "gpu_user_annotation",
                "name": "ProfilerStep#2",
                "ts": 1,
                "dur": 9,
                "pid": 0,
            },
        ],
        {},
        2,
        True,
    ),
]
"""Traces the decoder must read as the reference and msgspec do."""

DECLINED = [
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": "1", "dur": 1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "ts": 1, "dur": 1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1e16, "dur": 1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, '
    b'"args": {"stream": "0x0"}}]}',
    b'{"traceEvents": [{"ph": "X", "ph": "X", "cat": "cpu_op"}]}',
    b'{"traceEvents": [{"args": {"device": 1.5}}]}',
    b'{"traceEvents": [{"args": {"Input Dims": 1e400}}]}',
    b'{"traceEvents": [{"name": "\\ud800"}]}',
    b'{"traceEvents": [{"name": "\xff"}]}',
    b'{"traceEvents": [1]}',
    b'{"traceEvents": {}}',
    b'{"deviceProperties": []}',
    b'{"traceEvents": [], "deviceProperties": [{"id": "0"}]}',
    b'{"traceEvents": [], "distributedInfo": {"rank": 0}}',
    b'{"traceEvents": [{}]} trailing',
    # a thread whose Python text the decoder does not write, in a kept event
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 1, "tid": [1]}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 1.0, "tid": 1}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "pid": 18446744073709551616}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "cpu_op", "args": {"flops": 1, "flops": 2}}]}',
]
"""Documents the decoder declines: msgspec's path words the error (or reads the odd one)."""


_KERNEL = '"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 2, "pid": 0, "tid": 1'
_OP = '"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 2, "pid": 0, "tid": 1'
EDGES = [
    *(f'{{{_KERNEL}, "args": {{"stream": 7, {value}}}}}' for value in (
        '"device": 1.0', '"device": 1e2', '"device": 9223372036854775808', '"device": null',
        '"device": "0"', '"device": -0', '"correlation": 01', '"External id": -1',
        '"grid": [1.0]', '"grid": [9223372036854775808]', '"grid": []', '"grid": null',
        '"grid": ["1"]', '"block": [ 1 ,2,\n3 ]', '"device": 0, "device": 1',
        '"x": 1e400', '"x": [1, {"y": -0.0e-0}]', '"Input Dims": [[1e400]]',
        '"n\\u0061me": 1', '"Input Dims": [[1, 2]], "Input Dims": 3',
    )),
    *(f'{{{_OP}, "args": {{{value}}}}}' for value in (
        '"Input type": ["a", "\\u00e9", ""]', '"Input type": [null]', '"Input type": []',
        '"Input type": "float"', '"Input type": ["a\\u0000"]', '"stream": 1.5',
        '"stream": "0x0"', '"stream": null', '"stream": 9223372036854775808', '"stream": [1]',
        '"stream": true', '"External id": 3, "flops": 1e400',
    )),
    *(f'{{"ph": "X", "cat": "{cat}", "name": "k", "args": {{"stream": 1}}, {value}}}'
      for cat in ("kernel", "cpu_op") for value in (
        '"ts": 1e400, "dur": 1', '"ts": -0.0, "dur": 1E2', '"ts": 1e-7, "dur": 0.1e1',
        '"ts": 1, "dur": null', '"ts": 1, "dur": 1, "pid": 1e400', '"ts": 1, "dur": 1, "pid": 1.5',
        '"ts": 1, "dur": 1, "pid": 9223372036854775808', '"ts": 1, "dur": 1, "pid": true',
        '"ts": 1, "dur": 1, "pid": [1]', '"ts": 1, "dur": 1, "pid": {"a": 1}',
        '"ts": 1, "dur": 1, "tid": 1e400', '"ts": 1, "dur": 1, "pid": -9223372036854775808',
        '"ts": 1, "dur": 1, "ts": 2', '"ts": 1.5, "dur": 1, "x": {}',
        '"ts":1,"dur":1,"args":null', '"ts" : 1 ,\t"dur" :\n1', '"ts": 1, "dur": 1, "args": []',
    )),
    '{"ph": "X", "cat": "kernel", "name": "a\tb", "ts": 1, "dur": 1, "args": {"stream": 1}}',
    '{"ph": "X", "cat": "cpu_op", "name": "aaaaaaaaaaaaaaa\x1f", "ts": 1, "dur": 1}',  # raw
    '{"ph": "X", "cat": "cpu_op", "name": "aaaaaaa\x01aaaaaaaaaaa", "ts": 1, "dur": 1}',
    '{"ph": "X", "cat": "kernel", "na\\u006de": "k", "ts": 1, "dur": 1, "args": {"stream": 1}}',
    '{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1, "args": {"stream": 1},}',
    '{"ph": "X", "cat": "kernel", "name": "k" "ts": 1, "dur": 1}',
]  # fmt: skip
"""Events at the edges of what the hand reader (``kineto_fast.rs``) takes: each one a number
of another type or out of range, a text with an escape or a control character, a key given
twice or written with an escape, odd white space; the decoder must read each as msgspec does
(or decline it)."""


@pytest.mark.parametrize("event", EDGES)
def test_edge_events_read_as_msgspec_reads_them(event: str) -> None:
    data = ('{"traceEvents": [' + event + "]}").encode()
    assert_same_reading(data)
    frame = crate_frame(data)
    if frame is not None:
        assert decoded(frame).equals(reference_frame(data))


@pytest.mark.parametrize("data", AWKWARD)
def test_awkward_traces(data: bytes, tmp_path: Path) -> None:
    frame = crate_frame(data)
    assert frame is not None
    assert decoded(frame).equals(reference_frame(data))
    assert_same_reading(data)
    assert_stream_reads_alike(data, tmp_path)


@pytest.mark.parametrize("data", DECLINED)
def test_declined_documents_keep_their_reading(data: bytes, tmp_path: Path) -> None:
    if b'"traceEvents": []' not in data:  # those fail in deviceProperties/distributedInfo
        assert crate_frame(data) is None
    assert_same_reading(data)
    assert_stream_reads_alike(data, tmp_path)


@pytest.mark.parametrize("cut", [1, 7, 100, 500, 1000])
def test_truncated_traces_keep_their_error(cut: int, tmp_path: Path) -> None:
    data = AWKWARD[0][: len(AWKWARD[0]) - cut]
    assert crate_frame(data) is None
    assert_same_reading(data)
    assert outcome(read_events, data)[0] == "error"
    assert_stream_reads_alike(data, tmp_path)


def test_gzip_trace_reads_as_its_text(tmp_path: Path) -> None:
    path = tmp_path / "t.json.gz"
    path.write_bytes(gzip.compress(AWKWARD[1], compresslevel=1))
    data = read_bytes(path)
    assert data == AWKWARD[1]
    assert_same_reading(data)


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
_time = st.one_of(
    st.none(),
    st.integers(-(10**6), 2 * 10**15),
    st.floats(-1e6, 2e15, allow_nan=False).map(lambda f: round(f, 3)),
)
_int64 = st.one_of(st.none(), st.integers(-(2**63), 2**63 - 1))
_args = st.fixed_dictionaries(
    {},
    optional={
        "device": _int64,
        "stream": st.one_of(_int64, st.just("0x0")),
        "correlation": _int64,
        "External id": _int64,
        "grid": st.one_of(st.none(), st.lists(st.integers(0, 2**31), max_size=3)),
        "Input type": st.one_of(st.none(), st.lists(_text, max_size=3)),
        "Input Dims": st.lists(st.lists(st.integers(0, 9), max_size=2), max_size=2),
        "Concrete Inputs": st.one_of(st.none(), st.lists(_text, max_size=3)),
        "flops": st.one_of(st.none(), st.integers(-1, 2**65), st.floats(0, 1e9), _text),
        "In msg nelems": st.one_of(st.integers(0, 10**6), st.integers(0, 99).map(str)),
        "Collective name": _text,
        "unread \u00e9": st.one_of(
            st.integers(),
            _text,
            st.floats(allow_nan=False, allow_infinity=False),
            st.booleans(),
            st.none(),
            st.lists(st.one_of(st.integers(), _text), max_size=2),
        ),
    },
)
_event = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "X", "X", "i", "B"]),
        "cat": st.sampled_from([*sorted(KEPT), "python_function", "Trace"]),
        "name": st.one_of(
            st.sampled_from(["ProfilerStep#3", "ncclKernel_x", "aten::mm", "record_param_comms"]),
            _text,
        ),
        "ts": _time,
        "dur": st.one_of(st.none(), st.integers(0, 10**6), st.floats(0, 1e6).map(math.floor)),
        "pid": st.one_of(st.integers(-5, 2**64), _text, st.none()),
        "tid": st.one_of(st.integers(), _text, st.booleans(), st.lists(st.integers(), max_size=1)),
        "args": st.one_of(st.none(), _args),
    },
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(_event, max_size=12),
    before=st.dictionaries(_text.filter(lambda k: k != "traceEvents"), st.integers(), max_size=2),
    indent=st.sampled_from([None, 0, 2]),
    ascii_=st.booleans(),
)
def test_random_traces(
    events: list[dict[str, Any]], before: dict[str, Any], indent: int | None, ascii_: bool
) -> None:
    before = {k: v for k, v in before.items() if k not in {"deviceProperties", "distributedInfo"}}
    data = _doc(events, before, indent, ascii_)
    assert_same_reading(data)
    frame = crate_frame(data)
    if frame is not None:
        assert decoded(frame).equals(reference_frame(data))
    assert_parts_read_alike(data, frame, [1, 64])
    with tempfile.TemporaryDirectory() as folder:
        assert_stream_reads_alike(data, Path(folder))


def test_communication_events_are_of_the_categories_whose_names_are_cast() -> None:
    """``comm_args`` casts the names of ``COMM_CATEGORIES``' rows only: every event that
    ``comm_events`` selects, in any category, is of one of them."""
    from tileprof.core.kineto import COMM_CATEGORIES
    from tileprof.inputs.gpu.kineto import KEPT_CATEGORIES

    names = ["ncclKernel_AllReduce_RING_LL_Sum_float", "record_param_comms", "gemm", None]
    cats = sorted(KEPT_CATEGORIES)
    rows = [(cat, name, ext) for cat in cats for name in names for ext in (1, None)]
    frame = pl.DataFrame(rows, schema=["cat", "name", "external_id"], orient="row")
    chosen = frame.filter(comm_events())
    # the NCCL kernel, with an External id or without; the op with one
    assert sorted(chosen.rows(), key=str) == sorted(
        [("kernel", names[0], 1), ("kernel", names[0], None), ("cpu_op", names[1], 1)], key=str
    )
    assert set(chosen.get_column("cat")) <= set(COMM_CATEGORIES)


@pytest.mark.parametrize(
    "command, native",
    [
        ("breakdown", "decode_kineto_file"),
        ("check", "decode_kineto_inventory_file"),
        ("breakdown", "decode_kineto_bytes"),
        ("check", "decode_kineto_inventory"),
    ],
    ids=["events-streamed", "inventory-streamed", "events-in-memory", "inventory-in-memory"],
)
def test_a_panic_in_each_kineto_reader_is_one_line(
    command: str, native: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A panic in any of the four compiled Kineto readers (from a file or from bytes, events or
    inventory) reaches the user as the one-line internal error, exit 2, naming the file; the
    readers of bytes are reached by having the file readers decline."""
    import tileprof.core._native as core
    from tests.hostile import assert_one_line_error

    def panics(*args: Any, **kwargs: Any) -> Any:
        raise core.DecodeError("panic", None, "index out of bounds", None)

    def declines(*args: Any, **kwargs: Any) -> Any:
        return None, "declined"

    if native.endswith("_file"):
        monkeypatch.setattr(core, native, panics)
    else:
        monkeypatch.setattr(core, f"{native.removesuffix('_bytes')}_file", declines)
        monkeypatch.setattr(core, native, panics)
    path = tmp_path / "t.json"
    path.write_bytes(AWKWARD[1])
    message = assert_one_line_error(command, path)
    assert (
        message == f"{path}: internal error in the decoder (index out of bounds); please report it"
    )


def test_a_pid_or_stream_outside_int64_is_null_in_the_msgspec_frame() -> None:
    """The frame of events msgspec read (a document the compiled decoder declines) keeps an
    integer ``pid`` or ``stream`` only within int64, and never a bool."""
    from tileprof.core.kineto import Args, Event
    from tileprof.inputs.gpu.kineto_native import frame_of_events

    pids = [-(2**63), -(2**63) - 1, 2**63 - 1, 2**63, True, "7"]
    kept = [(i, Event(pid=p, args=Args(stream=p))) for i, p in enumerate(pids)]
    frame = frame_of_events(kept)
    expected = [-(2**63), None, 2**63 - 1, None, None, None]
    assert frame.get_column("pid").to_list() == expected
    assert frame.get_column("stream").to_list() == expected


def test_the_base_time_is_handed_over_as_written() -> None:
    """``baseTimeNanoseconds`` reaches the clock reader as its own text, beside the events."""
    from tileprof.inputs.gpu.kineto_native import decoded_events

    data = b'{"baseTimeNanoseconds": 1700000000000000000, "traceEvents": []}'
    found = decoded_events("t.json", data)
    assert found is not None and found[3] == b"1700000000000000000"
    absent = decoded_events("t.json", b'{"traceEvents": []}')
    assert absent is not None and absent[3] == b"null"


def test_the_base_time_is_handed_over_as_written_from_a_file(tmp_path: Path) -> None:
    from tileprof.inputs.gpu.kineto_native import streamed_events

    given, bare = tmp_path / "given.json", tmp_path / "bare.json"
    given.write_bytes(b'{"traceEvents": [], "baseTimeNanoseconds": 17}')
    bare.write_bytes(b'{"traceEvents": []}')
    found, absent = streamed_events(given), streamed_events(bare)
    assert found is not None and found[5] == b"17"
    assert absent is not None and absent[5] == b"null"
