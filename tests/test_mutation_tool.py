"""tools/mutation.py (issue 38): the mutants a run of some functions chooses."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from tests.tool_scripts import load_tool

tool = load_tool("mutation")

NAMES = [
    "tileprof.analyses.ops.x__split__mutmut_3",
    "tileprof.analyses.ops.x__split__mutmut_12",
    "tileprof.analyses.ops.x_op_rows__mutmut_1",
    "tileprof.analyses.ops.x__split_rows__mutmut_2",
    "tileprof.views.html.view.xǁTableǁcolumn__mutmut_1",
    "tileprof.views.html.view.xǁColumnǁcolumn__mutmut_4",
]


@pytest.mark.parametrize(
    ("name", "function"),
    [
        (NAMES[0], "_split"),
        (NAMES[2], "op_rows"),
        (NAMES[3], "_split_rows"),
        (NAMES[4], "Table.column"),
        ("m.x_x_of__mutmut_7", "x_of"),  # a function whose own name starts with x_
        ("m.x_a__mutmut_b__mutmut_2", "a__mutmut_b"),
    ],
)
def test_a_mutant_names_the_function_it_changes(name: str, function: str) -> None:
    assert tool.function_of(name) == function


def test_a_run_of_some_functions_draws_from_their_mutants_only(tmp_path: Path) -> None:
    """The functions' mutants only (not one whose name begins alike), drawn by the seed from
    the sorted names, every one when fewer than asked for."""
    meta = tmp_path / "mutants" / "tileprof" / "analyses" / "ops.py.meta"
    meta.parent.mkdir(parents=True)
    meta.write_text(json.dumps({"exit_code_by_key": {n: None for n in NAMES}}))
    path, dotted = "tileprof/analyses/ops.py", "tileprof.analyses.ops"
    chosen = tool.sampled(tmp_path, [], path, dotted, 10, 38, frozenset({"_split", "Table.column"}))
    assert chosen == sorted([NAMES[0], NAMES[1], NAMES[4]])
    one = tool.sampled(tmp_path, [], path, dotted, 1, 38, frozenset({"_split"}))
    assert one == random.Random(38).sample(sorted(NAMES[:2]), 1)
    assert tool.sampled(tmp_path, [], path, dotted, 10, 38) == sorted(NAMES)
    # --sample-first: the sample drawn from every name, then kept to the functions' mutants
    # (the part of a stated sample of the whole module that a stopped run left)
    # (5 of the 6 drawn by seed 38 hold one of _split's two: drawn after, not before)
    split = frozenset({"_split"})
    kept = tool.sampled(tmp_path, [], path, dotted, 5, 38, split, drawn_first=True)
    assert kept == [NAMES[1]]


def test_a_native_outcome_is_kept_under_its_file_s_text(tmp_path: Path) -> None:
    """tools/mutation_native.py reuses an outcome only while the mutated file is unchanged: a
    mutant of the same name in an edited file is another mutant (a rewritten function's)."""
    native = load_tool("mutation_native")
    source = tmp_path / "crates/x/src/lib.rs"
    source.parent.mkdir(parents=True)
    source.write_text("fn a() -> u8 { 1 }\n")
    mutant = {
        "name": "crates/x/src/lib.rs:1:16: replace a -> u8 with 0",
        "file": "crates/x/src/lib.rs",
    }
    before = native.record_key(mutant, {}, tmp_path)
    assert before.startswith(mutant["name"] + " @")
    assert native.record_key(mutant, {}, tmp_path) == before
    source.write_text("fn a() -> u8 { 2 }\n")
    assert native.record_key(mutant, {}, tmp_path) != before
    other = {"name": "crates/x/src/lib.rs:1:16: replace a -> u8 with 1", "file": mutant["file"]}
    digests: dict[str, str] = {}
    digest = native.record_key(mutant, digests, tmp_path).split(" @")[1]
    assert native.record_key(other, digests, tmp_path) == f"{other['name']} @{digest}"
