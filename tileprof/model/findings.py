"""The frames the findings' rules read, from the inputs of ``findings`` and ``report``.

A tile dump gives its superstep and epoch rows (``Profile.supersteps`` over the filters'
epoch), its group rows (``Profile.summary``) and its critical path's candidate edits
(``profile_frames``); the GPU traces' timelines give the GPU time breakdown and, for the ranks
of one job, their collectives (``timeline_frames``). ``model.gather.source_findings`` makes
the other inputs' frames and leaves out an input whose capture check undermines one.
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from tileprof.analyses.filters import Filters
from tileprof.analyses.findings import (
    breakdown_frame,
    group_frame,
    is_tenstorrent,
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
        kind = "tenstorrent" if is_tenstorrent(profile.device or "") else "tile"
        frames |= superstep_frames(
            result.supersteps, result.epochs, result.tile_count, name, device_kind=kind
        )
        frames["candidates"] = _tile_candidates(profile, epoch, name)
    return frames


def _tile_candidates(profile: Profile, epoch: int | None, name: str) -> pl.DataFrame:
    """The single edits ``critical`` ranks for each epoch of the dump, as the findings read
    them (``tile_candidate_frame``)."""
    from tileprof.model.critical import tile_critical

    found = tile_critical(profile, epoch=epoch)
    return tile_candidate_frame(found.candidates, found.epochs, profile.clock_hz, name)


def timeline_frames(
    breakdown_of: Sequence[GpuTimeline], ranks_of: Sequence[GpuTimeline]
) -> dict[str, pl.DataFrame]:
    """The ``breakdown`` frame of the GPU time breakdown of ``breakdown_of``, and the
    ``ranks`` frame of the collectives of ``ranks_of`` (none where a list is empty)."""
    from tileprof.analyses.collectives import jobs
    from tileprof.analyses.gpu_breakdown import breakdown, long_gaps

    frames = {}
    if breakdown_of:
        found = breakdown(breakdown_of)
        chips = [t for t in breakdown_of if any(map(is_tenstorrent, t.devices.values()))]
        frames["breakdown"] = breakdown_frame(found.rows, found.launches, long_gaps(chips))
    job = jobs(ranks_of) if ranks_of else None
    if job is not None and job.ranks.height:
        frames["ranks"] = rank_frame(job.collectives, job.ranks)
    return frames
