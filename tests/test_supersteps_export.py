"""``supersteps --format json|csv`` (``tileprof.views.supersteps_export``) over frames built
here: which frame each option writes, the document's layout, strict JSON and every digit."""

from __future__ import annotations

import json
import math

import polars as pl
import pytest

from tileprof.analyses.supersteps import Supersteps
from tileprof.views.supersteps_export import render_csv, render_json

STEPS = pl.DataFrame({"superstep": [0, 1], "lengthCycles": [10, 30], "balance": [1 / 3, 0.5]})
TILES = pl.DataFrame({"superstep": [0, 0, 1], "tile": [0, 1, 0], "busyCycles": [10, 7, 30]})
EPOCHS = pl.DataFrame({"epoch": [1], "supersteps": [2], "name": ["époque"]})


def _result(**options: object) -> Supersteps:
    return Supersteps(STEPS, TILES, EPOCHS, 1_500_000_000, 4, **options)  # type: ignore[arg-type]


def test_json_holds_the_supersteps_the_epochs_and_the_options() -> None:
    text = render_json(_result(epoch=1, window=(0, 40), kernels=("g*",), top=5))
    document = json.loads(text)
    assert list(document) == ["supersteps", "epochs", "options"]
    assert document["supersteps"] == STEPS.to_dicts()
    assert document["epochs"] == EPOCHS.to_dicts()
    assert document["options"]["window"] == [0, 40]
    assert text.startswith('{\n  "supersteps": [\n    {\n      "')
    assert text.endswith("}\n") and not text.endswith("\n\n")
    assert '"époque"' in text


def test_json_with_tiles_holds_the_tile_rows_before_the_epochs() -> None:
    document = json.loads(render_json(_result(), tiles=True))
    assert list(document) == ["supersteps", "tiles", "epochs", "options"]
    assert document["tiles"] == TILES.to_dicts()


def test_json_refuses_a_number_json_cannot_hold() -> None:
    """A NaN would be written as ``NaN``, which no strict JSON reader takes."""
    broken = Supersteps(STEPS.with_columns(balance=pl.Series([math.nan, 0.5])), TILES, EPOCHS, 1, 4)
    with pytest.raises(ValueError):
        render_json(broken)


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, STEPS),
        ({"tiles": True}, TILES),
        ({"epochs": True}, EPOCHS),
        ({"tiles": True, "epochs": True}, EPOCHS),
    ],
)
def test_csv_writes_the_frame_asked_for(options: dict[str, bool], expected: pl.DataFrame) -> None:
    text = render_csv(_result(), **options)
    assert text == expected.write_csv(float_precision=None)
    assert pl.read_csv(text.encode()).equals(expected)


def test_csv_keeps_every_digit() -> None:
    assert "0.3333333333333333" in render_csv(_result())
