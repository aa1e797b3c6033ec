"""Golden aggregates: the per-group statistics a test pins, and their stable file format.

A golden file is reviewed in pull requests, so its bytes must only change when a number
does: keys are sorted, floats are written with Python's shortest round-trip ``repr`` (the
same text on every platform, and exact, so a golden compared at ``rtol=0`` is exact),
integers stay integers, two-space indentation and a trailing newline.

Layout::

    {
      "format": "tileprof-aggregates/1",
      "groups": {"<group>": {"<field>": value, ...}, ...},
      "header": {"clockHz": ..., "matchedSampleCount": ..., ...},
      "dump": "spec.json",            # optional: what the aggregates are computed from
      "thresholds": ["usefulUtilization of gemm_f16_* may not drop by more than 2%"]
    }

``thresholds`` and ``dump`` are written by people; regeneration keeps them as they are.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.core.errors import InputError
from tileprof.testing.thresholds import Threshold

if TYPE_CHECKING:
    from tileprof.analyses.summary import Summary
    from tileprof.model.profile import Profile

GOLDEN_FORMAT = "tileprof-aggregates/1"
HEADER_FIELDS: tuple[str, ...] = (
    "clockHz",
    "tileCount",
    "sampleCount",
    "matchedSampleCount",
    "profileSpanCycles",
)
"""Top-level summary fields a golden file pins besides the groups."""

Value = int | float | None


@dataclass(frozen=True)
class Aggregates:
    """Per-group statistics keyed by group, the summary header, and declared thresholds."""

    groups: dict[str, dict[str, Value]]
    header: dict[str, Value] = field(default_factory=dict)
    thresholds: tuple[Threshold, ...] = ()
    dump: str | None = None

    def to_json(self) -> str:
        """The golden file text (stable: see the module docstring)."""
        document: dict[str, Any] = {
            "format": GOLDEN_FORMAT,
            "groups": self.groups,
            "header": self.header,
        }
        if self.dump is not None:
            document["dump"] = self.dump
        if self.thresholds:
            document["thresholds"] = [t.to_json() for t in self.thresholds]
        return stable_json(document) + "\n"

    @classmethod
    def from_json(cls, text: str, source: str | Path | None = None) -> Aggregates:
        """Parse a golden file's text; errors name the file and the key."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(source, f"line {exc.lineno}", f"invalid JSON: {exc.msg}") from None
        if not isinstance(data, Mapping) or data.get("format") != GOLDEN_FORMAT:
            raise InputError(source, "format", f"not a golden aggregates file ({GOLDEN_FORMAT})")
        groups = data.get("groups")
        if not isinstance(groups, Mapping) or not all(
            isinstance(v, Mapping) for v in groups.values()
        ):
            raise InputError(source, "groups", "expected an object of group: {field: value}")
        thresholds_raw = data.get("thresholds", [])
        if not isinstance(thresholds_raw, list):
            raise InputError(source, "thresholds", "expected a list")
        try:
            thresholds = tuple(Threshold.coerce(t) for t in thresholds_raw)
        except ValueError as exc:
            raise InputError(source, "thresholds", str(exc)) from None
        dump = data.get("dump")
        return cls(
            groups={str(k): dict(v) for k, v in groups.items()},
            header=dict(data.get("header", {})),
            thresholds=thresholds,
            dump=None if dump is None else str(dump),
        )

    @classmethod
    def load(cls, path: str | Path) -> Aggregates:
        """Read a golden file."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise InputError(path, None, "no such golden aggregates file") from None
        return cls.from_json(text, path)


def group_key(name: str, dimensions: Mapping[str, Any]) -> str:
    """A group's key in a golden file: its name, plus ``[dim=value, …]`` under ``--group-by``."""
    if not dimensions:
        return name
    return f"{name}[{', '.join(f'{k}={v}' for k, v in dimensions.items())}]"


def aggregates_of(actual: Aggregates | Summary | Profile | Mapping[str, Any]) -> Aggregates:
    """The aggregates of a summary, a profile (unfiltered), or a summary document.

    A summary document is the ``tileprof summary --format json`` layout (seed 004's), so a
    stored reference summary can serve as a golden directly.
    """
    from tileprof.analyses.summary import Summary
    from tileprof.model.profile import Profile

    if isinstance(actual, Aggregates):
        return actual
    if isinstance(actual, Profile):
        actual = actual.summary()
    document = actual.to_document() if isinstance(actual, Summary) else actual
    groups: dict[str, dict[str, Value]] = {}
    for record in document.get("groups", []):
        key = group_key(str(record["name"]), record.get("dimensions") or {})
        if key in groups:
            raise ValueError(f"two groups share the key {key!r}")
        groups[key] = {name: record.get(name) for name in GROUP_FIELDS if name in record}
    header = {name: document[name] for name in HEADER_FIELDS if name in document}
    return Aggregates(groups=groups, header=header)


def _scalar(value: Any) -> str:
    if value is None or isinstance(value, bool | str):
        return json.dumps(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise ValueError(f"golden files hold finite numbers only, not {value!r}")
        return repr(value)
    raise TypeError(f"cannot write {type(value).__name__} to a golden file")


def stable_json(value: Any, indent: int = 0) -> str:
    """JSON with sorted keys, ``repr`` floats and two-space indentation (no trailing newline)."""
    pad = "  " * (indent + 1)
    if isinstance(value, Mapping):
        if not value:
            return "{}"
        items = [
            f"{pad}{json.dumps(str(k))}: {stable_json(value[k], indent + 1)}"
            for k in sorted(value, key=str)
        ]
        return "{\n" + ",\n".join(items) + "\n" + "  " * indent + "}"
    if isinstance(value, Sequence) and not isinstance(value, str):
        if not value:
            return "[]"
        items = [f"{pad}{stable_json(v, indent + 1)}" for v in value]
        return "[\n" + ",\n".join(items) + "\n" + "  " * indent + "]"
    if hasattr(value, "item"):  # numpy scalars
        value = value.item()
    return _scalar(value)
