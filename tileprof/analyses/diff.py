"""What changed between two profiles: groups paired by name, every statistic before and after.

The rows are built from two summaries' own group tables (``Profile.summary``, or a summary
document read back as written), so every before/after number is exactly the one ``summary``
prints: nothing is recomputed here except the differences themselves. GPU run sources are
compared per kernel (or per launching op) from the run table ``runs`` builds.
Definitions: docs/metrics.md, "Diff".
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from tileprof.analyses.significance import (
    CONFIDENCE,
    MIN_CALLS,
    RESAMPLES,
    VERDICTS,
    per_call_changes,
)
from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.analyses.summary import Summary
from tileprof.analyses.thresholds import GroupValues, relative_change
from tileprof.core import patterns
from tileprof.core.errors import OptionError
from tileprof.core.run_schema import known_sum

STATUSES: tuple[str, ...] = ("added", "removed", "changed", "unchanged")
"""Every paired group is one of these (HTA TraceDiff's categories)."""

TILE_ADDITIVE: frozenset[str] = frozenset(
    {
        "sampleCount",
        "tileCount",
        "phaseCount",
        "phaseCycles",
        "phaseMs",
        "workCycles",
        "usefulCycles",
        "estimatedWorkCycles",
    }
)
"""Tile statistics that a group absent from one side has as 0 there, for its change."""

GPU_FIELDS: tuple[str, ...] = ("calls", "total_us", "time_us", "p50_us", "p95_us", "max_us")
"""The run-table columns a GPU diff compares (docs/runs.md)."""

GPU_ADDITIVE: frozenset[str] = frozenset({"calls", "total_us"})

OP_FIELDS: tuple[str, ...] = (
    "calls",
    "kernels",
    "calls_without_gpu",
    "total_us",
    "time_us",
    "flops",
    "tflops",
    "peak_fraction",
    "roofline_fraction",
)
"""The op-table columns (``tileprof.analyses.ops``, docs/runs.md) a per-op diff of traces
compares."""

OP_ADDITIVE: frozenset[str] = frozenset({"calls", "kernels", "calls_without_gpu", "total_us"})

DEFAULT_TOP = 5
"""How many of the top rows the header's explained share covers."""


@dataclass(frozen=True)
class Rename:
    """``--match OLD=NEW``: a before-side name matching glob OLD pairs with NEW.

    Each ``*``/``?`` of OLD captures what it matched; NEW's wildcards, in order, are replaced
    by the captures, so ``gemm_v1_*=gemm_v2_*`` pairs ``gemm_v1_f16`` with ``gemm_v2_f16``.
    """

    old: str
    new: str

    @classmethod
    def parse(cls, text: str) -> Rename:
        """``OLD=NEW``, both non-empty, with the same number of wildcards."""
        old, sep, new = text.partition("=")
        if not sep or not old or not new:
            raise OptionError(f"--match {text!r}: write OLD=NEW (globs allowed)")
        if _wildcards(old) != _wildcards(new):
            raise OptionError(f"--match {text!r}: OLD and NEW need the same wildcards (* and ?)")
        return cls(old, new)

    def apply(self, name: str) -> str | None:
        """The after-side name ``name`` pairs with, or None when OLD does not match it."""
        found = patterns.compile(_capturing(self.old), dot_all=True).fullmatch(name)
        if found is None:
            return None
        captures = iter(found.groups())
        return re.sub(r"\*|\?", lambda _: next(captures), self.new)


def _wildcards(glob: str) -> list[str]:
    return re.findall(r"\*|\?", glob)


def _capturing(glob: str) -> str:
    parts = re.split(r"(\*|\?)", glob)
    return "".join(
        "(.*)" if p == "*" else "(.)" if p == "?" else patterns.escape(p) for p in parts if p
    )


def compile_normalize(pattern: str | re.Pattern[str] | None) -> patterns.Pattern | None:
    """``--normalize REGEX`` compiled by RE2 (linear time on any name, core.patterns; a
    ``re.Pattern`` is compiled again from its text); a pattern RE2 cannot read (a look-around,
    a back-reference) is an OptionError naming it."""
    if pattern is None:
        return None
    text = pattern.pattern if isinstance(pattern, re.Pattern) else pattern
    try:
        return patterns.compile(text)
    except patterns.PatternError as exc:
        raise OptionError(f"--normalize {text!r}: {exc} (RE2 syntax: no look-arounds)") from None


@dataclass(frozen=True)
class Side:
    """One side of a diff: its groups, the statistics they carry, and where they came from."""

    label: str
    kind: str
    groups: pl.DataFrame
    dimensions: tuple[str, ...] = ()
    summary: Summary | None = None
    sha256: str | None = None
    environment: dict[str, Any] = field(default_factory=dict)
    """What the side states of its device, clock, tiles and software
    (``analyses.comparability``)."""
    durations: pl.DataFrame | None = None
    """One row per call (GPU events) or sample (tile dumps): ``name``, the dimensions and
    ``value`` (µs or cycles); None when the source holds only aggregates."""


@dataclass(frozen=True)
class Diff:
    """The rows of a diff, its header figures, and the two sides it compares."""

    rows: pl.DataFrame
    header: dict[str, Any]
    before: Side
    after: Side
    fields: tuple[str, ...]
    impact: str
    dimensions: tuple[str, ...] = ()
    top: int = DEFAULT_TOP
    notes: list[str] = field(default_factory=list)
    rows_shown: int | None = None
    """``--top N``: the N largest changes are shown (None: every row); thresholds still see
    every row."""
    confidence: float | None = None
    """The level of the rows' per-call intervals (``with_significance``); None: no per-call
    data on both sides, so no intervals."""

    @property
    def order(self) -> str:
        """The column the rows are sorted by and ``topShare`` covers: a GPU diff's
        ``time_effect_us`` (the change its call counts do not explain), a tile diff's
        ``phaseCycles_change``."""
        return ORDER if ORDER in self.rows.columns else f"{self.impact}_change"

    @property
    def calls_differ(self) -> bool:
        """Whether some group both sides have ran a different number of times."""
        return bool(self.header.get("callsDiffer"))

    @property
    def samples_differ(self) -> bool:
        """Whether some tile group both sides have holds a different number of samples."""
        return bool(self.header.get("samplesDiffer"))

    def shown_rows(self) -> pl.DataFrame:
        """The rows a view shows: the first ``rows_shown`` (the rows are sorted by change)."""
        return self.rows if self.rows_shown is None else self.rows.head(self.rows_shown)

    def limited(self, count: int | None, share_top: int | None = None) -> Diff:
        """This diff showing only its ``count`` largest changes (None: all), with the header's
        explained share over ``share_top`` rows (default: the rows shown, else as it was)."""
        share = share_top if share_top is not None else count
        if count is None and share is None:
            return self
        top = self.top if share is None else share
        header = {**self.header, **_totals(self.rows, self.impact, top, self.order)}
        return replace(self, rows_shown=count, top=top, header=header)

    def values(self, side: str) -> GroupValues:
        """``{group: {field: value}}`` of one side (``"before"``/``"after"``), for thresholds."""
        present = self.rows.filter(pl.col(f"{side}Name").is_not_null())
        columns = [f"{f}_{side}" for f in self.fields]
        return {
            row["group"]: {f: row[c] for f, c in zip(self.fields, columns, strict=True)}
            for row in present.select("group", *columns).iter_rows(named=True)
        }

    def gate_values(self) -> tuple[GroupValues, GroupValues, dict[str, tuple[int, int]]]:
        """Both sides' values for ``--fail-on``, with the totals at equal counts.

        A group both sides have whose count differs (a GPU row's calls, a tile group's
        samples) has its before totals (``COUNTED``: ``total_us``; ``phaseCycles``,
        ``workCycles``, ``usefulCycles``) scaled to the after side's count (value × count_after
        / count_before), so that a threshold on a total judges the time per call or per
        sample, never the count. Also returns ``{group: (count_before, count_after)}`` of the
        groups so scaled.
        """
        before, after = self.values("before"), self.values("after")
        scaled: dict[str, tuple[int, int]] = {}
        count = self.count_field
        totals = [f for f in COUNTED.get(count or "", ()) if f in self.fields]
        if count is None or not totals:
            return before, after, scaled
        adjusted = dict(before)
        for group, values in before.items():
            new = after.get(group)
            old_count, new_count = values[count], new and new[count]
            if not old_count or not new_count or old_count == new_count:
                continue
            ratio = new_count / old_count
            adjusted[group] = {**values, **{f: _scaled(values[f], ratio) for f in totals}}
            scaled[group] = (int(old_count), int(new_count))
        return adjusted, after, scaled

    @property
    def count_field(self) -> str | None:
        """What a group's count is: ``calls`` (GPU rows) or ``sampleCount`` (tile groups)."""
        return next((f for f in ("calls", "sampleCount") if f in self.fields), None)

    def significance(self) -> dict[str, tuple[str, float | None, float | None, float | None]]:
        """``{group: (verdict, change, low, high)}`` of the rows with a per-call verdict."""
        if self.confidence is None:
            return {}
        columns = ("group", "verdict", "perCall_change", "perCall_low", "perCall_high")
        return {r[0]: r[1:] for r in self.rows.select(columns).iter_rows() if r[1] is not None}


def with_significance(diff: Diff, confidence: float = CONFIDENCE) -> Diff:
    """``diff`` with each paired group's change in time per call (per sample), its interval
    at ``confidence`` and its verdict (``analyses.significance``) as row columns, and the
    verdict counts in the header; unchanged when a side holds no per-call durations."""
    before, after = diff.before.durations, diff.after.durations
    if before is None or after is None:
        return diff
    found = per_call_changes(
        diff.rows, before, after, dimensions=diff.dimensions, confidence=confidence
    )
    rows = diff.rows.join(found, on="group", how="left", maintain_order="left")
    counts = found.get_column("verdict").value_counts()
    by_verdict = dict(zip(counts["verdict"].to_list(), counts["count"].to_list(), strict=True))
    header = {
        **diff.header,
        "significance": {
            "confidence": confidence,
            "statistic": "bootstrap of the ratio of mean time per call",
            "resamples": RESAMPLES,
            "minimumCalls": MIN_CALLS,
            "verdicts": {v: by_verdict.get(v, 0) for v in VERDICTS},
        },
    }
    return replace(diff, rows=rows, header=header, confidence=confidence)


SIGNIFICANT_FIELDS: dict[str, tuple[str, ...]] = {
    "calls": ("total_us", "time_us"),
    "sampleCount": ("workCycles", "meanCycles"),
}
"""The figures whose change is the change in mean time per call (per sample) at equal
counts: a ``--fail-on`` breach of one stands only when the group's interval says changed."""


def _scaled(value: float | None, ratio: float) -> float | None:
    return None if value is None else value * ratio


COUNTED: dict[str, tuple[str, ...]] = {
    "calls": ("total_us",),
    "sampleCount": ("phaseCycles", "workCycles", "usefulCycles"),
}
"""The totals that grow with a group's count, which ``--fail-on`` judges at equal counts."""


def _keys(
    side: Side,
    dimensions: Sequence[str],
    renames: Sequence[Rename],
    normalize: patterns.Pattern | None,
    rename: bool,
) -> pl.DataFrame:
    """One row per group: its name, its matching key, and the label shown for it."""
    names = side.groups.get_column("name").to_list()
    keys = []
    for name in names:
        key = name
        if rename:
            key = next((n for r in renames if (n := r.apply(name)) is not None), name)
        if normalize is not None:
            key = normalize.sub("", key)
        keys.append(key)
    frame = side.groups.with_columns(pl.Series("_key", keys, dtype=pl.String))
    label = pl.col("_key")
    if dimensions:
        label = pl.concat_str([label, pl.lit(" ["), *_dimension_text(dimensions), pl.lit("]")])
    frame = frame.with_columns(group=label)
    repeated = frame.filter(pl.col("group").is_duplicated())
    if repeated.height:
        clash = repeated.filter(pl.col("group") == repeated.get_column("group")[0])
        shown = " and ".join(clash.get_column("name").head(2).to_list())
        raise OptionError(
            f"{side.label}: {shown} both pair as {clash.get_column('group')[0]!r}; "
            "narrow --normalize or --match"
        )
    return frame


def _dimension_text(dimensions: Sequence[str]) -> list[pl.Expr]:
    parts: list[pl.Expr] = []
    for index, d in enumerate(dimensions):
        prefix = f"{d}=" if index == 0 else f", {d}="
        parts += [pl.lit(prefix), pl.col(d).cast(pl.String).fill_null("null")]
    return parts


def relative(before: pl.Expr, after: pl.Expr) -> pl.Expr:
    """(after − before) / |before|, as ``tileprof.analyses.thresholds.relative_change`` defines
    it."""
    infinite = pl.when(after > 0).then(pl.lit(math.inf)).otherwise(pl.lit(-math.inf))
    return (
        pl.when(before.is_null() | after.is_null())
        .then(pl.lit(None, pl.Float64))
        .when(before == after)
        .then(pl.lit(0.0))
        .when(before == 0)
        .then(infinite)
        .otherwise((after - before).cast(pl.Float64) / before.abs().cast(pl.Float64))
    )


def pair(
    before: Side,
    after: Side,
    *,
    fields: Sequence[str],
    additive: frozenset[str],
    impact: str,
    dimensions: Sequence[str] = (),
    match: Sequence[str | Rename] = (),
    normalize: str | re.Pattern[str] | patterns.Pattern | None = None,
) -> pl.DataFrame:
    """The diff rows: every group of either side, paired by key, sorted by |Δ impact|.

    Columns: ``group`` (the matching key, with dimensions), ``status``, ``beforeName``,
    ``afterName``, the dimensions, then per field ``F_before``, ``F_after``, ``F_change``
    (after − before; a group absent from one side counts 0 there for additive fields and
    has a null change otherwise) and ``F_relative`` (null unless both sides have the group).
    """
    renames = [m if isinstance(m, Rename) else Rename.parse(m) for m in match]
    pattern = normalize if isinstance(normalize, patterns.Pattern) else compile_normalize(normalize)
    left = _keys(before, dimensions, renames, pattern, rename=True)
    right = _keys(after, dimensions, renames, pattern, rename=False)
    keep = ["group", "_key", "name", *dimensions, *fields]
    joined = (
        left.select(keep)
        .rename({"name": "beforeName", **{f: f"{f}_before" for f in fields}})
        .join(
            right.select(keep).rename(
                {"name": "afterName", "_key": "_key_after", **{f: f"{f}_after" for f in fields}}
            ),
            on="group",
            how="full",
            coalesce=True,
            nulls_equal=True,
        )
    )
    both = pl.col("beforeName").is_not_null() & pl.col("afterName").is_not_null()
    differs = pl.any_horizontal(
        [pl.col(f"{f}_before").ne_missing(pl.col(f"{f}_after")) for f in fields]
    )
    status = (
        pl.when(pl.col("beforeName").is_null())
        .then(pl.lit("added"))
        .when(pl.col("afterName").is_null())
        .then(pl.lit("removed"))
        .when(differs)
        .then(pl.lit("changed"))
        .otherwise(pl.lit("unchanged"))
    )
    changes: list[pl.Expr] = []
    for f in fields:
        b, a = pl.col(f"{f}_before"), pl.col(f"{f}_after")
        if f in additive:  # a side without the group counts 0; a side's unknown stays unknown
            delta = (
                pl.when(both).then(a - b).when(pl.col("beforeName").is_null()).then(a).otherwise(-b)
            )
        else:
            delta = a - b
        changes += [delta.alias(f"{f}_change"), relative(b, a).alias(f"{f}_relative")]
    dims = [pl.coalesce(pl.col(d), pl.col(f"{d}_right")).alias(d) for d in dimensions]
    result = joined.with_columns(*changes, status=status)
    if dimensions:
        result = result.with_columns(dims)
    ordered = [
        "group",
        "status",
        "beforeName",
        "afterName",
        *dimensions,
        *[f"{f}_{s}" for f in fields for s in ("before", "after", "change", "relative")],
    ]
    return result.select(ordered).sort(
        [pl.col(f"{impact}_change").abs(), "group"],
        descending=[True, False],
        nulls_last=True,
    )


def tile_side(summary: Summary, label: str | None = None, sha256: str | None = None) -> Side:
    """A summary as one side of a tile diff."""
    return Side(
        label=label or summary.source or "profile",
        kind="tile",
        groups=summary.groups,
        dimensions=summary.group_by,
        summary=summary,
        sha256=sha256,
        environment={"clockHz": summary.clock_hz, "tileCount": summary.tile_count},
    )


def compare_summaries(
    before: Side,
    after: Side,
    *,
    match: Sequence[str | Rename] = (),
    normalize: str | re.Pattern[str] | patterns.Pattern | None = None,
    top: int = DEFAULT_TOP,
) -> Diff:
    """The diff of two tile summaries; both must be grouped by the same dimensions."""
    if before.dimensions != after.dimensions:
        raise OptionError(
            f"{before.label} is grouped by {list(before.dimensions)} and {after.label} by "
            f"{list(after.dimensions)}; compare summaries with the same --group-by"
        )
    rows = pair(
        before,
        after,
        fields=GROUP_FIELDS,
        additive=TILE_ADDITIVE,
        impact="phaseCycles",
        dimensions=before.dimensions,
        match=match,
        normalize=normalize,
    )
    assert before.summary is not None and after.summary is not None
    header = {
        **_figure(
            "profileSpanCycles",
            before.summary.profile_span_cycles,
            after.summary.profile_span_cycles,
        ),
        **_figure("profileSpanMs", before.summary.profile_span_ms, after.summary.profile_span_ms),
        **_figure("matchedSpanCycles", matched_span(before.summary), matched_span(after.summary)),
        **_figure(
            "matchedSampleCount",
            before.summary.matched_sample_count,
            after.summary.matched_sample_count,
        ),
        **_figure("deviceBusy", device_busy(before.summary), device_busy(after.summary)),
        **sample_figures(rows),
        **_totals(rows, "phaseCycles", top),
    }
    return Diff(rows, header, before, after, GROUP_FIELDS, "phaseCycles", before.dimensions, top)


def sample_figures(rows: pl.DataFrame) -> dict[str, Any]:
    """A tile diff's samples figures, as ``call_figures`` gives a GPU diff's calls: how many
    groups both sides have hold a different number of samples (``samplesDiffer`` when any),
    and ``perSample``: the work cycles of those groups, before scaled to the after side's
    samples (Σ workCycles_before × sampleCount_after / sampleCount_before), against after;
    its relative change is the change in cycles per sample at equal samples."""
    paired = rows.filter(
        pl.col("beforeName").is_not_null()
        & pl.col("afterName").is_not_null()
        & (pl.col("sampleCount_before") > 0)
        & (pl.col("sampleCount_after") > 0)
    )
    other = paired.filter(pl.col("sampleCount_before") != pl.col("sampleCount_after")).height
    scaled = paired.select(
        (
            pl.col("workCycles_before").cast(pl.Float64)
            * pl.col("sampleCount_after")
            / pl.col("sampleCount_before")
        ).sum()
    ).item()
    after = paired.get_column("workCycles_after").cast(pl.Float64).sum()
    return {
        "samplesDiffer": other > 0,
        "groupsWithOtherSamples": other,
        **_figure(
            "perSample",
            float(scaled) if paired.height else None,
            float(after) if paired.height else None,
        ),
    }


def matched_span(summary: Summary) -> int | None:
    """Cycles from the first matched sample's start to the last one's end (the span the
    filters chose, as ``summary``'s "matched" line); null when nothing matched."""
    groups = summary.groups
    if groups.height == 0:
        return None
    first, last = groups["firstOffset"].min(), groups["lastOffset"].max()
    if not isinstance(first, int) or not isinstance(last, int):
        return None
    return last - first


def device_busy(summary: Summary) -> float | None:
    """Σ workCycles / ((max lastOffset − min firstOffset) × tileCount) over the groups.

    The groups hold exactly the matched samples, so this is the report's "device busy"
    (mean active tiles / tileCount over the matched span); null without matched work or
    without offsets.
    """
    groups = summary.groups
    if groups.height == 0:
        return None
    bounds = groups.select(
        span=pl.col("lastOffset").max() - pl.col("firstOffset").min(),
        work=pl.col("workCycles").sum(),
    ).row(0)
    if bounds[0] is None:  # a summary document may leave the offsets null
        return None
    span, work = int(bounds[0]), int(bounds[1])
    if not span:
        return None
    return work / (span * summary.tile_count)


def _figure(name: str, before: float | None, after: float | None) -> dict[str, Any]:
    change = None if before is None or after is None else after - before
    return {
        name: {
            "before": before,
            "after": after,
            "change": change,
            "relative": relative_change(before, after),
        }
    }


def _totals(rows: pl.DataFrame, impact: str, top: int, order: str | None = None) -> dict[str, Any]:
    """Net and gross change of ``impact``, the share of the ``order`` column's gross (default:
    the change of ``impact``) the top rows explain, and the count of each status."""
    delta = rows.get_column(f"{impact}_change")
    ordered = rows.get_column(order or f"{impact}_change")
    known = delta.null_count() == 0 and ordered.null_count() == 0
    gross = float(ordered.abs().sum())
    top_gross = float(ordered.head(top).abs().sum())
    counts = rows.get_column("status").value_counts()
    by_status = dict(zip(counts["status"].to_list(), counts["count"].to_list(), strict=True))
    return {
        f"{impact}NetChange": delta.sum() if known else None,
        f"{impact}GrossChange": delta.abs().sum() if known else None,
        "topGroups": min(top, rows.height),
        "topShare": top_gross / gross if gross and known else None,
        "groups": {s: by_status.get(s, 0) for s in STATUSES},
    }


def gpu_groups(runs: pl.DataFrame, *, per_op: bool = False) -> pl.DataFrame:
    """One row per kernel (or per launching op) of a run table, with ``GPU_FIELDS``.

    A row whose source gives no total_us (a run table of ``time_us`` and ``calls``) has
    time_us × calls, its time over all calls; one with neither total_us nor calls has none.
    A name with one row keeps that row's numbers unchanged. Several rows of one name (the
    same kernel on two devices, or every kernel of one op) add their calls and total_us
    (null when a row has none: a partial sum would be a smaller total, not an unknown one),
    time_us is total_us / calls, max_us the largest, and p50/p95 are null: percentiles of
    separate rows do not combine. The name is ``_run_name``'s.
    """
    several_targets = runs.get_column("target").n_unique() > 1
    name = _run_name(pl.col("launch_op") if per_op else pl.col("kernel"), several_targets)
    total = pl.coalesce(pl.col("total_us"), pl.col("time_us") * pl.col("calls"))
    frame = runs.with_columns(name=name, total_us=total)
    single = pl.len() == 1
    total_sum, calls_sum = known_sum("total_us"), known_sum("calls")
    grouped = frame.group_by("name").agg(
        calls=calls_sum,
        total_us=total_sum,
        time_us=pl.when(single).then(pl.col("time_us").first()).otherwise(total_sum / calls_sum),
        p50_us=pl.when(single).then(pl.col("p50_us").first()),
        p95_us=pl.when(single).then(pl.col("p95_us").first()),
        max_us=pl.col("max_us").max(),
    )
    return grouped.sort("total_us", "name", descending=[True, False], nulls_last=True)


def _run_name(kernel: pl.Expr, several_targets: bool) -> pl.Expr:
    """A run-table row's diff name: the kernel (or launching op); for a row that names a run
    (its workload or implementation given: benchmarks, energy reports, a run table) also the
    workload, implementation and shape, and the target when the side holds several, so that
    distinct runs neither add up nor pair as one; then what one time_us covers when that is
    not a call (``(per step)``): times per step and per call are different quantities.
    """
    run = [pl.col("workload"), pl.col("implementation"), pl.col("shape")]
    run += [pl.col("target")] if several_targets else []
    names_run = pl.col("workload").is_not_null() | pl.col("implementation").is_not_null()
    detail = pl.when(names_run).then(pl.concat_str(run, separator=" · ", ignore_nulls=True))
    name = pl.concat_str([kernel, detail], separator=" · ", ignore_nulls=True)
    per = pl.col("per")
    unit = pl.when(per.is_not_null() & (per != "call")).then(pl.format(" (per {})", per))
    return pl.concat_str([name.fill_null("(no name)"), unit.otherwise(pl.lit(""))])


def op_groups(ops: pl.DataFrame) -> pl.DataFrame:
    """One row per op row of ``tileprof.analyses.ops`` (a trace's ops), named ``op dims types``,
    with
    ``OP_FIELDS`` as the op table has them; `` @ target`` is added to the names that several
    targets share (a GPU op and the same op timed on the CPU)."""
    return ops.select(_op_name(), *OP_FIELDS)


def _op_name() -> pl.Expr:
    """An op row's diff name: ``op dims types``, with `` @ target`` where several targets
    share it (the same expression over rows or over their calls)."""
    parts = [pl.col("op"), pl.col("input_dims").fill_null(""), pl.col("input_types").fill_null("")]
    base = pl.concat_str(parts, separator=" ").str.strip_chars()
    shared = pl.col("target").n_unique().over(base) > 1
    return (
        pl.when(shared)
        .then(pl.concat_str([base, pl.lit(" @ "), pl.col("target")]))
        .otherwise(base)
        .alias("name")
    )


def op_call_durations(calls: pl.DataFrame) -> pl.DataFrame:
    """Each op call that ran GPU work, named as its row (``op_groups``), with ``value`` its
    GPU time (µs): the evidence behind an op row's time per call."""
    ran = calls.filter(~pl.col("without_gpu").fill_null(False))
    return ran.select(_op_name(), pl.col("us").cast(pl.Float64).alias("value"))


def compare_runs(
    before: Side,
    after: Side,
    *,
    match: Sequence[str | Rename] = (),
    normalize: str | re.Pattern[str] | patterns.Pattern | None = None,
    top: int = DEFAULT_TOP,
) -> Diff:
    """The diff of two GPU sides' kernel (or op) rows, sorted by the change in total_us that
    their call counts do not explain (docs/metrics.md, "Diff", "Calls and time per call")."""
    per_op = "kernels" in before.groups.columns
    fields = OP_FIELDS if per_op else GPU_FIELDS
    rows = call_effects(
        pair(
            before,
            after,
            fields=fields,
            additive=OP_ADDITIVE if per_op else GPU_ADDITIVE,
            impact="total_us",
            match=match,
            normalize=normalize,
        )
    )
    total = {
        s: side.groups.select(known_sum("total_us")).item()
        for s, side in (("before", before), ("after", after))
    }
    header = {
        **_figure("totalUs", total["before"], total["after"]),
        **call_figures(rows, before, after),
        **_totals(rows, "total_us", top, ORDER),
    }
    return Diff(rows, header, before, after, fields, "total_us", (), top)


ORDER = "time_effect_us"
"""The column a GPU diff's rows are sorted by."""


def call_effects(rows: pl.DataFrame) -> pl.DataFrame:
    """The rows with the change in total_us split in two, sorted by |``time_effect_us``|.

    ``count_effect_us``: for a group both sides have, with calls on both (> 0), what its
    change in calls explains: (calls_after − calls_before) × total_us_before / calls_before;
    0 when either side has no calls; null for an added or removed group.
    ``time_effect_us``: the rest of ``total_us_change``: calls_after × (µs per call after −
    µs per call before) for a group both sides have (µs per call = total_us / calls), the
    whole change for an added or removed group (new or gone work, not a count of the same).
    """
    calls_b, calls_a = pl.col("calls_before"), pl.col("calls_after")
    total_b = pl.col("total_us_before")
    both = pl.col("beforeName").is_not_null() & pl.col("afterName").is_not_null()
    counted = both & (calls_b > 0) & (calls_a > 0) & total_b.is_not_null()
    count = (
        pl.when(counted)
        .then((calls_a - calls_b).cast(pl.Float64) * total_b / calls_b.cast(pl.Float64))
        .when(both)
        .then(pl.lit(0.0))
        .otherwise(pl.lit(None, pl.Float64))
    )
    rows = rows.with_columns(count.alias("count_effect_us"))
    time = pl.col("total_us_change") - pl.col("count_effect_us").fill_null(0.0)
    return rows.with_columns(time.alias(ORDER)).sort(
        [pl.col(ORDER).abs(), "group"], descending=[True, False], nulls_last=True
    )


def call_figures(rows: pl.DataFrame, before: Side, after: Side) -> dict[str, Any]:
    """The header's calls figures: Σ calls per side, how many groups both sides have ran a
    different number of times (``callsDiffer`` when any), the split of the change in total µs
    (``countEffectUs``, ``timeEffectUs``, of which ``oneSideUs`` is the added and removed
    groups'), and ``perCall``: the time of the groups both sides
    have, before scaled to the after side's calls, against after (its relative change is
    the change in time per call at equal calls)."""
    paired = rows.filter(
        pl.col("beforeName").is_not_null()
        & pl.col("afterName").is_not_null()
        & (pl.col("calls_before") > 0)
        & (pl.col("calls_after") > 0)
    )
    other = paired.filter(pl.col("calls_before") != pl.col("calls_after")).height
    scaled = paired.select(
        (pl.col("total_us_before") * pl.col("calls_after") / pl.col("calls_before")).sum()
    ).item()
    calls = {
        s: side.groups.select(known_sum("calls")).item()
        for s, side in (("before", before), ("after", after))
    }
    return {
        **_figure("calls", calls["before"], calls["after"]),
        "callsDiffer": other > 0,
        "groupsWithOtherCalls": other,
        "countEffectUs": float(rows.get_column("count_effect_us").fill_null(0).sum()),
        "timeEffectUs": float(rows.get_column(ORDER).fill_null(0).sum()),
        "oneSideUs": float(
            rows.filter(pl.col("count_effect_us").is_null())
            .get_column("total_us_change")
            .fill_null(0)
            .sum()
        ),
        **_figure(
            "perCall",
            float(scaled) if paired.height else None,
            float(paired.get_column("total_us_after").sum()) if paired.height else None,
        ),
    }


def kernel_globs_filter(
    groups: pl.DataFrame, kernels: Sequence[str], column: str = "name"
) -> pl.DataFrame:
    """The groups (or run-table rows, by ``column``) whose name matches any ``--kernel`` glob
    (all of them when none is given)."""
    if not kernels:
        return groups
    names = groups.get_column(column).to_list()
    keep = [any(fnmatch.fnmatchcase(str(n), k) for k in kernels) for n in names]
    return groups.filter(pl.Series(keep, dtype=pl.Boolean))
