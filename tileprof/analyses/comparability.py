"""What makes two runs comparable, and how two runs differ in it (docs/store.md,
"Comparability").

A verdict compares one figure of two runs; it means something only when the runs differ in
the work and not in what the figure depends on: the device, its clock, its tile count, the
software the trace states (PyTorch, CUDA or ROCm runtime and driver, tt-metal), and, for the
trace of one rank of a job, which rank of how many it is. A field a side does not state is
not compared (nothing says it differs); a field both state and that differs is named, so a
gate can refuse its verdict and say why.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from tileprof.core.numbers import duration_us

VERDICT_FIELDS: tuple[str, ...] = (
    "device",
    "clockHz",
    "tileCount",
    "pytorch",
    "cudaRuntime",
    "cudaDriver",
    "driver",
    "rocm",
    "ttMetal",
    "rank",
)
"""The fields a gate compares: the figures depend on each. ``rank`` (``rank_field``): two
ranks of one job differ in their share of the work and in their waits for each other, so a
change between them is not a change between runs."""

RECORDED_FIELDS: tuple[str, ...] = (*VERDICT_FIELDS, "host", "commit", "tileprofVersion")
"""Every field a run records; host, commit and tileprof's version are shown, not compared
(CI runners change hosts; a commit is what a gate compares across)."""

COMMIT_VARIABLES: tuple[str, ...] = ("GITHUB_SHA", "CI_COMMIT_SHA")
"""Where a CI states the commit it builds (GitHub Actions, GitLab CI), read when no
``--label commit=…`` is given."""

Environment = Mapping[str, object]


def rank_field(rank: int, world_size: int, backend: str | None) -> str:
    """The ``rank`` a PyTorch trace's ``distributedInfo`` states, as compared and shown:
    ``0 of 128 (nccl)``."""
    return f"{rank} of {world_size}" + (f" ({backend})" if backend else "")


def differences(before: Environment, after: Environment) -> list[str]:
    """One ``field before → after`` per ``VERDICT_FIELDS`` field that both state and that
    differs, in that order."""
    found = []
    for name in VERDICT_FIELDS:
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old != new:
            found.append(f"{name} {old} → {new}")
    return found


def setup_difference(before: Environment, after: Environment) -> str | None:
    """``the two sides differ in …`` (every field ``differences`` names), or None when the
    two sides differ in none that both state."""
    found = differences(before, after)
    return f"the two sides differ in {', '.join(found)}" if found else None


def setup_note(before: Environment, after: Environment, said: Sequence[str] = ()) -> str | None:
    """What a comparison says first when its sides ran on different setups: its changes are
    the setup's as much as the code's. None: the same setup, as far as both state, or a line
    of ``said`` (a gate's abstention) already names the difference."""
    line = setup_difference(before, after)
    if line is None or any(s.endswith(line) for s in said):
        return None
    ranks = _other_rank(before, after)
    if ranks is not None:
        return ranks
    return f"not the same setup: {line}; every change below is the setup's as much as the code's"


def _other_rank(before: Environment, after: Environment) -> str | None:
    """The note for the traces of two ranks of one job size (the sides differ in ``rank``
    alone): captured over the same time, they are one run and the changes are between two of
    its GPUs; captured apart, two runs; with a capture window unknown, either."""
    differ = differences(before, after)
    old, new = (_RANK.fullmatch(str(side.get("rank"))) for side in (before, after))
    if old is None or new is None or len(differ) != 1 or not differ[0].startswith("rank "):
        return None
    if old.group(2, 3) != new.group(2, 3):
        return None  # jobs of another size or backend: a setup difference as any other
    backend = f"{old.group(3)}, " if old.group(3) else ""
    ranks = (
        f"not the same rank: before is rank {old.group(1)} and after rank {new.group(1)} of a "
        f"job of {old.group(2)} ranks ({backend}distributedInfo)"
    )
    apart = _apart_us(before.get(CAPTURE), after.get(CAPTURE))
    if apart is None:
        return (
            f"{ranks}; if both are of one run, every change below is between two of its GPUs, "
            "not between runs (compare one rank of each run; `tileprof breakdown` compares the "
            "ranks of one job)"
        )
    if apart == 0:
        return (
            f"{ranks}, captured over the same time: two GPUs of one run, so every change "
            "below is between them, not between runs (`tileprof breakdown` compares the ranks "
            "of one job)"
        )
    return (
        f"{ranks}, captured {duration_us(apart)} apart: two runs, so every change below mixes "
        "the change between them with the difference between two ranks (compare the same "
        "rank of each run)"
    )


CAPTURE = "captureNs"
"""A trace's capture window in Unix ns, (start, end) (``inputs.gpu.kineto_clock``): shown
nowhere and not compared; it tells two ranks of one run from two runs."""


def _apart_us(before: object, after: object) -> float | None:
    """How far apart two capture windows lie, in µs: 0 when they overlap, None when either
    is unknown."""
    if not isinstance(before, tuple) or not isinstance(after, tuple):
        return None
    (start0, end0), (start1, end1) = before, after
    return max(start0 - end1, start1 - end0, 0) / 1000


_RANK = re.compile(r"(\d+) of (\d+)(?: \((.+)\))?")
"""``rank_field``'s text: the rank, the job's size, its backend."""


def stated(environment: Environment) -> dict[str, object]:
    """The fields ``environment`` states (None left out), in ``RECORDED_FIELDS`` order."""
    return {k: environment[k] for k in RECORDED_FIELDS if environment.get(k) is not None}
