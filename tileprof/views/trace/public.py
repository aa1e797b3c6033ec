"""``tileprof.trace``: the Python entry point of ``tileprof trace``, one call from a profile
(or a dump's path) to a written trace file.

It sits with the trace writers in the views layer, since writing the file is a view; the
package resolves ``tileprof.trace`` to it lazily, as it resolves every public name.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tileprof.analyses.filters import Filters
from tileprof.model.profile import Profile, load
from tileprof.model.trace import DEFAULT_MAX_SAMPLES, build_timeline, parse_alignment
from tileprof.views.trace import trace_format, write_trace


def trace(
    dump: str | os.PathLike[str] | Profile | None,
    output: str | os.PathLike[str],
    *,
    gpu_traces: Sequence[str | os.PathLike[str]] = (),
    filters: Filters | None = None,
    align: Sequence[str] = (),
    tile_range: tuple[int, int] | None = None,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    critical_path: bool = False,
    **filter_options: Any,
) -> Path:
    """Write the timeline of ``dump`` (None: GPU traces only) and ``gpu_traces`` (PyTorch
    profiler traces, nsys SQLite exports, rocprofv3 kernel traces) to ``output``, in the
    format its extension names (``.pftrace``, ``.json``, ``.json.gz``), and return the path
    written. What the command prints as notes (samples cut at
    ``max_samples``, a CPU-only trace) comes as a ``UserWarning`` each.

    Filters as a ``Filters`` or as its keyword fields (``epoch=1``); ``align`` as the
    command's ``--align`` values (default: every target starts at 0); ``tile_range`` and
    ``max_samples`` as ``--tile-range`` and ``--max-samples``; ``critical_path`` as
    ``--critical-path``. An existing ``output`` is
    replaced (atomically), as ``Profile.save`` replaces its file.
    """
    if filter_options:
        if filters is not None:
            raise TypeError("pass filters either as Filters or as keywords, not both")
        filters = Filters(**filter_options)
    path = Path(output)
    fmt = trace_format(path)  # first: a wrong extension fails before any reading
    profile = dump if isinstance(dump, Profile) or dump is None else load(Path(dump))
    timeline = build_timeline(
        profile,
        filters or Filters(),
        [Path(p) for p in gpu_traces],
        parse_alignment(tuple(align)),
        tile_range=tile_range,
        max_samples=max_samples,
        critical_path=critical_path,
    )
    write_trace(path, fmt, timeline)
    for note in timeline.notes:
        warnings.warn(note, stacklevel=2)
    return path
