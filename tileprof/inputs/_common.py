"""What every dump parser shares: reading (maybe gzipped) bytes, interning metadata lists,
building the typed sample frame and validating it at the boundary."""

from __future__ import annotations

import io
import itertools
import math
import os
import re
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO

import msgspec
import polars as pl

from tileprof.core.errors import InputError
from tileprof.core.schema import (
    DEFAULT_CLOCK_HZ,
    DEFAULT_TILE_COUNT,
    METADATA_NUMBER_KEYS,
    SAMPLE_SCHEMA,
    MetadataEntries,
)
from tileprof.core.text import opening_byte

if TYPE_CHECKING:
    import numpy as np

GZIP_MAGIC = b"\x1f\x8b"
MAX_CYCLES = 2**62
"""Largest offset or duration a dump may state."""
MAX_END = 2**63 - 1
"""Largest offset + duration, and largest sum of all durations: every cycle count derived from
them (lastOffset, workCycles, the span) then fits in a signed 64-bit integer."""
CLOCK_HZ_RANGE = (1.0, 1e12)
"""clockHz a dump or --clock-hz may state: 1 Hz to 1 THz keeps cycles → ms finite and exact."""
MAX_TILE_COUNT = 2**20
"""Largest tileCount: per-tile views are sized by it, so a claim of 10^12 tiles is refused."""
PlaceFn = Callable[[int], str]
"""Turns a sample's position in the dump into the place an error names ("sample 12", "line 14")."""


@dataclass
class DeviceHeader:
    """``clockHz``/``tileCount`` as the dump states them (None where it does not); the device's
    name where the dump states it (a tt-metal device log's architecture), and what the reader
    has to tell about the dump beside its samples (``notes``: one sentence each)."""

    clock_hz: int | float | None = None
    tile_count: int | None = None
    device: str | None = None
    notes: tuple[str, ...] = ()


@dataclass
class ParsedDump:
    """What a parser hands to the model: the typed frame, the interned metadata, the device."""

    samples: pl.DataFrame
    metadata: list[MetadataEntries]
    header: DeviceHeader
    place: PlaceFn


FIFO_WAIT_S = 10.0
"""How long reading a FIFO waits for a writer to open it before giving up."""
_STREAMS: dict[str, bytes] = {}
_STREAMS_KEPT = 4


def stream_content(path: Path) -> bytes | None:
    """The whole content of ``path`` when it is a pipe or FIFO (read once, then kept, since
    detection and parsing each look at it); None for a regular file. A device or socket is an
    InputError: reading ``/dev/zero`` would never end.

    ``cat dump.json | tileprof summary /dev/stdin`` and ``<(zcat dump.ndjson.gz)`` are pipes.
    """
    key = str(path)
    if key in _STREAMS:
        return _STREAMS[key]
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return None  # open_input words the error
    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    if not stat.S_ISFIFO(mode):
        kind = "a device" if stat.S_ISCHR(mode) or stat.S_ISBLK(mode) else "not a regular file"
        raise InputError(path, None, f"is {kind}, not a file (give a file, or pipe the data in)")
    data = _read_fifo(path)
    while len(_STREAMS) >= _STREAMS_KEPT:
        del _STREAMS[next(iter(_STREAMS))]
    _STREAMS[key] = data
    return data


