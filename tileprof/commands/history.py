"""``tileprof history``: per-run trends of stored group statistics, and their regressions."""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import click

from tileprof.analyses.filters import Filters
from tileprof.commands._notes import say
from tileprof.commands._options import (
    Output,
    allow_different_option,
    checks_option,
    fail_on_option,
    filter_options,
    label_option,
    option,
    output_options,
    store_uri_option,
)
from tileprof.core.errors import EXIT_ABSTAINED, OptionError
from tileprof.core.outputs import terminal_width

if TYPE_CHECKING:
    from tileprof.analyses.integrity import CheckRules
    from tileprof.model.store.history import History

HISTORY_FORMATS = ("table", "json", "csv", "html", "markdown")
"""The names of ``tileprof.views.renderers.HISTORY_RENDERERS`` (that module loads polars'
neighbours, which ``history --help`` need not)."""


EXIT_FAILED = 1
"""A ``--fail-on`` threshold broken by the newest run: a verdict (2 stays for bad input)."""


def history_abstention(
    history: History, checks: CheckRules, allow_different: bool = False
) -> tuple[str, ...]:
    """Why ``--fail-on`` gives no verdict: the newest run holds another number of samples
    than the runs of its band (``coverage-calls``), or differs from an earlier run in what
    the figures depend on (``comparability_lines``; unless ``allow_different``, which says
    so on stderr). None: the gate judges."""
    from tileprof.analyses.integrity import band_coverage, reasons
    from tileprof.model.store.history import BAND_RUNS

    if not history.runs:
        return ()
    *earlier, newest = history.runs
    previous = [r.sample_count for r in earlier[-BAND_RUNS:]]
    frame = band_coverage(newest.run, newest.sample_count, previous, checks)
    differ = comparability_lines(history)
    if allow_different:
        for line in differ:
            say(f"tileprof: note: judged under --allow-different: {line}", err=True)
        differ = []
    return tuple(f"abstained, no verdict: {why}" for why in [*reasons(frame, "history"), *differ])


def comparability_lines(history: History) -> list[str]:
    """One line per earlier run that differs from the newest in what the figures depend on
    (device, clock, tiles, software versions: ``analyses.comparability``), naming how."""
    from tileprof.analyses.comparability import differences

    *earlier, newest = history.runs
    lines = []
    for run in earlier:
        differ = differences(run.comparability(), newest.comparability())
        if differ:
            lines.append(
                f"run {run.run} and the newest run {newest.run} differ in {', '.join(differ)}"
            )
    return lines


def check_judged(unchecked: tuple[str, ...], allow_empty: bool) -> None:
    """A ``--fail-on`` that judged nothing is refused (exit 2), or under ``--allow-empty``
    noted on stderr, so a gate never passes silently for want of earlier runs."""
    if unchecked and not allow_empty:
        raise OptionError(f"{unchecked[0]} (--allow-empty accepts that)")
    for sentence in unchecked:
        say(f"tileprof: note: {sentence}", err=True)


def _generated_at(out: Output) -> str | None:
    """The HTML page's generation time, read first: a malformed SOURCE_DATE_EPOCH fails
    before the store is read."""
    if out.format != "html":
        return None
    from tileprof.views.html.data import generation_time

    return generation_time()


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
@option(
    "--change-points",
    "with_changes",
    is_flag=True,
    help="Find each trend's change points (E-Divisive means with a permutation test).",
)
@allow_different_option()
@output_options(HISTORY_FORMATS, default="table")
@checks_option()
def command(
    store_uri: str,
    filters: Filters,
    fields: tuple[str, ...],
    labels: tuple[str, ...],
    order: str,
    fail_on: tuple[str, ...],
    allow_empty: bool,
    with_changes: bool,
    allow_different: bool,
    out: Output,
    checks: CheckRules,
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
    generated_at = _generated_at(out)
    store = open_store(store_uri)
    runs = select_runs(read_runs(store), labels=parse_labels(labels))
    history = build_history(
        store, runs, fields=fields, kernels=filters.kernels, order=order, thresholds=thresholds,
        change_points=with_changes,
    )  # fmt: skip
    check_judged(history.unchecked, allow_empty)
    abstained = history_abstention(history, checks, allow_different) if thresholds else ()
    if abstained:
        history = dataclasses.replace(history, failures=())
    model = HistoryModel(history, generated_at, terminal_width(out.path), abstained)
    write_rendered(HISTORY_RENDERERS[out.format], model, out.path)
    for line in abstained:
        click.echo(f"tileprof: {line}", err=True)
    if abstained:
        click.get_current_context().exit(EXIT_ABSTAINED)
    if history.failures:
        say(views.verdict(history), err=True)
        click.get_current_context().exit(EXIT_FAILED)
