"""Every refusal of a dump spec (``tileprof.testing.spec``), word for word at its key, and the
values at the edges that a spec may hold."""

from __future__ import annotations

from typing import Any

import pytest

from tileprof.testing import DumpSpec, SpecError, build_dump


def _group(**keys: Any) -> dict[str, Any]:
    return {"groups": [{"samples": 2, **keys}]}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"groups": "x"}, "groups: a spec needs a 'groups' list"),
        ({"groups": [], "tileCount": 0}, "tileCount: expected an integer ≥ 1, got 0"),
        ({"groups": [], "clockHz": True}, "clockHz: expected an integer ≥ 1, got True"),
        ({"groups": [], "epoch": -1}, "epoch: expected an integer ≥ 0, got -1"),
        ({"groups": [], "seed": 1.5}, "seed: expected an integer ≥ 0, got 1.5"),
        ({"groups": [], "start": "x"}, "start: expected an integer ≥ 0, got 'x'"),
        ({"groups": [3]}, "groups[0]: a group is an object"),
        (_group(kernel=3), "groups[0].kernel: must be a string"),
        (_group(kind=""), "groups[0].kind: must be a non-empty string"),
        (_group(kind=5), "groups[0].kind: must be a non-empty string"),
        (_group(phases=[]), "groups[0].phases: needs at least one phase"),
        (_group(phases=[1, -2]), "groups[0].phases[1]: expected an integer ≥ 0, got -2"),
        (_group(phases=0), "groups[0].phases: expected an integer ≥ 1, got 0"),
        (_group(metadata=[1]), "groups[0].metadata: metadata is an object of name: value"),
        (_group(tail=[2]), "groups[0].tail: tail is {'tiles': [...], 'factor': x}"),
        (
            _group(tail={"tiles": [1], "factor": -1}),
            "groups[0].tail.factor: must be a finite number ≥ 0",
        ),
        (
            _group(tail={"tiles": [1], "factor": float("inf")}),
            "groups[0].tail.factor: must be a finite number ≥ 0",
        ),
        (
            _group(start=True),
            "groups[0].start: one of ('barrier', 'with-previous') or a cycle",
        ),
        (_group(start="later"), "groups[0].start: one of ('barrier', 'with-previous') or a cycle"),
        (_group(gap=-1), "groups[0].gap: expected an integer ≥ 0, got -1"),
        (_group(epoch="1"), "groups[0].epoch: expected an integer ≥ 0, got '1'"),
        (_group(useful=True), "groups[0].useful: expected a fraction in (0, 1], got True"),
        (_group(useful=0), "groups[0].useful: expected a fraction in (0, 1], got 0"),
        (_group(occupancy="1"), "groups[0].occupancy: expected a fraction in (0, 1], got '1'"),
        (_group(tiles=0), "groups[0].tiles: expected an integer ≥ 1, got 0"),
        (_group(tiles=[]), "groups[0].tiles: tiles is a count, a list or {'first', 'count'}"),
        (_group(tiles={"first": 2}), "groups[0].tiles.count: expected an integer ≥ 1, got None"),
        (_group(tiles={"count": 2, "first": 1471}), "groups[0].tiles: tile 1472 ≥ tileCount 1472"),
        (
            _group(duration=True),
            "groups[0].duration: duration must be a number or a distribution",
        ),
        (
            _group(duration={"uniform": [5, 1]}),
            "groups[0].duration: uniform needs [low, high] with low ≤ high",
        ),
        (_group(duration={"normal": [1]}), "groups[0].duration: normal takes 2 value(s)"),
        (_group(duration={"choice": []}), "groups[0].duration: choice takes some value(s)"),
        (
            _group(duration={"normal": [1, 2], "uniform": [1, 2]}),
            "groups[0].duration: duration must be a number or one of constant, uniform, normal, "
            "lognormal, choice, cycle",
        ),
        (
            _group(duration={"normal": [1, float("nan")]}),
            "groups[0].duration: distribution parameters must be finite",
        ),
    ],
)
def test_a_refusal_names_its_key_and_says_why(spec: dict[str, Any], message: str) -> None:
    with pytest.raises(SpecError) as caught:
        DumpSpec.from_mapping(spec)
    assert str(caught.value) == message


def test_the_edges_a_spec_may_hold() -> None:
    """A fraction of 1, phases as a list, an explicit start cycle, an operation, a duration
    and an epoch of the group's own."""
    spec = DumpSpec.from_mapping(
        _group(
            useful=1,
            occupancy=1.0,
            phases=[4, 0],
            start=7,
            operation="op.9",
            duration=300,
            epoch=2,
            gap=5,
        )
    )
    (group,) = spec.groups
    assert (group.useful, group.occupancy, group.phases, group.start) == (1.0, 1.0, (4, 0), 7)
    assert (group.operation, group.epoch, group.gap) == ("op.9", 2, 5)
    assert (group.duration.kind, group.duration.parameters) == ("constant", (300.0,))


def test_metadata_without_an_estimate_is_every_samples_list() -> None:
    """A group with metadata and no ``useful``: every sample carries the metadata as given."""
    dump = build_dump(_group(kernel="k", metadata={"kernelSpec": "Gemm", "rows": 4}))
    assert dump.metadata == [(("kernelSpec", "Gemm"), ("rows", "4"))]
    assert dump.metadata_id.tolist() == [0, 0]


def test_a_sample_too_short_for_useful_cycles_states_zero_of_each() -> None:
    """A one-cycle sample at useful 0.25: rint gives 0 useful and 0 physical cycles, both
    stated (0 is a value, not an absence)."""
    dump = build_dump(_group(kernel="k", duration=1, useful=0.25, occupancy=0.5))
    assert dump.metadata == [(("usefulCycles", "0"), ("physicalWorkCycles", "0"))]


def test_a_distribution_of_one_value_may_be_written_bare() -> None:
    group = DumpSpec.from_mapping(_group(duration={"constant": [5]})).groups[0]
    assert group.duration.parameters == (5.0,)
    group = DumpSpec.from_mapping(_group(duration={"choice": 3})).groups[0]
    assert (group.duration.kind, group.duration.parameters) == ("choice", (3.0,))
