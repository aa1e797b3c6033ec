"""Threshold sentences: how far one statistic of some groups may move before a check fails.

Written as the sentence a reviewer would say — "usefulUtilization of gemm_f16_* may not drop
by more than 2%" — so the same text works in a pytest golden file, in ``tileprof diff
--fail-on`` and in ``tileprof history --fail-on``, and reads the same in a failure message.
This module is the one parser and evaluator for all of them; it is pure (no pytest, no I/O).

Within its bound a change passes, and a change in the allowed direction (an improvement)
passes. ``evaluate`` checks sentences against two per-group tables; a sentence naming a
field that does not exist, or whose glob matches no group on either side, is an error
rather than a silent pass (a typo would otherwise check nothing).
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.core import numbers

Number = int | float
Value = int | float | None
GroupValues = Mapping[str, Mapping[str, Value]]
"""Group name → statistic name → value (null when undefined), one profile's groups."""

_SENTENCE = re.compile(
    r"^\s*(?P<field>\w+)(?:\s+of\s+(?P<groups>\S+))?\s+may\s+not\s+"
    r"(?P<direction>drop|rise|change)\s+by\s+more\s+than\s+"
    r"(?P<amount>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%\s*$"
)


def relative_change(old: Number | None, new: Number | None) -> float | None:
    """``(new - old) / |old|``: -0.02 is a 2% drop. None when either side is undefined.

    From an old value of zero, no change is 0.0 and any change is ±inf: no finite percentage
    describes it, and an infinite one fails every finite threshold, which is what a check wants.
    """
    if old is None or new is None:
        return None
    if old == new:
        return 0.0
    if old == 0:
        return math.copysign(math.inf, new)
    return (new - old) / abs(old)


class ThresholdError(ValueError):
    """A sentence that cannot be read, names an unknown field, or matches no group."""


def check_fields(
    names: Iterable[str], where: str = "", fields: Sequence[str] = GROUP_FIELDS
) -> None:
    """Fail loudly (``ThresholdError`` naming the valid fields) on a field that is not one of
    ``fields`` (default: the tile group statistics): a misspelt field would compare nothing.
    """
    unknown = [n for n in dict.fromkeys(names) if n not in fields]
    if unknown:
        kind = "group fields" if tuple(fields) == GROUP_FIELDS else "fields"
        raise ThresholdError(
            f"unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"
            f"{where}; the {kind} are {', '.join(fields)}"
        )


