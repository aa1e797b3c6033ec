"""Nsight Systems SQLite exports, held to SQL over the same database.

``fixtures/real/h100_2gpu_1s.sqlite`` is one second of a 2×H100 run (see
``fixtures/real/README.md``); every total tileprof reports is recomputed here with plain SQL.
The before/after ``diff`` pair and the named-GPU export are built with ``sqlite3`` in the test.
"""

from __future__ import annotations

import json
import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from click.testing import CliRunner

from tileprof.commands.cli import cli
from tileprof.core.errors import InputError
from tileprof.core.gpu_events import GPU_EVENT_COLUMNS, GPU_EVENT_SCHEMA
from tileprof.inputs.gpu.nsys_sqlite import (
    affinity,
    export_environment,
    gpu_events,
    host_calls,
    parse,
    read_export,
    target_names,
)
from tileprof.inputs.sources import detect_file_kind, load_runs

EXPORT = Path(__file__).resolve().parent.parent / "fixtures" / "real" / "h100_2gpu_1s.sqlite"


def sql(query: str, path: Path = EXPORT) -> list[tuple[Any, ...]]:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return conn.execute(query).fetchall()


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_detected_by_content(tmp_path: Path) -> None:
    copy = tmp_path / "export.bin"
    copy.write_bytes(EXPORT.read_bytes())
    assert detect_file_kind(copy)[0] == "nsys SQLite export"


def test_kernel_totals_match_sql() -> None:
    runs = load_runs(EXPORT).frame
    kernels = runs.filter(pl.col("metadata").str.contains('"category": "kernel"'))
    got = kernels.group_by("device").agg(pl.col("calls").sum(), pl.col("total_us").sum())
    assert kernels["target"].unique().to_list() == ["GPU"]  # unnamed: the two GPUs, one target
    want = sql(
        "SELECT deviceId, COUNT(*), SUM(end - start) FROM CUPTI_ACTIVITY_KIND_KERNEL "
        "GROUP BY deviceId"
    )
    assert len(want) == 2
    for device, count, total_ns in want:
        row = got.filter(pl.col("device") == f"GPU {device}").row(0, named=True)
        assert row["calls"] == count
        assert row["total_us"] == pytest.approx(int(total_ns) / 1000, rel=1e-12)
    # one row per (device, demangled name)
    names = sql(
        "SELECT COUNT(*) FROM (SELECT DISTINCT k.deviceId, s.value FROM "
        "CUPTI_ACTIVITY_KIND_KERNEL k JOIN StringIds s ON s.id = k.demangledName)"
    )
    assert kernels.height == names[0][0]


def test_memcpy_memset_bytes_and_launches_match_sql() -> None:
    runs = load_runs(EXPORT).frame
    meta = [json.loads(m) for m in runs["metadata"].to_list()]
    copied = sum(m.get("bytes", 0) for m in meta if m["category"] == "memcpy")
    set_ = sum(m.get("bytes", 0) for m in meta if m["category"] == "memset")
    assert copied == sql("SELECT SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMCPY")[0][0]
    assert set_ == sql("SELECT SUM(bytes) FROM CUPTI_ACTIVITY_KIND_MEMSET")[0][0]
    # a launch is the runtime call with the same correlation id in the same process
    (launched,) = sql(
        "SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL k JOIN CUPTI_ACTIVITY_KIND_RUNTIME r "
        "ON r.correlationId = k.correlationId "
        "AND ((r.globalTid >> 24) & 16777215) = ((k.globalPid >> 24) & 16777215)"
    )[0]
    kernel_launches = sum(m.get("launched_calls", 0) for m in meta if m["category"] == "kernel")
    assert kernel_launches == launched
    assert 0 < launched < sql("SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_KERNEL")[0][0]


