"""The report in a real browser: headless Chromium over the DevTools protocol.

Checks what only a browser can: the page runs without console errors, sorting reorders the
rows, every chart is laid out visible with a non-zero size, and nothing is requested from
outside the page (file:// and inline data: only). Skips only when no Chromium is installed;
``.ci/run`` installs Debian's ``chromium`` so CI never skips.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.cdp import Browser, find_browser
from tests.report_samples import generated_profile
from tileprof.commands.cli import cli
from tileprof.views.writers import dump_bytes

BROWSER = find_browser()
pytestmark = pytest.mark.skipif(
    BROWSER is None,
    reason="no Chromium found on PATH (apt-get install chromium, or set TILEPROF_CHROMIUM)",
)


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
H200 = FIXTURES / "traces" / "h200_train_steps.json.gz"


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The example report (``--example``) when the reference profile is available; until then
    the same command on a generated dump plus the seed GPU files, a real H200 trace and the
    links file. Either way every section is on the page."""
    folder = tmp_path_factory.mktemp("report")
    path = folder / "report.html"
    try:
        import tileprof.inputs.synthetic.reference  # noqa: F401

        args = ["report", "--example", str(H200), "-o", str(path)]
    except ImportError:
        dump = folder / "dump.parquet"
        dump.write_bytes(dump_bytes(generated_profile(samples=12_000), "parquet"))
        args = [
            "report",
            str(dump),
            *map(str, sorted((FIXTURES / "seeds").glob("00[03]_*.txt"))),
            str(H200),
            "--links",
            str(FIXTURES / "runs" / "links.toml"),
            "-o",
            str(path),
        ]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.stderr
    return path


def test_report_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        # a folded linked set (details.charted) lays its chart out once opened
        browser.evaluate(
            "document.querySelectorAll('details.charted').forEach(d => { d.open = true; })"
        )
        charts = browser.evaluate(
            """Array.from(document.querySelectorAll('figure.chart')).map(f => {
                 const s = f.querySelector('svg'); const r = s.getBoundingClientRect();
                 const cs = getComputedStyle(s);
                 return {id: f.id, width: r.width, height: r.height,
                         visible: cs.visibility === 'visible' && cs.display !== 'none'};
               })"""
        )
        column = """Array.from(document.querySelectorAll('#tile-0-groups tbody tr'))
                      .map(r => r.cells[0].getAttribute('data-sort'))"""
        before = browser.evaluate(column)
        browser.evaluate("document.querySelector('#tile-0-groups th button').click()")
        ascending = browser.evaluate(column)
        browser.evaluate("document.querySelector('#tile-0-groups th button').click()")
        descending = browser.evaluate(column)
        header = browser.evaluate(
            "document.querySelector('#tile-0-groups th').getAttribute('aria-sort')"
        )
        browser.screenshot(tmp_path / "report.png")
        errors = browser.console_errors()
        urls = browser.requested_urls()
    finally:
        browser.close()

    assert errors == []
    ids = {c["id"] for c in charts}
    for expected in ("occupancy", "active", "phase", "spread", "balance"):
        assert f"tile-0-{expected}" in ids
    assert {"gpu-speedups-chart", "gpu-gemm-chart", "linked-0-chart"} <= ids
    assert any(i.startswith("gpu-calibration-") for i in ids)
    for chart in charts:
        assert chart["visible"], chart
        assert chart["width"] > 50 and chart["height"] > 50, chart
    assert before != ascending
    assert ascending == sorted(before)
    assert descending == sorted(before, reverse=True)
    assert header == "descending"
    assert urls, "the page itself should be a request"
    assert all(u.startswith(("file://", "data:")) for u in urls), urls
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_roofline_chart_in_headless_chromium(page: Path, tmp_path: Path) -> None:
    """The roofline chart as the browser lays it out: its points (one marker per op or tile
    group), each target's roofs drawn with a non-zero extent, and no two labels overlapping."""
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        found = browser.evaluate(
            """(() => {
                 const svg = document.querySelector('#roofline-chart svg');
                 if (!svg) return null;
                 const box = e => { const r = e.getBoundingClientRect();
                                    return [r.left, r.top, r.right, r.bottom]; };
                 const q = s => Array.from(svg.querySelectorAll(s));
                 return {
                   markers: q('[id^="roofline-chart-points_"] use').length,
                   roofs: q('[id^="roofline-chart-roof_"] path').map(box),
                   links: q('[id^="roofline-chart-link_"]').length,
                   labels: q('[id^="roofline-chart-text_"]').map(box),
                   rows: document.querySelectorAll('#roofline tbody tr').length,
                 };
               })()"""
        )
    finally:
        browser.close()
    assert found is not None, "no roofline chart on the page"
    assert found["rows"] > 0 and found["markers"] == found["rows"]
    assert len(found["roofs"]) >= 2
    assert all(r[2] - r[0] > 50 for r in found["roofs"]), found["roofs"]
    assert found["links"] >= 1
    labels = [b for b in found["labels"] if b[2] > b[0] and b[3] > b[1]]
    assert len(labels) > 10
    for i, a in enumerate(labels):
        for b in labels[i + 1 :]:
            overlap = (
                min(a[2], b[2]) - max(a[0], b[0]) > 0.5 and min(a[3], b[3]) - max(a[1], b[1]) > 0.5
            )
            assert not overlap, (a, b)


