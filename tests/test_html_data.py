"""The report's view model built from small inputs (``views.html.data``): the tables' columns
and the names the charts label their rows with, read from the model, not the page."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.report_samples import generated_profile, run_inputs
from tileprof.analyses.summary import summarize
from tileprof.views.html.data import duration_spread, gpu_section, phase_split


def test_the_gemm_table_has_its_columns_a_percent_and_dittos() -> None:
    """Every GEMM column in order (the raw energy beside the corrected one), the peak fraction
    as a percentage, and the columns that repeat down the table shown as dittos."""
    gpu = gpu_section(run_inputs())
    assert gpu is not None and gpu.gemm is not None and gpu.gemm.plot is not None
    table = gpu.gemm.table
    assert table.id == "gpu-gemm"
    assert [c.key for c in table.columns] == [
        "target", "workload", "implementation", "dtype", "shape", "time_us", "mac",
        "energy_j", "energy_raw_j", "peak_fraction",
    ]  # fmt: skip
    assert [c.key for c in table.columns if c.ditto] == ["target", "workload", "dtype"]
    assert [cell.text for cell in table.column("peak_fraction")] == [
        "96.00%", "90.00%", "81.00%", "70.00%",
    ]  # fmt: skip
    assert {cell.text for cell in table.column("shape")} == {"8192x8192x8192"}
    assert (gpu.gemm.plot.kind, gpu.gemm.plot.id) == ("gemm", "gpu-gemm-chart")


def test_chart_rows_are_named_by_group_and_its_dimensions() -> None:
    """A group's chart row reads ``name (dim=value, ...)`` when the summary is grouped by
    dimensions, its name alone when not, in the group table's order."""
    profile = generated_profile(samples=600, tiles=4, seed=2)
    clock_hz, tile_count = profile.clock_hz, profile.tile_count
    plain = summarize(profile.samples, profile.metadata, clock_hz=clock_hz, tile_count=tile_count)
    names = plain.groups.get_column("name").cast(pl.String).to_list()
    assert phase_split(plain).names == tuple(names)
    assert duration_spread(plain).names == tuple(names)
    grouped = summarize(
        profile.samples,
        profile.metadata,
        clock_hz=clock_hz,
        tile_count=tile_count,
        group_by=("kind", "epoch"),
    )
    rows = grouped.groups.select(pl.col("name", "kind").cast(pl.String), "epoch").rows()
    expected = tuple(f"{name} (kind={kind}, epoch={epoch})" for name, kind, epoch in rows)
    assert phase_split(grouped).names == expected
    assert duration_spread(grouped).names == expected
    assert "layernorm_f16 (kind=compute, epoch=1)" in expected


def test_the_speedup_table_has_its_columns_and_dittos() -> None:
    gpu = gpu_section(run_inputs())
    assert gpu is not None and gpu.speedups is not None and gpu.speedups.plot is not None
    table = gpu.speedups.table
    assert [c.key for c in table.columns] == [
        "target", "workload", "implementation", "baseline_implementation", "time_us",
        "baseline_time_us", "speedup",
    ]  # fmt: skip
    assert [c.key for c in table.columns if c.ditto] == [
        "target", "workload", "baseline_implementation",
    ]  # fmt: skip
    first = [cell.text for cell in table.rows[0]]
    assert first == [
        "A100 SXM4 80 GB", "small", "trainkernel", "inductor", "66.04 µs", "22.92 µs", "0.3471×",
    ]  # fmt: skip
    assert (gpu.speedups.plot.kind, gpu.speedups.plot.id) == ("speedup", "gpu-speedups-chart")


def test_roofs_per_target_precision_and_kind_of_work_in_first_seen_order() -> None:
    """Matrix work reads the matrix peak, other work the vector one; a tile target's peak and
    bandwidth are at its own tile count and clock; a target without a spec has no roof; one
    roof per (target, key), in the order the points first show it."""
    from tileprof.views.html.data import _roofs

    tile = "tile device (736 tiles @ 1.5 GHz)"
    points = pl.DataFrame(
        {
            "target": [
                "NVIDIA H200",
                tile,
                "NVIDIA H200",
                "NVIDIA H200",
                "unknown GPU",
                "NVIDIA H200",
            ],
            "dtype": ["bf16", "f16", "f32", "f32", "f16", "bf16"],
            "op_family": ["gemm", "gemm", "elementwise", "gemm", "gemm", "attention"],
        }
    )
    assert _roofs(points).rows() == [
        ("NVIDIA H200", "matrix_bf16", 989.5, 4800.0),
        (tile, "matrix_fp16", 141.312, 26827.2),  # half the 1472-tile device's
        ("NVIDIA H200", "vector_fp32", 67.0, 4800.0),
        ("NVIDIA H200", "matrix_fp32", 67.0, 4800.0),
    ]