def test_gpu_event_frame_and_nvtx() -> None:
    data = EXPORT.read_bytes()
    events = gpu_events(EXPORT, data)
    assert events.schema == pl.Schema(GPU_EVENT_SCHEMA)
    assert {c.name for c in GPU_EVENT_COLUMNS if not c.nullable} <= {
        c for c in events.columns if events[c].null_count() == 0
    }
    total = sum(
        sql(f"SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_{t}")[0][0]
        for t in ("KERNEL", "MEMCPY", "MEMSET")
    )
    assert events.height == total
    assert (events["end_ns"] >= events["start_ns"]).all()
    launched = events.filter(pl.col("launch_end_ns").is_not_null())
    assert (launched["launch_start_ns"] <= launched["start_ns"]).all()
    nvtx = read_export(EXPORT, data).nvtx
    want = sql("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL")
    assert nvtx.height == want[0][0]
    assert nvtx["name"].null_count() == 0


def build_export(path: Path, kernels: list[tuple[str, int, int, int]], gpus: bool = True) -> Path:
    """A minimal nsys export: kernels (name, device, start ns, end ns), named GPUs."""
    conn = sqlite3.connect(path)
    conn.executescript(
        """
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId INTEGER,
            streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
            shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
            blockY INTEGER, blockZ INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER, end INTEGER, globalTid INTEGER,
            correlationId INTEGER, nameId INTEGER);
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
        CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER);
        """
    )
    names = sorted({k[0] for k in kernels})
    conn.executemany("INSERT INTO StringIds VALUES (?, ?)", list(enumerate(names)))
    pid = 42 << 24
    for corr, (name, device, start, end) in enumerate(kernels):
        sid = names.index(name)
        conn.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES (?,?,?,7,?,?,?,?,1,1,1,128,1,1)",
            (start, end, device, corr, pid, sid, sid),
        )
        conn.execute(
            "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (?,?,?,?,0)",
            (start - 900, start - 400, pid + 1, corr),
        )
    if gpus:
        conn.execute("INSERT INTO TARGET_INFO_GPU VALUES (3, 'NVIDIA H100 80GB HBM3')")
        conn.execute("INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (3, 0, 42)")
    conn.commit()
    conn.close()
    return path


def test_gpus_named_from_the_export_and_launch_delay(tmp_path: Path) -> None:
    path = build_export(tmp_path / "a.sqlite", [("gemm_bf16", 0, 1000, 3000)] * 2)
    runs = load_runs(path)
    row = runs.frame.row(0, named=True)
    assert row["target"] == "NVIDIA H100 80GB HBM3"  # CUDA device 0 of pid 42 is GPU 3
    assert row["peak_tflops"] is not None and row["calls"] == 2
    assert json.loads(row["metadata"])["launch_delay_us"] == pytest.approx(0.4)  # start − call end


def test_diff_of_two_exports(tmp_path: Path) -> None:
    before = build_export(tmp_path / "before.sqlite", [("k_a", 0, 0, 10_000), ("k_b", 0, 0, 500)])
    after = build_export(tmp_path / "after.sqlite", [("k_a", 0, 0, 5_000), ("k_c", 0, 0, 700)])
    code, out, err = run("diff", str(before), str(after), "--format", "json")
    assert code == 0, err
    doc = json.loads(out)
    rows = {r["group"]: r for r in doc["groups"]}
    assert rows["k_a"]["total_us_before"] == 10.0 and rows["k_a"]["total_us_after"] == 5.0
    assert rows["k_a"]["status"] == "changed"
    assert {rows["k_b"]["status"], rows["k_c"]["status"]} == {"removed", "added"}


@pytest.mark.parametrize("cut", [100, 5000, 70_000])
def test_truncated_or_garbled_export_is_one_line(tmp_path: Path, cut: int) -> None:
    path = tmp_path / "broken.sqlite"
    data = EXPORT.read_bytes()
    path.write_bytes(data[:cut] if cut != 5000 else data[:5000] + b"\xff" * 200_000)
    code, out, err = run("runs", str(path))
    assert code == 2, (code, out, err)
    assert err.count("\n") == 1 and err.startswith(f"tileprof: error: {path}"), err
    assert "Traceback" not in err


