"""A tile diff whose captures hold different numbers of samples (issue 31): the samples and
the change per sample lead, and the gate judges totals at equal samples.

The expected figures are worked out by hand from the dumps built here.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli


def dump(path: Path, a_samples: int, a_cycles: int) -> Path:
    """Group a: ``a_samples`` samples of ``a_cycles`` on tiles 0..; group b: 10 of 50 cycles;
    each tile runs its samples back to back, 1,000 cycles apart."""
    samples = [sample(i, 1000 * i, a_cycles, "a") for i in range(a_samples)]
    samples += [sample(i, 1000 * i + 500, 50, "b") for i in range(10)]
    return write_dump(path, samples, tileCount=16)


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(cli, list(args))
    assert result.exit_code == code, result.output
    return result.stdout


def test_a_shorter_capture_is_not_a_speed_up(tmp_path: Path) -> None:
    before = dump(tmp_path / "before.json", 10, 100)
    after = dump(tmp_path / "after.json", 9, 100)  # one sample of a fewer, each as long
    lines = run("diff", str(before), str(after)).splitlines()
    assert lines[0].startswith("matched samples 20 → 19")
    assert lines[0].endswith(
        "1 group holds a different number of samples: compare cycles per sample, not total cycles"
    )
    # work cycles at equal samples: a 1,000 × 9/10 + b 500 = 1,400 → 900 + 500 = 1,400
    assert lines[1].startswith("per sample      +0.00% at equal samples")
    document = json.loads(run("diff", str(before), str(after), "--format", "json"))
    header = document["header"]
    assert header["samplesDiffer"] is True and header["groupsWithOtherSamples"] == 1
    assert header["perSample"]["before"] == 1400.0 and header["perSample"]["after"] == 1400.0
    # the gate judges phaseCycles at equal samples: -10% raw, 0% per sample
    gate = "phaseCycles of a may not drop by more than 5%"
    run("diff", str(before), str(after), "--fail-on", gate)


def test_a_slower_sample_is_still_caught(tmp_path: Path) -> None:
    before = dump(tmp_path / "before.json", 10, 100)
    after = dump(tmp_path / "after.json", 9, 120)  # fewer samples, each 20% longer
    lines = run("diff", str(before), str(after)).splitlines()
    # a: 900 at equal samples → 1,080; b: 500 → 500: 1,400 → 1,580, +12.86%
    assert lines[1].startswith("per sample      +12.86% at equal samples")
    out = run(
        "diff",
        str(before),
        str(after),
        "--fail-on",
        "phaseCycles of a may not rise by more than 5%",
        code=1,
    )
    assert out.startswith("broken: phaseCycles of a: ")
    assert "(at equal samples: before's phaseCycles scaled from its 10 samples to the after " in out


def test_equal_samples_keep_the_plain_headline_and_the_page_says_it(tmp_path: Path) -> None:
    before = dump(tmp_path / "before.json", 10, 100)
    lines = run("diff", str(before), str(before)).splitlines()
    assert lines[0].startswith("phaseCycles     net 0")
    assert lines[1].startswith("matched span") and lines[2].startswith("matched samples")
    after = dump(tmp_path / "after.json", 9, 100)
    page = tmp_path / "diff.html"
    run("diff", str(before), str(after), "--format", "html", "-o", str(page))
    html = page.read_text()
    assert "Matched samples (differ: compare cycles per sample, not total cycles)" in html
    assert "Work cycles per sample, at equal samples" in html
    assert "matchedSampleCount; 1 group holds a different number of samples" in html


def test_a_tile_diffs_bars_are_useful_utilization_in_percent(tmp_path: Path) -> None:
    """gemm's useful utilization 25% → 50%, copy's 10% on both sides: the bars chart is titled
    for it, its axis in percent up to 50 (both sides scaled), each group labelled."""
    before = write_dump(
        tmp_path / "b.json",
        [sample(0, 0, 100, "gemm", useful=25), sample(1, 0, 100, "copy", useful=10)],
    )
    after = write_dump(
        tmp_path / "a.json",
        [sample(0, 0, 100, "gemm", useful=50), sample(1, 0, 100, "copy", useful=10)],
    )
    page = tmp_path / "d.html"
    run("diff", str(before), str(after), "--format", "html", "-o", str(page))
    html = page.read_text()
    start = html.index('<figure class="chart" id="diff-bars">')
    chart = html[start : html.index("</figure>", start)]
    assert "<strong>Useful utilization, before and after</strong>" in chart
    labels = re.findall(r"<!-- ([^>]*) -->", chart)  # matplotlib names each text it draws
    assert labels == [
        "0",
        "10",
        "20",
        "30",
        "40",
        "50",
        "usefulUtilization (%)",
        "copy",
        "gemm",
        "before",
        "after",
    ]
