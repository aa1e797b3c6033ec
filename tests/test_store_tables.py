"""The profile store's tables (``tileprof.model.store.tables``) called directly: a store made
under a ``file://`` URI and nested folders, the storage options every table is created and
found with, a table another process made first, the one line a store that cannot be created
or opened gives (the underlying error's first line, or its type when it says nothing), and
a run record's row, JSON and comparability fields. ``tests/test_store.py`` holds the commands
end to end."""

from __future__ import annotations

import sys
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import deltalake
import pytest

from tileprof.core.errors import InputError, OptionError
from tileprof.model.store.tables import (
    TABLES,
    RunRecord,
    Store,
    check_run_id,
    create_store,
    now_utc,
    open_store,
    parse_labels,
    require_deltalake,
    sql_string,
)


def test_a_file_uri_store_is_made_with_every_folder_above_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``file://`` is the scheme, not part of the path: nothing named ``file:`` appears where
    the command ran, and the missing folders above the store are made."""
    monkeypatch.chdir(tmp_path)
    where = tmp_path / "a" / "b" / "store"
    store = create_store(f"file://{where}")
    assert store.exists()
    assert sorted(p.name for p in where.iterdir()) == sorted(TABLES)
    assert not (tmp_path / "file:").exists()


def test_every_table_is_created_with_the_store_s_storage_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An object store's credentials (``--storage-option``) reach each table's creation."""
    seen: list[tuple[str, Any]] = []

    def create(uri: str, *args: Any, storage_options: Any = None, **kwargs: Any) -> None:
        seen.append((uri, storage_options))

    monkeypatch.setattr(deltalake.DeltaTable, "create", create)
    uri = str(tmp_path / "store")
    create_store(uri, {"AWS_REGION": "eu-west-1"})
    expected = [(f"{uri}/{name}", {"AWS_REGION": "eu-west-1"}) for name in TABLES]
    assert seen == expected


@pytest.mark.parametrize(
    ("raised", "reason"),
    [
        (RuntimeError("the first line\nthe second"), "the first line"),
        (RuntimeError(""), "RuntimeError"),
    ],
)
def test_a_store_that_cannot_be_created_is_one_line_of_its_error(
    raised: Exception, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def create(*args: Any, **kwargs: Any) -> None:
        raise raised

    monkeypatch.setattr(deltalake.DeltaTable, "create", create)
    uri = str(tmp_path / "store")
    with pytest.raises(InputError) as caught:
        create_store(uri)
    assert str(caught.value) == f"{uri}: cannot create store: {reason}"


@pytest.mark.parametrize(
    ("raised", "reason"),
    [(OSError("unreachable\nretry later"), "unreachable"), (ValueError("  "), "ValueError")],
)
def test_a_store_that_cannot_be_opened_is_one_line_of_its_error(
    raised: Exception, reason: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    uri = str(tmp_path / "store")
    create_store(uri)

    def exists(self: Store) -> bool:
        raise raised

    monkeypatch.setattr(Store, "exists", exists)
    with pytest.raises(InputError) as caught:
        open_store(uri)
    assert str(caught.value) == f"{uri}: cannot open store: {reason}"


def test_a_run_id_outside_its_alphabet_is_told_what_one_is() -> None:
    assert check_run_id("nightly-3.1+cu12:a_b") == "nightly-3.1+cu12:a_b"
    with pytest.raises(OptionError) as caught:
        check_run_id("-x y")
    assert str(caught.value) == (
        "--run '-x y': a run id is 1-200 letters, digits and . _ : + - "
        "(starting with a letter or digit)"
    )


def test_a_table_another_process_made_first_is_taken_as_it_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, table_lookups: list[tuple[str, Any]]
) -> None:
    """Two ``add``s creating one store at once: the one whose create fails finds each table
    made (asking with the store's storage options) and goes on."""
    uri = str(tmp_path / "store")
    create_store(uri)

    def create(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("the table was made meanwhile")

    monkeypatch.setattr(deltalake.DeltaTable, "create", create)
    assert create_store(uri, {"timeout": "5s"}).exists()
    expected = [(f"{uri}/{name}", {"timeout": "5s"}) for name in TABLES]
    assert table_lookups[: len(TABLES)] == expected


def test_a_store_is_opened_under_its_file_uri_and_a_missing_one_named(tmp_path: Path) -> None:
    where = tmp_path / "store"
    create_store(str(where))
    assert open_store(f"file://{where}").exists()
    missing = f"file://{tmp_path / 'none'}"
    with pytest.raises(InputError) as caught:
        open_store(missing)
    assert str(caught.value) == f"{missing}: no such store (the folder does not exist)"
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError) as caught:
        open_store(str(tmp_path / "empty"))
    assert str(caught.value) == (
        f"{tmp_path / 'empty'}: not a tileprof store (no runs table; see `tileprof store add`)"
    )


def test_without_deltalake_the_store_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "deltalake", None)  # import deltalake raises ImportError
    with pytest.raises(OptionError) as caught:
        require_deltalake()
    assert str(caught.value) == (
        "the profile store needs the deltalake package: pip install 'tileprof[store]'"
    )


