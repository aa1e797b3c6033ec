"""Fuzzing every input format (issue 11; docs/reliability.md, "Fuzzing").

Small valid inputs, one per format, are mutated at the byte level (flips, inserts of hostile
bytes, deletions, truncation) and structurally (a JSON value, CSV cell or Parquet column
replaced by a hostile one, a key deleted), then given to the command that reads them. Whatever
the mutation, the run must end either successfully, with strict JSON output, or with the one-line
``tileprof: error:`` and exit 2; no other exception, and no run longer than ``TIME_LIMIT_S``.

In CI (the default ``fuzz-ci`` profile) each test runs a fixed, derandomized set of examples:
about a minute for all of them. A release check runs the long profile with fresh randomness::

    TILEPROF_FUZZ_PROFILE=fuzz-release pytest -m fuzz -p no:randomly --hypothesis-seed=20261130

(about ten minutes). A failure found there is kept below as an ``@example`` of its test.
"""

from __future__ import annotations

import contextlib
import csv
import gzip
import io
import json
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from tests.hostile import ROOT, invoke, strict_json, time_limit
from tests.samples import document, sample
from tests.test_kineto_inventory_native import assert_same_reading as assert_same_inventory
from tests.test_kineto_native import assert_same_reading
from tileprof.model.profile import load
from tileprof.views.writers import dump_bytes

pytestmark = pytest.mark.fuzz

TIME_LIMIT_S = 30
"""No input may keep a command busy longer than this (a hang fails the example)."""

settings.register_profile(
    "fuzz-ci",
    max_examples=20,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "fuzz-explore",
    max_examples=150,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
settings.register_profile(
    "fuzz-release",
    max_examples=1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
FUZZ = settings.get_profile(os.environ.get("TILEPROF_FUZZ_PROFILE", "fuzz-ci"))
"""The fuzz tests' settings: ``fuzz-ci`` unless TILEPROF_FUZZ_PROFILE names another."""

SAMPLES = [
    sample(0, 0, 100, "gemm_f16", useful=50, physical=60, phase=1, epoch=1),
    sample(1, 10, 90, "gemm_f16", useful=40, physical=60, phase=1, epoch=1),
    sample(2, 100, 30, None, kind="exchange", phase=2, epoch=1),
    sample(0, 500, 10, "copy", phase=3, epoch=2),
]
KINETO = ROOT / "fixtures" / "traces" / "kineto_small.json"
LATENCY = ROOT / "fixtures" / "seeds" / "000_55f6fcd9cea2f10a.txt"
ENERGY = ROOT / "fixtures" / "seeds" / "003_2d9153cb18ea7de3.txt"
NSYS = ROOT / "fixtures" / "runs" / "nsys_kern_sum.csv"
RUNS_CSV = ROOT / "fixtures" / "runs" / "generic_runs.csv"
RUNS_JSON = ROOT / "fixtures" / "runs" / "generic_runs.json"
LINKS = ROOT / "fixtures" / "runs" / "links.toml"
DEVICE_LOG = ROOT / "fixtures" / "real" / "tt-device-log" / "profile_log_device.csv"


def _tile_seeds() -> dict[str, bytes]:
    """The valid seed of each tile format, built at import (parametrize needs the names) in a
    folder removed at once, so no suite run leaves ``/tmp/tileprof-fuzz-*`` behind."""
    with tempfile.TemporaryDirectory(prefix="tileprof-fuzz-") as name:
        folder = Path(name)
        seed = document(SAMPLES, clockHz=1.5e9, tileCount=4)
        profile = load(_write(folder / "seed.json", seed))
        profile.save(folder / "cache.parquet")
        seeds = {fmt: dump_bytes(profile, fmt) for fmt in ("json", "ndjson", "csv", "parquet")}
        seeds["cache"] = (folder / "cache.parquet").read_bytes()
    seeds["gzip"] = gzip.compress(seeds["json"], mtime=0)
    return seeds


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


TILE_SEEDS = _tile_seeds()
TILE_NAMES = {"json": "d.json", "ndjson": "d.ndjson", "csv": "d.csv", "parquet": "d.parquet"}
TILE_NAMES |= {"cache": "c.parquet", "gzip": "d.json.gz"}
RUN_SEEDS = {
    "kineto": ("trace.json", KINETO.read_bytes()),
    "latency": ("latency.json", LATENCY.read_bytes()),
    "energy": ("energy.json", ENERGY.read_bytes()),
    "nsys": ("kern_sum.csv", NSYS.read_bytes()),
    "runs-csv": ("runs.csv", RUNS_CSV.read_bytes()),
    "runs-json": ("runs.json", RUNS_JSON.read_bytes()),
}

# --- mutations ---------------------------------------------------------------------------

HOSTILE_BYTES = [
    b"\x00",
    b"\xff",
    b"\xfe\xff",
    b"\xef\xbb\xbf",
    b"\r",
    b"\n",
    b'"',
    b",",
    b"{",
    b"[",
    b"]",
    b"}",
    b"-",
    b"9" * 25,
    b"1e400",
    b"-0",
    b"NaN",
    b"\x1b[31m",
    b"\\u0000",
    b"#",
]
HOSTILE_VALUES: list[Any] = [
    None,
    -1,
    0,
    2**62,
    2**63,
    2**70,
    -(2**63) - 1,
    1e308,
    5e-324,
    "__INF__",
    "",
    "\x1b[2J\x07",
    "x" * 5000,
    [],
    {},
    True,
    0.5,
    "nan",
    "-1",
    [[[[[]]]]],
]
byte_edits = st.lists(
    st.tuples(
        st.sampled_from(["flip", "insert", "delete", "truncate"]),
        st.integers(min_value=0, max_value=1 << 16),
        st.one_of(st.sampled_from(HOSTILE_BYTES), st.binary(min_size=1, max_size=4)),
    ),
    min_size=1,
    max_size=4,
)
value_edits = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=1 << 16),
        st.one_of(st.sampled_from(HOSTILE_VALUES), st.just("__DELETE__")),
    ),
    min_size=1,
    max_size=3,
)


