"""The text helpers (``tileprof/core/text.py``) called directly, each result worked out by hand
(issue 38: the views' tests reach them through whole tables and pages)."""

from __future__ import annotations

import pytest

from tileprof.core import text
from tileprof.core.text import (
    cell,
    display_name,
    distinct_shortened,
    escape_control,
    kernel_display_name,
    numbered,
    opening_byte,
    shorten,
    told_apart,
)


def test_shorten_keeps_the_longer_half_at_the_start() -> None:
    assert shorten("abcdefghij", 10) == "abcdefghij"
    assert shorten("abcdefghij", 9) == "abcd…ghij"  # head 4, tail 4
    assert shorten("abcdefghij", 5) == "ab…ij"
    assert shorten("abcdefghij", 4) == "ab…j"  # head 2, tail 1
    assert shorten("abcdefghij", 2) == "a…"  # no tail
    assert shorten("abcdefghij", 1) == "…"
    with pytest.raises(ValueError, match=r"^limit must be at least 1, not 0$"):
        shorten("abc", 0)


def test_cut_moves_the_ellipsis() -> None:
    assert text._cut("abcdefghij", 3, 6) == "abc…ij"
    assert text._cut("abcdefghij", 5, 6) == "abcde…"
    assert text._cut("abcdefghij", 1, 6) == "a…ghij"


def test_names_no_cut_separates_are_numbered_and_taken_cuts_are_avoided() -> None:
    # differ only where every cut of 4 drops: numbered, each still 4 long
    assert distinct_shortened(["aaaaabaaaa", "aaaaacaaaa"], 4) == ["a…~1", "a…~2"]
    # at 3 the number leaves room for the ellipsis alone
    assert distinct_shortened(["abXyz", "abYyz"], 3) == ["…~1", "…~2"]
    # the cut nearest the middle that keeps the difference: head 1, tail 3
    assert distinct_shortened(["abcdXef", "abcdYef"], 5) == ["a…Xef", "a…Yef"]
    # both head 1 and head 4 separate these: the nearer the middle first, the head's side
    assert distinct_shortened(["abcXYfg", "abcZWfg"], 5) == ["a…Yfg", "a…Wfg"]
    # head 3 and head 4 both separate: head 3, one from the middle (2), before head 4
    assert distinct_shortened(["abXdefg", "abYdefg"], 5) == ["abX…g", "abY…g"]
    # a different name already reads "a…Xef": no later cut separates, so numbered
    assert distinct_shortened(["abcdXef", "abcdYef", "a…Xef"], 5) == ["a…f~1", "a…f~2", "a…Xef"]
    # the difference at the start: the cut moves right (head 4)
    assert distinct_shortened(["abcXdef", "abcYdef", None], 5) == ["abcX…", "abcY…", None]


def test_cuts_that_would_meet_another_sets_are_made_together() -> None:
    """Two clashing pairs: alone, the second pair's cut would read as one of the first
    pair's, so the four are cut together."""
    names = ["PPaXQQ", "PPbXQQ", "PPaYQQ", "PPbYQQ"]
    # shorten(…, 5) gives "PP…QQ" for all four: one set of four, separated by head 3 then 4
    short = distinct_shortened(names, 5)
    assert len(set(short)) == 4 and all(s is not None and len(s) <= 5 for s in short)
    assert short == ["PPaX…", "PPbX…", "PPaY…", "PPbY…"]


def test_told_apart_numbers_in_order_of_first_appearance_within_the_limit() -> None:
    assert told_apart(["x", "x", "x", "y"], ["n2", "n1", "n2", "y"]) == ["x~1", "x~2", "x~1", "y"]
    shown = ["ab…yz", "ab…yz", "q"]
    full = ["ab_1_yz", "ab_2_yz", "q"]
    assert told_apart(shown, full) == ["ab…yz~1", "ab…yz~2", "q"]
    assert told_apart(shown, full, limit=6) == ["ab…z~1", "ab…z~2", "q"]  # room 4
    assert told_apart(shown, full, limit=7) == ["ab…yz~1", "ab…yz~2", "q"]  # room 5
    assert told_apart(["abc", "abc"], ["a", "b"], limit=2) == ["…~1", "…~2"]  # room at least 1


def test_numbered_counts_each_repeated_label() -> None:
    assert numbered(["a", "b", "a", "a", "c", "b"]) == ["a #1", "b #1", "a #2", "a #3", "c", "b #2"]
    assert numbered([]) == []


