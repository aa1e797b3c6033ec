"""tileprof: tile-accelerator profiles, side by side with GPU runs.

>>> import tileprof
>>> profile = tileprof.load("dump.json")
>>> summary = profile.summary(epoch=1)

The public names are imported on first use (PEP 562 ``__getattr__``), so ``import tileprof``
and every command that does not need polars or numpy (``tileprof --version``, ``--help``)
start without them.
"""

from __future__ import annotations

import importlib
import sys
import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tileprof._version import __version__
    from tileprof.diff_inputs import diff
    from tileprof.filters import Filters
    from tileprof.model import Profile, load
    from tileprof.summary import Summary

__all__ = ["Filters", "Profile", "Summary", "__version__", "diff", "load"]

_LAZY = {
    "__version__": "tileprof._version",
    "Filters": "tileprof.filters",
    "Profile": "tileprof.model",
    "Summary": "tileprof.summary",
    "diff": "tileprof.diff_inputs",
    "load": "tileprof.model",
}
"""Public name -> the module defining it, imported when the name is first read."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module 'tileprof' has no attribute {name!r}")
    value = getattr(importlib.import_module(_LAZY[name]), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


class _Package(types.ModuleType):
    """The package object: importing the submodule ``tileprof.diff`` binds it on the package
    as ``diff``, which would hide the public function ``tileprof.diff``; that binding is
    skipped, so the name keeps resolving to the function (as when it was imported eagerly)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _LAZY and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Package
