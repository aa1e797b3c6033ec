"""Issue 34, item 4, without a browser: labels told apart, no chart drawn without data (the
page says why in one line), blank columns named instead of shown, long tables capped, and a
lead sentence per section computed from its table. The browser holds the same rules on whole
pages (tests/test_pages_browser.py)."""

from __future__ import annotations

import polars as pl

from tileprof.core.text import numbered, told_apart
from tileprof.views.html import charts, leads
from tileprof.views.html.data import TOP_ROWS, table_from_frame
from tileprof.views.html.view import ChartedTable, Plot, RooflinePlot


def test_labels_that_read_alike_are_numbered_apart() -> None:
    shown = ["gemm…x16", "gemm…x16", "gemm…x16", "relu"]
    full = ["gemm_a_x16", "gemm_b_x16", "gemm_a_x16", "relu"]
    assert told_apart(shown, full) == ["gemm…x16~1", "gemm…x16~2", "gemm…x16~1", "relu"]
    assert all(len(s) <= 9 for s in told_apart(shown, full, limit=9))
    assert numbered(["bf16", "f32", "bf16"]) == ["bf16 #1", "f32", "bf16 #2"]


def test_kernel_cells_that_shorten_alike_differ() -> None:
    long = "void at::native::vectorized_elementwise_kernel<4, at::native::{}Functor<float>>(int)"
    frame = pl.DataFrame({"kernel": [long.format("A" * 80), long.format("B" * 80)]})
    table = table_from_frame("t", frame, ("kernel",), kernels=("kernel",))
    texts = [c.text for c in table.column("kernel")]
    assert len(set(texts)) == 2, texts


def test_gemm_bars_carry_distinct_labels_and_no_energy_panel_without_energy() -> None:
    frame = pl.DataFrame(
        {
            "target": ["NVIDIA H200"] * 3,
            "dtype": ["bf16", "bf16", "f32"],
            "shape": ["256x1024x1024", "1024x512x256", "256x1024x1024"],
            "implementation": [None, None, None],
            "time_us": [4.0, 3.0, 20.0],
            "energy_j": [None, None, None],
            "peak_fraction": [0.1, 0.2, 0.3],
        }
    )
    labels = charts.gemm_labels(frame)
    assert len(set(labels)) == 3 and all("H200" not in s for s in labels), labels
    chart = charts.gemm_chart(frame)
    assert chart.svg.count("-axes_") == 1  # one panel: time
    assert "no run measured energy_j" in chart.caption


def test_a_chart_with_nothing_to_draw_is_a_line_instead() -> None:
    unknown = pl.DataFrame(
        {"target": ["H100", "MI300X"], "target_kind": ["gpu", "gpu"], "peak_fraction": [None, None]}
    )
    table = table_from_frame("linked-0", unknown, ("target", "peak_fraction"))
    drawn = charts._drawn(
        ChartedTable("set", table, plot=Plot("linked_efficiency", "c", "set", unknown))
    )
    assert drawn.chart is None and "no spec gives a peak for H100, MI300X" in drawn.note
    points = pl.DataFrame({"target": ["Tenstorrent blackhole"], "arithmetic_intensity": [2.0]})
    roofless = RooflinePlot("roofline", "r", "Roofline", points, pl.DataFrame({"target": []}))
    assert "no roof" in (charts.nothing_to_draw(roofless) or "")
    timed = pl.DataFrame({"target": ["H100"], "time_us": [3.0]})
    assert charts.nothing_to_draw(Plot("linked", "c", "set", timed)) is None


def test_blank_columns_are_named_and_long_tables_capped() -> None:
    frame = pl.DataFrame(
        {"run": [f"r{i}" for i in range(40)], "time_us": list(range(40)), "speedup": [None] * 40},
        schema_overrides={"speedup": pl.Float64},
    )
    table = table_from_frame("runs", frame, ("run", "time_us", "speedup"))
    assert [c.key for c in table.columns if c.blank] == ["speedup"]
    assert table.top == TOP_ROWS


def test_a_lead_states_the_table_s_main_figure() -> None:
    frame = pl.DataFrame(
        {"target": ["H100", "A100"], "target_kind": ["gpu", "gpu"], "time_us": [30.0, 45.0]}
    )
    table = table_from_frame("linked-0", frame, ("target", "target_kind", "time_us"))
    lead = leads.linked_set_lead(ChartedTable("set", table, plot=Plot("linked", "c", "s", frame)))
    assert lead == "H100 is fastest at 30 µs; A100 takes 1.500× as long.", lead
