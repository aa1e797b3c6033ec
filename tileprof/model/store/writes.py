"""Adding runs to the store and removing them.

A run is parsed completely before anything is written, so a dump that fails to parse adds
nothing. Its rows go to ``samples``, ``metadata`` and ``stats`` first and its record to ``runs``
last: each write is one atomic Delta commit, and readers only see runs that have a record, so
a crash in between leaves rows that no reader sees and that the next ``add`` of that run
removes first. Appends from several processes at once all land: Delta appends of new files
do not conflict, and delta-rs commits each one with an atomic put-if-absent of the next log
entry, retrying on the next version when another writer took it.

Two processes adding the same new run id at once would both pass the check that the id is
free and append the same run twice. So before writing any row an ``add`` claims the id
(``claim_run``): it commits one row to the ``claims`` table as a Delta overwrite of that id's
partition, on the snapshot in which it found no claim. Delta's conflict check refuses the
commit when another claim on the id landed after that snapshot, so exactly one process goes on;
the other fails with one line and has written nothing.
"""

from __future__ import annotations

import errno
import hashlib
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import msgspec
import polars as pl

from tileprof._version import __version__
from tileprof.analyses.filters import group_name
from tileprof.analyses.stats import group_statistics, profile_span
from tileprof.core.errors import InputError, OptionError, OutputError, TileprofError
from tileprof.model.profile import Profile, load
from tileprof.model.store.tables import (
    CLAIM_SCHEMA,
    CLAIMS,
    METADATA,
    METADATA_SCHEMA,
    ROW_GROUP_ROWS,
    RUN_SCHEMA,
    RUNS,
    SAMPLES,
    STATS,
    STORED_SAMPLE_SCHEMA,
    RunRecord,
    Store,
    check_run_id,
    now_utc,
    read_runs,
    sql_string,
)

_JSON = msgspec.json.Encoder()


@dataclass(frozen=True)
class AddResult:
    """What ``add_run`` did: ``added`` is False when the same source was already stored."""

    run: str
    added: bool
    source: str
    sha256: str

    def message(self) -> str:
        if self.added:
            return f"added run {self.run} from {self.source}"
        return f"{self.source}: already stored as run {self.run} (same sha256), nothing added"


def file_sha256(path: Path) -> str:
    """The sha256 of a file, read in 1 MiB blocks."""
    digest = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError as exc:
        raise InputError(path, None, exc.strerror or "cannot read") from None
    return digest.hexdigest()


def default_run_id(path: Path, sha256: str) -> str:
    """The file name without its extensions, then the first 8 hex digits of its sha256."""
    stem = path.name.split(".")[0] or "run"
    safe = "".join(c if c.isalnum() or c in "._-" else "-" for c in stem).lstrip("._-")
    return f"{safe or 'run'}-{sha256[:8]}"


def add_run(
    store: Store,
    path: Path,
    *,
    run: str | None = None,
    labels: Mapping[str, str] | None = None,
    format: str | None = None,
    clock_hz: float | None = None,
    tile_count: int | None = None,
) -> AddResult:
    """Parse the dump at ``path`` and append it as one run (a no-op when its sha256 is stored:
    also when another ``add`` of the same file, under another id, finished meanwhile)."""
    sha256 = file_sha256(path)
    existing = read_runs(store)
    stored = _stored_as(existing, path, sha256)
    if stored is not None:
        return stored
    run_id = check_run_id(run) if run is not None else default_run_id(path, sha256)
    if any(record.run == run_id for record in existing):
        raise OptionError(f"--run {run_id!r}: the store already has a run of that id")
    profile = load(path, format=format, clock_hz=clock_hz, tile_count=tile_count)
    record = run_record(profile, run_id, dict(labels or {}), path.name, sha256)
    claim_file(store, path, sha256, run_id)
    try:
        stored = _stored_as(read_runs(store), path, sha256)  # an add that finished meanwhile
        if stored is not None:
            return stored
        return _add_claimed(store, record, profile, path)
    finally:
        release_claim(store, _file_key(sha256))


