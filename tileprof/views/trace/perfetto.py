"""The trace as a native Perfetto file (``.pftrace``): TracePackets with TrackEvents.

Layout, all on one packet sequence: a first packet with every interned string (event names,
categories, debug-annotation names and string values) that clears the sequence's incremental
state; then the track descriptors (one process per target, one child track per tile or stream,
"overlap" tracks below the tile they belong to, counter tracks); then the counter values; then
every slice as a SLICE_BEGIN/SLICE_END pair, in time order, in zlib-compressed batches
(``TracePacket.compressed_packets``), written one batch at a time. Slices are encoded column by
column (``protowire``); every fixed part comes from the ``perfetto`` package's protos.
"""

from __future__ import annotations

import os
import zlib
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import polars as pl
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from tileprof.core.outputs import Writable
from tileprof.model.trace import OVERLAP, GpuDevice, TileTimeline, Timeline
from tileprof.views.trace import protowire as w

SEQUENCE = 1
BATCH = 65_536
"""Slices per compressed batch: big enough for zlib to find the repeats, small enough that a
batch's arrays stay a few MB."""
COMPRESSION_LEVEL = 1
WORKERS = min(4, os.cpu_count() or 1)
"""Threads encoding batches; each holds one batch's arrays (tens of MB)."""

_TILE_BASE = 1 << 24
_GPU_BASE = 1 << 40
_NEEDS_STATE = pb.TracePacket.SEQ_NEEDS_INCREMENTAL_STATE
_SEQ = pb.TracePacket(trusted_packet_sequence_id=SEQUENCE, sequence_flags=_NEEDS_STATE)


class Interner:
    """Interned ids per string table; iids start at 1 (0 means unset in the protos)."""

    def __init__(self) -> None:
        self.frozen = False
        self.tables: dict[str, dict[str, int]] = {
            "event_names": {},
            "event_categories": {},
            "debug_annotation_names": {},
            "debug_annotation_string_values": {},
        }

    def iid(self, table: str, text: str) -> int:
        ids = self.tables[table]
        if self.frozen:  # the interned-data packet is written: no new string may appear
            return ids[text]
        return ids.setdefault(text, len(ids) + 1)

    def name(self, text: str) -> int:
        return self.iid("debug_annotation_names", text)

    def value(self, text: str) -> int:
        return self.iid("debug_annotation_string_values", text)

    def packet(self) -> pb.TracePacket:
        """The first packet of the sequence: every string, and a cleared incremental state."""
        data = pb.InternedData()
        for text, iid in self.tables["event_names"].items():
            data.event_names.add(iid=iid, name=text)
        for text, iid in self.tables["event_categories"].items():
            data.event_categories.add(iid=iid, name=text)
        for text, iid in self.tables["debug_annotation_names"].items():
            data.debug_annotation_names.add(iid=iid, name=text)
        for text, iid in self.tables["debug_annotation_string_values"].items():
            data.debug_annotation_string_values.add(iid=iid, str=text.encode())
        return pb.TracePacket(
            trusted_packet_sequence_id=SEQUENCE,
            sequence_flags=pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED,
            first_packet_on_sequence=True,
            interned_data=data,
        )


# ---------------------------------------------------------------- per-row columns


@dataclass(frozen=True)
class Codes:
    """A string column as small integer codes into ``values`` (None for null)."""

    codes: np.ndarray
    values: list[str | None]


def codes_of(series: pl.Series) -> Codes:
    """Codes of a String or Categorical column without building a string per row."""
    cat = series.cast(pl.Categorical) if series.dtype == pl.String else series
    uniques = cat.unique(maintain_order=True).drop_nulls()
    physical = uniques.to_physical().to_numpy().astype(np.int64)
    values: list[str | None] = [*uniques.cast(pl.String).to_list(), None]
    lut = np.full(int(physical.max()) + 1 if physical.size else 1, len(values) - 1, np.int64)
    lut[physical] = np.arange(physical.size)
    raw = cat.to_physical().to_numpy()
    nulls = cat.is_null().to_numpy()
    safe = np.where(nulls, 0, np.nan_to_num(raw.astype(np.float64), nan=0)).astype(np.int64)
    return Codes(np.where(nulls, len(values) - 1, lut[safe]), values)


