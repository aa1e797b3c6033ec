"""How a dump spec becomes samples (``tileprof.testing.spec.build_dump``), worked by hand: the
spec's start, clock and tile count, barrier and with-previous starts and a start cycle, gaps
inside and between phase blocks, tiles taking samples in turn, phase numbering across groups,
durations clipped at 0, an empty group; each distribution drawn as numpy draws it; spec files
refused at their place."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tileprof.testing import DumpSpec, Duration, SpecError, build_dump

SPEC: dict[str, Any] = {
    "tileCount": 4,
    "clockHz": 2_000_000_000,
    "start": 100,
    "epoch": 1,
    "groups": [
        {"kernel": "a", "samples": 4, "tiles": 3, "phases": 2, "duration": 10, "gap": 3},
        {"kernel": "b", "samples": 2, "tiles": [3], "duration": 5, "gap": 2},
        {"kernel": "c", "samples": 1, "tiles": [0], "phases": [7], "duration": 4,
         "start": "with-previous"},
        {"kernel": "d", "samples": 1, "tiles": [1], "duration": {"uniform": [-5, -1]},
         "start": 1000, "epoch": 2},
        {"kernel": "e", "samples": 0},
        {"kernel": "f", "samples": 1, "tiles": {"first": 2, "count": 1}, "duration": 1},
    ],
}  # fmt: skip


def test_a_spec_scheduled_by_hand() -> None:
    """a: two phase blocks of two samples on tiles 0 and 1 from the spec's start 100, the
    second block 3 cycles (the gap) after the first ends; b: a barrier 2 cycles after a's last
    block and its gap, one tile running its two samples back to back with the gap between;
    c: with b's start, phase 7 as given; d: at cycle 1000, its negative draws clipped to 0; e:
    nothing, though it takes phase 9; f: phase 10, after the barrier at d's end."""
    dump = build_dump(SPEC)
    assert (dump.clock_hz, dump.tile_count) == (2_000_000_000, 4)
    rows = list(
        zip(
            dump.strings_of("kernel").tolist(), dump.tile.tolist(), dump.offset.tolist(),
            dump.duration.tolist(), dump.phase.tolist(), dump.epoch.tolist(), strict=True,
        )
    )  # fmt: skip
    assert rows == [
        ("a", 0, 100, 10, 0, 1),
        ("a", 1, 100, 10, 0, 1),
        ("a", 0, 113, 10, 1, 1),
        ("a", 1, 113, 10, 1, 1),
        ("b", 3, 128, 5, 2, 1),
        ("b", 3, 135, 5, 2, 1),
        ("c", 0, 128, 4, 7, 1),
        ("d", 1, 1000, 0, 8, 2),
        ("f", 2, 1000, 1, 10, 1),
    ]


def test_tiles_given_as_first_and_count_or_a_count() -> None:
    spec = DumpSpec.from_mapping(
        {"groups": [{"samples": 1, "tiles": {"first": 2, "count": 3}}, {"samples": 1, "tiles": 1}]}
    )
    assert [g.tiles for g in spec.groups] == [(2, 3, 4), (0,)]


@pytest.mark.parametrize(
    ("kind", "parameters", "expected"),
    [
        ("constant", (7.0,), lambda rng: np.full(5, 7.0)),
        ("uniform", (2.0, 9.0), lambda rng: rng.uniform(2.0, 9.0, 5)),
        ("normal", (50.0, 4.0), lambda rng: rng.normal(50.0, 4.0, 5)),
        ("lognormal", (50.0, 0.5), lambda rng: 50.0 * np.exp(rng.normal(0.0, 0.5, 5))),
        ("choice", (1.0, 8.0), lambda rng: rng.choice(np.array([1.0, 8.0]), 5)),
        ("cycle", (1.0, 2.0, 3.0), lambda rng: np.array([1.0, 2.0, 3.0, 1.0, 2.0])),
    ],
)
def test_each_distribution_draws_as_numpy_does(
    kind: str, parameters: tuple[float, ...], expected: Any
) -> None:
    drawn = Duration(kind, parameters).draw(np.random.default_rng([3, 0]), 5)
    assert drawn.tolist() == expected(np.random.default_rng([3, 0])).tolist()


def test_a_duration_is_written_back_as_it_was_given() -> None:
    assert Duration.parse(300, "d").to_json() == 300
    assert Duration.parse(2.5, "d").to_json() == 2.5
    assert Duration.parse({"normal": [20000, 400.5]}, "d").to_json() == {"normal": [20000, 400.5]}
    assert isinstance(Duration.parse(300.0, "d").to_json(), int)


def test_a_spec_file_is_refused_at_its_place(tmp_path: Path) -> None:
    def refusal(text: str | None) -> str:
        path = tmp_path / "s.json"
        if text is not None:
            path.write_text(text)
        with pytest.raises(SpecError) as caught:
            DumpSpec.from_file(path)
        path.unlink(missing_ok=True)
        return str(caught.value).replace(str(tmp_path), "T")

    assert refusal(None) == "T/s.json: no such spec file"
    assert refusal('{\n  "groups": [,]\n}') == "T/s.json: line 2: invalid JSON: Expecting value"
    assert refusal("[1]") == "T/s.json: a spec is a JSON object with a 'groups' list"
    bad_group = json.dumps({"groups": [{"samples": -1}]})
    assert refusal(bad_group) == ("T/s.json: groups[0].samples: expected an integer ≥ 0, got -1")