def _stored_as(records: list[RunRecord], path: Path, sha256: str) -> AddResult | None:
    """The no-op result when a run of the file's sha256 is stored, else None."""
    for record in records:
        if record.sha256 == sha256:
            return AddResult(record.run, False, str(path), sha256)
    return None


def _file_key(sha256: str) -> str:
    """The claim that one file is being added (no run id has a space)."""
    return f"sha256 {sha256}"


def claim_file(store: Store, path: Path, sha256: str, run: str) -> None:
    """Take the file (its sha256) for this ``add`` of it as ``run``, or fail with one line when
    another ``add`` of the same file, under any id, has it: two adds of one file at once
    store it once. The claim is released when the add ends; one left by an interrupted add
    names that add's id, whose ``store rm`` clears both."""
    from deltalake import write_deltalake
    from deltalake.exceptions import CommitFailedError

    key = _file_key(sha256)
    claims = store.table(CLAIMS)
    if claims.file_uris(file_pruning_predicate=[("run", "=", key)]):
        holder = claims.to_pyarrow_table(filters=[("run", "=", key)])["token"].to_pylist()
        raise OptionError(
            f"{path}: another add of this file (as run {holder[0] if holder else '?'}) is "
            f"under way or was interrupted; nothing was added (if none is running, "
            f"`tileprof store rm --store {store.uri} --run {holder[0] if holder else '…'}` "
            "clears it)"
        )
    row = pl.DataFrame([{"run": key, "token": run, "claimedAt": now_utc()}], schema=CLAIM_SCHEMA)
    try:
        write_deltalake(
            claims, row.to_arrow(), mode="overwrite", predicate=f"run = {sql_string(key)}"
        )
    except CommitFailedError:
        raise OptionError(
            f"{path}: another process is adding this file at the same moment; nothing was added"
        ) from None
    except Exception as exc:
        if not _store_write_error(exc):
            raise
        raise _not_written(store, run, exc, True) from None


def _add_claimed(store: Store, record: RunRecord, profile: Profile, path: Path) -> AddResult:
    """Claim ``record.run`` and write the run (the file is claimed already)."""
    run_id = record.run
    claim_run(store, run_id)
    try:
        write_profile(store, record, profile)
    except BaseException as exc:
        # a failed write is no add under way; its rows, if any, go with the next add of the id
        # (``write_rows`` removes them first), and files it left uncommitted are never read
        released = release_claim(store, run_id)
        if isinstance(exc, TileprofError) or not _store_write_error(exc):
            raise
        raise _not_written(store, run_id, exc, released) from None
    return AddResult(run_id, True, str(path), record.sha256)


def _store_write_error(exc: BaseException) -> bool:
    """Whether ``exc`` is the store's medium failing (a full disk, a vanished folder, an
    object store refusing): an ``OSError``, or Delta Lake's or Arrow's error for one."""
    from deltalake.exceptions import DeltaError
    from pyarrow import ArrowException

    return isinstance(exc, OSError | DeltaError | ArrowException)


def _not_written(store: Store, run: str, exc: BaseException, released: bool) -> OutputError:
    """The one line for a write of ``run`` that the store's medium refused."""
    text = str(exc)
    full = getattr(exc, "errno", None) == errno.ENOSPC or "No space left on device" in text
    reason = "no space left on device" if full else (text.strip().splitlines() or ["?"])[0]
    after = (
        "the run id is free again"
        if released
        else f"the run id stays claimed (`tileprof store rm --store {store.uri} --run {run}` "
        "clears it once there is room)"
    )
    where = f"{store.uri}: cannot store run {run!r}"
    return OutputError(f"{where}: {reason}; nothing was added, {after}")


