"""The report's view model (numbers, not HTML), its escaping, determinism and command."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from tests.report_samples import generated_profile, run_inputs
from tests.samples import frame as sample_frame
from tests.samples import profile as load_samples
from tests.samples import sample, write_dump
from tileprof.analyses.filters import Filters
from tileprof.analyses.quality import run_quality, tile_quality
from tileprof.analyses.stats import GROUP_FIELDS
from tileprof.commands.cli import cli
from tileprof.core.errors import OptionError
from tileprof.views.html import build_report, render
from tileprof.views.html.data import (
    IDLE,
    RunInputs,
    binned_cycles,
    format_number,
    generation_time,
    gpu_section,
    linked_section,
    number_cell,
    overlapping_samples,
    tile_section,
    time_bins,
)

XSS = "<script>alert(1)</script>"

TINY = [
    sample(0, 0, 100, "gemm", useful=50, physical=60, phase=1),
    sample(1, 50, 100, "gemm", useful=40, physical=60, phase=1),
    sample(0, 100, 30, None, kind="exchange", phase=2),
    sample(2, 400, 10, "copy", phase=3, epoch=2),
]


@pytest.fixture()
def tiny(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_samples(tmp_path, TINY, clockHz=1000, tileCount=4)


def figures(section) -> dict[str, object]:  # type: ignore[no-untyped-def]
    return {f.label: f.value for f in section.headline}


def test_tiny_headline(tiny) -> None:  # type: ignore[no-untyped-def]
    section = tile_section(tiny)
    values = figures(section)
    assert values["Matched span"] == 410
    assert values["Samples matched / total"] == 4
    assert values["Mean active tiles"] == pytest.approx(240 / 410)
    assert values["Device busy"] == pytest.approx(240 / 410 / 4)
    assert values["Device useful utilization"] == pytest.approx(90 / (4 * 410))
    # the copy of epoch 2 states no useful cycles: alone, the figure is not known, not 0%
    alone = tile_section(tiny, Filters(epoch=2))
    assert figures(alone)["Device useful utilization"] is None
    assert {f.label: f.text for f in alone.headline}["Device useful utilization"] == "—"


def test_tiny_group_table_has_every_statistic(tiny) -> None:  # type: ignore[no-untyped-def]
    table = tile_section(tiny).groups
    # the figures people come for first (issue 11), then the rest in the summary's order
    assert [c.key for c in table.columns] == [
        "name",
        "phaseCycles",
        "phaseMs",
        "usefulUtilization",
        "deviceUsefulUtilization",
        "p50Cycles",
        "p95Cycles",
        "averageActiveTiles",
        "sampleCount",
        "tileCount",
        "phaseCount",
        "workCycles",
        "usefulCycles",
        "estimatedWorkCycles",
        "workLaneOccupancy",
        "meanCycles",
        "maximumCycles",
        "firstOffset",
        "lastOffset",
    ]
    assert sorted(c.key for c in table.columns) == sorted(["name", *GROUP_FIELDS])
    assert [c.text for c in table.column("name")] == ["gemm", "exchange", "copy"]
    assert [c.sort for c in table.column("phaseCycles")] == [150.0, 30.0, 10.0]
    assert table.column("usefulUtilization")[0].text == "45.00%"
    assert table.column("usefulUtilization")[1].sort is None  # null sorts last


def test_tiny_filters_and_group_by(tiny) -> None:  # type: ignore[no-untyped-def]
    section = tile_section(tiny, Filters(epoch=1), group_by=("phase",))
    assert [c.key for c in section.groups.columns][:2] == ["name", "phase"]
    assert figures(section)["Samples matched / total"] == 3
    assert figures(section)["Matched span"] == 150
    assert section.spread.names == ("gemm (phase=1)", "exchange (phase=2)")


def test_tiny_occupancy_and_active_tiles(tiny) -> None:  # type: ignore[no-untyped-def]
    section = tile_section(tiny, bins=41)
    occupancy, active = section.occupancy, section.active
    assert occupancy is not None and active is not None
    assert occupancy.bins.width == 10 and occupancy.bins.count == 41
    assert occupancy.legend == ("gemm", "exchange", "copy")
    cells = occupancy.cells
    assert cells.shape == (4, 41)
    assert (cells[0, :10] == 0).all() and (cells[0, 10:13] == 1).all()
    assert (cells[0, 13:] == IDLE).all()
    assert (cells[1, 5:15] == 0).all() and (cells[1, :5] == IDLE).all()
    assert cells[2, 40] == 2 and (cells[3] == IDLE).all()
    # Σ over bins of mean active tiles × bin width = Σ durations, per group.
    assert (active.series * occupancy.bins.covered).sum(axis=1).tolist() == [200, 30, 10]
    assert sorted(active.by_kind) == ["compute", "exchange"]
    assert active.by_kind["exchange"].max() == pytest.approx(1.0)


def test_tiny_phase_spread_balance(tiny) -> None:  # type: ignore[no-untyped-def]
    section = tile_section(tiny)
    assert section.phase.names == ("gemm", "exchange", "copy")
    assert section.phase.useful.tolist() == pytest.approx([150 * 90 / 200, 0, 0])
    assert (section.phase.useful + section.phase.other).tolist() == [150, 0, 10]
    assert section.phase.exchange is not None  # exchange is drawn as exchange (issue 26)
    assert section.phase.exchange.tolist() == [0, 30, 0]
    assert section.spread.p50.tolist() == [100, 30, 10]
    assert section.spread.maximum.tolist() == [100, 30, 10]
    balance = section.balance
    assert balance.busy.tolist() == [130, 100, 10, 0]
    assert (balance.minimum, balance.maximum, balance.idle_tiles) == (0, 130, 1)
    assert (balance.min_tile, balance.max_tile) == (3, 0)
    assert balance.mean == 60.0


def test_tiny_quality(tmp_path: Path) -> None:
    overlapping = [*TINY, sample(0, 90, 20, "gemm"), sample(3, 0, 5, None, kind="exchange")]
    report = build_report([load_samples(tmp_path, overlapping, tileCount=4)], charts=False)
    checks = {q.check: q for q in report.quality}
    assert checks["Samples overlapping on one tile"].count == 2  # 90+20 > 100, 100 < 110
    assert checks["Samples overlapping on one tile"].status == "warn"
    assert checks["Tiles above tileCount"].count == 0
    assert checks["Samples with no metadata"].count == 4
    assert checks["CPU-only traces"].count == 0


def test_overlaps_ignore_touching_samples() -> None:
    frame = pl.DataFrame(
        {"tile": [0, 0, 1, 1], "offset": [0, 10, 0, 5], "duration": [10, 5, 10, 1]}
    )
    assert overlapping_samples(frame) == (1, 1)


@given(
    st.lists(
        st.tuples(st.integers(0, 500), st.integers(0, 300), st.integers(0, 2)),
        min_size=1,
        max_size=30,
    ),
    st.integers(1, 40),
)
def test_binned_cycles_matches_a_naive_count(
    intervals: list[tuple[int, int, int]], count: int
) -> None:
    starts = np.array([s for s, _, _ in intervals])
    ends = starts + np.array([d for _, d, _ in intervals])
    keys = np.array([k for _, _, k in intervals])
    bins = time_bins(int(starts.min()), int(ends.max()), count)
    got = binned_cycles(starts, ends, keys, 3, bins)
    naive = np.zeros((3, bins.count))
    edges = bins.edges
    for s, d, k in intervals:
        for b in range(bins.count):
            naive[k, b] += max(0, min(s + d, edges[b + 1]) - max(s, edges[b]))
    np.testing.assert_allclose(got, naive)


def test_generated_profile_view_model() -> None:
    profile = generated_profile(samples=5_000, tiles=64)
    section = tile_section(profile)
    assert section.occupancy is not None
    assert section.occupancy.cells.shape[0] == 64
    assert int(section.balance.busy.sum()) == int(profile.samples["duration"].sum())
    assert "other" not in section.occupancy.legend  # six groups fit the legend


def test_example_view_model() -> None:
    from tileprof.model.examples import example_profile

    section = tile_section(example_profile(), Filters(epoch=1))
    assert section.groups.rows and len(section.groups.rows) == 19
    assert figures(section)["Samples matched / total"] == 37_376
    assert figures(section)["Profile span"] == 16_746_138
    assert section.balance.busy.size == 1472
    assert section.occupancy is not None and section.occupancy.cells.shape[0] == 1472


def test_gpu_sections_from_a_run_table() -> None:
    inputs = run_inputs()
    gpu = gpu_section(inputs)
    assert gpu is not None
    gpu_rows = inputs.runs.filter(pl.col("target_kind") == "gpu").height
    # every GPU run but the trace's two per-call kernel rows, which only the kernel table lists
    # (issue 11: the kernel table no longer repeats the run table)
    assert len(gpu.runs.rows) == gpu_rows - 2
    assert gpu.kernel_rows == 2
    assert gpu.speedups is not None and len(gpu.speedups.table.rows) == 3
    assert [c.title for c in gpu.calibrations] == ["Calibration: H100 SXM 80 GB · small"]
    assert len(gpu.calibrations[0].table.rows) == 3
    assert gpu.gemm is not None
    assert [c.text for c in gpu.gemm.table.column("dtype")] == ["f32", "tf32", "f16", "int8"]
    assert [k.title for k in gpu.kernels] == ["Kernels of trace.json.gz · NVIDIA H200"]
    assert next(c.text for c in gpu.kernels[0].table.column("kernel")) == "ampere_sgemm_128x64_nn"
    linked = linked_section(inputs.linked_sets)
    assert [s.title for s in linked] == ["gemm · f16"]
    assert [c.text for c in linked[0].table.column("target_kind")] == ["tile", "gpu"]


def test_no_gpu_rows_means_no_gpu_section() -> None:
    assert gpu_section(RunInputs(pl.DataFrame({"target_kind": ["tile"]}))) is None


def test_quality_lists_cpu_only_traces_and_notes(tiny) -> None:  # type: ignore[no-untyped-def]
    report = build_report([tiny], run_inputs(), charts=False)
    checks = {q.check: q for q in report.quality}
    assert checks["CPU-only traces"].count == 1
    assert "cpu_trace.json" in checks["CPU-only traces"].detail
    assert checks["Parser notes"].count == 1
    assert "NVIDIA H200" in report.header.targets


def test_generation_time_follows_source_date_epoch() -> None:
    assert generation_time({"SOURCE_DATE_EPOCH": "1700000000"}) == "2023-11-14 22:13:20 UTC"
    for bad in ("abc", "1.5", "99999999999999999999"):
        with pytest.raises(OptionError, match="SOURCE_DATE_EPOCH"):
            generation_time({"SOURCE_DATE_EPOCH": bad})


def test_charts_never_read_source_date_epoch(monkeypatch: pytest.MonkeyPatch) -> None:
    from tileprof.views.html.charts import speedup_chart

    monkeypatch.setenv("SOURCE_DATE_EPOCH", "abc")  # matplotlib would fail on int("abc")
    frame = pl.DataFrame({"target": ["g"], "workload": ["w"], "implementation": ["i"]})
    chart = speedup_chart(frame.with_columns(speedup=pl.lit(1.5)))
    assert chart.svg.startswith("<svg") and "<dc:date>" not in chart.svg


def test_malformed_source_date_epoch_is_one_line_exit_2(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "x.html"
    args = ("report", *map(str, SEEDS), str(dump), "-o", str(out))
    code, _, stderr = run(*args, env={"SOURCE_DATE_EPOCH": "abc"})
    assert code == 2 and stderr.count("\n") == 1 and "SOURCE_DATE_EPOCH" in stderr, stderr
    assert not out.exists()


def test_every_input_name_is_escaped(tmp_path: Path) -> None:
    samples = [sample(0, 0, 10, XSS, useful=5), sample(1, 0, 10, None, kind=XSS)]
    profile = load_samples(tmp_path, samples, tileCount=4)
    inputs = run_inputs()
    runs = inputs.runs.with_columns(
        kernel=pl.lit(XSS), workload=pl.lit(XSS), target=pl.lit("GPU " + XSS)
    )
    report = build_report(
        [profile],
        RunInputs(runs, inputs.linked_sets, notes=(XSS,), cpu_only_traces=(XSS,)),
        filters=Filters(kernels=("*",)),
    )
    html = render(report)
    assert XSS not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<script>") == 1  # the page's own sorting script


def test_page_is_self_contained(tiny) -> None:  # type: ignore[no-untyped-def]
    html = render(build_report([tiny], run_inputs()))
    # The only URLs are the SVG namespace names, which are never fetched.
    assert set(re.findall(r"https?://[^\"\s)]*", html)) <= {
        "http://www.w3.org/2000/svg",
        "http://www.w3.org/1999/xlink",
    }
    lowered = html.lower()
    for needle in ("<link", "@import", "src=", "@font-face", "url(http"):
        assert needle not in lowered, needle
    assert "<style>" in html and "<script>" in html
    assert "default-src 'none'" in html  # the page forbids loading anything else


# ---------------------------------------------------------------- the command


def run(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), env=env)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture()
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "dump.json", [*TINY, sample(3, 0, 7, XSS)])


def test_report_writes_the_output(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    code, stdout, stderr = run("report", str(dump), "-o", str(out), "--epoch", "1")
    assert code == 0, stderr
    assert stdout.strip() == str(out)
    html = out.read_text()
    assert "--epoch 1" in html and "sha256" in html
    import hashlib

    assert hashlib.sha256(dump.read_bytes()).hexdigest() in html


def test_report_is_byte_identical_with_source_date_epoch(dump: Path, tmp_path: Path) -> None:
    env = {"SOURCE_DATE_EPOCH": "1700000000"}
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    assert run("report", str(dump), "-o", str(a), env=env)[0] == 0
    assert run("report", str(dump), "-o", str(b), env=env)[0] == 0
    assert a.read_bytes() == b.read_bytes()
    assert "2023-11-14 22:13:20 UTC" in a.read_text()


def test_report_is_deterministic_across_processes(dump: Path, tmp_path: Path) -> None:
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000", "PYTHONHASHSEED": "random"}
    outputs = []
    for name in ("p1.html", "p2.html"):
        subprocess.run(
            [sys.executable, "-m", "tileprof", "report", str(dump), "-o", str(tmp_path / name)],
            check=True,
            env=env,
            capture_output=True,
        )
        outputs.append((tmp_path / name).read_bytes())
    assert outputs[0] == outputs[1]


def test_default_output_and_force(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run("report", str(dump))
    assert code == 0
    default = tmp_path / "tileprof-report.html"
    assert stdout.strip() == str(default.resolve())
    # the default output is regenerated freely: it is a tileprof report
    assert run("report", str(dump))[0] == 0
    # an explicit output is not replaced without --force
    code, _, stderr = run("report", str(dump), "-o", str(default))
    assert code == 2 and "--force" in stderr
    assert run("report", str(dump), "-o", str(default), "--force")[0] == 0
    # a foreign file under the default name is kept
    default.write_text("my notes")
    code, _, stderr = run("report", str(dump))
    assert code == 2 and "not a tileprof report" in stderr
    assert default.read_text() == "my notes"
    assert run("report", str(dump), "--force")[0] == 0


def test_report_errors_are_one_line(tmp_path: Path) -> None:
    code, _, stderr = run("report")
    assert code == 2 and stderr.count("\n") == 1
    other = tmp_path / "runs.json"
    other.write_text(json.dumps({"neither": "tile dump nor GPU run file"}))
    code, _, stderr = run("report", str(other), "-o", str(tmp_path / "x.html"))
    assert code == 2 and str(other) in stderr and stderr.count("\n") == 1
    code, _, stderr = run("report", str(tmp_path / "missing.json"))
    assert code == 2 and stderr.count("\n") == 1


# ---------------------------------------------------------------- GPU files through the command

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
SEEDS = sorted((FIXTURES / "seeds").glob("00[03]_*.txt"))


def cpu_only_trace(path: Path) -> Path:
    events = [
        {
            "ph": "X",
            "cat": "cpu_op",
            "name": "aten::mm",
            "pid": 1,
            "tid": 1,
            "ts": 100,
            "dur": 50,
            "args": {"External id": 1},
        }
    ]
    path.write_text(json.dumps({"schemaVersion": 1, "traceEvents": events}))
    return path


def test_inputs_from_seed_gpu_files_and_a_dump(dump: Path, tmp_path: Path) -> None:
    from tileprof.model.gather import read_inputs

    trace = cpu_only_trace(tmp_path / "cpu_trace.json")
    inputs = read_inputs(
        [*SEEDS, FIXTURES / "traces" / "kineto_small.json", trace, dump],
        Filters(),
        links=FIXTURES / "runs" / "links.toml",
    )
    assert [t.name for t in inputs.tiles] == ["dump.json"]
    assert [f.kind for f in inputs.files] == [
        "latency benchmarks",
        "energy report",
        "PyTorch trace",
        "PyTorch trace",
        "tile dump",
        "links (TOML)",  # the links file is an input too (issue 26)
    ]
    assert all(f.sha256 and f.size_bytes for f in inputs.files)
    runs = inputs.runs
    assert runs is not None
    assert "tile" in runs.runs["target_kind"].cast(pl.String).to_list()
    assert len(runs.cpu_only_traces) == 1 and "cpu_trace.json" in runs.cpu_only_traces[0]
    assert any(s.key.startswith("layer 3 GEMM") for s in runs.linked_sets)
    gpu = gpu_section(runs)
    assert gpu is not None and gpu.speedups is not None and gpu.gemm is not None
    assert len(gpu.speedups.table.rows) == 8  # trainkernel over inductor, 8 held-out rows
    assert len(gpu.calibrations) == 2  # small and medium, 4 schedules each
    assert all(len(c.table.rows) == 4 for c in gpu.calibrations)
    assert [c.text for c in gpu.gemm.table.column("dtype")] == ["f32", "f16", "int8", "b1"]
    assert [k.title for k in gpu.kernels] == [
        "Kernels of kineto_small.json · NVIDIA A100-SXM4-80GB",
        "Kernels of kineto_small.json · GPU 1",
    ]


def test_report_command_on_gpu_files(dump: Path, tmp_path: Path) -> None:
    out = tmp_path / "all.html"
    trace = FIXTURES / "traces" / "h200_train_steps.json.gz"
    code, _, stderr = run(
        "report",
        *map(str, SEEDS),
        str(trace),
        str(dump),
        "-o",
        str(out),
        "--links",
        str(FIXTURES / "runs" / "links.toml"),
    )
    assert code == 0, stderr
    html = out.read_text()
    for heading in (
        "GPU runs",
        "Speedup over baseline",
        "Calibration: ",
        "GEMM time and energy per precision",
        "Kernels of h200_train_steps.json.gz",
        "Across targets",
        "layer 3 GEMM",
    ):
        assert heading in html, heading
    assert XSS not in html


def test_example_report(tmp_path: Path) -> None:
    out = tmp_path / "example.html"
    code, _, stderr = run("report", "--example", "-o", str(out))
    assert code == 0, stderr
    html = out.read_text()
    assert "--epoch 1" in html and "GPU runs" in html and "Across targets" in html


def test_each_profile_may_have_its_own_filters(tiny) -> None:  # type: ignore[no-untyped-def]
    report = build_report([tiny, tiny], tile_filters=[Filters(epoch=2), Filters()], charts=False)
    assert [t.filters for t in report.tiles] == [("--epoch 2",), ()]
    assert [len(t.groups.rows) for t in report.tiles] == [1, 3]
    with pytest.raises(ValueError):
        build_report([tiny], tile_filters=[], charts=False)


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 50), st.integers(0, 20)), max_size=25))
def test_overlaps_match_a_naive_count(samples: list[tuple[int, int, int]]) -> None:
    frame = pl.DataFrame(
        {
            "tile": [t for t, _, _ in samples],
            "offset": [o for _, o, _ in samples],
            "duration": [d for _, _, d in samples],
        },
        schema={"tile": pl.Int64, "offset": pl.Int64, "duration": pl.Int64},
    )
    ordered = sorted(samples)  # by tile, offset, then duration
    hits, tiles = 0, set()
    for i, (tile, offset, _) in enumerate(ordered):
        ends = [o + d for t, o, d in ordered[:i] if t == tile]
        if ends and offset < max(ends):
            hits += 1
            tiles.add(tile)
    assert overlapping_samples(frame) == (hits, len(tiles))


def test_run_table_leaves_trace_kernels_to_the_kernel_tables() -> None:
    from tileprof.model.gather import read_inputs

    files = [FIXTURES / "traces" / "kineto_small.json", FIXTURES / "runs" / "generic_runs.csv"]
    runs = read_inputs(files, Filters()).runs
    assert runs is not None
    gpu = gpu_section(runs)
    assert gpu is not None
    # the two generic per-call rows (no total_us); the five trace kernels are in kernel tables
    assert len(gpu.runs.rows) == 2
    assert gpu.kernel_rows == 5
    assert sum(len(k.table.rows) for k in gpu.kernels) == 5
    targets = {c.text for c in gpu.runs.column("target")}
    assert targets == {"NVIDIA H100 80GB HBM3 SXM", "Some Future GPU"}
    assert [c.text for c in gpu.runs.column("run")] == ["layer3 · custom", "layer3 · my_fused_gemm"]
    # the per-trace detail tables name their target
    assert [k.title for k in gpu.kernels] == [
        "Kernels of kineto_small.json · NVIDIA A100-SXM4-80GB",
        "Kernels of kineto_small.json · GPU 1",
    ]


def test_linked_chart_axis_is_linear_from_zero_unless_times_span_two_decades() -> None:
    from tileprof.views.html.charts import linked_chart, linked_scale, plain_tick

    assert linked_scale(np.array([13.4, 20.3])) == ("linear", 0.0)
    assert linked_scale(np.array([np.nan, 5.0, 400.0])) == ("linear", 0.0)
    assert linked_scale(np.array([np.nan])) == ("linear", 0.0)
    assert linked_scale(np.array([13.4, 20.3, 5000.0])) == ("log", 10.0)
    assert linked_scale(np.array([0.04, 9.0])) == ("log", 0.01)
    assert [plain_tick(v) for v in (0, 13.4, 10.0, 0.01, 25000.0)] == [
        "0",
        "13.4",
        "10",
        "0.01",
        "25,000",
    ]
    for times in ([13.4, 20.3], [13.4, None, 5000.0]):
        frame = pl.DataFrame(
            {
                "target": ["a", "b", "c"][: len(times)],
                "implementation": None,
                "kernel": "k",
                "target_kind": ["tile", "gpu", "gpu"][: len(times)],
                "time_us": times,
                "peak_fraction": [0.5] * len(times),
            }
        )
        assert linked_chart("c", "set", frame).svg.startswith("<svg")


def test_tiles_above_tile_count_are_counted_for_a_profile_built_in_python(tiny) -> None:  # type: ignore[no-untyped-def]
    # Parsers reject such dumps at load; a Profile constructed directly can still hold them.
    import dataclasses

    narrow = dataclasses.replace(tiny, tile_count=2, source="built in python")
    report = build_report([narrow], charts=False)
    check = next(q for q in report.quality if q.check == "Tiles above tileCount")
    assert (check.count, check.status) == (1, "warn")  # the copy sample on tile 2
    assert "built in python: 1 samples on tiles ≥ 2 (1 tiles)" in check.detail
    assert report.tiles[0].balance.busy.size == 2  # left out of the maps
    assert "Tiles above tileCount" in render(build_report([narrow]))


def test_file_digests_are_read_by_inputs_not_by_the_view_model(dump: Path) -> None:
    import hashlib

    from tileprof.inputs.sources import FileRead
    from tileprof.model.gather import Source, tile_source_runs
    from tileprof.model.profile import load
    from tileprof.views.html import data

    assert not hasattr(data, "file_digest") and not hasattr(data, "input_file")
    profile = load(dump)
    runs = tile_source_runs(profile, data.Filters(), dump.name)
    entry = Source(str(dump), dump, "tile dump", runs, profile).input_file()
    assert entry.size_bytes == dump.stat().st_size
    assert entry.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()
    assert FileRead(dump, "tile dump", None).sha256 is None  # a dump's loader streams it
    assert entry.sha256 == hashlib.sha256(dump.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1.426, "1.426"),  # four significant figures, not one decimal
        (1.193, "1.193"),
        (1.217, "1.217"),
        (123.456, "123.5"),
        (0.0123456, "0.01235"),
        (12.5, "12.50"),
        (999.97, "1,000"),
        (12345.67, "12,346"),
        (3.35e7, "33,500,000"),  # a whole float: in full, never 3.35e+07
        (71_468_532, "71,468,532"),
        (5.0, "5"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_format_number(value: object, text: str) -> None:
    assert format_number(value) == text


def test_number_cell_keeps_the_exact_value_in_its_title() -> None:
    cell = number_cell(1.42637)
    assert (cell.text, cell.title, cell.sort) == ("1.426", "1.42637", 1.42637)


def test_header_says_which_filters_each_section_applies(tiny, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    other = dataclasses.replace(tiny, source="other.json")
    report = build_report([tiny, other], tile_filters=[Filters(epoch=1), Filters()], charts=False)
    assert report.header.filters == (f"{tiny.source}: --epoch 1", "other.json: none")
    html = render(report)
    assert f"<code>{tiny.source}: --epoch 1</code>" in html


def test_chart_titles_are_not_repeated_under_their_heading() -> None:
    report = build_report([], run_inputs())
    html = render(report)
    assert "<h3>Speedup over baseline</h3>" in html
    assert "<strong>Speedup over baseline</strong>" not in html


def test_an_empty_match_says_so_instead_of_empty_tables_and_charts(tiny) -> None:  # type: ignore[no-untyped-def]
    report = build_report([tiny], tile_filters=[Filters(epoch=7)])
    (section,) = report.tiles
    assert section.empty and section.charts == ()
    html = render(report)
    assert "No samples matched the filters (4 samples in the dump)" in html
    assert 'id="tile-0-groups"' not in html


def test_gemm_rows_follow_the_precision_order() -> None:
    from tileprof.views.html.data import gemm_rows

    dtypes = ["int8", "b1", "bf16", "fp32", "weird", "fp8", "tf32", "fp16"]
    frame = pl.DataFrame(
        {
            "target": "g",
            "target_kind": "gpu",
            "op_family": "gemm",
            "dtype": dtypes,
            "energy_j": 1.0,
            "mac": None,
        }
    )
    order = gemm_rows(frame)["dtype"].to_list()
    assert order == ["fp32", "tf32", "fp16", "bf16", "fp8", "int8", "b1", "weird"]


def test_report_loads_tile_dumps_with_the_progress_bar_unless_quiet(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tileprof.model import gather

    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 10)])
    seen: list[bool] = []
    real_load = gather.load

    def spy(*args: object, **kwargs: object) -> object:
        seen.append(bool(kwargs.get("quiet")))
        return real_load(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(gather, "load", spy)
    runner = CliRunner()
    for extra in ([], ["--quiet"]):
        out = tmp_path / f"r{len(extra)}.html"
        result = runner.invoke(cli, ["report", str(dump), "-o", str(out), *extra])
        assert result.exit_code == 0, result.output
    assert seen == [False, True]


def test_malformed_source_date_epoch_fails_before_reading_inputs(tmp_path: Path) -> None:
    missing = tmp_path / "absent.json"
    result = CliRunner().invoke(
        cli,
        ["report", str(missing), "-o", str(tmp_path / "r.html")],
        env={"SOURCE_DATE_EPOCH": "abc"},
    )
    assert result.exit_code == 2
    assert "SOURCE_DATE_EPOCH" in result.stderr and "absent" not in result.stderr


def test_overlaps_past_2_53_below_zero_and_on_the_per_tile_path() -> None:
    """By hand (issue 38, the quality mutants): a sample starting at 2⁶² on a tile whose
    sample from 2⁶² − 1 runs 4 cycles overlaps it (exact past float64's 2⁵³); two tiles' samples
    at the same negative offset do not overlap each other; and where the shifted intervals
    would pass 2⁶² (a 2⁶¹- or 5·2⁶⁰-cycle sample beside another tile), the per-tile path counts
    tile 1's samples at 2 and 3, which start inside its sample (0, 4), and at 1 inside
    (0, 5·2⁶⁰)."""

    def overlaps(rows: list[tuple[int, int, int]]) -> tuple[int, int]:
        tile, offset, duration = (list(c) for c in zip(*rows, strict=True))
        return overlapping_samples(
            pl.DataFrame({"tile": tile, "offset": offset, "duration": duration})
        )

    assert overlaps([(0, 2**62 - 1, 4), (0, 2**62, 1)]) == (1, 1)
    assert overlaps([(0, -10, 5), (1, -10, 5)]) == (0, 0)
    assert overlaps([(0, 0, 2**61), (1, 0, 4), (1, 2, 1), (1, 3, 1)]) == (2, 1)
    assert overlaps([(0, 0, 5 * 2**60), (1, 0, 5 * 2**60), (1, 1, 1)]) == (1, 1)


@pytest.mark.filterwarnings("error")  # polars warns where it has to guess the orientation
def test_run_quality_by_hand() -> None:
    assert run_quality([], []).rows() == [
        ("CPU-only traces", 0, "ok", "no trace without GPU events"),
        ("Parser notes", 0, "ok", "nothing to note"),
    ]
    assert run_quality(["a.json", "b.json"], ["note 1", "note 2", "note 3"]).rows() == [
        ("CPU-only traces", 2, "info", "a.json; b.json"),
        ("Parser notes", 3, "info", "note 1; note 2; note 3"),
    ]


def test_tile_quality_of_clean_samples_by_hand() -> None:
    """Two samples on tiles 0 and 1 of a 2-tile dump, each with metadata: every check ok."""
    samples = sample_frame([sample(0, 0, 10, useful=5), sample(1, 0, 10, useful=5)])
    assert tile_quality(samples, 2, "d").rows() == [
        (
            "Samples overlapping on one tile",
            0,
            "ok",
            "d: 0 samples start before an earlier sample on the same tile ends (0 tiles)",
        ),
        (
            "Tiles above tileCount",
            0,
            "ok",
            "d: 0 samples on tiles ≥ 2 (0 tiles); left out of the maps",
        ),
        (
            "Samples with no metadata",
            0,
            "ok",
            "d: 0 of 2 samples carry no metadata; 0 carry no usefulCycles",
        ),
    ]
