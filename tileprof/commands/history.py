"""``tileprof history``: per-run trends of stored group statistics, and their regressions."""

from __future__ import annotations

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._notes import say
from tileprof.commands._options import (
    Output,
    fail_on_option,
    filter_options,
    label_option,
    option,
    output_options,
    store_uri_option,
)
from tileprof.core.errors import OptionError
from tileprof.core.outputs import terminal_width

HISTORY_FORMATS = ("table", "json", "csv", "html")
"""The names of ``tileprof.views.renderers.HISTORY_RENDERERS`` (that module loads polars'
neighbours, which ``history --help`` need not)."""


EXIT_FAILED = 1
"""A ``--fail-on`` threshold broken by the newest run: a verdict (2 stays for bad input)."""


def check_judged(unchecked: tuple[str, ...], allow_empty: bool) -> None:
    """A ``--fail-on`` that judged nothing is refused (exit 2), or under ``--allow-empty``
    noted on stderr, so a gate never passes silently for want of earlier runs."""
    if unchecked and not allow_empty:
        raise OptionError(f"{unchecked[0]} (--allow-empty accepts that)")
    for sentence in unchecked:
        say(f"tileprof: note: {sentence}", err=True)


@click.command("history", short_help="Trend of figures per run and group from a store.")
@store_uri_option()
@filter_options(("kernels",), kernels="Only these groups.")
@option("--field", "fields", multiple=True, metavar="F", help="A group statistic to trend.")
@label_option()
@option(
    "--order",
    default="time",
    show_default=True,
    metavar="time|LABEL",
    help="Run order: the time each was added, or a label's value (e.g. date).",
)
@fail_on_option(
    "e.g. 'usefulUtilization of gemm_* may not drop by more than 2%' (newest run vs band)."
)
@click.option(
    "--allow-empty",
    is_flag=True,
    help="Accept a --fail-on that checks nothing yet (too few earlier runs for a band).",
)
@output_options(HISTORY_FORMATS, default="table")
def command(
    store_uri: str,
    filters: Filters,
    fields: tuple[str, ...],
    labels: tuple[str, ...],
    order: str,
    fail_on: tuple[str, ...],
    allow_empty: bool,
    out: Output,
) -> None:
    """Trend FIELDs per run and group from the stored statistics; flag runs outside their band."""
    from tileprof.analyses.thresholds import ThresholdError, parse_thresholds
    from tileprof.model.store.history import build_history
    from tileprof.model.store.tables import open_store, parse_labels, read_runs, select_runs
    from tileprof.views import history as views
    from tileprof.views.renderers import HISTORY_RENDERERS, HistoryModel, write_rendered

    out.check()
    try:
        thresholds = parse_thresholds(fail_on)
    except (ThresholdError, ValueError) as exc:
        raise OptionError(f"--fail-on: {exc}") from None
    generated_at = None
    if out.format == "html":
        from tileprof.views.html.data import generation_time

        generated_at = generation_time()  # first: a malformed SOURCE_DATE_EPOCH fails early
    store = open_store(store_uri)
    runs = select_runs(read_runs(store), labels=parse_labels(labels))
    history = build_history(
        store, runs, fields=fields, kernels=filters.kernels, order=order, thresholds=thresholds
    )
    check_judged(history.unchecked, allow_empty)
    model = HistoryModel(history, generated_at, terminal_width(out.path))
    write_rendered(HISTORY_RENDERERS[out.format], model, out.path)
    if history.failures:
        say(views.verdict(history), err=True)
        click.get_current_context().exit(EXIT_FAILED)
