"""What a trace holds, before any file format: slices per track in ns, counters, processes.

The tile device is one process with one track per tile; samples that overlap an earlier sample
of their tile go on that tile's "overlap" tracks (lanes 1, 2, … by greedy interval
partitioning, as few as the deepest overlap), so that slices on one track never overlap. GPU
traces give one process per device with one track per stream. Timestamps are integer ns,
aligned per target (``Alignment``). A trace may hold GPU targets only (no tile dump given:
``Timeline.tile`` is None). Every definition is in docs/metrics.md ("Trace").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from tileprof.analyses.filters import Filters, group_name
from tileprof.analyses.timeline import TIME_BINS, time_bins
from tileprof.core.errors import InputError, OptionError, OutputError
from tileprof.core.kineto import KinetoEvents
from tileprof.core.schema import MetadataEntries
from tileprof.model.profile import Profile

if TYPE_CHECKING:
    from tileprof.inputs.sources import FileRead
    from tileprof.model.reading import DumpReading

DEFAULT_MAX_SAMPLES = 5_000_000
OVERLAP = "overlap"


def overlap_name(lane: int) -> str:
    """An overlap lane's name after its track's: "overlap" for the first, "overlap N" after."""
    return OVERLAP if lane == 1 else f"{OVERLAP} {lane}"


@dataclass(frozen=True)
class Counter:
    """A counter track: value ``values[i]`` from ``times_ns[i]`` on (the last one is 0)."""

    name: str
    unit: str
    times_ns: np.ndarray
    values: np.ndarray


@dataclass(frozen=True)
class TileTimeline:
    """The tile device's slices, in write order (begin, then end, then tile).

    ``slices`` columns: tile, lane (0 = the tile's own track), begin_ns, end_ns, group, kind,
    phase, epoch, operation, usefulCycles, physicalWorkCycles, metadataId (group, kind and
    operation stay categorical: a million samples build no strings).
    """

    name: str
    tiles: tuple[int, ...]
    lanes: int
    slices: pl.DataFrame
    metadata: tuple[MetadataEntries, ...]
    counters: tuple[Counter, ...]
    overlapping: int
    matched: int
    last_offset: int = 0  # cycle at which the last written sample starts

    @property
    def stride(self) -> int:
        """One more than the highest tile: lane *L* of tile *t* is track number t + L × stride."""
        return max(self.tiles, default=0) + 1


CRITICAL_SPAN = "critical-path span"
NVTX_RANGE = "NVTX range"


def _count(n: int, noun: str) -> str:
    """``1 device``, ``2 devices``, ``1,024 NVTX ranges``."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


@dataclass(frozen=True)
class GpuDevice:
    """One GPU device of one trace: its kernels per stream (``slices``: device, stream, lane,
    begin_ns, end_ns, name, cat, op, grid, block, correlation, flops)."""

    name: str
    source: str
    slices: pl.DataFrame
    streams: tuple[int, ...]
    lanes: int
    spans_of: str | None = None
    """What a track group drawn beside the devices holds (``CRITICAL_SPAN``, ``NVTX_RANGE``);
    None for a device. ``describe`` counts devices and these apart."""

    @property
    def placeholders(self) -> tuple[str, ...]:
        """The slice columns that hold no fact of a group drawn beside the devices: its
        ``device`` (-1) and ``stream`` (the path's 0, an NVTX range's thread, which its row's
        name says). The writers give them no argument there."""
        return () if self.spans_of is None else ("device", "stream")

    def row_name(self, stream: int, lane: int) -> str:
        """The name of one row of the group: a device's stream, an NVTX range's thread or the
        critical path (never "stream" for what is none), then its overlap lane if any."""
        if self.spans_of == CRITICAL_SPAN:
            row = "path"
        else:
            noun = "thread" if self.spans_of == NVTX_RANGE else "stream"
            row = f"{noun} {stream}" if stream >= 0 else f"{noun} ?"
        return row if lane == 0 else f"{row} {overlap_name(lane)}"


@dataclass(frozen=True)
class Timeline:
    """Every target of one trace file (``tile`` None: GPU targets only)."""

    tile: TileTimeline | None
    gpus: tuple[GpuDevice, ...] = ()
    notes: tuple[str, ...] = field(default=())
    jobs: int | None = None
    """Threads a writer may use: ``--jobs`` when the timeline was built (None: its own
    choice). The writers are views and do not read the input layer's setting themselves."""

    def describe(self) -> str:
        """What the trace holds, in one line (``tileprof trace`` prints it after the path)."""
        tile = self.tile
        devices = [g for g in self.gpus if g.spans_of is None]
        gpu_slices = sum(g.slices.height for g in devices)
        gpus = f"{gpu_slices:,} GPU events on {_count(len(devices), 'device')}"
        for spans_of in (CRITICAL_SPAN, NVTX_RANGE):
            groups = [g for g in self.gpus if g.spans_of == spans_of]
            if groups:
                spans = sum(g.slices.height for g in groups)
                gpus += f", {_count(spans, spans_of)} on {_count(len(groups), 'track group')}"
        if tile is None:
            return gpus
        return (
            f"{tile.slices.height:,} samples on {len(tile.tiles):,} tile tracks "
            f"({tile.overlapping:,} overlapping, on overlap tracks), {gpus}"
        )


# ---------------------------------------------------------------- clocks


def cycles_to_ns(cycles: np.ndarray, clock_hz: float) -> np.ndarray:
    """Cycles as ns, ⌊cycles × 10⁹ / clockHz + ½⌋, exactly (integer arithmetic).

    Rounding is monotone, so samples that do not overlap in cycles do not overlap in ns.
    """
    clock = Fraction(clock_hz)
    c = np.asarray(cycles, dtype=np.int64)
    num, den = clock.numerator, clock.denominator
    if den == 1 and num * 2 * 10**9 < 2**62:
        q, r = np.divmod(c, num)
        return q * 10**9 + (r * (2 * 10**9) + num) // (2 * num)
    exact = [(int(v) * 2 * 10**9 * den + num) // (2 * num) for v in c.tolist()]
    return np.array(exact, dtype=np.int64)


# ---------------------------------------------------------------- lanes


def assign_lanes(keys: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Per interval, its lane: 0 unless it starts before an earlier interval of the same key
    ends (the rule of ``tileprof.analyses.quality.overlapping_samples``, intervals ordered by start
    then end, ties in input order); a flagged one goes on the lowest overlap lane (1, 2, …)
    whose last interval has ended by its start. Slices in one lane never overlap, and the
    overlap lanes are as few as the flagged intervals' deepest overlap: a tile whose six worker
    threads overlap all the time gets at most six overlap tracks.

    The compiled core (crates/tileprof-pftrace/src/lanes.rs) gives each interval its lane in
    one sweep after one sort.
    """
    import tileprof.core._native as compiled
    from tileprof.inputs.threads import jobs

    frame = pl.DataFrame(
        {
            "key": np.asarray(keys, dtype=np.int64),
            "start": np.asarray(starts, dtype=np.int64),
            "end": np.asarray(ends, dtype=np.int64),
        }
    )
    try:
        lanes = pl.DataFrame(compiled.assign_lanes(frame, jobs=jobs()))["lane"]
    except compiled.EncodeError as error:  # a bug of tileprof's, said in one line
        kind, message = error.args
        raise OutputError(f"internal error in the overlap lanes ({kind}: {message})") from error
    return lanes.to_numpy().astype(np.int64, copy=False)


# ---------------------------------------------------------------- tile device


def select_samples(
    matched: pl.DataFrame, tile_range: tuple[int, int] | None, max_samples: int
) -> tuple[pl.DataFrame, int]:
    """The samples to write, in time order, at most ``max_samples``; and how many matched."""
    if tile_range is not None:
        low, high = tile_range
        matched = matched.filter((pl.col("tile") >= low) & (pl.col("tile") < high))
    ordered = matched.sort(["offset", "duration", "tile"], maintain_order=True)
    return ordered.head(max_samples), ordered.height


def tile_timeline(
    profile: Profile,
    matched: pl.DataFrame,
    *,
    tile_range: tuple[int, int] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
) -> tuple[TileTimeline, int]:
    """The device process of ``matched`` (filtered samples); times in ns from cycle 0.

    Also returns how many samples matched before ``max_samples`` cut them.
    """
    chosen, total = select_samples(matched, tile_range, max_samples)
    offset = chosen["offset"].to_numpy().astype(np.int64)
    end = offset + chosen["duration"].to_numpy().astype(np.int64)
    tile = chosen["tile"].to_numpy().astype(np.int64)
    lane = assign_lanes(tile, offset, end)
    slices = chosen.select(
        "tile",
        pl.Series("lane", lane),
        pl.Series("begin_ns", cycles_to_ns(offset, profile.clock_hz)),
        pl.Series("end_ns", cycles_to_ns(end, profile.clock_hz)),
        group_name().alias("group"),
        "kind",
        "phase",
        "epoch",
        "operation",
        "usefulCycles",
        "physicalWorkCycles",
        "metadataId",
    )
    low, high = tile_range if tile_range is not None else (0, profile.tile_count)
    tiles = tuple(range(low, min(high, profile.tile_count)))
    # tiles with samples beyond the device's count: the few outside the range, made unique
    outside = tile[(tile < low) | (tile >= min(high, profile.tile_count))]
    extra = np.unique(outside).tolist()
    timeline = TileTimeline(
        name=profile.target,
        tiles=tuple(sorted((*tiles, *extra))),
        lanes=int(lane.max()) + 1 if lane.size else 1,
        slices=slices,
        metadata=profile.metadata,
        counters=device_counters(offset, end, chosen, profile),
        overlapping=int((lane > 0).sum()),
        matched=total,
        last_offset=int(offset.max()) if offset.size else 0,
    )
    return timeline, total


def device_counters(
    starts: np.ndarray, ends: np.ndarray, samples: pl.DataFrame, profile: Profile
) -> tuple[Counter, ...]:
    """Active tiles and device useful utilization per time bin (docs/metrics.md, "Trace").

    The compiled core bins the cycles (``analyses.timeline.binned_cycles``' arithmetic, in one
    pass: the numpy version took a third of this stage) and spreads each sample's useful
    cycles evenly over its length.
    """
    import tileprof.core._native as compiled

    in_range = samples["tile"].to_numpy() < profile.tile_count
    starts, ends = starts[in_range], ends[in_range]
    if starts.size == 0:
        return ()
    bins = time_bins(int(starts.min()), int(ends.max()), TIME_BINS)
    covered = bins.covered
    frame = pl.DataFrame(
        {
            "start": starts,
            "end": ends,
            "useful": samples["usefulCycles"].to_numpy()[in_range].astype(np.float64),
        }
    )
    try:
        binned = pl.DataFrame(
            compiled.binned_counters(frame, start=bins.start, width=bins.width, count=bins.count)
        )
    except compiled.EncodeError as error:  # a bug of tileprof's, said in one line
        kind, message = error.args
        raise OutputError(f"internal error in the trace counters ({kind}: {message})") from error
    active = binned["cycles"].to_numpy() / covered
    utilization = binned["useful"].to_numpy() / (profile.tile_count * covered)
    edges = np.append(bins.edges[:-1], bins.stop)
    times = cycles_to_ns(edges, profile.clock_hz)
    counters = [Counter("active tiles", "tiles", times, np.append(active, 0.0))]
    if samples.get_column("usefulCycles").filter(pl.Series(in_range)).is_not_null().any():
        # none stated (no work estimate): not known, so no curve at 0 that says "none useful"
        utilization_counter = np.append(utilization, 0.0)
        counters.append(
            Counter("device useful utilization", "fraction", times, utilization_counter)
        )
    return tuple(counters)


# ---------------------------------------------------------------- GPU traces


def _placed(events: pl.DataFrame) -> dict[str, pl.Series]:
    """Each GPU event's begin and end in integer ns (the GPU event frame's ``start_ns`` and
    ``end_ns``), its stream and device (-1 where not stated) and its lane: events that overlap
    on one stream of one device go on lanes below."""
    begin = events["start_ns"].to_numpy().astype(np.int64)
    end = events["end_ns"].to_numpy().astype(np.int64)
    stream = events["stream"].fill_null(-1).to_numpy()
    device = events["device"].fill_null(-1).to_numpy()
    return {
        "begin_ns": pl.Series(begin),
        "end_ns": pl.Series(end),
        "stream": pl.Series(stream),
        "device": pl.Series(device),
        "lane": pl.Series(assign_lanes(device * 2**20 + stream, begin, end)),
    }


def gpu_devices(path: Path, read: KinetoEvents) -> list[GpuDevice]:
    """One ``GpuDevice`` per device of a Kineto trace; times in ns of the trace's own clock."""
    from tileprof.analyses.ops import single_kernel_flops
    from tileprof.inputs.gpu.kineto import gpu_events_of

    found = gpu_events_of(read)
    flops = single_kernel_flops(read)  # by the event's index in traceEvents
    events = found.events.with_columns(
        flops=pl.col("index").replace_strict(flops, default=None, return_dtype=pl.Float64)
        if flops
        else pl.lit(None, pl.Float64)
    )
    frame = events.with_columns(
        **_placed(events),
        name=pl.col("name").cast(pl.String),
        cat=pl.col("cat").cast(pl.String),
    ).sort(["begin_ns", "end_ns"], maintain_order=True)
    return _devices(frame, found.devices, path.name)


EVENT_CATEGORIES: dict[str, str] = {
    "kernel": "kernel",
    "memcpy": "gpu_memcpy",
    "memset": "gpu_memset",
}
"""The GPU-event frame's kinds as Kineto's categories name them, so every source's slices
carry one vocabulary."""


def event_frame_devices(
    events: pl.DataFrame, names: dict[int, str], source: str
) -> list[GpuDevice]:
    """One ``GpuDevice`` per device of a GPU-event frame (``tileprof.core.gpu_events``: nsys
    SQLite exports, rocprofv3 traces); ``grid``/``block`` are used where the frame has them."""
    none = pl.lit(None, pl.String())
    frame = events.with_columns(
        **_placed(events),
        cat=pl.col("kind").cast(pl.String).replace_strict(EVENT_CATEGORIES, default="kernel"),
        op=none,
        grid=pl.col("grid") if "grid" in events.columns else none,
        block=pl.col("block") if "block" in events.columns else none,
        flops=pl.lit(None, pl.Float64()),
    ).sort(["begin_ns", "end_ns"], maintain_order=True)
    return _devices(frame, names, source)


def nvtx_track(ranges: pl.DataFrame, source: str) -> GpuDevice | None:
    """The NVTX ranges of a capture (``name``, ``start_ns``, ``end_ns``, ``tid``) as one more
    track group, one track per thread, nested ranges on lanes below; None when there are none."""
    if ranges.height == 0:
        return None
    begin = ranges["start_ns"].to_numpy().astype(np.int64)
    end = ranges["end_ns"].to_numpy().astype(np.int64)
    tid = ranges["tid"].fill_null(-1).to_numpy()
    none = pl.lit(None, pl.String())
    frame = ranges.with_columns(
        begin_ns=pl.Series(begin),
        end_ns=pl.Series(end),
        stream=pl.Series(tid),
        device=pl.lit(-1, pl.Int64()),
        lane=pl.Series(assign_lanes(tid, begin, end)),
        name=pl.col("name").fill_null("(unnamed range)"),
        cat=pl.lit("nvtx"),
        op=none,
        grid=none,
        block=none,
        correlation=pl.lit(None, pl.Int64()),
        flops=pl.lit(None, pl.Float64()),
    ).sort(["begin_ns", "end_ns"], maintain_order=True)
    return GpuDevice(
        name=f"NVTX ranges ({source})",
        source=source,
        slices=frame.select(_SLICE_COLUMNS),
        streams=tuple(sorted(set(frame["stream"].to_list()))),
        lanes=int(frame["lane"].to_numpy().max()) + 1,
        spans_of=NVTX_RANGE,
    )


def critical_path_track(events: KinetoEvents, source: str) -> GpuDevice | None:
    """Each step's critical path (``analyses.gpu_critical``) as one more track group: one
    slice per edge of the path that takes time, named by its class and event; None when no
    path takes time. Steps side by side share lane 0; the class is the slice's category."""
    from tileprof.analyses.gpu_critical import path_frame, step_paths
    from tileprof.inputs.gpu.kineto_frame import event_frame
    from tileprof.inputs.gpu.kineto_host import cpu_step_windows, host_frame

    windows = cpu_step_windows(events)
    found = step_paths(host_frame(events), event_frame(events), windows)
    # step_paths gives every window a path (a trace without steps is one window)
    frame = pl.concat([path_frame(s.graph, s.path) for s in found]).filter(pl.col("ns") > 0)
    if frame.height == 0:
        return None
    none = pl.lit(None, pl.String())
    slices = frame.select(
        device=pl.lit(-1, pl.Int64()),
        stream=pl.lit(0, pl.Int64()),
        lane=pl.lit(0, pl.Int64()),
        begin_ns="from_ns",
        end_ns="to_ns",
        name=pl.when(pl.col("name").is_null())
        .then(pl.col("class"))
        .otherwise(pl.format("{}: {}", pl.col("class"), pl.col("name"))),
        cat=pl.format("critical_{}", pl.col("class")),
        op=none,
        grid=none,
        block=none,
        correlation=pl.lit(None, pl.Int64()),
        flops=pl.lit(None, pl.Float64()),
    ).sort("begin_ns", "end_ns")
    return GpuDevice(
        name=f"{CRITICAL_TRACK}({source})",
        source=source,
        slices=slices,
        streams=(0,),
        lanes=1,
        spans_of=CRITICAL_SPAN,
    )


CRITICAL_TRACK = "Critical path "
"""The start of a critical-path track's name: ``align`` moves it with its trace."""


_SLICE_COLUMNS: tuple[str, ...] = (
    "device",
    "stream",
    "lane",
    "begin_ns",
    "end_ns",
    "name",
    "cat",
    "op",
    "grid",
    "block",
    "correlation",
    "flops",
)


def _devices(frame: pl.DataFrame, names: dict[int, str], source: str) -> list[GpuDevice]:
    """The per-device split of a slice frame (columns ``_SLICE_COLUMNS``), by name."""
    out = []
    for (dev,), part in frame.group_by(["device"], maintain_order=True):
        number = int(str(dev))
        label = names.get(number) or (f"GPU {number}" if number >= 0 else "GPU")
        out.append(
            GpuDevice(
                name=f"{label} (device {number}, {source})" if number >= 0 else label,
                source=source,
                slices=part.select(_SLICE_COLUMNS),
                streams=tuple(sorted(set(part["stream"].to_list()))),
                lanes=int(part["lane"].to_numpy().max()) + 1,
            )
        )
    return sorted(out, key=lambda d: d.name)


# ---------------------------------------------------------------- alignment


@dataclass(frozen=True)
class Alignment:
    """``mode`` is "start" (every target's first slice at 0) or "none" (own timestamps);
    ``offsets_us`` shifts named targets (process name or GPU trace file name) further."""

    mode: str = "start"
    offsets_us: tuple[tuple[str, float], ...] = ()


def parse_alignment(values: tuple[str, ...]) -> Alignment:
    """``--align start|none|TARGET=OFFSET_US`` (repeatable) as an ``Alignment``."""
    mode = "start"
    offsets: list[tuple[str, float]] = []
    for value in values:
        if value in ("start", "none"):
            mode = value
            continue
        name, sep, number = value.rpartition("=")
        try:
            shift = float(number)
        except ValueError:
            shift = float("nan")
        if not sep or not name or not np.isfinite(shift):
            raise OptionError(
                f"--align {value}: expected start, none or TARGET=OFFSET_US (a number of µs)"
            )
        offsets.append((name, shift))
    return Alignment(mode, tuple(offsets))


def align(timeline: Timeline, alignment: Alignment) -> Timeline:
    """Shift every target as ``alignment`` says; if that puts anything before 0, shift all
    targets together so the earliest is at 0 (Perfetto timestamps are unsigned)."""
    tile = timeline.tile
    names = {g.name: g.source for g in timeline.gpus}
    if tile is not None:
        names = {tile.name: "tile"} | names
    for target, _ in alignment.offsets_us:
        if target not in names and target not in names.values():
            known = ", ".join(sorted({*names, *names.values()}))
            raise OptionError(f"--align {target}=…: no target of that name (targets: {known})")

    def shift(name: str, source: str, slices: pl.DataFrame) -> int:
        first = _first(slices)
        base = first if alignment.mode == "start" and first is not None else 0
        total = sum(us for t, us in alignment.offsets_us if t in (name, source))
        return round(total * 1000) - base

    shifts = {g.name: shift(g.name, g.source, g.slices) for g in timeline.gpus}
    for g in timeline.gpus:  # a critical-path track moves with its trace's first device
        if g.spans_of == CRITICAL_SPAN:
            mates = [h for h in timeline.gpus if h.source == g.source and h is not g]
            first = min(mates, key=lambda h: _first(h.slices) or 0, default=g)
            shifts[g.name] = shifts[first.name]
    starts = [(_first(g.slices) or 0) + shifts[g.name] for g in timeline.gpus]
    if tile is not None:
        shifts[tile.name] = shift(tile.name, "tile", tile.slices)
        starts.append((_first(tile.slices) or 0) + shifts[tile.name])
        starts += [int(c.times_ns[0]) + shifts[tile.name] for c in tile.counters]
    lowest = min(starts, default=0)
    floor = -lowest if lowest < 0 else 0
    notes = list(timeline.notes)
    if floor:
        notes.append(f"every target moved {floor / 1000:g} µs later so that none starts before 0")
    new_tile = None
    if tile is not None:
        tile_shift = shifts[tile.name] + floor
        new_tile = replace(
            tile,
            slices=_shift(tile.slices, tile_shift),
            counters=tuple(
                Counter(c.name, c.unit, c.times_ns + tile_shift, c.values) for c in tile.counters
            ),
        )
    gpus = tuple(replace(g, slices=_shift(g.slices, shifts[g.name] + floor)) for g in timeline.gpus)
    return Timeline(new_tile, gpus, tuple(notes), timeline.jobs)


def _first(slices: pl.DataFrame) -> int | None:
    return int(slices["begin_ns"].min()) if slices.height else None  # type: ignore[arg-type]


def _shift(slices: pl.DataFrame, ns: int) -> pl.DataFrame:
    if ns == 0:
        return slices
    return slices.with_columns(pl.col("begin_ns") + ns, pl.col("end_ns") + ns)


# ---------------------------------------------------------------- the whole timeline


def build_timeline(
    profile: Profile | None,
    filters: Filters,
    gpu_traces: Sequence[Path | FileRead],
    alignment: Alignment,
    *,
    tile_range: tuple[int, int] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    critical_path: bool = False,
) -> Timeline:
    """The aligned timeline of the filtered tile samples (none without a ``profile``) and
    every GPU trace's devices (a path, or a file already read by ``trace_inputs``), with
    ``critical_path`` a critical-path track for each PyTorch profiler trace."""
    notes: list[str] = [] if profile is None else list(profile.notes)
    tile = None
    if profile is not None:
        tile, matched = tile_timeline(
            profile, profile.filtered(filters), tile_range=tile_range, max_samples=max_samples
        )
        if matched > tile.slices.height:
            notes.append(
                f"{matched:,} samples match, more than --max-samples {max_samples:,}: the trace "
                f"holds the first {max_samples:,} in time order (offsets up to cycle "
                f"{tile.last_offset:,}); select a window with --window START:END (cycles), "
                "or raise --max-samples"
            )
    gpus = [device for path in gpu_traces for device in _gpu_devices(path, notes, critical_path)]
    from tileprof.inputs.threads import jobs

    return align(Timeline(tile, tuple(gpus), tuple(notes), jobs()), alignment)


TRACE_KINDS = "a PyTorch profiler (Kineto) trace, an nsys SQLite export or a rocprofv3 kernel trace"
"""What ``tileprof trace`` draws besides the tile dump."""
TRACE_DRAWS = (
    "`trace` draws tile dumps, PyTorch profiler (Kineto) traces, nsys SQLite exports "
    "and rocprofv3 kernel traces"
)
"""Every kind of file ``tileprof trace`` draws, as a file of another kind is told."""
_TRACE_READS = (
    "a tile dump, a PyTorch profiler (Kineto) trace, an nsys SQLite export or a rocprofv3 "
    "kernel trace (what `trace` draws)"
)


def trace_inputs(
    paths: Sequence[Path], example: bool, read: DumpReading
) -> tuple[Profile | None, list[FileRead]]:
    """The tile profile (the one tile dump among ``paths``, or the example) and the other
    files, each read once, in command-line order; a file of a kind with no timeline is an
    InputError that says which files ``trace`` draws."""
    from tileprof.inputs.sources import (
        SUMMARY_DOCUMENT,
        TILE_DUMP,
        FileRead,
        read_input,
        streamed_trace,
    )
    from tileprof.model.reading import load_profile

    dumps: list[Path] = []
    others: list[FileRead] = []
    for path in paths:
        try:
            found = read_input(path, reads=_TRACE_READS, digest=False, stream=streamed_trace)
        except InputError:
            if read.format_in is None:
                raise
            found = FileRead(path, TILE_DUMP, None)  # --format-in: anything else is a dump
        if found.kind in (TILE_DUMP, SUMMARY_DOCUMENT) or (
            found.data is None and not found.streamed
        ):
            dumps.append(path)
        else:
            _check_drawable(found)
            others.append(found)
    if len(dumps) > 1:
        read.load(dumps[1])  # a file that only looked like a dump: its own error first
        raise InputError(
            dumps[1], None, f"a second tile dump; one trace draws one (the first: {dumps[0]})"
        )
    if not paths and not example:
        raise OptionError(
            "give a tile DUMP, GPU traces or both (or --example for the bundled reference profile)"
        )
    if not dumps and not example:
        return None, others
    return load_profile(dumps[0] if dumps else None, example, read), others


def _check_drawable(found: FileRead) -> None:
    """An InputError unless ``found`` is a kind ``trace`` draws a timeline of."""
    from tileprof.inputs.gpu import nsys_sqlite, rocprof
    from tileprof.inputs.sources import TRACE

    if found.kind not in (TRACE, nsys_sqlite.KIND, rocprof.KIND):
        raise InputError(
            found.path, None, f"no timeline in a file of this kind ({found.kind}); {TRACE_DRAWS}"
        )


def _gpu_devices(
    item: Path | FileRead, notes: list[str], critical_path: bool = False
) -> list[GpuDevice]:
    """The devices of one GPU trace, read once; anything else is an InputError. With
    ``critical_path``, a PyTorch profiler trace gets its critical-path track too."""
    from tileprof.inputs.sources import TILE_DUMP, FileRead, read_input, read_kineto_events

    found = item if isinstance(item, FileRead) else read_input(item, digest=False)
    path = found.path
    if found.data is not None and found.kind != TILE_DUMP:  # a dump: read_kineto_events' hint
        _check_drawable(found)
    timeline = _event_frame_devices(path, found.kind, found.data)
    if timeline is not None:
        return timeline
    events = read_kineto_events(path, found=found, expected=TRACE_KINDS)
    devices = gpu_devices(path, events)
    track = critical_path_track(events, path.name) if critical_path else None
    if not devices:
        drawn = "only its critical path drawn" if track is not None else "nothing drawn"
        notes.append(f"{path.name}: CPU-only trace (no GPU kernel events): {drawn}")
    return [*devices, *([track] if track is not None else [])]


def _event_frame_devices(path: Path, kind: str, data: bytes | None) -> list[GpuDevice] | None:
    """The devices (and NVTX track) of an nsys SQLite export or a rocprofv3 trace, or None
    when the file is neither."""
    from tileprof.inputs.gpu import nsys_sqlite, rocprof

    if data is None:
        return None
    if kind == nsys_sqlite.KIND:
        export = nsys_sqlite.read_export(path, data)
        devices = event_frame_devices(export.events, export.devices, path.name)
        ranges = nvtx_track(export.nvtx, path.name)
        return devices if ranges is None else [*devices, ranges]
    if kind == rocprof.KIND:
        events = rocprof.read_dispatches(path, data)
        agents = events["device"].drop_nulls().unique().to_list()
        return event_frame_devices(events, {a: rocprof.agent_target(a) for a in agents}, path.name)
    return None
