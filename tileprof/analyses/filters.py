"""Sample filters: which samples a summary aggregates. Pure functions over the sample frame."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from tileprof.core.errors import OptionError


@dataclass(frozen=True)
class Filters:
    """The filters of ``summary``; an empty ``Filters()`` matches every sample.

    ``at`` keeps samples active at that cycle (offset ≤ at < offset + duration). ``window``
    keeps samples that overlap the half-open window [start, end). ``kernels`` are globs matched
    against the group name (the kernel, or the kind for samples with no kernel).
    """

    epoch: int | None = None
    at: int | None = None
    window: tuple[int, int] | None = None
    kernels: tuple[str, ...] = ()
    kind: str | None = None

    def __post_init__(self) -> None:
        # The Python API takes what a user would naturally write: one glob as a string, a
        # window as "START:END"; anything else of the wrong shape is refused here, not later.
        kernels: object = self.kernels
        if isinstance(kernels, str):
            kernels = (kernels,)
        if not isinstance(kernels, (tuple, list)) or not all(isinstance(k, str) for k in kernels):
            raise OptionError(f"kernels: expected glob strings, not {self.kernels!r}")
        object.__setattr__(self, "kernels", tuple(kernels))
        window: object = self.window
        if isinstance(window, str):
            window = parse_window(window)
        if window is not None:
            if not (
                isinstance(window, (tuple, list))
                and len(window) == 2
                and all(isinstance(v, int) and not isinstance(v, bool) for v in window)
                and 0 <= window[0] < window[1]
            ):
                raise OptionError(
                    f"window: expected (START, END) with 0 ≤ START < END, not {window!r}"
                )
            object.__setattr__(self, "window", (window[0], window[1]))
        for name in ("epoch", "at"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
                raise OptionError(f"{name}: expected an integer, not {value!r}")
        if self.kind is not None and not isinstance(self.kind, str):
            raise OptionError(f"kind: expected a string, not {self.kind!r}")

    def describe(self) -> list[str]:
        """Each applied filter as the command-line option that sets it."""
        parts: list[str] = []
        if self.epoch is not None:
            parts.append(f"--epoch {self.epoch}")
        if self.at is not None:
            parts.append(f"--at {self.at}")
        if self.window is not None:
            parts.append(f"--window {self.window[0]}:{self.window[1]}")
        parts.extend(f"--kernel {glob}" for glob in self.kernels)
        if self.kind is not None:
            parts.append(f"--kind {self.kind}")
        return parts


def parse_window(text: str) -> tuple[int, int]:
    """``START:END`` in cycles, END > START ≥ 0."""
    start_text, sep, end_text = text.partition(":")
    try:
        if not sep:
            raise ValueError
        start, end = int(start_text), int(end_text)
    except ValueError:
        raise OptionError(
            f"--window {text!r}: expected START:END in cycles, e.g. 200000:260000"
        ) from None
    if start < 0 or end <= start:
        raise OptionError(f"--window {text!r}: need 0 ≤ START < END")
    return start, end


def glob_to_regex(glob: str) -> str:
    """A shell-style glob (``*``, ``?``, ``[seq]``, ``[!seq]``) as an anchored regex for polars.

    Written out rather than taken from ``fnmatch.translate``, whose output (atomic groups on
    Python 3.11+, ``\\Z``) polars' regex engine rejects.
    """
    parts: list[str] = []
    i, n = 0, len(glob)
    while i < n:
        char = glob[i]
        i += 1
        if char == "*":
            parts.append(".*")
        elif char == "?":
            parts.append(".")
        elif char == "[":
            start = i + 1 if i < n and glob[i] == "!" else i
            start = start + 1 if start < n and glob[start] == "]" else start
            close = glob.find("]", start)
            if close < 0:
                parts.append(re.escape(char))
                continue
            body = glob[i:close]
            i = close + 1
            negate = body.startswith("!")
            body = body[1:] if negate else body
            escaped = "".join("\\" + c if c in "\\^[]" else c for c in body)
            parts.append(f"[{'^' if negate else ''}{escaped}]")
        else:
            parts.append(re.escape(char))
    return "(?s)^" + "".join(parts) + "$"


def group_name() -> pl.Expr:
    """A sample's group: its kernel, or its kind when the kernel is missing or empty.

    Keeps the columns' categorical type, so naming a million samples builds no strings.
    """
    kernel = pl.col("kernel")
    return pl.when(kernel.is_not_null() & (kernel != "")).then(kernel).otherwise(pl.col("kind"))


def filter_expression(filters: Filters) -> pl.Expr:
    """One boolean expression for all filters (True where a sample matches)."""
    condition = pl.lit(True)
    end = pl.col("offset") + pl.col("duration")
    if filters.epoch is not None:
        condition &= pl.col("epoch") == filters.epoch
    if filters.at is not None:
        condition &= (pl.col("offset") <= filters.at) & (end > filters.at)
    if filters.window is not None:
        start, stop = filters.window
        overlaps = (pl.col("offset") < stop) & (end > start)
        instant_inside = (pl.col("duration") == 0) & pl.col("offset").is_between(
            start, stop, "left"
        )
        condition &= overlaps | instant_inside
    if filters.kernels:
        pattern = "|".join(f"(?:{glob_to_regex(glob)})" for glob in filters.kernels)
        condition &= group_name().cast(pl.String).fill_null("").str.contains(pattern)
    if filters.kind is not None:
        condition &= pl.col("kind").cast(pl.String) == filters.kind
    return condition.fill_null(False)


def apply_filters(samples: pl.DataFrame, filters: Filters | None) -> pl.DataFrame:
    """The samples that match ``filters``, in their original order."""
    if filters is None or filters == Filters():
        return samples
    try:
        return samples.filter(filter_expression(filters))
    except pl.exceptions.ComputeError as exc:
        if not filters.kernels:
            raise
        first = str(exc).strip().splitlines()[0]
        raise OptionError(
            f"--kernel {' '.join(filters.kernels)!r}: not a usable glob ({first})"
        ) from None


def check_epoch(samples: pl.DataFrame, epoch: int | None) -> None:
    """Every command's one meaning of an epoch that is not there: an OptionError naming the
    epochs that are (exit 2), not an empty result."""
    if epoch is None or samples.filter(pl.col("epoch") == epoch).height:
        return
    epochs = samples.get_column("epoch").drop_nulls().unique().sort().to_list()
    known = ", ".join(str(e) for e in epochs) if epochs else "none"
    raise OptionError(f"--epoch {epoch}: no samples in that epoch (epochs: {known})")


def present_epochs_and_groups(samples: pl.DataFrame, shown: int = 12) -> list[str]:
    """The epochs and group names a profile holds, for a filter that matched nothing."""
    from tileprof.core.text import shorten

    epochs = samples.get_column("epoch").drop_nulls().unique().sort().to_list()
    names = (
        samples.select(group_name().cast(pl.String).alias("name"))
        .get_column("name")
        .drop_nulls()
        .unique()
        .sort()
        .to_list()
    )

    def listed(values: list[object]) -> str:
        more = f", … ({len(values)} in all)" if len(values) > shown else ""
        return (", ".join(shorten(str(v), 60) for v in values[:shown]) + more) or "none"

    return [f"epochs present: {listed(epochs)}", f"groups present: {listed(names)}"]
