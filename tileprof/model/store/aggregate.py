"""Re-aggregating stored runs: tasks, their one computation, and the two engines that run them.

The work is cut into tasks: one run, or, for a run of more than ``task_samples`` samples, one
bucket of its groups (a range of group names, so the task reads only the row groups of those
names; the ``samples`` table is sorted by group within each run). Every task computes with
``tileprof.analyses.summary``/``tileprof.analyses.stats`` on its samples in the dump's order; a
group never spans
two buckets, so the per-group statistics of a bucket are those of the whole run. The parts of
a run are then put together (``combine``) in a fixed order. The ``polars`` engine runs the
tasks one after another in this process (one task's samples in memory at a time); the ``dask``
engine runs the same function on a ``dask.distributed`` cluster. Both build the same tasks and
combine the same parts, so their results are identical.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec
import polars as pl

from tileprof.analyses.filters import Filters, apply_filters
from tileprof.analyses.stats import group_statistics, order_groups
from tileprof.analyses.summary import DEFAULT_TOP_SAMPLES, Summary, longest_samples, sample_records
from tileprof.core.errors import OptionError
from tileprof.core.schema import SAMPLE_SCHEMA, MetadataEntries
from tileprof.model.engines import dask_client, gather_tasks
from tileprof.model.store import DEFAULT_TASK_SAMPLES, ENGINES
from tileprof.model.store.tables import METADATA, SAMPLES, STATS, RunRecord, Store


@dataclass(frozen=True)
class Task:
    """One run, or the groups ``first``…``last`` (by name, inclusive) of one run."""

    run: str
    clock_hz: int | float
    tile_count: int
    files: tuple[str, ...] = ()
    """The run's Parquet files in the samples table (from the Delta log, read once by ``plan``)."""
    metadata_files: tuple[str, ...] = ()
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
    epochs: tuple[int, ...] = ()
    """The epochs the task's samples hold, before the filters (``combine`` checks ``--epoch``)."""


STORED_TYPES: dict[str, pl.DataType] = {
    **{n: pl.String() if t == pl.Categorical() else t for n, t in SAMPLE_SCHEMA.items()},
    "sample": pl.Int64(),
}
"""The task frame: the sample frame's columns and types (strings kept as strings: grouping,
filters and output are the same on either) and ``sample``, the row's index in the dump."""


def read_task_samples(store: Store, task: Task) -> pl.DataFrame:
    """The task's samples in stored order: by group, each group in the dump's order.

    Only the run's files are opened (partition pruning through the Delta log), and within
    them only the row groups whose ``group`` range meets the bucket's.
    """
    files = list(task.files)
    if not files:
        return pl.DataFrame(schema=STORED_TYPES)
    condition = pl.lit(True)
    if task.first is not None and task.last is not None:
        in_range = pl.col("group").is_between(pl.lit(task.first), pl.lit(task.last))
        condition = in_range | pl.col("group").is_null() if task.with_unnamed else in_range
    scan = pl.scan_parquet(files, storage_options=store.options(), hive_partitioning=False)
    frame = scan.filter(condition).select(*STORED_TYPES).collect()
    return frame.cast(STORED_TYPES)  # type: ignore[arg-type]


def read_metadata(store: Store, task: Task, ids: Sequence[int]) -> dict[int, MetadataEntries]:
    """The metadata lists ``ids`` of the task's run."""
    if not ids or not task.metadata_files:
        return {}
    rows = (
        pl.scan_parquet(
            list(task.metadata_files), storage_options=store.options(), hive_partitioning=False
        )
        .filter(pl.col("metadataId").is_in(list(ids)))
        .select("metadataId", "metadata")
        .collect()
    )
    decode = msgspec.json.Decoder(list[tuple[str, str]])
    return {i: tuple(decode.decode(text)) for i, text in rows.iter_rows()}


def longest_in_dump_order(matched: pl.DataFrame, top: int) -> pl.DataFrame:
    """``longest_samples`` as on the dump-ordered frame: the candidates (every sample at least
    as long as the top-th longest) are put back in dump order first, so ties fall as they do
    for the dump."""
    if top <= 0 or matched.height == 0:
        return longest_samples(matched.drop("sample").cast(SAMPLE_SCHEMA), top)  # type: ignore[arg-type]
    shortest_kept = matched.get_column("duration").top_k(top).min()
    candidates = matched.filter(pl.col("duration") >= shortest_kept).sort("sample")
    return longest_samples(candidates.drop("sample").cast(SAMPLE_SCHEMA), top)  # type: ignore[arg-type]


def run_task(store: Store, task: Task, query: Query) -> Part:
    """The one computation every engine runs: filter, group statistics, longest samples."""
    samples = read_task_samples(store, task)
    matched = apply_filters(samples, query.filters)
    groups = group_statistics(
        matched, tile_count=task.tile_count, clock_hz=task.clock_hz, group_by=query.group_by
    )
    longest = longest_in_dump_order(matched, query.top)
    ids = longest.get_column("metadataId").drop_nulls().unique().sort().to_list()
    epochs = tuple(samples.get_column("epoch").drop_nulls().unique().sort().to_list())
    metadata = read_metadata(store, task, ids)
    return Part(task.run, groups, matched.height, longest, metadata, epochs)


def combine(record: RunRecord, parts: Sequence[Part], query: Query) -> Summary:
    """One run's summary from its parts, as ``summarize`` gives it for the whole run; an
    ``--epoch`` the run does not hold is an OptionError, as ``check_epoch`` makes it for a dump."""
    epoch = query.filters.epoch
    held = sorted({e for p in parts for e in p.epochs})
    if epoch is not None and epoch not in held:
        known = ", ".join(map(str, held)) or "none"
        raise OptionError(
            f"--epoch {epoch}: no samples in that epoch in run {record.run} (epochs: {known})"
        )
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
        store.scan(STATS, large)
        .filter(pl.col("name").is_not_null())
        .select("run", "name", "sampleCount")
        .collect()
        if large
        else pl.DataFrame(schema={"run": pl.String, "name": pl.String, "sampleCount": pl.Int64})
    )
    samples, metadata = store.files_by_run(SAMPLES), store.files_by_run(METADATA)
    tasks: list[Task] = []
    for record in records:
        files = tuple(samples.get(record.run, ()))
        metadata_files = tuple(metadata.get(record.run, ()))
        whole = Task(record.run, record.clock_hz, record.tile_count, files, metadata_files)
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
                    whole.files,
                    whole.metadata_files,
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
    with dask_client(scheduler, workers) as client:
        calls = [(run_task, (store, task, query)) for task in tasks]
        return gather_tasks(
            client, calls, "the workers may lack memory for one task (lower --task-samples)"
        )


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
