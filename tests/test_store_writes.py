"""Adding runs to the profile store and removing them (``tileprof.model.store.writes``),
called directly: the run id made from a file's name, what a stored run records of its
environment, the rows as stored (their types, partitions and the statistics' tile count),
and every way a write can fail: an unreadable file, a store whose medium refuses a claim or
a write (a full disk; the claim freed or kept), an unfinished add removed, a store made
before claims. ``tests/test_store.py`` holds the commands end to end."""

from __future__ import annotations

import dataclasses
import errno
import shutil
import socket
from pathlib import Path
from typing import Any

import deltalake
import polars as pl
import pyarrow.parquet as pq
import pytest

from tests.samples import profile, sample, write_dump
from tileprof.analyses.stats import group_statistics
from tileprof.core.errors import InputError, OptionError, OutputError
from tileprof.model.store import writes
from tileprof.model.store.tables import (
    CLAIMS,
    METADATA,
    METADATA_SCHEMA,
    RUN_SCHEMA,
    RUNS,
    SAMPLES,
    STATS,
    Store,
    create_store,
    read_runs,
)
from tileprof.model.store.writes import (
    AddResult,
    add_run,
    claim_file,
    claim_run,
    default_run_id,
    file_sha256,
    release_claim,
    remove_run,
    run_environment,
    run_record,
    stored_metadata,
    stored_stats,
)

SHA = "abcdef0123456789" * 4
FULL = OSError(errno.ENOSPC, "No space left on device")


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return create_store(str(tmp_path / "store"))


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "d.json", [sample(0, 0, 10), sample(1, 0, 5, kernel="m")])


def test_an_unreadable_file_is_one_line_naming_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(InputError) as caught:
        file_sha256(missing)
    assert str(caught.value) == f"{missing}: No such file or directory"

    def refused(self: Path, *args: Any, **kwargs: Any) -> Any:
        raise OSError()  # no strerror to give

    monkeypatch.setattr(Path, "open", refused)
    with pytest.raises(InputError) as caught:
        file_sha256(missing)
    assert str(caught.value) == f"{missing}: cannot read"


@pytest.mark.parametrize(
    ("name", "run"),
    [
        ("my dump (v2).json.gz", "my-dump--v2--abcdef01"),
        ("Zürich_a-b.json", "Zürich_a-b-abcdef01"),
        ("_.x.json", "run-abcdef01"),
        (".hidden.json", "run-abcdef01"),
        ("--nightly.ndjson", "nightly-abcdef01"),
    ],
)
def test_a_default_run_id_is_the_file_s_stem_made_safe_and_its_digest(name: str, run: str) -> None:
    assert default_run_id(Path(name), SHA) == run


def test_an_add_says_what_it_did() -> None:
    assert AddResult("r1", True, "d.json", SHA).message() == "added run r1 from d.json"
    assert AddResult("r1", False, "d.json", SHA).message() == (
        "d.json: already stored as run r1 (same sha256), nothing added"
    )


def test_an_added_run_is_its_file_s_digest_and_a_second_add_is_a_no_op(
    store: Store, dump: Path
) -> None:
    first = add_run(store, dump, run="r1")
    assert (first.run, first.added, first.sha256) == ("r1", True, file_sha256(dump))
    again = add_run(store, dump, run="r2")
    assert (again.run, again.added, again.sha256) == ("r1", False, file_sha256(dump))


