"""``assert_aggregates_match``: one assertion that reads like a review comment when it fails.

A kernel author whose CI goes red wants to see at once which group and which statistic
moved, from what to what and by how much — not a 400-line dict diff. The failure message is
a table of exactly the cells that broke their rule (``rtol``/``atol`` or a threshold), plus
the groups that appeared or disappeared, plus thresholds that match no group (a typo in a
glob would otherwise silently check nothing).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.analyses.thresholds import Threshold, check_fields
from tileprof.core import numbers
from tileprof.testing.aggregates import HEADER_FIELDS, Aggregates, Value, aggregates_of
from tileprof.testing.golden import GoldenFile, shown
from tileprof.testing.numbers import format_change, relative_change, within_tolerance

if TYPE_CHECKING:
    from typing import TypeAlias

    from tileprof.analyses.summary import Summary
    from tileprof.model.profile import Profile

    ActualLike: TypeAlias = Aggregates | Summary | Profile | Mapping[str, Any]
    ReferenceLike: TypeAlias = Aggregates | GoldenFile | str | Path | Mapping[str, Any]

HEADER_GROUP = "(profile)"
"""The row label of header fields (sampleCount, …) in the diff table."""

DEFAULT_RTOL = 1e-9
"""Tight enough to catch any real change, loose enough for float summation order."""


@dataclass(frozen=True)
class DiffRow:
    """One cell that broke its rule."""

    group: str
    field: str
    old: Value
    new: Value
    limit: str

    @property
    def change(self) -> float | None:
        """Relative change new vs old (None when either is null)."""
        return relative_change(self.old, self.new)


class AggregatesMismatch(AssertionError):
    """Raised by ``assert_aggregates_match``; the message is the diff table."""

    def __init__(
        self,
        reference: str,
        rows: Sequence[DiffRow],
        appeared: Sequence[str],
        disappeared: Sequence[str],
        unmatched: Sequence[Threshold],
        hint: str,
    ) -> None:
        self.reference = reference
        self.rows = list(rows)
        self.appeared = list(appeared)
        self.disappeared = list(disappeared)
        self.unmatched = list(unmatched)
        super().__init__(self.render(hint))

    def render(self, hint: str = "") -> str:
        """The readable report: header line, table, appeared/disappeared groups, hint."""
        lines = [f"aggregates differ from {self.reference}:"]
        if self.rows:
            table = [("group", "field", "old", "new", "change", "limit")]
            table += [
                (r.group, r.field, _cell(r.old), _cell(r.new), format_change(r.change), r.limit)
                for r in self.rows
            ]
            widths = [max(len(row[i]) for row in table) for i in range(len(table[0]))]
            for row in table:
                cells = [
                    c.rjust(w) if 2 <= i <= 4 else c.ljust(w)
                    for i, (c, w) in enumerate(zip(row, widths, strict=True))
                ]
                lines.append("  " + "  ".join(cells).rstrip())
        if self.appeared:
            lines.append(f"  appeared ({len(self.appeared)}): {', '.join(self.appeared)}")
        if self.disappeared:
            lines.append(f"  disappeared ({len(self.disappeared)}): {', '.join(self.disappeared)}")
        lines.extend(f"  threshold matches no group: {t}" for t in self.unmatched)
        if hint:
            lines.append(hint)
        return "\n".join(lines)


def _cell(value: Value) -> str:
    return numbers.exact(value)  # enough digits to see a last-place change, short enough to read


def _reference(reference: ReferenceLike) -> tuple[Aggregates, str]:
    if isinstance(reference, GoldenFile):
        return reference.load(), shown(reference.path)
    if isinstance(reference, str | Path):
        return Aggregates.load(reference), shown(Path(reference))
    if isinstance(reference, Aggregates):
        return reference, "the reference aggregates"
    return aggregates_of(reference), "the reference summary"


def compare_aggregates(
    actual: ActualLike,
    reference: Aggregates,
    *,
    rtol: float = DEFAULT_RTOL,
    atol: float = 0.0,
    fields: Iterable[str] | None = None,
    thresholds: Iterable[Threshold | str] = (),
    header: bool = True,
) -> tuple[list[DiffRow], list[str], list[str], list[Threshold]]:
    """Cells that broke their rule, appeared and disappeared groups, unmatched thresholds."""
    current = aggregates_of(actual)
    rules = [*reference.thresholds, *(Threshold.coerce(t) for t in thresholds)]
    compared = list(GROUP_FIELDS if fields is None else fields)
    check_fields(compared, " in fields=")
    for rule in rules:
        check_fields([rule.field], f" in threshold {str(rule)!r}")
    compared += [t.field for t in rules if t.field not in compared]
    rows: list[DiffRow] = []
    used: set[int] = set()
    for group in sorted(set(reference.groups) & set(current.groups)):
        old_fields, new_fields = reference.groups[group], current.groups[group]
        for name in compared:
            if name not in old_fields:
                continue  # a golden written before the field existed pins nothing for it
            old, new = old_fields[name], new_fields.get(name)
            covering = [i for i, t in enumerate(rules) if t.matches(group, name)]
            used.update(covering)
            if covering:
                broken = [rules[i] for i in covering if not rules[i].allows(old, new)]
                if broken:
                    limit = "; ".join(t.describe_limit() for t in broken)
                    rows.append(DiffRow(group, name, old, new, limit))
            elif not within_tolerance(old, new, rtol, atol):
                rows.append(DiffRow(group, name, old, new, _tolerance(rtol, atol)))
    if header:
        for name in HEADER_FIELDS:
            if name in reference.header:
                old, new = reference.header[name], current.header.get(name)
                if not within_tolerance(old, new, rtol, atol):
                    rows.append(DiffRow(HEADER_GROUP, name, old, new, _tolerance(rtol, atol)))
    appeared = sorted(set(current.groups) - set(reference.groups))
    disappeared = sorted(set(reference.groups) - set(current.groups))
    unmatched = [
        t
        for i, t in enumerate(rules)
        if i not in used and not any(t.matches(g, t.field) for g in reference.groups)
    ]
    return rows, appeared, disappeared, unmatched


def _tolerance(rtol: float, atol: float) -> str:
    parts = [f"rtol {rtol:g}"] if rtol else []
    if atol:
        parts.append(f"atol {atol:g}")
    return ", ".join(parts) or "exact"


def assert_aggregates_match(
    actual: ActualLike,
    reference: ReferenceLike,
    *,
    rtol: float = DEFAULT_RTOL,
    atol: float = 0.0,
    fields: Iterable[str] | None = None,
    thresholds: Iterable[Threshold | str] = (),
    header: bool = True,
) -> None:
    """Fail with a per-group, per-field diff table unless ``actual`` matches ``reference``.

    ``actual``: a ``Summary`` (usually ``profile.summary(...)``), a ``Profile`` (summarised
    unfiltered), a summary document or ``Aggregates``. ``reference``: what the
    ``reference_aggregates`` fixture returns, a golden file path, ``Aggregates`` or a summary
    document. ``fields`` limits the group statistics compared (default: all); ``header``
    also compares sample counts, span and device. ``thresholds`` (objects or sentences such as
    ``"usefulUtilization of gemm_f16_* may not drop by more than 2%"``) add to those in the
    golden file and replace ``rtol``/``atol`` for the cells they cover.

    Under ``pytest --tileprof-regen`` a golden file from the fixture is rewritten from
    ``actual`` instead, and nothing is compared.
    """
    __tracebackhide__ = True  # pytest shows the caller's line and the table, not this body
    if fields is not None:
        fields = list(fields)
        check_fields(fields, " in fields=")
    rules = [Threshold.coerce(t) for t in thresholds]
    for rule in rules:
        check_fields([rule.field], f" in threshold {str(rule)!r}")
    if isinstance(reference, GoldenFile) and reference.regen is not None:
        reference.regenerate(aggregates_of(actual))
        return
    if isinstance(reference, GoldenFile) and not reference.exists():
        raise AssertionError(
            f"no golden aggregates at {shown(reference.path)}; "
            "run `pytest --tileprof-regen` to create it from the current dump"
        )
    pinned, label = _reference(reference)
    rows, appeared, disappeared, unmatched = compare_aggregates(
        actual,
        pinned,
        rtol=rtol,
        atol=atol,
        fields=fields,
        thresholds=rules,
        header=header,
    )
    if rows or appeared or disappeared or unmatched:
        hint = (
            "If the change is intended, run `pytest --tileprof-regen` and review the golden diff."
            if isinstance(reference, GoldenFile)
            else ""
        )
        raise AggregatesMismatch(label, rows, appeared, disappeared, unmatched, hint)
