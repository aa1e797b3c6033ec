"""How much of each side of a diff is work the other side also does (docs/metrics.md, "Diff",
"Shared work").

A diff's per-call and per-group figures compare the groups both sides have. When those hold
little of either side's time (two models, a library that renamed its kernels, a capture of
another phase), every such figure speaks for a small part of two different workloads, and a
headline such as "-90% per call" invites the conclusion that the program got faster. The
note here is said first, beside the setup note, so that a reader knows what was compared.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from tileprof.analyses.diff import Diff
from tileprof.core.numbers import number, percent

SHARED_WORK_FLOOR = 0.5
"""Below this share of either side's time in the groups both sides have, a diff says that its
sides mostly run different groups."""

_IMPACT_NAMES = {"total_us": "total µs", "phaseCycles": "phase cycles"}
"""A diff's impact (``Diff.impact``: a GPU diff's or a tile diff's) as the note names it."""


@dataclass(frozen=True)
class SharedWork:
    """The groups both sides of a diff have, and their share of each side's time."""

    groups: int
    """Groups both sides have (status ``changed`` or ``unchanged``)."""
    of: int
    """Every group of either side."""
    before: float | None
    """Σ impact_before over those groups / Σ impact_before over the before side's groups;
    None when a value is unknown or the side's sum is not positive."""
    after: float | None
    """The same of the after side."""

    def document(self) -> dict[str, float | int | None]:
        """``{"groups", "of", "beforeShare", "afterShare"}`` (``diff --format json``)."""
        return {
            "groups": self.groups,
            "of": self.of,
            "beforeShare": self.before,
            "afterShare": self.after,
        }


def shared_work(diff: Diff) -> SharedWork:
    """The shared groups of ``diff`` (every row, not only those shown) and their shares."""
    rows = diff.rows
    both = pl.col("beforeName").is_not_null() & pl.col("afterName").is_not_null()
    shares = [
        _share(rows, pl.col(f"{side}Name").is_not_null(), both, f"{diff.impact}_{side}")
        for side in ("before", "after")
    ]
    return SharedWork(rows.filter(both).height, rows.height, shares[0], shares[1])


def _share(rows: pl.DataFrame, present: pl.Expr, both: pl.Expr, column: str) -> float | None:
    """Σ ``column`` over the shared rows / Σ over the rows of the side (``present``)."""
    side = rows.filter(present).get_column(column)
    if side.null_count() or side.len() == 0:
        return None
    total = float(side.sum())
    if total <= 0:
        return None
    return float(rows.filter(both).get_column(column).sum()) / total


def work_note(diff: Diff, shared: SharedWork | None = None) -> str | None:
    """``mostly different groups: …``, said first when the groups both sides have hold less
    than ``SHARED_WORK_FLOOR`` of either side's time, with what pairs more of them; None
    otherwise, or when a share is not known."""
    shared = shared or shared_work(diff)
    if shared.before is None or shared.after is None:
        return None
    if min(shared.before, shared.after) >= SHARED_WORK_FLOOR:
        return None
    what = _IMPACT_NAMES[diff.impact]
    groups, hold = ("group", "holds") if shared.groups == 1 else ("groups", "hold")
    pairing = "--match or --normalize pair groups that were renamed"
    if diff.impact == "total_us" and "kernels_before" not in diff.rows.columns:
        pairing += ", --per-op compares PyTorch traces op by op"
    return (
        f"mostly different groups: the {number(shared.groups)} {groups} of "
        f"{number(shared.of)} that both sides have {hold} {percent(shared.before)} of before's "
        f"{what} and {percent(shared.after)} of after's, and each change below compares only "
        f"that part (the rest is added or removed); {pairing}"
    )
