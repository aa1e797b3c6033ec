"""Testing helpers for kernel authors: deterministic dumps, golden aggregates, readable diffs.

The pytest plugin (``tileprof.testing.plugin``, loaded automatically once tileprof is
installed) wraps these as fixtures: ``tile_dump``, ``reference_aggregates`` and the
``--tileprof-regen`` option. Everything here also works without pytest.
"""

from tileprof.testing.aggregates import Aggregates, aggregates_of, group_key, stable_json
from tileprof.testing.compare import (
    AggregatesMismatch,
    DiffRow,
    assert_aggregates_match,
    compare_aggregates,
)
from tileprof.testing.factory import TileDumpFactory, profile_from_spec
from tileprof.testing.golden import GoldenFile, RegenLog
from tileprof.testing.numbers import format_change, relative_change, within_tolerance
from tileprof.testing.spec import DumpSpec, Duration, GroupSpec, SpecError, build_dump
from tileprof.testing.thresholds import Threshold

__all__ = [
    "Aggregates",
    "AggregatesMismatch",
    "DiffRow",
    "DumpSpec",
    "Duration",
    "GoldenFile",
    "GroupSpec",
    "RegenLog",
    "SpecError",
    "Threshold",
    "TileDumpFactory",
    "aggregates_of",
    "assert_aggregates_match",
    "build_dump",
    "compare_aggregates",
    "format_change",
    "group_key",
    "profile_from_spec",
    "relative_change",
    "stable_json",
    "within_tolerance",
]
