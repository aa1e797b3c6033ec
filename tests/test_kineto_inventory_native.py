"""The compiled inventory reader (crates/tileprof-decode, ``kineto_inventory.rs``), which
``tileprof check`` and the checks of ``findings`` and ``report`` read, against a reference
written with the plain ``json`` module and against msgspec's reading
(``kineto_inventory._read_with_msgspec``): the same inventory column for column, the same
rank, and the same error where the document is bad (the reader declines it, msgspec words
it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tileprof.core.errors import InputError
from tileprof.inputs._common import read_bytes
from tileprof.inputs.gpu.kineto_inventory import (
    INVENTORY_SCHEMA,
    Inventory,
    _read_with_msgspec,
    read_inventory,
    stream_inventory,
)
from tileprof.inputs.gpu.kineto_native import decoded_inventory

ROOT = Path(__file__).resolve().parent.parent
REAL = Path("/work/shared/real-inputs")


def _as_int(value: Any) -> int | None:
    """The checks' reading of an integer field, restated: an integer, or text ``int(text, 0)``
    reads, within Int64."""
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            return None
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _as_float(value: Any) -> float | None:
    is_number = isinstance(value, int | float) and not isinstance(value, bool)
    return float(value) if is_number else None


def _as_text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def reference_inventory(data: bytes) -> pl.DataFrame:
    """The inventory as the plain ``json`` module reads the document."""
    rows = []
    for i, ev in enumerate(json.loads(data)["traceEvents"]):
        if ev.get("ph") != "X":
            continue
        a = ev.get("args") or {}
        group = a.get("Process Group Name")
        group = a.get("pg_id") if group is None else group
        rows.append(
            (i, _as_text(ev.get("cat")), _as_text(ev.get("name")), _as_float(ev.get("ts")),
             _as_float(ev.get("dur")), _as_int(ev.get("pid")), _as_int(a.get("device")),
             _as_int(a.get("stream")), _as_int(a.get("correlation")),
             _as_int(a.get("External id")), _as_text(a.get("Collective name")),
             None if group is None or isinstance(group, dict | list) else str(group),
             _as_int(a.get("Seq")))
        )  # fmt: skip
    return pl.DataFrame(rows, schema=INVENTORY_SCHEMA, orient="row")


def outcome(read: Any, data: bytes) -> tuple[str, Any]:
    try:
        found: Inventory = read("t.json", data)
    except InputError as error:
        return "error", str(error)
    return "inventory", (found.events, found.rank, found.world_size)


def assert_same_reading(data: bytes) -> pl.DataFrame | None:
    """The compiled path reads ``data`` exactly as msgspec's path does; the compiled frame
    (None when the reader declined)."""
    fast, slow = outcome(read_inventory, data), outcome(_read_with_msgspec, data)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "error":
        assert fast[1] == slow[1]
    else:
        assert fast[1][0].equals(slow[1][0]), (fast[1][0], slow[1][0])
        assert fast[1][1:] == slow[1][1:]
    found = decoded_inventory("t.json", data)
    return None if found is None else found[0].cast(pl.Schema(INVENTORY_SCHEMA))


TRACES = [
    ROOT / "fixtures" / "traces" / "kineto_small.json",
    ROOT / "fixtures" / "traces" / "h200_train_steps.json.gz",
    ROOT / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz",
    ROOT / "fixtures" / "hta" / "mi250_minitoy_train_ROCm6_2_kineto.json.gz",
    ROOT / "fixtures" / "tracelens" / "mi300_gaunernst_bert-small-uncased__1016001.json.gz",
    *sorted(REAL.glob("hta/*.json.gz")),
    *sorted(REAL.glob("tracelens/*.json.gz"))[:2],
]


@pytest.mark.parametrize("path", [p for p in TRACES if p.exists()], ids=lambda p: p.name)
def test_real_traces_match_the_reference_and_msgspec(path: Path) -> None:
    data = read_bytes(path)
    frame = assert_same_reading(data)
    assert frame is not None, "the compiled reader declined a real trace"
    assert frame.height > 0
    assert frame.equals(reference_inventory(data))


ODD = [
    b'{"traceEvents": [{"ph": "X", "ts": 1e400}]}',
    b'{"traceEvents": [{"ph": "X", "pid": "1_0"}]}',
    b'{"traceEvents": [{"ph": "X", "pid": " 7", "args": {"stream": "07"}}]}',
    b'{"traceEvents": [{"ph": "X", "args": {"pg_id": 1.5}}]}',
    b'{"traceEvents": [{"ph": "X", "args": {"stream": "0xffffffffffffffffffffffffffffffff",'
    b' "device": "-0x8000000000000000", "Seq": "-9223372036854775809"}}]}',
    b'{"traceEvents": [{"ph": "X", "args": {"Seq": 18446744073709551616}}]}',
    b'{"traceEvents": [{"ph": "X", "args": []}]}',
    b'{"traceEvents": [{"ph": "X", "ph": "i"}]}',
    b'{"traceEvents": [1]}',
    b'{"traceEvents": {}}',
    b'{"other": []}',
    b'{"traceEvents": [{"ph": "X"}], "distributedInfo": {"rank": "0x1", "world_size": 2}}',
    b'{"traceEvents": [{"ph": "X"}], "distributedInfo": [1]}',
    b'{"traceEvents": [{"name": "\\ud800"}]}',
    b'{"traceEvents": [{"ph": "X", "dur": -3, "args": {"stream": "0x0"}}]} trailing',
    b'{"traceEvents": [{"ph": "X", "dur": -3, "args": {"stream": "0x0"}}',
]
"""Documents at the edges: values whose conversion the compiled reader leaves to Python,
structure msgspec refuses, truncation."""


@pytest.mark.parametrize("data", ODD)
def test_odd_documents_read_as_msgspec_reads_them(data: bytes) -> None:
    assert_same_reading(data)


def test_odd_values_are_read_by_the_compiled_reader() -> None:
    """The values the checks count (negative durations, text streams, missing fields) do not
    send a trace to msgspec's path: the compiled reader keeps them."""
    data = (
        b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": -3,'
        b' "args": {"stream": "0x0", "device": true, "Process Group Name": 7}},'
        b' {"ph": "X", "cat": "kernel"}], "distributedInfo": {"rank": 1, "world_size": 2}}'
    )
    frame = assert_same_reading(data)
    assert frame is not None
    assert frame.equals(reference_inventory(data))
    assert frame.row(0, named=True) | {"index": 0} == {
        "index": 0, "cat": "kernel", "name": "k", "ts": 1.0, "dur": -3.0, "pid": None,
        "device": None, "stream": 0, "correlation": None, "external_id": None,
        "collective": None, "process_group": "7", "seq": None,
    }  # fmt: skip
    assert read_inventory("t.json", data).rank == 1


