"""Sample filters: which samples a summary aggregates. Pure functions over the sample frame."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass

import polars as pl

from tileprof.errors import OptionError


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
    """A shell-style glob as a regex for polars (Rust's regex spells end-of-text ``\\z``)."""
    return fnmatch.translate(glob).replace("\\Z", "\\z")


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
        pattern = "|".join(f"^(?:{glob_to_regex(glob)})" for glob in filters.kernels)
        condition &= group_name().cast(pl.String).fill_null("").str.contains(pattern)
    if filters.kind is not None:
        condition &= pl.col("kind").cast(pl.String) == filters.kind
    return condition.fill_null(False)


def apply_filters(samples: pl.DataFrame, filters: Filters | None) -> pl.DataFrame:
    """The samples that match ``filters``, in their original order."""
    if filters is None or filters == Filters():
        return samples
    return samples.filter(filter_expression(filters))
