"""What makes two runs comparable, and how two runs differ in it (docs/store.md,
"Comparability").

A verdict compares one figure of two runs; it means something only when the runs differ in
the work and not in what the figure depends on: the device, its clock, its tile count, and
the software the trace states (PyTorch, CUDA or ROCm runtime and driver, tt-metal). A field
a side does not state is not compared (nothing says it differs); a field both state and
that differs is named, so a gate can refuse its verdict and say why.
"""

from __future__ import annotations

from collections.abc import Mapping

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
)
"""The fields a gate compares: the figures depend on each."""

RECORDED_FIELDS: tuple[str, ...] = (*VERDICT_FIELDS, "host", "commit", "tileprofVersion")
"""Every field a run records; host, commit and tileprof's version are shown, not compared
(CI runners change hosts; a commit is what a gate compares across)."""

COMMIT_VARIABLES: tuple[str, ...] = ("GITHUB_SHA", "CI_COMMIT_SHA")
"""Where a CI states the commit it builds (GitHub Actions, GitLab CI), read when no
``--label commit=…`` is given."""

Environment = Mapping[str, object]


def differences(before: Environment, after: Environment) -> list[str]:
    """One ``field before → after`` per ``VERDICT_FIELDS`` field that both state and that
    differs, in that order."""
    found = []
    for name in VERDICT_FIELDS:
        old, new = before.get(name), after.get(name)
        if old is not None and new is not None and old != new:
            found.append(f"{name} {old} → {new}")
    return found


def stated(environment: Environment) -> dict[str, object]:
    """The fields ``environment`` states (None left out), in ``RECORDED_FIELDS`` order."""
    return {k: environment[k] for k in RECORDED_FIELDS if environment.get(k) is not None}
