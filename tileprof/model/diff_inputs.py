"""The two sides of a diff from files: tile dumps (or caches), summary documents, GPU sources.

Which kind a file is decides how it is read: a tile dump is loaded and summarised with the
filters, as ``summary`` would; a summary document is taken as written; a GPU source (trace,
nsys CSV, run table, …) becomes its run table's kernel rows. Both sides must be of one
family, tile or GPU.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl

from tileprof.analyses.diff import (
    DEFAULT_TOP,
    Diff,
    Rename,
    Side,
    compare_runs,
    compare_summaries,
    compile_normalize,
    gpu_groups,
    kernel_globs_filter,
    op_call_durations,
    op_groups,
    tile_side,
    with_significance,
)
from tileprof.analyses.filters import Filters, check_epoch
from tileprof.analyses.significance import CONFIDENCE
from tileprof.analyses.summary import Summary, summary_from_document
from tileprof.core.errors import OptionError
from tileprof.inputs.sources import (
    SUMMARY_DOCUMENT,
    TILE_DUMP,
    FileRead,
    read_input,
    streamed_trace,
)

if TYPE_CHECKING:
    from tileprof.model.profile import Profile


def is_tile_kind(kind: str) -> bool:
    """Whether ``kind`` is compared per tile group (dumps, caches, summary documents)."""
    return kind in (TILE_DUMP, SUMMARY_DOCUMENT)


def check_kinds(before: Path, before_kind: str, after: Path, after_kind: str) -> None:
    """One line naming both kinds when a tile side meets a GPU side."""
    if is_tile_kind(before_kind) != is_tile_kind(after_kind):
        raise OptionError(
            f"cannot compare {before} ({before_kind}) with {after} ({after_kind}): "
            "both sides must be tile profiles or both GPU run sources"
        )


@dataclasses.dataclass(frozen=True)
class ReadOptions:
    """How to read one side: the summary's filters, grouping and input options."""

    filters: Filters = dataclasses.field(default_factory=Filters)
    group_by: Sequence[str] = ()
    format_in: str | None = None
    clock_hz: float | None = None
    tile_count: int | None = None
    cache: bool = False
    quiet: bool = True
    per_op: bool = False


def read_side(found: FileRead, options: ReadOptions) -> Side:
    """One side of the diff from a file read once (``tileprof.inputs.sources.read_input``)."""
    path, kind = found.path, found.kind
    if kind == SUMMARY_DOCUMENT:
        assert found.data is not None
        return tile_side(_document_summary(found, options), str(path))
    if is_tile_kind(kind):
        read: dict[str, Any] = {
            "format": options.format_in,
            "clock_hz": options.clock_hz,
            "tile_count": options.tile_count,
            "quiet": options.quiet,
        }
        if options.cache:
            from tileprof.model.cache import load_cached_summary

            summary = load_cached_summary(path, options.filters, options.group_by, **read)
            return tile_side(summary, str(path))
        from tileprof.model.profile import load

        profile = load(path, **read, content=found.data if kind == TILE_DUMP else None)
        check_epoch(profile.samples, options.filters.epoch)
        summary = profile.summary(options.filters, group_by=options.group_by)
        side = tile_side(summary, str(path))
        durations = sample_durations(profile.samples, options.filters, summary.group_by)
        environment = {**side.environment, "device": profile.device}
        return dataclasses.replace(side, durations=durations, environment=environment)
    return _gpu_side(found, options)


