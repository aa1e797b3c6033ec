"""The breakdown's part of the HTML pages: ``breakdown --format html`` and the report's
"GPU time breakdown" section (definitions: docs/metrics.md, "Time breakdown")."""

from __future__ import annotations

from tileprof.analyses.collectives import Job
from tileprof.analyses.gpu_breakdown import IDLE_COLUMNS, TIME_COLUMNS, Breakdown
from tileprof.views.html.data import table_from_frame
from tileprof.views.html.view import BreakdownSection

KEYS = ("trace", "rank", "device", "device_name", "step")
DOCS = {
    "window_from": "the rule of the window: gpu_annotation, cpu_step, launch_attribution, trace",
    "computation_us": "union of compute kernels and memsets",
    "total_comm_us": "union of communication kernels",
    "exposed_comm_us": "communication not overlapped by computation",
    "total_memcpy_us": "union of memcpys",
    "exposed_memcpy_us": "memcpy overlapped by neither computation nor communication",
    "busy_us": "union of all GPU events",
    "idle_us": "total_us − busy_us",
    "total_us": "first GPU event to last in the window",
    "idle_host_wait_us": "gaps whose next event was launched after the gap began",
    "idle_kernel_wait_us": "other gaps shorter than the kernel-wait threshold",
    "idle_other_us": "the rest of idle_us",
}


def breakdown_section(
    result: Breakdown, job: Job, id: str = "breakdown", notes: tuple[str, ...] = ()
) -> BreakdownSection:
    """The view model of one breakdown and its jobs, with ``notes`` under its lead."""
    times = [*KEYS, "window_from", "window_us", "events", *TIME_COLUMNS, *IDLE_COLUMNS]
    frames = [
        ("Time per device and step (µs)", "time", result.rows, times),
        ("Kernel launches", "launch", result.launches, result.launches.columns),
        ("Idle per stream (µs)", "streams", result.streams, result.streams.columns),
    ]
    if job.ranks.height:
        frames.append(("Collectives across ranks", "collectives", job.collectives,
                       job.collectives.columns))  # fmt: skip
        frames.append(("Ranks", "ranks", job.ranks, job.ranks.columns))
    tables = tuple(
        (title, table_from_frame(f"{id}-{key}", frame, columns, docs=DOCS, top=40))
        for title, key, frame, columns in frames
    )
    return BreakdownSection(id, result.kernel_wait_us, tables, notes=notes)
