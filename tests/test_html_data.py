"""The report's view model built from small inputs (``views.html.data``): the tables' columns
and the names the charts label their rows with, read from the model, not the page."""

from __future__ import annotations

import polars as pl

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


def test_a_check_that_undermines_the_headline_abstains_its_rates_only() -> None:
    """A failed check of this dump that undermines ``headline`` blanks every headline figure
    but the sample counts, saying why; one of another dump, or undermining another figure,
    or passed, changes nothing."""
    from tileprof.analyses.integrity import check_frame
    from tileprof.views.html.data import abstained_headline, tile_section

    tile = tile_section(generated_profile(samples=500, tiles=8))

    def check(source: str, status: str, undermines: list[str]) -> dict[str, object]:
        return {
            "input": source, "check": "overlapping-samples", "status": status, "count": 3,
            "places": ["sample 4"], "detail": "two samples of one tile overlap",
            "undermines": undermines,
        }  # fmt: skip

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