KERNEL = "void at::native::vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>>(int)"
KERNEL_SHOWN = "vectorized_elementwise_kernel<4, at::CUDAFunctor_add<float>>"
"""A CUDA kernel's name, and as the tables show it (``kernel_cell``: around its functor)."""


def _check_row(
    source: str,
    name: str,
    undermines: list[str],
    *,
    status: str = "warn",
    count: int = 1,
    places: tuple[str, ...] = (),
    detail: str | None = None,
) -> dict[str, object]:
    """One capture check's row (``analyses.integrity``), its detail its name unless given."""
    return {
        "input": source, "check": name, "status": status, "count": count,
        "places": list(places), "detail": name if detail is None else detail,
        "undermines": undermines,
    }  # fmt: skip


def test_a_check_that_undermines_the_headline_abstains_its_rates_only() -> None:
    """A failed check of this dump that undermines ``headline`` blanks every headline figure
    but the sample counts, saying why; one of another dump, or undermining another figure,
    or passed, changes nothing."""
    from tileprof.analyses.integrity import check_frame
    from tileprof.views.html.data import abstained_headline, tile_section

    tile = tile_section(generated_profile(samples=500, tiles=8))

    def check(source: str, status: str, undermines: list[str]) -> dict[str, object]:
        return _check_row(
            source, "overlapping-samples", undermines, status=status, count=3,
            places=("sample 4",), detail="two samples of one tile overlap",
        )  # fmt: skip

    kept = [
        check("other.json", "warn", ["headline"]),
        check(tile.source, "warn", ["groups"]),
        check(tile.source, "ok", ["headline"]),
    ]
    assert abstained_headline(tile, check_frame(kept)) == tile
    assert abstained_headline(tile, None) == tile
    abstained = abstained_headline(
        tile, check_frame([*kept, check(tile.source, "warn", ["headline"])])
    )
    why = (
        "abstained: generated: check overlapping-samples failed (3; first at sample 4): "
        "two samples of one tile overlap"
    )
    for before, after in zip(tile.headline, abstained.headline, strict=True):
        if before.label == "Samples matched / total":
            assert after == before
        else:
            assert (after.label, after.value, after.text) == (before.label, None, why)


def test_a_report_of_dumps_alone_has_no_gpu_parts_and_names_an_unnamed_dump() -> None:
    """Without runs: no GPU section, linked sets, roofline, device spread or op tables (empty,
    not missing); the version is tileprof's own; a dump read from memory heads its quality
    lines as "(in memory)"."""
    from tileprof import __version__
    from tileprof.views.html.data import build_report

    profile = generated_profile(samples=300, tiles=4, source="")
    report = build_report([profile], charts=False, environ={"SOURCE_DATE_EPOCH": "0"})
    assert (report.gpu, report.linked, report.roofline, report.devices) == (None, (), None, None)
    assert report.tile_ops == ()
    assert report.header.version == __version__
    details = [check.detail for check in report.quality if check.check.startswith("Samples")]
    assert details and all(d.startswith("(in memory): ") for d in details), details


def test_a_report_with_runs_has_a_roofline_and_a_tile_op_table() -> None:
    """Runs with a FLOP rate give the roofline (here the four GEMM runs, its ids and title);
    a tile run whose metadata names an op gives its chip's op table; the
    quality checks list the CPU-only traces and every reader's notes, the dumps' after the
    runs'."""
    import dataclasses
    import json

    from tileprof.views.html.data import build_report

    inputs = run_inputs()
    op = {
        "target": "Wormhole n150",
        "target_kind": "tile",
        "kernel": "matmul",
        "total_us": 12.5,
        "metadata": json.dumps({"op_type": "Matmul", "core_count": 64}),
    }
    rated = inputs.runs.with_columns(
        arithmetic_intensity=pl.when(pl.col("per") == "GEMM").then(pl.lit(2048.0)),
        tflops=pl.when(pl.col("per") == "GEMM").then(pl.col("mac") * 2 / pl.col("time_us") / 1e6),
    )
    runs = pl.concat([rated, pl.DataFrame([op])], how="diagonal_relaxed")
    profile = dataclasses.replace(
        generated_profile(samples=300, tiles=4), notes=("dump.json: 2 lines skipped",)
    )
    report = build_report(
        [profile],
        dataclasses.replace(inputs, runs=runs),
        charts=False,
        environ={"SOURCE_DATE_EPOCH": "0"},
    )
    assert report.roofline is not None and report.roofline.plot is not None
    assert report.roofline.plot.frame["per"].to_list() == ["GEMM"] * 4
    assert (report.roofline.title, report.roofline.table.id) == ("Roofline", "roofline")
    assert (report.roofline.plot.kind, report.roofline.plot.id) == ("roofline", "roofline-chart")
    assert [table.title for table in report.tile_ops] == ["Ops of Wormhole n150"]
    quality = {check.check: check.detail for check in report.quality}
    assert quality["CPU-only traces"] == "cpu_trace.json"
    assert quality["Parser notes"] == (
        "trace.json.gz: 3 events with no correlation id; dump.json: 2 lines skipped"
    )


