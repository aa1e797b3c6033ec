"""A PyTorch profiler (Kineto) trace as an inventory of its complete events, for ``tileprof check``.

The capture checks (``tileprof.analyses.integrity``) count what a trace gets wrong, so this
reader refuses only what is not a trace at all (not JSON, no ``traceEvents``). Everything the
other readers reject one event at a time is kept here and counted instead: a negative or
missing ``dur``, a ``stream`` written as text (ROCm's ``"0x0"``), a GPU event without a name.

One row per complete event (``ph: "X"``) in file order: its index in ``traceEvents``, its
category, name, ``ts`` and ``dur`` (µs, null when absent), ``pid``, and the ``args`` the checks
read (device, stream, correlation, External id, and the NCCL parameters of a communication
kernel or ``record_param_comms`` op). ``distributedInfo`` names the rank.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec
import polars as pl

from tileprof.core.errors import InputError
from tileprof.inputs.gpu.kineto import _decode_part

INVENTORY_SCHEMA: dict[str, pl.DataType] = {
    "index": pl.Int64(),
    "cat": pl.Categorical(),
    "name": pl.Categorical(),
    "ts": pl.Float64(),
    "dur": pl.Float64(),
    "pid": pl.Int64(),
    "device": pl.Int64(),
    "stream": pl.Int64(),
    "correlation": pl.Int64(),
    "external_id": pl.Int64(),
    "collective": pl.Categorical(),
    "process_group": pl.Categorical(),
    "seq": pl.Int64(),
}
"""The inventory's columns; a value of another JSON type than the column's is null. The text
columns are Categorical, the compiled reader's dictionaries as they come (as the Kineto event
frame's are, ``core.kineto.KINETO_SCHEMA``): as strings, the 2.6M events of the 626 MB trace
took 400 MiB more."""


class _Args(msgspec.Struct):
    device: Any = None
    stream: Any = None
    correlation: Any = None
    external_id: Any = msgspec.field(default=None, name="External id")
    collective: Any = msgspec.field(default=None, name="Collective name")
    pg_name: Any = msgspec.field(default=None, name="Process Group Name")
    pg_id: Any = None
    seq: Any = msgspec.field(default=None, name="Seq")


class _Event(msgspec.Struct):
    ph: Any = None
    cat: Any = None
    name: Any = None
    ts: Any = None
    dur: Any = None
    pid: Any = None
    args: _Args | None = None


class _Rank(msgspec.Struct):
    rank: Any = None
    world_size: Any = None


class _Trace(msgspec.Struct):
    traceEvents: msgspec.Raw
    distributedInfo: msgspec.Raw = msgspec.field(default_factory=lambda: msgspec.Raw(b"null"))


@dataclass(frozen=True)
class Inventory:
    """One trace's complete events (``INVENTORY_SCHEMA``) and the rank that wrote it."""

    name: str
    events: pl.DataFrame
    rank: int | None = None
    world_size: int | None = None


_NO_ARGS = _Args()


def read_inventory(path: str | Path, data: bytes) -> Inventory:
    """The inventory of one Kineto trace (``data`` read from ``path``): by the compiled
    reader, or, for a document it declines (an odd value whose Python conversion it does not
    write, a syntax error to word), by msgspec one event at a time."""
    from tileprof.inputs.gpu.kineto_native import decoded_inventory

    found = decoded_inventory(path, data)
    if found is None:
        return _read_with_msgspec(path, data)
    frame, info_raw = found
    info = _decode_part(path, msgspec.Raw(info_raw), _Rank | None, "$.distributedInfo")  # type: ignore[arg-type]
    return _inventory(path, frame.cast(pl.Schema(INVENTORY_SCHEMA)), info)


def stream_inventory(
    path: str | Path, *, window_bytes: int | None = None
) -> tuple[Inventory, set[str]] | None:
    """``read_inventory`` of the trace in the file at ``path`` (plain or gzip), read through
    the compiled reader's bounded window so that its text is never held whole, and the
    document's top-level keys (the caller tells the kind from them); None when the reader
    declines the file or its ``distributedInfo`` is refused: the caller reads it whole, which
    words the error after the decoder's (``gather._decoded_trace``)."""
    from tileprof.inputs.gpu.kineto_native import streamed_inventory

    found = streamed_inventory(path, window_bytes=window_bytes)
    if found is None:
        return None
    frame, info_raw, keys = found
    try:
        info = _decode_part(path, msgspec.Raw(info_raw), _Rank | None, "$.distributedInfo")  # type: ignore[arg-type]
    except InputError:
        return None
    return _inventory(path, frame.cast(pl.Schema(INVENTORY_SCHEMA)), info), set(keys)


def _inventory(path: str | Path, frame: pl.DataFrame, info: _Rank | None) -> Inventory:
    rank = None if info is None else _int(info.rank)
    world = None if info is None else _int(info.world_size)
    return Inventory(Path(path).name, frame, rank, world)


def _read_with_msgspec(path: str | Path, data: bytes) -> Inventory:
    """``read_inventory`` by msgspec, one event at a time (the documents the compiled reader
    declines)."""
    from tileprof.inputs._decode import decode_json

    trace = decode_json(path, data, _Trace)
    events = _decode_part(path, trace.traceEvents, list[_Event], "$.traceEvents")
    info = _decode_part(path, trace.distributedInfo, _Rank | None, "$.distributedInfo")  # type: ignore[arg-type]
    rows: dict[str, list[Any]] = {k: [] for k in INVENTORY_SCHEMA}
    for i, ev in enumerate(events):
        if ev.ph != "X":
            continue
        a = ev.args or _NO_ARGS
        group = a.pg_name if a.pg_name is not None else a.pg_id
        values = (
            i,
            _text(ev.cat),
            _text(ev.name),
            _float(ev.ts),
            _float(ev.dur),
            _int(ev.pid),
            _int(a.device),
            _int(a.stream),
            _int(a.correlation),
            _int(a.external_id),
            _text(a.collective),
            None if group is None or isinstance(group, dict | list) else str(group),
            _int(a.seq),
        )
        for key, value in zip(rows, values, strict=True):
            rows[key].append(value)
    return _inventory(path, pl.DataFrame(rows, schema=INVENTORY_SCHEMA), info)


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _float(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    """An integer (or a numeric string: ``"0x0"``, ``"7"``) that Int64 holds; else None."""
    if isinstance(value, str):
        try:
            value = int(value, 0)
        except ValueError:
            return None
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None
