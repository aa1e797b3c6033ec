"""``history --format html`` reads well (issue 26): every sparkline has a value axis, and a run
axis naming runs and the dates they were added; a FAIL box is styled apart from an info box."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli

UTILIZATION = (0.50, 0.51, 0.49, 0.50, 0.40)


@pytest.fixture(scope="module")
def page(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("history-page")
    store = str(folder / "store")
    for index, utilization in enumerate(UTILIZATION, start=1):
        samples = [sample(t, 1000 + index, 100, "gemm", useful=utilization * 100) for t in range(4)]
        dump = write_dump(folder / f"run{index}.json", samples)
        args = ["store", "add", str(dump), "--store", store, "--run", f"nightly-{index}"]
        assert CliRunner().invoke(cli, args).exit_code == 0
    out = folder / "h.html"
    args = ["history", "--store", store, "--format", "html", "-o", str(out)]
    args += ["--fail-on", "usefulUtilization of gemm may not drop by more than 2%"]
    result = CliRunner().invoke(cli, args, env={"SOURCE_DATE_EPOCH": "0"})
    assert result.exit_code == 1, result.stderr  # the newest run broke the threshold
    return Path(out).read_text(encoding="utf-8")


def _panels(page: str) -> list[str]:
    return re.findall(r"<svg .*?</svg>", page, flags=re.S)


def test_every_sparkline_has_axes_run_ids_and_dates(page: str) -> None:
    panels = _panels(page)
    assert len(panels) == 3  # phaseCycles, usefulUtilization, deviceUsefulUtilization of gemm
    for svg in panels:
        assert svg.count('class="axis"') == 2  # the value axis and the run axis
        assert len(re.findall(r'class="value-axis"[^>]*>[^<]+<', svg)) == 2  # its low and high
        runs = re.findall(r'class="run-axis"[^>]*>([^<]+)<', svg)
        assert runs == ["nightly-1", "nightly-3", "nightly-5"]  # first, middle, last
        dates = re.findall(r'class="date-axis"[^>]*>([^<]+)<', svg)
        assert len(dates) == 3 and all(re.fullmatch(r"\d{4}-\d\d-\d\d", d) for d in dates)
    useful = next(svg for svg in panels if "usefulUtilization" in svg and "device" not in svg)
    assert re.findall(r'class="value-axis"[^>]*>([^<]+)<', useful)[1] == "40.00%"  # the lowest


def test_a_fail_box_is_not_an_info_box(page: str) -> None:
    fails = re.findall(r'<p class="([^"]+)"[^>]*><strong>FAIL</strong>', page)
    assert fails == ["fail"]
    css = re.search(r"\.fail \{([^}]*)\}", page)
    info = re.search(r"\.empty \{([^}]*)\}", page)
    assert css is not None and info is not None and css.group(1) != info.group(1)
    assert "#c62828" in css.group(1)  # red, where the info box is amber
