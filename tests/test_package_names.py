"""The package's public names (``tileprof/__init__.py``): each resolves, on first use, to the
object its defining module holds, is kept once resolved, and nothing else is a name of the
package. Run in a fresh interpreter each, so that no earlier import has resolved them."""

from __future__ import annotations

import subprocess
import sys

import pytest

import tileprof

DEFINED_IN = {
    "__version__": "tileprof._version",
    "Filters": "tileprof.analyses.filters",
    "Profile": "tileprof.model.profile",
    "Summary": "tileprof.analyses.summary",
    "diff": "tileprof.model.diff_inputs",
    "load": "tileprof.model.profile",
    "trace": "tileprof.views.trace.public",
}
MODULES = {
    "sources": "tileprof.inputs.sources",
    "ops": "tileprof.model.ops",
    "flops": "tileprof.analyses.flops",
}


def _fresh(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip()


@pytest.mark.parametrize(("name", "module"), sorted(DEFINED_IN.items()))
def test_a_name_is_its_modules_object(name: str, module: str) -> None:
    import importlib

    assert getattr(tileprof, name) is getattr(importlib.import_module(module), name)


@pytest.mark.parametrize(("name", "module"), sorted(MODULES.items()))
def test_a_module_name_is_that_module(name: str, module: str) -> None:
    import importlib

    assert getattr(tileprof, name) is importlib.import_module(module)


def test_names_resolve_only_when_read_and_stay() -> None:
    out = _fresh(
        "import sys, tileprof\n"
        "print('tileprof.model.profile' in sys.modules, 'Profile' in vars(tileprof))\n"
        "p = tileprof.Profile\n"
        "print('tileprof.model.profile' in sys.modules, vars(tileprof)['Profile'] is p)\n"
        "print('tileprof.inputs.sources' in sys.modules)\n"
        "s = tileprof.sources\n"
        "print(vars(tileprof)['sources'] is s)\n"
    )
    assert out.splitlines() == ["False False", "True True", "False", "True"]


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="module 'tileprof' has no attribute 'nothing'"):
        _ = tileprof.nothing  # type: ignore[attr-defined]


def test_dir_is_the_public_names() -> None:
    assert dir(tileprof) == sorted([*DEFINED_IN, *MODULES])
    assert sorted(tileprof.__all__) == dir(tileprof)
