"""Room checked before work whose allocations cannot fail softly.

Python's own allocations raise ``MemoryError`` (the command line's one out-of-memory line), and
the compiled decoder grows its columns with ``try_reserve``. polars and arrow cannot: a Rust
allocation that fails aborts the process ("memory allocation of N bytes failed", SIGABRT). So
before the analyses start on a loaded dump, the address space they will take is reserved and
given back (an anonymous mapping, never touched: it costs no memory, only the check of what the
address-space limit and the kernel's overcommit rule allow). Too little is the one line, exit 2,
before any of it is allocated.
"""

from __future__ import annotations

import mmap

ANALYSIS_FACTOR = 2
"""Address space the analyses take, as a multiple of the sample frame's size (polars'
``estimated_size``). Measured on two dumps of 0.3M and 2M samples, peak over what the load
left: the report 2.8 times the frame plus about 640 MiB that does not follow it (imports, thread
arenas), ``summary`` 1.9 times plus 200 MiB, ``trace`` below the report."""
ANALYSIS_SLACK = 64 << 20
"""Address space wanted beyond the frame's multiple."""
REPORT_SLACK = 640 << 20
"""The same for ``report`` and ``runs`` (``tileprof.model.gather``): what their analyses,
charts and imports take whatever the dump (measured, above)."""


def can_reserve(size: int) -> bool:
    """Whether ``size`` bytes of address space can be had now."""
    try:
        with mmap.mmap(-1, max(size, mmap.PAGESIZE)):
            return True
    except (OSError, OverflowError, ValueError, MemoryError):
        return False


def require_room_for_analyses(frame_bytes: float, slack: int = ANALYSIS_SLACK) -> None:
    """``MemoryError`` when the analyses of a frame of ``frame_bytes`` would not fit."""
    needed = int(ANALYSIS_FACTOR * frame_bytes) + slack
    if not can_reserve(needed):
        raise MemoryError(f"the analyses need about {needed >> 20} MiB of address space")


M_ARENA_MAX = -8
"""glibc's ``mallopt`` parameter for the most malloc arenas (malloc.h)."""


def share_malloc_arenas_under_a_limit() -> None:
    """Under an address-space limit (``ulimit -v``), let threads share glibc's malloc arenas.

    glibc gives each new thread that allocates an arena of its own, by mapping 128 MiB of
    address space (twice its 64 MiB heap, to align it): under a limit a thread's first small
    allocation could fail after every check above passed, and a failed allocation in the
    compiled code aborts. Measured: the decoder under a limit leaving 100 MiB aborted on an
    allocation of 144-192 bytes in a new thread in most runs; with two arenas, in none. No
    limit, nothing changes. Not glibc (or no ``mallopt``): nothing to do.
    """
    import resource

    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return
    import ctypes

    try:
        libc = ctypes.CDLL(None)
        libc.mallopt(M_ARENA_MAX, 2)
    except (OSError, AttributeError):
        return
