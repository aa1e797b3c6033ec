"""A Kineto trace's events from the compiled decoder, as the Kineto event frame.

``tileprof.core._native.decode_kineto_bytes`` (crates/tileprof-decode, ``kineto.rs``) reads
``traceEvents`` in one pass into Arrow columns (text as dictionary codes over one table of
distinct texts), which polars takes without a copy: the frame is made with no Python loop over
the events. It declines any document it cannot hold to msgspec's reading exactly, and the
caller then reads it by msgspec (``kineto._read_with_msgspec``), so every error keeps its
wording and place. A panic in the decoder is the one-line error every input error is.

Every analysis reads the frame's columns. Of the free-form ``args``, only the NCCL
parameters of the few communication kernels and ``record_param_comms`` ops are read: those
events' bytes are copied out when the trace is decoded and decoded by msgspec when asked for
(``comm_args``, behind ``KinetoEvents.args_of``), so nothing keeps the trace's bytes.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

import msgspec
import polars as pl

import tileprof.core._native as core
from tileprof.core import ahead
from tileprof.core.errors import InputError
from tileprof.core.kineto import COMM_CATEGORIES, KINETO_SCHEMA, Args, Event, comm_events
from tileprof.inputs import threads

_NO_ARGS = Args()
SPAN_COLUMNS = ("span_start", "span_end")
"""The decoder's frame's columns beyond ``KINETO_SCHEMA``: each event's bytes in the document
(``decoded_events``), or of the communication events alone (``streamed_events``), from which
``comm_args`` copies the bytes of the communication events' ``args``."""


def decoded_events(
    path: str | Path, data: bytes, *, part_bytes: int | None = None, timeline: bool = False
) -> tuple[pl.DataFrame, bytes, bytes, bytes] | None:
    """(the decoder's frame, raw ``deviceProperties``, raw ``distributedInfo``, raw
    ``baseTimeNanoseconds``) of ``data``, or None when the compiled decoder declines it. The
    frame holds the Kineto event frame's columns and the spans (``event_frame`` makes the
    event frame of it); with ``timeline``, only the rows a GPU timeline reads
    (``core.kineto.timeline_rows``). The events are decoded on ``threads.jobs()`` threads,
    each taking ``part_bytes`` of them (default chosen by the decoder; tests make it tiny)."""
    try:
        found, _why = core.decode_kineto_bytes(data, threads.jobs(), part_bytes, timeline)
    except core.DecodeError as error:  # a panic: a bug of tileprof's
        raise _internal_error(path, error) from None
    if found is None:
        return None
    columns, props, info, base = found
    frame = _frame_of(columns)
    props_raw = b"[]" if props is None else data[props[0] : props[1]]
    info_raw = b"null" if info is None else data[info[0] : info[1]]
    base_raw = b"null" if base is None else data[base[0] : base[1]]
    return frame, props_raw, info_raw, base_raw


def streamed_events(
    path: str | Path,
    *,
    part_bytes: int | None = None,
    window_bytes: int | None = None,
    timeline: bool = False,
) -> tuple[pl.DataFrame, bytes, bytes, bytes, list[str], bytes] | None:
    """(the decoder's frame, raw ``deviceProperties``, raw ``distributedInfo``, the bytes its spans
    point into, the document's top-level keys, raw ``baseTimeNanoseconds``) of the trace in the
    file at ``path`` (plain or gzip), or None when the compiled decoder declines it (a file it
    cannot read included). The file is read through a window of ``window_bytes`` (default chosen
    by the decoder; tests make it tiny), so its text is never held whole: only the communication
    events' bytes are kept (``comm_args`` reads them), the other spans are null. With
    ``timeline``, only the rows a GPU timeline reads (``core.kineto.timeline_rows``)."""
    key = (str(path), threads.jobs(), part_bytes, window_bytes, timeline)
    try:
        # a decode the command started before its imports, when it is this one (core.ahead)
        outcome = ahead.take(key)
        found, _why = core.decode_kineto_file(*key) if outcome is None else outcome
    except core.DecodeError as error:  # a panic: a bug of tileprof's
        raise _internal_error(path, error) from None
    if found is None:
        return None
    columns, props, info, kept, keys, base = found
    props_raw = b"[]" if props is None else props
    info_raw = b"null" if info is None else info
    return _frame_of(columns), props_raw, info_raw, kept, keys, base or b"null"


def event_frame(decoded: pl.DataFrame) -> pl.DataFrame:
    """The Kineto event frame (``KINETO_SCHEMA``, or those of its columns that ``decoded``
    holds: a read for a timeline keeps ``TIMELINE_COLUMNS``) of the decoder's frame: its text
    left as the decoder's dictionaries (Categorical), its spans (``SPAN_COLUMNS``) left out
    once ``comm_args`` has copied what they point to."""
    kept = [c for c in decoded.columns if c not in SPAN_COLUMNS]
    return decoded.select(kept).cast({c: KINETO_SCHEMA[c] for c in kept})


