"""The compiled module's boundary (crates/tileprof-native): what it takes from a polars frame.

The layer reads columns in place through Arrow and refuses what the compiled code cannot take
(nulls where it needs values) with its own error, rather than reading the values behind a
null. A column that merely carries a validity buffer with no null in it (polars keeps one
after ``fill_null``) is a full column. Most of these are contracts that the mutation run over
the layer (``tools/mutation_native.py``, docs/testing.md) found no test for.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from tileprof.core import _native


def _child_output(script: str, path: Path, *args: str) -> str:
    """What ``script`` prints, run on ``path`` (and ``args``) in a process of its own (its
    memory measured or limited apart from the test's), with this checkout first on its path;
    a child that hangs fails after five minutes."""
    done = subprocess.run(
        [sys.executable, "-c", script, str(path), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    )
    return done.stdout


# The prelude of the scripts run in a child: reading its own memory, limiting its address
# space (RLIMIT_AS) to what it has mapped and some more, and a decode's outcome as one line.
_CHILD = """
import resource, sys
from tileprof.core import _native

def status_kib(key):
    return int(open("/proc/self/status").read().split(key + ":")[1].split()[0])

def limit_to(spare_mib):
    limit = status_kib("VmSize") * 1024 + (spare_mib << 20)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

def outcome(read, *args):
    try:
        return read(*args)
    except _native.DecodeError as error:
        return f"{error.args[0]} {error.args[2]}"
"""


def ops_frame(**replaced: pl.Series) -> pl.DataFrame:
    """Three ops on one thread, the second nested in the first: ``op_nesting``'s input."""
    frame = pl.DataFrame(
        {
            "thread": [0, 0, 1],
            "ts": [0.0, 1.0, 0.0],
            "dur": [10.0, 2.0, 5.0],
            "candidate": [1, 1, 1],
            "composite": [0, 0, 0],
        },
        schema={
            "thread": pl.Int64,
            "ts": pl.Float64,
            "dur": pl.Float64,
            "candidate": pl.UInt8,
            "composite": pl.UInt8,
        },
    )
    return frame.with_columns(**replaced).rechunk()


def nesting(frame: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame(_native.op_nesting(frame))


def test_a_column_with_a_validity_buffer_and_no_null_is_a_full_column() -> None:
    """arrow-rs drops the validity buffer of a column with no null as it imports it, so the
    layer's own check (``frames::values``: a buffer with nulls only) never sees one; this holds
    the two together to what a reader expects of the column."""
    with_buffer = pl.Series([0, None, 1], dtype=pl.Int64).fill_null(0)
    assert with_buffer.to_arrow().buffers()[0] is not None  # the case: a buffer, no null
    floats = pl.Series([0.0, None, 0.0], dtype=pl.Float64).fill_null(1.0)
    assert floats.to_arrow().buffers()[0] is not None
    want = nesting(ops_frame())
    assert want["parent"].to_list() == [None, 0, None]
    assert nesting(ops_frame(thread=with_buffer)).equals(want)
    assert nesting(ops_frame(ts=floats)).equals(want)


@pytest.mark.parametrize("column", ["ts", "dur"])
def test_an_op_time_that_is_null_is_refused(column: str) -> None:
    nulled = pl.Series([1.0, None, 2.0], dtype=pl.Float64)
    with pytest.raises(_native.GroupsError, match="ts or dur has nulls"):
        nesting(ops_frame(**{column: nulled}))


def test_a_null_thread_is_refused() -> None:
    with pytest.raises(_native.GroupsError, match="thread has nulls"):
        nesting(ops_frame(thread=pl.Series([0, None, 1], dtype=pl.Int64)))


def samples_frame() -> pl.DataFrame:
    """Two samples: ``group_statistics``' sample columns."""
    return pl.DataFrame(
        {
            "offset": [0, 10],
            "duration": [5, 7],
            "tile": [0, 1],
            "phase": [0, 0],
            "usefulCycles": [5.0, 7.0],
            "physicalWorkCycles": [5.0, 7.0],
        },
        schema={
            "offset": pl.Int64,
            "duration": pl.Int64,
            "tile": pl.Int64,
            "phase": pl.Int64,
            "usefulCycles": pl.Float64,
            "physicalWorkCycles": pl.Float64,
        },
    )


def statistics(rows: list[list[int | None] | None]) -> pl.DataFrame:
    frame = pl.DataFrame({"rows": rows}, schema={"rows": pl.List(pl.UInt32)}).rechunk()
    return pl.DataFrame(_native.group_statistics(samples_frame(), frame, percents=[50], jobs=1))


def test_group_rows_with_a_null_group_or_a_null_row_are_refused() -> None:
    table = statistics([[0, 1]])
    assert table["sampleCount"].to_list() == [2]
    assert table["workCycles"].to_list() == [12]
    nulled: list[list[list[int | None] | None]] = [[[0, 1], None], [[0, None], [1]]]
    for rows in nulled:
        with pytest.raises(_native.GroupsError, match="rows has nulls"):
            statistics(rows)


_PEAK_OF_A_DECODE = (
    _CHILD
    + """
before = status_kib("VmRSS")
(columns, *_), gzip = _native.decode_json_file(sys.argv[1], 2)
print(status_kib("VmHWM") - before, len(columns.columns()[0][1]))
"""
)


def test_a_mapped_dump_hands_its_decoded_pages_back(tmp_path: Path) -> None:
    """A plain dump is mapped and each decoded stretch's pages handed back (``MADV_DONTNEED``,
    ``Mapped::release``), so the file's pages do not pile up in the process's memory: its peak
    (KiB, ``VmHWM`` less ``VmRSS`` before) grows by far less than the file. The dump is
    256 MiB, almost all of it white space between samples, so the columns are tiny: holding
    the pages adds the whole file (262,000 KiB), handing them back about 45,000 (the stretches
    in flight on two threads, 16 MiB each)."""
    pad = " " * 4000
    one = '{"physicalTile": 1, "offset": 5, "duration": 7}'
    count = (256 << 20) // (len(one) + len(pad) + 1)
    path = tmp_path / "padded.json"
    with path.open("w") as out:
        out.write('{"clockHz": 1e9, "tileCount": 4, "samples": [')
        out.write(",".join([one + pad] * count))
        out.write("]}")
    stdout = _child_output(_PEAK_OF_A_DECODE, path)
    grown_kib, decoded = map(int, stdout.split())
    assert decoded == count
    assert grown_kib < path.stat().st_size // 1024 // 3, (grown_kib, path.stat().st_size)


def test_a_gzip_dump_of_exactly_the_limit_is_read_and_one_byte_more_is_refused(
    tmp_path: Path,
) -> None:
    """The compiled reader decompresses a gzip dump to at most ``gzip_limit`` of it (64 MiB at
    least, ``GZIP_FLOOR_BYTES``): a text of exactly that many bytes is read, one byte more is
    the gzip error (the Python side then words it)."""
    import gzip

    floor = 64 << 20
    head = b'{"clockHz": 1e9, "tileCount": 4, "samples": [{"physicalTile": 1, "offset": 5, '
    tail = b'"duration": 7}]}'
    for size, read in ((floor, True), (floor + 1, False)):
        text = head + b" " * (size - len(head) - len(tail)) + tail
        path = tmp_path / f"{size}.json.gz"
        path.write_bytes(gzip.compress(text, 1))
        assert len(text) == size and path.stat().st_size * 100 < floor
        if read:
            (columns, *_), gzipped = _native.decode_json_file(str(path), 1)
            assert gzipped and len(columns.columns()[0][1]) == 1
        else:
            with pytest.raises(_native.DecodeError) as refused:
                _native.decode_json_file(str(path), 1)
            assert refused.value.args[0] == "gzip", refused.value.args


def test_the_counters_of_one_bin_are_every_sample_in_it() -> None:
    """``binned_counters`` refuses no bin at all or a width under one cycle, and takes one
    bin: the counters of a window narrower than two bins."""
    frame = pl.DataFrame(
        {"start": [0, 4], "end": [4, 10], "useful": [2.0, 3.0]},
        schema={"start": pl.Int64, "end": pl.Int64, "useful": pl.Float64},
    )
    one = pl.DataFrame(_native.binned_counters(frame, start=0, width=10, count=1))
    assert one.to_dicts() == [{"cycles": 10.0, "useful": 5.0}]
    for width, count in ((0, 1), (10, 0)):
        with pytest.raises(_native.EncodeError, match=f"{count} bins of {width} cycles"):
            _native.binned_counters(frame, start=0, width=width, count=count)


_DECODE_UNDER = (
    _CHILD
    + """
limit_to(int(sys.argv[2]))
print(outcome(lambda: _native.decode_json_file(sys.argv[1], 1) and "read"))
"""
)


def test_a_decode_without_room_for_its_first_allocations_is_the_memory_error(
    tmp_path: Path,
) -> None:
    """Before it decodes a file, the reader makes sure of room for its small allocations
    (160 MiB, ``SLACK_BYTES``), which it makes infallibly: with less than that to spare, even a
    one-sample dump is the one-line memory error, not an abort in the middle of the decode."""
    path = tmp_path / "d.json"
    path.write_text('{"samples": [{"physicalTile": 1, "offset": 5, "duration": 7}]}')
    stdout = _child_output(_DECODE_UNDER, path, "96")
    assert stdout.strip() == "memory room for the decode", stdout


def test_a_dump_neither_mapped_nor_read_for_want_of_memory_is_the_memory_error(
    tmp_path: Path,
) -> None:
    """A plain dump larger than the memory left (a sparse file of 1 GiB, 320 MiB to spare)
    can be neither mapped nor read into memory: that is the one-line memory error, as the
    reader words running out of memory everywhere, not an error reading the file."""
    path = tmp_path / "huge.json"
    with path.open("wb") as handle:
        handle.truncate(1 << 30)  # no block written: the file takes no disk
    stdout = _child_output(_DECODE_UNDER, path, "320")
    assert stdout.strip() == "memory the text read", stdout


def test_gathering_by_id_gives_each_table_by_each_samples_id(tmp_path: Path) -> None:
    """``gather_by_id`` of 2^17 samples and two tables: each sample's value of each table by
    its metadata id, null where the table has none (an id past the table's end included)."""
    count = 1 << 17
    one = '{"physicalTile": 1, "offset": %d, "duration": 3, "metadata": [%s]}'
    useful = '{"name": "usefulCycles", "value": "%d"}'
    path = tmp_path / "d.ndjson"
    path.write_text("\n".join(one % (i, useful % (i % 3)) for i in range(count)) + "\n")
    columns, *_ = _native.decode_ndjson_file(str(path), 1)
    ids = dict(columns.columns())["metadataId"]
    tables: list[list[float | None]] = [[1.5, 2.5, None], [4.0]]
    first, second = (pl.Series(column) for column in _native.gather_by_id(ids, tables, 1))
    id_series = pl.Series(ids)
    assert first.len() == second.len() == count
    want = pl.Series(tables[0], dtype=pl.Float64).gather(id_series)
    assert first.equals(want, check_names=False)
    assert second.null_count() == count - id_series.eq(0).sum()


_HANDOVER_NEAR_THE_PEAK = (
    _CHILD
    + """
one = '{"physicalTile": 1, "offset": %d, "duration": 3, "kernel": "%0100000d"}'
data = ('{"samples": [' + ",".join(one % (i, i) for i in range(1000)) + "]}").encode()
if sys.argv[2] == "peak":
    before = status_kib("VmSize")
    _native.decode_json_bytes(data, 1)
    print((status_kib("VmPeak") - before) >> 10)
else:
    limit_to(int(sys.argv[2]))
    print(outcome(lambda: _native.decode_json_bytes(data, 1) and "read"))
"""
)


def test_a_decode_that_runs_out_in_the_hand_over_is_the_memory_error(tmp_path: Path) -> None:
    """A dump whose kernels are 100 MB of distinct text needs most memory at its end, when the
    dictionaries' text is copied into Arrow: given a little less than the decode's peak, it
    is the one-line memory error there (that text is allocated at its size, fallibly), and a
    little more, the read. Arrow's own string builder grew it by doubling, infallibly (128 MiB
    for 100 MB of text): under such a limit the decode panicked, aborted or hung."""
    peak = int(_child_output(_HANDOVER_NEAR_THE_PEAK, tmp_path, "peak"))
    refused = _child_output(_HANDOVER_NEAR_THE_PEAK, tmp_path, str(peak - 16))
    assert refused.strip() == "memory the Arrow columns", (peak, refused)
    read = _child_output(_HANDOVER_NEAR_THE_PEAK, tmp_path, str(peak + 32))
    assert read.strip() == "read", (peak, read)


_GZIP_DECODE_UNDER = (
    _CHILD
    + """
def samples():
    (columns, *_), _ = _native.decode_json_file(sys.argv[1], 1)
    return f"read {len(columns.columns()[0][1])}"

limit_to(int(sys.argv[2]))
print(outcome(samples))
"""
)


def test_a_gzip_text_is_held_in_a_buffer_of_its_size(tmp_path: Path) -> None:
    """A gzip dump is decompressed into a buffer that doubles only when the next chunk does
    not fit: 128 MiB of text ends in a buffer of 128 MiB, and the decode runs within 400 MiB
    of address space (the text, ``SLACK_BYTES`` of room and a thread's heap). A buffer grown
    a chunk early, or on every chunk, is 256 MiB or more: the memory error there."""
    path = _gzip_dump_of(tmp_path / "d.json.gz", 128 << 20)
    assert _child_output(_GZIP_DECODE_UNDER, path, "400").strip() == "read 1"


def _gzip_dump_of(path: Path, size: int) -> Path:
    """A gzip dump of exactly ``size`` bytes of text: whitespace inside the samples array,
    then one sample with 3 MB of hex, so that the file is over a hundredth of its text."""
    import gzip
    import random

    head = b'{"clockHz": 1e9, "tileCount": 4, "samples": ['
    hexed = random.Random(0).randbytes(3 << 19).hex().encode()
    tail = b'{"physicalTile": 1, "offset": 5, "duration": 7, "kernel": "' + hexed + b'"}]}'
    path.write_bytes(gzip.compress(head + b" " * (size - len(head) - len(tail)) + tail, 1))
    assert path.stat().st_size * 100 > size  # under the ratio a gzip dump may decompress to
    return path


def test_a_gzip_text_larger_than_the_memory_left_is_the_memory_error(tmp_path: Path) -> None:
    """256 MiB of text with 200 MiB of address space to spare: the buffer's doubling from
    128 MiB is refused, it then grows a chunk at a time, fallibly, until that is refused too:
    the one-line memory error, not an abort (as when it grew by `extend_from_slice` alone)."""
    path = _gzip_dump_of(tmp_path / "d.json.gz", 256 << 20)
    stdout = _child_output(_GZIP_DECODE_UNDER, path, "200")
    assert stdout.strip() == "memory the decompressed text could not grow", stdout


_GATHER_UNDER = (
    _CHILD
    + """
columns, *_ = _native.decode_ndjson_file(sys.argv[1], 1)
ids = dict(columns.columns())["metadataId"]
tables = [[1.5, 2.5]] * int(sys.argv[2])
limit_to(160)
print(outcome(lambda: f"gathered {len(_native.gather_by_id(ids, tables, 1))}"))
"""
)


def test_a_gather_beyond_memory_is_the_memory_error(tmp_path: Path) -> None:
    """``gather_by_id`` allocates each gathered column fallibly: 2^17 samples gathered from 8
    tables (8 MiB) fit in 160 MiB to spare, from 300 tables (300 MiB) they are the one-line
    memory error, not an abort in a gathering thread (as when arrow allocated them)."""
    count = 1 << 17
    one = '{"physicalTile": 1, "offset": %d, "duration": 3, "metadata": [%s]}'
    useful = '{"name": "usefulCycles", "value": "%d"}'
    path = tmp_path / "d.ndjson"
    path.write_text("\n".join(one % (i, useful % (i % 2)) for i in range(count)) + "\n")
    assert _child_output(_GATHER_UNDER, path, "8").strip() == "gathered 8"
    assert _child_output(_GATHER_UNDER, path, "300").strip() == "memory the Arrow columns"
