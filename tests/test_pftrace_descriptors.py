"""The track descriptors and counter packets of a ``.pftrace`` (``views.trace.perfetto``), as
Perfetto's UI reads them: one sequence, the tile device as process 1 with its counters first
and a track per tile in tile order, each GPU device as process 2 + its index with a track per
stream and overlap lane in stream order, "stream ?" for a kernel without a stream."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb

from tests.trace_decode import decode
from tileprof.model.trace import (
    CRITICAL_SPAN,
    NVTX_RANGE,
    OVERLAP,
    Counter,
    GpuDevice,
    TileTimeline,
    Timeline,
)
from tileprof.views.trace.perfetto import (
    SEQUENCE,
    Interner,
    _counter_packets,
    _gpu_descriptors,
    _names,
    _tile_descriptors,
    gpu_columns,
    gpu_track_uuid,
    lane_tracks,
    write_pftrace,
)

EXPLICIT = pb.TrackDescriptor.ChildTracksOrdering.EXPLICIT
COUNTER = pb.TrackEvent.TYPE_COUNTER


def _tile() -> TileTimeline:
    counters = (
        Counter("active tiles", "tiles", np.array([0, 10]), np.array([2.0, 0.0])),
        Counter("utilization", "%", np.array([5]), np.array([0.5])),
    )
    return TileTimeline(
        name="tile device (8 tiles @ 1 GHz)",
        tiles=(3, 7),
        lanes=1,
        slices=pl.DataFrame(),
        metadata=(),
        counters=counters,
        overlapping=0,
        matched=0,
    )


def test_the_tile_device_is_process_1_with_its_counters_then_its_tiles() -> None:
    packets = list(_tile_descriptors(_tile()))
    assert {p.trusted_packet_sequence_id for p in packets} == {SEQUENCE}
    device, *tracks = [p.track_descriptor for p in packets]
    assert (device.uuid, device.process.pid, device.process.process_name) == (
        1,
        1,
        "tile device (8 tiles @ 1 GHz)",
    )
    assert device.child_ordering == EXPLICIT
    assert [(t.uuid, t.parent_uuid, t.name, t.sibling_order_rank) for t in tracks] == [
        (2, 1, "active tiles", -2),
        (3, 1, "utilization", -1),
        ((1 << 24) + 3, 1, "tile 3", 3),
        ((1 << 24) + 7, 1, "tile 7", 7),
    ]
    assert [t.counter.unit_name for t in tracks[:2]] == ["tiles", "%"]
    assert not any(t.HasField("counter") for t in tracks[2:])


def test_counter_values_are_on_their_tracks() -> None:
    packets = list(_counter_packets(_tile()))
    assert {p.trusted_packet_sequence_id for p in packets} == {SEQUENCE}
    assert [
        (
            p.timestamp,
            p.track_event.track_uuid,
            p.track_event.double_counter_value,
            p.track_event.type,
        )
        for p in packets
    ] == [(0, 2, 2.0, COUNTER), (10, 2, 0.0, COUNTER), (5, 3, 0.5, COUNTER)]


def test_a_gpu_is_a_process_with_a_track_per_stream_and_lane() -> None:
    slices = pl.DataFrame({"stream": [7, -1, 7, 7], "lane": [0, 0, 1, 2]})
    gpu = GpuDevice(name="GPU 0 (H100)", source="t.json", slices=slices, streams=(7, -1), lanes=3)
    packets = list(_gpu_descriptors(1, gpu))
    assert {p.trusted_packet_sequence_id for p in packets} == {SEQUENCE}
    process, *tracks = [p.track_descriptor for p in packets]
    uuid = (1 << 40) + (1 << 32) + (1 << 31)
    assert (process.uuid, process.process.pid, process.process.process_name) == (
        uuid,
        3,
        "GPU 0 (H100)",
    )
    assert process.child_ordering == EXPLICIT

    def track(s: int, lane: int) -> int:
        return int(gpu_track_uuid(1, np.array([s]), np.array([lane]))[0])

    assert [(t.uuid, t.parent_uuid, t.name, t.sibling_order_rank) for t in tracks] == [
        (track(1, 0), uuid, "stream ?", 64),
        (track(0, 0), uuid, "stream 7", 0),
        (track(0, 1), uuid, f"stream 7 {OVERLAP}", 1),
        (track(0, 2), uuid, f"stream 7 {OVERLAP} 2", 2),
    ]


def test_a_group_drawn_beside_the_devices_names_its_rows_and_hides_its_placeholders() -> None:
    """The critical path's one row is "path" and an NVTX group's rows are threads, not
    streams; neither slice carries the device (-1) and stream columns that hold no fact of it,
    while a device's kernel carries both."""
    columns = {"device": [-1], "stream": [0], "lane": [0], "begin_ns": [0], "end_ns": [5]}
    columns |= {"name": ["cpu: x"], "cat": ["critical_cpu"], "op": [None], "grid": [None]}
    columns |= {"block": [None], "correlation": [None], "flops": [None]}
    typed = {"op": pl.String, "grid": pl.String, "block": pl.String, "flops": pl.Float64}
    slices = pl.DataFrame(columns, schema_overrides=typed | {"correlation": pl.Int64})
    path = GpuDevice("Critical path (t)", "t", slices, (0,), 1, spans_of=CRITICAL_SPAN)
    (_, row) = [p.track_descriptor.name for p in _gpu_descriptors(0, path)]
    assert row == "path"
    nvtx = dataclasses.replace(path, slices=slices.with_columns(stream=pl.lit(12)), streams=(12,))
    nvtx = dataclasses.replace(nvtx, spans_of=NVTX_RANGE)
    assert [p.track_descriptor.name for p in _gpu_descriptors(0, nvtx)][1] == "thread 12"
    device = dataclasses.replace(path, spans_of=None)
    shown = {
        group.spans_of: {name for _, name in gpu_columns(Interner(), 0, group).ints}
        for group in (path, device)
    }
    assert shown == {CRITICAL_SPAN: {"correlation"}, None: {"device", "stream", "correlation"}}


