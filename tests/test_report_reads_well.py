"""The report reads well (issue 26): its inputs include the links file with its sha256 and the
command line; the GEMM chart's labels do not overlap; the tile-balance axis starts where the
data is and says so; exchange is drawn as exchange in "Phase cycles per group"."""

from __future__ import annotations

import hashlib
import itertools
import shutil
from pathlib import Path
from typing import Any

import numpy as np
from click.testing import CliRunner

from tests.hostile import ROOT
from tests.report_samples import run_inputs
from tests.samples import sample, write_dump
from tileprof.commands.cli import cli


def test_the_header_lists_the_links_file_and_the_command(tmp_path: Path) -> None:
    links = tmp_path / "links.toml"
    shutil.copy(ROOT / "fixtures/runs/links.toml", links)
    nsys = ROOT / "fixtures/runs/nsys_kern_sum.csv"
    dump = write_dump(tmp_path / "d.json", [sample(0, 0, 100, "gemm"), sample(1, 0, 50, "gemm")])
    out = tmp_path / "r.html"
    args = ["report", str(dump), str(nsys), "--epoch", "1", "--links", str(links), "-o", str(out)]
    result = CliRunner().invoke(cli, args, env={"SOURCE_DATE_EPOCH": "0"})
    assert result.exit_code == 0, result.stderr
    page = out.read_text(encoding="utf-8")
    header = page[page.index('<header id="header">') : page.index("</header>")]
    digest = hashlib.sha256(links.read_bytes()).hexdigest()
    assert f"<td>{links}</td><td>links (TOML)</td>" in header
    assert f"<code>{digest}</code>" in header
    assert (
        f'<code class="command">tileprof report {dump} {nsys} --links {links} --epoch 1</code>'
    ) in header


def _overlap(a: Any, b: Any) -> bool:
    return bool(a.overlaps(b)) and a.width > 0 and b.width > 0


def test_gemm_labels_stay_inside_their_axes_and_apart(figures: dict[str, Any]) -> None:
    from tileprof.views.html.charts import gemm_chart
    from tileprof.views.html.data import gpu_section

    gpu = gpu_section(run_inputs())
    assert gpu is not None and gpu.gemm is not None and gpu.gemm.plot is not None
    gemm_chart(gpu.gemm.plot.frame)
    figure = figures["gpu-gemm-chart"]
    renderer = figure.canvas.get_renderer()
    left, right = figure.axes
    box = left.get_window_extent(renderer)
    labels = [t for t in left.texts if t.get_text().endswith("of peak")]
    assert labels
    for label in labels:
        extent = label.get_window_extent(renderer)
        assert extent.x1 <= box.x1, label.get_text()  # inside the time axes
        assert not _overlap(extent, right.get_window_extent(renderer))
    ticks = [t for t in left.xaxis.get_ticklabels() if t.get_text()]
    extents = [t.get_window_extent(renderer) for t in ticks]
    for first, second in itertools.pairwise(extents):
        assert first.x1 < second.x0, [t.get_text() for t in ticks]  # tick labels apart


def test_balance_axis_starts_where_the_data_is(figures: dict[str, Any]) -> None:
    from tileprof.model.examples import example_profile
    from tileprof.views.html.charts import balance_floor, with_tile_charts
    from tileprof.views.html.data import tile_section

    section = with_tile_charts(tile_section(example_profile()))
    axes = figures["tile-0-balance"].axes[0]
    low, _ = axes.get_ylim()
    busy = section.balance.busy
    assert 0 < low <= busy.min()  # the data (137,172 up) is not flattened against 0
    assert any(t.get_text() == f"axis starts at {low:,.0f}, not 0" for t in axes.texts)
    chart = next(c for c in section.charts if c.id == "tile-0-balance")
    assert f"The busy-cycles axis starts at {low:,.0f}, not 0." in chart.caption
    assert balance_floor(np.array([0.0, 10.0, 100.0])) == 0  # spread from 0: a plain axis
    assert balance_floor(np.array([900.0, 1000.0])) == 800  # a round value below the least
    # every tile equally busy: a plain axis (a floor at the one value drew an empty chart and
    # matplotlib's "identical low and high ylims" warning)
    assert balance_floor(np.array([1000.0, 1000.0])) == 0


def test_exchange_is_drawn_as_exchange(figures: dict[str, Any]) -> None:
    from matplotlib.colors import to_hex

    from tileprof.model.examples import example_profile
    from tileprof.views.html.charts import EXCHANGE_COLOUR, OTHER_WORK_COLOUR, with_tile_charts
    from tileprof.views.html.data import tile_section

    section = with_tile_charts(tile_section(example_profile()))
    split = section.phase
    row = split.names.index("exchange")
    assert split.exchange is not None and split.exchange[row] > 0
    assert split.other[row] == 0 and split.useful[row] == 0
    axes = figures["tile-0-phase"].axes[0]
    legend = [t.get_text() for t in axes.get_legend().get_texts()]
    assert "exchange" in legend
    bars = [p for p in axes.patches if p.get_width() > 0 and abs(p.get_y() + 0.4 - row) < 1e-6]
    colours = {to_hex(p.get_facecolor()) for p in bars}
    assert colours == {EXCHANGE_COLOUR} and OTHER_WORK_COLOUR not in colours
