"""Filter edges, case by case against the rules of docs/metrics.md ("Filters")."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.samples import frame, sample, write_dump
from tileprof.analyses.filters import (
    Filters,
    apply_filters,
    check_epoch,
    glob_to_regex,
    parse_window,
    present_epochs_and_groups,
)
from tileprof.commands.cli import cli
from tileprof.core.errors import OptionError

# --window 100:200 keeps offset < 200 and offset + duration > 100; a zero-length sample is kept
# when 100 ≤ offset < 200. Each sample's kernel says whether it is kept.
EDGES = [
    sample(0, 100, 0, "in_zero_at_start"),
    sample(1, 150, 0, "in_zero_inside"),
    sample(2, 199, 0, "in_zero_last_cycle"),
    sample(3, 200, 0, "out_zero_at_end"),
    sample(4, 99, 0, "out_zero_before"),
    sample(5, 50, 50, "out_ends_at_start"),
    sample(6, 200, 10, "out_starts_at_end"),
    sample(7, 90, 11, "in_overlaps_start_by_one"),
    sample(8, 199, 5, "in_overlaps_end_by_one"),
    sample(9, 0, 1000, "in_covers_window"),
]
KEPT = [
    "in_zero_at_start",
    "in_zero_inside",
    "in_zero_last_cycle",
    "in_overlaps_start_by_one",
    "in_overlaps_end_by_one",
    "in_covers_window",
]


def _kernels(filters: Filters) -> list[str]:
    return apply_filters(frame(EDGES), filters)["kernel"].cast(str).to_list()


def test_window_edges_and_zero_length_samples() -> None:
    assert _kernels(Filters(window=(100, 200))) == KEPT


def test_window_through_the_command(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "edges.json", EDGES)
    args = ["summary", str(dump), "--window", "100:200", "--format", "json"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    document = json.loads(result.stdout)
    assert document["matchedSampleCount"] == 6
    assert sorted(g["name"] for g in document["groups"]) == sorted(KEPT)
    zero = {g["name"]: g for g in document["groups"]}["in_zero_at_start"]
    assert (zero["sampleCount"], zero["phaseCycles"], zero["maximumCycles"]) == (1, 0, 0)


def test_at_keeps_samples_active_at_that_cycle() -> None:
    # offset ≤ 100 < offset + duration: a zero-length sample is never active.
    assert _kernels(Filters(at=100)) == ["in_overlaps_start_by_one", "in_covers_window"]
    assert _kernels(Filters(at=199)) == ["in_overlaps_end_by_one", "in_covers_window"]


def test_window_of_one_cycle() -> None:
    assert _kernels(Filters(window=(199, 200))) == [
        "in_zero_last_cycle",
        "in_overlaps_end_by_one",
        "in_covers_window",
    ]


def test_describe_names_each_option_in_order() -> None:
    filters = Filters(epoch=1, at=5, window=(2, 9), kernels=("a*", "b"), kind="exchange")
    assert filters.describe() == [
        "--epoch 1",
        "--at 5",
        "--window 2:9",
        "--kernel a*",
        "--kernel b",
        "--kind exchange",
    ]
    assert Filters().describe() == []


def test_python_api_shapes_are_normalised() -> None:
    assert Filters(kernels="a*").kernels == ("a*",)  # type: ignore[arg-type]
    assert Filters(kernels=["a", "b"]).kernels == ("a", "b")  # type: ignore[arg-type]
    assert Filters(window="3:7").window == (3, 7)  # type: ignore[arg-type]
    assert Filters(window=[0, 1]).window == (0, 1)  # type: ignore[arg-type]


WINDOW = "window: expected (START, END) with 0 ≤ START < END, not "


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kernels": [1]}, "kernels: expected glob strings, not [1]"),
        ({"kernels": 5}, "kernels: expected glob strings, not 5"),
        ({"window": (5, 5)}, WINDOW + "(5, 5)"),
        ({"window": (-1, 5)}, WINDOW + "(-1, 5)"),
        ({"window": (True, 5)}, WINDOW + "(True, 5)"),
        ({"window": (1, 2, 3)}, WINDOW + "(1, 2, 3)"),
        ({"window": (1.0, 2)}, WINDOW + "(1.0, 2)"),
        ({"epoch": "1"}, "epoch: expected an integer, not '1'"),
        ({"epoch": True}, "epoch: expected an integer, not True"),
        ({"at": 2.5}, "at: expected an integer, not 2.5"),
        ({"kind": 3}, "kind: expected a string, not 3"),
    ],
)
def test_bad_filter_values(options: dict[str, Any], message: str) -> None:
    with pytest.raises(OptionError) as info:
        Filters(**options)
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("5", "--window '5': expected START:END in cycles, e.g. 200000:260000"),
        ("a:9", "--window 'a:9': expected START:END in cycles, e.g. 200000:260000"),
        ("9:3", "--window '9:3': need 0 ≤ START < END"),
        ("4:4", "--window '4:4': need 0 ≤ START < END"),
        ("-1:3", "--window '-1:3': need 0 ≤ START < END"),
    ],
)
def test_bad_window_text(text: str, message: str) -> None:
    with pytest.raises(OptionError) as info:
        parse_window(text)
    assert str(info.value) == message


def test_window_text() -> None:
    assert parse_window("0:1") == (0, 1)
    assert parse_window("200000:260000") == (200_000, 260_000)


@pytest.mark.parametrize(
    ("glob", "regex"),
    [
        ("gemm_*", "(?s)^gemm_.*$"),
        ("a?c", "(?s)^a.c$"),
        ("[ab]x", "(?s)^[ab]x$"),
        ("[!ab]x", "(?s)^[^ab]x$"),
        ("[]a]", "(?s)^[\\]a]$"),
        ("[!]a]", "(?s)^[^\\]a]$"),
        ("[a^\\]", "(?s)^[a\\^\\\\]$"),
        ("a[b", "(?s)^a\\[b$"),
        ("a[", "(?s)^a\\[$"),  # a bracket at the end opens nothing
        ("[!", "(?s)^\\[!$"),
        ("[]]", "(?s)^[\\]]$"),
        ("[!]]", "(?s)^[^\\]]$"),
        ("[a]b]", "(?s)^[a]b\\]$"),
        ("[ab]x[cd]", "(?s)^[ab]x[cd]$"),
        ("[XY]", "(?s)^[XY]$"),  # only \\ ^ [ ] are escaped inside brackets
        ("x.y+", "(?s)^x\\.y\\+$"),
        ("", "(?s)^$"),
    ],
)
def test_glob_to_regex(glob: str, regex: str) -> None:
    assert glob_to_regex(glob) == regex


def test_epoch_kind_and_kernel_filters_combine() -> None:
    samples = [
        sample(0, 0, 5, "gemm_a", epoch=1),
        sample(1, 0, 5, "gemm_b", epoch=2),
        sample(2, 0, 5, None, kind="exchange", epoch=1),
        sample(3, 0, 5, "", kind="exchange", epoch=1),
        sample(4, 0, 5, "copy", kind="copy", epoch=1),
    ]
    kept = frame(samples)

    def tiles(**options: Any) -> list[int]:
        return apply_filters(kept, Filters(**options))["tile"].to_list()

    assert tiles(epoch=1) == [0, 2, 3, 4]
    assert tiles(kernels=("gemm_*",)) == [0, 1]
    assert tiles(kernels=("exch*",)) == [2, 3]  # no kernel, or an empty one: the kind
    assert tiles(kernels=("gemm_b", "copy")) == [1, 4]
    assert tiles(kind="exchange", epoch=1) == [2, 3]
    assert tiles(kind="copy", kernels=("gemm_*",)) == []
    assert apply_filters(kept, None) is kept
    assert apply_filters(kept, Filters()) is kept


def test_unusable_glob_is_an_option_error() -> None:
    with pytest.raises(OptionError) as info:
        apply_filters(frame(EDGES), Filters(kernels=("a*", "[z-a]")))
    # every glob given, and the first line of the regex engine's complaint (polars words it)
    message = str(info.value)
    assert message.startswith("--kernel 'a* [z-a]': not a usable glob (regex ")
    assert message.endswith(")") and "\n" not in message


def test_each_filter_keeps_the_others() -> None:
    samples = [
        sample(0, 0, 50, "gemm_a", epoch=1),
        sample(1, 0, 50, "gemm_a", epoch=2),
        sample(2, 0, 50, "gemm_b", epoch=None),
    ]
    kept = frame(samples)

    def tiles(**options: Any) -> list[int]:
        return apply_filters(kept, Filters(**options))["tile"].to_list()

    assert tiles(at=10) == [0, 1, 2]
    assert tiles(epoch=1, at=10) == [0]
    assert tiles(epoch=2, window=(10, 20)) == [1]
    assert tiles(epoch=2, kernels=("gemm_*",)) == [1]
    # a sample without an epoch matches no --epoch
    assert tiles(epoch=1) == [0]


def test_an_epoch_that_is_not_there_names_those_that_are() -> None:
    """``--epoch 3`` of a dump of epochs 1 and 2 (and a sample of none): an error listing 1, 2,
    in order; a dump whose samples state no epoch lists none; an epoch present, or none asked,
    passes."""
    samples = frame(
        [sample(0, 0, 5, epoch=2), sample(1, 0, 5, epoch=1), sample(2, 0, 5, epoch=None)]
    )
    with pytest.raises(OptionError) as error:
        check_epoch(samples, 3)
    assert str(error.value) == "--epoch 3: no samples in that epoch (epochs: 1, 2)"
    with pytest.raises(OptionError) as error:
        check_epoch(frame([sample(0, 0, 5, epoch=None)]), 1)
    assert str(error.value) == "--epoch 1: no samples in that epoch (epochs: none)"
    check_epoch(samples, 2)
    check_epoch(samples, None)


def test_present_epochs_and_groups_lists_twelve_names_cut_to_sixty() -> None:
    """What a filter that matched nothing shows: the epochs and the group names, sorted, at
    most 12 of each with how many in all, each name cut to 60 characters in its middle, a
    sample without a kernel named by its kind."""
    long = "z" * 30 + "_middle_" + "h" * 40  # 78 characters: 30 kept before "…", 29 after
    names = [f"k{n:02d}" for n in range(12)] + [long]
    samples = frame(
        [sample(t, 0, 5, name, epoch=t % 2) for t, name in enumerate(names)]
        + [sample(20, 0, 5, None, kind="exchange", epoch=None)]
    )
    assert present_epochs_and_groups(samples) == [
        "epochs present: 0, 1",
        "groups present: exchange, " + ", ".join(names[:11]) + ", … (14 in all)",
    ]
    shown = present_epochs_and_groups(samples, shown=20)[1]
    assert shown.endswith(", k11, " + "z" * 30 + "…" + "h" * 29)
    empty = frame([sample(0, 0, 5, None, kind="compute", epoch=None)]).head(0)
    assert present_epochs_and_groups(empty) == ["epochs present: none", "groups present: none"]
