"""The page rules of issue 34 held in a real browser (headless Chromium) on four pages: the
example report, a report of a real GPU trace, a Tenstorrent report and a diff page.

- A table wider than its box scrolls inside its wrapper with its first column in view.
- No chart without data: every panel of every chart draws something of non-zero size, no
  bar reads "peak unknown", a roofline has a roof.
- No two labels down one chart's side read alike.
- Every section opens with one sentence stating a figure.
- A report of two traces stays compact; a diff table shows the change next to the name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.cdp import Browser, find_browser
from tileprof.commands.cli import cli

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium found on PATH (apt-get install chromium, or set TILEPROF_CHROMIUM)",
)

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
GPU_TRACE = FIXTURES / "traces" / "h200_train_steps.json.gz"
TENSTORRENT = FIXTURES / "real" / "bh_8xp150_deepseek_v3_d_p.csv"
TWO_TRACES = (
    FIXTURES / "tracelens" / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    FIXTURES / "tracelens" / "mi300_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
)
TWO_TRACES_TALLEST = 10_000
"""Pixels a report of two traces may run to at 1,300 px wide (it ran to 17,700 before)."""


def _report(folder: Path, name: str, *args: str) -> Path:
    path = folder / f"{name}.html"
    result = CliRunner().invoke(cli, ["report", *args, "-o", str(path)])
    assert result.exit_code == 0, result.output
    return path


def _diff(folder: Path) -> Path:
    from tests.samples import sample, write_dump

    before = write_dump(
        folder / "before.json",
        [sample(t, 0, 100, "gemm", useful=50) for t in range(4)]
        + [sample(t, 100, 40, "softmax") for t in range(4)],
    )
    after = write_dump(
        folder / "after.json",
        [sample(t, 0, 70, "gemm", useful=50) for t in range(4)]
        + [sample(t, 100, 40, "softmax") for t in range(4)],
    )
    path = folder / "diff.html"
    args = ["diff", str(before), str(after), "--format", "html", "-o", str(path)]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    return path


def _critical(folder: Path) -> Path:
    path = folder / "critical.html"
    args = ["critical", str(GPU_TRACE), "--format", "html", "-o", str(path)]
    result = CliRunner().invoke(cli, [*args, "--what-if", "no-launch"])
    assert result.exit_code == 0, result.output
    return path


PAGES = ("example", "gpu-trace", "tenstorrent", "diff", "critical")


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("pages")
    return {
        "example": _report(folder, "example", "--example"),
        "gpu-trace": _report(folder, "gpu-trace", str(GPU_TRACE)),
        "tenstorrent": _report(folder, "tenstorrent", str(TENSTORRENT)),
        "diff": _diff(folder),
        "critical": _critical(folder),
    }


@pytest.fixture(scope="module")
def seen(pages: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """What the browser lays out on each page at 1,300 px (one browser per page)."""
    assert BROWSER is not None
    found = {}
    for name, path in pages.items():
        browser = Browser(BROWSER, tmp_path_factory.mktemp("profile"), width=1300)
        try:
            browser.open(path.as_uri())
            found[name] = {
                "tables": browser.evaluate(TABLES),
                "charts": browser.evaluate(CHARTS),
                "sections": browser.evaluate(SECTIONS),
                "errors": browser.console_errors(),
            }
        finally:
            browser.close()
    return found


TABLES = """Array.from(document.querySelectorAll('main table'))
  .filter(t => t.getClientRects().length > 0)
  .map(t => {
    const wrap = t.closest('.table-wrap');
    const box = wrap || t.parentElement;
    const over = t.getBoundingClientRect().width > box.clientWidth + 1;
    const first = () => {
      const row = Array.from(t.rows).find(r => r.getClientRects().length > 0);
      return row.cells[0].getBoundingClientRect();
    };
    let inView = null;
    if (over && wrap) {
      wrap.scrollLeft = wrap.scrollWidth;
      const cell = first(); const w = wrap.getBoundingClientRect();
      inView = wrap.scrollLeft > 0 && cell.left >= w.left - 1
               && cell.right <= w.left + wrap.clientWidth + 1;
      wrap.scrollLeft = 0;
    }
    const clipped = Array.from(t.querySelectorAll('td.num'))
      .filter(c => c.getClientRects().length > 0 && c.scrollWidth > c.clientWidth + 1).length;
    return {id: t.id || t.className, over: over, wrapped: !!wrap,
            scrolls: !!wrap && ['auto', 'scroll'].includes(getComputedStyle(wrap).overflowX),
            inView: inView, clipped: clipped};
  })"""

CHARTS = """Array.from(document.querySelectorAll('figure.chart svg, figure.chart img'))
  .filter(s => s.getClientRects().length > 0)
  .map(s => {
    const text = g => Array.from(g.childNodes).filter(n => n.nodeType === 8)
                        .map(n => n.data.trim()).join(' ');
    const axes = Array.from(s.querySelectorAll('g[id*="-axes_"]')).map(ax => {
      const marks = Array.from(ax.querySelectorAll('[clip-path], image'))
        .filter(e => !e.closest('g[id*="matplotlib.axis"]'))
        .filter(e => { const r = e.getBoundingClientRect();
                       return r.width > 0.5 && r.height > 0.5; });
      return {marks: marks.length,
              ylabels: Array.from(ax.querySelectorAll('g[id*="-ytick_"] g[id*="-text_"]'))
                         .map(text).filter(t => t)};
    });
    const words = Array.from(s.querySelectorAll('g[id*="-text_"]')).map(text).join(' | ');
    return {id: s.closest('figure').id, tag: s.tagName, axes: axes,
            roofs: s.querySelectorAll('[id*="-roof_"]').length, words: words};
  })"""

SECTIONS = """Array.from(document.querySelectorAll('main > section')).map(s => {
    const h = s.querySelector(':scope > h2');
    const next = h && h.nextElementSibling;
    return {id: s.id, lead: next && next.matches('p.lead') ? next.textContent : null};
  })"""


@pytest.mark.parametrize("name", PAGES)
def test_wide_tables_scroll_with_their_first_column_in_view(
    seen: dict[str, Any], name: str
) -> None:
    tables = seen[name]["tables"]
    assert tables and seen[name]["errors"] == []
    for table in tables:
        if table["over"]:
            assert table["wrapped"] and table["scrolls"], table
            assert table["inView"], table  # scrolled to its right end, the name stays
        assert table["clipped"] == 0, table  # no number cut inside its cell


@pytest.mark.parametrize("name", PAGES)
def test_no_chart_without_data(seen: dict[str, Any], name: str) -> None:
    for chart in seen[name]["charts"]:
        assert chart["axes"], chart["id"]
        for panel in chart["axes"]:
            assert panel["marks"] > 0, chart["id"]  # every panel draws something
        assert "peak unknown" not in chart["words"], chart["id"]
        if "roofline" in chart["id"]:
            assert chart["roofs"] > 0, chart["id"]


@pytest.mark.parametrize("name", PAGES)
def test_labels_down_a_chart_never_read_alike(seen: dict[str, Any], name: str) -> None:
    for chart in seen[name]["charts"]:
        for panel in chart["axes"]:
            labels = panel["ylabels"]
            assert len(labels) == len(set(labels)), (chart["id"], labels)


@pytest.mark.parametrize("name", PAGES)
def test_every_section_opens_with_its_figure(seen: dict[str, Any], name: str) -> None:
    sections = seen[name]["sections"]
    assert sections
    for section in sections:
        lead = section["lead"]
        assert lead, section["id"]
        assert any(ch.isdigit() for ch in lead), section  # a figure, not boilerplate


def test_a_diff_table_shows_the_change_next_to_the_name(
    pages: dict[str, Path], tmp_path: Path
) -> None:
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile", width=1300)
    try:
        browser.open(pages["diff"].as_uri())
        headers = browser.evaluate(
            "Array.from(document.querySelectorAll('#diff-table th')).map(h => h.textContent)"
        )
    finally:
        browser.close()
    assert headers[0] == "group"
    assert headers[1] == "phaseCycles Δ", headers  # the figure the rows are sorted by
    changed = headers.index("workCycles Δ")
    unchanged = headers.index("tileCount Δ")
    assert changed < unchanged, headers  # changed fields before the unchanged ones


def test_a_report_of_two_traces_is_compact(tmp_path: Path) -> None:
    page = _report(tmp_path, "two", *map(str, TWO_TRACES))
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile", width=1300)
    try:
        browser.open(page.as_uri())
        height = browser.evaluate("document.documentElement.scrollHeight")
        folded = browser.evaluate("document.querySelectorAll('details.charted').length")
    finally:
        browser.close()
    assert height < TWO_TRACES_TALLEST, height
    assert folded > 0
