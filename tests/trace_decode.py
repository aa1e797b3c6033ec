"""Reading ``.pftrace`` files back with the ``perfetto`` package's own protos, for the tests.

Nothing here comes from tileprof's writer: packets are parsed with ``perfetto_trace_pb2``,
``compressed_packets`` are inflated with zlib as Perfetto's format defines, interned ids are
resolved from the ``InternedData`` seen so far on the packet's sequence, and slices are
rebuilt per track with a stack, which fails on any SLICE_END without a matching begin.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perfetto.protos.perfetto.trace import perfetto_trace_pb2 as pb


def packets(path: Path) -> list[pb.TracePacket]:
    """Every packet in file order, compressed batches expanded in place."""
    out: list[pb.TracePacket] = []
    for packet in pb.Trace.FromString(path.read_bytes()).packet:
        if packet.HasField("compressed_packets"):
            inner = pb.Trace.FromString(zlib.decompress(packet.compressed_packets))
            out.extend(inner.packet)
        else:
            out.append(packet)
    return out


@dataclass
class Slice:
    track: int
    begin: int
    end: int
    name: str
    categories: tuple[str, ...]
    args: dict[str, Any]


@dataclass
class Decoded:
    descriptors: dict[int, pb.TrackDescriptor] = field(default_factory=dict)
    declared_at: dict[int, int] = field(default_factory=dict)
    first_use: dict[int, int] = field(default_factory=dict)
    slices: list[Slice] = field(default_factory=list)
    counters: dict[int, list[tuple[int, float]]] = field(default_factory=dict)
    uuid_repeats: int = 0

    def track_name(self, uuid: int) -> str:
        return self.descriptors[uuid].name

    def process_of(self, uuid: int) -> pb.TrackDescriptor:
        d = self.descriptors[uuid]
        while not d.HasField("process"):
            d = self.descriptors[d.parent_uuid]
        return d


def _resolve(table: dict[int, str], iid: int, what: str) -> str:
    assert iid in table, f"interned {what} id {iid} does not resolve"
    return table[iid]


def _args(event: pb.TrackEvent, names: dict[int, str], values: dict[int, str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for a in event.debug_annotations:
        key = _resolve(names, a.name_iid, "annotation name") if a.name_iid else a.name
        kind = a.WhichOneof("value")
        if kind == "string_value_iid":
            out[key] = _resolve(values, a.string_value_iid, "string value")
        else:
            out[key] = getattr(a, kind)
    return out


def decode(path: Path) -> Decoded:
    """Descriptors, slices (checked to nest per track), counters, with interned ids resolved."""
    result = Decoded()
    tables: dict[str, dict[int, str]] = {
        "names": {},
        "categories": {},
        "annotations": {},
        "values": {},
    }
    open_slices: dict[int, list[tuple[int, pb.TrackEvent]]] = {}
    for index, packet in enumerate(packets(path)):
        if packet.sequence_flags & pb.TracePacket.SEQ_INCREMENTAL_STATE_CLEARED:
            for table in tables.values():
                table.clear()
        data = packet.interned_data
        tables["names"].update({e.iid: e.name for e in data.event_names})
        tables["categories"].update({e.iid: e.name for e in data.event_categories})
        tables["annotations"].update({e.iid: e.name for e in data.debug_annotation_names})
        tables["values"].update(
            {e.iid: e.str.decode() for e in data.debug_annotation_string_values}
        )
        if packet.HasField("track_descriptor"):
            d = packet.track_descriptor
            if d.uuid in result.descriptors:
                result.uuid_repeats += 1
            result.descriptors[d.uuid] = d
            result.declared_at[d.uuid] = index
        if not packet.HasField("track_event"):
            continue
        event = packet.track_event
        result.first_use.setdefault(event.track_uuid, index)
        if event.type == pb.TrackEvent.TYPE_COUNTER:
            result.counters.setdefault(event.track_uuid, []).append(
                (packet.timestamp, event.double_counter_value)
            )
        elif event.type == pb.TrackEvent.TYPE_SLICE_BEGIN:
            open_slices.setdefault(event.track_uuid, []).append((packet.timestamp, event))
        elif event.type == pb.TrackEvent.TYPE_SLICE_END:
            stack = open_slices.get(event.track_uuid)
            assert stack, f"SLICE_END without a begin on track {event.track_uuid}"
            begin, opened = stack.pop()
            assert begin <= packet.timestamp, "a slice ends before it begins"
            if stack:  # nesting: the enclosing slice must still cover this one
                assert stack[-1][0] <= begin
            result.slices.append(
                Slice(
                    event.track_uuid,
                    begin,
                    packet.timestamp,
                    _resolve(tables["names"], opened.name_iid, "event name"),
                    tuple(
                        _resolve(tables["categories"], c, "category") for c in opened.category_iids
                    ),
                    _args(opened, tables["annotations"], tables["values"]),
                )
            )
    assert all(not s for s in open_slices.values()), "slices left open at the end"
    return result
