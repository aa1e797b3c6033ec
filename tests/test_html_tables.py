"""The report's tables as a reader meets them (issue 11, "The first hour"): the figures people
come for first, wide tables scrolling in their own box with a sticky first column, no cell text
repeated down a column, kernel tables cut to the top kernels with an "all" toggle and kernel
names shortened around their functor, and one number policy for terminal, HTML and charts.

The HTML is checked through a parsed tree (``html.parser``), not by string search.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.report_samples import generated_profile, run_inputs
from tileprof.analyses.filters import Filters
from tileprof.core import numbers
from tileprof.core.text import kernel_display_name
from tileprof.model.gather import read_inputs
from tileprof.views import summary_table
from tileprof.views.html import build_report, render
from tileprof.views.html.data import TOP_KERNELS, gpu_section, tile_section

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
H200 = FIXTURES / "traces" / "h200_train_steps.json.gz"
SEEDS = sorted((FIXTURES / "seeds").glob("00[03]_*.txt"))
CSS = (
    Path(__file__).resolve().parent.parent
    / "tileprof"
    / "views"
    / "html"
    / "templates"
    / "report.css"
)

# ---------------------------------------------------------------- a small parsed DOM

VOID = {"meta", "input", "br", "img", "hr", "link", "col"}


@dataclass
class Node:
    tag: str
    attrs: dict[str, str]
    parent: Node | None = None
    children: list[Any] = field(default_factory=list)  # Node or str

    def classes(self) -> set[str]:
        return set(self.attrs.get("class", "").split())

    def text(self, *, visible: bool = False) -> str:
        """All text below; ``visible`` leaves out screen-reader-only spans."""
        out = []
        for child in self.children:
            if isinstance(child, str):
                out.append(child)
            elif not (visible and "sr-only" in child.classes()):
                out.append(child.text(visible=visible))
        return "".join(out)

    def find_all(self, tag: str) -> list[Node]:
        found = []
        for child in self.children:
            if isinstance(child, Node):
                if child.tag == tag:
                    found.append(child)
                found.extend(child.find_all(tag))
        return found

    def elements(self) -> list[Node]:
        return [c for c in self.children if isinstance(c, Node)]


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = Node("#root", {})
        self.current = self.root

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        node = Node(tag, {k: v or "" for k, v in attrs}, self.current)
        self.current.children.append(node)
        if tag not in VOID:
            self.current = node

    def handle_endtag(self, tag: str) -> None:
        node: Node | None = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data: str) -> None:
        self.current.children.append(data)


def parse(html: str) -> Node:
    builder = _Builder()
    builder.feed(html)
    return builder.root


def table(root: Node, id: str) -> Node:
    found = [t for t in root.find_all("table") if t.attrs.get("id") == id]
    assert len(found) == 1, id
    return found[0]


def labels(t: Node) -> list[str]:
    return [th.text().strip() for th in t.find_all("thead")[0].find_all("th")]


def body_rows(t: Node) -> list[list[Node]]:
    return [tr.find_all("td") for tr in t.find_all("tbody")[0].find_all("tr")]


def column(t: Node, label: str) -> list[Node]:
    index = labels(t).index(label)
    return [row[index] for row in body_rows(t)]


# ---------------------------------------------------------------- pages


@pytest.fixture(scope="module")
def page() -> Node:
    """A report (tables only) of a generated dump, the seed GPU files and the H200 trace."""
    runs = read_inputs([*SEEDS, H200], Filters()).runs
    report = build_report([generated_profile(samples=3_000, tiles=64)], runs, charts=False)
    return parse(render(report))


def test_group_table_puts_the_figures_people_came_for_first(page: Node) -> None:
    assert labels(table(page, "tile-0-groups"))[:8] == [
        "name",
        "phaseCycles",
        "phaseMs",
        "usefulUtilization",
        "deviceUsefulUtilization",
        "p50Cycles",
        "p95Cycles",
        "averageActiveTiles",
    ]
    assert len(labels(table(page, "tile-0-groups"))) == 19  # nothing dropped


def test_run_table_puts_name_time_and_speedup_first(page: Node) -> None:
    runs = table(page, "gpu-runs")
    assert labels(runs)[:3] == ["run", "time_us", "speedup"]
    names = [c.text() for c in column(runs, "run")]
    assert "tiny-online · trainkernel" in names and "gemm_8192 · strict_fp32" in names


def test_every_sortable_table_scrolls_in_its_box_with_a_sticky_first_column(
    page: Node,
) -> None:
    tables = [t for t in page.find_all("table") if "sortable" in t.classes()]
    assert len(tables) >= 6
    for t in tables:
        assert "sticky-first" in t.classes(), t.attrs
        assert t.parent is not None and "table-wrap" in t.parent.classes(), t.attrs
    css = CSS.read_text(encoding="utf-8")
    assert re.search(r"\.table-wrap\s*\{[^}]*overflow-x:\s*auto", css)
    rule = re.search(r"table\.sticky-first td:first-child\s*\{([^}]*)\}", css)
    assert rule is not None
    for declaration in ("position: sticky", "left: 0", "background: #fff"):
        assert declaration in rule.group(1)


def _visible_repeats(cells: list[Node]) -> list[str]:
    shown = [c.text(visible=True).strip() for c in cells]
    # "—" is no value (null), not a repeated one: the op rows of a trace state no workload
    return [a for a, b in itertools.pairwise(shown) if a not in ("", "″", "—") and a == b]


def test_run_table_does_not_repeat_a_value_down_its_dittoed_columns(page: Node) -> None:
    runs = table(page, "gpu-runs")
    for label in ("target", "workload", "per"):
        cells = column(runs, label)
        full = [c.attrs["data-full"] for c in cells]
        assert any(a == b for a, b in itertools.pairwise(full)), label  # repeats exist
        assert _visible_repeats(cells) == [], label
        for cell, value in zip(cells, full, strict=True):
            assert cell.attrs["title"] == value  # hover and screen readers get the value
            assert cell.text(visible=False).replace("″", "") == value
            if value != "—":
                assert cell.attrs["data-sort"] == value.lower()  # sorting uses the full value
    # e.g. the second A100 run of seed 000 shows a ditto mark for its target
    marks = [c for c in column(runs, "target") if c.find_all("span")]
    assert marks and all(
        c.elements()[0].classes() == {"ditto"} and c.elements()[0].attrs["aria-hidden"] == "true"
        for c in marks
    )


def test_a_trace_kernel_table_shows_the_top_kernels_with_an_all_toggle(page: Node) -> None:
    kernels = [t for t in page.find_all("table") if t.attrs.get("id", "").startswith("gpu-k")]
    (h200,) = [t for t in kernels if len(body_rows(t)) == 65]
    assert h200.attrs["data-top"] == str(TOP_KERNELS) == "15"
    rows = h200.find_all("tbody")[0].find_all("tr")
    assert [("more" in r.classes()) for r in rows] == [False] * 15 + [True] * 50
    totals = [float(c.attrs["data-sort"]) for c in column(h200, "total_us")]
    assert totals == sorted(totals, reverse=True)  # the shown 15 are the largest by total
    # the toggle: a checkbox, its label, then the table's box (the CSS sibling rule needs it)
    wrap = h200.parent
    assert wrap is not None and wrap.parent is not None
    siblings = wrap.parent.elements()
    at = siblings.index(wrap)
    checkbox, label = siblings[at - 2], siblings[at - 1]
    assert checkbox.tag == "input" and checkbox.attrs["type"] == "checkbox"
    assert label.tag == "label" and label.attrs["for"] == checkbox.attrs["id"]
    assert "show all 65" in label.text()
    css = CSS.read_text(encoding="utf-8")
    assert re.search(r"table tr\.more\s*\{\s*display:\s*none", css)
    assert "input.show-all:checked + label + .table-wrap tr.more { display: table-row; }" in css
    # the run table no longer repeats the 65 kernels
    runs = [c.text() for c in column(table(page, "gpu-runs"), "run")]
    assert not any("elementwise_kernel" in r for r in runs)


def test_kernel_names_show_shortened_with_the_full_name_in_the_title(page: Node) -> None:
    kernels = [t for t in page.find_all("table") if t.attrs.get("id", "").startswith("gpu-k")]
    (h200,) = [t for t in kernels if len(body_rows(t)) == 65]
    names = set(h200_names())
    for cell in column(h200, "kernel"):
        assert len(cell.text()) <= 60
        assert cell.attrs["title"] in names  # the full name, as the trace spells it
        assert cell.attrs["data-sort"] == cell.attrs["title"].lower()
    shown = {c.text(): c.attrs["title"] for c in column(h200, "kernel")}
    title = shown["vectorized_elementwise_kernel<…CUDAFunctor_add<float>…>"]
    assert title.startswith("void at::native::vectorized_elementwise_kernel<4, at::native::CUDA")


# ---------------------------------------------------------------- the kernel-name shortener

ISSUE_EXAMPLE = (
    "void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<"
    "at::native::CUDAFunctor_add<float>>(at::TensorIteratorBase&, "
    "at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1}>(int, "
    "at::native::gpu_kernel_impl<at::native::CUDAFunctor_add<float>>("
    "at::TensorIteratorBase&, at::native::CUDAFunctor_add<float> const&)::{lambda(int)#1})"
)


def h200_names() -> list[str]:
    lines = (FIXTURES / "traces" / "h200_train_steps.kernels.txt").read_text(encoding="utf-8")
    return [line.split("\t", 1)[1] for line in lines.splitlines()]


@pytest.mark.parametrize(
    ("start", "expected"),
    [
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add",
            "vectorized_elementwise_kernel<…CUDAFunctor_add<float>…>",
        ),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::AUnaryFunctor",
            "vectorized_elementwise_kernel<…MulFunctor<float>…>",
        ),
        (
            "void at::native::unrolled_elementwise_kernel<at::native::direct_copy",
            "unrolled_elementwise_kernel<…direct_copy_kernel_cuda…>",
        ),
        (
            "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::Mean",
            "reduce_kernel<…MeanOps…>",
        ),
        (
            "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<",
            "multi_tensor_apply_kernel<…BinaryOpListAlphaFunctor…>",
        ),
        (
            "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float",
            "vectorized_elementwise_kernel<…threshold_kernel_impl…>",
        ),
        (
            "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d",
            "nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>",
        ),
        (
            "void cutlass::Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>",
            "Kernel2<cutlass_80_simt_sgemm_64x64_8x5_tn_align1>",
        ),
        ("Memset (Device)", "Memset (Device)"),
        (
            "sm80_xmma_gemm_f32f32_f32f32_f32_tn_n_tilesize32x32x8_stage3_warpsize1x2x1_ffma_",
            "sm80_xmma_gemm_f32f32_f32f32_f…nc4_execute_kernel__5x_cublas",
        ),
    ],
)
def test_h200_kernel_names_shorten_around_their_functor(start: str, expected: str) -> None:
    name = next(n for n in h200_names() if n.startswith(start))
    assert kernel_display_name(name) == expected


def test_the_issue_example_keeps_its_functor() -> None:
    assert kernel_display_name(ISSUE_EXAMPLE) == "elementwise_kernel<…CUDAFunctor_add<float>…>"


def test_every_h200_name_fits_the_limit() -> None:
    names = h200_names()
    assert len(names) == 65
    for name in names:
        assert 0 < len(kernel_display_name(name)) <= 60
        assert len(kernel_display_name(name, 30)) <= 30


IDENT = st.from_regex(r"[A-Za-z][A-Za-z0-9_]{0,14}", fullmatch=True)


@given(
    kernel=IDENT,
    functor=IDENT,
    namespace=st.lists(IDENT, max_size=3),
    arguments=st.lists(st.sampled_from(["4", "float", "std::array<char*, 3ul>", "true"])),
    limit=st.integers(min_value=40, max_value=200),
    parameters=st.text(max_size=80),
)
def test_shortened_names_fit_and_keep_the_functor(
    kernel: str,
    functor: str,
    namespace: list[str],
    arguments: list[str],
    limit: int,
    parameters: str,
) -> None:
    prefix = "".join(f"{n}::" for n in namespace)
    name = (
        f"void {prefix}{kernel}<{', '.join([*arguments, f'{prefix}{functor}Functor<float>'])}>"
        f"({parameters})"
    )
    shown = kernel_display_name(name, limit)
    assert len(shown) <= limit
    assert f"{functor}Functor" in shown


@given(st.text(max_size=300), st.integers(min_value=8, max_value=120))
def test_any_name_fits_the_limit(name: str, limit: int) -> None:
    assert len(kernel_display_name(name, limit)) <= limit


# ---------------------------------------------------------------- one number policy


def test_the_policy_by_hand() -> None:
    assert numbers.number(1_500_000) == "1,500,000"
    assert numbers.number(1_500_000.0) == "1,500,000"
    assert numbers.number(1.42857) == "1.429"
    assert numbers.number(0.0123456) == "0.01235"
    assert numbers.number(1234.5678) == "1,235"
    assert numbers.number(None) == "—"
    assert numbers.percent(0.123456) == "12.35%"
    assert numbers.percent(-0.05, signed=True) == "-5.00%"
    assert numbers.tick(2_500_000.0) == "2,500,000"
    assert numbers.tick(13.4) == "13.4"
    # 1.5 GHz: 1,500,000 cycles are 1,000 µs
    assert numbers.cycle_tick(1.5e9)(1_500_000.0, None) == "1,500,000\n(1,000 µs)"
    assert numbers.cycle_tick(1.5e9)(100_000.0, None) == "100,000\n(66.67 µs)"


def test_terminal_and_html_print_a_group_figure_the_same_way() -> None:
    profile = generated_profile(samples=3_000, tiles=64)
    summary = profile.summary(None, samples=0)
    section = tile_section(profile)
    terminal = summary_table.render(summary, "device", width=400)
    checked = 0
    for index, row in enumerate(summary.groups.iter_rows(named=True)):
        for _, key, fmt in summary_table.COLUMNS:
            html = section.groups.column(key)[index].text
            assert fmt(row[key]) == html, (key, row[key])
            assert html in terminal
            checked += 1
    assert checked >= 12 * 3
    # the non-whole figures follow the policy's 4 significant figures in both
    ms = section.groups.column("phaseMs")[0]
    assert ms.text == numbers.number(float(ms.title))


def test_no_space_before_a_percent_sign_on_the_page(page: Node) -> None:
    text = page.text()
    assert re.findall(r"\d %", text) == []
    assert re.search(r"\d\.\d\d%", text)


# ---------------------------------------------------------------- charts


def _ticks(axis: Any) -> list[str]:
    return [t.get_text() for t in axis.get_ticklabels() if t.get_text()]


def test_tile_charts_in_cycles_also_show_microseconds(figures: dict[str, Any]) -> None:
    from tileprof.views.html.charts import with_tile_charts

    profile = generated_profile(samples=3_000, tiles=64)
    with_tile_charts(tile_section(profile))
    clock = profile.clock_hz
    for chart in ("occupancy", "active", "phase"):
        axes = figures[f"tile-0-{chart}"].axes[0]
        ticks = _ticks(axes.xaxis)
        assert len(ticks) >= 3, chart
        for value, label in zip(axes.get_xticks(), axes.xaxis.get_ticklabels(), strict=False):
            text = label.get_text()
            if not text:
                continue
            cycles, us = text.split("\n")
            assert cycles == f"{value:,.0f}" if value >= 1000 else cycles == numbers.tick(value)
            assert us == f"({numbers.tick(numbers.number_value(value * 1e6 / clock))} µs)"
        assert any("," in t for t in ticks), (chart, ticks)  # thousands separators
        assert "µs" in axes.get_xlabel()


def test_gemm_chart_draws_time_us_in_the_tables_unit(figures: dict[str, Any]) -> None:
    from tileprof.views.html.charts import gemm_chart

    gpu = gpu_section(run_inputs())
    assert gpu is not None and gpu.gemm is not None and gpu.gemm.plot is not None
    gemm_chart(gpu.gemm.plot.frame)
    left = figures["gpu-gemm-chart"].axes[0]
    assert left.get_xlabel() == "µs per run (time_us)"
    widths = [bar.get_width() for bar in left.patches]
    table = [c.sort for c in gpu.gemm.table.column("time_us")]
    assert widths == pytest.approx(table)  # the bars are the table's figures, same unit
    for label in _ticks(left.xaxis):
        assert re.fullmatch(r"-?\d{1,3}(,\d{3})*(\.\d+)?", label), label


def test_report_charts_use_thousands_separators(figures: dict[str, Any]) -> None:
    from tileprof.views.html.charts import with_tile_charts

    with_tile_charts(tile_section(generated_profile(samples=3_000, tiles=2_000)))
    balance = figures["tile-0-balance"].axes[0]
    ticks = _ticks(balance.xaxis)
    assert "1,000" in ticks or "2,000" in ticks, ticks  # tile index axis up to 2,000
    assert not any("e+" in t or "×" in t for t in ticks)


def test_run_names_skip_nulls() -> None:
    from tileprof.views.html.data import run_names

    frame = pl.DataFrame(
        {
            "workload": ["w", None, None],
            "implementation": ["i", None, None],
            "kernel": [None, "void a::k<4, a::XFunctor<float>>(int)", None],
        }
    )
    assert frame.select(run_names()).to_series().to_list() == [
        "w · i",
        "k<4, a::XFunctor<float>>",
        None,
    ]


# ---------------------------------------------------------------- the diff and history pages


def test_diff_and_history_tables_scroll_with_a_sticky_first_column(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from tests.samples import sample, write_dump
    from tileprof.commands.cli import cli

    before = write_dump(tmp_path / "b.json", [sample(0, 0, 100, "gemm", useful=50)])
    after = write_dump(tmp_path / "a.json", [sample(0, 0, 80, "gemm", useful=50)])
    out = tmp_path / "diff.html"
    args = ["diff", str(before), str(after), "--format", "html", "-o", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    diff = parse(out.read_text(encoding="utf-8"))
    t = table(diff, "diff-table")
    assert "sticky-first" in t.classes()
    assert t.parent is not None and "table-wrap" in t.parent.classes()
    assert re.findall(r"\d %", diff.text()) == []  # "-20.00%", not "-20.00 %"
    assert "-20.00%" in diff.text()

    store = str(tmp_path / "store")
    for index, useful in enumerate((50, 51, 49, 50, 40, 30)):  # the last two drop
        dump = write_dump(
            tmp_path / f"r{index}.json",
            [sample(t, 1000 + index, 100, "gemm_f16", useful=useful) for t in range(8)],
        )
        added = ["store", "add", str(dump), "--store", store, "--label", "branch=main"]
        assert CliRunner().invoke(cli, added).exit_code == 0
    out = tmp_path / "history.html"
    args = ["history", "--store", store, "--format", "html", "-o", str(out)]
    assert CliRunner().invoke(cli, args).exit_code == 0
    history = parse(out.read_text(encoding="utf-8"))
    flags = table(history, "history-flags")
    assert "sticky-first" in flags.classes()
    assert flags.parent is not None and "table-wrap" in flags.parent.classes()
    cells = column(flags, "labels")
    assert len(cells) == 4  # two runs, each flagged on two fields
    assert {c.attrs["data-full"] for c in cells} == {"branch=main"}
    assert _visible_repeats(cells) == []