@dataclass(frozen=True)
class SliceRows:
    """What the slices of one batch carry, column by column."""

    track: np.ndarray
    begin: np.ndarray
    end: np.ndarray
    static: w.Table  # serialized TrackEvent fields that repeat: name, category, string args
    ints: list[tuple[int, np.ndarray, np.ndarray]]  # (name iid, values, present)
    doubles: list[tuple[int, np.ndarray, np.ndarray]]


_T_PACKET = w.tag(pb.Trace, "packet")
_T_TIMESTAMP = w.tag(pb.TracePacket, "timestamp")
_T_EVENT = w.tag(pb.TracePacket, "track_event")
_T_TRACK = w.tag(pb.TrackEvent, "track_uuid")
_T_ANNOTATION = w.tag(pb.TrackEvent, "debug_annotations")
_T_INT = w.tag(pb.DebugAnnotation, "int_value")
_T_DOUBLE = w.tag(pb.DebugAnnotation, "double_value")
_BEGIN = pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_BEGIN).SerializeToString()
_END = pb.TrackEvent(type=pb.TrackEvent.TYPE_SLICE_END).SerializeToString()
_SEQ_BYTES = _SEQ.SerializeToString()


def combine(parts: list[tuple[list[bytes], np.ndarray]]) -> w.Table:
    """Per row, the concatenation of ``texts[codes[row]]`` over the parts: each distinct
    combination is joined once, then gathered per row."""
    key = np.zeros(parts[0][1].size, dtype=np.int64)
    for texts, codes in parts:
        key = key * len(texts) + codes
    uniques, inverse = np.unique(key, return_inverse=True)
    joined = []
    for value in uniques.tolist():
        pieces = []
        for texts, _ in reversed(parts):
            value, code = divmod(value, len(texts))
            pieces.append(texts[code])
        joined.append(b"".join(reversed(pieces)))
    return w.table(joined, inverse.reshape(-1))


def encode_slices(rows: SliceRows) -> bytes:
    """Each row as a SLICE_BEGIN packet then its SLICE_END packet, in Trace framing.

    Sizes are computed first (a LEN field's length precedes its body), then the short
    per-row parts are written into one byte matrix and joined with the repeated fragments.
    """
    n = rows.track.size
    track_size = w.varint_size(rows.track)
    annotations = []
    event_size = len(_BEGIN) + len(_T_TRACK) + track_size + rows.static.lengths
    for kind, items in ((_T_INT, rows.ints), (_T_DOUBLE, rows.doubles)):
        for iid, values, present in items:
            head = pb.DebugAnnotation(name_iid=iid).SerializeToString() + kind
            value_size = w.varint_size(values) if kind == _T_INT else np.full(n, 8)
            body = len(head) + value_size  # < 128: one length byte
            annotations.append((kind, head, values, present, body))
            event_size += np.where(present, len(_T_ANNOTATION) + 1 + body, 0)
    packet_size = (
        len(_SEQ_BYTES)
        + len(_T_TIMESTAMP)
        + w.varint_size(rows.begin)
        + len(_T_EVENT)
        + w.varint_size(event_size)
        + event_size
    )
    width = 64 + sum(len(a[1]) + 16 for a in annotations)
    head = w.RowWriter(n, width)
    head.put_segment(_T_PACKET, [w.trimmed_varints(packet_size)])
    head.put_segment(_SEQ_BYTES + _T_TIMESTAMP, [w.trimmed_varints(rows.begin)])
    head.put_segment(_T_EVENT, [w.trimmed_varints(event_size)])
    head.put_segment(_BEGIN + _T_TRACK, [w.trimmed_varints(rows.track)])
    for kind, prefix, values, present, body in annotations:
        value: tuple[np.ndarray, np.ndarray | int]
        if kind == _T_INT:
            value = w.trimmed_varints(values)
        else:
            value = (np.ascontiguousarray(values, dtype="<f8").view(np.uint8).reshape(-1, 8), 8)
        size_byte = (body.astype(np.uint8)[:, None], 1)
        fixed = (np.frombuffer(prefix, dtype=np.uint8), len(prefix))
        head.put_segment(_T_ANNOTATION, [size_byte, fixed, value], present)
    end_event = len(_END) + len(_T_TRACK) + track_size
    end_packet = len(_SEQ_BYTES) + len(_T_TIMESTAMP) + w.varint_size(rows.end) + 2 + end_event
    tail = w.RowWriter(n, 64)
    tail.put_segment(_T_PACKET, [w.trimmed_varints(end_packet)])
    tail.put_segment(_SEQ_BYTES + _T_TIMESTAMP, [w.trimmed_varints(rows.end)])
    tail.put_segment(
        _T_EVENT,
        [
            (end_event.astype(np.uint8)[:, None], 1),
            (np.frombuffer(_END + _T_TRACK, np.uint8), len(_END + _T_TRACK)),
            w.trimmed_varints(rows.track),
        ],
    )
    return w.compose(
        [
            (head.matrix, head.cursor),
            (rows.static.matrix(), rows.static.lengths),
            (tail.matrix, tail.cursor),
        ]
    )


