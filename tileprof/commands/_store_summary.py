"""``tileprof summary --store URI``: the summary of stored runs, by the polars or dask engine.

Kept beside ``summary`` rather than in it: ``store_options`` adds the store's options to the
command and hands them over as one ``StoreOptions`` value (None without ``--store``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import click

from tileprof.analyses.filters import Filters
from tileprof.analyses.stats import check_dimensions
from tileprof.commands._options import (
    label_option,
    run_option,
    store_engine_options,
    store_uri_option,
)
from tileprof.core.errors import OptionError

F = TypeVar("F", bound=Callable[..., Any])

RUN_DIMENSION = "run"


@dataclass(frozen=True)
class StoreOptions:
    """The store options of ``summary``."""

    uri: str
    runs: tuple[str, ...]
    labels: tuple[str, ...]
    engine: str
    scheduler: str | None
    workers: int
    task_samples: int


_OPTION_NAMES = ("store_uri", "runs", "labels", "engine", "scheduler", "workers", "task_samples")


def store_options(function: F) -> F:
    """Add ``--store``, ``--run``, ``--label``, ``--engine``, ``--scheduler``, ``--workers`` and
    ``--task-samples``; the command receives them as ``store: StoreOptions | None``."""
    from tileprof.model.store import DEFAULT_TASK_SAMPLES, ENGINES

    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        values = {name: kwargs.pop(name) for name in _OPTION_NAMES}
        uri = values.pop("store_uri")
        if uri is None:
            given = [n for n in ("runs", "labels", "scheduler") if values[n]]
            if given or values["engine"] != "polars":
                raise OptionError("--run, --label, --engine and --scheduler need --store URI")
            kwargs["store"] = None
        else:
            kwargs["store"] = StoreOptions(uri=uri, **values)
        return function(*args, **kwargs)

    decorators = [
        store_uri_option(required=False, help="Read runs from a store."),
        run_option(multiple=True, help="Stored runs whose id matches."),
        label_option("Stored runs so labelled."),
        store_engine_options(ENGINES),
        click.option(
            "--task-samples",
            type=click.IntRange(min=1),
            default=DEFAULT_TASK_SAMPLES,
            show_default=True,
            help="Cut stored runs larger than this into group buckets of about this size.",
        ),
    ]
    wrapped: Any = wrapper
    for decorator in reversed(decorators):
        wrapped = decorator(wrapped)
    return wrapped


def split_run_dimension(values: Sequence[str]) -> tuple[bool, tuple[str, ...]]:
    """Whether ``--group-by`` names ``run``, and its other dimensions, checked."""
    names = [d.strip() for value in values for d in value.split(",") if d.strip()]
    return RUN_DIMENSION in names, check_dimensions([d for d in names if d != RUN_DIMENSION])


def store_summary_text(
    options: StoreOptions,
    filters: Filters,
    group_by: Sequence[str],
    top: int,
    output_format: str,
    width: int | None = None,
) -> str:
    """The summary of the selected stored runs in ``output_format``.

    One run and no ``--group-by run``: exactly what ``summary`` prints for its source dump.
    Otherwise one summary per run: JSON ``{"runs": [{"run", "labels", …document}]}``, CSV rows
    with a leading ``run`` column, one table per run. ``width``: the terminal's, when the
    tables go to one (None: the fixed width of files).
    """
    from tileprof.model.store.aggregate import Query, summarize_runs
    from tileprof.model.store.tables import open_store, parse_labels, read_runs, select_runs

    by_run, dimensions = split_run_dimension(group_by)
    store = open_store(options.uri)
    records = select_runs(read_runs(store), options.runs, parse_labels(options.labels))
    if not records:
        wanted = [f"--run {g}" for g in options.runs] + [f"--label {v}" for v in options.labels]
        raise OptionError(f"{options.uri}: no stored run matches {' '.join(wanted) or 'at all'}")
    results = summarize_runs(
        store,
        records,
        Query(filters, dimensions, top),
        engine=options.engine,
        scheduler=options.scheduler,
        workers=options.workers,
        task_samples=options.task_samples,
    )
    from tileprof.views.store_summary import render_store_summary

    return render_store_summary(results, output_format, by_run=by_run, width=width)
