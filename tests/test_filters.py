"""Filter edges, case by case against the rules of docs/metrics.md ("Filters")."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tests.samples import frame, sample, write_dump
from tileprof.cli import cli
from tileprof.filters import Filters, apply_filters

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
