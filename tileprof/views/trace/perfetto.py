"""The trace as a native Perfetto file (``.pftrace``): TracePackets with TrackEvents.

Layout, all on one packet sequence: a first packet with every interned string (event names,
categories, debug-annotation names and string values) that clears the sequence's incremental
state; then the track descriptors (one process per target, one child track per tile or stream,
"overlap" tracks below the tile they belong to, counter tracks); then the counter values; then
every slice as a SLICE_BEGIN/SLICE_END pair, in time order, in zlib-compressed batches
(``TracePacket.compressed_packets``).

The few packets that open the file are built here with the ``perfetto`` package's protos. The
per-sample bulk (the slices, and the overlap tracks, which can be one per sample) is encoded by
the compiled core (crates/tileprof-pftrace: the same messages, declared for prost) from typed
columns: each string becomes an interned id here, once per distinct value, and the columns go
over as one Arrow chunk; the core encodes and compresses batches on threads with the GIL
released. The compiled module is one binary, built as ``tileprof.core._native``; this module
and ``model.trace`` (for the lanes and counters) are the only ones above the inputs that use
it, and only for these functions (docs/architecture.md, tests/test_architecture.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import polars as pl
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

import tileprof.core._native as compiled
from tileprof.core.cpus import usable_cores
from tileprof.core.errors import OutputError
from tileprof.core.outputs import Writable
from tileprof.model.trace import GpuDevice, TileTimeline, Timeline, overlap_name

SEQUENCE = 1
BATCH = 65_536
"""Slices per compressed batch: big enough for zlib to find the repeats, small enough that a
batch's bytes stay a few MB."""
COMPRESSION_LEVEL = 1


WORKERS = usable_cores()
"""Threads encoding batches (the compiled core's pool)."""

_TILE_BASE = 1 << 24
_GPU_BASE = 1 << 40
_ABSENT = 0  # iid 0 means unset in the protos: an interned-id column holds it for "no value"


class Interner:
    """Interned ids per string table; iids start at 1 (0 means unset in the protos)."""

    def __init__(self) -> None:
        self.tables: dict[str, dict[str, int]] = {
            "event_names": {},
            "event_categories": {},
            "debug_annotation_names": {},
            "debug_annotation_string_values": {},
        }

    def iid(self, table: str, text: str) -> int:
        ids = self.tables[table]
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


def interned(series: pl.Series, iid_of: Callable[[str | None], int], name: str) -> pl.Series:
    """Per row, the iid ``iid_of`` gives its string (null where that is ``_ABSENT``): one call
    per distinct string, then one gather of the categorical codes."""
    cat = series.cast(pl.Categorical) if series.dtype == pl.String else series
    uniques = cat.unique(maintain_order=True).drop_nulls()  # iids in a fixed order
    physical = uniques.to_physical().to_numpy().astype(np.int64)
    lut = np.zeros(int(physical.max()) + 1 if physical.size else 1, dtype=np.int64)
    lut[physical] = [iid_of(text) for text in uniques.cast(pl.String).to_list()]
    iids = pl.Series(name, lut)
    table = pl.select(pl.when(iids != _ABSENT).then(iids)).to_series()
    codes = table.gather(cat.to_physical())
    if cat.null_count() and (missing := iid_of(None)) != _ABSENT:
        codes = codes.fill_null(missing)
    return codes.alias(name)


def _values(interner: Interner, series: pl.Series, name: str) -> pl.Series:
    """A string argument column as string-value iids (no annotation where null)."""
    return interned(series, lambda v: _ABSENT if v is None else interner.value(v), name)


def _names(interner: Interner, series: pl.Series) -> pl.Series:
    """Event names as iids (a null name is "(none)")."""
    return interned(series, lambda v: interner.iid("event_names", v or "(none)"), "name")


def _categories(interner: Interner, series: pl.Series) -> pl.Series:
    """Categories as iids (no category where null)."""
    return interned(
        series, lambda v: _ABSENT if v is None else interner.iid("event_categories", v), "category"
    )


@dataclass(frozen=True)
class SliceColumns:
    """What the compiled encoder takes: the frame (track, begin, end, name, category and the
    argument columns) and, per argument, its annotation name iid and column."""

    frame: pl.DataFrame
    ints: list[tuple[int, str]]
    doubles: list[tuple[int, str]]
    strings: list[tuple[int, str]]
    lists: list[list[tuple[int, int]]]
    list_column: str | None = None


