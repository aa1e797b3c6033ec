"""``tileprof trace``: the timeline of every target, as Perfetto protobuf or Chrome JSON.

``build_timeline`` gathers the tile device and the GPU traces (``timeline``); ``write_trace``
writes it atomically in the format the output's extension names (``perfetto``, ``chrome``).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

from tileprof.errors import InputError, OptionError
from tileprof.filters import Filters
from tileprof.model import Profile
from tileprof.outputs import atomic_writer
from tileprof.reports.trace.tracks import (
    DEFAULT_MAX_SAMPLES,
    Alignment,
    GpuDevice,
    Timeline,
    align,
    gpu_devices,
    tile_timeline,
)

TRACE_FORMATS: dict[str, str] = {".pftrace": "pftrace", ".json": "json", ".json.gz": "json.gz"}


def trace_format(path: Path) -> str:
    """The format an output name asks for; anything else is an error."""
    name = path.name.lower()
    for suffix in (".json.gz", ".pftrace", ".json"):
        if name.endswith(suffix):
            return TRACE_FORMATS[suffix]
    raise OptionError(f"{path}: unknown trace extension (use {', '.join(TRACE_FORMATS)})")


def build_timeline(
    profile: Profile,
    filters: Filters,
    gpu_traces: Sequence[Path],
    alignment: Alignment,
    *,
    tile_range: tuple[int, int] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
) -> Timeline:
    """The aligned timeline of the filtered tile samples and every GPU trace's devices."""
    tile, matched = tile_timeline(
        profile, profile.filtered(filters), tile_range=tile_range, max_samples=max_samples
    )
    notes: list[str] = []
    if matched > tile.slices.height:
        notes.append(
            f"{matched:,} samples match, more than --max-samples {max_samples:,}: the trace "
            f"holds the first {max_samples:,} in time order (offsets up to cycle "
            f"{tile.last_offset:,}); select a window with --window START:END (cycles), "
            "or raise --max-samples"
        )
    gpus = [device for path in gpu_traces for device in _gpu_devices(path)]
    return align(Timeline(tile, tuple(gpus), tuple(notes)), alignment)


def _gpu_devices(path: Path) -> list[GpuDevice]:
    from tileprof.parsers._common import read_bytes
    from tileprof.parsers.kineto import KIND
    from tileprof.sources import detect_kind

    data = read_bytes(path)
    kind = detect_kind(path, data)
    if kind != KIND:
        raise InputError(path, None, f"not a PyTorch profiler (Kineto) trace but {kind}")
    return gpu_devices(path, data)


def write_trace(path: Path, fmt: str, timeline: Timeline) -> None:
    """Write ``timeline`` to ``path`` atomically as ``fmt`` (see ``trace_format``)."""
    if fmt == "pftrace":
        from tileprof.reports.trace.perfetto import write_pftrace

        with atomic_writer(path, binary=True) as handle:
            write_pftrace(handle, timeline)
        return
    from tileprof.reports.trace.chrome import write_chrome

    with atomic_writer(path, binary=True) as handle:
        if fmt == "json.gz":
            with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0) as zipped:
                write_chrome(zipped, timeline)
        else:
            write_chrome(handle, timeline)
