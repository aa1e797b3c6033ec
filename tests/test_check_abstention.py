"""A verdict that a failed capture check undermines is never given: ``findings``, the report's
headline, ``diff --fail-on`` and ``history --fail-on`` abstain and say why, in every format
(docs/reliability.md, "Captures that cannot be trusted")."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest
from click.testing import CliRunner, Result

from tests.samples import sample, write_dump
from tests.test_check import clean_events, clean_samples, write_trace
from tests.test_check import write_dump as write_json_dump
from tileprof.analyses import findings as F
from tileprof.analyses.diff import Diff, Side
from tileprof.analyses.integrity import (
    Coverage,
    abstained_findings,
    band_coverage,
    check_frame,
    coverage_checks,
    diff_coverage,
    load_checks,
)
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


def test_a_dump_that_fails_a_check_is_left_out_and_the_others_are_judged(tmp_path: Path) -> None:
    # Before, one failed input silenced every rule of its kind for every input; now the
    # rules judge the clean dump alone (the same values as without the bad one) and name it.
    clean = write_json_dump(tmp_path / "clean.json", clean_samples())
    alone = findings(clean)
    both = findings(overlapping(tmp_path), clean)
    for rule in TILE_RULES | {"low-utilization"}:
        assert alone[rule]["status"] in ("fired", "clear"), rule
        assert both[rule]["status"] == alone[rule]["status"], rule
        assert both[rule]["values"] == alone[rule]["values"], rule
        text = both[rule].get("message") or both[rule]["reason"]
        assert text == (alone[rule].get("message") or alone[rule]["reason"]) + (
            "; left out by a failed capture check: "
            f"{tmp_path / 'overlap.json'}: check overlapping-samples failed (1; first at "
            "sample 24): 1 samples start before an earlier sample on the same tile ends"
        ), rule


def test_a_trace_that_fails_a_check_leaves_the_other_traces_rules_standing() -> None:
    # The TraceLens Qwen trace fails kernel-without-launch (509 kernels without their launch
    # call); beside it, the nsys export's exposed copies (97% of its time) still fire, over
    # the export alone, and name the trace they left out.
    export, qwen = (
        "fixtures/real/h100_2gpu_1s.sqlite",
        "fixtures/tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    )
    alone, both = findings(export), findings(qwen, export)
    for rule in ("exposed-copies", "critical-gain"):
        assert alone[rule]["status"] == both[rule]["status"] == "fired", rule
        assert (
            both[rule]["values"] == alone[rule]["values"]
            and both[rule]["row"] == alone[rule]["row"]
        )
        assert both[rule]["message"] == alone[rule]["message"] + (
            f"; left out by a failed capture check: {qwen}: check kernel-without-launch failed "
            "(509; first at $.traceEvents[10899]): 509 of 1,707 GPU events have no runtime "
            "call of their correlation"
        )
    # the op rows are the trace's alone: with it left out, no input of the kind is left
    assert both["compute-under-used"]["status"] == "abstained"
    assert both["compute-under-used"]["reason"].startswith(
        f"capture check failed, no verdict: {qwen}: check kernel-without-launch failed"
    )


def test_a_rule_names_only_the_failed_inputs_it_would_have_read() -> None:
    """The Qwen trace is left out of the breakdown; the rules of Tenstorrent chips never read
    a GPU's breakdown rows, so the CLIP report's host-gaps reads as alone, naming no trace."""
    chip, qwen = (
        "fixtures/real/tt_wh_clip_encoder_400.csv",
        "fixtures/tracelens/h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz",
    )
    alone, both = findings(chip), findings(qwen, chip)
    for rule in ("host-gaps", "dispatch-bound"):
        assert both[rule]["status"] == alone[rule]["status"], rule
        assert both[rule].get("message") == alone[rule].get("message"), rule
    assert "left out" not in json.dumps(both["host-gaps"])
    assert both["host-bound"]["status"] == "abstained"  # the GPU rules: Qwen was their input


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


def test_an_abstained_finding_names_every_failed_check_and_keeps_its_rows() -> None:
    def check(name: str, status: str, places: list[str]) -> dict[str, object]:
        row = {"input": "t.json", "check": name, "status": status, "count": 2, "places": places}
        return row | {"detail": f"{name} detail", "undermines": ["breakdown"]}

    checks = check_frame(
        [
            check("step-missing", "warn", ["step 2", "step 3"]),
            check("unnamed-device", "info", ["device 1"]),  # info: nothing abstains
            check("step-truncated", "warn", []),
        ]
    )
    fired = F.Finding(F.HOST_BOUND, F.FIRED, "host-bound fired", rows=3)
    (out,) = abstained_findings([fired], checks)
    assert (out.rule, out.status, out.rows) == (F.HOST_BOUND, F.ABSTAINED, 3)
    assert out.text == (
        "capture check failed, no verdict: "
        "t.json: check step-missing failed (2; first at step 2): step-missing detail; "
        "t.json: check step-truncated failed (2): step-truncated detail"
    )


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


def _supersteps(page: str) -> str:
    start = page.index('<section id="tile-0-supersteps">')
    return page[start : page.index("</section>", start)]


def test_report_of_a_clean_dump_keeps_its_headline(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    dump = write_json_dump(tmp_path / "clean.json", clean_samples())
    assert invoke("report", dump, "-o", out).exit_code == 0
    page = out.read_text()
    assert "No check failed (5 checks)." in page and "abstained: " not in page
    assert "Abstained: " not in _supersteps(page)


def test_report_supersteps_abstain_and_give_no_ranked_edits(tmp_path: Path) -> None:
    """Overlapping samples undermine the supersteps and the ranked edits: the section's lead
    says so with the check, and the candidates' table is not shown (a clean dump keeps it)."""
    out = tmp_path / "report.html"
    assert invoke("report", overlapping(tmp_path), "-o", out).exit_code == 0
    section = _supersteps(out.read_text())
    lead = re.search(r'<p class="lead">([^<]*)</p>', section)
    assert lead is not None
    assert lead.group(1).startswith("Abstained: ")
    assert "check overlapping-samples failed" in lead.group(1)
    assert lead.group(1).endswith("the ranked edits are not given.")
    assert "Each edit re-timed alone" not in section
    clean = tmp_path / "clean.html"
    dump = write_json_dump(tmp_path / "clean.json", clean_samples())
    assert invoke("report", dump, "-o", clean).exit_code == 0
    assert "Each edit re-timed alone" in _supersteps(clean.read_text())


