"""The one-line errors (``core/errors.py``), the usable cores (``core/cpus.py``) and strict
JSON (``views/strict_json.py``), by hand (issue 38)."""

from __future__ import annotations

import json
import math
import pickle

import pytest

from tileprof.core import cpus
from tileprof.core.errors import (
    EXIT_ABSTAINED,
    EXIT_BAD_INPUT,
    InputError,
    OptionError,
    OutputError,
    TileprofError,
)
from tileprof.views.strict_json import dumps, finite_or_null


@pytest.mark.parametrize(
    ("path", "where", "message", "line"),
    [
        ("d.json", "sample 3", "negative duration -5", "d.json: sample 3: negative duration -5"),
        ("d.json", None, "no such file", "d.json: no such file"),
        (None, "line 2", "bad", "line 2: bad"),
        (None, None, "bad", "bad"),
        ("d.json", "", "bad", "d.json: bad"),
        ("d.json", "key", "two\nlines\nof it", "d.json: key: two lines of it"),
        ("d.json", None, "kept\tas  it is", "d.json: kept\tas  it is"),
    ],
)
def test_an_input_error_is_one_line_naming_the_file_and_place(
    path: str | None, where: str | None, message: str, line: str
) -> None:
    error = InputError(path, where, message)
    assert str(error) == line
    assert (error.path, error.where, error.message) == (path, where, message)


def test_an_input_error_keeps_its_parts_through_pickling() -> None:
    """An error raised on a dask worker reaches the command line as it was raised."""
    error = pickle.loads(pickle.dumps(InputError("d.json", "line 2", "bad")))
    assert type(error) is InputError and str(error) == "d.json: line 2: bad"
    assert (error.path, error.where, error.message) == ("d.json", "line 2", "bad")


def test_exit_codes() -> None:
    assert (EXIT_BAD_INPUT, EXIT_ABSTAINED) == (2, 3)
    for kind in (TileprofError, InputError, OptionError, OutputError):
        assert kind.exit_code == 2
    assert issubclass(OptionError, TileprofError) and issubclass(OutputError, TileprofError)


def test_usable_cores_are_the_affinity_masks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpus.os, "sched_getaffinity", lambda pid: {0, 3, 5}, raising=False)
    assert cpus.usable_cores() == 3
    monkeypatch.setattr(cpus.os, "sched_getaffinity", lambda pid: set(), raising=False)
    assert cpus.usable_cores() == 1

    def unsupported(pid: int) -> set[int]:
        raise OSError("no affinity here")

    monkeypatch.setattr(cpus.os, "sched_getaffinity", unsupported, raising=False)
    monkeypatch.setattr(cpus.os, "cpu_count", lambda: 6)
    assert cpus.usable_cores() == 6
    monkeypatch.setattr(cpus.os, "cpu_count", lambda: None)
    assert cpus.usable_cores() == 1


def test_non_finite_floats_become_null_with_a_note_where_they_were() -> None:
    document = {"a": [1.0, math.nan, (math.inf, 2)], "b": {"c": -math.inf, "d": "x"}, "e": 3}
    clean, notes = finite_or_null(document)
    assert clean == {"a": [1.0, None, [None, 2]], "b": {"c": None, "d": "x"}, "e": 3}
    assert notes == [
        "$.a[1] is nan (not finite); written as null",
        "$.a[2][0] is inf (not finite); written as null",
        "$.b.c is -inf (not finite); written as null",
    ]
    assert finite_or_null([math.nan], "$.rows") == ([None], ["$.rows[0] is nan (not finite); "
                                                             "written as null"])  # fmt: skip
    assert finite_or_null(True) == (True, [])


def test_dumps_adds_notes_only_when_there_is_something_to_say() -> None:
    assert dumps({"a": 1.5, "notes": ["kept"]}) == '{"a": 1.5, "notes": ["kept"]}'
    assert json.loads(dumps({"a": math.nan, "notes": ["first"]})) == {
        "a": None,
        "notes": ["first", "$.a is nan (not finite); written as null"],
    }
    assert json.loads(dumps({"a": math.inf, "notes": None})) == {
        "a": None,
        "notes": ["$.a is inf (not finite); written as null"],
    }
    assert json.loads(dumps({"a": math.nan}, notes_key="why")) == {
        "a": None,
        "why": ["$.a is nan (not finite); written as null"],
    }
    assert dumps({"a": [1]}, indent=1) == '{\n "a": [\n  1\n ]\n}'
