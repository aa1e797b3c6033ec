"""Regular expressions applied to text from inputs: linear time, bounded names.

Every pattern tileprof applies to text it read (a kernel, device or op name, a CSV cell, a spec
file's ``match`` against a device name, ``--match`` and ``--normalize`` against kernel names) is
compiled here, by RE2 (the ``google-re2`` package). RE2 never backtracks: its time is linear in
the text whatever the pattern, where Python's ``re`` took seconds to hours on a long name
(``"h100 " × 40,000`` against a pattern with ``.*`` after a look-behind). RE2 has no
look-arounds or back-references; a pattern that uses them is refused when it is compiled.

On top of that, a pattern sees at most ``NAME_PATTERN_LIMIT`` characters of a text: a search
(``search``, ``match``, ``finditer``, ``sub``) looks in its first ``NAME_PATTERN_LIMIT``
characters (``sub`` leaves the rest as it is), and a whole-text match (``fullmatch``) fails on a
longer text. docs/reliability.md states the limit.

Regular expressions handed to polars (``--kernel`` globs) run in Rust's ``regex`` crate, which is
linear too, and are not compiled here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import re2

NAME_PATTERN_LIMIT = 16_384
"""Characters of a text that a pattern sees (the longest real kernel names, C++ templates of
CUTLASS and ATen, are a few thousand)."""

PatternError = re2.error
"""What ``compile`` raises on a pattern RE2 cannot read (a look-around, a back-reference)."""

Match = Any
"""A match object: ``group``, ``groups``, ``start``, ``end``, ``span`` as in ``re``."""


def seen(text: str) -> str:
    """The part of ``text`` that a pattern sees: its first ``NAME_PATTERN_LIMIT`` characters."""
    return text[:NAME_PATTERN_LIMIT]


@dataclass(frozen=True)
class Pattern:
    """One compiled pattern; the methods read as ``re.Pattern``'s, on the text's seen part."""

    pattern: str
    _compiled: Any

    def search(self, text: str) -> Match | None:
        return self._compiled.search(seen(text))

    def match(self, text: str) -> Match | None:
        return self._compiled.match(seen(text))

    def fullmatch(self, text: str) -> Match | None:
        if len(text) > NAME_PATTERN_LIMIT:
            return None
        return self._compiled.fullmatch(text)

    def finditer(self, text: str) -> Iterator[Match]:
        return iter(self._compiled.finditer(seen(text)))

    def sub(self, replacement: str | Callable[[Match], str], text: str) -> str:
        head = seen(text)
        return str(self._compiled.sub(replacement, head)) + text[len(head) :]


def compile(pattern: str, *, ignore_case: bool = False, dot_all: bool = False) -> Pattern:
    """``pattern`` compiled by RE2; ``PatternError`` when RE2 cannot read it."""
    flags = ("i" if ignore_case else "") + ("s" if dot_all else "")
    options = re2.Options()
    options.log_errors = False  # RE2 would print its own line on stderr; the error says it
    return Pattern(pattern, re2.compile(f"(?{flags}){pattern}" if flags else pattern, options))


def escape(text: str) -> str:
    """``text`` as a pattern that matches exactly it."""
    return str(re2.escape(text))
