"""The run table's own rules, row by row (issue 38, the mutation run of core/run_schema.py).

Every expected figure is worked out by hand in the comments, from the rows written here and
two made-up spec files (a chip and a tile device) whose numbers make the arithmetic short.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from tileprof.core import specs
from tileprof.core.run_schema import (
    RUN_COLUMNS,
    RUN_SCHEMA,
    call_statistics,
    concat_runs,
    runs_from_rows,
    tile_runs,
    tile_target_name,
    with_derived,
)

SPECS = {
    "chip.toml": """
name = "hand chip"
kind = "chip"
match = ['^hand chip$']
[sources]
made_up = "written by the test"
[peaks]
matrix_bf16 = { value = 100, unit = "TFLOP/s", source = "made_up" }
fpu_hifi2 = { value = 2, unit = "TFLOP/s/core", source = "made_up" }
[memory]
bandwidth = { value = 1, unit = "TB/s", source = "made_up" }
latency_floor = { value = 0.5, unit = "us", source = "made_up" }
""",
    "tile.toml": """
name = "hand tile"
kind = "tile"
match = ['^hand tile']
[sources]
made_up = "written by the test"
[peaks]
matrix_bf16 = { value = 100, unit = "FLOP/cycle/tile", source = "made_up" }
[memory]
bandwidth = { value = 10, unit = "B/cycle/tile", source = "made_up" }
issue_slots = { value = 2, unit = "slot/cycle/tile", source = "made_up" }
latency_floor = { value = 0.5, unit = "us", source = "made_up" }
""",
}


@pytest.fixture
def hand_specs(tmp_path: Path) -> Iterator[None]:
    paths = []
    for name, text in SPECS.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    specs.use_specs(paths)
    yield
    specs.use_specs([])


@dataclass
class Summary:
    clock_hz: int
    tile_count: int
    groups: pl.DataFrame


def test_a_tile_groups_row_and_metadata_in_full(hand_specs: None) -> None:
    """Every statistic of a group, and the work ``group_work`` states for it, lands in its
    row: times are cycles / clock, the work's mac and bytes are the row's, the statistics and
    the stated work (not a null one) go to ``metadata`` in order, dimensions only where a
    group has them. 4 tiles at 1 GHz on the hand tile spec: 0.4 TFLOP/s bf16, 40 GB/s,
    8e9 issue slots/s, a 0.5 µs floor."""
    groups = pl.DataFrame(
        {
            "name": ["gemm_bf16_a", "mystery"],
            "dimensions": [{"tile": 3}, None],
            "sampleCount": [10, 20],
            "tileCount": [4, 2],
            "phaseCount": [2, 3],
            "phaseCycles": [2000, 3000],
            "workCycles": [1800, 2500],
            "usefulCycles": [1600.0, 12000.0],
            "usefulUtilization": [0.4, 0.5],
            "workLaneOccupancy": [0.9, 0.8],
            "deviceUsefulUtilization": [0.2, 0.25],
            "maximumCycles": [1000, 1500],
            "p50Cycles": [500, 700],
            "p95Cycles": [900, 1400],
        }
    )
    work = pl.DataFrame(
        {
            "name": ["mystery", "gemm_bf16_a"],
            "kernelSpec": [None, "mm"],
            "kernelSpecs": [2, 1],
            "outputElements": [None, 64],
            "workUnknown": ["several kernelSpecs", None],
            "mac": [None, 1_000_000],
            "bytes": [8000, 4000],
        }
    )
    summary = Summary(1_000_000_000, 4, groups)
    runs = tile_runs(summary, source="dump.json", target="hand tile (4 tiles @ 1 GHz)", work=work)
    assert runs.schema == RUN_SCHEMA
    gemm, mystery = runs.to_dicts()
    statistics = {
        "sampleCount": 10,
        "tileCount": 4,
        "phaseCount": 2,
        "phaseCycles": 2000,
        "workCycles": 1800,
        "usefulCycles": 1600.0,
        "usefulUtilization": 0.4,
        "workLaneOccupancy": 0.9,
        "deviceUsefulUtilization": 0.2,
    }
    stated = {"kernelSpec": "mm", "kernelSpecs": 1, "outputElements": 64}
    assert gemm["metadata"] == json.dumps(statistics | stated | {"dimensions": {"tile": 3}})
    assert {k: gemm[k] for k in ("target", "target_kind", "source", "workload", "kernel")} == {
        "target": "hand tile (4 tiles @ 1 GHz)",
        "target_kind": "tile",
        "source": "dump.json",
        "workload": None,
        "kernel": "gemm_bf16_a",
    }
    assert (gemm["op_family"], gemm["dtype"], gemm["per"], gemm["calls"]) == (
        "gemm",
        "bf16",
        "active",
        None,
    )
    # 2000, 1000, 500 and 900 cycles at 1 GHz
    assert (gemm["time_us"], gemm["max_us"], gemm["p50_us"], gemm["p95_us"]) == (
        2.0,
        1.0,
        0.5,
        0.9,
    )
    assert (gemm["mac"], gemm["bytes"]) == (1_000_000, 4000)
    # 2 × 1e6 FLOP in 2 µs: 1 TFLOP/s of 0.4; compute 2e6 / 0.4e12 = 5 µs against memory
    # 4000 B / 40 GB/s = 0.1 µs; the usefulCycles are not used where FLOPs are known
    assert gemm["tflops"] == 1.0
    assert gemm["peak_tflops"] == pytest.approx(0.4, rel=1e-12)
    assert gemm["peak_fraction"] == pytest.approx(2.5, rel=1e-12)
    assert gemm["arithmetic_intensity"] == 500.0
    assert gemm["roofline_us"] == pytest.approx(5.0, rel=1e-12)
    assert gemm["roofline_fraction"] == pytest.approx(2.5, rel=1e-12)
    assert gemm["bound"] == "compute"

    other = {
        "sampleCount": 20,
        "tileCount": 2,
        "phaseCount": 3,
        "phaseCycles": 3000,
        "workCycles": 2500,
        "usefulCycles": 12000.0,
        "usefulUtilization": 0.5,
        "workLaneOccupancy": 0.8,
        "deviceUsefulUtilization": 0.25,
    }
    # the work names several kernelSpecs: no kernelSpec, no outputElements, no dimensions
    assert mystery["metadata"] == json.dumps(
        other | {"kernelSpecs": 2, "workUnknown": "several kernelSpecs"}
    )
    assert (mystery["op_family"], mystery["dtype"]) == ("other", None)
    assert (mystery["time_us"], mystery["max_us"], mystery["p50_us"], mystery["p95_us"]) == (
        3.0,
        1.5,
        0.7,
        1.4,
    )
    assert (mystery["mac"], mystery["bytes"], mystery["tflops"]) == (None, 8000, None)
    # no FLOPs: the issue-slot roofline, 12000 cycles / 8e9 slots/s = 1.5 µs, against memory
    # 8000 B / 40 GB/s = 0.2 µs: compute bound, half of the 3 µs it took
    assert mystery["roofline_us"] == pytest.approx(1.5, rel=1e-12)
    assert mystery["roofline_fraction"] == pytest.approx(0.5, rel=1e-12)
    assert mystery["bound"] == "compute"


def test_a_tile_groups_target_is_named_from_its_clock_and_tiles() -> None:
    """The default target name; a group the work does not name has no work of its own."""
    groups = pl.DataFrame({"name": ["g"], "phaseCycles": [3]})
    work = pl.DataFrame({"name": ["h"], "kernelSpec": ["mm"], "mac": [5], "bytes": [6]})
    runs = tile_runs(Summary(2_500_000_000, 8, groups), source="s", work=work)
    assert runs["target"].to_list() == ["tile device (8 tiles @ 2.5 GHz)"]
    # 3 cycles at 2.5 GHz: 3e6 / 2.5e9 µs
    assert runs["time_us"].to_list() == [0.0012]
    assert runs["metadata"].to_list() == ['{"phaseCycles": 3}']
    assert runs.select("mac", "bytes").row(0) == (None, None)


def test_rows_are_classified_from_the_hint_then_kernel_implementation_and_workload() -> None:
    """The first of classify_hint, kernel, implementation, workload that names a family and
    a dtype gives them; a stated op_family or dtype is kept; every other column as given."""
    gpu = {"target": "T", "target_kind": "gpu"}
    rows = [
        {**gpu, "kernel": "softmax_f32", "classify_hint": "gemm bf16"},
        {**gpu, "kernel": "softmax_f32", "implementation": "gemm_bf16"},
        {**gpu, "implementation": "reduce_int8", "workload": "gemm bf16"},
        {**gpu, "workload": "softmax f16"},
        {**gpu, "kernel": "gemm_bf16_x", "op_family": "attention", "dtype": "f8"},
    ]
    runs = runs_from_rows(rows)
    assert runs.select("op_family", "dtype").rows() == [
        ("gemm", "bf16"),
        ("softmax", "f32"),
        ("reduce", "int8"),
        ("softmax", "f16"),
        ("attention", "f8"),
    ]
    assert runs["kernel"].to_list() == ["softmax_f32", "softmax_f32", None, None, "gemm_bf16_x"]
    assert runs["implementation"].to_list() == [None, "gemm_bf16", "reduce_int8", None, None]
    assert runs["workload"].to_list() == [None, None, "gemm bf16", "softmax f16", None]
    # nothing else was filled in from the classifier
    for name in ("device", "source", "shape", "per", "launch_op", "metadata"):
        assert runs[name].to_list() == [None] * 5, name


def test_metadata_is_stored_as_json_in_the_rows_order() -> None:
    rows: list[dict[str, Any]] = [
        {"target": "T", "target_kind": "gpu", "metadata": {"b": 1, "a": [1, 2]}},
        {"target": "T", "target_kind": "gpu", "metadata": {}},
        {"target": "T", "target_kind": "gpu", "metadata": '{"x": 1}'},
        {"target": "T", "target_kind": "gpu", "metadata": {"when": Path("p")}},
    ]
    assert runs_from_rows(rows)["metadata"].to_list() == [
        '{"b": 1, "a": [1, 2]}',
        None,
        '{"x": 1}',
        '{"when": "p"}',
    ]


def test_a_row_with_columns_the_table_lacks_is_refused() -> None:
    rows = [{"target": "T", "target_kind": "gpu", "extra": 1, "bogus": 2, "classify_hint": "x"}]
    with pytest.raises(ValueError) as caught:
        runs_from_rows(rows)
    assert str(caught.value) == "not run columns: ['bogus', 'extra']"


def test_derived_figures_by_hand(hand_specs: None) -> None:
    """Speedup, TFLOP/s, the fraction of peak (computed where it can be, else the one given),
    J per MAC, a GEMM's bytes from its shape (unless stated), and the roofline. The hand chip:
    100 TFLOP/s bf16 matrix, 2 TFLOP/s per core at HiFi2, 1 TB/s, a 0.5 µs floor."""
    common = {"target": "hand chip", "target_kind": "gpu", "time_us": 100.0}
    rows = [
        # 1000x2000x500 bf16: (1000·500 + 500·2000 + 1000·2000) × 2 B = 7e6 B; 1e9 MAC
        {
            **common,
            "kernel": "gemm_bf16_a",
            "shape": "1000x2000x500",
            "mac": 1_000_000_000,
            "energy_j": 0.5,
            "baseline_time_us": 150.0,
            "peak_fraction": 0.9,
        },
        # no work: the peak_fraction given stays
        {**common, "kernel": "gemm_bf16_b", "peak_fraction": 0.7},
        # bytes stated: kept over the shape's
        {**common, "kernel": "gemm_bf16_c", "shape": "1000x2000x500", "bytes": 123},
        # f8 is one byte: 2·4 + 4·3 + 2·3 = 26 B
        {**common, "kernel": "gemm_f8_d", "shape": "2x3x4"},
        # not a GEMM, or no width (b1), or not MxNxK: no bytes
        {**common, "kernel": "softmax_bf16", "shape": "2x3x4"},
        {**common, "kernel": "gemm_b1", "shape": "2x3x4"},
        {**common, "kernel": "gemm_bf16_e", "shape": "2x3"},
        # a dimension past Int64: no bytes, and no error
        {**common, "kernel": "gemm_bf16_g", "shape": "99999999999999999999x2x3"},
        # HiFi2 on 10 cores: 20 TFLOP/s, which 1e9 MAC in 100 µs reach
        {
            **common,
            "kernel": "gemm_bf16_f",
            "mac": 1_000_000_000,
            "cores": 10,
            "metadata": {"math_fidelity": "HiFi2"},
        },
    ]
    runs = runs_from_rows(rows).to_dicts()
    first = runs[0]
    assert first["speedup"] == 1.5
    assert first["tflops"] == 20.0  # 2e9 FLOP / 100 µs
    assert first["peak_tflops"] == 100.0
    assert first["peak_fraction"] == 0.2  # computed, not the 0.9 given
    assert first["j_per_mac"] == 0.5 / 1e9
    assert first["bytes"] == 7_000_000
    assert first["arithmetic_intensity"] == pytest.approx(2e9 / 7e6, rel=1e-12)
    # compute 2e9 / 100e12 = 20 µs, memory 7e6 / 1e12 = 7 µs
    assert first["roofline_us"] == pytest.approx(20.0, rel=1e-12)
    assert first["bound"] == "compute"
    assert first["roofline_fraction"] == pytest.approx(0.2, rel=1e-12)
    assert [r["peak_fraction"] for r in runs[1:]] == [0.7, None, None, None, None, None, None, 1.0]
    assert [r["bytes"] for r in runs] == [7_000_000, None, 123, 26, None, None, None, None, None]
    assert [r["peak_tflops"] for r in runs] == [
        *(100.0, 100.0, 100.0, None, None, None, 100.0, 100.0, 20.0)
    ]
    assert [r["speedup"] for r in runs[1:]] == [None] * 8


def test_a_frame_without_bytes_or_peak_fraction_gets_them(hand_specs: None) -> None:
    """``with_derived`` (re)computes a frame that lacks the derived columns, ``bytes`` and
    ``peak_fraction`` too: a GEMM's bytes from its shape, the fraction from its FLOPs."""
    row = {"target": "hand chip", "target_kind": "gpu", "kernel": "gemm_bf16_a"}
    rows = [row | {"time_us": 100.0, "shape": "1000x2000x500", "mac": 1_000_000_000}]
    derived = [c.name for c in RUN_COLUMNS if c.derived]
    bare = runs_from_rows(rows).drop(*derived, "bytes", "peak_fraction")
    out = with_derived(bare)
    assert out.schema == RUN_SCHEMA
    got = out.row(0, named=True)
    # 7e6 B as above; 20 TFLOP/s of 100
    assert (got["bytes"], got["tflops"], got["peak_fraction"]) == (7_000_000, 20.0, 0.2)


