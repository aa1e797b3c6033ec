"""docs/architecture.md, enforced: imports go down the layers only, no circles, short functions.

The package's imports are read with ``ast`` (nothing is imported): module-level imports,
imports inside functions and imports under ``if TYPE_CHECKING:`` all count. Every module must
sit in one layer of ``LAYERS`` (a new module gets a line here and in docs/architecture.md).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tileprof"
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("tileprof._version", "tileprof.core")),
    ("inputs", ("tileprof.inputs",)),
    ("analyses", ("tileprof.analyses",)),
    ("model", ("tileprof", "tileprof.model")),
    ("views", ("tileprof.views",)),
    ("commands", ("tileprof.commands", "tileprof.__main__", "tileprof.testing")),
)
"""Bottom to top: a module may import its own layer and the layers below it. Each layer is a
folder of the package; the package itself (the lazy public API) sits with the model."""
MAX_FUNCTION_LINES = 150


def _modules() -> dict[str, Path]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def layer_of(module: str) -> int:
    """Index in ``LAYERS`` of the most specific entry naming ``module`` or a package of it."""
    best: tuple[int, int] | None = None
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            exact = prefix == "tileprof"  # the package itself, not everything in it
            named = module == prefix or (not exact and module.startswith(prefix + "."))
            if named and (best is None or len(prefix) > best[0]):
                best = (len(prefix), index)
    if best is None:
        raise AssertionError(f"{module} is in no layer: add it to LAYERS and the docs")
    return best[1]


def imports_of(module: str) -> set[str]:
    """The package modules ``module`` imports, wherever the import statement is."""
    tree = ast.parse(MODULES[module].read_text(encoding="utf-8"))
    is_package = MODULES[module].name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = module.split(".")
                anchor = anchor if is_package else anchor[:-1]
                anchor = anchor[: len(anchor) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                child = f"{base}.{alias.name}"
                found.add(child if child in MODULES else base)
    return {m for m in found if m in MODULES and m != module}


GRAPH = {m: imports_of(m) for m in MODULES}


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_go_down_the_layers() -> None:
    upward = [
        f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
        for m, deps in GRAPH.items()
        for d in sorted(deps)
        if layer_of(d) > layer_of(m)
    ]
    assert upward == []


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import circle of ``graph`` (as a path that returns to its start), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for dep in sorted(graph[node]):
            if state.get(dep) == 1:
                return [*path[path.index(dep) :], dep]
            if dep not in state and (cycle := visit(dep)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(graph):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_circles() -> None:
    assert find_cycle(GRAPH) is None


def test_the_checks_can_fail() -> None:
    """The walker sees function-level and TYPE_CHECKING imports, and finds circles."""
    assert "tileprof.inputs" in GRAPH["tileprof.model.profile"]  # imported inside load()
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert (
        layer_of("tileprof.commands.cli")
        > layer_of("tileprof.model.profile")
        > layer_of("tileprof.inputs")
    )
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("tileprof.nowhere")


def test_no_function_is_longer_than_the_cap() -> None:
    long = []
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {length} lines")
    assert long == []
