"""``tileprof history``'s terminal table (``views.history.render_table``) on a hand-built
history: what each column says of a trend (the runs with a value, the newest value against
its band, how many runs were flagged), every flagged point with its run's labels, the FAIL
lines with the origin of a change point, and, on a narrow terminal, what is left out and how
long lines break."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import datetime, timezone

from tileprof.analyses.change_points import ChangePoint
from tileprof.model.store.history import Change, Failure, History, Point, Trend
from tileprof.model.store.tables import RunRecord
from tileprof.views.history import (
    change_lines,
    render_csv,
    render_json,
    render_table,
    verdict,
)


def _run(name: str, labels: dict[str, str]) -> RunRecord:
    added = datetime(2026, 12, 1, tzinfo=timezone.utc)
    return RunRecord(name, labels, "d.json", "0" * 64, "json", 1.5e9, 1472, 10, 100, "1", added)


HISTORY = History(
    runs=(_run("r1", {}), _run("r2", {}), _run("r3", {"host": "ci", "branch": "main"})),
    fields=("usefulUtilization", "activeCycles"),
    trends=(
        Trend(
            "matmul",
            "usefulUtilization",
            (
                Point("r1", 0.5),
                Point("r2", 0.52, 0.5, 0.45, 0.55, "rise"),
                Point("r3", 0.3, 0.51, 0.45, 0.57, "drop"),
            ),
        ),
        Trend(
            "conv", "activeCycles", (Point("r1", None), Point("r2", 1000.0), Point("r3", 1200.0))
        ),
    ),
    failures=(
        Failure("usefulUtilization:-5%", "r3", "matmul", "usefulUtilization", 0.51, 0.3, "r2"),
        Failure("activeCycles:+10%", "r3", "conv", "activeCycles", 1000.0, 1200.0),
    ),
)

FULL = """\
runs     3 (order: time; newest r3)
band     median ± max(3 × 1.4826 × MAD, 0.01 × |median|) of the previous 10 runs (at least 3)

group   field              runs  newest  band             flags
──────  ─────────────────  ────  ──────  ───────────────  ─────
matmul  usefulUtilization     3  30.00%  45.00% … 57.00%      2
conv    activeCycles          2   1,200  —

flags    2
run  labels               group   field              value   band             direction
───  ───────────────────  ──────  ─────────────────  ──────  ───────────────  ─────────
r2   —                    matmul  usefulUtilization  52.00%  45.00% … 55.00%  rise
r3   branch=main host=ci  matmul  usefulUtilization  30.00%  45.00% … 57.00%  drop
FAIL     usefulUtilization:-5%: matmul usefulUtilization 51.00% → 30.00% in run r3 \
(a change point from run r2; baseline: the level before)
FAIL     activeCycles:+10%: conv activeCycles 1,000 → 1,200 in run r3
"""


def test_the_table_says_each_trend_its_flags_and_failures() -> None:
    """matmul's newest utilisation (30%) is below its band (45-57%), the second of its two
    flags; conv has a value in 2 of the 3 runs and no band for its newest. A run without
    labels shows "—"; utilisations are percentages, cycles counts."""
    assert render_table(HISTORY) == FULL


NARROW = """\
runs     3 (order: time; newest r3)
band     median ± max(3 × 1.4826 × MAD, 0.01 × |median|) of
         the previous 10 runs (at least 3)

group   field              newest  band             flags
──────  ─────────────────  ──────  ───────────────  ─────
matmul  usefulUtilization  30.00%  45.00% … 57.00%      2
conv    activeCycles        1,200  —
not shown: runs (a wider terminal or --format csv shows
them)

flags    2
run  group   field              value   direction
───  ──────  ─────────────────  ──────  ─────────
r2   matmul  usefulUtilization  52.00%  rise
r3   matmul  usefulUtilization  30.00%  drop
not shown: labels, band (a wider terminal or --format csv
shows them)
FAIL     usefulUtilization:-5%: matmul usefulUtilization
         51.00% → 30.00% in run r3 (a change point from run
         r2; baseline: the level before)
FAIL     activeCycles:+10%: conv activeCycles 1,000 → 1,200
         in run r3
