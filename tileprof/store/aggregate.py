"""Re-aggregating stored runs: tasks, their one computation, and the two engines that run them.

The work is cut into tasks: one run, or, for a run of more than ``task_samples`` samples, one
bucket of its groups (a range of group names, so the task reads only the row groups of those
names; the ``samples`` table is sorted by group within each run). Every task computes with
``tileprof.summary``/``tileprof.stats`` on its samples in the dump's order; a group never spans
two buckets, so the per-group statistics of a bucket are those of the whole run. The parts of
a run are then put together (``combine``) in a fixed order. The ``polars`` engine runs the
tasks one after another in this process (one task's samples in memory at a time); the ``dask``
engine runs the same function on a ``dask.distributed`` cluster. Both build the same tasks and
combine the same parts, so their results are identical.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec
import polars as pl

from tileprof.errors import OptionError, TileprofError
from tileprof.filters import Filters, apply_filters
from tileprof.schema import SAMPLE_SCHEMA, MetadataEntries
from tileprof.stats import group_statistics, order_groups
from tileprof.store.tables import METADATA, SAMPLES, STATS, RunRecord, Store
from tileprof.summary import DEFAULT_TOP_SAMPLES, Summary, longest_samples, sample_records

DEFAULT_TASK_SAMPLES = 2_000_000
"""A run with more samples than this is cut into group buckets of about this many samples."""

SCHEDULER_TIMEOUT_S = 5
"""How long ``--scheduler`` may take to answer before the command gives up."""

ENGINES: tuple[str, ...] = ("polars", "dask")


class EngineError(TileprofError):
    """The distributed engine could not finish: no scheduler, or tasks lost with their workers."""


@dataclass(frozen=True)
class Task:
    """One run, or the groups ``first``…``last`` (by name, inclusive) of one run."""

    run: str
    clock_hz: int | float
    tile_count: int
    first: str | None = None
    last: str | None = None
    with_unnamed: bool = True
    """Whether the bucket also holds samples with no group name (kernel and kind missing)."""


@dataclass(frozen=True)
class Query:
    """What to compute: the filters, the ``--group-by`` dimensions (``run`` excluded), top N."""

    filters: Filters = field(default_factory=Filters)
    group_by: tuple[str, ...] = ()
    top: int = DEFAULT_TOP_SAMPLES


@dataclass(frozen=True)
class Part:
    """One task's result: its groups, matched count, longest samples and their metadata."""

    run: str
    groups: pl.DataFrame
    matched: int
    longest: pl.DataFrame
    metadata: dict[int, MetadataEntries]


def read_task_samples(store: Store, task: Task) -> pl.DataFrame:
    """The task's samples, typed as the parsers type them, in the source dump's order."""
    condition = pl.col("run") == task.run
    if task.first is not None and task.last is not None:
        in_range = pl.col("group").is_between(pl.lit(task.first), pl.lit(task.last))
        condition &= in_range | pl.col("group").is_null() if task.with_unnamed else in_range
    frame = store.scan(SAMPLES).filter(condition).select("sample", *SAMPLE_SCHEMA).collect()
    return frame.sort("sample").drop("sample").cast(SAMPLE_SCHEMA)  # type: ignore[arg-type]


def read_metadata(store: Store, run: str, ids: Sequence[int]) -> dict[int, MetadataEntries]:
    """The metadata lists ``ids`` of one run."""
    if not ids:
        return {}
    rows = (
        store.scan(METADATA)
        .filter((pl.col("run") == run) & pl.col("metadataId").is_in(list(ids)))
        .select("metadataId", "metadata")
        .collect()
    )
    decode = msgspec.json.Decoder(list[tuple[str, str]])
    return {i: tuple(decode.decode(text)) for i, text in rows.iter_rows()}


def run_task(store: Store, task: Task, query: Query) -> Part:
    """The one computation every engine runs: filter, group statistics, longest samples."""
    samples = read_task_samples(store, task)
    matched = apply_filters(samples, query.filters)
    groups = group_statistics(
        matched, tile_count=task.tile_count, clock_hz=task.clock_hz, group_by=query.group_by
    )
    longest = longest_samples(matched, query.top)
    ids = longest.get_column("metadataId").drop_nulls().unique().sort().to_list()
    return Part(task.run, groups, matched.height, longest, read_metadata(store, task.run, ids))


def combine(record: RunRecord, parts: Sequence[Part], query: Query) -> Summary:
    """One run's summary from its parts, as ``summarize`` gives it for the whole run."""
    groups = order_groups(pl.concat([p.groups for p in parts]), query.group_by)
    longest = longest_samples(pl.concat([p.longest for p in parts]), query.top)
    metadata: dict[int, MetadataEntries] = {}
    for part in parts:
        metadata.update(part.metadata)
    ids = sorted(metadata)
    dense = {old: new for new, old in enumerate(ids)}
    renumbered = longest.with_columns(
        pl.col("metadataId").replace_strict(dense, default=None, return_dtype=pl.UInt32)
    )
    return Summary(
        clock_hz=record.clock_hz,
        tile_count=record.tile_count,
        sample_count=record.sample_count,
        matched_sample_count=sum(p.matched for p in parts),
        profile_span_cycles=record.profile_span_cycles,
        at_offset=query.filters.at,
        groups=groups,
        group_by=query.group_by,
        samples=sample_records(renumbered, [metadata[i] for i in ids]),
        filters=query.filters,
        source=record.source,
    )


