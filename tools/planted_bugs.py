"""Plant each bug of issue 17 in turn, run the tests that should catch it, and restore the source.

    nice -n 10 python tools/planted_bugs.py            # every bug
    nice -n 10 python tools/planted_bugs.py window     # the bugs whose key contains "window"

Prints one line per bug with the tests that failed (none failing means the bug survived).
Sources are restored from memory after each run, also on Ctrl-C; run it on a clean tree.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Bug:
    key: str
    what: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]


BUGS = (
    Bug(
        "kineto-mean-median",
        "Kineto per-kernel mean → median",
        "tileprof/inputs/gpu/kineto.py",
        'pl.col("dur").mean().alias("mean_us")',
        'pl.col("dur").median().alias("mean_us")',
        ("tests/test_kineto.py", "tests/test_kineto_figures.py"),
    ),
    Bug(
        "kineto-rank-round",
        "Kineto percentile rank: ceil → round",
        "tileprof/inputs/gpu/kineto.py",
        "(pl.len().cast(pl.Float64) * p).ceil()",
        "(pl.len().cast(pl.Float64) * p).round()",
        ("tests/test_kineto.py", "tests/test_kineto_figures.py"),
    ),
    Bug(
        "outputs-in-place",
        "output written in place, no atomic rename",
        "tileprof/core/outputs.py",
        'fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=directory)',
        "fd, tmp_name = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644), str(target)",
        ("tests/test_outputs.py", "tests/test_cli.py"),
    ),
    Bug(
        "window-zero-length",
        "--window drops zero-duration samples",
        "tileprof/analyses/filters.py",
        "condition &= overlaps | instant_inside",
        "condition &= overlaps",
        ("tests/test_filters.py", "tests/test_stats.py", "tests/test_cli.py"),
    ),
    Bug(
        "table-p50-p95-swapped",
        "summary table: p50 and p95 columns swapped",
        "tileprof/views/summary_table.py",
        '("p50", "p50Cycles", _integer),\n        ("p95", "p95Cycles", _integer),',
        '("p50", "p95Cycles", _integer),\n        ("p95", "p50Cycles", _integer),',
        ("tests/test_summary_table.py", "tests/test_cli.py"),
    ),
    Bug(
        "table-percent-x10",
        "summary table: percentages ×10",
        "tileprof/views/summary_table.py",
        'f"{value * 100:.2f}%"',
        'f"{value * 1000:.2f}%"',
        ("tests/test_summary_table.py", "tests/test_cli.py"),
    ),
    Bug(
        "tile-rank-round",
        "tile nearest rank: ceil → round (the seventh, caught before only by seed 004)",
        "tileprof/analyses/stats.py",
        "rank = (pl.len() * percent + 99) // 100",
        "rank = (pl.len() * percent + 50) // 100",
        ("tests/test_stats.py",),
    ),
)


def run(bug: Bug) -> list[str]:
    """The ids of the tests that fail with ``bug`` planted."""
    path = ROOT / bug.path
    original = path.read_text(encoding="utf-8")
    if original.count(bug.old) != 1:
        raise SystemExit(f"{bug.key}: the line to change is not (once) in {bug.path}")
    try:
        path.write_text(original.replace(bug.old, bug.new), encoding="utf-8")
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:randomly",
                "-p",
                "no:cacheprovider",
                "-rf",
                *bug.tests,
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        path.write_text(original, encoding="utf-8")
    return [line.split()[1] for line in result.stdout.splitlines() if line.startswith("FAILED ")]


def main(argv: list[str]) -> int:
    chosen = [b for b in BUGS if not argv or any(a in b.key for a in argv)]
    survivors = 0
    for bug in chosen:
        failed = run(bug)
        survivors += not failed
        print(
            f"| {bug.what} | `{bug.path}` | {', '.join(f'`{t}`' for t in failed) or 'SURVIVED'} |"
        )
        sys.stdout.flush()
    return 1 if survivors else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
