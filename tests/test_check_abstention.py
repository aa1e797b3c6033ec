"""A verdict that a failed capture check undermines is never given: ``findings``, the report's
headline, ``diff --fail-on`` and ``history --fail-on`` abstain and say why, in every format
(docs/reliability.md, "Captures that cannot be trusted")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from tests.samples import sample, write_dump
from tests.test_check import clean_events, clean_samples, write_trace
from tests.test_check import write_dump as write_json_dump
from tileprof.commands.cli import cli

TILE_RULES = {"imbalance", "start-skew", "communication", "exchange-heavy", "sync-wait"}


def invoke(*args: object) -> Result:
    return CliRunner().invoke(cli, [str(a) for a in args])


def overlapping(tmp_path: Path) -> Path:
    samples = clean_samples()
    samples.append({**samples[0], "offset": 50, "duration": 20})
    return write_json_dump(tmp_path / "overlap.json", samples)


def findings(*args: object) -> dict[str, dict[str, str]]:
    """Every rule's outcome by id; a rule that does not apply to the inputs has status
    ``not applicable`` and its reason."""
    result = invoke("findings", *args, "--format", "json")
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    left_out = {f["id"]: {**f, "status": "not applicable"} for f in document["not_applicable"]}
    return {f["id"]: f for f in document["findings"]} | left_out


# ---------------------------------------------------------------- findings


def test_findings_abstain_when_the_dump_fails_a_check(tmp_path: Path) -> None:
    clean = findings(write_json_dump(tmp_path / "clean.json", clean_samples()))
    assert not any("capture check" in f.get("reason", "") for f in clean.values())
    found = findings(overlapping(tmp_path))
    for rule in TILE_RULES | {"low-utilization"}:
        assert found[rule]["status"] == "abstained"
        assert "check overlapping-samples failed (1; first at sample 24)" in found[rule]["reason"]
    # the GPU rules do not apply (no trace), and the dump's check leaves them so
    assert found["host-bound"]["status"] == "not applicable"
    assert "capture check" not in found["host-bound"]["reason"]
    table = invoke("findings", overlapping(tmp_path))
    text = " ".join(table.output.split())
    assert "abstained:" in text and "capture check failed, no verdict" in text


def test_findings_on_a_trace_with_a_truncated_step_abstain_from_host_bound(
    tmp_path: Path,
) -> None:
    events = clean_events()
    clean = findings(write_trace(tmp_path / "clean.json.gz", events))
    assert "capture check" not in clean["host-bound"].get("reason", "")
    for e in events:  # step 1's GPU annotation covers its first kernel only
        if e["name"] == "ProfilerStep#1" and e["cat"] == "gpu_user_annotation":
            e["dur"] = 60
    found = findings(write_trace(tmp_path / "cut.json.gz", events))
    assert found["host-bound"]["status"] == "abstained"
    assert (
        "check step-truncated failed (1; first at ProfilerStep#1" in found["host-bound"]["reason"]
    )
    # no GEMM op: the rule does not apply, and the step's check (not of ops) leaves it so
    assert found["compute-under-used"]["status"] == "not applicable"
    assert "step-truncated" not in found["compute-under-used"]["reason"]


def test_a_checks_file_that_allows_the_defect_lets_the_rules_judge(tmp_path: Path) -> None:
    rules = tmp_path / "checks.toml"
    rules.write_text("[overlapping-samples]\nallowed = 1\n")
    found = findings(overlapping(tmp_path), "--checks", rules)
    assert not any("capture check" in f.get("reason", "") for f in found.values())


# ---------------------------------------------------------------- the report


def test_report_opens_with_the_checks_and_its_headline_abstains(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    result = invoke("report", overlapping(tmp_path), "-o", out)
    assert result.exit_code == 0, result.output
    page = out.read_text()
    checks, found = page.index('<section id="checks">'), page.index('<section id="findings">')
    assert checks < found
    assert "1 of 5 checks failed" in page
    headline = re.findall(r'<span class="label">([^<]+)</span><span class="value">([^<]*)', page)
    values = dict(headline)
    assert values["Device busy"].startswith("abstained: ")
    assert "check overlapping-samples failed" in values["Mean active tiles"]
    assert values["Samples matched / total"] == "25 / 25"
    findings_section = page[found : page.index("</section>", found)]
    assert "capture check failed, no verdict: " in findings_section  # the rules abstain too


def test_report_of_a_clean_dump_keeps_its_headline(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    dump = write_json_dump(tmp_path / "clean.json", clean_samples())
    assert invoke("report", dump, "-o", out).exit_code == 0
    page = out.read_text()
    assert "No check failed (5 checks)." in page and "abstained: " not in page


# ---------------------------------------------------------------- diff --fail-on


@pytest.fixture()
def pair(tmp_path: Path) -> tuple[Path, Path]:
    """Before: 20 gemm samples; after: 16 (20% fewer), each 10% longer per call."""
    before = [sample(t % 4, 100 * (t // 4), 50, "gemm") for t in range(20)]
    after = [sample(t % 4, 100 * (t // 4), 55, "gemm") for t in range(16)]
    return write_dump(tmp_path / "before.json", before), write_dump(tmp_path / "after.json", after)


GATE = ("--fail-on", "phaseCycles of * may not rise by more than 1%")


def test_diff_gate_abstains_when_the_captures_hold_different_numbers_of_samples(
    pair: tuple[Path, Path], tmp_path: Path
) -> None:
    table = invoke("diff", *pair, *GATE)
    assert table.exit_code == 3, table.output
    first = table.output.splitlines()[0]
    assert first.startswith("abstained, no verdict: ") and "check coverage-calls failed" in first
    assert "samples 20 in" in first and "16 in" in first and "(-20.00%; over ±10%)" in first
    assert "broken:" not in table.output  # no verdict either way
    document = json.loads(invoke("diff", *pair, *GATE, "--format", "json").stdout)
    assert document["broken"] == [] and len(document["abstained"]) == 1
    out = tmp_path / "diff.html"
    assert invoke("diff", *pair, *GATE, "--format", "html", "-o", out).exit_code == 3
    assert '<ul class="abstained"><li>abstained, no verdict: ' in out.read_text()


def test_diff_gate_judges_when_coverage_agrees(tmp_path: Path) -> None:
    before = [sample(t % 4, 100 * (t // 4), 50, "gemm") for t in range(20)]
    after = [sample(t % 4, 100 * (t // 4), 55, "gemm") for t in range(20)]
    paths = write_dump(tmp_path / "b.json", before), write_dump(tmp_path / "a.json", after)
    result = invoke("diff", *paths, *GATE)
    assert result.exit_code == 1 and "broken:" in result.output, result.output
    assert "abstained" not in result.output


def test_diff_without_a_gate_never_abstains(pair: tuple[Path, Path]) -> None:
    result = invoke("diff", *pair, "--format", "json")
    assert result.exit_code == 0 and "abstained" not in json.loads(result.stdout)


def test_the_coverage_threshold_is_data(pair: tuple[Path, Path], tmp_path: Path) -> None:
    rules = tmp_path / "checks.toml"
    rules.write_text("[coverage-calls]\nmax_change = 0.25\n")
    result = invoke("diff", *pair, *GATE, "--checks", rules)
    # the gate judges again, at equal samples: phase cycles fell 250 → 220 only because the
    # second capture holds fewer samples; each one took 10% longer, and that breaks the gate
    assert result.exit_code == 1 and "abstained" not in result.output
    assert "(at equal samples: before's phaseCycles scaled from its 20 samples" in result.output


# ---------------------------------------------------------------- history --fail-on


def _store(tmp_path: Path, counts: tuple[int, ...]) -> str:
    uri = str(tmp_path / "store")
    for index, count in enumerate(counts, start=1):
        useful = 40.0 if index == len(counts) else 50.0  # the newest run drops
        samples = [sample(t % 10, 1000 + index + 200 * (t // 10), 100, "gemm", useful=useful)
                   for t in range(count)]  # fmt: skip
        dump = write_dump(tmp_path / f"run{index}.json", samples)
        added = invoke("store", "add", dump, "--store", uri, "--run", f"n{index}")
        assert added.exit_code == 0, added.output
    return uri


HISTORY_GATE = ("--fail-on", "usefulUtilization of gemm may not drop by more than 5%")


def test_history_gate_abstains_when_the_newest_run_covers_less(tmp_path: Path) -> None:
    uri = _store(tmp_path, (20, 20, 20, 20, 10))
    result = invoke("history", "--store", uri, *HISTORY_GATE)
    assert result.exit_code == 3, result.output
    text = " ".join(result.output.split())
    assert "abstained, no verdict: run n5: check coverage-calls failed" in text
    assert "samples 20 in the median of the 4 runs before it, 10 in run n5" in text
    assert "FAIL " not in result.output
    document = json.loads(
        invoke("history", "--store", uri, *HISTORY_GATE, "--format", "json").stdout
    )
    assert document["failures"] == [] and len(document["abstained"]) == 1
    out = tmp_path / "history.html"
    assert (
        invoke("history", "--store", uri, *HISTORY_GATE, "--format", "html", "-o", out).exit_code
        == 3
    )
    assert "<strong>ABSTAINED</strong> abstained, no verdict" in out.read_text()


def test_history_gate_judges_when_coverage_agrees(tmp_path: Path) -> None:
    uri = _store(tmp_path, (20, 20, 20, 20, 20))
    result = invoke("history", "--store", uri, *HISTORY_GATE)
    assert result.exit_code == 1 and "FAIL " in result.output and "abstained" not in result.output