def test_each_dump_of_a_report_is_filtered_by_its_own_filters() -> None:
    from tileprof.analyses.filters import Filters
    from tileprof.views.html.data import build_report

    profile = generated_profile(samples=600, tiles=4, seed=2)
    report = build_report(
        [profile, profile], tile_filters=[Filters(epoch=1), Filters()], charts=False
    )
    first, second = (tile.summary.groups["sampleCount"].sum() for tile in report.tiles)
    assert (report.tiles[0].filters, report.tiles[1].filters) == (("--epoch 1",), ())
    assert 0 < first < second == 600


def test_the_counter_table_shortens_kernel_names_and_dittos_the_op_family() -> None:
    """Nsight Compute's figures beside the tile groups: kernel names shown around their
    functor with the full name as the title, the op family dittoed down its rows."""
    import json

    from tileprof.core.run_schema import runs_from_rows
    from tileprof.views.html.data import counter_table

    kernel = (
        "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, "
        "at::detail::Array<char*, 3>)"
    )
    figures = json.dumps({"sol_compute_percent": 30.0, "sol_memory_percent": 60.0})
    rows: list[dict[str, object]] = [
        {"target": "GPU", "target_kind": "gpu", "kernel": kernel, "metadata": figures},
        {"target": "GPU", "target_kind": "gpu", "kernel": "k2", "metadata": figures},
    ]
    tile = {"target": "tile device", "target_kind": "tile", "peak_fraction": 0.4}
    rows += [tile | {"kernel": "add_f32", "time_us": 3.0}]
    runs = runs_from_rows([row | {"op_family": "elementwise"} for row in rows])
    table = counter_table(runs)
    assert table is not None and table.id == "gpu-counters"
    assert [c.key for c in table.columns if c.ditto] == ["op_family"]
    cells = table.column("kernel")
    assert [c.text for c in cells] == [
        "add_f32", "vectorized_elementwise_kernel<…CUDAFunctor_add<float>…>", "k2",
    ]  # fmt: skip
    assert cells[1].title == kernel
    assert [c.ditto for c in table.column("op_family")] == [False, True, True]
    assert counter_table(runs.filter(pl.col("target_kind") == "tile")) is None


def test_the_device_spread_table_has_a_row_per_run_of_several_devices() -> None:
    """One row per run that two devices of one target ran: its spread as a percentage, the
    kernel shortened, target and file dittoed; none when every run ran on one device."""
    from tileprof.core.run_schema import runs_from_rows
    from tileprof.views.html.data import device_spread_section

    kernel = KERNEL
    rows = [
        {"target": "H100", "target_kind": "gpu", "kernel": name, "device": device,
         "time_us": time, "per": "call", "source": "job.sqlite: kernel"}
        for name in (kernel, "gemm") for device, time in (("0", 10.0), ("1", 15.0))
    ]  # fmt: skip
    section = device_spread_section(runs_from_rows(rows))
    assert section is not None and section.title == "Devices of one target"
    table = section.table
    assert table.id == "device-spread"
    texts = [[cell.text for cell in row] for row in table.rows]
    short = KERNEL_SHOWN
    assert [row[:3] for row in texts] == [
        ["H100", "job.sqlite", "gemm"], ["H100", "job.sqlite", short],
    ]  # fmt: skip
    assert [row[-4:] for row in texts] == [["10 µs", "15 µs", "50.00%", "1"]] * 2
    assert table.rows[1][2].title == kernel
    assert [c.key for c in table.columns if c.ditto] == ["target", "file"]
    assert [[c.ditto for c in row[:2]] for row in table.rows] == [[False, False], [True, True]]
    one_device = runs_from_rows([row for row in rows if row["device"] == "0"])
    assert device_spread_section(one_device) is None