def test_escape_control_shows_every_control_character() -> None:
    raw = "a\x1b[31mb\x00\x07\t\n\r\x1f\x7f\x80\x85\x9f\xa0 c"
    assert escape_control(raw) == "a\\x1b[31mb\\x00\\x07\\t\\n\\r\\x1f\\x7f\\x80\\x85\\x9f\xa0 c"
    assert display_name("\x1b" * 200, 5) == "\\x1b\\x1b…\\x1b\\x1b"  # shortened, then escaped
    assert display_name("a" * 121) == "a" * 60 + "…" + "a" * 59  # 120 by default
    assert display_name("a" * 120) == "a" * 120


def test_cell_is_plain_text_or_a_dash() -> None:
    assert cell(None).plain == "—"
    assert cell("").plain == "—"
    bold = cell("[bold]x")
    assert bold.plain == "[bold]x" and not bold.spans
    assert cell("abcdefgh", 5).plain == "ab…gh"
    assert cell("a" * 121).plain == "a" * 60 + "…" + "a" * 59


def test_template_ends_and_unqualified_names() -> None:
    assert text._template_end("a<b<c>>d", 1) == 7
    assert text._template_end("a<b<c>d", 1) == 7  # unclosed: the end of the text
    assert text._unqualified("a::b<c::d>::e(f::g)") == "e(f::g)"
    assert text._unqualified("a:b") == "a:b"
    assert text._unqualified("a<b<c>>::d") == "d"  # nested templates close to depth 0
    assert text._unqualified("::x") == "x"
    assert text._unqualified("a::b(c)::d") == "d"


def test_functor_of_template_arguments() -> None:
    assert text._functor("4, ns::AddFunctor<float>, x") == "AddFunctor<float>"
    assert text._functor("ns::AddFunctor, x") == "AddFunctor"
    # template arguments longer than the name plus 24: the bare name
    long = "ns::AddFunctor<" + "f" * 25 + ">"
    assert text._functor(long) == "AddFunctor"
    assert text._functor("ns::AddFunctor<" + "f" * 22 + ">") == "AddFunctor<" + "f" * 22 + ">"
    assert text._functor("a::MeanOps<float>, b::SumOps") == "SumOps"  # the last one
    assert text._functor("int, float") is None
    assert text._functor("4, ns::copy_impl(int)::{lambda(int)#1}") == "copy_impl"
    assert text._functor("ns::BinaryFunctor<f, ns::relu_impl(int) const::{lambda(f)#1}>") == (
        "relu_impl"
    )


def test_kernel_display_name_by_hand() -> None:
    with pytest.raises(ValueError, match=r"^limit must be at least 8, not 7$"):
        kernel_display_name("k", 7)
    assert kernel_display_name("k", 8) == "k"
    assert kernel_display_name("void  ns::foo(int)") == "foo"
    assert kernel_display_name("voidk<int>") == "voidk<int>"
    assert kernel_display_name("  a::b::k<int>(float)  ") == "k<int>"
    assert kernel_display_name("f(a<b>)") == "f"
    assert kernel_display_name("Memset (Device)") == "Memset (Device)"
    assert kernel_display_name("(anonymous namespace)::k<int>") == "k<int>"
    assert kernel_display_name("k<(anonymous namespace)::F>") == "k<F>"  # dropped everywhere
    assert kernel_display_name("\x1bk<int>") == "\\x1bk<int>"
    name = "ns::kern<4, ns::AddFunctor<float>, " + "x" * 50 + ">"
    assert kernel_display_name(name, 30) == "kern<…AddFunctor<float>…>"  # 25: the functor whole
    assert kernel_display_name(name, 25) == "kern<…AddFunctor<float>…>"
    assert kernel_display_name(name, 24) == "kern<…AddFunctor…>"  # its arguments dropped
    assert kernel_display_name(name, 15) == "…<…AddFunctor…>"  # room 1 for the kernel
    assert kernel_display_name(name, 14) == "AddFunctor"  # no room for the kernel
    longer = "ns::kernel_name<4, ns::AddFunctor<float>, " + "x" * 50 + ">"
    assert kernel_display_name(longer, 22) == "kern…ame<…AddFunctor…>"  # the kernel in 8
    assert kernel_display_name("kern<" + "a" * 70 + ">", 20) == "kern<aaaaa…aaaaaaaa>"
    # the functor as the first template argument, from its first letter
    assert kernel_display_name("k<AddFunctor, " + "x" * 60 + ">", 30) == "k<…AddFunctor…>"
    # only the first 10,000 characters are read: the "<" past them is not seen
    assert kernel_display_name("a" * 10_000 + "<int>") == "a" * 30 + "…" + "a" * 29


def test_opening_byte_skips_ascii_whitespace_only() -> None:
    assert opening_byte(b"  \n\t{x") == b"{"
    assert opening_byte(b"\x0b\x0c\r[") == b"["
    assert opening_byte(b"") == b""
    assert opening_byte(b" \n ") == b""
    assert opening_byte(b"\xa0{") == b"\xa0"