def plan(store: Store, records: Sequence[RunRecord], task_samples: int) -> list[Task]:
    """The tasks for ``records``: one per run, or group buckets of the runs above the limit.

    Buckets come from the stored group statistics (sample count per group name), cut in name
    order once they hold ``task_samples`` samples.
    """
    large = [r.run for r in records if r.sample_count > task_samples]
    counts = (
        store.scan(STATS)
        .filter(pl.col("run").is_in(large) & pl.col("name").is_not_null())
        .select("run", "name", "sampleCount")
        .collect()
        if large
        else pl.DataFrame(schema={"run": pl.String, "name": pl.String, "sampleCount": pl.Int64})
    )
    tasks: list[Task] = []
    for record in records:
        whole = Task(record.run, record.clock_hz, record.tile_count)
        rows = counts.filter(pl.col("run") == record.run).sort("name")
        if record.sample_count <= task_samples or rows.height < 2:
            tasks.append(whole)
            continue
        tasks.extend(_buckets(whole, rows.rows(), task_samples))
    return tasks


def _buckets(whole: Task, rows: list[tuple[str, str, int]], task_samples: int) -> list[Task]:
    buckets: list[Task] = []
    start, total = 0, 0
    for index, (_, _, count) in enumerate(rows):
        total += count
        if total >= task_samples or index == len(rows) - 1:
            buckets.append(
                Task(
                    whole.run,
                    whole.clock_hz,
                    whole.tile_count,
                    first=rows[start][1],
                    last=rows[index][1],
                    with_unnamed=not buckets,
                )
            )
            start, total = index + 1, 0
    return buckets


Runner = Callable[[Store, Sequence[Task], Query], list[Part]]


def polars_parts(store: Store, tasks: Sequence[Task], query: Query) -> list[Part]:
    """Run the tasks one after another here: one task's samples in memory at a time."""
    return [run_task(store, task, query) for task in tasks]


def dask_parts(
    store: Store,
    tasks: Sequence[Task],
    query: Query,
    *,
    scheduler: str | None = None,
    workers: int = 2,
) -> list[Part]:
    """Run the tasks on a ``dask.distributed`` cluster: ``scheduler``'s, or a local one of
    ``workers`` processes that lives as long as this call."""
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise OptionError(
            "--engine dask needs dask.distributed: pip install 'tileprof[store]'"
        ) from None
    cluster = None
    try:
        if scheduler is not None:
            client = Client(scheduler, timeout=SCHEDULER_TIMEOUT_S)
        else:
            cluster = LocalCluster(
                n_workers=workers,
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                silence_logs=logging.ERROR,
            )
            client = Client(cluster)
    except (OSError, TimeoutError, ValueError) as exc:
        raise EngineError(
            f"--scheduler {scheduler}: cannot reach the dask scheduler ({_first_line(exc)})"
        ) from None
    try:
        return _gather(client, store, tasks, query)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def _gather(client: object, store: Store, tasks: Sequence[Task], query: Query) -> list[Part]:
    from distributed import Client
    from distributed.scheduler import KilledWorker

    assert isinstance(client, Client)
    futures = [client.submit(run_task, store, task, query, pure=False) for task in tasks]
    try:
        return list(client.gather(futures))
    except KilledWorker as exc:
        raise EngineError(
            f"dask: a task was lost with its worker too many times ({_first_line(exc)}); "
            "the workers may lack memory for one task (lower --task-samples)"
        ) from None


def _first_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return lines[0] if lines else type(exc).__name__


def summarize_runs(
    store: Store,
    records: Sequence[RunRecord],
    query: Query,
    *,
    engine: str = "polars",
    scheduler: str | None = None,
    workers: int = 2,
    task_samples: int = DEFAULT_TASK_SAMPLES,
) -> list[tuple[RunRecord, Summary]]:
    """Each run's summary under ``query``, computed by ``engine``, in the order of ``records``."""
    if engine not in ENGINES:
        raise OptionError(f"--engine {engine!r}: one of {', '.join(ENGINES)}")
    if engine == "polars" and scheduler is not None:
        raise OptionError("--scheduler needs --engine dask")
    tasks = plan(store, records, task_samples)
    if engine == "polars":
        parts = polars_parts(store, tasks, query)
    else:
        parts = dask_parts(store, tasks, query, scheduler=scheduler, workers=workers)
    return [
        (record, combine(record, [p for p in parts if p.run == record.run], query))
        for record in records
    ]