def test_the_generation_time_is_utc_whatever_the_local_time_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import time

    from tileprof.views.html.data import generation_time

    monkeypatch.setenv("TZ", "XST-5:30")  # a POSIX zone: no time zone database needed
    time.tzset()
    try:
        assert generation_time({"SOURCE_DATE_EPOCH": "1700000000"}) == "2023-11-14 22:13:20 UTC"
        assert generation_time({}).endswith(" UTC")
    finally:
        monkeypatch.undo()
        time.tzset()


def test_the_headline_by_hand(tmp_path: Path) -> None:
    """Four tiles at 1 GHz; epoch 1 matched: tile 0 busy [100, 400) with 150 useful cycles,
    tile 1 [200, 600) with none stated; epoch 2's sample on tile 2 [0, 1000) left out. Matched
    span 500 cycles; Σ duration 700, so 1.4 active tiles, 35% of the device busy; useful
    150 / (4 × 500) = 7.5%. Each figure's label, value, text and definition."""
    from tests.samples import profile, sample
    from tileprof.analyses.filters import Filters
    from tileprof.views.html.data import tile_section

    samples = [
        sample(0, 100, 300, useful=150),
        sample(1, 200, 400),
        sample(2, 0, 1000, epoch=2, useful=900),
    ]
    dump = profile(tmp_path, samples, clockHz=1_000_000_000, tileCount=4)
    figures = tile_section(dump, Filters(epoch=1)).headline
    assert [(f.label, f.value, f.text, f.definition) for f in figures] == [
        ("Matched span", 500, "500 cycles · 0.0005 ms",
         "max(offset + duration) − min(offset) over the matched samples"),
        ("Profile span", 1000, "1,000 cycles · 0.001 ms",
         "profileSpanCycles: over all samples, unfiltered"),
        ("Samples matched / total", 2, "2 / 3", "matchedSampleCount / sampleCount"),
        ("Mean active tiles", 1.4, "1.400", "Σ duration of matched samples / matched span"),
        ("Device busy", 0.35, "35.00%", "mean active tiles / tileCount"),
        ("Device useful utilization", 0.075, "7.50%",
         "Σ usefulCycles of matched samples / (tileCount × matched span)"),
    ]  # fmt: skip


def test_a_headline_of_nothing_matched_or_no_useful_cycles_stated(tmp_path: Path) -> None:
    """No sample matched: no span, no rates, shown as dashes; samples that state no useful
    cycles: the device's useful utilization is not known (as a group's is null), not 0%."""
    from tests.samples import profile, sample
    from tileprof.analyses.filters import Filters
    from tileprof.views.html.data import tile_section

    dump = profile(tmp_path, [sample(0, 0, 400), sample(1, 0, 200)], tileCount=2)
    empty = {f.label: (f.value, f.text) for f in tile_section(dump, Filters(epoch=7)).headline}
    assert empty["Matched span"] == (None, "—")
    assert empty["Mean active tiles"] == (None, "—")
    assert empty["Device busy"] == (None, "—")
    assert empty["Device useful utilization"] == (None, "—")
    plain = {f.label: (f.value, f.text) for f in tile_section(dump).headline}
    assert plain["Device busy"] == (0.75, "75.00%")
    assert plain["Device useful utilization"] == (None, "—")


def test_a_calibration_table_has_each_schedule_s_time_and_speedup_over_its_baseline() -> None:
    gpu = gpu_section(run_inputs())
    assert gpu is not None and len(gpu.calibrations) == 1
    calibration = gpu.calibrations[0]
    assert calibration.title == "Calibration: H100 SXM 80 GB · small"
    table = calibration.table
    assert table.id == "gpu-calibration-0"
    assert [c.key for c in table.columns] == [
        "implementation", "time_us", "baseline_implementation", "speedup",
    ]  # fmt: skip
    assert [[(cell.text, cell.ditto) for cell in row] for row in table.rows] == [
        [("selected WMMA", False), ("56.53 µs", False), ("—", False), ("—", False)],
        [("WGMMA shared group 1", False), ("93.59 µs", False), ("selected WMMA", False),
         ("0.6040×", False)],
        [("WGMMA register-source A", False), ("104.8 µs", False), ("selected WMMA", True),
         ("0.5392×", False)],
    ]  # fmt: skip
    assert calibration.plot is not None
    assert (calibration.plot.kind, calibration.plot.id) == (
        "calibration",
        "gpu-calibration-0-chart",
    )


