"""The profile store (Delta Lake tables of many runs) and the engines that aggregate it.

The engines' names and the task size are defined here, with no import, because
``summary``'s options name them (``commands/_store_summary.py``) in every ``summary`` run,
which without ``--store`` needs neither the tables nor the engines (``aggregate``).
"""

DEFAULT_TASK_SAMPLES = 2_000_000
"""A run with more samples than this is cut into group buckets of about this many samples."""

ENGINES: tuple[str, ...] = ("polars", "dask")
"""The aggregation engines of ``summary --store``: in this process, or on dask.distributed."""