def encode_slices(
    columns: SliceColumns, *, batch: int = BATCH, workers: int = WORKERS
) -> list[bytes]:
    """Every slice of ``columns`` as SLICE_BEGIN/SLICE_END packets, in compressed batches of
    ``batch`` slices (Trace framing: the bytes to write, in order)."""
    try:
        return compiled.encode_slices(
            columns.frame.rechunk(),
            sequence=SEQUENCE,
            ints=columns.ints,
            doubles=columns.doubles,
            strings=columns.strings,
            lists=columns.lists,
            list_column=columns.list_column,
            batch=batch,
            level=COMPRESSION_LEVEL,
            jobs=workers,
        )
    except compiled.EncodeError as error:
        raise encoder_error(error) from error


def encoder_error(error: Exception) -> OutputError:
    """A failure inside the compiled encoder, as one line (it is tileprof's bug, not the
    user's: the columns come from the timeline)."""
    kind, message = error.args
    return OutputError(
        f"internal error in the .pftrace encoder ({kind}: {message}); please report it"
    )


def _arguments(
    interner: Interner, batch: pl.DataFrame, ints: tuple[str, ...], doubles: tuple[str, ...]
) -> tuple[list[pl.Series], list[tuple[int, str]], list[tuple[int, str]]]:
    """The int and double argument columns (typed for the encoder) with their name iids."""
    series = [batch[c].cast(pl.Int64) for c in ints]
    series += [batch[c].cast(pl.Float64) for c in doubles]
    return (
        series,
        [(interner.name(c), c) for c in ints],
        [(interner.name(c), c) for c in doubles],
    )


# ---------------------------------------------------------------- tile device


def tile_track_uuid(tile: np.ndarray, lane: np.ndarray, stride: int) -> np.ndarray:
    """The track of a tile (lane 0) or of its overlap lane."""
    return _TILE_BASE + lane.astype(np.int64) * stride + tile.astype(np.int64)


def tile_columns(interner: Interner, tile: TileTimeline) -> SliceColumns:
    """The tile slices for the encoder: name (group), category (kind), the ints tile, phase,
    epoch, the doubles usefulCycles, physicalWorkCycles, the string operation and the
    metadata pairs (``metadata.NAME``) of the sample's list."""
    slices = tile.slices
    track = tile_track_uuid(slices["tile"].to_numpy(), slices["lane"].to_numpy(), tile.stride)
    series, ints, doubles = _arguments(
        interner, slices, ("tile", "phase", "epoch"), ("usefulCycles", "physicalWorkCycles")
    )
    frame = pl.DataFrame(
        [
            pl.Series("track", track),
            slices["begin_ns"].alias("begin"),
            slices["end_ns"].alias("end"),
            _names(interner, slices["group"]),
            _categories(interner, slices["kind"]),
            *series,
            _values(interner, slices["operation"], "operation"),
            slices["metadataId"].cast(pl.Int64),
        ]
    )
    lists = [
        [(interner.name(f"metadata.{name}"), interner.value(value)) for name, value in entries]
        for entries in tile.metadata
    ]
    strings = [(interner.name("operation"), "operation")]
    return SliceColumns(frame, ints, doubles, strings, lists, "metadataId")


def lane_tracks(tile: TileTimeline) -> tuple[pl.DataFrame, list[str]]:
    """Every overlap lane that holds a slice, as descriptor columns (uuid, parent, rank, name:
    an index into the names ``overlap``, ``overlap 2``, …), in (tile, lane) order."""
    lane = tile.slices["lane"].to_numpy().astype(np.int64)
    tiles = tile.slices["tile"].to_numpy().astype(np.int64)
    lanes = int(lane.max()) if lane.size else 0
    over = lane > 0
    # (tile, lane) pairs as one key, sorted and made unique (measured: numpy 2's hash-based
    # np.unique took 1.2 s on a million keys where the sort takes 0.06 s)
    keys = np.sort(tiles[over] * (lanes + 1) + lane[over])
    pairs = keys[np.r_[True, keys[1:] != keys[:-1]]] if keys.size else keys
    pair_tile, pair_lane = np.divmod(pairs, lanes + 1)
    frame = pl.DataFrame(
        {
            "uuid": tile_track_uuid(pair_tile, pair_lane, tile.stride),
            "parent": tile_track_uuid(pair_tile, np.zeros_like(pair_lane), tile.stride),
            "rank": pair_lane,
            "name": pair_lane - 1,
        }
    )
    names = [overlap_name(lane) for lane in range(1, lanes + 1)]
    return frame, names


