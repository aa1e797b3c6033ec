"""Thresholds: how far one field of some groups may move before a test fails.

Written as the sentence a reviewer would say — "usefulUtilization of gemm_f16_* may not drop
by more than 2%" — so the same text works in code, in a golden file, and in a failure
message. A threshold replaces the comparison's ``rtol`` for the cells it covers: within
its bound a change passes, and a change in the allowed direction (an improvement) passes.
"""

from __future__ import annotations

import fnmatch
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tileprof.testing.numbers import Number, relative_change

_SENTENCE = re.compile(
    r"^\s*(?P<field>\w+)(?:\s+of\s+(?P<groups>\S+))?\s+may\s+not\s+"
    r"(?P<direction>drop|rise|change)\s+by\s+more\s+than\s+"
    r"(?P<amount>[0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*%\s*$"
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
            raise ValueError(f"threshold on {self.field} bounds nothing")
        for bound in (self.max_drop, self.max_rise):
            if bound is not None and not (math.isfinite(bound) and bound >= 0):
                raise ValueError(f"threshold bounds are fractions ≥ 0, got {bound!r}")

    @classmethod
    def parse(cls, text: str) -> Threshold:
        """``"<field> [of <glob>] may not (drop|rise|change) by more than <N>%"``."""
        match = _SENTENCE.match(text)
        if match is None:
            raise ValueError(
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
        raise ValueError(f"cannot read threshold {value!r}")

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
