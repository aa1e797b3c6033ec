"""Peak memory of ``tileprof convert`` from a JSON dump to each dump format (issue 11).

The README promises that memory stays near the size of the file. Converting used to build the
whole output (every record as a dict, then the encoded bytes) before writing it; the writer now
streams batches of ``tileprof.views.writers.WRITE_BATCH_ROWS`` records. Each conversion runs in a
fresh process; the figure is that process's peak resident set (``ru_maxrss``).

    nice -n 10 python benchmarks/convert_memory.py --samples 1000000 --folder /tmp/harden
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dumpgen
import ingest


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--folder", type=Path, default=Path("/tmp/tileprof-bench"))
    parser.add_argument("--to", action="append", default=None, help="json, ndjson, csv, cache")
    args = parser.parse_args()
    args.folder.mkdir(parents=True, exist_ok=True)
    source = dumpgen.write_dump(args.samples, args.folder, "json")
    size_mb = source.stat().st_size / 2**20
    print(f"input {source.name}: {args.samples:,} samples, {size_mb:,.0f} MiB")
    for target in args.to or ["json", "ndjson", "csv", "cache"]:
        suffix = {"cache": "parquet"}.get(target, target)
        output = args.folder / f"converted.{suffix}"
        command = [sys.executable, "-m", "tileprof", "convert", str(source), "-o", str(output)]
        result = ingest.measure([*command, "--to", target, "--force", "-q"], dict(os.environ))
        peak_mb = result["peak_kib"] / 1024
        print(
            f"convert --to {target:7s} peak {peak_mb:8,.0f} MiB "
            f"({peak_mb / size_mb:.2f}× the input), {result['seconds']:.1f} s"
        )
        output.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