def test_phase_split_by_hand(tmp_path: Path) -> None:
    """phaseCycles split as useful (× usefulUtilization, held to 0–1: "gemm" states more
    useful cycles than it ran), other (the rest; all of it without an estimate), and exchange
    (all of a group whose samples are all exchange, its stated useful cycles or not); a group
    with one exchange sample among others is not an exchange group."""
    import dataclasses

    import numpy as np

    from tests.samples import profile, sample
    from tileprof.views.html.data import tile_section

    samples = [
        sample(0, 0, 300, "gemm", useful=450),
        sample(1, 0, 200, "add"),
        sample(2, 0, 400, "half", useful=100),
        sample(3, 0, 100, None, kind="exchange", useful=40),
        sample(3, 100, 100, "mixed", kind="exchange"),
        sample(2, 400, 100, "mixed", useful=50),
    ]
    dump = profile(tmp_path, samples, clockHz=1_000_000_000, tileCount=4)
    split = tile_section(dump).phase
    assert split.names == ("half", "gemm", "add", "mixed", "exchange")
    assert split.useful.tolist() == [100.0, 300.0, 0.0, 100.0, 0.0]
    assert split.other.tolist() == [300.0, 0.0, 200.0, 100.0, 0.0]
    assert split.exchange is not None and split.exchange.tolist() == [0, 0, 0, 0, 100.0]
    summary = tile_section(dump).summary
    below = summary.groups.with_columns(usefulUtilization=np.array([-0.5, 1.5, 0.2, 0.5, 0.0]))
    clipped = phase_split(dataclasses.replace(summary, groups=below))
    assert clipped.useful.tolist() == [0.0, 300.0, 40.0, 100.0, 0.0]
    # no samples given: no group is known to be exchange
    assert clipped.exchange is not None and not clipped.exchange.any()


def test_a_linked_set_of_unknown_kind_shortens_its_kernels() -> None:
    """A linked set's table: a run that states no target kind shows an empty kind (the chart
    draws it as a GPU's), kernel names shortened around their functor."""
    from tileprof.core.run_schema import runs_from_rows
    from tileprof.views.html.data import LinkedSet, linked_section

    kernel = KERNEL
    runs = runs_from_rows(
        [
            {"target": "H100", "target_kind": "gpu", "kernel": kernel, "time_us": 3.0},
            {"target": "other", "kernel": "add", "time_us": 4.0},
        ]
    )
    (section,) = linked_section([LinkedSet("add", runs)])
    assert section.plot is not None and section.plot.frame["target_kind"].to_list() == ["gpu", ""]
    kinds = [cell.text for cell in section.table.column("target_kind")]
    kernels = [cell.text for cell in section.table.column("kernel")]
    assert (kinds, kernels) == (
        ["gpu", ""],
        [KERNEL_SHOWN, "add"],
    )


def test_a_chip_s_op_table_per_chip_from_the_tile_rows_that_name_an_op() -> None:
    """Tile rows whose metadata names an ``op_type``, one table per (target, device), the
    heaviest op first, the report's own figures read from the metadata (a figure that is not
    a number is left empty); a tile row without an op and a GPU row with one are not ops."""
    import json

    from tileprof.core.run_schema import runs_from_rows
    from tileprof.views.html.data import tile_op_tables

    def op(kernel: str, device: str, total: float | None, **meta: object) -> dict[str, object]:
        return {
            "target": "Wormhole n150", "target_kind": "tile", "kernel": kernel,
            "device": device, "total_us": total, "metadata": json.dumps({"op_type": kernel} | meta),
        }  # fmt: skip

    rows = [
        op("Untimed", "0", None),
        op("Matmul", "0", 12.5, math_fidelity="HiFi4", pm_ideal_us=9.0),
        op("Softmax", "0", 30.0, pm_ideal_us="n/a"),
        op("Matmul", "1", 14.0),
        {"target": "Wormhole n150", "target_kind": "tile", "kernel": "group", "total_us": 99.0},
        {"target": "H100", "target_kind": "gpu", "kernel": "k", "total_us": 1.0,
         "metadata": json.dumps({"op_type": "Matmul"})},
    ]  # fmt: skip
    tables = tile_op_tables(runs_from_rows(rows))
    assert [t.title for t in tables] == ["Ops of Wormhole n150 · 0", "Ops of Wormhole n150 · 1"]
    first = tables[0].table
    assert first.id == "tile-ops-0" and tables[1].table.id == "tile-ops-1"
    assert [c.text for c in first.column("kernel")] == ["Softmax", "Matmul", "Untimed"]
    assert [c.text for c in first.column("math_fidelity")] == ["—", "HiFi4", "—"]
    assert [c.sort for c in first.column("pm_ideal_us")] == [None, 9.0, None]
    assert [c.key for c in first.columns][:4] == ["kernel", "op_family", "shape", "calls"]
    many = [op(f"op{n:02d}", "0", float(n)) for n in range(40)]
    (long,) = tile_op_tables(runs_from_rows(many))
    assert long.table.top == 15 and len(long.table.rows) == 40  # a kernel table's top
    assert tile_op_tables(runs_from_rows([rows[0]]).drop("target_kind")) == ()


