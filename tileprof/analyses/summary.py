"""The summary of a profile: device header, sample counts, the group table, the longest samples.

``Summary.to_document`` gives the reference summary's layout (seed 004): its keys, in its order,
integers as integers and undefined values as null.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TypeGuard

import polars as pl

from tileprof.analyses.filters import Filters, apply_filters
from tileprof.analyses.stats import GROUP_FIELDS, check_dimensions, group_statistics, profile_span
from tileprof.core.schema import MetadataEntries

DEFAULT_TOP_SAMPLES = 3


@dataclass(frozen=True, repr=False)
class Summary:
    """What ``tileprof summary`` reports; renderers turn it into text."""

    clock_hz: int | float
    tile_count: int
    sample_count: int
    matched_sample_count: int
    profile_span_cycles: int | None
    at_offset: int | None
    groups: pl.DataFrame
    group_by: tuple[str, ...] = ()
    samples: list[dict[str, Any]] = field(default_factory=list)
    filters: Filters = field(default_factory=Filters)
    source: str | None = None

    def __repr__(self) -> str:
        """One line for a REPL (the dataclass default printed the group frame and the longest
        samples: 6,749 characters); ``.groups`` holds the table."""
        epoch = "epochs=all" if self.filters.epoch is None else f"epoch={self.filters.epoch}"
        by = f", group_by={self.group_by!r}" if self.group_by else ""
        return (
            f"Summary(source={self.source!r}, samples={self.matched_sample_count} of "
            f"{self.sample_count}, tiles={self.tile_count}, {epoch}, "
            f"groups={self.groups.height}{by})"
        )

    @property
    def profile_span_ms(self) -> float | None:
        """profileSpanCycles / clockHz × 1000."""
        if self.profile_span_cycles is None:
            return None
        return self.profile_span_cycles * 1000 / self.clock_hz

    def group_records(self) -> list[dict[str, Any]]:
        """Groups in document layout: name, dimensions, then the statistics."""
        records = []
        for row in self.groups.iter_rows(named=True):
            record: dict[str, Any] = {
                "name": row["name"],
                "dimensions": {d: row[d] for d in self.group_by},
            }
            record.update((key, row[key]) for key in GROUP_FIELDS)
            records.append(record)
        return records

    def to_document(self) -> dict[str, Any]:
        """The reference layout, key for key."""
        return {
            "clockHz": self.clock_hz,
            "tileCount": self.tile_count,
            "sampleCount": self.sample_count,
            "matchedSampleCount": self.matched_sample_count,
            "profileSpanCycles": self.profile_span_cycles,
            "profileSpanMs": self.profile_span_ms,
            "atOffset": self.at_offset,
            "groups": self.group_records(),
            "samples": self.samples,
        }


def sample_records(
    frame: pl.DataFrame, metadata: Sequence[MetadataEntries]
) -> list[dict[str, Any]]:
    """Samples in the dump's layout (``physicalTile`` … ``metadata``); absent metadata is null."""
    records = []
    for row in frame.iter_rows(named=True):
        metadata_id = row["metadataId"]
        records.append(
            {
                "physicalTile": row["tile"],
                "offset": row["offset"],
                "duration": row["duration"],
                "phase": row["phase"],
                "epoch": row["epoch"],
                "kind": row["kind"],
                "operation": row["operation"],
                "kernel": row["kernel"],
                "metadata": None
                if metadata_id is None
                else [{"name": n, "value": v} for n, v in metadata[metadata_id]],
            }
        )
    return records


def longest_samples(samples: pl.DataFrame, count: int) -> pl.DataFrame:
    """The ``count`` longest samples: duration descending, then tile, then offset.

    The three-key ``top_k`` runs only over the samples at least as long as the ``count``-th
    longest (found on the duration column alone, a fraction of the cost), which hold them all.
    """
    order = ["duration", "tile", "offset"]
    count = max(count, 0)
    if 0 < count < samples.height:
        shortest_kept = samples.get_column("duration").top_k(count).min()
        samples = samples.filter(pl.col("duration") >= shortest_kept)
    longest = samples.top_k(count, by=order, reverse=[False, True, True])
    return longest.sort(order, descending=[True, False, False])


def summarize(
    samples: pl.DataFrame,
    metadata: Sequence[MetadataEntries],
    *,
    clock_hz: int | float,
    tile_count: int,
    filters: Filters | None = None,
    group_by: Sequence[str] = (),
    top: int = DEFAULT_TOP_SAMPLES,
    source: str | None = None,
) -> Summary:
    """Filter, aggregate and pick the longest samples."""
    filters = filters or Filters()
    dimensions = check_dimensions(group_by)
    matched = apply_filters(samples, filters)
    groups = group_statistics(
        matched, tile_count=tile_count, clock_hz=clock_hz, group_by=dimensions
    )
    return Summary(
        clock_hz=clock_hz,
        tile_count=tile_count,
        sample_count=samples.height,
        matched_sample_count=matched.height,
        profile_span_cycles=profile_span(samples),
        at_offset=filters.at,
        groups=groups,
        group_by=dimensions,
        samples=sample_records(longest_samples(matched, top), metadata),
        filters=filters,
        source=source,
    )