def test_tables_scroll_with_a_sticky_name_and_kernels_toggle(page: Path, tmp_path: Path) -> None:
    """At 1,400 px: the group table scrolls in its box while its name column stays put; the
    65-kernel table shows 15 rows until "show all" is ticked; sorting redoes the ditto marks."""
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile", width=1400)
    try:
        browser.open(page.as_uri())
        sticky = browser.evaluate(
            """(() => {
                 const t = document.querySelector('#tile-0-groups'); const w = t.parentElement;
                 const cell = () => t.tBodies[0].rows[0].cells[0].getBoundingClientRect().left;
                 const before = cell(); const other = t.tBodies[0].rows[0].cells[3];
                 const otherBefore = other.getBoundingClientRect().left;
                 w.scrollLeft = 400;
                 return {wide: w.scrollWidth > w.clientWidth, before: before, after: cell(),
                         moved: otherBefore - other.getBoundingClientRect().left,
                         position: getComputedStyle(t.tBodies[0].rows[0].cells[0]).position};
               })()"""
        )
        visible = """(() => { const t = Array.from(document.querySelectorAll('table[data-top]'))
                         .find(t => t.tBodies[0].rows.length === 65);
                       return Array.from(t.tBodies[0].rows)
                         .filter(r => r.getClientRects().length > 0).length; })()"""
        shown = browser.evaluate(visible)
        browser.evaluate(
            """Array.from(document.querySelectorAll('table[data-top]'))
                 .find(t => t.tBodies[0].rows.length === 65)
                 .parentElement.previousElementSibling.click()"""
        )
        all_shown = browser.evaluate(visible)
        repeats = """(() => { const t = document.querySelector('#gpu-runs');
                       const i = Array.from(t.tHead.rows[0].cells)
                         .findIndex(c => c.textContent === 'target');
                       const shown = Array.from(t.tBodies[0].rows).map(r =>
                         r.cells[i].querySelector('.ditto') ? '″' : r.cells[i].textContent);
                       const full = Array.from(t.tBodies[0].rows)
                         .map(r => r.cells[i].getAttribute('data-full'));
                       return {i: i, repeated: shown.filter((s, k) => k > 0 && s !== '″'
                                 && s === shown[k - 1]).length,
                               dittos: shown.filter(s => s === '″').length,
                               same: full.filter((s, k) => k > 0 && s === full[k - 1]).length};
                     })()"""
        initial = browser.evaluate(repeats)
        browser.evaluate(
            "document.querySelectorAll('#gpu-runs th button')[1].click()"  # by time_us
        )
        sorted_by_time = browser.evaluate(repeats)
        errors = browser.console_errors()
    finally:
        browser.close()

    assert errors == []
    assert sticky["wide"] and sticky["position"] == "sticky"
    assert sticky["moved"] > 100  # the other columns scrolled
    assert abs(sticky["after"] - sticky["before"]) < 1  # the name column did not
    assert (shown, all_shown) == (15, 65)
    for state in (initial, sorted_by_time):
        assert state["i"] >= 0 and state["repeated"] == 0, state
        assert state["dittos"] == state["same"], state  # a mark exactly where a value repeats