def claim_run(store: Store, run: str) -> None:
    """Take the id ``run`` for this process, or fail with one line when another ``add`` has
    it (finished, under way, or interrupted) or takes it at the same moment."""
    from deltalake import write_deltalake
    from deltalake.exceptions import CommitFailedError

    claims = store.table(CLAIMS)  # the snapshot the conflict check compares with
    if claims.file_uris(file_pruning_predicate=[("run", "=", run)]):
        raise _claimed(store, run)
    row = pl.DataFrame(
        [{"run": run, "token": uuid.uuid4().hex, "claimedAt": now_utc()}], schema=CLAIM_SCHEMA
    )
    try:
        write_deltalake(
            claims, row.to_arrow(), mode="overwrite", predicate=f"run = {sql_string(run)}"
        )
    except CommitFailedError:
        raise OptionError(
            f"--run {run!r}: another process added a run of that id at the same moment; "
            "nothing was added"
        ) from None
    except Exception as exc:
        if not _store_write_error(exc):
            raise
        raise _not_written(store, run, exc, True) from None


def release_claim(store: Store, run: str) -> bool:
    """Drop this process's claim on ``run`` after a write that failed, as far as the store
    lets it (an unreachable store keeps the claim; ``store rm`` clears it then): whether it
    was dropped."""
    try:
        store.table(CLAIMS).delete(f"run = {sql_string(run)}")
    except Exception:  # the write's own error is the one to report
        return False
    return True


def _claimed(store: Store, run: str) -> OptionError:
    """The error for an id that is claimed already: a run of it, or an add not finished."""
    if any(record.run == run for record in read_runs(store)):
        return OptionError(f"--run {run!r}: the store already has a run of that id")
    return OptionError(
        f"--run {run!r}: another add of that run id is under way or was interrupted "
        f"(if none is running, `tileprof store rm --store {store.uri} --run {run}` clears it)"
    )


def run_record(
    profile: Profile, run: str, labels: dict[str, str], source: str, sha256: str
) -> RunRecord:
    """The run record of ``profile`` added now: what the caller names (id, labels, source and
    its sha256) plus what the profile says of itself (format, clock, tiles, samples, span)."""
    return RunRecord(
        run=run,
        labels=labels,
        source=source,
        sha256=sha256,
        format=profile.format,
        clock_hz=profile.clock_hz,
        tile_count=profile.tile_count,
        sample_count=profile.samples.height,
        profile_span_cycles=profile_span(profile.samples),
        version=__version__,
        added_at=now_utc(),
        environment=run_environment(profile, labels),
    )


def run_environment(profile: Profile, labels: Mapping[str, str]) -> dict[str, str]:
    """What a stored run records beside its clock and tiles (docs/store.md,
    "Comparability"): the device the dump names, the host that added it, and the commit
    (``--label commit=…``, else the CI's ``GITHUB_SHA`` or ``CI_COMMIT_SHA``)."""
    import os
    import socket

    from tileprof.analyses.comparability import COMMIT_VARIABLES

    commit = labels.get("commit") or next(
        (os.environ[v] for v in COMMIT_VARIABLES if os.environ.get(v)), None
    )
    found = {"device": profile.device, "host": socket.gethostname() or None, "commit": commit}
    return {k: v for k, v in found.items() if v is not None}


@dataclass(frozen=True)
class StoredRows:
    """A run's rows as stored: its samples, metadata and statistics, each with a ``run`` column."""

    samples: pl.DataFrame
    metadata: pl.DataFrame
    stats: pl.DataFrame


def write_profile(store: Store, record: RunRecord, profile: Profile) -> None:
    """Append ``profile``'s rows under ``record.run``, then commit the record."""
    write_rows(store, record, stored_rows(record.run, profile))


def stored_rows(run: str, profile: Profile) -> StoredRows:
    """Everything ``write_profile`` stores of ``profile`` but the run record."""
    return StoredRows(
        stored_samples(run, profile.samples),
        stored_metadata(run, profile),
        stored_stats(run, profile),
    )


