"""The critical path of one tile dump with its what-if edits: the analysis
(``tileprof.analyses.critical``) fed with each group's roofline fraction from the run table's
roofline of tile groups (docs/runs.md, "Roofline")."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tileprof.analyses.critical import CriticalPath, Edit, critical_path
from tileprof.analyses.filters import Filters

if TYPE_CHECKING:
    from tileprof.model.profile import Profile


def roofline_fractions(profile: Profile, epoch: int | None) -> dict[str, float]:
    """Each tile group's roofline fraction (roofline time / phase time) where it has one."""
    from tileprof.model.tile_runs import tile_source_runs

    runs = tile_source_runs(profile, Filters(epoch=epoch), source="critical").frame
    known = runs.filter(runs["roofline_fraction"].is_not_null())
    return dict(zip(known["kernel"].to_list(), known["roofline_fraction"].to_list(), strict=True))


def tile_critical(
    profile: Profile, *, epoch: int | None, min_sync_gap: int = 0, edits: Sequence[Edit] = ()
) -> CriticalPath:
    """The critical path of every epoch of ``profile`` (or ``epoch``) and the re-timing of
    ``edits``, with the groups' roofline fractions for roofline edits and candidates."""
    return critical_path(
        profile.samples,
        tile_count=profile.tile_count,
        clock_hz=profile.clock_hz,
        epoch=epoch,
        min_sync_gap=min_sync_gap,
        edits=edits,
        roofline=roofline_fractions(profile, epoch),
    )
