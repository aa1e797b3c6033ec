"""The frames the findings' rules read, from the inputs of ``findings`` and ``report``.

A tile dump gives its superstep and epoch rows (``Profile.supersteps`` over the filters'
epoch) and its group rows (``Profile.summary``); a PyTorch trace gives its op rows
(``tileprof.model.ops``, read with the trace by ``gather_inputs(..., ops=True)``). The GPU
time breakdown and the roofline columns come from their own analyses when those exist; until
then the rules that need them abstain and say so (docs/metrics.md, "Findings").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import polars as pl

from tileprof.analyses.collectives import Job
from tileprof.analyses.filters import Filters
from tileprof.analyses.findings import (
    RidgePoint,
    breakdown_frame,
    combined,
    gpu_candidate_frame,
    group_frame,
    kernel_frame,
    ncu_frame,
    op_frame,
    rank_frame,
    superstep_frames,
    tile_candidate_frame,
)
from tileprof.core.gpu_events import GpuTimeline
from tileprof.model.profile import Profile


def profile_frames(profile: Profile, filters: Filters | None, name: str) -> dict[str, pl.DataFrame]:
    """One tile dump's ``supersteps``, ``epochs`` and ``groups`` frames (no superstep frames
    when the filters' epoch has no samples: the rules over them abstain)."""
    filters = filters or Filters()
    frames = {"groups": group_frame(profile.summary(filters, samples=0).groups, name)}
    epoch = filters.epoch
    if epoch is None or profile.samples.filter(pl.col("epoch") == epoch).height:
        result = profile.supersteps(epoch=epoch)
        frames |= superstep_frames(result.supersteps, result.epochs, result.tile_count, name)
        frames["candidates"] = _tile_candidates(profile, epoch, name)
    return frames


def _tile_candidates(profile: Profile, epoch: int | None, name: str) -> pl.DataFrame:
    """The single edits ``critical`` ranks for each epoch of the dump, as the findings read
    them (``tile_candidate_frame``)."""
    from tileprof.model.critical import tile_critical

    found = tile_critical(profile, epoch=epoch)
    return tile_candidate_frame(found.candidates, found.epochs, profile.clock_hz, name)


def finding_frames(
    tiles: Sequence[tuple[Profile, Filters | None, str]],
    ops: Sequence[pl.DataFrame] = (),
    *,
    breakdown: pl.DataFrame | None = None,
    launches: pl.DataFrame | None = None,
    kernels: Sequence[tuple[pl.DataFrame, str]] = (),
    ncu: Sequence[tuple[pl.DataFrame, str]] = (),
    job: Job | None = None,
    ridge: RidgePoint | None = None,
    critical: Sequence[Mapping[str, Any]] = (),
) -> dict[str, pl.DataFrame]:
    """The frames of the tile dumps (profile, filters, name) and of PyTorch traces' op rows,
    stacked source by source; ``breakdown`` and ``launches`` are the GPU time breakdown's
    rows and launch figures of the timelines, ``kernels`` and ``ncu`` the run rows (and input
    name) of GPU kernel timelines and Nsight Compute CSVs, ``job`` the ranks' collectives,
    ``ridge`` the spec registry's ridge point lookup (each rule that needs one abstains
    without it), ``critical`` the traces' critical paths per step (their candidate edits)."""
    parts = [profile_frames(profile, filters, name) for profile, filters, name in tiles]
    parts.extend({"ops": op_frame(frame, ridge)} for frame in ops)
    if breakdown is not None:
        parts.append({"breakdown": breakdown_frame(breakdown, launches)})
    parts.extend({"kernels": kernel_frame(frame, name)} for frame, name in kernels)
    parts.extend({"ncu": ncu_frame(frame, name)} for frame, name in ncu)
    if job is not None and job.ranks.height:
        parts.append({"ranks": rank_frame(job.collectives, job.ranks)})
    parts.extend({"candidates": gpu_candidate_frame(document)} for document in critical)
    return combined(parts)


def timeline_frames(
    breakdown_of: Sequence[GpuTimeline], ranks_of: Sequence[GpuTimeline]
) -> dict[str, pl.DataFrame]:
    """The ``breakdown`` frame of the GPU time breakdown of ``breakdown_of``, and the
    ``ranks`` frame of the collectives of ``ranks_of`` (none where a list is empty)."""
    from tileprof.analyses.collectives import jobs
    from tileprof.analyses.gpu_breakdown import breakdown

    frames = {}
    if breakdown_of:
        found = breakdown(breakdown_of)
        frames["breakdown"] = breakdown_frame(found.rows, found.launches)
    job = jobs(ranks_of) if ranks_of else None
    if job is not None and job.ranks.height:
        frames["ranks"] = rank_frame(job.collectives, job.ranks)
    return frames
