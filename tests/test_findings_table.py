"""``findings`` as text and JSON from findings made by hand: the table, the sentences below
it, the footer, each wrapped as a reader sees them, and the JSON document exactly."""

from __future__ import annotations

import datetime
import json

import pytest

from tileprof.analyses.findings import (
    ABSTAINED,
    CLEAR,
    FIRED,
    NOT_APPLICABLE,
    Condition,
    Finding,
    Rule,
)
from tileprof.views.findings_table import (
    applicable,
    not_applicable_line,
    render,
    render_json,
)


def _rule(rule_id: str, source: str = "breakdown", *, share: bool = False) -> Rule:
    return Rule(
        id=rule_id,
        source=source,
        conditions=(Condition("idle_share", "idle_us / total_us", ">", 0.1, share=share),),
        floor=Condition("floor", "idle_us", ">=", 5.0),
        rank="idle_us",
        message="",
        needs="a trace",
    )


FOUND = [
    Finding(
        _rule("host-bound", share=True),
        FIRED,
        "host-bound: rank 0 GPU 0 is idle 120 µs of 400 µs [bold]30%[/bold]",
        values={"idle_share": 0.3},
        count=3,
        rows=12,
    ),
    Finding(
        _rule("imbalance", "groups"), CLEAR, "no group over", {}, {"idle_share": 1234.5}, 0, 1200
    ),
    Finding(_rule("straggler", "collectives"), ABSTAINED, "no collectives matched across ranks"),
    Finding(_rule("exchange-heavy", "groups"), NOT_APPLICABLE, "needs a tile dump"),
    Finding(_rule("sync-wait", "supersteps"), NOT_APPLICABLE, "needs supersteps"),
]


SEEN = """\
status    ┃ rule       ┃ source      ┃       rows ┃ metric             ┃  value ┃ threshold
━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━╇━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━╇━━━━━━━━━━
fired     │ host-bound │ breakdown   │    3 of 12 │ idle_us / total_us │ 30.00% │ > 10.00%
clear     │ imbalance  │ groups      │ 0 of 1,200 │ idle_us / total_us │  1,234 │ > 0.1000
abstained │ straggler  │ collectives │          — │ idle_us / total_us │      — │ > 0.1000

findings:
- host-bound: rank 0 GPU 0 is idle 120 µs of 400 µs [bold]30%[/bold]

abstained:
- straggler: no collectives matched across ranks

2 rules do not apply to these inputs: exchange-heavy, sync-wait
"""


def test_the_findings_as_a_reader_sees_them() -> None:
    """Figures right-aligned (rows, value), a share as a percentage, the sentences' text as
    written (no markup read), abstentions with their rule's id, then the footer."""
    assert render(FOUND) == SEEN


def test_abstentions_are_listed_without_a_fired_finding() -> None:
    text = render(FOUND[1:3], 200)
    assert "findings:" not in text
    assert text.endswith("\nabstained:\n- straggler: no collectives matched across ranks\n")


def test_sentences_wrap_at_forty_columns_or_the_width_and_keep_their_hyphens() -> None:
    # "- " and 30 x and 8 y: 41 columns, one more than the narrowest wrap
    fired = Finding(_rule("a"), FIRED, "x" * 30 + " " + "y" * 8)
    hyphen = Finding(_rule("b"), ABSTAINED, "x" * 27 + " yy-zzzzzz")
    # "1 rule does not apply to these inputs: ab": 41 columns
    footer = Finding(_rule("ab"), NOT_APPLICABLE, "")
    lines = render([fired, hyphen, footer], 30).splitlines()
    assert lines[lines.index("findings:") + 1 :] == [
        "- " + "x" * 30,
        "  " + "y" * 8,
        "",
        "abstained:",
        "- b: " + "x" * 27,
        "  yy-zzzzzz",
        "",
        "1 rule does not apply to these inputs:",
        "ab",
    ]
    wide = render([fired, footer], 60).splitlines()
    assert "- " + "x" * 30 + " " + "y" * 8 in wide
    assert wide[-1] == "1 rule does not apply to these inputs: ab"


def test_the_footer_breaks_between_ids_not_inside_one() -> None:
    # 38 columns of words, then an id whose hyphen falls before column 50
    ids = [Finding(_rule(r), NOT_APPLICABLE, "") for r in ("abcdefgh-ijkl", "z")]
    assert render(ids, 50).splitlines() == [
        "2 rules do not apply to these inputs:",
        "abcdefgh-ijkl, z",
    ]


def test_which_findings_are_rows_and_which_the_footer_counts() -> None:
    assert [f.rule.id for f in applicable(FOUND)] == ["host-bound", "imbalance", "straggler"]
    assert not_applicable_line(FOUND[:3]) is None
    assert (
        not_applicable_line(FOUND[3:4]) == "1 rule does not apply to these inputs: exchange-heavy"
    )
    assert render(FOUND[3:]) == "2 rules do not apply to these inputs: exchange-heavy, sync-wait\n"
    # the footer is text, not markup
    bracketed = [Finding(_rule("a[b]"), NOT_APPLICABLE, "")]
    assert render(bracketed) == "1 rule does not apply to these inputs: a[b]\n"


def test_the_json_document_exactly() -> None:
    cited = Finding(
        _rule("host-bound"),
        FIRED,
        "idle 5 µs",
        {"day": datetime.date(2026, 12, 6), "idle_us": float("nan")},
        {"idle_share": 0.5},
        1,
        2,
    )
    text = render_json([cited, FOUND[3]])
    assert text == (
        "{\n"
        '  "findings": [\n'
        "    {\n"
        '      "id": "host-bound",\n'
        '      "status": "fired",\n'
        '      "message": "idle 5 µs",\n'
        '      "source": "breakdown",\n'
        '      "thresholds": {\n'
        '        "idle_share": {\n'
        '          "metric": "idle_us / total_us",\n'
        '          "comparison": ">",\n'
        '          "threshold": 0.1\n'
        "        },\n"
        '        "floor": {\n'
        '          "metric": "idle_us",\n'
        '          "comparison": ">=",\n'
        '          "threshold": 5.0\n'
        "        }\n"
        "      },\n"
        '      "values": {\n'
        '        "idle_share": 0.5\n'
        "      },\n"
        '      "count": 1,\n'
        '      "rows": 2,\n'
        '      "row": {\n'
        '        "day": "2026-12-06",\n'
        '        "idle_us": null\n'
        "      }\n"
        "    }\n"
        "  ],\n"
        '  "not_applicable": [\n'
        "    {\n"
        '      "id": "exchange-heavy",\n'
        '      "source": "groups",\n'
        '      "reason": "needs a tile dump"\n'
        "    }\n"
        "  ]\n"
        "}\n"
    )
    assert json.loads(text)["findings"][0]["row"]["day"] == "2026-12-06"


def test_the_json_never_writes_a_figure_json_cannot_read() -> None:
    """A threshold that is not finite (an overrides file's ``inf``) is refused, not written as
    ``Infinity``, which strict JSON readers reject."""
    rule = _rule("host-bound")
    endless = Rule(**{**rule.__dict__, "floor": Condition("floor", "idle_us", ">=", float("inf"))})
    with pytest.raises(ValueError, match="not JSON compliant"):
        render_json([Finding(endless, CLEAR, "clear")])
