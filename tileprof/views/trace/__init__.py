"""``tileprof trace``: the timeline of every target, as Perfetto protobuf or Chrome JSON.

``build_timeline`` gathers the tile device and the GPU traces (``timeline``); ``write_trace``
writes it atomically in the format the output's extension names (``perfetto``, ``chrome``).
"""

from __future__ import annotations

import gzip
from collections.abc import Sequence
from pathlib import Path

from tileprof.analyses.filters import Filters
from tileprof.core.errors import InputError, OptionError
from tileprof.core.outputs import atomic_writer
from tileprof.model.profile import Profile
from tileprof.views.trace.tracks import (
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
    gpus = [device for path in gpu_traces for device in _gpu_devices(path, notes)]
    return align(Timeline(tile, tuple(gpus), tuple(notes)), alignment)


def _gpu_devices(path: Path, notes: list[str]) -> list[GpuDevice]:
    """The devices of one GPU trace; anything but a Kineto trace is an InputError."""
    from tileprof.inputs._common import read_bytes
    from tileprof.inputs.gpu.kineto import KIND, gpu_events
    from tileprof.inputs.sources import detect_kind

    data = read_bytes(path)
    if data.lstrip()[:1] != b"{":
        gpu_events(path, data)  # not a JSON object: the decoder names the place
    kind = detect_kind(path, data)
    if kind != KIND:
        hint = " (give the one tile DUMP first, then GPU traces)" if "tile" in kind else ""
        raise InputError(path, None, f"{kind}, not a PyTorch profiler (Kineto) trace{hint}")
    devices = gpu_devices(path, data)
    if not devices:
        notes.append(f"{path.name}: CPU-only trace (no GPU kernel events): nothing drawn")
    return devices


def write_trace(path: Path, fmt: str, timeline: Timeline) -> None:
    """Write ``timeline`` to ``path`` atomically as ``fmt`` (see ``trace_format``)."""
    if fmt == "pftrace":
        from tileprof.views.trace.perfetto import write_pftrace

        with atomic_writer(path, binary=True) as handle:
            write_pftrace(handle, timeline)
        return
    from tileprof.views.trace.chrome import write_chrome

    with atomic_writer(path, binary=True) as handle:
        if fmt == "json.gz":
            with gzip.GzipFile(fileobj=handle, mode="wb", compresslevel=6, mtime=0) as zipped:
                write_chrome(zipped, timeline)
        else:
            write_chrome(handle, timeline)
