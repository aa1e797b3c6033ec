"""The trace in the Chrome trace event format (``.json``/``.json.gz``), for chrome://tracing,
Perfetto's legacy importer and anything else that reads it.

One document ``{"displayTimeUnit": "ns", "otherData": …, "traceEvents": [...]}``: ``M``
metadata events name the processes and threads and give their sort order, each slice is a
complete event (``ph: "X"``, ``ts``/``dur`` in µs, written exactly from integer ns with three
decimals), and counters are ``C`` events. The tile device is pid 1, its tile *t* is tid *t*
(an overlap lane *L* of that tile is tid *t* + *L* × stride, sorted right after the tile);
GPU devices are pids 2, 3, … with one tid per stream. Rows are formatted by polars a batch at
a time and written as they are made.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import msgspec
import polars as pl

from tileprof.core.outputs import Writable
from tileprof.model.trace import Counter, GpuDevice, TileTimeline, Timeline, overlap_name

BATCH = 100_000
_ENCODE = msgspec.json.Encoder().encode


def _json_strings(values: list[str | None]) -> list[str]:
    return [_ENCODE(v).decode() for v in values]


def _micros(ns: pl.Expr) -> pl.Expr:
    """Integer ns as a JSON number of µs with exactly three decimals (no float rounding)."""
    return pl.concat_str(
        (ns // 1000).cast(pl.String), pl.lit("."), (ns % 1000).cast(pl.String).str.zfill(3)
    )


def _number(column: str) -> pl.Expr:
    """A numeric column as JSON text: NaN (a dump may state one) and null as ``null``."""
    col = pl.col(column)
    if column in ("usefulCycles", "physicalWorkCycles"):
        col = col.fill_nan(None)
    return col.cast(pl.String).fill_null("null")


def _lookup(name: str, series: pl.Series, values: dict[str | None, str]) -> pl.Series:
    """Per row, a JSON fragment chosen by the (string) value of ``series``."""
    keys = pl.Series(list(values), dtype=pl.String)
    table = pl.DataFrame({"k": keys, name: list(values.values())})
    frame = pl.DataFrame({"k": series.cast(pl.String)})
    return frame.join(table, on="k", how="left", nulls_equal=True, maintain_order="left")[name]


def _metadata_json(tile: TileTimeline) -> pl.Series:
    texts = [_ENCODE(dict(entries)).decode() for entries in tile.metadata]
    return pl.Series("meta", [*texts, "{}"], dtype=pl.String)


def _tile_lines(tile: TileTimeline, batch: pl.DataFrame, stride: int, meta: pl.Series) -> str:
    names = batch["group"].cast(pl.String).unique().to_list()
    kinds = batch["kind"].cast(pl.String).unique().to_list()
    name_json = dict(zip(names, _json_strings([n or "(none)" for n in names]), strict=True))
    cat_json = dict(zip(kinds, _json_strings(kinds), strict=True))
    ops = batch["operation"].cast(pl.String).unique().to_list()
    op_json = dict(zip(ops, _json_strings(ops), strict=True))
    ids = batch["metadataId"].fill_null(meta.len() - 1).cast(pl.Int64)
    frame = batch.with_columns(
        _name=_lookup("_name", batch["group"], name_json),
        _cat=_lookup("_cat", batch["kind"], cat_json),
        _op=_lookup("_op", batch["operation"], op_json),
        _meta=meta.gather(ids),
        _tid=pl.col("tile") + pl.col("lane") * stride,
    )
    line = pl.concat_str(
        pl.lit('{"ph":"X","pid":1,"tid":'),
        pl.col("_tid").cast(pl.String),
        pl.lit(',"ts":'),
        _micros(pl.col("begin_ns")),
        pl.lit(',"dur":'),
        _micros(pl.col("end_ns") - pl.col("begin_ns")),
        pl.lit(',"name":'),
        pl.col("_name"),
        pl.lit(',"cat":'),
        pl.col("_cat"),
        pl.lit(',"args":{"tile":'),
        pl.col("tile").cast(pl.String),
        pl.lit(',"phase":'),
        _number("phase"),
        pl.lit(',"epoch":'),
        _number("epoch"),
        pl.lit(',"operation":'),
        pl.col("_op"),
        pl.lit(',"usefulCycles":'),
        _number("usefulCycles"),
        pl.lit(',"physicalWorkCycles":'),
        _number("physicalWorkCycles"),
        pl.lit(',"metadata":'),
        pl.col("_meta"),
        pl.lit("}}"),
    )
    return str(frame.select(line.str.join(",\n")).item())


def _metadata_events(timeline: Timeline, stride: int) -> Iterator[dict[str, Any]]:
    tile = timeline.tile

    def meta(pid: int, tid: int | None, name: str, value: object) -> dict[str, Any]:
        key = "sort_index" if name.endswith("sort_index") else "name"
        event: dict[str, Any] = {"ph": "M", "pid": pid, "name": name, "args": {key: value}}
        if tid is not None:
            event["tid"] = tid
        return event

    if tile is not None:
        yield meta(1, None, "process_name", tile.name)
        yield meta(1, None, "process_sort_index", 0)
        for t in tile.tiles:
            yield meta(1, t, "thread_name", f"tile {t}")
            yield meta(1, t, "thread_sort_index", t * 64)
        lanes = tile.slices.filter(pl.col("lane") > 0).select("tile", "lane").unique()
        for t, lane in sorted(lanes.iter_rows()):
            name = f"tile {t} {overlap_name(lane)}"
            yield meta(1, t + lane * stride, "thread_name", name)
            yield meta(1, t + lane * stride, "thread_sort_index", t * 64 + min(lane, 63))
    for index, gpu in enumerate(timeline.gpus):
        pid = 2 + index
        yield meta(pid, None, "process_name", gpu.name)
        yield meta(pid, None, "process_sort_index", 1 + index)
        pairs = gpu.slices.select("stream", "lane").unique()
        for stream, lane in sorted(pairs.iter_rows()):
            tid = _gpu_tid(gpu, stream, lane)
            yield meta(pid, tid, "thread_name", gpu.row_name(stream, lane))
            yield meta(pid, tid, "thread_sort_index", tid)


def _gpu_tid(gpu: GpuDevice, stream: int, lane: int) -> int:
    return gpu.streams.index(stream) * 64 + lane


def _counter_events(counters: tuple[Counter, ...]) -> Iterator[dict[str, Any]]:
    for counter in counters:
        for t, v in zip(counter.times_ns.tolist(), counter.values.tolist(), strict=True):
            yield {
                "ph": "C",
                "pid": 1,
                "name": counter.name,
                "ts": msgspec.Raw(_us_text(t).encode()),
                "args": {counter.unit: v},
            }


def _gpu_events(index: int, gpu: GpuDevice) -> Iterator[dict[str, Any]]:
    for row in gpu.slices.iter_rows(named=True):
        args = {
            k: row[k]
            for k in ("device", "stream", "op", "grid", "block", "correlation", "flops")
            if row[k] is not None and k not in gpu.placeholders
        }
        if "op" in args:
            args["launching op"] = args.pop("op")
        for dims in ("grid", "block"):  # as Kineto writes them: [x, y, z]
            if dims in args:
                args[dims] = [int(v) for v in args[dims].split("x")]
        yield {
            "ph": "X",
            "pid": 2 + index,
            "tid": _gpu_tid(gpu, row["stream"], row["lane"]),
            "ts": msgspec.Raw(_us_text(row["begin_ns"]).encode()),
            "dur": msgspec.Raw(_us_text(row["end_ns"] - row["begin_ns"]).encode()),
            "name": row["name"],
            "cat": row["cat"],
            "args": args,
        }


def _us_text(ns: int) -> str:
    return f"{ns // 1000}.{ns % 1000:03d}"


def write_chrome(handle: Writable, timeline: Timeline, *, batch: int = BATCH) -> None:
    """Write ``timeline`` as one Chrome trace JSON document, batch by batch."""
    tile = timeline.tile
    stride = tile.stride if tile is not None else 0
    targets = [] if tile is None else [tile.name]
    other = {"generator": "tileprof trace", "targets": [*targets, *(g.name for g in timeline.gpus)]}
    handle.write(b'{"displayTimeUnit":"ns","otherData":' + _ENCODE(other) + b',"traceEvents":[\n')
    first = True

    def emit(text: bytes) -> None:
        nonlocal first
        if not text:
            return
        handle.write(text if first else b",\n" + text)
        first = False

    for event in _metadata_events(timeline, stride):
        emit(_ENCODE(event))
    if tile is not None:
        for event in _counter_events(tile.counters):
            emit(_ENCODE(event))
        meta = _metadata_json(tile)
        for start in range(0, tile.slices.height, batch):
            emit(_tile_lines(tile, tile.slices.slice(start, batch), stride, meta).encode())
    for index, gpu in enumerate(timeline.gpus):
        for event in _gpu_events(index, gpu):
            emit(_ENCODE(event))
    handle.write(b"\n]}\n")
