"""Small text helpers shared by the terminal and linked-set renderings."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tileprof.core import patterns

if TYPE_CHECKING:
    from rich.text import Text


def shorten(text: str, limit: int) -> str:
    """``text`` in at most ``limit`` characters with the middle elided ("…"), keeping the start
    and the distinguishing end (``gemm_f16_init_…_r121_r122``). Linear in ``limit``: only the
    kept ends are copied, so a name of 200 MB costs no more than a short one."""
    if limit < 1:
        raise ValueError(f"limit must be at least 1, not {limit}")
    if len(text) <= limit:
        return text
    tail = (limit - 1) // 2
    head = limit - 1 - tail
    return text[:head] + "…" + (text[-tail:] if tail else "")


def _cut(text: str, head: int, limit: int) -> str:
    tail = limit - 1 - head
    return text[:head] + "…" + (text[-tail:] if tail else "")


def distinct_shortened(names: Sequence[str | None], limit: int) -> list[str | None]:
    """Every name ``shorten``ed to ``limit``, except that different names which would shorten
    to the same text keep more of the part that tells them apart: the cut moves (less head,
    more tail, or the other way) until they differ, and where no one cut separates them they
    are numbered (``…_b64x16~2``). Names whose new cuts would meet are cut together, so a
    shortened name never reads as another's. Equal names stay equal; None stays None."""
    short = [None if n is None else shorten(n, limit) for n in names]
    fulls_by_short: dict[str, set[str]] = {}
    for name, cut in zip(names, short, strict=True):
        if name is not None and cut is not None:
            fulls_by_short.setdefault(cut, set()).add(name)
    fixed = {cut for cut, fulls in fulls_by_short.items() if len(fulls) == 1}
    clashes = [fulls for fulls in fulls_by_short.values() if len(fulls) > 1]
    renamed = _separate_all(clashes, limit, fixed)
    return [None if n is None else renamed.get(n, s) for n, s in zip(names, short, strict=True)]


def _separate_all(clashes: list[set[str]], limit: int, fixed: set[str]) -> dict[str, str]:
    """Cuts for every clashing set, merging two sets whose cuts would meet and trying again."""
    while True:
        renamed: dict[str, str] = {}
        owner: dict[str, int] = {}
        merged = False
        for index, fulls in enumerate(clashes):
            cuts = _separate(sorted(fulls), limit, fixed)
            met = {owner[c] for c in cuts.values() if c in owner}
            if met:  # cut together with the sets whose texts these cuts meet
                for other in met:
                    fulls.update(clashes[other])
                clashes = [c for i, c in enumerate(clashes) if i not in met]
                merged = True
                break
            renamed.update(cuts)
            owner.update(dict.fromkeys(cuts.values(), index))
        if not merged:
            return renamed


def _separate(fulls: Sequence[str], limit: int, taken: set[str]) -> dict[str, str]:
    """Shortened forms of ``fulls`` (all longer than ``limit``) that differ from each other
    and from ``taken``: the cut nearest the middle that separates them, else numbered."""
    middle = limit - 1 - (limit - 1) // 2
    for offset in range(1, limit):
        for head in (middle - offset, middle + offset):
            if not 1 <= head <= limit - 1:
                continue
            cuts = [_cut(f, head, limit) for f in fulls]
            if len(set(cuts)) == len(cuts) and not taken.intersection(cuts):
                return dict(zip(fulls, cuts, strict=True))
    return {
        full: shorten(full, max(1, limit - len(f"~{index}"))) + f"~{index}"
        for index, full in enumerate(fulls, start=1)
    }


def told_apart(shown: Sequence[str], full: Sequence[str], limit: int | None = None) -> list[str]:
    """``shown`` labels (already shortened) where two different ``full`` names read alike
    numbered apart (``…_b64x16~1``, ``…_b64x16~2``, in order of first appearance), each
    still at most ``limit`` characters; equal full names keep equal labels, so a ditto mark
    still means "the same"."""
    fulls_by_label: dict[str, dict[str, int]] = {}
    for label, name in zip(shown, full, strict=True):
        seen = fulls_by_label.setdefault(label, {})
        seen.setdefault(name, len(seen) + 1)

    def apart(label: str, name: str) -> str:
        suffix = f"~{fulls_by_label[label][name]}"
        room = len(label) if limit is None else min(len(label), limit - len(suffix))
        return shorten(label, max(1, room)) + suffix

    return [
        label if len(fulls_by_label[label]) == 1 else apart(label, name)
        for label, name in zip(shown, full, strict=True)
    ]


def numbered(labels: Sequence[str]) -> list[str]:
    """``labels`` with every repeated one numbered (``bf16 · #1``, ``bf16 · #2``): the bars of
    a chart each stand for their own row, so no two may carry the same label."""
    counts: dict[str, int] = {}
    for label in labels:
        counts[label] = counts.get(label, 0) + 1
    seen: dict[str, int] = {}
    out = []
    for label in labels:
        if counts[label] == 1:
            out.append(label)
            continue
        seen[label] = seen.get(label, 0) + 1
        out.append(f"{label} #{seen[label]}")
    return out


_CONTROL = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)}
_CONTROL.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})
_CONTROL_TABLE = str.maketrans({chr(c): text for c, text in _CONTROL.items()})
_C1_TABLE = str.maketrans({chr(c): f"\\x{c:02x}" for c in range(0x80, 0xA0)})