def _document_summary(found: FileRead, options: ReadOptions) -> Summary:
    """A summary document, narrowed by ``--kernel`` (the only filter its groups can take)."""
    from tileprof.inputs.sources import parse_summary_document

    path = found.path
    filters = options.filters
    sample_filters = [
        name
        for name, value in (
            ("--epoch", filters.epoch),
            ("--at", filters.at),
            ("--window", filters.window),
            ("--kind", filters.kind),
        )
        if value is not None
    ]
    if sample_filters:
        raise OptionError(
            f"{path} is a summary document (groups, not samples): {sample_filters[0]} "
            "cannot apply to it; only --kernel can"
        )
    assert found.data is not None
    document = parse_summary_document(path, found.data)
    summary = summary_from_document(document, str(path))
    wanted = tuple(options.group_by)
    if wanted and wanted != summary.group_by:
        raise OptionError(
            f"{path} is grouped by {list(summary.group_by)}; it cannot be regrouped by "
            f"{list(wanted)}"
        )
    if not filters.kernels:
        return summary
    groups = kernel_globs_filter(summary.groups, filters.kernels)
    return dataclasses.replace(
        summary,
        groups=groups,
        matched_sample_count=int(groups.get_column("sampleCount").sum()),
        samples=[],
        filters=filters,
    )


def _gpu_side(found: FileRead, options: ReadOptions) -> Side:
    """A GPU source's kernel (or op) rows; only ``--kernel`` applies to them."""
    from tileprof.analyses.comparability import CAPTURE, rank_field
    from tileprof.inputs.gpu.kineto_clock import unix_window_ns
    from tileprof.inputs.sources import TRACE, runs_and_calls, source_environment

    path, kind, data = found.path, found.kind, found.data
    assert data is not None or found.streamed
    filters = options.filters
    for name, value in (
        ("--epoch", filters.epoch),
        ("--at", filters.at),
        ("--window", filters.window),
        ("--kind", filters.kind),
        ("--group-by", tuple(options.group_by) or None),
    ):
        if value is not None:
            raise OptionError(f"{path} is a {kind}: {name} applies to tile profiles only")
    read = found.kineto_events() if kind == TRACE else None  # a trace decoded once
    if options.per_op and read is not None:
        from tileprof.analyses.ops import op_rows

        parsed = op_rows(read)
        groups = op_groups(parsed.frame)
        targets = set(read.devices.values())
        durations = None if parsed.calls is None else op_call_durations(parsed.calls)
    else:
        runs, durations = runs_and_calls(path, kind, data or b"", read)
        frame = runs.frame
        if not options.per_op:  # --kernel selects kernels, whatever else names their row
            frame = kernel_globs_filter(frame, filters.kernels, column="kernel")
        groups = gpu_groups(frame, per_op=options.per_op)
        durations = None if options.per_op else durations
        targets = set(runs.frame.get_column("target").drop_nulls().to_list())
    if options.per_op:
        groups = kernel_globs_filter(groups, filters.kernels)
    device = ", ".join(sorted(targets - {UNNAMED_GPU})) or None
    environment: dict[str, object] = {"device": device, **source_environment(path, kind, data)}
    if read is not None and read.rank is not None:
        environment["rank"] = rank_field(*read.rank)
        window = unix_window_ns(read.frame, read.base_time_ns)
        if window is not None:
            environment[CAPTURE] = window
    return Side(str(path), kind, groups, durations=durations, environment=environment)


UNNAMED_GPU = "GPU"
"""The target a GPU source gives a device it does not name: no device is stated."""


def sample_durations(
    samples: pl.DataFrame, filters: Filters, dimensions: Sequence[str]
) -> pl.DataFrame:
    """The matched samples' durations (cycles) with their group name and ``dimensions``, as
    ``Profile.summary`` groups them: the per-sample evidence of a tile diff's groups."""
    from tileprof.analyses.filters import apply_filters, group_name

    matched = apply_filters(samples, filters)
    return matched.select(
        group_name().cast(pl.String).alias("name"),
        *dimensions,
        pl.col("duration").cast(pl.Float64).alias("value"),
    )


