"""Every chart of the report held to its recorded drawing (``fixtures/report/
chart_drawings.json``): each mark's colour, style, width and data, each axis' label, scale,
limits, ticks and tick text, each legend's entries and place, the title, caption and margins
(``tests.drawings``). A chart changed on purpose is recorded again with
``python tools/record_chart_drawings.py``, and the JSON's diff is the review of what the page
now draws."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.drawings import chart_drawings, rounded

RECORDED = Path(__file__).resolve().parent.parent / "fixtures" / "report" / "chart_drawings.json"


def differences(recorded: Any, drawn: Any, path: str = "") -> Iterator[str]:
    """Where two descriptions differ, as JSON paths with both values."""
    if isinstance(recorded, dict) and isinstance(drawn, dict):
        for key in sorted(recorded.keys() | drawn.keys()):
            yield from differences(recorded.get(key), drawn.get(key), f"{path}.{key}")
    elif isinstance(recorded, list) and isinstance(drawn, list) and len(recorded) == len(drawn):
        for i, (a, b) in enumerate(zip(recorded, drawn, strict=True)):
            yield from differences(a, b, f"{path}[{i}]")
    elif recorded != drawn:
        yield f"{path}: recorded {recorded!r}, drawn {drawn!r}"


@pytest.fixture(scope="module")
def drawn() -> dict[str, Any]:
    return json.loads(json.dumps(chart_drawings(), ensure_ascii=False))


@pytest.fixture(scope="module")
def recorded() -> dict[str, Any]:
    return json.loads(RECORDED.read_text(encoding="utf-8"))


def test_every_chart_is_recorded(drawn: dict[str, Any], recorded: dict[str, Any]) -> None:
    assert sorted(drawn) == sorted(recorded)
    assert len(drawn) == 18  # each kind of chart, each branch its drawing takes


@pytest.mark.parametrize(
    "chart",
    json.loads(RECORDED.read_text(encoding="utf-8")).keys(),
)
def test_each_chart_draws_as_recorded(
    chart: str, drawn: dict[str, Any], recorded: dict[str, Any]
) -> None:
    found = list(differences(recorded[chart], drawn.get(chart)))
    assert not found, "\n".join(found[:20])


def test_a_changed_mark_is_named_by_its_place() -> None:
    """The comparison names the field that moved, so a failure says what the page now
    draws differently."""
    recorded = {"axes": [{"lines": [{"width": 0.9, "style": ":"}]}], "caption": "a"}
    drawn = {"axes": [{"lines": [{"width": 1.0, "style": ":"}]}], "caption": "a"}
    assert list(differences(recorded, drawn)) == [
        ".axes[0].lines[0].width: recorded 0.9, drawn 1.0"
    ]
    assert list(differences([1, 2], [1])) == [": recorded [1, 2], drawn [1]"]


def test_numbers_are_held_at_six_significant_digits() -> None:
    assert rounded([1.23456789, float("nan"), float("inf"), (2, True)]) == [
        1.23457, None, "inf", [2.0, True],
    ]  # fmt: skip
