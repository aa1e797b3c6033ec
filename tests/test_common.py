"""The shared reader helpers (``tileprof/inputs/_common.py``) called directly, each value and
message stated by hand (issue 38: the hostile-input tests reach them through whole commands
and check a word of the message; these check the whole of it, and the boundaries)."""

from __future__ import annotations

import gzip
import io
import os
import socket
import threading
import time
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from tests.samples import frame, sample
from tileprof.core.errors import InputError
from tileprof.core.schema import SAMPLE_SCHEMA
from tileprof.inputs import _common
from tileprof.inputs._common import (
    DeviceHeader,
    MetadataInterner,
    build_sample_frame,
    check_encoding,
    decode_content,
    decode_metadata,
    gunzip,
    gzip_limit,
    intern_metadata,
    json_error_place,
    json_error_text,
    open_input,
    read_bytes,
    resolve_device,
    split_validation_error,
    stream_content,
    validate_samples,
)

WHERE = Path("d.json")


def message_of(call: object, *args: object) -> str:
    with pytest.raises(InputError) as caught:
        call(*args)  # type: ignore[operator]
    return str(caught.value)


# --- pipes and FIFOs --------------------------------------------------------------------------


def _write_later(fifo: Path, payload: bytes, delay: float = 0.05) -> threading.Thread:
    def write() -> None:
        time.sleep(delay)
        with open(fifo, "wb") as handle:  # blocks until the reader has opened it
            handle.write(payload)

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    return thread


def test_a_fifo_is_read_whole_once_and_the_last_four_are_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """More than one 64 KiB read's worth arrives whole; a second look at the same FIFO is
    served from memory (no writer is there any more: read again, it would wait and fail);
    of five FIFOs read, the first is dropped and the last four are kept."""
    monkeypatch.setattr(_common, "_STREAMS", {})
    payload = bytes(range(256)) * 1000  # 256,000 bytes
    fifos = []
    for i in range(5):
        fifo = tmp_path / f"f{i}"
        os.mkfifo(fifo)
        thread = _write_later(fifo, payload + bytes([i]))
        assert stream_content(fifo) == payload + bytes([i])
        thread.join()
        fifos.append(fifo)
        assert stream_content(fifo) == payload + bytes([i])  # no writer now: from memory
    assert list(_common._STREAMS) == [str(f) for f in fifos[1:]]
    with open_input(fifos[4]) as handle:
        assert isinstance(handle, io.BytesIO)
        assert handle.read() == payload + b"\x04"


