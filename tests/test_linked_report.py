"""The report's across-targets section: time bars only for the same work, efficiency bars
for unlike work (issue 10)."""

from __future__ import annotations

from tests.test_links import ENERGY, LATENCY, seed_groups
from tileprof.analyses.links import linked_sets
from tileprof.core.run_schema import concat_runs, tile_runs
from tileprof.inputs.sources import load_runs
from tileprof.model.gather import linked_from_frame
from tileprof.views.html.charts import PLOTS
from tileprof.views.html.data import linked_section


def test_time_bars_only_for_same_work_efficiency_bars_otherwise() -> None:
    runs = concat_runs(
        [
            tile_runs(seed_groups(), source="seed 004"),
            load_runs(ENERGY).frame,
            load_runs(LATENCY).frame,
        ]
    )
    section = linked_section(linked_from_frame(linked_sets(runs)))
    kinds = {ct.title: ct.plot.kind for ct in section if ct.plot is not None}
    assert kinds["workload small (workload)"] == "linked"
    unlike = "gemm · f16 (different sizes: compare efficiency, not time) (op_family·dtype)"
    assert kinds[unlike] == "linked_efficiency"
    assert all(
        kind == "linked_efficiency"
        for title, kind in kinds.items()
        if "compare efficiency, not time" in title
    )
    gemm = next(ct for ct in section if ct.title == unlike)
    assert gemm.plot is not None
    chart = PLOTS[gemm.plot.kind](gemm.plot)
    assert "% of peak" in chart.svg and "µs" not in chart.svg
    assert "Different sizes: efficiency, not time." in chart.caption
    headers = [c.key for c in gemm.table.columns]
    assert {"work", "tflops", "peak_fraction", "j_per_gflop"} <= set(headers)
