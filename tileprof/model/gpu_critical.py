"""The critical path of each step of a PyTorch profiler (Kineto) trace, with what-if edits
and the single edits ranked by their gain (``tileprof.analyses.gpu_critical``; docs/metrics.md,
"GPU critical path")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tileprof.analyses.critical import Edit
from tileprof.analyses.gpu_critical import (
    StepPath,
    edited_weights,
    longest_path,
    path_classes,
    path_events,
    step_paths,
)

GPU_CANDIDATES: tuple[str, ...] = ("no-launch", "no-host-gaps", "scale:KERNEL=0.5")
"""The single edits ranked by gain for a GPU step: launch overhead removed, host gaps
removed, and each of the three kernels longest on the path at half its time."""


def is_trace(path: Path) -> bool:
    """Whether ``path`` is a PyTorch profiler trace; a file that reads as no known input is
    left to the tile-dump reading, which reports it."""
    from tileprof.core.errors import InputError
    from tileprof.inputs import read_bytes
    from tileprof.inputs.sources import TRACE, detect_kind

    try:
        return detect_kind(path, read_bytes(path)) == TRACE
    except InputError:
        return False


def trace_steps(path: Path) -> list[StepPath]:
    """Each step's graph and path of the Kineto trace at ``path``."""
    from tileprof.inputs import read_bytes
    from tileprof.inputs.gpu.kineto import read_events
    from tileprof.inputs.gpu.kineto_frame import event_frame
    from tileprof.inputs.gpu.kineto_host import host_frame

    found = read_events(path, read_bytes(path))
    windows = [
        (step, round(lo * 1000), round(hi * 1000))
        for _, step, lo, hi, source in found.steps
        if source == "cpu_step"
    ]
    return step_paths(host_frame(found), event_frame(found), windows)


def _retimed(found: StepPath, edits: Sequence[Edit]) -> dict[str, Any]:
    weights, notes = edited_weights(found.graph, edits)
    edited = longest_path(found.graph, weights)
    measured = found.path.length_ns
    return {
        "edits": [e.describe() for e in edits],
        "whatIfNs": edited.length_ns,
        "gainNs": measured - edited.length_ns,
        "gainShare": (measured - edited.length_ns) / measured if measured else None,
        "classesNs": path_classes(found.graph, edited),
        "notes": notes,
    }


def _candidates(found: StepPath, kernels: list[str]) -> list[dict[str, Any]]:
    edits = [Edit("no-launch"), Edit("no-host-gaps")]
    edits += [Edit("scale", match=name, factor=0.5) for name in kernels[:3]]
    ranked = []
    for edit in edits:
        row = _retimed(found, [edit])
        ranked.append({"edit": edit.describe(), **{k: row[k] for k in ("whatIfNs", "gainNs")}})
    return sorted(ranked, key=lambda r: (-r["gainNs"], r["edit"]))


def trace_critical(path: Path, edits: Sequence[Edit] = ()) -> dict[str, Any]:
    """The JSON document of ``critical`` on a trace: per step its window, path length, the
    path's ns per class, the ops and kernels on it, the what-if re-timing and the ranked
    candidates."""
    steps = []
    for found in trace_steps(path):
        events = path_events(found.graph, found.path)
        kernels = (
            events.filter(events["side"] == "gpu").get_column("name").unique(maintain_order=True)
        )
        steps.append(
            {
                "step": found.step,
                "windowNs": found.window[1] - found.window[0],
                "pathNs": found.path.length_ns,
                "classesNs": path_classes(found.graph, found.path),
                "droppedEdges": found.graph.dropped,
                "onPath": events.head(20).to_dicts(),
                "whatIf": _retimed(found, edits) if edits else None,
                "candidates": _candidates(found, kernels.to_list()),
            }
        )
    return {"trace": path.name, "edits": [e.describe() for e in edits], "steps": steps}