def test_labels_are_key_value_pairs_the_last_of_a_key_kept() -> None:
    assert parse_labels(["a=1", " b =x=y", "a=2", "c="]) == {"a": "2", "b": "x=y", "c": ""}
    with pytest.raises(OptionError) as caught:
        parse_labels(["commit"])
    assert str(caught.value) == "--label 'commit': expected KEY=VALUE, e.g. commit=3f2a9c1"
    with pytest.raises(OptionError) as caught:
        parse_labels([" =1"], option="--where")
    assert str(caught.value) == "--where ' =1': expected KEY=VALUE, e.g. commit=3f2a9c1"


def test_sql_strings_double_their_quotes_and_now_is_utc() -> None:
    assert sql_string("it's 'x'") == "'it''s ''x'''"
    assert now_utc().tzinfo == timezone.utc


def _record(**changes: Any) -> RunRecord:
    fields: dict[str, Any] = {
        "run": "r1",
        "labels": {"zone": "Zürich", "branch": "main"},
        "source": "d.json",
        "sha256": "ab" * 32,
        "format": "json",
        "clock_hz": 1_500_000_000,
        "tile_count": 1472,
        "sample_count": 10,
        "profile_span_cycles": 400,
        "version": "1.2.3",
        "added_at": datetime(2026, 12, 7, 4, 0, tzinfo=timezone(timedelta(hours=9))),
        "environment": {"host": "büro-7", "device": "GC200"},
    }
    return RunRecord(**(fields | changes))


def test_a_run_record_s_row_holds_its_labels_and_environment_sorted_as_written() -> None:
    record = _record()
    row = record.to_row()
    assert row["labels"] == '{"branch": "main", "zone": "Zürich"}'
    assert row["environment"] == '{"device": "GC200", "host": "büro-7"}'
    assert row["format"] == "json" and row["tileprofVersion"] == "1.2.3"
    assert RunRecord.from_row(row) == record
    assert RunRecord.from_row(_record(clock_hz=1.5e9).to_row()).clock_hz == 1.5e9


def test_a_run_record_s_json_dates_it_in_utc_whatever_the_machine_zone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TZ", "America/Los_Angeles")
    time.tzset()
    try:
        shown = _record().to_json()
    finally:
        monkeypatch.undo()
        time.tzset()
    assert shown["addedAt"] == "2026-12-06T19:00:00+00:00"
    assert list(shown) == [
        "run", "labels", "source", "sha256", "clockHz", "tileCount", "sampleCount",
        "tileprofVersion", "addedAt", "environment",
    ]  # fmt: skip