_text = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=6)
_number_text = st.sampled_from(["0", "-0", "+7", "0x1f", "-0X10", "07", " 7", "1_0", "", "abc"])
_any = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**63), 2**63 - 1),
    st.floats(-1e6, 1e16, allow_nan=False),
    _text,
    _number_text,
    st.lists(st.integers(0, 9), max_size=2),
)
_args = st.fixed_dictionaries(
    {},
    optional={
        key: _any
        for key in (
            "device",
            "stream",
            "correlation",
            "External id",
            "Collective name",
            "Process Group Name",
            "pg_id",
            "Seq",
            "unread",
        )
    },
)
_event = st.fixed_dictionaries(
    {},
    optional={
        "ph": st.sampled_from(["X", "X", "X", "i", 1]),
        "cat": st.one_of(st.sampled_from(["kernel", "cpu_op", "cuda_runtime"]), _any),
        "name": st.one_of(st.sampled_from(["ProfilerStep#3", "ncclKernel_x"]), _any),
        "ts": _any,
        "dur": _any,
        "pid": _any,
        "tid": _any,
        "args": st.one_of(st.none(), _args),
    },
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    events=st.lists(_event, max_size=10),
    info=st.one_of(st.none(), st.fixed_dictionaries({"rank": _any, "world_size": _any})),
    indent=st.sampled_from([None, 2]),
)
@example(events=[{"ph": "X", "args": {"pg_id": 2**63 - 1, "Process Group Name": None}}],
         info=None, indent=None)  # fmt: skip
def test_random_traces(events: list[dict[str, Any]], info: Any, indent: int | None) -> None:
    document: dict[str, Any] = {"traceEvents": events}
    if info is not None:
        document["distributedInfo"] = info
    data = json.dumps(document, indent=indent).encode()
    frame = assert_same_reading(data)
    if frame is not None:
        assert frame.equals(reference_inventory(data))


# --- msgspec's reading and the streamed reader on their own (issue 38) -----------------------