def test_text_in_a_gpu_rows_useful_cycles_is_no_error() -> None:
    """Only a tile group's metadata.usefulCycles is read, and as a number where it is one: a
    GPU source's field of that name holding text leaves the row as it is."""
    rows = [
        {"target": "T", "target_kind": "gpu", "metadata": {"usefulCycles": "n/a"}},
        {"target": "T", "target_kind": "tile", "metadata": {"usefulCycles": "n/a"}},
    ]
    runs = runs_from_rows(rows)
    assert runs["roofline_us"].to_list() == [None, None]


def test_the_spread_of_the_devices_of_one_run() -> None:
    """Per run of one file: the devices, fastest and slowest time, (slowest − fastest) /
    fastest, and the slowest device, the first in row order on a tie. Another file or another
    stated math fidelity: another run."""
    base = {"target": "T", "target_kind": "gpu", "kernel": "k"}
    rows = [
        {**base, "source": "a.csv: row 1", "device": "GPU 0", "time_us": 10.0},
        {**base, "source": "a.csv: row 2", "device": "GPU 1", "time_us": 15.0},
        {**base, "source": "a.csv: row 3", "device": "GPU 2", "time_us": 15.0},
        {**base, "source": "b.csv: row 1", "device": "GPU 0", "time_us": 40.0},
        {
            **base,
            "source": "a.csv: row 4",
            "device": "GPU 3",
            "time_us": 1.0,
            "metadata": {"math_fidelity": "LoFi"},
        },
        {**base, "kernel": "z", "source": "a.csv", "device": "GPU 0", "time_us": 0.0},
        {**base, "kernel": "z", "source": "a.csv", "device": "GPU 1", "time_us": 3.0},
    ]
    runs = runs_from_rows(rows)
    columns = ["devices", "device_min_us", "device_max_us", "device_spread", "slowest_device"]
    assert runs.select(columns).rows() == [
        (3, 10.0, 15.0, 0.5, "GPU 1"),
        (3, 10.0, 15.0, 0.5, "GPU 1"),
        (3, 10.0, 15.0, 0.5, "GPU 1"),
        (1, 40.0, 40.0, 0.0, "GPU 0"),
        (1, 1.0, 1.0, 0.0, "GPU 3"),
        # the fastest took no time: no spread
        (2, 0.0, 3.0, None, "GPU 1"),
        (2, 0.0, 3.0, None, "GPU 1"),
    ]
    assert list(runs.columns) == list(RUN_SCHEMA)


