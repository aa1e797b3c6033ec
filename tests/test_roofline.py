"""Bytes moved, FLOPs and the roofline columns, held to TraceLens' own reports and to a hand
computation over a spec file written here."""

from __future__ import annotations

import ast
import csv
from pathlib import Path

import polars as pl
import pytest

from tileprof.analyses.bytes_moved import op_bytes
from tileprof.analyses.flops import op_work
from tileprof.core import specs
from tileprof.core.errors import InputError
from tileprof.core.roofline import (
    ROOFLINE_COLUMNS,
    is_issue_slot_roofline,
    roofline_notes,
    with_roofline,
)
from tileprof.model.ops import load_ops

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "tracelens"
SHEETS = (
    "GEMM",
    "CONV_fwd",
    "SDPA_fwd",
    "UnaryElementwise",
    "BinaryElementwise",
    "Normalization",
    "Reduce_fwd",
)


def _reference_rows() -> list[tuple[str, str, dict[str, str]]]:
    rows = []
    for folder in sorted(FIXTURES.glob("*_reference")):
        for sheet in SHEETS:
            path = folder / f"{sheet}.csv"
            if path.exists():
                with path.open(newline="") as f:
                    rows.extend((folder.name, sheet, r) for r in csv.DictReader(f))
    return rows


def _args(r: dict[str, str]) -> tuple[list, list, list]:
    return (
        ast.literal_eval(r["Input Dims_first"]),
        ast.literal_eval(r["Input type_first"]),
        ast.literal_eval(r["Concrete Inputs_first"]),
    )


def _documented_difference(name: str, dims: list, types: list, concrete: list) -> int:
    """tileprof's bytes − TraceLens' (docs/runs.md): the convolution bias TraceLens drops, and
    the reduced output TraceLens counts as one element."""
    if name == "aten::convolution" and dims[2]:
        return dims[2][0] * 2
    if name in ("aten::mean", "aten::sum"):
        x = dims[0]
        kept = [d for i, d in enumerate(x) if i != len(x) - 1]
        width = 4 if types[0] == "float" else 2
        return (int(pl.Series(kept).product()) - 1) * width
    return 0


def test_bytes_equal_tracelens_data_moved() -> None:
    rows = _reference_rows()
    assert len(rows) > 60
    for folder, sheet, r in rows:
        dims, types, concrete = _args(r)
        moved = op_bytes(r["name"], dims, types, concrete)
        assert moved is not None and moved.bytes is not None, (folder, sheet, r["name"])
        expected_mib = float(r["Data Moved (MB)_first"])
        ours = moved.bytes - _documented_difference(r["name"], dims, types, concrete)
        assert ours / 2**20 == expected_mib, (folder, sheet, r["name"], dims)


def test_gemm_and_conv_flops_equal_tracelens_up_to_the_bias() -> None:
    checked = 0
    for _, sheet, r in _reference_rows():
        if sheet not in ("GEMM", "CONV_fwd"):
            continue
        dims, _, concrete = _args(r)
        work = op_work(r["name"], dims, concrete)
        assert work is not None and work.flops is not None
        bias = 0
        if sheet == "GEMM" and r["param: bias"] == "True":
            bias = int(r["param: M"]) * int(r["param: N"]) * int(r["param: B"] or 1)
        assert (work.flops + bias) / 1e9 == pytest.approx(float(r["GFLOPS_first"]), rel=1e-12)
        checked += 1
    assert checked > 20


def test_mi300x_kernel_rows_keep_the_device_name() -> None:
    # deviceProperties lists id 0 ("AMD Instinct MI300X VF"); the kernels run on device 2
    from tileprof.inputs.sources import load_runs

    frame = load_runs(FIXTURES / "mi300_gaunernst_bert-small-uncased__1016001.json.gz").frame
    assert set(frame["target"].to_list()) == {"AMD Instinct MI300X VF"}
    assert frame["source"].str.ends_with("device 2").all()


def test_mi300x_keeps_its_name_and_peaks() -> None:
    frame = load_ops(FIXTURES / "mi300_gaunernst_bert-small-uncased__1016001.json.gz").frame
    assert set(frame["target"].unique()) == {"AMD Instinct MI300X VF"}
    gemm = frame.filter(pl.col("op") == "aten::addmm").row(0, named=True)
    assert gemm["peak_tflops"] == 1307.4  # MI300X data sheet, dense BF16


