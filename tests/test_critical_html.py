"""``critical --format html`` (issue 36): a self-contained page per tile epoch or GPU step
with the path's length, its breakdown by class as a bar, what is on the path, the what-if and
the candidates ranked by gain; names from the input escaped."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.views.html import render_critical
from tileprof.views.html.critical_data import gpu_section

ROOT = Path(__file__).resolve().parent.parent
BERT = "fixtures/tracelens/h100_gaunernst_bert-small-uncased__1016001.json.gz"


def _self_contained(page: str) -> None:
    assert page.startswith("<!DOCTYPE html>")
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", page)
    assert "<link" not in page


def test_tile_page_shows_each_epoch_its_bar_what_if_and_ranked_candidates(tmp_path: Path) -> None:
    out = tmp_path / "critical.html"
    runner = CliRunner()
    args = ["critical", "--example", "--format", "html", "-o", str(out), "--what-if", "balance"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    _self_contained(page)
    document = json.loads(runner.invoke(cli, ["critical", "--example", "--format", "json"]).stdout)
    epoch = document["epochs"][0]
    assert f"epoch 1: path {epoch['cycles']:,} cycles" in page
    assert page.count('class="critical-bar"') == len(document["epochs"])
    lead = re.search(r'<p class="lead">(.*?)</p>', page)
    assert lead and f"{epoch['cycles']:,} cycles" in lead.group(1)
    best = document["candidates"][0]["edit"]
    assert f"the largest single-edit gain is {best}" in lead.group(1)
    positions = [page.index(f">{c['edit']}<") for c in document["candidates"][:3]]
    assert positions == sorted(positions)  # largest gain first
    assert "What-if: " in page and "critical tile changed in" in page
    for group in document["groups"][:3]:
        assert group["group"] in page


def test_trace_page_per_step_with_kernels_on_the_path(tmp_path: Path) -> None:
    out = tmp_path / "critical.html"
    args = ["critical", str(ROOT / BERT), "--format", "html", "-o", str(out)]
    args += ["--what-if", "no-launch"]
    result = CliRunner().invoke(cli, args)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    _self_contained(page)
    runner = CliRunner()
    document = json.loads(
        runner.invoke(cli, ["critical", str(ROOT / BERT), "--format", "json"]).stdout
    )
    steps = document["traces"][0]["steps"]
    assert page.count('class="critical-bar"') == len(steps)
    assert page.count("What-if: ") == len(steps)
    for step in steps:
        assert f"step {step['step']}: path" in page
        assert step["candidates"][0]["edit"] in page


def test_names_are_escaped() -> None:
    bad = "<script>alert(1)</script>"
    step = {
        "step": 1,
        "pathNs": 1000,
        "classesNs": {"cpu": 400, "gpu_compute": 600},
        "onPath": [{"side": "gpu", "name": bad, "class": "gpu_compute", "pathNs": 600, "count": 1}],
        "whatIf": {"whatIfNs": 700, "gainNs": 300, "notes": [bad]},
        "candidates": [{"edit": f"scale:{bad}=0.5", "whatIfNs": 700, "gainNs": 300}],
    }
    document = {"edits": [f"scale:{bad}=0.5"], "traces": [{"trace": bad, "steps": [step]}]}
    page = render_critical(gpu_section(document))
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "60.00%" in page  # the GPU compute share of the bar and its table


def test_report_has_a_critical_path_section_per_gpu_step(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = CliRunner().invoke(cli, ["report", str(ROOT / BERT), "-o", str(out)])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    start = page.index('<section id="gpu-critical">')
    section = page[start : page.index("</section>", start)]
    runner = CliRunner()
    document = json.loads(
        runner.invoke(cli, ["critical", str(ROOT / BERT), "--format", "json"]).stdout
    )
    steps = document["traces"][0]["steps"]
    longest = max(steps, key=lambda s: s["pathNs"])
    lead = re.search(r'<p class="lead">(.*?)</p>', section)
    assert lead and f"step {longest['step']})" in lead.group(1)
    assert section.count('class="critical-bar"') == len(steps)
    for step in steps:
        assert f"step {step['step']}: path" in section
        top = step["onPath"][0]["name"]
        assert top[:20] in section
    assert '<a href="#gpu-critical">Critical path</a>' in page
