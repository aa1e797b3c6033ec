"""docs/architecture.md, enforced: imports go down the layers only, no circles, one reader,
short functions, thin commands, each command-line flag declared once.

The package's imports are read with ``ast`` (nothing is imported): module-level imports,
imports inside functions and imports under ``if TYPE_CHECKING:`` all count, and so do module
names written as text (the registry's module paths, ``importlib.import_module`` arguments, the
lazy public names, ``_COMMANDS``), since those are imported at run time. A module's layer is
its folder. Every check has a test that feeds it a violation and sees it fail.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "tileprof"
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("tileprof._version", "tileprof.core")),
    ("inputs", ("tileprof.inputs",)),
    ("analyses", ("tileprof.analyses",)),
    ("model", ("tileprof.model",)),
    ("views", ("tileprof.views",)),
    ("api", ("tileprof",)),
    ("commands", ("tileprof.commands", "tileprof.__main__", "tileprof.testing")),
)
"""Bottom to top: a module may import its own layer and the layers below it. Each layer is a
folder of the package; the package itself is the public API (``tileprof.load``, ``tileprof.diff``,
``tileprof.trace``, ...), a facade above the views that nothing in the package imports."""
MAX_FUNCTION_LINES = 80
MAX_COMMAND_BODY_LINES = 40
INPUT_LAYER = "tileprof.inputs"
BARRED_FROM_INPUTS = ("analyses", "views")
"""Layers that receive data and must not import an input module (the model's gatherer reads)."""


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


def _string_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` assignments (so ``_HERE + "tile.json_dump"`` folds)."""
    names: dict[str, str] = {}
    for node in tree.body:
        target = node.targets[0] if isinstance(node, ast.Assign) else getattr(node, "target", None)
        value = getattr(node, "value", None)
        if isinstance(target, ast.Name) and (text := _folded(value, names)) is not None:
            names[target.id] = text
    return names


def _folded(node: ast.AST | None, names: dict[str, str]) -> str | None:
    """The text of a string constant, a known name, or a ``+`` of those; else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return names.get(node.id)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left, names), _folded(node.right, names)
        return None if left is None or right is None else left + right
    return None


def module_strings(tree: ast.Module) -> set[str]:
    """Package modules named as text: registry paths, ``import_module`` arguments, lazy names."""
    names = _string_constants(tree)
    found = set()
    for node in ast.walk(tree):
        text = _folded(node, names) if isinstance(node, (ast.Constant, ast.BinOp)) else None
        if text is not None and text.startswith("tileprof.") and text in MODULES:
            found.add(text)
    return found


def imports_of(module: str, source: str | None = None) -> set[str]:
    """The package modules ``module`` imports, wherever the import statement is, and the
    modules it names as text (those are imported by ``importlib`` at run time)."""
    path = MODULES.get(module)
    if source is None:
        assert path is not None, module
        source = path.read_text(encoding="utf-8")
    tree = ast.parse(source)
    is_package = path is not None and path.name == "__init__.py"
    found: set[str] = module_strings(tree)
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


def is_input_module(module: str) -> bool:
    return module == INPUT_LAYER or module.startswith(INPUT_LAYER + ".")


def is_private(module: str) -> bool:
    """A ``_``-prefixed module, or one inside a ``_``-prefixed package."""
    return any(part.startswith("_") and part != "__init__" for part in module.split(".")[1:])


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{m} ({LAYERS[layer_of(m)][0]}) imports {d} ({LAYERS[layer_of(d)][0]})"
        for m, deps in graph.items()
        for d in sorted(deps)
        if layer_of(d) > layer_of(m)
    ]


def input_imports_from_views_and_analyses(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{m} imports input module {d}"
        for m, deps in graph.items()
        if LAYERS[layer_of(m)][0] in BARRED_FROM_INPUTS
        for d in sorted(deps)
        if is_input_module(d)
    ]


def private_inputs_used_outside(graph: dict[str, set[str]]) -> list[str]:
    return [
        f"{m} imports private {d}"
        for m, deps in graph.items()
        if not is_input_module(m)
        for d in sorted(deps)
        if is_input_module(d) and is_private(d)
    ]


def test_every_module_has_a_layer() -> None:
    for module in MODULES:
        layer_of(module)


def test_imports_go_down_the_layers() -> None:
    assert upward_imports(GRAPH) == []


def test_no_view_or_analysis_imports_an_input_module() -> None:
    assert input_imports_from_views_and_analyses(GRAPH) == []


def test_no_private_input_module_is_used_outside_inputs() -> None:
    assert private_inputs_used_outside(GRAPH) == []


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
    # module names as text: _COMMANDS, the registry's module paths, the lazy public names
    assert "tileprof.commands.summary" in GRAPH["tileprof.commands.cli"]
    assert "tileprof.inputs.tile.json_dump" in GRAPH["tileprof.inputs"]
    assert {"tileprof.model.profile", "tileprof.model.ops"} <= GRAPH["tileprof"]
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert (
        layer_of("tileprof.commands.cli")
        > layer_of("tileprof.model.profile")
        > layer_of("tileprof.inputs")
    )
    with pytest.raises(AssertionError, match="in no layer"):
        layer_of("tileprof.nowhere")


def long_functions(trees: dict[str, ast.Module], cap: int = MAX_FUNCTION_LINES) -> list[str]:
    long = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                length = (node.end_lineno or node.lineno) - first + 1
                if length > cap:
                    long.append(f"{module}.{node.name}: {length} lines")
    return long


def _is_click_command(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Decorated with ``@click.command``, ``@click.group`` or ``@group.command(...)``."""
    for decorator in node.decorator_list:
        call = decorator.func if isinstance(decorator, ast.Call) else decorator
        if isinstance(call, ast.Attribute) and call.attr in ("command", "group"):
            return True
    return False


def long_command_bodies(
    trees: dict[str, ast.Module], cap: int = MAX_COMMAND_BODY_LINES
) -> list[str]:
    """Click commands whose body (after the docstring) runs over ``cap`` lines."""
    long = []
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _is_click_command(
                node
            ):
                body = node.body
                if ast.get_docstring(node) is not None:
                    body = body[1:]
                if not body:
                    continue
                length = (node.end_lineno or node.lineno) - body[0].lineno + 1
                if length > cap:
                    long.append(f"{module}.{node.name}: body of {length} lines")
    return long


FLAG = re.compile(r"^(--[A-Za-z][\w-]*|-[A-Za-z])$")


def flag_declarations(trees: dict[str, ast.Module]) -> dict[str, set[str]]:
    """Flag -> the modules that pass it to a call (``click.option("--x")``,
    ``click.Option(["--x"])``, ``flag_with_alias("--new", "dest", "--old")``, pytest's
    ``addoption``: whatever builds the option)."""
    declared: dict[str, set[str]] = {}
    for module, tree in trees.items():
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            for arg in node.args:
                values = arg.elts if isinstance(arg, (ast.List, ast.Tuple)) else [arg]
                for value in values:
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        for flag in value.value.split("/"):
                            if FLAG.match(flag.strip()):
                                declared.setdefault(flag.strip(), set()).add(module)
    return declared


def flags_in_two_modules(trees: dict[str, ast.Module]) -> list[str]:
    return [
        f"{flag}: {', '.join(sorted(modules))}"
        for flag, modules in sorted(flag_declarations(trees).items())
        if len(modules) > 1
    ]


TREES = {m: ast.parse(p.read_text(encoding="utf-8")) for m, p in MODULES.items()}


COMPILED_CORE = "tileprof.core._native"
COMPILED_CORE_USERS = {
    "tileprof.inputs.native": "the decoder's columns into the sample frame",
    "tileprof.inputs._format": "a JSON document's top-level keys, its values skipped unread",
    "tileprof.inputs.gpu.kineto_native": "the Kineto decoder's columns into the Kineto event frame",
    "tileprof.core.ahead": "a trace's decode started before the command's imports",
    "tileprof.analyses.stats": "the group table's statistics",
    "tileprof.analyses.ops": "the CPU ops' nesting (parents, counted ops, owners)",
    "tileprof.model.trace": "the overlap lanes and the counters' bins",
    "tileprof.views.trace.perfetto": "the .pftrace slice and track encoder",
}
"""The modules that may import the compiled module (crates/, one maturin extension, built as
``tileprof.core._native``), each for its own functions. The walker above sees no compiled
module, so this check reads those imports itself (docs/architecture.md)."""


def compiled_core_imports(trees: dict[str, ast.Module]) -> set[str]:
    """The modules that import the compiled module, in any spelling."""
    found = set()
    for module, tree in trees.items():
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):  # from .. import _native, from ..core import
                base = node.module or ""
                if node.level:
                    package = module.split(".")[: len(module.split(".")) - node.level]
                    base = ".".join([*package, *([base] if base else [])])
                names = [base, *(f"{base}.{a.name}" for a in node.names)]
            if COMPILED_CORE in names:
                found.add(module)
    return found


def test_only_the_named_modules_use_the_compiled_core() -> None:
    assert compiled_core_imports(TREES) <= set(COMPILED_CORE_USERS)
    assert {"tileprof.inputs.native", "tileprof.views.trace.perfetto"} <= compiled_core_imports(
        TREES
    )
    violation = {
        "tileprof.analyses.links": ast.parse("def f():\n    from tileprof.core import _native\n"),
        "tileprof.inputs.tile.json_dump": ast.parse("from ...core import _native\n"),
        "tileprof.core.specs": ast.parse("from . import _native\n"),
        "tileprof.views.html.data": ast.parse("import tileprof.core._native as core\n"),
    }
    assert compiled_core_imports(violation) == set(violation)


def test_no_function_is_longer_than_the_cap() -> None:
    assert long_functions(TREES) == []


def test_no_click_command_body_is_longer_than_the_cap() -> None:
    assert long_command_bodies(TREES) == []


def test_every_flag_is_declared_in_one_module() -> None:
    assert flags_in_two_modules(TREES) == []


def _graph_of(sources: dict[str, str]) -> dict[str, set[str]]:
    return {m: imports_of(m, text) for m, text in sources.items()}


def test_each_rule_fails_on_a_violation() -> None:
    """Each check, fed a made-up module that breaks it, reports it."""
    # an upward import, written as a lazy import inside a function
    graph = _graph_of(
        {"tileprof.core.errors": "def f():\n    from tileprof.views import renderers\n"}
    )
    assert upward_imports(graph) == [
        "tileprof.core.errors (core) imports tileprof.views.renderers (views)"
    ]
    # a module name as text is an import too (a registry entry, import_module)
    graph = _graph_of(
        {
            "tileprof.core.text": 'X = "tileprof.model."\nY = X + "profile"\n',
            "tileprof.core.numbers": (
                'import importlib\nimportlib.import_module("tileprof.views.fit")\n'
            ),
        }
    )
    assert graph["tileprof.core.text"] == {"tileprof.model.profile"}
    assert upward_imports(graph) == [
        "tileprof.core.text (core) imports tileprof.model.profile (model)",
        "tileprof.core.numbers (core) imports tileprof.views.fit (views)",
    ]
    # a view reading a file through an input module, and a command using a private one
    graph = _graph_of(
        {
            "tileprof.views.fit": "from tileprof.inputs.gpu import kineto\n",
            "tileprof.commands.cli": "from tileprof.inputs._common import read_bytes\n",
        }
    )
    assert input_imports_from_views_and_analyses(graph) == [
        "tileprof.views.fit imports input module tileprof.inputs.gpu.kineto"
    ]
    assert private_inputs_used_outside(graph) == [
        "tileprof.commands.cli imports private tileprof.inputs._common"
    ]
    # a long function, a long click command body and one flag in two modules
    long_body = "\n".join(f"    x{i} = {i}" for i in range(41))
    trees = {
        "tileprof.commands.a": ast.parse(
            f'@click.command("a")\n@click.option("--epoch", type=int)\ndef a(epoch):\n'
            f'    """Doc."""\n{long_body}\n'
        ),
        "tileprof.commands.b": ast.parse('opt = click.Option(["-o", "--epoch"])\n'),
    }
    assert long_command_bodies(trees) == ["tileprof.commands.a.a: body of 41 lines"]
    assert long_functions(trees, cap=40) == ["tileprof.commands.a.a: 45 lines"]
    assert long_functions(trees) == []
    assert flags_in_two_modules(trees) == ["--epoch: tileprof.commands.a, tileprof.commands.b"]
