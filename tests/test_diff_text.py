"""``tileprof.views.diff_text``: the diff as a terminal table, JSON and CSV, held whole (issue
38: the survivors of its mutation run, branch ``mutU``).

Every expected figure is worked out by hand from the samples and run tables written here (the
arithmetic is in the comments), never taken from a diff.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import polars as pl

from tests.samples import sample, write_dump
from tests.test_diff_inputs import AFTER, BEFORE
from tileprof.analyses.diff import Diff
from tileprof.analyses.filters import Filters
from tileprof.model.diff_inputs import ReadOptions, compare_files
from tileprof.views import diff_text

# BEFORE and AFTER (tests/test_diff_inputs.py): gemm 2 samples of 100 (useful 50 each) → 2 of
# 80, softmax 40 + 10 (epoch 2) → 60 + 25, gone 10 → new 20, same 30 on both sides


def tile_diff(tmp_path: Path, before: list | None = None, after: list | None = None) -> Diff:
    b = write_dump(tmp_path / "b.json", BEFORE if before is None else before)
    a = write_dump(tmp_path / "a.json", AFTER if after is None else after)
    return compare_files(b, a, ReadOptions())


def labelled(diff: Diff, before: str, after: str) -> Diff:
    """The diff with its sides named ``before`` and ``after`` (a path's length varies)."""
    return replace(
        diff, before=replace(diff.before, label=before), after=replace(diff.after, label=after)
    )


def cells(line: str) -> list[str]:
    """A table line's cells: runs of two or more spaces part them."""
    return re.split(r" {2,}", line.strip())


def test_a_tile_diffs_table_whole(tmp_path: Path) -> None:
    """phaseCycles: softmax 50 → 85 (+35, +70%), gemm 200/2 tiles... as phase cycles 100 → 80
    (-20%), new 20, gone 10, same 30: net +35 - 20 + 20 - 10 = +25, gross 85. Useful: gemm
    50/100 = 50.00% → 50/80 = 62.50%, +12.50 points, +25%; the others state no useful cycles."""
    diff = tile_diff(tmp_path)
    text = diff_text.render_table(diff)
    lines = text.splitlines()
    b, a = tmp_path / "b.json", tmp_path / "a.json"
    assert lines[:9] == [
        "phaseCycles     net +25, gross 85; the top 5 groups explain 100.00% of the gross",
        # the last sample ends at 300 + 10 → 300 + 25
        "matched span    310 → 325 cycles  (+15, +4.84%)",
        "matched samples 6 → 6  (0, +0.00%)",
        # work 290 → 295 cycles over 1,472 tiles × the span: (295/325)/(290/310) - 1 = -2.97%
        "device busy     0.06% → 0.06%  (-0.00 pp, -2.97%)",
        "groups          1 added (+), 1 removed (-), 2 changed (~), 1 unchanged (=); per call 0 "
        "changed, 0 unchanged, 3 not enough calls (mean per call, 95% bootstrap interval, 1,000 "
        "resamples, at least 10 calls or samples a side)",
        "filters         none",
        f"before          {b} (tile)",
        f"after           {a} (tile)",
        "",
    ]
    assert cells(lines[9]) == [
        "phase cycles before",
        "after",
        "Δ",
        "Δ%",
        "useful before",
        "after",
        "Δ",
        "Δ%",
        "samples before",
        "after",
        "Δ",
        "Δ%",
        "p95 before",
        "after",
        "Δ",
        "Δ%",
        "per call",
        "group",
    ]
    none4 = ["—"] * 4
    assert [cells(line) for line in lines[11:]] == [
        [
            "50",
            "85",
            "+35",
            "+70.00%",
            *none4,
            "2",
            "2",
            "0",
            "+0.00%",
            "40",
            "60",
            "+20",
            "+50.00%",
            "few calls +70.00%",
            "~ softmax",
        ],
        [
            "100",
            "80",
            "-20",
            "-20.00%",
            "50.00%",
            "62.50%",
            "+12.50 pp",
            "+25.00%",
            "2",
            "2",
            "0",
            "+0.00%",
            "100",
            "80",
            "-20",
            "-20.00%",
            "few calls -20.00%",
            "~ gemm",
        ],
        ["—", "20", "+20", "—", *none4, "—", "1", "+1", "—", "—", "20", "—", "—", "—", "+ new"],
        ["10", "—", "-10", "—", *none4, "1", "—", "-1", "—", "10", "—", "—", "—", "—", "- gone"],
        [
            "30",
            "30",
            "0",
            "+0.00%",
            *none4,
            "1",
            "1",
            "0",
            "+0.00%",
            "30",
            "30",
            "0",
            "+0.00%",
            "few calls +0.00%",
            "= same",
        ],
    ]
    # numbers right-aligned under their titles, the verdict and the group left-aligned
    assert lines[11].startswith("                 50     85  +35  +70.00%")
    assert lines[11].endswith("  few calls +70.00%  ~ softmax")
    assert lines[12].endswith("  few calls -20.00%  ~ gemm")
    assert lines[13].endswith("  —                  + new")
    assert text.endswith("= same\n")
    assert max(map(len, lines[9:])) <= diff_text.TABLE_WIDTH  # the header is not fitted


def test_a_tile_diff_on_a_narrow_terminal(tmp_path: Path) -> None:
    """80 columns: the header breaks under its values; the main statistic, the verdict and the
    group stay, and the dropped statistics are named once each."""
    diff = labelled(tile_diff(tmp_path), "b.json", "a.json")
    lines = diff_text.render_table(diff, width=80).splitlines()
    assert lines[4:8] == [
        "groups          1 added (+), 1 removed (-), 2 changed (~), 1 unchanged (=); per",
        "                call 0 changed, 0 unchanged, 3 not enough calls (mean per call,",
        "                95% bootstrap interval, 1,000 resamples, at least 10 calls or",
        "                samples a side)",
    ]
    assert lines[8:11] == [
        "filters         none",
        "before          b.json (tile)",
        "after           a.json (tile)",
    ]
    assert lines[12:] == [
        "phase cycles before  after    Δ       Δ%  per call           group",
        "───────────────────  ─────  ───  ───────  ─────────────────  ─────────",
        "                 50     85  +35  +70.00%  few calls +70.00%  ~ softmax",
        "                100     80  -20  -20.00%  few calls -20.00%  ~ gemm",
        "                  —     20  +20        —  —                  + new",
        "                 10      —  -10        —  —                  - gone",
        "                 30     30    0   +0.00%  few calls +0.00%   = same",
        "not shown: useful, samples, p95 (a wider terminal or --format csv shows them)",
    ]


def run_table(path: Path, rows: list[tuple[str, float, int]]) -> Path:
    """A run table on an H200: (kernel, µs a call, calls) a row. No workload is given, so
    each row is named by its kernel alone (docs/metrics.md, "Diff")."""
    lines = [f"H200,,{k},{us},{calls},{us * calls}\n" for k, us, calls in rows]
    path.write_text("target,workload,kernel,time_us,calls,total_us\n" + "".join(lines))
    return path


def calls_diff(tmp_path: Path) -> Diff:
    """k1 3 calls of 2 µs → 6 of 3; k2 1 of 4 both sides; k3 (2 of 5) removed; k4 (1 of 1)
    added."""
    before = run_table(tmp_path / "a.csv", [("k1", 2, 3), ("k2", 4, 1), ("k3", 5, 2)])
    after = run_table(tmp_path / "b.csv", [("k1", 3, 6), ("k2", 4, 1), ("k4", 1, 1)])
    return labelled(compare_files(before, after, ReadOptions()), "a.csv", "b.csv")


def test_a_gpu_diff_whose_calls_differ_leads_with_the_calls(tmp_path: Path) -> None:
    """Calls 3 + 1 + 2 = 6 → 6 + 1 + 1 = 8, k1 alone ran a different number of times. At
    equal calls (the after side's): k1 2 µs × 6 + k2 4 = 16 → 18 + 4 = 22, +6, +37.50%. Total
    6 + 4 + 10 = 20 → 18 + 4 + 1 = 23: call counts (6 - 3) × 2 = +6, time per call +6, added
    and removed 1 - 10 = -9; gross 12 + 10 + 1 = 23."""
    diff = calls_diff(tmp_path)
    assert diff_text.statistics(diff) == (
        ("µs/call", "time_us", False),
        ("calls", "calls", False),
        ("total µs", "total_us", False),
    )
    lines = diff_text.render_table(diff).splitlines()
    assert lines[:9] == [
        "calls           6 → 8  (+2, +33.33%); 1 group ran a different number of times: "
        "compare time per call, not total time",
        "per call        +37.50% at equal calls (before scaled to the after side's calls: "
        "16 → 22 µs, +6)",
        "total µs        20 → 23  (+3, +15.00%); call counts +6, time per call +6, added and "
        "removed groups -9",
        "total_us        net +3, gross 23; the top 4 groups explain 100.00% of the change the "
        "call counts do not explain",
        "groups          1 added (+), 1 removed (-), 1 changed (~), 1 unchanged (=)",
        "filters         none",
        "before          a.csv (run table)",
        "after           b.csv (run table)",
        "",
    ]
    assert cells(lines[9]) == [
        *("µs/call before", "after", "Δ", "Δ%", "calls before", "after", "Δ", "Δ%"),
        *("total µs before", "after", "Δ", "Δ%", "group"),
    ]
    assert [cells(line) for line in lines[11:]] == [
        ["5", "—", "—", "—", "2", "—", "-2", "—", "10", "—", "-10", "—", "- k3"],
        [
            "2",
            "3",
            "+1",
            "+50.00%",
            "3",
            "6",
            "+3",
            "+100.00%",
            "6",
            "18",
            "+12",
            "+200.00%",
            "~ k1",
        ],
        ["—", "1", "—", "—", "—", "1", "+1", "—", "—", "1", "+1", "—", "+ k4"],
        ["4", "4", "0", "+0.00%", "1", "1", "0", "+0.00%", "4", "4", "0", "+0.00%", "= k2"],
    ]


def test_two_groups_that_ran_other_numbers_of_times_are_plural(tmp_path: Path) -> None:
    before = run_table(tmp_path / "a.csv", [("k1", 2, 3), ("k2", 4, 1)])
    after = run_table(tmp_path / "b.csv", [("k1", 2, 4), ("k2", 4, 2)])
    lines = diff_text.call_lines(compare_files(before, after, ReadOptions()))
    assert lines[0] == (
        "calls           4 → 6  (+2, +50.00%); 2 groups ran a different number of times: "
        "compare time per call, not total time"
    )


def many(durations: dict[str, tuple[int, int]]) -> list[dict]:
    """Per kernel: ``count`` samples of ``cycles`` each, one a tile, 1,000 cycles apart."""
    out = []
    for shift, (kernel, (count, cycles)) in enumerate(durations.items()):
        out += [sample(i, 1000 * i + 500 * shift, cycles, kernel) for i in range(count)]
    return out


def test_per_call_verdicts_with_their_intervals(tmp_path: Path) -> None:
    """12 samples of a, 100 → 120 cycles each: every resample's mean moves by +20%, so the
    interval is [+20%, +20%]; b, 12 of 50 on both sides, by 0. Work 1,200 + 600 = 1,800 →
    2,040 (+13.33%) over one span (tile 11's b ends at 11,000 + 500 + 50)."""
    before = many({"a": (12, 100), "b": (12, 50)})
    after = many({"a": (12, 120), "b": (12, 50)})
    b = write_dump(tmp_path / "b.json", before)
    a = write_dump(tmp_path / "a.json", after)
    diff = compare_files(b, a, ReadOptions(filters=Filters(kernels=("a", "b"))))
    lines = diff_text.render_table(labelled(diff, "b", "a")).splitlines()
    assert lines[:9] == [
        "phaseCycles     net +240, gross 240; the top 2 groups explain 100.00% of the gross",
        "matched span    11,550 → 11,550 cycles  (0, +0.00%)",
        "matched samples 24 → 24  (0, +0.00%)",
        "device busy     0.01% → 0.01%  (+0.00 pp, +13.33%)",
        "groups          0 added (+), 0 removed (-), 1 changed (~), 1 unchanged (=); per call 1 "
        "changed, 1 unchanged, 0 not enough calls (mean per call, 95% bootstrap interval, 1,000 "
        "resamples, at least 10 calls or samples a side)",
        "filters         --kernel a --kernel b",
        "before          b (tile)",
        "after           a (tile)",
        "",
    ]
    none4 = ["—"] * 4
    assert [cells(line) for line in lines[11:]] == [
        [
            "1,200",
            "1,440",
            "+240",
            "+20.00%",
            *none4,
            "12",
            "12",
            "0",
            "+0.00%",
            "100",
            "120",
            "+20",
            "+20.00%",
            "changed +20.00% [+20.00%, +20.00%]",
            "~ a",
        ],
        [
            "600",
            "600",
            "0",
            "+0.00%",
            *none4,
            "12",
            "12",
            "0",
            "+0.00%",
            "50",
            "50",
            "0",
            "+0.00%",
            "unchanged +0.00% [+0.00%, +0.00%]",
            "= b",
        ],
    ]
    assert lines[12].endswith("  unchanged +0.00% [+0.00%, +0.00%]   = b")


def test_a_tile_diff_whose_samples_differ_leads_with_the_samples(tmp_path: Path) -> None:
    """a: 12 samples of 100 → 10 of 120 (1,200 cycles both); b 12 of 50 both sides. Work at
    the after side's samples: a 1,200 × 10/12 = 1,000 + b 600 = 1,600 → 1,200 + 600 = 1,800,
    +200, +12.50%; the phase cycles do not move (net 0, so no share)."""
    before = many({"a": (12, 100), "b": (12, 50)})
    after = many({"a": (10, 120), "b": (12, 50)})
    b = write_dump(tmp_path / "b.json", before)
    a = write_dump(tmp_path / "a.json", after)
    diff = labelled(compare_files(b, a, ReadOptions()), "b", "a")
    assert diff_text.render_table(diff).splitlines()[:5] == [
        "matched samples 24 → 22  (-2, -8.33%); 1 group holds a different number of samples: "
        "compare cycles per sample, not total cycles",
        "per sample      +12.50% at equal samples (work cycles, before scaled to the after "
        "side's samples: 1,600 → 1,800, +200)",
        "phaseCycles     net 0, gross 0; the top 2 groups explain — of the gross",
        "matched span    11,550 → 11,550 cycles  (0, +0.00%)",
        "device busy     0.01% → 0.01%  (+0.00 pp, +0.00%)",
    ]
    after = many({"a": (10, 120), "b": (10, 60)})  # both groups: "groups", plural
    a = write_dump(tmp_path / "a.json", after)
    lines = diff_text.sample_lines(compare_files(b, a, ReadOptions()))
    assert lines[0] == (
        "matched samples 24 → 20  (-4, -16.67%); 2 groups hold a different number of samples: "
        "compare cycles per sample, not total cycles"
    )


def test_the_columns_a_width_leaves_out_are_named_whole_or_one_by_one(tmp_path: Path) -> None:
    """The statistics go from the right (p95, samples, useful), each from its right end (Δ%,
    Δ, after, before); the verdict goes after them, the main statistic's Δ and the group
    never. A statistic whose four columns all went is named once."""
    diff = labelled(tile_diff(tmp_path), "b", "a")

    def table(width: int) -> list[str]:
        lines = diff_text.render_table(diff, width=width).splitlines()
        return lines[lines.index("") + 1 :]

    wide = table(180)
    assert cells(wide[0])[-5:] == ["p95 before", "after", "Δ", "per call", "group"]
    assert wide[-1] == "not shown: p95 Δ% (a wider terminal or --format csv shows them)"
    assert table(160)[-1] == (
        "not shown: p95 after, p95 Δ, p95 Δ% (a wider terminal or --format csv shows them)"
    )
    assert table(140)[-1] == (
        "not shown: samples Δ%, p95 (a wider terminal or --format csv shows them)"
    )
    assert table(100)[-1] == (
        "not shown: useful Δ, useful Δ%, samples, p95 (a wider terminal or --format csv shows them)"
    )
    assert table(60)[0] == "phase cycles before  after    Δ       Δ%  group"
    assert table(60)[-2:] == [
        "not shown: useful, samples, p95, per call (a wider terminal",
        "or --format csv shows them)",
    ]
    assert not any(line.startswith("not shown") for line in table(200))


def test_top_and_broken_rules_in_the_table(tmp_path: Path) -> None:
    """--top 2: softmax (+35) and gemm (-20), 55 of the gross 85 = 64.71%; the broken rules
    come first."""
    diff = labelled(tile_diff(tmp_path), "b", "a").limited(2)
    lines = diff_text.render_table(diff, ["a rule broke", "another"], width=60).splitlines()
    assert lines[:4] == [
        "a rule broke",
        "another",
        "phaseCycles     net +25, gross 85; the top 2 groups explain",
        "                64.71% of the gross",
    ]
    assert lines[-5:] == [
        "                 50     85  +35  +70.00%  ~ softmax",
        "                100     80  -20  -20.00%  ~ gemm",
        "the 2 largest changes of 5 groups (--top)",
        "not shown: useful, samples, p95, per call (a wider terminal",
        "or --format csv shows them)",
    ]
    assert not any("largest changes" in line for line in diff_text.render_table(diff.limited(5)))


def test_a_word_longer_than_the_terminal_loses_its_middle(tmp_path: Path) -> None:
    long = "/" + "d" * 50 + "/" + "e" * 50 + ".json"
    diff = labelled(tile_diff(tmp_path), long, "a")
    lines = diff_text.render_table(diff, width=60).splitlines()
    at = lines.index("after           a (tile)")
    assert lines[at - 4 : at - 2] == ["filters         none", "before"]
    assert lines[at - 1] == " " * 16 + "(tile)"
    assert len(lines[at - 2]) == 60 and lines[at - 2].count("…") == 1
    head, tail = lines[at - 2].split("…")
    assert head.startswith(" " * 16 + "/ddd") and tail.endswith("eee.json")
    # a line that fits is left whole, the same as with no width
    assert (
        diff_text.render_table(diff, width=500).splitlines()[:9]
        == (diff_text.render_table(diff).splitlines()[:9])
    )


def test_no_groups_on_either_side(tmp_path: Path) -> None:
    diff = tile_diff(tmp_path)
    empty = replace(diff, rows=diff.rows.clear())
    text = diff_text.render_table(labelled(empty, "b", "a"))
    assert text.endswith("after           a (tile)\n\nno groups on either side\n")


def test_the_json_document(tmp_path: Path) -> None:
    """--top 1: k3's -10 µs leads, 10 of the 23 - 6 = 17 µs the call counts do not explain."""
    diff = calls_diff(tmp_path).limited(1)
    diff = replace(diff, before=replace(diff.before, label="µs before.csv", sha256="ab12"))
    text = diff_text.render_json(diff, ["rule one", "rule two"])
    assert text.startswith('{\n  "before": {\n    "path": "µs before.csv",\n')  # not \u00b5
    assert text.endswith("\n}\n")
    document = json.loads(text)
    assert list(document) == ["before", "after", "impact", "header", "broken", "groups"]
    assert document["before"] == {"path": "µs before.csv", "kind": "run table", "sha256": "ab12"}
    assert document["after"] == {"path": "b.csv", "kind": "run table", "sha256": None}
    assert document["impact"] == "total_us"
    assert document["broken"] == ["rule one", "rule two"]
    header = document["header"]
    assert header["totalUs"] == {"before": 20.0, "after": 23.0, "change": 3.0, "relative": 0.15}
    assert header["perCall"] == {"before": 16.0, "after": 22.0, "change": 6.0, "relative": 0.375}
    assert header["topGroups"] == 1 and header["topShare"] == 10 / 17
    assert header["groups"] == {"added": 1, "removed": 1, "changed": 1, "unchanged": 1}
    assert [row["group"] for row in document["groups"]] == ["k3"]
    k3 = document["groups"][0]
    assert (k3["status"], k3["calls_before"], k3["total_us_before"], k3["afterName"]) == (
        "removed",
        2,
        10.0,
        None,
    )
    assert diff_text.to_document(diff)["broken"] == []
    every = json.loads(diff_text.render_json(calls_diff(tmp_path)))
    assert [row["group"] for row in every["groups"]] == ["k3", "k1", "k4", "k2"]


def test_infinities_become_strings_at_any_depth() -> None:
    inf = float("inf")
    assert diff_text._finite(inf) == "+inf"
    assert diff_text._finite(-inf) == "-inf"
    assert diff_text._finite({"a": [1.5, (-inf, {"b": inf})], "c": None}) == {
        "a": [1.5, ["-inf", {"b": "+inf"}]],
        "c": None,
    }
    assert diff_text._finite(0.0) == 0.0 and diff_text._finite("x") == "x"


def test_a_not_a_number_is_refused_in_json(tmp_path: Path) -> None:
    """JSON has no NaN: a row holding one is an error, never a bare ``NaN`` token."""
    diff = calls_diff(tmp_path)
    rows = diff.rows.with_columns(pl.lit(float("nan")).alias("time_effect_us"))
    try:
        diff_text.render_json(replace(diff, rows=rows))
    except ValueError as error:
        assert "JSON compliant" in str(error)
    else:
        raise AssertionError("a NaN was written")


def test_the_csv_rows_whole(tmp_path: Path) -> None:
    """Every figure of the four groups, as the run tables give them (nulls as empty cells)."""
    assert diff_text.render_csv(calls_diff(tmp_path)).splitlines() == [
        "group,status,beforeName,afterName,calls_before,calls_after,calls_change,calls_relative,"
        "total_us_before,total_us_after,total_us_change,total_us_relative,time_us_before,"
        "time_us_after,time_us_change,time_us_relative,p50_us_before,p50_us_after,p50_us_change,"
        "p50_us_relative,p95_us_before,p95_us_after,p95_us_change,p95_us_relative,max_us_before,"
        "max_us_after,max_us_change,max_us_relative,count_effect_us,time_effect_us",
        "k3,removed,k3,,2,,-2,,10.0,,-10.0,,5.0,,,," + "," * 12 + ",-10.0",
        "k1,changed,k1,k1,3,6,3,1.0,6.0,18.0,12.0,2.0,2.0,3.0,1.0,0.5," + "," * 12 + "6.0,6.0",
        "k4,added,,k4,,1,1,,,1.0,1.0,,,1.0,,," + "," * 12 + ",1.0",
        "k2,unchanged,k2,k2,1,1,0,0.0,4.0,4.0,0.0,0.0,4.0,4.0,0.0,0.0," + "," * 12 + "0.0,0.0",
    ]


def test_a_gpu_diff_at_equal_calls_gives_the_total(tmp_path: Path) -> None:
    """k1 3 calls of 2 → 3 µs, k2 1 of 4: 10 → 13 µs, +30%; no call counts to explain."""
    before = run_table(tmp_path / "a.csv", [("k1", 2, 3), ("k2", 4, 1)])
    after = run_table(tmp_path / "b.csv", [("k1", 3, 3), ("k2", 4, 1)])
    diff = labelled(compare_files(before, after, ReadOptions()), "a.csv", "b.csv")
    assert diff_text.statistics(diff) == (
        ("total µs", "total_us", False),
        ("calls", "calls", False),
        ("µs/call", "time_us", False),
    )
    assert diff_text.header_lines(diff, ["broken"]) == [
        "broken",
        "total_us        net +3, gross 3; the top 2 groups explain 100.00% of the gross",
        "total µs        10 → 13  (+3, +30.00%)",
        "groups          0 added (+), 0 removed (-), 1 changed (~), 1 unchanged (=)",
        "filters         none",
        "before          a.csv (run table)",
        "after           b.csv (run table)",
    ]


def test_a_per_op_diff_adds_the_roofline_fraction_after_the_calls(tmp_path: Path) -> None:
    """An op diff's rows carry each op's fraction of its roofline (docs/runs.md): the view
    shows it last, in percent and its change in points, also when the time per call leads.
    The fractions are set here: k1 25% → 30% (+5 points, +20%); k3 and k4 on one side only."""
    diff = calls_diff(tmp_path)
    fractions = {"k1": (0.25, 0.30), "k2": (0.5, 0.5), "k3": (0.1, None), "k4": (None, 0.2)}
    groups = diff.rows.get_column("group").to_list()
    before = [fractions[g][0] for g in groups]
    after = [fractions[g][1] for g in groups]
    change = [None if b is None or a is None else a - b for b, a in zip(before, after, strict=True)]
    relative = [
        None if b is None or a is None else a / b - 1 for b, a in zip(before, after, strict=True)
    ]
    rows = diff.rows.with_columns(
        pl.Series("roofline_fraction_before", before, pl.Float64),
        pl.Series("roofline_fraction_after", after, pl.Float64),
        pl.Series("roofline_fraction_change", change, pl.Float64),
        pl.Series("roofline_fraction_relative", relative, pl.Float64),
    )
    ops = replace(diff, rows=rows)
    assert diff_text.statistics(ops) == (
        ("µs/call", "time_us", False),
        ("calls", "calls", False),
        ("total µs", "total_us", False),
        ("% of roofline", "roofline_fraction", True),
    )
    lines = diff_text.render_table(ops).splitlines()
    assert cells(lines[9])[-5:] == ["% of roofline before", "after", "Δ", "Δ%", "group"]
    assert [cells(line)[-5:] for line in lines[11:]] == [
        ["10.00%", "—", "—", "—", "- k3"],
        ["25.00%", "30.00%", "+5.00 pp", "+20.00%", "~ k1"],
        ["—", "20.00%", "—", "—", "+ k4"],
        ["50.00%", "50.00%", "+0.00 pp", "+0.00%", "= k2"],
    ]
    at_equal_calls = replace(ops, header={**ops.header, "callsDiffer": False})
    assert [title for title, _, _ in diff_text.statistics(at_equal_calls)] == [
        "total µs",
        "calls",
        "µs/call",
        "% of roofline",
    ]


def test_a_statistic_of_two_words_dropped_whole_is_named_once(tmp_path: Path) -> None:
    """When the calls differ the time per call leads: at 80 columns the total (two words,
    "total µs") goes whole, at 60 the calls' after, Δ and Δ% go too, at 100 only its Δ, Δ%."""
    diff = calls_diff(tmp_path)

    def dropped(width: int) -> str:
        lines = diff_text.render_table(diff, width=width).splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("not shown: "))
        return " ".join(lines[at:])

    see = "(a wider terminal or --format csv shows them)"
    assert dropped(80) == f"not shown: total µs {see}"
    assert dropped(60) == f"not shown: calls after, calls Δ, calls Δ%, total µs {see}"
    assert dropped(100) == f"not shown: total µs Δ, total µs Δ% {see}"
