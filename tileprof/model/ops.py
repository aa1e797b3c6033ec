"""``tileprof.ops``: the op rows of a PyTorch profiler trace, read once and analysed.

The trace is read and decoded by the input layer (``tileprof.inputs.sources.read_kineto_events``)
and its op rows computed by ``tileprof.analyses.ops.op_rows``; this module joins the two for
``runs --ops``, ``diff --per-op`` and the public ``tileprof.ops.load_ops``.
"""

from __future__ import annotations

from pathlib import Path

from tileprof.analyses.ops import OP_SCHEMA, ParsedOps, op_rows

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