def test_a_track_encoder_error_is_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The overlap tracks' encoder refusing its columns is an OutputError naming why."""
    from tileprof.core import _native
    from tileprof.core.errors import OutputError
    from tileprof.views.trace.perfetto import encode_lane_tracks

    def refuse(*args: object, **kwargs: object) -> None:
        raise _native.EncodeError("columns", "uuid is negative at row 0")

    monkeypatch.setattr(_native, "encode_tracks", refuse)
    tile = _tile()
    lanes = pl.DataFrame({"tile": [3], "lane": [1]}, schema={"tile": pl.Int64, "lane": pl.Int64})
    with pytest.raises(OutputError) as caught:
        encode_lane_tracks(dataclasses.replace(tile, slices=lanes, lanes=2), batch=8, workers=1)
    assert str(caught.value) == (
        "internal error in the .pftrace encoder (columns: uuid is negative at row 0); "
        "please report it"
    )


def test_gpu_track_uuids_by_hand() -> None:
    """Device in bits 32 up, overlap lane in bits 20 up, the stream's index below (every lane
    its own track)."""
    uuids = gpu_track_uuid(2, np.array([0, 0, 0, 5]), np.array([0, 1, 2, 1]))
    base = (1 << 40) + (2 << 32)
    assert uuids.tolist() == [base, base + (1 << 20), base + (2 << 20), base + (1 << 20) + 5]


def test_names_intern_in_first_seen_order_and_a_null_name_is_none() -> None:
    interner = Interner()
    series = pl.Series(["zq second", None, "zq first", "zq second"], dtype=pl.String)
    assert _names(interner, series).to_list() == [1, 3, 2, 1]  # the null's name comes last
    assert interner.tables["event_names"] == {"zq second": 1, "zq first": 2, "(none)": 3}


def test_lane_tracks_of_no_slices_and_of_two_overlap_lanes() -> None:
    empty = pl.DataFrame(schema={"tile": pl.Int64, "lane": pl.Int64})
    frame, names = lane_tracks(dataclasses.replace(_tile(), slices=empty))
    assert frame.height == 0 and names == []
    slices = pl.DataFrame({"tile": [3, 3, 7, 3], "lane": [0, 1, 2, 1]})
    frame, names = lane_tracks(dataclasses.replace(_tile(), slices=slices))
    assert names == [OVERLAP, f"{OVERLAP} 2"]
    assert frame.select("rank", "name").rows() == [(1, 0), (2, 1)]


def test_a_timeline_of_gpus_only_is_written(tmp_path: Path) -> None:
    slices = pl.DataFrame(
        {"device": [0], "stream": [7], "lane": [0], "begin_ns": [10], "end_ns": [20],
         "name": ["gemm"], "cat": ["kernel"], "op": [None], "grid": [None], "block": [None],
         "correlation": [1], "flops": [None]},
        schema_overrides={"op": pl.String, "grid": pl.String, "block": pl.String,
                          "flops": pl.Float64},
    )  # fmt: skip
    gpu = GpuDevice(name="GPU 0", source="t.json", slices=slices, streams=(7,), lanes=1)
    out = tmp_path / "g.pftrace"
    with out.open("wb") as handle:
        write_pftrace(handle, Timeline(tile=None, gpus=(gpu,)), workers=1)
    decoded = decode(out)
    assert [(s.name, s.begin, s.end) for s in decoded.slices] == [("gemm", 10, 20)]