def test_a_run_record_s_comparability_names_its_clock_tiles_and_version() -> None:
    fields = _record().comparability()
    assert fields["clockHz"] == 1_500_000_000
    assert fields["tileCount"] == 1472
    assert fields["tileprofVersion"] == "1.2.3"
    assert fields["device"] == "GC200"


def _add(store: Store, tmp_path: Path, run: str, tile: int) -> None:
    from tests.samples import sample, write_dump
    from tileprof.model.store.writes import add_run

    add_run(store, write_dump(tmp_path / f"{run}.json", [sample(tile, 0, 10)]), run=run)


def test_a_scan_reads_every_run_or_those_asked_for(tmp_path: Path) -> None:
    from tileprof.model.store.tables import STATS

    store = create_store(str(tmp_path / "store"))
    _add(store, tmp_path, "r1", 0)
    _add(store, tmp_path, "r2", 1)
    every = store.scan(STATS).collect()
    assert sorted(every.get_column("run").unique().to_list()) == ["r1", "r2"]
    assert store.scan(STATS, ["r2"]).collect().get_column("run").unique().to_list() == ["r2"]
    assert store.scan(STATS, ["none"]).collect().height == 0


def test_runs_recorded_before_a_column_existed_read_with_it_null(tmp_path: Path) -> None:
    """A store whose first runs were recorded before ``environment`` existed: those records
    read with an empty environment beside the newer ones'."""
    import polars as pl

    from tileprof.model.store.tables import RUN_SCHEMA, RUNS, read_runs

    store = create_store(str(tmp_path / "store"))
    old = {k: v for k, v in _record_row("r0").items() if k != "environment"}
    schema = {k: v for k, v in RUN_SCHEMA.items() if k != "environment"}
    deltalake.write_deltalake(
        store.table_uri(RUNS), pl.DataFrame([old], schema=schema).to_arrow(), mode="overwrite",
        schema_mode="overwrite",
    )  # fmt: skip
    _add(store, tmp_path, "r1", 0)
    records = {r.run: r for r in read_runs(store)}
    assert records["r0"].environment == {}
    assert "host" in records["r1"].environment


def _record_row(run: str) -> dict[str, Any]:
    return _record(run=run, environment={}).to_row()


def test_an_object_store_s_options_reach_its_runs_scan_and_the_existence_check(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    table_lookups: list[tuple[str, Any]],
    parquet_scans: list[Any],
) -> None:
    from tileprof.model.store.tables import RUNS

    uri = str(tmp_path / "store")
    create_store(uri)
    _add(Store(uri), tmp_path, "r1", 0)
    options = Store(uri, {"timeout": "30s"})
    before = len(parquet_scans)  # the add's own scans
    monkeypatch.setattr(
        Store, "table", lambda self, name: deltalake.DeltaTable(self.table_uri(name))
    )
    assert options.exists()
    assert [given for _, given in table_lookups] == [{"timeout": "30s"}]
    assert options.scan(RUNS).collect().height == 1
    scanned = parquet_scans[before:]
    assert scanned == [{"timeout": "30s"}]


def test_a_table_is_under_its_store_and_opened_with_its_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trailing slash is not doubled (an object store's key would differ); the table is
    opened with the store's storage options."""
    assert Store("s3://bucket/BOX/").table_uri("runs") == "s3://bucket/BOX/runs"
    assert Store("s3://bucket/BOX").table_uri("runs") == "s3://bucket/BOX/runs"
    uri = str(tmp_path / "store")
    create_store(uri)
    opened: list[Any] = []

    class Recorded(deltalake.DeltaTable):
        def __init__(self, table_uri: str, *args: Any, storage_options: Any = None) -> None:
            opened.append((table_uri, storage_options))
            super().__init__(table_uri, *args)

    monkeypatch.setattr(deltalake, "DeltaTable", Recorded)
    Store(uri, {"timeout": "30s"}).table("runs")
    assert opened == [(f"{uri}/runs", {"timeout": "30s"})]