def _section(page: str) -> str:
    """The capture-check section's HTML."""
    start = page.index('<section id="checks">')
    return page[start : page.index("</section>", start)]


def _section_text(page: str) -> str:
    """The capture-check section's words, tags removed."""
    return re.sub(r"\s+", " ", re.sub("<[^>]+>", " ", _section(page)))


def test_report_names_the_inputs_no_check_read(tmp_path: Path) -> None:
    """A clean dump beside a run table: "all passed" covers the checked input only, and the
    run table is named as not checked, with its kind (as ``check`` does)."""
    out = tmp_path / "report.html"
    dump = write_json_dump(tmp_path / "clean.json", clean_samples())
    table = tmp_path / "runs.csv"
    table.write_text("target,workload,kernel,time_us\nNVIDIA H100 80GB HBM3 SXM,l3,k,12.5\n")
    assert invoke("report", dump, table, "-o", out).exit_code == 0
    text = _section_text(out.read_text())
    assert (
        "All 5 capture checks passed: every checked input supports its figures; 1 input not "
        "checked (tileprof has no capture checks for their kind)."
    ) in text
    assert f"Not checked (tileprof has no capture checks for their kind): {table} (run table)." in (
        text
    )
    assert "every input supports" not in text


def test_a_report_of_unchecked_inputs_only_still_says_so(tmp_path: Path) -> None:
    """No input of a checked kind: the section is there, says so, and draws no empty table."""
    out = tmp_path / "report.html"
    table = tmp_path / "runs.csv"
    table.write_text("target,workload,kernel,time_us\nNVIDIA H100 80GB HBM3 SXM,l3,k,12.5\n")
    assert invoke("report", table, "-o", out).exit_code == 0
    page = out.read_text()
    assert '<a href="#checks">' in page
    text = _section_text(page)
    assert "No input of a kind tileprof checks; 1 input not checked" in text
    assert "No check failed" not in text and "<table" not in _section(page)


