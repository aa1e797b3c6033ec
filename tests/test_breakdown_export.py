"""``tileprof.views.breakdown_export``'s pieces by hand (issue 38: the module's mutation run):
the key cells, the windows in words, the ranks of a side, infinities in JSON, the plain
table's names and fitting, and the job tables of HTA's NCCL rank."""

from __future__ import annotations

import math
from pathlib import Path

import polars as pl
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.views import breakdown_export as B

RANK0 = Path(__file__).resolve().parent.parent / "fixtures" / "hta" / "nccl_2xA100_rank0.json.gz"


def test_key_cells_name_the_device_the_step_and_its_window_rule() -> None:
    """A device without a name is its number; no device and no name is every device; a step
    found from its CPU side or its launches is marked; a breakdown of several traces leads
    with the trace."""
    row = {"trace": "t.json", "device": 0, "device_name": None, "step": None}
    assert B._key_cells(row, 1) == ["0", "whole"]
    named = {**row, "device_name": "NVIDIA H100", "step": 3, "window_from": "cpu_step"}
    assert B._key_cells(named, 1) == ["0 NVIDIA H100", "#3 (cpu)"]
    launches = {**named, "window_from": "launch_attribution"}
    assert B._key_cells(launches, 2) == ["t.json", "0 NVIDIA H100", "#3 (launches)"]
    every = {**row, "device": None, "window_from": "gpu_annotation", "step": 4}
    assert B._key_cells(every, 1) == ["all", "#4"]


def test_windows_in_words() -> None:
    row = {"trace": "t.json", "device": None, "device_name": None, "step": None}
    assert B._window_words(row, 1) == "the whole trace on all devices"
    gpu = {**row, "device": 1, "device_name": "NVIDIA H200", "step": 6}
    assert B._window_words(gpu, 2) == "step 6 on GPU 1 (NVIDIA H200) of t.json"
    assert B._window({"window": 0, "step_before": 1, "step_after": 2}) == "whole"
    assert B._window({"window": 2, "step_before": 4, "step_after": None}) == "#4 → —"


def test_the_ranks_of_a_side() -> None:
    def ranks(values: list[int | None]) -> str:
        frame = pl.DataFrame({"rank": values, "before": [1.0] * len(values)})
        return B._ranks(frame.cast({"rank": pl.Int64}), "before")

    assert ranks([None]) == "no rank (no distributedInfo)"
    assert ranks([0]) == "rank 0"
    assert ranks([1, 0, 1]) == "ranks 0, 1"
    assert ranks([None, 2]) == "rank 2 and no rank"


def test_an_infinite_change_is_a_word_in_json() -> None:
    assert B._signed_inf(math.inf) == "+inf" and B._signed_inf(-math.inf) == "-inf"
    assert B._signed_inf(1.5) == 1.5 and B._signed_inf("x") == "x"


def test_the_plain_table_cuts_names_and_drops_figures_to_fit() -> None:
    """Names lose their middle on a narrow terminal, then the figures go, rightmost first; an
    empty name is a dash."""
    rows = [["x" * 50, "1", "2"], ["", "3", "4"]]
    assert B._table("T", ["name", "alpha", "beta"], rows, names=1).splitlines() == [
        "T",
        "name" + " " * 48 + "alpha  beta",
        "x" * 50 + "      1     2",
        "—" + " " * 55 + "3     4",
    ]
    narrow = B._table("T", ["name", "alpha", "beta"], rows, width=30, names=1).splitlines()
    assert narrow == ["T", "name", "x" * 15 + "…" + "x" * 14, "—"]


def test_a_frame_table_formats_its_figures_and_names_its_first_column() -> None:
    """Strings as they are, numbers by the number policy, a missing one a dash; only the first
    column is a name (left-aligned), and the width is the terminal's."""
    frame = pl.DataFrame(
        {"job": ["nccl×2"], "rank": [0], "trace": ["t.json"], "x": [1234.5], "y": [None]},
        schema_overrides={"y": pl.Float64},
    )
    assert B._frame_table("R", frame, None).splitlines() == [
        "R",
        "job     rank   trace      x  y",
        "nccl×2     0  t.json  1,234  —",
    ]
    assert B._frame_table("R", frame, 25).splitlines() == [
        "R", "job     rank   trace", "nccl×2     0  t.json"
    ]  # fmt: skip


def test_the_job_tables_of_hta_nccl_rank() -> None:
    """HTA's 2×A100 NCCL rank alone: its 21 collectives and its overlap row, titled."""
    lines = CliRunner().invoke(cli, ["breakdown", str(RANK0)]).stdout.splitlines()
    at = lines.index("Collectives across ranks")
    assert lines[at + 2].split() == [
        "nccl×2", "0", "0", "broadcast", "1", "2", "Float", "212,480", "30.98", "6.860", "6.860",
        "0", "0",
    ]  # fmt: skip
    at = lines.index("Ranks: compute and communication overlap")
    assert lines[at + 1 : at + 3] == [
        "job     rank                      trace  collectives  computation_us  total_comm_us  "
        "exposed_comm_us  overlapped_comm_us  comm_overlap",
        "nccl×2     0  nccl_2xA100_rank0.json.gz           21         116,047         46,876  "
        "         39,529               7,347        0.1567",
    ]