"""


def test_a_narrow_terminal_names_what_it_leaves_out_and_breaks_long_lines() -> None:
    """At 60 columns the trend table gives up its run count, the flags table the labels and
    the band, each saying so; the header and FAIL lines break at spaces, continued under
    their value (9 columns in)."""
    text = render_table(HISTORY, 60)
    assert text == NARROW
    assert max(len(line) for line in text.splitlines()) <= 60


def test_a_history_with_nothing_stored_or_flagged_says_so() -> None:
    empty = History(runs=(), fields=("activeCycles",), trends=())
    assert render_table(empty).splitlines() == [
        "runs     0 (order: time; newest —)",
        "band     median ± max(3 × 1.4826 × MAD, 0.01 × |median|) of the previous 10 runs "
        "(at least 3)",
        "",
        "no stored statistics matched",
        "",
        "flags    0",
    ]


def test_a_change_point_is_said_in_its_fields_unit() -> None:
    """A utilisation's levels before and after a change are percentages, as its other
    figures are; a step from 0 has no relative size."""
    trends = (
        Trend("matmul", "usefulUtilization", (), (Change("r3", ChangePoint(3, 0.5, 0.4, 0.002)),)),
        Trend("conv", "activeCycles", (), (Change("r2", ChangePoint(2, 0.0, 1500.0, 0.004)),)),
    )
    history = History(runs=(), fields=(), trends=trends, change_points=True)
    assert change_lines(history) == [
        "changes  2 (E-Divisive means, p ≤ 0.01)",
        "  matmul usefulUtilization: from run r3 50.00% → 40.00% (-20.00%, confidence 99.8%)",
        "  conv activeCycles: from run r2 0 → 1,500 (—, confidence 99.6%)",
    ]


def test_the_csv_has_a_row_per_run_group_and_field_with_exact_values() -> None:
    """Values as stored (fractions, not percentages; repr, so they read back exactly), and an
    empty cell where a run has no value, band or flag."""
    assert render_csv(HISTORY).splitlines() == [
        "run,group,field,value,median,low,high,flag",
        "r1,matmul,usefulUtilization,0.5,,,,",
        "r2,matmul,usefulUtilization,0.52,0.5,0.45,0.55,rise",
        "r3,matmul,usefulUtilization,0.3,0.51,0.45,0.57,drop",
        "r1,conv,activeCycles,,,,,",
        "r2,conv,activeCycles,1000.0,,,,",
        "r3,conv,activeCycles,1200.0,,,,",
    ]


def test_long_run_and_group_names_lose_their_middle_in_the_flags() -> None:
    """On a terminal both name columns of the flags share what the other columns leave, each
    kept to its start and end (a run named by its date and build, a group by its kernel)."""
    run = "nightly-build-" + "x" * 60
    history = replace(
        HISTORY,
        runs=(*HISTORY.runs[:2], replace(HISTORY.runs[2], run=run)),
        trends=(
            Trend(
                "matmul-" + "y" * 60,
                "usefulUtilization",
                (Point(run, 0.3, 0.5, 0.45, 0.55, "drop"),),
            ),
        ),
        failures=(),
    )
    lines = render_table(history, 80).splitlines()
    flags = lines.index("flags    1")
    row = lines[flags + 3]
    assert row.split() == [
        "nightly-bu…xxxxxxxxx",
        "matmul-yyy…yyyyyyyyy",
        "usefulUtilization",
        "30.00%",
        "drop",
    ]
    assert max(len(line) for line in lines[flags:]) <= 80  # a name alone is never broken


def test_the_json_document_states_the_rule_runs_trends_flags_and_failures() -> None:
    """The document a CI job reads: every key as docs/store.md names it, indented by 2."""
    text = render_json(replace(HISTORY, change_points=True))
    assert text.startswith('{\n  "order": "time",\n  "fields": [\n    "usefulUtilization"')
    document = json.loads(text)
    assert document["fields"] == ["usefulUtilization", "activeCycles"]
    assert document["rule"] == {
        "previousRuns": 10,
        "minimumRuns": 3,
        "sigmas": 3.0,
        "madScale": 1.4826,
        "relativeFloor": 0.01,
    }
    assert document["runs"][2] == {
        "run": "r3",
        "labels": {"host": "ci", "branch": "main"},
        "source": "d.json",
        "addedAt": "2026-12-01T00:00:00+00:00",
    }
    assert document["trends"][0] == {
        "group": "matmul",
        "field": "usefulUtilization",
        "values": [0.5, 0.52, 0.3],
        "median": [None, 0.5, 0.51],
        "low": [None, 0.45, 0.45],
        "high": [None, 0.55, 0.57],
        "flags": [None, "rise", "drop"],
        "changePoints": [],
    }
    assert document["flags"][1] == {
        "run": "r3",
        "labels": {"host": "ci", "branch": "main"},
        "group": "matmul",
        "field": "usefulUtilization",
        "value": 0.3,
        "median": 0.51,
        "low": 0.45,
        "high": 0.57,
        "direction": "drop",
    }
    assert document["failures"] == [
        {
            "threshold": "usefulUtilization:-5%",
            "run": "r3",
            "group": "matmul",
            "field": "usefulUtilization",
            "baseline": 0.51,
            "value": 0.3,
            "changePoint": "r2",
        },
        {
            "threshold": "activeCycles:+10%",
            "run": "r3",
            "group": "conv",
            "field": "activeCycles",
            "baseline": 1000.0,
            "value": 1200.0,
        },
    ]
    assert "changePoints" not in json.loads(render_json(HISTORY))["trends"][0]


def test_the_verdict_counts_the_broken_thresholds_and_names_the_first() -> None:
    assert verdict(HISTORY) == (
        "tileprof: 2 thresholds failed for run r3: e.g. usefulUtilization:-5% (matmul)"
    )
    one = replace(HISTORY, failures=HISTORY.failures[1:])
    assert verdict(one) == "tileprof: 1 threshold failed for run r3: activeCycles:+10% (conv)"
