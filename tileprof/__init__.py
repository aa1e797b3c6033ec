"""tileprof: tile-accelerator profiles, side by side with GPU runs.

>>> import tileprof
>>> profile = tileprof.load("dump.json")
>>> summary = profile.summary(epoch=1)

The public names are imported on first use (PEP 562 ``__getattr__``), so ``import tileprof``
and every command that does not need polars or numpy (``tileprof --version``, ``--help``)
start without them. ``tileprof.sources``, ``tileprof.ops`` and ``tileprof.flops`` are the
documented modules of GPU evidence (``sources.load_runs``, ``ops.load_ops``,
``flops.op_work``), resolved the same way to the layer modules that define them.
``tileprof.trace`` writes a trace file; it is defined with the trace writers (views layer)
and named here only as a string, so this package imports nothing above the model layer.
"""

from __future__ import annotations

import importlib as _importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tileprof._version import __version__
    from tileprof.analyses import flops
    from tileprof.analyses.filters import Filters
    from tileprof.analyses.summary import Summary
    from tileprof.inputs import sources
    from tileprof.model import ops
    from tileprof.model.diff_inputs import diff
    from tileprof.model.profile import Profile, load

__all__ = [
    "Filters",
    "Profile",
    "Summary",
    "__version__",
    "diff",
    "flops",
    "load",
    "ops",
    "sources",
    "trace",
]

_LAZY = {
    "__version__": "tileprof._version",
    "Filters": "tileprof.analyses.filters",
    "Profile": "tileprof.model.profile",
    "Summary": "tileprof.analyses.summary",
    "diff": "tileprof.model.diff_inputs",
    "load": "tileprof.model.profile",
    "trace": "tileprof.views.trace.public",
}
"""Public name -> the module defining it, imported when the name is first read."""
_MODULES = {
    "sources": "tileprof.inputs.sources",
    "ops": "tileprof.model.ops",
    "flops": "tileprof.analyses.flops",
}
"""Public module name -> the module it stands for."""


def __getattr__(name: str) -> Any:
    if name in _MODULES:
        value = _importlib.import_module(_MODULES[name])
    elif name in _LAZY:
        value = getattr(_importlib.import_module(_LAZY[name]), name)
    else:
        raise AttributeError(f"module 'tileprof' has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """Only the public names (not the helpers this module imports)."""
    return sorted(__all__)
