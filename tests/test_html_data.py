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