@pytest.mark.parametrize("trace", sorted(p.name for p in FIXTURES.glob("*.json.gz")))
def test_roofline_columns_consistent_with_printed_peaks(trace: str) -> None:
    frame = load_ops(FIXTURES / trace).frame.filter(pl.col("roofline_us").is_not_null())
    assert frame.height > 5
    for r in frame.iter_rows(named=True):
        spec = specs.spec_for(r["target"])
        assert spec is not None
        memory = r["bytes"] / (spec.bandwidth_gbps() * 1e3)
        compute = r["flops"] / (r["peak_tflops"] * 1e6) if r["flops"] is not None else 0.0
        assert r["roofline_us"] == pytest.approx(max(memory, compute))
        assert r["roofline_fraction"] == pytest.approx(r["roofline_us"] / r["time_us"])
        if r["flops"] is not None:
            assert r["arithmetic_intensity"] == pytest.approx(r["flops"] / r["bytes"])


HAND_SPEC = """
name = "hand device"
kind = "gpu"
match = ['^hand gpu$']
[sources]
made_up = "written by the test"
[peaks]
matrix_bf16 = { value = 100, unit = "TFLOP/s", source = "made_up" }
vector_bf16 = { value = 10, unit = "TFLOP/s", source = "made_up" }
[memory]
bandwidth = { value = 2, unit = "TB/s", source = "made_up" }
latency_floor = { value = 500, unit = "ns", source = "made_up" }
"""


@pytest.fixture
def hand_spec(tmp_path: Path):
    path = tmp_path / "hand.toml"
    path.write_text(HAND_SPEC)
    specs.use_specs([path])
    yield path
    specs.use_specs([])


def test_every_column_against_a_hand_computation(hand_spec: Path) -> None:
    frame = pl.DataFrame(
        {
            "target": ["hand gpu"] * 4,
            "dtype": ["bf16"] * 4,
            "op_family": ["gemm", "gemm", "elementwise", "gemm"],
            # compute bound; memory bound; memory-only (no FLOPs) but latency; beats the roof
            "flops": [2_000_000_000, 2_000_000, None, 2_000_000_000],
            "bytes": [4_000_000, 40_000_000, 100_000, 4_000_000],
            "time_us": [40.0, 25.0, 2.0, 10.0],
            "calls": [3, 1, 2, 1],
        }
    )
    out = with_roofline(frame, flops=pl.col("flops")).to_dicts()
    # 2e9 FLOP / 100e12 = 20 µs; 4e6 B / 2e12 = 2 µs
    assert out[0]["roofline_us"] == pytest.approx(20.0)
    assert out[0]["bound"] == "compute"
    assert out[0]["arithmetic_intensity"] == pytest.approx(500.0)
    assert out[0]["roofline_fraction"] == pytest.approx(0.5)
    assert out[0]["time_lost_us"] == pytest.approx((40 - 20) * 3)
    # 2e6 / 100e12 = 0.02 µs; 40e6 / 2e12 = 20 µs
    assert out[1]["roofline_us"] == pytest.approx(20.0)
    assert out[1]["bound"] == "memory"
    assert out[1]["roofline_fraction"] == pytest.approx(0.8)
    # no FLOP count: memory roof alone, 1e5 / 2e12 = 0.05 µs, below the 0.5 µs floor
    assert out[2]["roofline_us"] == pytest.approx(0.05)
    assert out[2]["bound"] == "latency"
    assert out[2]["arithmetic_intensity"] is None
    # measured faster than the roofline: kept above 1, never clipped
    assert out[3]["roofline_fraction"] == pytest.approx(2.0)
    assert specs.ridge_intensity("hand gpu", "bf16") == pytest.approx(100e12 / 2e12)
    assert specs.ridge_intensity("hand gpu", "bf16", "elementwise") == pytest.approx(5.0)