def test_a_report_of_checked_inputs_only_says_every_input(tmp_path: Path) -> None:
    out = tmp_path / "report.html"
    dump = write_json_dump(tmp_path / "clean.json", clean_samples())
    assert invoke("report", dump, "-o", out).exit_code == 0
    text = _section_text(out.read_text())
    assert "All 5 capture checks passed: every input supports its figures." in text
    assert "Not checked" not in text


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


# ---------------------------------------------------------------- the coverage check by hand


def _coverage(frame: pl.DataFrame) -> tuple[object, ...]:
    (row,) = frame.rows(named=True)
    return row["input"], row["status"], row["count"], row["places"], row["detail"]


def test_coverage_of_two_captures_by_hand() -> None:
    """max_change 10%: 1 call then 2 is +100%; 1,000,000 then 1,050,000.5 is +5%; a first
    capture of no calls or a count absent on either side is not compared."""
    rules = load_checks()
    assert _coverage(coverage_checks(Coverage("a", 1), Coverage("b", 2), rules, "a → b")) == (
        "a → b",
        "warn",
        1,
        ["a: 1", "b: 2"],
        "calls 1 in a, 2 in b (+100.00%; over ±10%): the captures cover different work",
    )
    within = coverage_checks(Coverage("a", 1e6), Coverage("b", 1_050_000.5), rules, "s")
    assert _coverage(within) == ("s", "ok", 0, [], "calls 1,000,000 in a, 1.05e+06 in b")
    for before, after, detail in [
        (0, 5, "calls 0 in a, 5 in b (not compared)"),
        (None, 5, "calls — in a, 5 in b (not compared)"),
        (5, None, "calls 5 in a, — in b (not compared)"),
    ]:
        frame = coverage_checks(Coverage("a", before), Coverage("b", after), rules, "s")
        assert _coverage(frame) == ("s", "ok", 0, [], detail)


def test_coverage_of_the_newest_run_against_the_median_of_those_before() -> None:
    """The median of 40, 10, 20 is 20; of 10, 20, 40, 80 it is 30 (33 is 10% over it, not more
    than max_change); with no run before there is none, and nothing is compared."""
    rules = load_checks()
    assert _coverage(band_coverage("n4", 25, [40, 10, 20], rules)) == (
        "run n4",
        "warn",
        1,
        ["the median of the 3 runs before it: 20", "run n4: 25"],
        "samples 20 in the median of the 3 runs before it, 25 in run n4 (+25.00%; over ±10%): "
        "the captures cover different work",
    )
    assert _coverage(band_coverage("n5", 33, [80, 10, 40, 20], rules))[1:3] == ("ok", 0)  # +10%
    assert _coverage(band_coverage("n5", 34, [80, 10, 40, 20], rules))[4] == (
        "samples 30 in the median of the 4 runs before it, 34 in run n5 (+13.33%; over ±10%): "
        "the captures cover different work"
    )
    assert _coverage(band_coverage("n1", 25, [], rules)) == (
        "run n1",
        "ok",
        0,
        [],
        "samples — in the median of the 0 runs before it, 25 in run n1 (not compared)",
    )


def test_coverage_of_a_diff_counts_matched_samples_or_every_rows_calls() -> None:
    """A tile diff compares its matched samples; a GPU diff the sum of its groups' calls
    (3 + 7 = 10 before, 20 after); groups without calls are not compared."""
    rules = load_checks()

    def diff(header: dict[str, object], before: pl.DataFrame, after: pl.DataFrame) -> Diff:
        sides = Side("b.json", "gpu", before), Side("a.json", "gpu", after)
        return Diff(pl.DataFrame(), header, *sides, fields=(), impact="time")

    calls = pl.DataFrame({"name": ["x", "y"], "calls": [3, 7]}), pl.DataFrame({"calls": [20]})
    assert _coverage(diff_coverage(diff({}, *calls), rules)) == (
        "b.json → a.json",
        "warn",
        1,
        ["b.json: 10", "a.json: 20"],
        "calls 10 in b.json, 20 in a.json (+100.00%; over ±10%): the captures cover different work",
    )
    no_calls = pl.DataFrame({"name": ["x"]})
    assert _coverage(diff_coverage(diff({}, no_calls, no_calls), rules))[2:] == (
        0,
        [],
        "calls — in b.json, — in a.json (not compared)",
    )
    tile = diff({"matchedSampleCount": {"before": 20, "after": 19}}, no_calls, no_calls)
    assert _coverage(diff_coverage(tile, rules)) == (
        "b.json → a.json",
        "ok",
        0,
        [],
        "samples 20 in b.json, 19 in a.json",
    )


