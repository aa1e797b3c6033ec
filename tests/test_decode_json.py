"""``tileprof.inputs._decode``: the typed msgspec decode every run source (latency benchmarks,
energy reports, links files, Kineto's inventory) goes through, and the one line each of its
failures becomes: the JSON path of a wrong value, the line and column of bad JSON, the first
byte that is not UTF-8."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tileprof.core.errors import InputError
from tileprof.inputs._common import NESTED_TOO_DEEP
from tileprof.inputs._decode import check_utf8, convert, decode_json, validation_error


class Point(msgspec.Struct):
    x: int
    y: float = 0.0


class Bag(msgspec.Struct):
    points: list[Point]
    facts: dict[str, float] = {}


def _error(data: bytes, type_: type = Bag) -> InputError:
    with pytest.raises(InputError) as caught:
        decode_json(Path("in.json"), data, type_)
    return caught.value


def test_a_document_decodes_as_its_type() -> None:
    bag = decode_json("in.json", b'{"points": [{"x": 1, "y": 2.5}], "facts": {"a": 3}}', Bag)
    assert bag == Bag([Point(1, 2.5)], {"a": 3.0})


def test_a_wrong_value_names_its_json_path() -> None:
    error = _error(b'{"points": [{"x": 1}, {"x": "two"}]}')
    assert (error.where, error.message) == ("$.points[1].x", "expected `int`, got `str`")
    assert str(error) == "in.json: $.points[1].x: expected `int`, got `str`"


def test_a_missing_field_is_placed_at_the_object() -> None:
    error = _error(b'{"points": [{"y": 1}]}')
    assert (error.where, error.message) == (
        "$.points[0]",
        "object missing required field `x`",
    )
    assert _error(b"{}").where == "$"


@pytest.mark.parametrize(
    ("data", "where"),
    [
        (b'{"points": [], "facts": {"a": 1, "big": 1e400}}', "$.facts.big"),
        (b'{"points": [], "facts": {"a": 1e999}}', "$.facts.a"),
        (b'{"points": [{"x": 1, "y": 1e400}]}', "$.points[0].y"),
    ],
)
def test_a_number_too_large_is_named_by_its_key(data: bytes, where: str) -> None:
    """Inside a mapping msgspec cannot name the key (``$.facts[...]``); the slower decode finds
    it. In a struct msgspec names it itself."""
    error = _error(data)
    assert error.where == where
    assert "out of range" in error.message


def test_a_number_too_large_in_a_list_of_lists_is_found_by_index() -> None:
    error = _error(b'{"a": [[1.0], [2.0, 1e400]]}', dict[str, list[list[float]]])
    assert (error.where, error.message) == ("$.a[1][1]", "number out of range")


@pytest.mark.parametrize(
    ("data", "where", "message"),
    [
        (b'{"points": [\n  {"x": 1},\n  {"x": 2,}\n]}', "line 3, column 11", "trailing comma"),
        (b'{"points": [{"x": 1}', "line 1, column 21", "truncated"),
        (b"", "line 1, column 1", "truncated"),
    ],
)
def test_bad_json_names_the_line_and_column(data: bytes, where: str, message: str) -> None:
    error = _error(data)
    assert error.where == where
    assert error.message.startswith("malformed JSON: ")
    assert message in error.message
    assert "byte" not in error.message


def test_nesting_deeper_than_any_profile_is_one_line() -> None:
    deep = b"[" * 100_000 + b"]" * 100_000
    error = _error(b'{"a": ' + deep + b"}", dict[str, Any])
    assert (error.where, error.message) == ("document", NESTED_TOO_DEEP)


@pytest.mark.parametrize(
    ("data", "where", "byte"),
    [
        (b'{"points": [], "facts": {"\xff": 1}}', "line 1, column 27", "0xff"),
        (b'{"points": [],\n "facts": {"a\xc3": 1}}', "line 2, column 14", "0xc3"),
    ],
)
def test_text_that_is_not_utf8_names_the_first_bad_byte(data: bytes, where: str, byte: str) -> None:
    error = _error(data)
    assert (error.where, error.message) == (
        where,
        f"not UTF-8 text (byte {byte}); save the file as UTF-8",
    )
    with pytest.raises(InputError) as caught:
        check_utf8("in.json", data)
    assert caught.value.where == where


def test_utf8_text_passes_the_check() -> None:
    check_utf8("in.json", '{"name": "tête"}'.encode())


def test_a_converted_value_is_placed_under_the_path_it_was_found_at() -> None:
    assert convert("in.json", {"x": 3}, Point, "$.runs[2]") == Point(3)
    with pytest.raises(InputError) as caught:
        convert("in.json", {"x": "three"}, Point, "$.runs[2]")
    assert (caught.value.where, caught.value.message) == (
        "$.runs[2].x",
        "expected `int`, got `str`",
    )
    with pytest.raises(InputError) as whole:
        convert("in.json", [1], Point, "$.runs[2]")
    assert whole.value.where == "$.runs[2]"


def test_a_validation_error_keeps_the_file_and_a_prefix() -> None:
    try:
        msgspec.json.decode(b'{"x": null}', type=Point)
    except msgspec.ValidationError as exc:
        error = validation_error(Path("a/b.json"), exc)
        prefixed = validation_error("b.json", exc, prefix="$.inner")
    assert str(error) == "a/b.json: $.x: expected `int`, got `null`"
    assert prefixed.where == "$.inner.x"


def test_the_slower_decode_agrees_with_json_on_where_infinity_is() -> None:
    """The path found is the first infinite number in document order, as ``json`` reads it."""
    data = b'{"points": [], "facts": {"ok": 1, "first": 1e400, "second": -1e400}}'
    assert json.loads(data)["facts"]["first"] == float("inf")
    assert _error(data).where == "$.facts.first"


def test_a_path_msgspec_names_is_kept_even_with_infinity_elsewhere() -> None:
    """Only a mapping's ``[...]`` is replaced by the slower decode's path; a wrong value, or an
    out-of-range number msgspec names itself, keeps msgspec's path though an infinite number
    stands earlier or elsewhere in the document."""
    skipped_first = b'{"zzz": 1e400, "points": [{"x": 1, "y": 1e400}]}'
    assert str(_error(skipped_first)) == "in.json: $.points[0].y: number out of range"
    wrong_type = b'{"points": [{"x": "two"}], "facts": {"a": 1e400}}'
    assert str(_error(wrong_type)) == "in.json: $.points[0].x: expected `int`, got `str`"


@pytest.mark.parametrize(
    "data",
    [
        b'{"points": [], "facts": {"\xff": 1}}',
        b'{"points": [{"x": 1}',
        b'{"a": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
    ],
)
def test_every_failure_names_the_file(data: bytes) -> None:
    with pytest.raises(InputError) as caught:
        decode_json(Path("folder/in.json"), data, dict[str, Any])
    assert str(caught.value).startswith("folder/in.json: ")
