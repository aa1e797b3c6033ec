"""Tile groups as runs, cross-links by (op_family, dtype) and workload, and the links file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from tileprof.errors import InputError
from tileprof.links import apply_overrides, linked_sets, load_links
from tileprof.runs import concat_runs, runs_from_rows, tile_runs
from tileprof.sources import load_runs

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
ENERGY = FIXTURES / "seeds" / "003_2d9153cb18ea7de3.txt"
LATENCY = FIXTURES / "seeds" / "000_55f6fcd9cea2f10a.txt"


@dataclass
class FakeSummary:
    """The three fields tile_runs reads from tileprof.Summary."""

    clock_hz: int
    tile_count: int
    groups: pl.DataFrame


def seed_groups() -> FakeSummary:
    seed = json.loads((FIXTURES / "seed_004_summary.json").read_text())
    groups = pl.DataFrame(
        [{k: v for k, v in g.items() if k != "dimensions"} for g in seed["groups"]],
        infer_schema_length=None,
    )
    return FakeSummary(seed["clockHz"], seed["tileCount"], groups)


def test_tile_groups_become_runs() -> None:
    runs = tile_runs(seed_groups(), source="seed 004")
    assert runs.height == 19
    assert set(runs["target"].to_list()) == {"tile device (1472 tiles @ 1.5 GHz)"}
    gemm = runs.filter(
        pl.col("kernel") == "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122"
    )
    row = gemm.row(0, named=True)
    assert row["time_us"] == pytest.approx(23310 / 1.5e9 * 1e6)  # phaseCycles / clockHz
    assert row["peak_fraction"] == 0.17203290246768507  # deviceUsefulUtilization as stated
    assert (row["op_family"], row["dtype"], row["target_kind"], row["per"]) == (
        "gemm",
        "f16",
        "tile",
        "active",
    )
    exchange = runs.filter(pl.col("kernel") == "exchange").row(0, named=True)
    assert exchange["peak_fraction"] is None
    assert exchange["op_family"] == "exchange"


def test_hand_built_groups_frame() -> None:
    groups = pl.DataFrame(
        {
            "name": ["gemm_f16_a", "exchange"],
            "phaseCycles": [3000, 0],
            "deviceUsefulUtilization": [0.25, None],
            "maximumCycles": [1500, 0],
        }
    )
    runs = tile_runs(FakeSummary(1_000_000_000, 4, groups), source="hand", target="T")
    assert runs["time_us"].to_list() == [3.0, 0.0]
    assert runs["peak_fraction"].to_list() == [0.25, None]
    assert runs["max_us"].to_list() == [1.5, 0.0]
    assert runs["target"].to_list() == ["T", "T"]


def test_tile_times_carry_no_float_noise() -> None:
    # 94608 / 1.5e9 * 1e6 is 63.071999999999996; one division of an exact numerator is not.
    groups = pl.DataFrame(
        {"name": ["g"], "phaseCycles": [94608], "p50Cycles": [94608], "maximumCycles": [94608]}
    )
    row = tile_runs(FakeSummary(1_500_000_000, 4, groups), source="hand").row(0, named=True)
    assert (row["time_us"], row["p50_us"], row["max_us"]) == (63.072, 63.072, 63.072)
    assert str(row["time_us"]) == "63.072"


def test_linked_sets_tile_and_a100_gemm() -> None:
    runs = concat_runs(
        [
            tile_runs(seed_groups(), source="seed 004"),
            load_runs(ENERGY).frame,
            load_runs(LATENCY).frame,
        ]
    )
    sets = linked_sets(runs)
    f16 = sets.filter(pl.col("set") == "gemm · f16 (different sizes: compare efficiency, not time)")
    assert f16["target"].to_list() == [
        "tile device (1472 tiles @ 1.5 GHz)",
        "NVIDIA A100-SXM4-40GB",
    ]
    assert f16["runs"].to_list() == [4, 1]
    tile, a100 = f16.to_dicts()
    # the tile device's representative is its longest f16 GEMM group
    assert tile["kernel"] == "gemm_f16_init_large_rows_interleaved_k80_c112_r121_r122"
    # different sizes: no time on either row; work, efficiency and energy per work instead
    assert tile["compare"] == a100["compare"] == "efficiency"
    assert tile["time_us"] is None and a100["time_us"] is None
    assert tile["text"] == (
        "tile device (1472 tiles @ 1.5 GHz) gemm_f16_init_large_rows…aved_k80_c112_r121_r122 "
        "· 5,902,848 useful cycles · 17% of peak"
    )
    # 8192³ MAC = 549,755,813,888 → 1,099.5 GFLOP; 1.43 J / 1,099.5 GFLOP = 1.30 mJ/GFLOP;
    # 2 × MAC / 4.36 ms = 252.1 TFLOP/s = 81% of the A100's 312
    assert a100["shape"] == "8192x8192x8192"
    assert a100["flops"] == 2 * 8192**3
    assert a100["j_per_gflop"] == pytest.approx(a100["energy_j"] / 1099.511627776)
    assert a100["text"] == (
        "NVIDIA A100-SXM4-40GB fp16_tensor_core · 8192x8192x8192, 1100 GFLOP · 81% of peak, "
        "252.1 TFLOP/s, 1.43 J (1.3 mJ/GFLOP)"
    )
    # f8 GEMMs exist on the tile device only: no set
    assert sets.filter(pl.col("set").str.starts_with("gemm · f8")).height == 0
    workloads = sets.filter(pl.col("link_by") == "workload")
    assert sorted(set(workloads["set"].to_list())) == [
        "workload medium",
        "workload online",
        "workload small",
        "workload tiny-online",
    ]
    small = workloads.filter(pl.col("set") == "workload small").to_dicts()
    # in a workload set each target's representative is its fastest run
    assert [(r["target"], r["implementation"], r["time_us"]) for r in small] == [
        ("A100 SXM4 80 GB", "inductor", 22.92),
        ("H100 SXM 80 GB", "inductor", 18.84),
    ]
    assert small[1]["runs"] == 6  # 2 held_out + 4 calibration rows
    # same work: times compare, and the faster target's speedup is 22.92 / 18.84
    assert {r["compare"] for r in small} == {"time"}
    assert [r["speedup"] for r in small] == [1.0, pytest.approx(22.92 / 18.84)]


def test_links_file_adds_sets_and_overrides() -> None:
    links = load_links(FIXTURES / "runs" / "links.toml")
    runs = concat_runs(
        [
            tile_runs(seed_groups(), source="seed 004"),
            load_runs(ENERGY).frame,
            load_runs(LATENCY).frame,
        ]
    )
    sets = linked_sets(runs, links)
    layer = sets.filter(pl.col("set") == "layer 3 GEMM")
    assert layer["link_by"].unique().to_list() == ["links file"]
    assert layer["runs"].to_list() == [4, 1]
    assert sets["set_id"].to_list()[0] == 1 and sets["set"].to_list()[0] == "layer 3 GEMM"
    # the override gave H100's selected WMMA rows dtype f16; nothing else on H100 is f16
    h100_f16 = sets.filter(pl.col("set") == "train_step · f16")
    assert h100_f16.height == 0  # one target only: not a set
    changed = apply_overrides(runs, links).filter(pl.col("implementation") == "selected WMMA")
    assert changed["dtype"].to_list() == ["f16", "f16"]


def test_a_link_that_matches_no_run_is_kept_empty(tmp_path: Path) -> None:
    path = tmp_path / "links.toml"
    path.write_text("[[link]]\nname = 'ghost'\nmatch = [{ kernel = 'no_such_kernel*' }]\n")
    sets = linked_sets(load_runs(ENERGY).frame, load_links(path))
    ghost = sets.filter(pl.col("set") == "ghost").to_dicts()
    assert len(ghost) == 1
    assert ghost[0]["link_by"] == "links file"
    assert (ghost[0]["runs"], ghost[0]["target"], ghost[0]["time_us"]) == (0, None, None)
    assert ghost[0]["text"] == "no run matches this link"
    assert ghost[0]["set_id"] == 1  # listed first, as links-file sets are


def test_no_link_within_one_target() -> None:
    rows = [
        {"target": "X", "target_kind": "gpu", "kernel": "gemm_f16", "time_us": 1.0},
        {"target": "X", "target_kind": "gpu", "kernel": "gemm_f16_b", "time_us": 2.0},
    ]
    assert linked_sets(runs_from_rows(rows)).height == 0


@pytest.mark.parametrize(
    ("text", "place"),
    [
        ("[[link]]\nname = 'a'\nmatch = [{ colour = 'red' }]\n", "$.link[0].match[0].colour"),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { dtype = 'f64' }\n",
            "$.override[0].set.dtype",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { target = 'x' }\n",
            "$.override[0].set.target",
        ),
        ("[[link]]\nname = 3\nmatch = []\n", "$.link[0].name"),
        ("[[link]]\nname = 'a'\nmatch = []\n", "$.link[0].match"),
        ("[[link]]\nname = 'a'\nmatch = [{ kernel = 3 }]\n", "$.link[0].match[0].kernel"),
        ("[[link]]\nname = 'a'\nmatch = [{}]\n", "$.link[0].match[0]"),
        (
            "[[override]]\nmatch = { kernel = 3 }\nset = { dtype = 'f16' }\n",
            "$.override[0].match.kernel",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { dtype = 16 }\n",
            "$.override[0].set.dtype",
        ),
        ("[[lnk]]\nname = 'a'\n", "$"),
        ("[[link]\n", "line 1, column 7"),
    ],
)
def test_bad_links_file(tmp_path: Path, text: str, place: str) -> None:
    path = tmp_path / "links.toml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_links(path)
    assert info.value.where == place
    assert str(info.value).startswith(str(path))
    assert "\n" not in str(info.value)


def test_docs_define_every_column_family_dtype_and_peak() -> None:
    from tileprof.classify import DTYPES, OP_FAMILIES
    from tileprof.peaks import PEAKS
    from tileprof.runs import RUN_COLUMNS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "runs.md").read_text()
    for column in RUN_COLUMNS:
        assert f"| `{column.name}` |" in doc, column.name
    for name in (*OP_FAMILIES, *DTYPES):
        assert name in doc, name
    for peak in PEAKS:
        assert peak.citation in doc


def test_shorten_is_the_one_ellipsis_helper() -> None:
    from tileprof.text import shorten

    assert shorten("abcdef", 6) == "abcdef"
    assert shorten("abcdefg", 6) == "abc…fg"  # the middle goes: names differ at their ends
    assert len(shorten("x" * 100, 48)) == 48
    with pytest.raises(ValueError, match="at least 1"):
        shorten("abc", 0)


def test_links_file_forces_same_work_or_same_kind(tmp_path: Path) -> None:
    path = tmp_path / "links.toml"
    path.write_text(
        '[[link]]\nname = "forced same"\nsame_work = true\nmatch = [{ workload = "gemm*" }]\n'
        '[[link]]\nname = "kind only"\nmatch = [{ workload = "gemm*" }]\n'
    )
    sets = linked_sets(load_runs(ENERGY).frame, load_links(path))
    same = sets.filter(pl.col("set") == "forced same").to_dicts()
    kind = sets.filter(pl.col("set") == "kind only").to_dicts()
    assert same and {r["compare"] for r in same} == {"time"}
    assert all(r["time_us"] is not None for r in same)
    assert kind and {r["compare"] for r in kind} == {"efficiency"}
    assert all(r["time_us"] is None for r in kind)