def _string_arg(interner: Interner, name: str, column: pl.Series) -> tuple[list[bytes], np.ndarray]:
    codes = codes_of(column)
    iid = interner.name(name)
    texts = [
        b""
        if v is None
        else pb.TrackEvent(
            debug_annotations=[pb.DebugAnnotation(name_iid=iid, string_value_iid=interner.value(v))]
        ).SerializeToString()
        for v in codes.values
    ]
    return texts, codes.codes


def _name_and_category(
    interner: Interner, names: pl.Series, cats: pl.Series
) -> tuple[list[bytes], np.ndarray]:
    """Per row, the TrackEvent fragment naming the slice and its category (interned)."""
    pairs = pl.DataFrame({"n": names, "c": cats})
    n_codes, c_codes = codes_of(pairs["n"]), codes_of(pairs["c"])
    width = len(c_codes.values)
    texts = []
    for name in n_codes.values:
        for cat in c_codes.values:
            event = pb.TrackEvent(name_iid=interner.iid("event_names", name or "(none)"))
            if cat is not None:
                event.category_iids.append(interner.iid("event_categories", cat))
            texts.append(event.SerializeToString())
    return texts, n_codes.codes * width + c_codes.codes


def _present(series: pl.Series) -> tuple[np.ndarray, np.ndarray]:
    present = series.is_not_null().to_numpy()
    if series.dtype.is_float():
        values = series.fill_null(0.0).to_numpy()
        present &= ~np.isnan(values)
        return np.where(present, values, 0.0), present
    return series.fill_null(0).to_numpy().astype(np.int64), present


# ---------------------------------------------------------------- tile device


def tile_track_uuid(tile: np.ndarray, lane: np.ndarray, stride: int) -> np.ndarray:
    """The track of a tile (lane 0) or of its overlap lane."""
    return _TILE_BASE + lane.astype(np.int64) * stride + tile.astype(np.int64)


def tile_fragments(interner: Interner, slices: pl.DataFrame, metadata: list[bytes]) -> w.Table:
    """Per tile slice, its repeated TrackEvent fields (name, category, operation, metadata
    pairs), built once over the whole frame so batches only slice the row index."""
    ids = slices["metadataId"]
    meta_codes = ids.fill_null(len(metadata) - 1).to_numpy().astype(np.int64)
    return combine(
        [
            _name_and_category(interner, slices["group"], slices["kind"]),
            _string_arg(interner, "operation", slices["operation"]),
            (metadata, meta_codes),
        ]
    )


def _tile_rows(interner: Interner, batch: pl.DataFrame, static: w.Table, stride: int) -> SliceRows:
    ints = []
    for name in ("tile", "phase", "epoch"):
        values, present = _present(batch[name])
        ints.append((interner.name(name), values, present))
    doubles = []
    for name in ("usefulCycles", "physicalWorkCycles"):
        values, present = _present(batch[name])
        doubles.append((interner.name(name), values, present))
    return SliceRows(
        track=tile_track_uuid(batch["tile"].to_numpy(), batch["lane"].to_numpy(), stride),
        begin=batch["begin_ns"].to_numpy(),
        end=batch["end_ns"].to_numpy(),
        static=static,
        ints=ints,
        doubles=doubles,
    )


def _metadata_fragments(interner: Interner, tile: TileTimeline) -> list[bytes]:
    """Per metadata list, its pairs as ``metadata.NAME`` string arguments; the last is empty
    (samples with no metadata)."""
    out = []
    for entries in tile.metadata:
        annotations = [
            pb.DebugAnnotation(
                name_iid=interner.name(f"metadata.{name}"), string_value_iid=interner.value(value)
            )
            for name, value in entries
        ]
        out.append(pb.TrackEvent(debug_annotations=annotations).SerializeToString())
    return [*out, b""]


# ---------------------------------------------------------------- GPU devices


