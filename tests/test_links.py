"""Tile groups as runs, cross-links by (op_family, dtype) and workload, and the links file."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pytest

from tileprof.analyses.links import apply_overrides, linked_sets
from tileprof.core.errors import InputError
from tileprof.core.run_schema import concat_runs, runs_from_rows, tile_runs
from tileprof.inputs.links_file import load_links
from tileprof.inputs.sources import load_runs

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
    # no work stated here (no kernelSpec given): no FLOPs, so no fraction of peak; the
    # group's deviceUsefulUtilization stays a tile-only measure in metadata
    assert row["peak_fraction"] is None
    assert json.loads(row["metadata"])["deviceUsefulUtilization"] == 0.17203290246768507
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
    # deviceUsefulUtilization is not a fraction of a FLOP peak: no work, no peak_fraction
    assert runs["peak_fraction"].to_list() == [None, None]
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
        "· 5,902,848 useful cycles · 17.20% device useful utilization"
    )
    # 8192³ MAC = 549,755,813,888 → 1,099.5 GFLOP; 1.426 J / 1,099.5 GFLOP = 1.297 mJ/GFLOP;
    # 2 × MAC / 4.362116 ms (the seed's seconds_per_GEMM) = 252.06 TFLOP/s = 80.79% of 312
    assert a100["shape"] == "8192x8192x8192"
    assert a100["flops"] == 2 * 8192**3
    assert a100["j_per_gflop"] == pytest.approx(a100["energy_j"] / 1099.511627776)
    assert a100["text"] == (
        "NVIDIA A100-SXM4-40GB fp16_tensor_core · 8192x8192x8192, 1100 GFLOP · 80.79% of peak, "
        "252.1 TFLOP/s, 80.79% of roofline (compute bound), 1.426 J (1.297 mJ/GFLOP)"
    )
    # 8192³ bf16/f16 GEMM: 3 × 8192² × 2 bytes, intensity 2 × 8192³ / that = 2730.7 FLOP/B,
    # far above the A100's ridge (312e12 / 1555e9 = 200.6): compute bound, so the roofline
    # fraction is the peak fraction
    assert a100["arithmetic_intensity"] == pytest.approx(2 * 8192**3 / (3 * 8192**2 * 2))
    assert a100["roofline_fraction"] == pytest.approx(a100["peak_fraction"])
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
    path.write_text(
        "[[link]]\nname = 'ghost'\nmatch = [{ kernel = 'no_such_kernel*' }]\n"
        "[[link]]\nname = 'all'\nmatch = [{ kernel = '*' }]\n"
    )
    sets = linked_sets(load_runs(ENERGY).frame, load_links(path))
    assert sets["set"].unique(maintain_order=True).to_list() == ["ghost", "all"]
    ghost = sets.filter(pl.col("set") == "ghost").to_dicts()
    assert len(ghost) == 1
    assert (ghost[0]["link_by"], ghost[0]["compare"]) == ("links file", "efficiency")
    assert (ghost[0]["runs"], ghost[0]["target"], ghost[0]["time_us"]) == (0, None, None)
    assert ghost[0]["text"] == "no run matches this link"
    assert ghost[0]["set_id"] == 1  # listed first, as links-file sets are


def test_same_shape_sets_and_no_other_family() -> None:
    def run(target: str, family: str, shape: str) -> dict[str, object]:
        kernel = f"{family}_{target}"
        return {"target": target, "target_kind": "gpu", "kernel": kernel, "time_us": 1.0} | {
            "op_family": family,
            "dtype": "f16",
            "shape": shape,
        }

    # GEMMs of one shape on two targets: one same-work set by shape, and no same-kind set
    # beside it (all its runs are that shape); "other" kernels never link by family
    rows = [run(t, f, "8x8x8") for t in ("A", "B") for f in ("gemm", "other")]
    sets = linked_sets(runs_from_rows(rows))
    assert sets.select("set", "link_by", "compare", "target").rows() == [
        ("gemm · f16 · 8x8x8", "shape", "time", "A"),
        ("gemm · f16 · 8x8x8", "shape", "time", "B"),
    ]


def test_no_link_within_one_target() -> None:
    rows = [
        {"target": "X", "target_kind": "gpu", "kernel": "gemm_f16", "time_us": 1.0},
        {"target": "X", "target_kind": "gpu", "kernel": "gemm_f16_b", "time_us": 2.0},
    ]
    assert linked_sets(runs_from_rows(rows)).height == 0


COLUMNS = (
    "target, target_kind, device, source, workload, implementation, kernel, op_family, dtype, "
    "shape, launch_op"
)


@pytest.mark.parametrize(
    ("text", "place", "message"),
    [
        (
            "[[link]]\nname = 'a'\nmatch = [{ colour = 'red' }]\n",
            "$.link[0].match[0].colour",
            f"unknown column; use one of {COLUMNS}",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { dtype = 'f64' }\n",
            "$.override[0].set.dtype",
            "'f64' is not one of f32, tf32, f16, bf16, f8, int8, b1",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { op_family = 'gemv' }\n",
            "$.override[0].set.op_family",
            "'gemv' is not one of ",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { target = 'x' }\n",
            "$.override[0].set.target",
            "cannot set 'target'; settable: op_family, dtype, workload",
        ),
        ("[[link]]\nname = 3\nmatch = []\n", "$.link[0].name", "expected `str`, got `int`"),
        (
            "[[link]]\nname = 'a'\nmatch = []\n",
            "$.link[0].match",
            "empty list: the link would select no run",
        ),
        (
            "[[link]]\nname = 'a'\nmatch = [{ kernel = 3 }]\n",
            "$.link[0].match[0].kernel",
            "expected a string, got int 3",
        ),
        (
            "[[link]]\nname = 'a'\nmatch = [{}]\n",
            "$.link[0].match[0]",
            "empty match: it would match every run",
        ),
        (
            "[[override]]\nmatch = { kernel = 3 }\nset = { dtype = 'f16' }\n",
            "$.override[0].match.kernel",
            "expected a string, got int 3",
        ),
        (
            "[[override]]\nmatch = { kernel = 'k' }\nset = { dtype = 16 }\n",
            "$.override[0].set.dtype",
            "expected a string, got int 16",
        ),
        ("[[lnk]]\nname = 'a'\n", "$", "object contains unknown field `lnk`"),
        (
            "[[link]\n",
            "line 1, column 7",
            "bad TOML: Expected ']]' at the end of an array declaration",
        ),
    ],
)
def test_bad_links_file(tmp_path: Path, text: str, place: str, message: str) -> None:
    path = tmp_path / "links.toml"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        load_links(path)
    assert info.value.where == place
    assert info.value.message.startswith(message)
    assert str(info.value) == f"{path}: {place}: {info.value.message}"
    assert "\n" not in str(info.value)


def test_links_file_not_utf8(tmp_path: Path) -> None:
    path = tmp_path / "links.toml"
    path.write_bytes(b"# caf\xe9\n")  # Latin-1 é at byte 5
    with pytest.raises(InputError) as info:
        load_links(path)
    assert str(info.value) == f"{path}: byte 5: not UTF-8 text"


def test_docs_define_every_column_family_dtype_and_peak() -> None:
    from tileprof.core.classify import DTYPES, OP_FAMILIES
    from tileprof.core.peaks import peaks
    from tileprof.core.run_schema import RUN_COLUMNS

    doc = (Path(__file__).resolve().parent.parent / "docs" / "runs.md").read_text()
    for column in RUN_COLUMNS:
        assert f"| `{column.name}` |" in doc, column.name
    for name in (*OP_FAMILIES, *DTYPES):
        assert name in doc, name
    for peak in peaks():
        assert peak.device in doc


def test_shorten_is_the_one_ellipsis_helper() -> None:
    from tileprof.core.text import shorten

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


def test_same_kind_representative_by_total_time() -> None:
    # A same-kind set shows each target's run with the most total time: total_us where the
    # source states it, else time_us × calls (calls missing: one), else −∞. Target A:
    # 100 (stated), 30 × 4 = 120, 70 × 1 = 70, none → "a_120" is its representative.
    def run(target: str, kernel: str, **figures: float | None) -> dict[str, object]:
        return {"target": target, "target_kind": "gpu", "kernel": kernel, **figures}

    rows = [
        run("A", "gemm_f16_a_100", time_us=1.0, calls=100, total_us=100.0),
        run("A", "gemm_f16_a_120", time_us=30.0, calls=4),
        run("A", "gemm_f16_a_70", time_us=70.0),
        run("A", "gemm_f16_a_none"),
        run("B", "gemm_f16_b", time_us=5.0, calls=1, total_us=5.0),
    ]
    sets = linked_sets(runs_from_rows(rows))
    assert sets["set"].unique().to_list() == [
        "gemm · f16 (different sizes: compare efficiency, not time)"
    ]
    assert sets.select("target", "runs", "kernel").rows() == [
        ("A", 4, "gemm_f16_a_120"),
        ("B", 1, "gemm_f16_b"),
    ]


def test_same_work_set_columns_by_hand() -> None:
    # One workload on three targets. Each target shows its fastest run (an untimed run is never
    # the fastest); speedup is the slowest target's time over its own: 20 / 20 = 1, 20 / 5 = 4,
    # 20 / 10 = 2. mac 1e9 → 2 GFLOP, so TFLOP/s is 2e9 / t / 1e6 (100, 400, 200) and J per
    # GFLOP is 2.0 / 2 = 1 and 0.5 / 2 = 0.25; B states no energy, no kernel and no "per".
    common = {"workload": "w", "op_family": "gemm", "dtype": "f16", "mac": 1_000_000_000}
    rows = [
        {"target": "A gpu", "kernel": "a_slow", "time_us": 8.0, "per": "call"},
        {"target": "A gpu", "kernel": "a", "time_us": 5.0, "energy_j": 0.5, "per": "call"},
        {"target": "A gpu", "kernel": "a_untimed", "per": "call"},
        {"target": "B gpu", "time_us": 10.0},
        {"target": "Z tile", "target_kind": "tile", "kernel": "z", "time_us": 20.0},
    ]
    rows[-1] |= {"energy_j": 2.0, "per": "call"}
    runs = runs_from_rows([{"target_kind": "gpu", **common, **r} for r in rows])
    sets = linked_sets(runs).filter(pl.col("link_by") == "workload")
    columns = ("target", "target_kind", "runs", "kernel", "workload", "per", "speedup")
    assert sets.select(columns).rows() == [
        ("Z tile", "tile", 1, "z", "w", "call", 1.0),  # tile targets first
        ("A gpu", "gpu", 3, "a", "w", "call", 4.0),
        ("B gpu", "gpu", 1, None, "w", None, 2.0),
    ]
    assert sets["op_family"].cast(pl.String).to_list() == ["gemm"] * 3
    assert sets["dtype"].cast(pl.String).to_list() == ["f16"] * 3
    assert sets["j_per_gflop"].to_list() == [1.0, 0.25, None]
    assert sets["flops"].to_list() == [2e9] * 3
    assert sets["text"].to_list() == [
        "Z tile z · 2 GFLOP · 20 µs per call at 100 TFLOP/s, 2 J (1,000 mJ/GFLOP), the slowest",
        "A gpu a · 2 GFLOP · 5 µs per call at 400 TFLOP/s, 0.5000 J (250 mJ/GFLOP), 4× the slowest",
        "B gpu · 2 GFLOP · 10 µs at 200 TFLOP/s, 2× the slowest",
    ]


def test_describe_without_work_or_time() -> None:
    from tileprof.analyses.links import describe

    row = {"target": "T", "compare": "time", "time_us": None, "work": None}
    assert describe(row) == "T · work unknown · —"
    # same kind, nothing but energy: no "at", no leading comma; 0.0012349 J/GFLOP is 1.235 mJ
    row = {"target": "T", "compare": "efficiency", "work": "w", "energy_j": 2.0}
    assert describe(row | {"j_per_gflop": 0.0012349}) == "T · w · 2 J (1.235 mJ/GFLOP)"


def test_describe_names_the_roofline_and_a_spec_beaten() -> None:
    """The roofline figure: its kind (a tile group without FLOPs stands on the issue-slot
    one), its bound, and above 100% the warning that the spec is wrong (issue 38, ``mutX``)."""
    from tileprof.analyses.links import describe

    row = {"target": "T", "compare": "efficiency", "work": "w", "bound": "memory"}
    assert describe(row | {"roofline_fraction": 0.25, "issue_slot": True}) == (
        "T · w · 25.00% of issue-slot roofline (memory bound)"
    )
    assert describe(row | {"roofline_fraction": 0.25, "issue_slot": False}) == (
        "T · w · 25.00% of roofline (memory bound)"
    )
    assert describe(row | {"roofline_fraction": 1.0}) == (
        "T · w · 100.00% of roofline (memory bound)"
    )
    assert describe(row | {"roofline_fraction": 1.5}) == (
        "T · w · 150.00% of roofline (memory bound): faster than the roofline, the spec is wrong"
    )


def test_device_spread_text_whole_and_compact() -> None:
    """A run on several devices of its target: its fastest and slowest device's times, the
    spread (94.25 / 92.93 - 1 = 1.42%) and which device was slowest (issue 38, ``mutX``)."""
    from tileprof.analyses.links import describe, device_spread_text

    row = {
        "devices": 8,
        "device_min_us": 92.93,
        "device_max_us": 94.25,
        "device_spread": 0.0142,
        "slowest_device": "chip 2",
    }
    assert device_spread_text(row) == (
        "8 devices: 92.93 µs to 94.25 µs, spread 1.42%, slowest chip 2"
    )
    assert device_spread_text(row, compact=True) == "1.42% of 8, slowest chip 2"
    assert device_spread_text(row | {"devices": 1}) == ""
    assert device_spread_text(row | {"devices": None}, compact=True) == ""
    run = row | {"target": "T", "compare": "time", "work": "w", "time_us": 92.93, "per": "call"}
    assert describe(run | {"device": "chip 0"}) == (
        "T · w · 92.93 µs per call on chip 0 (8 devices: 92.93 µs to 94.25 µs, spread 1.42%,"
        " slowest chip 2)"
    )


def test_overrides_decide_the_sets() -> None:
    from tileprof.core.links import Links, Override

    # two targets with no workload; an override gives both the same one, so they link
    rows = [{"target": t, "target_kind": "gpu", "kernel": k} for t, k in (("A", "k1"), ("B", "k2"))]
    runs = runs_from_rows(rows)
    links = Links(overrides=(Override(match={"kernel": "k*"}, set={"workload": "joined"}),))
    assert linked_sets(runs).height == 0
    sets = linked_sets(runs, links)
    assert sets.select("set", "target").rows() == [
        ("workload joined", "A"),
        ("workload joined", "B"),
    ]
    assert apply_overrides(runs, links).schema == runs.schema


def test_format_us_units_and_edges() -> None:
    from tileprof.analyses.links import format_us

    # the number policy's four significant figures (trailing zeros kept, whole numbers bare);
    # a unit changes at exactly 1,000 µs and 1,000,000 µs
    assert format_us(None) == "—"
    assert format_us(15.5) == "15.50 µs"
    assert format_us(999.0) == "999 µs"
    assert format_us(1000.0) == "1 ms"
    assert format_us(4360.0) == "4.360 ms"
    assert format_us(9995.001) == "9.995 ms"
    assert format_us(9999.6) == "10.00 ms"  # 9.9996 rounds up to four figures
    assert format_us(999_000.0) == "999 ms"
    assert format_us(1_000_000.0) == "1 s"
    assert format_us(1_234_567_000_000.0) == "1,234,567 s"
    assert format_us(780_000_000.0) == "780 s"


def test_work_of_a_tile_group_and_a_gpu_run() -> None:
    from tileprof.analyses.links import work_of

    # A kernelSpec over 80 characters keeps 40 first and 39 last around "…" (80 in all).
    spec = "H" * 40 + "m" * 30 + "T" * 39
    meta = {"kernelSpec": spec, "outputElements": 12345, "usefulCycles": 6789}
    tile = {"target_kind": "tile", "shape": "2x3x4", "mac": 1000, "metadata": json.dumps(meta)}
    assert work_of(tile) == {
        "work": f"2x3x4, {'H' * 40}…{'T' * 39}, 12,345 output elements, 2e-06 GFLOP, "
        "6,789 useful cycles",
        "flops": 2000.0,
        "useful_cycles": 6789,
    }
    # a GPU run's metadata (Kineto's category, streams…) is not a tile group's: no useful cycles
    gpu = {**tile, "target_kind": "gpu", "shape": None, "mac": None}
    assert work_of(gpu) == {"work": "work unknown", "flops": None, "useful_cycles": None}
    # 2 × 1,000,750,001 = 2,001,500,002 FLOPs: 2.001500002 GFLOP rounds up to 2.002
    # (÷ 1,000,000,001 instead of 1e9 would give 2.001)
    assert work_of({"mac": 1_000_750_001})["work"] == "2.002 GFLOP"
