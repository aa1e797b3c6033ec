"""The cores this process may use: the default thread count of the compiled decoder
(``inputs/threads``) and of the trace encoder (``views/trace/perfetto``), which sit in layers
that may not import each other."""

from __future__ import annotations

import os


def usable_cores() -> int:
    """The cores this process may run on (its affinity mask), at least 1."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # pragma: no cover - platforms without affinity
        return max(1, os.cpu_count() or 1)