@pytest.fixture(scope="module")
def diff_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``diff --format html`` of two small dumps: a kernel removed, one added, one slower,
    one renamed by --normalize, and a name that is markup."""
    from tests.samples import sample, write_dump

    folder = tmp_path_factory.mktemp("diff")
    before = write_dump(
        folder / "before.json",
        [
            sample(0, 0, 100, "gemm_c112_r121", useful=50),
            sample(1, 0, 100, "<b>softmax</b>"),
            sample(0, 100, 40, "gone"),
        ],
    )
    after = write_dump(
        folder / "after.json",
        [
            sample(0, 0, 80, "gemm_c64_r12", useful=50),
            sample(1, 0, 140, "<b>softmax</b>"),
            sample(0, 100, 20, "new"),
        ],
    )
    path = folder / "diff.html"
    args = ["diff", str(before), str(after), "--normalize", r"_c\d+(_r\d+)*$"]
    result = CliRunner().invoke(cli, [*args, "--format", "html", "-o", str(path)])
    assert result.exit_code == 0, result.stderr
    return path


def test_diff_page_in_headless_chromium(diff_page: Path, tmp_path: Path) -> None:
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile")
    try:
        browser.open(diff_page.as_uri())
        charts = browser.evaluate(
            """Array.from(document.querySelectorAll('figure.chart')).map(f => {
                 const r = f.querySelector('svg').getBoundingClientRect();
                 return {id: f.id, width: r.width, height: r.height};
               })"""
        )
        rows = """Array.from(document.querySelectorAll('#diff-table tbody tr'))
                    .map(r => [r.className, r.cells[0].textContent])"""
        initial = browser.evaluate(rows)
        browser.evaluate("document.querySelector('#diff-table th button').click()")
        by_name = browser.evaluate(rows)
        bold = browser.evaluate("document.querySelectorAll('main b').length")
        browser.screenshot(tmp_path / "diff.png")
        errors = browser.console_errors()
        urls = browser.requested_urls()
    finally:
        browser.close()

    assert errors == []
    assert {c["id"] for c in charts} == {"diff-waterfall", "diff-bars"}
    assert all(c["width"] > 50 and c["height"] > 50 for c in charts), charts
    # |Δ phaseCycles|: softmax +40, new +20, gone −40, gemm −20 (100 → 80 after --normalize)
    assert initial == [  # the status mark before the name, one column (issue 26)
        ["changed", "~ <b>softmax</b>"],
        ["removed", "- gone"],
        ["changed", "~ gemm"],
        ["added", "+ new"],
    ]
    assert [name[2:] for _, name in by_name] == ["<b>softmax</b>", "gemm", "gone", "new"]
    assert bold == 0, "a group name must show as text, not markup"
    assert all(u.startswith(("file://", "data:")) for u in urls), urls
    assert (tmp_path / "diff.png").stat().st_size > 10_000


@pytest.fixture(scope="module")
def history_page(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`history --format html` over a store of six runs in which the last two drop."""
    from tests.samples import sample, write_dump

    folder = tmp_path_factory.mktemp("history")
    store = str(folder / "store")
    for index, useful in enumerate((50, 51, 49, 50, 40, 30)):
        samples = [sample(t, 1000 + index, 100, "gemm_f16", useful=useful) for t in range(8)]
        samples += [sample(t, 3000, 80, "softmax", useful=20) for t in range(3)]
        dump = write_dump(folder / f"run{index}.json", samples)
        result = CliRunner().invoke(
            cli, ["store", "add", str(dump), "--store", store, "--label", f"commit=c{index}"]
        )
        assert result.exit_code == 0, result.output
    path = folder / "history.html"
    result = CliRunner().invoke(
        cli, ["history", "--store", store, "--format", "html", "-o", str(path)]
    )
    assert result.exit_code == 0, result.output
    return path


