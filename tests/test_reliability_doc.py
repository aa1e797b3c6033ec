"""docs/reliability.md names, for every class of bad input and every fault, the test that keeps
it true; this checks that each named test exists, so the catalogue cannot cite a test that was
renamed or removed."""

from __future__ import annotations

import importlib
import re

from tests.hostile import ROOT

DOC = ROOT / "docs" / "reliability.md"
CITED = re.compile(r"`tests/(\w+)\.py::(\w+)`")


def test_every_cited_test_exists() -> None:
    cited = CITED.findall(DOC.read_text())
    assert len(cited) >= 40
    missing = [
        f"{module}::{name}"
        for module, name in cited
        if not hasattr(importlib.import_module(f"tests.{module}"), name)
    ]
    assert missing == []


def test_every_hostile_and_fault_test_is_in_the_catalogue() -> None:
    cited = {name for _, name in CITED.findall(DOC.read_text())}
    for module in ("test_hostile", "test_hostile_limits", "test_outputs_special"):
        tests = [
            n for n in dir(importlib.import_module(f"tests.{module}")) if n.startswith("test_")
        ]
        assert sorted(set(tests) - cited) == [], module


def test_the_limits_stated_are_the_limits_applied() -> None:
    """The CSV cell limit and the SQLite budgets, as docs/reliability.md states them."""
    from tileprof.inputs._csv_table import CELL_LIMIT
    from tileprof.inputs.gpu import nsys_sqlite

    text = " ".join(DOC.read_text().split())
    assert f"at most **{CELL_LIMIT:,} characters**" in text
    assert f"at most **{nsys_sqlite.ROW_BUDGET:,} rows**" in text
    assert f"**{nsys_sqlite.BYTE_BUDGET:,} characters of text**" in text
    assert f"longer than **{nsys_sqlite.VALUE_LIMIT:,} bytes**" in text
    assert "mode=ro&immutable=1" in text