EDGES = [
    b'{"traceEvents": [{"ph": "X", "args": {"Seq": 9223372036854775808, "device": '
    b'9223372036854775807, "stream": "0x7fffffffffffffff", "correlation": "0x8000000000000000",'
    b' "External id": -9223372036854775808}}]}',
    b'{"traceEvents": [{"ph": "X", "cat": "kernel", "name": "k", "ts": 1.5, "dur": 2,'
    b' "pid": 3, "args": {"device": 0, "stream": 7, "correlation": 9, "External id": 11,'
    b' "Collective name": "allreduce", "Process Group Name": "0", "Seq": 4}},'
    b' {"ph": "i"}, {"ph": "X", "args": {"pg_id": 2}}, {"ph": "X", "args": {"pg_id": {}}}]}',
]


@pytest.mark.parametrize("data", EDGES)
def test_msgspecs_reading_is_the_plain_json_reading(data: bytes) -> None:
    """Every field msgspec's path reads, at Int64's edges (2^63 is not an Int64), typed as
    the schema says."""
    found = _read_with_msgspec("t.json", data)
    assert found.events.schema == pl.Schema(INVENTORY_SCHEMA)
    assert found.events.equals(reference_inventory(data))
    assert read_inventory("t.json", data).events.schema == pl.Schema(INVENTORY_SCHEMA)


@pytest.mark.parametrize(
    ("data", "message"),
    [
        (b'{"traceEvents": [1]}', "$.traceEvents[0]: expected `object`, got `int`"),
        (b'{"traceEvents": {}}', "$.traceEvents: expected `array`, got `object`"),
        (b'{"traceEvents": [}', "line 1, column 18: malformed JSON: invalid character"),
        (
            b'{"traceEvents": [',
            "line 1, column 18: malformed JSON: truncated: the file ends inside the document",
        ),
        (
            b'{"traceEvents": [{"ph": "X"}], "distributedInfo": [1]}',
            "$.distributedInfo: expected `object | null`, got `array`",
        ),
    ],
)
def test_msgspecs_errors_name_the_file_and_key(data: bytes, message: str) -> None:
    for read in (_read_with_msgspec, read_inventory):
        assert outcome(read, data) == ("error", f"t.json: {message}")


def test_the_inventory_is_named_by_its_file_and_states_its_rank(tmp_path: Path) -> None:
    data = b'{"traceEvents": [{"ph": "X"}], "distributedInfo": {"rank": 3, "world_size": 8}}'
    for read in (_read_with_msgspec, read_inventory):
        found = read(str(tmp_path / "rank3.json"), data)
        assert (found.name, found.rank, found.world_size) == ("rank3.json", 3, 8)


def test_a_panic_of_the_compiled_reader_names_the_file(monkeypatch: pytest.MonkeyPatch) -> None:
    from tileprof.inputs.gpu import kineto_native

    def panic(*args: object) -> None:
        raise kineto_native.core.DecodeError("panic", None, "boom", None)

    monkeypatch.setattr(kineto_native.core, "decode_kineto_inventory", panic)
    kind, message = outcome(read_inventory, b'{"traceEvents": []}')
    assert kind == "error" and message.startswith("t.json: ") and "boom" in message


@pytest.mark.parametrize("window", [None, 64])
def test_the_streamed_inventory_is_the_whole_files(tmp_path: Path, window: int | None) -> None:
    """Through any window: the inventory read whole, the document's top-level keys, the rank
    its ``distributedInfo`` states; None where that is refused (the caller reads the file
    whole, which words the error)."""
    path = ROOT / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"
    whole = read_inventory(path, read_bytes(path))
    found = stream_inventory(path, window_bytes=window)
    assert found is not None
    inventory, keys = found
    assert inventory.events.schema == pl.Schema(INVENTORY_SCHEMA)
    assert inventory.events.equals(whole.events)
    assert (inventory.name, inventory.rank, inventory.world_size) == (
        "nccl_2xA100_rank0.json.gz",
        whole.rank,
        whole.world_size,
    )
    assert whole.rank == 0 and whole.world_size == 2
    assert {"traceEvents", "distributedInfo"} <= keys
    refused = tmp_path / "t.json"
    refused.write_bytes(b'{"traceEvents": [{"ph": "X"}], "distributedInfo": [1]}')
    assert stream_inventory(refused, window_bytes=window) is None