def compare_files(
    before: Path,
    after: Path,
    options: ReadOptions,
    *,
    match: Sequence[str | Rename] = (),
    normalize: str | None = None,
    top: int = DEFAULT_TOP,
    digests: bool = False,
    confidence: float = CONFIDENCE,
) -> Diff:
    """Read both sides once each, with the same options, and compare them; with ``digests``
    each side carries its file's sha256 (the HTML header shows it)."""
    pattern = compile_normalize(normalize)
    renames = [m if isinstance(m, Rename) else Rename.parse(m) for m in match]
    whole = not options.cache  # a cached side reads its summary, not the dump
    reads = tuple(
        read_input(path, whole_dumps=whole, stream=streamed_trace) for path in (before, after)
    )
    check_kinds(before, reads[0].kind, after, reads[1].kind)
    sides = [read_side(found, options) for found in reads]
    if digests:
        sides = [_with_digest(side, found) for side, found in zip(sides, reads, strict=True)]
    if is_tile_kind(reads[0].kind):
        found = compare_summaries(*sides, match=renames, normalize=pattern, top=top)
    else:
        found = compare_runs(*sides, match=renames, normalize=pattern, top=top)
    return with_significance(found, confidence)


def _with_digest(side: Side, found: FileRead) -> Side:
    """``side`` with its file's sha256: from the one read, or (a tile dump, which its loader
    streamed) in chunks."""
    from tileprof.inputs.sources import file_digest

    sha = found.sha256 if found.sha256 is not None else file_digest(found.path)[1]
    return dataclasses.replace(side, sha256=sha)


def baseline_diff(
    baseline: Path,
    profile: Profile,
    filters: Filters,
    name: str,
    group_by: Sequence[str],
) -> Diff:
    """``report --baseline``: ``baseline`` (a dump, cache or summary document) against the
    report's one tile dump, same filters and grouping on both sides, with both digests."""
    from tileprof.inputs.sources import file_digest

    found = read_input(baseline)
    check_kinds(baseline, found.kind, Path(name), TILE_DUMP)
    before_filters = filters
    if found.kind == SUMMARY_DOCUMENT:  # its groups were filtered when it was written
        before_filters = Filters(kernels=filters.kernels)
    before = read_side(found, ReadOptions(filters=before_filters, group_by=group_by))
    before = _with_digest(before, found)
    source = profile.source
    digest = file_digest(source)[1] if source and Path(source).is_file() else None
    after = tile_side(profile.summary(filters, group_by=group_by), name, digest)
    return compare_summaries(before, after)


def diff(
    before: str | Path | Profile | Summary,
    after: str | Path | Profile | Summary,
    *,
    filters: Filters | None = None,
    group_by: Sequence[str] = (),
    match: Sequence[str] = (),
    normalize: str | None = None,
    per_op: bool = False,
    cache: bool = False,
    **filter_options: Any,
) -> pl.DataFrame:
    """The diff rows of two profiles (docs/metrics.md, "Diff"), largest change first.

    ``before``/``after``: paths (tile dumps, caches, summary documents, or two GPU run
    sources), ``Profile`` objects or ``Summary`` objects. Filters apply to both sides, as a
    ``Filters`` or as its keyword fields (``epoch=1``).
    """
    if filter_options:
        if filters is not None:
            raise TypeError("pass filters either as Filters or as keywords, not both")
        filters = Filters(**filter_options)
    options = ReadOptions(
        filters=filters or Filters(), group_by=group_by, cache=cache, per_op=per_op
    )
    if isinstance(before, str | Path) and isinstance(after, str | Path):
        return compare_files(
            Path(before), Path(after), options, match=match, normalize=normalize
        ).rows
    sides = [_object_side(x, options) for x in (before, after)]
    return compare_summaries(*sides, match=match, normalize=normalize).rows


def _object_side(value: str | Path | Profile | Summary, options: ReadOptions) -> Side:
    if isinstance(value, Summary):
        return tile_side(value)
    if isinstance(value, str | Path):
        found = read_input(value)
        if not is_tile_kind(found.kind):
            raise OptionError(f"cannot compare {found.path} ({found.kind}) with a tile profile")
        return read_side(found, options)
    return tile_side(value.summary(options.filters, group_by=options.group_by))
