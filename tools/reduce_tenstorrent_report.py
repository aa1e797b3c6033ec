"""Write a reduced copy of a Tenstorrent ``ops_perf_results`` CSV for ``fixtures/real/``.

The real report of a CLIP encoder (``wh_clip_encoder_2.csv``, 2.7 MB, from
tenstorrent/tt-perf-report ``tests/data/``, Apache-2.0) is larger than a fixture should be; its
first ROWS op rows (header kept, every byte of each kept line unchanged) cover every op kind of
one encoder layer, matmuls included. Usage::

    python tools/reduce_tenstorrent_report.py SOURCE.csv DEST.csv [ROWS]
"""

from __future__ import annotations

import sys
from pathlib import Path

DEFAULT_ROWS = 400


def reduce_report(source: Path, dest: Path, rows: int = DEFAULT_ROWS) -> int:
    """Copy the header and the first ``rows`` lines after it; returns the lines written."""
    with source.open("rb") as handle:
        lines = [line for _, line in zip(range(rows + 1), handle, strict=False)]
    dest.write_bytes(b"".join(lines))
    return len(lines)


if __name__ == "__main__":
    count = int(sys.argv[3]) if len(sys.argv) > 3 else DEFAULT_ROWS
    written = reduce_report(Path(sys.argv[1]), Path(sys.argv[2]), count)
    print(f"{sys.argv[2]}: {written} lines")