def _read_fifo(path: Path, wait_s: float = FIFO_WAIT_S) -> bytes:
    """Read a pipe or FIFO to its end, waiting at most ``wait_s`` for a writer to appear.

    Opened without blocking, a FIFO nobody writes to reads as end-of-file at once, while one
    with a writer but no data yet says "try again": so poll until there is a writer, then read
    the stream normally. A plain ``open`` would block forever on a FIFO with no writer.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror}") from None
    chunks: list[bytes] = []
    deadline = time.monotonic() + wait_s
    try:
        while True:
            try:
                chunk = os.read(fd, 1 << 16)
            except BlockingIOError:
                break  # a writer is there: read the rest blocking
            if chunk:
                chunks.append(chunk)
                break
            if time.monotonic() > deadline:
                raise InputError(path, None, f"FIFO: nothing was written to it within {wait_s:g} s")
            time.sleep(0.02)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as handle:
            chunks.append(handle.read())
    finally:
        os.close(fd)
    return b"".join(chunks)


def open_input(path: Path) -> BinaryIO:
    """``path`` opened for reading; a missing, folder or unreadable path is an InputError.

    A pipe or FIFO is read whole first (``stream_content``) and served from memory."""
    content = stream_content(path)
    if content is not None:
        return io.BytesIO(content)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise InputError(path, None, "no such file") from None
    except IsADirectoryError:
        raise InputError(path, None, "is a folder, not a file") from None
    except OSError as exc:
        raise InputError(path, None, f"cannot read: {exc.strerror}") from None


UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_STARTS = (b"\xff\xfe", b"\xfe\xff")


def check_encoding(path: Path, data: bytes) -> bytes:
    """``data`` without a UTF-8 byte-order mark; UTF-16 (and UTF-32) text is an InputError.

    A BOM is what some Windows tools put before UTF-8; UTF-16 shows as its BOM or as ASCII with
    a NUL after every character, and would otherwise surface as a baffling CSV or JSON error.
    """
    if data.startswith(UTF8_BOM):
        return data[len(UTF8_BOM) :]
    if (
        data.startswith(_UTF16_STARTS)
        or (len(data) >= 4 and data[0] != 0 and data[1] == 0 and data[3] == 0)
        or (len(data) >= 4 and data[0] == 0 and data[1] != 0 and data[2] == 0)
    ):
        raise InputError(path, "start of file", "UTF-16 is not supported; save as UTF-8")
    return data


def read_bytes(path: Path) -> bytes:
    """The file's content, gunzipped when it is gzip; unreadable files are InputErrors.

    A UTF-8 byte-order mark is dropped and UTF-16 refused (``check_encoding``)."""
    with open_input(path) as handle:
        try:
            data = handle.read()
        except OSError as exc:
            raise InputError(path, None, f"cannot read: {exc.strerror}") from None
    return decode_content(path, data)


GZIP_MAX_RATIO = 100
"""Gzip data read whole may decompress to at most this many times its own size (text profiles
compress 5 to 30 times; gzip's own limit is about 1,000): a 10 MB bomb of 10 GB is refused
after 1 GB, not read until memory runs out. docs/reliability.md states it."""
GZIP_FLOOR_BYTES = 64 * 2**20
"""Gzip data may always decompress to this many bytes, whatever its ratio (a small file of
zeros or repeated lines)."""


def gzip_limit(compressed: int) -> int:
    """The most bytes ``compressed`` bytes of gzip data may decompress to."""
    return max(GZIP_FLOOR_BYTES, GZIP_MAX_RATIO * compressed)


def gunzip(path: Path, data: bytes) -> bytes:
    """``data`` (gzip, one member or more) decompressed, refused past ``gzip_limit`` bytes;
    corrupt or truncated data is an InputError.

    The pieces are written to one ``BytesIO``, which grows in place and hands its buffer over
    without a copy: the text is held once. Kept as a list and joined, the pieces and the join
    were held together (twice the text: 1,309 against 713 MiB peak on the issue 33 trace's
    ``gzip -1`` copy, and 4.8 against 1.5 s, ``benchmarks/kineto.py``)."""
    limit = gzip_limit(len(data))
    text = io.BytesIO()
    total = 0
    try:
        for chunk in _gzip_chunks(data):
            total += len(chunk)
            if total > limit:
                raise InputError(
                    path,
                    None,
                    f"gzip data decompresses to more than {limit:,} bytes (the limit: "
                    f"{GZIP_MAX_RATIO}× its size on disk, at least {GZIP_FLOOR_BYTES:,}; "
                    "a gzip bomb?)",
                )
            text.write(chunk)
    except (EOFError, OSError, zlib.error) as exc:
        raise InputError(path, None, f"corrupt or truncated gzip data ({exc})") from None
    return text.getvalue()


def _gzip_chunks(data: bytes) -> Iterator[bytes]:
    """The decompressed text of gzip ``data``, at most 1 MiB a piece, fed 64 KiB of input at
    a time (so that neither side is ever held whole twice); NUL padding after the last member
    is ignored, as gzip's own reader does."""
    view = memoryview(data)
    pos = 0
    while pos < len(data):
        if data[pos : pos + 2] != GZIP_MAGIC:
            if data.count(0, pos) == len(data) - pos:
                return
            raise OSError(f"not gzip data at byte {pos}")
        member = zlib.decompressobj(wbits=31)
        while not member.eof:
            if pos >= len(data):
                raise EOFError("the data ends inside a gzip member")
            piece = view[pos : pos + (1 << 16)]
            pos += len(piece)
            yield member.decompress(piece, 1 << 20)
            while member.unconsumed_tail and not member.eof:
                yield member.decompress(member.unconsumed_tail, 1 << 20)
        pos -= len(member.unused_data)


def decode_content(path: Path, data: bytes) -> bytes:
    """A file's bytes as read (``read_bytes``): gunzipped (``gunzip``: at most
    ``GZIP_MAX_RATIO`` times their size), BOM dropped, UTF-16 and empty files refused."""
    if data[:2] == GZIP_MAGIC:
        data = gunzip(path, data)
    data = check_encoding(path, data)
    if not opening_byte(data):
        raise InputError(path, None, "file is empty")
    return data


_BYTE_POSITION = re.compile(r"\(byte (\d+)\)")


def split_validation_error(message: str) -> tuple[str, str]:
    """msgspec's ``Expected `int`, got `str` - at `$.samples[3].offset``` as
    (``"$.samples[3].offset"``, ``"expected `int`, got `str`"``); the path is "$" when absent."""
    text, _, at = message.partition(" - at ")
    return at.strip("`") or "$", text[:1].lower() + text[1:]


def json_error_text(message: str) -> str:
    """msgspec's decode error in our words, without its byte position (the place says where)."""
    detail = _BYTE_POSITION.sub("", message).strip().removeprefix("JSON is malformed: ")
    if detail == "Input data was truncated":
        detail = "truncated: the file ends inside the document"
    if detail.startswith("maximum recursion depth"):
        detail = NESTED_TOO_DEEP
    return f"malformed JSON: {detail}"


NESTED_TOO_DEEP = "nested too deeply (more levels of [ or { than any profile has)"


def json_error_place(data: bytes, message: str) -> str:
    """Turn msgspec's "(byte N)" or truncation message into "line L, column C"."""
    match = _BYTE_POSITION.search(message)
    if match:
        position = int(match.group(1))
    elif "truncated" in message:
        position = len(data)
    else:
        return "document"
    line = data.count(b"\n", 0, position) + 1
    column = position - (data.rfind(b"\n", 0, position) + 1) + 1
    return f"line {line}, column {column}"


class MetadataEntry(msgspec.Struct, frozen=True):
    """One ``{"name": …, "value": …}`` pair of a sample's metadata list."""

    name: str
    value: str | int | float


_METADATA_DECODER = msgspec.json.Decoder(list[MetadataEntry])


class MetadataInterner:
    """Maps each sample's raw metadata text to an id into the list of distinct texts.

    Metadata lists repeat across the samples of a kernel, so decoding each distinct text once is
    what keeps the metadata cheap. Absent metadata (None, empty, ``null``) gets id -1. One
    interner may serve several batches of one dump: ids follow the order of first appearance.
    """

    _ABSENT: tuple[bytes | str | None, ...] = (None, b"", "", b"null", "null")

    def __init__(self) -> None:
        # The texts that mean "no metadata" are keys too, mapped to -1, so one dict lookup per
        # sample (``setdefault`` in a comprehension, no branch) interns every text.
        self.index: dict[bytes | str | None, int] = dict.fromkeys(self._ABSENT, -1)
        self.distinct: list[bytes | str] = []

    def intern(self, raw: Sequence[bytes | str | None]) -> np.ndarray:
        """The ids of ``raw``'s texts, adding new texts to ``distinct``."""
        import numpy as np  # here, not at the top: detection and peeking need no numpy

        index = self.index
        known = len(index)
        absent = len(self._ABSENT)
        add = index.setdefault
        ids = np.array([add(text, len(index) - absent) for text in raw], dtype=np.int64)
        if len(index) > known:
            self.distinct.extend(itertools.islice(index, known, None))  # type: ignore[arg-type]
        return ids


def intern_metadata(raw: Sequence[bytes | str | None]) -> tuple[np.ndarray, list[bytes | str]]:
    """Ids and distinct texts of one column of raw metadata texts (see ``MetadataInterner``)."""
    interner = MetadataInterner()
    return interner.intern(raw), interner.distinct


def decode_metadata(
    path: Path, distinct: Sequence[bytes | str], ids: np.ndarray | pl.Series, place: PlaceFn
) -> tuple[list[MetadataEntries], pl.Series, pl.Series]:
    """Decode each distinct metadata list and pull out the numeric entries.

    Returns the entries per id and, per id, ``usefulCycles`` and ``physicalWorkCycles`` as
    Float64 series (null where the list has no such entry). Errors name the first sample that
    carries the list. Every list's shape is checked before any number, so a malformed list
    is named before a bad number in an earlier one (as the reference decoder in the tests
    checks a dump: its structure first, then the numbers). Nothing here imports numpy: a dump
    the compiled decoder read hands its ids over as polars, and a summary then needs no numpy.
    """

    def where(metadata_id: int) -> str:
        carriers = pl.Series(ids) == metadata_id
        return place(int(carriers.arg_true()[0]))

    table: list[MetadataEntries] = []
    for metadata_id, text in enumerate(distinct):
        try:
            entries = _METADATA_DECODER.decode(text)
        except (msgspec.ValidationError, msgspec.DecodeError, RecursionError) as exc:
            message = str(exc).replace("`$", "`metadata")
            raise InputError(path, where(metadata_id), f"metadata: {message}") from None
        table.append(tuple((entry.name, str(entry.value)) for entry in entries))
    useful, physical = _metadata_numbers(path, table, where)
    return table, useful, physical


def _metadata_numbers(
    path: Path, table: Sequence[MetadataEntries], where: Callable[[int], str]
) -> tuple[pl.Series, pl.Series]:
    """Per list, its ``usefulCycles`` and ``physicalWorkCycles``. Every entry of a number key
    must be a number (a repeated key too, in list order); the first one gives the value."""
    numbers: list[list[float | None]] = [[None] * len(table) for _ in METADATA_NUMBER_KEYS]
    for metadata_id, pairs in enumerate(table):
        for key, value in pairs:
            if key not in METADATA_NUMBER_KEYS:
                continue
            column = METADATA_NUMBER_KEYS.index(key)
            try:
                number = metadata_number(key, value)
            except ValueError as exc:
                raise InputError(path, where(metadata_id), str(exc)) from None
            if numbers[column][metadata_id] is None:
                numbers[column][metadata_id] = number
    useful, physical = (pl.Series(column, dtype=pl.Float64) for column in numbers)
    return useful, physical


def metadata_number(key: str, value: str) -> float:
    """The value of a number entry (``usefulCycles``, ``physicalWorkCycles``) as the loader
    takes it; ``ValueError`` saying why when it is not a finite, non-negative number."""
    try:
        number = float(value)
    except ValueError:
        raise ValueError(f"metadata {key} {value!r} is not a number") from None
    if not math.isfinite(number) or number < 0:
        raise ValueError(f"metadata {key} {value!r} is not a finite, non-negative number")
    return number


def build_sample_frame(
    columns: Mapping[str, Sequence[object] | np.ndarray | pl.Series],
    metadata_ids: np.ndarray | pl.Series,
    useful_by_id: pl.Series,
    physical_by_id: pl.Series,
    *,
    per_sample: Mapping[str, pl.Series] | None = None,
) -> pl.DataFrame:
    """Assemble the typed frame from raw columns and interned metadata ids (-1: none; or, as
    the compiled decoder hands them over, already the frame's nullable UInt32, taken as is).
    ``per_sample``: ``usefulCycles`` and ``physicalWorkCycles`` already gathered (the compiled
    decoder's ``gather_by_id``), else gathered here.

    The per-sample metadata columns are gathers from the per-id tables by the nullable id
    column (a null id gathers null), so no sample-sized temporaries are made beyond the results.
    """
    if isinstance(metadata_ids, pl.Series) and metadata_ids.dtype == pl.UInt32:
        ids = metadata_ids.alias("metadataId")
    else:
        ids = pl.Series("metadataId", metadata_ids, dtype=pl.Int64)
        ids = pl.select(pl.when(ids >= 0).then(ids).cast(pl.UInt32)).to_series()
        ids = ids.alias("metadataId")

    def gather(values_by_id: pl.Series) -> pl.Series:
        if values_by_id.len() == 0:
            return pl.repeat(None, ids.len(), dtype=pl.Float64, eager=True)
        return values_by_id.gather(ids)

    series = {
        name: pl.Series(name, columns[name], dtype=SAMPLE_SCHEMA[name], strict=False)
        for name in ("tile", "offset", "duration", "phase", "epoch", "kind", "operation", "kernel")
    }
    gathered = per_sample or {
        "usefulCycles": gather(useful_by_id).alias("usefulCycles"),
        "physicalWorkCycles": gather(physical_by_id).alias("physicalWorkCycles"),
    }
    series["usefulCycles"] = gathered["usefulCycles"]
    series["physicalWorkCycles"] = gathered["physicalWorkCycles"]
    series["metadataId"] = ids
    return pl.DataFrame(series)


RowText = Callable[[dict[str, object]], str]
"""Words a check's error from the first row that fails it."""


@dataclass(frozen=True)
class _BoundedCheck:
    """A check that needs a sample-sized temporary (a running sum, an end), run only when a
    bound on its values does not rule it out."""

    bound: pl.Expr
    """The bound (one aggregation, no temporary): the largest magnitude of the values, or the
    largest end."""
    in_range: Callable[[int | float | None, int], bool]
    """Whether, under that bound, no row of ``n`` can fail."""
    beyond: pl.Expr
    """True from the row where the check fails."""
    describe: RowText


def validate_samples(frame: pl.DataFrame, path: Path, tile_count: int, place: PlaceFn) -> None:
    """Range checks the types cannot express: no negative times, tiles inside the device, no
    end or running sum beyond its type. The first check that fails (in this order) names its
    first bad row. The row checks and the other checks' bounds are one pass over the frame (a
    pass per check cost a 1M-sample summary as much as its group table's percentiles).

    A check that needs a temporary as long as the frame (the end offset + duration; the running
    sums of the durations and of each metadata number) is computed only when its bound does not
    rule it out: no end is beyond the largest offset plus the largest duration; no prefix of n
    values of magnitude at most M exceeds n·M (a float one, rounded at every addition, stays
    below 2·n·M for any n under 2^40). Measured on the 5M-sample NDJSON dump: computed always
    (the end, and each metadata number's magnitude through ``abs``), those temporaries were
    the load's peak."""
    row_checks = _row_checks(tile_count)
    sums = _bounded_checks()
    first = frame.select(
        *(check.arg_true().first().alias(f"row{i}") for i, (check, _) in enumerate(row_checks)),
        *(running.bound.alias(f"bound{i}") for i, running in enumerate(sums)),
    ).row(0)
    for bad, (_, describe) in zip(first, row_checks, strict=False):
        _refuse_row(frame, path, place, bad, describe)
    for bound, running in zip(first[len(row_checks) :], sums, strict=True):
        if not running.in_range(bound, frame.height):
            bad = frame.select(running.beyond.arg_true().first()).item()
            _refuse_row(frame, path, place, bad, running.describe)


def _refuse_row(
    frame: pl.DataFrame, path: Path, place: PlaceFn, bad: int | None, describe: RowText
) -> None:
    if bad is not None:
        row = frame.row(int(bad), named=True)
        raise InputError(path, place(int(bad)), describe(row))


def _row_checks(tile_count: int) -> list[tuple[pl.Expr, RowText]]:
    """Each row check (True where a row fails it) and the words of its error."""
    return [
        (pl.col("offset") < 0, lambda row: f"negative offset {row['offset']}"),
        (pl.col("duration") < 0, lambda row: f"negative duration {row['duration']}"),
        (
            (pl.col("offset") > MAX_CYCLES) | (pl.col("duration") > MAX_CYCLES),
            lambda row: (
                f"offset {row['offset']} or duration {row['duration']} is beyond 2^62 cycles"
            ),
        ),
        (pl.col("tile") < 0, lambda row: f"negative physicalTile {row['tile']}"),
        (
            pl.col("tile") >= tile_count,
            lambda row: f"physicalTile {row['tile']} is not below tileCount {tile_count}",
        ),
    ]


def _largest(column: str) -> pl.Expr:
    """The largest magnitude of a column's values: its max or minus its min (``abs`` would be a
    temporary as long as the column)."""
    return pl.max_horizontal(pl.col(column).max(), -pl.col(column).min())


def _bounded_checks() -> list[_BoundedCheck]:
    """Each end within 2^63 - 1 (run after the row checks, so offsets and durations are in
    [0, 2^62]), then the durations' running sum (within 2^63 - 1), then each metadata number's
    (finite)."""
    ends = _BoundedCheck(
        pl.col("offset").max().cast(pl.Int128) + pl.col("duration").max().cast(pl.Int128),
        lambda largest, _: largest is None or largest <= MAX_END,
        pl.col("offset") > MAX_END - pl.col("duration"),
        lambda row: (
            f"offset {row['offset']} + duration {row['duration']} is beyond 2^63 - 1 cycles"
        ),
    )
    durations = _BoundedCheck(
        pl.col("duration").max(),
        lambda largest, n: largest is None or largest * n <= MAX_END,
        pl.col("duration").cast(pl.Int128).cum_sum() > MAX_END,
        lambda _: "the durations up to here add up beyond 2^63 - 1 cycles",
    )
    return [ends, durations] + [
        _BoundedCheck(
            _largest(column),
            lambda largest, n: largest is None or 2.0 * largest * n < sys.float_info.max,
            pl.col(column).fill_null(0.0).cum_sum().is_infinite(),
            _sum_overflow_text(column),
        )
        for column in METADATA_NUMBER_KEYS
    ]


def _sum_overflow_text(column: str) -> Callable[[dict[str, object]], str]:
    return lambda _: f"metadata {column} values up to here add up beyond a 64-bit float"


def resolve_device(
    path: Path,
    header: DeviceHeader,
    clock_hz: float | None,
    tile_count: int | None,
) -> tuple[int | float, int]:
    """Options override the dump, which overrides the device defaults; both must be positive."""
    clock = clock_hz if clock_hz is not None else header.clock_hz
    tiles = tile_count if tile_count is not None else header.tile_count
    clock = DEFAULT_CLOCK_HZ if clock is None else clock
    tiles = DEFAULT_TILE_COUNT if tiles is None else tiles
    if isinstance(clock, float) and clock.is_integer():
        clock = int(clock)
    low, high = CLOCK_HZ_RANGE
    if not (isinstance(clock, (int, float)) and math.isfinite(clock) and clock > 0):
        raise InputError(path, "clockHz", f"must be a positive number, not {clock!r}")
    if not low <= clock <= high:
        raise InputError(path, "clockHz", f"{clock!r} is outside 1 Hz to 1 THz")
    if not (isinstance(tiles, int) and tiles > 0):
        raise InputError(path, "tileCount", f"must be a positive integer, not {tiles!r}")
    if tiles > MAX_TILE_COUNT:
        raise InputError(path, "tileCount", f"{tiles} is beyond {MAX_TILE_COUNT} tiles")
    return clock, tiles
