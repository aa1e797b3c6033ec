"""Issue 1 (trust): a diff of run tables whose source gives no ``total_us``.

A run table of ``time_us`` and ``calls`` used to diff as ``total µs 0 → 0`` with a net change
of 0, however much each kernel's time per call moved: the null totals summed to 0. A row's
total is its time over all calls, and a total that is not known is not 0.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from tileprof.commands.cli import cli

TARGET = "NVIDIA H100 80GB HBM3 SXM"


def write_table(path: Path, rows: list[tuple[str, str, str]]) -> Path:
    """A run table of kernels (name, time_us, calls); an empty cell is a value not given."""
    lines = ["target,workload,kernel,time_us,calls"]
    lines += [f"{TARGET},layer3,{kernel},{time},{calls}" for kernel, time, calls in rows]
    path.write_text("\n".join(lines) + "\n")
    return path


def diff_json(before: Path, after: Path) -> dict:
    result = CliRunner().invoke(cli, ["diff", str(before), str(after), "--format", "json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_a_total_is_time_per_call_times_calls(tmp_path: Path) -> None:
    """k1 10 → 8 µs a call over 5 calls: 50 → 40 µs; k2 4 µs over 2 calls both sides."""
    before = write_table(tmp_path / "a.csv", [("k1", "10", "5"), ("k2", "4", "2")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", "5"), ("k2", "4", "2")])
    document = diff_json(before, after)
    header = document["header"]
    assert header["totalUs"] == {
        "before": 58.0,
        "after": 48.0,
        "change": -10.0,
        "relative": -10.0 / 58.0,
    }
    assert header["total_usNetChange"] == -10.0 and header["total_usGrossChange"] == 10.0
    assert header["calls"]["before"] == 7 and header["calls"]["after"] == 7
    rows = {row["group"]: row for row in document["groups"]}
    assert (rows["k1 · layer3"]["total_us_before"], rows["k1 · layer3"]["total_us_after"]) == (
        50.0,
        40.0,
    )
    assert (
        rows["k1 · layer3"]["status"] == "changed" and rows["k2 · layer3"]["status"] == "unchanged"
    )


def test_a_total_the_source_does_not_give_is_unknown_not_zero(tmp_path: Path) -> None:
    """Without calls there is no total: the header's totals and net change are null, and
    every view shows them as unknown; the change per call is still there."""
    before = write_table(tmp_path / "a.csv", [("k1", "10", ""), ("k2", "4", "")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", ""), ("k2", "4", "")])
    header = diff_json(before, after)["header"]
    assert header["totalUs"]["before"] is None and header["totalUs"]["after"] is None
    assert header["total_usNetChange"] is None and header["total_usGrossChange"] is None
    assert header["calls"]["before"] is None
    text = CliRunner().invoke(cli, ["diff", str(before), str(after)])
    assert text.exit_code == 0, text.output
    assert "total µs        — → —" in text.output and "net —, gross —" in text.output
    assert "0 → 0" not in text.output
    page = tmp_path / "diff.html"
    html = CliRunner().invoke(
        cli, ["diff", str(before), str(after), "--format", "html", "-o", str(page)]
    )
    assert html.exit_code == 0, html.output
    assert 'Net change in total_us</span><span class="value">—' in page.read_text()


def test_one_unknown_total_leaves_the_side_s_total_unknown(tmp_path: Path) -> None:
    """k2 has no calls before: before's total is unknown, not k1's 50 µs alone, and so is the
    net change (k2's change is unknown), while k1's own row is exact."""
    before = write_table(tmp_path / "a.csv", [("k1", "10", "5"), ("k2", "4", "")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", "5"), ("k2", "4", "2")])
    document = diff_json(before, after)
    header = document["header"]
    assert header["totalUs"]["before"] is None and header["totalUs"]["after"] == 48.0
    assert header["total_usNetChange"] is None
    rows = {row["group"]: row for row in document["groups"]}
    assert rows["k1 · layer3"]["total_us_change"] == -10.0
    assert (
        rows["k2 · layer3"]["total_us_before"] is None
        and rows["k2 · layer3"]["calls_before"] is None
    )


def test_a_side_with_a_row_of_unknown_calls_is_not_judged_for_coverage(tmp_path: Path) -> None:
    """Before gives no calls for k2: its capture's calls are unknown, not the 5 of k1, so the
    coverage check compares nothing and the gate judges the rows (it said "calls 5 in a.csv,
    7 in b.csv: the captures cover different work" and abstained)."""
    before = write_table(tmp_path / "a.csv", [("k1", "10", "5"), ("k2", "4", "")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", "5"), ("k2", "4", "2")])
    gate = "total_us of * may not rise by more than 5%"
    result = CliRunner().invoke(cli, ["diff", str(before), str(after), "--fail-on", gate])
    assert result.exit_code == 0, result.output
    assert "abstained" not in result.output and "cover different work" not in result.output


def test_the_coverage_check_of_unknown_calls_compares_nothing(tmp_path: Path) -> None:
    """Ten times the calls after, but before's total is unknown: not compared, no failure."""
    from tileprof.analyses.integrity import diff_coverage, load_checks
    from tileprof.model.diff_inputs import ReadOptions, compare_files

    before = write_table(tmp_path / "a.csv", [("k1", "10", "5"), ("k2", "4", "")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", "50"), ("k2", "4", "2")])
    diff = compare_files(before, after, ReadOptions())
    (row,) = diff_coverage(diff, load_checks(None)).to_dicts()
    assert (row["check"], row["status"], row["count"]) == ("coverage-calls", "ok", 0)
    assert row["detail"] == f"calls — in {before}, 52 in {after} (not compared)"


SEED_000 = Path(__file__).parent.parent / "tileprof" / "data" / "seeds" / "000_55f6fcd9cea2f10a.txt"


def test_two_latency_benchmark_files_compare_run_by_run(tmp_path: Path) -> None:
    """Every row of seed 000 is one train step of one (GPU, workload, implementation, shape),
    all with the same kernel label. They were one group, "unchanged" whatever the times did;
    now each run is its own row, and the one time changed (A100 tiny-online trainkernel,
    15.28 → 14.00 µs per step) is the one changed row."""
    after = tmp_path / "after.txt"
    after.write_text(
        SEED_000.read_text().replace('"trainkernel_us": 15.28', '"trainkernel_us": 14.0')
    )
    document = diff_json(SEED_000, after)
    rows = {row["group"]: row for row in document["groups"]}
    changed = [g for g, row in rows.items() if row["status"] != "unchanged"]
    assert changed == [
        "train step (forward+loss+backward+SGD) · tiny-online · trainkernel · 4x32x64x16 · "
        "A100 SXM4 80 GB (per step)"
    ]
    row = rows[changed[0]]
    assert (row["time_us_before"], row["time_us_after"]) == (15.28, 14.0)
    assert len(rows) == 24 and document["header"]["groups"]["unchanged"] == 23


def test_times_per_step_and_per_call_do_not_pair(tmp_path: Path) -> None:
    """k1 timed per call before and per step after: two quantities, so k1 is removed and
    ``k1 · layer3 (per step)`` added, not a +900% change."""
    before = write_table(tmp_path / "a.csv", [("k1", "10", "5")])
    after = tmp_path / "b.csv"
    after.write_text(f"target,workload,kernel,time_us,calls,per\n{TARGET},layer3,k1,100,5,step\n")
    document = diff_json(before, after)
    rows = {row["group"]: row["status"] for row in document["groups"]}
    assert rows == {"k1 · layer3": "removed", "k1 · layer3 (per step)": "added"}
    # nothing is compared: no group is on both sides
    assert document["sharedWork"] == {"groups": 0, "of": 2, "beforeShare": 0.0, "afterShare": 0.0}


def test_kernel_selects_kernels_whatever_else_names_the_row(tmp_path: Path) -> None:
    before = write_table(tmp_path / "a.csv", [("k1", "10", "5"), ("k2", "4", "2")])
    after = write_table(tmp_path / "b.csv", [("k1", "8", "5"), ("k2", "4", "2")])
    result = CliRunner().invoke(
        cli, ["diff", str(before), str(after), "--kernel", "k1", "--format", "json"]
    )
    assert result.exit_code == 0, result.output
    assert [row["group"] for row in json.loads(result.output)["groups"]] == ["k1 · layer3"]