def mutate_bytes(data: bytes, edits: list[tuple[str, int, bytes]]) -> bytes:
    """``data`` with each edit applied at its position (taken modulo the length)."""
    out = bytearray(data)
    for op, position, payload in edits:
        at = position % (len(out) + 1)
        if op == "flip" and out:
            out[at % len(out)] ^= payload[0] or 0xFF
        elif op == "insert":
            out[at:at] = payload
        elif op == "delete":
            del out[at : at + len(payload)]
        elif op == "truncate":
            del out[at:]
    return bytes(out)


def _paths(value: Any, at: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*at, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _paths(item, (*at, index))


def mutate_json(data: bytes, edits: list[tuple[int, Any]], *, lines: bool = False) -> bytes:
    """Replace (or delete) values of a JSON document, or of the objects of an NDJSON file."""
    docs = [json.loads(line) for line in data.splitlines()] if lines else [json.loads(data)]
    root: Any = docs
    for position, replacement in edits:
        paths = [p for p in _paths(root) if p]
        if not paths:
            break
        path = paths[position % len(paths)]
        parent = root
        for key in path[:-1]:
            parent = parent[key]
        if replacement == "__DELETE__":
            del parent[path[-1]]
        else:
            parent[path[-1]] = replacement
    texts = [json.dumps(doc).replace('"__INF__"', "1e400") for doc in root]
    return "\n".join(texts).encode() + b"\n"


def mutate_csv(data: bytes, edits: list[tuple[int, Any]]) -> bytes:
    """Replace (or delete) cells of a CSV file; a leading ``#`` comment line is kept."""
    text = data.decode()
    comment = ""
    if text.startswith("#"):
        comment, _, text = text.partition("\n")
        comment += "\n"
    rows = list(csv.reader(io.StringIO(text, newline="")))
    for position, replacement in edits:
        cells = [(r, c) for r, row in enumerate(rows) for c in range(len(row))]
        r, c = cells[position % len(cells)]
        if replacement == "__DELETE__":
            del rows[r][c]
        else:
            rows[r][c] = "1e400" if replacement == "__INF__" else json.dumps(replacement).strip('"')
    out = io.StringIO(newline="")
    csv.writer(out).writerows(rows)
    return (comment + out.getvalue()).encode()


PARQUET_COLUMNS = [
    pl.Series(["x", None, "1", "é"]),
    pl.Series([None, None, None, None], dtype=pl.Null),
    pl.Series([2**64 - 1, 0, 1, 2], dtype=pl.UInt64),
    pl.Series([float("inf"), float("nan"), -1.0, 1e308]),
    pl.Series([-5, -(2**63), 2**63 - 1, 0], dtype=pl.Int64),
    pl.Series([True, False, True, None]),
]


def mutate_parquet(data: bytes, edits: list[tuple[int, Any]]) -> bytes:
    """Replace columns of a Parquet file (key-value metadata kept) with hostile ones."""
    source = io.BytesIO(data)
    kv = pl.read_parquet_metadata(source)
    frame = pl.read_parquet(io.BytesIO(data))
    for position, replacement in edits:
        name = frame.columns[position % frame.width]
        column = PARQUET_COLUMNS[hash(json.dumps(replacement, default=str)) % len(PARQUET_COLUMNS)]
        if replacement == "__DELETE__" and frame.width > 1:
            frame = frame.drop(name)
        else:
            frame = frame.with_columns(column.head(frame.height).alias(name))
    out = io.BytesIO()
    frame.write_parquet(out, metadata=kv)
    return out.getvalue()


# --- the promise -------------------------------------------------------------------------


def assert_promise(*args: str | Path) -> None:
    """Run ``tileprof ARGS --format json``: strict JSON on success, else the one-line error."""
    with time_limit(TIME_LIMIT_S):
        code, out, err, exception = invoke(*args, "--format", "json")
    assert exception is None, f"{type(exception).__name__}: {exception}"
    if code == 0:
        strict_json(out)
        return
    lines = err.strip("\n").split("\n")
    assert code == 2 and len(lines) == 1 and lines[0].startswith("tileprof: error: "), err


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


@pytest.mark.parametrize("fmt", sorted(TILE_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
@example(edits=[("insert", 0, b"\xef\xbb\xbf")])
@example(edits=[("truncate", 40, b"x")])
def test_tile_dump_bytes(folder: Path, fmt: str, edits: list[tuple[str, int, bytes]]) -> None:
    path = _write(folder / TILE_NAMES[fmt], mutate_bytes(TILE_SEEDS[fmt], edits))
    assert_promise("summary", path)


@settings(FUZZ)
@given(edits=byte_edits)
@example(edits=[("truncate", 400, b"x")])
def test_tt_device_log_bytes(folder: Path, edits: list[tuple[str, int, bytes]]) -> None:
    """tt-metal's device log (a tile dump read from its own CSV layout), mutated."""
    (folder / "log").mkdir(exist_ok=True)  # a folder of its own: no ops report beside it
    path = _write(
        folder / "log" / "profile_log_device.csv", mutate_bytes(DEVICE_LOG.read_bytes(), edits)
    )
    assert_promise("summary", path)


@pytest.mark.parametrize("fmt", sorted(TILE_SEEDS))
@settings(FUZZ)
@given(edits=value_edits)
@example(edits=[(3, 2**63)])
@example(edits=[(5, "__INF__")])
def test_tile_dump_structure(folder: Path, fmt: str, edits: list[tuple[int, Any]]) -> None:
    seed = TILE_SEEDS[fmt]
    if fmt in ("json", "gzip"):
        data = mutate_json(gzip.decompress(seed) if fmt == "gzip" else seed, edits)
        data = gzip.compress(data, mtime=0) if fmt == "gzip" else data
    elif fmt == "ndjson":
        data = mutate_json(seed, edits, lines=True)
    elif fmt == "csv":
        data = mutate_csv(seed, edits)
    else:
        data = mutate_parquet(seed, edits)
    assert_promise("summary", _write(folder / TILE_NAMES[fmt], data))


@pytest.mark.parametrize("kind", sorted(RUN_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
def test_run_source_bytes(folder: Path, kind: str, edits: list[tuple[str, int, bytes]]) -> None:
    name, seed = RUN_SEEDS[kind]
    assert_promise("runs", _write(folder / name, mutate_bytes(seed, edits)))


@pytest.mark.parametrize("kind", sorted(RUN_SEEDS))
@settings(FUZZ)
@given(edits=value_edits)
@example(edits=[(7, 2**70)])
@example(edits=[(147, "__INF__")])  # found: a 1e400 in the energy report's free-form blocks
def test_run_source_structure(folder: Path, kind: str, edits: list[tuple[int, Any]]) -> None:
    name, seed = RUN_SEEDS[kind]
    if name.endswith(".csv"):
        text = seed.decode()
        start = text.find("Time (%)") if kind == "nsys" else 0
        data = seed[:start] + mutate_csv(text[start:].encode(), edits)
    else:
        data = mutate_json(seed, edits)
    assert_promise("runs", _write(folder / name, data))


@settings(FUZZ)
@given(edits=byte_edits)
@example(edits=[("insert", 0, b"\xff\xfe")])
def test_links_bytes(folder: Path, edits: list[tuple[str, int, bytes]]) -> None:
    links = _write(folder / "links.toml", mutate_bytes(LINKS.read_bytes(), edits))
    assert_promise("runs", RUNS_CSV, ENERGY, "--links", links, "--linked")


def _rank_seed() -> bytes:
    """A small rank trace for ``breakdown``: a ProfilerStep, a launched kernel, and an NCCL
    kernel launched by a ``record_param_comms`` op that carries its parameters."""
    comm = {"External id": 9, "Collective name": "allreduce", "In msg nelems": 1024,
            "Out msg nelems": 1024, "Group size": 2, "dtype": "Float",
            "Process Group Name": "0", "Seq": 3}  # fmt: skip
    events = [
        {"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#1", "pid": 0, "tid": 7,
         "ts": 0.0, "dur": 100.0, "args": {}},
        {"ph": "X", "cat": "cpu_op", "name": "record_param_comms", "pid": 1, "tid": 1,
         "ts": 1.0, "dur": 5.0, "args": comm},
        {"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
         "ts": 2.0, "dur": 3.0, "args": {"correlation": 5, "External id": 9}},
        {"ph": "X", "cat": "kernel", "name": "ncclDevKernel_AllReduce", "pid": 0, "tid": 7,
         "ts": 10.0, "dur": 20.0, "args": {"device": 0, "stream": 7, "correlation": 5}},
        {"ph": "X", "cat": "kernel", "name": "gemm", "pid": 0, "tid": 7, "ts": 40.0,
         "dur": 20.0, "args": {"device": 0, "stream": 7, "correlation": 6}},
    ]  # fmt: skip
    info = {"backend": "nccl", "rank": 0, "world_size": 2}
    return json.dumps({"traceEvents": events, "distributedInfo": info}).encode()


BREAKDOWN_SEEDS = {"kineto": KINETO.read_bytes(), "rank": _rank_seed()}


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
def test_breakdown_bytes(folder: Path, kind: str, edits: list[tuple[str, int, bytes]]) -> None:
    path = _write(folder / "trace.json", mutate_bytes(BREAKDOWN_SEEDS[kind], edits))
    assert_promise("breakdown", path)


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=value_edits)
@example(edits=[(7, 2**70)])
@example(edits=[(12, "__INF__")])
@example(edits=[(840, 2**63)])  # found: a stream beyond Int64 in kineto_small.json
def test_breakdown_structure(folder: Path, kind: str, edits: list[tuple[int, Any]]) -> None:
    path = _write(folder / "trace.json", mutate_json(BREAKDOWN_SEEDS[kind], edits))
    assert_promise("breakdown", path)


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
def test_kineto_decoder_bytes(kind: str, edits: list[tuple[str, int, bytes]]) -> None:
    """The compiled Kineto decoder (issue 33) reads a mutated trace exactly as msgspec's path
    does: the same frame and ``args``, or the same error line (it declines what it cannot
    hold)."""
    assert_same_reading(mutate_bytes(BREAKDOWN_SEEDS[kind], edits))


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=value_edits)
def test_kineto_decoder_structure(kind: str, edits: list[tuple[int, Any]]) -> None:
    assert_same_reading(mutate_json(BREAKDOWN_SEEDS[kind], edits))


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=value_edits)
def test_kineto_inventory_structure(kind: str, edits: list[tuple[int, Any]]) -> None:
    """The compiled inventory reader of the capture checks reads a mutated trace exactly as
    msgspec's path does: the same inventory and rank, or the same error line."""
    assert_same_inventory(mutate_json(BREAKDOWN_SEEDS[kind], edits))


@pytest.mark.parametrize("kind", sorted(BREAKDOWN_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
def test_kineto_inventory_bytes(kind: str, edits: list[tuple[str, int, bytes]]) -> None:
    assert_same_inventory(mutate_bytes(BREAKDOWN_SEEDS[kind], edits))


# --- GPU and Tenstorrent readers, and SQLite (issue 32) ----------------------------------

REAL = ROOT / "fixtures" / "real"
LONG_NAME = "void gemm<" + "cute::tuple<int, int>, " * 9000 + ">(float*)"
"""A C++ template name of about 210,000 characters: longer than Python's default CSV cell
limit (131,072), as real ones are."""
HOSTILE_CELLS = ["nan", "inf", "-inf", "1e400", "9" * 25, "", "-1", "1.5", "x", "\u2028",
                 "a\nb", "a\rb", '"', LONG_NAME]  # fmt: skip


def _head_records(path: Path, rows: int) -> bytes:
    """The header and the first ``rows`` records of a CSV, as written (quoted line ends kept)."""
    text = path.read_text()
    reader = csv.reader(io.StringIO(text, newline=""))
    for _ in range(rows + 1):
        next(reader)
    lines = text.splitlines(keepends=True)
    return "".join(lines[: reader.line_num]).encode()


def _ncu_seed() -> bytes:
    """The ncu log: the program's own output, the header, and the rows of its one launch."""
    return (REAL / "cublaslt_gemm_b200_ncu.log").read_bytes()


def _sqlite_seed() -> bytes:
    """The real nsys export cut to its first 40 rows of every event table (schema unchanged,
    so the readers meet nsys' own declarations), built in a folder removed at once."""
    import sqlite3

    with tempfile.TemporaryDirectory(prefix="tileprof-fuzz-") as name:
        path = Path(name) / "seed.sqlite"
        path.write_bytes((REAL / "h100_2gpu_1s.sqlite").read_bytes())
        conn = sqlite3.connect(path)
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            if table.startswith(("CUPTI_", "NVTX_")):
                conn.execute(f"DELETE FROM {table} WHERE rowid > 40")
        conn.commit()
        conn.execute("VACUUM")
        conn.close()
        return path.read_bytes()


CSV_SEEDS = {
    "rocprof": ("kernel_trace.csv", (REAL / "kernel_trace.csv").read_bytes()),
    "tenstorrent": ("ops.csv", _head_records(REAL / "tt_wh_clip_encoder_400.csv", 12)),
    "ncu": ("ncu.log", _ncu_seed()),
}
SQLITE_SEED = _sqlite_seed()

csv_edits = st.lists(
    st.one_of(
        st.tuples(st.just("cell"), st.integers(0, 1 << 16), st.sampled_from(HOSTILE_CELLS)),
        st.tuples(st.just("line_ends"), st.integers(0, 2), st.just("")),
        st.tuples(st.just("dup_header"), st.integers(0, 1 << 16), st.just("")),
        st.tuples(st.just("dup_column"), st.integers(0, 1 << 16), st.just("")),
        st.tuples(st.just("cut_row"), st.integers(0, 1 << 16), st.just("")),
        st.tuples(st.just("truncate"), st.integers(0, 1 << 16), st.just("")),
    ),
    min_size=1,
    max_size=3,
)


def mutate_table(data: bytes, edits: list[tuple[str, int, str]]) -> bytes:
    """A CSV report mutated as a table: a cell replaced by a hostile one (NaN, inf, a huge
    number, a long name, a quoted line end), the line ends swapped (LF, CRLF, bare CR), the
    header repeated as a row, a column repeated, a row cut short in the middle, or the text
    cut anywhere (inside the header too). Lines before an ncu header are kept as they are."""
    text = data.decode()
    start = text.find('"ID",')
    prefix, text = (text[:start], text[start:]) if start > 0 else ("", text)
    rows = list(csv.reader(io.StringIO(text, newline="")))
    end, cut = "\n", None
    for op, position, value in edits:
        r = position % len(rows)
        if op == "cell":
            rows[r][position % len(rows[r])] = value
        elif op == "line_ends":
            end = ("\n", "\r\n", "\r")[position]
        elif op == "dup_header":
            rows.insert(max(1, r), list(rows[0]))
        elif op == "dup_column":
            c = position % len(rows[0])
            rows = [[*row, row[c]] if c < len(row) else row for row in rows]
        elif op == "cut_row" and len(rows[r]) > 1:
            rows[r] = rows[r][: position % len(rows[r])]
        elif op == "truncate":
            cut = position
    out = io.StringIO(newline="")
    csv.writer(out, lineterminator=end).writerows(rows)
    body = (prefix + out.getvalue()).encode()
    return body if cut is None else body[: cut % (len(body) + 1)]


@pytest.mark.parametrize("kind", sorted(CSV_SEEDS))
@settings(FUZZ)
@given(edits=byte_edits)
def test_gpu_report_bytes(folder: Path, kind: str, edits: list[tuple[str, int, bytes]]) -> None:
    name, seed = CSV_SEEDS[kind]
    assert_promise("runs", _write(folder / name, mutate_bytes(seed, edits)))


@pytest.mark.parametrize("kind", sorted(CSV_SEEDS))
@settings(FUZZ)
@given(edits=csv_edits)
@example(edits=[("line_ends", 2, "")])
@example(edits=[("cell", 1, LONG_NAME)])
@example(edits=[("dup_header", 3, "")])
@example(edits=[("cut_row", 40, "")])
def test_gpu_report_structure(folder: Path, kind: str, edits: list[tuple[str, int, str]]) -> None:
    """The promise; and where only the line ends changed, the same runs as the seed's."""
    name, seed = CSV_SEEDS[kind]
    path = _write(folder / name, mutate_table(seed, edits))
    assert_promise("runs", path)
    if all(op == "line_ends" for op, _, _ in edits):
        got = invoke("runs", path, "--format", "json")[1]
        assert got == invoke("runs", _write(path, seed), "--format", "json")[1]


SQLITE_VALUES = ["'text'", "1.5", "x'00ff'", "NULL", str(2**63 - 1), "-1", "1e400",
                 f"'{'n' * 200_000}'", "'9'"]  # fmt: skip
SQLITE_TARGETS = [
    ("CUPTI_ACTIVITY_KIND_KERNEL", c)
    for c in ("start", "end", "deviceId", "streamId", "demangledName", "gridX", "globalPid")
] + [
    ("StringIds", "value"),
    ("StringIds", "id"),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", "bytes"),
    ("CUPTI_ACTIVITY_KIND_MEMCPY", "copyKind"),
    ("CUPTI_ACTIVITY_KIND_RUNTIME", "correlationId"),
    ("NVTX_EVENTS", "text"),
    ("NVTX_EVENTS", "end"),
]
GENERATED = (
    "ALTER TABLE StringIds RENAME TO old_strings; "
    "CREATE TABLE StringIds (id INTEGER PRIMARY KEY, "
    "value TEXT GENERATED ALWAYS AS (printf('%.*c', 1000000, 'x')) VIRTUAL); "
    "INSERT INTO StringIds (id) SELECT id FROM old_strings; DROP TABLE old_strings;"
)
"""StringIds.value as a generated column, hidden from ``PRAGMA table_info``: each read of a
name computes a megabyte."""
TEXT_GPU_ID = (
    "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT); "
    "INSERT INTO TARGET_INFO_GPU VALUES ('gpu0', 'H100');"
)
sqlite_edits = st.lists(
    st.one_of(
        st.tuples(
            st.sampled_from(SQLITE_TARGETS), st.integers(1, 40), st.sampled_from(SQLITE_VALUES)
        ),
        st.just(GENERATED),
        st.just(TEXT_GPU_ID),
        st.just("ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL RENAME COLUMN start TO begin;"),
    ),
    min_size=1,
    max_size=3,
)


def mutate_sqlite(folder: Path, edits: list[Any]) -> Path:
    """The SQLite seed with values of the wrong type, schema edits, generated columns."""
    import sqlite3

    path = _write(folder / "export.sqlite", SQLITE_SEED)
    conn = sqlite3.connect(path)
    for edit in edits:
        with contextlib.suppress(sqlite3.Error):
            if isinstance(edit, str):
                conn.executescript(edit)
            else:
                (table, column), row, value = edit
                conn.execute(f'UPDATE {table} SET "{column}" = {value} WHERE rowid = {row}')
    conn.commit()
    conn.close()
    return path


@settings(FUZZ)
@given(edits=byte_edits)
@example(edits=[("flip", 108 // 16, b"\x80")])  # page 1's b-tree header: the schema's root
def test_sqlite_bytes(folder: Path, edits: list[tuple[str, int, bytes]]) -> None:
    """Byte edits spread over the whole export (positions scaled by 16)."""
    pages = [(op, at * 16, b) for op, at, b in edits]
    assert_promise("runs", _write(folder / "export.sqlite", mutate_bytes(SQLITE_SEED, pages)))


@settings(FUZZ)
@given(edits=sqlite_edits)
@example(edits=[GENERATED])
def test_sqlite_structure(folder: Path, edits: list[Any]) -> None:
    assert_promise("runs", mutate_sqlite(folder, edits))


MEMORY_LIMIT = 1536 * 2**20
"""Address space for the memory-limited runs: the real inputs read in well under it."""


LIMITED_RUNS = """
import json, resource, sys
resource.setrlimit(resource.RLIMIT_AS, (int(sys.argv[1]), int(sys.argv[1])))
from tests.hostile import invoke
print(json.dumps([invoke("runs", p, "--format", "json")[::2][:2] for p in sys.argv[2:]]))
"""
"""Runs ``tileprof runs`` on each file under a memory limit in one process (the CLI runner
turns a failure into an exit code), printing ``[code, stderr]`` per file."""


def test_hostile_reports_under_a_memory_limit(folder: Path) -> None:
    """Long names, a ballooning generated column and the real reports, each under a memory
    limit in a subprocess: a correct read, or the one line and exit 2 (never a crash)."""
    import subprocess
    import sys

    heavy = GENERATED.replace("1000000", "16000000")
    long_name = CSV_SEEDS["rocprof"][1].replace(b"subtract_kernel", LONG_NAME.encode() * 8)
    cases = {
        mutate_sqlite(folder, [heavy]): "generated column",
        _write(folder / "long.csv", long_name): None,
        _write(folder / "ops.csv", CSV_SEEDS["tenstorrent"][1]): None,
        REAL / "h100_2gpu_1s.sqlite": None,
    }
    command = [sys.executable, "-c", LIMITED_RUNS, str(MEMORY_LIMIT), *map(str, cases)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    for (path, words), (code, err) in zip(cases.items(), json.loads(done.stdout), strict=True):
        lines = err.strip("\n").split("\n") if err.strip() else []
        if words is None:
            assert code == 0 and not lines, (path, err)
        else:
            assert code == 2 and len(lines) == 1 and words in lines[0], (path, err)


def _many_samples(path: Path, count: int) -> Path:
    """A plain JSON dump of ``count`` small samples (7 kernels): 64 bytes a sample on disk,
    written in one piece."""
    body = ",".join(
        f'{{"physicalTile":{i % 1472},"offset":{i},"duration":5,"kernel":"k{i % 7}"}}'
        for i in range(count)
    )
    path.write_text(f'{{"clockHz": 1e9, "tileCount": 1472, "samples": [{body}]}}')
    return path


@pytest.mark.parametrize(
    "command",
    [["summary"], ["report", "-o", "out.html"], ["trace", "-o", "out.pftrace"]],
    ids=lambda command: command[0],
)
def test_the_compiled_decoder_under_a_memory_limit_is_one_line(
    tmp_path: Path, command: list[str]
) -> None:
    """500,000 samples (32 MB) under address-space limits that leave 60 and 100 MiB past the
    imports: the mapped file fits, the decoded columns (and polars after them) do not. Before,
    the compiled decoder aborted ("memory allocation of 262144 bytes failed", SIGABRT, exit
    134); now its columns grow with ``try_reserve`` and the analyses' room is checked before
    they start: the one line naming the file, exit 2, or a report that fits."""
    from tests.hostile import run_under_memory_limit

    dump = _many_samples(tmp_path / "many.json", 500_000)
    outputs = [str(tmp_path / part) if part.startswith("out.") else part for part in command]
    refused = 0
    for mib in (60, 100):
        code, err = run_under_memory_limit(*outputs[:1], dump, *outputs[1:], headroom=mib << 20)
        lines = err.strip().splitlines()
        assert code in (0, 2), (mib, code, err[-2000:])
        if code == 2:
            refused += 1
            assert len(lines) == 1, (mib, err[-2000:])
            assert lines[0].startswith(f"tileprof: error: {dump}"), lines[0]
            assert "out of memory" in lines[0]
        else:
            assert not lines, (mib, err[-2000:])
    assert refused, "neither limit was tight enough to test anything"