def test_the_roofline_table_shortens_kernel_names() -> None:
    from tileprof.core.run_schema import runs_from_rows
    from tileprof.views.html.data import roofline_section

    kernel = KERNEL
    runs = runs_from_rows(
        [{"target": "NVIDIA H200", "target_kind": "gpu", "kernel": kernel, "dtype": "f32",
          "op_family": "elementwise", "mac": 1_000_000, "bytes": 8_000_000, "time_us": 1.0}]
    )  # fmt: skip
    section = roofline_section(runs, ())
    assert section is not None
    (cell,) = section.table.column("kernel")
    assert (cell.text, cell.title) == (
        KERNEL_SHOWN,
        kernel,
    )


def test_a_tile_section_bins_time_as_asked_and_lists_no_samples() -> None:
    """The occupancy map and the active-tiles curve take the section's bin count; the summary
    behind it lists no longest samples (the page shows none, so none are picked)."""
    from tileprof.views.html.data import tile_section

    section = tile_section(generated_profile(samples=500, tiles=8), bins=12)
    assert section.occupancy is not None and section.active is not None
    assert (section.occupancy.bins.count, section.active.bins.count) == (12, 12)
    assert section.summary.samples == []


def test_the_gpu_runs_name_each_failed_check_under_their_ops_or_kernels_once() -> None:
    """A failed check that undermines the op rows or the kernel rows is named over the GPU
    runs (the op rows' first), once even when it undermines both; a check that passed or
    undermines something else is not."""
    from tileprof.analyses.integrity import check_frame
    from tileprof.views.html.data import build_report

    def check(name: str, status: str, undermines: list[str]) -> dict[str, object]:
        return _check_row("trace.json", name, undermines, status=status)

    checks = check_frame(
        [
            check("kernels-only", "warn", ["kernels"]),
            check("both", "warn", ["ops", "kernels"]),
            check("ops-only", "warn", ["ops"]),
            check("passed", "ok", ["kernels"]),
            check("elsewhere", "warn", ["breakdown"]),
        ]
    )
    report = build_report([], run_inputs(), charts=False, checks=checks)
    assert report.gpu is not None
    assert report.gpu.withheld == (
        "trace.json: check both failed (1): both",
        "trace.json: check ops-only failed (1): ops-only",
        "trace.json: check kernels-only failed (1): kernels-only",
    )


def test_supersteps_abstain_for_a_failed_check_of_their_dump_that_undermines_them() -> None:
    """A failed check of this dump that undermines the supersteps, or the ranked edits,
    withholds the part with its reason and drops the edits; one of another dump, or
    undermining something else, changes nothing."""
    from tileprof.analyses.integrity import check_frame
    from tileprof.views.html.data import tile_section, withheld_supersteps

    tile = tile_section(generated_profile(samples=500, tiles=8))
    assert tile.supersteps is not None and tile.supersteps.candidates is not None

    def check(source: str, name: str, undermines: list[str]) -> dict[str, object]:
        return _check_row(source, name, undermines, count=2)

    others = [check("other.json", "x", ["supersteps"]), check(tile.source, "y", ["groups"])]
    assert withheld_supersteps(tile, check_frame(others)) == tile
    for undermined in ("supersteps", "candidates"):
        checks = check_frame([*others, check(tile.source, "z", [undermined])])
        withheld = withheld_supersteps(tile, checks).supersteps
        assert withheld is not None and withheld.candidates is None
        assert withheld.withheld == ("generated: check z failed (2): z",)
