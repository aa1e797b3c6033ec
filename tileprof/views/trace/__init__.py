"""``tileprof trace``: the timeline of every target, as Perfetto protobuf or Chrome JSON.

``tileprof.model.trace.build_timeline`` gathers the tile device and the GPU traces;
``write_trace`` writes that timeline atomically in the format the output's extension names
(``perfetto``, ``chrome``).
"""

from __future__ import annotations

from pathlib import Path

from tileprof.core.errors import OptionError
from tileprof.model.trace import Timeline

TRACE_FORMATS: dict[str, str] = {".pftrace": "pftrace", ".json": "json", ".json.gz": "json.gz"}


def trace_format(path: Path) -> str:
    """The format an output name asks for; anything else is an error."""
    name = path.name.lower()
    for suffix in (".json.gz", ".pftrace", ".json"):
        if name.endswith(suffix):
            return TRACE_FORMATS[suffix]
    raise OptionError(f"{path}: unknown trace extension (use {', '.join(TRACE_FORMATS)})")


def write_trace(path: Path, fmt: str, timeline: Timeline) -> None:
    """Write ``timeline`` to ``path`` atomically as ``fmt`` (see ``trace_format``), through
    its renderer (``tileprof.views.renderers.TRACE_RENDERERS``)."""
    from tileprof.views.renderers import TRACE_RENDERERS, write_rendered

    write_rendered(TRACE_RENDERERS[fmt], timeline, path)
