"""What the whole-process benchmarks share: one command timed as its own process, and the
machine's load average (the machine is shared, so every figure is printed beside it)."""

from __future__ import annotations

import os
import subprocess
import time


def timed(command: list[str]) -> tuple[float, float, int]:
    """Wall seconds, CPU seconds (user + system) and peak RSS (bytes, ``ru_maxrss``) of one
    process; a failed command stops the benchmark with its stderr."""
    start = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        assert process.stderr is not None
        raise SystemExit(f"{' '.join(command)} failed: {process.stderr.read().decode()}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss * 1024


def load_average() -> str:
    """The line that states the load average."""
    return "load average (1, 5, 15 min): {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
