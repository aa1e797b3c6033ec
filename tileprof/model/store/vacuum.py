"""``tileprof store vacuum``: compact each table's small files, then delete the files no
version within the retention period needs (Delta's OPTIMIZE and VACUUM, through delta-rs).

Every ``store add`` appends a small file to ``runs`` and to each run's partition of ``stats``,
``metadata`` and ``claims``, and every ``store rm`` leaves the removed run's files on disk for
Delta's time travel. Compaction rewrites each partition's small files into few large ones (one
commit per table; readers see the same rows); vacuum then deletes the files that no version of
the last ``retain_hours`` refers to: the compacted-away ones and the removed runs'.
"""

from __future__ import annotations

from dataclasses import dataclass

from tileprof.core.errors import OptionError
from tileprof.model.store.tables import TABLES, Store

DEFAULT_RETAIN_HOURS = 168
"""Delta's own default retention (7 days): a reader or writer that started within it never
finds a file it needs deleted."""


@dataclass(frozen=True)
class TableVacuum:
    """What vacuum did to one table (or, under ``dry_run``, would delete)."""

    table: str
    compacted_from: int
    compacted_into: int
    deleted: int

    def line(self, dry_run: bool) -> str:
        compacted = (
            f"compacted {_files(self.compacted_from)} into {self.compacted_into}"
            if self.compacted_from
            else "nothing to compact"
        )
        if dry_run:
            return f"{self.table}: would delete {_files(self.deleted)} no kept version needs"
        return f"{self.table}: {compacted}; deleted {_files(self.deleted)} no kept version needs"


def _files(count: int) -> str:
    return f"{count:,} file{'' if count == 1 else 's'}"


def vacuum_store(
    store: Store, *, retain_hours: int = DEFAULT_RETAIN_HOURS, dry_run: bool = False
) -> list[TableVacuum]:
    """Compact then vacuum every table of ``store``; ``dry_run`` compacts nothing and only
    counts the files vacuum would delete."""
    from deltalake import DeltaTable
    from deltalake.exceptions import CommitFailedError

    if retain_hours < 0:
        raise OptionError(f"--retain-hours {retain_hours}: a number of hours, 0 or more")
    done = []
    for name in TABLES:
        if not DeltaTable.is_deltatable(store.table_uri(name), store.options()):
            continue  # a store made before the table existed
        table = store.table(name)
        try:
            metrics = {} if dry_run else table.optimize.compact()
            deleted = table.vacuum(
                retention_hours=retain_hours, dry_run=dry_run, enforce_retention_duration=False
            )
        except CommitFailedError:
            raise OptionError(
                f"{store.uri}: another process changed the {name} table meanwhile; "
                "nothing of it was lost, run vacuum again"
            ) from None
        done.append(
            TableVacuum(
                name,
                int(metrics.get("numFilesRemoved", 0)),
                int(metrics.get("numFilesAdded", 0)),
                len(deleted),
            )
        )
    return done