def _lead_and_hints(page: str, section: str) -> list[str]:
    start = page.index(f'<section id="{section}">')
    found = page[start : page.index("</section>", start)]
    return re.findall(r'<p class="(?:lead|hint)">([^<]*)</p>', found)


def test_report_breakdown_and_gpu_runs_name_the_failed_checks_under_them(tmp_path: Path) -> None:
    """The Qwen trace fails kernel-without-launch (its breakdown and op rows rest on launches
    it lacks): the breakdown's lead reads the BERT trace's window instead of Qwen's longer
    one, and says so; that section and the GPU runs name the check; alone, Qwen's breakdown
    abstains."""
    root = Path(__file__).resolve().parent.parent / "fixtures" / "tracelens"
    qwen = root / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    bert = root / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    why = (
        f"{qwen}: check kernel-without-launch failed (509; first at $.traceEvents[10899]): "
        "509 of 1,707 GPU events have no runtime call of their correlation"
    )
    out = tmp_path / "report.html"
    assert invoke("report", qwen, bert, "-o", out).exit_code == 0
    page = out.read_text()
    lead, hint = _lead_and_hints(page, "breakdown")[:2]
    assert lead.startswith(f"The device was busy 7.92% of the longest window ({bert.name} · ")
    assert lead.endswith("; the windows of captures that failed a check are left out.")
    assert hint.endswith(f"undermines them (tileprof check): {why}")
    assert any(h.endswith(f"op rows or kernels (tileprof check): {why}") for h in
               _lead_and_hints(page, "gpu"))  # fmt: skip
    assert "the findings they undermine leave those inputs out" in _section_text(page)
    alone = tmp_path / "alone.html"
    assert invoke("report", qwen, "-o", alone).exit_code == 0
    (lead, *rest) = _lead_and_hints(alone.read_text(), "breakdown")
    assert lead == f"Abstained: {why}. The figures below rest on this capture."
    assert not any("undermines them" in h for h in rest)  # said once, in the lead
    clean = tmp_path / "clean.html"
    assert invoke("report", bert, "-o", clean).exit_code == 0
    assert "rest on a failed capture check" not in clean.read_text()


def test_two_traces_of_one_file_name_keep_their_own_checks(tmp_path: Path) -> None:
    """rank0/trace.json.gz and rank1/trace.json.gz: the breakdown, the critical path and the
    findings name each by its path, so Qwen's failed check leaves out Qwen's windows only
    (by file name alone, it undermined both traces' rows, and the lead abstained)."""
    import shutil

    root = Path(__file__).resolve().parent.parent / "fixtures" / "tracelens"
    qwen, bert = tmp_path / "rank0" / "trace.json.gz", tmp_path / "rank1" / "trace.json.gz"
    for source, copy in (("h100_Qwen_Qwen1.5-0.5B-Chat__1016005", qwen),
                         ("h100_gaunernst_bert-small-uncased__1016001", bert)):  # fmt: skip
        copy.parent.mkdir()
        shutil.copy(root / f"{source}.json.gz", copy)
    out = tmp_path / "report.html"
    assert invoke("report", qwen, bert, "-o", out).exit_code == 0
    lead, hint = _lead_and_hints(out.read_text(), "breakdown")[:2]
    assert lead.startswith(f"The device was busy 7.92% of the longest window ({bert} · ")
    assert hint.endswith(f"undermines them (tileprof check): {qwen}: check kernel-without-launch "
                         "failed (509; first at $.traceEvents[10899]): 509 of 1,707 GPU events "
                         "have no runtime call of their correlation")  # fmt: skip
    text = invoke("critical", qwen, bert).output
    assert f"Critical path of {qwen}" in text and f"Critical path of {bert}" in text
    findings = json.loads(invoke("findings", qwen, bert, "--format", "json").output)
    host_bound = next(f for f in findings["findings"] if f["id"] == "host-bound")
    assert host_bound["message"].startswith(f"host-bound: {bert} ")
