"""The links file's typed content: named sets of runs to link, classifications to override.

``tileprof.inputs.links_file`` reads and checks a TOML links file into ``Links``;
``tileprof.analyses.links`` applies it to the run table (docs/runs.md, "Links").
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

MATCH_COLUMNS: tuple[str, ...] = (
    "target",
    "target_kind",
    "device",
    "source",
    "workload",
    "implementation",
    "kernel",
    "op_family",
    "dtype",
    "shape",
    "launch_op",
)
SETTABLE_COLUMNS: tuple[str, ...] = ("op_family", "dtype", "workload")


# Match and set values are typed Any here and checked by hand, so that a wrong value is reported
# at its key (``$.link[0].match[0].kernel``), which msgspec cannot name inside a dict.
class Link(msgspec.Struct, forbid_unknown_fields=True):
    name: str
    match: list[dict[str, Any]]
    # true: the runs do the same work, so their times and speedups are compared; false (the
    # default): only their efficiency is
    same_work: bool = False


class Override(msgspec.Struct, forbid_unknown_fields=True):
    match: dict[str, Any]
    set: dict[str, Any]


class LinksFile(msgspec.Struct, forbid_unknown_fields=True):
    link: list[Link] = msgspec.field(default_factory=list)
    override: list[Override] = msgspec.field(default_factory=list)


@dataclass(frozen=True)
class Links:
    """A parsed links file."""

    links: tuple[Link, ...] = ()
    overrides: tuple[Override, ...] = ()
