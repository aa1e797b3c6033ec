"""The two sides of a diff from files: tile dumps (or caches), summary documents, GPU sources.

Which kind a file is decides how it is read: a tile dump is loaded and summarised with the
filters, as ``summary`` would; a summary document is taken as written; a GPU source (trace,
nsys CSV, run table, …) becomes its run table's kernel rows. Both sides must be of one
family, tile or GPU.
"""

from __future__ import annotations

import dataclasses
import json
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
    op_groups,
    tile_side,
)
from tileprof.analyses.filters import Filters
from tileprof.analyses.summary import Summary, summary_from_document
from tileprof.core.errors import InputError, OptionError

if TYPE_CHECKING:
    from tileprof.model.profile import Profile

SUMMARY_DOCUMENT = "summary document"
_SUMMARY_KEYS = (b'"matchedSampleCount"', b'"groups"')


def input_kind(path: Path) -> str:
    """``tile dump``, ``summary document`` or the GPU kind ``runs`` names; InputError if none."""
    from tileprof.inputs import peek

    head, _, _ = peek(path)
    if head.lstrip()[:1] == b"{" and all(key in head for key in _SUMMARY_KEYS):
        return SUMMARY_DOCUMENT
    from tileprof.inputs.sources import detect_file_kind

    return detect_file_kind(path)[0]


def is_tile_kind(kind: str) -> bool:
    """Whether ``kind`` is compared per tile group (dumps, caches, summary documents)."""
    from tileprof.inputs._format import TILE_DUMP

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


def read_side(path: Path, kind: str, options: ReadOptions) -> Side:
    """One side of the diff from the file at ``path`` of ``kind`` (see ``input_kind``)."""
    if kind == SUMMARY_DOCUMENT:
        return tile_side(_document_summary(path, options), str(path))
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

        profile = load(path, **read)
        return tile_side(profile.summary(options.filters, group_by=options.group_by), str(path))
    return _gpu_side(path, kind, options)


def _document_summary(path: Path, options: ReadOptions) -> Summary:
    """A summary document, narrowed by ``--kernel`` (the only filter its groups can take)."""
    from tileprof.inputs._common import read_bytes

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
    try:
        document = json.loads(read_bytes(path))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
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


def _gpu_side(path: Path, kind: str, options: ReadOptions) -> Side:
    """A GPU source's kernel (or op) rows; only ``--kernel`` applies to them."""
    from tileprof.inputs.sources import load_runs

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
    from tileprof.inputs.gpu.kineto import KIND as TRACE

    if options.per_op and kind == TRACE:
        from tileprof.analyses.ops import load_ops

        groups = op_groups(load_ops(path).frame)
    else:
        groups = gpu_groups(load_runs(path).frame, per_op=options.per_op)
    groups = kernel_globs_filter(groups, filters.kernels)
    return Side(label=str(path), kind=kind, groups=groups)


def compare_files(
    before: Path,
    after: Path,
    options: ReadOptions,
    *,
    match: Sequence[str | Rename] = (),
    normalize: str | None = None,
    top: int = DEFAULT_TOP,
) -> Diff:
    """Read both sides with the same options and compare them."""
    pattern = compile_normalize(normalize)
    renames = [m if isinstance(m, Rename) else Rename.parse(m) for m in match]
    kinds = input_kind(before), input_kind(after)
    check_kinds(before, kinds[0], after, kinds[1])
    sides = read_side(before, kinds[0], options), read_side(after, kinds[1], options)
    if is_tile_kind(kinds[0]):
        return compare_summaries(*sides, match=renames, normalize=pattern, top=top)
    return compare_runs(*sides, match=renames, normalize=pattern, top=top)


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
        path = Path(value)
        kind = input_kind(path)
        if not is_tile_kind(kind):
            raise OptionError(f"cannot compare {path} ({kind}) with a tile profile")
        return read_side(path, kind, options)
    return tile_side(value.summary(options.filters, group_by=options.group_by))