def encode_lane_tracks(tile: TileTimeline, *, batch: int, workers: int) -> list[bytes]:
    """The overlap tracks' descriptors, in compressed batches (a tile whose samples all
    overlap has one track per sample)."""
    frame, names = lane_tracks(tile)
    try:
        return compiled.encode_tracks(
            frame.rechunk(),
            names,
            sequence=SEQUENCE,
            batch=batch,
            level=COMPRESSION_LEVEL,
            jobs=workers,
        )
    except compiled.EncodeError as error:
        raise encoder_error(error) from error


# ---------------------------------------------------------------- GPU devices


def gpu_track_uuid(device: int, stream_index: np.ndarray, lane: np.ndarray) -> np.ndarray:
    """The track of a stream (lane 0) or of its overlap lane on one GPU device."""
    return _GPU_BASE + (device << 32) + (lane.astype(np.int64) << 20) + stream_index


def gpu_columns(interner: Interner, index: int, gpu: GpuDevice) -> SliceColumns:
    """One GPU device's kernels for the encoder: name, category, the ints device, stream,
    correlation, the double flops and the strings launching op, grid and block."""
    slices = gpu.slices
    streams = (
        slices["stream"]
        .replace_strict(list(gpu.streams), list(range(len(gpu.streams))), return_dtype=pl.Int64)
        .to_numpy()
    )
    track = gpu_track_uuid(index, streams, slices["lane"].to_numpy())
    shown = tuple(c for c in ("device", "stream", "correlation") if c not in gpu.placeholders)
    series, ints, doubles = _arguments(interner, slices, shown, ("flops",))
    strings = [("launching op", "op"), ("grid", "grid"), ("block", "block")]
    frame = pl.DataFrame(
        [
            pl.Series("track", track),
            slices["begin_ns"].alias("begin"),
            slices["end_ns"].alias("end"),
            _names(interner, slices["name"]),
            _categories(interner, slices["cat"]),
            *series,
            *(_values(interner, slices[column], column) for _, column in strings),
        ]
    )
    named = [(interner.name(arg), column) for arg, column in strings]
    return SliceColumns(frame, ints, doubles, named, [])


# ---------------------------------------------------------------- descriptors


def _descriptor(**fields: object) -> pb.TracePacket:
    return pb.TracePacket(
        trusted_packet_sequence_id=SEQUENCE, track_descriptor=pb.TrackDescriptor(**fields)
    )


def _tile_descriptors(tile: TileTimeline) -> Iterator[pb.TracePacket]:
    """The device process, its counter tracks and one track per tile (the overlap tracks
    follow, from ``encode_lane_tracks``)."""
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
            uuid=_TILE_BASE + t,  # tile_track_uuid of lane 0
            parent_uuid=1,
            name=f"tile {t}",
            sibling_order_rank=t,
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
            name=gpu.row_name(stream, lane),
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
    handle: Writable, timeline: Timeline, *, batch: int = BATCH, workers: int | None = None
) -> None:
    """Write ``timeline`` as a Perfetto trace to ``handle`` (``workers`` threads, by default
    the timeline's ``--jobs`` or the usable cores, encode and compress batches of ``batch``
    slices side by side; the file is the same for any number)."""
    workers = workers or timeline.jobs or WORKERS
    tile = timeline.tile
    interner = Interner()
    # Interning needs every string before the first packet: the columns intern them (a few
    # distinct values each), then the packets are written.
    columns = [] if tile is None else [tile_columns(interner, tile)]
    columns += [gpu_columns(interner, i, gpu) for i, gpu in enumerate(timeline.gpus)]
    _write(handle, interner.packet())
    if tile is not None:
        for packet in _tile_descriptors(tile):
            _write(handle, packet)
        for chunk in encode_lane_tracks(tile, batch=batch, workers=workers):
            handle.write(chunk)
    for index, gpu in enumerate(timeline.gpus):
        for packet in _gpu_descriptors(index, gpu):
            _write(handle, packet)
    for packet in _counter_packets(tile) if tile is not None else ():
        _write(handle, packet)
    for part in columns:
        for chunk in encode_slices(part, batch=batch, workers=workers):
            handle.write(chunk)