def write_rows(store: Store, record: RunRecord, rows: StoredRows) -> None:
    """Append ``rows`` (whose ``run`` is ``record.run``), then commit the record: one atomic
    Delta commit per table, the record last."""
    from deltalake import WriterProperties, write_deltalake

    _remove_rows(store, record.run, (SAMPLES, METADATA, STATS))
    options = store.options()
    properties = WriterProperties(compression="ZSTD", max_row_group_size=ROW_GROUP_ROWS)
    write_deltalake(
        store.table_uri(SAMPLES),
        rows.samples.to_arrow(),
        mode="append",
        partition_by=["run"],
        storage_options=options,
        writer_properties=properties,
    )
    for name, frame in (
        (METADATA, rows.metadata),
        (STATS, rows.stats),
        (RUNS, pl.DataFrame([record.to_row()], schema=RUN_SCHEMA)),
    ):
        write_deltalake(
            store.table_uri(name),
            frame.to_arrow(),
            mode="append",
            partition_by=None if name == RUNS else ["run"],
            storage_options=options,
            schema_mode="merge" if name == RUNS else None,  # a store from before environment
        )


def stored_samples(run: str, samples: pl.DataFrame) -> pl.DataFrame:
    """The sample frame as stored: run, dump index, group name, strings instead of categoricals,
    sorted by group (stably, so each group keeps the dump's order)."""
    frame = samples.with_row_index("sample").select(
        pl.lit(run).alias("run"),
        pl.col("sample").cast(pl.Int64),
        group_name().cast(pl.String).alias("group"),
        pl.exclude("sample"),
    )
    frame = frame.with_columns(
        pl.col(name).cast(dtype) for name, dtype in STORED_SAMPLE_SCHEMA.items()
    )
    return frame.sort("group", nulls_last=False, maintain_order=True)


def stored_metadata(run: str, profile: Profile) -> pl.DataFrame:
    return pl.DataFrame(
        {
            "run": [run] * len(profile.metadata),
            "metadataId": list(range(len(profile.metadata))),
            "metadata": [_JSON.encode([list(e) for e in m]).decode() for m in profile.metadata],
        },
        schema=METADATA_SCHEMA,
    )


def stored_stats(run: str, profile: Profile) -> pl.DataFrame:
    """The run's group statistics at the default filters, as ``summary`` computes them."""
    groups = group_statistics(
        profile.samples, tile_count=profile.tile_count, clock_hz=profile.clock_hz
    )
    return groups.select(pl.lit(run).alias("run"), pl.all())


def _remove_rows(store: Store, run: str, tables: tuple[str, ...]) -> None:
    """Delete a run's rows from ``tables`` where there are any (leftovers of a failed add)."""
    for name in tables:
        table = store.table(name)
        if table.file_uris(file_pruning_predicate=[("run", "=", run)]):
            table.delete(f"run = {sql_string(run)}")


def remove_run(store: Store, run: str) -> str:
    """Remove one run: its record first (readers stop seeing it), then its rows and its
    claim; or, for an id claimed by an add that never finished, the claim and any rows it
    left. Returns what was removed, in words."""
    records = [r for r in read_runs(store) if r.run == run]
    claimed = _has_claim(store, run)
    if not records and not claimed:
        raise OptionError(f"--run {run!r}: no such run in {store.uri}")
    if records:
        store.table(RUNS).delete(f"run = {sql_string(run)}")
    if claimed:  # and the file an interrupted add of it had claimed
        store.table(CLAIMS).delete(f"token = {sql_string(run)} AND run LIKE 'sha256 %'")
    _remove_rows(
        store, run, (SAMPLES, METADATA, STATS, CLAIMS) if claimed else (SAMPLES, METADATA, STATS)
    )
    if records:
        return f"removed run {run} ({records[0].source})"
    return f"removed the unfinished add of run {run} (its claim and any rows it left)"


def _has_claim(store: Store, run: str) -> bool:
    """Whether ``run`` is claimed (a store made before ``claims`` existed has no claims)."""
    from deltalake import DeltaTable

    if not DeltaTable.is_deltatable(store.table_uri(CLAIMS), store.options()):
        return False
    return bool(store.table(CLAIMS).file_uris(file_pruning_predicate=[("run", "=", run)]))