def test_an_op_at_the_ridge_is_compute_bound(hand_spec: Path) -> None:
    """Both terms equal (issue 38: `>` for `>=` passed every test): compute, as docs/runs.md
    says. 2e9 FLOP / 100e12 = 20 µs = 40e6 B / 2e12; one byte more is memory bound."""
    frame = pl.DataFrame(
        {
            "target": ["hand gpu"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["gemm"] * 2,
            "flops": [2_000_000_000] * 2,
            "bytes": [40_000_000, 40_000_001],
            "time_us": [40.0] * 2,
            "calls": [1] * 2,
        }
    )
    out = with_roofline(frame, flops=pl.col("flops")).to_dicts()
    assert [row["bound"] for row in out] == ["compute", "memory"]
    assert out[0]["roofline_us"] == pytest.approx(20.0)


def test_intensity_of_one_byte_and_of_none(hand_spec: Path) -> None:
    """FLOP per byte for any positive byte count, one byte included (issue 38: `> 1` for
    `> 0` passed every test); no intensity for zero bytes. A row without calls (a tile group)
    loses its time once (taking it as 2 calls passed every test too)."""
    frame = pl.DataFrame(
        {
            "target": ["hand gpu"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["gemm"] * 2,
            "flops": [3_000, 3_000],
            "bytes": [1, 0],
            "time_us": [1.0, 1.0],
            "calls": [1, None],
        }
    )
    out = with_roofline(frame, flops=pl.col("flops")).to_dicts()
    assert [row["arithmetic_intensity"] for row in out] == [3_000.0, None]
    # 3e3 FLOP / 100e12 = 3e-5 µs; zero bytes take no time: lost 1 - 3e-5 µs, once
    assert out[1]["roofline_us"] == pytest.approx(3e-5)
    assert out[1]["time_lost_us"] == pytest.approx(1.0 - 3e-5)


def test_a_sub_microsecond_row_has_its_roofline_fraction(hand_spec: Path) -> None:
    """The fraction of the roofline reached is defined for any positive measured time, a
    half-microsecond kernel's included (issue 38: `measured > 1` for `> 0` passed every test);
    none for a row measured at zero."""
    frame = pl.DataFrame(
        {
            "target": ["hand gpu"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["gemm"] * 2,
            "flops": [3_000, 3_000],
            "bytes": [0, 0],
            "time_us": [0.5, 0.0],
            "calls": [1, 1],
        }
    )
    out = with_roofline(frame, flops=pl.col("flops")).to_dicts()
    assert out[0]["roofline_fraction"] == pytest.approx(3e-5 / 0.5)
    assert out[1]["roofline_fraction"] is None


def test_issue_slot_roofline_is_a_tile_group_with_a_roofline_but_no_flops() -> None:
    # issue 38: `is None` for `is not None` on the roofline passed every test
    row: dict[str, object] = {"target_kind": "tile", "mac": None, "roofline_us": 5.0}
    assert is_issue_slot_roofline(row)
    assert not is_issue_slot_roofline({**row, "roofline_us": None})
    assert not is_issue_slot_roofline({**row, "mac": 64})
    assert not is_issue_slot_roofline({**row, "target_kind": "gpu"})


def test_a_single_row_faster_than_its_roofline_is_noted() -> None:
    # issue 38: no note for exactly one such row (`== 1` for `== 0`) passed every test
    frame = pl.DataFrame({"target": ["hand gpu", "other"], "roofline_fraction": [2.0, 0.5]})
    assert roofline_notes(frame) == [
        "1 rows ran faster than their roofline (marked !, roofline_fraction > 1): the spec of "
        "hand gpu (--spec) or the rows' FLOP or byte count is wrong"
    ]
    assert roofline_notes(frame.filter(pl.col("roofline_fraction") < 1)) == []
    assert roofline_notes(frame.drop("roofline_fraction")) == []


@pytest.mark.parametrize(
    ("edit", "place", "what"),
    [
        ('kind = "gpu"', "colour", "unknown key"),
        ('unit = "TB/s"', "memory.bandwidth.unit", "missing"),
        ("value = 2,", "memory.bandwidth.value", "negative number -2"),
        ('source = "made_up" }\n[memory]', "peaks.vector_bf16.source", "not in [sources]"),
    ],
)
def test_bad_spec_files_are_one_line_errors(
    tmp_path: Path, edit: str, place: str, what: str
) -> None:
    text = HAND_SPEC
    if place == "colour":
        text = text.replace(edit, edit + '\ncolour = "red"')
    elif what == "missing":
        text = text.replace(edit + ", ", "")
    elif what.startswith("negative"):
        text = text.replace(edit, "value = -2,")
    else:
        text = text.replace(edit, 'source = "elsewhere" }\n[memory]')
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        specs.load_specs([tmp_path])
    message = str(info.value)
    assert message.startswith(f"{path}: {place}: "), message
    assert what in message
    assert "\n" not in message


def test_every_bundled_number_is_cited() -> None:
    bundled = specs.bundled_specs()
    names = {s.name for s in bundled}
    for device in (
        "NVIDIA A100 SXM 40 GB",
        "NVIDIA A100 SXM 80 GB",
        "NVIDIA H100 SXM",
        "NVIDIA H100 PCIe",
        "NVIDIA H200",
        "NVIDIA B200",
        "AMD Instinct MI250X",
        "AMD Instinct MI300X",
        "tile device",
    ):
        assert device in names
    for spec in bundled:
        assert spec.memory["bandwidth"].value > 0
        for number in (*spec.peaks.values(), *spec.memory.values()):
            assert number.source.strip()
            assert "http" in number.source or number.source.startswith(("assumption", "derived"))


def test_tile_device_peaks_scale_with_its_size() -> None:
    tile = specs.spec_for("tile device (1472 tiles @ 1.5 GHz)")
    assert tile is not None and tile.kind == "tile"
    assert tile.peak_tflops("matrix_fp16", "tile device (1472 tiles @ 1.5 GHz)") == (
        pytest.approx(1472 * 1.5e9 * 128 / 1e12)
    )
    assert tile.peak_tflops("matrix_fp16", "tile device (736 tiles @ 1 GHz)") == (
        pytest.approx(736 * 1e9 * 128 / 1e12)
    )


def test_tile_gemm_group_and_h200_gemm_op_link_with_roofline() -> None:
    import json

    from click.testing import CliRunner

    from tileprof.commands.cli import cli

    trace = (
        Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "h200_train_steps.json.gz"
    )
    result = CliRunner().invoke(cli, ["runs", "--example", str(trace), "--format", "json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout if hasattr(result, "stdout") else result.output)
    gemm = [s for s in data["linkedSets"] if s["op_family"] == "gemm" and s["dtype"] == "f16"]
    kinds = {s["target_kind"]: s for s in gemm}
    assert set(kinds) == {"tile", "gpu"}
    for member in kinds.values():
        assert member["tflops"] > 0
        assert 0 < member["peak_fraction"] < 1
        assert 0 < member["roofline_fraction"] <= 1
    tile = kinds["tile"]
    # Gemm { k: 80, cols: 112 }, 5,203,968 output elements: 2 × 80 × 5,203,968 FLOPs
    assert tile["flops"] == 2 * 80 * 5_203_968
    assert tile["tflops"] == pytest.approx(2 * 80 * 5_203_968 / 15.54 / 1e6)
    assert kinds["gpu"]["kernel"].startswith("aten::")


def test_same_work_link_across_units_gets_no_speedup() -> None:
    from tileprof.analyses.links import linked_sets
    from tileprof.core.run_schema import runs_from_rows

    common = {"workload": "w", "op_family": "gemm", "dtype": "f16", "mac": 1_000_000}
    rows = [
        {"target": "T", "target_kind": "tile", "time_us": 15.54, "per": "active"},
        {"target": "G", "target_kind": "gpu", "time_us": 3.392, "per": "call"},
    ]
    sets = linked_sets(runs_from_rows([{**common, **r} for r in rows]))
    sets = sets.filter(pl.col("link_by") == "workload")
    assert sets["speedup"].to_list() == [None, None]
    assert not any("slowest" in t for t in sets["text"].to_list())
    assert all(t.endswith("not compared: timed per active and per call") for t in sets["text"])
    assert "15.54 µs per active" in sets["text"][0]
    assert "3.392 µs per call" in sets["text"][1]


def _roofline_plot():
    from tileprof.analyses.filters import Filters
    from tileprof.model.examples import EXAMPLE_SOURCE, example_profile
    from tileprof.model.gather import gather_inputs, linked_from_frame, run_table
    from tileprof.views.html.data import roofline_section

    trace = (
        Path(__file__).resolve().parent.parent / "fixtures" / "traces" / "h200_train_steps.json.gz"
    )
    sources = gather_inputs(
        [trace],
        Filters(),
        example=example_profile(),
        example_filters=Filters(epoch=1),
        example_name=EXAMPLE_SOURCE,
    )
    runs, sets = run_table(sources, None)
    section = roofline_section(runs, linked_from_frame(sets))
    assert section is not None and section.plot is not None
    return section


def test_roofline_chart_points_roofs_links_and_no_overlapping_labels() -> None:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    from tileprof.views.html.charts import roofline_figure

    section = _roofline_plot()
    plot = section.plot
    kinds = set(plot.frame["target_kind"].to_list())
    assert kinds == {"tile", "gpu"}
    figure = roofline_figure(plot)
    canvas = FigureCanvasAgg(figure)
    canvas.draw()
    renderer = canvas.get_renderer()
    axes = figure.axes[0]
    by_gid = {a.get_gid(): a for a in axes.get_children() if a.get_gid()}
    points = [a for g, a in by_gid.items() if g.startswith("points_")]
    assert sum(len(p.get_offsets()) for p in points) == plot.frame.height
    roofs = [g for g in by_gid if g.startswith("roof_")]
    assert len(roofs) == plot.roofs.height >= 2
    assert any(g.startswith("link_") for g in by_gid)
    from matplotlib.text import Text

    texts = {id(t): t for t in figure.findobj(Text) if t.get_text() and t.get_visible()}
    boxes = [t.get_window_extent(renderer) for t in texts.values()]
    assert len(boxes) > 10  # ticks, axis titles, legend entries
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b) or a.width == 0 or b.width == 0, (a, b)


def test_spec_option_overrides_the_bundled_peaks_and_reports_bad_files(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from tileprof.commands.cli import cli

    trace = FIXTURES / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    mine = tmp_path / "mine.toml"
    mine.write_text(HAND_SPEC.replace("^hand gpu$", "h100"))
    try:
        result = CliRunner().invoke(
            cli, ["runs", "--ops", str(trace), "--spec", str(mine), "--format", "json"]
        )
        assert result.exit_code == 0, result.output
        ops = json.loads(result.stdout)["ops"]
        addmm = next(o for o in ops if o["op"] == "aten::addmm")
        assert addmm["peak_tflops"] == 100.0  # the hand spec's matrix_bf16, not the H100's
        bad = tmp_path / "bad.toml"
        bad.write_text(HAND_SPEC.replace('unit = "TB/s", ', ""))
        result = CliRunner().invoke(cli, ["runs", "--ops", str(trace), "--spec", str(bad)])
        assert result.exit_code == 2
        assert result.stderr.strip().splitlines() == [
            f"tileprof: error: {bad}: memory.bandwidth.unit: missing"
        ]
    finally:
        specs.use_specs([])


HAND_CHIP_AND_TILE_SPECS = {
    "chip.toml": """
name = "hand chip"
kind = "chip"
match = ['^hand chip$']
[sources]
made_up = "written by the test"
[peaks]
matrix_bf16 = { value = 100, unit = "TFLOP/s", source = "made_up" }
vector_bf16 = { value = 10, unit = "TFLOP/s", source = "made_up" }
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
def hand_chip_and_tile(tmp_path: Path):
    paths = []
    for name, text in HAND_CHIP_AND_TILE_SPECS.items():
        paths.append(tmp_path / name)
        paths[-1].write_text(text)
    specs.use_specs(paths)
    yield paths
    specs.use_specs([])


def test_math_fidelity_cores_and_issue_slots_by_hand(hand_chip_and_tile: list[Path]) -> None:
    """A chip op's FPU peak is its fidelity's per-core figure times its cores, for matrix work
    only; a tile group without FLOPs stands on usefulCycles ÷ (slots × tiles × clock), one
    with FLOPs on them (docs/runs.md, "Roofline"). Every figure below by hand."""
    chip = pl.DataFrame(
        {
            "target": ["hand chip"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["gemm", "elementwise"],
            "metadata": ['{"math_fidelity": "HiFi2"}'] * 2,
            "cores": [10, 10],
            "flops": [2_000_000_000, 1_000_000_000],
            "bytes": [1_000_000, 1_000_000],
            "time_us": [200.0, 200.0],
            "calls": [1, 1],
        }
    )
    out = with_roofline(chip, flops=pl.col("flops")).to_dicts()
    # gemm at HiFi2 on 10 cores: 2 × 10 = 20 TFLOP/s, 2e9 / 20e12 = 100 µs (1e6 B / 1e12 = 1 µs)
    assert out[0]["roofline_us"] == pytest.approx(100.0)
    # elementwise: the vector peak whatever the fidelity, 1e9 / 10e12 = 100 µs
    assert out[1]["roofline_us"] == pytest.approx(100.0)
    assert [row["bound"] for row in out] == ["compute", "compute"]
    # 4 tiles at 1 GHz: 8e9 issue slots/s, 400 GFLOP/s, 40 GB/s
    tile = pl.DataFrame(
        {
            "target": ["hand tile 4 tiles @ 1.0 GHz"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["gemm"] * 2,
            "flops": [None, 4_000_000],
            "bytes": [400_000, 40_000],
            "cycles": [800_000, 800_000],
            "time_us": [200.0, 200.0],
            "calls": [None, None],
        }
    )
    out = with_roofline(tile, flops=pl.col("flops"), issue_cycles=pl.col("cycles")).to_dicts()
    # no FLOPs: 8e5 / 8e9 = 100 µs against 4e5 / 40e9 = 10 µs of memory
    assert out[0]["roofline_us"] == pytest.approx(100.0)
    # FLOPs counted: 4e6 / 400e9 = 10 µs against 1 µs of memory; the cycles are not used
    assert out[1]["roofline_us"] == pytest.approx(10.0)
    assert out[1]["bound"] == "compute"


def test_a_row_at_the_floor_or_with_one_term_unknown(hand_spec: Path) -> None:
    """Latency bound only *below* the floor: 1e6 B / 2e12 = 0.5 µs is the floor itself, memory
    bound. No roofline unless both terms are known: FLOPs but no bytes gives none. The output
    is the input's columns and the roofline columns, none of the working ones."""
    frame = pl.DataFrame(
        {
            "target": ["hand gpu"] * 2,
            "dtype": ["bf16"] * 2,
            "op_family": ["elementwise", "gemm"],
            "flops": [None, 2_000_000_000],
            "bytes": [1_000_000, None],
            "time_us": [1.0, 40.0],
            "calls": [1, 1],
        }
    )
    result = with_roofline(frame, flops=pl.col("flops"))
    assert set(result.columns) == {*frame.columns, *ROOFLINE_COLUMNS}
    out = result.to_dicts()
    assert out[0]["roofline_us"] == pytest.approx(0.5)
    assert out[0]["bound"] == "memory"
    assert out[1]["roofline_us"] is None
    assert out[1]["bound"] is None


def test_notes_name_every_target_and_not_a_row_at_its_roofline() -> None:
    """A fraction of exactly 1 met its roofline, it did not beat it: no note. Two targets
    beating theirs are both named, comma-separated, sorted."""
    frame = pl.DataFrame(
        {"target": ["b gpu", "a gpu", "c gpu"], "roofline_fraction": [1.5, 3.0, 1.0]}
    )
    assert roofline_notes(frame.filter(pl.col("target") == "c gpu")) == []
    assert roofline_notes(frame) == [
        "2 rows ran faster than their roofline (marked !, roofline_fraction > 1): the spec of "
        "a gpu, b gpu (--spec) or the rows' FLOP or byte count is wrong"
    ]


# Bytes moved by hand (issue 38, the mutation run of analyses/bytes_moved.py): each count is
# the module docstring's rule, every input read once and every output written once, worked
# out from dims written here. Widths: float 4, BFloat16 2, Float8 1 byte.
F32, BF16, FP8 = "float", "c10::BFloat16", "c10::Float8_e4m3fn"


def _moved(name: str, dims: list, types: list, concrete: list | None = None) -> tuple:
    moved = op_bytes(name, dims, types, concrete)
    assert moved is not None, name
    return moved.bytes, moved.problem


def test_linear_bytes_by_hand() -> None:
    """x 4×3×8 bf16 (192 B), W 5×8 f32 (160 B), b 5 f32 (20 B); the output 4×3×5 at x's
    dtype (120 B)."""
    x, w, b = [4, 3, 8], [5, 8], [5]
    assert _moved("aten::linear", [x, w, b], [BF16, F32, F32]) == (492, None)
    assert _moved("aten::linear", [x, w], [BF16, F32]) == (472, None)
    assert _moved("aten::linear", [x, w, []], [BF16, F32, ""]) == (472, None)
    for x, w in (([4, 7], [5, 8]), ([4, 8], [5, 8, 1]), ([], [5, 8])):
        assert _moved("aten::linear", [x, w], [F32, F32]) == (
            None,
            f"input {x} does not match weight {w}",
        )


def test_gemm_bytes_by_hand() -> None:
    """mm 3×4 bf16 @ 4×5 f32: 24 + 80 B read, 3×5 written at A's dtype (30 B). addmm adds its
    bias at its own size (5 f32, 20 B); bmm writes the broadcast batch of both inputs
    (1×3×4 @ 2×4×5: 2 products of 3×5). _scaled_mm of fp8 writes 2 bytes an element."""
    assert _moved("aten::mm", [[3, 4], [4, 5]], [BF16, F32]) == (134, None)
    assert _moved("aten::addmm", [[5], [3, 4], [4, 5]], [F32, BF16, F32]) == (154, None)
    assert _moved("aten::addmm", [[], [3, 4], [4, 5]], ["", BF16, F32]) == (134, None)
    assert _moved("aten::bmm", [[1, 3, 4], [2, 4, 5]], [F32, F32]) == (
        (12 + 40 + 2 * 15) * 4,
        None,
    )
    fp8 = _moved("aten::_scaled_mm", [[16, 32], [32, 8], [], []], [FP8, FP8, F32, F32])
    assert fp8 == (512 + 256 + 16 * 8 * 2, None)
    assert _moved("aten::mm", [[4], [4, 5]], [F32, F32]) == (
        None,
        "GEMM inputs [4] and [4, 5] are not matrices",
    )


def test_matmul_writes_at_the_first_inputs_dtype() -> None:
    assert _moved("aten::matmul", [[3, 4], [4, 5]], [BF16, F32]) == (24 + 80 + 30, None)


def test_attention_bytes_by_hand() -> None:
    """Q 1×2×4×8, K 1×2×6×8, V 1×2×6×16, bf16: 128 + 192 + 384 B read; the output 1×2×4×16
    (Q's length, V's head size) 256 B written. The backward reads grad_out (the output's
    size, 256 B), Q, K, V and the output, and writes dQ, dK and dV."""
    q, k, v, out = [1, 2, 4, 8], [1, 2, 6, 8], [1, 2, 6, 16], [1, 2, 4, 16]
    sdpa = "aten::_scaled_dot_product_flash_attention"
    assert _moved(sdpa, [q, k, v], [BF16] * 3) == (128 + 192 + 384 + 256, None)
    assert _moved(sdpa, [[2, 4, 8], k, v], [BF16] * 3) == (
        None,
        f"query [2, 4, 8] and value {v} are not 4-d",
    )
    backward = f"{sdpa}_backward"
    read = 256 + 128 + 192 + 384 + 256
    assert _moved(backward, [out, q, k, v, out, [1, 2, 4]], [BF16] * 5 + [F32]) == (
        read + 128 + 192 + 384,
        None,
    )
    # no forward output recorded: it is grad_out's size
    assert _moved(backward, [out, q, k, v], [BF16] * 4) == (read + 128 + 192 + 384, None)


def test_convolution_bytes_by_hand() -> None:
    """conv2d of a 1×1×5×5 f32 input (100 B) by a 1×1×3×3 kernel (36 B) at stride 1, padding 0
    and dilation 2: the dilated kernel spans 5, so the output is 1×1×1×1 (4 B); a bias of one
    channel adds 4 B. Padding 1 makes it 3×3 (36 B)."""
    x, w = [1, 1, 5, 5], [1, 1, 3, 3]
    args = ["", "", "", "[1, 1]", "[0, 0]", "[2, 2]", "1"]
    assert _moved("aten::conv2d", [x, w, [], [], [], [], []], [F32] * 2 + [""] * 5, args) == (
        140,
        None,
    )
    assert _moved("aten::conv2d", [x, w, [1]], [F32] * 3, args) == (144, None)
    padded = [*args[:4], "[1, 1]", *args[5:]]
    assert _moved("aten::conv2d", [x, w, [1]], [F32] * 3, padded) == (176, None)
    small = ["", "", "", "[1, 1]", "[0, 0]", "[1, 1]", "1"]
    assert _moved("aten::conv2d", [[1, 1, 2, 2], w], [F32] * 2, small) == (
        None,
        "kernel [3, 3] does not fit input [2, 2] (padding [0, 0])",
    )


def test_convolution_backward_bytes_follow_the_output_mask() -> None:
    """grad_out 2×4×5×5 (400 B), x 2×3×7×7 (588 B), weight 4×3×3×3 (216 B), bf16, all read;
    grad_input (588 B), grad_weight (216 B) and grad_bias (4 channels, 8 B) written as the
    output mask (argument 10) asks."""
    dims = [[2, 4, 5, 5], [2, 3, 7, 7], [4, 3, 3, 3]]
    read = 400 + 588 + 216
    for mask, written in (
        ("[True, True, True]", 588 + 216 + 8),
        ("[False, True, False]", 216),
        ("[True, False, True]", 588 + 8),
        ("[False, False, False]", 0),
    ):
        args = ["", "", "", "[4]", "[1]", "[0]", "[1]", "False", "[0]", "1", mask]
        assert _moved("aten::convolution_backward", dims, [BF16] * 3, args) == (
            read + written,
            None,
        ), mask


def test_layer_norm_bytes_by_hand() -> None:
    """x 2×4×8 bf16 normalized over [4, 8]: x read and y written (128 B each), and six tensors
    of 32 elements (weight, bias, mean, variance read; mean, variance written): 384 B; with no
    weight and no bias, four (256 B)."""
    x, shape = [2, 4, 8], [4, 8]
    args = ["", "[4, 8]", "", "", "1e-05", "True"]
    assert _moved("aten::layer_norm", [x, [], shape, shape], [BF16] * 4, args) == (640, None)
    assert _moved("aten::layer_norm", [x, [], [], []], [BF16] + [""] * 3, args) == (512, None)
    assert _moved("aten::layer_norm", [x, [], shape, []], [BF16] * 3 + [""], args) == (
        576,
        None,
    )


def test_reduction_and_softmax_bytes_by_hand() -> None:
    """sum of a 3×4 f32 (48 B) over every dim writes one element (4 B); over dim 1, 3 (12 B).
    softmax of 2×3×4 bf16 reads 48 B and writes 48 B, or 96 B (f32) with half_to_float."""
    assert _moved("aten::sum", [[3, 4]], [F32]) == (52, None)
    assert _moved("aten::sum", [[3, 4]], [F32], ["", "[1]", "False"]) == (60, None)
    assert _moved("aten::sum", [[3, 4]], [F32], ["", "[a]"]) == (
        None,
        "dim '[a]' is not a list of integers",
    )
    x = [[2, 3, 4]]
    assert _moved("aten::_softmax", x, [BF16], ["", "-1", "False"]) == (96, None)
    assert _moved("aten::_softmax", x, [BF16], ["", "-1", "True"]) == (144, None)
    assert _moved("aten::_softmax", x, [BF16], ["", "-1"]) == (96, None)
    assert _moved("aten::softmax", x, [BF16], ["", "-1", ""]) == (96, None)


def test_elementwise_bytes_by_hand() -> None:
    """mul of two 4-element f32 tensors into a bf16 out= tensor: 16 + 16 read, 8 written;
    bf16 × f32 writes the wider f32 (16 B); bf16 × a Python scalar (one 4-byte element
    read) writes bf16; a negative dim is no shape."""
    assert _moved("aten::mul", [[4], [4], [4]], [F32, F32, BF16]) == (40, None)
    assert _moved("aten::mul", [[4], [4]], [BF16, F32]) == (40, None)
    assert _moved("aten::mul", [[4], []], [BF16, "Scalar"]) == (20, None)
    assert _moved("aten::relu", [[-1, 4]], [F32]) == (
        None,
        "input 0 dims [-1, 4] are not non-negative integers",
    )


def test_op_bytes_problems_and_int64_by_hand() -> None:
    """Each problem in full; a count of exactly 2⁶³ − 1 (add of 2⁶² − 1 one-byte elements and
    a one-byte scalar: 2·(2⁶² − 1) + 1) fits, one of 2⁶³ + 1 does not."""
    no_shapes = "no Input Dims / Input type (record with record_shapes=True)"
    assert _moved("aten::mul", [[4], [4]], None) == (None, no_shapes)
    assert _moved("aten::mul", None, [F32, F32]) == (None, no_shapes)
    assert _moved("aten::mul", [[4], [4]], [F32, "c10::complex<float>"]) == (
        None,
        "dtype 'c10::complex<float>' has no known width",
    )
    assert _moved("aten::mul", [[4], [4]], [F32]) == (
        None,
        "malformed arguments (list index out of range)",
    )
    u8 = ["unsigned char", "unsigned char"]
    assert _moved("aten::add", [[2**62 - 1], []], u8) == (2**63 - 1, None)
    assert _moved("aten::add", [[2**62], []], u8) == (None, f"{2**63 + 1} bytes overflow int64")


def test_efficient_attention_backward_reads_the_output_not_the_bias() -> None:
    """torch's ``_scaled_dot_product_efficient_attention_backward(grad_out_, query, key, value,
    attn_bias, out, logsumexp, ...)`` (native_functions.yaml) records the attention bias at
    input 4 and the output at 5. The output read is grad_out's size (1×2×4×16 bf16, 256 B),
    not the bias' (1×2×4×6, 96 B): 256 + 128 + 192 + 384 + 256 read, 128 + 192 + 384 written."""
    q, k, v, out, bias = [1, 2, 4, 8], [1, 2, 6, 8], [1, 2, 6, 16], [1, 2, 4, 16], [1, 2, 4, 6]
    expected = 256 + 128 + 192 + 384 + 256 + 128 + 192 + 384
    for name in (
        "aten::_scaled_dot_product_efficient_attention_backward",
        "aten::_efficient_attention_backward",
    ):
        dims = [out, q, k, v, bias, out, [1, 2, 4]]
        assert _moved(name, dims, [BF16] * 6 + [F32]) == (expected, None), name


def test_layer_norm_without_its_normalized_shape_takes_the_weights() -> None:
    """A trace without Concrete Inputs (fixtures/hta: ``aten::layer_norm`` of [2048, 125] with
    weight and bias [125]) records no ``normalized_shape``; torch requires the weight and bias
    to have it. x 2×4×8 bf16 over a weight of [4, 8]: 128 B read, 128 written, six tensors of
    32 elements (384 B); over a bias alone, five (no weight read: 320 B); with neither, no
    count rather than x's 256 B alone, which left the normalized tensors out."""
    x, shape = [2, 4, 8], [4, 8]
    for args in (None, [""], ["", "", "", ""], ["", "  "]):
        assert _moved("aten::layer_norm", [x, [], shape, shape], [BF16] * 4, args) == (640, None)
        assert _moved("aten::layer_norm", [x, [], [], shape], [BF16, "", "", BF16], args) == (
            576,
            None,
        )
        assert _moved("aten::layer_norm", [x, [], [], []], [BF16, "", "", ""], args) == (
            None,
            "argument 1 (normalized_shape) not recorded, nor a weight or bias",
        ), args


def test_zero_size_tensors_are_counted_not_refused() -> None:
    """A dim of 0 is a size, not a fault: relu of 0×4 f32 moves nothing; mm of 3×0 @ 0×5 f32
    reads nothing and writes its 3×5 result (60 B)."""
    assert _moved("aten::relu", [[0, 4]], [F32]) == (0, None)
    assert _moved("aten::mm", [[3, 0], [0, 5]], [F32, F32]) == (60, None)
