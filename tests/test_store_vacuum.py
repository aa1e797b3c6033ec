"""``store vacuum``'s model (``tileprof.model.store.vacuum``) called directly on a small store:
what a dry run reports, a store older than one of its tables, a commit that lost a race, and a
negative retention. ``tests/test_store.py::test_vacuum_compacts_and_deletes_what_no_version_needs``
holds the command end to end (files compacted and deleted, the store reading the same)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from tests.samples import sample, write_dump
from tileprof.commands.cli import cli
from tileprof.core.errors import OptionError
from tileprof.model.store.tables import TABLES, Store
from tileprof.model.store.vacuum import TableVacuum, vacuum_store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    uri = str(tmp_path / "store")
    for index in range(2):
        dump = write_dump(tmp_path / f"d{index}.json", [sample(0, index, 10), sample(1, 0, 5)])
        added = CliRunner().invoke(cli, ["store", "add", str(dump), "--store", uri])
        assert added.exit_code == 0, added.output
    return Store(uri)


def test_the_default_compacts_and_a_dry_run_only_counts(store: Store) -> None:
    dry = vacuum_store(store, retain_hours=0, dry_run=True)
    assert [done.table for done in dry] == list(TABLES)
    assert all((d.compacted_from, d.compacted_into) == (0, 0) for d in dry)
    done = {d.table: d for d in vacuum_store(store)}
    assert done["runs"].compacted_from == 2 and done["runs"].compacted_into == 1


def test_a_table_the_store_predates_is_passed_over_and_the_rest_vacuumed(store: Store) -> None:
    shutil.rmtree(Path(store.uri) / TABLES[1])
    done = vacuum_store(store, dry_run=True)
    assert [d.table for d in done] == [t for t in TABLES if t != TABLES[1]]


def test_a_commit_that_lost_a_race_is_one_line(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from deltalake.exceptions import CommitFailedError

    class Raced:
        class optimize:  # named as the DeltaTable attribute it stands for
            @staticmethod
            def compact() -> dict[str, Any]:
                raise CommitFailedError("conflict")

    monkeypatch.setattr(Store, "table", lambda self, name: Raced())
    with pytest.raises(OptionError) as caught:
        vacuum_store(store)
    assert str(caught.value) == (
        f"{store.uri}: another process changed the samples table meanwhile; "
        "nothing of it was lost, run vacuum again"
    )


def test_a_negative_retention_is_refused(store: Store) -> None:
    with pytest.raises(OptionError) as caught:
        vacuum_store(store, retain_hours=-1)
    assert str(caught.value) == "--retain-hours -1: a number of hours, 0 or more"


@pytest.mark.parametrize(
    ("done", "dry_run", "line"),
    [
        (
            TableVacuum("runs", 2, 1, 0),
            False,
            "runs: compacted 2 files into 1; deleted 0 files no kept version needs",
        ),
        (
            TableVacuum("stats", 0, 0, 1),
            False,
            "stats: nothing to compact; deleted 1 file no kept version needs",
        ),
        (
            TableVacuum("samples", 1, 1, 1_234),
            True,
            "samples: would delete 1,234 files no kept version needs",
        ),
    ],
)
def test_each_table_is_one_line(done: TableVacuum, dry_run: bool, line: str) -> None:
    assert done.line(dry_run) == line
