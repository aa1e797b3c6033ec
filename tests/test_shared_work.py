"""``tileprof.analyses.shared_work``: a diff whose sides share little work says so first
(docs/metrics.md, "Shared work"), every figure by hand.

Two run tables of kernels (name, µs a call, calls): a row's total is µs × calls. Qwen's H100
trace against BERT's printed "per call -90.08% at equal calls" as its headline, over the 5 of
35 kernels both models run, which hold 2.82% of Qwen's time.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests.test_diff_run_totals import write_table
from tileprof.analyses.diff import Diff
from tileprof.analyses.shared_work import SHARED_WORK_FLOOR, shared_work, work_note
from tileprof.commands.cli import cli
from tileprof.model.diff_inputs import ReadOptions
from tileprof.model.diff_inputs import compare_files as compare

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


Rows = list[tuple[str, str, str]]


def tables(tmp_path: Path, before: Rows, after: Rows) -> tuple[Path, Path]:
    return write_table(tmp_path / "a.csv", before), write_table(tmp_path / "b.csv", after)


def compare_files(before: Path, after: Path) -> Diff:
    return compare(before, after, ReadOptions())


def test_the_share_of_each_side_in_the_groups_both_have(tmp_path: Path) -> None:
    """k1 (50 µs before, 40 after) is on both sides; k2 (150 µs) only before, k3 (10 µs) only
    after: k1 holds 50 / 200 = 25% of before's total and 40 / 50 = 80% of after's."""
    a, b = tables(
        tmp_path, [("k1", "10", "5"), ("k2", "50", "3")], [("k1", "8", "5"), ("k3", "5", "2")]
    )
    diff = compare_files(a, b)
    shared = shared_work(diff)
    assert (shared.groups, shared.of) == (1, 3)
    assert shared.before == pytest.approx(0.25) and shared.after == pytest.approx(0.8)
    assert work_note(diff) == (
        "mostly different groups: the 1 group of 3 that both sides have holds 25.00% of "
        "before's total µs and 80.00% of after's, and each change below compares only that "
        "part (the rest is added or removed); --match or --normalize pair groups that were "
        "renamed, --per-op compares PyTorch traces op by op"
    )
    assert work_note(diff.limited(1)) == work_note(diff)  # every row, not those shown


def test_half_of_each_side_is_the_same_work(tmp_path: Path) -> None:
    """k1 50 µs and k2 50 µs before, k1 50 µs and k3 50 µs after: exactly half of each side
    is shared, which is not "mostly not"; a microsecond less on one side is."""
    assert SHARED_WORK_FLOOR == 0.5
    a, b = tables(
        tmp_path, [("k1", "10", "5"), ("k2", "50", "1")], [("k1", "10", "5"), ("k3", "50", "1")]
    )
    assert work_note(compare_files(a, b)) is None
    a, b = tables(
        tmp_path, [("k1", "10", "5"), ("k2", "51", "1")], [("k1", "10", "5"), ("k3", "49", "1")]
    )
    note = work_note(compare_files(a, b))
    assert note is not None and "holds 49.50% of before's total µs and 50.51% of after's" in note


def test_no_note_where_a_share_is_not_known(tmp_path: Path) -> None:
    """A row without calls has no total: before's time is not known, so neither is its share
    (a partial sum would read as the side's whole time); a side of no time has no share."""
    a, b = tables(
        tmp_path, [("k1", "10", "5"), ("k2", "50", "")], [("k1", "10", "5"), ("k3", "9", "9")]
    )
    diff = compare_files(a, b)
    assert shared_work(diff).before is None and work_note(diff) is None
    a, b = tables(tmp_path, [("k1", "0", "5"), ("k2", "0", "1")], [("k1", "10", "5")])
    diff = compare_files(a, b)
    assert shared_work(diff).before is None and work_note(diff) is None


def test_a_tile_diff_names_its_cycles_and_no_per_op(tmp_path: Path) -> None:
    """Tile groups are named by their phase cycles; --per-op is for traces, so not named."""
    from tests.samples import write_dump
    from tests.test_diff import AFTER, BEFORE

    before = write_dump(tmp_path / "before.json", BEFORE)
    after = write_dump(tmp_path / "after.json", AFTER)
    note = work_note(compare_files(before, after))
    assert note is not None and "of before's phase cycles and" in note
    assert note.endswith("(the rest is added or removed); --match or --normalize pair groups "
                         "that were renamed")  # fmt: skip


def test_every_format_says_it_first(tmp_path: Path) -> None:
    """The table's first line, JSON's ``sharedWork`` and ``workDiffers``, the Markdown's first
    bold line, the HTML's note above its lead, and stderr for every format but the table."""
    a, b = tables(
        tmp_path, [("k1", "10", "5"), ("k2", "50", "3")], [("k1", "8", "5"), ("k3", "5", "2")]
    )
    note = work_note(compare_files(a, b))
    assert note is not None
    runner = CliRunner()
    table = runner.invoke(cli, ["diff", str(a), str(b)])
    assert table.exit_code == 0 and table.stdout.startswith(note + "\n") and not table.stderr
    doc = runner.invoke(cli, ["diff", str(a), str(b), "--format", "json"])
    document = json.loads(doc.stdout)
    assert document["workDiffers"] == note and doc.stderr == f"tileprof: note: {note}\n"
    assert document["sharedWork"] == {"groups": 1, "of": 3, "beforeShare": 0.25, "afterShare": 0.8}
    markdown = runner.invoke(cli, ["diff", str(a), str(b), "--format", "markdown"]).stdout
    assert markdown.splitlines()[2] == f"**{note}**"
    page = tmp_path / "d.html"
    html = ["diff", str(a), str(b), "--format", "html", "-o", str(page)]
    assert runner.invoke(cli, html).exit_code == 0
    assert '<p class="setup-note">Mostly different groups: the 1 group of 3' in page.read_text()
    same = write_table(tmp_path / "c.csv", [("k1", "9", "5"), ("k2", "50", "3")])
    document = json.loads(
        runner.invoke(cli, ["diff", str(a), str(same), "--format", "json"]).stdout
    )
    assert "sharedWork" not in document and "workDiffers" not in document


def test_two_models_are_not_the_same_work() -> None:
    """The TraceLens H100 traces of Qwen and BERT: 5 of 35 kernels on both sides, 2.82% of
    Qwen's time and 10.96% of BERT's (their kernel rows' totals, from the run table)."""
    root = FIXTURES / "tracelens"
    qwen = root / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    bert = root / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    shared = shared_work(compare_files(qwen, bert))
    assert (shared.groups, shared.of) == (5, 35)
    assert round(shared.before or 0, 4) == 0.0282 and round(shared.after or 0, 4) == 0.1096


def test_a_side_of_under_a_microsecond_has_a_share(tmp_path: Path) -> None:
    """Before: k1 0.2 µs and k2 0.6 µs in all (0.8 µs); after: k1 0.2 µs and k3 0.1 µs. k1 is
    25% of before's time and 66.67% of after's: a total under 1 µs is a total like any."""
    a, b = tables(tmp_path, [("k1", "0.1", "2"), ("k2", "0.1", "6")],
                  [("k1", "0.1", "2"), ("k3", "0.1", "1")])  # fmt: skip
    shared = shared_work(compare_files(a, b))
    assert shared.before == pytest.approx(0.25) and shared.after == pytest.approx(2 / 3)
    assert work_note(compare_files(a, b)) is not None


def test_a_per_op_diff_names_no_per_op() -> None:
    """Qwen's and BERT's H100 traces op by op: still mostly different ops (two models), but
    --per-op is what was asked, so the note names only --match and --normalize."""
    root = FIXTURES / "tracelens"
    qwen = root / "h100_Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz"
    bert = root / "h100_gaunernst_bert-small-uncased__1016001.json.gz"
    note = work_note(compare(qwen, bert, ReadOptions(per_op=True)))
    assert note is not None and note.startswith("mostly different groups: the ")
    assert note.endswith("; --match or --normalize pair groups that were renamed")


def test_the_gate_abstains_where_its_sentences_cover_groups_one_side_lacks(
    tmp_path: Path,
) -> None:
    """Every kernel renamed (k1 → k1_v2, k2 → k2_v2) and the total 200 → 420 µs: the gate
    judges groups both sides have, none here, so 'total_us of * may not rise' passed (exit 0)
    over a 2.1× slowdown. It now gives no verdict and says why; --allow-different judges, and
    --normalize, which pairs the renamed kernels, leaves nothing to abstain for. A sentence
    naming only groups both sides have is judged whatever the rest holds."""
    a, b = tables(tmp_path, [("k1", "10", "5"), ("k2", "50", "3")],
                  [("k1_v2", "30", "5"), ("k2_v2", "90", "3")])  # fmt: skip
    runner = CliRunner()
    every = ["diff", str(a), str(b), "--fail-on", "total_us of * may not rise by more than 5%"]
    result = runner.invoke(cli, every)
    assert result.exit_code == 3
    assert result.stdout.startswith("abstained, no verdict: mostly different groups: the 0 groups")
    assert result.stdout.count("mostly different groups") == 1  # said once, as the abstention
    page = tmp_path / "gate.html"
    runner.invoke(cli, [*every, "--format", "html", "-o", str(page)])
    assert page.read_text().count("ostly different groups: the 0 groups") == 1
    judged = runner.invoke(cli, [*every, "--allow-different"])
    assert judged.exit_code == 0
    assert "judged under --allow-different: mostly different groups" in judged.stderr
    paired = runner.invoke(cli, [*every, "--normalize", "_v2"])
    assert "mostly different groups" not in paired.stdout + paired.stderr
    c = write_table(tmp_path / "c.csv", [("k1", "10", "5"), ("k3", "50", "3")])
    shared = ["diff", str(a), str(c), "--fail-on", "total_us of k1* may not rise by more than 5%"]
    result = runner.invoke(cli, shared)  # k1 is on both sides, unchanged; k2 and k3 are not
    assert result.exit_code == 0 and result.stdout.startswith("mostly different groups")