def test_the_environment_names_the_device_host_and_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commit is the label's, else the CI's; a host without a name is left out."""
    found = dataclasses.replace(profile(tmp_path, [sample(0, 0, 10)]), device="GC200")
    monkeypatch.setattr(socket, "gethostname", lambda: "builder-3")
    for variable in ("GITHUB_SHA", "CI_COMMIT_SHA"):
        monkeypatch.delenv(variable, raising=False)
    assert run_environment(found, {"commit": "3f2a9c1"}) == {
        "device": "GC200",
        "host": "builder-3",
        "commit": "3f2a9c1",
    }
    monkeypatch.setenv("CI_COMMIT_SHA", "77aa")
    assert run_environment(found, {"other": "x"})["commit"] == "77aa"
    monkeypatch.setattr(socket, "gethostname", lambda: "")
    assert "host" not in run_environment(found, {})
    record = run_record(found, "r1", {"commit": "c1"}, "d.json", SHA)
    assert record.environment == run_environment(found, {"commit": "c1"})


def test_stored_rows_keep_their_types_and_the_statistics_their_tile_count(
    tmp_path: Path,
) -> None:
    bare = profile(tmp_path, [sample(0, 0, 10)])
    assert not bare.metadata
    assert stored_metadata("r1", bare).schema == pl.Schema(METADATA_SCHEMA)
    found = profile(tmp_path, [sample(0, 0, 10, useful=8), sample(1, 5, 10, useful=4)], tileCount=4)
    stats = stored_stats("r1", found)
    expected = group_statistics(found.samples, tile_count=4, clock_hz=found.clock_hz)
    assert stats.drop("run").equals(expected)
    assert stats.get_column("deviceUsefulUtilization").to_list() == [12 / (15 * 4)]


def test_every_table_but_runs_is_partitioned_by_run_and_written_with_the_store_s_options(
    store: Store, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[tuple[str, Any, Any]] = []
    real = deltalake.write_deltalake

    def recorded(table: Any, data: Any, **kwargs: Any) -> Any:
        if isinstance(table, str):
            written.append((table.rsplit("/", 1)[1], kwargs.get("storage_options"), data))
        return real(table, data, **kwargs)

    monkeypatch.setattr(deltalake, "write_deltalake", recorded)
    options = Store(store.uri, {"timeout": "30s"})
    add_run(options, dump, run="r1")
    assert [(name, opts) for name, opts, _ in written] == [
        (name, {"timeout": "30s"}) for name in (SAMPLES, METADATA, STATS, RUNS)
    ]
    for name in (SAMPLES, METADATA, STATS):
        assert deltalake.DeltaTable(store.table_uri(name)).metadata().partition_columns == ["run"]
    assert deltalake.DeltaTable(store.table_uri(RUNS)).metadata().partition_columns == []
    (part,) = deltalake.DeltaTable(store.table_uri(SAMPLES)).file_uris()
    column = pq.ParquetFile(part).metadata.row_group(0).column(0)
    assert column.compression == "ZSTD"
    runs_row = pl.from_arrow(written[-1][2])
    assert isinstance(runs_row, pl.DataFrame)
    assert runs_row.schema["clockHz"] == pl.Float64 and runs_row.schema["tileCount"] == pl.Int64


def test_a_store_from_before_environment_takes_a_run_that_records_one(
    tmp_path: Path, dump: Path
) -> None:
    """The runs table of an older store has no ``environment`` column: the record's append
    merges it in."""
    uri = str(tmp_path / "old")
    store = create_store(uri)
    older = pl.DataFrame(schema=RUN_SCHEMA).drop("environment")
    shutil.rmtree(store.table_uri(RUNS))
    deltalake.DeltaTable.create(store.table_uri(RUNS), older.to_arrow().schema)
    add_run(store, dump, run="r1")
    (record,) = read_runs(store)
    assert record.run == "r1" and "host" in record.environment


@pytest.mark.parametrize(
    ("error", "released", "line"),
    [
        (FULL, True, "no space left on device; nothing was added, the run id is free again"),
        (
            RuntimeError("Generic error: No space left on device (os error 28)"),
            False,
            "no space left on device; nothing was added, the run id stays claimed "
            "(`tileprof store rm --store STORE --run r1` clears it once there is room)",
        ),
        (
            OSError("the bucket is gone\nretry"),
            True,
            "the bucket is gone; nothing was added, the run id is free again",
        ),
        (OSError(" "), True, "?; nothing was added, the run id is free again"),
    ],
)
def test_a_refused_write_is_one_line_saying_what_became_of_the_id(
    error: BaseException, released: bool, line: str
) -> None:
    message = str(writes._not_written(Store("STORE"), "r1", error, released))
    assert message == f"STORE: cannot store run 'r1': {line}"


def _full(*args: Any, **kwargs: Any) -> None:
    raise FULL


def test_a_claim_the_medium_refuses_is_one_line_and_other_errors_pass(
    store: Store, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(deltalake, "write_deltalake", _full)
    free = "no space left on device; nothing was added, the run id is free again"
    with pytest.raises(OutputError) as caught:
        claim_run(store, "r1")
    assert str(caught.value) == f"{store.uri}: cannot store run 'r1': {free}"
    with pytest.raises(OutputError) as caught:
        claim_file(store, dump, SHA, "r2")
    assert str(caught.value) == f"{store.uri}: cannot store run 'r2': {free}"

    def broken(*args: Any, **kwargs: Any) -> None:
        raise ValueError("a bug, not the medium")

    monkeypatch.setattr(deltalake, "write_deltalake", broken)
    with pytest.raises(ValueError, match="a bug"):
        claim_run(store, "r1")
    with pytest.raises(ValueError, match="a bug"):
        claim_file(store, dump, SHA, "r2")


def test_a_write_the_medium_refuses_frees_the_id_or_says_it_stays_claimed(
    store: Store, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(writes, "write_profile", _full)
    with pytest.raises(OutputError) as caught:
        add_run(store, dump, run="r1")
    assert str(caught.value) == (
        f"{store.uri}: cannot store run 'r1': no space left on device; nothing was added, "
        "the run id is free again"
    )
    assert not writes._has_claim(store, "r1")
    monkeypatch.setattr(writes, "release_claim", lambda store, run: False)
    with pytest.raises(OutputError) as caught:
        add_run(store, dump, run="r1")
    assert str(caught.value).endswith(
        f"the run id stays claimed (`tileprof store rm --store {store.uri} --run r1` "
        "clears it once there is room)"
    )


def test_a_claim_released_says_so(store: Store) -> None:
    claim_run(store, "r1")
    assert writes._has_claim(store, "r1")
    assert release_claim(store, "r1") is True
    assert not writes._has_claim(store, "r1")


def test_an_unfinished_add_is_removed_by_its_id(store: Store, dump: Path) -> None:
    claim_run(store, "r9")
    claim_file(store, dump, SHA, "r9")
    assert remove_run(store, "r9") == (
        "removed the unfinished add of run r9 (its claim and any rows it left)"
    )
    assert not writes._has_claim(store, "r9")
    assert not writes._has_claim(store, f"sha256 {SHA}")


def test_a_store_made_before_claims_has_none(
    store: Store, table_lookups: list[tuple[str, Any]]
) -> None:
    shutil.rmtree(store.table_uri(CLAIMS))
    options = Store(store.uri, {"timeout": "30s"})
    assert not writes._has_claim(options, "r1")
    assert table_lookups == [(store.table_uri(CLAIMS), {"timeout": "30s"})]
    with pytest.raises(OptionError) as caught:
        remove_run(options, "r1")
    assert str(caught.value) == f"--run 'r1': no such run in {store.uri}"


def _held(dump: Path, store: Store, holder: str, clear: str) -> str:
    """The line for a file another add holds (as run ``holder``; ``clear``: the run id that
    ``store rm`` is told to clear)."""
    return (
        f"{dump}: another add of this file (as run {holder}) is under way or was interrupted; "
        f"nothing was added (if none is running, `tileprof store rm --store {store.uri} "
        f"--run {clear}` clears it)"
    )


def test_a_file_claimed_by_another_add_is_one_line_naming_that_add(
    store: Store, dump: Path
) -> None:
    """The claim holds the claiming add's run id and when it was taken; a second add of the
    file, under any id, is told which add holds it and how to clear it."""
    digest = file_sha256(dump)
    claim_file(store, dump, digest, "r1")
    claim_run(store, "r1")
    rows = store.table(CLAIMS).to_pyarrow_table().to_pylist()
    assert sorted(r["run"] for r in rows) == ["r1", f"sha256 {digest}"]
    assert all(r["token"] and r["claimedAt"] is not None for r in rows)
    held = next(r for r in rows if r["run"] == f"sha256 {digest}")
    assert held["token"] == "r1"
    with pytest.raises(OptionError) as caught:
        claim_file(store, dump, digest, "r2")
    assert str(caught.value) == _held(dump, store, "r1", "r1")
    with pytest.raises(OptionError) as caught:
        add_run(store, dump, run="r3")
    assert str(caught.value).startswith(f"{dump}: another add of this file (as run r1)")


def test_a_claim_that_loses_a_race_is_one_line(
    store: Store, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltalake.exceptions import CommitFailedError

    def lost(*args: Any, **kwargs: Any) -> None:
        raise CommitFailedError("a concurrent transaction")

    monkeypatch.setattr(deltalake, "write_deltalake", lost)
    with pytest.raises(OptionError) as caught:
        claim_file(store, dump, SHA, "r1")
    assert str(caught.value) == (
        f"{dump}: another process is adding this file at the same moment; nothing was added"
    )
    with pytest.raises(OptionError) as caught:
        claim_run(store, "r1")
    assert str(caught.value) == (
        "--run 'r1': another process added a run of that id at the same moment; nothing was added"
    )


def test_an_add_reads_the_dump_as_told(store: Store, tmp_path: Path, dump: Path) -> None:
    """The format, clock and tile count given to ``add`` are the ones its run records."""
    odd = tmp_path / "d.data"
    odd.write_bytes(dump.read_bytes())
    add_run(store, odd, run="r1", format="json", clock_hz=1e9, tile_count=64)
    (record,) = read_runs(store)
    assert (record.format, record.clock_hz, record.tile_count) == ("json", 1e9, 64)
    other = write_dump(tmp_path / "e.json", [sample(2, 0, 7)])
    with pytest.raises(InputError):  # the format overrides what the content looks like
        add_run(store, other, run="r2", format="csv")
    assert [r.run for r in read_runs(store)] == ["r1"]


def test_a_claim_that_vanishes_while_read_names_no_holder(
    store: Store, dump: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A claim found, then gone when its holder is read (the add holding it ended between
    the two reads): the message has no holder to name, and no traceback."""
    import pyarrow as pa

    class Vanishing:
        def file_uris(self, **kwargs: Any) -> list[str]:
            return ["part-0.parquet"]

        def to_pyarrow_table(self, **kwargs: Any) -> pa.Table:
            return pa.table({"token": pa.array([], pa.string())})

    monkeypatch.setattr(Store, "table", lambda self, name: Vanishing())
    with pytest.raises(OptionError) as caught:
        claim_file(store, dump, SHA, "r1")
    assert str(caught.value) == _held(dump, store, "?", "…")


def test_a_dump_without_samples_is_stored_with_no_span(store: Store, tmp_path: Path) -> None:
    """Its record's span is null (``profileSpanCycles``), typed as the runs table's column."""
    add_run(store, write_dump(tmp_path / "e.json", []), run="e1")
    (record,) = read_runs(store)
    assert (record.sample_count, record.profile_span_cycles) == (0, None)
    runs = pl.from_arrow(store.table(RUNS).to_pyarrow_table())
    assert isinstance(runs, pl.DataFrame)
    assert runs.schema["profileSpanCycles"] == RUN_SCHEMA["profileSpanCycles"]