def escape_control(text: str) -> str:
    """``text`` with control characters (ESC, NUL, BEL, newlines, C1) shown as escapes, so a
    name from a file cannot move the cursor, ring the bell or break a line on a terminal."""
    return text.translate(_CONTROL_TABLE).translate(_C1_TABLE)


DISPLAY_NAME_LIMIT = 120
"""Longest name a terminal or HTML view shows whole; longer ones lose their middle."""


def display_name(text: str, limit: int = DISPLAY_NAME_LIMIT) -> str:
    """A name from an input as a view shows it: middle elided past ``limit``, then control
    characters escaped (shortening first, so the escaping is bounded too)."""
    return escape_control(shorten(text, limit))


def cell(text: str | None, limit: int = DISPLAY_NAME_LIMIT) -> Text:
    """A table cell for a name from an input: ``display_name`` as plain text (a ``[bold]`` in a
    kernel name is not rich markup), "—" when there is none."""
    from rich.text import Text

    return Text(display_name(text, limit) if text else "—")


KERNEL_NAME_LIMIT = 60
"""Longest CUDA kernel name a kernel table shows; the full name is in the cell's title."""
_PARSE_LIMIT = 10_000
"""Characters of a kernel name searched for its functor (bounds the work on huge names)."""
_FUNCTOR = patterns.compile(r"[A-Za-z_]\w*(?:Functor|functor)\w*|[A-Za-z_]\w*Ops\b")
_LAMBDA_HOST = patterns.compile(r"([A-Za-z_]\w*)(?:<[^<>()]*>)?\([^()]*\)(?:\s*const)?::\{lambda")
_PARAMETERS = patterns.compile(r"[\w>]\(")


def _template_end(text: str, start: int) -> int:
    """Index just past the ``>`` closing the ``<`` at ``start`` (len(text) when unclosed)."""
    depth = 0
    for i in range(start, len(text)):
        char = text[i]
        if char == "<":
            depth += 1
        elif char == ">":
            depth -= 1
            if depth == 0:
                return i + 1
    return len(text)


def _unqualified(name: str) -> str:
    """``at::native::elementwise_kernel`` → ``elementwise_kernel`` (top-level ``::`` only)."""
    depth = 0
    cut = 0
    for i, char in enumerate(name):
        if char in "<(":
            depth += 1
        elif char in ">)":
            depth -= 1
        elif char == ":" and depth == 0 and name.startswith("::", i):
            cut = i + 2
    return name[cut:]


def _functor(arguments: str) -> str | None:
    """The distinguishing functor in a kernel's template arguments: the innermost
    ``…Functor``/``…functor``/``…Ops`` name (with its template arguments when short), else the
    function whose lambda the kernel runs (``direct_copy_kernel_cuda``)."""
    found = list(_FUNCTOR.finditer(arguments))
    if found:
        match = found[-1]
        name = match.group(0)
        if arguments.startswith("<", match.end()):
            full = arguments[match.start() : _template_end(arguments, match.end())]
            host = _LAMBDA_HOST.search(full)
            if host is not None:  # a wrapper (BinaryFunctor<…>) of a lambda: name the lambda's
                return host.group(1)
            if len(full) <= len(name) + 24:
                return full
        return name
    host = _LAMBDA_HOST.search(arguments)
    return None if host is None else host.group(1)


def kernel_display_name(name: str, limit: int = KERNEL_NAME_LIMIT) -> str:
    """A template-heavy CUDA kernel name shortened for a table, in at most ``limit`` characters:
    no ``void``, namespaces or parameter list, and its template arguments reduced to the
    functor that tells launches of one kernel apart::

        void at::native::elementwise_kernel<128, 2, at::native::gpu_kernel_impl<
            at::native::CUDAFunctor_add<float>>…>(int, …)
        → elementwise_kernel<…CUDAFunctor_add<float>…>

    Names without templates (``sm80_xmma_gemm_…``) only lose their middle past ``limit``
    (``shorten``). Control characters are escaped first, as in ``display_name``.
    """
    if limit < 8:
        raise ValueError(f"limit must be at least 8, not {limit}")
    text = escape_control(name[:_PARSE_LIMIT].strip()).replace("(anonymous namespace)::", "")
    if text.startswith("void "):
        text = text[5:].lstrip()
    opening = text.find("<")
    parameters = _PARAMETERS.search(text)
    paren = -1 if parameters is None else parameters.start() + 1
    if opening < 0 or (0 <= paren < opening):
        base = text if paren < 0 else text[:paren]
        return shorten(_unqualified(base) if paren >= 0 else base, limit)
    close = _template_end(text, opening)
    kernel = _unqualified(text[:opening])
    arguments = text[opening:close]
    whole = kernel + arguments
    if len(whole) <= limit:
        return whole
    functor = _functor(arguments[1:-1])
    if functor is None:
        return shorten(whole, limit)
    if "<" in functor and len(kernel) + len(functor) + 4 > limit:
        functor = functor[: functor.index("<")]
    room = limit - len(functor) - 4
    if room < 1:
        return shorten(functor, limit)
    return f"{shorten(kernel, room)}<…{functor}…>"


_LEADING_SPACE = re.compile(rb"\s*")


def opening_byte(data: bytes) -> bytes:
    """The first byte of ``data`` that is not ASCII whitespace (b"" when there is none), as
    ``data.lstrip()[:1]`` is, without copying a file that starts with a newline (PyTorch
    writes one before its trace)."""
    start = _LEADING_SPACE.match(data)
    assert start is not None  # \s* matches the empty string
    return data[start.end() : start.end() + 1]