def test_a_writer_that_opens_before_it_writes_is_waited_for(tmp_path: Path) -> None:
    """The writer is there but has written nothing yet ("try again"): the rest is read
    blocking, to the writer's end."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    opened = threading.Event()

    def write() -> None:
        with open(fifo, "wb") as handle:
            opened.set()
            time.sleep(0.3)
            handle.write(b"first ")
            handle.flush()
            time.sleep(0.1)
            handle.write(b"second")

    thread = threading.Thread(target=write, daemon=True)
    thread.start()
    assert _common._read_fifo(fifo, 5) == b"first second"
    thread.join()
    assert opened.is_set()


def test_a_fifo_nobody_writes_to_is_refused_after_its_wait(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Refused once its wait is over, having polled every 0.02 s (the sleeps asked for are
    recorded, not timed: a loaded machine may sleep longer than asked)."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    asked: list[float] = []
    sleep = time.sleep

    def recorded(seconds: float) -> None:
        asked.append(seconds)
        sleep(seconds)

    monkeypatch.setattr(time, "sleep", recorded)
    start = time.monotonic()
    message = message_of(_common._read_fifo, fifo, 0.3)
    assert time.monotonic() - start >= 0.3
    assert message == f"{fifo}: FIFO: nothing was written to it within 0.3 s"
    assert asked and set(asked) == {0.02}
    missing = tmp_path / "gone"
    assert message_of(_common._read_fifo, missing, 0.3) == (
        f"{missing}: cannot read: No such file or directory"
    )


def test_what_is_not_a_pipe_is_left_to_open_or_refused(tmp_path: Path) -> None:
    regular = tmp_path / "d.json"
    regular.write_bytes(b"{}")
    assert stream_content(regular) is None
    assert stream_content(tmp_path) is None
    assert stream_content(tmp_path / "absent") is None
    assert message_of(stream_content, Path("/dev/null")) == (
        "/dev/null: is a device, not a file (give a file, or pipe the data in)"
    )
    with socket.socket(socket.AF_UNIX) as server:
        place = tmp_path / "s"
        server.bind(str(place))
        assert message_of(stream_content, place) == (
            f"{place}: is not a regular file, not a file (give a file, or pipe the data in)"
        )


def test_open_input_words_each_failure(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    regular = tmp_path / "d.json"
    regular.write_bytes(b"{}")
    with open_input(regular) as handle:
        assert handle.read() == b"{}"
    absent = tmp_path / "absent.json"
    assert message_of(open_input, absent) == f"{absent}: no such file"
    assert message_of(open_input, tmp_path) == f"{tmp_path}: is a folder, not a file"
    under_a_file = regular / "x.json"
    assert message_of(open_input, under_a_file) == f"{under_a_file}: cannot read: Not a directory"

    class Broken(io.BytesIO):
        def read(self, *_: object) -> bytes:
            raise OSError(5, "Input/output error")

    monkeypatch.setattr(_common, "open_input", lambda _: Broken())
    assert message_of(read_bytes, regular) == f"{regular}: cannot read: Input/output error"


# --- encodings, gzip, empty files -------------------------------------------------------------


def test_check_encoding_drops_the_bom_and_refuses_utf16_at_its_boundaries() -> None:
    refused = f"{WHERE}: start of file: UTF-16 is not supported; save as UTF-8"
    assert check_encoding(WHERE, b"\xef\xbb\xbf{}") == b"{}"
    assert check_encoding(WHERE, b"{}\xef\xbb\xbf") == b"{}\xef\xbb\xbf"
    for data in (b"\xff\xfe{", b"\xfe\xff{", b"a\x00b\x00", b"\x00a\x00b", b"\x00a\x00c"):
        assert message_of(check_encoding, WHERE, data) == refused, data
    # too short for the NUL pattern, or a NUL where the pattern has none: read as it is
    for data in (
        b"a\x00b",
        b"\x00a\x00",
        b"a\x00bc",
        b"\x00a\x01b",
        b"\x00\x00\x00\x00",
        b"ab\x00\x00",
    ):
        assert check_encoding(WHERE, data) == data, data


def test_gzip_limit_is_the_ratio_or_the_floor() -> None:
    assert gzip_limit(0) == 64 * 2**20 == 67_108_864
    assert gzip_limit(671_088) == 67_108_864  # 100 × 671,088 = 67,108,800: below the floor
    assert gzip_limit(671_089) == 67_108_900
    assert gzip_limit(1_000_000) == 100_000_000


def test_gunzip_refuses_past_its_limit_in_these_words(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_common, "GZIP_FLOOR_BYTES", 5000)
    packed = gzip.compress(b"a" * 6000)
    assert 100 * len(packed) < 5000  # so the limit is the floor, 5,000
    assert gunzip(Path("x.gz"), gzip.compress(b"a" * 5000)) == b"a" * 5000
    assert message_of(gunzip, Path("x.gz"), packed) == (
        "x.gz: gzip data decompresses to more than 5,000 bytes (the limit: 100× its size on "
        "disk, at least 5,000; a gzip bomb?)"
    )


def test_gzip_pieces_and_their_errors() -> None:
    text = b"\0" * 3_000_000
    packed = gzip.compress(text)
    pieces = list(_common._gzip_chunks(packed))
    assert b"".join(pieces) == text
    assert max(map(len, pieces)) == 1 << 20  # at most 1 MiB a piece, and one is that long
    assert gunzip(Path("x.gz"), packed + b"\0\0\0") == text
    assert message_of(gunzip, Path("x.gz"), packed + b"\0\1") == (
        f"x.gz: corrupt or truncated gzip data (not gzip data at byte {len(packed)})"
    )
    assert message_of(gunzip, Path("x.gz"), packed[:-1]) == (
        "x.gz: corrupt or truncated gzip data (the data ends inside a gzip member)"
    )


def test_decode_content_gunzips_drops_the_bom_and_refuses_empty() -> None:
    assert decode_content(WHERE, gzip.compress(b"\xef\xbb\xbf {}")) == b" {}"
    assert decode_content(WHERE, b"\x1f{}") == b"\x1f{}"
    for data in (b"", b" \n\t\r ", gzip.compress(b""), gzip.compress(b"\n"), b"\xef\xbb\xbf"):
        assert message_of(decode_content, WHERE, data) == f"{WHERE}: file is empty", data


# --- msgspec's errors in our words ------------------------------------------------------------


def test_validation_and_json_errors_in_our_words() -> None:
    assert split_validation_error("Expected `int`, got `str` - at `$.samples[3].offset`") == (
        "$.samples[3].offset",
        "expected `int`, got `str`",
    )
    assert split_validation_error("Object missing required field `offset`") == (
        "$",
        "object missing required field `offset`",
    )
    assert json_error_text("JSON is malformed: invalid character (byte 12)") == (
        "malformed JSON: invalid character"
    )
    assert json_error_text("Input data was truncated") == (
        "malformed JSON: truncated: the file ends inside the document"
    )
    assert json_error_text("maximum recursion depth exceeded") == (
        "malformed JSON: nested too deeply (more levels of [ or { than any profile has)"
    )
    data = b"ab\ncd\nef"
    assert json_error_place(data, "JSON is malformed: x (byte 4)") == "line 2, column 2"
    assert json_error_place(data, "JSON is malformed: x (byte 0)") == "line 1, column 1"
    assert json_error_place(data, "JSON is malformed: x (byte 3)") == "line 2, column 1"
    assert json_error_place(data, "Input data was truncated") == "line 3, column 3"
    assert json_error_place(data, "something else") == "document"
    assert json_error_place(b"\nab", "x (byte 2)") == "line 2, column 2"  # a newline at byte 0


# --- metadata ---------------------------------------------------------------------------------


def test_interned_ids_follow_first_appearance_across_batches() -> None:
    interner = MetadataInterner()
    ids = interner.intern([b"a", None, b"b", b"a", b"", "null", b"null", ""])
    assert ids.dtype == np.int64
    assert ids.tolist() == [0, -1, 1, 0, -1, -1, -1, -1]
    assert interner.distinct == [b"a", b"b"]
    assert interner.intern([b"c", b"a"]).tolist() == [2, 0]
    assert interner.distinct == [b"a", b"b", b"c"]
    ids, distinct = intern_metadata([b"x", b"x", None])
    assert ids.tolist() == [0, 0, -1] and distinct == [b"x"]


def _place(i: int) -> str:
    return f"sample {i}"


def test_decode_metadata_values_and_the_first_of_a_repeated_key() -> None:
    distinct = [
        b'[{"name":"usefulCycles","value":5},{"name":"usefulCycles","value":7},'
        b'{"name":"k","value":"v"}]',
        b'[{"name":"physicalWorkCycles","value":"2.5"},{"name":"usefulCycles","value":"0"}]',
    ]
    table, useful, physical = decode_metadata(WHERE, distinct, np.array([-1, 1, 0]), _place)
    assert table == [
        (("usefulCycles", "5"), ("usefulCycles", "7"), ("k", "v")),
        (("physicalWorkCycles", "2.5"), ("usefulCycles", "0")),
    ]
    assert useful.dtype == pl.Float64 and useful.to_list() == [5.0, 0.0]
    assert physical.dtype == pl.Float64 and physical.to_list() == [None, 2.5]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            b'[{"name": 1, "value": 2}]',
            "metadata: Expected `str`, got `int` - at `metadata[0].name`",
        ),
        (
            b'[{"name":"usefulCycles","value":"lots"}]',
            "metadata usefulCycles 'lots' is not a number",
        ),
        (
            b'[{"name":"physicalWorkCycles","value":"-1"}]',
            "metadata physicalWorkCycles '-1' is not a finite, non-negative number",
        ),
        (
            b'[{"name":"usefulCycles","value":"nan"}]',
            "metadata usefulCycles 'nan' is not a finite, non-negative number",
        ),
        (
            b'[{"name":"usefulCycles","value":"inf"}]',
            "metadata usefulCycles 'inf' is not a finite, non-negative number",
        ),
        # every entry of a number key is checked, not only the first
        (
            b'[{"name":"usefulCycles","value":1},{"name":"usefulCycles","value":"x"}]',
            "metadata usefulCycles 'x' is not a number",
        ),
    ],
)
def test_decode_metadata_names_the_first_sample_carrying_a_bad_list(
    text: bytes, expected: str
) -> None:
    distinct = [b"[]", text]
    ids = np.array([0, -1, 1, 0, 1])
    assert message_of(decode_metadata, WHERE, distinct, ids, _place) == (
        f"{WHERE}: sample 2: {expected}"
    )


# --- the frame and its checks -----------------------------------------------------------------

COLUMNS = {
    "tile": [0, 1, 2],
    "offset": [10, 20, 30],
    "duration": [1, 2, 3],
    "phase": [None, 4, 5],
    "epoch": [1, 1, None],
    "kind": ["compute", None, "exchange"],
    "operation": ["op", "op", None],
    "kernel": [None, "k", "k"],
}


def test_build_sample_frame_gathers_the_numbers_by_id() -> None:
    useful = pl.Series([1.0, 2.0], dtype=pl.Float64)
    physical = pl.Series([None, 3.0], dtype=pl.Float64)
    built = build_sample_frame(COLUMNS, np.array([0, -1, 1]), useful, physical)
    assert built.schema == SAMPLE_SCHEMA
    assert built["metadataId"].to_list() == [0, None, 1]
    assert built["usefulCycles"].to_list() == [1.0, None, 2.0]
    assert built["physicalWorkCycles"].to_list() == [None, None, 3.0]
    assert built["phase"].to_list() == [None, 4, 5]
    assert built["kind"].to_list() == ["compute", None, "exchange"]
    # no lists at all: the per-id tables are empty, every sample's numbers are null
    empty = pl.Series([], dtype=pl.Float64)
    none = build_sample_frame(COLUMNS, np.array([-1, -1, -1]), empty, empty)
    assert none.schema == SAMPLE_SCHEMA
    assert none["usefulCycles"].to_list() == [None] * 3
    assert none["physicalWorkCycles"].to_list() == [None] * 3
    # the compiled decoder's nullable UInt32 ids and gathered numbers are taken as they are
    ids = pl.Series("anything", [1, None, 0], dtype=pl.UInt32)
    given = {
        "usefulCycles": pl.Series("usefulCycles", [7.0, 8.0, 9.0]),
        "physicalWorkCycles": pl.Series("physicalWorkCycles", [None, 1.0, None]),
    }
    taken = build_sample_frame(COLUMNS, ids, useful, physical, per_sample=given)
    assert taken.schema == SAMPLE_SCHEMA
    assert taken["metadataId"].to_list() == [1, None, 0]
    assert taken["usefulCycles"].to_list() == [7.0, 8.0, 9.0]
    assert taken["physicalWorkCycles"].to_list() == [None, 1.0, None]
    gathered = build_sample_frame(COLUMNS, ids, useful, physical)
    assert gathered["usefulCycles"].to_list() == [2.0, None, 1.0]


def _refusal(samples: pl.DataFrame, tile_count: int = 16) -> str | None:
    try:
        validate_samples(samples, WHERE, tile_count, _place)
    except InputError as error:
        return str(error)
    return None


def _frame(**columns: list[int]) -> pl.DataFrame:
    """Samples on tile 0 at offset 0, duration 1, with these columns put in as they are (the
    compiled decoder would refuse some of these values before the checks see them)."""
    n = len(next(iter(columns.values())))
    base = frame([sample(0, 0, 1) for _ in range(n)])
    return base.with_columns(pl.Series(k, v, dtype=pl.Int64) for k, v in columns.items())


def test_each_row_check_in_its_words_and_at_its_boundary() -> None:
    top = 2**62
    assert _refusal(_frame(offset=[0, -1])) == "d.json: sample 1: negative offset -1"
    assert _refusal(_frame(duration=[-2])) == "d.json: sample 0: negative duration -2"
    assert _refusal(_frame(offset=[top], duration=[top - 1])) is None
    assert _refusal(_frame(offset=[0, top + 1], duration=[1, 0])) == (
        f"d.json: sample 1: offset {top + 1} or duration 0 is beyond 2^62 cycles"
    )
    assert _refusal(_frame(offset=[0], duration=[top + 1])) == (
        f"d.json: sample 0: offset 0 or duration {top + 1} is beyond 2^62 cycles"
    )
    assert _refusal(_frame(tile=[0, -3])) == "d.json: sample 1: negative physicalTile -3"
    assert _refusal(_frame(tile=[15])) is None
    assert _refusal(_frame(tile=[15, 16])) == (
        "d.json: sample 1: physicalTile 16 is not below tileCount 16"
    )


def test_the_end_and_the_running_sums_at_their_boundaries() -> None:
    top = 2**62
    assert _refusal(frame([sample(0, top, top - 1)])) is None  # ends at 2^63 - 1
    assert _refusal(frame([sample(0, 1, 1), sample(1, top, top)])) == (
        f"d.json: sample 1: offset {top} + duration {top} is beyond 2^63 - 1 cycles"
    )
    assert _refusal(frame([sample(0, 0, top), sample(1, 0, top - 1)])) is None  # sum 2^63 - 1
    assert _refusal(frame([sample(0, 0, 1), sample(1, 0, top), sample(2, 0, top)])) == (
        "d.json: sample 2: the durations up to here add up beyond 2^63 - 1 cycles"
    )
    big = [sample(t, 0, 1, physical=p) for t, p in enumerate((1e308, 0.0, 1e308))]
    assert _refusal(frame(big)) == (
        "d.json: sample 2: metadata physicalWorkCycles values up to here add up beyond a "
        "64-bit float"
    )
    assert _refusal(frame([sample(t, 0, 1, physical=1e308) for t in range(1)])) is None


# --- the device -------------------------------------------------------------------------------


def test_resolve_device_order_and_defaults() -> None:
    assert resolve_device(WHERE, DeviceHeader(), None, None) == (1_500_000_000, 1472)
    assert resolve_device(WHERE, DeviceHeader(clock_hz=5, tile_count=3), None, None) == (5, 3)
    assert resolve_device(WHERE, DeviceHeader(clock_hz=5, tile_count=3), 7.5, 9) == (7.5, 9)
    clock, tiles = resolve_device(WHERE, DeviceHeader(clock_hz=2e9), None, 2**20)
    assert (clock, tiles) == (2_000_000_000, 2**20) and type(clock) is int
    assert resolve_device(WHERE, DeviceHeader(), 1.0, 1) == (1, 1)
    assert resolve_device(WHERE, DeviceHeader(), 1e12, 1) == (10**12, 1)


@pytest.mark.parametrize(
    ("clock", "tiles", "expected"),
    [
        (0, 1, "clockHz: must be a positive number, not 0"),
        (-2.5, 1, "clockHz: must be a positive number, not -2.5"),
        (float("nan"), 1, "clockHz: must be a positive number, not nan"),
        (float("inf"), 1, "clockHz: must be a positive number, not inf"),
        ("1e9", 1, "clockHz: must be a positive number, not '1e9'"),
        (0.5, 1, "clockHz: 0.5 is outside 1 Hz to 1 THz"),
        (1e12 + 1, 1, "clockHz: 1000000000001 is outside 1 Hz to 1 THz"),
        (1e9, 0, "tileCount: must be a positive integer, not 0"),
        (1e9, 2.0, "tileCount: must be a positive integer, not 2.0"),
        (1e9, 2**20 + 1, "tileCount: 1048577 is beyond 1048576 tiles"),
    ],
)
def test_resolve_device_refusals(clock: object, tiles: object, expected: str) -> None:
    header = DeviceHeader(clock_hz=clock, tile_count=tiles)  # type: ignore[arg-type]
    assert message_of(resolve_device, WHERE, header, None, None) == f"{WHERE}: {expected}"