def decoded_inventory(path: str | Path, data: bytes) -> tuple[pl.DataFrame, bytes] | None:
    """(the inventory's columns, dictionary text as the decoder hands it over; the raw
    ``distributedInfo``) of ``data`` by the compiled inventory reader
    (``tileprof_decode::kineto_inventory``), or None when it declines the document."""
    try:
        found, _why = core.decode_kineto_inventory(data)
    except core.DecodeError as error:  # a panic: a bug of tileprof's
        raise _internal_error(path, error) from None
    if found is None:
        return None
    columns, info = found
    return _frame_of(columns), b"null" if info is None else data[info[0] : info[1]]


def streamed_inventory(
    path: str | Path, *, window_bytes: int | None = None
) -> tuple[pl.DataFrame, bytes, list[str]] | None:
    """``decoded_inventory`` of the trace in the file at ``path`` (plain or gzip), read through
    a window of ``window_bytes`` (``streamed_events``), and the document's top-level keys; None
    when the compiled reader declines it (a file it cannot read included)."""
    try:
        found, _why = core.decode_kineto_inventory_file(str(path), window_bytes)
    except core.DecodeError as error:  # a panic: a bug of tileprof's
        raise _internal_error(path, error) from None
    if found is None:
        return None
    columns, info, keys = found
    return _frame_of(columns), b"null" if info is None else info, keys


def _frame_of(columns: core.ArrowColumns) -> pl.DataFrame:
    return pl.DataFrame([pl.Series(column).alias(name) for name, column in columns.columns()])


def _internal_error(path: str | Path, error: core.DecodeError) -> InputError:
    """A panic in the compiled decoder: the one-line error every input error is."""
    message = str(error.args[2])
    return InputError(path, None, f"internal error in the decoder ({message}); please report it")


def frame_of_events(kept: Sequence[tuple[int, Event]]) -> pl.DataFrame:
    """The Kineto event frame of events read by msgspec (``kept``: index and event), as
    ``event_frame`` makes it of the compiled decoder's."""
    args = [ev.args or _NO_ARGS for _, ev in kept]
    columns = {
        "index": [i for i, _ in kept],
        "cat": [ev.cat for _, ev in kept],
        "name": [ev.name for _, ev in kept],
        "ts": [ev.ts for _, ev in kept],
        "dur": [ev.dur for _, ev in kept],
        "pid": [_int(ev.pid) for _, ev in kept],
        "device": [a.device for a in args],
        "stream": [_int(a.stream) for a in args],
        "correlation": [a.correlation for a in args],
        "external_id": [a.external_id for a in args],
        "grid": [_dims(a.grid) for a in args],
        "block": [_dims(a.block) for a in args],
        "input_type": [json.dumps(a.input_type) if a.input_type else None for a in args],
        "thread": [f"{ev.pid}/{ev.tid}" for _, ev in kept],
        "flops": [_raw(a.flops) for a in args],
        "input_dims": [_raw(a.input_dims) for a in args],
        "concrete_inputs": [_raw(a.concrete_inputs) for a in args],
        "input_type_raw": [_raw(a.input_type) for a in args],
    }
    return pl.DataFrame(columns, schema=KINETO_SCHEMA)


def _int(value: object) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool) and -(2**63) <= value < 2**63:
        return value
    return None


def _raw(value: object) -> str | None:
    """An ``args`` value as JSON text (the decoder keeps the document's own), None for None."""
    return None if value is None else msgspec.json.encode(value).decode()


def _dims(values: list[int] | None) -> str | None:
    return None if not values else "x".join(str(v) for v in values)


def comm_args(frame: pl.DataFrame, data: bytes) -> Callable[[Sequence[int]], list[Args]]:
    """``KinetoEvents.args_of`` of a decoded trace (``frame``: the decoder's, ``decoded_events``
    or ``streamed_events``; ``data``: the bytes its spans point into): the spans of its
    communication events (``core.kineto.comm_events``, few) copied out of ``data`` now, so that
    the trace's bytes are not kept past decoding; their ``args`` are decoded when asked for.
    Their names are cast batch by batch, with the file still held."""
    rows = (
        frame.lazy()
        .select("index", "cat", "name", "external_id", "span_start", "span_end")
        .filter(pl.col("cat").is_in(COMM_CATEGORIES))
        .with_columns(pl.col("cat", "name").cast(pl.String))  # the decoder's dictionaries
        .filter(comm_events())
        .select("index", "span_start", "span_end")
        .collect(engine="streaming")  # in batches: 33 MB where a whole cast took 143 MB
    )
    spans = rows.iter_rows()
    kept = {i: data[start:end] for i, start, end in spans}

    def args_of(indices: Sequence[int]) -> list[Args]:
        joined = b"[" + b",".join([kept[i] for i in indices]) + b"]"
        return [ev.args or _NO_ARGS for ev in msgspec.json.decode(joined, type=list[Event])]

    return args_of
