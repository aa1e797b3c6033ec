"""The names ``core.gpu_events`` took over (the one GPU event frame and its timeline), kept
so that imports of this module keep working; new code imports ``core.gpu_events``."""

from __future__ import annotations

from tileprof.core.gpu_events import (
    GPU_EVENT_KINDS as EVENT_KINDS,
)
from tileprof.core.gpu_events import (
    GPU_EVENT_SCHEMA as EVENT_SCHEMA,
)
from tileprof.core.gpu_events import (
    STEP_SCHEMA,
    STEP_SOURCES,
    GpuTimeline,
    RankInfo,
    empty_steps,
)
from tileprof.core.gpu_events import (
    empty_gpu_events as empty_events,
)

__all__ = [
    "EVENT_KINDS",
    "EVENT_SCHEMA",
    "STEP_SCHEMA",
    "STEP_SOURCES",
    "GpuTimeline",
    "RankInfo",
    "empty_events",
    "empty_steps",
]
