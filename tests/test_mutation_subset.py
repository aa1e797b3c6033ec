"""The CI mutation subset (tools/mutation_subset.py, issue 38) and its self-test.

The harness must fail when a module's tests stop biting: here a tiny project whose tests kill
every sampled mutant passes, and the same project with one test weakened fails, naming the
mutants that now survive.
"""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

import pytest

from tests.tool_scripts import load_tool

ROOT = Path(__file__).resolve().parent.parent
harness = load_tool("mutation_subset")

SOURCE = textwrap.dedent(
    '''
    """A module docstring: not mutated."""
    LIMIT = 3


    class Order:
        TAX = 2

        def cheap(self, price: int = 4) -> bool:
            """A docstring: not mutated."""
            return price < 1 and not self


    def price(count: int, unit: int) -> int:
        total = count * unit
        if count >= 10:
            total -= 5
        return total
    '''
)


def test_sites_lie_inside_functions_in_a_fixed_order() -> None:
    # By hand: module and class-level constants (LIMIT, TAX), the annotations, the default 4
    # and the docstrings are not sites; the rest is listed in the order the tree is visited.
    found = [(s.index, s.function, s.line, s.change) for s in harness.sites(SOURCE)]
    assert found == [
        (0, "Order.cheap", 11, "and -> or"),
        (1, "Order.cheap", 11, "< -> <="),
        (2, "Order.cheap", 11, "1 -> 2"),
        (3, "Order.cheap", 11, "not dropped"),
        (4, "price", 15, "* -> /"),
        (5, "price", 16, ">= -> >"),
        (6, "price", 16, "10 -> 11"),
        (7, "price", 17, "- -> +"),
        (8, "price", 17, "5 -> 6"),
    ]


def test_a_mutant_changes_its_site_only() -> None:
    mutated = harness.mutate(SOURCE, 3)
    assert "return price < 1 and self" in mutated
    assert "total -= 5" in mutated and "count >= 10" in mutated
    assert "total += 5" in harness.mutate(SOURCE, 7)
    with pytest.raises(IndexError):
        harness.mutate(SOURCE, 9)


def test_sample_is_fixed_by_seed_and_module() -> None:
    first = harness.sample(SOURCE, "calc", 38, 4)
    assert first == harness.sample(SOURCE, "calc", 38, 4)
    assert [s.index for s in first] == sorted(s.index for s in first)
    assert len(first) == 4 and len({s.index for s in first}) == 4
    assert len(harness.sample(SOURCE, "calc", 38, 50)) == 9


def test_the_ci_sample_mutates_what_it_says() -> None:
    # Each mutant of the configured subset parses, differs from the module, and ast.unparse
    # writes the unmutated module back faithfully (so a mutant differs by its site only).
    config = harness.tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    subset = config["tool"]["tileprof"]["mutation_subset"]
    modules = {k: v for k, v in subset.items() if isinstance(v, dict)}
    assert sum(int(m["count"]) for m in modules.values()) >= 20
    for name, entry in modules.items():
        source = (ROOT / entry["path"]).read_text(encoding="utf-8")
        original = ast.dump(ast.parse(source))
        assert ast.dump(ast.parse(ast.unparse(ast.parse(source)))) == original
        chosen = harness.sample(source, name, int(subset["seed"]), int(entry["count"]))
        assert len(chosen) == int(entry["count"])
        assert 0 <= int(entry["min_killed"]) <= len(chosen)
        for site in chosen:
            assert ast.dump(ast.parse(harness.mutate(source, site.index))) != original


CALC = '''
def price(count, unit):
    """Ten or more cost five less."""
    total = count * unit
    if count >= 10:
        total -= 5
    return total
'''
STRONG = """
from calcpkg.calc import price

def test_price():
    assert price(2, 3) == 6
    assert price(9, 1) == 9
    assert price(10, 1) == 5
    assert price(11, 2) == 17
"""
# The weakened test: the discount is no longer checked, so four of the five mutants survive.
WEAK = """
from calcpkg.calc import price

def test_price():
    assert price(2, 3) == 6
"""


def _project(root: Path, test: str, min_killed: int) -> Path:
    (root / "calcpkg").mkdir(parents=True)
    (root / "calcpkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "calcpkg" / "calc.py").write_text(CALC, encoding="utf-8")
    (root / "tests").mkdir()
    (root / "tests" / "test_calc.py").write_text(test, encoding="utf-8")
    (root / "pyproject.toml").write_text(
        "[tool.tileprof.mutation_subset]\nseed = 1\n"
        'copy = ["calcpkg", "tests", "pyproject.toml"]\n'
        "[tool.tileprof.mutation_subset.calc]\n"
        'path = "calcpkg/calc.py"\ntests = ["tests/test_calc.py"]\n'
        # tileprof's own pytest plugin (polars and all) is not needed to test calcpkg
        'pytest_args = ["-p", "no:tileprof"]\n'
        f"count = 5\nmin_killed = {min_killed}\n",
        encoding="utf-8",
    )
    return root


def test_biting_tests_pass_and_a_weakened_test_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    strong = _project(tmp_path / "strong", STRONG, min_killed=5)
    assert harness.main([], root=strong) == 0
    out = capsys.readouterr().out
    assert "calc: killed 5 of 5 (at least 5 recorded)" in out
    assert "SURVIVED" not in out

    weak = _project(tmp_path / "weak", WEAK, min_killed=5)
    assert harness.main([], root=weak) == 1
    out = capsys.readouterr().out
    assert "calc: killed 1 of 5 (at least 5 recorded)" in out
    assert "calc: SURVIVED #1 price:5 >= -> >" in out
    assert "the tests bite less than recorded in calc" in out
    assert (weak / "calcpkg" / "calc.py").read_text(encoding="utf-8") == CALC


def test_tests_failing_unmutated_fail_the_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # Otherwise every mutant would count as killed.
    broken = _project(tmp_path / "broken", STRONG.replace("== 6", "== 7"), min_killed=0)
    assert harness.main(["calc"], root=broken) == 1
    assert "tests fail on the unmutated copy" in capsys.readouterr().out


def test_every_site_of_a_mutation_module_is_counted_without_a_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--every`` takes a module of ``[tool.tileprof.mutation]``, runs all its sites (not the
    subset's ``count``) and only counts: a weak test is no failure there."""
    weak = _project(tmp_path / "weak", WEAK, min_killed=5)
    with (weak / "pyproject.toml").open("a", encoding="utf-8") as config:
        config.write(
            '[tool.tileprof.mutation.calc_all]\npath = "calcpkg/calc.py"\n'
            'tests = ["tests/test_calc.py"]\npytest_args = ["-p", "no:tileprof"]\n'
        )
    assert harness.main(["--every", "calc_all"], root=weak) == 0
    out = capsys.readouterr().out
    assert "calc_all: killed 1 of 5 (every site)" in out
    assert out.count("calc_all: SURVIVED") == 4
    assert harness.main(["--every", "calc"], root=weak) == 2
    assert "unknown module 'calc' of [tool.tileprof.mutation]" in capsys.readouterr().out
    assert harness.main(["--every"], root=weak) == 2
    with pytest.raises(SystemExit) as refused:  # it ran every site before, listing nothing
        harness.main(["--every", "--list", "calc_all"], root=weak)
    assert refused.value.code == 2 and "not both" in capsys.readouterr().err