@dataclass(frozen=True)
class Threshold:
    """``field`` of the groups matching ``groups`` (a glob) may not drop/rise beyond a fraction.

    ``max_drop=0.02`` fails a change below -2%; ``max_rise=0.05`` one above +5%. Either may be
    None (unbounded in that direction).
    """

    field: str
    groups: str = "*"
    max_drop: float | None = None
    max_rise: float | None = None

    def __post_init__(self) -> None:
        if self.max_drop is None and self.max_rise is None:
            raise ThresholdError(f"threshold on {self.field} bounds nothing")
        for bound in (self.max_drop, self.max_rise):
            if bound is not None and not (math.isfinite(bound) and bound >= 0):
                raise ThresholdError(f"threshold bounds are fractions ≥ 0, got {bound!r}")

    @classmethod
    def parse(cls, text: str) -> Threshold:
        """``"<field> [of <glob>] may not (drop|rise|change) by more than <N>%"``."""
        match = _SENTENCE.match(text)
        if match is None:
            raise ThresholdError(
                f"cannot read threshold {text!r}; write e.g. "
                "'usefulUtilization of gemm_f16_* may not drop by more than 2%'"
            )
        amount = float(match["amount"]) / 100
        direction = match["direction"]
        return cls(
            field=match["field"],
            groups=match["groups"] or "*",
            max_drop=amount if direction in ("drop", "change") else None,
            max_rise=amount if direction in ("rise", "change") else None,
        )

    @classmethod
    def coerce(cls, value: Threshold | str | Mapping[str, Any]) -> Threshold:
        """A threshold from itself, its sentence, or a mapping of its fields."""
        if isinstance(value, Threshold):
            return value
        if isinstance(value, str):
            return cls.parse(value)
        if isinstance(value, Mapping):
            return cls(**value)
        raise ThresholdError(f"cannot read threshold {value!r}")

    def matches(self, group: str, field: str) -> bool:
        """Whether this threshold covers ``field`` of ``group``."""
        return field == self.field and fnmatch.fnmatchcase(group, self.groups)

    def allows(self, old: Number | None, new: Number | None) -> bool:
        """Whether a move from ``old`` to ``new`` stays within the bound.

        A value that becomes undefined fails; one that becomes defined has no baseline and
        passes.
        """
        if old is None:
            return True
        if new is None:
            return False
        change = relative_change(old, new)
        assert change is not None
        if self.max_drop is not None and change < -self.max_drop:
            return False
        return not (self.max_rise is not None and change > self.max_rise)

    def describe_limit(self) -> str:
        """The bound as a short table cell: ``drop ≤ 2%``."""
        parts = []
        if self.max_drop is not None:
            parts.append(f"drop ≤ {self.max_drop * 100:g}%")
        if self.max_rise is not None:
            parts.append(f"rise ≤ {self.max_rise * 100:g}%")
        return ", ".join(parts)

    def to_json(self) -> str | dict[str, Any]:
        """Its sentence, or a mapping when the bounds differ in size (no sentence says that)."""
        text = str(self)
        if _SENTENCE.match(text):
            return text
        return {k: v for k, v in vars(self).items() if v is not None}

    def __str__(self) -> str:
        scope = "" if self.groups == "*" else f" of {self.groups}"
        if self.max_drop is not None and self.max_drop == self.max_rise:
            verb, amount = "change", self.max_drop
        elif self.max_drop is not None and self.max_rise is None:
            verb, amount = "drop", self.max_drop
        elif self.max_rise is not None and self.max_drop is None:
            verb, amount = "rise", self.max_rise
        else:
            return f"{self.field}{scope}: {self.describe_limit()}"
        return f"{self.field}{scope} may not {verb} by more than {amount * 100:g}%"


def parse_thresholds(
    sentences: Iterable[Threshold | str | Mapping[str, Any]],
    fields: Sequence[str] = GROUP_FIELDS,
) -> list[Threshold]:
    """Read every sentence and check its field is one of ``fields``; the first bad one raises."""
    rules = [Threshold.coerce(s) for s in sentences]
    for rule in rules:
        check_fields([rule.field], f" in threshold {str(rule)!r}", fields)
    return rules


@dataclass(frozen=True)
class Breach:
    """One group's statistic that moved beyond a threshold."""

    threshold: Threshold
    group: str
    field: str
    old: Value
    new: Value

    @property
    def change(self) -> float | None:
        """Relative change new vs old (None when either is null)."""
        return relative_change(self.old, self.new)

    def __str__(self) -> str:
        """One line: what moved, from what to what, and the sentence it broke."""
        change = self.change
        moved = "became null" if change is None else numbers.percent(change, signed=True)
        return (
            f"{self.field} of {self.group}: {_shown(self.old)} → {_shown(self.new)} "
            f"({moved}) breaks {str(self.threshold)!r}"
        )


def _shown(value: Value) -> str:
    return numbers.exact(value)


def evaluate(
    thresholds: Iterable[Threshold | str],
    before: GroupValues,
    after: GroupValues,
    *,
    fields: Sequence[str] = GROUP_FIELDS,
) -> list[Breach]:
    """Every group statistic that breaks a threshold, in sentence order then group order.

    Only groups present on both sides are checked: an added group has no baseline and a
    removed one has no new value. Raises ``ThresholdError`` for an unknown field or for a
    glob that matches no group on either side. ``fields``: the statistics a sentence may name
    (default: the tile group statistics; a GPU diff passes its own).
    """
    rules = parse_thresholds(thresholds, fields)
    names = sorted(set(before) | set(after))
    breaches: list[Breach] = []
    for rule in rules:
        covered = [g for g in names if rule.matches(g, rule.field)]
        if not covered:
            raise ThresholdError(f"threshold {str(rule)!r} matches no group on either side")
        for group in covered:
            if group not in before or group not in after:
                continue
            old, new = before[group].get(rule.field), after[group].get(rule.field)
            if not rule.allows(old, new):
                breaches.append(Breach(rule, group, rule.field, old, new))
    return breaches
