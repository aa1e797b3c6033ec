"""The scripts of ``tools/`` as modules, for their tests: ``tools/`` is no package (each
script runs on its own), so a test loads one by its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent / "tools"


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` loaded as the module ``name`` (registered in ``sys.modules``, which
    its dataclasses need to resolve their own module)."""
    spec = importlib.util.spec_from_file_location(name, TOOLS / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