FLOAT_FIELDS: frozenset[str] = frozenset(
    {
        "phaseMs",
        "averageActiveTiles",
        "usefulCycles",
        "usefulUtilization",
        "workLaneOccupancy",
        "deviceUsefulUtilization",
        "meanCycles",
    }
)
"""Group statistics held as floats; the others are integers (as ``group_statistics`` types them)."""


def summary_from_document(document: Any, source: str | None = None) -> Summary:
    """A ``Summary`` from the reference layout (``summary --format json``), numbers as written.

    Nothing is recomputed: the groups and header are the document's own. Every number is
    checked against its definition (docs/metrics.md) before it is taken: a count is a
    whole number, no statistic is negative, the clock and the tile count are above 0. Errors
    are ``InputError`` naming ``source`` and the key.
    """
    from tileprof.core.errors import InputError

    if not isinstance(document, dict):
        raise InputError(source, "$", "a summary document is a JSON object")
    for key in ("clockHz", "tileCount", "sampleCount", "matchedSampleCount", "groups"):
        if key not in document:
            raise InputError(source, key, "missing from the summary document")
    header = _check_header(document, source)
    groups = document["groups"]
    if not isinstance(groups, list):
        raise InputError(source, "groups", "expected a list")
    dimensions: tuple[str, ...] = ()
    columns: dict[str, list[Any]] = {"name": []}
    for index, group in enumerate(groups):
        where = f"groups[{index}]"
        if not isinstance(group, dict) or not isinstance(group.get("name"), str):
            raise InputError(source, where, "expected an object with a string name")
        dims = group.get("dimensions") or {}
        if not isinstance(dims, dict):
            raise InputError(source, f"{where}.dimensions", "expected an object")
        if index == 0:
            dimensions = check_dimensions(list(dims))
            columns.update({d: [] for d in dimensions})
        elif tuple(dims) != dimensions:
            raise InputError(source, f"{where}.dimensions", "differs from the first group's")
        columns["name"].append(group["name"])
        for d in dimensions:
            columns[d].append(dims[d])
        for key in GROUP_FIELDS:
            if key not in group:
                raise InputError(source, f"{where}.{key}", "missing from the group")
            value = _statistic(group[key], key in FLOAT_FIELDS, source, f"{where}.{key}")
            columns.setdefault(key, []).append(value)
    schema: dict[str, Any] = {"name": pl.String}
    schema.update({d: None for d in dimensions})
    schema.update({k: pl.Float64 if k in FLOAT_FIELDS else pl.Int64 for k in GROUP_FIELDS})
    frame = pl.DataFrame(
        {k: pl.Series(k, columns.get(k, []), dtype=schema[k], strict=False) for k in schema}
    )
    return Summary(
        clock_hz=header["clockHz"],
        tile_count=header["tileCount"],
        sample_count=header["sampleCount"],
        matched_sample_count=header["matchedSampleCount"],
        profile_span_cycles=header["profileSpanCycles"],
        at_offset=header["atOffset"],
        groups=frame,
        group_by=dimensions,
        samples=list(document.get("samples") or []),
        source=source,
    )


HEADER_NUMBERS: tuple[tuple[str, bool, bool], ...] = (
    ("clockHz", True, True),
    ("tileCount", False, True),
    ("sampleCount", False, False),
    ("matchedSampleCount", False, False),
    ("profileSpanCycles", False, False),
    ("atOffset", False, False),
)
"""A summary document's header numbers: (key, may be a fraction, must be above 0)."""


def _check_header(document: dict[str, Any], source: str | None) -> dict[str, Any]:
    """A summary document's header numbers, each as ``HEADER_NUMBERS`` says (a whole number
    written 2.0 as 2), or an InputError naming its key; ``profileSpanCycles`` and
    ``atOffset`` may be null."""
    from tileprof.core.errors import InputError

    numbers: dict[str, Any] = {}
    for key, fraction, positive in HEADER_NUMBERS:
        value = document.get(key)
        nullable = key in ("profileSpanCycles", "atOffset")
        if value is None and not nullable:
            raise InputError(source, key, "expected a number, got null")
        if positive and _is_number(value) and value <= 0:
            raise InputError(source, key, f"expected a number above 0, got {value!r}")
        numbers[key] = _statistic(value, fraction, source, key, nullable=nullable)
    return numbers


def _is_number(value: Any) -> TypeGuard[int | float]:
    """A finite JSON number (not a bool, NaN or ±Infinity, which Python's JSON reader takes)."""
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _statistic(
    value: Any, fraction: bool, source: str | None, where: str, *, nullable: bool = True
) -> Any:
    """``value`` if it is null or a finite number that is not negative, and whole unless
    ``fraction`` (2.0 is taken as 2: JSON writers differ); else an InputError at ``where``."""
    from tileprof.core.errors import InputError

    if value is None:
        return None
    if not _is_number(value):
        expected = "a number or null" if nullable else "a number"
        raise InputError(source, where, f"expected {expected}, got {value!r}")
    if value < 0:
        raise InputError(source, where, f"expected a number not below 0, got {value!r}")
    if not fraction and isinstance(value, float):
        if not value.is_integer():
            raise InputError(source, where, f"expected a whole number, got {value!r}")
        return int(value)
    return value
