"""``core/patterns.py`` by hand: RE2's flags, what a pattern sees of a long text, and the
error on a pattern RE2 cannot read (issue 38; docs/reliability.md states the limit)."""

from __future__ import annotations

import pytest

from tileprof.core import patterns
from tileprof.core.patterns import NAME_PATTERN_LIMIT, PatternError, compile, escape, seen

LONG = "a" * NAME_PATTERN_LIMIT + "needle" + "b" * 10
"""A text whose ``needle`` lies just past what a pattern sees."""


def test_a_pattern_sees_the_head_of_a_text() -> None:
    assert seen(LONG) == "a" * NAME_PATTERN_LIMIT
    assert seen("short") == "short"
    needle = compile("needle")
    assert needle.search(LONG) is None
    assert needle.search("xx needle") is not None
    assert list(needle.finditer(LONG)) == []
    assert [m.span() for m in needle.finditer("needle, needle")] == [(0, 6), (8, 14)]


def test_match_is_anchored_at_the_start_and_fullmatch_at_both_ends() -> None:
    word = compile("ab+")
    found = word.match("abbc")
    assert found is not None and found.group() == "abb"
    assert word.match("cabb") is None
    assert word.fullmatch("abb") is not None
    assert word.fullmatch("abbc") is None
    anything = compile(".*")
    assert anything.fullmatch("a" * NAME_PATTERN_LIMIT) is not None
    assert anything.fullmatch("a" * (NAME_PATTERN_LIMIT + 1)) is None
    head = compile("a+").match(LONG)
    assert head is not None and head.end() == NAME_PATTERN_LIMIT


def test_sub_replaces_in_the_head_and_keeps_the_rest() -> None:
    digits = compile(r"\d+")
    assert digits.sub("#", "k12_v3") == "k#_v#"
    assert digits.sub(lambda m: f"<{m.group()}>", "k12") == "k<12>"
    text = "1" * NAME_PATTERN_LIMIT + "_22"
    assert digits.sub("#", text) == "#_22"


def test_flags_ignore_case_and_dot_all() -> None:
    assert compile("h100").search("NVIDIA H100") is None
    assert compile("h100", ignore_case=True).search("NVIDIA H100") is not None
    assert compile("a.b").search("a\nb") is None
    assert compile("a.b", dot_all=True).search("a\nb") is not None
    both = compile("a.B", ignore_case=True, dot_all=True)
    assert both.fullmatch("A\nb") is not None
    assert both.pattern == "a.B"


def test_a_look_around_is_refused_without_a_word_from_re2(
    capfd: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(PatternError):
        compile("(?<=x)h100")
    assert capfd.readouterr().err == ""


def test_escape_matches_exactly_the_text() -> None:
    dotted = compile(escape("a.b(c)"))
    assert dotted.fullmatch("a.b(c)") is not None
    assert dotted.fullmatch("axb(c)") is None
    assert isinstance(escape("x"), str)
    assert isinstance(compile("x"), patterns.Pattern)
