"""A tile dump's rows of the run table: one run per tile group after the filters (shared by
``gather``, which reads every input, and ``critical``, which reads the groups' rooflines)."""

from __future__ import annotations

from tileprof.analyses.filters import Filters
from tileprof.core.run_schema import ParsedRuns, tile_runs
from tileprof.inputs.sources import TILE_DUMP
from tileprof.model.profile import Profile


def tile_source_runs(profile: Profile, filters: Filters, source: str) -> ParsedRuns:
    """One run per tile group of ``profile`` after ``filters``."""
    from tileprof.analyses.tile_work import group_work

    summary = profile.summary(filters, samples=0)
    work = group_work(profile.filtered(filters), profile.metadata)
    frame = tile_runs(summary, source=source, target=profile.target, work=work)
    notes = [] if summary.groups.height else [f"{source}: no tile samples matched the filters"]
    return ParsedRuns(
        TILE_DUMP,
        frame,
        notes=notes,
        metadata={
            "clockHz": summary.clock_hz,
            "tileCount": summary.tile_count,
            "sampleCount": summary.sample_count,
            "matchedSampleCount": summary.matched_sample_count,
            "filters": list(summary.filters.describe()),
        },
    )
