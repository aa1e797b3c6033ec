"""``tileprof.ops``: the op rows of a PyTorch profiler trace, read once and analysed.

The trace is read and decoded by the input layer (``tileprof.inputs.sources.read_kineto_events``)
and its op rows computed by ``tileprof.analyses.ops.op_rows``; this module joins the two for
``runs --ops``, ``diff --per-op`` and the public ``tileprof.ops.load_ops``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tileprof.analyses.ops import OP_SCHEMA, ParsedOps, op_rows
from tileprof.model.naming import display_names, renamed_rows

if TYPE_CHECKING:
    from tileprof.model.engines import Engine

__all__ = ["OP_SCHEMA", "ParsedOps", "load_ops", "read_ops"]


def load_ops(path: str | Path) -> ParsedOps:
    """The op rows of the PyTorch trace at ``path`` (``.json`` or ``.json.gz``).

    Any other kind of file is an InputError naming it and what it is.
    """
    from tileprof.inputs.sources import read_kineto_events

    return op_rows(read_kineto_events(path, need="--ops needs a PyTorch trace"))


def read_ops(path: str | Path, data: bytes) -> ParsedOps:
    """The op rows of the Kineto trace ``data`` read from ``path``."""
    from tileprof.inputs.sources import kineto_events_of

    return op_rows(kineto_events_of(path, data))


def load_named_ops(paths: Sequence[Path], engine: Engine | None = None) -> list[ParsedOps]:
    """The op rows of each PyTorch trace at ``paths`` (read by ``engine``), each named as every
    command names an input (``model.naming``): rows and notes of rank0/trace.json and
    rank1/trace.json say which is which."""
    from tileprof.model.engines import map_ordered

    parsed = map_ordered(load_ops, list(paths), engine)
    named = []
    for path, name, ops in zip(paths, display_names(paths), parsed, strict=True):
        if name != path.name:
            frame, notes = renamed_rows(ops.frame, ops.notes, path.name, name)
            ops = dataclasses.replace(ops, frame=frame, notes=notes)
        named.append(ops)
    return named