def test_history_page_in_headless_chromium(history_page: Path, tmp_path: Path) -> None:
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile")
    try:
        browser.open(history_page.as_uri())
        charts = browser.evaluate(
            """Array.from(document.querySelectorAll('figure.chart svg')).map(s => {
                 const r = s.getBoundingClientRect(); const cs = getComputedStyle(s);
                 return {width: r.width, height: r.height,
                         visible: cs.visibility === 'visible' && cs.display !== 'none',
                         flags: s.querySelectorAll('circle.flag').length};
               })"""
        )
        column = """Array.from(document.querySelectorAll('#history-flags tbody tr'))
                      .map(r => r.cells[0].getAttribute('data-sort'))"""
        before = browser.evaluate(column)
        browser.evaluate("document.querySelector('#history-flags th button').click()")
        ascending = browser.evaluate(column)
        browser.screenshot(tmp_path / "history.png")
        errors = browser.console_errors()
        urls = browser.requested_urls()
    finally:
        browser.close()

    assert errors == []
    assert len(charts) == 2 * 3  # two groups, a panel per default field
    for chart in charts:
        assert chart["visible"] and chart["width"] >= 250 and chart["height"] >= 50, chart
    # gemm's usefulUtilization and deviceUsefulUtilization flag the two last runs each
    assert sorted(c["flags"] for c in charts) == [0, 0, 0, 0, 2, 2]
    assert len(before) == 4 and ascending == sorted(before)
    assert all(u.startswith(("file://", "data:")) for u in urls), urls


def test_history_axes_and_fail_box_in_headless_chromium(tmp_path: Path) -> None:
    """Issue 26: each sparkline's run ids and dates are laid out apart from each other and
    inside the panel, and a FAIL box looks unlike an info box."""
    from tests.samples import sample, write_dump

    store = str(tmp_path / "store")
    for index, useful in enumerate((50, 51, 49, 50, 40)):
        samples = [sample(t, 1000 + index, 100, "gemm", useful=useful) for t in range(4)]
        dump = write_dump(tmp_path / f"run{index}.json", samples)
        args = ["store", "add", str(dump), "--store", store, "--run", f"nightly-build-{index}"]
        assert CliRunner().invoke(cli, args).exit_code == 0
    page = tmp_path / "history.html"
    args = ["history", "--store", store, "--format", "html", "-o", str(page)]
    args += ["--fail-on", "usefulUtilization of gemm may not drop by more than 2%"]
    assert CliRunner().invoke(cli, args).exit_code == 1
    page.write_text(
        page.read_text(encoding="utf-8").replace(
            "</header>", '<p class="empty">an info box</p></header>', 1
        ),
        encoding="utf-8",
    )
    assert BROWSER is not None
    browser = Browser(BROWSER, tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        labels = browser.evaluate(
            """Array.from(document.querySelectorAll('figure.chart svg')).map(s => {
                 const box = s.getBoundingClientRect();
                 const texts = Array.from(s.querySelectorAll('text.run-axis, text.date-axis'));
                 return {box: [box.left, box.right],
                         rows: ['run-axis', 'date-axis'].map(c => texts
                           .filter(t => t.classList.contains(c))
                           .map(t => { const r = t.getBoundingClientRect();
                                       return [r.left, r.right]; }))};
               })"""
        )
        styles = browser.evaluate(
            """['p.fail', 'p.empty'].map(q => {
                 const cs = getComputedStyle(document.querySelector(q));
                 return [cs.backgroundColor, cs.borderLeftColor]; })"""
        )
    finally:
        browser.close()
    assert len(labels) == 3
    for chart in labels:
        left, right = chart["box"]
        for row in chart["rows"]:
            assert len(row) == 3  # first, middle and last run
            for (_a0, a1), (b0, _) in itertools.pairwise(row):
                assert a1 <= b0, row  # apart
            assert all(left - 0.5 <= x0 and x1 <= right + 0.5 for x0, x1 in row), (chart, row)
    fail, info = styles
    assert fail[0] != info[0] and fail[1] != info[1], styles