def gpu_track_uuid(device: int, stream_index: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """The track of a stream (lane 0) or of its overlap lane on one GPU device."""
    return _GPU_BASE + (device << 32) + (lane.astype(np.int64) << 20) + stream_index


def gpu_fragments(interner: Interner, slices: pl.DataFrame) -> w.Table:
    """Per GPU kernel, its repeated TrackEvent fields (name, category, launching op, grid,
    block), built once over the device's whole frame."""
    fragments = [_name_and_category(interner, slices["name"], slices["cat"])]
    for arg, column in (("launching op", "op"), ("grid", "grid"), ("block", "block")):
        fragments.append(_string_arg(interner, arg, slices[column]))
    return combine(fragments)


def _gpu_rows(
    interner: Interner, index: int, gpu: GpuDevice, batch: pl.DataFrame, static: w.Table
) -> SliceRows:
    streams = (
        batch["stream"]
        .replace_strict(list(gpu.streams), list(range(len(gpu.streams))), return_dtype=pl.Int64)
        .to_numpy()
    )
    ints = []
    for name in ("device", "stream", "correlation"):
        values, present = _present(batch[name])
        ints.append((interner.name(name), values, present))
    values, present = _present(batch["flops"])
    return SliceRows(
        track=gpu_track_uuid(index, streams, batch["lane"].to_numpy()),
        begin=batch["begin_ns"].to_numpy(),
        end=batch["end_ns"].to_numpy(),
        static=static,
        ints=ints,
        doubles=[(interner.name("flops"), values, present)],
    )


# ---------------------------------------------------------------- descriptors


def _descriptor(**fields: object) -> pb.TracePacket:
    return pb.TracePacket(
        trusted_packet_sequence_id=SEQUENCE, track_descriptor=pb.TrackDescriptor(**fields)
    )


def _tile_descriptors(tile: TileTimeline, stride: int) -> Iterator[pb.TracePacket]:
    explicit = pb.TrackDescriptor.ChildTracksOrdering.EXPLICIT
    yield _descriptor(
        uuid=1, process=pb.ProcessDescriptor(pid=1, process_name=tile.name), child_ordering=explicit
    )
    for rank, counter in enumerate(tile.counters):
        yield _descriptor(
            uuid=2 + rank,
            parent_uuid=1,
            name=counter.name,
            counter=pb.CounterDescriptor(unit_name=counter.unit),
            sibling_order_rank=-len(tile.counters) + rank,
        )
    for t in tile.tiles:
        yield _descriptor(
            uuid=int(tile_track_uuid(np.array([t]), np.array([0]), stride)[0]),
            parent_uuid=1,
            name=f"tile {t}",
            sibling_order_rank=t,
        )
    lanes = tile.slices.filter(pl.col("lane") > 0).select("tile", "lane").unique()
    for t, lane in sorted(lanes.iter_rows()):
        parent = tile_track_uuid(np.array([t]), np.array([0]), stride)[0]
        yield _descriptor(
            uuid=int(tile_track_uuid(np.array([t]), np.array([lane]), stride)[0]),
            parent_uuid=int(parent),
            name=OVERLAP if lane == 1 else f"{OVERLAP} {lane}",
            sibling_order_rank=lane,
        )


def _gpu_descriptors(index: int, gpu: GpuDevice) -> Iterator[pb.TracePacket]:
    process = _GPU_BASE + (index << 32) + (1 << 31)
    yield _descriptor(
        uuid=process,
        process=pb.ProcessDescriptor(pid=2 + index, process_name=gpu.name),
        child_ordering=pb.TrackDescriptor.ChildTracksOrdering.EXPLICIT,
    )
    pairs = gpu.slices.select("stream", "lane").unique()
    for stream, lane in sorted(pairs.iter_rows()):
        s = gpu.streams.index(stream)
        yield _descriptor(
            uuid=int(gpu_track_uuid(index, np.array([s]), np.array([lane]))[0]),
            parent_uuid=process,
            name=(f"stream {stream}" if stream >= 0 else "stream ?")
            + ("" if lane == 0 else f" {OVERLAP}" + ("" if lane == 1 else f" {lane}")),
            sibling_order_rank=s * 64 + lane,
        )


def _counter_packets(tile: TileTimeline) -> Iterator[pb.TracePacket]:
    for rank, counter in enumerate(tile.counters):
        for t, v in zip(counter.times_ns.tolist(), counter.values.tolist(), strict=True):
            yield pb.TracePacket(
                timestamp=t,
                trusted_packet_sequence_id=SEQUENCE,
                track_event=pb.TrackEvent(
                    type=pb.TrackEvent.TYPE_COUNTER, track_uuid=2 + rank, double_counter_value=v
                ),
            )


# ---------------------------------------------------------------- the file


def _write(handle: Writable, packet: pb.TracePacket) -> None:
    handle.write(pb.Trace(packet=[packet]).SerializeToString())


def write_pftrace(
    handle: Writable, timeline: Timeline, *, batch: int = BATCH, workers: int = WORKERS
) -> None:
    """Write ``timeline`` as a Perfetto trace to ``handle``, one compressed batch at a time
    (``workers`` threads encode and compress batches side by side; the file is the same)."""
    tile = timeline.tile
    interner = Interner()
    stride = tile.stride
    metadata = _metadata_fragments(interner, tile)
    # Interning needs every string before the first packet: take them from the whole frames
    # (a few distinct values each), then encode batch by batch.
    _prime(interner, tile, timeline.gpus)
    _write(handle, interner.packet())
    for packet in _tile_descriptors(tile, stride):
        _write(handle, packet)
    for index, gpu in enumerate(timeline.gpus):
        for packet in _gpu_descriptors(index, gpu):
            _write(handle, packet)
    for packet in _counter_packets(tile):
        _write(handle, packet)
    interner.frozen = True

    def tile_batch(start: int, fragments: w.Table) -> Callable[[], bytes]:
        part = tile.slices.slice(start, batch)
        rows = fragments.rows(start, part.height)
        return lambda: encode_slices(_tile_rows(interner, part, rows, stride))

    def gpu_batch(
        index: int, gpu: GpuDevice, start: int, fragments: w.Table
    ) -> Callable[[], bytes]:
        part = gpu.slices.slice(start, batch)
        rows = fragments.rows(start, part.height)
        return lambda: encode_slices(_gpu_rows(interner, index, gpu, part, rows))

    fragments = tile_fragments(interner, tile.slices, metadata)
    jobs = [tile_batch(s, fragments) for s in range(0, tile.slices.height, batch)]
    for index, gpu in enumerate(timeline.gpus):
        fragments = gpu_fragments(interner, gpu.slices)
        jobs += [gpu_batch(index, gpu, s, fragments) for s in range(0, gpu.slices.height, batch)]
    for packed in _in_parallel(jobs, workers):
        _write(handle, pb.TracePacket(compressed_packets=packed))


def _in_parallel(jobs: list[Callable[[], bytes]], workers: int) -> Iterator[bytes]:
    """Each job's bytes, compressed, in job order; up to ``workers`` batches in flight.

    numpy, polars and zlib release the GIL for their long loops, so threads overlap the
    encoding and compression of consecutive batches; the window bounds the memory held.
    """

    def run(job: Callable[[], bytes]) -> bytes:
        return zlib.compress(job(), COMPRESSION_LEVEL)

    if workers <= 1:
        yield from (run(job) for job in jobs)
        return
    with ThreadPoolExecutor(workers) as pool:
        pending: deque[Future[bytes]] = deque()
        for job in jobs:
            pending.append(pool.submit(run, job))
            if len(pending) > workers:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()


def _prime(interner: Interner, tile: TileTimeline, gpus: tuple[GpuDevice, ...]) -> None:
    """Intern every string the slices will use, so the first packet can list them all."""
    slices = tile.slices
    for name in codes_of(slices["group"]).values:
        interner.iid("event_names", name or "(none)")
    for kind in codes_of(slices["kind"]).values:
        if kind is not None:
            interner.iid("event_categories", kind)
    for op in codes_of(slices["operation"]).values:
        if op is not None:
            interner.value(op)
    for name in ("operation", "tile", "phase", "epoch", "usefulCycles", "physicalWorkCycles"):
        interner.name(name)
    for gpu in gpus:
        for column in ("name", "cat"):
            for value in codes_of(gpu.slices[column]).values:
                if value is not None:
                    table = "event_names" if column == "name" else "event_categories"
                    interner.iid(table, value)
        for column in ("op", "grid", "block"):
            for value in codes_of(gpu.slices[column]).values:
                if value is not None:
                    interner.value(value)
        for name in ("launching op", "grid", "block", "device", "stream", "correlation", "flops"):
            interner.name(name)
