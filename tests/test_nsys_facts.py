"""``nsys_checks.read_facts`` on exports built table by table: which tables and columns it
reads, the capture range, the devices named through either table, and the string ids that
``StringIds`` lacks, in order."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import polars as pl

from tileprof.inputs.gpu.nsys_checks import ExportFacts, read_facts
from tileprof.inputs.gpu.nsys_sqlite import KERNELS, MEMCPY, MEMSET, NVTX


def _facts(tmp_path: Path, script: str) -> ExportFacts:
    path = tmp_path / "e.sqlite"
    with sqlite3.connect(path) as db:
        db.executescript(script)
    db.close()
    return read_facts(path, path.read_bytes())


def test_events_of_tables_with_exactly_the_columns_read(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        f"""
        CREATE TABLE {MEMSET} (start INTEGER, "end" INTEGER, deviceId INTEGER);
        INSERT INTO {MEMSET} VALUES (50, 60, 1), (10, 20, 0);
        CREATE TABLE {KERNELS} (start INTEGER, "end" INTEGER, deviceId INTEGER, x INTEGER);
        INSERT INTO {KERNELS} VALUES (30, 40, 0, 9);
        CREATE TABLE {MEMCPY} (start INTEGER, "end" INTEGER);
        INSERT INTO {MEMCPY} VALUES (1, 2);
        """,
    )
    assert facts.events.columns == ["table", "row", "device", "start_ns", "end_ns"]
    assert facts.events.rows() == [
        (KERNELS, 1, 0, 30, 40),
        (MEMSET, 1, 1, 50, 60),
        (MEMSET, 2, 0, 10, 20),
    ]


def test_an_export_without_gpu_events_has_an_empty_typed_frame(tmp_path: Path) -> None:
    facts = _facts(tmp_path, "CREATE TABLE StringIds (id INTEGER, value TEXT);")
    assert facts.events.height == 0
    assert facts.events.schema == pl.Schema(
        {
            "table": pl.String(),
            "row": pl.Int64(),
            "device": pl.Int64(),
            "start_ns": pl.Int64(),
            "end_ns": pl.Int64(),
        }
    )
    assert facts.capture is None and facts.named_devices == ()
    assert facts.missing_strings.height == 0


def test_the_capture_range_spans_every_row_and_needs_both_ends(tmp_path: Path) -> None:
    found = _facts(
        tmp_path,
        """
        CREATE TABLE ANALYSIS_DETAILS (startTime INTEGER, stopTime INTEGER);
        INSERT INTO ANALYSIS_DETAILS VALUES (100, 900), (50, 700);
        """,
    )
    assert found.capture == (50.0, 900.0)
    (tmp_path / "e.sqlite").unlink()
    open_ended = _facts(
        tmp_path,
        """
        CREATE TABLE ANALYSIS_DETAILS (startTime INTEGER, stopTime INTEGER);
        INSERT INTO ANALYSIS_DETAILS VALUES (100, NULL);
        """,
    )
    assert open_ended.capture is None


def test_devices_named_directly_or_through_their_cuda_id(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        """
        CREATE TABLE TARGET_INFO_GPU (id INTEGER, name TEXT);
        INSERT INTO TARGET_INFO_GPU VALUES (0, 'H100'), (1, 'H100'), (2, NULL);
        CREATE TABLE TARGET_INFO_CUDA_DEVICE (cudaId INTEGER, gpuId INTEGER);
        INSERT INTO TARGET_INFO_CUDA_DEVICE VALUES (5, 0), (5, 0), (1, 1), (7, 2);
        """,
    )
    # 0 and 1 by name; 5 is the CUDA id of named GPU 0; 1 is named already; 7's GPU is not
    assert facts.named_devices == (0, 1, 5)


def test_string_ids_missing_from_string_ids_in_table_row_column_order(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        f"""
        CREATE TABLE StringIds (id INTEGER, value TEXT);
        INSERT INTO StringIds VALUES (1, 'k');
        CREATE TABLE {KERNELS} (demangledName INTEGER, shortName INTEGER);
        INSERT INTO {KERNELS} VALUES (1, 8), (9, 1), (NULL, 1), (11, 12);
        CREATE TABLE {NVTX} (textId INTEGER);
        INSERT INTO {NVTX} VALUES (1), (20);
        """,
    )
    assert facts.missing_strings.columns == ["table", "row", "column", "id"]
    assert facts.missing_strings.rows() == [
        (KERNELS, 1, "shortName", 8),
        (KERNELS, 2, "demangledName", 9),
        (KERNELS, 4, "demangledName", 11),
        (KERNELS, 4, "shortName", 12),
        (NVTX, 2, "textId", 20),
    ]


def test_without_string_ids_every_id_is_missing(tmp_path: Path) -> None:
    facts = _facts(
        tmp_path,
        f"""
        CREATE TABLE {KERNELS} (shortName INTEGER);
        INSERT INTO {KERNELS} VALUES (3), (NULL), (4);
        CREATE TABLE {NVTX} (textId INTEGER);
        INSERT INTO {NVTX} VALUES (5), (6);
        """,
    )
    assert facts.missing_strings.rows() == [
        (KERNELS, 1, "shortName", 3),
        (KERNELS, 3, "shortName", 4),
        (NVTX, 1, "textId", 5),
        (NVTX, 2, "textId", 6),
    ]