def test_non_nsys_sqlite_lists_the_kinds(tmp_path: Path) -> None:
    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE t (x INTEGER)")
    code, _, err = run("runs", str(path))
    assert code == 2 and "not a tile dump, latency benchmarks" in err, err


def test_trace_draws_every_event_and_nvtx_range(tmp_path: Path) -> None:
    from tests.samples import sample, write_dump

    dump = write_dump(tmp_path / "dump.json", [sample(0, 0, 10, "gemm")], tileCount=2)
    out = tmp_path / "t.json"
    code, _, err = run("trace", str(dump), str(EXPORT), "-o", str(out))
    assert code == 0, err
    events = [e for e in json.loads(out.read_text())["traceEvents"] if e.get("ph") == "X"]
    by_cat: dict[str, int] = {}
    for e in events:
        by_cat[e["cat"]] = by_cat.get(e["cat"], 0) + 1
    for cat, table in (("kernel", "KERNEL"), ("gpu_memcpy", "MEMCPY"), ("gpu_memset", "MEMSET")):
        assert by_cat[cat] == sql(f"SELECT COUNT(*) FROM CUPTI_ACTIVITY_KIND_{table}")[0][0]
    ranges = sql("SELECT COUNT(*) FROM NVTX_EVENTS WHERE eventType IN (59, 60) AND end IS NOT NULL")
    assert by_cat["nvtx"] == ranges[0][0]


# --- hostile exports (issue 32) -----------------------------------------------------------


def edited_export(tmp_path: Path, script: str, name: str = "edited.sqlite") -> Path:
    """A copy of the real export changed by ``script`` (closed cleanly: no journal left)."""
    path = tmp_path / name
    path.write_bytes(EXPORT.read_bytes())
    conn = sqlite3.connect(path)
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path


def one_line(path: Path, *words: str) -> str:
    code, _, err = run("runs", str(path))
    assert code == 2 and err.count("\n") == 1 and err.startswith("tileprof: error: "), err
    assert all(w in err for w in words), err
    return err


def test_opened_immutable_so_nothing_is_created_beside_it(tmp_path: Path) -> None:
    """A WAL-mode export read without its -shm file: nothing appears beside it."""
    path = edited_export(tmp_path, "PRAGMA journal_mode=WAL;")
    before = sorted(p.name for p in tmp_path.iterdir())
    assert load_runs(path).frame.drop("source").equals(load_runs(EXPORT).frame.drop("source"))
    assert sorted(p.name for p in tmp_path.iterdir()) == before == ["edited.sqlite"]


def test_a_wal_file_beside_the_export_is_refused_by_name(tmp_path: Path) -> None:
    """Rows in a -wal file are not in the export the sha256 covers: refused, not read."""
    path = edited_export(tmp_path, "PRAGMA journal_mode=WAL;")
    writer = sqlite3.connect(path)
    writer.execute("PRAGMA wal_autocheckpoint=0")
    writer.execute("UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = end + 1000000")
    writer.commit()
    wal = path.with_name(path.name + "-wal")
    held = wal.read_bytes()
    writer.close()  # checkpoints the log into the file and removes it: put it back
    wal.write_bytes(held)
    path.write_bytes(EXPORT.read_bytes())
    one_line(path, f"{wal}: a write-ahead log", "sha256")


@pytest.mark.parametrize("kind", ["VIRTUAL", "STORED"])
def test_a_generated_column_is_refused(tmp_path: Path, kind: str) -> None:
    """StringIds.value hidden from PRAGMA table_info as a generated column (a hostile one
    computes megabytes per read): refused by name, however small this one is."""
    script = f"""
        ALTER TABLE StringIds RENAME TO old_strings;
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY,
            value TEXT GENERATED ALWAYS AS ('kernel_' || id) {kind});
        INSERT INTO StringIds (id) SELECT id FROM old_strings;
        DROP TABLE old_strings;"""
    one_line(edited_export(tmp_path, script), "table StringIds, column value: a generated column")


