"""The critical path of each step of a PyTorch profiler (Kineto) trace, with what-if edits
and the single edits ranked by their gain (``tileprof.analyses.gpu_critical``; docs/metrics.md,
"GPU critical path")."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from tileprof.analyses.critical import Edit
from tileprof.analyses.gpu_critical import (
    StepPath,
    edited_weights,
    longest_path,
    path_classes,
    path_events,
    step_paths,
)
from tileprof.analyses.gpu_critical_ranks import job_graph, on_time

if TYPE_CHECKING:
    from tileprof.core.kineto import KinetoEvents
    from tileprof.inputs.sources import FileRead

GPU_CANDIDATES: tuple[str, ...] = ("no-launch", "no-host-gaps", "scale:KERNEL=0.5")
"""The single edits ranked by gain for a GPU step: launch overhead removed, host gaps
removed, and each of the three kernels longest on the path at half its time."""


def read_trace(path: Path) -> FileRead | None:
    """``path`` read once when it is a PyTorch profiler trace or an nsys SQLite export; None
    for a tile dump (recognised from its head, left to the tile loader) or a file that reads
    as no known input (the tile-dump reading reports it). A trace in a regular file is decoded
    through the compiled decoder's window (``streamed_trace``), so the traces of a command are
    not all in memory at once; streaming raises nothing (a file it declines is read whole), so
    which of two bad files is reported first is as before."""
    from tileprof.core.errors import InputError
    from tileprof.inputs.gpu.nsys_sqlite import KIND as NSYS
    from tileprof.inputs.sources import TRACE, read_input, streamed_trace

    try:
        found = read_input(path, digest=False, stream=streamed_trace)
    except InputError:
        return None
    readable = found.data is not None or found.streamed
    return found if found.kind in (TRACE, NSYS) and readable else None


def export_steps(path: Path, data: bytes) -> list[tuple[int, list[StepPath]]]:
    """Per process of the nsys SQLite export at ``path`` (correlation ids are per process):
    the whole capture as one step, from its runtime calls and GPU events."""
    from tileprof.inputs.gpu.nsys_sqlite import host_calls, read_export

    calls = host_calls(path, data)
    events = read_export(path, data).events
    found = []
    for pid in sorted(events.get_column("pid").drop_nulls().unique().to_list()):
        mine = calls.filter(pl.col("pid") == pid).drop("pid")
        found.append((pid, step_paths(mine, events.filter(pl.col("pid") == pid), [])))
    return found


def trace_steps(found: KinetoEvents) -> tuple[list[StepPath], int | None]:
    """Each step's graph and path of a decoded Kineto trace, and its rank (None without
    ``distributedInfo``)."""
    from tileprof.inputs.gpu.kineto_frame import event_frame
    from tileprof.inputs.gpu.kineto_host import cpu_step_windows, host_frame

    windows = cpu_step_windows(found)
    rank = None if found.rank is None else found.rank[0]
    return step_paths(host_frame(found), event_frame(found), windows), rank


def kernel_rooflines(runs: pl.DataFrame) -> dict[str, float]:
    """Each kernel's roofline fraction from a trace's run table (``attach_kernel_metrics``'s
    ``roofline_us`` and ``total_us``): a kernel row's own where it has one, else its launching
    op's Σ roofline_us × calls / Σ total_us over the op's rows, when every row of that op has a
    roofline (the op's GPU time is its kernels' time, so its roofline time is spread over them
    in proportion). A kernel launched by several ops, or by an op without a roofline, has none."""
    if runs.is_empty() or "roofline_us" not in runs.columns:
        return {}
    is_op = pl.col("source").str.ends_with(": op rows")
    ops = (
        runs.filter(is_op)
        .group_by("kernel")
        .agg(
            known=pl.col("roofline_us").is_not_null().all(),
            roof=(pl.col("roofline_us") * pl.col("calls").cast(pl.Float64).fill_null(1.0)).sum(),
            total=pl.col("total_us").sum(),
        )
        .filter(pl.col("known") & (pl.col("total") > 0))
        .select(launch_op="kernel", op_fraction=pl.col("roof") / pl.col("total"))
    )
    kernels = runs.filter(~is_op).select("kernel", "launch_op", "roofline_fraction")
    joined = kernels.join(ops, on="launch_op", how="left").select(
        "kernel", fraction=pl.coalesce("roofline_fraction", "op_fraction")
    )
    known = joined.filter(pl.col("fraction").is_not_null()).unique("kernel", keep="first")
    # a kernel name launched by two ops has two rows: its fraction is not its own
    several = joined.group_by("kernel").len().filter(pl.col("len") > 1).get_column("kernel")
    known = known.filter(~pl.col("kernel").is_in(several.implode()))
    return dict(zip(known["kernel"].to_list(), known["fraction"].to_list(), strict=True))


def trace_rooflines(found: FileRead) -> dict[str, float]:
    """``kernel_rooflines`` of one trace's run table (its kernel and op rows, from the trace's
    one decoding: only a ``roofline:GLOB`` edit asks for it)."""
    from tileprof.analyses.kernel_metrics import attach_kernel_metrics
    from tileprof.model.gpu_runs import trace_runs

    runs = trace_runs(found.kineto_events()).frame
    return kernel_rooflines(attach_kernel_metrics(runs))


def _retimed(
    found: StepPath, edits: Sequence[Edit], roofline: dict[str, float] | None = None
) -> dict[str, Any]:
    weights, notes = edited_weights(found.graph, edits, roofline)
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


def _step_document(
    found: StepPath, edits: Sequence[Edit], roofline: dict[str, float] | None = None
) -> dict[str, Any]:
    events = path_events(found.graph, found.path)
    kernels = events.filter(events["side"] == "gpu").get_column("name").unique(maintain_order=True)
    return {
        "step": found.step,
        "windowNs": found.window[1] - found.window[0],
        "pathNs": found.path.length_ns,
        "classesNs": path_classes(found.graph, found.path),
        "droppedEdges": found.graph.dropped,
        "onPath": events.head(20).to_dicts(),
        "whatIf": (
            _retimed(found, [e for e in edits if e.kind != "on-time"], roofline) if edits else None
        ),
        "candidates": _candidates(found, kernels.to_list()),
    }


def trace_critical(
    reads: Sequence[FileRead],
    edits: Sequence[Edit] = (),
    withheld: Sequence[Sequence[str]] = (),
) -> dict[str, Any]:
    """The JSON document of ``critical`` on traces (each read once, ``read_trace``): per
    trace and step its window, path length, the path's ns per class, the ops and kernels on
    it, the what-if re-timing and the ranked candidates; with two or more ranks of one job,
    per step they share the path through their joined graph (``job``). A trace is named by
    its file name, or by its path as given when two share a file name.

    ``withheld``, aligned with ``reads`` (or empty: none): why each input's failed capture
    checks undermine its candidates (``integrity.undermined``), kept as the trace's
    ``candidatesWithheld``: the candidates stay in the document, and what shows them to a
    reader says why not instead."""
    traces: list[dict[str, Any]] = []
    why = list(withheld) or [[] for _ in reads]
    ranked: list[tuple[int, list[StepPath]]] = []
    from tileprof.inputs.gpu.nsys_sqlite import KIND as NSYS
    from tileprof.model.naming import display_names

    names = display_names([found.path for found in reads])  # rank0/t.json, rank1/t.json
    for found, reasons, shown in zip(reads, why, names, strict=True):
        path, data, kept = found.path, found.data or b"", {"candidatesWithheld": list(reasons)}
        if found.kind == NSYS:
            for pid, steps in export_steps(path, data):
                documents = [_step_document(s, edits) for s in steps]
                name = f"{shown} pid {pid}"
                traces.append({"trace": name, "rank": None, "steps": documents, **kept})
            continue
        steps, rank = trace_steps(found.kineto_events())
        roofline = trace_rooflines(found) if any(e.kind == "roofline" for e in edits) else None
        documents = [_step_document(s, edits, roofline) for s in steps]
        traces.append({"trace": shown, "rank": rank, "steps": documents, **kept})
        if rank is not None:
            ranked.append((rank, steps))
    job = _job(ranked, edits) if len(ranked) > 1 else None
    return {"edits": [e.describe() for e in edits], "traces": traces, "job": job}


def _job(ranked: list[tuple[int, list[StepPath]]], edits: Sequence[Edit]) -> list[dict[str, Any]]:
    """Per step number every rank holds: the joined graph's path, the ranks it crosses, and
    the re-timing of ``edits`` (an on-time edit drops its rank's arrivals)."""
    common = set.intersection(*({s.step for s in steps} for _, steps in ranked))
    rows = []
    for number in sorted(n for n in common if n is not None):
        graphs = [next(s.graph for s in steps if s.step == number) for _, steps in ranked]
        job = job_graph(graphs, [rank for rank, _ in ranked])
        measured = longest_path(job.graph)
        crossed = np.unique(job.rank_of_node[job.graph.src[measured.edges]]).tolist()
        row: dict[str, Any] = {
            "step": number,
            "pathNs": measured.length_ns,
            "classesNs": path_classes(job.graph, measured),
            "ranksOnPath": crossed,
            "collectives": job.collectives,
            "droppedEdges": job.graph.dropped,
            "whatIf": None,
        }
        if edits:
            weights, notes = edited_weights(job.graph, [e for e in edits if e.kind != "on-time"])
            ends = None
            for edit in (e for e in edits if e.kind == "on-time"):
                weights, ends = on_time(job, weights, int(edit.match or 0))
            edited = longest_path(job.graph, weights, ends)
            row["whatIf"] = {
                "whatIfNs": edited.length_ns,
                "gainNs": measured.length_ns - edited.length_ns,
                "classesNs": path_classes(job.graph, edited),
                "notes": notes,
            }
        rows.append(row)
    return rows
