"""How many threads decode a JSON or NDJSON dump: ``--jobs N``, by default the usable cores.

The compiled decoder (``tileprof.core._native``, crates/tileprof-decode) runs its own thread
pool of this size for each dump it decodes, with the GIL released; no process starts, nothing
is spooled, and a script using the Python API needs no ``if __name__ == "__main__":`` guard.
"""

from __future__ import annotations

from tileprof.core.cpus import usable_cores

__all__ = ["configure", "jobs", "setting", "usable_cores"]

_jobs: int | None = None


def configure(jobs: int | None) -> None:
    """Set the number of decoding threads (None: the usable cores)."""
    global _jobs
    if jobs is not None and jobs < 1:
        raise ValueError("jobs must be at least 1")
    _jobs = jobs


def setting() -> int | None:
    """What ``configure`` was last given (None: the usable cores), to restore it later."""
    return _jobs


def jobs() -> int:
    """The number of decoding threads in effect."""
    return _jobs if _jobs is not None else usable_cores()