KERNEL_TABLE = "CUPTI_ACTIVITY_KIND_KERNEL"
GPU_TABLE = "CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT); INSERT INTO TARGET_INFO_GPU"
CUDA_TABLE = "CREATE TABLE TARGET_INFO_CUDA_DEVICE (pid INTEGER, cudaId INTEGER, gpuId INTEGER)"
WRONG_TYPES = [
    (f"UPDATE {KERNEL_TABLE} SET start = 'abc' WHERE rowid = 3", "row 3, column start: a value"),
    (f"UPDATE {KERNEL_TABLE} SET start = 1.5 WHERE rowid = 3", "start: a value of type real"),
    (f"UPDATE {KERNEL_TABLE} SET deviceId = 'gpu' WHERE rowid = 9", "row 9, column deviceId"),
    (
        f"UPDATE StringIds SET value = x'00ff' WHERE id = "
        f"(SELECT demangledName FROM {KERNEL_TABLE} LIMIT 1)",
        "table StringIds",
    ),
    ("UPDATE CUPTI_ACTIVITY_KIND_MEMCPY SET bytes = 'many' WHERE rowid = 1", "column bytes"),
    (f"{GPU_TABLE} VALUES ('gpu0', 'H100')", "table TARGET_INFO_GPU, row 1, column id"),
    (f"{CUDA_TABLE}; INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (1, 0, 'g')", "column gpuId"),
    (
        "CREATE TABLE TARGET_INFO_GPU (id TEXT, name TEXT)",
        "column id: declared 'TEXT', not INTEGER",
    ),
]
"""Values of the wrong type (text ids, a real timestamp, a blob name), a text GPU id, and a
column declared with the wrong affinity: each names its table, row and column."""


@pytest.mark.parametrize(("script", "words"), WRONG_TYPES)
def test_wrong_types_and_text_gpu_ids_name_the_table_row_and_column(
    tmp_path: Path, script: str, words: str
) -> None:
    one_line(edited_export(tmp_path, script), words)


@pytest.mark.parametrize(("budget", "value"), [("ROW_BUDGET", 1000), ("BYTE_BUDGET", 5_000)])
def test_every_read_has_a_row_and_byte_budget(
    monkeypatch: pytest.MonkeyPatch, budget: str, value: int
) -> None:
    from tileprof.inputs.gpu import nsys_sqlite

    monkeypatch.setattr(nsys_sqlite, budget, value)
    what = {"ROW_BUDGET": "1,000 rows", "BYTE_BUDGET": "5,000 characters of text"}[budget]
    with pytest.raises(InputError, match=f"a read of more than {what} \\(over its budget\\)"):
        read_export(EXPORT, EXPORT.read_bytes())


