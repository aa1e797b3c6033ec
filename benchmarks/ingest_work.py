"""CPU seconds of the JSON worker-mode decode of one dump, every task run in this process.

    python benchmarks/ingest_work.py /tmp/tileprof-bench/dump_1000000.json

Splitting (the span scan and cuts), the tasks (read, decode, columns, Arrow IPC out and back
in, joining) and ``finish``, timed with ``time.process_time``: the work the parent and its
workers share, without interpreter start-up or statistics. CPU time rather than wall time, so
that a machine shared with other work still gives comparable figures (issue 15's speed round
compared this against the previous commit's code, alternating, in docs/performance.md).
"""

from __future__ import annotations

import mmap
import sys
import time
from pathlib import Path

from tileprof.inputs import parallel
from tileprof.inputs._common import DeviceHeader
from tileprof.inputs.batches import SampleBatches
from tileprof.inputs.tile import json_dump


def main() -> None:
    path = sys.argv[1]
    parallel.configure(2)  # task sizes as for two processes
    with open(path, "rb") as handle:
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    start = time.process_time()
    document = json_dump._SPAN_DECODER.decode(mapped)
    span = json_dump.samples_span(mapped, document.samples)
    assert span is not None, "not a dump whose samples array can be cut"
    del document
    first, last = span
    task_bytes = min(json_dump.TASK_BYTES, (last - first) // 8 + 1)  # as parse_file, 2 jobs
    ranges = json_dump.sample_ranges(mapped, first, last, task_bytes)
    split = time.process_time() - start
    start = time.process_time()
    batches = SampleBatches()
    for begin, end in ranges:
        result = json_dump.decode_range(path, begin, end)
        assert result is not None, "a range did not decode"
        batches.add_interned(parallel.decode_columns(result[0]), result[1])
    tasks = time.process_time() - start
    start = time.process_time()
    batches.finish(Path(path), DeviceHeader(), json_dump.sample_place)
    finish = time.process_time() - start
    print(
        f"split {split:.2f} s, {len(ranges)} tasks {tasks:.2f} s, finish {finish:.2f} s, "
        f"total {split + tasks + finish:.2f} CPU s"
    )


if __name__ == "__main__":
    main()
