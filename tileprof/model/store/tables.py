"""The profile store: four Delta Lake tables under one URI (layout: docs/store.md).

``samples``  every run's typed sample frame, partitioned by ``run``, sorted by group name
             within the run (``group`` column; Parquet row-group statistics prune by it), with
             ``sample`` (the index in the source dump) to restore the dump's order.
``metadata`` every run's interned metadata lists (``metadataId`` → JSON ``[[name, value]…]``).
``stats``    every run's group statistics at the default filters (``tileprof.analyses.stats``).
``runs``     one record per run; written last, so a run exists once its record commits.
``claims``   one row per run id an ``add`` has taken, partitioned by ``run``: committed before
             any of the run's rows, with Delta's conflict check, so that of two processes
             adding the same new id at once exactly one goes on (``writes.claim_run``).

Delta Lake is used through ``deltalake`` (delta-rs): polars, DuckDB, Spark and Dask read the
same tables, each commit is atomic through the transaction log, and local folders and object
stores (``s3://``, ``gs://``, ``az://``) work alike.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import polars as pl

from tileprof.analyses.stats import group_statistics
from tileprof.core.errors import InputError, OptionError
from tileprof.core.schema import SAMPLE_SCHEMA

SAMPLES, METADATA, STATS, RUNS, CLAIMS = "samples", "metadata", "stats", "runs", "claims"
TABLES: tuple[str, ...] = (SAMPLES, METADATA, STATS, RUNS, CLAIMS)

ROW_GROUP_ROWS = 131_072
"""Rows per Parquet row group of the samples table: the unit a group read can skip."""

RUN_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:+-]{0,199}$")

RUN_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "labels": pl.String(),
    "source": pl.String(),
    "sha256": pl.String(),
    "format": pl.String(),
    "clockHz": pl.Float64(),
    "clockHzInteger": pl.Boolean(),
    "tileCount": pl.Int64(),
    "sampleCount": pl.Int64(),
    "profileSpanCycles": pl.Int64(),
    "tileprofVersion": pl.String(),
    "addedAt": pl.Datetime("us", "UTC"),
    "environment": pl.String(),
}
"""The run record; ``labels`` is a JSON object of strings, ``clockHzInteger`` says whether the
dump stated clockHz as an integer (so a summary from the store prints it as the dump's did);
``environment`` is a JSON object of what makes runs comparable (``analyses.comparability``:
device, host, commit; null in runs stored before it was recorded)."""

STORED_SAMPLE_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "sample": pl.Int64(),
    "group": pl.String(),
    **{
        name: pl.String() if dtype == pl.Categorical() else dtype
        for name, dtype in SAMPLE_SCHEMA.items()
    },
    "metadataId": pl.Int64(),
}
CLAIM_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "token": pl.String(),
    "claimedAt": pl.Datetime("us", "UTC"),
}
"""A claim on a run id: ``token`` tells the claiming ``add`` apart (a random UUID)."""
METADATA_SCHEMA: dict[str, pl.DataType] = {
    "run": pl.String(),
    "metadataId": pl.Int64(),
    "metadata": pl.String(),
}


def _stats_schema() -> dict[str, pl.DataType]:
    """``run`` then ``group_statistics``' own columns and types (computed on no samples)."""
    empty = group_statistics(pl.DataFrame(schema=SAMPLE_SCHEMA), tile_count=1, clock_hz=1.0)
    return {"run": pl.String(), **dict(empty.schema)}


STATS_SCHEMA = _stats_schema()
SCHEMAS: dict[str, dict[str, pl.DataType]] = {
    SAMPLES: STORED_SAMPLE_SCHEMA,
    METADATA: METADATA_SCHEMA,
    STATS: STATS_SCHEMA,
    RUNS: RUN_SCHEMA,
    CLAIMS: CLAIM_SCHEMA,
}


@dataclass(frozen=True)
class RunRecord:
    """One row of the ``runs`` table."""

    run: str
    labels: dict[str, str]
    source: str
    sha256: str
    format: str | None
    clock_hz: int | float
    tile_count: int
    sample_count: int
    profile_span_cycles: int | None
    version: str
    added_at: datetime
    environment: dict[str, str] = field(default_factory=dict)
    """What the run states of its device, host and commit (``analyses.comparability``)."""

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> RunRecord:
        clock = row["clockHz"]
        return cls(
            run=row["run"],
            labels=json.loads(row["labels"] or "{}"),
            source=row["source"],
            sha256=row["sha256"],
            format=row["format"],
            clock_hz=int(clock) if row["clockHzInteger"] else clock,
            tile_count=row["tileCount"],
            sample_count=row["sampleCount"],
            profile_span_cycles=row["profileSpanCycles"],
            version=row["tileprofVersion"],
            added_at=row["addedAt"],
            environment=json.loads(row.get("environment") or "{}"),
        )

    def to_row(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "labels": json.dumps(self.labels, sort_keys=True, ensure_ascii=False),
            "source": self.source,
            "sha256": self.sha256,
            "format": self.format,
            "clockHz": float(self.clock_hz),
            "clockHzInteger": isinstance(self.clock_hz, int),
            "tileCount": self.tile_count,
            "sampleCount": self.sample_count,
            "profileSpanCycles": self.profile_span_cycles,
            "tileprofVersion": self.version,
            "addedAt": self.added_at,
            "environment": json.dumps(self.environment, sort_keys=True, ensure_ascii=False),
        }

    def to_json(self) -> dict[str, Any]:
        """The record as ``store list --format json`` prints it."""
        return {
            "run": self.run,
            "labels": self.labels,
            "source": self.source,
            "sha256": self.sha256,
            "clockHz": self.clock_hz,
            "tileCount": self.tile_count,
            "sampleCount": self.sample_count,
            "tileprofVersion": self.version,
            "addedAt": self.added_at.astimezone(timezone.utc).isoformat(),
            "environment": self.environment,
        }

    def comparability(self) -> dict[str, object]:
        """Every comparability field of the run (``analyses.comparability``): the record's
        clock, tiles and tileprof version with its stated environment."""
        from tileprof.analyses.comparability import stated

        return stated(
            {
                **self.environment,
                "clockHz": self.clock_hz,
                "tileCount": self.tile_count,
                "tileprofVersion": self.version,
            }
        )


@dataclass(frozen=True)
class Store:
    """A store URI (a local folder or an object-store URI) and its object-store options.

    Object-store credentials and endpoints come from the environment (``AWS_*``, ``GOOGLE_*``,
    ``AZURE_*``) as delta-rs and polars read them; ``storage_options`` overrides them.
    """

    uri: str
    storage_options: dict[str, str] = field(default_factory=dict)

    @property
    def is_local(self) -> bool:
        return "://" not in self.uri or self.uri.startswith("file://")

    def table_uri(self, name: str) -> str:
        return f"{self.uri.rstrip('/')}/{name}"

    def options(self) -> dict[str, str] | None:
        return dict(self.storage_options) or None

    def exists(self) -> bool:
        from deltalake import DeltaTable

        return DeltaTable.is_deltatable(self.table_uri(RUNS), self.options())

    def table(self, name: str) -> Any:
        """The ``deltalake.DeltaTable`` of one table (latest version)."""
        from deltalake import DeltaTable

        return DeltaTable(self.table_uri(name), storage_options=self.options())

    def files_by_run(self, name: str) -> dict[str, list[str]]:
        """Each run's Parquet files in a table partitioned by run, from one read of the log.

        (One ``file_uris`` call per run with a partition predicate costs ~25 ms each under
        load: seconds for a few hundred runs.) Data files have unique UUID names, which pair
        each add action's relative path with its full URI.
        """
        table = self.table(name)
        uris = {uri.rsplit("/", 1)[-1]: uri for uri in table.file_uris()}
        actions = pl.DataFrame(table.get_add_actions(flatten=True))
        files: dict[str, list[str]] = {}
        if actions.height:
            for path, run in actions.select("path", "partition.run").iter_rows():
                files.setdefault(run, []).append(uris[path.rsplit("/", 1)[-1]])
        return files

    def scan(self, name: str, runs: Sequence[str] | None = None) -> pl.LazyFrame:
        """A lazy scan of one table (of ``runs`` only, for a table partitioned by run).

        The files come from the Delta log (partition pruning there); polars scans them as
        Parquet. Delta keeps partition values out of the files, so ``run`` is added back from
        each file's path. This starts much quicker than ``pl.scan_delta`` (0.13 s against
        2.7 s for a process's first scan on the loaded benchmark machine), which ``history``
        feels.
        """
        schema = SCHEMAS[name]
        if name == RUNS:  # a run recorded before a column existed has it null
            files = self.table(name).file_uris()
            if not files:
                return _empty(schema)
            scan = pl.scan_parquet(
                files,
                storage_options=self.options(),
                hive_partitioning=False,
                missing_columns="insert",
                schema=schema,
            )
            return scan.select(*schema)
        by_run = self.files_by_run(name)
        run_of = {f: run for run in (by_run if runs is None else runs) for f in by_run.get(run, [])}
        if not run_of:
            return _empty(schema)
        scan = pl.scan_parquet(
            list(run_of),
            storage_options=self.options(),
            hive_partitioning=False,
            include_file_paths="_file",
        )
        return scan.with_columns(run=pl.col("_file").replace_strict(run_of)).select(*schema)


def _empty(schema: Mapping[str, pl.DataType]) -> pl.LazyFrame:
    return pl.DataFrame(schema=dict(schema)).lazy()


def require_deltalake() -> None:
    """Fail with one line, not an ImportError, when the ``store`` extra is not installed."""
    try:
        import deltalake  # noqa: F401
    except ImportError:
        raise OptionError(
            "the profile store needs the deltalake package: pip install 'tileprof[store]'"
        ) from None


def open_store(uri: str, storage_options: Mapping[str, str] | None = None) -> Store:
    """An existing store; a URI that is missing or holds no store is an ``InputError``."""
    require_deltalake()
    store = Store(uri, dict(storage_options or {}))
    if store.is_local and not Path(uri.removeprefix("file://")).exists():
        raise InputError(uri, None, "no such store (the folder does not exist)")
    try:
        found = store.exists()
    except Exception as exc:  # delta-rs raises its own and OSError types for unreachable stores
        raise InputError(uri, None, f"cannot open store: {_first_line(exc)}") from None
    if not found:
        raise InputError(
            uri, None, "not a tileprof store (no runs table; see `tileprof store add`)"
        )
    return store


def create_store(uri: str, storage_options: Mapping[str, str] | None = None) -> Store:
    """The store at ``uri``, creating its empty tables when they are missing (a store made
    before ``claims`` existed gets that table on its next ``add``).

    Two processes creating the same store at once both succeed: a table that another process
    created in the meantime is accepted as it is.
    """
    require_deltalake()
    from deltalake import DeltaTable

    store = Store(uri, dict(storage_options or {}))
    if store.is_local:
        Path(uri.removeprefix("file://")).mkdir(parents=True, exist_ok=True)
    for name in TABLES:
        schema = pl.DataFrame(schema=SCHEMAS[name]).to_arrow().schema
        partition = ["run"] if name != RUNS else None
        try:
            DeltaTable.create(
                store.table_uri(name),
                schema,
                mode="ignore",
                partition_by=partition,
                storage_options=store.options(),
            )
        except Exception as exc:
            if not DeltaTable.is_deltatable(store.table_uri(name), store.options()):
                raise InputError(uri, None, f"cannot create store: {_first_line(exc)}") from None
    return store


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__


def read_runs(store: Store) -> list[RunRecord]:
    """Every run record, oldest first (then by id)."""
    frame = store.scan(RUNS).collect().sort(["addedAt", "run"])
    return [RunRecord.from_row(row) for row in frame.iter_rows(named=True)]


def parse_labels(values: Sequence[str], option: str = "--label") -> dict[str, str]:
    """``KEY=VALUE`` options as a mapping; a key given twice keeps its last value."""
    labels: dict[str, str] = {}
    for value in values:
        key, sep, text = value.partition("=")
        if not sep or not key.strip():
            raise OptionError(f"{option} {value!r}: expected KEY=VALUE, e.g. commit=3f2a9c1")
        labels[key.strip()] = text
    return labels


def select_runs(
    runs: Sequence[RunRecord], globs: Sequence[str] = (), labels: Mapping[str, str] | None = None
) -> list[RunRecord]:
    """Runs whose id matches any of ``globs`` (all when none) and that carry every label."""
    import fnmatch

    wanted = labels or {}
    return [
        r
        for r in runs
        if (not globs or any(fnmatch.fnmatchcase(r.run, g) for g in globs))
        and all(r.labels.get(k) == v for k, v in wanted.items())
    ]


def check_run_id(run: str) -> str:
    if not RUN_ID.match(run):
        raise OptionError(
            f"--run {run!r}: a run id is 1-200 letters, digits and . _ : + - "
            "(starting with a letter or digit)"
        )
    return run


def now_utc() -> datetime:
    return datetime.now(timezone.utc)


def sql_string(value: str) -> str:
    """A SQL string literal (delta-rs predicates)."""
    return "'" + value.replace("'", "''") + "'"


def device_name(record: RunRecord) -> str:
    """The device as ``summary`` names it for the run's source dump (``Profile.target``)."""
    from tileprof.model.profile import Profile

    empty = pl.DataFrame(schema=SAMPLE_SCHEMA)
    return Profile(empty, (), record.clock_hz, record.tile_count).target