def test_each_name_is_read_once_however_many_kernels_carry_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Names cross as ``StringIds`` rows joined to integer columns, not as text repeated per
    kernel: 20,000 kernels of one 2,000-character name read within a text
    budget of 1 MB (the joined text would be 40 MB), each kernel with its name."""
    from tileprof.inputs.gpu import nsys_sqlite

    name = "k" * 2000
    path = edited_export(
        tmp_path,
        f"""INSERT INTO StringIds (id, value) VALUES (900001, '{name}');
        CREATE TEMP TABLE one AS SELECT * FROM CUPTI_ACTIVITY_KIND_KERNEL LIMIT 1;
        UPDATE one SET demangledName = 900001, shortName = 900001, gridX = 1, gridY = 2,
                       gridZ = 3, blockX = 4, blockY = 5, blockZ = 6;
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL
            WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
            SELECT one.* FROM one, n;""",
    )
    monkeypatch.setattr(nsys_sqlite, "BYTE_BUDGET", 1_000_000)
    events = read_export(path, path.read_bytes()).events
    ours = events.filter(pl.col("name") == name)
    assert ours.height == 20_000
    assert set(ours["grid"]) == {"1x2x3"} and set(ours["block"]) == {"4x5x6"}


def test_a_name_past_the_value_limit_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tileprof.inputs.gpu import nsys_sqlite

    monkeypatch.setattr(nsys_sqlite, "VALUE_LIMIT", 10_000)
    path = edited_export(tmp_path, "UPDATE StringIds SET value = printf('%.*c', 20000, 'x')")
    with pytest.raises(InputError, match="too big"):
        read_export(path, path.read_bytes())


@pytest.mark.parametrize("byte", [0xFF, 0xC3, 0x80])
def test_a_schema_page_with_a_name_not_utf8_is_one_line(tmp_path: Path, byte: int) -> None:
    """A table's name in sqlite_master damaged into invalid UTF-8: SQLite's own message
    quotes it, and decoding that message raised UnicodeDecodeError (a traceback)."""
    data = bytearray(EXPORT.read_bytes())
    name = data.index(b"DIAGNOSTIC_EVENT")  # its name and tbl_name, then its CREATE TABLE
    for at in (name, data.index(b"DIAGNOSTIC_EVENT", name + 1)):
        data[at + 3] = byte
    path = tmp_path / "schema.sqlite"
    path.write_bytes(bytes(data))
    one_line(path, "unreadable SQLite database")


@pytest.mark.parametrize("seed", range(4))
def test_a_corrupt_schema_page_is_one_line_or_a_read(tmp_path: Path, seed: int) -> None:
    """Random bytes over the schema (sqlite_master spans the first pages of this export)."""
    data = bytearray(EXPORT.read_bytes())
    rng = random.Random(seed)
    start = rng.randrange(100, 4096 * 6 - 256)
    data[start : start + 256] = rng.randbytes(256)
    path = tmp_path / "corrupt.sqlite"
    path.write_bytes(bytes(data))
    code, _, err = run("runs", str(path))
    assert code == 0 or (code == 2 and err.count("\n") == 1), err


def test_a_hot_journal_beside_the_export_is_refused_and_a_cold_one_ignored(
    tmp_path: Path,
) -> None:
    path = tmp_path / "export.sqlite"
    path.write_bytes(EXPORT.read_bytes())
    journal = tmp_path / "export.sqlite-journal"
    journal.write_bytes(bytes(512))  # a persisted journal, header zeroed: nothing to roll back
    assert load_runs(path).frame.height > 0
    journal.write_bytes(bytes.fromhex("d9d505f920a163d7") + bytes(504))
    one_line(path, f"{journal}: a rollback journal beside the export")


def test_affinity_by_sqlites_rules() -> None:
    """SQLite's "Determination Of Column Affinity" (datatype3.html), rule by rule in order,
    with its own examples: ``FLOATING POINT`` holds ``INT`` and is INTEGER."""
    examples = {
        "INTEGER": "INTEGER", "BIGINT": "INTEGER", "FLOATING POINT": "INTEGER",
        "VARCHAR(255)": "TEXT", "CLOB": "TEXT", "text": "TEXT",
        "BLOB": "BLOB", "": "BLOB",
        "REAL": "REAL", "double": "REAL", "DOUBLE PRECISION": "REAL", "FLOAT": "REAL",
        "NUMERIC": "NUMERIC", "DECIMAL(10,5)": "NUMERIC", "DATE": "NUMERIC", "STRING": "NUMERIC",
    }  # fmt: skip
    assert {declared: affinity(declared) for declared in examples} == examples


def test_target_names_by_hand() -> None:
    """Two GPUs of one name are told apart by id, a unique name is kept, an unnamed GPU is
    ``GPU N``."""
    names = {0: "H100", 1: "H100", 2: "A100", 7: "unused"}
    assert target_names([0, 1, 2, 3], names) == {
        0: "H100 (GPU 0)",
        1: "H100 (GPU 1)",
        2: "A100",
        3: "GPU 3",
    }


def test_export_environment_and_host_calls_match_sql() -> None:
    """The driver versions TARGET_INFO_SYSTEM_ENV states, and one runtime call per row of the
    runtime table, named from StringIds without the ``_v7000`` suffix."""
    env = dict(sql("SELECT name, value FROM TARGET_INFO_SYSTEM_ENV"))
    assert export_environment(EXPORT, EXPORT.read_bytes()) == {
        "driver": env["NvDriverVersion"],
        "cudaDriver": env["CudaDriverVersion"],
    }
    calls = host_calls(EXPORT, EXPORT.read_bytes())
    rows = sql(
        "SELECT s.value, r.start, r.end FROM CUPTI_ACTIVITY_KIND_RUNTIME r "
        "LEFT JOIN StringIds s ON s.id = r.nameId ORDER BY r.rowid"
    )
    assert calls.height == len(rows) > 0
    expected = [(re.sub(r"_v\d+$", "", n or ""), s, e) for n, s, e in rows]
    assert calls.select("name", "start_ns", "end_ns").rows() == expected


def hand_export(path: Path, cuda_pids: bool = True, script: str = "") -> Path:
    """A small export built here: kernels of two processes that both call their GPU CUDA
    device 0, one named only by its short name and one not at all; a copy of a known and of
    an unknown kind; a memset; NVTX ranges named by ``textId`` only, without a thread or text
    column; no runtime table. ``deviceId`` is declared NUMERIC (integer values allowed)."""
    pid42, pid43 = 42 << 24, 43 << 24
    conn = sqlite3.connect(path)
    conn.executescript(
        f"""
        CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO StringIds VALUES (0, 'ncclDevKernel_AllReduce'), (1, 'gemm_short'),
            (2, 'step 1');
        CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER, end INTEGER, deviceId NUMERIC,
            streamId INTEGER, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER,
            shortName INTEGER, gridX INTEGER, gridY INTEGER, gridZ INTEGER, blockX INTEGER,
            blockY INTEGER, blockZ INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL VALUES
            (1000, 3000, 0, 7, 1, {pid42}, 0, 0, 2, 1, 1, 64, 1, 1),
            (4000, 5000, 0, 8, 2, {pid42}, NULL, 1, 4, 1, 1, 128, 1, 1),
            (6000, 6500, 0, 7, 3, {pid43}, NULL, NULL, 1, 1, 1, 32, 1, 1);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER, end INTEGER, deviceId INTEGER,
            streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER,
            copyKind INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY VALUES
            (200, 300, 0, 7, 4, {pid42}, 4096, 1), (7000, 7100, 0, 7, 5, {pid42}, 16, 99);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER, end INTEGER, deviceId INTEGER,
            streamId INTEGER, correlationId INTEGER, globalPid INTEGER, bytes INTEGER);
        INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET VALUES (100, 150, 0, 7, 6, {pid42}, 64);
        CREATE TABLE NVTX_EVENTS (start INTEGER, end INTEGER, eventType INTEGER,
            textId INTEGER);
        INSERT INTO NVTX_EVENTS VALUES (900, 5500, 59, 2), (950, NULL, 59, 2), (960, 970, 34, 2);
        """
    )
    if cuda_pids:
        conn.executescript(
            "CREATE TABLE TARGET_INFO_CUDA_DEVICE (pid INTEGER, cudaId INTEGER, gpuId INTEGER);"
            "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (42, 0, 5), (43, 0, 6);"
        )
    else:  # no pid column: CUDA id 0 is GPU 5 wherever it appears; id 1 disagrees
        conn.executescript(
            "CREATE TABLE TARGET_INFO_CUDA_DEVICE (cudaId INTEGER, gpuId INTEGER);"
            "INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (0, 5), (0, 5), (1, 6), (1, 7);"
        )
    conn.executescript(script)
    conn.commit()
    conn.close()
    return path


def test_a_hand_built_export_read_by_hand(tmp_path: Path) -> None:
    path = hand_export(tmp_path / "hand.sqlite")
    export = read_export(path, path.read_bytes())
    events = export.events.select("device", "kind", "name", "start_ns").rows()
    assert [(d, str(k), n, s) for d, k, n, s in events] == [
        (5, "memset", "Memset", 100),
        (5, "memcpy", "Memcpy HtoD", 200),
        (5, "comm", "ncclDevKernel_AllReduce", 1000),
        (5, "kernel", "gemm_short", 4000),
        (6, "kernel", "(unnamed kernel)", 6000),  # process 43's CUDA device 0 is GPU 6
        (5, "memcpy", "Memcpy Unknown", 7000),
    ]
    assert export.events.get_column("launch_start_ns").null_count() == 6
    assert export.nvtx.select("name", "start_ns", "end_ns", "tid").rows() == [
        ("step 1", 900, 5500, None)
    ]
    parsed = parse(path, path.read_bytes())
    # the communication kernel is a kernel of the run table; counts largest first
    assert list(parsed.metadata["gpu_events"].items()) == [
        ("kernel", 3),
        ("memcpy", 2),
        ("memset", 1),
    ]
    rows = {r["kernel"]: json.loads(r["metadata"]) for r in parsed.frame.iter_rows(named=True)}
    assert rows["gemm_short"] == {
        "category": "kernel",
        "short_name": "gemm_short",
        "streams": "8",
        "grid": "4x1x1",
        "block": "128x1x1",
    }


def test_cuda_ids_without_a_pid_map_where_every_row_agrees(tmp_path: Path) -> None:
    path = hand_export(
        tmp_path / "hand.sqlite",
        cuda_pids=False,
        script="UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET deviceId = 1 WHERE correlationId = 3",
    )
    events = read_export(path, path.read_bytes()).events
    assert events.get_column("device").to_list() == [5, 5, 5, 5, 1, 5]


@pytest.mark.parametrize(
    ("script", "message"),
    [
        (
            "UPDATE CUPTI_ACTIVITY_KIND_KERNEL SET end = start - 1 WHERE correlationId > 1",
            "kernel 'gemm_short': ends before it starts",
        ),
        (
            "DROP TABLE StringIds",
            "table StringIds is missing (kernel names)",
        ),
        (
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN gridY;"
            "ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL DROP COLUMN blockZ",
            "table CUPTI_ACTIVITY_KIND_KERNEL: column gridY is missing",
        ),
        (
            "DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL; DROP TABLE CUPTI_ACTIVITY_KIND_MEMCPY",
            "SQLite database without CUPTI_ACTIVITY_KIND_KERNEL or CUPTI_ACTIVITY_KIND_MEMCPY: "
            "not an nsys export with CUDA trace",
        ),
    ],
)
def test_a_bad_hand_built_export_is_named_in_one_line(
    tmp_path: Path, script: str, message: str
) -> None:
    """Two kernels that end before they start: the first is named."""
    path = hand_export(tmp_path / "hand.sqlite", script=script)
    with pytest.raises(InputError) as raised:
        read_export(path, path.read_bytes())
    assert str(raised.value) == f"{path}: {message}"


def test_a_one_byte_wal_file_is_refused(tmp_path: Path) -> None:
    path = hand_export(tmp_path / "hand.sqlite")
    (tmp_path / "hand.sqlite-wal").write_bytes(b"x")
    with pytest.raises(InputError, match="a write-ahead log beside the export"):
        read_export(path, path.read_bytes())


def test_an_export_of_copies_only_types_its_own_columns(tmp_path: Path) -> None:
    """No kernel table: the copies' grid and block are null, typed as ``EXTRA_COLUMNS``."""
    from tileprof.inputs.gpu.nsys_sqlite import EXTRA_COLUMNS

    path = hand_export(tmp_path / "hand.sqlite", script="DROP TABLE CUPTI_ACTIVITY_KIND_KERNEL")
    events = read_export(path, path.read_bytes()).events
    assert events.height == 3
    assert {c: events.schema[c] for c in EXTRA_COLUMNS} == EXTRA_COLUMNS
    assert events.get_column("grid").null_count() == 3