def test_a_row_without_a_device_has_no_spread() -> None:
    """docs/runs.md: the spread columns are "all null on a row without a device", also where
    the row shares its file, kernel and the rest with rows of devices (the fastest and slowest
    time and the spread were its run's: issue 38, found by the mutation run)."""
    base = {"target": "T", "target_kind": "gpu", "kernel": "k"}
    rows: list[dict[str, Any]] = [
        {**base, "source": "a.csv: row 1", "device": "GPU 0", "time_us": 10.0},
        {**base, "source": "a.csv: row 2", "device": "GPU 1", "time_us": 15.0},
        {**base, "source": "a.csv: row 3", "device": None, "time_us": 2.0},
    ]
    columns = ["devices", "device_min_us", "device_max_us", "device_spread", "slowest_device"]
    assert runs_from_rows(rows).select(columns).rows() == [
        (2, 10.0, 15.0, 0.5, "GPU 1"),
        (2, 10.0, 15.0, 0.5, "GPU 1"),
        (None, None, None, None, None),
    ]


def test_call_statistics_by_nearest_rank() -> None:
    """count, total, mean, p50 and p95 at rank ⌈n·p⌉ of the sorted calls, max."""
    frame = pl.DataFrame(
        {
            "k": ["a"] * 5 + ["b"] * 20,
            "d": [5.0, 1.0, 4.0, 2.0, 3.0] + [float(x) for x in range(20, 0, -1)],
        }
    )
    out = frame.group_by("k", maintain_order=True).agg(*call_statistics(pl.col("d")))
    assert out.columns == ["k", "count", "total_us", "mean_us", "p50_us", "p95_us", "max_us"]
    # a: ⌈2.5⌉ = 3rd and ⌈4.75⌉ = 5th of 1..5; b: ⌈10⌉ = 10th and ⌈19⌉ = 19th of 1..20
    assert out.rows() == [
        ("a", 5, 15.0, 3.0, 3.0, 5.0, 5.0),
        ("b", 20, 210.0, 10.5, 10.0, 19.0, 20.0),
    ]


def test_no_frames_concatenate_to_the_empty_table() -> None:
    empty = concat_runs([])
    assert (empty.height, empty.schema) == (0, RUN_SCHEMA)


@pytest.mark.parametrize(
    ("clock_hz", "tiles", "device", "name"),
    [
        (1.5e9, 1472, None, "tile device (1472 tiles @ 1.5 GHz)"),
        (1e9, 1, "Tenstorrent wormhole_b0", "Tenstorrent wormhole_b0 (1 tile @ 1 GHz)"),
        (800e6, 0, None, "tile device (0 tiles @ 800 MHz)"),
        (25e3, 2, None, "tile device (2 tiles @ 25 kHz)"),
        (999, 2, None, "tile device (2 tiles @ 999 Hz)"),
    ],
)
def test_tile_target_name(clock_hz: float, tiles: int, device: str | None, name: str) -> None:
    """One tile is "1 tile"; the clock in its largest unit; no thousands separator (stored
    runs match on the name)."""
    assert tile_target_name(clock_hz, tiles, device) == name
